// SPDX-License-Identifier: GPL-2.0

//! Batched unlinking of dead tasks from their css_sets, registered with the kernel's
//! `cgroup_dead` hook.
//!
//! Every task that made its final context switch must leave its css_set's task list, under the
//! global `css_set_lock`. With `dead_batch=N` (2 to [`BATCH_MAX`]) dead tasks wait in a per-CPU
//! queue until it holds `N`, or until about `dead_max_delay_ms` after the queue stopped being
//! empty (the kernel's timer), and a queue is unlinked under one acquisition for each
//! [`UNLINK_MAX`] tasks; `dead_batch=1` unlinks
//! each task at once, as the kernel does. The context switch that hands a task over unlinks at
//! most that task, as the kernel's does: a queue that reaches `N` goes to the kernel's flush
//! thread ([`cgroup_dead::flush_soon`]), and a task that finds its queue at capacity meanwhile
//! is unlinked at once.
//!
//! A queued task still counts in its cgroup, so the kernel flushes the queues wherever a reader
//! would notice: before a task walk, a read of `cgroup.events` or `cgroup.type`, a write to a
//! cgroup file, and a migration's check of its destination. A flush reads each queue's length
//! without its lock first, so that the common case, nothing queued, costs a load per CPU.
//! What stays visible is the timing of `populated 0`'s notification, about the maximum delay
//! late at most. Unloading stops new arrivals and unlinks everything queued.

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
    cgroup_dead::{
        self,
        CgroupDead,
        CgroupDeadStats,
        DeadTask,
        FlushReason,
        UNLINK_MAX, //
    },
    new_spinlock_irq,
    prelude::*,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Release, //
        },
        SpinLockIrq,
        SpinLockIrqGuard, //
    },
};

/// The largest `dead_batch`.
pub(crate) const BATCH_MAX: u32 = 64;
/// Room for the largest batch and as many more tasks again: the exits that come before the
/// flush thread runs wait too, rather than each take the lock at once.
const QUEUE_CAP: usize = 2 * BATCH_MAX as usize;

/// Counter indices: `QUEUED`, `UNLINKED`, `BATCHES`, then one per flush reason.
const QUEUED: usize = 0;
const UNLINKED: usize = 1;
const BATCHES: usize = 2;
const FLUSHES: usize = 3;
const NR_COUNTERS: usize = FLUSHES + FlushReason::COUNT;

/// One CPU's queue of dead tasks. Locked with interrupts off: a flush may come from a task walk
/// that starts under a lock also taken in interrupts (a BPF program's). On cache lines of its
/// own, as `pid_release`'s queues are.
///
/// A flush holds `flushing` while it unlinks and `tasks` only while it moves tasks out, so that
/// an exit, which takes `tasks` alone, waits at most for a move of [`UNLINK_MAX`] tasks and the
/// shift of the rest (`QUEUE_CAP` slots in all), never for an unlink.
///
/// # Invariants
///
/// `len` is zero only while `tasks` is empty and no flush holds tasks it took from it: only a
/// flush stores a zero, under both locks, after its unlink. Otherwise it is `tasks`' length as
/// of the last store, under `tasks`' lock.
#[pin_data]
#[cfg_attr(not(forkscale_packed_percpu), repr(align(64)))]
struct Queue {
    #[pin]
    tasks: SpinLockIrq<Batch<DeadTask, QUEUE_CAP>>,
    /// Held by a flush from its first look at `tasks` until what it took is unlinked: a
    /// concurrent flush (say, before an rmdir) must not return before these tasks are unlinked.
    #[pin]
    flushing: SpinLockIrq<()>,
    /// Read without the lock, so that a flush passes an empty queue by: a migration flushes
    /// twice, and almost always finds every queue empty. The kernel's thread reads it too, for
    /// the timer and for a full queue (`dead()` says why none is missed). On a line of its own,
    /// so that those reads from other CPUs leave the lock's line alone.
    len: OwnLine<Atomic<u32>>,
}

/// A value on a cache line of its own (unless the bench's `packed_percpu` build undoes it).
#[cfg_attr(not(forkscale_packed_percpu), repr(align(64)))]
struct OwnLine<T>(T);

