#!/usr/bin/env bash
# The loom models of the clone-seq protocol and of deferred pid freeing, with their
# mutants (models/): one TAP line per model test. Offline: scripts/deps.sh fetched
# the locked crates.
#   models.sh <workdir>
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
mkdir -p "$work"
# One test thread: a mutant's test silences the panic hook while it runs.
cargo test --release --offline --locked --manifest-path "$top/models/Cargo.toml" \
	-- --test-threads=1 > "$work/cargo-test.log" 2>&1
rc=$?
sed -nE 's/^test ([a-z_:]+) \.\.\. ok$/ok host: model \1/p; s/^test ([a-z_:]+) \.\.\. FAILED$/not ok host: model \1/p' \
	"$work/cargo-test.log"
if [ $rc -ne 0 ] || ! grep -q '^test .* ok$' "$work/cargo-test.log"; then
	echo "not ok host: models build and pass (cargo test exit status $rc)"
	grep -E 'error|panicked' "$work/cargo-test.log" | head -n 20 | sed 's/^/# /'
fi
