#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw lines of `make bench` into JSON, Documentation/results.md and SVG plots.

    report.py <raw.txt> <results.json> <results-dir>
    report.py --summary <bench.json>     (plain text, for the measurement series' cover letter)
    report.py --summary-cgroup|--summary-pid <bench.json>
    report.py --summary-measure <bench.json>   (the same as --summary)
                                         (the figures a merge-set series' cover letter quotes)
    report.py --render <results-dir>     (results.md again from results/bench.json, when
                                          only the report's wording or verdicts changed)

raw.txt holds "meta key=value" lines and the guests' "bench ..." lines (see
qemu/guest/run-bench and selftests/forkscale/bench/bench.h). Throughput comes
from the perf flavour, per-operation lock figures from the debug flavour.
Everything in the report is computed here from raw.txt; nothing is typed in.
"""
import json
import os
import sys
import textwrap
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pathlen  # noqa: E402
from results import (LOCKS, MIN_BOOTS, VARIANT_TEXT, VARIANTS, WORKLOADS, WORKLOAD_TEXT, find, parse,  # noqa: E402
                     plus_minus, summarise)
from svg import svg_bar_chart, svg_line_chart  # noqa: E402

def fmt(x, digits=2):
    if x is None:
        return "–"
    if isinstance(x, float) and abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def overlap(rec, stock):
    """Whether a record's min-max range overlaps stock's: a difference within the noise."""
    return rec and stock and "min" in rec and rec["min"] <= stock["max"] and rec["max"] >= stock["min"]


def wall_clock_verdict(met, accel):
    """A wall-clock target's verdict: under TCG the clock is no measure (±15 % between runs),
    so it is shown and not judged; elsewhere met or missed (the line says whether the ranges
    overlap)."""
    if accel == "tcg":
        return "**not judged on wall clock** (TCG: run-to-run noise of ±15 %)"
    return f"**{'met' if met else 'missed'}**"


def path_length_verdict(pathlen, workload, variants, budget, accel):
    """Evidence beside a wall-clock target: instructions per operation (make bench PATHLEN=1,
    one vCPU under icount, a resolution of about 0.3 % for threads and 2.5 % for processes).
    It sees the path, not contention at more vCPUs, so it never judges a throughput target:
    it says whether the worst of `variants` is within `budget` of stock, its uncertainty added
    (so equal to stock within an uncertainty is not within a budget of 0). None without data."""
    if not pathlen:
        return None
    rows = pathlen.get("instructions_per_op", {}).get(workload, {})
    got = [(v, rows[v]) for v in variants if v in rows and "vs_stock" in rows[v]]
    if not got:
        return None
    m = pathlen.get("meta", {})
    where = (f"the one-vCPU path length (instructions per operation, [`pathlen.md`](pathlen.md), "
             f"`make bench PATHLEN=1` at `{m.get('commit', '?')}`, under icount)")
    unresolved = [v for v, r in got if r.get("uncertainty") is None]
    if unresolved:
        boots = min(r.get("boots", r.get("n", 0)) for _, r in got)
        return (f"  Beside it, not a verdict on throughput: {where} is not judged against its budget "
                f"of {budget * 100:+.0f} %: its figures come from {boots} boots, and a resolution "
                f"needs {MIN_BOOTS}.")
    v, r = max(got, key=lambda x: x[1]["vs_stock"] + x[1]["uncertainty"])
    worst = r["vs_stock"] + r["uncertainty"]
    within = "within" if worst <= budget else "not within"
    return (f"  Beside it, not a verdict on throughput: {where} is {within} its budget of "
            f"{budget * 100:+.0f} % against stock: the worst is {v} at "
            f"{r['vs_stock'] * 100:+.2f} % {plus_minus(r['uncertainty'], r.get('boots', r.get('n', 0)))} against "
            f"stock. A path length measures the work of one operation on one CPU, not how "
            f"operations contend.")


def targets(summary, smp, accel="?", pathlen=None):
    """The issue's four targets, each with met/missed and the data behind it. Under TCG the
    two wall-clock targets are not judged: the instruction count beside them is evidence, not
    a verdict."""
    lines = []
    ts = lambda v: find(summary, smp, v, "threadspawn")  # noqa: E731
    mod, stock = ts("module"), ts("stock")
    css = mod and mod["locks"].get("css_set_lock", {}).get("acquisitions_per_op")
    cr = mod and mod.get("clone_read")
    # Counts per operation, from the lock-statistics boots: a verdict needs MIN_BOOTS of them.
    boots = len(mod["lock_ops"]) if mod else 0
    def unjudged(met):
        return (f"**not judged**: from {boots} lock-statistics boot{'s' if boots != 1 else ''}, "
                f"and a verdict needs {MIN_BOOTS} (the figure is {'within' if met else 'over'} "
                f"the target)")
    # The lockless share can only fall when a writer (a migration, a kill) overlaps a read:
    # without one it is 100 % by construction, and says nothing. So it is judged in
    # threadspawn_disturbed, whose disturber migrates and kills, and the count in threadspawn,
    # whose counts are the threads' alone.
    dist = find(summary, smp, "module", "threadspawn_disturbed")
    dcr = dist and dist.get("clone_read")
    if css is not None and cr:
        count_ok = round(css, 1) <= 2.0
        exercised = bool(dcr) and (dcr.get("retries", 0) > 0 or dcr.get("locked", 0) > 0)
        dboots = len(dist["lock_ops"]) if dist else 0
        if boots < MIN_BOOTS or (dcr and dboots < MIN_BOOTS):
            verdict = unjudged(count_ok and (not dcr or dcr["lockless_pct"] >= 99.9))
        elif not count_ok:
            verdict = "**missed**"
        elif not dcr:
            verdict = ("**not judged**: the count is within it, and no `threadspawn_disturbed` run "
                       "measured the lockless share under writers")
        elif not exercised:
            verdict = ("**not judged**: the count is within it, but no migration or kill of "
                       "`threadspawn_disturbed` overlapped a read (0 retries, 0 fallbacks)")
        else:
            verdict = f"**{'met' if dcr['lockless_pct'] >= 99.9 else 'missed'}**"
        share = (f"under `threadspawn_disturbed`'s migrations and kills, {dcr['lockless_pct']:.3f} % "
                 f"of {dcr['lockless'] + dcr['locked']} reads lockless ({dcr.get('retries', 0)} "
                 f"retries, {dcr['locked']} fell back to the lock)" if dcr else
                 f"in threadspawn, with no writer, {cr['lockless_pct']:.3f} % of "
                 f"{cr['lockless'] + cr['locked']} reads lockless")
        lines.append(f"- css_set_lock acquisitions per thread lifecycle = 2 with lockless success "
                     f"≥ 99.9 %: {verdict}: {css:.2f} per create+exit with "
                     f"the module (stock {fmt(stock and stock['locks'].get('css_set_lock', {}).get('acquisitions_per_op'))}); "
                     f"{share}.")
        if round(css, 1) > 2.0:
            lines.append("  The reads that remain are clone's `cgroup_post_fork()` and exit's "
                         "`cgroup_exit()`/`cgroup_release()`; see the lock table.")
    pr = mod and mod.get("pid_release")
    if pr:
        met = pr["free_locks_per_pid"] <= 0.1
        verdict = unjudged(met) if boots < MIN_BOOTS else f"**{'met' if met else 'missed'}**"
        lines.append(f"- free-side pidmap_lock acquisitions per exit ≤ 0.1 with deferral: "
                     f"{verdict}: {pr['free_locks_per_pid']:.3f} "
                     f"({pr['freed']} pids in {pr['batches']} batches, {fmt(pr['pids_per_batch'])} per batch).")
        if not met:
            lines.append(f"  A batch closes when it holds `pid_batch` pids or after `pid_max_delay_ms`. "
                         f"At the debug kernel's rate here ({fmt(rate(mod))} thread lifecycles/s over "
                         f"{smp} vCPUs) the delay closes most batches before they fill.")
    if mod and stock and "ratio_to_stock" in mod:
        met = mod["ratio_to_stock"] >= 1.0
        lines.append(f"- threadspawn ratio against stock ≥ 1.0 at {smp} vCPUs: "
                     f"{wall_clock_verdict(met, accel)}: "
                     f"{mod['ratio_to_stock']:.3f} (the module's min–max range "
                     f"{'overlaps' if overlap(mod, stock) else 'does not overlap'} stock's).")
        by_path = path_length_verdict(pathlen, "threadspawn", ["module"], 0.0, accel)
        if by_path:
            lines.append(by_path)
    mig = [find(summary, smp, v, "migrate_pingpong") for v in VARIANTS[1:]]
    mig_stock = find(summary, smp, "stock", "migrate_pingpong")
    worst = [r for r in mig if r and "ratio_to_stock" in r]
    if worst and mig_stock:
        w = min(worst, key=lambda r: r["ratio_to_stock"])
        cost = 1.0 / w["ratio_to_stock"]
        met = cost <= 1.05
        lines.append(f"- migration ping-pong cost ratio ≤ 1.05 (time per migration against stock): "
                     f"{wall_clock_verdict(met, accel)}: worst is "
                     f"{w['variant']} at {cost:.3f} (its min–max range "
                     f"{'overlaps' if overlap(w, mig_stock) else 'does not overlap'} stock's; "
                     f"a migration's time includes its waits for RCU grace periods, see "
                     f"[`pathlen.md`](pathlen.md)).")
        by_path = path_length_verdict(pathlen, "migrate_pingpong", VARIANTS[1:], 0.05, accel)
        if by_path:
            lines.append(by_path)
    budget = lock_budget(ts("module_all"), mod, stock)
    if budget:
        lines.append(budget)
    return lines


def lock_budget(full, mod, stock):
    """Issue 37's lock budget per thread lifecycle, judged on the variant with both of its
    takeovers on (`module_all`: the exit unlink batched, pid numbers from per-CPU blocks):
    pidmap_lock ≤ 0.2, css_set_lock ≤ 1.1, and tasklist_lock no higher than stock's."""
    acq = lambda r, lk: r and r["locks"].get(lk, {}).get("acquisitions_per_op")  # noqa: E731
    if not stock or not (full or mod) or not (full or mod)["locks"]:
        return None
    if not full or not full["locks"]:
        return ("- pidmap_lock ≤ 0.2, css_set_lock ≤ 1.1 and tasklist_lock no higher than stock's per "
                "thread lifecycle, with the pid-allocation and exit-unlink takeovers (issue 37): "
                "**not judged**: no `module_all` run. The module without them, per create+exit: "
                f"pidmap_lock {fmt(acq(mod, 'pidmap_lock'))}, css_set_lock "
                f"{fmt(acq(mod, 'css_set_lock'))}, tasklist_lock {fmt(acq(mod, 'tasklist_lock'))} "
                f"(stock {fmt(acq(stock, 'tasklist_lock'))}).")
    boots = len(full["lock_ops"])
    lines = []
    for lock, limit, what in (("pidmap_lock", 0.2, "≤ 0.2"), ("css_set_lock", 1.1, "≤ 1.1"),
                              ("tasklist_lock", acq(stock, "tasklist_lock"), "no higher than stock's")):
        got = acq(full, lock)
        met = got is not None and limit is not None and got <= limit
        verdict = (f"**not judged**: from {boots} lock-statistics boot{'s' if boots != 1 else ''}, "
                   f"and a verdict needs {MIN_BOOTS}" if boots < MIN_BOOTS else
                   f"**{'met' if met else 'missed'}**")
        res = full["locks"].get(lock, {}).get("acquisitions_resolution")
        res = "" if res is None else f" ± {res * 100:.2f} %"
        lines.append(f"- {lock} {what} per thread lifecycle with both takeovers (issue 37, "
                     f"`module_all`, `dead_batch=32 dead_max_delay_ms=50 pid_block=16`): {verdict}: {fmt(got, 3)}{res} "
                     f"per create+exit (the module without them {fmt(acq(mod, lock), 3)}, stock "
                     f"{fmt(acq(stock, lock), 3)}).")
    unl = full.get("exit_unlink")
    if unl and unl.get("tasks_per_batch"):
        lines.append(f"  The exit unlink's batches held {fmt(unl['tasks_per_batch'])} tasks each "
                     f"({unl['unlinked']} tasks in {unl['batches']} css_set_lock acquisitions).")
    return "\n".join(lines)


def lock_cell(fig):
    """Acquisitions per operation, with ± the boots' resolution where there is one."""
    res = fig.get("acquisitions_resolution")
    cell = fmt(fig.get("acquisitions_per_op"), 3)
    return cell if res is None else f"{cell} ± {res * 100:.2f} %"


def rate(rec):
    """Operations per second of the debug-flavour runs, where the counters come from."""
    return rec.get("lock_ops_per_sec")


def write_plots(summary, outdir):
    os.makedirs(outdir, exist_ok=True)
    recs = summary["records"]
    smps = sorted({r["smp"] for r in recs})
    files = []
    for w in WORKLOADS:
        series = defaultdict(list)
        for r in recs:
            if r["workload"] == w and "median" in r:
                series[r["variant"]].append((r["smp"], r["median"]))
        if series:
            name = f"ops-{w}.svg"
            svg_line_chart(os.path.join(outdir, name), f"{w}: median ops/s", dict(series), smps, "ops/s")
            files.append((w, name, "ops"))
        smp = max(smps)
        values, variants = {}, []
        for v in VARIANTS:
            r = find(summary, smp, v, w)
            if r and r["locks"]:
                variants.append(v)
                for lock, fig in r["locks"].items():
                    values[(lock, v)] = fig["acquisitions_per_op"]
        if values:
            groups = [lk for lk in LOCKS if any(g == lk for g, _ in values)]
            name = f"locks-{w}.svg"
            svg_bar_chart(os.path.join(outdir, name), f"{w}: lock acquisitions per operation ({smp} vCPUs)",
                          groups, variants, values, "acquisitions / op")
            files.append((w, name, "locks"))
    return files


def load_pathlen(docdir):
    """pathlen.json (make bench PATHLEN=1), or None."""
    try:
        with open(os.path.join(docdir, "pathlen.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def pathlen_section(docdir, plotdir):
    """The summary of pathlen.json (make bench PATHLEN=1), if there is one."""
    pl = load_pathlen(docdir)
    if pl is None:
        return []
    m = pl["meta"]
    L = ["## Path length and lock hold budgets", "",
         f"From `make bench PATHLEN=1` of {m.get('date', '?')} at `{m.get('commit', '?')}`, one vCPU "
         "under icount: deterministic instruction counts. Every table is in "
         "[`pathlen.md`](pathlen.md). *share* is the fraction of an operation's instructions "
         "spent holding the lock exclusively; 1/share is the most CPUs' worth of operations that "
         "lock lets through.", ""]
    holds = pl.get("hold_budgets", {})
    for w in pathlen.SCALING:
        ipo = pl["instructions_per_op"].get(w)
        if not ipo:
            continue
        locks = ["css_set_lock", "tasklist_lock", "pidmap_lock"]
        L += [f"**{w}**", "", "| variant | instructions/op | vs stock | "
              + " | ".join(f"{lk} share" for lk in locks) + " |",
              "|---|---:|---:|" + "---:|" * len(locks)]
        for v in VARIANTS:
            rec = ipo.get(v)
            if not rec:
                continue
            diff = (f"{rec['vs_stock'] * 100:+.2f} % {plus_minus(rec['uncertainty'], rec.get('boots', rec['n']))}"
                    if "vs_stock" in rec else "")
            hb = holds.get(w, {}).get(v, {}).get("locks", {})
            shares = ["–" if (x := pathlen.exclusive_share(hb, lk)) is None else f"{x * 100:.2f} %"
                      for lk in locks]
            L.append(f"| {v} | {rec['median']:.0f} | {diff} | " + " | ".join(shares) + " |")
        L.append("")
    L += ["The projection to more CPUs, fitted to the published figures, is in "
          "[`pathlen.md`](pathlen.md), with its residuals; no figure here rests on it. "
          + pathlen.verdict(pl.get("fit")), ""]
    return L


def write_markdown(summary, path, plots, plotdir):
    m = summary["meta"]
    accel = m.get("accel", "?")
    smps = sorted({r["smp"] for r in summary["records"]})
    L = ["# forkscale benchmark results", "",
         "Generated by `make bench` (`bench/report.py`) from the run below; the same figures are in "
         "[`results/bench.json`](results/bench.json). Do not edit by hand.", "",
         "| | |", "|---|---|",
         f"| date | {m.get('date', '?')} |",
         f"| base | {m.get('base', '?').replace('_', ' ')} |",
         f"| forkscale commit | `{m.get('commit', '?')}` |",
         *([f"| report | rendered again at `{m['rendered']}` from the same figures "
            "(`report.py --render`) |"] if m.get("rendered") else []),
         f"| accelerator | {accel.upper()}{' (multi-threaded TCG)' if accel == 'tcg' and m.get('tcg_thread') == 'multi' else ''}, QEMU {m.get('qemu', '?')} |",
         f"| host | {m.get('host_cpus', '?')} CPUs, {m.get('host_cpu', '?').replace('_', ' ')} |",
         f"| vCPUs | {', '.join(map(str, smps))} |",
         f"| repetitions | {m.get('reps', '?')} throughput boots per kernel (perf flavour), "
         f"{m.get('lock_reps', '?')} lock-statistics boots (debug flavour, LOCK_STAT) |",
         f"| measurement | {m.get('secs', '?')} s per workload after 1 s warmup; migrations: "
         f"{m.get('migrations', '?')} per run |",
         f"| mode | {'QUICK=1 (short run)' if m.get('quick') == '1' else 'full'} |", ""]
    if accel == "tcg":
        L += ["**This run is under TCG (QEMU's emulator, no KVM).** Absolute ops/s are emulation "
              "figures and say little about hardware, so they are in the appendix. What is robust "
              "comes first: lock acquisitions per operation (exact counts where they do not "
              "depend on the exit rate; the batching takeovers' follow it), and, from "
              "`make bench PATHLEN=1`, instructions per operation and lock hold budgets. With "
              f"{m.get('host_cpus', '?')} host CPUs, vCPU counts above that are oversubscribed.", ""]
    L += ["Variants, all built from the same config fragments:", ""]
    L += [f"- `{v}`: {VARIANT_TEXT[v]}" for v in VARIANTS]
    L += ["", "Workloads (tasks = vCPUs, except migrate_pingpong with one task):", ""]
    present = {r["workload"] for r in summary["records"]}
    L += [f"- `{w}`: {WORKLOAD_TEXT[w]}" for w in WORKLOADS if w in present]
    L.append("")
    if summary["errors"]:
        L += ["## Errors in this run", ""]
        L += [f"- smp={e.get('smp')} {e.get('flavour')} {e.get('variant')} rep {e.get('rep')}: "
              + " ".join(f"{k}={v}" for k, v in e.items() if k not in ("tag", "kind", "smp", "flavour", "kernel", "variant", "rep"))
              for e in summary["errors"]]
        L.append("")
    if summary["retries"]:
        L += ["## Boots that failed and were repeated", "",
              "A failed boot is repeated once; only a boot that ran to its end contributes figures.", ""]
        L += [f"- smp={r.get('smp')} {r.get('flavour')} {r.get('kernel')} rep {r.get('rep')}: "
              f"{r.get('why', '?').replace('_', ' ')}" for r in summary["retries"]]
        L.append("")
    L += pathlen_section(os.path.dirname(path), plotdir)
    for smp in smps:
        L += [f"## {smp} vCPUs", "", "### Targets", ""]
        L += targets(summary, smp, accel, load_pathlen(os.path.dirname(path))) or \
            ["- not enough data for the targets"]
        L.append("")
        if not any(r["locks"] for r in summary["records"] if r["smp"] == smp):
            L += ["No lock statistics in this run (`LOCK_REPS=0`).", ""]
            continue
        L += ["### Lock acquisitions per operation (debug flavour, LOCK_STAT)", "",
              "Medians over the lock-statistics repetitions of acquisitions counted by "
              "`/proc/lock_stat` during the measurement, divided by the operations the workload "
              "counted. Read and write acquisitions of an rwlock are added up. "
              "`css_set_clone_lock` exists only in the rwlock variant. A figure from "
              f"{MIN_BOOTS} boots or more carries ± its resolution (half the boots' range); "
              "one from fewer carries none, and no verdict rests on it.", ""]
        for w in WORKLOADS:
            rows = [r for v in VARIANTS if (r := find(summary, smp, v, w)) and r["locks"]]
            if not rows:
                continue
            locks = [lk for lk in LOCKS if any(lk in r["locks"] for r in rows)]
            L += [f"**{w}**", "", "| variant | " + " | ".join(locks) + " | boots: ops counted |",
                  "|---|" + "---:|" * (len(locks) + 1)]
            for r in rows:
                cells = [lock_cell(r["locks"].get(lk, {})) for lk in locks]
                L.append(f"| {r['variant']} | " + " | ".join(cells)
                         + f" | {len(r['lock_ops'])}: {', '.join(map(str, r['lock_ops']))} |")
            L.append("")
        L += ["### Clone read and pid freeing counters (debug flavour)", "",
              "From `/sys/kernel/debug/cgroup_clone/stats` and `/sys/kernel/debug/pid_release/stats`, "
              "reset at the start of each measurement. Built-in pid freeing takes pidmap_lock once "
              "per pid and has no counters.", "",
              "| workload | variant | reads lockless | retries | fell back to the lock | pids freed | batches | pids per batch | free-side pidmap_lock per pid |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for w in WORKLOADS:
            for v in VARIANTS:
                r = find(summary, smp, v, w)
                if not r or not (r.get("clone_read") or r.get("pid_release")):
                    continue
                cr, pr = r.get("clone_read", {}), r.get("pid_release", {})
                pct = f"{cr['lockless_pct']:.3f} %" if cr else "–"
                L.append(f"| {w} | {v} | {pct} | "
                         f"{cr.get('retries', '–')} | {cr.get('locked', '–')} | {pr.get('freed', '–')} | "
                         f"{pr.get('batches', '–')} | {fmt(pr.get('pids_per_batch'))} | "
                         f"{fmt(pr.get('free_locks_per_pid'), 3)} |")
        L.append("")
        unl = [(w, v, find(summary, smp, v, w)) for w in WORKLOADS for v in VARIANTS]
        unl = [(w, v, r["exit_unlink"]) for w, v, r in unl if r and r.get("exit_unlink")]
        if unl:
            L += ["Exit unlink counters, from `/sys/kernel/debug/cgroup_dead/stats` (the module's "
                  "`dead_batch`), reset at the start of each measurement: a batch is one "
                  "css_set_lock acquisition, closed by its size, its timer or a reader's flush.", "",
                  "| workload | variant | tasks unlinked | batches | tasks per batch |",
                  "|---|---|---:|---:|---:|"]
            L += [f"| {w} | {v} | {e['unlinked']} | {e['batches']} | {fmt(e.get('tasks_per_batch'))} |"
                  for w, v, e in unl]
            L.append("")
    L += ["## Plots", ""]
    for w, name, kind in plots:
        if kind == "locks":
            L += [f"![{w}: lock acquisitions per operation]({plotdir}/{name})", ""]
    L += ["## Appendix: wall-clock throughput", "",
          "These figures are wall-clock operations per second. Under TCG they are emulation "
          "figures, and repeated runs on this 2-CPU host have differed by about ±15 % for the same "
          "kernel, more than most differences between variants; no claim rests on them. Under "
          "lockdep and KASAN (the debug flavour) hold and wait times are inflated for every "
          "variant alike.", ""]
    for smp in smps:
        L += [f"### {smp} vCPUs: throughput (perf flavour)", "",
              "Median, min and max of ops/s over the repetitions; ratio = median / stock median "
              "(above 1 is faster than stock).", ""]
        for w in WORKLOADS:
            rows = [r for v in VARIANTS if (r := find(summary, smp, v, w)) and "median" in r]
            if not rows:
                continue
            L += [f"**{w}**", "", "| variant | median ops/s | min | max | n | ratio to stock |",
                  "|---|---:|---:|---:|---:|---:|"]
            L += [f"| {r['variant']} | {fmt(r['median'])} | {fmt(r['min'])} | {fmt(r['max'])} | {r['n']} | "
                  f"{fmt(r.get('ratio_to_stock'), 3)} |" for r in rows]
            L.append("")
        if not any(r["locks"] for r in summary["records"] if r["smp"] == smp):
            continue
        L += [f"### {smp} vCPUs: contention per operation (debug flavour)", "",
              "Per lock: contentions / wait µs / hold µs, each per operation. Under lockdep and "
              "KASAN hold times are inflated for every variant alike.", ""]
        for w in WORKLOADS:
            rows = [r for v in VARIANTS if (r := find(summary, smp, v, w)) and r["locks"]]
            if not rows:
                continue
            locks = [lk for lk in LOCKS if any(lk in r["locks"] for r in rows)]
            L += [f"**{w}**", "", "| variant | " + " | ".join(locks) + " |", "|---|" + "---:|" * len(locks)]
            for r in rows:
                cells = []
                for lk in locks:
                    f = r["locks"].get(lk)
                    cells.append("–" if not f else
                                 f"{f['contentions_per_op']:.3f} / {f['wait_us_per_op']:.2f} / {f['hold_us_per_op']:.2f}")
                L.append(f"| {r['variant']} | " + " | ".join(cells) + " |")
            L += ["", contention_resolutions(rows, locks), ""]
    for w, name, kind in plots:
        if kind == "ops":
            L += [f"![{w}: median ops/s against vCPUs]({plotdir}/{name})", ""]
    with open(path, "w") as f:
        f.write("\n".join(L).rstrip() + "\n")


def contention_resolutions(rows, locks):
    """The widest resolution of each contention figure over a table, or why there is none."""
    parts = []
    for key, name in (("contentions_resolution", "contentions"), ("wait_resolution", "wait"),
                      ("hold_resolution", "hold")):
        figs = [r["locks"][lk] for r in rows for lk in locks if lk in r["locks"]]
        if any(key not in f for f in figs):
            return "Resolution: not recorded by the run that made these figures."
        vals = [f[key] for f in figs]
        if any(v is None for v in vals):
            boots = min(len(r["lock_ops"]) for r in rows)
            parts.append(f"{name} {plus_minus(None, boots)}")
        elif max(vals) > 1.0:
            parts.append(f"{name} over ± 100 % (a figure the boots do not resolve)")
        else:
            parts.append(f"{name} {plus_minus(max(vals), MIN_BOOTS)}")
    return "Resolution, the widest in the table (half the boots' range): " + ", ".join(parts) + "."


def cover_summary(path):
    """Plain-text summary (72 columns) of a bench.json, for the series' cover letter."""
    with open(path) as f:
        summary = json.load(f)
    m = summary["meta"]
    out = [f"make bench of {m.get('date', '?')}, forkscale {m.get('commit', '?')},",
           f"{m.get('accel', '?').upper()} on {m.get('host_cpus', '?')} host CPUs"
           f"{', QUICK' if m.get('quick') == '1' else ''}.",
           "Lock acquisitions per thread create+exit (threadspawn, LOCK_STAT):", ""]
    smps = sorted({r["smp"] for r in summary["records"]})
    for smp in smps:
        out.append(f"  {smp} vCPUs     css_set_lock tasklist_lock pidmap_lock")
        for v in VARIANTS:
            r = find(summary, smp, v, "threadspawn")
            if not r:
                continue
            locks = [r["locks"].get(lk, {}).get("acquisitions_per_op") for lk in LOCKS[:3]]
            cells = "".join(f"{x:13.2f}" if x is not None else f"{'-':>13}" for x in locks)
            out.append(f"  {v:<15}{cells}")
        out.append("")
        pg = {v: find(summary, smp, v, "pgrp_exit") for v in ("stock", "locked")}
        pg = {v: r["locks"].get("pidmap_lock", {}).get("acquisitions_per_op")
              for v, r in pg.items() if r}
        if len(pg) == 2 and None not in pg.values():
            out.append("  pidmap_lock per pgrp_exit operation (two pids allocated, then a")
            out.append(f"  leader's and a member's freed): stock {pg['stock']:.2f},")
            out.append(f"  series {pg['locked']:.2f} (free_pids() batching alone).")
            out.append("")
        mod = find(summary, smp, "module", "threadspawn")
        if mod and mod.get("clone_read") and mod.get("pid_release"):
            cr, pr = mod["clone_read"], mod["pid_release"]
            out.append(f"  module: {cr['lockless_pct']:.2f} % of clone reads lockless,")
            out.append(f"  {pr['pids_per_batch']} pids per pidmap_lock batch.")
        out.append("")
    out += pathlen_summary(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "pathlen.json"))
    if m.get("accel") == "tcg":
        out.append("Under TCG, throughput is an emulation figure and is left out here;")
        out.append("the lock counts are exact where they do not depend on the exit rate")
        out.append("(the batching counts follow it), and the instruction counts are")
        out.append("resolved to the spread shown.")
    print("\n".join(out).rstrip())


def pathlen_summary(path):
    """Cover-letter lines from pathlen.json: path length and hold budgets, and the fit's verdict."""
    try:
        with open(path) as f:
            pl = json.load(f)
    except FileNotFoundError:
        return []
    m, w = pl["meta"], "threadspawn"
    ipo = pl["instructions_per_op"].get(w, {})
    holds = pl.get("hold_budgets", {}).get(w, {})
    out = [f"make bench PATHLEN=1 of {m.get('date', '?')}, forkscale {m.get('commit', '?')}:",
           "one vCPU under QEMU's icount, where a guest nanosecond is one",
           "instruction. Per thread create+exit: instructions, and the share",
           "of them spent holding each lock (" + ("bench/lockhold's count" if any(
               r.get("source") == "lockhold" for r in holds.values()) else "lockstat flavour") + "):", "",
           "                instr/op  vs stock  css_set  tasklist  pidmap"]
    for v in VARIANTS:
        r = ipo.get(v)
        if not r:
            continue
        diff = f"{r['vs_stock'] * 100:+.1f}%" if "vs_stock" in r else ""
        hb = holds.get(v, {}).get("locks", {})
        cells = "".join(f"{'-':>9}" if (x := pathlen.exclusive_share(hb, k)) is None else f"{x * 100:8.2f}%"
                        for k in ("css_set_lock", "tasklist_lock", "pidmap_lock"))
        out.append(f"  {v:<14}{r['median']:9.0f}{diff:>10}{cells}")
    out.append("")
    verdict = ("A queueing model with a cache-line transfer cost, fitted to the "
               "published figures (Documentation/pathlen.md): " + pathlen.verdict(pl.get("fit")))
    out += textwrap.wrap(verdict.replace("**", "").replace("Koutný", "Koutny").replace("±", "+/-")
                         .replace("→", "->").replace("–", "-").replace("×", "x"), 70)
    out.append("")
    return out


# The release that frees a single pid, by workload; pgrp_exit's frees two.
SINGLE_PID_WORKLOADS = ["threadspawn", "forkexit", "clone_processes"]


def free_side_hold(pl, workload, variant):
    """(acquisitions, instructions held) per op at the free side's pidmap_lock site:
    free_pid() on stock, free_pid_batch() with the pid series; None if not measured."""
    sites = pl.get("hold_budgets", {}).get(workload, {}).get(variant, {}).get("sites", {})
    for fn in ("free_pid_batch", "free_pid"):
        rec = sites.get(f"pidmap_lock/W {fn}")
        if rec and rec.get("acquisitions"):
            return rec["acquisitions"], rec["hold"]
    return None


def merge_set_summary(path, which):
    """The figures a merge-set series' cover letter quotes ("cgroup" or "pid"): the
    "posted" rows (stock 7.3 plus the merge set alone, booted on its own) against stock,
    from a bench.json and the pathlen.json of its documentation directory, with what
    they were measured on. Every cost is quoted, not only the gains."""
    with open(path) as f:
        summary = json.load(f)
    pl = load_pathlen(os.path.dirname(os.path.dirname(os.path.abspath(path)))) or {}
    m, pm = summary["meta"], pl.get("meta", {})
    out = [f"Measured on the posted kernel (7.3.4 with the merge set's four series as",
           "posted, nothing else) and on stock 7.3.4, each booted on its own:",
           f"lock counts from make bench of {m.get('date', '?')}, forkscale",
           f"{m.get('commit', '?')}, with LOCK_STAT, {m.get('accel', '?').upper()} on "
           f"{m.get('host_cpus', '?')} host CPUs;"]
    if pm:
        out += [f"instructions from make bench PATHLEN=1 of {pm.get('date', '?')},",
                f"forkscale {pm.get('commit', '?')}, one vCPU under QEMU icount."]
    out.append("")
    for smp in sorted({r["smp"] for r in summary["records"]}):
        lock, w = ("css_set_lock", "threadspawn") if which == "cgroup" else ("pidmap_lock", "pgrp_exit")
        got = {}
        for v in ("stock", "posted"):
            r = find(summary, smp, v, w)
            got[v] = r and r["locks"].get(lock, {}).get("acquisitions_per_op")
        if None in got.values():
            continue
        what = ("per thread create+exit" if which == "cgroup" else
                "per operation of a workload that frees two pids in one\n"
                "  release (a process-group leader exits before its one member;\n"
                "  two forks, two exits)")
        out += [f"  {lock} {what}, {smp} vCPUs:",
                f"  stock {got['stock']:.2f}, posted {got['posted']:.2f}.", ""]
    ipo = pl.get("instructions_per_op", {})
    rows = [(w, ipo[w]["posted"]) for w in pathlen.SCALING
            if "posted" in ipo.get(w, {}) and "vs_stock" in ipo[w]["posted"]]
    if rows:
        out.append("  Instructions per operation, posted against stock (the posted kernel")
        out.append("  carries all four series: these are theirs together):")
        for w, rec in rows:
            out.append(f"    {w:16} {rec['vs_stock'] * 100:+.2f} % "
                       f"{plus_minus(rec['uncertainty'], rec.get('boots', rec['n']))}")
        out.append("")
    if which == "pid" and pl:
        holds = {w: {v: free_side_hold(pl, w, v) for v in ("stock", "posted")}
                 for w in SINGLE_PID_WORKLOADS + ["pgrp_exit"]}
        single = [(w, h) for w, h in holds.items()
                  if w in SINGLE_PID_WORKLOADS and None not in h.values()]
        if single:
            out.append("  pidmap_lock held on the free side, instructions per operation:")
            for w, h in single:
                out.append(f"    one pid per release, {w}: stock {h['stock'][1]:.0f}, "
                           f"posted {h['posted'][1]:.0f} ({(h['posted'][1] / h['stock'][1] - 1) * 100:+.1f} %)")
            two = holds["pgrp_exit"]
            if None not in two.values():
                out.append(f"    two pids per release, pgrp_exit: stock {two['stock'][1]:.0f} in "
                           f"{two['stock'][0]:.0f} acquisitions,")
                out.append(f"      posted {two['posted'][1]:.0f} in {two['posted'][0]:.0f}")
            out.append("")
    out += textwrap.wrap(
        "Lock counts are exact for the path measured (no count quoted here depends on the "
        "exit rate); instruction counts are resolved to the spread shown. No run had more than 2 real CPUs, so nothing here is a "
        "throughput claim.", 70)
    print("\n".join(out).rstrip())


def main():
    if len(sys.argv) == 3 and sys.argv[1] in ("--summary-cgroup", "--summary-pid"):
        if not os.path.exists(sys.argv[2]):
            sys.exit(1)
        merge_set_summary(sys.argv[2], sys.argv[1].removeprefix("--summary-"))
        return
    if len(sys.argv) == 3 and sys.argv[1] in ("--summary", "--summary-measure"):
        if not os.path.exists(sys.argv[2]):
            sys.exit(1)
        cover_summary(sys.argv[2])
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--render":
        docdir = sys.argv[2]
        plotdir = os.path.join(docdir, "results")
        with open(os.path.join(plotdir, "bench.json")) as f:
            summary = json.load(f)
        # said in results.md only: bench.json stays the run's own
        summary["meta"]["rendered"] = os.popen("git rev-parse --short=12 HEAD").read().strip() or "?"
        # the same figures: the plots are drawn again from them, not measured again
        plots = write_plots(summary, plotdir)
        write_markdown(summary, os.path.join(docdir, "results.md"), plots, "results")
        print(f"report: rendered {os.path.join(docdir, 'results.md')} again from the run of "
              f"{summary['meta'].get('date', '?')}")
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    raw, json_out, docdir = sys.argv[1:]
    meta, rows = parse(raw)
    summary = summarise(meta, rows)
    if not summary["records"]:
        sys.exit("report: no results in " + raw)
    plotdir = os.path.join(docdir, "results")
    plots = write_plots(summary, plotdir)
    for path in (json_out, os.path.join(plotdir, "bench.json")):
        with open(path, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
            f.write("\n")
    write_markdown(summary, os.path.join(docdir, "results.md"), plots, "results")
    print(f"report: {len(summary['records'])} records; wrote {os.path.join(docdir, 'results.md')}, "
          f"{len(plots)} plots and {os.path.join(plotdir, 'bench.json')}")


if __name__ == "__main__":
    main()
