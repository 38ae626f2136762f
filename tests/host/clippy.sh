#!/usr/bin/env bash
# The module, the test modules and the samples build without warnings under CLIPPY=1, with Debian's
# clippy-driver (it matches the kernel's rustc; rustup's does not).
#   clippy.sh <kdir> <workdir>
set -uo pipefail
kdir=$1 work=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
cp -r "$top/Kbuild" "$top/rust" "$top/samples" "$work/"
mkdir -p "$work/tests" && cp -r "$top/tests/modules" "$work/tests/"
find "$work" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete
if "$top/scripts/kbuild-module.sh" "$kdir" "$work" CLIPPY=1 \
	CLIPPY_DRIVER=/usr/bin/clippy-driver modules > "$work/build.log" 2>&1 &&
   ! grep -q '^warning' "$work/build.log"; then
	echo "ok host: module, test modules and samples are clippy-clean"
else
	echo "not ok host: module, test modules and samples are clippy-clean"
	grep -A6 -E 'warning|error' "$work/build.log" | head -n 40 | sed 's/^/# /'
fi
