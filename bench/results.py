# SPDX-License-Identifier: GPL-2.0
"""The raw lines of `make bench`: the names they use, and their parsing and summary.

The bottom layer of bench/: results.py (parsing), projection.py and fit.py (the
model and its fit to published figures), svg.py (drawing), pathlen.py (path
lengths, lock holds and the fit's report), report.py (results.md and the cover
letters' figures). Each imports only those before it.

raw.txt holds "meta key=value" lines and the guests' "bench ..." lines (see
qemu/guest/run-bench and selftests/forkscale/bench/bench.h).
"""
import statistics
from collections import defaultdict

VARIANTS = ["stock", "posted", "locked", "pinned", "seqcount", "rwlock", "module", "module_nobatch",
            "module_all", "module_findable"]
VARIANT_TEXT = {
    "stock": "stock 7.3 (Debian linux-source-7.3), no series",
    "posted": "stock 7.3 plus the merge set alone (cgroup/ and pid/ series, kernel/posted/): "
              "the pinned read, free_pids() batching",
    "locked": "series, built-in locked read",
    "pinned": "series, built-in pinned read (no lock)",
    "seqcount": "series, built-in seqcount read",
    "rwlock": "series, built-in rwlock read",
    "module": "series + module (clone read and pid batching)",
    "module_nobatch": "series + module, pid_batch=0",
    "module_all": "series + module with issue 37's takeovers too: the exit unlink batched "
                  "(dead_batch=32 dead_max_delay_ms=50; measure/0017) and pid numbers from per-CPU blocks (pid_block=16; "
                  "measure/0019)",
    "module_findable": "series + module, released pids left unmarked (patch measure/0011's defect: "
                       "the design before the mark, less the lookup-side check and the "
                       "static branch, which remain)",
}
WORKLOADS = ["threadspawn", "forkexit", "clone_processes", "pgrp_exit", "migrate_pingpong",
             "threadspawn_disturbed"]
WORKLOAD_TEXT = {
    "threadspawn": "pthread_create + pthread_join per task (will-it-scale threadspawn1)",
    "forkexit": "fork + _exit + waitpid per task",
    "clone_processes": "clone(CLONE_VM | SIGCHLD) + waitpid per task",
    "pgrp_exit": "a process-group leader and one member; the leader exits first, so the "
                 "member's exit frees two pids (its own and the group's)",
    "migrate_pingpong": "one task writes itself to cgroup A, then B, alternately",
    "threadspawn_disturbed": "threadspawn, while one more process kills an empty cgroup as fast as it can, "
                             "and every 100 kills also kills a cgroup with a task in it and moves itself: "
                             "the writers a lockless clone read validates against. "
                             "Its lock counts include the disturber's",
}
LOCKS = ["css_set_lock", "tasklist_lock", "pidmap_lock", "css_set_clone_lock"]
# A figure from repeated boots carries its resolution: how far its boots disagree
# (half their min-max range, relative to the median). Fewer boots than this
# establish none, and no difference or verdict rests on such a figure.
MIN_BOOTS = 3
COLORS = {
    "stock": "#444444", "posted": "#bcbd22", "locked": "#1f77b4", "pinned": "#17becf", "seqcount": "#2ca02c",
    "rwlock": "#ff7f0e", "module": "#d62728", "module_nobatch": "#9467bd",
    "module_all": "#e377c2", "module_findable": "#8c564b",
}


def parse(path):
    meta, rows = {}, []
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            kinds = [w for w in words[1:] if "=" not in w]
            if words[0] == "meta":
                meta.update(fields)
            elif words[0] in ("bench", "bench-error", "bench-boot", "bench-retry"):
                fields["tag"] = words[0]
                fields["kind"] = kinds[0] if kinds else ""
                rows.append(fields)
    return meta, rows


