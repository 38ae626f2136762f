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
# calls an assertion may make: lockdep's own queries, and macros of the same diff
# that are used inside assertions alone
QUERY = re.compile(r"^(lockdep_\w+|percpu_rwsem_is_held)$")
CONTROL = re.compile(r"^(if|else|for|while|do)\b")


def strip_comments(line, in_comment):
    """(the code of line, whether a comment is still open after it): /* */ and //
    removed, string and character literals kept whole."""
    out, i = [], 0
    while i < len(line):
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out).strip(), True
            in_comment, i = False, j + 2
            continue
        c = line[i]
        if c in "\"'":
            j = i + 1
            while j < len(line) and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            out.append(line[i:j + 1])
            i = j + 1
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        elif line.startswith("//", i):
            break
        else:
            out.append(c)
            i += 1
    return " ".join("".join(out).split()), in_comment


def code_lines(diff):
    """What a diff adds and removes that can change a figure of make bench, in diff
    order, as (file, sign, code) with comments removed: a whole lockdep_assert*()
    statement added or removed is left out, with a macro used only inside such
    statements. Without CONFIG_LOCKDEP (the perf flavour: instructions and
    throughput) an assertion emits nothing, and with it (the debug flavour: lock
    counts) it takes no lock, so its arguments may only query lockdep. Anything the
    parser is unsure of counts as code: a hunk that starts inside a comment, a
    statement split by a context line, an assertion as an unbraced body."""
    out = []
    for chunk in re.split(r"^diff --git ", diff, flags=re.M)[1:]:
        name = chunk.split()[0][2:]
        lines = chunk.splitlines()[1:]
        first = next((i for i, raw in enumerate(lines) if raw.startswith("@@")), len(lines))
        # (sign, code) of every line, each side's comments followed on its own
        seq, state, prev = [], {"+": False, "-": False}, {"+": "", "-": ""}
        for raw in lines[first:]:
            if raw.startswith("@@"):
                state, prev = {"+": False, "-": False}, {"+": "", "-": ""}
                seq.append(("@", ""))
                continue
            if not raw or raw[0] not in " +-":
                continue
            sides = "+-" if raw[0] == " " else raw[0]
            codes = {}
            for x in sides:
                codes[x], state[x] = strip_comments(raw[1:], state[x])
            if raw[0] == " " and codes["+"] != codes["-"]:
                # a context line that one side comments out: a change of that side
                for x in "-+":
                    if codes[x]:
                        seq.append((x, codes[x], prev[x]))
            else:
                seq.append((raw[0], codes[sides[0]], prev[sides[0]]))
            for x in sides:
                if codes[x]:
                    prev[x] = codes[x]
        kept, macros, exempt_text = [], {}, []
        i = 0
        while i < len(seq):
            item = seq[i]
            if item[0] in "@ " or not item[1]:
                i += 1
                continue
            sign, code, before = item
            m = DEFINE.match(code)
            if LOCKDEP_ASSERT.match(code) or (m and code.endswith("\\")):
                j, text = i, []
                while j < len(seq) and seq[j][0] == sign:
                    text.append(seq[j][1])
                    j += 1
                    if LOCKDEP_ASSERT.match(code) and "".join(text).count("(") == \
                            "".join(text).count(")") and text[-1].endswith(";"):
                        break
                    if m and not text[-1].endswith("\\"):
                        break
                whole = " ".join(text)
                if m and not text[-1].endswith("\\"):
                    macros.setdefault(m.group(1), []).append([(name, sign, t) for t in text])
                    i = j
                    continue
                calls = re.findall(r"(\w+)\s*\(", whole)[1:]
                unbraced = CONTROL.match(before) and not before.endswith(("{", ";", "}"))
                if (LOCKDEP_ASSERT.match(code) and whole.endswith(");") and not unbraced and
                        not re.search(r"[^=!<>]=[^=]|\+\+|--", whole)):
                    exempt_text.append((whole, calls))
                    i = j
                    continue
                kept += [(name, sign, t) for t in text]
                i = j
                continue
            kept.append((name, sign, code))
            i += 1
        context = [c for c in seq if c[0] == " " and c[1]]
        for macro, defs in macros.items():
            used = re.compile(rf"\b{macro}\b")
            body = " ".join(t for d in defs for _, _, t in d)
            pure = not re.search(r"[^=!<>]=[^=]|\+\+|--", body) and all(
                QUERY.match(c) or c in macros or c == macro
                for c in re.findall(r"(\w+)\s*\(", body))
            if not pure or any(used.search(t) for _, _, t in kept) or \
                    any(used.search(c[1]) for c in context):
                for d in defs:
                    kept += d
        for whole, calls in exempt_text:
            if any(not QUERY.match(c) and c not in macros for c in calls):
                kept.append((name, "?", whole))
        out += kept
    return tuple(out)


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
            old.setdefault(code_lines(diffs(text)), (rel, diffs(text)))
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
