#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Sourced by the shell tests that read the kernel log: TAP results, and the log
# since the test's last mark.

n=0
result() { # result <description> <command...>
	desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $desc"; else echo "not ok $n $desc"; fi
}
not() { ! "$@"; }
# The kernel log since the last mark, so that a check sees only what its own
# step logged. The mark is a line of its own in the log (with the test's name
# and shell's pid, so another run's marks do not match): counting lines would
# go wrong once the log buffer is full and old lines drop out.
marks=0
mark() { marks=$((marks + 1)); echo "${0##*/}: mark $$.$marks" > /dev/kmsg; }
logged() {
	dmesg | awk -v m="${0##*/}: mark $$.$marks" \
		'substr($0, length($0) - length(m) + 1) == m { buf = ""; on = 1; next }
		 on { buf = buf $0 "\n" } END { printf "%s", buf }' |
		grep -q "$1"
}