def summarise(meta, rows):
    throughput = defaultdict(list)
    # (smp, variant, workload, rep) -> {"ops":, "locks": {class: [acq, con, wait, hold]}, "stats": {}}
    samples = defaultdict(lambda: {"ops": None, "locks": defaultdict(lambda: [0, 0, 0.0, 0.0]),
                                   "stats": {}})
    errors = [r for r in rows if r["tag"] == "bench-error"]
    retries = [r for r in rows if r["tag"] == "bench-retry"]
    for r in rows:
        if r["tag"] != "bench" or "workload" not in r:
            continue
        smp, v, w = int(r["smp"]), r["variant"], r["workload"]
        if r["flavour"] == "perf":
            if r["kind"] == "result":
                throughput[(smp, v, w)].append(float(r["ops_per_sec"]))
            continue
        s = samples[(smp, v, w, r["rep"])]
        if r["kind"] == "result":
            s["ops"] = int(r["ops"])
            s["secs"] = float(r["seconds"])
        elif r["kind"] == "lock":
            acc = s["locks"][r["class"]]
            acc[0] += int(r["acquisitions"])
            acc[1] += int(r["contentions"])
            acc[2] += float(r["wait_us"])
            acc[3] += float(r["hold_us"])
        elif r["kind"] == "stat":
            for k, val in r.items():
                if k not in ("file", "kind", "tag", "smp", "flavour", "kernel", "variant",
                             "rep", "workload"):
                    s["stats"][f"{r['file']}.{k}"] = val

    records = []
    smps = sorted({k[0] for k in throughput} | {k[0] for k in samples})
    for smp in smps:
        for w in WORKLOADS:
            stock = throughput.get((smp, "stock", w))
            stock_median = statistics.median(stock) if stock else None
            for v in VARIANTS:
                vals = throughput.get((smp, v, w), [])
                reps = [s for k, s in samples.items() if k[:3] == (smp, v, w) and s["ops"]]
                if not vals and not reps:
                    continue
                rec = {"smp": smp, "variant": v, "workload": w, "unit": "ops/s", "n": len(vals)}
                if vals:
                    rec.update(median=statistics.median(vals), min=min(vals), max=max(vals),
                               samples=vals)
                    if stock_median:
                        rec["ratio_to_stock"] = round(rec["median"] / stock_median, 4)
                rec["locks"] = lock_figures(reps)
                rec["lock_ops"] = [s["ops"] for s in reps]
                if reps:
                    rec["lock_ops_per_sec"] = round(statistics.median(s["ops"] / s["secs"] for s in reps), 1)
                rec.update(counter_figures(reps))
                records.append(rec)
    return {"meta": meta, "records": records, "errors": errors, "retries": retries}


def lock_figures(reps):
    """Per-operation medians over the debug repetitions, for each lock seen."""
    out = {}
    for lock in LOCKS:
        if not any(lock in s["locks"] for s in reps):
            continue
        # A lock not taken during a repetition has no lock_stat row: zero.
        per_rep = [(s["locks"].get(lock, [0, 0, 0.0, 0.0]), s["ops"]) for s in reps]
        med = lambda i: statistics.median(a[i] / ops for a, ops in per_rep)  # noqa: E731
        res = lambda i: resolution([a[i] / ops for a, ops in per_rep])  # noqa: E731
        rounded = lambda x: None if x is None else round(x, 5)  # noqa: E731
        out[lock] = {
            "acquisitions_per_op": round(med(0), 4),
            "acquisitions_resolution": rounded(res(0)),
            "contentions_per_op": round(med(1), 5),
            "contentions_resolution": rounded(res(1)),
            "wait_us_per_op": round(med(2), 4),
            "wait_resolution": rounded(res(2)),
            "hold_us_per_op": round(med(3), 4),
            "hold_resolution": rounded(res(3)),
        }
    return out


def counter_figures(reps):
    """The clone-read, pid-freeing and exit-unlink counters of the patched kernel."""
    out = {}
    lockless = sum(int(s["stats"].get("cgroup_clone.lockless", 0)) for s in reps)
    locked = sum(int(s["stats"].get("cgroup_clone.locked", 0)) for s in reps)
    retries = sum(int(s["stats"].get("cgroup_clone.retries", 0)) for s in reps)
    if lockless + locked:
        out["clone_read"] = {"lockless": lockless, "locked": locked, "retries": retries,
                             "lockless_pct": round(100.0 * lockless / (lockless + locked), 3)}
    freed = sum(int(s["stats"].get("pid_release.freed", 0)) for s in reps)
    batches = sum(int(s["stats"].get("pid_release.batches", 0)) for s in reps)
    if freed:
        out["pid_release"] = {"freed": freed, "batches": batches,
                              "pids_per_batch": round(freed / batches, 2) if batches else None,
                              "free_locks_per_pid": round(batches / freed, 4)}
    unlinked = sum(int(s["stats"].get("cgroup_dead.unlinked", 0)) for s in reps)
    unlinks = sum(int(s["stats"].get("cgroup_dead.batches", 0)) for s in reps)
    if unlinked:
        out["exit_unlink"] = {"unlinked": unlinked, "batches": unlinks,
                              "tasks_per_batch": round(unlinked / unlinks, 2) if unlinks else None}
    return out


def find(summary, smp, v, w):
    for r in summary["records"]:
        if (r["smp"], r["variant"], r["workload"]) == (smp, v, w):
            return r
    return None


def resolution(xs):
    """Half the min-max range of the boots' values, relative to their median; None from
    fewer than MIN_BOOTS boots, which establish no resolution."""
    if len(xs) < MIN_BOOTS:
        return None
    med = statistics.median(xs)
    return (max(xs) - min(xs)) / 2 / med if med else 0.0


def plus_minus(x, boots):
    """A resolution for a table: "± 0.12 %", or why there is none."""
    if x is None:
        return f"± ? ({boots} boot{'s' if boots != 1 else ''}, {MIN_BOOTS} needed)"
    return f"± {x * 100:.2f} %"
