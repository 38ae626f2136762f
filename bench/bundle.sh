#!/usr/bin/env bash
# Pack what `make bench PREBUILT=<dir>` boots, for a many-core host that has
# QEMU but no kernel toolchain (Documentation/usage.rst):
#
#   bundle.sh <dir>
#
# <dir> gets perf-{stock,series,posted}.bzImage with their System.map,
# perf.initramfs.cpio, lockhold.so (the PATHLEN=1 lock hold plugin, built
# for this host's QEMU: pack that too with QEMU=1) and meta (the commit and base
# they were built from), from the cached builds that `make bench` makes. QEMU=1 also packs this host's qemu-system-x86_64 with its shared
# libraries, its TCG module and the firmware a -kernel boot reads, under
# <dir>/qemu, for a host without QEMU: put <dir>/qemu/bin first in PATH there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: bundle.sh <dir>}
OUT=${OUT:-$top/out}

die() { echo "bundle: error: $*" >&2; exit 1; }

kdir() { # <stock|series|posted>
	if [ "$1" = series ]; then
		FLAVOR=perf "$top/kernel/kernel.sh" kdir
	else
		SERIES_DIR=$top/kernel/$1 FLAVOR=perf "$top/kernel/kernel.sh" kdir
	fi
}

mkdir -p "$dir"
for k in stock series posted; do
	[ -f "$(kdir $k)/.done" ] || die "the $k perf kernel is not built (make bench QUICK=1 builds it)"
	cp "$(kdir $k)/arch/x86/boot/bzImage" "$dir/perf-$k.bzImage"
	cp "$(kdir $k)/System.map" "$dir/perf-$k.System.map"
done
make -s -C "$top/bench/lockhold" O="$dir" || die "cannot build bench/lockhold"
make -s -C "$top/bench/c2c" O="$dir" || die "cannot build bench/c2c"
[ -f "$OUT/perf/initramfs.cpio" ] || die "no perf initramfs (make initramfs FLAVOR=perf)"
cp "$OUT/perf/initramfs.cpio" "$dir/perf.initramfs.cpio"
{
	echo "meta commit=$(git -C "$top" rev-parse --short=12 HEAD)$(git -C "$top" diff --quiet HEAD -- . || echo -dirty)"
	echo "meta base=Debian_linux-source-7.3_$("$top/scripts/fetch-source.sh" version)"
} > "$dir/meta"

if [ "${QEMU:-0}" = 1 ]; then
	qemu=$(command -v qemu-system-x86_64) || die "no qemu-system-x86_64 to pack"
	q=$dir/qemu
	rm -rf "$q"
	mkdir -p "$q/bin" "$q/libexec" "$q/lib" "$q/modules" "$q/firmware"
	cp "$qemu" "$q/libexec/"
	# Debian builds TCG as a loadable module; QEMU_MODULE_DIR points QEMU at it.
	# Other builds have it built in.
	tcg=
	for d in /usr/lib/x86_64-linux-gnu/qemu /usr/lib64/qemu /usr/lib/qemu; do
		[ ! -f "$d/accel-tcg-x86_64.so" ] || { tcg=$d/accel-tcg-x86_64.so; break; }
	done
	[ -z "$tcg" ] || cp "$tcg" "$q/modules/"
	# Every library the binary and the module load, the dynamic loader included,
	# so that they run with none of the other host's libraries.
	ldd "$qemu" $tcg | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' | sort -u |
		while read -r lib; do cp -L "$lib" "$q/lib/"; done
	for f in bios-256k.bin kvmvapic.bin linuxboot_dma.bin linuxboot.bin multiboot_dma.bin pvh.bin; do
		for d in /usr/share/qemu /usr/share/seabios; do
			[ ! -f "$d/$f" ] || { cp -L "$d/$f" "$q/firmware/"; break; }
		done
	done
	[ -f "$q/firmware/bios-256k.bin" ] || die "no bios-256k.bin (SeaBIOS) to pack"
	cat > "$q/bin/qemu-system-x86_64" <<'EOF'
#!/bin/sh
# The packed QEMU, run by its own loader and libraries (bench/bundle.sh).
q=$(cd "$(dirname "$0")/.." && pwd)
QEMU_MODULE_DIR=$q/modules exec "$q/lib/ld-linux-x86-64.so.2" --library-path "$q/lib" \
	"$q/libexec/qemu-system-x86_64" -L "$q/firmware" "$@"
EOF
	chmod +x "$q/bin/qemu-system-x86_64"
fi
du -sh "$dir"
