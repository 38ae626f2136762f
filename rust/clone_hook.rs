// SPDX-License-Identifier: GPL-2.0

//! The kernel's clone-read hook (`include/linux/cgroup_clone.h`) as a trait and a registration.
//!
//! A type that implements [`CloneRead`] is embedded, with its C ops table, in a
//! [`Registration`]. The kernel passes that table to every callback, which finds the
//! implementation from it: there is no global pointer to the implementation.

use crate::css_set::CssSet;
use core::{ffi::c_uint, marker::PhantomData};
use kernel::{
    bindings,
    error::{to_result, VTABLE_DEFAULT_ERROR},
    prelude::*,
    sync::aref::ARef,
    types::Opaque,
};

/// Proof that the code runs in the hook's call from `cgroup_css_set_fork()`, on the forking
/// task.
///
/// There, `cgroup_threadgroup_rwsem` is held for reading (under `favordynmods`, current's
/// threadgroup rwsem too), so no other task can rewrite current's `cgroups`, and interrupts
/// are enabled.
///
/// # Invariants
///
/// A `ForkContext` exists only during such a call; it is neither `Send` nor `Sync`, and only
/// [`Registration`]'s callback creates one, lending it out by reference.
pub(crate) struct ForkContext(PhantomData<*mut ()>);

/// An implementation of the clone-time css_set read.
#[vtable]
pub(crate) trait CloneRead: Sync + Sized + 'static {
    /// Shown as `impl:` in `/sys/kernel/debug/cgroup_clone/stats`.
    const NAME: &'static CStr;

    /// Returns current's css_set, pinned, and the `kill_seq` of its default-hierarchy cgroup.
    ///
    /// The two must be consistent: a `cgroup.kill` that the child could miss must either be
    /// seen in the `kill_seq` or have happened before the css_set was read. Must not sleep.
    fn get_cset(&self, ctx: &ForkContext) -> (ARef<CssSet>, u32);

    /// The counters for the stats file.
    fn read_stats(&self) -> bindings::cgroup_clone_stats {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Zeroes the counters.
    fn reset_stats(&self) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// Forks use `T`'s read while a `Registration<T>` lives.
///
/// # Invariants
///
/// `ops` holds [`Registration::OPS`] and is registered with the kernel, which passes it to
/// the callbacks until `drop` unregisters it.
///
/// `ops` is the last field: pin-init initialises fields in order, so nothing can fail after the
/// table is registered, and `data` is in place before. `Opaque` makes the struct `!Unpin`, so
/// the `&mut` that pin-init and `drop` hold while callbacks share it is not `noalias`.
#[pin_data(PinnedDrop)]
pub(crate) struct Registration<T: CloneRead> {
    data: T,
    #[pin]
    ops: Opaque<bindings::cgroup_clone_ops>,
}

// SAFETY: the C table is written once, before it is registered, and only read afterwards; the
// kernel calls back on any CPU, which `T: Sync` allows. Dropping unregisters, which any
// task may do.
unsafe impl<T: CloneRead + Send> Send for Registration<T> {}
// SAFETY: as above; `&Registration` only gives out `&T`.
unsafe impl<T: CloneRead> Sync for Registration<T> {}

impl<T: CloneRead> Registration<T> {
    /// The C table for `T`.
    const OPS: bindings::cgroup_clone_ops = bindings::cgroup_clone_ops {
        name: kernel::str::as_char_ptr_in_const_context(T::NAME),
        get_cset: Some(Self::get_cset),
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
    };

    /// Makes forks use `data`, or fails with the kernel's error (`EBUSY` if another module
    /// provides the read). If `module` went away still registered, the kernel would put its
    /// built-in back before freeing the module's text.
    pub(crate) fn new(data: T, module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // `data` is in place before `ops` is registered: a callback may run at once.
            data,
            ops <- Opaque::try_ffi_init(move |slot: *mut bindings::cgroup_clone_ops| {
                // SAFETY: `slot` is valid for writes and not registered yet.
                unsafe { slot.write(Self::OPS) };
                // SAFETY: `slot` holds a complete table. It is pinned inside `Self`, whose
                // `data` is initialised, and stays registered until `drop`. The kernel only
                // records `module`.
                to_result(unsafe { bindings::__cgroup_clone_ops_register(slot, module.as_ptr()) })
            }),
        }? Error)
    }

    /// The registration whose table is `ops`.
    ///
    /// # Safety
    ///
    /// `ops` must be the table of a `Registration<T>` that stays registered for `'a`.
    #[inline]
    unsafe fn from_ops<'a>(ops: *const bindings::cgroup_clone_ops) -> &'a Self {
        let field = Opaque::cast_from(ops).cast_mut();
        // SAFETY: by the caller, `field` is the `ops` field of a `Registration<T>`, so the
        // containing struct starts `offset_of!(Self, ops)` bytes before it.
        let this = unsafe { kernel::container_of!(field, Self, ops) };
        // SAFETY: the registration lives while it is registered, for `'a` (caller), and is
        // only shared.
        unsafe { &*this }
    }

    /// `cgroup_clone_ops.get_cset`.
    ///
    /// # Safety
    ///
    /// Called by the kernel from `cgroup_css_set_fork()`, on the forking task, with this
    /// type's registered `ops` and `kill_seq` valid for writes (`include/linux/cgroup_clone.h`).
    unsafe extern "C" fn get_cset(
        ops: *const bindings::cgroup_clone_ops,
        kill_seq: *mut c_uint,
    ) -> *mut bindings::css_set {
        // SAFETY: the kernel passes our registered table, which stays registered for this
        // call: unregistering waits until no CPU runs a callback.
        let this = unsafe { Self::from_ops(ops) };
        // INVARIANT: we are in the hook's call from `cgroup_css_set_fork()`, which holds the
        // threadgroup rwsem with interrupts enabled (the hook's contract), and `ctx` is only
        // lent out.
        let ctx = ForkContext(PhantomData);
        let (cset, seq) = this.data.get_cset(&ctx);
        // SAFETY: the caller guarantees that `kill_seq` is valid for writes.
        unsafe { kill_seq.write(seq) };
        CssSet::into_raw(cset)
    }

    /// `cgroup_clone_ops.read_stats`.
    ///
    /// # Safety
    ///
    /// Called by the kernel with this type's registered `ops` and `stats` valid for writes.
    unsafe extern "C" fn read_stats(
        ops: *const bindings::cgroup_clone_ops,
        stats: *mut bindings::cgroup_clone_stats,
    ) {
        // SAFETY: as in `get_cset`.
        let this = unsafe { Self::from_ops(ops) };
        let out = this.data.read_stats();
        // SAFETY: the caller guarantees that `stats` is valid for writes.
        unsafe { stats.write(out) };
    }

    /// `cgroup_clone_ops.reset_stats`.
    ///
    /// # Safety
    ///
    /// Called by the kernel with this type's registered `ops`.
    unsafe extern "C" fn reset_stats(ops: *const bindings::cgroup_clone_ops) {
        // SAFETY: as in `get_cset`.
        let this = unsafe { Self::from_ops(ops) };
        this.data.reset_stats();
    }
}

#[pinned_drop]
impl<T: CloneRead> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: `ops` is registered (type invariant). On return the kernel has put its
        // built-in back and waited until no CPU runs a callback, so `data` may go.
        unsafe { bindings::cgroup_clone_ops_unregister(self.ops.get()) };
    }
}
