#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The module on truly parallel vCPUs (the multi-threaded TCG guest). Loading
# and unloading it rewrite the hooks' static calls in kernel text that every
# vCPU runs, which multi-threaded TCG must not see while another vCPU runs
# (qemu/run-vm.sh): both happen with the other vCPUs offline. In between, every
# vCPU is back, and clone_read's module variant forks, moves and kills on all
# of them at once, through all four takeovers: the module's read, its pid
# batching, its batched exit unlink (dead_batch) and its pid blocks
# (pid_block).
ko=/lib/modules/forkscale.ko
cpus=/sys/devices/system/cpu
clone_stats=/sys/kernel/debug/cgroup_clone/stats
pid_stats=/sys/kernel/debug/pid_release/stats
dead_stats=/sys/kernel/debug/cgroup_dead/stats
block_stats=/sys/kernel/debug/pid_block/stats
n=0
result() { # result <status> <description>
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}
# others <0|1>: takes every vCPU but the boot one offline, or back online
others() {
	for c in $cpus/cpu[1-9]*; do
		[ -e "$c/online" ] || continue
		echo "$1" > "$c/online" || return 1
	done
}
online() { cat $cpus/online; }
# Whatever happens, the later tests get every vCPU back.
trap 'others 1' EXIT
value() { # value <stats file> <key>
	sed -n "s/^$2: //p" "$1"
}

echo "TAP version 13"
all=$(online)
echo "# online: $all"
[ "$all" != 0 ]
result $? "more than one vCPU is online"
others 0 && [ "$(online)" = 0 ]
offline=$?
result $offline "the other vCPUs went offline for the load"
# never a load while another vCPU runs: it may run a stale translation
if [ $offline = 0 ]; then insmod $ko dead_batch=32 pid_block=16; else false; fi
result $? "the module loaded with one vCPU online"
others 1 && [ "$(online)" = "$all" ]
result $? "every vCPU is back online"
grep -qx "impl: forkscale" $clone_stats && grep -qx "impl: forkscale" $pid_stats
result $? "forks use the module's read and its pid batching"
grep -qx "impl: forkscale" $dead_stats && grep -qx "impl: forkscale" $block_stats
result $? "exits use the module's batched unlink, and forks its pid blocks"
lockless=$(value $clone_stats lockless) freed=$(value $pid_stats freed)
unlinked=$(value $dead_stats unlinked) blocks=$(value $block_stats blocks)

# clone_read's module variant, its results renumbered as this script's own
FORKSCALE_BOOT_READ=module ./clone_read -v module > /tmp/module_parallel.out 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	'ok '[0-9]* | 'not ok '[0-9]*)
		n=$((n + 1))
		echo "$line" | sed -E "s/^((not )?ok) [0-9]+/\\1 $n/"
		;;
	'#'*) echo "$line" ;;
	esac
done < /tmp/module_parallel.out
echo "# clone_read exited with status $rc"
[ $rc = 0 ]
result $? "clone_read's module variant passed on parallel vCPUs"
[ "$(value $clone_stats lockless)" -gt "${lockless:-0}" ] 2> /dev/null
result $? "its forks read css_sets through the module, lockless"
[ "$(value $pid_stats freed)" -gt "${freed:-0}" ] 2> /dev/null
result $? "its exits freed pids through the module's batches"
[ "$(value $dead_stats unlinked)" -gt "${unlinked:-0}" ] 2> /dev/null
result $? "its exits were unlinked through the module's batches"
[ "$(value $block_stats blocks)" -gt "${blocks:-0}" ] 2> /dev/null
result $? "its forks took numbers from blocks the module reserved"

others 0 && [ "$(online)" = 0 ]
offline=$?
result $offline "the other vCPUs went offline for the unload"
# run-tests unloads a module left behind, with every vCPU online: only on a
# failure already reported here
if [ $offline = 0 ]; then rmmod forkscale; else false; fi
result $? "the module unloaded with one vCPU online"
others 1 && [ "$(online)" = "$all" ]
result $? "every vCPU is back online after the unload"
grep -qx "impl: ${FORKSCALE_BOOT_READ:-locked}" $clone_stats &&
	grep -qx "impl: builtin" $pid_stats && grep -qx "impl: builtin" $dead_stats &&
	grep -qx "impl: builtin" $block_stats
result $? "the boot's read and the built-in pid freeing, exit unlink and allocation are back"
echo "1..$n"
