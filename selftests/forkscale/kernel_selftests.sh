#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel's own selftests of the paths forkscale changes, run under each
# implementation, and required to give the same per-case results:
#  - cgroup suites under every kernel.cgroup_clone_read built-in and the module;
#  - clone3, pidfd and pid_namespace suites with the built-in pid freeing and
#    with the module's batching.
dir=/forkscale/tests/ksft
sysctl=/proc/sys/kernel/cgroup_clone_read
ko=/lib/modules/forkscale.ko
out=/tmp/ksft
mkdir -p $out

known=/forkscale/tests/ksft-known-failures.txt

n=0
result() { # result <status> <description>
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}

# Each suite runs once per implementation. A case that fails now and then on
# its own (not an implementation's doing) is listed in the known failures with
# "flaky:" and the evidence (tests/ksft_flakes.sh): its result may differ.
flaky() { # the flaky cases of suite $1, one per line
	awk -F '\t' -v t="$1" '$1 == t && $3 ~ /^flaky:/ { print $2 }' $known
}

# Under TCG with KASAN, pidfd_poll_test's 10000 children by default outgrow the
# run's time budget; 1000 exercise the same poll paths in a tenth of the time.
# pidfd_test runs whole: its recycled-pid case wraps its own namespace's pid
# numbers just past the one it waits for (patch pid/0001), where it used to fork
# 32768 times and skip.
suite_args() {
	case $1 in pidfd/pidfd_poll_test) echo 1000 ;; esac
}

# why <label> <suite>: what the suite said besides its passing cases, such as
# the message of a failed check (the cgroup suites print those to stderr).
why() {
	grep -v '^ok ' "$out/$1.$(echo "$2" | tr / _).log" | head -n 40 |
		sed "s|^|# $2 under $1: |"
}

# run_suites <label> <suite...>: per-case results in $out/<label>.<suite>
run_suites() {
	label=$1; shift
	for t in "$@"; do
		name=$(echo "$t" | tr / _)
		start=$(cut -d' ' -f1 /proc/uptime)
		# shellcheck disable=SC2046 # the arguments are words
		(cd "$dir/${t%/*}" && timeout -s KILL 300 \
			"./${t#*/}" $(suite_args "$t")) < /dev/null > "$out/$label.$name.log" 2>&1
		# A suite stopped by its timeout leaves its children, which would go on
		# taking pids under every later test. Its tasks carry the suite's name.
		if killall -q -KILL "${t#*/}" 2> /dev/null; then
			echo "# $t under $label: killed the tasks it left behind" > /dev/console
			sleep 1
		fi
		# "ok 3 name" / "not ok 3 name # SKIP ...", without the numbers
		sed -nE 's/^((not )?ok) [0-9]+ (- )?(.*)/\1 \4/p' "$out/$label.$name.log" \
			> "$out/$label.$name"
		end=$(cut -d' ' -f1 /proc/uptime)
		echo "# $t under $label: $(grep -c '^ok' "$out/$label.$name") ok," \
			"$(grep -c '^not ok' "$out/$label.$name") not ok, $start-${end}s" > /dev/console
		# Every failing run says why, flaky and known cases included.
		! grep -q '^not ok' "$out/$label.$name" || why "$label" "$t" > /dev/console
	done
}

# compare <baseline> <label> <suite...>: the same per-case results, flaky cases aside
compare() {
	base=$1 label=$2; shift 2
	for t in "$@"; do
		name=$(echo "$t" | tr / _)
		flaky "$t" | sed 's/^/ok /' > $out/flaky
		flaky "$t" | sed 's/^/not ok /' >> $out/flaky
		if [ -s $out/flaky ]; then
			grep -vxF -f $out/flaky "$out/$base.$name" > $out/a
			grep -vxF -f $out/flaky "$out/$label.$name" > $out/b
		else
			cp "$out/$base.$name" $out/a
			cp "$out/$label.$name" $out/b
		fi
		# On a difference: the diff and each run's messages, before the result
		# (run-tests forwards them to the host with it).
		if diff -u $out/a $out/b > $out/diff; then
			result 0 "$t: same results under $label as under $base"
		else
			sed 's/^/# /' $out/diff | head -n 12
			why "$base" "$t" | head -n 14
			why "$label" "$t" | head -n 14
			result 1 "$t: same results under $label as under $base"
		fi
	done
}

cgroup_suites="cgroup/test_core cgroup/test_kill cgroup/test_freezer cgroup/test_pids"
pid_suites="clone3/clone3 clone3/clone3_set_tid clone3/clone3_clear_sighand
	pidfd/pidfd_test pidfd/pidfd_open_test pidfd/pidfd_poll_test pidfd/pidfd_wait
	pidfd/pidfd_getfd_test pidfd/pidfd_setns_test pidfd/pidfd_fdinfo_test
	pidfd/pidfd_info_test pidfd/pidfd_file_handle_test pidfd/pidfd_autoreap_test
	pid_namespace/regression_enomem pid_namespace/pid_max"

# test_kill's forkbomb forks until cgroup.kill catches up; a lower pid_max
# bounds it on the small guest, for every implementation alike.
saved_pid_max=$(cat /proc/sys/kernel/pid_max)
echo 4096 > /proc/sys/kernel/pid_max

