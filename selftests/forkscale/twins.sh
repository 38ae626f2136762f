#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Broken twins (tests/twins.txt): each is forkscale.ko built with one defect on
# purpose. With the twin in place of forkscale.ko, the test named for it must
# fail, with a line of output matching the twin's pattern; a test that passes
# with its twin loaded cannot catch what it is named after. Runs last: a twin
# may leave leaked css_sets behind.
list=/forkscale/twins.txt
ko=/lib/modules/forkscale.ko
out=/tmp/twin.out

twins=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' $list)
echo "TAP version 13"
echo "1..$(echo "$twins" | grep -c .)"
n=0
echo "$twins" | while IFS='|' read -r name test pattern; do
	n=$((n + 1))
	twin=/lib/modules/twins/$name/forkscale.ko
	# Named after the twin and the last word of its test (the case it runs), as a
	# twin may be caught by more than one test.
	what="$name is caught by ${test##*[ /]}"
	if [ ! -f "$twin" ]; then
		echo "not ok $n $what # no twin module at $twin"
		continue
	fi
	rmmod forkscale 2>/dev/null
	if [ -d /sys/module/forkscale ]; then
		echo "not ok $n $what # forkscale is loaded and does not unload"
		continue
	fi
	if ! mount --bind "$twin" $ko; then
		echo "not ok $n $what # cannot put the twin in place"
		continue
	fi
	mark="forkscale twins: $name starts"
	echo "$mark" > /dev/kmsg
	echo "forkscale: twin $name: $test" > /dev/console
	(cd /forkscale/tests && timeout 900 sh -c "$test") < /dev/null > $out 2>&1
	rc=$?
	rmmod forkscale 2>/dev/null
	umount $ko
	sed "s/^/twin $name: /" $out > /dev/console
	# Every twin logs "broken twin" at init (build-twins.sh's --cfg forkscale_twin).
	loaded=$(dmesg | sed -n "/$mark/,\$p" | grep -c 'forkscale: broken twin')
	if cmp -s "$twin" $ko; then
		echo "not ok $n $what # the real forkscale.ko is not back"
	elif [ -d /sys/module/forkscale ]; then
		echo "not ok $n $what # the twin is still loaded after its test"
	elif [ "$loaded" -eq 0 ]; then
		echo "not ok $n $what # the twin never loaded"
	elif grep -qE "$pattern" $out; then
		echo "ok $n $what"
		echo "# $name: $test failed (exit status $rc): $(grep -E "$pattern" $out | head -n 1)"
	else
		echo "not ok $n $what"
		echo "# $name: $test did not fail as expected (exit status $rc):"
		grep -E '^(not )?ok' $out | sed 's/^/#   /'
	fi
done
