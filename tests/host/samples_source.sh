#!/usr/bin/env bash
# The samples the rust/ series posts under samples/rust/ are the repository's
# samples/, which make check builds and loads, byte for byte: each file the
# series creates there is rebuilt from its patch and compared. Shown catching a
# copy of samples/ with one line changed, and a sample the series lacks.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# posted <name>: the file samples/rust/<name> as the rust/ series creates it
posted() {
	awk -v f="b/samples/rust/$1" '
		/^diff --git / { on = ($4 == f); body = 0; next }
		on && /^@@ / { body = 1; next }
		on && body && /^\+/ { print substr($0, 2) }
		on && body && /^-- $/ { on = 0 }' "$top"/kernel/patches/rust/*.patch
}

# same <samples dir>: 0 if every sample there is what the series posts
same() {
	local f name bad=0
	for f in "$1"/*.rs; do
		name=$(basename "$f")
		if ! posted "$name" | grep -q .; then
			echo "# samples/$name: the rust/ series does not create samples/rust/$name"
			bad=1
		elif ! posted "$name" | cmp -s - "$f"; then
			echo "# samples/$name differs from the rust/ series' samples/rust/$name:"
			posted "$name" | diff - "$f" | head -n 6 | sed 's/^/#   /'
			bad=1
		fi
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
