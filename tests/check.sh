#!/usr/bin/env bash
# `make check`: host-side checks and every in-guest test, as one TAP stream
# ending in "N passed, N failed, N skipped". Exits non-zero on any failure.
#   check.sh <bzImage> <initramfs> <kdir> <outdir>
# The posted kernel (kernel/posted/series) is built here if make check did not
# start its build and it is not cached, niced and in the background while the
# other guests run (see posted_pid).
#
# CHECK_DEADLINE (seconds since the epoch; the Makefile sets it 85 minutes after
# make started, .ci/run 85 minutes after CI started) is when the summary must
# have been printed. Every guest's and host step's time limit is the smaller of
# its own and what is left before the deadline, less what must still follow it
# on its core and a final margin; a step with no time left is not started and
# fails. So a hang fails its step, and every other result and the summary still
# come inside CI's 90 minutes.
#
# Two chains of steps run side by side (the main guest's, in the background,
# and the rest), and both write results as they come: every line goes out
# whole, in one write, and tap_number (at the end of this file) numbers and
# counts them. A guest's results are streamed from its serial port as the
# guest prints them.
set -uo pipefail
kernel=$1 initrd=$2 kdir=$3 out=$4
top=$(cd "$(dirname "$0")/.." && pwd)
posted_ksh() { SERIES_DIR=$top/kernel/posted "$top/kernel/kernel.sh" "$@"; }

now() { date +%s; }
deadline=${CHECK_DEADLINE:-$(($(now) + 5100))}
case $deadline in
'' | *[!0-9]*)
	echo "check: error: CHECK_DEADLINE must be seconds since the epoch, not '$deadline'" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 2 ;;
esac
# What the summary needs after the last step: the manifest checks.
final_margin=${CHECK_FINAL_MARGIN:-120}
# limit <cap> [reserve]: the seconds a step may take.
limit() {
	local left=$((deadline - $(now) - final_margin - ${2:-0}))
	echo $((left < $1 ? left : $1))
}

# Passes its input on line by line, each line in one write, so that the two
# chains' lines never mix; "ok"/"not ok" lines are results for tap_number to
# number, everything else diagnostics.
report() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"ok host: "* | "not ok host: "*) printf '%s\n' "$line" >> "$out/host-results.log" ;;
		esac
	done
}

# tee_lines <file>: report's line-by-line copy to stdout, and to <file>.
tee_lines() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		printf '%s\n' "$line" >> "$1"
	done
}

echo "TAP version 13"
mkdir -p "$out"

# The kernel build is cached: asking for it again must hit the same entry without
# building, and nothing check did (module build included) may have recompiled a
# kernel object after the build completed.
cache_unchanged() {
	local again newer
	again=$("$top/kernel/kernel.sh" build 2> "$out/rebuild.txt")
	newer=$(find "$kdir" -name '*.o' -newer "$kdir/.done" -not -path '*/tools/*' | head -n 3)
	if [ "$again" = "$kdir" ] && [ ! -s "$out/rebuild.txt" ] && [ -z "$newer" ]; then
		echo "ok host: cached kernel build is reused and compiles nothing"
	else
		echo "not ok host: cached kernel build is reused and compiles nothing"
		echo "# asked again: ${again:-nothing} (expected $kdir); rebuilt: ${newer:-none}"
		sed 's/^/# /' "$out/rebuild.txt"
	fi
}

