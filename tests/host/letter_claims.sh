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

# The comparison with the measured code, on small diffs: what it may ignore (comments,
# lockdep assertions and a macro used only in them) and what it must not (each a
# change of what the kernel runs). The version of 5960b05 got 8 of these 14 wrong.
python3 - "$check" <<'CASES'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("lc", sys.argv[1])
lc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lc)


def diff(*body):
    return "diff --git a/k.c b/k.c\n--- a/k.c\n+++ b/k.c\n@@ -1,9 +1,9 @@\n" + "\n".join(body) + "\n"


base = diff(" int a;", "+\tspin_lock(&l);", "+\tx++;", "+\tspin_unlock(&l);", " int b;")
same = {
    "a comment and a lockdep assertion added": diff(
        " int a;", "+\t/* why */", "+\tspin_lock(&l);", "+\tlockdep_assert_held(&l);",
        "+\tx++; /* counted */", "+\tspin_unlock(&l);", " int b;"),
    "a lockdep-only macro and its assertion": diff(
        " int a;", "+#define held(t) \\", "+\t(lockdep_is_held(t))", "+\tspin_lock(&l);",
        "+\tlockdep_assert(held(&l));", "+\tx++;", "+\tspin_unlock(&l);", " int b;"),
}
differ = {
    "statements reordered": diff(" int a;", "+\tx++;", "+\tspin_lock(&l);", "+\tspin_unlock(&l);", " int b;"),
    "a context line commented out": diff(
        " int a;", "+\tspin_lock(&l);", "+\tx++;", "+\tspin_unlock(&l);", "+/*", " int b;", "+*/"),
    "code after a comment on its line": diff(
        " int a;", "+\t/* c */ spin_lock(&l);", "+\tspin_lock(&l);", "+\tx++;", "+\tspin_unlock(&l);", " int b;"),
    "code after an assertion with a trailing comment": diff(
        " int a;", "+\tspin_lock(&l);", "+\tlockdep_assert_held(&l); /* why */", "+\tx++;", "+\ty++;",
        "+\tspin_unlock(&l);", " int b;"),
    "an assertion as an unbraced body": diff(
        " int a;", "+\tspin_lock(&l);", "+\tif (c)", "+\t\tlockdep_assert_held(&l);", "+\tx++;",
        "+\tspin_unlock(&l);", " int b;"),
    "an assertion with a side effect": diff(
        " int a;", "+\tspin_lock(&l);", "+\tlockdep_assert(y++);", "+\tx++;", "+\tspin_unlock(&l);", " int b;"),
    "an assertion calling a function": diff(
        " int a;", "+\tspin_lock(&l);", "+\tlockdep_assert(take(&m));", "+\tx++;", "+\tspin_unlock(&l);", " int b;"),
    "a macro used in code": diff(
        " int a;", "+#define held(t) \\", "+\t(lockdep_is_held(t))", "+\tspin_lock(&l);",
        "+\tWARN_ON(!held(&l));", "+\tx++;", "+\tspin_unlock(&l);", " int b;"),
    "a macro continued by a context line": diff(
        " int a;", "+#define held(t) \\", " int c;", "+\tspin_lock(&l);", "+\tx++;", "+\tspin_unlock(&l);", " int b;"),
    "a removal hidden by the other side's comment": diff(
        " int a;", "+/*", "+ * note", " ", "+ */", "-\tbar();", "+\tspin_lock(&l);", "+\tx++;",
        "+\tspin_unlock(&l);", " int b;"),
    "a statement starting with ++": diff(" int a;", "+\tspin_lock(&l);", "+++i;", "+\tx++;", "+\tspin_unlock(&l);", " int b;"),
    "a /* inside a string": diff(
        " int a;", '+\tpr_info("/*");', "+\tspin_lock(&l);", "+\tx++;", "+\tspin_unlock(&l);", " int b;"),
}
want = lc.code_lines(base)
bad = [k for k, d in same.items() if lc.code_lines(d) != want]
bad += [k for k, d in differ.items() if lc.code_lines(d) == want]
print("ok host: the letters' code comparison ignores comments and lockdep assertions, and nothing else"
      if not bad else "not ok host: the letters' code comparison ignores comments and lockdep assertions, "
      "and nothing else (wrong on: " + "; ".join(bad) + ")")
CASES

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
