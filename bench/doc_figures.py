#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The generated figure blocks of a reStructuredText document.

A block is what ``bench/report.py <mode>`` prints from the committed results
(Documentation/results/bench.json, and the pathlen.json beside it), as a literal
block between two comments::

    .. figures: --summary

    ::

       (report.py's output, indented by three spaces)

    .. end figures

    doc_figures.py --check <doc.rst>...   exit 1, with a diff, if a block is not
                                          what report.py prints now
    doc_figures.py --write <doc.rst>...   rewrite every block from the results

A document's figures then cannot drift from the results they quote
(tests/host/doc_figures.sh checks them in make check; make bench and
make patches rewrite them).
"""
import difflib
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(TOP, "Documentation", "results", "bench.json")
MODES = ("--summary", "--summary-cgroup", "--summary-pid")
BEGIN = re.compile(r"^\.\. figures: (\S+)$")
END = ".. end figures"
INDENT = "   "


def generate(mode, results):
    """The block's body for report.py's <mode>: the literal block's lines."""
    if mode not in MODES:
        raise SystemExit(f"doc_figures: unknown mode '{mode}' (one of {', '.join(MODES)})")
    out = subprocess.run([sys.executable, os.path.join(TOP, "bench", "report.py"), mode, results],
                         check=True, capture_output=True, text=True).stdout
    body = ["", "::", ""]
    body += [INDENT + line if line.strip() else "" for line in out.rstrip("\n").split("\n")]
    return body + [""]


def blocks(lines, path):
    """(mode, first body line, end line) of each block, in order."""
    found, i = [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if m:
            try:
                end = lines.index(END, i + 1)
            except ValueError:
                raise SystemExit(f"doc_figures: {path}:{i + 1}: '.. figures:' without '{END}'")
            found.append((m.group(1), i + 1, end))
            i = end
        i += 1
    return found


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("--check", "--write"):
        raise SystemExit(__doc__)
    mode_write = sys.argv[1] == "--write"
    results = os.environ.get("DOC_FIGURES_RESULTS", RESULTS)
    stale = 0
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        found = blocks(lines, path)
        if not found:
            raise SystemExit(f"doc_figures: {path} has no '.. figures:' block")
        # From the last block back, so that earlier line numbers stay valid.
        for mode, first, end in reversed(found):
            want = generate(mode, results)
            have = lines[first:end]
            if have == want:
                continue
            stale += 1
            if mode_write:
                lines[first:end] = want
            else:
                print(f"# {path}: the {mode} block differs from bench/report.py's:")
                for d in list(difflib.unified_diff(have, want, "document", "report.py",
                                                   lineterm="", n=0))[2:14]:
                    print(f"#   {d}")
        if mode_write and stale:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
    if mode_write:
        print(f"doc_figures: rewrote {stale} block(s) in {' '.join(sys.argv[2:])}")
        return 0
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
