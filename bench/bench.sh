#!/usr/bin/env bash
# `make bench`: boot each kernel once per repetition, alternating stock and
# patched, and collect the workloads' figures; then write the JSON, the report
# and the plots (bench/report.py).
#
#   bench.sh <outdir>
#
# Throughput comes from the perf flavour, lock statistics from the debug flavour
# (LOCK_STAT). Environment: SMP (comma list of vCPU counts), QUICK=1 (short
# run), REPS, LOCK_REPS, SECS, MIGRATIONS override the mode's defaults;
# RESULTS (where the report goes, default Documentation/); C2C=1 (cache-line
# transfers per operation, Documentation/c2c.md; below); VARIANTS (the series'
# variants to run, default all) and WORKLOADS (default all), comma lists;
# KERNELS=series boots the series alone, to compare two of its variants (by
# default stock and the posted kernel, stock plus the merge set alone, boot
# too, each as its one variant);
# PREBUILT=<dir>: boot the kernels and initramfs images in <dir>, named
# <flavour>-stock.bzImage, <flavour>-series.bzImage, <flavour>-posted.bzImage
# and <flavour>.initramfs.cpio,
# instead of the cached builds (a host with QEMU but no toolchain; usage.rst).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "$1")
OUT=$(realpath -m "${OUT:-$top/out}")
smp_list=$(echo "${SMP:-2}" | tr , ' ')
if [ "${QUICK:-0}" = 1 ]; then
	reps=${REPS:-2} lock_reps=${LOCK_REPS:-1} secs=${SECS:-2} migrations=${MIGRATIONS:-200}
else
	reps=${REPS:-5} lock_reps=${LOCK_REPS:-2} secs=${SECS:-5} migrations=${MIGRATIONS:-1000}
fi
# PATHLEN=1: instructions per operation. One vCPU under QEMU's icount, where a
# guest nanosecond is one instruction, so the figures are deterministic; the
# perf kernels, with the lockhold plugin counting the instructions each lock is
# held (bench/lockhold). PREBUILT images without the plugin boot the lockstat
# flavour (perf plus LOCK_STAT) for holds instead, as before the plugin.
pathlen=${PATHLEN:-0}
# In every mode each series variant boots on its own, as stock and posted do: a
# boot's history moves what a fork costs. In one boot of seven variants the
# memcg object stock's functions cost forkexit about 2200 instructions per op
# more after the second variant, and as much again after the fifth
# (Documentation/results/pathprof-forkexit.txt, from bench/pathprof), and a
# variant's place in a shared boot moved forkexit by up to 1.8 %; one variant
# per boot gives every variant one history.
lock_flavour=debug boot_args= boot_per_variant=1
if [ "$pathlen" = 1 ]; then
	smp_list=1 lock_flavour=lockstat
	# exec's randomised layout (stack, mmap base, brk) decides how many page-table
	# pages a process needs: noise in forkexit's path length, stock's as much as
	# the series'. A fixed layout leaves the differences the kernels make.
	boot_args=norandmaps
	[ "${QUICK:-0}" = 1 ] && reps=${REPS:-2} || reps=${REPS:-3}
fi
# C2C=1: cache-line transfers per operation, counted by the c2c plugin
# (bench/c2c) on the perf kernels under multi-threaded TCG, each variant
# booted on its own, at least 3 boots each; no lock statistics.
c2c=${C2C:-0}
if [ "$c2c" = 1 ]; then
	[ "$pathlen" != 1 ] || { echo "bench: error: C2C=1 and PATHLEN=1 are separate runs" >&2; exit 1; }
	lock_reps=0
	[ "${QUICK:-0}" = 1 ] && reps=${REPS:-3} || reps=${REPS:-5}
	[ "$reps" -ge 3 ] || { echo "bench: error: C2C=1 needs REPS of 3 or more" >&2; exit 1; }
fi
series_variants=locked,pinned,seqcount,rwlock,module,module_nobatch,module_all
# C2C=1 also boots module_all with its per-CPU state packed as before it was
# cache-line aligned: the false sharing the alignment removed, in the same run.
[ "$c2c" != 1 ] || series_variants=$series_variants,module_all_packed
series_variants=${VARIANTS:-$series_variants}
workloads=threadspawn,forkexit,clone_processes,pgrp_exit,migrate_pingpong
# Not under PATHLEN=1: threadspawn_disturbed's disturber would count as the spawns' instructions.
# Nor under C2C=1, where its transfers would count as the spawns'.
[ "$pathlen" = 1 ] || [ "$c2c" = 1 ] || workloads=$workloads,threadspawn_disturbed
workloads=${WORKLOADS:-$workloads}
results=${RESULTS:-$top/Documentation}
kernels=${KERNELS:-stock series posted}
case $kernels in "stock series posted" | series) ;; *) echo "bench: error: KERNELS must be series or unset" >&2; exit 1 ;; esac

