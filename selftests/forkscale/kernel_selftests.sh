#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel's own selftests of the paths forkscale changes, run under each
# implementation, and required to give stock 7.3's per-case results:
#  - cgroup suites under the series' boot read (locked) and the module (the
#    pinned read on the posted kernel: --posted; the comparators seqcount and
#    rwlock in make conformance: --baseline);
#  - clone3, pidfd and pid_namespace suites with the module's batching (the
#    built-in pid freeing on the posted kernel: --posted).
# Each suite runs once per distinct code path (README.md, "What make check
# runs"): a read or a pid freeing that the series and the posted kernel share
# runs on the posted kernel alone. The module's pinned read (clone_read=1) runs
# no kernel suite: clone_read's module_pinned variant tests it.
# Stock's results are committed (ksft-stock.txt); make conformance boots stock
# 7.3, checks that they are still its results, and UPDATE=1 rewrites them.
dir=/forkscale/tests/ksft
stock=/forkscale/tests/ksft-stock.txt
# A suite still running after this many seconds is killed, and fails.
timeout=300
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

# run_suites <label> <suite...>: per-case results in $out/<label>.<suite>, each
# suite run by the command in $wrap, if any
wrap=
run_suites() {
	label=$1; shift
	for t in "$@"; do
		name=$(echo "$t" | tr / _)
		start=$(cut -d' ' -f1 /proc/uptime)
		# the window a splat on the console is attributed to (qemu/run-vm.sh)
		echo "forkscale: running kernel_selftests.sh: $t under $label" > /dev/console
		# shellcheck disable=SC2046 # the arguments are words
		# shellcheck disable=SC2086 # $wrap is a command and its words
		(cd "$dir/${t%/*}" && timeout -s KILL $timeout $wrap \
			"./${t#*/}" $(suite_args "$t")) < /dev/null > "$out/$label.$name.log" 2>&1
		echo $? > "$out/$label.$name.rc"
		# A suite stopped by its timeout leaves its children, which would go on
		# taking pids under every later test. Its tasks carry the suite's name.
		if killall -q -KILL "${t#*/}" 2> /dev/null; then
			echo "# $t under $label: killed the tasks it left behind" > /dev/console
			sleep 1
		fi
		# "ok 3 name" / "not ok 3 name # SKIP ...", without the numbers, and
		# the TAP plan, compared with stock's like the cases ("none": some
		# suites print none, such as pidfd_poll_test)
		sed -nE 's/^((not )?ok) [0-9]+ (- )?(.*)/\1 \4/p' "$out/$label.$name.log" \
			> "$out/$label.$name"
		plan=$(sed -nE 's/^1\.\.([0-9]+).*/\1/p' "$out/$label.$name.log" | head -n 1)
		echo "# plan: ${plan:-none}" >> "$out/$label.$name"
		end=$(cut -d' ' -f1 /proc/uptime)
		echo "# $t under $label: $(grep -c '^ok' "$out/$label.$name") ok," \
			"$(grep -c '^not ok' "$out/$label.$name") not ok, $start-${end}s" > /dev/console
		# Every failing run says why, flaky and known cases included.
		! grep -q '^not ok' "$out/$label.$name" || why "$label" "$t" > /dev/console
	done
}

