#!/usr/bin/env bash
# `make conformance`: lookups by number of reaped pids (pid_lookup) must give
# userspace on the series, without the module and under each of its batching
# settings, exactly what they give on stock 7.3. Boots the stock and the
# series debug kernels once each (run-conformance in the guest) and compares
# every setting's lines with stock's, as TAP lines; then runs the kernel's own
# selftests once on each and compares them case by case (stock is the baseline
# of selftests/forkscale/ksft-known-failures.txt).
#   conformance.sh <stock bzImage> <series bzImage> <initramfs> <outdir>
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stock=$1 series=$2 initrd=$3 out=$4
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
for s in $(sed -n 's/^conformance setting=\([^ ]*\) .*/\1/p' "$out/series/results.log" | grep -v '^none$' | uniq); do
	lines series "$s" > "$out/$s.txt"
	check "the module with $s looks pids up as stock 7.3 does" "$out/$s.txt"
done
grep -a '^conformance-error' "$out/series/results.log" | sed 's/^/not ok conformance: /' | grep . && failed=1

# The kernel's selftests: stock 7.3 is the baseline the known failures are
# judged by. Every suite must report the same per-case results on the series,
# flaky cases aside, and every case stock fails must be on the known list.
known=$top/selftests/forkscale/ksft-known-failures.txt
ksft() { # <name>: "<suite> <result> <case>", flaky cases left out
	sed -n 's/^ksft //p' "$out/$1/results.log" | tr -d '\r' |
		awk -F '\t' 'NR == FNR { if ($3 ~ /^flaky:/) flaky[$1 " " $2] = 1; next }
		{ c = $0; sub(/ (not )?ok /, " ", c); sub(/ # .*/, "", c); if (!(c in flaky)) print }' "$known" -
}
ksft stock > "$out/ksft-stock.txt"
ksft series > "$out/ksft-series.txt"
for t in $(cut -d' ' -f1 "$out/ksft-stock.txt" | uniq); do
	grep "^$t " "$out/ksft-stock.txt" > "$out/a"
	grep "^$t " "$out/ksft-series.txt" > "$out/b"
	if diff -u "$out/a" "$out/b" > "$out/ksft.diff"; then
		echo "ok conformance: $t gives the same per-case results as on stock 7.3"
	else
		echo "not ok conformance: $t gives the same per-case results as on stock 7.3"
		sed 's/^/# /' "$out/ksft.diff" | head -n 20
		failed=1
	fi
done
[ "$(cut -d' ' -f1 "$out/ksft-stock.txt" | uniq | wc -l)" -ge 15 ] ||
	{ echo "not ok conformance: stock 7.3 ran every kernel selftest suite"; failed=1; }
unlisted=$(sed -n 's/^\([^ ]*\) not ok \([^#]*[^ #]\).*/\1\t\2/p' "$out/ksft-stock.txt" |
	while IFS= read -r c; do grep -qF "$c	" "$known" || echo "$c"; done)
if [ -z "$unlisted" ]; then
	echo "ok conformance: every case stock 7.3 fails is on the known-failures list"
else
	echo "not ok conformance: every case stock 7.3 fails is on the known-failures list"
	echo "$unlisted" | sed 's/^/# not listed: /'
	failed=1
fi
[ $n -ge 5 ] || { echo "not ok conformance: only $n settings reported"; failed=1; }
exit $failed
