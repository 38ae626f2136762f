#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per operation from `make bench PATHLEN=1`.

    pathlen.py <raw.txt> <results-dir>
    pathlen.py --render <results-dir>   (pathlen.md from its pathlen.json)

Under QEMU's `-icount shift=0,sleep=off` a guest nanosecond is one executed
instruction, so a workload's ops per guest second are operations per 10^9
instructions, and 10^9 / ops_per_sec is the instructions one operation costs
(the guest's whole path: syscalls, scheduler, the workload's own loop). With one
vCPU nothing contends, so this is the cost of each design where locks are free.

Writes <results-dir>/pathlen.md and pathlen.json. Everything comes from raw.txt.
"""
import json
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit as fitting  # noqa: E402
from projection import LOCKS  # noqa: E402
from results import MIN_BOOTS, VARIANTS, WORKLOADS, parse, plus_minus, resolution  # noqa: E402

# The workloads that run one task per CPU; migrate_pingpong runs one task.
SCALING = ["threadspawn", "forkexit", "clone_processes", "pgrp_exit"]
# The CPU counts the fitted projection reports ratios at.
FIT_CPUS = [20, 40, 128]
# Koutny's bpftrace wait totals per lock (ns), clone_processes on 40 CPUs: a
# check of where the fitted model puts the waiting, not a fitted figure.
KOUTNY_WAIT_NS = {"pidmap_lock": 1931209805, "css_set_lock": 520009479, "tasklist_lock": 127161061}
# A hold of 2^14 instructions or more is far beyond any of these critical
# sections' own code: an interrupt's or softirq's work ran inside it.
LONG_HOLD_LOG2 = 14

def collect(rows):
    """(variant, workload) -> [instructions per op, one per repetition], perf flavour.

    migrate_pingpong waits for grace periods, and with `sleep=off` the idle
    guest's clock jumps ahead, so its elapsed time is not an instruction count:
    it is measured by the migrating task's CPU time instead (bench.h's
    task_cpu_s), which is its whole operation.
    """
    per_op = defaultdict(list)
    for r in rows:
        if r["tag"] != "bench" or r.get("kind") != "result" or r.get("flavour") != "perf":
            continue
        if r["workload"] == "migrate_pingpong":
            if "task_cpu_s" in r and int(r["ops"]) > 0:
                per_op[(r["variant"], r["workload"])].append(float(r["task_cpu_s"]) * 1e9 / int(r["ops"]))
            continue
        rate = float(r["ops_per_sec"])
        if rate > 0:
            per_op[(r["variant"], r["workload"])].append(1e9 / rate)
    return per_op


def collect_holds(rows):
    """(variant, workload) -> {"path": [..], "locks": {(lock, mode): {"acq": [..], "hold": [..]}}}.

    From the lockstat flavour under icount, one entry per repetition: lock_stat's
    hold time in guest nanoseconds is instructions, divided by the operations
    measured. A lock not taken during a repetition counts as zero.
    """
    reps = defaultdict(lambda: {"ops": 0, "rate": 0.0, "locks": {}})
    for r in rows:
        if r["tag"] != "bench" or r.get("flavour") != "lockstat" or "workload" not in r:
            continue
        s = reps[(r["variant"], r["workload"], r["rep"])]
        if r["kind"] == "result":
            s["ops"], s["rate"] = int(r["ops"]), float(r["ops_per_sec"])
            if r["workload"] == "migrate_pingpong" and "task_cpu_s" in r:
                # As in collect(): the migrating task's CPU time, not the idle-inflated clock.
                s["rate"] = s["ops"] / float(r["task_cpu_s"]) if float(r["task_cpu_s"]) > 0 else 0.0
        elif r["kind"] == "lock":
            # lock_stat prints an rwlock taken only for writing as "-", one also read as
            # "W" and "R": "-" and "W" are both exclusive holds, "W" here.
            key = (r["class"], "R" if r["mode"] == "R" else "W")
            acq, hold = s["locks"].get(key, (0, 0.0))
            s["locks"][key] = (acq + int(r["acquisitions"]), hold + float(r["hold_us"]) * 1000)
    out = {}
    keys = {k for s in reps.values() for k in s["locks"]}
    for (v, w, _), s in sorted(reps.items()):
        if not s["ops"] or not s["rate"]:
            continue
        rec = out.setdefault((v, w), {"path": [], "locks": {k: {"acq": [], "hold": []} for k in keys}})
        rec["path"].append(1e9 / s["rate"])
        for key in keys:
            acq, hold = s["locks"].get(key, (0, 0.0))
            rec["locks"][key]["acq"].append(acq / s["ops"])
            rec["locks"][key]["hold"].append(hold / s["ops"])
    return out


def collect_plugin_holds(rows):
    """(variant, workload) -> {"path", "locks", "sites", "anomalies"}, from bench/lockhold.

    The plugin counts, on the perf kernel itself, the instructions executed while
    each lock is held during the measurement (its window), per acquisition site:
    no lockdep, so nothing to scale. Per repetition, divided by the operations the
    same measurement counted. A lock not taken in a window counts as zero.
    """
    ops, windows = {}, defaultdict(lambda: {"holds": [], "anomalies": 0})
    for r in rows:
        if r["tag"] != "bench" or r.get("flavour") != "perf" or "workload" not in r:
            continue
        key = (r["variant"], r["workload"], r["rep"])
        if r["kind"] == "result":
            rate = float(r["ops_per_sec"])
            ops[key] = (int(r["ops"]), 1e9 / rate if rate > 0 else 0.0)
        elif r["kind"] == "lockhold-window":
            windows[key]["anomalies"] += int(r["anomalies"]) + int(r["dropped"])
            windows[key]["seen"] = True
        elif r["kind"] == "lockhold":
            windows[key]["holds"].append(r)
    out = {}
    lock_keys = {(h["lock"], "R" if h["mode"] == "shared" else "W")
                 for win in windows.values() for h in win["holds"]}
    site_keys = {(h["lock"], "R" if h["mode"] == "shared" else "W", h["site"])
                 for win in windows.values() for h in win["holds"]}
    for (v, w, rep), win in sorted(windows.items()):
        n, path = ops.get((v, w, rep), (0, 0.0))
        if not win.get("seen") or not n:
            continue
        rec = out.setdefault((v, w), {
            "path": [], "anomalies": 0,
            "locks": {k: {} for k in lock_keys},
            "sites": {k: {} for k in site_keys}})
        rec["path"].append(path)
        rec["anomalies"] += win["anomalies"]
        per_lock, per_site = defaultdict(lambda: [0, 0, 0, 0]), defaultdict(lambda: [0, 0, 0, 0])
        for h in win["holds"]:
            mode = "R" if h["mode"] == "shared" else "W"
            long_n = long_sum = 0
            for b in h.get("log2", "-").split(","):
                if b != "-" and int(b.split(":")[0]) >= LONG_HOLD_LOG2:
                    long_n += int(b.split(":")[1])
                    long_sum += int(b.split(":")[2])
            for acc in (per_lock[(h["lock"], mode)], per_site[(h["lock"], mode, h["site"])]):
                acc[0] += int(h["count"])
                acc[1] += int(h["sum"])
                acc[2] += long_n
                acc[3] += long_sum
        for table, acc in ((rec["locks"], per_lock), (rec["sites"], per_site)):
            for k, f in table.items():
                a = acc.get(k, [0, 0, 0, 0])
                for i, name in enumerate(("acq", "hold", "long_acq", "long_hold")):
                    f.setdefault(name, []).append(a[i] / n)
    return out


def summarise_plugin_holds(holds, summary):
    """summarise_holds()'s records from the plugin's counts: holds are the perf
    kernel's own instructions, so *scaled* is the hold itself."""
    out = {}
    for (v, w), rec in holds.items():
        path = statistics.median(rec["path"])
        perf = summary.get(w, {}).get(v, {}).get("median") or path

        def budget(xs):
            hold = statistics.median(xs["hold"])
            acq = statistics.median(xs["acq"])
            return {"acquisitions": acq, "hold": hold,
                    "long_acquisitions": statistics.median(xs["long_acq"]),
                    "long_hold": statistics.median(xs["long_hold"]),
                    "hold_spread": resolution(xs["hold"]),
                    "per_acquisition": hold / acq if acq else None,
                    "reps": len(xs["hold"]), "share": hold / perf, "scaled": hold}
        out.setdefault(w, {})[v] = {
            "source": "lockhold", "path_lockstat": None, "path_perf": perf,
            "anomalies": rec["anomalies"],
            "locks": {f"{lock}/{mode}": budget(xs) for (lock, mode), xs in sorted(rec["locks"].items())},
            "sites": {f"{lock}/{mode} {site}": budget(xs)
                      for (lock, mode, site), xs in sorted(rec["sites"].items())},
        }
    return out


