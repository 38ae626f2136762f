#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A test of qemu/guest/run-tests itself (tests/host/harness.sh boots it twice
# in a row, guest mode selftest-leftover). Its first run passes but leaves a
# task running, forkscale.ko loaded and kernel.cgroup_clone_read switched,
# which run-tests must report as a failure and undo; its second run passes
# only if run-tests did undo all three.
state=/tmp/harness_leftover
sysctl=/proc/sys/kernel/cgroup_clone_read
echo "TAP version 13"
echo "1..1"
if [ ! -e $state ]; then
	read -r before < $sysctl
	sleep 3600 < /dev/null > /dev/null 2>&1 &
	echo "$! $before" > $state
	# the sysctl first: a loaded module refuses it (EBUSY)
	if echo seqcount > $sysctl && insmod /lib/modules/forkscale.ko; then
		echo "ok 1 leaves a task, the module and the sysctl behind"
	else
		echo "not ok 1 leaves a task, the module and the sysctl behind"
	fi
	exit 0
fi
read -r pid before < $state
read -r now < $sysctl
echo "# task $pid: $([ -e /proc/$pid ] && echo running || echo gone);" \
	"module: $([ -d /sys/module/forkscale ] && echo loaded || echo unloaded);" \
	"cgroup_clone_read: $now (was $before)"
if [ ! -e /proc/$pid ] && [ ! -d /sys/module/forkscale ] && [ "$now" = "$before" ]; then
	echo "ok 1 what the run before left was undone"
else
	echo "not ok 1 what the run before left was undone"
fi
