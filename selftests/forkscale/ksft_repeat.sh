#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Evidence for ksft-known-failures.txt: runs kernel selftest suites again and
# again under one clone read and counts, case by case, how often each passed.
# Not in make check's list: tests/ksft_flakes.sh boots it. Environment (from
# the kernel command line): FORKSCALE_KSFT_SUITES (comma list, default the
# cgroup suites), FORKSCALE_KSFT_RUNS (default 10), FORKSCALE_KSFT_IMPL
# (default locked; stock on a kernel without the series), FORKSCALE_KSFT_FAVORDYNMODS (1: remount cgroup2 with
# favordynmods first, as kernel_selftests.sh's last runs do), FORKSCALE_KSFT_HOG
# (N: N busy loops run throughout, which make a case that races the guest's
# scheduling lose more often, under every implementation alike).
dir=/forkscale/tests/ksft
suites=$(echo "${FORKSCALE_KSFT_SUITES:-cgroup/test_core,cgroup/test_kill,cgroup/test_freezer,cgroup/test_pids}" | tr , ' ')
runs=${FORKSCALE_KSFT_RUNS:-10}
impl=${FORKSCALE_KSFT_IMPL:-locked}
out=/tmp/ksft_repeat
mkdir -p $out
# stock: a kernel without the series, which has no such sysctl
if [ "$impl" = stock ]; then
	[ ! -e /proc/sys/kernel/cgroup_clone_read ] || exit 1
else
	echo "$impl" > /proc/sys/kernel/cgroup_clone_read || exit 1
fi
if [ "${FORKSCALE_KSFT_FAVORDYNMODS:-0}" = 1 ]; then
	mount -o remount,nsdelegate,favordynmods /sys/fs/cgroup || exit 1
	impl=${impl}_favordynmods
fi
echo 4096 > /proc/sys/kernel/pid_max
hogs=""
trap '[ -z "$hogs" ] || kill $hogs 2> /dev/null' EXIT
trap 'exit 143' TERM INT
for _ in $(seq "${FORKSCALE_KSFT_HOG:-0}"); do
	sh -c 'while :; do :; done' < /dev/null > /dev/null 2>&1 &
	hogs="$hogs $!"
done
[ -z "$hogs" ] || impl="$impl with ${FORKSCALE_KSFT_HOG} busy loop(s)"
: > $out/results
for t in $suites; do
	name=$(echo "$t" | tr / _)
	: > "$out/$name"
	for run in $(seq "$runs"); do
		(cd "$dir/${t%/*}" && timeout -s KILL 300 "./${t#*/}") < /dev/null > "$out/$name.log" 2>&1
		# a skipped case is neither a pass nor a failure
		sed -nE -e 's/^ok [0-9]+ (- )?([^#]*[^ #]) *# SKIP.*/skip|\2/p; t' \
			-e 's/^((not )?ok) [0-9]+ (- )?([^#]*[^ #]).*/\1|\4/p' "$out/$name.log" >> "$out/$name"
		grep -q '^not ok' "$out/$name.log" && cp "$out/$name.log" "$out/$name.fail$run"
		# progress on the console, which the host sees while this runs
		echo "# $t run $run of $runs under $impl: $(grep -c '^ok' "$out/$name.log") ok," \
			"$(grep -c '^not ok' "$out/$name.log") not ok $(sed -n 's/^not ok [0-9]* //p' "$out/$name.log" | tr '\n' ' ')" > /dev/console
	done
	# One line per case: how many of the runs it passed.
	cut -d'|' -f2 "$out/$name" | awk '!seen[$0]++' | while IFS= read -r c; do
		echo "$t $c: passed $(grep -cxF "ok|$c" "$out/$name") of $runs under $impl"
	done >> $out/results
	for f in "$out/$name".fail*; do
		[ -f "$f" ] || continue
		echo "# $t: a failing run ($f):"
		# Everything but the passing cases: the cgroup suites print the
		# message of a failed check to stderr, without a "# ".
		grep -v '^ok ' "$f" | head -n 40 | sed 's/^/#   /'
	done
done
echo "TAP version 13"
echo "1..$(wc -l < $out/results)"
awk '{ print "ok " NR " " $0 }' $out/results
