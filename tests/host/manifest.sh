#!/usr/bin/env bash
# The guest's results against the committed list of expected ones
# (tests/expected-results.txt): a result that never came, because the guest
# died or a runner stopped early, is a failure, and so is one that is not on
# the list (the list is updated in the same commit as the tests).
#   manifest.sh <results.log> [manifest]
# Prints TAP lines; exits non-zero if anything is missing or unexpected.
set -uo pipefail
results=$1
manifest=${2:-$(cd "$(dirname "$0")/.." && pwd)/expected-results.txt}

# The name of each result: "ok foo: bar # SKIP why" and "not ok foo: bar" are "foo: bar".
names() {
	grep -aE '^(not )?ok ' "$1" | sed -E -e 's/^(not )?ok //' -e 's/ # SKIP.*$//' | sort
}
expected() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$manifest" | sort
}

missing=$(comm -23 <(expected) <(names "$results" | uniq))
unexpected=$(comm -13 <(expected) <(names "$results" | uniq))
rc=0
if [ -z "$missing" ]; then
	echo "ok manifest: every one of the $(expected | wc -l) expected results was reported"
else
	while IFS= read -r m; do echo "not ok manifest: no result for '$m'"; done <<< "$missing"
	rc=1
fi
if [ -n "$unexpected" ]; then
	while IFS= read -r u; do echo "not ok manifest: '$u' is not in tests/expected-results.txt"; done <<< "$unexpected"
	rc=1
fi
exit $rc
