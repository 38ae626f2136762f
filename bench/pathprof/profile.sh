#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boots one perf kernel of make bench PATHLEN=1 under the pathprof plugin and
# prints its windows' instructions per operation, function by function.
#   bench/pathprof/profile.sh <stock|series|posted> <variants> <workloads> <dir> [<n>]
# e.g. profile.sh series module,module_all forkexit /tmp/prof: one boot, the
# variants in that order, after make bench's warm-up pass; <dir> keeps the
# report, the guest's log and the System.map. Needs the perf kernel and
# initramfs (make bench PATHLEN=1 builds them).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 <stock|series|posted> <variants> <workloads> <dir> [<n>]" >&2; exit 2; }
k=$1 variants=$2 workloads=$3 dir=$4 top=${5:-30}
root=$(cd "$(dirname "$0")/../.." && pwd)
case $k in
stock | posted) kdir=$(SERIES_DIR=$root/kernel/$k FLAVOR=perf "$root/kernel/kernel.sh" kdir) ;;
series) kdir=$(FLAVOR=perf "$root/kernel/kernel.sh" kdir) ;;
*) echo "profile: the kernel is stock, series or posted, not $k" >&2; exit 2 ;;
esac
[ -f "$kdir/.done" ] || { echo "profile: no $k perf kernel at $kdir (make bench PATHLEN=1 builds it)" >&2; exit 1; }
initrd=${OUT:-$root/out}/perf/initramfs.cpio
[ -f "$initrd" ] || { echo "profile: no perf initramfs at $initrd" >&2; exit 1; }
mkdir -p "$dir"
make -s -C "$root/bench/pathprof" O="$dir"
cp "$kdir/System.map" "$dir/System.map"
SMP=1 TIMEOUT=3600 ICOUNT=1 PLUGIN="$dir/pathprof.so,out=$dir/report.txt" \
	"$root/qemu/run-vm.sh" "$kdir/arch/x86/boot/bzImage" "$initrd" "$dir/vm" bench \
	forkscale.variants="$variants" forkscale.rep=1 forkscale.lockhold=1 forkscale.secs=2 \
	forkscale.warmup=1 forkscale.migrations=200 forkscale.workloads="$workloads" norandmaps \
	2> "$dir/vm.err"
python3 "$root/bench/pathprof/pathprof.py" "$dir/report.txt" "$dir/vm/results.log" "$dir/System.map" "$top"
