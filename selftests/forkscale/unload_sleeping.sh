#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Unloading a module whose hook callback sleeps, while forks and exits call it
# (tests/host/harness.sh boots it, guest mode selftest-sleep). FORKSCALE_TWIN
# names a build of forkscale.ko whose callback sleeps (tests/twins.txt), loaded
# and unloaded three times. The hooks call it in an SRCU read-side section that
# unregistering waits for, so rmmod returns only once no task is in it, and the
# guest stays clean. With FORKSCALE_DEFECT=rcu_wait (measure/0013) unregistering
# waits for RCU readers only, as it did before, and a callback asleep at the
# unload wakes in freed memory: the harness then requires the debug kernel's
# report.
twin=${FORKSCALE_TWIN:?FORKSCALE_TWIN names the module build}
defect=${FORKSCALE_DEFECT:-none}
rounds=3
echo "TAP version 13"
echo "1..$((3 + 2 * rounds))"

# The defect goes on the twin's hook only: the other hook's callback, which
# does not sleep but may be preempted, could otherwise be freed under a task
# first, and its report would not name the hook under test.
case $twin in
*clone_read*) knob=/sys/kernel/debug/cgroup_clone_twin/defect ;;
*) knob=/sys/kernel/debug/pid_release/defect ;;
esac
n=1
if { echo "$defect" > $knob; } 2> /dev/null && [ "$(cat $knob)" = "$defect" ]; then
	echo "ok $n the defect of $twin's hook is $defect"
else
	echo "not ok $n the defect of $twin's hook is $defect"
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
	# The longest batching delay, so that the kernel's timer cannot free what
	# the unload flush leaves queued before the drop looks (the last check).
	if insmod "/lib/modules/twins/$twin/forkscale.ko" pid_max_delay_ms=10000; then
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
# queued after the unload flush, which the module's drop reports (with any
# imbalance of queued and freed pids).
n=$((n + 1))
if dmesg | grep -q 'pending at unload'; then
	echo "not ok $n the module's drop reports no pid queued or lost at an unload"
else
	echo "ok $n the module's drop reports no pid queued or lost at an unload"
fi
echo none > $knob
