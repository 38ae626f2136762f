#!/usr/bin/env bash
# The loom models of the clone-seq protocol and of deferred pid freeing, with their
# mutants (models/): one TAP line per model test, against the committed list
# models/tests.txt, whose check comes last (with its diagnostics). A failed check's
# interleaving (models/tests/clone_seq.rs writes those its tests are about) is printed
# as diagnostics before it. Offline: scripts/deps.sh fetched the locked crates.
#   models.sh <workdir>
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# absolute: cargo runs the tests in models/
mkdir -p "$1" && work=$(cd "$1" && pwd)
rm -rf "$work/traces"
mkdir -p "$work/traces"
# One test thread: a mutant's test silences the panic hook while it runs.
FORKSCALE_MODEL_TRACES=$work/traces \
	cargo test --release --offline --locked --no-fail-fast --manifest-path "$top/models/Cargo.toml" \
	-- --test-threads=1 > "$work/cargo-test.log" 2>&1
rc=$?
# "test <name>[ - should panic] ... ok|FAILED|ignored", of every binary and doctest
results() {
	sed -nE 's/^test (.+) \.\.\. (ok|FAILED|ignored)$/\2 \1/p' "$work/cargo-test.log" |
		sed -E 's/ - should panic$//'
}
results | sed -nE 's/^ok (.*)/ok host: model \1/p; s/^(FAILED|ignored) (.*)/not ok host: model \2 (\1)/p'
if [ $rc -ne 0 ] || ! grep -q '^test .* ok$' "$work/cargo-test.log"; then
	echo "not ok host: models build and pass (cargo test exit status $rc)"
	grep -E 'error|panicked' "$work/cargo-test.log" | head -n 20 | sed 's/^/# /'
fi
for t in "$work"/traces/*.txt; do
	[ -e "$t" ] || continue
	echo "# model trace $(basename "$t" .txt):"
	sed 's/^/#   /' "$t"
done
ran=$(results | sed 's/^[^ ]* //' | sort)
listed=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/models/tests.txt" | sort)
missing=$(comm -23 <(echo "$listed") <(echo "$ran" | uniq))
extra=$(comm -13 <(echo "$listed") <(echo "$ran" | uniq))
twice=$(echo "$ran" | uniq -d)
if [ -z "$missing$extra$twice" ]; then
	echo "ok host: models: the $(echo "$listed" | wc -l) tests of models/tests.txt ran, and no other"
else
	echo "not ok host: models: the tests that ran are those of models/tests.txt"
	echo "$missing" | sed -n 's/./# did not run: &/p'
	echo "$extra" | sed -n 's/./# not listed: &/p'
	echo "$twice" | sed -n 's/./# in two test files (the list cannot tell them apart): &/p'
fi
