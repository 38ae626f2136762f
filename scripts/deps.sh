#!/usr/bin/env bash
# Install what forkscale needs to build the kernel, the module and the guest, and
# fetch the pinned kernel source (scripts/fetch-source.sh) unless TARBALL is set.
# Idempotent and silent when everything is present. Without root, prints the
# exact command to run and fails. DEPS_EXTRA_PACKAGES adds packages to the list
# (the host checks use it to exercise the not-root path).
set -euo pipefail
# Every download below has a bound (timeout): a mirror that stops answering
# fails make deps, instead of holding make check past CI's limit.

BINDGEN_VERSION=0.72.1
APT_PACKAGES=(
	rustc-web rust-web-src rust-web-clippy clang-19 lld-19 llvm-19
	libclang-19-dev qemu-system-x86 busybox-static flex bison bc libelf-dev
	libssl-dev cpio pahole xz-utils lz4 git make gcc libc6-dev python3-docutils
	python3-ply python3-git
	${DEPS_EXTRA_PACKAGES:-}
)

missing=()
while read -r pkg status; do
	[ "$status" = installed ] || missing+=("$pkg")
done < <(for p in "${APT_PACKAGES[@]}"; do
	echo "$p $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || echo absent)"
done)

have_bindgen() {
	bindgen --version 2>/dev/null | grep -qx "bindgen $BINDGEN_VERSION"
}

if [ ${#missing[@]} -gt 0 ]; then
	cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing packages; as root run: $cmd" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}" >&2
	timeout 600 apt-get update -q >/dev/null
	# The download is bounded; the install is not, as killing dpkg half-way
	# would leave the system's packages broken.
	DEBIAN_FRONTEND=noninteractive timeout 1800 apt-get install -y -q --no-install-recommends \
		--download-only "${missing[@]}" >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >/dev/null
fi

if ! have_bindgen; then
	cmd="cargo install --locked bindgen-cli@$BINDGEN_VERSION"
	if ! command -v cargo >/dev/null; then
		echo "deps: bindgen $BINDGEN_VERSION missing and no cargo; install rustup's cargo, then run: $cmd" >&2
		exit 1
	fi
	echo "deps: $cmd" >&2
	timeout 1800 cargo install --quiet --locked "bindgen-cli@$BINDGEN_VERSION" >&2
	have_bindgen || { echo "deps: bindgen $BINDGEN_VERSION is not first in PATH (~/.cargo/bin)" >&2; exit 1; }
fi

# The crates of the protocol models (models/), so that make check runs them offline.
if command -v cargo >/dev/null && [ -f "$(dirname "$0")/../models/Cargo.lock" ]; then
	timeout 600 cargo fetch --quiet --locked --manifest-path "$(dirname "$0")/../models/Cargo.toml" >&2
fi

# The kernel source is Debian's, from a suite this host does not use (kernel/source.pin).
if [ -z "${TARBALL:-}" ]; then
	"$(dirname "$0")/fetch-source.sh" fetch
fi