def spread_cell(x):
    """A hold's resolution for a table: none from fewer than MIN_BOOTS boots."""
    return f"? (< {MIN_BOOTS} boots)" if x is None else f"{x * 100:.0f} %"


def summarise(per_op):
    out = {}
    for (v, w), xs in per_op.items():
        out.setdefault(w, {})[v] = {
            "median": statistics.median(xs), "min": min(xs), "max": max(xs),
            "n": len(xs), "spread": resolution(xs),
        }
    for w, by_v in out.items():
        stock = by_v.get("stock")
        for v, rec in by_v.items():
            if not stock or v == "stock":
                continue
            # Difference from stock, with the two resolutions added as its uncertainty:
            # none unless both come from MIN_BOOTS boots or more.
            rec["vs_stock"] = rec["median"] / stock["median"] - 1
            rec["uncertainty"] = (None if rec["spread"] is None or stock["spread"] is None
                                  else rec["spread"] + stock["spread"])
            rec["boots"] = min(rec["n"], stock["n"])
    return out



def summarise_holds(holds, summary):
    """workload -> variant -> hold budget of each lock, medians over repetitions.

    hold is in instructions per operation on the lockstat kernel; scaled
    multiplies it by perf path / lockstat path, assuming lock_stat's bookkeeping
    inflates the work inside and outside the locks alike; share is the fraction
    of the operation's instructions spent holding the lock.
    """
    out = {}
    for (v, w), rec in holds.items():
        path = statistics.median(rec["path"])
        perf = summary.get(w, {}).get(v, {}).get("median")
        locks = {}
        for (lock, mode), xs in sorted(rec["locks"].items()):
            hold = statistics.median(xs["hold"])
            locks[f"{lock}/{mode}"] = {
                "acquisitions": statistics.median(xs["acq"]), "hold": hold,
                "hold_spread": resolution(xs["hold"]),
                "reps": len(xs["hold"]),
                "share": hold / path,
                "scaled": hold * perf / path if perf else None,
            }
        out.setdefault(w, {})[v] = {"path_lockstat": path, "path_perf": perf, "locks": locks}
    return out


