#!/usr/bin/env bash
# Build out-of-tree modules in <dir> against the kernel build <kdir>, with the
# toolchain the kernel was built with (Debian's rustc: rustup's has no rust-src).
#   kbuild-module.sh <kdir> <dir> [make arguments...]
set -euo pipefail
kdir=$1 dir=$2
shift 2
exec make -C "$kdir" M="$dir" LLVM=-19 RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc "$@"
