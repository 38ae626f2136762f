#!/usr/bin/env bash
# Fetch the Debian kernel source tarball that kernel/source.pin names into the cache.
#
#   fetch-source.sh fetch     make sure the tarball is cached; silent on a cache hit
#   fetch-source.sh path      print the cached tarball's path (no network)
#   fetch-source.sh version   print the Debian version in use (no network)
#
# TARBALL, when set, is the user's own tarball: fetch does nothing, path prints it and
# version prints TARBALL:<name>. SOURCE_PIN names another pin file (the host tests use
# fake ones).
#
# Cache layout, under $CACHE:
#   source/<version>/   <package>.tar.xz, version, and sha256 (of the .deb)
#   source/<pinned>     a link to source/<version> when the pinned version was no
#                       longer offered and <version> was fetched in its place
#   source/current      the version in use
#   apt/                a private apt configuration, its lists and the log of apt's output
# Entries appear only when complete: they are made under a .tmp name and renamed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-$HOME/.cache/forkscale}
case $CACHE in /*) ;; *) CACHE=$PWD/$CACHE ;; esac
SOURCE_PIN=${SOURCE_PIN:-$top/kernel/source.pin}
src=$CACHE/source
# The .deb is 167 MB: 20 minutes is 140 kB/s.
download_limit=${SOURCE_DOWNLOAD_LIMIT:-1200}

die() { echo "deps: error: $*" >&2; exit 1; }

# Removed on any exit, so that nothing half-written stays in the cache.
tmps=()
cleanup() { [ ${#tmps[@]} -eq 0 ] || rm -rf "${tmps[@]}"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

load_pin() {
	local v
	# The pin alone decides; a stray SOURCE_* in the environment must not fill a gap.
	unset SOURCE_PACKAGE SOURCE_VERSION SOURCE_SHA256 SOURCE_SUITE SOURCE_MIRROR
	[ -f "$SOURCE_PIN" ] || die "pin file $SOURCE_PIN not found"
	# shellcheck source=../kernel/source.pin
	. "$SOURCE_PIN"
	for v in SOURCE_PACKAGE SOURCE_VERSION SOURCE_SHA256 SOURCE_SUITE SOURCE_MIRROR; do
		[ -n "${!v:-}" ] || die "$SOURCE_PIN sets no $v"
	done
	# Both name paths in the cache.
	[[ $SOURCE_PACKAGE =~ ^[a-z0-9][a-z0-9.+-]*$ && $SOURCE_VERSION =~ ^[0-9][A-Za-z0-9.+~:-]*$ ]] ||
		die "$SOURCE_PIN: '$SOURCE_PACKAGE' '$SOURCE_VERSION' is not a Debian package name and version"
	pin_name=${SOURCE_PIN#"$top"/}
	tarname=$SOURCE_PACKAGE.tar.xz
	series=$(upstream "$SOURCE_VERSION" | cut -d. -f1-2)
	override="set TARBALL=/path/to/$tarname to use a tarball of your own"
}

# The upstream part of a Debian version: no epoch, no Debian revision.
upstream() {
	local v=${1#*:}
	echo "${v%-*}"
}

# Whether a version belongs to the pinned series (7.3.5 and 7.3 do, 7.4.1 and 7.30.1 not).
in_series() {
	case $(upstream "$1") in
	"$series" | "$series".*) return 0 ;;
	*) return 1 ;;
	esac
}

# The version whose tarball serves the pin, from the cache alone; fails on a miss.
cached_version() {
	local e=$src/$SOURCE_VERSION
	[ -f "$e/$tarname" ] || return 1
	if [ -L "$e" ]; then readlink "$e"; else echo "$SOURCE_VERSION"; fi
}

# Replace $1 by $2 in one rename, so that readers never see a partial file or link.
publish() {
	mv -Tf "$2" "$1"
}

set_current() {
	[ "$(cat "$src/current" 2>/dev/null)" != "$1" ] || return 0
	tmps+=("$src/current.tmp")
	echo "$1" > "$src/current.tmp"
	publish "$src/current" "$src/current.tmp"
}

# The version in use, checked against the pin; no network.
current_version() {
	local v
	v=$(cat "$src/current" 2>/dev/null) || v=
	[ -n "$v" ] && [ -f "$src/$v/$tarname" ] ||
		die "no $SOURCE_PACKAGE tarball fetched into $src yet; run make deps (or $override)"
	[ "$v" = "$(cached_version || true)" ] ||
		die "$src holds $SOURCE_PACKAGE $v, but $pin_name pins $SOURCE_VERSION; run make deps"
	echo "$v"
}

apt_setup() {
	local d=$CACHE/apt
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	echo "deb $SOURCE_MIRROR $SOURCE_SUITE main" > "$d/sources.list"
	# The system's hooks (appstream, PackageKit) would act on the system after our update.
	printf '#clear APT::Update::%s;\n' Pre-Invoke Post-Invoke Post-Invoke-Success > "$d/apt.conf"
	log=$d/log
	: > "$log"
	# Never the system's sources, lists or lock: the suite is not one this host uses. The
	# rest of the system's configuration (proxies, say) still applies.
	apt_opts=(
		-c "$d/apt.conf"
		-o Dir::Etc::sourcelist="$d/sources.list" -o Dir::Etc::sourceparts=/dev/null
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" -o Debug::NoLocking=1
	)
	# As root apt hands downloads to _apt, which may not reach a private cache, and warns.
	[ "$(id -u)" -ne 0 ] || apt_opts+=(-o APT::Sandbox::User=root)
}

# Download $SOURCE_PACKAGE $1 and make it the complete entry source/$1.
download() {
	local ver=$1 work deb sum entry=$src/$1
	work=$(mktemp -d "$CACHE/apt/work.XXXXXX")
	tmps+=("$work")
	# apt-get download writes into the current directory.
	(cd "$work" && timeout "$download_limit" apt-get "${apt_opts[@]}" -q download "$SOURCE_PACKAGE=$ver") >> "$log" 2>&1 ||
		die "$SOURCE_PACKAGE $ver: download from $SOURCE_MIRROR failed or took over $download_limit s (see $log); $override"
	deb=$(find "$work" -maxdepth 1 -name '*.deb' | head -n 1)
	[ -n "$deb" ] || die "$SOURCE_PACKAGE $ver: apt-get download left no .deb (see $log); $override"
	sum=$(sha256sum < "$deb" | cut -d' ' -f1)
	if [ "$ver" = "$SOURCE_VERSION" ] && [ "$sum" != "$SOURCE_SHA256" ]; then
		die "$SOURCE_PACKAGE $ver: sha256 of the downloaded .deb is $sum, $pin_name says $SOURCE_SHA256; $override"
	fi
	dpkg -x "$deb" "$work/x" 2>> "$log" ||
		die "$SOURCE_PACKAGE $ver: dpkg -x of the .deb failed (see $log); $override"
	[ -f "$work/x/usr/src/$tarname" ] ||
		die "$SOURCE_PACKAGE $ver: the .deb holds no usr/src/$tarname; $override"
	# A .tmp left by a killed run is stale: fetches of one cache are serialised.
	rm -rf "$entry.tmp"
	tmps+=("$entry.tmp")
	mkdir "$entry.tmp"
	mv "$work/x/usr/src/$tarname" "$entry.tmp/"
	echo "$ver" > "$entry.tmp/version"
	echo "$sum" > "$entry.tmp/sha256"
	# A link left from when this version stood in for another is replaced by the real thing.
	[ ! -L "$entry" ] || rm -f "$entry"
	publish "$entry" "$entry.tmp"
}

cmd_fetch() {
	local v ver= offered
	[ -z "${TARBALL:-}" ] || return 0
	load_pin
	if v=$(cached_version); then set_current "$v"; return 0; fi

	mkdir -p "$src" "$CACHE/apt"
	# One fetch per cache at a time: apt runs unlocked on the private lists.
	exec 9> "$CACHE/apt/lock"
	flock 9
	if v=$(cached_version); then set_current "$v"; return 0; fi

	apt_setup
	timeout 600 apt-get "${apt_opts[@]}" -q --error-on=any update >> "$log" 2>&1 ||
		die "apt-get update of $SOURCE_SUITE from $SOURCE_MIRROR failed or took over 600 s (see $log); $override"
	offered=$(apt-cache "${apt_opts[@]}" madison "$SOURCE_PACKAGE" 2>> "$log" |
		awk -F'|' -v p="$SOURCE_PACKAGE" '{ gsub(/ /, "") } $1 == p { print $2 }' | sort -u)

	if grep -qxF -- "$SOURCE_VERSION" <<< "$offered"; then
		download "$SOURCE_VERSION"
		set_current "$SOURCE_VERSION"
		return 0
	fi

	# Backports keep only the newest build: take the newest of the series instead.
	for v in $offered; do
		in_series "$v" || continue
		if [ -z "$ver" ] || dpkg --compare-versions "$v" gt "$ver"; then ver=$v; fi
	done
	[ -n "$ver" ] ||
		die "$SOURCE_PACKAGE $SOURCE_VERSION (pinned): $SOURCE_SUITE offers no $series version at all; $override, or move the series to a new base (Documentation/usage.rst)"
	[ -f "$src/$ver/$tarname" ] && [ ! -L "$src/$ver" ] || download "$ver"
	# The pin's name links to what stands in for it, so that the next fetch is an offline hit.
	rm -rf "$src/$SOURCE_VERSION.tmp"
	tmps+=("$src/$SOURCE_VERSION.tmp")
	ln -s "$ver" "$src/$SOURCE_VERSION.tmp"
	publish "$src/$SOURCE_VERSION" "$src/$SOURCE_VERSION.tmp"
	set_current "$ver"
	echo "deps: $SOURCE_PACKAGE $SOURCE_VERSION (pinned) is no longer offered by $SOURCE_SUITE; using $ver" >&2
}

case ${1:-} in
fetch)
	cmd_fetch
	;;
path)
	if [ -n "${TARBALL:-}" ]; then
		case $TARBALL in /*) echo "$TARBALL" ;; *) echo "$PWD/$TARBALL" ;; esac
	else
		load_pin
		v=$(current_version)
		echo "$src/$v/$tarname"
	fi
	;;
version)
	if [ -n "${TARBALL:-}" ]; then
		echo "TARBALL:$(basename "$TARBALL")"
	else
		load_pin
		current_version
	fi
	;;
*)
	echo "usage: fetch-source.sh fetch|path|version" >&2
	exit 2
	;;
esac
