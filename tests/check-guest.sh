#!/usr/bin/env bash
# make check-guest: the development loop. One boot that runs the guest tests T names
# (comma-separated, as in tests.list); CASE=<fixture.variant.test> narrows a
# kselftest-harness test to that case. Prints the tests' TAP and how many manifest
# results name them, and exits non-zero on a "not ok", on an expected result that did
# not come (unless CASE narrowed the run), or on a guest that did not end cleanly.
#   check-guest.sh <bzImage> <initramfs> <selftests dir> <outdir> <tests> [case]
set -uo pipefail
kernel=$1 initrd=$2 seldir=$3 out=$4 tests=$5 case=${6:-}
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "check-guest: error: $*" >&2; exit 2; }
[ -n "$tests" ] || die "name the tests: make check-guest T=<test>[,<test>...] [CASE=<case>]"
case $tests$case in *[!A-Za-z0-9_.,-]*) die "T and CASE take names only: '$tests' '$case'" ;; esac
case ,$tests, in *,,*) die "T has an empty name: '$tests'" ;; esac
[ -z "$case" ] || [ "${tests//,/}" = "$tests" ] || die "CASE goes with one test, not '$tests'"
for t in ${tests//,/ }; do
	[ -f "$seldir/$t" ] || die "no guest test '$t' in $seldir"
done

rm -rf "$out"
t0=$SECONDS
args=(only "FORKSCALE_ONLY=$tests")
[ -z "$case" ] || args+=("FORKSCALE_CASE=$case")
"$top/qemu/run-vm.sh" "$kernel" "$initrd" "$out" "${args[@]}" 2> "$out.err"
vm=$?
rc=0
grep -aE '^(not )?ok |^# time' "$out/results.log" 2> /dev/null
grep -aqE '^not ok ' "$out/results.log" 2> /dev/null && rc=1
if [ $vm != 0 ]; then
	echo "not ok vm: the guest ended cleanly"
	sed 's/^/# /' "$out.err"
	rc=1
fi

# The manifest's lines for these tests: each must have come, unless CASE chose one.
want=$(for t in ${tests//,/ }; do grep -E "^${t//./\\.}: " "$top/tests/expected-results.txt"; done)
got=$(grep -aE '^(not )?ok ' "$out/results.log" 2> /dev/null | sed -E -e 's/^(not )?ok //' -e 's/ # SKIP.*$//')
missing=$(comm -23 <(sort -u <<< "$want") <(sort -u <<< "$got") | grep . || true)
if [ -z "$got" ]; then
	echo "not ok check-guest: $tests reported no result"
	rc=1
elif [ -z "$case" ] && [ -n "$missing" ]; then
	sed 's/^/not ok manifest: no result for /' <<< "$missing"
	rc=1
else
	echo "# manifest: $(grep -c . <<< "$want") expected results for $tests"
fi
echo "# check-guest: $((SECONDS - t0)) s in the guest; console log: $out/console.log"
exit $rc
