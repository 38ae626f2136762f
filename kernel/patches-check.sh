#!/usr/bin/env bash
# `make patches-check`: every prefix of the series must build on its own, so the
# series bisects. Applies the patches one at a time in a scratch worktree and
# builds after each (incrementally, in one O= directory), as TAP lines:
#   ok patches-check: 3/10 0003-....patch builds (kernel, Rust doctests)
# Then each series but measure/ alone on the base, after only the series its letter
# text names in Depends-on, as its recipients will apply it:
#   ok patches-check: pid alone builds (kernel, Rust doctests)
# The config is the perf flavour plus KUnit, the Rust doctests and the rust/
# series' samples, so that the Rust patches' doctests and samples are compiled
# too; KASAN and lockdep are left out to keep the builds short. Nothing in the
# build cache is touched.
#   patches-check.sh <workdir>
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=$1
ksh=$top/kernel/kernel.sh
CACHE=${CACHE:-$HOME/.cache/forkscale}
base=$("$ksh" basedir) || exit 1
tree=$work/tree obj=$work/build
failed=0

"$ksh" source > /dev/null || { echo "not ok patches-check: prepare the base tree"; exit 1; }
git -C "$base" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
git -C "$base" worktree prune
mkdir -p "$work"
git -C "$base" worktree add -q --detach "$tree" forkscale-base

# series.config and the samples' options name what only later patches add, so the
# config is merged again after each patch; an option that does not exist yet is
# dropped by olddefconfig.
cat "$top/kernel/configs/base.config" "$top/kernel/configs/perf.config" \
	"$top/kernel/patches/series.config" - > "$work/check.config" <<'EOF'
CONFIG_KUNIT=y
CONFIG_RUST_KERNEL_DOCTESTS=y
CONFIG_SAMPLES=y
CONFIG_SAMPLES_RUST=y
CONFIG_SAMPLE_RUST_SEQLOCK=m
CONFIG_SAMPLE_RUST_REFCOUNT_PIN=m
EOF
configure() {
	(cd "$obj" && "$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" .config "$work/check.config") \
		>> "$work/config.log" 2>&1 &&
		"$ksh" kmake "$tree" "$obj" -s olddefconfig >> "$work/config.log" 2>&1
}
"$ksh" kmake "$tree" "$obj" -s tinyconfig > "$work/config.log" 2>&1 && configure ||
	{ echo "not ok patches-check: configure"; sed 's/^/# /' "$work/config.log" | tail -n 20; exit 1; }

mapfile -t patches < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/kernel/patches/series")
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	name="$i/${#patches[@]} $p builds (kernel, Rust doctests)"
	if ! git -C "$tree" -c user.name=forkscale -c user.email=forkscale@localhost \
		am -q "$top/kernel/patches/$p" > "$work/am.log" 2>&1; then
		echo "not ok patches-check: $name"
		echo "# does not apply"
		failed=1
		break
	fi
	if ! configure; then
		echo "not ok patches-check: $name"
		echo "# configure failed"
		failed=1
		break
	fi
	start=$SECONDS
	# Warnings count in files the series has changed so far; the base has its own
	# (frame-size warnings in fs/select.c and lib/maple_tree.c with this config).
	changed=$(git -C "$tree" diff --name-only forkscale-base HEAD | sed 's/[.[\*^$]/\\&/g' | paste -sd'|')
	# C diagnostics start with the file; rustc's name it on a following "--> file" line.
	if "$ksh" kmake "$tree" "$obj" -s -j"$(nproc)" bzImage modules > "$work/build-$i.log" 2>&1 &&
	   ! grep -E "^($tree/)?($changed):[0-9]+:[0-9]+: (warning|error)" "$work/build-$i.log" | grep -q . &&
	   ! grep -E "^ *--> ($tree/)?($changed):" "$work/build-$i.log" | grep -q .; then
		echo "ok patches-check: $name # $((SECONDS - start)) s"
	else
		echo "not ok patches-check: $name"
		grep -E '(warning|error)' -A3 "$work/build-$i.log" | head -n 20 | sed 's/^/# /'
		failed=1
	fi
done

# build_here <name>: the incremental build of the tree as it stands, as one result
build_here() {
	local start=$SECONDS changed
	changed=$(git -C "$tree" diff --name-only forkscale-base HEAD | sed 's/[.[\*^$]/\\&/g' | paste -sd'|')
	if configure && "$ksh" kmake "$tree" "$obj" -s -j"$(nproc)" bzImage modules > "$work/build-alone.log" 2>&1 &&
	   ! grep -E "^($tree/)?($changed):[0-9]+:[0-9]+: (warning|error)" "$work/build-alone.log" | grep -q . &&
	   ! grep -E "^ *--> ($tree/)?($changed):" "$work/build-alone.log" | grep -q .; then
		echo "ok patches-check: $1 # $((SECONDS - start)) s"
	else
		echo "not ok patches-check: $1"
		grep -E '(warning|error)' -A3 "$work/build-alone.log" | head -n 20 | sed 's/^/# /'
		failed=1
	fi
}
mapfile -t merge_set < <(printf '%s\n' "${patches[@]}" | cut -d/ -f1 | grep -vx measure | uniq)
for s in "${merge_set[@]}"; do
	mapfile -t deps < <("$ksh" depends "$s")
	name="$s alone builds (kernel, Rust doctests)${deps[*]:+, after ${deps[*]}}"
	git -C "$tree" am --abort > /dev/null 2>&1
	git -C "$tree" checkout -q --detach forkscale-base
	mine=()
	for p in "${patches[@]}"; do
		for d in "${deps[@]}" "$s"; do
			[ "${p%%/*}" != "$d" ] || mine+=("$top/kernel/patches/$p")
		done
	done
	if ! git -C "$tree" -c user.name=forkscale -c user.email=forkscale@localhost \
		am -q "${mine[@]}" > "$work/am.log" 2>&1; then
		echo "not ok patches-check: $name"
		echo "# does not apply"
		failed=1
		continue
	fi
	build_here "$name"
done
git -C "$base" worktree remove --force "$tree"
exit $failed