def exclusive_share(locks, lock):
    """The share of an operation spent holding @lock exclusively, or None if never held."""
    rec = locks.get(f"{lock}/W")
    return rec["share"] if rec else None


def fit_record(budgets):
    """bench/fit.py's fit, the band it gives each variant, and where it puts the waiting."""
    f = fitting.fit(budgets)
    if f is None:
        return None
    f["bands"] = {}
    for w in SCALING:
        for v in VARIANTS:
            if v == "stock" or fitting.variant_inputs(budgets, w, v) is None:
                continue
            b = {str(n): fitting.band(budgets, f["fits"], w, v, n) for n in FIT_CPUS}
            if all(b.values()):
                f["bands"].setdefault(w, {})[v] = b
    best = f["best"]
    f["waits"] = fitting.most_waited(budgets, "clone_processes", "locked", 40, best["transfer"], best["lines"])
    return f


# The first row of the table of dropped terms.
DROP_FIRST = "no transfer (projection.py alone)"

# Issue 37: no variant may add more than this to threadspawn's or forkexit's instructions per
# op, and with both of its takeovers on (`module_all`), to no workload's.
PATH_RULE = 0.01
PATH_RULE_WORKLOADS = ("threadspawn", "forkexit")
PATH_RULE_VARIANT = "module_all"


def rule_verdict(diffs):
    """The rule over [(difference, workload, variant, record)], each difference judged with its
    spread: above the rule only if its low end is, within it only if its high end is."""
    if any(r["uncertainty"] is None for *_, r in diffs):
        return f"**not judged**: from fewer than {MIN_BOOTS} boots per kernel"
    name = lambda d: f"{d[2]} on {d[1]}, {d[0] * 100:+.2f} % {plus_minus(d[3]['uncertainty'], d[3]['boots'])}"  # noqa: E731
    over = [d for d in diffs if d[0] - d[3]["uncertainty"] > PATH_RULE]
    unresolved = [d for d in diffs if d[0] - d[3]["uncertainty"] <= PATH_RULE < d[0] + d[3]["uncertainty"]]
    if over:
        return "**missed**: above it beyond the spread: " + "; ".join(map(name, over))
    if unresolved:
        return ("**not resolved** at this run's resolution: the spread straddles the rule for "
                + "; ".join(map(name, unresolved)))
    worst = max(diffs, key=lambda d: d[0] + d[3]["uncertainty"])
    return f"**met**: the nearest is {name(worst)}"


def path_rule(summary):
    """Issue 37's path-length rule, every variant on its two workloads, and the variant with
    both of its takeovers on every workload."""
    lines = []
    every = [(rec["vs_stock"], w, v, rec) for w in PATH_RULE_WORKLOADS
             for v, rec in (summary.get(w) or {}).items() if "vs_stock" in rec]
    if every:
        lines += [f"No variant more than {PATH_RULE * 100:.0f} % above stock on "
                  f"{' or '.join(PATH_RULE_WORKLOADS)} (issue 37): {rule_verdict(every)}.", ""]
    full = [(rec["vs_stock"], w, PATH_RULE_VARIANT, rec) for w, by_v in summary.items()
            for rec in [by_v.get(PATH_RULE_VARIANT) or {}] if "vs_stock" in rec]
    if full:
        lines += [f"With both of issue 37's takeovers on (`{PATH_RULE_VARIANT}`), no workload more "
                  f"than {PATH_RULE * 100:.0f} % above stock: {rule_verdict(full)}.", ""]
    return lines


def pct(x):
    return f"{(x - 1) * 100:+.1f} %"


def rate_range(fitted):
    rates = [r for r in fitted["rates"] if r]
    return (min(rates), max(rates)) if rates else (None, None)


