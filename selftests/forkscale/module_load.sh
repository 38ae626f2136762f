#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# insmod/rmmod of forkscale.ko and the effects each must have.
ko=/lib/modules/forkscale.ko
n=0
result() { # result <description> <command...>
	desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $desc"; else echo "not ok $n $desc"; fi
}
loaded() { [ -d /sys/module/forkscale ] && [ "$(cat /sys/module/forkscale/initstate)" = live ]; }
unloaded() { [ ! -e /sys/module/forkscale ]; }
not() { ! "$@"; }

# The built-in that rmmod must restore.
echo locked > /proc/sys/kernel/cgroup_clone_read

echo "TAP version 13"
echo "1..11"
result "not loaded before the test" unloaded
# A kernel without the series: the lookup meets a hook no kernel exports.
result "insmod without the hooks fails with ENODEV" sh -c \
	'! insmod /lib/modules/forkscale_nohooks.ko 2>/tmp/nohooks && grep -q "No such device" /tmp/nohooks'
result "the failure names the missing hook" \
	sh -c 'dmesg | grep -q "lacks the forkscale hook cgroup_clone_ops_register_absent"'
result "the failed load changed nothing" sh -c \
	'[ ! -e /sys/module/forkscale_nohooks ] && grep -qx "impl: locked" /sys/kernel/debug/cgroup_clone/stats'
result "insmod succeeds" insmod "$ko"
result "module is live in sysfs after insmod" loaded
result "forks use the module's clone read" grep -qx "impl: forkscale" /sys/kernel/debug/cgroup_clone/stats
result "second insmod is refused" not insmod "$ko"
result "rmmod succeeds" rmmod forkscale
result "module is gone after rmmod" unloaded
result "the built-in clone read is back" grep -qx "impl: locked" /sys/kernel/debug/cgroup_clone/stats
