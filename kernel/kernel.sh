#!/usr/bin/env bash
# Prepare, configure and build the patched kernel, cached outside the checkout.
#
#   kernel.sh key      print the cache key of FLAVOR's build
#   kernel.sh source   make sure the patched source tree exists, print its path
#   kernel.sh build    make sure FLAVOR's build exists, print its path (the KDIR)
#   kernel.sh kdir     print the KDIR path without building (may not exist)
#   kernel.sh basedir  print the path of the base repository (may not exist)
#   kernel.sh devtree  make sure the development tree exists, print its path
#   kernel.sh export   write the development tree's commits over kernel/patches/
#   kernel.sh kmake <src> <objdir> <target>...
#                      run the kernel's make with forkscale's toolchain (lint, patches-check)
#
# Cache layout, under $CACHE:
#   base-<version>/  git repository of the Debian tarball, one commit tagged forkscale-base
#   src/<series>/    worktree of base with kernel/patches/series applied by `git am`
#   build/<key>/     O= build of src/<series> for one flavour; valid once .done exists
#   dev/             worktree on branch forkscale-dev where the series is developed
#
# <series> hashes the patches; <key> hashes the patches, the config fragments and the
# toolchain versions, so an unchanged tree is never rebuilt. Entries appear only when
# complete: everything is made under a .tmp name and renamed at the end, except the O=
# build directory, which Kbuild cannot move and which is marked valid by .done.
set -euo pipefail
# A failure inside $(...) (headers() builds through one) stops the script too.
shopt -s inherit_errexit

top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-$HOME/.cache/forkscale}
FLAVOR=${FLAVOR:-debug}
# make deps fetches the pinned Debian linux-source-7.3 into the cache
# (scripts/fetch-source.sh); TARBALL overrides it with a tarball of your own.
if [ -n "${TARBALL:-}" ]; then
	SOURCE_VERSION="TARBALL:$(basename "$TARBALL")"
else
	TARBALL=$("$top/scripts/fetch-source.sh" path 2>/dev/null || echo "$CACHE/source/(not fetched)")
	SOURCE_VERSION=$("$top/scripts/fetch-source.sh" version 2>/dev/null || echo unknown)
fi
SERIES_DIR=${SERIES_DIR:-$top/kernel/patches}
CONFIG_DIR=${CONFIG_DIR:-$top/kernel/configs}
JOBS=${JOBS:-$(nproc)}
# Bump when the way the base commit is made changes; old entries are then ignored.
BASE_VERSION=4
BINDGEN=${BINDGEN:-$(command -v bindgen || echo bindgen)}
# The rustup toolchain first in PATH has no rust-src; Debian's rustc-web does.
# LLVM 19 throughout: 7.3 needs LLVM >= 17, and bindgen must load the libclang of the
# compiler (it takes the newest one installed otherwise).
export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-19/lib}
KMAKE=(make LLVM=-19 RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc BINDGEN="$BINDGEN")

# The author and sign-off committed in the development tree; `export` replaces it.
PLACEHOLDER='forkscale developers <forkscale@localhost>'

die() { echo "kernel: error: $*" >&2; exit 1; }
log() { echo "kernel: $*" >&2; }

check_inputs() {
	case $FLAVOR in
	perf|debug|lockstat) ;;
	*) die "unknown FLAVOR '$FLAVOR' (expected perf, debug or lockstat)" ;;
	esac
	[ -f "$TARBALL" ] || die "kernel source tarball $TARBALL not found (run make deps, or set TARBALL=/path/to/linux-source-7.3.tar.xz)"
	[ -f "$SERIES_DIR/series" ] || die "no series file in $SERIES_DIR"
	local p
	while read -r p; do
		[ -f "$SERIES_DIR/$p" ] || die "series lists $p, which is not in $SERIES_DIR"
	done < <(series_patches)
}

# Patch names from the series file, without comments or blank lines.
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$SERIES_DIR/series" | grep -v '^$' || true
}

