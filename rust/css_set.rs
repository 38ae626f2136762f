// SPDX-License-Identifier: GPL-2.0

//! `struct css_set` as the clone read sees it: first possibly dying under RCU, then pinned.

use crate::kernel_api::{CloneApi, PutCssSetFn};
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    bindings,
    sync::{rcu, Refcount},
};

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
    /// Returns `None` only for a task without a css_set, which a forking task never is.
    pub(crate) fn read(_rcu: &'rcu rcu::Guard) -> Option<Self> {
        // SAFETY: `get_current()` returns the running task, valid while it runs. `cgroups` is
        // an RCU-protected pointer that migrations rewrite, so it is loaded once, like
        // `rcu_dereference()`, without forming a reference to it.
        let ptr = unsafe {
            let task = bindings::get_current();
            core::ptr::read_volatile(core::ptr::addr_of!((*task).cgroups))
        };
        // INVARIANT: read just now, and `_rcu` proves the read-side section.
        Some(Self {
            ptr: NonNull::new(ptr)?,
            _rcu: PhantomData,
        })
    }

    /// The `kill_seq` of the css_set's default-hierarchy cgroup, read once.
    pub(crate) fn kill_seq(&self) -> u32 {
        // SAFETY: by the type invariant the css_set's memory is valid during the RCU section.
        // Its `dfl_cgrp` is set at creation and never changes, and a cgroup is freed only
        // after a grace period, so it is valid too. `kill_seq` is written with `WRITE_ONCE()`
        // under `css_set_lock` and read here once, like `READ_ONCE()`.
        unsafe {
            let cgrp = (*self.ptr.as_ptr()).dfl_cgrp;
            core::ptr::read_volatile(core::ptr::addr_of!((*cgrp).kill_seq))
        }
    }

    /// Takes a reference unless the css_set is already dying (`refcount_inc_not_zero()`). The
    /// reference is put with `api`'s `cgroup_clone_put_cset()`, the only valid put for it.
    pub(crate) fn try_get(&self, api: &CloneApi) -> Option<CssSetRef> {
        // SAFETY: by the type invariant the css_set, and so its refcount, is valid memory for
        // the RCU section, which outlives this borrow. `Refcount` is a `repr(transparent)`
        // wrapper of `refcount_t`, so the field may be used as one.
        let refcount =
            unsafe { &*core::ptr::addr_of!((*self.ptr.as_ptr()).refcount).cast::<Refcount>() };
        if !refcount.inc_not_zero() {
            return None;
        }
        // INVARIANT: the increment above is the reference that `CssSetRef` owns.
        Some(CssSetRef {
            ptr: self.ptr,
            put: api.put_cset,
        })
    }
}

/// A counted reference to a css_set; dropping it puts the reference.
///
/// # Invariants
///
/// The object owns one reference on the css_set at `ptr`, and `put` is `cgroup_clone_put_cset()`.
pub(crate) struct CssSetRef {
    ptr: NonNull<bindings::css_set>,
    put: PutCssSetFn,
}

impl CssSetRef {
    /// Hands the reference to C, which puts it.
    pub(crate) fn into_raw(self) -> *mut bindings::css_set {
        let ptr = self.ptr.as_ptr();
        core::mem::forget(self);
        ptr
    }
}

impl Drop for CssSetRef {
    fn drop(&mut self) {
        // SAFETY: by the type invariant we own a reference on `ptr` and `put` puts it; the
        // reference is not used again.
        unsafe { (self.put)(self.ptr.as_ptr()) };
    }
}
