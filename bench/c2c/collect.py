#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One boot's cache-line transfers (c2c.so's report) as bench raw lines.

    collect.py <report> <results.log> <System.map> <tags...>

The report numbers its windows; the guest's results.log says which variant,
repetition and workload each number is ("bench ... workload=W window n=N"), as
for bench/lockhold. Addresses become names here, so that the committed raw file
needs no kernel build:
  - the data: the System.map symbol whose object covers the accessed address
    (static data: css_set_lock, init_css_set, nr_threads, ...; an object ends
    where the next symbol starts, and an access to a neighbour on the same
    line counts for the neighbour); otherwise the line is heap (slab objects,
    per-CPU areas, module data), named by the function whose access moved it:
    "heap@copy_process"; or user memory, "user@0x...";
  - the site: the function of the accessing instruction ("0x..." for module
    text, which System.map does not cover).
Records are summed per (data, site). Fails when the report's windows are not
the guest's. Prints, per window:
  bench <tags> variant=V rep=R workload=W c2c-window hitm=H inval=I copies=C evictions=E dropped=D
  bench <tags> variant=V rep=R workload=W c2c data=D site=F hitm=H inval=I copies=C
"""
import bisect
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lockhold"))
from collect import windows  # noqa: E402  (bench/lockhold/collect.py)


def load_map(path):
    """Sorted text symbols, sorted data symbols (start, end, name), and the
    kernel image's bounds."""
    text, allsyms, bounds = [], [], {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3:
                continue
            addr, kind, name = int(parts[0], 16), parts[1], parts[2]
            if name in ("_stext", "_etext", "_sdata", "_end"):
                bounds[name] = addr
            if kind in "tTwW":
                text.append((addr, name))
            allsyms.append((addr, kind, name))
    text.sort()
    allsyms.sort()
    data = []
    for i, (addr, kind, name) in enumerate(allsyms):
        if kind not in "dDbBrR":
            continue
        # an object ends where the next symbol starts
        end = next((a for a, _, _ in allsyms[i + 1:] if a > addr), addr + 64)
        data.append((addr, end, name))
    return text, data, bounds


def function(text, taddrs, bounds, pc):
    i = bisect.bisect_right(taddrs, pc) - 1
    if i < 0 or pc >= bounds.get("_etext", 1 << 64):
        return "0x%x" % pc
    return text[i][1]


def data_name(data, daddrs, bounds, vaddr, site):
    if vaddr < 1 << 63:
        return "user@" + site     # the workload's own memory (its pc, too, is a user address)
    if bounds.get("_stext", 0) <= vaddr < bounds.get("_end", 0):
        i = bisect.bisect_right(daddrs, vaddr) - 1
        if i >= 0 and vaddr < data[i][1]:
            return data[i][2]
    return "heap@" + site


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: collect.py <report> <results.log> <System.map> <tags...>")
    report, results_log, sysmap, tags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    text, data, bounds = load_map(sysmap)
    taddrs = [a for a, _ in text]
    daddrs = [a for a, _, _ in data]
    names = windows(results_log)
    with open(report) as f:
        lines = [line.split() for line in f if line.strip()]
    reported = {int(w[1]) for w in lines if w[0] in ("window", "unclosed")}
    if not names or reported != set(names):
        sys.exit("collect: the report's windows %s are not the guest's %s"
                 % (sorted(reported), sorted(names)))
    sums = {}
    for words in lines:
        n = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        if n not in names:
            continue
        v, rep, w = names[n]
        head = " ".join(["bench"] + tags + ["variant=%s" % v, "rep=%s" % rep, "workload=%s" % w])
        if words[0] == "window":
            f = dict(zip(words[2::2], words[3::2]))
            print("%s c2c-window hitm=%s inval=%s copies=%s evictions=%s dropped=%s"
                  % (head, f["hitm"], f["inval"], f["copies"], f["evictions"], f["dropped"]))
        elif words[0] == "xfer":
            pc, vaddr = int(words[2], 16), int(words[4], 16)
            site = function(text, taddrs, bounds, pc)
            key = (head, data_name(data, daddrs, bounds, vaddr, site), site)
            s = sums.setdefault(key, [0, 0, 0])
            for i in range(3):
                s[i] += int(words[5 + i])
    for (head, name, site), (h, i, c) in sorted(sums.items()):
        print("%s c2c data=%s site=%s hitm=%d inval=%d copies=%d" % (head, name, site, h, i, c))


if __name__ == "__main__":
    main()