# Only the changes count: a reworded commit message, a renamed patch file, blob
# abbreviations on index lines or the function names git prints after a hunk
# header build the same tree, so they must not rebuild the kernel.
series_hash() {
	{
		echo "base v$BASE_VERSION $SOURCE_VERSION $(basename "$TARBALL") $(stat -c %s "$TARBALL" 2> /dev/null || echo missing)"
		local p
		while read -r p; do
			echo "patch"
			sed -n '/^diff --git /,$p' "$SERIES_DIR/$p" |
				sed -e '/^index /d' -e 's/^\(@@ [^@]* @@\).*/\1/'
		done < <(series_patches)
	} | sha256sum | cut -c1-12
}

toolchain_versions() {
	/usr/bin/rustc --version
	"$BINDGEN" --version 2>/dev/null || echo "bindgen missing"
	clang-19 --version | head -n1
	ld.lld-19 --version | head -n1
}

# The config fragments of a build: base, the flavour, and the series' own options
# (series.config next to the series file: options that only the series adds, which
# a stock build must not ask for; series.FLAVOR.config: those for one flavour, such
# as test scaffolding the benchmark kernels leave out).
fragments() {
	echo "$CONFIG_DIR/base.config"
	echo "$CONFIG_DIR/$FLAVOR.config"
	[ ! -f "$SERIES_DIR/series.config" ] || echo "$SERIES_DIR/series.config"
	[ ! -f "$SERIES_DIR/series.$FLAVOR.config" ] || echo "$SERIES_DIR/series.$FLAVOR.config"
}

# The debug flavour (make check's) compiles its Rust with Debian's clippy-driver,
# which matches its rustc: the lints come with the build, in build.log, and
# kernel/lint.sh reads them there instead of compiling the crates a second time.
# clippy-driver turns rustc's MIR optimisations off (LLVM's still run), so the
# debug kernel's Rust is compiled from unoptimised MIR; the perf kernels, which
# the benchmarks measure, are built with rustc.
clippy_args() {
	if [ "$FLAVOR" = debug ]; then
		echo CLIPPY=1 CLIPPY_DRIVER=/usr/bin/clippy-driver
	fi
}

build_key() {
	{
		echo "series $(series_hash)"
		echo "flavor $FLAVOR"
		[ -z "$(clippy_args)" ] || echo "$(clippy_args) $(/usr/bin/clippy-driver --version)"
		local f
		while read -r f; do cat "$f"; done < <(fragments)
		toolchain_versions
	} | sha256sum | cut -c1-12
}

# One git commit holding the pristine Debian source.
base_dir() {
	echo "$CACHE/base-$(printf '%s' "$SOURCE_VERSION" | tr -c 'A-Za-z0-9.+\n' _)"
}

prepare_base() {
	local base
	base=$(base_dir)
	[ -f "$base/.git/forkscale-base-v$BASE_VERSION" ] && return 0
	[ ! -e "$base" ] || die "$base is from an older forkscale; remove $CACHE and retry"
	local tmp=$base.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	log "unpacking $TARBALL (once)"
	tar -xf "$TARBALL" -C "$tmp" --strip-components=1
	log "committing the base tree (once)"
	# Debian's packaging adds a rule that ignores everything at the top level; it
	# would hide every file a patch adds from `git add`, so the base drops it.
	sed -i '/^# Debian packaging: ignore everything/,/^!\/debian\/$/d' "$tmp/.gitignore"
	! grep -qx '/\*' "$tmp/.gitignore" || die "could not drop Debian's top-level ignore rule"
	git -C "$tmp" init -q -b base
	# No automatic gc: the base commit leaves about 80,000 loose objects, and the
	# "git gc --auto" that the commit (or a worktree's git am) then started in the
	# background packed them for six minutes of a cold make check, holding the
	# source lock (it inherits the descriptor) while the series' tree waited.
	git -C "$tmp" config gc.auto 0
	# Every file of the tarball is source, including those the tree's .gitignore
	# matches (its dot-files: .rustfmt.toml and .clippy.toml, which rustfmtcheck and
	# CLIPPY=1 read in the worktrees made from this commit, .mailmap, ...).
	git -C "$tmp" add -A -f
	GIT_AUTHOR_DATE="2025-01-01T00:00:00Z" GIT_COMMITTER_DATE="2025-01-01T00:00:00Z" \
	git -C "$tmp" -c user.name=forkscale -c user.email=forkscale@localhost \
		commit -q -m "Debian linux-source-7.3 $SOURCE_VERSION"
	git -C "$tmp" tag forkscale-base
	touch "$tmp/.git/forkscale-base-v$BASE_VERSION"
	mv "$tmp" "$base"
}

