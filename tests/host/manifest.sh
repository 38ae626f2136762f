#!/usr/bin/env bash
# The guest's results against the committed list of expected ones
# (tests/expected-results.txt): a result that never came, because the guest
# died or a runner stopped early, is a failure, and so is one that is not on
# the list (the list is updated in the same commit as the tests). Each listed
# result must also come with its expected status: "ok" unless its line ends in
# "| skip: <reason>", where it must be reported "ok ... # SKIP". So an ok that
# turns into a skip fails, and so does a skip that starts to pass.
#   manifest.sh <results.log> [manifest]
# Prints TAP lines; exits non-zero if anything is missing, unexpected or in the
# wrong status.
set -uo pipefail
export LC_ALL=C
results=$1
manifest=${2:-$(cd "$(dirname "$0")/.." && pwd)/expected-results.txt}

# "name<TAB>status" per result: "ok foo: bar" is "foo: bar<TAB>ok", "ok foo: bar
# # SKIP why" "foo: bar<TAB>skip", and "not ok foo: bar" "foo: bar<TAB>fail".
reported() {
	grep -aE '^(not )?ok ' "$1" | sed -E -e 's/[[:space:]]+$//' \
		-e 's/^not ok (.*[^ ]) +# (SKIP|TODO).*$/\1\tfail/' \
		-e 's/^not ok (.*)$/\1\tfail/' \
		-e 's/^ok (.*[^ ]) +# SKIP.*$/\1\tskip/' \
		-e '/\t(fail|skip)$/!s/^ok (.*)$/\1\tok/' | sort -u
}
# The same for the manifest: "foo: bar" or "foo: bar | skip: <reason>".
expected() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$manifest" |
		sed -E -e 's/[[:space:]]+$//' -e 's/^(.*[^ ]) *\| *skip:.*$/\1\tskip/' -e '/\tskip$/!s/$/\tok/' | sort
}
names() { cut -f1 | sort -u; }

missing=$(comm -23 <(expected | names) <(reported "$results" | names))
unexpected=$(comm -13 <(expected | names) <(reported "$results" | names))
rc=0
if [ -z "$missing" ]; then
	echo "ok manifest: every one of the $(expected | wc -l) expected results was reported"
else
	while IFS= read -r m; do echo "not ok manifest: no result for '$m'"; done <<< "$missing"
	rc=1
fi
if [ -n "$unexpected" ]; then
	while IFS= read -r u; do echo "not ok manifest: '$u' is not in ${manifest##*/tests/}"; done <<< "$unexpected"
	rc=1
fi
# A failure is already a "not ok" line of its own; here only ok against skip.
wrong=$(join -t $'\t' <(expected) <(reported "$results" | grep -v $'\tfail$') |
	awk -F'\t' '$2 != $3')
if [ -z "$wrong" ]; then
	echo "ok manifest: every result has its expected status ($(expected | grep -c $'\tskip$') expected skips)"
else
	while IFS=$'\t' read -r n want got; do
		echo "not ok manifest: '$n' reported $got, the manifest expects $want"
	done <<< "$wrong"
	rc=1
fi
exit $rc
