#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Lookups by pid number of reaped tasks (pid_lookup) must give stock 7.3's
# answers, which pid_lookup.c writes down call by call: without the module
# and under each batching setting. A lookup that could not be set up fails.
ko=/lib/modules/forkscale.ko
bin=/forkscale/tests/pid_lookup
out=/tmp/pid_lookup
mkdir -p $out
settings="pid_batch=1 pid_batch=32 pid_batch=64 pid_batch=64,pid_max_delay_ms=1000 pid_batch=64,pid_max_delay_ms=10000 pid_batch=64,pid_max_delay_ms=1000,pid_block=16"

n=0
# verdict <label> <raw output> <exit status>: the differences first, as "#"
# lines, then the result (kselftest's order)
verdict() {
	n=$((n + 1))
	lines=$(grep -c '^lookup ' "$2")
	grep -E '^# lookup |^lookup .* setup-failed' "$2" | sed 's/^\([^#]\)/# \1/'
	if [ "$3" = 0 ] && [ "$lines" -gt 0 ] && ! grep -q 'setup-failed' "$2"; then
		echo "# $lines lookups $1"
		echo "ok $n lookups of reaped pids $1 give stock 7.3's answers"
	else
		echo "# pid_lookup $1: exit status $3, $lines lookups"
		echo "not ok $n lookups of reaped pids $1 give stock 7.3's answers"
	fi
}

echo "TAP version 13"
echo "1..$(($(echo $settings | wc -w) + 2))"
$bin > $out/none.raw 2>&1
verdict "without the module" $out/none.raw $?
for s in $settings; do
	# shellcheck disable=SC2046 # one word per parameter
	if ! insmod $ko $(echo "$s" | tr , ' '); then
		n=$((n + 1))
		echo "# insmod $s failed"
		echo "not ok $n lookups of reaped pids under $s give stock 7.3's answers"
		continue
	fi
	$bin > "$out/$s.raw" 2>&1
	rc=$?
	rmmod forkscale
	grep '^# [a-z_]*: its pid stayed queued' "$out/$s.raw"
	verdict "under $s" "$out/$s.raw" $rc
done
# The lookups mean something only if they met pids waiting in batches. With a
# 10 s delay, each case's pid must have stayed queued (handed to the module,
# and no pid freed) from before its reap to the end of its lookups.
n=$((n + 1))
s=pid_batch=64,pid_max_delay_ms=10000
met=$(grep -c '^# [a-z_]*: its pid stayed queued: yes' "$out/$s.raw" 2>/dev/null)
if [ "$met" = 4 ]; then
	echo "ok $n under $s every case's pid stayed queued through its lookups"
else
	echo "# $met of the 4 cases (child, thread, nested_inner, nested_outer) did"
	echo "not ok $n under $s every case's pid stayed queued through its lookups"
fi
