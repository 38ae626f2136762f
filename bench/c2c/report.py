#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench C2C=1's report: cache-line transfers per operation, by variant and
workload, and the lines that move most, from the raw lines bench.sh collected
(bench/c2c/collect.py).

    report.py <raw.txt> <docdir>

Writes <docdir>/c2c.md and <docdir>/results/c2c.json. Every figure is a mean
over the variant's boots with its range, and the document says what the counts
can and cannot resolve.
"""
import json
import os
import sys
from collections import defaultdict

ORDER = ["stock", "posted", "locked", "pinned", "seqcount", "rwlock",
         "module", "module_nobatch", "module_all", "module_all_packed"]
HOT_WORKLOADS = ["threadspawn", "forkexit"]
HOT_LINES = 8
# x86-64 MODULES_VADDR (the guests boot nokaslr): where module text starts.
MODULES_VADDR = 0xffffffffa0000000
# Static objects every fork or exit writes, named by the issue that asked for
# the transfers of each lock's and shared counter's line.
NAMED = ["css_set_lock", "pidmap_lock", "tasklist_lock", "init_css_set", "nr_threads",
         "total_forks", "init_pid_ns", "init_task"]


def fields(words):
    return dict(w.split("=", 1) for w in words if "=" in w)


def parse(path):
    meta, ops, windows, data = {}, {}, {}, defaultdict(lambda: defaultdict(float))
    with open(path, errors="replace") as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] == "meta":
                meta.update(fields(words[1:]))
                continue
            if words[0] != "bench":
                continue
            f_ = fields(words[1:])
            key = (f_.get("smp"), f_.get("variant"), f_.get("rep"), f_.get("workload"))
            if "result" in words and "ops" in f_:
                ops[key] = int(f_["ops"])
            elif "c2c-window" in words:
                windows[key] = {k: int(f_[k]) for k in
                                ("hitm", "inval", "copies", "evictions", "dropped")}
            elif "c2c" in words:
                d = data[key]
                d[(f_["data"], f_["site"])] += int(f_["hitm"]) + int(f_["inval"])
    return meta, ops, windows, data


def in_module(site):
    """A site in module text: unresolved, at or above x86-64's MODULES_VADDR."""
    try:
        return int(site, 16) >= MODULES_VADDR
    except ValueError:
        return False


def spread(values):
    return {"mean": sum(values) / len(values), "min": min(values), "max": max(values),
            "boots": len(values)}


