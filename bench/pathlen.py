#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per operation from `make bench PATHLEN=1`.

    pathlen.py <raw.txt> <results-dir>

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
from projection import LOCKS, bottleneck, project  # noqa: E402
from results import COLORS, VARIANTS, WORKLOADS, parse  # noqa: E402
from svg import svg_frame  # noqa: E402

# The CPU counts the projection reports, and the published figures it is checked
# against (Documentation/review-notes.rst and shared upstream notes give the
# threads): seed 000's thread creations on 20 cores, before and after its
# seqcount read; Koutny's clone_processes on 40 CPUs, every variant on a base
# with pidmap patches, and his bpftrace wait totals per lock (ns) there.
CPUS = [1, 2, 4, 8, 16, 20, 32, 40, 64, 80, 128]
# The workloads that run one task per CPU; migrate_pingpong runs one task.
SCALING = ["threadspawn", "forkexit", "clone_processes", "pgrp_exit"]
MAX_CPUS = 128
SEED = {"workload": "threadspawn", "cpus": 20, "stock": 740e3, "seqcount": 790e3}
KOUTNY = {"workload": "clone_processes", "cpus": 40, "base": "locked",
          "ops": {"locked": 2.9383e5, "rwlock": 2.9363e5, "seqcount": 2.9147e5},
          "wait_ns": {"pidmap_lock": 1931209805, "css_set_lock": 520009479, "tasklist_lock": 127161061}}
# A hold of 2^14 instructions or more is far beyond any of these critical
# sections' own code: an interrupt's or softirq's work ran inside it.
LONG_HOLD_LOG2 = 14
# Extra instructions per exclusive acquisition for moving the lock's cache lines
# to the next holder, as a sensitivity case: about 100 ns at 2e9 instructions/s.
HANDOFFS = [0, 200]


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
                    "hold_spread": spread(xs["hold"]) if len(xs["hold"]) > 1 else None,
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


def spread(xs):
    """Half the min-max range, relative to the median: the repetitions' agreement."""
    med = statistics.median(xs)
    return (max(xs) - min(xs)) / 2 / med if med else 0.0


def spread_cell(x):
    """A spread for a table: none from a single repetition."""
    return "–" if x is None else f"{x * 100:.0f} %"


def summarise(per_op):
    out = {}
    for (v, w), xs in per_op.items():
        out.setdefault(w, {})[v] = {
            "median": statistics.median(xs), "min": min(xs), "max": max(xs),
            "n": len(xs), "spread": spread(xs),
        }
    for w, by_v in out.items():
        stock = by_v.get("stock")
        for v, rec in by_v.items():
            if not stock or v == "stock":
                continue
            # Difference from stock, with the two spreads added as its uncertainty.
            rec["vs_stock"] = rec["median"] / stock["median"] - 1
            rec["uncertainty"] = rec["spread"] + stock["spread"]
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
                # One boot (QUICK=1) has no spread to show: it measures no repeatability.
                "hold_spread": spread(xs["hold"]) if len(xs["hold"]) > 1 else None,
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


def model_inputs(rec):
    """(path, holds, acquisitions) for projection.py, from a summarise_holds record."""
    holds, acq = {}, {}
    for name, f in rec["locks"].items():
        lock, mode = name.split("/")
        if f["scaled"] is not None:
            holds[(lock, mode)] = f["scaled"]
            acq[(lock, mode)] = f["acquisitions"]
    return rec["path_perf"], holds, acq


