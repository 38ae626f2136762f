#!/usr/bin/env bash
# make deps' source fetch (scripts/fetch-source.sh), run against the pinned mirror with
# fake pins in a throwaway cache: a pin no longer offered falls back to the newest build
# of its series with one notice; a wrong checksum or no build of the series fails with one
# error line naming TARBALL= and leaves no cache entry; TARBALL overrides it all. Needs
# the mirror (downloads the 167 MB .deb twice), so it is make check-fetch's, not make
# check's; fails when the mirror cannot be reached.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
fetch=$top/scripts/fetch-source.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The real pin's values, to build the fake ones from.
. "$top/kernel/source.pin"
series=$(echo "${SOURCE_VERSION%-*}" | cut -d. -f1-2)

# mkpin <name> <package> <version> <sha256> <suite> [mirror]: write $tmp/<name>.pin
mkpin() {
	printf '%s\n' "SOURCE_PACKAGE=$2" "SOURCE_VERSION='$3'" "SOURCE_SHA256=$4" \
		"SOURCE_SUITE=$5" "SOURCE_MIRROR=${6:-$SOURCE_MIRROR}" > "$tmp/$1.pin"
}

# run <cache> <pin name> <command>: stdout in $tmp/out, stderr in $tmp/err, status in $rc.
# A TARBALL from the caller's make must not turn fetch into a no-op.
run() {
	env -u TARBALL CACHE="$1" SOURCE_PIN="$tmp/$2.pin" "$fetch" "$3" > "$tmp/out" 2> "$tmp/err"
	rc=$?
}

# check <description> <command...>: ok when the command succeeds, else not ok with the
# output of the last run.
check() {
	local desc=$1
	shift
	if "$@"; then
		echo "ok host: $desc"
	else
		echo "not ok host: $desc (rc=$rc)"
		sed 's/^/# stderr: /' "$tmp/err"
		sed 's/^/# stdout: /' "$tmp/out"
	fi
}

one_line() { [ "$(wc -l < "$tmp/err")" -eq 1 ]; }
no_entry() { [ -z "$(ls -A "$1/source" 2>/dev/null)" ]; }

# The newest build of the series in the Packages file apt fetched into cache $1, and a
# field of it, read without fetch-source.sh's help.
packages() { /usr/lib/apt/apt-helper cat-file "$1"/apt/lists/*_Packages*; }
newest() {
	local v best=
	for v in $(packages "$1" | awk -v p="$SOURCE_PACKAGE" '/^Package: /{pk=$2} pk==p && /^Version: /{print $2}'); do
		case ${v%-*} in "$series" | "$series".*) ;; *) continue ;; esac
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
	done
	echo "$best"
}
field() {
	packages "$1" | awk -v p="$SOURCE_PACKAGE" -v v="$2" -v f="$3:" \
		'/^Package: /{pk=$2} /^Version: /{ver=$2} pk==p && ver==v && $1==f {print $2}'
}

host=${SOURCE_MIRROR#*://}
host=${host%%/*}
case $SOURCE_MIRROR in https:*) port=443 ;; *) port=80 ;; esac
if ! timeout 10 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null; then
	# This check is the download's own (make check-fetch, not make check): an
	# unreachable mirror fails it.
	echo "not ok host: source fetch: $host can be reached"
else
	# A pin the archive no longer offers: the newest build of the series stands in.
	c=$tmp/fallback
	mkpin fallback "$SOURCE_PACKAGE" "$series.0-0~fake" "$SOURCE_SHA256" "$SOURCE_SUITE"
	run "$c" fallback fetch
	want=$(newest "$c")
	check "source fetch: pin no longer offered falls back with one notice" eval '[ $rc -eq 0 ] && [ -n "$want" ] &&
		[ "$(cat "$tmp/err")" = "deps: $SOURCE_PACKAGE $series.0-0~fake (pinned) is no longer offered by $SOURCE_SUITE; using $want" ]'
	run "$c" fallback version
	check "source fetch: version names the newest offered build ($want)" \
		eval '[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = "$want" ] && [ ! -s "$tmp/err" ]'
	run "$c" fallback path
	check "source fetch: path names its tarball and the entry records the .deb's sha256" \
		eval '[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = "$c/source/$want/$SOURCE_PACKAGE.tar.xz" ] &&
		[ "$(head -c 6 "$(cat "$tmp/out")" | od -An -tx1 | tr -d " ")" = fd377a585a00 ] &&
		[ "$(cat "$c/source/$want/sha256")" = "$(field "$c" "$want" SHA256)" ]'
	# Again, with the mirror out of reach: the stand-in is a silent, offline hit.
	mkpin offline "$SOURCE_PACKAGE" "$series.0-0~fake" "$SOURCE_SHA256" "$SOURCE_SUITE" http://forkscale.invalid/debian
	run "$c" offline fetch
	check "source fetch: the stand-in is reused offline and silently" \
		eval '[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && [ ! -s "$tmp/out" ]'

	# The pinned build, but not the pinned bytes.
	c=$tmp/badsum
	mkpin badsum "$SOURCE_PACKAGE" "$SOURCE_VERSION" "$(printf '0%.0s' {1..64})" "$SOURCE_SUITE"
	run "$c" badsum fetch
	check "source fetch: wrong sha256 fails with one line naming TARBALL= and caches nothing" \
		eval '[ $rc -ne 0 ] && one_line && grep -q "sha256" "$tmp/err" && grep -q "TARBALL=" "$tmp/err" && no_entry "$c"'
	run "$c" badsum path
	check "source fetch: path before a successful fetch says to run make deps" \
		eval '[ $rc -ne 0 ] && one_line && grep -q "run make deps" "$tmp/err" && [ ! -s "$tmp/out" ]'

	# A suite without the series, and a package that does not exist.
	c=$tmp/nosuite
	mkpin nosuite "$SOURCE_PACKAGE" "$SOURCE_VERSION" "$SOURCE_SHA256" bookworm-backports
	run "$c" nosuite fetch
	check "source fetch: no $series build offered fails with one line naming TARBALL=" \
		eval '[ $rc -ne 0 ] && one_line && grep -q "offers no $series version" "$tmp/err" &&
		grep -q "TARBALL=" "$tmp/err" && no_entry "$c"'
	c=$tmp/nopkg
	mkpin nopkg forkscale-no-such-package "$SOURCE_VERSION" "$SOURCE_SHA256" "$SOURCE_SUITE"
	run "$c" nopkg fetch
	check "source fetch: an unknown package fails with one line naming TARBALL=" \
		eval '[ $rc -ne 0 ] && one_line && grep -q "offers no $series version" "$tmp/err" &&
		grep -q "TARBALL=" "$tmp/err" && no_entry "$c"'
fi

# TARBALL is the user's: no fetch, no cache, and path and version report it.
c=$tmp/override
mkpin override "$SOURCE_PACKAGE" "$SOURCE_VERSION" "$SOURCE_SHA256" "$SOURCE_SUITE" http://forkscale.invalid/debian
tarball=$tmp/my-linux.tar.xz
tb() { CACHE="$c" SOURCE_PIN="$tmp/override.pin" TARBALL=$tarball "$fetch" "$1" > "$tmp/out" 2> "$tmp/err"; rc=$?; }
tb fetch
check "source fetch: TARBALL set makes fetch a silent no-op" \
	eval '[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && [ ! -e "$c" ]'
tb path
check "source fetch: TARBALL set makes path print it" \
	eval '[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = "$tarball" ]'
tb version
check "source fetch: TARBALL set makes version print TARBALL:<name>" \
	eval '[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = "TARBALL:my-linux.tar.xz" ]'