prepare_source() {
	local src=$CACHE/src/$(series_hash)
	if [ -d "$src" ]; then
		echo "$src"
		return 0
	fi
	# One preparer at a time: make check starts the posted kernel's build beside
	# the series' (and make -j may ask for two trees), and both would unpack the
	# base into one .tmp and add worktrees to one repository.
	mkdir -p "$CACHE"
	local lock
	exec {lock}> "$CACHE/.source.lock"
	flock "$lock"
	prepare_base
	if [ -d "$src" ]; then
		exec {lock}>&-
		echo "$src"
		return 0
	fi
	local tmp=$src.tmp
	mkdir -p "$CACHE/src"
	git -C "$(base_dir)" worktree remove --force "$tmp" 2>/dev/null || rm -rf "$tmp"
	git -C "$(base_dir)" worktree prune
	log "checking out a tree for series $(series_hash)"
	git -C "$(base_dir)" worktree add -q --detach "$tmp" forkscale-base
	local p
	while read -r p; do
		if ! GIT_COMMITTER_DATE="2025-01-01T00:00:00Z" git -C "$tmp" -c gc.auto=0 -c user.name=forkscale \
			-c user.email=forkscale@localhost am -q --keep-cr "$SERIES_DIR/$p" >/dev/null 2>&1; then
			git -C "$tmp" am --abort >/dev/null 2>&1 || true
			git -C "$(base_dir)" worktree remove --force "$tmp"
			die "patch $p does not apply to linux-source-7.3 $SOURCE_VERSION (series in $SERIES_DIR; TARBALL=/path/to/linux-source-7.3.tar.xz selects another source)"
		fi
	done < <(series_patches)
	git -C "$(base_dir)" worktree move "$tmp" "$src"
	exec {lock}>&-
	echo "$src"
}

# Options the fragments ask for that Kconfig dropped (e.g. CONFIG_RUST when Rust is not
# available) would silently change what we test, so treat them as errors. A later
# fragment overrides an earlier one, as in merge_config.sh: what the last one asks
# for an option, set or "is not set", is what .config must hold.
check_config() {
	local out=$1 frag line opt missing=""
	local -A want=()
	while read -r frag; do
		while read -r line; do
			case $line in
			CONFIG_*=*) opt=${line%%=*} ;;
			"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *} ;;
			*) continue ;;
			esac
			want[$opt]=$line
		done < "$frag"
	done < <(fragments)
	for opt in "${!want[@]}"; do
		line=${want[$opt]}
		case $line in
		"#"*) ! grep -q "^$opt=" "$out/.config" || missing="$missing $line" ;;
		*) grep -qxF "$line" "$out/.config" || missing="$missing $line" ;;
		esac
	done
	[ -z "$missing" ] || die "config fragments not honoured by Kconfig:$missing"
}