def verdict(fitted):
    """Whether one parameter set reproduces the published figures, computed from the fit."""
    if not fitted:
        return ("**Verdict: not fitted**: this run lacks a variant the published figures "
                "compare, so no claim rests on the projection.")
    best = fitted["best"]
    res = ", ".join(f"{r:+.1f}" for r in best["residuals"])
    if not fitted["fits"]:
        return (f"**Verdict: no single parameter set reproduces the published figures within "
                f"{fitting.FIT_SIGMAS:.0f} sigma**, so the projection is reported and no claim rests "
                f"on it. The best set (transfer {best['transfer']:.0f} instructions, "
                f"{best['lines']:g} lines) leaves residuals of {res} sigma.")
    lo, hi = rate_range(fitted)
    plausible = [r for r in fitted["rates"] if r and r <= fitting.RATE_MAX]
    waits = fitted.get("waits") or {}
    where = ""
    if waits and max(waits, key=waits.get) != max(KOUTNY_WAIT_NS, key=KOUTNY_WAIT_NS.get):
        top = max(waits, key=waits.get)
        where = (f"; and the best set puts {waits[top] * 100:.0f} % of clone_processes' waiting at "
                 f"40 CPUs on {top}, where Koutný's bpftrace puts most on "
                 f"{max(KOUTNY_WAIT_NS, key=KOUTNY_WAIT_NS.get)}")
    cost = [t * (1 + m) for t, m in fitted["fits"]]
    head = (f"{len(fitted['fits'])} parameter sets reproduce the four ratios within "
            f"{fitting.FIT_SIGMAS:.0f} sigma (an exclusive acquisition costing {min(cost):.0f}–"
            f"{max(cost):.0f} instructions of transfers; the best leaves {res} sigma)")
    if not plausible:
        return (f"**Verdict: the ratios fit, the published level does not, so the projection is "
                f"reported and no claim rests on it**: {head}, but each needs one CPU to retire "
                f"{lo / 1e9:.1f}–{hi / 1e9:.1f}×10^9 instructions per second to put stock on the "
                f"seed's 740k, more than the {fitting.RATE_MAX / 1e9:.0f}×10^9 such a CPU can{where}.")
    if where:
        return (f"**Verdict: the ratios fit, where the waiting goes does not, so the projection is "
                f"reported and no claim rests on it**: {head}{where}.")
    return (f"**Verdict: one parameter set fits every published figure, so the projection can be "
            f"used as a rough guide, within its band**: {head}; "
            f"{len(plausible)} of them at a plausible instruction rate.")