# finished <label> <suite>: the suite ran to its end on its own. Not killed (at
# its timeout, or by anything else); at most one TAP plan, which its results
# fill; and an exit status that agrees with them: 0 with no failed case, 1 with
# one, 4 (KSFT_SKIP) with none. Says what is wrong otherwise.
finished() {
	f="$out/$1.$(echo "$2" | tr / _)"
	rc=$(cat "$f.rc" 2> /dev/null || echo none)
	plans=$(grep -cE '^1\.\.[0-9]+' "$f.log")
	plan=$(sed -n 's/^# plan: \([0-9]*\)$/\1/p' "$f")
	cases=$(grep -c '^\(not \)\{0,1\}ok ' "$f")
	failed=$(grep '^not ok' "$f" | grep -vc ' # SKIP')
	bad=
	case $rc in
	137) bad="killed (signal 9): still running at its $timeout s timeout" ;;
	0) [ "$failed" = 0 ] || bad="exit status 0 with $failed failed cases" ;;
	1) [ "$failed" != 0 ] || bad="exit status 1 with no failed case" ;;
	4) [ "$failed" = 0 ] || bad="exit status 4 (skip) with $failed failed cases" ;;
	*) bad="exit status $rc" ;;
	esac
	[ "$plans" -le 1 ] || bad="${bad:+$bad; }$plans TAP plans"
	[ -z "$plan" ] || [ "$plan" = "$cases" ] ||
		bad="${bad:+$bad; }a plan of $plan cases, $cases results"
	[ -z "$bad" ] || { echo "# $2 under $1: $bad"; return 1; }
}

# expected <mode> <suite>: stock 7.3's per-case results, as committed, in the
# form of run_suites' files. mode: plain; favordynmods (cgroup2 remounted so);
# v1 (no cgroup2, a named v1 hierarchy).
expected() {
	awk -F '\t' -v m="$1" -v t="$2" '$1 == m && $2 == t { print $3 }' "$stock"
}

# compare <mode> <label> <suite...>: each suite ran to its end, and gave stock
# 7.3's per-case results (mode as for expected), flaky cases aside; a case
# the harness terminated at its time limit fails like any other
compare() {
	mode=$1 label=$2; shift 2
	for t in "$@"; do
		name=$(echo "$t" | tr / _)
		flaky "$t" | sed 's/^/ok /' > $out/flaky
		flaky "$t" | sed 's/^/not ok /' >> $out/flaky
		expected "$mode" "$t" > $out/stock
		if [ -s $out/flaky ]; then
			grep -vxF -f $out/flaky $out/stock > $out/a
			grep -vxF -f $out/flaky "$out/$label.$name" > $out/b
		else
			cp $out/stock $out/a
			cp "$out/$label.$name" $out/b
		fi
		# What is wrong (the diff, the run's messages) comes before the
		# result: run-tests forwards it to the host with it.
		ok=0
		finished "$label" "$t" || ok=1
		[ -s $out/stock ] || { echo "# $t: no committed results of stock 7.3 ($mode)"; ok=1; }
		if ! diff -u $out/a $out/b > $out/diff; then
			sed 's/^/# /' $out/diff | head -n 12
			why "$label" "$t" | head -n 14
			ok=1
		fi
		result $ok "$t: same results under $label as on stock 7.3"
	done
}

# The checks themselves, on stand-in suites against made-up stock results: one
# that skips a case stock runs, one that hangs after filling its plan, each of
# which must fail through the check it targets; and a control that gives
# stock's results, which must pass.
self_check() {
	real_dir=$dir real_stock=$stock real_timeout=$timeout
	dir=$out/forced stock=$out/forced/stock.txt timeout=3
	mkdir -p $dir/forced
	printf '#!/bin/sh\necho 1..2\necho ok 1 first\necho ok 2 second \\# SKIP forced\n' \
		> $dir/forced/skip
	printf '#!/bin/sh\necho 1..1\necho ok 1 first\nexec sleep 60\n' > $dir/forced/hang
	printf '#!/bin/sh\necho 1..1\necho ok 1 first\n' > $dir/forced/good
	chmod +x $dir/forced/skip $dir/forced/hang $dir/forced/good
	printf 'plain\tforced/skip\t%s\n' 'ok first' 'ok second' '# plan: 2' > $stock
	printf 'plain\tforced/hang\t%s\n' 'ok first' '# plan: 1' >> $stock
	printf 'plain\tforced/good\t%s\n' 'ok first' '# plan: 1' >> $stock
	run_suites forced forced/skip forced/hang forced/good 2> /dev/null
	(compare plain forced forced/skip) > $out/forced/skip.out
	sed 's/^/# forced skip: /' $out/forced/skip.out
	grep -q '^not ok' $out/forced/skip.out &&
		grep -qxF '# +ok second # SKIP forced' $out/forced/skip.out
	result $? "the comparison with stock fails a suite that skips a case stock runs"
	(compare plain forced forced/hang) > $out/forced/hang.out
	sed 's/^/# forced hang: /' $out/forced/hang.out
	grep -q '^not ok' $out/forced/hang.out &&
		grep -qF 'killed (signal 9): still running at its 3 s timeout' $out/forced/hang.out
	result $? "the comparison with stock fails a suite killed at its timeout"
	(compare plain forced forced/good) > $out/forced/good.out
	sed 's/^/# control: /' $out/forced/good.out
	grep -qE '^ok [0-9]+ forced/good: same results under forced as on stock 7.3$' $out/forced/good.out
	result $? "the comparison with stock passes a suite that gives stock's results"
	dir=$real_dir stock=$real_stock timeout=$real_timeout
}