build() {
	local src out key
	src=$(prepare_source)
	key=$(build_key)
	out=$CACHE/build/$key
	if [ -f "$out/.done" ]; then
		echo "$out"
		return 0
	fi
	mkdir -p "$out"
	# One build per directory: a second caller (say, `kernel.sh headers` while
	# `make kernel` runs) waits for the first, then finds it done. Two makes in
	# one O= directory once left a build marked done without its vmlinux.
	local lock
	exec {lock}> "$out.lock"
	flock "$lock"
	if [ -f "$out/.done" ]; then
		exec {lock}>&-
		echo "$out"
		return 0
	fi
	log "building FLAVOR=$FLAVOR in $out (series $(series_hash))"
	local start=$SECONDS
	"${KMAKE[@]}" -C "$src" O="$out" -s tinyconfig >&2
	local frags
	mapfile -t frags < <(fragments)
	(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" .config \
		"${frags[@]}" >/dev/null)
	"${KMAKE[@]}" -C "$src" O="$out" -s olddefconfig >&2
	check_config "$out"
	local -a clippy
	read -ra clippy <<< "$(clippy_args)"
	# Appended: a build interrupted and run again recompiles only what it had not,
	# and the lints of what it had are in the first attempt's part of the log.
	# Not silent, whatever make called us (make bench's `make -s`): Kbuild's
	# "CLIPPY" lines are what kernel/lint.sh reads.
	MAKEFLAGS= MFLAGS= "${KMAKE[@]}" -C "$src" O="$out" -j"$JOBS" "${clippy[@]}" bzImage modules headers 2>&1 |
		tee -a "$out/build.log" >&2
	echo "$key $FLAVOR $((SECONDS - start))s ${clippy[*]}" > "$out/.done"
	log "built FLAVOR=$FLAVOR in $((SECONDS - start))s"
	echo "$out"
}

# The exported headers (usr/include) the kernel selftests build against. Builds
# from before `headers` joined the build target get them added once.
headers() {
	local out
	out=$(build)
	if [ ! -f "$out/usr/include/linux/sched.h" ]; then
		"${KMAKE[@]}" -C "$(prepare_source)" O="$out" -s headers >&2
	fi
	echo "$out"
}

# The tree where patches are written: commit there, then `export`.
devtree() {
	local dev=$CACHE/dev
	if [ ! -d "$dev" ]; then
		local src
		src=$(prepare_source)
		git -C "$(base_dir)" worktree add -q -B forkscale-dev "$dev" "$(git -C "$src" rev-parse HEAD)"
		log "development tree at $dev (branch forkscale-dev, series applied)"
	fi
	# Commits there carry the placeholder, whoever makes them.
	local ph_email=${PLACEHOLDER#*<}
	git -C "$dev" config user.name "${PLACEHOLDER% <*}"
	git -C "$dev" config user.email "${ph_email%>}"
	echo "$dev"
}

# The series a development-tree commit belongs to, by its subject: "measure" for a
# NOT FOR MERGE commit; the cgroup.kill fix and its test ("cgroup-kill", for the
# fixes branch and stable); the clone-time read ("cgroup-read", an RFC); the
# test_freezer fixes ("selftests-cgroup"); pid and the pid-number suites' fixes
# ("pid"); the kernel crate's SeqCount, SeqLock and Refcount::inc_not_zero() with
# their samples ("rust", an RFC for the Rust list). Each is exported to a
# directory of its own, with the letter kernel/cover/<series>.txt; a subject that
# fits none stops the export.
series_of() { # <subject>
	case $1 in
	"NOT FOR MERGE"*) echo measure ;;
	"cgroup: kill "* | "selftests/cgroup: test cgroup.kill "*) echo cgroup-kill ;;
	# named, so that another cgroup fix does not land in the RFC
	"cgroup: pin the clone-time css_set "*) echo cgroup-read ;;
	"selftests/cgroup: "*) echo selftests-cgroup ;;
	"pid: "* | "selftests/pidfd: "* | "selftests/pid_namespace: "* | "selftests/clone3: "*) echo pid ;;
	"rust: sync: "* | "samples: rust: "*) echo rust ;;
	*) echo "?" ;;
	esac
}

# A header of a series' letter text: the lines "<field>: value" before its first
# blank line (Subject, To, Cc, In-Reply-To, Prefix, Figures, Depends-on), one
# value per line.
cover_field() { # <series> <field>
	sed -n -e '/^$/q' -e "s/^$2: //p" "$top/kernel/cover/$1.txt"
}

