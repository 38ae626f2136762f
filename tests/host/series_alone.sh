#!/usr/bin/env bash
# Each series to be mailed (all but measure/) applies alone on the base, with
# only the series its letter text names in Depends-on applied first
# (kernel/cover/<series>.txt), as its recipients will apply it. git apply
# --cached on a scratch index of the base commit: no checkout, so seconds.
# make patches-check builds each such tree too.
# Shown catching cgroup-read applied without the cgroup.kill fix it depends on.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
patches=$top/kernel/patches
base=$("$top/kernel/kernel.sh" basedir) || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! git -C "$base" rev-parse -q --verify forkscale-base > /dev/null; then
	echo "not ok host: the merge-set series apply alone (no base commit in $base)"
	exit 0
fi

mapfile -t all < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$patches/series")
series_patches() { # <series>
	local p
	for p in "${all[@]}"; do
		[ "${p%%/*}" != "$1" ] || echo "$patches/$p"
	done
}

# applies <series>...: 0 if the series apply, in this order, on the base alone
applies() {
	local s
	export GIT_INDEX_FILE=$tmp/index
	rm -f "$GIT_INDEX_FILE"
	git -C "$base" read-tree forkscale-base || return 1
	for s in "$@"; do
		mapfile -t ps < <(series_patches "$s")
		[ "${#ps[@]}" -gt 0 ] || { echo "# series $s has no patches"; return 1; }
		git -C "$base" apply --cached "${ps[@]}" 2> "$tmp/apply.log" ||
			{ sed 's/^/# /' "$tmp/apply.log" | head -n 5; return 1; }
	done
}

mapfile -t merge_set < <(printf '%s\n' "${all[@]}" | cut -d/ -f1 | grep -vx measure | uniq)
for s in "${merge_set[@]}"; do
	mapfile -t deps < <("$top/kernel/kernel.sh" depends "$s")
	what="the $s series applies alone on the base${deps[*]:+, after ${deps[*]}}"
	if applies "${deps[@]}" "$s"; then
		echo "ok host: $what"
	else
		echo "not ok host: $what"
	fi
done

# The twin: cgroup-read's one patch marks the kill fix's lines WRITE_ONCE().
if applies cgroup-read > /dev/null; then
	echo "not ok host: cgroup-read without the cgroup-kill series it depends on is caught"
else
	echo "ok host: cgroup-read without the cgroup-kill series it depends on is caught"
fi
