#!/usr/bin/env python3
"""What the merge set's letters and messages say in words, checked against the
committed results (Documentation/results/bench.json, Documentation/pathlen.json).
cover_figures.sh checks the generated figures; this checks the prose around them:

- the figures were measured on the code being posted: the merge set's kernel diffs at the
  commits the two runs name are this tree's (a changed patch makes every claim stale
  until make bench runs again);
- no letter says the posting was not measured, or measured on something else, while
  the results have its "posted" rows;
- no letter or message says that an exit freeing a single pid is unchanged while the
  posted kernel holds pidmap_lock longer there than stock;
- a stated range of that cost ("15 to 40 instructions", "3 to 8 %"), stock's hold
  ("about 500") and the two-pid release's holds ("792 instructions in one acquisition
  against 748 in two") are the measured ones, rounded.

  letter_claims.py [patches dir]   (default kernel/patches; prints TAP lines)
"""
import json
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "bench"))
from report import SINGLE_PID_WORKLOADS, free_side_hold  # noqa: E402

def diffs(text):
    """A patch's diff alone: what is applied, not what is said."""
    i = text.find("\ndiff --git ")
    return text[i:] if i >= 0 else ""


LOCKDEP_ASSERT = re.compile(r"^lockdep_assert\w*\(")
DEFINE = re.compile(r"^#\s*define\s+(\w+)")


def code_lines(diff):
    """What a diff adds and removes that can change a figure of make bench, as a sorted
    tuple of (file, sign, line): comment lines and lockdep assertions are left out, with
    a macro used only inside them. Without CONFIG_LOCKDEP (the perf flavour: instructions
    and throughput) an assertion emits nothing, and with it (the debug flavour: lock
    counts) it takes no lock. A comment is followed through the context lines of its
    side of the diff; a hunk that starts inside one counts its lines as code (strict)."""
    out, macros = [], {}
    for chunk in re.split(r"^diff --git ", diff, flags=re.M)[1:]:
        name = chunk.split()[0][2:]
        comment = {"+": False, "-": False}
        lockdep = macro = False
        for raw in chunk.splitlines()[1:]:
            if raw.startswith("@@"):
                comment = {"+": False, "-": False}
                continue
            if not raw or raw[0] not in " +-" or raw.startswith(("+++", "---")):
                continue
            line = raw[1:].strip()
            sides = "+-" if raw[0] == " " else raw[0]
            in_comment = any(comment[x] for x in sides)
            is_comment = in_comment or line.startswith(("/*", "//"))
            for x in sides:
                if is_comment:
                    comment[x] = "*/" not in line and (in_comment or line.startswith("/*"))
            if raw[0] == " ":
                continue
            sign = raw[0]
            if macro:
                macros[macro].append((name, sign, line))
                macro = macro if line.endswith("\\") else False
                continue
            if is_comment or not line:
                continue
            if lockdep or LOCKDEP_ASSERT.match(line):
                lockdep = not line.endswith(");")
                continue
            m = DEFINE.match(line)
            if m and line.endswith("\\"):
                macro = m.group(1)
                macros[macro] = [(name, sign, line)]
                continue
            out.append((name, sign, line))
    for macro, lines in macros.items():
        if any(re.search(rf"\b{macro}\b", line) for _, _, line in out):
            out += lines
    return tuple(sorted(out))


def merge_set(series_text):
    """The merge set's patches, "<series>/<name>", in the order the series file
    applies them: every series but the Rust RFC and the measurement one."""
    out = []
    for line in series_text.splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith(("measure/", "rust/")):
            out.append(line)
    return out


def merge_set_files(patches):
    with open(os.path.join(patches, "series")) as f:
        names = merge_set(f.read())
    letters = sorted({n.split("/")[0] + "/0000-cover-letter.patch" for n in names})
    for rel in letters + names:
        yield rel, os.path.join(patches, rel)


def measured_code(diff):
    """Whether a diff changes what the kernel runs: a patch to the selftests alone
    changes no figure of make bench."""
    files = re.findall(r"^diff --git a/(\S+) ", diff, re.M)
    return any(not f.startswith("tools/testing/") for f in files)


