#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmemleak over a guest's run (the debug kernel booted with kmemleak=on).
#   kmemleak.sh clear   before the tests: forget what boot left unreferenced
#   kmemleak.sh         after them: nothing new may be unreferenced; then the
#                       kernel's leaking sample must be reported (self-test)
# kmemleak reports an object only once it is older than 5 s, and not in a scan
# where its contents changed since the scan before, so each check waits that
# long and scans twice.
km=/sys/kernel/debug/kmemleak
sample=/lib/modules/kmemleak-test.ko
out=/tmp/kmemleak.out

scan() { sleep 6 && echo scan > $km && echo scan > $km && cat $km > $out; }

if [ "${1:-}" = clear ]; then
	[ -w $km ] || exit 0	# the check itself reports kmemleak missing
	scan && echo clear > $km
	echo "kmemleak.sh: cleared $(grep -c '^unreferenced object' $out) boot-time suspects" > /dev/console
	exit 0
fi

echo "TAP version 13"
echo "1..3"
if ! [ -w $km ] || ! echo scan > $km 2>/dev/null; then
	echo "not ok 1 kmemleak is on"
	echo "ok 2 nothing the tests allocated is unreferenced # SKIP kmemleak is off"
	echo "ok 3 the leaking sample module is reported # SKIP kmemleak is off"
	exit 1
fi
echo "ok 1 kmemleak is on"

scan
leaks=$(grep -c '^unreferenced object' $out)
cat $out > /dev/console
if [ "$leaks" -eq 0 ]; then
	echo "ok 2 nothing the tests allocated is unreferenced"
else
	echo "# $leaks unreferenced objects; the first:"
	sed -n '1,20s/^/# /p' $out
	echo "not ok 2 nothing the tests allocated is unreferenced"
fi

# The self-test: kmemleak-test's init drops kmalloc()ed and vmalloc()ed pointers.
if ! insmod $sample; then
	echo "# insmod $sample failed"
	echo "not ok 3 the leaking sample module is reported"
	exit 1
fi
scan
sample_leaks=$(grep -c 'kmemleak_test_init' $out)
if [ "$sample_leaks" -gt 0 ]; then
	echo "ok 3 the leaking sample module is reported"
	echo "# $sample_leaks backtraces through kmemleak_test_init"
else
	sed -n '1,20s/^/# /p' $out
	echo "not ok 3 the leaking sample module is reported"
fi
