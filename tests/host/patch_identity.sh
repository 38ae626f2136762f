#!/usr/bin/env bash
# Committed patches carry one identity, the placeholder in kernel/kernel.sh: no machine's
# git config reaches kernel/patches/ (make patches puts the exporter's identity only into
# the mail copy under out/mail/). Checked on the real series, and on a copy with one
# sign-off changed, which must be caught.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
placeholder=$(sed -n "s/^PLACEHOLDER='\(.*\)'\$/\1/p" "$top/kernel/kernel.sh")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# offenders <dir>: each From:, Signed-off-by: or Co-developed-by: line of a message
# (column 0, so never a diff line) that names anyone but the placeholder.
offenders() {
	local l
	find "$1" -name '*.patch' -print0 | sort -z |
		xargs -0 grep -HnE '^(From|Signed-off-by|Co-developed-by): ' |
		while IFS= read -r l; do
			# "<file>:<line>:<key>: <value>": the value must be the placeholder, whole
			[ "${l#*:*:*: }" = "$placeholder" ] || printf '%s\n' "$l"
		done
}

if [ -z "$placeholder" ]; then
	echo "not ok host: committed patches carry only the placeholder identity (no PLACEHOLDER in kernel.sh)"
	exit 0
fi
n=$(find "$top/kernel/patches" -name '*.patch' -print0 | xargs -0 grep -lE '^Signed-off-by: ' | wc -l)
bad=$(offenders "$top/kernel/patches")
if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
	echo "ok host: the $n committed patches carry only the placeholder identity"
else
	echo "not ok host: the $n committed patches carry only the placeholder identity"
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/# /'
fi

cp -r "$top"/kernel/patches/. "$tmp/"
victim=$(find "$tmp" -name '0001-*.patch' | sort | head -n 1)
sed -i "0,/^Signed-off-by: .*/s//Signed-off-by: Some Body <somebody@example.org>/" "$victim"
if offenders "$tmp" | grep -q 'Some Body'; then
	echo "ok host: a patch signed off by another identity is caught"
else
	echo "not ok host: a patch signed off by another identity is caught"
fi
