#!/usr/bin/env bash
# bench/model.py, the scaling model from measured inputs:
# - demands() charges what its docstring says, on hand-computed inputs: a
#   lock's exclusive hold at R instructions per ns plus its lines' transfers at
#   L ns each, carried from two CPUs to n by (1 - 1/n) / (1 - 1/2), and the rest
#   of the path, transfers included, as time nobody waits for;
# - c2c_inputs() takes a variant's own figure, each lock's and that of the
#   transfers outside them, only where its range over boots does not overlap
#   stock's, and stock's otherwise;
# - Documentation/model.md is what the model gives from the committed inputs;
# - a twin that measures transfers at n CPUs as at two is caught by the first.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
PYTHONPATH=$top/bench python3 - "$top" <<'EOF' ||
import os
import sys

import model

top = sys.argv[1]


def charges():
    """None if demands() charges as documented, else what differs."""
    path = (10000.0, {"a": 400.0}, {"a": 2.0}, {})
    transfers = ({"a": 3.0, "b": 1.0}, 50.0)
    think, d = model.demands(path, transfers, 4, 80.0, 2.0)
    f = 0.75 / 0.5
    want = {"a": 400.0 / 2.0 + f * 3.0 * 80.0, "b": f * 1.0 * 80.0}
    want_think = 9600.0 / 2.0 + f * (50.0 - 4.0) * 80.0
    if abs(think - want_think) > 1e-9 or set(d) != set(want) or \
            any(abs(d[k] - want[k]) > 1e-9 for k in want):
        return f"think {think}, demands {d}; expected {want_think}, {want}"
    _, one = model.demands(path, transfers, 1, 80.0, 2.0)
    if one != {"a": 200.0, "b": 0.0}:
        return f"at one CPU nothing moves, but demands are {one}"
    return None


def resolution():
    """None if c2c_inputs() keeps stock's figure unless a variant's range is apart from it."""
    def run(xs):
        return {"other": xs, "css_set_lock": xs, "pidmap_lock": xs, "tasklist_lock": xs}
    c2c = {("w", "stock"): run([10.0, 12.0]), ("w", "near"): run([11.0, 14.0]),
           ("w", "apart"): run([20.0, 22.0])}
    near = model.c2c_inputs(c2c, "w", "near")
    apart = model.c2c_inputs(c2c, "w", "apart")
    locks = len(model.LOCK_DATA)
    if near != ({k: 11.0 for k in model.LOCK_DATA}, 11.0 * (locks + 1)):
        return f"an overlapping variant got {near}, not stock's 11.0 each"
    if apart != ({k: 21.0 for k in model.LOCK_DATA}, 21.0 * (locks + 1)):
        return f"a resolved variant got {apart}, not its own 21.0 each"
    return None


def current():
    """None if Documentation/model.md is the model's rendering of the committed inputs."""
    doc = os.path.join(top, "Documentation")
    pl, c2c, meta = model.load(doc)
    want = model.render(pl["hold_budgets"], c2c, pl.get("meta", {}), meta)
    try:
        have = open(os.path.join(doc, "model.md")).read()
    except OSError as e:
        return str(e)
    return None if have == want else "it differs: run bench/model.py --write"


def report(desc, why):
    print(f"ok host: {desc}" if why is None else f"not ok host: {desc} ({why})")


report("model.py's demands charge holds at R and transfers at L, carried from 2 CPUs to n", charges())
report("model.py keeps stock's transfer figures unless a variant's boots are apart from them",
       resolution())
report("Documentation/model.md is the model of the committed inputs", current())

# The twin: transfers at n CPUs as measured at two. The charges check must fail.
real = model.spread
model.spread = lambda n: 1.0 if n > 1 else 0.0
why = charges()
model.spread = real
report("the model check catches a model that does not carry transfers from 2 CPUs to n",
       None if why else "it passed")
EOF
	echo "not ok host: tests/host/model.sh's checks ran to their end (python3 failed)"