def fit_lines(fitted):
    """pathlen.md's section on the fit: figures, residuals, dropped terms, bands."""
    if not fitted:
        return ["## The projection fitted to the published figures", "", verdict(fitted), ""]
    best = fitted["best"]
    L = ["## The projection fitted to the published figures (a model, not a measurement)", "",
         "`bench/fit.py` adds to the queueing model of `bench/projection.py` a cost for moving "
         "cache lines between CPUs: *transfer* instructions per line, charged at every atomic "
         "acquisition (exclusive or shared) with probability 1 - 1/n at n CPUs, and *lines* "
         "more lines per exclusive critical section. Each published figure is a ratio of two "
         "kernels on one machine, so the machine's instruction rate cancels; our variants' path "
         "lengths and holds stand in for the published kernels'. A grid search "
         f"(transfer 0–{fitting.TRANSFERS[-1]} instructions, lines 0–{fitting.LINES[-1]:g}) "
         f"keeps every set whose residuals are all within {fitting.FIT_SIGMAS:.0f} sigma. "
         "The holds are stock 7.3's on this run's perf kernels, not the published kernels' "
         "(6.18 and 6.19 bases, distribution configs). The model's other assumptions are in "
         "`bench/projection.py`: no hold grows under contention but by these transfers, the "
         "locks are independent, and the work outside them scales perfectly.", "",
         "| published figure | by | workload, CPUs | published | its spread | best fit | residual |",
         "| --- | --- | --- | ---: | --- | ---: | ---: |"]
    for p, x, r in zip(fitting.PUBLISHED, best["predicted"], best["residuals"]):
        pub = pct(p["low"]) if p["low"] == p["high"] else f"{pct(p['low'])} to {pct(p['high'])}"
        L.append(f"| {p['name']} | {p['who']} | {p['workload']}, {p['cpus']} | {pub} | {p['spread']} "
                 f"| {pct(x)} | {r:+.1f} σ |")
    L += ["", f"Best set: transfer {best['transfer']:.0f} instructions, {best['lines']:g} dirtied "
          f"lines, χ² {best['chi2']:.1f} over {len(fitting.PUBLISHED)} figures."]
    if fitted["fits"]:
        lo, hi = rate_range(fitted)
        ts = [t for t, _ in fitted["fits"]]
        ms = [m for _, m in fitted["fits"]]
        cost = [t * (1 + m) for t, m in fitted["fits"]]
        ns = [c / r * 1e9 for c, r in zip(cost, fitted["rates"]) if r]
        edge = [f"{name} reaches the grid's edge ({top:g}), so its range is open there"
                for name, xs, top in (("transfer", ts, fitting.TRANSFERS[-1]), ("lines", ms, fitting.LINES[-1]))
                if max(xs) >= top]
        L += ["", f"{len(fitted['fits'])} sets fit. They lie on a ridge: a larger transfer cost with "
              "fewer dirtied lines gives the same ratios, so the figures tell apart only the cost of "
              f"an exclusive acquisition, transfer × (1 + lines): {min(cost):.0f}–{max(cost):.0f} "
              f"instructions (transfer {min(ts):g}–{max(ts):g}, lines {min(ms):g}–{max(ms):g}"
              + ("; " + "; ".join(edge) if edge else "") + "). Putting stock's projection on the "
              f"seed's 740k at 20 cores takes {lo / 1e9:.1f}–{hi / 1e9:.1f}×10^9 instructions per "
              f"second per CPU along the ridge, which makes that acquisition {min(ns):.0f}–{max(ns):.0f} "
              "ns (the upstream notes estimate 400–600 ns per contended acquisition). The time "
              "is pinned better than either factor, as both come from the same fit."]
    L += ["", "**Dropping a term** (fitted again with it held at zero):", "",
          "| model | best transfer | best lines | χ² | residuals (σ) | fits |",
          "| --- | ---: | ---: | ---: | --- | --- |"]
    # fit.py's order; a pathlen.json sorts its keys
    for name, d in sorted(fitted["dropped"].items(), key=lambda kv: kv[0] != DROP_FIRST):
        L.append(f"| {name} | {d['transfer']:.0f} | {d['lines']:g} | {d['chi2']:.1f} | "
                 + ", ".join(f"{r:+.1f}" for r in d["residuals"]) + f" | {'yes' if d['fits'] else 'no'} |")
    L.append(f"| both terms | {best['transfer']:.0f} | {best['lines']:g} | {best['chi2']:.1f} | "
             + ", ".join(f"{r:+.1f}" for r in best["residuals"])
             + f" | {'yes' if fitted['fits'] else 'no'} |")
    if fitted["waits"]:
        pub_total = sum(KOUTNY_WAIT_NS.values())
        pub = ", ".join(f"{k} {x / pub_total * 100:.0f} %" for k, x in KOUTNY_WAIT_NS.items())
        prj = ", ".join(f"{k} {x * 100:.0f} %" for k, x in
                        sorted(fitted["waits"].items(), key=lambda kv: -kv[1]) if x >= 0.005)
        L += ["", f"Where the waiting goes, `locked` clone_processes at 40 CPUs (not fitted): "
              f"Koutný's bpftrace {pub}; the best set {prj}."]
    if fitted["fits"] and fitted["bands"]:
        L += ["", "**Each variant against stock, over the sets that fit** (low to high; a model of "
              "the locks alone, not a measurement):", "",
              "| workload | variant | " + " | ".join(f"{n} CPUs" for n in FIT_CPUS) + " |",
              "| --- | --- |" + " ---: |" * len(FIT_CPUS)]
        for w in [w for w in SCALING if w in fitted["bands"]]:
            by_v = fitted["bands"][w]
            for v in VARIANTS:
                b = by_v.get(v)
                if b:
                    L.append(f"| {w} | {v} | " + " | ".join(
                        f"{pct(b[str(n)][0])} to {pct(b[str(n)][1])}" for n in FIT_CPUS) + " |")
    return L + ["", verdict(fitted), ""]


def lock_order(name):
    lock = name.split("/")[0]
    return ((list(LOCKS) + [lock]).index(lock), name)


