#!/usr/bin/env bash
# Build the guest initramfs: static busybox, our init and runners, the static
# test binaries and the modules (installed as /lib/modules/<name>.ko).
#   [TWINS=<dir>] mkinitramfs.sh <output.cpio> <test-bin-dir> <module.ko>...
set -euo pipefail
out=$1 tests=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,lib/modules,forkscale/tests}
cp /bin/busybox "$root/bin/busybox"
for applet in $(/bin/busybox --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
install -m 0755 "$here/guest/init" "$root/init"
install -m 0755 "$here/guest/run-tests" "$here/guest/run-report" \
	"$here/guest/run-bench" "$here/guest/run-conformance" "$root/forkscale/"
cp -a "$tests"/. "$root/forkscale/tests/"
mv "$root/forkscale/tests/tests.list" "$root/forkscale/tests.list"
install -m 0644 "$here/guest/mttcg.list" "$root/forkscale/mttcg.list"
install -m 0644 "$here/guest/kmemleak.list" "$root/forkscale/kmemleak.list"
for ko in "$@"; do
	install -m 0644 "$ko" "$root/lib/modules/"
done
# The broken twins of forkscale.ko (scripts/build-twins.sh) and their list, for
# selftests/forkscale/twins.sh.
install -m 0644 "$here/../tests/twins.txt" "$root/forkscale/twins.txt"
for twin in "${TWINS:-/nonexistent}"/*/forkscale.ko; do
	[ -f "$twin" ] || continue
	install -D -m 0644 "$twin" "$root/lib/modules/twins/$(basename "$(dirname "$twin")")/forkscale.ko"
done
# Uncompressed: under TCG the kernel took about 2 s of each boot to inflate the
# gzip'd archive (32 MB of static binaries), and boots are many.
(cd "$root" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
