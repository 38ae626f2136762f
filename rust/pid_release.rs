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

use crate::{
    counters::current_cpu, counters::Counters, kernel_api::PidApi, released_pid::ReleasedPid,
};
use core::{
    ffi::c_uint,
    ptr::null_mut,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{bindings, error::to_result, new_spinlock, prelude::*, sync::SpinLock};

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

/// Up to `QUEUE_CAP` released pids waiting on one CPU.
struct Pids {
    pids: [Option<ReleasedPid>; QUEUE_CAP],
    len: usize,
}

impl Pids {
    const fn new() -> Self {
        Self {
            pids: [const { None }; QUEUE_CAP],
            len: 0,
        }
    }

    /// Adds `pid`, or hands it back if full.
    fn push(&mut self, pid: ReleasedPid) -> Option<ReleasedPid> {
        match self.pids.get_mut(self.len) {
            Some(slot) => {
                *slot = Some(pid);
                self.len += 1;
                None
            }
            None => Some(pid),
        }
    }

    /// Moves every pid out, leaving `self` empty.
    fn drain(&mut self) -> impl Iterator<Item = ReleasedPid> + '_ {
        let len = core::mem::replace(&mut self.len, 0);
        self.pids.iter_mut().take(len).filter_map(Option::take)
    }
}

/// The registered state, reached by the callbacks through [`STATE`].
struct PidRelease {
    api: PidApi,
    batch: usize,
    queues: KVec<Pin<KBox<SpinLock<Pids>>>>,
}

/// Non-null exactly while the callbacks are registered (see [`Registration`]).
static STATE: AtomicPtr<PidRelease> = AtomicPtr::new(null_mut());

impl PidRelease {
    /// Frees `pids` (at most `QUEUE_CAP`) under one `pidmap_lock` acquisition, which the kernel
    /// takes. Consumes them.
    fn free(&self, pids: impl IntoIterator<Item = ReleasedPid>) {
        let mut raw = [core::ptr::null_mut::<bindings::pid>(); QUEUE_CAP];
        let mut n: usize = 0;
        for (slot, pid) in raw.iter_mut().zip(pids) {
            *slot = pid.into_raw();
            n += 1;
        }
        if n == 0 {
            return;
        }
        // SAFETY: `raw` holds `n` pids that were released to us and are not freed (type
        // invariant of `ReleasedPid`); their tokens were consumed above, so nothing frees them
        // again.
        unsafe { (self.api.free)(raw.as_mut_ptr(), n as c_uint) };
        STATS.add(FREED, n as u64);
        STATS.add(BATCHES, 1);
        LIFETIME.add(1, n as u64);
    }

    /// Takes over the pids one task released.
    fn release(&self, pids: [Option<ReleasedPid>; PIDTYPE_MAX]) {
        let n = pids.iter().flatten().count() as u64;
        STATS.add(QUEUED, n);
        LIFETIME.add(0, n);

        // SAFETY: the pids were released to us and are valid until freed.
        let now = pids
            .iter()
            .flatten()
            .any(|p| unsafe { (self.api.release_now)(p.as_ptr()) });
        if self.batch <= 1 || now {
            self.free(pids.into_iter().flatten());
            return;
        }

        // No panicking paths here (a remainder by zero, an index out of bounds).
        let Some(queue) = current_cpu()
            .checked_rem(self.queues.len())
            .and_then(|i| self.queues.get(i))
        else {
            self.free(pids.into_iter().flatten());
            return;
        };
        // A queue holds `pid_batch` (at most 64) plus one release, so it never overflows; if it
        // did, the pids that did not fit are freed at once below, not lost.
        let mut spill: [Option<ReleasedPid>; PIDTYPE_MAX] = [const { None }; PIDTYPE_MAX];
        let arm = {
            let mut q = queue.lock();
            let was_empty = q.len == 0;
            for (pid, slot) in pids.into_iter().flatten().zip(spill.iter_mut()) {
                *slot = q.push(pid);
            }
            if q.len >= self.batch {
                // Freed under the queue's lock, for the reason given in `flush`.
                self.free(q.drain());
                STATS.add(
                    FLUSHES + bindings::pid_flush_reason_PID_FLUSH_SIZE as usize,
                    1,
                );
                false
            } else {
                was_empty
            }
        };
        if spill.iter().any(Option::is_some) {
            self.free(spill.into_iter().flatten());
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
            // Free under the queue's lock: a concurrent flush (say, alloc_pid()'s pressure
            // flush) that finds the queue empty must not return before these pids are back.
            let mut q = queue.lock();
            if q.len != 0 {
                self.free(q.drain());
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

/// The registered state. `None` only if the kernel called back without a registration.
fn state<'a>() -> Option<&'a PidRelease> {
    let ptr = STATE.load(Ordering::Acquire);
    // SAFETY: `STATE` is null or points to the registered state, which is set before
    // registering and freed only after unregistering, which waits until no callback runs.
    unsafe { ptr.as_ref() }
}

/// `pid_release_ops.release`.
///
/// # Safety
///
/// `pids` points to `n` (1 to `PIDTYPE_MAX`) pids that the kernel releases to this module.
unsafe extern "C" fn release(pids: *mut *mut bindings::pid, n: c_uint) {
    let mut released: [Option<ReleasedPid>; PIDTYPE_MAX] = [const { None }; PIDTYPE_MAX];
    for (i, slot) in released.iter_mut().enumerate().take(n as usize) {
        // SAFETY: the caller guarantees `n` readable entries, and `i < n`.
        let pid = unsafe { *pids.add(i) };
        // SAFETY: the kernel released each of these pids to us, once.
        *slot = unsafe { ReleasedPid::new(pid) };
    }
    // Without a registration (which cannot happen) the pids leak, which beats freeing them
    // without knowing how.
    if let Some(state) = state() {
        state.release(released);
    }
}

/// `pid_release_ops.flush`.
extern "C" fn flush(reason: bindings::pid_flush_reason) {
    if let Some(state) = state() {
        state.flush(reason as usize);
    }
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
        pending: state().map_or(0, PidRelease::pending),
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
    name: kernel::str::as_char_ptr_in_const_context(c"forkscale"),
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
    /// `max_delay_ms`. `module` provides the ops: if it went away still registered, the kernel
    /// would detach them before freeing its text.
    pub(crate) fn new(
        api: PidApi,
        batch: u32,
        max_delay_ms: u32,
        module: &'static ThisModule,
    ) -> Result<Self> {
        if !(1..=BATCH_MAX).contains(&batch) {
            return Err(EINVAL);
        }
        let cpus = kernel::cpu::nr_cpu_ids() as usize;
        let mut queues = KVec::with_capacity(cpus, GFP_KERNEL)?;
        for _ in 0..cpus {
            queues.push(
                KBox::pin_init(new_spinlock!(Pids::new()), GFP_KERNEL)?,
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
        // SAFETY: `OPS` is static and valid; `register` is the kernel's function, which only
        // records `module` to detach `OPS` if the module goes away still registered.
        let ret = unsafe { (state.api.register)(OPS.0.get(), module.as_ptr()) };
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
