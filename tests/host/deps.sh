#!/usr/bin/env bash
# `make deps` is quiet when everything is present, and without root it prints the
# exact command for what is missing and fails instead of half-installing.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp)
# The checkout may sit under a private home; the unprivileged run gets a copy.
copy=$(mktemp -d)
trap 'rm -rf "$tmp" "$copy"' EXIT
install -m 0755 "$top/scripts/deps.sh" "$copy/deps.sh"
chmod 0755 "$copy"

if "$top/scripts/deps.sh" > "$tmp" 2>&1 && [ ! -s "$tmp" ]; then
	echo "ok host: deps is silent when everything is present"
else
	echo "not ok host: deps is silent when everything is present"
	sed 's/^/# /' "$tmp"
fi

missing=forkscale-no-such-package
if setpriv --reuid=65534 --regid=65534 --clear-groups \
	env DEPS_EXTRA_PACKAGES=$missing "$copy/deps.sh" > "$tmp" 2>&1; then
	echo "not ok host: deps without root prints the install command and fails (it passed)"
elif grep -qx "deps: missing packages; as root run: apt-get update && apt-get install -y --no-install-recommends $missing" "$tmp"; then
	echo "ok host: deps without root prints the install command and fails"
else
	echo "not ok host: deps without root prints the install command and fails"
	sed 's/^/# /' "$tmp"
fi
