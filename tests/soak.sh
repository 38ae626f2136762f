#!/usr/bin/env bash
# `make soak`: boot the debug kernel and run the soak and fault-injection test
# (selftests/forkscale/soak.c) for SOAK_SECS seconds (default 600), then
# clone_read with SOAK_KILLS cgroup.kill rounds per read (default 3000; make
# check runs 200 to 600), then print the checks and counts and "N passed, N
# failed". The run fails on any lockdep, KASAN, WARNING, BUG or stall report on
# the console (qemu/run-vm.sh).
#   soak.sh <bzImage> <initramfs> <outdir>
set -uo pipefail
kernel=$1 initrd=$2 out=$3
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${SOAK_SECS:-600}
case $secs in ''|*[!0-9]*) echo "soak: SOAK_SECS must be a number of seconds, not '$secs'" >&2; exit 2 ;; esac
passed=0 failed=0

kills=${SOAK_KILLS:-3000}
case $kills in ''|*[!0-9]*) echo "soak: SOAK_KILLS must be a number of kills, not '$kills'" >&2; exit 2 ;; esac
# clone_read's kill case has a timeout of its own (900 s)
if [ "$kills" -gt 5000 ]; then echo "soak: SOAK_KILLS must be at most 5000, not $kills" >&2; exit 2; fi

echo "soak: $secs s of every fork/exit path at once, then fault injection, then"
echo "soak: clone_read with $kills cgroup.kill rounds for every read, on the debug kernel"
echo "soak: $("$top/qemu/accel.sh"), ${SMP:-2} vCPUs; log in $out"
# clone_read: each read's other cases take a minute or two, and a kill about
# 45 ms (more on a loaded host).
cr=$((6 * (kills / 10 + 240)))
if TIMEOUT=$((secs * 2 + 1200 + cr)) "$top/qemu/run-vm.sh" "$kernel" "$initrd" "$out" soak \
	FORKSCALE_SOAK_SECS="$secs" FORKSCALE_KILL_ITERS="$kills" \
	FORKSCALE_TEST_TIMEOUT=$((secs * 2 + 900 + cr)) 2> "$out.err"; then
	echo "ok vm: no lockdep, KASAN, WARNING, BUG or stall report; the guest finished"
	passed=$((passed + 1))
else
	echo "not ok vm: no lockdep, KASAN, WARNING, BUG or stall report; the guest finished"
	sed 's/^/# /' "$out.err"
	failed=$((failed + 1))
fi
while read -r line; do
	echo "$line"
	case $line in "not ok "*) failed=$((failed + 1)) ;; "ok "*) passed=$((passed + 1)) ;; esac
done < <(grep -aE '^(not )?ok ' "$out/results.log" 2>/dev/null)
echo "soak: checks and counts (from the guest log):"
tr -d '\r' < "$out/console.log" | grep -aE '^# soak\.c:[0-9]+:' | sed -E 's/^# soak\.c:[0-9]+:/  /'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 1 ]