die() { echo "bench: error: $*" >&2; exit 1; }

kernel_of() { # <flavour> <stock|series|posted>: the bzImage
	local kdir
	if [ -n "${PREBUILT:-}" ]; then
		echo "$PREBUILT/$1-$2.bzImage"
		return
	fi
	case $2 in
	stock | posted) kdir=$(SERIES_DIR=$top/kernel/$2 FLAVOR=$1 "$top/kernel/kernel.sh" kdir) ;;
	*) kdir=$(FLAVOR=$1 "$top/kernel/kernel.sh" kdir) ;;
	esac
	# A build directory holds a bzImage before its build is done: ask for .done.
	[ -f "$kdir/.done" ] && echo "$kdir/arch/x86/boot/bzImage" || echo "$kdir/(not built)"
}

initrd_of() { # <flavour>
	if [ -n "${PREBUILT:-}" ]; then
		echo "$PREBUILT/$1.initramfs.cpio"
	else
		echo "$OUT/$1/initramfs.cpio"
	fi
}

# PATHLEN=1 counts the lock holds with the lockhold plugin on the perf kernels
# (below), which leaves the lockstat kernels nothing to add. A PREBUILT
# directory from bench/bundle.sh carries the plugin and each image's System.map;
# one without the plugin boots the lockstat images instead.
lockhold=0 plugin_so=$out/lockhold.so c2c_so=$out/c2c.so
if [ -n "${PREBUILT:-}" ]; then
	plugin_so=$PREBUILT/lockhold.so c2c_so=$PREBUILT/c2c.so
	[ ! -f "$plugin_so" ] || [ "$pathlen" != 1 ] || lockhold=1 lock_reps=0
	[ "$c2c" != 1 ] || [ -f "$c2c_so" ] || die "C2C=1: no c2c.so in $PREBUILT"
elif [ "$pathlen" = 1 ]; then
	lockhold=1 lock_reps=0
fi
flavours=perf
[ "$lock_reps" = 0 ] || flavours="perf $lock_flavour"
for flavour in $flavours; do
	for k in $kernels; do
		[ -f "$(kernel_of $flavour $k)" ] || die "no $k $flavour kernel at $(kernel_of $flavour $k) (make bench builds it)"
	done
	[ -f "$(initrd_of $flavour)" ] || die "no $flavour initramfs at $(initrd_of $flavour) (make bench builds it)"
done

# Plan every boot first, so progress can say "i/n".
plan=()
# plan_kernel <smp> <flavour> <kernel> <rep>: its boot, or one per series variant
plan_kernel() {
	local v
	if [ "$3" = series ] && [ "$boot_per_variant" = 1 ]; then
		for v in $(echo "$series_variants" | tr , ' '); do plan+=("$1 $2 $3 $4 $v"); done
	else
		plan+=("$1 $2 $3 $4")
	fi
}
for smp in $smp_list; do
	for rep in $(seq 1 "$reps"); do
		# Rotate which kernel boots first, so none always runs on a cold host.
		case $((rep % 3)) in
		1) order="stock series posted" ;;
		2) order="series posted stock" ;;
		0) order="posted stock series" ;;
		esac
		[ "$kernels" = series ] && order=series
		for k in $order; do plan_kernel "$smp" perf "$k" "$rep"; done
	done
	for rep in $(seq 1 "$lock_reps"); do
		for k in $kernels; do plan_kernel "$smp" "$lock_flavour" "$k" "$rep"; done
	done
done