# --baseline (make conformance, on stock 7.3 and on the series as booted): one
# run of every suite, its per-case results printed as "ksft <suite> <result>"
# for the host to compare. Then the cgroup suites with cgroup2 remounted
# favordynmods ("ksft-favordynmods ..."), and on the series under the pinned
# read too ("ksft-pinned ...", "ksft-pinned_favordynmods ..."), so that the read
# for merging is compared with stock 7.3 itself, in both rwsem modes.
if [ "${1:-}" = --baseline ]; then
	print() { # <prefix> <label> <suite...>
		prefix=$1 label=$2; shift 2
		for t in "$@"; do
			sed "s|^|$prefix $t |" "$out/$label.$(echo "$t" | tr / _)"
		done
	}
	# the series' boot read, then pinned; stock has no choice
	boot_read=stock
	[ ! -e $sysctl ] || read -r boot_read < $sysctl
	reads=$boot_read
	[ "$boot_read" = stock ] || reads="$boot_read pinned"
	run_suites baseline $cgroup_suites $pid_suites
	print ksft baseline $cgroup_suites $pid_suites
	# use_read <read>: switch the series' read, and say so if it did not switch
	use_read() {
		echo "$1" > $sysctl && [ "$(cat $sysctl)" = "$1" ] ||
			{ echo "ksft-error cannot select the $1 read"; return 1; }
	}
	[ "$boot_read" = stock ] || [ "$boot_read" = locked ] ||
		echo "ksft-error the series booted with the $boot_read read, not locked"
	if [ "$boot_read" != stock ] && use_read pinned; then
		run_suites pinned $cgroup_suites
		print ksft-pinned pinned $cgroup_suites
	fi
	if mount -o remount,favordynmods /sys/fs/cgroup &&
		grep -q ' /sys/fs/cgroup cgroup2 [^ ]*favordynmods' /proc/mounts; then
		for r in $reads; do
			{ [ "$r" = stock ] || use_read "$r"; } || continue
			run_suites "${r}_favordynmods" $cgroup_suites
		done
		print ksft-favordynmods "${boot_read}_favordynmods" $cgroup_suites
		[ "$boot_read" = stock ] ||
			print ksft-pinned_favordynmods pinned_favordynmods $cgroup_suites
	else
		echo "ksft-error cgroup2 cannot be remounted favordynmods"
	fi
	[ "$boot_read" = stock ] || use_read "$boot_read"
	echo "$saved_pid_max" > /proc/sys/kernel/pid_max
	exit 0
fi

echo "TAP version 13"

# Built-ins only: no module loaded.
for impl in locked pinned seqcount rwlock; do
	echo $impl > $sysctl
	result $? "selected clone read $impl"
	run_suites $impl $cgroup_suites
done
echo locked > $sysctl
run_suites builtin $pid_suites

# The module: clone read and pid batching both taken over.
insmod $ko
result $? "loaded the module"
run_suites module $cgroup_suites
run_suites module $pid_suites
rmmod forkscale
result $? "unloaded the module after its run"
# With the default 10 ms delay the pid suites rarely meet a queued pid; with
# 1 s, a reaped pid waits up to a second (less if its queue fills, or the
# timer was armed earlier) while the suite goes on.
insmod $ko pid_batch=64 pid_max_delay_ms=1000
result $? "loaded the module with pid_max_delay_ms=1000"
run_suites module_delay $pid_suites
rmmod forkscale
result $? "unloaded the module after its delayed run"

# favordynmods: moves then take current's per-threadgroup rwsem instead of the
# global one, which the pinned read must rely on as well. Once on, the kernel
# keeps the per-threadgroup rwsem until reboot, so this runs last.
mount -o remount,favordynmods /sys/fs/cgroup &&
	grep -q ' /sys/fs/cgroup cgroup2 [^ ]*favordynmods' /proc/mounts
result $? "cgroup2 remounted with favordynmods"
for impl in locked pinned; do
	echo $impl > $sysctl
	run_suites ${impl}_favordynmods $cgroup_suites
done
echo locked > $sysctl
echo "$saved_pid_max" > /proc/sys/kernel/pid_max

# Every suite must exist and report its cases, and every case must pass under
# the baseline (locked, or the built-in pid freeing) unless it is on the
# committed list of known failures, with its reason.
for t in $cgroup_suites $pid_suites; do
	name=$(echo "$t" | tr / _)
	base=locked
	[ -s "$out/$base.$name" ] || base=builtin
	[ -x "$dir/$t" ] && [ -s "$out/$base.$name" ]
	result $? "$t exists and reported its cases"
	bad=$(sed -n 's/^not ok //p' "$out/$base.$name" 2>/dev/null | sed 's/ # .*//' |
		while IFS= read -r c; do
			grep -qF "$t	$c	" $known 2>/dev/null || echo "$c"
		done)
	[ -z "$bad" ] || echo "$bad" | sed "s|^|# $t: unexpected failure: |"
	[ -z "$bad" ]
	result $? "$t: every case passes or is a known failure"
done
# pidfd_test's recycled-pid case: a pidfd to a reaped task must not signal the
# next holder of its number, which batching delays. It must have run, not
# skipped, under every pid implementation.
for impl in builtin module module_delay; do
	grep -qx 'ok pidfd_send_signal signal recycled pid test: Failed to signal recycled pid as expected' \
		"$out/$impl.pidfd_pidfd_test"
	result $? "pidfd/pidfd_test: the recycled-pid case ran under $impl"
done
for impl in pinned seqcount rwlock module; do
	compare locked $impl $cgroup_suites
done
compare locked_favordynmods pinned_favordynmods $cgroup_suites
compare builtin module $pid_suites
compare builtin module_delay $pid_suites
echo "1..$n"