impl Queue {
    /// Publishes the length of `q`, this queue's tasks, locked; where it is zero, call it only
    /// holding `flushing`, after the tasks taken are unlinked. Release: a flush that reads the
    /// zero sees the css_sets those tasks left.
    fn publish_len(&self, q: &SpinLockIrqGuard<'_, Batch<DeadTask, QUEUE_CAP>>) {
        // At most `QUEUE_CAP`: the cast does not truncate.
        self.len.0.store(q.len() as u32, Release);
    }
}

/// Per-CPU queues of dead tasks, unlinked off the context switch, under one `css_set_lock`
/// acquisition for each [`UNLINK_MAX`] of a queue.
pub(crate) struct Unlinker {
    batch: usize,
    /// One queue for each CPU id below `nr_cpu_ids`, indexed by [`current_cpu()`].
    queues: Pin<KVBox<[Queue]>>,
    /// What the stats file shows; writing 0 there resets it.
    stats: Counters<NR_COUNTERS>,
    /// Tasks queued and unlinked since load, for the consistency check at unload; never reset.
    lifetime: Counters<2>,
}

impl Unlinker {
    /// Batches of `batch` tasks (1 to [`BATCH_MAX`]).
    pub(crate) fn new(batch: u32) -> Result<Self> {
        if !(1..=BATCH_MAX).contains(&batch) {
            return Err(EINVAL);
        }
        let queues = KVBox::pin_slice(
            |_| {
                try_pin_init!(Queue {
                    tasks <- new_spinlock_irq!(Batch::new()),
                    flushing <- new_spinlock_irq!(()),
                    // INVARIANT: the batch is empty.
                    len: OwnLine(Atomic::new(0)),
                }? Error)
            },
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

    /// Unlinks the tasks in `tasks` under one `css_set_lock` acquisition for each
    /// [`UNLINK_MAX`] of them, counted first: the unlink can wake a reader, who may read the stats
    /// at once.
    fn unlink(&self, tasks: &mut [Option<DeadTask>]) {
        for chunk in tasks.chunks_mut(UNLINK_MAX) {
            let n = count(chunk);
            if n == 0 {
                continue;
            }
            self.stats.add(UNLINKED, n);
            self.stats.add(BATCHES, 1);
            self.lifetime.add(1, n);
            cgroup_dead::unlink(chunk.iter_mut().filter_map(Option::take));
        }
    }

    /// Unlinks every queued task, or for [`FlushReason::Size`] the queues that hold a batch;
    /// counts a flush for `reason` if there was any.
    fn flush_all(&self, reason: FlushReason) {
        // At least 1, so that an empty queue is always passed by.
        let least = if reason == FlushReason::Size {
            self.batch
        } else {
            1
        };
        let mut any = false;
        for queue in self.queues.iter() {
            // Acquire, paired with `publish_len()`: a `dead()` whose publish happens before this
            // load is counted here, or its task was unlinked before the zero was stored.
            if (queue.len.0.load(Acquire) as usize) < least {
                continue;
            }
            any |= self.flush_queue(queue, least);
        }
        if any {
            self.stats.add(FLUSHES.wrapping_add(reason.index()), 1);
        }
    }

    /// Unlinks the tasks `queue` holds now, if at least `least`, at most [`UNLINK_MAX`] a time,
    /// oldest first, each move out under the queue's lock and each unlink after it; returns
    /// whether it unlinked any.
    fn flush_queue(&self, queue: &Queue, least: usize) -> bool {
        let _flushing = queue.flushing.lock();
        // Tasks queued later need not be unlinked by this flush: a reader that asked for it
        // only needs those that died before, and a producer must not keep it here.
        let mut left = queue.tasks.lock().len();
        if left < least {
            return false;
        }
        while left != 0 {
            let mut chunk: [Option<DeadTask>; UNLINK_MAX] = [const { None }; UNLINK_MAX];
            let want = chunk.get_mut(..left.min(UNLINK_MAX)).unwrap_or_default();
            let n = queue.tasks.lock().take_oldest(want);
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
            self.unlink(&mut chunk);
        }
        let rest = {
            let q = queue.tasks.lock();
            // INVARIANT: under both locks, after the unlink of every task this flush took.
            queue.publish_len(&q);
            q.len()
        };
        // Tasks queued after this flush looked found the queue not empty, so they armed no
        // timer and, past `dead_batch`, asked for no flush: ask for both on their behalf, or they
        // would wait for a reader.
        if rest != 0 {
            cgroup_dead::schedule_flush();
        }
        if rest >= self.batch {
            cgroup_dead::flush_soon();
        }
        true
    }

    fn pending(&self) -> u64 {
        self.queues
            .iter()
            .fold(0, |n, q| n.wrapping_add(q.tasks.lock().len() as u64))
    }
}

#[vtable]
impl CgroupDead for Unlinker {
    const NAME: &'static CStr = c"forkscale";

    fn dead(&self, task: DeadTask) {
        self.stats.add(QUEUED, 1);
        self.lifetime.add(0, 1);
        let queue = self.queues.get(current_cpu()).filter(|_| self.batch > 1);
        // Broken twin for `make check` (tests/twins.txt): unlinks every task at once, so no
        // batch ever forms.
        #[cfg(forkscale_twin_no_dead_batching)]
        let queue: Option<&Queue> = {
            let _ = queue;
            None
        };
        let Some(queue) = queue else {
            self.unlink(&mut [Some(task)]);
            return;
        };
        let (spill, arm, kick) = {
            let mut q = queue.tasks.lock();
            let was_empty = q.len() == 0;
            // A queue at capacity, which the flush thread has not reached yet, hands the task
            // back, to be unlinked at once below: the one unlink the kernel makes here too.
            let spill = q.push(task);
            let full = q.len() >= self.batch;
            // Broken twin for `make check` (tests/twins.txt): unlinks a full queue here, in the
            // context switch, as the module did before the kernel's flush thread took it.
            #[cfg(forkscale_twin_switch_unlink)]
            let full = {
                if full {
                    self.unlink(q.drain());
                    self.stats
                        .add(FLUSHES.wrapping_add(FlushReason::Size.index()), 1);
                }
                false
            };
            // Broken twin for `make check` (tests/twins.txt): a push leaves the published length
            // as it was (zero, for a queue that was empty), so flushes pass the task by.
            #[cfg(not(forkscale_twin_stale_queue_len))]
            // INVARIANT: under the lock, after the push.
            queue.publish_len(&q);
            // Asks for the flush thread once per batch: when the queue reaches `dead_batch`.
            (spill, was_empty && !full, full && q.len() == self.batch)
        };
        self.unlink(&mut [spill]);
        // Broken twin for `make check` (tests/twins.txt): never arms the timer, so dead tasks
        // wait for a full batch, or a reader, however long that takes.
        #[cfg(forkscale_twin_no_dead_timer)]
        let arm = {
            let _ = arm;
            false
        };
        // Against the kernel's flushes, whose thread takes the work off its list under its
        // worker's lock before it reads the lengths without the queues' locks: the calls below
        // take that lock after `publish_len()`, so either the flush still to come sees this
        // queue's length, or the work was off the list and is queued again.
        if kick {
            cgroup_dead::flush_soon();
        }
        if arm {
            cgroup_dead::schedule_flush();
        }
    }

    fn flush(&self, reason: FlushReason) {
        // Broken twins for `make check` (tests/twins.txt), never in a normal build: each
        // ignores one reason, which the test named there must notice.
        #[cfg(forkscale_twin_no_iter_flush)]
        if reason == FlushReason::Iter {
            return;
        }
        #[cfg(forkscale_twin_no_read_flush)]
        if reason == FlushReason::Read {
            return;
        }
        #[cfg(forkscale_twin_no_write_flush)]
        if reason == FlushReason::Write {
            return;
        }
        #[cfg(forkscale_twin_no_migrate_flush)]
        if reason == FlushReason::Migrate {
            return;
        }
        #[cfg(forkscale_twin_no_dead_unload_flush)]
        if reason == FlushReason::Unload {
            return;
        }
        self.flush_all(reason);
    }

    fn read_stats(&self) -> CgroupDeadStats {
        let mut out = CgroupDeadStats {
            queued: self.stats.sum(QUEUED),
            unlinked: self.stats.sum(UNLINKED),
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

impl Drop for Unlinker {
    fn drop(&mut self) {
        // Dropped after unregistering, when the kernel has had us flush and nothing can be
        // queued any more. Anything still queued means the unload flush missed it: a bug worth
        // reporting and surviving, so it is unlinked here.
        let pending = self.pending();
        self.flush_all(FlushReason::Unload);
        let (queued, unlinked) = (self.lifetime.sum(0), self.lifetime.sum(1));
        if queued != unlinked || pending != 0 {
            pr_err!(
                "exit unlink: {} tasks queued, {} unlinked, {} pending at unload\n",
                queued,
                unlinked,
                pending
            );
        }
    }
}
