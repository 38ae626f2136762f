// SPDX-License-Identifier: GPL-2.0

//! Batched freeing of released pids, registered with the kernel's `pid_release` hook.
//!
//! The kernel hands over the pids one task released (up to `PIDTYPE_MAX`). Freeing one takes
//! the global `pidmap_lock`, so this module frees many under one acquisition:
//!
//! - with `pid_batch=1`, all pids of one release share one acquisition;
//! - with `pid_batch=N` (2 to [`BATCH_MAX`]), pids wait in a per-CPU queue until it holds `N`,
//!   or until `pid_max_delay_ms` after the queue stopped being empty (the kernel's timer).
//!
//! A queued pid is still allocated, so the kernel flushes the queues before `alloc_pid()`
//! gives up, when a pid namespace is torn down and when `ns_last_pid` is written, and pids of
//! a dying namespace are never queued. Unloading stops new arrivals and frees everything
//! queued; the kernel waits until no task is in a callback (the RCU-deferred puts of the freed
//! pids are the kernel's own code).

use crate::{
    batch::{
        count,
        Batch, //
    },
    counters::{
        current_cpu,
        Counters, //
    },
};
use kernel::{
    new_spinlock,
    pid_release::{
        self,
        FlushReason,
        PidRelease,
        PidReleaseStats,
        Released,
        ReleasedPid,
        FREE_MAX,
        PIDTYPE_MAX, //
    },
    prelude::*,
    sync::SpinLock, //
};

/// The largest `pid_batch`.
pub(crate) const BATCH_MAX: u32 = 64;
/// A queue holds up to `BATCH_MAX - 1` pids plus one release.
const QUEUE_CAP: usize = BATCH_MAX as usize - 1 + PIDTYPE_MAX;
const _: () = assert!(QUEUE_CAP <= FREE_MAX, "a full queue must fit one free()");

/// Counter indices: `QUEUED`, `FREED`, `BATCHES`, then one per flush reason.
const QUEUED: usize = 0;
const FREED: usize = 1;
const BATCHES: usize = 2;
const FLUSHES: usize = 3;
const NR_COUNTERS: usize = FLUSHES + FlushReason::COUNT;

/// Up to `QUEUE_CAP` released pids waiting on one CPU.
type Pids = Batch<ReleasedPid, QUEUE_CAP>;

/// One CPU's queue of released pids, on cache lines of its own: its CPU writes it on every exit,
/// and a neighbour's queue in the same line would move between the two CPUs each time. (Packed as
/// before only in the bench's `module_all_packed` build, to measure what that cost.)
#[pin_data]
#[cfg_attr(not(forkscale_packed_percpu), repr(align(64)))]
struct Queue {
    #[pin]
    pids: SpinLock<Pids>,
}

/// Per-CPU queues of released pids, each freed under one `pidmap_lock` acquisition.
pub(crate) struct Batcher {
    batch: usize,
    /// One queue for each CPU id below `nr_cpu_ids`, indexed by [`current_cpu()`].
    queues: Pin<KVBox<[Queue]>>,
    /// What the stats file shows; writing 0 there resets it.
    stats: Counters<NR_COUNTERS>,
    /// Pids queued and freed since load, for the consistency check at unload; never reset.
    lifetime: Counters<2>,
}

impl Batcher {
    /// Batches of `batch` pids (1 to [`BATCH_MAX`]).
    pub(crate) fn new(batch: u32) -> Result<Self> {
        if !(1..=BATCH_MAX).contains(&batch) {
            return Err(EINVAL);
        }
        let queues = KVBox::pin_slice(
            |_| try_pin_init!(Queue { pids <- new_spinlock!(Pids::new()) }? Error),
            kernel::cpu::nr_cpu_ids() as usize,
            GFP_KERNEL,
        )?;
        Ok(Self {
            batch: batch as usize,
            queues,
            stats: Counters::new()?,
            lifetime: Counters::new()?,
        })
    }

    /// Frees the pids in `pids` (at most `QUEUE_CAP`) under one `pidmap_lock` acquisition.
    ///
    /// They are counted first: the free can wake a namespace's reaper, and through it whoever
    /// waits for that namespace, who may read the stats before this CPU gets further.
    fn free(&self, pids: &mut [Option<ReleasedPid>]) {
        let n = count(pids);
        if n == 0 {
            return;
        }
        self.stats.add(FREED, n);
        self.stats.add(BATCHES, 1);
        self.lifetime.add(1, n);
        pid_release::free(pids.iter_mut().filter_map(Option::take));
    }

    /// Frees every queued pid; counts a flush for `reason` if there was any.
    fn flush_all(&self, reason: FlushReason) {
        let mut any = false;
        for queue in self.queues.iter() {
            // Free under the queue's lock: a concurrent flush (say, alloc_pid()'s pressure
            // flush) that finds the queue empty must not return before these pids are back.
            let mut q = queue.pids.lock();
            if q.len() != 0 {
                self.free(q.drain());
                any = true;
            }
        }
        if any {
            self.stats.add(FLUSHES.wrapping_add(reason.index()), 1);
        }
    }

