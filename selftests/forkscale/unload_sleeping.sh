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
echo "1..$((3 + 2 * rounds))"

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

# Four loops of forks and exits: each callback sleeps for a second, longer
# than an unload takes, so at each unload one of them is nearly always asleep
# inside the module, and wakes after it is gone.
storm() {
	while :; do sh -c : ; done
}
storms=
for _ in 1 2 3 4; do
	storm &
	storms="$storms $!"
done
round=1
while [ $round -le $rounds ]; do
	n=$((n + 1))
	if insmod "/lib/modules/twins/$twin/forkscale.ko"; then
		echo "ok $n round $round: $twin is loaded"
	else
		echo "not ok $n round $round: $twin is loaded"
	fi
	sleep 2
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
# shellcheck disable=SC2086 # a list of pids
kill $storms
# shellcheck disable=SC2086
wait $storms 2> /dev/null
n=$((n + 1))
if [ ! -d /sys/module/forkscale ] && sh -c : ; then
	echo "ok $n forks and exits go on after the unloads"
else
	echo "not ok $n forks and exits go on after the unloads"
fi
# A release still running when the module unregistered would leave its pids
# queued after the unload flush, which the module's drop reports.
n=$((n + 1))
if dmesg | grep -q 'pending at unload'; then
	echo "not ok $n no pid was left queued at an unload"
else
	echo "ok $n no pid was left queued at an unload"
fi
for knob in /sys/kernel/debug/cgroup_clone_twin/defect /sys/kernel/debug/pid_release/defect; do
	echo none > $knob
done
