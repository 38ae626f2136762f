# SPDX-License-Identifier: GPL-2.0
"""A projection of throughput against CPU count from path lengths and lock holds.

The model is a closed queueing network solved by exact mean value analysis
(MVA). Each of N CPUs runs one task that loops over the operation; a CPU
spinning on a lock is a CPU lost, so CPUs are the customers. An operation
spends Z instructions in work no other CPU waits for, and D_k instructions
holding global lock k, which serves one holder at a time. Measured at one vCPU:
Z + sum(D_k) is the path length P (perf flavour), D_k the lock's hold budget.

Assumptions, stated because they decide the result:
- hold times do not grow under contention, except by moving cache lines: a
  handoff moves the lock's line and the data it protects to the next CPU, and
  bench/fit.py adds that cost to each station's demand and fits it;
- readers of an rwlock do not serialise on each other's holds, only on moving
  the lock's line (fit.py's transfer term);
- locks are independent stations; a hold nested in another global lock's (we
  know of none in the fork and exit paths) would count twice;
- fit.py computes the demands at the population it solves for and uses them
  at every smaller one (MVA's recursion), an approximation of a load-dependent
  server;
- the CPUs are identical and the work outside the locks scales perfectly (no
  memory-bandwidth, allocator or scheduler limits).

Throughput comes out in operations per instruction; a machine's instruction
rate (instructions per second per CPU) turns it into operations per second.
"""

# The global locks, in the order the tables list them.
LOCKS = ("css_set_lock", "pidmap_lock", "tasklist_lock", "css_set_clone_lock")


def mva(think, demands, n_max):
    """Exact MVA: [(n, throughput, {station: waiting per op})] for n = 1..n_max.

    think: instructions per operation outside any station; demands: {station:
    instructions of service per operation}. Throughput is in operations per
    instruction of one CPU; waiting is the queueing time per operation at each
    station, service excluded.
    """
    queue = {k: 0.0 for k in demands}
    out = []
    for n in range(1, n_max + 1):
        resid = {k: d * (1 + queue[k]) for k, d in demands.items()}
        x = n / (think + sum(resid.values()))
        queue = {k: x * r for k, r in resid.items()}
        out.append((n, x, {k: resid[k] - demands[k] for k in demands}))
    return out
