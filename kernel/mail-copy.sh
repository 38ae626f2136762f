#!/usr/bin/env bash
# The copy of the exported series to mail: the patches and cover letters as
# committed, with the exporter's git identity (user.name, user.email of the
# repository in the current directory) in place of the placeholder in From:,
# Signed-off-by: and the shortlog. Refuses, and leaves no copy, where the copy
# would still carry the placeholder: no identity, or the placeholder's own.
#   mail-copy.sh <series dir> <out dir> <placeholder>
set -uo pipefail
series=$1 mail=$2 ph=$3
rm -rf "$mail"
die() {
	rm -rf "$mail"
	echo "kernel: error: no mail copy: $*" >&2
	exit 1
}
name=$(git config user.name) || name=
email=$(git config user.email) || email=
[ -n "$name" ] && [ -n "$email" ] ||
	die "no git identity to sign the mail copy with; set user.name and user.email (MAIL=0 exports the committed series alone)"
ph_email=${ph#*<}
ph_email=${ph_email%>}
case "$(echo "$email" | tr -d '[:space:]' | tr '[:upper:]' '[:lower:]')" in
"$ph_email") die "the git identity '$name <$email>' is the placeholder's" ;;
esac
[ "$name <$email>" != "$ph" ] || die "the git identity '$name <$email>' is the placeholder's"
mkdir -p "$mail"
cp -r "$series"/. "$mail/"
# A From: header is 7-bit: a name outside ASCII goes in RFC 2047's encoded form.
from=$(python3 -c 'import sys
from email.utils import formataddr
print(formataddr((sys.argv[1], sys.argv[2])))' "$name" "$email")
NAME=$name EMAIL=$email FROM=$from PLACEHOLDER=$ph python3 - "$mail"/*/*.patch <<'PY' ||
import os, sys
ph, name, email, frm = (os.environ[k] for k in ("PLACEHOLDER", "NAME", "EMAIL", "FROM"))
who = f"{name} <{email}>"
for path in sys.argv[1:]:
    out = []
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line == f"From: {ph}":
            line = f"From: {frm}"
        elif line == f"Signed-off-by: {ph}":
            line = f"Signed-off-by: {who}"
        elif line.startswith(ph.split(" <")[0] + " (") and line.endswith("):"):
            line = name + line[len(ph.split(" <")[0]):]
        out.append(line)
    open(path, "w", encoding="utf-8").write("\n".join(out))
PY
	die "rewriting the identity failed"
# Whatever the rewrite missed: a message's From: or Signed-off-by: (column 0,
# never a diff line) that still names the placeholder's address.
addr=${ph#*<}
left=$(grep -rniE "^(From|Signed-off-by): " "$mail" --include='*.patch' | grep -iF "<$addr" | head -n 3)
[ -z "$left" ] || die "the placeholder is still in $(echo "$left" | head -n 1)"
echo "kernel: mail copy with $name <$email> in $mail" >&2
