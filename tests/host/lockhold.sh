#!/usr/bin/env bash
# The lockhold plugin (bench/lockhold) counts what it says: booted bare under
# QEMU with the plugin, tests/lockhold/guest.S holds a lock for known instruction
# counts, and the plugin's report must be exactly those holds, at their sites,
# in their windows. A plugin that leaves the dropping instruction out (a broken
# twin) must fail the same check, and bad arguments and two vCPUs must be
# refused with a message.
#   lockhold.sh <workdir>
set -uo pipefail
work=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work/good" "$work/twin"

fail_setup() {
	echo "not ok host: lockhold: $1"
	sed 's/^/# /' "$work/setup.log"
	exit 0
}
make -s -C "$top/bench/lockhold" O="$work/good" > "$work/setup.log" 2>&1 ||
	fail_setup "the plugin builds"
make -s -C "$top/bench/lockhold" O="$work/twin" EXTRA_CFLAGS=-DLOCKHOLD_TWIN_DROP_NOT_COUNTED \
	>> "$work/setup.log" 2>&1 || fail_setup "the broken twin builds"
# guest.elf marks four windows; unmarked.elf is the same sequence without marks
{ as --32 -o "$work/guest.o" "$top/tests/lockhold/guest.S" &&
	ld -m elf_i386 -Ttext=0x100000 -e _start -o "$work/guest.elf" "$work/guest.o" &&
	as --32 --defsym NOMARKS=1 -o "$work/unmarked.o" "$top/tests/lockhold/guest.S" &&
	ld -m elf_i386 -Ttext=0x100000 -e _start -o "$work/unmarked.elf" "$work/unmarked.o"; } \
	>> "$work/setup.log" 2>&1 || fail_setup "the guest sequence assembles"

sym() { # <symbol> [elf]
	nm "${2:-$work/guest.elf}" | awk -v s="$1" '$3 == s { print "0x" substr($1, match($1, /[1-9a-f]/)) }'
}

# boot <plugin> <elf> <report> <qemu args...>: a guest under one vCPU of icount
boot() {
	local plugin=$1 elf=$2 report=$3 lock
	shift 3
	lock=$(sym lockword "$elf")
	timeout 60 qemu-system-x86_64 -accel tcg,thread=single -icount shift=0,sleep=off,align=off \
		-m 64M -display none -monitor none -serial none -no-reboot \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel "$elf" \
		-plugin "$plugin,out=$report,lock=testlock@${lock#0x}" "$@"
}

# The guest's sequence, as the plugin must report it (guest.S says why): each
# window's lines, sorted, as the order of a window's sites is the plugin's own.
{
	echo "window 1 insns 107002"
	echo "hold 1 testlock exclusive $(sym spin_take) $(sym call_site) 1000 100000 100 100 6:1000:100000"
	echo "anomaly 1 testlock 0"
	echo "window 2 insns 6002"
	echo "hold 2 testlock shared $(sym shared_take) $(sym call_site) 500 4000 8 8 3:500:4000"
	echo "anomaly 2 testlock 0"
	echo "window 3 insns 38"
	echo "hold 3 testlock exclusive $(sym short_take) $(sym call_site) 3 15 5 5 2:3:15"
	echo "hold 3 testlock exclusive $(sym fail_take) $(sym call_site) 1 3 3 3 1:1:3"
	echo "anomaly 3 testlock 2"
	echo "window 4 insns 13"
	echo "hold 4 testlock shared $(sym read_xadd) $(sym read_call) 1 9 9 9 3:1:9"
	echo "anomaly 4 testlock 1"
} | sort > "$work/expected.txt"
# Unmarked, everything is window 0, the outside hold of 2 included; its
# instruction count includes the firmware's, so it is left out.
u=$work/unmarked.elf
{
	echo "hold 0 testlock exclusive $(sym spin_take "$u") $(sym call_site "$u") 1000 100000 100 100 6:1000:100000"
	echo "hold 0 testlock exclusive $(sym outside_take "$u") $(sym call_site "$u") 1 2 2 2 1:1:2"
	echo "hold 0 testlock shared $(sym shared_take "$u") $(sym call_site "$u") 500 4000 8 8 3:500:4000"
	echo "hold 0 testlock exclusive $(sym short_take "$u") $(sym call_site "$u") 3 15 5 5 2:3:15"
	echo "hold 0 testlock exclusive $(sym fail_take "$u") $(sym call_site "$u") 1 3 3 3 1:1:3"
	echo "hold 0 testlock shared $(sym read_xadd "$u") $(sym read_call "$u") 1 9 9 9 3:1:9"
	echo "anomaly 0 testlock 3"
} | sort > "$work/expected-unmarked.txt"

