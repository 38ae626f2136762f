#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Forwards the KUnit results of the boot-time suites (the Rust doctests among
# them) from debugfs as one TAP line per test case.
dir=/sys/kernel/debug/kunit
echo "TAP version 13"
if [ ! -d $dir ]; then
	echo "1..0 # SKIP kernel built without KUnit (FLAVOR=perf)"
	exit 0
fi
n=0
for suite in "$dir"/*/; do
	suite=$(basename "$suite")
	# Test cases are the indented result lines of the suite's KTAP.
	grep -E '^[[:space:]]+(not )?ok [0-9]+ ' "$dir/$suite/results" > /tmp/kunit.cases
	while read -r status rest; do
		n=$((n + 1))
		[ "$status" = not ] && { status="not ok"; rest=${rest#ok }; }
		echo "$status $n $suite.${rest#* }"
	done < /tmp/kunit.cases
done
[ $n -gt 0 ] || echo "not ok 1 kunit: no test cases found in $dir"
echo "1..$n"