def fmt(s, digits=2):
    if s["boots"] == 1:
        return f"{s['mean']:.{digits}f} (1 boot)"
    return f"{s['mean']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: report.py <raw.txt> <docdir>")
    meta, ops, windows, data = parse(sys.argv[1])
    docdir = sys.argv[2]
    per_op = defaultdict(list)      # (smp, variant, workload) -> [transfers per op per boot]
    hitm_op = defaultdict(list)
    lost = defaultdict(int)
    for key, w in windows.items():
        n = ops.get(key)
        if not n:
            continue
        smp, v, rep, wl = key
        per_op[(smp, v, wl)].append((w["hitm"] + w["inval"]) / n)
        hitm_op[(smp, v, wl)].append(w["hitm"] / n)
        lost[(smp, v, wl)] += w["evictions"] + w["dropped"]
    if not per_op:
        sys.exit("c2c report: no window with its operations in " + sys.argv[1])
    hot = defaultdict(lambda: defaultdict(list))  # (smp, v, wl) -> (data, site) -> per op
    for key, d in data.items():
        n = ops.get(key)
        if not n:
            continue
        smp, v, rep, wl = key
        for ds, t in d.items():
            hot[(smp, v, wl)][ds].append(t / n)

    smps = sorted({k[0] for k in per_op}, key=int)
    variants = [v for v in ORDER if any(k[1] == v for k in per_op)]
    variants += sorted({k[1] for k in per_op} - set(variants))
    workloads = []
    for k in per_op:
        if k[2] not in workloads:
            workloads.append(k[2])

    # Transfers at the module's own code: a site the kernel's System.map does not
    # cover is printed as its address, and module text sits at MODULES_VADDR and up.
    # Every measured boot of a variant that loads the module counts, one that
    # moved nothing there as 0.
    module_op = defaultdict(list)  # (smp, v, wl) -> [per op per boot]
    for key in windows:
        n = ops.get(key)
        smp, v, rep, wl = key
        if not n or not v.startswith("module"):
            continue
        t = sum(x for (name, site), x in data.get(key, {}).items() if in_module(site))
        module_op[(smp, v, wl)].append(t / n)

    summary = {"meta": meta, "transfers_per_op": {}, "hitm_per_op": {}, "hottest": {},
               "named": {}, "module_sites_per_op": {}}
    for (smp, v, wl), vals in module_op.items():
        summary["module_sites_per_op"].setdefault(smp, {}).setdefault(wl, {})[v] = spread(vals)
    for (smp, v, wl), d in hot.items():
        boots = len(per_op[(smp, v, wl)])
        byname = defaultdict(float)
        for (name, site), x in d.items():
            if name in NAMED:
                byname[name] += sum(x) / boots
        summary["named"].setdefault(smp, {}).setdefault(wl, {})[v] = dict(byname)
    for (smp, v, wl), vals in per_op.items():
        summary["transfers_per_op"].setdefault(smp, {}).setdefault(wl, {})[v] = spread(vals)
        summary["hitm_per_op"].setdefault(smp, {}).setdefault(wl, {})[v] = spread(hitm_op[(smp, v, wl)])
    for (smp, v, wl), d in hot.items():
        boots = len(per_op[(smp, v, wl)])
        # a (data, site) absent from a boot moved nothing there
        rows = sorted(((sum(x) / boots, name, site) for (name, site), x in d.items()), reverse=True)
        summary["hottest"].setdefault(smp, {}).setdefault(wl, {})[v] = [
            {"data": name, "site": site, "per_op": t} for t, name, site in rows[:HOT_LINES]]

    out = ["# Cache-line transfers per operation", "",
           "Generated by `bench/c2c/report.py` from `results/c2c-raw.txt`, the raw lines of",
           f"`make bench C2C=1` of {meta.get('date', '?')} (forkscale {meta.get('commit', '?')}, "
           f"{meta.get('base', '?')}),",
           f"QEMU {meta.get('qemu', '?')} {meta.get('accel', '?').upper()} with "
           f"{meta.get('tcg_thread', '?')}-threaded vCPUs on {meta.get('host_cpus', '?')} host CPUs; "
           "each variant booted on its own.", "",
           f"Kernels booted: {meta.get('kernels', '?').replace(',', ', ')}; variants: "
           f"{', '.join(variants)}; workloads: {', '.join(workloads)}"
           + ("" if {"stock", "posted"} <= set(variants) else
              " (a partial run: stock and the posted kernel were not booted, so no figure here is "
              "against stock)") + ".", "",
           "A transfer is what `perf c2c` counts on hardware, here counted by the `bench/c2c` TCG plugin",
           "over every 64-byte line of guest memory: a HITM (a load of a line another vCPU wrote last)",
           "or an invalidation (a store to a line other vCPUs hold). What the figures resolve:", "",
           "- each is the mean over boots, with the range across them in brackets; a variant with a",
           "  narrower spread than the differences between variants is resolved, one without is not;",
           "- they count how often lines move, not what a move costs: under TCG a transfer costs",
           "  nothing extra, so no throughput follows from them without a per-machine transfer latency;",
           "- how often two vCPUs run the path at once sets them, as it sets the batching counts, and",
           "  TCG interleaves vCPUs differently from hardware: they are figures of this emulator's rate;",
           "- under multi-threaded TCG a load that sees another vCPU's store before that store's plugin",
           "  callback has run is not counted as a HITM (the host test, `tests/host/c2c.sh`, misses",
           "  1 to 11 of 199 on a ping-pong line): the HITM figures are lower bounds;",
           "- lines are attributed to their `System.map` object (static data) or, when no symbol covers",
           "  them (slab objects, per-CPU areas, module data), to the function whose access moved them",
           "  (`heap@function`).", ""]
    # What the plugin lost (line-table evictions and dropped records), per
    # variant against the transfers it counted: a share worth reading is flagged.
    moved = defaultdict(float)
    for key, w in windows.items():
        moved[key[1]] += w["hitm"] + w["inval"]
    lost_v = defaultdict(int)
    for (smp, v, wl), n in lost.items():
        lost_v[v] += n
    out.append("Entries the plugin lost (line-table evictions and dropped records), per variant: "
               + "; ".join(f"{v} {lost_v[v]}" + (" (over 1 % of its transfers: read its figures as lower bounds)"
                                              if moved[v] and lost_v[v] > 0.01 * moved[v] else "")
                           for v in variants) + ".")
    out.append("")
    for smp in smps:
        out += [f"## Transfers per operation, {smp} vCPUs", "",
                "HITMs plus invalidations per operation, mean [min–max] over boots "
                f"({'; '.join(sorted({str(len(v)) for k, v in per_op.items() if k[0] == smp}))} boots).", ""]
        out.append("| workload | " + " | ".join(variants) + " |")
        out.append("| --- |" + " ---: |" * len(variants))
        for wl in workloads:
            cells = []
            for v in variants:
                s = summary["transfers_per_op"][smp].get(wl, {}).get(v)
                cells.append(fmt(s) if s else "–")
            out.append(f"| {wl} | " + " | ".join(cells) + " |")
        out.append("")
        # Which totals the boots resolve from stock's: ranges that do not overlap.
        notes = []
        for wl in workloads:
            row = summary["transfers_per_op"][smp].get(wl, {})
            st = row.get("stock")
            if not st:
                continue
            above = [v for v in variants if v != "stock" and v in row and row[v]["min"] > st["max"]]
            below = [v for v in variants if v != "stock" and v in row and row[v]["max"] < st["min"]]
            if above or below:
                notes.append(f"{wl}: " + "; ".join(
                    ([f"above stock {', '.join(above)}"] if above else [])
                    + ([f"below stock {', '.join(below)}"] if below else [])))
        out += ["Resolved from stock (a range that does not overlap stock's): "
                + (" — ".join(notes) if notes else "none") + ". Every other total is within "
                "stock's range across boots, so not told apart from it by this run.", ""]
        mod = summary["module_sites_per_op"].get(smp, {})
        mod_variants = [v for v in variants if any(v in mod.get(wl, {}) for wl in workloads)]
        if mod_variants:
            out += [f"### The module's own accesses, {smp} vCPUs", "",
                    "Transfers per operation at the module's code (sites in module text), mean",
                    "[min–max] over boots. `module_all_packed` is `module_all` built with its per-CPU",
                    "queues and pid-block holders packed as before they were cache-line aligned",
                    "(`forkscale_packed_percpu`): what it moves beyond `module_all` at the module's",
                    "code is false sharing the alignment removed, and a lower bound of it: the",
                    "per-CPU locks' own words move inside the kernel's `_raw_spin_lock*` and are",
                    "counted there (`heap@_raw_spin_lock*`), not here. Resolved where the two",
                    "ranges over boots do not overlap (3 boots each: by chance alone about one",
                    "time in ten).", ""]
            out.append("| workload | " + " | ".join(mod_variants) + " | packed against aligned |")
            out.append("| --- |" + " ---: |" * len(mod_variants) + " --- |")
            for wl in workloads:
                row = mod.get(wl, {})
                cells = [fmt(row[v]) if v in row else "–" for v in mod_variants]
                a, p = row.get("module_all"), row.get("module_all_packed")
                if a and p and a["max"] == p["max"] == 0:
                    verdict = "none moved"
                elif a and p:
                    verdict = (f"{p['mean'] - a['mean']:+.2f}, resolved" if p["min"] > a["max"]
                               or p["max"] < a["min"] else f"{p['mean'] - a['mean']:+.2f}, not resolved")
                else:
                    verdict = "–"
                out.append(f"| {wl} | " + " | ".join(cells) + f" | {verdict} |")
            out.append("")
        for wl in HOT_WORKLOADS:
            if wl not in workloads:
                continue
            out += [f"### The named objects in {wl}, {smp} vCPUs", "",
                    "Transfers per operation of accesses to the global locks and the static",
                    "objects every fork or exit writes (mean over boots; – where none moved).",
                    "An object is named by the accessed address: a neighbour's access to the",
                    "same line counts for the neighbour, and a large object spans many lines.", ""]
            out.append("| object | " + " | ".join(variants) + " |")
            out.append("| --- |" + " ---: |" * len(variants))
            for name in NAMED:
                cells = []
                for v in variants:
                    t = summary["named"].get(smp, {}).get(wl, {}).get(v, {}).get(name)
                    cells.append(f"{t:.2f}" if t else "–")
                out.append(f"| `{name}` | " + " | ".join(cells) + " |")
            out.append("")
            out += [f"### The lines that move most in {wl}, {smp} vCPUs", "",
                    "Transfers per operation of each (data, site), the busiest first.", ""]
            for v in variants:
                rows = summary["hottest"].get(smp, {}).get(wl, {}).get(v)
                if not rows:
                    continue
                out.append(f"- **{v}**: " + "; ".join(
                    (f"heap at `{r['site']}`" if r["data"] == "heap@" + r["site"]
                     else f"`{r['data']}` at `{r['site']}`") + f" {r['per_op']:.2f}"
                    for r in rows))
            out.append("")
    os.makedirs(os.path.join(docdir, "results"), exist_ok=True)
    with open(os.path.join(docdir, "results", "c2c.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(docdir, "c2c.md"), "w") as f:
        f.write("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
