#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmemleak over a guest's run (the debug kernel booted with kmemleak=on).
#   kmemleak.sh clear   before the tests: forget what boot left unreferenced
#   kmemleak.sh         after them: kmemleak must report no leak; then the
#                       kernel's leaking sample must be reported (self-test)
# kmemleak reports an object only once it is older than 5 s, no pointer to it
# was found, and its contents did not change since the scan before, so each
# check waits that long and scans twice. clear forgets only what was reported:
# a boot-time object reported later fails the check (a false alarm, never a
# false pass).
km=/sys/kernel/debug/kmemleak
sample=/lib/modules/kmemleak-test.ko
out=/tmp/kmemleak.out

# Leaves what the scans report in $out; fails, with $out gone, if a scan did.
scan() {
	rm -f $out
	sleep 6 && echo scan > $km && echo scan > $km && cat $km > $out.tmp && mv $out.tmp $out
}

if [ "${1:-}" = clear ]; then
	[ -w $km ] || exit 0	# the check itself reports kmemleak missing
	scan && echo clear > $km || { echo "kmemleak.sh: clear failed" > /dev/console; exit 0; }
	echo "kmemleak.sh: cleared $(grep -c '^unreferenced object' $out) boot-time suspects" > /dev/console
	exit 0
fi

echo "TAP version 13"
echo "1..3"
if ! [ -w $km ] || ! echo scan > $km 2>/dev/null; then
	echo "not ok 1 kmemleak is on"
	echo "ok 2 no leak is reported after the tests # SKIP kmemleak is off"
	echo "ok 3 the leaking sample module is reported # SKIP kmemleak is off"
	exit 1
fi
echo "ok 1 kmemleak is on"

if ! scan; then
	echo "# a scan failed"
	echo "not ok 2 no leak is reported after the tests"
else
	leaks=$(grep -c '^unreferenced object' $out)
	cat $out > /dev/console
	if [ "$leaks" -eq 0 ]; then
		echo "ok 2 no leak is reported after the tests"
	else
		echo "# $leaks unreferenced objects; the first:"
		sed -n '1,20s/^/# /p' $out
		echo "not ok 2 no leak is reported after the tests"
	fi
fi

# The self-test: kmemleak-test's init drops kmalloc()ed, vmalloc()ed and percpu
# pointers. Copies of them can stay for a while in memory kmemleak scans (the
# kernel stack insmod ran on is cached for the next task), which hides a leak
# until they are overwritten; kmemleak's documentation warns that the first scan
# may report nothing. So up to three rounds, each after a few forks.
if ! insmod $sample; then
	echo "# insmod $sample failed"
	echo "not ok 3 the leaking sample module is reported"
	exit 1
fi
sample_leaks=0
for round in 1 2 3; do
	for i in 1 2 3 4 5 6 7 8; do (:); done
	scan || break
	# the module's init is init_module in the backtrace, with the module's name
	sample_leaks=$(grep -c '\[kmemleak_test\]' $out)
	[ "$sample_leaks" -eq 0 ] || break
done
if [ "$sample_leaks" -gt 0 ]; then
	echo "ok 3 the leaking sample module is reported"
	echo "# $sample_leaks backtrace lines in kmemleak_test, in round $round"
else
	[ -f $out ] && sed -n '1,20s/^/# /p' $out || echo "# a scan failed"
	echo "not ok 3 the leaking sample module is reported"
fi