# Documentation/*.rst must build without a docutils warning.
docs_build() {
	local f
	for f in "$top"/Documentation/*.rst; do
		if rst2html --halt=warning --report=warning "$f" > /dev/null 2> "$out/docs.txt"; then
			echo "ok host: ${f#"$top"/} builds without warnings"
		else
			echo "not ok host: ${f#"$top"/} builds without warnings"
			sed 's/^/# /' "$out/docs.txt"
		fi
	done
}

# stream <results.log> <pid>: the guest's results as they reach its serial
# port, until the process <pid> (its run-vm.sh) has ended; a copy goes to
# <results.log>.streamed. run-vm.sh rewrites results.log without its CRs at
# the end, under a new inode, while tail -f reads the old one to its end.
stream() {
	local log=$1 pid=$2
	: > "$log.streamed"
	while [ ! -e "$log" ]; do
		kill -0 "$pid" 2> /dev/null || return 0
		sleep 1
	done
	tail -n +1 -f --pid="$pid" "$log" 2> /dev/null | sed -u 's/\r//g' |
		grep --line-buffered -aE "^(not )?ok |^# [^ ]+: " | tee_lines "$log.streamed"
}

# guest <dir> <description> <cap> <reserve> <run-vm.sh mode and kernel args...>:
# boots a guest with a time limit of <cap> seconds, or less where the deadline
# is nearer (<reserve>: what its core runs after it), streams its results,
# and reports whether it ran to its end cleanly.
guest() {
	local dir=$1 what=$2 cap=$3 reserve=$4 t0=$SECONDS secs vm rc
	shift 4
	# no result of an earlier run may stand in for this one's
	rm -rf "${out:?}/$dir"
	mkdir -p "$out/$dir"
	secs=$(limit "$cap" "$reserve")
	if [ "$secs" -lt 60 ]; then
		echo "not ok vm: $what (not booted: $secs s left before make check's deadline)"
		touch "$out/$dir/results.log"
		return
	fi
	TIMEOUT=$secs "$top/qemu/run-vm.sh" "$kernel" "$initrd" "$out/$dir" "$@" 2> "$out/$dir.err" &
	vm=$!
	stream "$out/$dir/results.log" "$vm"
	wait "$vm"
	rc=$?
	touch "$out/$dir/results.log"
	# what the stream may have missed at the end (it reads after the guest is gone)
	grep -aE "^(not )?ok |^# [^ ]+: " "$out/$dir/results.log" |
		tail -n +$(($(wc -l < "$out/$dir/results.log.streamed") + 1)) | report
	if [ $rc = 0 ]; then
		echo "ok vm: $what"
	else
		echo "not ok vm: $what"
		sed 's/^/# /' "$out/$dir.err" | report
	fi
	echo "# time: host: the guest in $dir took $((SECONDS - t0)) s of its $secs s limit"
}

# Five guests. The main one, the twins', the kmemleak and the posted kernel's
# run on one host thread each (single-threaded TCG): the main one, the longest,
# boots first, and the kmemleak guest follows it on the same core, while the
# host checks (niced, so that they do not slow it), the multi-threaded guest
# (two host threads, for about 4 minutes), then the twins' guest and the
# posted kernel's use the other core. Each core then has about 23 minutes of
# work (the cold run at 616fa43: 1331 + 131 s, and 1342 s).
# The main guest leaves the kmemleak guest's usual time (about 200 s) for it.
main_guest() {
	guest vm "guest ran every test and shut down cleanly" "${CHECK_TIMEOUT:-3600}" 600 check
}

# The broken twins (selftests/forkscale/twins.sh) in a boot of their own: a
# twin may leave leaked css_sets behind.
twins_guest() {
	echo "# booting the twins' VM (${SMP:-2} vCPUs)"
	guest twins "twins' guest ran every twin and shut down cleanly" "${TWINS_TIMEOUT:-1800}" 600 \
		only FORKSCALE_ONLY=twins.sh FORKSCALE_TWIN_TIMEOUT="${TWIN_TIMEOUT:-300}"
}

mttcg_guest() {
	# The second guest, under multi-threaded TCG: each vCPU on a host thread of
	# its own, so forks, moves and kills run in parallel. It runs only the tests
	# of qemu/guest/mttcg.list, which patch no kernel text (qemu/run-vm.sh), with
	# kmemleak on and a scan after them.
	# Its forks run in parallel with the moves, and rarely fit clone_read's
	# 20 ms pauses between them.
	echo "# booting the multi-threaded TCG VM (${SMP:-2} vCPUs, cgroup_clone_read=seqcount, kmemleak=on)"
	TCG_THREAD=multi guest mttcg \
		"multi-threaded TCG guest ran its tests and shut down cleanly" "${MTTCG_TIMEOUT:-1200}" 900 \
		mttcg maxcpus=1 cgroup_clone_read=seqcount kmemleak=on FORKSCALE_MIGRATE_PAUSE_MS=200
}

# The module's paths under kmemleak (qemu/guest/kmemleak.list), in a
# single-threaded boot of their own: loading the module patches text, which
# rules out the multi-threaded guest, and kmemleak in the main guest would
# double its time. 15 load/unload cycles in the storm, not 60: each registers
# all four takeovers, and 30 took 236 s there (98 s when each registered two).
kmemleak_guest() {
	echo "# booting the kmemleak VM (${SMP:-2} vCPUs, kmemleak=on)"
	guest kmemleak \
		"kmemleak guest ran the module's tests and shut down cleanly" "${KMEMLEAK_TIMEOUT:-1200}" 0 \
		kmemleak kmemleak=on FORKSCALE_LOAD_CYCLES=15
}

# The posted kernel: stock 7.3 and the merge set alone (kernel/posted/series),
# built from the same config fragments. The kernel's selftests, each compared
# with stock 7.3's committed results (kernel_selftests.sh --posted).
posted_guest() {
	local kernel
	if [ "$posted_rc" != 0 ] || [ ! -s "$out/posted-kdir" ]; then
		# no earlier run's results may stand in for this one's
		rm -rf "${out:?}/posted"
		echo "not ok vm: posted kernel's guest ran the kernel selftests and shut down cleanly (its build failed)"
		tail -n 20 "$out/posted-build.log" | sed 's/^/# /'
		return
	fi
	# the image of the very build it waited for
	kernel=$(cat "$out/posted-kdir")/arch/x86/boot/bzImage
	echo "# booting the posted kernel's VM (${SMP:-2} vCPUs)"
	guest posted \
		"posted kernel's guest ran the kernel selftests and shut down cleanly" "${POSTED_TIMEOUT:-1200}" 0 posted
}

# make run's job, once, with a 1 s workload: the guest boots, loads the module,
# runs the workload and unloads it, and qemu/report.sh's report must say so
# with figures that show the work went through the module. The check is shown
# catching a copy of the report whose rmmod failed.
report_ok() { # <report file>: prints what is wrong with it, if anything
	awk '
		/^  module: / { mod = /forkscale loaded \(live\)/ }
		/fork\+exit\+wait: / { fork = $2 + 0 }
		/pthread create\+join: / { thr = $3 + 0 }
		/^    errors: / { err = $2 }
		/^  clone read: / { lockless = ($3 == "forkscale," && $7 + 0 > 0) }
		/^  pid freeing: / { freed = ($3 == "forkscale," && $7 + 0 > 0) }
		/^  rmmod: / { rmmod = $2 }
		END {
			if (!mod) print "the module did not load"
			if (fork <= 0 || thr <= 0) print "no forks or no threads went through"
			if (err != "0") print "the workload had errors"
			if (!lockless) print "no lockless read by the module"
			if (!freed) print "no pid freed by the module"
			if (rmmod != "ok") print "rmmod did not succeed"
		}' "$1"
}
make_run() {
	local t0=$SECONDS bad secs
	rm -rf "${out:?}/run"
	secs=$(limit "${RUN_TIMEOUT:-600}" 600)
	if [ "$secs" -lt 60 ]; then
		echo "not ok host: make run boots, loads the module, runs its workload through it and reports (not booted: $secs s left before make check's deadline)"
		return
	fi
	TIMEOUT=$secs "$top/qemu/run-vm.sh" "$kernel" "$initrd" "$out/run" run \
		forkscale.seconds=1 > "$out/run.txt" 2>&1 &&
		"$top/qemu/report.sh" "$out/run" >> "$out/run.txt" 2>&1
	local rc=$?
	bad=$(report_ok "$out/run.txt")
	if [ $rc = 0 ] && [ -z "$bad" ]; then
		echo "ok host: make run boots, loads the module, runs its workload through it and reports"
	else
		echo "not ok host: make run boots, loads the module, runs its workload through it and reports"
		{ echo "exit status $rc"; echo "$bad"; tail -n 30 "$out/run.txt"; } | sed 's/^/# /'
	fi
	sed 's/^  rmmod: .*/  rmmod:        failed/' "$out/run.txt" > "$out/run-twin.txt"
	if [ "$(report_ok "$out/run-twin.txt")" = "rmmod did not succeed" ]; then
		echo "ok host: the check of make run's report catches a failed rmmod"
	else
		echo "not ok host: the check of make run's report catches a failed rmmod"
	fi
	echo "# time: host: make run took $((SECONDS - t0)) s"
}

