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
expect_fail selftest-warn "harness reports a WARNING splat as a failure, in the window of the test that ran" \
	'vm: FAIL: guest console reports: .*WARNING: CPU: 0 PID: 1 at forkscale harness self-test (in the window of "harness-warns")'
expect_fail selftest-die "harness reports a guest that died half-way as a failure" \
	'vm: FAIL: guest did not finish (no end marker)'

# The module twins of tests/twins.txt whose test is "host:harness.sh": a
# callback that sleeps, in each hook. Unloading it while forks and exits call it
# (unload_sleeping.sh) must pass, as the hooks' SRCU wait holds rmmod until no
# callback runs; with the kernel's rcu_wait defect, which waits for RCU readers
# only (the hooks before measure/0012), the guest must fail with a report of the
# callback waking in a module that is gone, and the ERE must match that report
# (joined into one line, up to its call trace's end): the hook's frame. Which
# report depends on how far the unload got: KASAN's use-after-free of its state
# with the module's code in the access's call trace (the access itself may be a
# kernel function it called: _raw_spin_lock() on its freed queue, seen at
# dd2058d), or, once its text is freed, a page fault or an
# int3 (freed module text may be filled with int3) at an unnamed RIP there. The
# 1 s sleep is longer than an unload, so it is mostly the last. The module's
# frames are not always named: its symbols may be gone already. Module space
# starts at 0xffffffffa0000000 without KASLR (the debug config has none); with
# it the check would fail, not pass.
# Every "host:" line of twins.txt must be one of these, and there must be some:
# twins.sh skips them all.
top=$(dirname "$here")
host_twins=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/tests/twins.txt" | grep '^[^|]*|host:')
if [ -z "$host_twins" ] || echo "$host_twins" | grep -qv '^[^|]*|host:harness\.sh|'; then
	echo "not ok host: tests/twins.txt has host-booted twins, all for host:harness.sh"
	echo "$host_twins" | sed 's/^/# /'
fi
while IFS='|' read -r name _ report; do
	dir=selftest-sleep-$name what="$name unloads while its callback sleeps"
	if ! "$here/run-vm.sh" "$kernel" "$initrd" "$out/$dir" selftest-sleep \
		"FORKSCALE_TWIN=$name" > "$out/$dir.txt" 2>&1; then
		echo "not ok host: $what (the guest failed)"
		sed 's/^/# /' "$out/$dir.txt"
	elif [ "$(grep -c '^ok unload_sleeping\.sh: ' "$out/$dir/results.log")" != 9 ] ||
	     grep -q '^not ok' "$out/$dir/results.log"; then
		echo "not ok host: $what (not 9 of 9 results ok)"
		sed 's/^/# /' "$out/$dir/results.log"
	else
		echo "ok host: $what"
	fi
	dir=selftest-sleep-$name-rcu_wait what="$name under the rcu_wait defect is reported by the debug kernel"
	# KASAN's report panics, and the panic reboots: a guest left running after an
	# oops can lock up until the timeout.
	if TIMEOUT=300 "$here/run-vm.sh" "$kernel" "$initrd" "$out/$dir" selftest-sleep \
		"FORKSCALE_TWIN=$name" FORKSCALE_DEFECT=rcu_wait kasan.fault=panic oops=panic \
		> "$out/$dir.txt" 2>&1; then
		echo "not ok host: $what (it passed)"
	else
		oops=$(awk '/BUG: KASAN: slab-use-after-free in |BUG: unable to handle page fault for address: ffffffffa|Oops: int3: /{on = 1}
			on && /<\/TASK>/{exit} on{printf "%s ", $0}' "$out/$dir/console.log" | tr -d '\r')
		if ! echo "$oops" | grep -qE 'RIP: 0010:0xffffffffa[0-9a-f]+ |slab-use-after-free in .* \[forkscale\]|slab-use-after-free in 0xffffffffa'; then
			echo "not ok host: $what (no report of code in the module's space)"
			sed 's/^/# /' "$out/$dir.txt"
		elif echo "$oops" | grep -aqE "$report"; then
			echo "ok host: $what"
		else
			echo "not ok host: $what (the report does not match $report)"
			sed 's/^/# /' "$out/$dir.txt"
		fi
	fi
done <<< "$host_twins"

# unload_sleeping.sh's last check, that the module's drop finds no pid left
# queued, against the kernel's flush_early defect (measure/0013): unregistering
# flushes before it waits, so a release asleep at an unload queues its pids
# after the last flush (the test loads the module with the longest batching
# delay, so that the timer cannot free them first: with the default 10 ms it
# did, and this boot passed). The guest must survive, and only that check fail.
name=sleeps_in_pid_release
dir=selftest-sleep-$name-flush_early what="$name under the flush_early defect fails only the drop's check"
drop_check="not ok unload_sleeping\.sh: the module's drop reports no pid queued or lost at an unload"
if ! "$here/run-vm.sh" "$kernel" "$initrd" "$out/$dir" selftest-sleep \
	"FORKSCALE_TWIN=$name" FORKSCALE_DEFECT=flush_early > "$out/$dir.txt" 2>&1; then
	echo "not ok host: $what (the guest failed)"
	sed 's/^/# /' "$out/$dir.txt"
elif [ "$(grep -c '^ok unload_sleeping\.sh: ' "$out/$dir/results.log")" = 8 ] &&
     [ "$(grep -c '^not ok' "$out/$dir/results.log")" = 1 ] &&
     grep -q "^$drop_check\$" "$out/$dir/results.log"; then
	echo "ok host: $what"
else
	echo "not ok host: $what"
	sed 's/^/# /' "$out/$dir/results.log"
fi

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
