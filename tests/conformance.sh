#!/usr/bin/env bash
# `make conformance`: lookups by number of reaped pids (pid_lookup) must give
# userspace on the series, without the module and under each of its batching
# settings, exactly what they give on stock 7.3. Boots the stock and the
# series debug kernels once each (run-conformance in the guest) and compares
# every setting's lines with stock's, as TAP lines; then runs the kernel's own
# selftests once on each and compares them case by case (stock is the baseline
# of selftests/forkscale/ksft-known-failures.txt, and of the committed
# ksft-stock.txt, which make check compares with; UPDATE=1 rewrites it), and
# the cgroup suites under the series' pinned read and its comparators seqcount
# and rwlock, and with cgroup2 remounted
# favordynmods on both. With a third kernel, the posted one (stock plus the
# merge set alone, kernel/posted/), the same lookups and selftests on it
# against stock too.
#   conformance.sh <stock bzImage> <series bzImage> <initramfs> <outdir> [posted bzImage]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
known=$top/selftests/forkscale/ksft-known-failures.txt
committed=$top/selftests/forkscale/ksft-stock.txt

# stock_results <results.log of a stock boot>: its selftest results in the form
# of the committed ksft-stock.txt, "<mode>\t<suite>\t<result>", mode plain,
# favordynmods or v1; a flaky case, one that may time out, or one that tests a
# stock bug the merge set fixes ("fixed:"), as "ok" whatever it gave this time.
stock_results() {
	{
		sed -n 's/^ksft \([^ ]*\) /plain\t\1\t/p' "$1"
		sed -n 's/^ksft-favordynmods \([^ ]*\) /favordynmods\t\1\t/p' "$1"
		sed -n 's/^ksft-v1 \([^ ]*\) /v1\t\1\t/p' "$1"
	} | tr -d '\r' |
		awk -F '\t' 'NR == FNR { if ($3 ~ /^(flaky|timeout|fixed):/) flaky[$1 "\t" $2] = 1; next }
		{ c = $3; sub(/^(not )?ok /, "", c); sub(/ # .*/, "", c)
		  if (($2 "\t" c) in flaky) $3 = "ok " c; print }' OFS='\t' "$known" -
}
# --stock-results <results.log> [<date>]: the committed file's text, header and all
if [ "${1:-}" = --stock-results ]; then
	echo "# Stock 7.3's results of the kernel selftests in the forkscale guest, which"
	echo "# make check compares every implementation with: <mode>TAB<suite>TAB<result>."
	echo "# Written by make conformance UPDATE=1 from its stock boot, whose results it"
	echo "# checks against this file; do not edit.${3:+ This one: $3.}"
	stock_results "$2"
	exit 0
fi
stock=$1 series=$2 initrd=$3 out=$4 posted=${5:-}
rm -rf "$out"
mkdir -p "$out"

boot() { # <name> <bzImage> <yes|no: has the series>
	TIMEOUT=${TIMEOUT:-2400} "$top/qemu/run-vm.sh" "$2" "$initrd" "$out/$1" conformance 2> "$out/$1.err" ||
		{ echo "not ok conformance: the $1 kernel boots and runs pid_lookup"; sed 's/^/# /' "$out/$1.err" | tail -n 20; exit 1; }
	grep -a '^conformance-boot ' "$out/$1/results.log" | sed 's/^/# /'
	grep -aq "^conformance-boot .* series=$3\$" "$out/$1/results.log" ||
		{ echo "not ok conformance: the $1 kernel is what it should be (series=$3)"; exit 1; }
}
lines() { # <name> <setting>
	sed -n "s/^conformance setting=$2 //p" "$out/$1/results.log"
}

boot stock "$stock" no
boot series "$series" yes
[ -z "$posted" ] || boot posted "$posted" no
lines stock none > "$out/stock.txt"
n=0 failed=0
check() { # <description> <file>
	n=$((n + 1))
	if [ -s "$2" ] && diff -u "$out/stock.txt" "$2" > "$2.diff"; then
		echo "ok conformance: $1"
	else
		echo "not ok conformance: $1"
		sed 's/^/# /' "$2.diff" 2>/dev/null | head -n 20
		failed=1
	fi
}
[ -s "$out/stock.txt" ] || { echo "not ok conformance: stock 7.3 printed no lookups"; exit 1; }
echo "# stock 7.3: $(wc -l < "$out/stock.txt") lookups"
lines series none > "$out/none.txt"
check "the series without the module looks pids up as stock 7.3 does" "$out/none.txt"
if [ -n "$posted" ]; then
	lines posted none > "$out/posted.txt"
	check "the posted kernel looks pids up as stock 7.3 does" "$out/posted.txt"
fi
for s in $(sed -n 's/^conformance setting=\([^ ]*\) .*/\1/p' "$out/series/results.log" | grep -v '^none$' | uniq); do
	lines series "$s" > "$out/$s.txt"
	check "the module with $s looks pids up as stock 7.3 does" "$out/$s.txt"
done
grep -a '^conformance-error' "$out/series/results.log" | sed 's/^/not ok conformance: /' | grep . && failed=1

# The kernel's selftests: stock 7.3 is the baseline the known failures are
# judged by. Every suite must report the same per-case results on the series,
# flaky cases aside, and every case stock fails must be on the known list.
# A "fixed:" case tests a stock bug that the merge set fixes: stock may fail it,
# and is taken as passing it, so that every other kernel must.
ksft() { # <name> [prefix]: "<suite> <result> <case>", flaky cases left out
	sed -n "s/^${2:-ksft} //p" "$out/$1/results.log" | tr -d '\r' |
		awk -F '\t' -v stock="$([ "$1" != stock ] || echo 1)" '
		NR == FNR { if ($3 ~ /^(flaky|timeout):/) flaky[$1 " " $2] = 1
			    if ($3 ~ /^fixed:/) fixed[$1 " " $2] = 1; next }
		{ c = $0; sub(/ (not )?ok /, " ", c); sub(/ # .*/, "", c)
		  if (stock && (c in fixed)) { split(c, w, " "); print w[1] " ok " substr(c, length(w[1]) + 2); next }
		  if (!(c in flaky)) print }' "$known" -
}
# same <stock file> <series file> <what the series ran>: one line per suite of
# the stock file
same() {
	local t
	for t in $(cut -d' ' -f1 "$1" | uniq); do
		grep "^$t " "$1" > "$out/a"
		grep "^$t " "$2" > "$out/b"
		if diff -u "$out/a" "$out/b" > "$out/ksft.diff"; then
			echo "ok conformance: $t gives the same per-case results $3"
		else
			echo "not ok conformance: $t gives the same per-case results $3"
			sed 's/^/# /' "$out/ksft.diff" | head -n 20
			failed=1
		fi
	done
}
# unlisted <stock file> <what stock ran>: every case stock fails is known
unlisted() {
	local bad
	bad=$(sed -n 's/^\([^ ]*\) not ok \([^#]*[^ #]\).*/\1\t\2/p' "$1" |
		while IFS= read -r c; do grep -qF "$c	" "$known" || echo "$c"; done)
	if [ -z "$bad" ]; then
		echo "ok conformance: every case stock 7.3 fails${2:+ $2} is on the known-failures list"
	else
		echo "not ok conformance: every case stock 7.3 fails${2:+ $2} is on the known-failures list"
		echo "$bad" | sed 's/^/# not listed: /'
		failed=1
	fi
}
ksft stock > "$out/ksft-stock.txt"
# The committed stock results make check compares with must be this boot's,
# flaky cases aside; UPDATE=1 writes them from it.
"$0" --stock-results "$out/stock/results.log" "$(date -u +%F)" > "$out/ksft-stock-committed.txt"
if [ "${UPDATE:-}" = 1 ]; then
	# not from a boot where a suite did not run to its end
	if grep -aq '^ksft-error' "$out/stock/results.log"; then
		echo "# not writing $committed: the stock boot reported errors"
	else
		cp "$out/ksft-stock-committed.txt" "$committed"
		echo "# wrote $committed"
	fi
fi
if grep -v '^#' "$committed" | diff -u - <(grep -v '^#' "$out/ksft-stock-committed.txt") \
	> "$out/ksft-committed.diff"; then
	echo "ok conformance: the committed stock results (ksft-stock.txt) are stock 7.3's"
else
	echo "not ok conformance: the committed stock results (ksft-stock.txt) are stock 7.3's"
	sed 's/^/# /' "$out/ksft-committed.diff" | head -n 20
	failed=1
fi
ksft series > "$out/ksft-series.txt"
same "$out/ksft-stock.txt" "$out/ksft-series.txt" "as on stock 7.3"
[ "$(cut -d' ' -f1 "$out/ksft-stock.txt" | uniq | wc -l)" -ge 15 ] ||
	{ echo "not ok conformance: stock 7.3 ran every kernel selftest suite"; failed=1; }
unlisted "$out/ksft-stock.txt" ""
# The cgroup suites: the pinned read (the patch for merging) against stock 7.3
# itself, and both reads of the series against stock with cgroup2 mounted
# favordynmods, where moves take the per-threadgroup rwsem.
ksft stock ksft-favordynmods > "$out/ksft-stock-favordynmods.txt"
ksft series ksft-pinned > "$out/ksft-series-pinned.txt"
ksft series ksft-favordynmods > "$out/ksft-series-favordynmods.txt"
ksft series ksft-pinned_favordynmods > "$out/ksft-series-pinned-favordynmods.txt"
grep -ah '^ksft-error' "$out/stock/results.log" "$out/series/results.log" |
	sed 's/^/not ok conformance: /' | grep . && failed=1
grep '^cgroup/' "$out/ksft-stock.txt" > "$out/ksft-stock-cgroup.txt"
same "$out/ksft-stock-cgroup.txt" "$out/ksft-series-pinned.txt" \
	"under pinned as on stock 7.3"
# make bench's comparators, the seed's seqcount read and Koutny's rwlock, which
# make check runs no kernel suite under (kernel_selftests.sh)
for r in seqcount rwlock; do
	ksft series "ksft-$r" > "$out/ksft-series-$r.txt"
	same "$out/ksft-stock-cgroup.txt" "$out/ksft-series-$r.txt" "under $r as on stock 7.3"
done
if [ "$(cut -d' ' -f1 "$out/ksft-stock-cgroup.txt" | uniq | wc -l)" -ge 4 ] &&
	[ "$(cut -d' ' -f1 "$out/ksft-stock-favordynmods.txt" | uniq | wc -l)" -ge 4 ]; then
	same "$out/ksft-stock-favordynmods.txt" "$out/ksft-series-favordynmods.txt" \
		"under locked with favordynmods as on stock 7.3 with favordynmods"
	same "$out/ksft-stock-favordynmods.txt" "$out/ksft-series-pinned-favordynmods.txt" \
		"under pinned with favordynmods as on stock 7.3 with favordynmods"
	unlisted "$out/ksft-stock-favordynmods.txt" "with favordynmods"
else
	echo "not ok conformance: stock 7.3 ran the four cgroup suites, plain and with favordynmods"
	failed=1
fi
# test_core on a named cgroup v1 hierarchy (no cgroup2 mounted), the series'
# locked read against stock.
ksft stock ksft-v1 > "$out/ksft-stock-v1.txt"
ksft series ksft-v1 > "$out/ksft-series-v1.txt"
if [ -s "$out/ksft-stock-v1.txt" ]; then
	same "$out/ksft-stock-v1.txt" "$out/ksft-series-v1.txt" "on a named cgroup v1 hierarchy as on stock 7.3"
else
	echo "not ok conformance: stock 7.3 ran test_core on a named cgroup v1 hierarchy"
	failed=1
fi
# The posted kernel, as mailed: every suite and the favordynmods cgroup suites as on stock.
if [ -n "$posted" ]; then
	ksft posted > "$out/ksft-posted.txt"
	same "$out/ksft-stock.txt" "$out/ksft-posted.txt" "on the posted kernel as on stock 7.3"
	ksft posted ksft-favordynmods > "$out/ksft-posted-favordynmods.txt"
	same "$out/ksft-stock-favordynmods.txt" "$out/ksft-posted-favordynmods.txt" \
		"on the posted kernel with favordynmods as on stock 7.3 with favordynmods"
	ksft posted ksft-v1 > "$out/ksft-posted-v1.txt"
	same "$out/ksft-stock-v1.txt" "$out/ksft-posted-v1.txt" \
		"on the posted kernel on a named cgroup v1 hierarchy as on stock 7.3"
	grep -ah '^ksft-error' "$out/posted/results.log" | sed 's/^/not ok conformance: /' | grep . && failed=1
fi
[ $n -ge 5 ] || { echo "not ok conformance: only $n settings reported"; failed=1; }
exit $failed