manifest_checks() {
	cat "$out/vm/results.log" "$out/mttcg/results.log" "$out/twins/results.log" \
		"$out/kmemleak/results.log" "$out/posted/results.log" > "$out/results.log"
	"$top/tests/host/manifest.sh" "$out/results.log"
	# The manifest check itself: the same results less one must fail it.
	grep -aE '^(not )?ok ' "$out/results.log" | sed '$d' > "$out/results-less-one.log"
	if "$top/tests/host/manifest.sh" "$out/results-less-one.log" > "$out/manifest-self.txt"; then
		echo "not ok host: a missing guest result fails make check (it passed)"
	elif grep -q "^not ok manifest: no result for " "$out/manifest-self.txt"; then
		echo "ok host: a missing guest result fails make check"
	else
		echo "not ok host: a missing guest result fails make check (wrong report)"
	fi
	# ... and so must the same results with one ok turned into a skip.
	grep -aE '^(not )?ok ' "$out/results.log" | grep -v ' # SKIP' |
		sed '0,/^ok \(.*\)$/s//ok \1 # SKIP forced/' > "$out/results-one-skipped.log"
	if "$top/tests/host/manifest.sh" "$out/results-one-skipped.log" > "$out/manifest-skip.txt"; then
		echo "not ok host: a guest result skipped where the manifest expects ok fails make check (it passed)"
	elif grep -q "reported skip, the manifest expects ok" "$out/manifest-skip.txt"; then
		echo "ok host: a guest result skipped where the manifest expects ok fails make check"
	else
		echo "not ok host: a guest result skipped where the manifest expects ok fails make check (wrong report)"
	fi
}

