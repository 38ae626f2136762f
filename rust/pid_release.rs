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
//! gives up and when a pid namespace is torn down, and pids of a dying namespace are never
//! queued. Unloading stops new arrivals, frees everything queued and waits for the RCU puts.

use crate::{counters::current_cpu, counters::Counters, kernel_api::PidApi};
use core::{
    ffi::c_uint,
    ptr::{null_mut, NonNull},
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{
    bindings,
    error::to_result,
    new_spinlock,
    prelude::*,
    sync::{
        lock::{spinlock::SpinLockBackend, Lock},
        rcu, SpinLock,
    },
};

/// The largest `pid_batch`.
pub(crate) const BATCH_MAX: u32 = 64;
const PIDTYPE_MAX: usize = bindings::pid_type_PIDTYPE_MAX as usize;
/// A queue holds up to `BATCH_MAX - 1` pids plus one release.
const QUEUE_CAP: usize = BATCH_MAX as usize - 1 + PIDTYPE_MAX;
const FLUSH_REASONS: usize = bindings::pid_flush_reason_PID_FLUSH_NR as usize;

/// Counter indices: `QUEUED`, `FREED`, `BATCHES`, then one per flush reason.
const QUEUED: usize = 0;
const FREED: usize = 1;
const BATCHES: usize = 2;
const FLUSHES: usize = 3;
const NR_COUNTERS: usize = FLUSHES + FLUSH_REASONS;

/// What the stats file shows; writing 0 there resets it.
static STATS: Counters<NR_COUNTERS> = Counters::new();
/// Since load, for the consistency check at unload; never reset.
static LIFETIME: Counters<2> = Counters::new();

/// A pid without tasks, on its way to being freed.
///
/// # Invariants
///
/// Points to a `struct pid` that the kernel released to this module and that is not freed
/// yet; only its holder may free it.
#[derive(Clone, Copy)]
struct ReleasedPid(NonNull<bindings::pid>);

// SAFETY: a released pid belongs to no task any more; freeing it from any CPU is fine.
unsafe impl Send for ReleasedPid {}

/// Pids released on one CPU, waiting to be freed together.
struct Queue {
    pids: [Option<ReleasedPid>; QUEUE_CAP],
    len: usize,
}

impl Queue {
    const fn new() -> Self {
        Self {
            pids: [None; QUEUE_CAP],
            len: 0,
        }
    }
}

/// Up to one queue's worth of pids, taken out to be freed without the queue's lock.
struct Batch {
    pids: [Option<ReleasedPid>; QUEUE_CAP],
    len: usize,
}

impl Batch {
    fn take(queue: &mut Queue) -> Self {
        let batch = Self {
            pids: queue.pids,
            len: queue.len,
        };
        queue.len = 0;
        batch
    }

    fn as_slice(&self) -> &[Option<ReleasedPid>] {
        &self.pids[..self.len]
    }
}

/// The registered state, reached by the callbacks through [`STATE`].
struct PidRelease {
    api: PidApi,
    batch: usize,
    queues: KVec<Pin<KBox<SpinLock<Queue>>>>,
}

/// Non-null exactly while the callbacks are registered (see [`Registration`]).
static STATE: AtomicPtr<PidRelease> = AtomicPtr::new(null_mut());

impl PidRelease {
    /// Frees `pids` under one `pidmap_lock` acquisition.
    fn free(&self, pids: &[Option<ReleasedPid>]) {
        // SAFETY: `api.lock` is `pidmap_lock`, valid while the kernel runs and taken with plain
        // `spin_lock()` by every user.
        let lock = unsafe { Lock::<(), SpinLockBackend>::from_raw(self.api.lock.as_ptr()) };
        let mut n = 0;
        {
            let _guard = lock.lock();
            for pid in pids.iter().flatten() {
                // SAFETY: `pid` was released to us and not freed (type invariant), and the
                // guard holds `pidmap_lock`.
                unsafe { (self.api.free_locked)(pid.0.as_ptr()) };
                n += 1;
            }
        }
        for pid in pids.iter().flatten() {
            // SAFETY: `pid` went through `pid_free_locked()` above and is not used again.
            unsafe { (self.api.free_rcu)(pid.0.as_ptr()) };
        }
        STATS.add(FREED, n);
        STATS.add(BATCHES, 1);
        LIFETIME.add(1, n);
    }

    fn release(&self, pids: &[Option<ReleasedPid>]) {
        let n = pids.len() as u64;
        STATS.add(QUEUED, n);
        LIFETIME.add(0, n);

        // SAFETY: the pids were released to us and are valid.
        let now = pids
            .iter()
            .flatten()
            .any(|p| unsafe { (self.api.release_now)(p.0.as_ptr()) });
        if self.batch <= 1 || now {
            self.free(pids);
            return;
        }

        // No panicking paths here (a remainder by zero, an index out of bounds): 6.12's
        // objtool does not know Rust's panic functions never return, and warns.
        let Some(queue) = current_cpu()
            .checked_rem(self.queues.len())
            .and_then(|i| self.queues.get(i))
        else {
            self.free(pids);
            return;
        };
        // A queue holds `pid_batch` (at most 64) plus one release, so it never overflows;
        // if it did, the pids that did not fit are freed at once below, not lost.
        let mut spill: [Option<ReleasedPid>; PIDTYPE_MAX] = [None; PIDTYPE_MAX];
        let (full, arm) = {
            let mut q = queue.lock();
            let was_empty = q.len == 0;
            for (i, pid) in pids.iter().enumerate() {
                let at = q.len;
                if let Some(slot) = q.pids.get_mut(at) {
                    *slot = *pid;
                    q.len = at.wrapping_add(1);
                } else if let Some(slot) = spill.get_mut(i) {
                    *slot = *pid;
                }
            }
            if q.len >= self.batch {
                (Some(Batch::take(&mut q)), false)
            } else {
                (None, was_empty)
            }
        };
        if spill.iter().any(Option::is_some) {
            self.free(&spill);
        }
        if let Some(batch) = full {
            self.free(batch.as_slice());
            STATS.add(
                FLUSHES + bindings::pid_flush_reason_PID_FLUSH_SIZE as usize,
                1,
            );
        }
        if arm {
            // SAFETY: a plain call into the kernel.
            unsafe { (self.api.schedule_flush)() };
        }
    }

    /// Frees every queued pid; counts a flush for `reason` if there was any.
    fn flush(&self, reason: usize) {
        let mut any = false;
        for queue in &self.queues {
            let batch = Batch::take(&mut queue.lock());
            if batch.len != 0 {
                self.free(batch.as_slice());
                any = true;
            }
        }
        if any && reason < FLUSH_REASONS {
            STATS.add(FLUSHES + reason, 1);
        }
    }

    fn pending(&self) -> u64 {
        self.queues.iter().map(|q| q.lock().len as u64).sum()
    }
}

fn state<'a>() -> &'a PidRelease {
    // SAFETY: the kernel calls the callbacks only while they are registered, and `STATE` is
    // set before registering and cleared only after unregistering, which waits until no
    // callback runs.
    unsafe { &*STATE.load(Ordering::Acquire) }
}

/// `pid_release_ops.release`.
///
/// # Safety
///
/// `pids` points to `n` (1 to `PIDTYPE_MAX`) pids that the kernel releases to this module.
unsafe extern "C" fn release(pids: *mut *mut bindings::pid, n: c_uint) {
    let mut released: [Option<ReleasedPid>; PIDTYPE_MAX] = [None; PIDTYPE_MAX];
    let mut len = 0;
    for i in 0..(n as usize).min(PIDTYPE_MAX) {
        // SAFETY: the caller guarantees `n` readable entries.
        if let Some(pid) = NonNull::new(unsafe { *pids.add(i) }) {
            // INVARIANT: the kernel released this pid to us.
            released[len] = Some(ReleasedPid(pid));
            len += 1;
        }
    }
    state().release(&released[..len]);
}

/// `pid_release_ops.flush`.
extern "C" fn flush(reason: bindings::pid_flush_reason) {
    state().flush(reason as usize);
}

/// `pid_release_ops.read_stats`.
///
/// # Safety
///
/// `stats` must point to writable memory.
unsafe extern "C" fn read_stats(stats: *mut bindings::pid_release_stats) {
    let mut out = bindings::pid_release_stats {
        queued: STATS.sum(QUEUED),
        freed: STATS.sum(FREED),
        batches: STATS.sum(BATCHES),
        pending: state().pending(),
        flushes: [0; FLUSH_REASONS],
    };
    for (i, f) in out.flushes.iter_mut().enumerate() {
        *f = STATS.sum(FLUSHES + i);
    }
    // SAFETY: the caller guarantees that `stats` is valid for writes.
    unsafe { *stats = out };
}

/// `pid_release_ops.reset_stats`.
extern "C" fn reset_stats() {
    STATS.reset();
}

/// The ops table; C reads it but never writes it.
///
/// # Invariants
///
/// `0.max_delay_ms` is set once, in [`Registration::new`], before the table is registered.
struct Ops(core::cell::UnsafeCell<bindings::pid_release_ops>);

// SAFETY: the table points only to static data and functions, and is written only before it
// is registered (type invariant).
unsafe impl Sync for Ops {}

static OPS: Ops = Ops(core::cell::UnsafeCell::new(bindings::pid_release_ops {
    name: c"forkscale".as_ptr().cast(),
    release: Some(release),
    flush: Some(flush),
    read_stats: Some(read_stats),
    reset_stats: Some(reset_stats),
    max_delay_ms: 0,
}));

/// Released pids go through this module while a `Registration` lives.
///
/// # Invariants
///
/// `OPS` is registered with the kernel and `STATE` points to `state`.
pub(crate) struct Registration {
    state: Pin<KBox<PidRelease>>,
}

impl Registration {
    /// Registers with batches of `batch` pids (1 to [`BATCH_MAX`]) that wait at most
    /// `max_delay_ms`.
    pub(crate) fn new(api: PidApi, batch: u32, max_delay_ms: u32) -> Result<Self> {
        if !(1..=BATCH_MAX).contains(&batch) {
            return Err(EINVAL);
        }
        // SAFETY: `nr_cpu_ids` is set during boot and constant afterwards.
        let cpus = unsafe { bindings::nr_cpu_ids } as usize;
        let mut queues = KVec::with_capacity(cpus, GFP_KERNEL)?;
        for _ in 0..cpus {
            queues.push(
                KBox::pin_init(new_spinlock!(Queue::new()), GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
        }
        let state = KBox::pin(
            PidRelease {
                api,
                batch: batch as usize,
                queues,
            },
            GFP_KERNEL,
        )?;
        let raw = core::ptr::from_ref::<PidRelease>(&state).cast_mut();
        if STATE
            .compare_exchange(null_mut(), raw, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            return Err(EBUSY);
        }
        // SAFETY: not registered yet (type invariant of `Ops`), so nothing reads the table.
        unsafe { (*OPS.0.get()).max_delay_ms = max_delay_ms };
        STATS.reset();
        // SAFETY: `OPS` is static and valid; `register` is the kernel's function.
        let ret = unsafe { (state.api.register)(OPS.0.get()) };
        if let Err(e) = to_result(ret) {
            STATE.store(null_mut(), Ordering::Release);
            return Err(e);
        }
        // INVARIANT: registered above, and `STATE` points to `state`.
        Ok(Self { state })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: `OPS` was registered by `new`. On return the kernel has restored its
        // built-in, had us flush (reason unload) and stopped the timer: no callback runs or
        // will.
        unsafe { (self.state.api.unregister)(OPS.0.get()) };
        // Nothing can be queued any more; this frees nothing unless the kernel skipped the
        // unload flush, which would be a bug worth surviving.
        self.state
            .flush(bindings::pid_flush_reason_PID_FLUSH_UNLOAD as usize);
        // The puts that `pid_free_rcu()` queued run kernel code, but wait for them anyway so
        // that every pid handed to the module is fully gone when it is.
        rcu::rcu_barrier();
        let (queued, freed) = (LIFETIME.sum(0), LIFETIME.sum(1));
        pr_info!(
            "pid release: {} pids queued, {} freed, {} pending\n",
            queued,
            freed,
            self.state.pending()
        );
        STATE.store(null_mut(), Ordering::Release);
    }
}
