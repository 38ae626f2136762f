#!/usr/bin/env bash
# The samples the rust/ series posts under samples/rust/ are the repository's
# samples/, which make check builds and loads, byte for byte, both ways: the
# series' sample files are applied from its patches and compared. Shown catching
# a copy of samples/ with one line changed, a sample the series lacks, and one
# the series posts that samples/ lacks.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# posted <dir>: the rust/ series' samples/rust/*.rs, as its patches leave
# them (git apply of those files alone, every patch in order), into <dir>
posted() {
	rm -rf "$1" && mkdir -p "$1" &&
		(cd "$1" && git apply --allow-empty --include='samples/rust/*.rs' "$top"/kernel/patches/rust/0*.patch)
}

# same <samples dir>: 0 if the series posts exactly the samples there
same() {
	local f name bad=0
	posted "$tmp/posted" || { echo "# the rust/ series' samples do not apply"; return 1; }
	for f in "$1"/*.rs; do
		name=$(basename "$f")
		if [ ! -f "$tmp/posted/samples/rust/$name" ]; then
			echo "# samples/$name: the rust/ series does not post samples/rust/$name"
			bad=1
		elif ! cmp -s "$tmp/posted/samples/rust/$name" "$f"; then
			echo "# samples/$name differs from the rust/ series' samples/rust/$name:"
			diff "$tmp/posted/samples/rust/$name" "$f" | head -n 6 | sed 's/^/#   /'
			bad=1
		fi
	done
	for f in "$tmp"/posted/samples/rust/*.rs; do
		[ -f "$1/$(basename "$f")" ] ||
			{ echo "# the rust/ series posts samples/rust/$(basename "$f"), which samples/ lacks"; bad=1; }
	done
	return $bad
}

what="the rust/ series posts samples/ as make check builds them"
count=$(find "$top/samples" -name '*.rs' | wc -l)
if [ "$count" -ge 2 ] && same "$top/samples"; then
	echo "ok host: $what ($count samples)"
else
	echo "not ok host: $what ($count samples)"
fi

# twin <description> <how to break a copy of samples/>
twin() {
	rm -rf "$tmp/s"
	cp -r "$top/samples" "$tmp/s"
	(cd "$tmp/s" && eval "$2")
	if same "$tmp/s" > "$tmp/out"; then
		echo "not ok host: the samples check catches $1"
	else
		echo "ok host: the samples check catches $1"
	fi
}
twin "a sample changed after the export" \
	"sed -i 's/wrapping_add(by), b.wrapping_add(by)/wrapping_add(by), b/' rust_seqlock.rs"
twin "a sample the series lacks" "cp rust_seqlock.rs rust_seqlock_copy.rs"
twin "a posted sample missing from samples/" "rm rust_refcount_pin.rs"