# The host checks' results against their own manifest,
# tests/expected-host-results.txt, with every number in a name as N (counts
# such as "the 33 committed patches" change with the tree): a host check that
# stopped running, or ran fewer of its checks, fails make check as a missing
# guest result does. Shown catching the same results less one.
host_manifest() {
	local list=$top/tests/expected-host-results.txt
	sed -E 's/[0-9]+/N/g' "$out/host-results.log" > "$out/host-results-n.log"
	"$top/tests/host/manifest.sh" "$out/host-results-n.log" "$list" | sed 's/ manifest: / host manifest: /'
	sed '$d' "$out/host-results-n.log" > "$out/host-results-less-one.log"
	if "$top/tests/host/manifest.sh" "$out/host-results-less-one.log" "$list" > /dev/null; then
		echo "not ok host manifest: a missing host result fails make check (it passed)"
	else
		echo "ok host manifest: a missing host result fails make check"
	fi
}

# The manifest's statuses on a fixture, both ways: the guests' results hold no
# expected skip today, so manifest_checks alone cannot show a skip that passes.
manifest_fixture() {
	local d=$out/manifest-fixture
	mkdir -p "$d"
	printf 't: passes\nt: skips | skip: a fixture\n' > "$d/manifest"
	printf 'ok t: passes\nok t: skips # SKIP here\n' > "$d/right.log"
	printf 'ok t: passes\nok t: skips\n' > "$d/unskipped.log"
	printf 'ok t: passes # SKIP here\nok t: skips # SKIP here\n' > "$d/skipped.log"
	local what="the manifest wants each listed status, an expected skip included"
	if ! "$top/tests/host/manifest.sh" "$d/right.log" "$d/manifest" > "$d/right.txt"; then
		echo "not ok host: $what (the right statuses failed)"
		sed 's/^/# /' "$d/right.txt"
	elif "$top/tests/host/manifest.sh" "$d/unskipped.log" "$d/manifest" > "$d/unskipped.txt" ||
		! grep -q "'t: skips' reported ok, the manifest expects skip" "$d/unskipped.txt"; then
		echo "not ok host: $what (an expected skip that passed was not caught)"
	elif "$top/tests/host/manifest.sh" "$d/skipped.log" "$d/manifest" > "$d/skipped.txt" ||
		! grep -q "'t: passes' reported skip, the manifest expects ok" "$d/skipped.txt"; then
		echo "not ok host: $what (a skip where ok is expected was not caught)"
	else
		echo "ok host: $what"
	fi
}

