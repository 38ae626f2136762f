#!/usr/bin/env bash
# The VM harness itself: a guest that oopses, prints a WARNING splat, dies
# half-way through a run or hangs must be reported as a failure, with the
# console tail, and a hang must be killed at its timeout.
#   harness.sh <bzImage> <initramfs> <outdir>
set -uo pipefail
kernel=$1 initrd=$2 out=$3
here=$(cd "$(dirname "$0")/../.." && pwd)/qemu
mkdir -p "$out"

if "$here/run-vm.sh" "$kernel" "$initrd" "$out/oops" selftest-oops > "$out/oops.txt" 2>&1; then
	echo "not ok host: harness reports a guest oops as a failure (it passed)"
elif grep -q 'vm: FAIL: guest console reports: .*sysrq triggered crash' "$out/oops.txt"; then
	echo "ok host: harness reports a guest oops as a failure"
else
	echo "not ok host: harness reports a guest oops as a failure (wrong report)"
	sed 's/^/# /' "$out/oops.txt"
fi

# expect_fail <mode> <description> <regex of run-vm's report>
expect_fail() {
	if "$here/run-vm.sh" "$kernel" "$initrd" "$out/$1" "$1" > "$out/$1.txt" 2>&1; then
		echo "not ok host: $2 (it passed)"
	elif grep -q "$3" "$out/$1.txt"; then
		echo "ok host: $2"
	else
		echo "not ok host: $2 (wrong report)"
		sed 's/^/# /' "$out/$1.txt"
	fi
}
expect_fail selftest-warn "harness reports a WARNING splat as a failure" \
	'vm: FAIL: guest console reports: .*WARNING: CPU: 0 PID: 1 at forkscale harness self-test'
expect_fail selftest-die "harness reports a guest that died half-way as a failure" \
	'vm: FAIL: guest did not finish (no end marker)'

# The module twins of tests/twins.txt whose test is "host:harness.sh": callbacks
# that may sleep inside the hooks' RCU sections. The guest must fail, and its
# console show the debug kernel's report (the ERE) at the twin's own might_sleep(),
# the line after its cfg in rust/. PROVE_RCU's splat comes first, so run-vm.sh's
# one-line report does not show it. Every "host:" line of twins.txt must be one
# of these, and there must be some: twins.sh skips them all.
top=$(dirname "$here")
host_twins=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/tests/twins.txt" | grep '^[^|]*|host:')
if [ -z "$host_twins" ] || echo "$host_twins" | grep -qv '^[^|]*|host:harness\.sh|'; then
	echo "not ok host: tests/twins.txt has host-booted twins, all for host:harness.sh"
	echo "$host_twins" | sed 's/^/# /'
fi
while IFS='|' read -r name _ report; do
	dir=selftest-sleep-$name what="the $name twin is reported by the debug kernel"
	site=$(grep -n "cfg(forkscale_twin_$name)" "$top"/rust/*.rs | head -n 1)
	at="at rust/$(basename "${site%%:*}"):$(($(echo "$site" | cut -d: -f2) + 1))"
	if [ -z "$site" ]; then
		echo "not ok host: $what (no cfg(forkscale_twin_$name) in rust/)"
	elif "$here/run-vm.sh" "$kernel" "$initrd" "$out/$dir" selftest-sleep \
		"FORKSCALE_TWIN=$name" > "$out/$dir.txt" 2>&1; then
		echo "not ok host: $what (it passed)"
	elif grep -aE "$report" "$out/$dir/console.log" | tr -d '\r' | grep -q "${at//./\\.}\$"; then
		echo "ok host: $what"
	else
		echo "not ok host: $what (no line matches $report $at)"
		sed 's/^/# /' "$out/$dir.txt"
	fi
done <<< "$host_twins"

# The guest must reach init before it is killed: it boots in about 10 s alone,
# but make check runs this next to its main guest.
start=$SECONDS
if TIMEOUT=${HANG_TIMEOUT:-60} "$here/run-vm.sh" "$kernel" "$initrd" "$out/hang" selftest-hang \
	> "$out/hang.txt" 2>&1; then
	echo "not ok host: harness kills a hung guest at its timeout (it passed)"
elif grep -q 'vm: FAIL: guest hung' "$out/hang.txt" && [ $((SECONDS - start)) -lt 120 ] &&
     grep -qx '# forkscale: mode=selftest-hang' "$out/hang/results.log"; then
	echo "ok host: harness kills a hung guest at its timeout"
else
	echo "not ok host: harness kills a hung guest at its timeout (wrong report)"
	sed 's/^/# /' "$out/hang.txt"
fi

# run-tests' clean-up after a test: a test that passed and left a task, the
# module and a switched sysctl behind fails, and the next test finds all three
# undone (selftests/forkscale/harness_leftover.sh).
log=$out/leftover/results.log
if ! "$here/run-vm.sh" "$kernel" "$initrd" "$out/leftover" selftest-leftover > "$out/leftover.txt" 2>&1; then
	echo "not ok host: harness undoes what a test left behind (the guest failed)"
	sed 's/^/# /' "$out/leftover.txt"
elif grep -qx 'not ok harness_leftover.sh: left forkscale.ko loaded, cgroup_clone_read=seqcount after passing' "$log" &&
     grep -qx '# harness_leftover.sh: killed 1 tasks it left running' "$log" &&
     grep -qx 'ok harness_leftover.sh: what the run before left was undone' "$log"; then
	echo "ok host: harness undoes what a test left behind, and fails the test"
else
	echo "not ok host: harness undoes what a test left behind, and fails the test"
	grep -aE '^(not )?ok |^# ' "$log" | sed 's/^/# /'
fi
