#!/usr/bin/env bash
# `make lint`: upstream's checks on everything forkscale adds, as TAP lines
# ("ok lint: ..." / "not ok lint: ..."). Any finding is a failure.
#   lint.sh <workdir>
#
# - scripts/checkpatch.pl --strict on every patch of the series. A new file
#   must fall under a MAINTAINERS entry (get_maintainer.pl), which is why
#   checkpatch's generic FILE_PATH_CHANGES reminder is checked that way
#   instead of counted;
# - make rustfmtcheck on the patched tree, rustfmt on the module's sources;
# - CLIPPY=1 on the kernel's Rust (kernel crate and doctests), read from the
#   debug build's log (it compiles them with clippy-driver), and on the module;
# - W=1 on every C file the series adds or changes, compiled again in a copy of
#   the cached build, which stays untouched.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=$1
ksh=$top/kernel/kernel.sh
# The lint is of the debug build: the one that compiles its Rust with clippy-driver.
export FLAVOR=debug
failed=0

ok() { echo "ok lint: $1"; }
not_ok() {
	echo "not ok lint: $1"
	sed 's/^/# /' "$2" | head -n "${3:-40}"
	failed=1
}
check() { # <name> <log> <command...>: passes when the command succeeds and logs nothing
	local name=$1 log=$2
	shift 2
	if "$@" > "$log" 2>&1 && [ ! -s "$log" ]; then ok "$name"; else not_ok "$name" "$log"; fi
}

src=$("$ksh" source) || { echo "not ok lint: prepare the patched source"; exit 1; }
kdir=$("$ksh" build) || { echo "not ok lint: build the kernel"; exit 1; }
rm -rf "$work"
mkdir -p "$work"

# --- checkpatch ----------------------------------------------------------------
# checkpatch runs scripts/spdxcheck.py with the python3 first in PATH; Debian's has the
# python3-ply it needs (a pyenv or venv python3 may not). UNKNOWN_COMMIT_ID is off: the
# tree is Debian's source in one commit, with no upstream history to find a Fixes: id in.
checkpatch_one() { # <patch>
	local patch=$1 f
	(cd "$src" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --terse --show-types \
		--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID "$patch") | grep -v '^total:' || true
	for f in $(awk '/^diff --git /{file=$4} /^new file mode/{sub(/^b\//, "", file); print file}' "$patch"); do
		(cd "$src" && scripts/get_maintainer.pl --nogit --nogit-fallback --norolestats -f "$f") |
			grep -q . || echo "$f: no MAINTAINERS entry covers this new file"
	done
}
while read -r p; do
	check "checkpatch --strict: $p" "$work/checkpatch-${p//\//-}.txt" \
		checkpatch_one "$top/kernel/patches/$p"
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/kernel/patches/series")

# --- rustfmt -------------------------------------------------------------------
check "make rustfmtcheck (the patched kernel tree)" "$work/rustfmtcheck.txt" \
	"$ksh" kmake "$src" "$kdir" -s rustfmtcheck
check "rustfmt --check (module, samples, compile-fail tests)" "$work/rustfmt.txt" \
	rustfmt --edition 2021 --check "$top"/rust/*.rs "$top"/samples/*.rs "$top"/tests/compile-fail/*.rs

# --- clippy, from the build, and W=1 in a copy of it ----------------------------
# The debug build compiled the kernel crate and its doctests with clippy-driver
# (kernel.sh's clippy_args): a lint there is a "warning" or "error" line in its log.
# Both crates must have gone through clippy in the log: a build that compiled
# them before it was interrupted shows them in its first attempt's part.
log=$kdir/build.log
what="CLIPPY=1: kernel crate and doctests"
if ! grep -q ' CLIPPY=1 ' "$kdir/.done" || ! grep -q '^  CLIPPY L rust/kernel\.o$' "$log" ||
	! grep -q '^  CLIPPY  *rust/doctests_kernel_generated\.o$' "$log"; then
	echo "$kdir/build.log shows no clippy-driver run over rust/kernel.o and the doctests" > "$work/clippy-kernel.txt"
	not_ok "$what" "$work/clippy-kernel.txt"
else
	grep -E -A8 '^(warning|error)' "$log" > "$work/clippy-kernel.txt"
	case $? in
	0) not_ok "$what" "$work/clippy-kernel.txt" ;;
	1) ok "$what" ;;
	*) echo "cannot read $log" > "$work/clippy-kernel.txt"; not_ok "$what" "$work/clippy-kernel.txt" ;;
	esac
fi

copy=$work/kbuild
cp -a "$kdir" "$copy"
objs=()
for f in $(git -C "$src" diff --name-only --diff-filter=AM forkscale-base HEAD -- '*.c'); do
	[ -f "$copy/${f%.c}.o" ] || continue
	rm -f "$copy/${f%.c}.o"
	objs+=("${f%.c}.o")
done
"$ksh" kmake "$src" "$copy" -s W=1 "${objs[@]}" > "$work/w1.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -qE 'warning:|error:' "$work/w1.txt"; then
	ok "W=1: ${#objs[@]} C files the series adds or changes"
else
	not_ok "W=1: ${#objs[@]} C files the series adds or changes" "$work/w1.txt"
fi
rm -rf "$copy"

# The module, test modules and samples under CLIPPY=1.
module=$("$top/tests/host/clippy.sh" "$kdir" "$work/clippy-module")
echo "$module" | sed 's/^\(\(not \)\{0,1\}ok\) host: /\1 lint: /'
case $module in "ok "*) ;; *) failed=1 ;; esac
exit $failed