# The numbering and counting of every result line, for the whole run: reads
# check.sh's output, numbers "ok" and "not ok" lines, passes the rest, and
# ends with the plan and "N passed, N failed, N skipped". A run whose body did
# not reach its last line (killed, or a driver bug) fails.
tap_number() {
	awk '
		/^not ok / { n++; failed++; sub(/^not ok /, ""); print "not ok " n " " $0; fflush(); next }
		/^ok / {
			n++
			if (/# SKIP/) skipped++; else passed++
			sub(/^ok /, ""); print "ok " n " " $0; fflush(); next
		}
		$0 == "# check: every step ended" { done = 1 }
		{ print; fflush() }
		END {
			if (!done) {
				n++; failed++
				print "not ok " n " check: make check'"'"'s driver ran to its end"
			}
			print "1.." n
			printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
			exit !(failed == 0 && n > 0)
		}'
}

# wait_until <pid> <what> <reserve>: waits for <pid>, and kills its process
# group if it is still running when only <reserve> seconds and the final margin
# are left before the deadline. Fails if it had to.
wait_until() {
	local pid=$1 what=$2 reserve=$3
	while kill -0 "$pid" 2> /dev/null; do
		if [ "$(limit 60 "$reserve")" -le 0 ]; then
			kill -- -"$pid" 2> /dev/null
			echo "# $what: still running at make check's deadline less ${reserve} s; stopped"
			wait "$pid"
			return 1
		fi
		sleep 5
	done
	wait "$pid"
}

body() {
rm -f "$out/host-results.log"
report < <(cache_unchanged)
main_pid="" posted_pid=""
# The posted kernel's build that make check started first (check-posted-build),
# if it is still running: its process group, checked to be that build.
stop_early_build() {
	local pg
	pg=$(cat "$out/posted-early.pid" 2> /dev/null) || return 0
	grep -qa 'kernel\.sh' "/proc/$pg/cmdline" 2> /dev/null && kill -- -"$pg" 2> /dev/null
	rm -f "$out/posted-early.pid"
}
trap '[ -z "$main_pid" ] || kill -- -"$main_pid" 2> /dev/null
	[ -z "$posted_pid" ] || kill -- -"$posted_pid" 2> /dev/null
	[ ! -s "$out/host-step.pid" ] || kill -- -"$(cat "$out/host-step.pid")" 2> /dev/null
	stop_early_build' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The posted kernel's guest comes last on the second core. A cold make check
# started that kernel's build before the series' own (check-posted-build, whose
# comment says how the two share the CPUs); this call waits for it on the
# build's lock. A build that did not start there runs here, at nice 19 in this
# session, from the cycles the guests and host checks leave. When it is
# cached, this finds it and returns at once. Its source tree comes first, in the foreground: a
# worktree of the base repository that the host checks' bad_input.sh also uses.
rm -f "$out/posted-kdir" "$out/main-chain.tap"
posted_ksh source > "$out/posted-build.log" 2>&1
set -m
nice -n 19 bash -c "$(declare -f posted_ksh); top=\$1; posted_ksh build" _ "$top" \
	> "$out/posted-kdir" 2>> "$out/posted-build.log" < /dev/null &
posted_pid=$!
set +m
echo "# booting the test VM ($("$top/qemu/accel.sh"), ${SMP:-2} vCPUs) in the background"
# In a process group of its own, so that a make check that is stopped stops it
# too (its qemu would otherwise run on, and write into a later run's results).
# Its results are streamed as they come, and kept in main-chain.tap.
# (The subshell leads the group: a pipeline's $! is its last process.)
set -m
(
	{
		main_guest
		kmemleak_guest
	} | tee_lines "$out/main-chain.tap"
) < /dev/null &
main_pid=$!
set +m
# host [-t <cap>] <command...>: each host step, niced so that it does not slow
# the main guest, with a limit of <cap> seconds (default 900) or what is left
# before the deadline less the other guests' time on this core (1800 s), and
# the seconds it took, for the log: where make check's time goes.
host() {
	local t0=$SECONDS cap=900 secs rc
	if [ "$1" = -t ]; then cap=$2; shift 2; fi
	secs=$(limit "$cap" 1800)
	if [ "$secs" -lt 10 ]; then
		echo "not ok host: ${1##*/} (not run: $secs s left before make check's deadline)"
		return
	fi
	# timeout leads a process group of its own, which an interrupt of make
	# check does not reach: the EXIT trap stops it (host-step.pid)
	timeout -k 10 "$secs" nice -n 10 "$@" &
	echo $! > "$out/host-step.pid"
	wait $!
	rc=$?
	rm -f "$out/host-step.pid"
	[ $rc != 124 ] && [ $rc != 137 ] ||
		echo "not ok host: ${1##*/} ended within its limit (killed after $secs s)"
	echo "# time: host: ${1##*/} took $((SECONDS - t0)) s of its $secs s limit"
}
report < <(docs_build)
report < <(host "$top/tests/host/deps.sh")
report < <(host "$top/tests/host/source_gone.sh")
report < <(host -t 1800 "$top/kernel/lint.sh" "$out/lint")
report < <(host "$top/tests/host/models.sh" "$out/models")
report < <(host "$top/tests/host/compile_fail.sh" "$kdir" "$out/compile-fail")
report < <(host "$top/tests/host/lockhold.sh" "$out/lockhold")
report < <(host "$top/tests/host/c2c.sh" "$out/c2c")
report < <(host "$top/tests/host/pathprof.sh" "$out/pathprof")
report < <(host "$top/tests/host/fit.sh")
report < <(host "$top/tests/host/model.sh")
report < <(host "$top/tests/host/verdicts.sh")
report < <(host "$top/tests/host/module_imports.sh" "$top/rust/forkscale.ko" "$kdir" "$out/imports")
report < <(host "$top/tests/host/bad_input.sh" "$CACHE")
report < <(host "$top/tests/host/patch_identity.sh")
report < <(host "$top/tests/host/ksft_stock.sh")
report < <(host "$top/tests/host/cover_figures.sh")
report < <(host "$top/tests/host/letter_claims.sh")
report < <(host "$top/tests/host/series_alone.sh")
report < <(host "$top/tests/host/samples_source.sh")
report < <(host "$top/tests/host/doc_figures.sh")
report < <(host "$top/tests/host/testing_doc.sh")
report < <(manifest_fixture)
# its eight boots took 343 s on a quiet host, and 883 s and over 900 s beside a
# kernel build (16:45 and 19:10 on 2026-12-07): a slow day must not kill them
report < <(host -t 1500 "$top/tests/host/harness.sh" "$kernel" "$initrd" "$out/harness")
report < <(mttcg_guest)
report < <(make_run)
report < <(twins_guest)
t0=$SECONDS
echo "# waiting for the posted kernel's build"
# leaves its guest the time it usually takes (about 300 s)
wait_until "$posted_pid" "the posted kernel's build" 400
posted_rc=$?
# a build stopped at the deadline: make check's own early one too
[ "$posted_rc" = 0 ] || stop_early_build
rm -f "$out/posted-early.pid"
echo "# time: host: waited $((SECONDS - t0)) s for the posted kernel's build"
report < <(posted_guest)
echo "# time: host: the host checks and the other guests took $SECONDS s"
echo "# waiting for the main and kmemleak guests"
# Each has its limit from the deadline: this wait is a backstop only.
# (60 s after the kmemleak guest's own limit, so that it reports first)
wait_until "$main_pid" "the main and kmemleak guests" -60
main_pid=
echo "# time: host: the main and kmemleak guests ended after $SECONDS s"
touch "$out/main-chain.tap"
for g in "guest ran every test" "kmemleak guest"; do
	grep -qE "^(not )?ok vm: $g" "$out/main-chain.tap" ||
		echo "not ok vm: the $g's job ended before it reported"
done
report < <(manifest_checks)
report < <(host_manifest)
echo "# check: every step ended"
}

body | tap_number
