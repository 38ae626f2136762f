// SPDX-License-Identifier: GPL-2.0

//! `struct css_set` as the clone read sees it: current's, read under RCU and possibly dying,
//! then pinned as a counted [`ARef<CssSet>`].

use crate::clone_hook::ForkContext;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    bindings,
    sync::{
        aref::{ARef, AlwaysRefCounted},
        rcu, Refcount,
    },
    task::Task,
    types::Opaque,
};

/// A `struct css_set`, kept alive by its reference count.
///
/// # Invariants
///
/// A `CssSet` is only ever reached by reference or through an [`ARef`], and wraps a live
/// `css_set`.
#[repr(transparent)]
pub(crate) struct CssSet(Opaque<bindings::css_set>);

impl CssSet {
    /// The css_set's reference count.
    #[inline]
    fn refcount(&self) -> &Refcount {
        // SAFETY: the css_set is live (type invariant), so its `refcount` field is valid memory
        // for as long as `self` is borrowed. `Refcount` is a `repr(transparent)` wrapper of
        // `refcount_t`, so the field may be used as one; it is only touched atomically.
        unsafe { &*core::ptr::addr_of!((*self.0.get()).refcount).cast::<Refcount>() }
    }

    /// Hands the reference to C, which puts it.
    #[inline]
    pub(crate) fn into_raw(this: ARef<Self>) -> *mut bindings::css_set {
        ARef::into_raw(this).as_ptr().cast()
    }
}

// SAFETY: a css_set lives while its reference count is non-zero. `inc_ref` adds a reference
// like `get_css_set()`, and `dec_ref` puts one with `put_css_set()`, which frees the css_set
// on the last put. Both are atomic, so either may run on any CPU.
unsafe impl AlwaysRefCounted for CssSet {
    #[inline]
    fn inc_ref(&self) {
        self.refcount().inc();
    }

    #[inline]
    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller owns a reference on the css_set and gives it up here; the hook's
        // `cgroup_clone_put_cset()` is `put_css_set()`.
        unsafe { bindings::cgroup_clone_put_cset(obj.as_ptr().cast()) };
    }
}

/// Current's css_set as read under RCU. Its memory stays valid for `'rcu`, but it may already
/// have dropped its last reference if current migrated meanwhile.
///
/// # Invariants
///
/// `ptr` was read from `current->cgroups` inside the RCU read-side section `'rcu`.
pub(crate) struct CurrentCssSet<'rcu> {
    ptr: NonNull<bindings::css_set>,
    _rcu: PhantomData<&'rcu rcu::Guard>,
}

impl<'rcu> CurrentCssSet<'rcu> {
    /// Reads `current->cgroups`, like `task_css_set(current)`.
    ///
    /// Returns `None` only for a task without a css_set, which a forking task never is:
    /// `cgroup_fork()` gave it one.
    pub(crate) fn read(_rcu: &'rcu rcu::Guard) -> Option<Self> {
        let task = Task::current_raw();
        // SAFETY: `task` is the running task, valid while it runs. `cgroups` is an RCU-protected pointer that
        // migrations rewrite, so it is loaded once, like `rcu_dereference()`, without forming
        // a reference to it.
        let ptr = unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*task).cgroups)) };
        // INVARIANT: read just now, and `_rcu` proves the read-side section.
        Some(Self {
            ptr: NonNull::new(ptr)?,
            _rcu: PhantomData,
        })
    }

    /// The `kill_seq` of the css_set's default-hierarchy cgroup, read once.
    pub(crate) fn kill_seq(&self) -> u32 {
        // Broken twin for `make check` (tests/twins.txt): no snapshot at all.
        #[cfg(forkscale_twin_no_kill_snapshot)]
        return 0;
        // SAFETY: by the type invariant the css_set's memory is valid during the RCU section.
        // Its `dfl_cgrp` is set at creation and never changes.
        let cgrp = unsafe { (*self.ptr.as_ptr()).dfl_cgrp };
        // SAFETY: a cgroup is freed only after a grace period, so `cgrp` is valid during the
        // RCU section too. `kill_seq` is written with `WRITE_ONCE()` under `css_set_lock` and
        // read here once, like `READ_ONCE()`.
        unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*cgrp).kill_seq)) }
    }

    /// The css_set's reference count, which may already be zero.
    #[inline]
    fn refcount(&self) -> &Refcount {
        // SAFETY: by the type invariant the css_set is valid memory for `'rcu`, which this
        // borrow cannot outlive, even if it is dying. `Refcount` is a `repr(transparent)`
        // wrapper of `refcount_t`, and the field is only touched atomically.
        unsafe { &*core::ptr::addr_of!((*self.ptr.as_ptr()).refcount).cast::<Refcount>() }
    }

    /// Takes a reference unless the css_set is already dying (`refcount_inc_not_zero()`).
    pub(crate) fn try_get(&self) -> Option<ARef<CssSet>> {
        if !self.refcount().inc_not_zero() {
            return None;
        }
        // SAFETY: the css_set is live, and the increment above is a reference that the `ARef`
        // now owns. `CssSet` is a `repr(transparent)` wrapper of `css_set`.
        Some(unsafe { ARef::from_raw(self.ptr.cast::<CssSet>()) })
    }

    /// Takes a reference on a css_set that cannot be dying: in `ctx`, no task can change
    /// current's css_set, and current holds a reference on it.
    pub(crate) fn get_pinned(&self, _ctx: &ForkContext) -> ARef<CssSet> {
        // SAFETY: a lockdep check with no precondition.
        unsafe { bindings::cgroup_clone_assert_pinned() };
        // SAFETY: in `ctx` current's css_set cannot change and current holds a reference on
        // it, so it is live for this borrow (the invariant of `CssSet`), which cannot outlive
        // `'rcu`. `CssSet` is a `repr(transparent)` wrapper of `css_set`.
        let cset = unsafe { &*self.ptr.as_ptr().cast::<CssSet>() };
        // A plain increment, like `get_css_set()`: the count cannot be zero.
        ARef::from(cset)
    }
}