def git_show(commit, path):
    r = subprocess.run(["git", "-C", TOP, "show", f"{commit}:{path}"],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def stale(patches, commit):
    """The merge-set patches whose kernel code was not in the merge set at <commit>,
    by their diffs, wherever the series were laid out then; and those of <commit>
    whose kernel code is gone (as "<commit>:<old name>")."""
    old_series = git_show(commit, "kernel/patches/series") or ""
    old = {}
    for rel in merge_set(old_series):
        text = git_show(commit, f"kernel/patches/{rel}")
        if text is not None:
            old[code_lines(diffs(text))] = (rel, diffs(text))
    out, now = [], set()
    for rel, path in merge_set_files(patches):
        if rel.endswith("0000-cover-letter.patch"):
            continue
        d = diffs(open(path).read())
        now.add(code_lines(d))
        if measured_code(d) and code_lines(d) not in old:
            out.append(rel)
        elif code_lines(d) in old and old[code_lines(d)][1] != d:
            print(f"# {rel} differs from the code measured at {commit} only in comments and "
                  "lockdep assertions")
    out += [f"{commit}:{rel}" for c, (rel, d) in old.items() if measured_code(d) and c not in now]
    return out


def words(text):
    """Prose on one line: a claim may be wrapped anywhere."""
    return " ".join(text.split())


def main():
    patches = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "kernel", "patches")
    with open(os.path.join(TOP, "Documentation", "results", "bench.json")) as f:
        bench = json.load(f)
    with open(os.path.join(TOP, "Documentation", "pathlen.json")) as f:
        pl = json.load(f)
    problems = []

    for what, meta in (("make bench", bench["meta"]), ("make bench PATHLEN=1", pl["meta"])):
        for rel in stale(patches, meta["commit"]):
            gone = rel.startswith(f"{meta['commit']}:")
            problems.append(f"{rel.split(':', 1)[1]} was measured by {what} at {meta['commit']} and "
                            "is no longer in the merge set" if gone else
                            f"{rel} is not the code {what} measured at {meta['commit']}")

    posted = any(r["variant"] == "posted" for r in bench["records"])
    holds = {w: (free_side_hold(pl, w, "stock"), free_side_hold(pl, w, "posted"))
             for w in SINGLE_PID_WORKLOADS}
    extra = [p[1] - s[1] for s, p in holds.values() if s and p]
    ratio = [(p[1] / s[1] - 1) * 100 for s, p in holds.values() if s and p]
    for rel, path in merge_set_files(patches):
        text = open(path).read()
        head = words(text[:text.find("\ndiff --git ")] if "\ndiff --git " in text else text)
        if posted and re.search(r"posting alone has not been measured|predates patch", head):
            problems.append(f"{rel} says the posting was not measured; bench.json has its posted rows")
        if extra and min(extra) > 0 and re.search(
                r"(nothing changes|unchanged) for an exit that frees a single pid"
                r"|exit that frees (one|a single) pid is unchanged", head):
            problems.append(f"{rel} says a single-pid exit is unchanged; the posted kernel holds "
                            f"pidmap_lock {min(extra):.0f} to {max(extra):.0f} instructions longer")
        for lo, hi in re.findall(r"(\d+) to (\d+) instructions more under the lock", head):
            if extra and (int(lo), int(hi)) != (round(min(extra)), round(max(extra))):
                problems.append(f"{rel} says {lo} to {hi} instructions more; measured "
                                f"{min(extra):.0f} to {max(extra):.0f}")
        two = (free_side_hold(pl, "pgrp_exit", "posted"), free_side_hold(pl, "pgrp_exit", "stock"))
        for one, both in re.findall(r"(\d+) instructions in one acquisition,? against (\d+) in two", head):
            if None not in two and (int(one), int(both)) != (round(two[0][1]), round(two[1][1])):
                problems.append(f"{rel} says {one} in one acquisition against {both} in two; measured "
                                f"{two[0][1]:.0f} against {two[1][1]:.0f}")
        stock_holds = [s[1] for s, p in holds.values() if s and p]
        for about in re.findall(r"the about (\d+) that stock holds it there", head):
            mean = sum(stock_holds) / len(stock_holds) if stock_holds else 0
            if mean and abs(int(about) - mean) > 0.15 * mean:
                problems.append(f"{rel} says about {about}; stock holds it {mean:.0f} on average")
        for lo, hi in re.findall(r"(\d+) to (\d+) % (?:of the about \d+ that stock holds it there|longer)", head):
            if ratio and (int(lo), int(hi)) != (round(min(ratio)), round(max(ratio))):
                problems.append(f"{rel} says {lo} to {hi} %; measured "
                                f"{min(ratio):.1f} to {max(ratio):.1f} %")
    return problems


if __name__ == "__main__":
    found = main()
    what = "the merge set's letters and messages say nothing the committed results contradict"
    if found:
        print(f"not ok host: {what}")
        for p in found:
            print(f"# {p}")
    else:
        print(f"ok host: {what}")
