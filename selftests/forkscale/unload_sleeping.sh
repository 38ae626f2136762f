#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Unloading a module whose hook callback sleeps, while forks and exits call it
# (tests/host/harness.sh boots it, guest mode selftest-sleep). FORKSCALE_TWIN
# names a build of forkscale.ko whose callback sleeps (tests/twins.txt), loaded
# and unloaded three times. The hooks call it in an SRCU read-side section that
# unregistering waits for, so rmmod returns only once no CPU runs it, and the
# guest stays clean. With FORKSCALE_DEFECT=rcu_wait (measure/0016) unregistering
# waits for RCU readers only, as it did before, and a callback asleep at the
# unload wakes in freed memory: the harness then requires the debug kernel's
# report.
twin=${FORKSCALE_TWIN:?FORKSCALE_TWIN names the module build}
defect=${FORKSCALE_DEFECT:-none}
rounds=3
echo "TAP version 13"
echo "1..$((2 + 2 * rounds))"

knobs_set=ok
for knob in /sys/kernel/debug/cgroup_clone_twin/defect /sys/kernel/debug/pid_release/defect; do
	{ echo "$defect" > $knob; } 2> /dev/null && [ "$(cat $knob)" = "$defect" ] || knobs_set=no
done
n=1
if [ $knobs_set = ok ]; then
	echo "ok $n both hooks' defect is $defect"
else
	echo "not ok $n both hooks' defect is $defect"
fi

# Two loops of forks and exits: with each callback asleep for 100 ms, one of
# them is nearly always inside it when the module goes.
storm() {
	while :; do sh -c : ; done
}
storm & s1=$!
storm & s2=$!
round=1
while [ $round -le $rounds ]; do
	n=$((n + 1))
	if insmod "/lib/modules/twins/$twin/forkscale.ko"; then
		echo "ok $n round $round: $twin is loaded"
	else
		echo "not ok $n round $round: $twin is loaded"
	fi
	sleep 1
	n=$((n + 1))
	if rmmod forkscale; then
		echo "ok $n round $round: rmmod returns while forks and exits run"
	else
		echo "not ok $n round $round: rmmod returns while forks and exits run"
	fi
	# The built-ins serve them from here on.
	sleep 1
	round=$((round + 1))
done
kill $s1 $s2
wait $s1 $s2 2> /dev/null
n=$((n + 1))
if [ ! -d /sys/module/forkscale ] && sh -c : ; then
	echo "ok $n forks and exits go on after the unloads"
else
	echo "not ok $n forks and exits go on after the unloads"
fi
for knob in /sys/kernel/debug/cgroup_clone_twin/defect /sys/kernel/debug/pid_release/defect; do
	echo none > $knob
done
