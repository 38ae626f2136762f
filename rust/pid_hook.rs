// SPDX-License-Identifier: GPL-2.0

//! The kernel's pid-release hook (`include/linux/pid_release.h`) as a trait and a
//! registration, and the calls an implementation makes back into the kernel.
//!
//! As with the clone-read hook, the implementation is embedded with its C ops table in a
//! [`Registration`], and the callbacks find it from the table the kernel passes them.

use crate::released_pid::ReleasedPid;
use core::ffi::c_uint;
use kernel::{
    bindings,
    error::{to_result, VTABLE_DEFAULT_ERROR},
    prelude::*,
    types::Opaque,
};

/// The most pids one task releases at once.
pub(crate) const PIDTYPE_MAX: usize = bindings::pid_type_PIDTYPE_MAX as usize;

/// The pids one task released: 1 to [`PIDTYPE_MAX`] of them, in the first slots.
pub(crate) type Released = [Option<ReleasedPid>; PIDTYPE_MAX];

/// The largest batch [`free`] takes: 64 pids plus one task's release.
pub(crate) const FREE_MAX: usize = 64 + PIDTYPE_MAX;

/// An implementation of freeing released pids.
#[vtable]
pub(crate) trait PidRelease: Sync + Sized + 'static {
    /// Shown as `impl:` in `/sys/kernel/debug/pid_release/stats`.
    const NAME: &'static CStr;

    /// Takes over the pids one task released. Each must reach [`free`] within the maximum
    /// delay given at registration (the kernel's timer calls [`PidRelease::flush`] once
    /// [`schedule_flush`] armed it). Runs under RCU in process context; must not sleep.
    fn release(&self, pids: Released);

    /// Frees every queued pid now, before returning: a fork at the pid limit relies on it.
    /// Runs concurrently with `release` and with itself; must not sleep.
    fn flush(&self, reason: bindings::pid_flush_reason);

    /// The counters for the stats file.
    fn read_stats(&self) -> bindings::pid_release_stats {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Zeroes the counters, except `pending`.
    fn reset_stats(&self) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// Frees `pids` (at most [`FREE_MAX`]; any beyond stay with the iterator) under one
/// `pidmap_lock` acquisition, which the kernel takes. Returns how many it freed.
pub(crate) fn free(pids: impl IntoIterator<Item = ReleasedPid>) -> usize {
    let mut raw = [core::ptr::null_mut::<bindings::pid>(); FREE_MAX];
    let mut n: usize = 0;
    for (slot, pid) in raw.iter_mut().zip(pids) {
        *slot = pid.into_raw();
        n += 1;
    }
    if n != 0 {
        // SAFETY: `raw` holds `n` pids released to this module and not freed (the invariant of
        // `ReleasedPid`); their tokens were consumed above, so nothing frees them again.
        unsafe { bindings::pid_release_free(raw.as_mut_ptr(), n as c_uint) };
    }
    n
}

/// Arms the kernel's timer, which flushes within the registered maximum delay. Cheap if
/// armed already; harmless without a registration.
#[inline]
pub(crate) fn schedule_flush() {
    // SAFETY: a plain call with no precondition.
    unsafe { bindings::pid_release_schedule_flush() };
}

/// Released pids go through `T` while a `Registration<T>` lives.
///
/// # Invariants
///
/// `ops` holds [`Registration::OPS`] with the registered maximum delay, and is registered with
/// the kernel, which passes it to the callbacks until `drop` unregisters it.
///
/// `ops` is the last field, for the reasons given at the clone hook's `Registration`.
#[pin_data(PinnedDrop)]
pub(crate) struct Registration<T: PidRelease> {
    data: T,
    #[pin]
    ops: Opaque<bindings::pid_release_ops>,
}

// SAFETY: the C table is written once, before it is registered, and only read afterwards; the
// kernel calls back on any CPU, which `T: Sync` allows. Dropping unregisters, which any task
// may do.
unsafe impl<T: PidRelease + Send> Send for Registration<T> {}
// SAFETY: as above; `&Registration` only gives out `&T`.
unsafe impl<T: PidRelease> Sync for Registration<T> {}

impl<T: PidRelease> Registration<T> {
    /// The C table for `T`, without its maximum delay.
    const OPS: bindings::pid_release_ops = bindings::pid_release_ops {
        name: kernel::str::as_char_ptr_in_const_context(T::NAME),
        release: Some(Self::release),
        flush: Some(Self::flush),
        read_stats: if T::HAS_READ_STATS {
            Some(Self::read_stats)
        } else {
            None
        },
        reset_stats: if T::HAS_RESET_STATS {
            Some(Self::reset_stats)
        } else {
            None
        },
        max_delay_ms: 0,
    };

    /// Hands released pids to `data`, which frees each within `max_delay_ms` (1 to 1000), or
    /// fails with the kernel's error (`EINVAL`, or `EBUSY` if another module is registered).
    /// If `module` went away still registered, the kernel would detach `data` before freeing
    /// the module's text.
    pub(crate) fn new(
        data: T,
        max_delay_ms: u32,
        module: &'static ThisModule,
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // `data` is in place before `ops` is registered: a callback may run at once.
            data,
            ops <- Opaque::try_ffi_init(move |slot: *mut bindings::pid_release_ops| {
                // SAFETY: `slot` is valid for writes and not registered yet.
                unsafe {
                    slot.write(bindings::pid_release_ops {
                        max_delay_ms,
                        ..Self::OPS
                    })
                };
                // SAFETY: `slot` holds a complete table. It is pinned inside `Self`, whose
                // `data` is initialised, and stays registered until `drop`. The kernel checks
                // the delay and only records `module`.
                to_result(unsafe { bindings::__pid_release_ops_register(slot, module.as_ptr()) })
            }),
        }? Error)
    }

    /// The registration whose table is `ops`.
    ///
    /// # Safety
    ///
    /// `ops` must be the table of a `Registration<T>` that stays registered for `'a`.
    #[inline]
    unsafe fn from_ops<'a>(ops: *const bindings::pid_release_ops) -> &'a Self {
        let field = Opaque::cast_from(ops).cast_mut();
        // SAFETY: by the caller, `field` is the `ops` field of a `Registration<T>`, so the
        // containing struct starts `offset_of!(Self, ops)` bytes before it.
        let this = unsafe { kernel::container_of!(field, Self, ops) };
        // SAFETY: the registration lives while it is registered, for `'a` (caller), and is
        // only shared.
        unsafe { &*this }
    }

    /// `pid_release_ops.release`.
    ///
    /// # Safety
    ///
    /// Called by the kernel with this type's registered `ops` and `n` (1 to `PIDTYPE_MAX`)
    /// readable pids that it releases to the module, once.
    unsafe extern "C" fn release(
        ops: *const bindings::pid_release_ops,
        pids: *mut *mut bindings::pid,
        n: c_uint,
    ) {
        // SAFETY: the kernel passes our registered table, which stays registered for this
        // call: unregistering waits until no CPU runs a callback.
        let this = unsafe { Self::from_ops(ops) };
        let mut released: Released = [const { None }; PIDTYPE_MAX];
        for (i, slot) in released.iter_mut().enumerate().take(n as usize) {
            // SAFETY: the caller guarantees `n` readable entries, and `i < n`.
            let pid = unsafe { pids.add(i).read() };
            // SAFETY: the kernel released each of these pids to us, once.
            *slot = unsafe { ReleasedPid::new(pid) };
        }
        this.data.release(released);
    }

    /// `pid_release_ops.flush`.
    ///
    /// # Safety
    ///
    /// Called by the kernel with this type's registered `ops`.
    unsafe extern "C" fn flush(
        ops: *const bindings::pid_release_ops,
        reason: bindings::pid_flush_reason,
    ) {
        // SAFETY: as in `release`.
        let this = unsafe { Self::from_ops(ops) };
        this.data.flush(reason);
    }

    /// `pid_release_ops.read_stats`.
    ///
    /// # Safety
    ///
    /// Called by the kernel with this type's registered `ops` and `stats` valid for writes.
    unsafe extern "C" fn read_stats(
        ops: *const bindings::pid_release_ops,
        stats: *mut bindings::pid_release_stats,
    ) {
        // SAFETY: as in `release`.
        let this = unsafe { Self::from_ops(ops) };
        let out = this.data.read_stats();
        // SAFETY: the caller guarantees that `stats` is valid for writes.
        unsafe { stats.write(out) };
    }

    /// `pid_release_ops.reset_stats`.
    ///
    /// # Safety
    ///
    /// Called by the kernel with this type's registered `ops`.
    unsafe extern "C" fn reset_stats(ops: *const bindings::pid_release_ops) {
        // SAFETY: as in `release`.
        let this = unsafe { Self::from_ops(ops) };
        this.data.reset_stats();
    }
}

#[pinned_drop]
impl<T: PidRelease> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: `ops` is registered (type invariant). On return the kernel has put its
        // built-in back, had `data` flush (reason unload), stopped the timer and waited until
        // no CPU runs a callback, so `data` may go.
        unsafe { bindings::pid_release_ops_unregister(self.ops.get()) };
    }
}