# The people and lists a series goes to, "To: ..." and "Cc: ..." lines: the
# maintainers scripts/get_maintainer.pl names for its patches (run on the
# development tree, without git history, so two exports agree) in To, its
# reviewers and lists in Cc, then those its letter text names. Nobody twice, and
# To wins. Nothing for the measurement series, which is not sent.
recipients() { # <series> <patch>...
	local name=$1 line addr
	shift
	[ "$name" != measure ] || return 0
	declare -A seen=()
	local -a to=() cc=() kselftest=() found
	mapfile -t found < <(cd "$CACHE/dev" && perl scripts/get_maintainer.pl --no-git \
		--no-git-fallback --no-fixes --no-tree "$@")
	[ "${#found[@]}" -gt 0 ] || die "get_maintainer.pl named nobody for series $name"
	for line in "${found[@]}"; do
		case $line in
		# The selftest framework's maintainers are copied where a subsystem's
		# maintainers are named (every series here); To only if none is.
		*"(maintainer:KERNEL SELFTEST FRAMEWORK)") kselftest+=("${line%% (*}") ;;
		*"(maintainer:"*) to+=("${line%% (*}") ;;
		*) cc+=("${line%% (*}") ;;
		esac
	done
	if [ "${#to[@]}" -gt 0 ]; then
		cc=("${kselftest[@]}" "${cc[@]}")
	else
		to=("${kselftest[@]}")
	fi
	mapfile -t -O "${#to[@]}" to < <(cover_field "$name" To)
	mapfile -t -O "${#cc[@]}" cc < <(cover_field "$name" Cc)
	for line in "${to[@]}"; do
		addr=${line##*<}
		[ -z "${seen[$addr]:-}" ] || continue
		seen[$addr]=1
		echo "To: $line"
	done
	for line in "${cc[@]}"; do
		addr=${line##*<}
		[ -z "${seen[$addr]:-}" ] || continue
		seen[$addr]=1
		echo "Cc: $line"
	done
}

# Writes each series (a run of consecutive commits with one series_of) to
# kernel/patches/<series>/ with its cover letter, and kernel/patches/series, the
# order they apply in. The merge-set series come first, the measurement series last.
export_series() {
	local dev=$CACHE/dev c subj name prev= seen=" "
	[ "$SERIES_DIR" -ef "$top/kernel/patches" ] ||
		die "export writes kernel/patches/ only (SERIES_DIR is $SERIES_DIR)"
	[ -d "$dev" ] || die "no development tree; run 'kernel.sh devtree' and commit there first"
	# The same bytes whoever exports: no personal git configuration (format.cc,
	# diff.context, ...) reaches the patches, and the diff options are fixed.
	export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
	[ -z "$(git -C "$dev" status --porcelain --untracked-files=no)" ] ||
		die "uncommitted changes in $dev; commit them first"
	samples_match "$dev"
	local -a names=() firsts=() lasts=()
	while read -r c subj; do
		name=$(series_of "$subj")
		[[ $name =~ ^[a-z0-9_-]+$ ]] && [ "$name" != series ] ||
			die "commit $c: no series for its subject '$subj' (kernel.sh series_of)"
		[ -f "$top/kernel/cover/$name.txt" ] ||
			die "commit $c: series $name has no cover letter text kernel/cover/$name.txt"
		if [ "$name" != "$prev" ]; then
			case $seen in *" $name "*) die "commit $c: series $name is not in one run of commits" ;; esac
			[ "$prev" != measure ] || die "commit $c: a $name commit after the measurement series"
			seen="$seen$name "
			names+=("$name") firsts+=("$c") lasts+=("$c")
			prev=$name
		fi
		lasts[${#lasts[@]}-1]=$c
	done < <(git -C "$dev" log --reverse --format='%H %s' forkscale-base..HEAD)
	[ "${#names[@]}" -gt 0 ] || die "no commits on forkscale-base in $dev"
	local dep
	for name in "${names[@]}"; do
		while read -r dep; do
			case $seen in *" $dep "*) ;; *) die "series $name depends on $dep, which is not exported" ;; esac
		done < <(cover_field "$name" Depends-on)
	done

	# Every series directory goes, a renamed or dropped one included.
	rm -f "$SERIES_DIR"/*.patch
	local i d tmp
	for d in "$SERIES_DIR"/*/; do
		[ ! -f "$d/0000-cover-letter.patch" ] || rm -rf "${d:?}"
	done
	tmp=$(mktemp -d)
	: > "$SERIES_DIR/series"
	for i in "${!names[@]}"; do
		name=${names[i]}
		local range=${firsts[i]}^..${lasts[i]} prefix
		local -a fmt=(-c diff.context=3 -c diff.algorithm=myers -c diff.renames=true
			format-patch -q -n --zero-commit --no-signature --abbrev=12)
		prefix=$(cover_field "$name" Prefix)
		# In-Reply-To goes on the cover letter alone: git send-email threads
		# the patches under it.
		fmt+=(--subject-prefix="${prefix:-PATCH}")
		# The recipients come from the patches themselves, so a first export
		# without them feeds get_maintainer.pl.
		rm -rf "${tmp:?}/$name"
		git -C "$dev" "${fmt[@]}" -o "$tmp/$name" "$range"
		recipients "$name" "$tmp/$name"/*.patch > "$tmp/$name.rcpt" || exit 1
		while IFS= read -r d; do
			case $d in
			"To: "*) fmt+=(--to="${d#To: }") ;;
			"Cc: "*) fmt+=(--cc="${d#Cc: }") ;;
			esac
		done < "$tmp/$name.rcpt"
		git -C "$dev" "${fmt[@]}" -o "$SERIES_DIR/$name" "$range"
		(cd "$SERIES_DIR" && ls -- "$name"/[0-9]*.patch) >> "$SERIES_DIR/series"
		cover_letter "$dev" "$name" "${firsts[i]}^" "${lasts[i]}" "$tmp/$name.rcpt" \
			> "$SERIES_DIR/$name/0000-cover-letter.patch"
	done
	rm -rf "$tmp"
	posted_series
	mail_copy
	log "exported ${names[*]}: $(grep -c . "$SERIES_DIR/series") patches, with a cover letter each, to $SERIES_DIR"
}

# kernel/posted/series: the merge set alone (every series but the Rust RFC and the
# measurement one), the kernel as posted, which make conformance builds and boots
# beside stock.
posted_series() {
	mkdir -p "$top/kernel/posted"
	{
		echo "# The merge set alone, as posted: stock 7.3 plus every series but rust/ and measure/"
		echo "# (written by make patches; make conformance builds and boots it)."
		grep -v -e '^measure/' -e '^rust/' "$SERIES_DIR/series" | sed 's|^|../patches/|'
	} > "$top/kernel/posted/series"
}

# The samples the rust/ series posts are the repository's samples/, which make
# check builds and loads: one source, so the export stops where the development
# tree's committed copy differs.
samples_match() { # <dev>
	local f name
	for f in "$top"/samples/*.rs; do
		name=$(basename "$f")
		git -C "$1" show "HEAD:samples/rust/$name" 2> /dev/null | cmp -s "$f" - ||
			die "samples/$name differs from samples/rust/$name in $1, which the rust/ series posts: copy it there and commit"
	done
}

# The copy to mail, under out/mail/ (kernel/mail-copy.sh): the series with the
# exporter's git identity in place of the placeholder. Only there: the committed
# files keep the placeholder (tests/host/patch_identity.sh). It refuses to make a
# copy that would carry the placeholder, and the export fails then, after writing
# kernel/patches; MAIL=0 skips it.
mail_copy() {
	[ "${MAIL:-1}" != 0 ] || { log "MAIL=0: no mail copy"; return; }
	(cd "$top" && "$top/kernel/mail-copy.sh" "$SERIES_DIR" "$top/out/mail" "$PLACEHOLDER") ||
		die "the series is exported to $SERIES_DIR, but not copied for mailing (above)"
}

# A series' cover letter: kernel/cover/<series>.txt (its headers, then the
# motivation), its figures from the committed results (the Figures header names
# which, bench/report.py --summary-<which>), shortlog, diffstat and base. Everything
# comes from commits and committed files, so two exports give the same bytes, and
# tests/host/cover_figures.sh can check the figures against the results.
cover_letter() { # <dev> <series> <base> <last> <recipients file>
	local dev=$1 name=$2 base=$3 last=$4 text=$top/kernel/cover/$2.txt n prefix reply figures
	[ -f "$text" ] || die "no cover letter text $text for series $name"
	n=$(git -C "$dev" rev-list --count "$base..$last")
	prefix=$(cover_field "$name" Prefix)
	reply=$(cover_field "$name" In-Reply-To)
	figures=$(cover_field "$name" Figures)
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	git -C "$dev" log -1 --format='From: %an <%ae>%nDate: %aD' "$last"
	echo "Subject: [${prefix:-PATCH} 0/$n] $(cover_field "$name" Subject)"
	# One To: and one Cc: header, folded as git format-patch folds them.
	awk -F': ' '$1 != h { if (h) print ""; h = $1; printf "%s: %s", h, substr($0, length(h) + 3); next }
		{ printf ",\n    %s", substr($0, length(h) + 3) }
		END { if (h) print "" }' "$5"
	[ -z "$reply" ] || printf 'In-Reply-To: %s\nReferences: %s\n' "$reply" "$reply"
	echo
	sed '1,/^$/d' "$text"
	if [ -n "$figures" ]; then
		echo
		echo "Figures"
		echo "-------"
		echo
		python3 "$top/bench/report.py" "--summary-$figures" "$top/Documentation/results/bench.json" ||
			echo "(no benchmark results are committed yet: run make bench)"
	fi
	echo
	git -C "$dev" shortlog "$base..$last"
	echo
	git -C "$dev" diff --stat=72 --summary "$base..$last"
	echo
	# No base-commit: the base is a commit of Debian's tarball made here, which
	# exists nowhere public. Rebasing onto the maintainer's branch is the
	# sender's first step (Documentation/review-notes.rst).
	echo "base: v${SOURCE_VERSION%%-*} as shipped in Debian's linux-source-7.3 $SOURCE_VERSION,"
	echo "not rebased onto the maintainer's branch$(series_base_note "$name")"
}

# Which other series a series applies on top of (its Depends-on headers), by
# their letters' subjects: a recipient knows them by those, not by our names.
series_base_note() { # <series>
	local dep subjects=()
	while read -r dep; do
		subjects+=("\"$(cover_field "$dep" Subject)\"")
	done < <(cover_field "$1" Depends-on)
	if [ "${#subjects[@]}" -gt 0 ]; then
		printf ', on top of the series'
		printf ' %s,' "${subjects[@]}" | sed 's/,$//'
		echo
	else
		echo "; applies without the other series"
	fi
}

cmd=${1:-build}
if [ "$cmd" = kmake ]; then
	[ $# -ge 3 ] || die "usage: kernel.sh kmake <src> <objdir> <target>..."
	src=$2 obj=$3
	shift 3
	exec "${KMAKE[@]}" -C "$src" O="$obj" "$@"
fi
check_inputs
case $cmd in
key) build_key ;;
basedir) base_dir ;;
source) prepare_source ;;
build) build ;;
kdir) echo "$CACHE/build/$(build_key)" ;;
headers) headers ;;
devtree) devtree ;;
export) export_series ;;
depends) cover_field "${2:?usage: kernel.sh depends <series>}" Depends-on ;;
*) die "unknown command '$cmd'" ;;
esac