def projections(budgets):
    """workload -> handoff -> variant -> {"cpus": {n: ops per 10^9 instructions}, ...}."""
    out = {}
    for w, by_v in budgets.items():
        if w not in SCALING:
            continue
        for handoff in HANDOFFS:
            for v, rec in by_v.items():
                if not rec["path_perf"]:
                    continue
                path, holds, acq = model_inputs(rec)
                points = project(path, holds, acq, MAX_CPUS, handoff)
                lock, demand = bottleneck(path, holds, acq, handoff)
                out.setdefault(w, {}).setdefault(str(handoff), {})[v] = {
                    "cpus": {n: x * 1e9 for n, x, _ in points if n in CPUS or n in (SEED["cpus"], KOUTNY["cpus"])},
                    "wait": {n: waits for n, _, waits in points if n in (SEED["cpus"], KOUTNY["cpus"])},
                    "bottleneck": lock, "ceiling": 1e9 / demand if demand else None,
                }
    return out


def checks(proj):
    """The projection against the published figures, handoff by handoff."""
    out = []
    for handoff in map(str, HANDOFFS):
        seed = proj.get(SEED["workload"], {}).get(handoff, {})
        n = SEED["cpus"]
        if "stock" in seed and "seqcount" in seed:
            stock, seq = seed["stock"]["cpus"][n], seed["seqcount"]["cpus"][n]
            waits = seed["seqcount"]["wait"][n]
            before = seed["stock"]["wait"][n]
            out.append({
                "handoff": handoff, "source": "seed 000", "workload": SEED["workload"], "cpus": n,
                "published_ratio": SEED["seqcount"] / SEED["stock"], "projected_ratio": seq / stock,
                "locked_to_seqcount": seq / seed["locked"]["cpus"][n] if "locked" in seed else None,
                # Instructions per second per CPU that put stock's projection on 740k.
                "implied_rate": SEED["stock"] / stock * 1e9,
                "most_waited_after": max(waits, key=waits.get) if any(waits.values()) else None,
                "most_waited_before": max(before, key=before.get) if any(before.values()) else None,
                "waited_before_share": {k: x / sum(before.values()) for k, x in before.items()}
                if any(before.values()) else {},
            })
        kout = proj.get(KOUTNY["workload"], {}).get(handoff, {})
        n, base = KOUTNY["cpus"], KOUTNY["base"]
        if base in kout:
            x0 = kout[base]["cpus"][n]
            waits = kout[base]["wait"][n]
            total = sum(waits.values())
            pub_total = sum(KOUTNY["wait_ns"].values())
            out.append({
                "handoff": handoff, "source": "Koutny", "workload": KOUTNY["workload"], "cpus": n,
                "published": {v: KOUTNY["ops"][v] / KOUTNY["ops"][base] for v in KOUTNY["ops"]},
                "projected": {v: kout[v]["cpus"][n] / x0 for v in KOUTNY["ops"] if v in kout},
                "implied_rate": KOUTNY["ops"][base] / x0 * 1e9,
                "wait_share_published": {k: x / pub_total for k, x in KOUTNY["wait_ns"].items()},
                "wait_share_projected": {k: (x / total if total else 0.0) for k, x in waits.items()},
            })
    return out


