#!/usr/bin/env bash
# make deps' source fetch (scripts/fetch-source.sh) once the backports suite no
# longer offers the pinned series, offline: a local apt repository stands in for
# the mirror (file:, trusted, metadata only). Where it offers no 7.3 build at all,
# as when backports move to 7.4, the fetch fails in one line that says what to do
# (TARBALL=, or moving to a new base) and caches nothing; where the cache holds the
# pinned tarball already, the fetch is a silent hit all the same. A control offers
# a newer 7.3 build, whose download must then be what fails: the suite was read.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
fetch=$top/scripts/fetch-source.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/kernel/source.pin"
series=$(echo "${SOURCE_VERSION%-*}" | cut -d. -f1-2)

# repo <dir> <package> <version>: a repository whose suite "gone" offers one package
repo() {
	local arch p d=$1/dists/gone
	arch=$(dpkg --print-architecture)
	p=main/binary-$arch/Packages
	mkdir -p "$d/main/binary-$arch"
	printf '%s\n' "Package: $2" "Version: $3" "Architecture: all" \
		"Maintainer: nobody <nobody@example.org>" "Filename: pool/$2_$3_all.deb" "Size: 100" \
		"SHA256: $(printf '0%.0s' {1..64})" "Description: stand-in" "" > "$d/$p"
	printf '%s\n' "Suite: gone" "Codename: gone" "Components: main" "Architectures: $arch all" \
		"Date: $(date -Ru)" "SHA256:" " $(sha256sum < "$d/$p" | cut -d' ' -f1) $(stat -c %s "$d/$p") $p" \
		> "$d/Release"
}
# pin <name> <repo dir>: the real pin, its suite that repository's
pin() {
	printf '%s\n' "SOURCE_PACKAGE=$SOURCE_PACKAGE" "SOURCE_VERSION='$SOURCE_VERSION'" \
		"SOURCE_SHA256=$SOURCE_SHA256" "SOURCE_SUITE=gone" "SOURCE_MIRROR='[trusted=yes] file:$2'" \
		> "$tmp/$1.pin"
}
run() { # <cache> <pin name>
	env -u TARBALL CACHE="$1" SOURCE_PIN="$tmp/$2.pin" "$fetch" fetch > "$tmp/out" 2> "$tmp/err"
	rc=$?
}
check() { # <description> <command...>
	local desc=$1
	shift
	if "$@"; then
		echo "ok host: $desc"
	else
		echo "not ok host: $desc (rc=$rc)"
		sed 's/^/# stderr: /' "$tmp/err"
	fi
}
no_entry() { [ -z "$(ls -A "$1/source" 2> /dev/null)" ]; }

next=$((${series#*.} + 1))
repo "$tmp/moved" "linux-source-${series%.*}.$next" "${series%.*}.$next.1-1~bpo13+1"
pin moved "$tmp/moved"
run "$tmp/c1" moved
check "source gone: no $series build left fails in one line naming TARBALL= and a new base, caching nothing" \
	eval '[ $rc -ne 0 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] &&
	grep -q "offers no $series version at all" "$tmp/err" && grep -q "TARBALL=" "$tmp/err" &&
	grep -q "new base (Documentation/usage.rst)" "$tmp/err" && no_entry "$tmp/c1"'

# The pinned tarball in the cache already (an entry as fetch-source.sh makes it):
# no look at the suite at all.
e=$tmp/c2/source/$SOURCE_VERSION
mkdir -p "$e"
printf 'stand-in' > "$e/$SOURCE_PACKAGE.tar.xz"
echo "$SOURCE_VERSION" > "$e/version"
run "$tmp/c2" moved
check "source gone: a cached tarball of the pin is used silently" \
	eval '[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(cat "$tmp/c2/source/current")" = "$SOURCE_VERSION" ]'

repo "$tmp/newer" "$SOURCE_PACKAGE" "$series.99-1~bpo13+1"
pin newer "$tmp/newer"
run "$tmp/c3" newer
check "source gone: the control, a newer $series build, is read from the stand-in suite" \
	eval '[ $rc -ne 0 ] && grep -q "$SOURCE_PACKAGE $series.99-1~bpo13+1: download from" "$tmp/err" &&
	no_entry "$tmp/c3"'