accel=$("$top/qemu/accel.sh")
rm -rf "$out"
mkdir -p "$out"
raw=$out/raw.txt
{
	echo "meta date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "meta accel=$accel"
	echo "meta host_cpus=$(nproc)"
	echo "meta host_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1 | tr ' ' _)"
	echo "meta qemu=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([^ ]*\).*/\1/p')"
	# run-vm.sh runs icount on one TCG thread whatever TCG_THREAD says.
	[ "$pathlen" = 1 ] && echo "meta tcg_thread=single" || echo "meta tcg_thread=${TCG_THREAD:-multi}"
	if [ -n "${PREBUILT:-}" ]; then
		# The host that built the images wrote their commit and base.
		cat "$PREBUILT/meta"
	else
		echo "meta commit=$(git -C "$top" rev-parse --short=12 HEAD)$(git -C "$top" diff --quiet HEAD -- . 2>/dev/null || echo -dirty)"
		echo "meta base=Debian_linux-source-7.3_$("$top/scripts/fetch-source.sh" version 2>/dev/null || echo "${TARBALL:-unknown}")"
	fi
	echo "meta pathlen=$pathlen"
	echo "meta c2c=$c2c"
	echo "meta boot_args=$(echo "${boot_args:-none}" | tr ' ' ,)"
	echo "meta boot_per_variant=$boot_per_variant"
	echo "meta quick=${QUICK:-0} reps=$reps lock_reps=$lock_reps secs=$secs migrations=$migrations"
	echo "meta lock_flavour=$([ "$lockhold" = 1 ] && echo "none (holds: bench/lockhold)" | tr ' ' _ || echo "$lock_flavour") variants=$series_variants workloads=$workloads"
	echo "meta smp=$(echo $smp_list | tr ' ' ,)"
	echo "meta kernels=$(echo $kernels | tr ' ' ,)"
} > "$raw"

# PATHLEN=1: the lock holds of the perf kernels' measurements, counted by the
# lockhold plugin (bench/lockhold: instructions, without lockdep) at the
# System.map addresses of the three locks.
# css_set_clone_lock is the series' rwlock read's own (absent elsewhere).
lockhold_locks="css_set_lock pidmap_lock tasklist_lock css_set_clone_lock"
[ "$lockhold" = 0 ] || [ -n "${PREBUILT:-}" ] || make -s -C "$top/bench/lockhold" O="$out" ||
	die "cannot build bench/lockhold"
[ "$c2c" = 0 ] || [ -n "${PREBUILT:-}" ] || make -s -C "$top/bench/c2c" O="$out" ||
	die "cannot build bench/c2c"
sysmap_of() { # <flavour> <kernel>
	local b
	b=$(kernel_of "$1" "$2")
	[ -z "${PREBUILT:-}" ] && echo "${b%/arch/x86/boot/bzImage}/System.map" ||
		echo "${b%.bzImage}.System.map"
}
# plugin_of <flavour> <kernel> <report>: PLUGIN for run-vm.sh, or nothing
plugin_of() {
	if [ "$c2c" = 1 ] && [ "$1" = perf ]; then
		# 2^25 lines of table: the guests' 2 GiB, each line a slot of its own
		echo "$c2c_so,out=$3,start=mark,lines=25"
		return
	fi
	[ "$lockhold" = 1 ] && [ "$1" = perf ] || return 0
	local map l addr args=""
	map=$(sysmap_of "$1" "$2")
	[ -f "$map" ] || die "no System.map at $map"
	for l in $lockhold_locks; do
		addr=$(awk -v l="$l" '$3 == l { n++; a = $1 } END { if (n == 1) print a; else if (n > 1) print "many" }' "$map")
		[ "$addr" != many ] || die "$l is in $map more than once"
		[ -n "$addr" ] || [ "$l" = css_set_clone_lock ] || die "$l is not in $map"
		[ -z "$addr" ] || args="$args,lock=$l@$addr"
	done
	echo "$plugin_so,out=$3$args"
}