def svg_projection(path, w, by_v, seed_points):
    """Projected ops per 10^9 instructions of one CPU against CPUs (log2 axis)."""
    import math
    W, H, L, R, T, B = 640, 400, 80, 170, 40, 50
    ys = [y for rec in by_v.values() for y in rec["cpus"].values()]
    ymax = max(ys + [y for _, y, _ in seed_points]) * 1.1
    sx = lambda n: L + math.log2(n) / math.log2(MAX_CPUS) * (W - L - R)  # noqa: E731
    sy = lambda y: H - B - y / ymax * (H - T - B)  # noqa: E731
    out = svg_frame(W, H, L, R, T, B, f"{w}: projected throughput (model, not measured)", "CPUs",
                           "ops per 10^9 instructions of one CPU")
    for n in (1, 2, 4, 8, 16, 32, 64, 128):
        out.append(f'<text x="{sx(n):.1f}" y="{H - B + 16}" text-anchor="middle">{n}</text>')
    for i in range(5):
        y = ymax * i / 4
        out.append(f'<text x="{L - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:,.0f}</text>')
        out.append(f'<line x1="{L}" y1="{sy(y):.1f}" x2="{W - R}" y2="{sy(y):.1f}" stroke="#ddd"/>')
    for k, (v, rec) in enumerate((v, by_v[v]) for v in VARIANTS if v in by_v):
        pts = sorted((int(n), y) for n, y in rec["cpus"].items())
        d = " ".join(f"{sx(n):.1f},{sy(y):.1f}" for n, y in pts)
        out.append(f'<polyline points="{d}" fill="none" stroke="{COLORS[v]}" stroke-width="2"/>')
        out.append(f'<rect x="{W - R + 12}" y="{T + k * 20}" width="12" height="12" fill="{COLORS[v]}"/>')
        out.append(f'<text x="{W - R + 30}" y="{T + k * 20 + 10}">{v}</text>')
    for n, y, label in seed_points:
        out.append(f'<path d="M{sx(n) - 6:.1f},{sy(y):.1f} l6,-6 l6,6 l-6,6 z" fill="none" stroke="black"><title>{label}</title></path>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def pct(x):
    return f"{(x - 1) * 100:+.1f} %"


def verdict(checked, budgets):
    """Whether the projection reproduces the published figures, computed from the checks.

    A projected change agrees with a published one within 2 percentage points; the
    next bottleneck and the lock with most waiting must be the published ones.
    """
    seed = [c for c in checked if c["source"] == "seed 000" and c["handoff"] == "0"]
    kout = [c for c in checked if c["source"] == "Koutny" and c["handoff"] == "0"]
    out = []
    if seed:
        c = seed[0]
        close = abs(c["projected_ratio"] - c["published_ratio"]) <= 0.02
        out.append(f"at {c['cpus']} cores it projects stock → seqcount {pct(c['projected_ratio'])} "
                   f"where the seed measured {pct(c['published_ratio'])}" + ("" if close else " (disagrees)"))
        before = c.get("most_waited_before")
        share = c.get("waited_before_share", {}).get(before, 0.0)
        out.append(f"on stock it puts {share * 100:.0f} % of the waiting on {before}, where the seed "
                   "names css_set_lock the primary bottleneck" + ("" if before == "css_set_lock" else " (disagrees)"))
        out.append(f"after the change it names {c['most_waited_after']}, as the seed does"
                   if c["most_waited_after"] == "pidmap_lock" else
                   f"after the change it names {c['most_waited_after']}, the seed pidmap_lock (disagrees)")
    if kout:
        c = kout[0]
        close = all(abs(c["projected"][v] - x) <= 0.02 for v, x in c["published"].items() if v in c["projected"])
        out.append(f"at {c['cpus']} CPUs it projects no change beyond 2 points for clone_processes, as Koutný measured"
                   if close else f"at {c['cpus']} CPUs its clone_processes changes differ from Koutný's (disagrees)")
        pub = max(c["wait_share_published"], key=c["wait_share_published"].get)
        prj = max(c["wait_share_projected"], key=c["wait_share_projected"].get) \
            if any(c["wait_share_projected"].values()) else "none"
        out.append(f"his bpftrace puts most waiting on {pub}, the model on {prj}"
                   + ("" if pub == prj else " (disagrees)"))
    holds = [f for v, rec in budgets.get(SEED["workload"], {}).items()
             for n, f in rec["locks"].items() if n == "pidmap_lock/W"]
    if holds and all(f["hold_spread"] is not None for f in holds):
        out.append(f"pidmap_lock's hold in {SEED['workload']} repeats within "
                   f"±{max(f['hold_spread'] for f in holds) * 100:.0f} %")
    elif holds:
        out.append(f"pidmap_lock's hold in {SEED['workload']} comes from one boot per kernel, "
                   "so how well it repeats is not measured")
    agree = all("(disagrees)" not in x for x in out)
    return ("**Verdict: the projection " + ("agrees with" if agree else "does not reproduce")
            + " the published figures, so it "
            + ("can be used as a rough guide" if agree else "is reported and not used as an argument")
            + "**: " + "; ".join(out) + ".")


def check_lines(checked):
    """One bullet per published figure and handoff: what was published, what is projected."""
    lines = []
    for c in checked:
        if c["source"] == "seed 000":
            lines.append(
                f"- **Seed 000, {c['workload']} on {c['cpus']} cores, handoff {c['handoff']}**: "
                f"published stock → seqcount read {pct(c['published_ratio'])} (740k → 790k); "
                f"projected stock → seqcount {pct(c['projected_ratio'])}"
                + (f", locked → seqcount {pct(c['locked_to_seqcount'])}" if c["locked_to_seqcount"] else "")
                + f". Putting stock's projection on 740k takes {c['implied_rate'] / 1e9:.2f}×10^9 "
                f"instructions per second per CPU. Most waited-for lock after the change: "
                f"{c['most_waited_after'] or 'none'} (published: pidmap_lock).")
        else:
            base = KOUTNY["base"]
            pub = ", ".join(f"{v} {pct(x)}" for v, x in c["published"].items() if v != base)
            prj = ", ".join(f"{v} {pct(x)}" for v, x in c["projected"].items() if v != base)
            ws_p = ", ".join(f"{k} {x * 100:.0f} %" for k, x in c["wait_share_published"].items())
            ws_m = ", ".join(f"{k} {x * 100:.0f} %" for k, x in
                             sorted(c["wait_share_projected"].items(), key=lambda kv: -kv[1]))
            lines.append(
                f"- **Koutný, {c['workload']} on {c['cpus']} CPUs, handoff {c['handoff']}**, against "
                f"`{base}` (the same pid code, stock's read): published {pub}; projected "
                f"{prj}. Implied rate {c['implied_rate'] / 1e9:.2f}×10^9 instructions per second per "
                f"CPU. Share of lock waiting: published {ws_p}; projected {ws_m or 'no waiting'}.")
    return lines


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
            f"operation ({d_path / perf[base]['median'] * 100:+.2f} %, resolution ± "
            f"{(perf['module']['spread'] + perf[base]['spread']) * 100:.2f} %). The holds per operation "
            f"differ by: " + ", ".join(parts) + "." + why)
    return lines + [""]


