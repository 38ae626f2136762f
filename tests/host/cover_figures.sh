#!/usr/bin/env bash
# Every cover letter's "Figures" section is what bench/report.py prints from the
# committed results now (Documentation/results/bench.json, pathlen.json): a figure
# that no longer matches its source fails make check, so a number cannot go stale.
# Shown catching a cover letter with one figure changed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The section: from the line after "Figures" and its underline to the shortlog.
figures() { # <cover letter>
	awk '/^Figures$/ { f = 1; getline; getline; next }
	     f && /^[^ ].* \([0-9]+\):$/ { exit }
	     f' "$1" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}

# What the series' letter text names in its Figures header (kernel.sh
# cover_letter), or nothing: a series without one has no Figures section.
expected() { # <series>
	local which
	which=$(sed -n -e '/^$/q' -e 's/^Figures: //p' "$top/kernel/cover/$1.txt")
	[ -z "$which" ] ||
		python3 "$top/bench/report.py" "--summary-$which" "$top/Documentation/results/bench.json"
}

# check_dir <patches dir>: 0 if every cover letter's figures match.
check_dir() {
	local cover series rc=0
	for cover in "$1"/*/0000-cover-letter.patch; do
		series=$(basename "$(dirname "$cover")")
		if { [ -n "$(expected "$series")" ] && [ -z "$(figures "$cover")" ]; } ||
		   ! diff <(expected "$series") <(figures "$cover") > "$tmp/$series.diff"; then
			echo "# $series: the cover letter's figures differ from bench/report.py's:"
			sed 's/^/#   /' "$tmp/$series.diff" | head -n 12
			rc=1
		fi
	done
	return $rc
}

n=$(ls "$top"/kernel/patches/*/0000-cover-letter.patch 2>/dev/null | wc -l)
if [ "$n" -gt 0 ] && check_dir "$top/kernel/patches"; then
	echo "ok host: the figures in the $n cover letters are the committed results'"
else
	echo "not ok host: the figures in the $n cover letters are the committed results' (re-export with make patches)"
fi

mkdir -p "$tmp/copy"
cp -r "$top"/kernel/patches/. "$tmp/copy/"
sed -i '0,/3\.00/s//3.50/' "$tmp/copy/cgroup-read/0000-cover-letter.patch"
if ! check_dir "$tmp/copy" > /dev/null; then
	echo "ok host: a cover letter with a figure changed is caught"
else
	echo "not ok host: a cover letter with a figure changed is caught"
fi
