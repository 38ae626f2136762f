#!/usr/bin/env bash
# The merge set's letters and messages against the committed results, in words
# (tests/host/letter_claims.py); shown catching a copy of the patches with each
# kind of claim the results contradict.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
check=$top/tests/host/letter_claims.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$check"

# twin <description> <file under kernel/patches> <sed script> <ERE of the problem>
twin() {
	rm -rf "$tmp/p"
	cp -r "$top/kernel/patches" "$tmp/p"
	sed -i "$3" "$tmp/p/$2"
	python3 "$check" "$tmp/p" > "$tmp/out"
	if grep -qE "^# .*$4" "$tmp/out"; then
		echo "ok host: the check of the letters' words catches $1"
	else
		echo "not ok host: the check of the letters' words catches $1"
		sed 's/^/# /' "$tmp/out"
	fi
}
pid_cover=pid/0000-cover-letter.patch
free_pids=pid/0002-pid-take-pidmap_lock-once-in-free_pids.patch
twin "a single-pid exit called unchanged" "$pid_cover" \
	's/^This patch does it\./This patch does it; an exit that frees one pid is unchanged./' \
	'says a single-pid exit is unchanged'
twin "a posting called unmeasured" "$pid_cover" \
	's/^Patch 2: /Patch 2 (this posting alone has not been measured): /' \
	'says the posting was not measured'
twin "a wrong range of the single-pid cost" "$pid_cover" \
	's/holds it 3 to 8 %/holds it 3 to 9 %/' 'says 3 to 9 %; measured'
twin "a posted patch whose code the runs did not measure" "$free_pids" \
	'0,/^+	spin_lock/s//+	spin_lock_irq/' 'is not the code make bench measured'
# what may differ from the measured code: comments and lockdep assertions, with a
# macro used only inside them; a statement beside them, or the macro used outside
# them, is code
pin_read=cgroup-read/0001-cgroup-pin-the-clone-time-css_set-with-the-threadgro.patch
twin "a statement added beside a lockdep assertion" "$pin_read" \
	'/^+				       cgroup_threadgroup_write_held(task));/a +			cpu_relax();' \
	'is not the code make bench measured'
twin "a lockdep-only macro used in code" "$pin_read" \
	'/^+				       cgroup_threadgroup_write_held(task));/a +			WARN_ON(!cgroup_threadgroup_write_held(task));' \
	'is not the code make bench measured'
# a measured patch dropped: its series file no longer lists it
rm -rf "$tmp/p"
cp -r "$top/kernel/patches" "$tmp/p"
sed -i '\|^pid/0002-|d' "$tmp/p/series"
python3 "$check" "$tmp/p" > "$tmp/out"
if grep -qE "^# pid/0002-.* was measured by make bench at .* and is no longer in the merge set" "$tmp/out"; then
	echo "ok host: the check of the letters' words catches a measured patch dropped from the merge set"
else
	echo "not ok host: the check of the letters' words catches a measured patch dropped from the merge set"
	sed 's/^/# /' "$tmp/out"
fi
twin "a wrong two-pid hold" "$free_pids" \
	's/792 instructions in one acquisition/790 instructions in one acquisition/' \
	'says 790 in one acquisition against 748 in two'