def plugin_lines(budgets):
    """pathlen.md's hold tables from bench/lockhold's counts."""
    lines = [
        "## Lock hold path lengths (lockhold plugin, perf flavour)",
        "",
        "Per operation, for each global lock: acquisitions, and the instructions executed while "
        "it is held, counted by a QEMU plugin (`bench/lockhold`) on the perf kernel itself during "
        "the same measurements as the table above: no lockdep, no `LOCK_STAT`, nothing scaled. "
        "A hold runs from the instruction after the one that takes the lock to the one that "
        "drops it, interrupts included. *per acq* is the mean hold of one acquisition; *share* "
        "is the hold over the operation's path length. A lock held for a share *h* of every "
        "operation caps the whole machine at 1/*h* CPUs' worth of operations. `/W` is an "
        "exclusive hold (a spinlock, or an rwlock's write side), `/R` an rwlock's read side. "
        "The plugin's exactness is checked by `tests/host/lockhold.sh` in `make check`; a spread "
        "of – is from one boot.",
        "",
    ]
    for w in WORKLOADS:
        by_v = budgets.get(w)
        if not by_v:
            continue
        names = sorted({n for rec in by_v.values() for n, f in rec["locks"].items() if f["acquisitions"]},
                       key=lock_order)
        anomalies = sum(rec["anomalies"] for rec in by_v.values())
        lines += [f"### {w}", "", "| variant | path | " + " | ".join(
            f"{n}: acq / hold ± spread / per acq / share" for n in names) + " |",
            "| --- | ---: |" + " ---: |" * len(names)]
        for v in VARIANTS:
            rec = by_v.get(v)
            if not rec:
                continue
            cells = []
            for n in names:
                f = rec["locks"].get(n)
                cells.append("–" if not f or not f["acquisitions"] else
                             f"{f['acquisitions']:.2f} / {f['hold']:.0f} ± {spread_cell(f['hold_spread'])} / "
                             f"{f['per_acquisition']:.0f} / {f['share'] * 100:.2f} %")
            lines.append(f"| {v} | {rec['path_perf']:.0f} | " + " | ".join(cells) + " |")
        lines += ["", f"Stores to a lock word that fit no take or drop (anomalies): {anomalies}.", "",
                  "By site (the function that took the lock; at least 0.01 acquisitions per operation). "
                  f"*long* are the holds of 2^{LONG_HOLD_LOG2} instructions or more, far beyond the "
                  "critical sections' own code: an interrupt's work ran inside them. Per operation, "
                  "how many, and the instructions they hold.", "",
                  "| variant | lock | site | acq/op | hold/op | per acq | long acq/op | long hold/op |",
                  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for v in VARIANTS:
            rec = by_v.get(v)
            if not rec:
                continue
            for name, f in sorted(rec["sites"].items(), key=lambda kv: (lock_order(kv[0].split()[0]), kv[0])):
                if f["acquisitions"] < 0.01:
                    continue
                lock, site = name.split(" ", 1)
                lines.append(f"| {v} | {lock} | `{site}` | {f['acquisitions']:.2f} | {f['hold']:.0f} | "
                             f"{f['per_acquisition']:.0f} | {f['long_acquisitions']:.4f} | "
                             f"{f['long_hold']:.0f} |")
        lines.append("")
    return lines


def pidmap_sides(rec):
    """pidmap_lock's alloc side (alloc_pid) and free side (every other site) of one
    variant: per operation, acquisitions, hold, and the long holds' share of it."""
    sides = {"alloc": [0.0, 0.0, 0.0, 0.0], "free": [0.0, 0.0, 0.0, 0.0]}
    for name, f in rec.get("sites", {}).items():
        lock, site = name.split(" ", 1)
        if lock != "pidmap_lock/W":
            continue
        acc = sides["alloc" if site == "alloc_pid" else "free"]
        for i, k in enumerate(("acquisitions", "hold", "long_acquisitions", "long_hold")):
            acc[i] += f[k]
    return sides


def explanations(summary, budgets):
    """pathlen.md's reading of the plugin's holds: the two questions the
    lockstat figures left open, answered from this run's numbers."""
    lines = ["## What the holds explain", ""]
    for w in WORKLOADS:
        by_v = budgets.get(w, {})
        for v in ("stock", "locked"):
            if v not in by_v:
                continue
            sides = pidmap_sides(by_v[v])
            (aa, ah, al, alh), (fa, fh, fl, flh) = sides["alloc"], sides["free"]
            if not aa or not fa:
                continue
            short = (fh - flh) / (fa - fl) if fa > fl else 0.0
            lines.append(
                f"- **{w}, {v}: pidmap_lock's free side against its alloc side.** The alloc side "
                f"(`alloc_pid`) holds it {ah / aa:.0f} instructions per acquisition, the free side "
                f"{fh / fa:.0f}. Holds of 2^{LONG_HOLD_LOG2} instructions or more, with an "
                f"interrupt's work inside: {fl:.4f} per operation on the free side, carrying "
                f"{flh / fh * 100 if fh else 0:.0f} % of its hold, and {al:.4f} on the alloc side. "
                f"Without them the free side holds {short:.0f} per acquisition.")
    ratios = [(w, sides["alloc"][1] / sides["alloc"][0] / (sides["free"][1] / sides["free"][0]))
              for w in WORKLOADS if "stock" in budgets.get(w, {})
              for sides in [pidmap_sides(budgets[w]["stock"])]
              if sides["alloc"][0] and sides["free"][0] and sides["free"][1]]
    if ratios:
        lo, hi = min(r for _, r in ratios), max(r for _, r in ratios)
        lines.append(
            f"- **So pidmap_lock's free side is not the longer one, on stock.** Per acquisition, the "
            f"alloc side holds it {lo:.1f} to {hi:.1f} times as long as the free side (medians over "
            "the boots), in every workload, threads (`CLONE_VM`) and processes alike. The earlier "
            "figure of a free side four times the alloc side in the `CLONE_VM` workloads was not a "
            "per-site measurement: lock_stat gives one hold per lock, and it was stock's hold less "
            "the module's, taken as the free side on the premise that the module leaves "
            "`alloc_pid()` as it is. The plugin shows that premise false (below), and lock_stat's "
            "bookkeeping inflated the holds too; this run cannot tell the two apart.")
    for w in ("threadspawn", "forkexit"):
        by_v, perf = budgets.get(w, {}), summary.get(w, {})
        base = "stock" if "stock" in by_v else "locked"
        if base not in by_v or "module" not in by_v or base not in perf or "module" not in perf:
            continue
        d_path = perf["module"]["median"] - perf[base]["median"]
        both = (None if perf["module"]["spread"] is None or perf[base]["spread"] is None
                else perf["module"]["spread"] + perf[base]["spread"])
        parts = []
        for n in sorted(set(by_v[base]["locks"]) | set(by_v["module"]["locks"]), key=lock_order):
            a, b = by_v[base]["locks"].get(n), by_v["module"]["locks"].get(n)
            if not a or not b or not (a["acquisitions"] or b["acquisitions"]):
                continue
            parts.append(f"{n} {b['hold'] - a['hold']:+.0f} ({b['acquisitions'] - a['acquisitions']:+.2f} "
                         "acquisitions)")
        alloc = {v: pidmap_sides(by_v[v])["alloc"] for v in (base, "module", "module_nobatch") if v in by_v}
        per_alloc = {v: a[1] / a[0] for v, a in alloc.items() if a[0]}
        why = ""
        if "module" in per_alloc and base in per_alloc:
            why = (f" Within them, `alloc_pid` holds pidmap_lock {per_alloc['module']:.0f} instructions per "
                   f"fork under the module, against {per_alloc[base]:.0f} on {base}")
            if "module_nobatch" in per_alloc:
                why += (f" and {per_alloc['module_nobatch']:.0f} under the module with batching off "
                        "(`module_nobatch`): it is the batching, not the module's code, that makes a "
                        "pid's allocation cheaper. With one task, stock frees the only live pid in its "
                        "IDR leaf at each exit, and the IDR likely frees that leaf node, to allocate one "
                        "again at the next fork; pids waiting in a batch keep the node alive. That "
                        "mechanism is not measured here. If it is the cause, a machine with many live "
                        "pids would likely not see the saving, and the module's projection below, "
                        "which uses this hold, overstates it")
            why += "."
        lines.append(
            f"- **{w}: the module against {base}.** Its path differs by {d_path:+.0f} instructions per "
            f"operation ({d_path / perf[base]['median'] * 100:+.2f} %, resolution "
            f"{plus_minus(both, min(perf['module']['n'], perf[base]['n']))}). The holds per operation "
            f"differ by: " + ", ".join(parts) + "." + why)
    return lines + [""]


def boot_args(meta):
    """The arguments the bench added to every boot; runs before they were recorded added none."""
    args = meta.get("boot_args", "none")
    return [] if args == "none" else args.split(",")


def markdown(meta, summary, budgets, fitted):
    lines = [
        "# Path length, lock hold budgets and a scaling projection",
        "",
        "Generated by `make bench PATHLEN=1` (`bench/pathlen.py`, `bench/projection.py`, `bench/fit.py`); do not edit.",
        "",
        "| | |",
        "| --- | --- |",
        f"| date | {meta.get('date', '?')} |",
        f"| base | {meta.get('base', '?')} |",
        f"| commit | {meta.get('commit', '?')} |",
        f"| accelerator | {meta.get('accel', '?')}, 1 vCPU, `-icount shift=0,sleep=off,align=off` |",
        f"| kernel arguments added | {' '.join(f'`{a}`' for a in boot_args(meta)) or 'none'} |",
        f"| repetitions | {meta.get('reps', '?')} boots per perf kernel"
        f"{' and series variant' if meta.get('boot_per_variant') == '1' else ''}, "
        f"{meta.get('lock_reps', '?')} per lockstat kernel, {meta.get('secs', '?')} s per workload after "
        "a discarded warm-up pass |",
        "",
        "One guest nanosecond is one instruction, so these are instruction counts, not times: "
        "they do not depend on the host's load. Spread is half the min-max range over the "
        "repetitions; the difference from stock carries the two spreads added. Fewer than "
        f"{MIN_BOOTS} boots establish no spread, and then neither has one. Each workload "
        "run starts allocating pids after 1000 (`ns_last_pid`), because what a pid costs "
        "depends on where the pid IDR's cursor is." + (
            " Every boot has `norandmaps`: with exec's layout randomised, how many page-table "
            "pages a process needs varies from boot to boot, for every kernel alike."
            if "norandmaps" in boot_args(meta) else "") + (
            " Each series variant boots on its own, as stock and posted do: in one boot of "
            "seven variants, the memcg object stock's functions cost forkexit about 2200 "
            "instructions per op more after the second variant, and as much again after the "
            "fifth (`Documentation/results/pathprof-forkexit.txt`, from `bench/pathprof`)."
            if meta.get("boot_per_variant") == "1" else ""),
        "",
        "`migrate_pingpong` waits for RCU grace periods, and with `sleep=off` an idle guest's "
        "clock jumps to its next timer, so its elapsed time is not an instruction count. Its "
        "figure is the migrating task's own CPU time per migration (the `write()` to "
        "`cgroup.procs` and everything it runs), which leaves out the work that RCU callbacks "
        "and kworkers do later.",
        "",
        "## Instructions per operation (perf flavour)",
        "",
    ]
    for w in WORKLOADS:
        by_v = summary.get(w)
        if not by_v:
            continue
        lines += [f"### {w}", "", "| variant | instructions/op | spread | vs stock |",
                  "| --- | ---: | ---: | ---: |"]
        for v in VARIANTS:
            rec = by_v.get(v)
            if not rec:
                continue
            diff = "" if "vs_stock" not in rec else \
                f"{rec['vs_stock'] * 100:+.2f} % {plus_minus(rec['uncertainty'], rec['boots'])}"
            lines.append(f"| {v} | {rec['median']:.0f} | {plus_minus(rec['spread'], rec['n'])} | {diff} |")
        lines.append("")
    lines += path_rule(summary)
    plugin = any(rec.get("source") == "lockhold" for by_v in budgets.values() for rec in by_v.values())
    if plugin:
        lines += plugin_lines(budgets) + explanations(summary, budgets)
    elif budgets:
        lines += [
            "## Lock hold budgets (lockstat flavour)",
            "",
            "Per operation, for each global lock: acquisitions, and the instructions spent holding "
            "it, from `/proc/lock_stat` on the lockstat flavour (perf plus `LOCK_STAT`, no "
            "`PROVE_LOCKING`, no KASAN) under the same icount. *share* is the hold over the "
            "lockstat kernel's own path length. A lock held for a share *h* of every operation "
            "caps the whole machine at 1/*h* CPUs' worth of operations, however many CPUs it has. "
            "`/W` is an exclusive hold (a spinlock, or an rwlock's write side), `/R` an rwlock's "
            "read side. A spread of – is from one boot, which measures none.",
            "",
            "lock_stat's bookkeeping runs inside the critical sections too, so the holds are "
            "inflated; the projection below scales them by the perf path length over the lockstat "
            "one, which assumes the inflation is proportional.",
            "",
        ]
        for w in WORKLOADS:
            by_v = budgets.get(w)
            if not by_v:
                continue
            names = sorted({n for rec in by_v.values() for n, f in rec["locks"].items()
                            if any(r["locks"].get(n, {}).get("acquisitions") for r in by_v.values())},
                           key=lambda n: ((list(LOCKS) + [n]).index(n.split("/")[0]), n))
            lines += [f"### {w}", "", "| variant | path (lockstat) | " + " | ".join(
                f"{n}: acq / hold ± spread / share" for n in names) + " |",
                "| --- | ---: |" + " ---: |" * len(names)]
            for v in VARIANTS:
                rec = by_v.get(v)
                if not rec:
                    continue
                cells = []
                for n in names:
                    f = rec["locks"].get(n)
                    cells.append("–" if not f or not f["acquisitions"] else
                                 f"{f['acquisitions']:.2f} / {f['hold']:.0f} ± {spread_cell(f['hold_spread'])} / "
                                 f"{f['share'] * 100:.2f} %")
                lines.append(f"| {v} | {rec['path_lockstat']:.0f} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += fit_lines(fitted)
    return "\n".join(lines)


def render(outdir):
    """pathlen.md again from the committed pathlen.json, for a change of the report alone."""
    with open(os.path.join(outdir, "pathlen.json")) as f:
        d = json.load(f)
    with open(os.path.join(outdir, "pathlen.md"), "w") as f:
        f.write(markdown(d["meta"], d["instructions_per_op"], d["hold_budgets"], d["fit"]) + "\n")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--render":
        render(sys.argv[2])
        return
    if len(sys.argv) != 3:
        sys.exit("usage: pathlen.py <raw.txt> <results-dir> | pathlen.py --render <results-dir>")
    raw, outdir = sys.argv[1:]
    meta, rows = parse(raw)
    summary = summarise(collect(rows))
    if not summary:
        sys.exit("pathlen: no workload results in " + raw)
    # The plugin's holds where the run has them (PATHLEN=1 with bench/lockhold);
    # the lockstat flavour's, scaled, only for raw files from before it.
    budgets = summarise_plugin_holds(collect_plugin_holds(rows), summary) or \
        summarise_holds(collect_holds(rows), summary)
    fitted = fit_record(budgets)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "pathlen.json"), "w") as f:
        json.dump({"meta": meta, "instructions_per_op": summary, "hold_budgets": budgets,
                   "fit": fitted}, f, indent=1, sort_keys=True)
    with open(os.path.join(outdir, "pathlen.md"), "w") as f:
        f.write(markdown(meta, summary, budgets, fitted) + "\n")


if __name__ == "__main__":
    main()
