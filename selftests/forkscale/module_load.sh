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
in_log() { dmesg | grep -q "forkscale: $1\$"; }
not() { ! "$@"; }

echo "TAP version 13"
echo "1..7"
result "not loaded before the test" unloaded
result "insmod succeeds" insmod "$ko"
result "module is live in sysfs after insmod" loaded
result "module announced itself" in_log loaded
result "second insmod is refused" not insmod "$ko"
result "rmmod succeeds" rmmod forkscale
result "module is gone after rmmod and said so" sh -c \
	'[ ! -e /sys/module/forkscale ] && dmesg | grep -q "forkscale: unloaded$"'
