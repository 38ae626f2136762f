#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# insmod/rmmod of forkscale.ko and the effects each must have.
ko=/lib/modules/forkscale.ko
. "$(dirname "$0")/tap_kmsg.sh"
loaded() { [ -d /sys/module/forkscale ] && [ "$(cat /sys/module/forkscale/initstate)" = live ]; }
unloaded() { [ ! -e /sys/module/forkscale ]; }

# The built-in that rmmod must restore.
echo locked > /proc/sys/kernel/cgroup_clone_read

echo "TAP version 13"
echo "1..20"
result "not loaded before the test" unloaded
# The clone read is chosen at load; a choice out of range changes nothing.
mark
result "clone_read=2 is refused" not insmod "$ko" clone_read=2
result "the refusal names the parameter" logged "clone_read=2 is out of range"
result "the refused load changed nothing" sh -c \
	'[ ! -e /sys/module/forkscale ] && grep -qx "impl: locked" /sys/kernel/debug/cgroup_clone/stats &&
	 grep -qx "impl: builtin" /sys/kernel/debug/pid_release/stats'
result "clone_read=1 makes forks use the pinned read" sh -c \
	"insmod $ko clone_read=1 && grep -qx 'impl: forkscale_pinned' /sys/kernel/debug/cgroup_clone/stats && rmmod forkscale"
result "insmod succeeds" insmod "$ko"
result "module is live in sysfs after insmod" loaded
result "forks use the module's clone read" grep -qx "impl: forkscale" /sys/kernel/debug/cgroup_clone/stats
result "second insmod is refused" not insmod "$ko"
result "rmmod succeeds" rmmod forkscale
result "module is gone after rmmod" unloaded
result "the built-in clone read is back" grep -qx "impl: locked" /sys/kernel/debug/cgroup_clone/stats

# A module whose init fails with both hooks still registered: the kernel must
# detach them before freeing its text, or the next fork or exit calls into
# freed memory.
mark
result "a module failing its init with hooks registered fails to load" \
	not insmod /lib/modules/forkscale_leaky.ko
result "the kernel said it detached the clone read" \
	logged "cgroup_clone: module forkscale_leaky is going away without unregistering"
result "the built-in clone read is back after the failed load" \
	grep -qx "impl: locked" /sys/kernel/debug/cgroup_clone/stats
result "the kernel said it detached the pid release" \
	logged "pid_release: module forkscale_leaky is going away without unregistering"
result "the built-in pid release is back after the failed load" \
	grep -qx "impl: builtin" /sys/kernel/debug/pid_release/stats
result "forks and exits after the failed load work" sh -c \
	'i=0; while [ $i -lt 200 ]; do /bin/true || exit 1; i=$((i + 1)); done'
result "the hooks are free for the next module" insmod "$ko"
result "which unloads" rmmod forkscale
