#!/usr/bin/env bash
# forkscale.ko must import exactly the C symbols in tests/module-imports.txt:
# the series' hooks and the kernel crate's helpers. A kernel symbol the module
# starts to link against (pidmap_lock, css_set_lock, free_pid, ...) shows up
# here. Rust symbols of the kernel crate and core (mangled, _R...) and the
# sanitizers' instrumentation are not C imports and are left out.
#   module_imports.sh <forkscale.ko> [list]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
ko=$1
list=${2:-$top/tests/module-imports.txt}

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
if ! nm -u "$ko" > /dev/null 2>&1; then
	echo "not ok host: forkscale.ko imports exactly tests/module-imports.txt (cannot read $ko)"
	exit 1
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
