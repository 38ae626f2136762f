#!/usr/bin/env bash
# bench/fit.py recovers what it fits: published ratios made by the model itself
# at a known transfer cost and dirtied-line count, from the committed run's
# holds, must be fitted with that set among those that fit, and not fitted with
# the transfer term dropped. A twin that leaves the transfer out of the demands
# must fail the same check.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
PYTHONPATH=$top/bench python3 - "$top/Documentation/pathlen.json" <<'EOF'
import json
import sys

import fit

budgets = json.load(open(sys.argv[1]))["hold_budgets"]
TRUE = (1500, 2.0)


def recovers():
    """None if the fit finds TRUE from ratios the model made at TRUE, else why not."""
    made = fit.predictions(budgets, *TRUE)
    for p, x in zip(fit.PUBLISHED, made):
        p["low"] = p["high"] = x
    got = fit.fit(budgets)
    if got is None:
        return "no fit: a variant is missing from pathlen.json"
    if TRUE not in got["fits"]:
        return f"the true set is not among the {len(got['fits'])} that fit; best {got['best']}"
    if got["best"]["chi2"] > 1e-9:
        return f"the best chi2 is {got['best']['chi2']:.3g}, not 0"
    if got["dropped"]["no transfer (projection.py alone)"]["fits"]:
        return "it still fits with the transfer term dropped"
    return None


published = [dict(p) for p in fit.PUBLISHED]
why = recovers()
print(f"ok host: fit.py recovers a known transfer cost and line count, and fails without the transfer term"
      if why is None else f"not ok host: fit.py recovers a known transfer cost and line count ({why})")

fit.PUBLISHED[:] = [dict(p) for p in published]
real = fit.demands


def no_transfer(inputs, n, transfer, lines):
    return real(inputs, n, 0, lines)


fit.demands = no_transfer
why = recovers()
fit.demands = real
print("ok host: the fit check catches a model that leaves the transfer out" if why else
      "not ok host: the fit check catches a model that leaves the transfer out (it passed)")
EOF
