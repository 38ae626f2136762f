#!/usr/bin/env bash
# The figure blocks of review-notes.rst (".. figures: <mode>") are what
# bench/report.py prints from the committed results now: a figure that no longer
# matches its source fails make check, so a number cannot go stale
# (bench/doc_figures.py; make bench and make patches rewrite the blocks). Shown
# catching a copy with one figure changed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
doc=$top/Documentation/review-notes.rst
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if python3 "$top/bench/doc_figures.py" --check "$doc" > "$tmp/check.txt" 2>&1; then
	echo "ok host: the figures in review-notes.rst are the committed results'"
else
	echo "not ok host: the figures in review-notes.rst are the committed results' (run make patches)"
	sed 's/^\([^#]\)/# \1/' "$tmp/check.txt"
fi

# The twin: the first "3.00" in a block made "3.50".
awk '/^\.\. figures: / { f = 1 } f && !done && sub(/3\.00/, "3.50") { done = 1 } { print }' \
	"$doc" > "$tmp/twin.rst"
if cmp -s "$doc" "$tmp/twin.rst"; then
	echo "not ok host: a review-notes.rst figure changed is caught (no figure to change)"
elif ! python3 "$top/bench/doc_figures.py" --check "$tmp/twin.rst" > "$tmp/twin.txt" 2>&1 &&
	grep -q '^#   -.*3\.50' "$tmp/twin.txt"; then
	echo "ok host: a review-notes.rst figure changed is caught"
else
	echo "not ok host: a review-notes.rst figure changed is caught"
	sed 's/^/# /' "$tmp/twin.txt"
fi