echo "bench: ${#plan[@]} boots under $accel (host: $(nproc) CPUs); log in $out"
[ "$accel" = kvm ] || echo "bench: TCG: absolute figures are emulation figures; compare ratios"
i=0 failed=0 start=$SECONDS
for entry in "${plan[@]}"; do
	read -r smp flavour k rep one <<< "$entry"
	i=$((i + 1))
	case $k in stock | posted) variants=$k ;; *) variants=${one:-$series_variants} ;; esac
	dir=$out/smp$smp/$flavour-$k${one:+-$one}-$rep
	t0=$SECONDS
	mkdir -p "$(dirname "$dir")"
	# Bench guests patch text only between workloads (variant switches), never
	# while forks run, so multi-threaded TCG is used for real parallelism; see
	# qemu/run-vm.sh. A failed boot is retried once.
	ok=0
	for try in 1 2; do
		plugin=$(plugin_of "$flavour" "$k" "$dir.lockhold") || exit 1
		if SMP=$smp TIMEOUT=1800 TCG_THREAD=${TCG_THREAD:-multi} ICOUNT=$pathlen PLUGIN=$plugin \
			"$top/qemu/run-vm.sh" "$(kernel_of "$flavour" "$k")" "$(initrd_of "$flavour")" \
			"$dir" bench forkscale.variants=$variants forkscale.rep=$rep \
			forkscale.lockhold=$([ -n "$plugin" ] && echo 1 || echo 0) \
			forkscale.secs=$secs forkscale.warmup=1 forkscale.migrations=$migrations \
			forkscale.workloads=$workloads $boot_args \
			2> "$dir.err"; then
			ok=1
			break
		fi
		echo "bench: boot $i failed (try $try): $(grep -m1 'vm: FAIL' "$dir.err")"
		echo "bench-retry smp=$smp flavour=$flavour kernel=$k variant=$variants rep=$rep try=$try why=$(grep -m1 'vm: FAIL' "$dir.err" | tr ' ' _)" >> "$raw"
	done
	if [ $ok = 1 ]; then
		sed -nE "s/^(bench[a-z-]*) /\1 smp=$smp flavour=$flavour kernel=$k /p" "$dir/results.log" >> "$raw"
		[ -z "$plugin" ] || python3 "$top/bench/$([ "$c2c" = 1 ] && echo c2c || echo lockhold)/collect.py" \
			"$dir.lockhold" "$dir/results.log" "$(sysmap_of "$flavour" "$k")" \
			"smp=$smp" "flavour=$flavour" "kernel=$k" >> "$raw" ||
			echo "bench-error smp=$smp flavour=$flavour kernel=$k variant=$variants rep=$rep what=plugin_report_unusable" >> "$raw"
	else
		# A guest that crashed twice contributes no figures, only the error.
		failed=$((failed + 1))
		echo "bench-error smp=$smp flavour=$flavour kernel=$k variant=$variants rep=$rep boot failed twice: $(grep -m1 'vm: FAIL' "$dir.err" | tr ' ' _)" >> "$raw"
	fi
	errors=$(grep -c '^bench-error' "$dir/results.log")
	echo "bench: [$i/${#plan[@]}] smp=$smp $flavour $k${one:+ $one} rep $rep: $((SECONDS - t0)) s$([ "$errors" = 0 ] || echo ", $errors errors"), $((SECONDS - start)) s so far"
	grep '^bench-error' "$dir/results.log" | sed 's/^/bench:   /'
done

if [ "$c2c" = 1 ]; then
	python3 "$top/bench/c2c/report.py" "$raw" "$results" || exit 1
	mkdir -p "$results/results" && cp "$raw" "$results/results/c2c-raw.txt" || exit 1
elif [ "$pathlen" = 1 ]; then
	python3 "$top/bench/pathlen.py" "$raw" "$results" || exit 1
	# what pathlen.json came from, committed beside it
	mkdir -p "$results/results" && cp "$raw" "$results/results/pathlen-raw.txt" || exit 1
	# results.md leads with these figures: render it again around the last
	# throughput run's, if there is one.
	[ ! -f "$results/results/bench.json" ] ||
		python3 "$top/bench/report.py" --render "$results" || exit 1
else
	python3 "$top/bench/report.py" "$raw" "$out/results.json" "$results" || exit 1
fi
# The model from measured inputs takes both a C2C run's transfers and a PATHLEN
# run's holds: rendered again after either, once both are there.
if [ "$c2c" = 1 ] || [ "$pathlen" = 1 ]; then
	[ ! -f "$results/pathlen.json" ] || [ ! -f "$results/results/c2c-raw.txt" ] ||
		python3 "$top/bench/model.py" --docdir "$results" --write || exit 1
fi
# The figures review-notes.rst quotes; the cover letters follow at the next make patches.
[ "$results" != "$top/Documentation" ] || [ "$c2c" = 1 ] ||
	python3 "$top/bench/doc_figures.py" --write "$top/Documentation/review-notes.rst" || exit 1
errors=$(grep -c '^bench-error' "$raw")
echo "bench: done in $((SECONDS - start)) s; $failed failed boots, $errors workload errors"
[ "$failed" = 0 ] && [ "$errors" = 0 ]