# cgroup v1: test_core runs the cases that apply on a named v1 hierarchy it
# mounts itself, when it finds no cgroup2: in a mount namespace without it.
v1_suites=cgroup/test_core
printf '#!/bin/sh\numount /sys/fs/cgroup && mkdir -p /mnt && exec "$@"\n' > $out/v1
chmod +x $out/v1
v1() { # v1 <label>: the v1 suites under the current read
	wrap="unshare -m $out/v1"
	run_suites "$1" $v1_suites
	wrap=
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
	# print <prefix> <label> <suite...>: each suite's cases, and what is
	# wrong if it did not run to its end on its own (finished)
	print() {
		prefix=$1 label=$2; shift 2
		for t in "$@"; do
			sed "s|^|$prefix $t |" "$out/$label.$(echo "$t" | tr / _)"
			finished "$label" "$t" | sed 's/^# /ksft-error /'
		done
	}
	# the series' boot read, then pinned; stock has no choice
	boot_read=stock
	[ ! -e $sysctl ] || read -r boot_read < $sysctl
	reads=$boot_read
	[ "$boot_read" = stock ] || reads="$boot_read pinned"
	run_suites baseline $cgroup_suites $pid_suites
	print ksft baseline $cgroup_suites $pid_suites
	v1 baseline_v1
	print ksft-v1 baseline_v1 $v1_suites
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
	# the comparators of make bench, whose run of the suites make check leaves here
	if [ "$boot_read" != stock ]; then
		for r in seqcount rwlock; do
			use_read $r || continue
			run_suites $r $cgroup_suites
			print "ksft-$r" $r $cgroup_suites
		done
	fi
	if mount -o remount,nsdelegate,favordynmods /sys/fs/cgroup &&
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

# pidfd_test's recycled-pid case: a pidfd to a reaped task must not signal the
# next holder of its number, which batching delays. It must have run, not
# skipped, under every pid freeing (recycled_pid_ran <label>...).
recycled_pid_ran() {
	for impl in "$@"; do
		grep -qx 'ok pidfd_send_signal signal recycled pid test: Failed to signal recycled pid as expected' \
			"$out/$impl.pidfd_pidfd_test"
		result $? "pidfd/pidfd_test: the recycled-pid case ran under $impl"
	done
}

# --posted (make check's boot of the posted kernel: stock 7.3 and the merge set
# alone, with no sysctl of the series and no module): every suite once,
# test_core on cgroup v1, and the cgroup suites with cgroup2 remounted
# favordynmods, each compared with stock 7.3. The series' own pinned read is
# the merge set's cgroup_css_set_fork() behind a static call, so it runs here,
# as posted, and not again in the series' boot. So does the series' built-in
# pid freeing: with no module it is pid/0002's free_pid_batch() behind
# measure/0004's static call. What measure/0004 adds to it whether or not the
# module is loaded (pid_release_batch() marks each pid released, lookups by
# number skip released pids, alloc_pid() flushes and retries at -EAGAIN and
# -EEXIST) runs under the module's two pid runs below, and pid_lookup.sh and
# make conformance run the series without the module. favordynmods matters to
# the pinned read alone: the others take css_set_lock or their own lock, or
# validate against a counter that moves bump under css_set_lock, whichever
# rwsem a move takes.
if [ "${1:-}" = --posted ]; then
	echo "TAP version 13"
	[ ! -e $sysctl ]
	result $? "booted a kernel without the series' clone reads (the posted kernel)"
	run_suites posted $cgroup_suites $pid_suites
	v1 posted_v1
	mount -o remount,nsdelegate,favordynmods /sys/fs/cgroup &&
		grep -q ' /sys/fs/cgroup cgroup2 [^ ]*favordynmods' /proc/mounts
	result $? "cgroup2 remounted with favordynmods"
	run_suites posted_favordynmods $cgroup_suites
	echo "$saved_pid_max" > /proc/sys/kernel/pid_max
	compare plain posted $cgroup_suites $pid_suites
	compare v1 posted_v1 $v1_suites
	compare favordynmods posted_favordynmods $cgroup_suites
	recycled_pid_ran posted
	echo "1..$n"
	exit 0
fi

echo "TAP version 13"
self_check

# Built-ins only: no module loaded. The pinned read and the built-in pid
# freeing run on the posted kernel (--posted above). Of the series' own reads,
# only locked, the one it boots with: the seed's seqcount and Koutny's rwlock
# are comparators for make bench, which ships neither, so their run of the
# suites is make conformance's (--baseline), and make check tests them with
# clone_read's and kill_window's variants alone.
echo locked > $sysctl
result $? "selected clone read locked"
run_suites locked $cgroup_suites
v1 locked_v1

# The module: clone read, pid batching, the exit unlink and the pid blocks all
# taken over (the last two are off by default: dead_batch and pid_block turn
# them on).
insmod $ko dead_batch=32 pid_block=16
result $? "loaded the module"
run_suites module $cgroup_suites
v1 module_v1
run_suites module $pid_suites
rmmod forkscale
result $? "unloaded the module after its run"
# With the default 10 ms delays the suites rarely meet a queued pid or dead
# task; with 1 s, a reaped pid or an unlink waits up to a second (less if its
# queue fills, or the timer was armed earlier) while the suite goes on, and
# only the kernel's flushes before a reader keep the results stock's.
insmod $ko pid_batch=64 pid_max_delay_ms=1000 dead_batch=64 dead_max_delay_ms=1000 pid_block=16
result $? "loaded the module with pid_max_delay_ms=1000 dead_max_delay_ms=1000"
run_suites module_delay $cgroup_suites $pid_suites
rmmod forkscale
result $? "unloaded the module after its delayed run"
echo "$saved_pid_max" > /proc/sys/kernel/pid_max

# Every suite must exist and report its cases. (That every case stock 7.3
# fails or skips is a known failure, with its reason, the host checks on the
# committed ksft-stock.txt: tests/host/ksft_stock.sh.)
for t in $cgroup_suites $pid_suites; do
	name=$(echo "$t" | tr / _)
	base=locked
	[ -s "$out/$base.$name" ] || base=module
	[ -x "$dir/$t" ] && grep -q '^\(not \)\{0,1\}ok ' "$out/$base.$name"
	result $? "$t exists and reported its cases"
done
recycled_pid_ran module module_delay
for impl in locked module; do
	compare plain $impl $cgroup_suites
done
for impl in locked module; do
	compare v1 ${impl}_v1 $v1_suites
done
compare plain module_delay $cgroup_suites
for impl in module module_delay; do
	compare plain $impl $pid_suites
done
echo "1..$n"
