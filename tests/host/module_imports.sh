#!/usr/bin/env bash
# What forkscale.ko links against:
# - no panic path: no core::panicking symbol, none whose last name has "panic" in
#   it (core::cell::panic_already_borrowed), no *_fail(ed) one (slice index, unwrap,
#   expect) and no handle_alloc_error, by demangled name. A panic in a fork or exit
#   hook would take the kernel down where stock returns. With <kdir> and <workdir>,
#   the check is also run on the panic_path twin (rust/counters.rs), which must be
#   caught. It sees the module's own imports only: a kernel-crate function that the
#   module calls (not inlined or generic) and that can panic inside is the kernel
#   crate's code, not the module's, and is not seen;
# - exactly the C symbols in tests/module-imports.txt: the series' hooks and the
#   kernel crate's helpers. A kernel symbol the module starts to link against
#   (pidmap_lock, css_set_lock, free_pid, ...) shows up here. Rust symbols of the
#   kernel crate and core (mangled, _R...) and the sanitizers' instrumentation are
#   not C imports and are left out.
#   module_imports.sh <forkscale.ko> [<kdir> <workdir>]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
ko=$1 kdir=${2:-} work=${3:-}
list=$top/tests/module-imports.txt

if ! nm -u "$ko" > /dev/null 2>&1; then
	echo "not ok host: forkscale.ko imports no panic path (cannot read $ko)"
	echo "not ok host: forkscale.ko imports exactly tests/module-imports.txt (cannot read $ko)"
	exit 1
fi

# panics <ko>: its imported panic paths, demangled, without the crates' hashes. A
# Rust symbol that does not demangle is reported too: it could hide one.
panics() {
	nm -u "$1" | awk '$2 ~ /^_R/ {print $2}' | c++filt -s rust |
		sed -E 's/\[[0-9a-f]+\]//g' |
		grep -E '^_R|(^|::)core::panicking::|(^|::)[A-Za-z0-9_]*panic[A-Za-z0-9_]*$|_fail(ed)?$|(^|::)handle_alloc_error$'
}
no_panics() { # <ko> <what>
	local found
	found=$(panics "$1")
	if [ -z "$found" ]; then
		echo "ok host: $2 imports no panic path"
	else
		echo "not ok host: $2 imports no panic path"
		sed 's/^/# imports: /' <<< "$found"
	fi
}
no_panics "$ko" forkscale.ko

if [ -n "$kdir" ]; then
	# The twin: forkscale.ko with one panicking index, built as build-twins.sh
	# builds the guest's twins.
	rm -rf "$work" && mkdir -p "$work/rust"
	cp "$top"/rust/*.rs "$work/rust/"
	echo 'obj-m := rust/forkscale.o' > "$work/Kbuild"
	if ! "$top/scripts/kbuild-module.sh" "$kdir" "$work" -s modules \
		KRUSTFLAGS="--cfg=forkscale_twin --cfg=forkscale_twin_panic_path" > "$work/build.log" 2>&1; then
		echo "not ok host: the import check catches the panic_path twin (it did not build)"
		tail -n 20 "$work/build.log" | sed 's/^/# /'
	else
		twin=$(no_panics "$work/rust/forkscale.ko" "the panic_path twin")
		if grep -q '^not ok .*' <<< "$twin" &&
			grep -q '^# imports: core::panicking::panic_bounds_check$' <<< "$twin"; then
			echo "ok host: the import check catches the panic_path twin" \
				"($(grep -m1 '^# imports: ' <<< "$twin" | cut -d' ' -f3-))"
		else
			echo "not ok host: the import check catches the panic_path twin"
			sed 's/^/# /' <<< "$twin"
		fi
	fi
fi

c_imports() {
	nm -u "$ko" | awk '{print $2}' | grep -vE '^(_R|__(asan|kasan|sanitizer|ubsan)_)' | sort -u
}
listed() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | sort -u
}

# The list is the debug flavour's: without KASAN, memcpy and memset are C
# imports of their own rather than instrumented calls.
if [ "${FLAVOR:-debug}" != debug ]; then
	echo "ok host: forkscale.ko imports exactly tests/module-imports.txt # SKIP FLAVOR=$FLAVOR, the list is the debug flavour's"
	exit 0
fi
extra=$(comm -23 <(c_imports) <(listed))
missing=$(comm -13 <(c_imports) <(listed))
if [ -z "$extra$missing" ]; then
	echo "ok host: forkscale.ko imports exactly tests/module-imports.txt ($(listed | wc -l) C symbols)"
else
	echo "not ok host: forkscale.ko imports exactly tests/module-imports.txt"
	for s in $extra; do echo "# imported, not listed: $s"; done
	for s in $missing; do echo "# listed, not imported: $s"; done
	exit 1
fi