# check <plugin dir> <elf> <expected>: "ok" when the report is exactly the expected one
check() {
	local dir=$1 elf=$2 expected=$3
	boot "$dir/lockhold.so" "$elf" "$dir/report.txt" -smp 1 > "$dir/qemu.log" 2>&1
	# isa-debug-exit: the guest's 0 leaves QEMU with status 1
	[ $? -eq 1 ] || { echo "qemu failed: $(head -c 300 "$dir/qemu.log")"; return; }
	grep -v '^window 0 ' "$dir/report.txt" | sort > "$dir/sorted.txt"
	diff "$expected" "$dir/sorted.txt" > "$dir/diff.txt" && echo ok ||
		echo "the report differs from the guest's sequence"
}

r=$(check "$work/good" "$work/guest.elf" "$work/expected.txt")
if [ "$r" = ok ]; then
	echo "ok host: lockhold: the plugin reports the guest's known holds exactly, per site and window"
else
	echo "not ok host: lockhold: the plugin reports the guest's known holds exactly, per site and window ($r)"
	sed 's/^/# /' "$work/good/diff.txt" 2> /dev/null
fi
mkdir -p "$work/unmarked"
cp "$work/good/lockhold.so" "$work/unmarked/"
r=$(check "$work/unmarked" "$work/unmarked.elf" "$work/expected-unmarked.txt")
if [ "$r" = ok ]; then
	echo "ok host: lockhold: without marks, the whole run is window 0"
else
	echo "not ok host: lockhold: without marks, the whole run is window 0 ($r)"
	sed 's/^/# /' "$work/unmarked/diff.txt" 2> /dev/null
fi

r=$(check "$work/twin" "$work/guest.elf" "$work/expected.txt")
if [ "$r" = "the report differs from the guest's sequence" ] &&
	grep -qx "> hold 1 testlock exclusive $(sym spin_take) $(sym call_site) 1000 99000 99 99 6:1000:99000" \
		"$work/twin/diff.txt"; then
	echo "ok host: lockhold: the check catches a plugin that leaves the dropping instruction out"
else
	echo "not ok host: lockhold: the check catches a plugin that leaves the dropping instruction out ($r)"
fi

lock=$(sym lockword)
# refused <description> <message> <qemu args...>: QEMU must not start, and say why
refused() {
	local what=$1 msg=$2 plugin=$work/good/lockhold.so
	shift 2
	if timeout 60 qemu-system-x86_64 -accel tcg -m 64M -display none -monitor none \
		-serial none -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-kernel "$work/guest.elf" "$@" > "$work/refused.log" 2>&1; then
		echo "not ok host: lockhold: $what is refused (QEMU ran)"
	elif grep -qF "lockhold: $msg" "$work/refused.log"; then
		echo "ok host: lockhold: $what is refused"
	else
		echo "not ok host: lockhold: $what is refused (wrong message)"
		sed 's/^/# /' "$work/refused.log"
	fi
}
refused "two vCPUs" "needs exactly one vCPU" -smp 2 \
	-plugin "$work/good/lockhold.so,out=$work/r.txt,lock=testlock@${lock#0x}"
refused "a lock without an address" "expected lock=<name>@<hex address>" -smp 1 \
	-plugin "$work/good/lockhold.so,out=$work/r.txt,lock=testlock"
refused "a lock address that is not hex" "bad lock address" -smp 1 \
	-plugin "$work/good/lockhold.so,out=$work/r.txt,lock=testlock@xyz"
refused "no out=" "needs out=<file>" -smp 1 \
	-plugin "$work/good/lockhold.so,lock=testlock@${lock#0x}"
refused "a lock named twice" "a lock named or placed twice" -smp 1 \
	-plugin "$work/good/lockhold.so,out=$work/r.txt,lock=testlock@${lock#0x},lock=testlock@10"
