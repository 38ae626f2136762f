#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per operation, function by function, of the windows of one boot.

    pathprof.py <report> <results.log> <System.map> [<n>] [<window>,<window>,...]

<report> is pathprof.so's; <results.log> the guest's, whose "bench ... window
n=N" lines name each window's variant and workload and whose "result" lines
give its operations. Prints, for the windows given (all by default), the
instructions per operation in every function, the <n> (30) that differ most
between the windows first. Addresses past the kernel's text are a module's
("[module]"), or userspace's ("[user]").
"""
import bisect
import collections
import os
import sys

# System.map's text symbols, read as bench/lockhold reads them
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lockhold"))
from collect import symbols  # noqa: E402

MODULES = 0xffffffffa0000000	# x86-64's module mapping space starts here


def function(syms, addrs, etext, pc):
    if pc >= MODULES:
        return "[module]"
    i = bisect.bisect_right(addrs, pc) - 1
    if i < 0:
        return "[user]"
    if etext is not None and pc >= etext:
        return "[kernel data]"
    return syms[i][1]


def profile(report, sysmap):
    """window -> Counter(function -> instructions)."""
    syms, etext = symbols(sysmap)
    addrs = [a for a, _ in syms]
    out = collections.defaultdict(collections.Counter)
    with open(report) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "pc":
                out[int(w[1])][function(syms, addrs, etext, int(w[2], 16))] += int(w[3])
    return out


def windows(results_log):
    """window -> (variant, workload, operations)."""
    names, ops = {}, {}
    with open(results_log, errors="replace") as f:
        for line in f:
            words = line.split()
            if len(words) < 2 or words[0] != "bench":
                continue
            fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            if "window" in words:
                names[int(fields["n"])] = (fields["variant"], fields["workload"])
            elif "result" in words and "ops" in fields:
                ops[(fields["variant"], fields["workload"])] = int(fields["ops"])
    return {n: (v, w, ops.get((v, w), 0)) for n, (v, w) in names.items()}


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: pathprof.py <report> <results.log> <System.map> [<n>] [<window>,...]")
    prof = profile(sys.argv[1], sys.argv[3])
    named = windows(sys.argv[2])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    wanted = ([int(n) for n in sys.argv[5].split(",")] if len(sys.argv) > 5
              else sorted(n for n in prof if n in named))
    for n in wanted:
        if n not in prof or n not in named or not named[n][2]:
            sys.exit(f"pathprof: window {n} is not in the report, or has no operations")
    per_op = {n: {f: c / named[n][2] for f, c in prof[n].items()} for n in wanted}
    funcs = set().union(*(per_op[n] for n in wanted))
    spread = lambda f: max(per_op[n].get(f, 0) for n in wanted) - min(per_op[n].get(f, 0) for n in wanted)  # noqa: E731
    print("%-40s" % "window", " ".join("%12d" % n for n in wanted))
    print("%-40s" % "variant", " ".join("%12s" % named[n][0][:12] for n in wanted))
    print("%-40s" % "workload", " ".join("%12s" % named[n][1][:12] for n in wanted))
    print("%-40s" % "instructions/op", " ".join("%12.0f" % sum(per_op[n].values()) for n in wanted))
    for f in sorted(funcs, key=lambda f: (-spread(f), f))[:top]:
        print("%-40s" % f[:40], " ".join("%12.1f" % per_op[n].get(f, 0) for n in wanted))


if __name__ == "__main__":
    main()
