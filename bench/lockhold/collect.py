#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One boot's lock holds (lockhold.so's report) as bench raw lines.

    collect.py <report> <results.log> <System.map> <tags...>

The report numbers its windows; the guest's results.log says which variant,
repetition and workload each number is ("bench ... workload=W window n=N").
Addresses become symbols here, so that the committed raw file needs no kernel
build. A hold's site is the function that took the lock: the caller of the lock
function when the taking instruction is in one (_raw_spin_lock_irq, ...), else
the function the taking instruction is in.

Fails when the report's windows are not the guest's. Prints, per window
(none for one a second begin mark cut short):
  bench <tags> variant=V rep=R workload=W lockhold-window insns=N anomalies=A dropped=D
  bench <tags> variant=V rep=R workload=W lockhold lock=L mode=M site=F at=F+0xO
      count=C sum=S min=m max=M log2=k:n:s,... (n holds of 2^k to 2^(k+1) - 1 instructions, s in all)
"""
import bisect
import sys


def symbols(path):
    """Sorted (address, name) of the text symbols of a System.map, and _etext."""
    syms, etext = [], None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3:
                continue
            if parts[2] == "_etext":
                etext = int(parts[0], 16)
            if parts[1] in "tTwW":
                syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    return syms, etext


def where(syms, addrs, etext, addr):
    """(function, offset) of a kernel text address; (hex address, 0) outside it
    (a module's text, which System.map does not cover)."""
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0 or (etext is not None and addr >= etext):
        return "0x%x" % addr, 0
    return syms[i][1], addr - syms[i][0]


def is_lock_function(name):
    return name.startswith(("_raw_", "__raw_", "queued_", "do_raw_"))


def windows(results_log):
    """window number -> (variant, rep, workload), from the guest's lines."""
    out = {}
    with open(results_log, errors="replace") as f:
        for line in f:
            words = line.split()
            if len(words) < 2 or words[0] != "bench" or "window" not in words:
                continue
            fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            out[int(fields["n"])] = (fields["variant"], fields["rep"], fields["workload"])
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: collect.py <report> <results.log> <System.map> <tags...>")
    report, results_log, sysmap, tags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    syms, etext = symbols(sysmap)
    addrs = [a for a, _ in syms]
    names = windows(results_log)
    anomalies = {}
    with open(report) as f:
        lines = [line.split() for line in f if line.strip()]
    # Every window the guest numbered must be in the report, closed or cut
    # short, and nothing else: otherwise the two numberings are out of step.
    reported = {int(w[1]) for w in lines if w[0] in ("window", "unclosed")}
    if not names or reported != set(names):
        sys.exit("collect: the report's windows %s are not the guest's %s"
                 % (sorted(reported), sorted(names)))
    for words in lines:
        if words[0] == "anomaly":
            anomalies[int(words[1])] = anomalies.get(int(words[1]), 0) + int(words[3])
    dropped = {int(w[1]): int(w[2]) for w in lines if w[0] == "dropped"}
    for words in lines:
        n = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        if n not in names:
            continue
        v, rep, w = names[n]
        head = " ".join(["bench"] + tags + ["variant=%s" % v, "rep=%s" % rep, "workload=%s" % w])
        if words[0] == "window":
            print("%s lockhold-window insns=%s anomalies=%d dropped=%d"
                  % (head, words[3], anomalies.get(n, 0), dropped.get(n, 0)))
        elif words[0] == "hold":
            lock, mode, pc, caller = words[2], words[3], int(words[4], 16), int(words[5], 16)
            fn, off = where(syms, addrs, etext, pc)
            site = where(syms, addrs, etext, caller)[0] if is_lock_function(fn) else fn
            print("%s lockhold lock=%s mode=%s site=%s at=%s+0x%x count=%s sum=%s min=%s max=%s log2=%s"
                  % (head, lock, mode, site, fn, off, words[6], words[7], words[8], words[9],
                     ",".join(words[10:]) or "-"))


if __name__ == "__main__":
    main()
