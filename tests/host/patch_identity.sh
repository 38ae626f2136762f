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

# The mail copy (kernel/mail-copy.sh) never carries the placeholder: it refuses,
# and leaves no copy, without a git identity or with the placeholder's, and a
# copy signed by a real identity names it wherever the placeholder was.
repo=$tmp/repo
git init -q "$repo"
mail_copy() { # <out dir>; identity from $repo's config alone
	(cd "$repo" && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
		"$top/kernel/mail-copy.sh" "$top/kernel/patches" "$1" "$placeholder")
}
what="the mail copy refuses the placeholder and carries the exporter's identity"
if mail_copy "$tmp/none" 2> "$tmp/none.err" || [ -e "$tmp/none" ] ||
   ! grep -q 'no mail copy: no git identity' "$tmp/none.err"; then
	echo "not ok host: $what (a copy without an identity was not refused)"
	sed 's/^/# /' "$tmp/none.err"
elif ph_email=${placeholder#*<} && git -C "$repo" config user.name "${placeholder% <*}" &&
     git -C "$repo" config user.email "${ph_email%>}" &&
     { mail_copy "$tmp/ph" 2> "$tmp/ph.err" || [ -e "$tmp/ph" ]; }; then
	echo "not ok host: $what (a copy signed with the placeholder's identity was not refused)"
elif git -C "$repo" config user.name "Ada Lovelace" && git -C "$repo" config user.email ada@example.org &&
     ! mail_copy "$tmp/real" 2> "$tmp/real.err"; then
	echo "not ok host: $what (a real identity was refused)"
	sed 's/^/# /' "$tmp/real.err"
elif grep -rqE '^(From|Signed-off-by): .*forkscale@localhost' "$tmp/real" ||
     ! grep -rqx 'Signed-off-by: Ada Lovelace <ada@example.org>' "$tmp/real"; then
	echo "not ok host: $what (the copy still carries the placeholder)"
else
	echo "ok host: $what"
fi
