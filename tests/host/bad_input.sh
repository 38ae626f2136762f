#!/usr/bin/env bash
# Bad input to `make kernel` gets a one-line error (one "error:" line), a non-zero exit, and leaves
# no cache entry behind.
#   bad_input.sh <cache>      (the real cache: its base repository is reused)
set -uo pipefail
cache=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

entries() { ls -a "$1/src" "$1/build" 2>/dev/null | sort; }

# expect <description> <message-regex> <cache> <make args...>
expect() {
	local desc=$1 msg=$2 c=$3 before rc
	shift 3
	before=$(entries "$c")
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$top" kernel CACHE="$c" "$@" > "$tmp/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -qE "$msg" "$tmp/out" && [ "$(grep -c 'error:' "$tmp/out")" -eq 1 ] &&
	   [ "$(entries "$c")" = "$before" ]; then
		echo "ok host: $desc"
	else
		echo "not ok host: $desc (rc=$rc)"
		sed 's/^/# /' "$tmp/out"
	fi
}

expect "unknown FLAVOR is refused" "unknown FLAVOR 'bogus'" "$cache" FLAVOR=bogus

mkdir -p "$tmp/empty-cache"
expect "missing source tarball is refused" "tarball .* not found" "$tmp/empty-cache" \
	TARBALL="$tmp/linux-source-7.3.tar.xz"
[ -z "$(ls -A "$tmp/empty-cache")" ] && echo "ok host: missing tarball creates no cache" ||
	echo "not ok host: missing tarball creates no cache"

mkdir -p "$tmp/series"
cat > "$tmp/series/0001-broken.patch" <<'PATCH'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: forkscale <forkscale@localhost>
Subject: [PATCH] broken: touch a line that is not there

---
 Makefile | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,3 +1,3 @@
-THIS LINE IS NOT IN THE KERNEL MAKEFILE
+neither is this one
 # SPDX-License-Identifier: GPL-2.0
PATCH
echo 0001-broken.patch > "$tmp/series/series"
expect "a patch that does not apply is refused" "patch 0001-broken.patch does not apply" \
	"$cache" SERIES_DIR="$tmp/series"

# make soak's knobs are checked before anything boots: exit status 2, one
# line saying which, and no output directory.
soak_refuses() { # <description> <message-regex> <variable=value>
	env "$3" "$top/tests/soak.sh" "$tmp/no-bzImage" "$tmp/no-initrd" "$tmp/soak" > "$tmp/out" 2>&1
	local rc=$?
	if [ $rc -eq 2 ] && grep -qE "$2" "$tmp/out" && [ "$(wc -l < "$tmp/out")" -eq 1 ] &&
	   [ ! -e "$tmp/soak" ]; then
		echo "ok host: $1"
	else
		echo "not ok host: $1 (rc=$rc)"
		sed 's/^/# /' "$tmp/out"
	fi
}
soak_refuses "make soak refuses a SOAK_SECS that is not a number" "SOAK_SECS must be a number" SOAK_SECS=10m
soak_refuses "make soak refuses a SOAK_KILLS that is not a number" "SOAK_KILLS must be a number" SOAK_KILLS=lots
soak_refuses "make soak refuses more SOAK_KILLS than clone_read has time for" "at most 5000" SOAK_KILLS=9000
