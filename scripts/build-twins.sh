#!/usr/bin/env bash
# Build each broken twin of tests/twins.txt: forkscale.ko with
# --cfg forkscale_twin_<name>, in <outdir>/<name>/ (the module keeps its name,
# so the tests load and unload it as they do forkscale.ko), and the bench's
# packed_percpu build (below). Cached: a twin is
# rebuilt only when rust/ or the kernel build is newer than it.
#   build-twins.sh <kdir> <outdir> [name]   (name: that twin only)
set -euo pipefail
kdir=$1 out=$2 only=${3:-}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
build() { # <name> [cfg]: --cfg forkscale_twin_<name>, or the one given
	local dir=$out/$1 cfg=${2:-"--cfg=forkscale_twin --cfg=forkscale_twin_$1"}
	# Rebuilt when the kernel build, rust/ or this script changed since.
	if [ -f "$dir/forkscale.ko" ] && [ "$(cat "$dir/kdir" 2>/dev/null)" = "$kdir" ] &&
	   [ -z "$(find "$top/rust" "$kdir/.done" "$0" -newer "$dir/forkscale.ko" -print -quit)" ]; then
		return
	fi
	rm -rf "$dir/src"
	mkdir -p "$dir/src/rust"
	cp "$top"/rust/*.rs "$dir/src/rust/"
	echo 'obj-m := rust/forkscale.o' > "$dir/src/Kbuild"
	"$top/scripts/kbuild-module.sh" "$kdir" "$dir/src" -s modules \
		KRUSTFLAGS="$cfg" > "$dir/build.log" 2>&1 ||
		{ echo "twins: building $1 failed:" >&2; cat "$dir/build.log" >&2; return 1; }
	cp "$dir/src/rust/forkscale.ko" "$dir/forkscale.ko"
	echo "$kdir" > "$dir/kdir"
}
# A twin may be named on several lines, one for each test that must catch it.
# Kernel twins ("kernel:<defect>") are in the debug kernel already.
names=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/|.*//' -e '/^kernel:/d' "$top/tests/twins.txt" |
	awk '!seen[$0]++')
if [ -n "$only" ]; then
	grep -qxF "$only" <<< "$names" || { echo "twins: no module twin '$only' in tests/twins.txt" >&2; exit 2; }
	names=$only
fi
# As many at a time as there are CPUs: each is one rustc crate build, mostly
# single-threaded.
pids=() rc=0
for name in $names; do
	build "$name" & pids+=($!)
	if [ ${#pids[@]} -ge "$(nproc)" ]; then
		wait "${pids[0]}" || rc=1
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do wait "$p" || rc=1; done
# Not a twin: forkscale.ko with its per-CPU queues and block holders packed, as
# they were before they got cache lines of their own, for make bench C2C=1's
# module_all_packed variant (the false sharing, measured in the same run).
[ -n "$only" ] || build packed_percpu --cfg=forkscale_packed_percpu || rc=1
exit $rc
