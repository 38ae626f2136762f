#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel crate's samples (samples/ at the top of the repository, the rust/
# series' samples/rust/): each loads, does what its comment says, and unloads.
. "$(dirname "$0")/tap_kmsg.sh"

pair=/sys/kernel/debug/rust_seqlock/pair
# pair_is <a> <b>: the file prints the pair "a b"
pair_is() { [ "$(cat "$pair")" = "$1 $2" ]; }
# refused <text>: a write of <text> fails with EINVAL (not because the file is
# missing, say)
refused() {
	err=$(sh -c "echo '$1' > $pair" 2>&1) && return 1
	case $err in *"Invalid argument"*) ;; *) echo "# not EINVAL: $err"; return 1 ;; esac
}
# Readers beside a writer that adds 1 at a time, 1000 times: no read may show
# the halves apart, and the reads must see the pair move (they ran between
# the writes, not all before or after them). A smoke test at the shell's
# granularity: the KUnit suite rust_sync_seqlock is the one that requires
# readers to overlap a write section. Prints the reads taken and the values
# seen, and fails on the first torn read.
readers_see_whole_pairs() {
	(i=0; while [ $i -lt 1000 ]; do echo 1 > "$pair" || exit 1; i=$((i + 1)); done) &
	writer=$!
	reads=0 values=0 last=
	while kill -0 "$writer" 2> /dev/null; do
		read -r a b < "$pair" || { wait "$writer"; return 1; }
		if [ "$a" != "$b" ]; then
			echo "# torn read: $a $b"
			wait "$writer"
			return 1
		fi
		reads=$((reads + 1))
		[ "$a" = "$last" ] || values=$((values + 1))
		last=$a
	done
	wait "$writer" || return 1
	echo "# $reads reads beside the writer, every one whole, $values values seen"
	[ "$values" -ge 3 ]
}

refused_after_last_put() {
	logged "object 1: the last reference was a pin's" &&
		logged "object 1: a lookup after the last put is refused, 0 references"
}

echo "TAP version 13"
echo "1..15"
mark
result "rust_seqlock loads" insmod /lib/modules/rust_seqlock.ko
result "rust_seqlock: the pair starts at 0 0" pair_is 0 0
result "rust_seqlock: a write of 3 moves both halves" sh -c "echo 3 > $pair && [ \"\$(cat $pair)\" = '3 3' ]"
result "rust_seqlock: a write that is not a number is refused" refused three
result "rust_seqlock: a write past u64 is refused" refused 18446744073709551616
result "rust_seqlock: a write longer than 24 bytes is refused" refused 0000000000000000000000001
result "rust_seqlock: the refused writes changed nothing" pair_is 3 3
result "rust_seqlock: readers beside a writer see whole pairs, and see them move" readers_see_whole_pairs
result "rust_seqlock: every update counted" pair_is 1003 1003
result "rust_seqlock unloads, its file with it" sh -c "rmmod rust_seqlock && [ ! -e $pair ]"

mark
result "rust_refcount_pin loads" insmod /lib/modules/rust_refcount_pin.ko
result "rust_refcount_pin: a live object is pinned" \
	logged "object 1: pinned while live, 2 references"
result "rust_refcount_pin: the pin's put is the last, and a lookup after it is refused" \
	refused_after_last_put
result "rust_refcount_pin: no refcount_t warning" not logged "refcount_t:"
result "rust_refcount_pin unloads" rmmod rust_refcount_pin