def markdown(meta, summary, budgets, proj, checked, plots):
    lines = [
        "# Path length, lock hold budgets and a scaling projection",
        "",
        "Generated by `make bench PATHLEN=1` (`bench/pathlen.py`, `bench/projection.py`); do not edit.",
        "",
        "| | |",
        "| --- | --- |",
        f"| date | {meta.get('date', '?')} |",
        f"| base | {meta.get('base', '?')} |",
        f"| commit | {meta.get('commit', '?')} |",
        f"| accelerator | {meta.get('accel', '?')}, 1 vCPU, `-icount shift=0,sleep=off,align=off` |",
        f"| repetitions | {meta.get('reps', '?')} boots per perf kernel, {meta.get('lock_reps', '?')} per "
        f"lockstat kernel, {meta.get('secs', '?')} s per workload after a discarded warm-up pass |",
        "",
        "One guest nanosecond is one instruction, so these are instruction counts, not times: "
        "they do not depend on the host's load. Spread is half the min-max range over the "
        "repetitions; the difference from stock carries the two spreads added. Each workload "
        "run starts allocating pids after 1000 (`ns_last_pid`), because what a pid costs "
        "depends on where the pid IDR's cursor is.",
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
                f"{rec['vs_stock'] * 100:+.2f} % ± {rec['uncertainty'] * 100:.2f} %"
            lines.append(f"| {v} | {rec['median']:.0f} | {rec['spread'] * 100:.2f} % | {diff} |")
        lines.append("")
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
    if proj:
        lines += [
            "## Projection: throughput against CPUs (a model, not a measurement)",
            "",
            "A closed queueing network solved by exact mean value analysis (`bench/projection.py`): "
            "each CPU loops over the operation; the work outside the global locks runs in parallel; "
            "each global lock serves one exclusive holder at a time, for its hold budget (the "
            "plugin's count, or for older runs lock_stat's, scaled). "
            "Its assumptions are in `projection.py`: hold times do not grow under contention "
            "(except by the *handoff* term below), rwlock readers do not serialise, and nothing "
            "else (memory bandwidth, allocators, the scheduler) limits scaling. So it is an upper "
            "bound on what the locks allow, not a forecast of a machine.",
            "",
            "Figures are operations per 10^9 instructions of one CPU; a machine's instruction rate "
            "(instructions per second per CPU) turns them into operations per second. *handoff* "
            f"adds that many instructions per exclusive acquisition for moving the lock's cache "
            f"lines between CPUs ({', '.join(map(str, HANDOFFS))}; 200 is about 100 ns at 2×10^9 "
            "instructions per second, an assumption, not a measurement).",
            "",
        ]
        for w in WORKLOADS:
            by_h = proj.get(w)
            if not by_h:
                continue
            lines += [f"### {w}", ""]
            for handoff, by_v in by_h.items():
                lines += [f"handoff {handoff}:", "", "| variant | " + " | ".join(
                    f"{n}" for n in CPUS) + " | bottleneck | ceiling |",
                    "| --- |" + " ---: |" * len(CPUS) + " --- | ---: |"]
                for v in VARIANTS:
                    rec = by_v.get(v)
                    if not rec:
                        continue
                    ceil = f"{rec['ceiling']:,.0f}" if rec["ceiling"] else "–"
                    lines.append(f"| {v} | " + " | ".join(f"{rec['cpus'][n]:,.0f}" for n in CPUS)
                                 + f" | {rec['bottleneck'] or '–'} | {ceil} |")
                lines.append("")
            for pw, name in plots:
                if pw == w:
                    lines += [f"![{w}: projected throughput against CPUs](results/{name})", ""]
        lines += ["## The projection against published figures", ""] + check_lines(checked)
        lines += ["", verdict(checked, budgets)]
        lines.append("")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: pathlen.py <raw.txt> <results-dir>")
    raw, outdir = sys.argv[1:]
    meta, rows = parse(raw)
    summary = summarise(collect(rows))
    if not summary:
        sys.exit("pathlen: no workload results in " + raw)
    # The plugin's holds where the run has them (PATHLEN=1 with bench/lockhold);
    # the lockstat flavour's, scaled, only for raw files from before it.
    budgets = summarise_plugin_holds(collect_plugin_holds(rows), summary) or \
        summarise_holds(collect_holds(rows), summary)
    proj = projections(budgets)
    checked = checks(proj)
    os.makedirs(os.path.join(outdir, "results"), exist_ok=True)
    plots = []
    for w in (SEED["workload"], KOUTNY["workload"]):
        by_v = proj.get(w, {}).get("0")
        if not by_v:
            continue
        points = []
        if w == SEED["workload"] and "stock" in by_v:
            x = by_v["stock"]["cpus"][SEED["cpus"]]
            points = [(SEED["cpus"], x, "seed 000: stock, 740k (fixes the rate)"),
                      (SEED["cpus"], x * SEED["seqcount"] / SEED["stock"], "seed 000: seqcount, 790k")]
        name = f"projection-{w}.svg"
        svg_projection(os.path.join(outdir, "results", name), w, by_v, points)
        plots.append((w, name))
    with open(os.path.join(outdir, "pathlen.json"), "w") as f:
        json.dump({"meta": meta, "instructions_per_op": summary, "hold_budgets": budgets,
                   "projection": proj, "checks": checked}, f, indent=1, sort_keys=True)
    with open(os.path.join(outdir, "pathlen.md"), "w") as f:
        f.write(markdown(meta, summary, budgets, proj, checked, plots) + "\n")


if __name__ == "__main__":
    main()
