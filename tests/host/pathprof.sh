#!/usr/bin/env bash
# The pathprof plugin (bench/pathprof) counts what it says: booted bare under
# QEMU, tests/lockhold/guest.S runs a loop of known instructions in its second
# window, and the plugin must report each of its addresses with its count, and
# pathprof.py the instructions per operation of the functions around them. A
# plugin that leaves each block's last instruction uncounted (a broken twin)
# must fail the same check, and a missing out= must be refused with a message.
#   pathprof.sh <workdir>
set -uo pipefail
work=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work/good" "$work/twin"

fail_setup() {
	echo "not ok host: pathprof: $1"
	sed 's/^/# /' "$work/setup.log"
	exit 0
}
make -s -C "$top/bench/pathprof" O="$work/good" > "$work/setup.log" 2>&1 ||
	fail_setup "the plugin builds"
make -s -C "$top/bench/pathprof" O="$work/twin" EXTRA_CFLAGS=-DPATHPROF_TWIN_LAST_NOT_COUNTED \
	>> "$work/setup.log" 2>&1 || fail_setup "the broken twin builds"
{ as --32 -o "$work/guest.o" "$top/tests/lockhold/guest.S" &&
	ld -m elf_i386 -Ttext=0x100000 -e _start -o "$work/guest.elf" "$work/guest.o"; } \
	>> "$work/setup.log" 2>&1 || fail_setup "the guest sequence assembles"
# a System.map of the guest's symbols, and a guest log that names window 2
nm "$work/guest.elf" > "$work/System.map"
printf '%s\n' "bench variant=loop rep=1 workload=xadd result ops=500" \
	"bench variant=loop rep=1 workload=xadd window n=2" > "$work/results.log"

# check <plugin dir>: "ok" when window 2 is guest.S's loop exactly
check() {
	local dir=$1 take
	timeout 60 qemu-system-x86_64 -accel tcg,thread=single -icount shift=0,sleep=off,align=off \
		-m 64M -display none -monitor none -serial none -no-reboot -smp 1 \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel "$work/guest.elf" \
		-plugin "$dir/pathprof.so,out=$dir/report.txt" > "$dir/qemu.log" 2>&1
	# isa-debug-exit: the guest's 0 leaves QEMU with status 1
	[ $? -eq 1 ] || { echo "qemu failed: $(head -c 300 "$dir/qemu.log")"; return; }
	take=$(nm "$work/guest.elf" | awk '$3 == "shared_take" { print $1 }')
	# 500 rounds of 12 instructions, after one that sets the count; marks not counted
	grep -qx "window 2 insns 6001" "$dir/report.txt" ||
		{ echo "window 2 is not 6001 instructions: $(grep '^window 2 ' "$dir/report.txt")"; return; }
	[ "$(grep -c '^pc 2 ' "$dir/report.txt")" = 13 ] ||
		{ echo "window 2 does not have 13 addresses"; return; }
	grep -qx "pc 2 0x${take#"${take%%[1-9a-f]*}"} 500" "$dir/report.txt" ||
		{ echo "shared_take did not run 500 times in window 2"; return; }
	python3 "$top/bench/pathprof/pathprof.py" "$dir/report.txt" "$work/results.log" \
		"$work/System.map" 5 2 > "$dir/table.txt" 2>&1 || { echo "pathprof.py failed"; return; }
	# per operation: 11 from shared_take on, 1 before it (outside_take's), 12 in all
	grep -Eq '^instructions/op +12$' "$dir/table.txt" &&
		grep -Eq '^shared_take +11\.0$' "$dir/table.txt" &&
		grep -Eq '^outside_take +1\.0$' "$dir/table.txt" ||
		{ echo "pathprof.py's table is not the loop's"; return; }
	echo ok
}

r=$(check "$work/good")
if [ "$r" = ok ]; then
	echo "ok host: pathprof: the plugin counts the guest's known loop exactly, per address and function"
else
	echo "not ok host: pathprof: the plugin counts the guest's known loop exactly, per address and function ($r)"
	sed 's/^/# /' "$work/good/table.txt" 2> /dev/null
fi
r=$(check "$work/twin")
if [[ $r == "window 2 is not 6001 instructions: "* ]]; then
	echo "ok host: pathprof: the check catches a plugin that leaves each block's last instruction out"
else
	echo "not ok host: pathprof: the check catches a plugin that leaves each block's last instruction out ($r)"
fi
if timeout 60 qemu-system-x86_64 -accel tcg -m 64M -display none -monitor none -serial none \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel "$work/guest.elf" \
	-plugin "$work/good/pathprof.so" > "$work/refused.log" 2>&1; then
	echo "not ok host: pathprof: a plugin without out= is refused (QEMU ran)"
elif grep -qF "pathprof: needs out=<file>" "$work/refused.log"; then
	echo "ok host: pathprof: a plugin without out= is refused"
else
	echo "not ok host: pathprof: a plugin without out= is refused (wrong message)"
	sed 's/^/# /' "$work/refused.log"
fi
