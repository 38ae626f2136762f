#!/usr/bin/env bash
# Boot the forkscale kernel once and collect what the guest reports.
#   run-vm.sh <bzImage> <initramfs> <outdir> <mode> [kernel args...]
# Environment: SMP (vCPUs, default 2), TIMEOUT (seconds, default 900), ACCEL,
# TCG_THREAD (single or multi, default single; see below).
# Writes <outdir>/console.log (ttyS0) and <outdir>/results.log (ttyS1).
# Exits 0 only if the guest ran to its end marker and the console shows no
# panic, oops, WARNING, BUG, UBSAN, lockup, hung task or OOM; otherwise prints why and the console tail.
set -uo pipefail
kernel=$1 initrd=$2 out=$3 mode=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
smp=${SMP:-2}
timeout=${TIMEOUT:-900}
# timeout(1) takes 0 as no limit at all
case $timeout in
'' | *[!0-9]* | 0) echo "vm: error: TIMEOUT must be a positive number of seconds, not '$timeout'" >&2; exit 2 ;;
esac
accel=$("$here/accel.sh")
# Under TCG the emulated TSC is not a usable clocksource: once the kernel switches
# to it, boots die silently a moment later (always with -cpu max, about one boot in
# three with qemu64). tsc=unstable keeps the guest on HPET.
#
# Multi-threaded TCG (QEMU 7.2 here) apparently can run a stale translation of kernel text
# that another vCPU is patching: a guest fork hit the int3 of a static_call
# update (text_poke_bp) after the patch had completed, an "Oops: int3" seen in
# the module load/unload test. Guests patch text whenever the module loads,
# unloads or a built-in is switched, so TCG runs its vCPUs on one host thread
# unless TCG_THREAD=multi (make check's second guest, whose tests patch no text).
#
# no5lvl: -cpu max offers LA57, and with 5-level paging a KASAN kernel can report a
# "wild-memory-access" at boot. identify_cpu() clears boot_cpu_data's capability
# bits before it probes them again, and before alternatives are applied
# pgtable_l5_enabled() reads those bits: an interrupt in between sees KASAN's
# 4-level shadow range, and its access to a 5-level direct-map address as wild
# (seen in one boot of eight in one session, in handle_edge_irq()). It
# taints the kernel, which turns lockdep off for the whole run. make bench keeps
# 5-level paging, as its committed figures were measured with it (a failed bench
# boot is retried).
case $accel in
kvm) cpu=host accel_args="" accel_opt=kvm ;;
tcg) cpu=max accel_args="tsc=unstable" accel_opt="tcg,thread=${TCG_THREAD:-single}" ;;
*) echo "vm: error: unknown ACCEL '$accel' (expected kvm or tcg)" >&2; exit 2 ;;
esac
[ "$accel" != tcg ] || [ "$mode" = bench ] || accel_args="$accel_args no5lvl"

# The debug kernel runs its KUnit suites at every boot: 12 s of a 21 s boot under
# TCG (rust_sync_seqlock's million reads alone 8 s). Only the main guest reads
# their results (selftests/forkscale/kunit.sh), and a guest that runs kunit.sh by
# name; every other boot skips them.
case "$mode $*" in
"check "* | *kunit.sh* | bench*) ;;
*) accel_args="$accel_args kunit.enable=0" ;;
esac

# ICOUNT=1: the guest clock advances one nanosecond per executed instruction
# (bench PATHLEN=1), which makes guest seconds an instruction count. icount
# needs TCG and one TCG thread.
icount=()
if [ "${ICOUNT:-0}" = 1 ]; then
	[ "$accel" = tcg ] || { echo "vm: error: ICOUNT=1 needs TCG (accelerator: $accel)" >&2; exit 2; }
	accel_opt=tcg,thread=single
	icount=(-icount shift=0,sleep=off,align=off)
fi

# PLUGIN=<plugin.so,args>: a TCG plugin (bench PATHLEN=1's lock holds,
# bench/lockhold), which finds the kernel's locks at their System.map
# addresses, hence nokaslr.
plugin=()
if [ -n "${PLUGIN:-}" ]; then
	[ "$accel" = tcg ] || { echo "vm: error: PLUGIN needs TCG (accelerator: $accel)" >&2; exit 2; }
	plugin=(-plugin "$PLUGIN")
	accel_args="$accel_args nokaslr"
fi

qemu=(qemu-system-x86_64 -accel "$accel_opt" "${icount[@]}" "${plugin[@]}" -cpu "$cpu" -smp "$smp" -m 2G
	-display none -monitor none -no-reboot -nodefaults
	-kernel "$kernel" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 $accel_args forkscale.mode=$mode forkscale.smp=$smp $*")
if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -serial mon:stdio -serial null
fi

mkdir -p "$out"
rm -f "$out/console.log" "$out/results.log"
echo "$accel" > "$out/accel"
timeout --foreground -k 5 "$timeout" "${qemu[@]}" \
	-serial "file:$out/console.log" -serial "file:$out/results.log" </dev/null
rc=$?
tr -d '\r' < "$out/results.log" > "$out/results.tmp" 2>/dev/null && mv "$out/results.tmp" "$out/results.log"

fail() {
	echo "vm: FAIL: $*" >&2
	echo "vm: --- console tail ($out/console.log) ---" >&2
	tail -n 40 "$out/console.log" | tr -d '\r' >&2
	echo "vm: ---" >&2
	exit 1
}
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	fail "guest hung: killed after ${timeout}s"
fi
splat='Kernel panic|Oops|WARNING:|BUG:|UBSAN:|general protection fault|detected stall|blocked for more than|soft lockup|hard LOCKUP|Out of memory|invoked oom-killer'
bad=$(grep -aE "$splat" "$out/console.log" | head -n 1 | tr -d '\r')
if [ -n "$bad" ]; then
	# The test in whose window it came: the guest's last marker before it
	# (qemu/guest/run-tests' "forkscale: running <test>", twins.sh's
	# "forkscale: twin <name>: <test>").
	window=$(tr -d '\r' < "$out/console.log" | awk -v re="$splat" '
		$0 ~ re { exit }
		/^forkscale: (running|twin) / { sub(/^forkscale: (running )?/, ""); w = $0 }
		END { print w }')
	if [ -n "$window" ]; then where="in the window of \"$window\""; else where="before any test started"; fi
	fail "guest console reports: $bad ($where)"
fi
[ $rc -eq 0 ] || fail "qemu exited with status $rc"
grep -qx '# forkscale: done' "$out/results.log" || fail "guest did not finish (no end marker)"
exit 0
