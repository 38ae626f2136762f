// SPDX-License-Identifier: GPL-2.0

//! The clone-time css_set read, registered with the kernel's `cgroup_clone` hook.
//!
//! The protocol is the kernel's `seqcount` built-in written with the Rust abstractions: under
//! an RCU guard, read current's css_set and its `kill_seq` inside a `css_set_for_clone_seq`
//! read section and pin the css_set with `inc_not_zero`. Migrations and `cgroup.kill` bump the
//! counter, so an unchanged counter means the two belong together. After [`MAX_TRIES`]
//! invalidated attempts the read runs under `css_set_lock`, so writers cannot starve a fork.

use crate::{
    counters::Counters,
    css_set::{CssSetRef, CurrentCssSet},
    kernel_api::CloneApi,
};
use core::{
    ffi::c_uint,
    ptr::null_mut,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{
    bindings,
    error::to_result,
    prelude::*,
    sync::{lock::spinlock::SpinLockIrqBackend, lock::Lock, rcu, ReadPath, SeqCount},
};

/// Lockless attempts before the read takes `css_set_lock`.
pub(crate) const MAX_TRIES: u32 = 4;

/// Indices into [`COUNTERS`].
const LOCKLESS: usize = 0;
const RETRIES: usize = 1;
const LOCKED: usize = 2;

static COUNTERS: Counters<3> = Counters::new();

/// The hooks, for callbacks that C calls without a context argument. Non-null exactly while
/// the callbacks are registered (see [`Registration`]).
static API: AtomicPtr<CloneApi> = AtomicPtr::new(null_mut());

/// Reads current's css_set and `kill_seq`, pinning the css_set.
fn read(api: &CloneApi) -> (CssSetRef, u32) {
    let rcu = rcu::read_lock();
    // SAFETY: `api.lock` is `css_set_lock`, valid while the kernel runs; every user takes it
    // with interrupts disabled, as the irq backend does. `cgroup_css_set_fork()` calls us with
    // interrupts enabled (it may sleep on the threadgroup rwsem just before), and the backend
    // restores the interrupt state on unlock either way.
    let lock = unsafe { Lock::<(), SpinLockIrqBackend>::from_raw(api.lock.as_ptr()) };
    // SAFETY: `api.seqcount` is `css_set_for_clone_seq`, valid while the kernel runs and
    // written only under `css_set_lock`.
    let seq = unsafe { SeqCount::from_raw(api.seqcount.as_ptr(), lock) };

    loop {
        let (attempt, path) = seq.read_or_lock(MAX_TRIES, || {
            let cset = CurrentCssSet::read(&rcu)?;
            let kill_seq = cset.kill_seq();
            Some((cset.try_get(api)?, kill_seq))
        });
        match path {
            ReadPath::Lockless { retries } => {
                COUNTERS.add(LOCKLESS, 1);
                if retries != 0 {
                    COUNTERS.add(RETRIES, u64::from(retries));
                }
            }
            ReadPath::Locked => {
                COUNTERS.add(LOCKED, 1);
                COUNTERS.add(RETRIES, u64::from(MAX_TRIES));
            }
        }
        // A validated attempt has failed `inc_not_zero` only if current's css_set died without
        // a migration, which cannot happen: current holds a reference on it. Under the lock
        // the read cannot fail at all. Looping keeps the fork correct regardless.
        if let Some(found) = attempt {
            return found;
        }
    }
}

/// `cgroup_clone_ops.get_cset`.
///
/// # Safety
///
/// Called by the kernel from `cgroup_css_set_fork()`, under `rcu_read_lock()`, with
/// `kill_seq` pointing to writable memory.
unsafe extern "C" fn get_cset(kill_seq: *mut c_uint) -> *mut bindings::css_set {
    // SAFETY: the kernel calls this only while it is registered, and `API` is set before
    // registering and cleared only after unregistering, which waits until no call runs.
    let api = unsafe { &*API.load(Ordering::Acquire) };
    let (cset, seq) = read(api);
    // SAFETY: the caller guarantees that `kill_seq` is valid for writes.
    unsafe { *kill_seq = seq };
    cset.into_raw()
}

/// `cgroup_clone_ops.read_stats`.
///
/// # Safety
///
/// `stats` must point to writable memory.
unsafe extern "C" fn read_stats(stats: *mut bindings::cgroup_clone_stats) {
    // SAFETY: the caller guarantees that `stats` is valid for writes.
    unsafe {
        *stats = bindings::cgroup_clone_stats {
            lockless: COUNTERS.sum(LOCKLESS),
            retries: COUNTERS.sum(RETRIES),
            locked: COUNTERS.sum(LOCKED),
        }
    };
}

/// `cgroup_clone_ops.reset_stats`.
extern "C" fn reset_stats() {
    COUNTERS.reset();
}

/// The ops table; C reads it but never writes it.
struct Ops(bindings::cgroup_clone_ops);

// SAFETY: the table is immutable and points only to static data and functions.
unsafe impl Sync for Ops {}

static OPS: Ops = Ops(bindings::cgroup_clone_ops {
    name: kernel::str::as_char_ptr_in_const_context(c"forkscale"),
    get_cset: Some(get_cset),
    read_stats: Some(read_stats),
    reset_stats: Some(reset_stats),
});

/// Forks use this module's read while a `Registration` lives.
///
/// # Invariants
///
/// `OPS` is registered with the kernel and `API` points to `api`.
pub(crate) struct Registration {
    api: Pin<KBox<CloneApi>>,
}

impl Registration {
    /// Registers the read, or fails with the kernel's error (`EBUSY` if another module
    /// provides it).
    /// `module` is the module that provides the read: if it went away still registered, the
    /// kernel would detach the read before freeing its text.
    pub(crate) fn new(api: CloneApi, module: &'static ThisModule) -> Result<Self> {
        let api = KBox::pin(api, GFP_KERNEL)?;
        let raw = core::ptr::from_ref::<CloneApi>(&*api).cast_mut();
        if API
            .compare_exchange(null_mut(), raw, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            return Err(EBUSY);
        }
        // SAFETY: `OPS` is static and valid; `register` is the kernel's function, which only
        // records `module` to detach `OPS` if the module goes away still registered.
        let ret = unsafe { (api.register)(&OPS.0, module.as_ptr()) };
        if let Err(e) = to_result(ret) {
            API.store(null_mut(), Ordering::Release);
            return Err(e);
        }
        COUNTERS.reset();
        // INVARIANT: registered above, and `API` points to `api`.
        Ok(Self { api })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: `OPS` was registered by `new`. On return the kernel has restored its
        // built-in and waited for a grace period, so no CPU runs `get_cset` any more.
        unsafe { (self.api.unregister)(&OPS.0) };
        API.store(null_mut(), Ordering::Release);
    }
}
