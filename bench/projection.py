# SPDX-License-Identifier: GPL-2.0
"""A projection of throughput against CPU count from path lengths and lock holds.

The model is a closed queueing network solved by exact mean value analysis
(MVA). Each of N CPUs runs one task that loops over the operation; a CPU
spinning on a lock is a CPU lost, so CPUs are the customers. An operation
spends Z instructions in work no other CPU waits for, and D_k instructions
holding global lock k, which serves one holder at a time. Measured at one vCPU:
Z + sum(D_k) is the path length P (perf flavour), D_k the lock's hold budget.

Assumptions, stated because they decide the result:
- hold times do not grow under contention. A real handoff moves the lock's
  cache line and the data it protects to the next CPU; `handoff` adds that cost
  per acquisition, in instructions (pathlen.py reports 0 and 200);
- readers of an rwlock do not serialise, so only exclusive holds are stations
  (the rwlock variant's read side costs only its path length);
- locks are independent stations; a hold nested in another global lock's (we
  know of none in the fork and exit paths) would count twice;
- `handoff` is charged at every acquisition, also uncontended ones, so with it
  the model understates throughput at low CPU counts by up to a few percent;
- the CPUs are identical and the work outside the locks scales perfectly (no
  memory-bandwidth, allocator or scheduler limits).

Throughput comes out in operations per instruction; a machine's instruction
rate (instructions per second per CPU) turns it into operations per second.
"""

# The global locks; (lock, "W") is an exclusive hold (pathlen.py folds
# lock_stat's "-" into it), (lock, "R") an rwlock's read side.
LOCKS = ("css_set_lock", "pidmap_lock", "tasklist_lock", "css_set_clone_lock")
EXCLUSIVE = tuple((lock, "W") for lock in LOCKS)


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


def stations(path, holds, acquisitions, handoff=0.0):
    """(think, demands) of one variant and workload.

    path: instructions per operation; holds/acquisitions: {(lock, mode): per
    operation}, hold instructions already scaled to the path's kernel.
    """
    demands = {}
    for key in EXCLUSIVE:
        if key in holds:
            demands[key[0]] = demands.get(key[0], 0.0) + holds[key] + handoff * acquisitions.get(key, 0.0)
    think = path - sum(holds.get(k, 0.0) for k in EXCLUSIVE)
    if think <= 0:
        raise ValueError("lock holds exceed the path length")
    return think, demands


def project(path, holds, acquisitions, n_max, handoff=0.0):
    think, demands = stations(path, holds, acquisitions, handoff)
    return mva(think, demands, n_max)


def bottleneck(path, holds, acquisitions, handoff=0.0):
    """(lock, its demand): the station that caps throughput at 1/demand."""
    _, demands = stations(path, holds, acquisitions, handoff)
    if not demands:
        return None, 0.0
    lock = max(demands, key=demands.get)
    return lock, demands[lock]
