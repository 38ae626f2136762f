#!/usr/bin/env bash
# Runs kernel selftest suites RUNS times (default 10) in one boot of the debug
# kernel, under the clone read IMPL (default locked; stock for a stock kernel;
# FAVORDYNMODS=1 remounts cgroup2 with favordynmods first; HOG=N runs N busy
# loops in the guest throughout), and prints how often each case passed: the
# evidence a flaky case needs before it goes on
# selftests/forkscale/ksft-known-failures.txt.
#   ksft_flakes.sh <bzImage> <selftests-dir> <outdir> [suite...]
set -euo pipefail
kernel=$1 tests=$2 out=$3
shift 3
top=$(cd "$(dirname "$0")/.." && pwd)
suites=$(echo "${*:-cgroup/test_core cgroup/test_kill cgroup/test_freezer cgroup/test_pids}" | tr ' ' ,)
rm -rf "$out"
mkdir -p "$out/tests"
cp -a "$tests"/. "$out/tests/"
echo ksft_repeat.sh > "$out/tests/tests.list"
"$top/qemu/mkinitramfs.sh" "$out/initramfs.cpio" "$out/tests"
TIMEOUT=${TIMEOUT:-7500} "$top/qemu/run-vm.sh" "$kernel" "$out/initramfs.cpio" "$out/vm" check \
	FORKSCALE_KSFT_SUITES="$suites" FORKSCALE_KSFT_RUNS="${RUNS:-10}" \
	FORKSCALE_KSFT_IMPL="${IMPL:-locked}" FORKSCALE_KSFT_FAVORDYNMODS="${FAVORDYNMODS:-0}" FORKSCALE_KSFT_HOG="${HOG:-0}" \
	FORKSCALE_TEST_TIMEOUT=7200 || true
grep -a '^ok ' "$out/vm/results.log" | sed -E 's/^ok [a-z_.]+: //'
grep -aE '^# .*a failing run|^#   ' "$out/vm/console.log" || true