    fn pending(&self) -> u64 {
        self.queues
            .iter()
            .fold(0, |n, q| n.wrapping_add(q.pids.lock().len() as u64))
    }
}

/// Broken twin for `make check` (tests/twins.txt): loses one released pid in 8, uncounted, so
/// its number stays allocated for good. Pids that a dying namespace's reaper waits for are
/// spared; any other namespace that died later would wait for its lost pids forever, so the
/// twin runs only under a test that makes no pid namespace.
#[cfg(forkscale_twin_pid_leak)]
fn leak_some(pids: &mut Released) {
    use kernel::sync::atomic::{Atomic, Relaxed};
    static SEEN: Atomic<u32> = Atomic::new(0);
    for slot in pids.iter_mut() {
        if slot.as_ref().is_some_and(|pid| !pid.must_free_now())
            && SEEN.fetch_add(1, Relaxed) % 8 == 0
        {
            core::mem::forget(slot.take());
        }
    }
}

#[vtable]
impl PidRelease for Batcher {
    const NAME: &'static CStr = c"forkscale";

    fn release(&self, mut pids: Released) {
        // Twin for `make check` (tests/twins.txt, run by tests/host/harness.sh): a release that
        // sleeps, which an unload must wait for.
        #[cfg(forkscale_twin_sleeps_in_pid_release)]
        kernel::time::delay::fsleep(kernel::time::Delta::from_secs(1));
        // Broken twin for `make check` (tests/twins.txt): loses some pids.
        #[cfg(forkscale_twin_pid_leak)]
        leak_some(&mut pids);
        let n = count(&pids);
        self.stats.add(QUEUED, n);
        self.lifetime.add(0, n);

        let now = pids.iter().flatten().any(ReleasedPid::must_free_now);
        // Broken twin for `make check` (tests/twins.txt): frees every release at once, so no
        // batch ever forms.
        #[cfg(forkscale_twin_no_batching)]
        let now = {
            let _ = now;
            true
        };
        if self.batch <= 1 || now {
            self.free(&mut pids);
            return;
        }

        let Some(queue) = self.queues.get(current_cpu()) else {
            self.free(&mut pids);
            return;
        };
        // A queue holds `pid_batch` (at most 64) plus one release, so it never overflows; if it
        // did, the pids that did not fit are freed at once below, not lost.
        let mut spill: Released = [const { None }; PIDTYPE_MAX];
        let arm = {
            let mut q = queue.pids.lock();
            let was_empty = q.len() == 0;
            for (pid, slot) in pids.into_iter().flatten().zip(spill.iter_mut()) {
                *slot = q.push(pid);
            }
            if q.len() >= self.batch {
                // Freed under the queue's lock, for the reason given in `flush_all`.
                self.free(q.drain());
                self.stats
                    .add(FLUSHES.wrapping_add(FlushReason::Size.index()), 1);
                false
            } else {
                was_empty
            }
        };
        self.free(&mut spill);
        // Broken twin for `make check` (tests/twins.txt): never arms the timer, so pids wait
        // for a full batch however long that takes.
        #[cfg(forkscale_twin_no_timer)]
        let arm = {
            let _ = arm;
            false
        };
        if arm {
            pid_release::schedule_flush();
        }
    }

    fn flush(&self, reason: FlushReason) {
        // Broken twins for `make check` (tests/twins.txt), never in a normal build: each
        // ignores one reason, which the test named there must notice.
        #[cfg(forkscale_twin_no_restore_flush)]
        if reason == FlushReason::Restore {
            return;
        }
        #[cfg(forkscale_twin_no_pressure_flush)]
        if reason == FlushReason::Pressure {
            return;
        }
        #[cfg(forkscale_twin_no_namespace_flush)]
        if reason == FlushReason::Namespace {
            return;
        }
        #[cfg(forkscale_twin_no_unload_flush)]
        if reason == FlushReason::Unload {
            return;
        }
        self.flush_all(reason);
    }

    fn read_stats(&self) -> PidReleaseStats {
        let mut out = PidReleaseStats {
            queued: self.stats.sum(QUEUED),
            freed: self.stats.sum(FREED),
            batches: self.stats.sum(BATCHES),
            pending: self.pending(),
            flushes: [0; FlushReason::COUNT],
        };
        for (i, f) in out.flushes.iter_mut().enumerate() {
            *f = self.stats.sum(FLUSHES.wrapping_add(i));
        }
        out
    }

    fn reset_stats(&self) {
        self.stats.reset();
    }
}

impl Drop for Batcher {
    fn drop(&mut self) {
        // Dropped after unregistering, when the kernel has had us flush and nothing can be
        // queued any more. Anything still queued means the unload flush did not free it: a
        // bug worth reporting and surviving, so it is freed here.
        let pending = self.pending();
        self.flush_all(FlushReason::Unload);
        // Quiet when the books balance; the tests look for this line (`unload_imbalances()`).
        let (queued, freed) = (self.lifetime.sum(0), self.lifetime.sum(1));
        if queued != freed || pending != 0 {
            pr_err!(
                "pid release: {} pids queued, {} freed, {} pending at unload\n",
                queued,
                freed,
                pending
            );
        }
    }
}
