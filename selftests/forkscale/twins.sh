#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Broken twins (tests/twins.txt). A module twin is forkscale.ko built with one
# defect on purpose; a kernel twin ("kernel:<defect>") is a defect of the
# kernel's own code that the series' kernel (measure/0010) switches on in
# /sys/kernel/debug/cgroup_clone_twin/defect, or, named "kernel:<dir>/<defect>",
# in /sys/kernel/debug/<dir>/defect (measure/0011's pid_release/defect). With the twin in place, the test
# named for it must fail, with a line of output matching the twin's pattern; a
# test that passes with its twin in place cannot catch what it is named after.
# Runs in a guest boot of its own (tests/check.sh): a twin may leave leaked
# css_sets behind.
list=/forkscale/twins.txt
ko=/lib/modules/forkscale.ko
out=/tmp/twin.out

# Runs <test> with the twin <name> in place, for at most
# FORKSCALE_TWIN_TIMEOUT seconds (default 300: a twin that hangs its test
# costs that, not the rest of the guest's time); logs its output and time to
# the console, and its exit status to $out.rc (143: killed at its timeout, by
# busybox's SIGTERM).
run_test() { # <name> <test>
	echo "forkscale: twin $1: $2" > /dev/console
	read -r t0 _ < /proc/uptime
	(cd /forkscale/tests && timeout "${FORKSCALE_TWIN_TIMEOUT:-300}" sh -c "$2") < /dev/null > $out 2>&1
	echo $? > $out.rc
	read -r t1 _ < /proc/uptime
	sed "s/^/twin $1: /" $out > /dev/console
	echo "# time: twin $1 took $(( ${t1%.*} - ${t0%.*} )) s (exit status $(cat $out.rc))" > /dev/console
}

# Puts the module twin <name> in place of forkscale.ko and runs <test>. Prints
# why the twin could not be run, if it could not.
module_twin() { # <name> <test>
	twin=/lib/modules/twins/$1/forkscale.ko
	[ -f "$twin" ] || { echo "no twin module at $twin"; return; }
	rmmod forkscale 2>/dev/null
	[ ! -d /sys/module/forkscale ] || { echo "forkscale is loaded and does not unload"; return; }
	mount --bind "$twin" $ko || { echo "cannot put the twin in place"; return; }
	mark="forkscale twins: $1 starts"
	echo "$mark" > /dev/kmsg
	run_test "$1" "$2"
	rmmod forkscale 2>/dev/null
	umount $ko
	# Every twin logs "broken twin" at init (build-twins.sh's --cfg forkscale_twin).
	loaded=$(dmesg | sed -n "/$mark/,\$p" | grep -c 'forkscale: broken twin')
	if cmp -s "$twin" $ko; then
		echo "the real forkscale.ko is not back"
	elif [ -d /sys/module/forkscale ]; then
		echo "the twin is still loaded after its test"
	elif [ "$loaded" -eq 0 ]; then
		echo "the twin never loaded"
	fi
}

# Switches the kernel's defect <defect> on, runs <test> and switches it off.
kernel_twin() { # <[dir/]defect> <test>
	knob=/sys/kernel/debug/cgroup_clone_twin/defect
	case $1 in */*) knob=/sys/kernel/debug/${1%/*}/defect ;; esac
	set -- "${1#*/}" "$2"
	rmmod forkscale 2>/dev/null
	[ ! -d /sys/module/forkscale ] || { echo "forkscale is loaded and does not unload"; return; }
	if ! { echo "$1" > $knob; } 2>/dev/null || [ "$(cat $knob)" != "$1" ]; then
		echo none > $knob 2>/dev/null
		echo "this kernel has no defect $1 in $knob"
		return
	fi
	run_test "kernel:$1" "$2"
	echo none > $knob
	[ "$(cat $knob)" = none ] || echo "the defect is still on after its test"
}

# FORKSCALE_TWINS=<ERE> runs only the lines it matches (development runs).
# Lines whose test is "host:..." are booted by the host (tests/host/harness.sh).
twins=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' $list | grep -v '^[^|]*|host:' |
	grep -E "${FORKSCALE_TWINS:-.}")
echo "TAP version 13"
echo "1..$(echo "$twins" | grep -c .)"
n=0
echo "$twins" | while IFS='|' read -r name test pattern; do
	n=$((n + 1))
	# Named after the twin and the last word of its test (the case it runs), as a
	# twin may be caught by more than one test.
	what="$name is caught by ${test##*[ /]}"
	rm -f $out $out.rc
	case $name in
	kernel:*) broken=$(kernel_twin "${name#kernel:}" "$test") ;;
	*) broken=$(module_twin "$name" "$test") ;;
	esac
	# run_test ran in a subshell: its exit status is in $out.rc.
	rc=$(cat $out.rc 2>/dev/null)
	if [ -n "$broken" ]; then
		echo "not ok $n $what # $broken"
	elif grep -qE "$pattern" $out; then
		echo "ok $n $what"
		echo "# $name: $test failed (exit status $rc): $(grep -E "$pattern" $out | head -n 1)"
	else
		echo "not ok $n $what"
		echo "# $name: $test did not fail as expected (exit status $rc):"
		grep -E '^(not )?ok' $out | sed 's/^/#   /'
	fi
done
