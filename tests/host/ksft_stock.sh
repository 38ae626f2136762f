#!/usr/bin/env bash
# The committed stock 7.3 results of the kernel's selftests
# (selftests/forkscale/ksft-stock.txt), which make check compares every
# implementation with: every suite the guest runs has them (the cgroup suites
# with favordynmods too), and every case stock fails or skips is on the
# known-failures list with its reason, and no entry there is stale. Checked on
# the committed files, then on copies with an unlisted skip, an unlisted
# failure, a fixed stock bug recorded failing and a missing suite, each of
# which must be caught.
#   ksft_stock.sh [<ksft-stock.txt> <ksft-known-failures.txt>]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/selftests/forkscale
# the suites the guest builds and runs (KSFT_PROGS of its Makefile)
suites=$(printf 'include Makefile\nprint-ksft:\n\t@echo $(KSFT_PROGS)\n' |
	make -s -C "$dir" -f - KSRC=/nonexistent print-ksft)

# problems <stock file> <known file>: one line per problem
problems() {
	local stock=$1 known=$2 t mode c
	awk -F '\t' '!/^#/ && (NF != 3 || ($1 != "plain" && $1 != "favordynmods" && $1 != "v1") ||
		$3 !~ /^((not )?ok |# plan: ([0-9]+|none)$)/) { print "malformed line " NR ": " $0 }' "$stock"
	for t in $suites; do
		for mode in plain $(case $t in cgroup/*) echo favordynmods ;; esac) \
			$(case $t in cgroup/test_core) echo v1 ;; esac); do
			awk -F '\t' -v m="$mode" -v t="$t" '$1 == m && $2 == t { n++ } END { exit !n }' \
				"$stock" || echo "no $mode results of $t"
		done
	done
	# A case that fails or skips: its name, the directive left out. A skip of
	# ksft_test_result_skip() prints no name before "# SKIP": its reason names it.
	# Listed as <mode>:<name> for its mode alone, or as <name> for every mode.
	awk -F '\t' '!/^#/ && ($3 ~ /^not ok / || $3 ~ / # SKIP/) {
		c = $3; sub(/^(not )?ok /, "", c)
		if (c ~ /^# SKIP/) sub(/^# SKIP */, "", c); else sub(/ # .*/, "", c)
		print $1 "\t" $2 "\t" c }' "$stock" | sort -u |
		while IFS=$'\t' read -r m t c; do
			awk -F '\t' -v t="$t" -v c="$c" -v mc="$m:$c" \
				'$1 == t && ($2 == c || $2 == mc) && $3 != "" { f = 1 }
				END { exit !f }' "$known" ||
				printf 'not listed with a reason: %s %s\t%s\n' "$m" "$t" "$c"
		done
	# A stock bug that the merge set fixes is recorded as passing, in every mode
	# its suite has results in (or the one its entry names), as every kernel
	# compared with stock must pass it.
	awk -F '\t' '!/^#/ && $3 ~ /^fixed:/ { print $1 "\t" $2 }' "$known" |
		while IFS=$'\t' read -r t c; do
			only=
			case $c in *:*) only=${c%%:*} c=${c#*:} ;; esac
			for mode in $(awk -F '\t' -v t="$t" '$2 == t { print $1 }' "$stock" | sort -u); do
				[ -z "$only" ] || [ "$only" = "$mode" ] || continue
				awk -F '\t' -v m="$mode" -v t="$t" -v c="$c" \
					'$1 == m && $2 == t && $3 == "ok " c { f = 1 } END { exit !f }' "$stock" ||
					echo "a stock bug the merge set fixes, not recorded passing ($mode): $t $c"
			done
		done
	# No case may pass by timing out: a reason that says so is refused (a slow
	# case gets a longer limit instead).
	awk -F '\t' '!/^#/ && NF >= 3 && $3 ~ /^timeout:/ { print "a timeout listed as a pass: " $1 " " $2 }' "$known"
	# A listed case that is neither flaky nor a stock bug the merge set fixes
	# (which the committed file records as passing) must still fail or skip on
	# stock: in its mode, or plain for one listed for every mode.
	awk -F '\t' '!/^#/ && NF >= 3 && $3 !~ /^(flaky|fixed):/ { print $1 "\t" $2 }' "$known" |
		while IFS=$'\t' read -r t c; do
			m=plain
			case $c in *:*) m=${c%%:*} c=${c#*:} ;; esac
			awk -F '\t' -v m="$m" -v t="$t" -v c="$c" '$1 == m && $2 == t &&
				($3 ~ /^not ok / || $3 ~ / # SKIP/) && index($3, c) { f = 1 }
				END { exit !f }' "$stock" ||
				echo "listed, but stock 7.3 neither fails nor skips it ($m): $t $c"
		done
}

stock=${1:-$dir/ksft-stock.txt} known=${2:-$dir/ksft-known-failures.txt}
bad=$(problems "$stock" "$known")
n=$(grep -vc '^#' "$stock")
if [ -z "$bad" ] && [ "$n" -gt 0 ]; then
	echo "ok host: stock 7.3's $n committed selftest results cover every suite, each failure and skip listed with its reason"
else
	echo "not ok host: stock 7.3's $n committed selftest results cover every suite, each failure and skip listed with its reason"
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/# /'
fi
[ $# -eq 0 ] || exit 0

# The check catches each kind of gap, by the problem it targets.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
twin() { # <description> <ERE of the problem> <sed script for the stock file>
	sed "$3" "$stock" > "$tmp/stock"
	problems "$tmp/stock" "$known" > "$tmp/problems"
	if grep -qE "$2" "$tmp/problems"; then
		echo "ok host: the check of stock's results catches $1"
	else
		echo "not ok host: the check of stock's results catches $1"
	fi
}
twin "an unlisted skip" '^not listed with a reason: plain clone3/clone3	' \
	'0,/^plain\tclone3\/clone3\tok \(.*\)$/s//plain\tclone3\/clone3\tok \1 # SKIP forced/'
twin "an unlisted failure" '^not listed with a reason: plain pidfd/pidfd_open_test	' \
	'0,/^plain\tpidfd\/pidfd_open_test\tok /s//plain\tpidfd\/pidfd_open_test\tnot ok /'
twin "a skip listed for v1 alone, in plain" \
	'^not listed with a reason: plain cgroup/test_core	test_cgcore_populated$' \
	's/^plain\tcgroup\/test_core\tok test_cgcore_populated$/plain\tcgroup\/test_core\tok # SKIP test_cgcore_populated/'
twin "a fixed stock bug recorded failing" \
	'^a stock bug the merge set fixes, not recorded passing \(plain\): cgroup/test_kill test_cgkill_fork_race$' \
	's/^plain\tcgroup\/test_kill\tok test_cgkill_fork_race$/plain\tcgroup\/test_kill\tnot ok test_cgkill_fork_race/'
twin "a suite with no v1 results" '^no v1 results of cgroup/test_core$' \
	'/^v1\tcgroup\/test_core\t/d'
twin "a suite with no results" '^no favordynmods results of cgroup/test_pids$' \
	'/^favordynmods\tcgroup\/test_pids\t/d'
# ... and a case listed as passing by its timeout.
{ cat "$known"; printf 'pid_namespace/pid_max\tpid_max.nested\ttimeout: forced\n'; } > "$tmp/known"
problems "$stock" "$tmp/known" > "$tmp/problems"
if grep -qx 'a timeout listed as a pass: pid_namespace/pid_max pid_max.nested' "$tmp/problems"; then
	echo "ok host: the check of stock's results catches a timeout listed as a pass"
else
	echo "not ok host: the check of stock's results catches a timeout listed as a pass"
fi
