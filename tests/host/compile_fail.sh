#!/usr/bin/env bash
# The seqcount write API demands the lock's guard: a module that writes without
# one must not compile, while the same module passing the guard must.
#   compile_fail.sh <kdir> <workdir>
set -uo pipefail
kdir=$1 work=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
src=$top/tests/compile-fail

# build <name>: builds tests/compile-fail/<name>.rs as a module; output in $work/<name>.log
build() {
	local dir=$work/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$src/$1.rs" "$dir/"
	echo "obj-m := $1.o" > "$dir/Kbuild"
	"$top/scripts/kbuild-module.sh" "$kdir" "$dir" modules > "$work/$1.log" 2>&1
}

if build seqcount_write_with_guard; then
	echo "ok host: compile-fail control: seqcount write with the guard builds"
else
	echo "not ok host: compile-fail control: seqcount write with the guard builds"
	tail -n 20 "$work/seqcount_write_with_guard.log" | sed 's/^/# /'
fi
if build seqcount_write_without_guard; then
	echo "not ok host: seqcount write without the lock's guard does not compile (it built)"
elif grep -q 'error\[E0061\]' "$work/seqcount_write_without_guard.log"; then
	echo "ok host: seqcount write without the lock's guard does not compile"
else
	echo "not ok host: seqcount write without the lock's guard does not compile (other error)"
	tail -n 20 "$work/seqcount_write_without_guard.log" | sed 's/^/# /'
fi
