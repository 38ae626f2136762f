#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel's SeqLock sample (samples/rust/rust_seqlock.rs, added by the series):
# a million reads against concurrent writers, no torn read.
n=0
result() { # result <description> <command...>
	desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $desc"; else echo "not ok $n $desc"; fi
}
field() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

echo "TAP version 13"
echo "1..6"
# The sample reads past its million until it has seen both a retry and a torn
# control copy (or hits its cap): single-threaded TCG gives only a few overlaps
# per million reads, and CI once saw none of the control tears.
insmod /lib/modules/rust_seqlock.ko
line=$(dmesg | grep 'rust_seqlock: reads=' | tail -n 1)
echo "# $line"
line=" ${line#*: }"
result "sample loads (it refuses to on a torn read)" [ -e /sys/module/rust_seqlock ]
result "at least a million reads" [ "$(field reads)" -ge 1000000 ] 2>/dev/null
result "no torn read" [ "$(field torn)" = 0 ]
result "writers overlapped readers (retries seen)" [ "$(field retries)" -gt 0 ] 2>/dev/null
result "the unprotected control copy tore (the check can see tearing)" \
	[ "$(field unprotected_torn)" -gt 0 ] 2>/dev/null
result "sample unloads" rmmod rust_seqlock
