#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Lookups by pid number of reaped tasks (pid_lookup) must give userspace the
# same results with the module's pid batching as without it, setting by
# setting. The baseline is the same kernel without the module, whose pid
# freeing is the stock path (free_pids() frees at once).
ko=/lib/modules/forkscale.ko
bin=/forkscale/tests/pid_lookup
out=/tmp/pid_lookup
mkdir -p $out
settings="pid_batch=1 pid_batch=32 pid_batch=64 pid_batch=64,pid_max_delay_ms=1000"

echo "TAP version 13"
echo "1..$(($(echo $settings | wc -w) + 1))"
# "# " lines are notes (pids pending in batches), not compared.
$bin 2>&1 | grep -v '^# ' > $out/stock
n=0
for s in $settings; do
	n=$((n + 1))
	# shellcheck disable=SC2046 # one word per parameter
	insmod $ko $(echo "$s" | tr , ' ') || { echo "not ok $n lookups under $s # insmod failed"; continue; }
	$bin > "$out/$s.raw" 2>&1
	rmmod forkscale
	grep '^# ' "$out/$s.raw"
	grep -v '^# ' "$out/$s.raw" > "$out/$s"
	if diff -u $out/stock "$out/$s" > "$out/$s.diff"; then
		echo "ok $n lookups of reaped pids under $s are those without the module"
	else
		echo "not ok $n lookups of reaped pids under $s are those without the module"
		sed 's/^/# /' "$out/$s.diff"
	fi
done
# The comparison means something only if lookups met pids waiting in batches:
# with a 1 s delay, and the lookups following each reap at once, they must.
n=$((n + 1))
s=pid_batch=64,pid_max_delay_ms=1000
if grep -qE '^# [a-z_]+: pending: [1-9]' "$out/$s.raw" 2>/dev/null; then
	echo "ok $n lookups under $s met pids waiting in batches"
else
	echo "not ok $n lookups under $s met pids waiting in batches"
fi
