// SPDX-License-Identifier: GPL-2.0

//! A pid the kernel released to this module, as an owning token.

use core::ptr::NonNull;
use kernel::bindings;

/// A pid without tasks, on its way to being freed: an owning token, neither `Copy` nor `Clone`,
/// so a pid cannot be queued or freed twice (`tests/compile-fail/released_pid_twice.rs`).
///
/// # Invariants
///
/// Points to a `struct pid` that the kernel released to this module and that is not freed
/// yet; only the holder of this token may free it.
pub(crate) struct ReleasedPid(NonNull<bindings::pid>);

// SAFETY: a released pid belongs to no task any more; freeing it from any CPU is fine.
unsafe impl Send for ReleasedPid {}

impl ReleasedPid {
    /// Takes ownership of `pid`; `None` for a null pointer.
    ///
    /// # Safety
    ///
    /// A non-null `pid` must have been released to this module by the kernel, not be freed,
    /// and be handed to this function once.
    #[inline]
    pub(crate) unsafe fn new(pid: *mut bindings::pid) -> Option<Self> {
        // INVARIANT: the caller hands over a released, unfreed pid, once.
        NonNull::new(pid).map(Self)
    }

    /// The pid, still owned by the token.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut bindings::pid {
        self.0.as_ptr()
    }

    /// Whether the pid must be freed at once rather than wait in a batch: a pid namespace it
    /// belongs to is being torn down, and its reaper waits for the pid (`pid_release_now()`).
    #[inline]
    pub(crate) fn must_free_now(&self) -> bool {
        // SAFETY: the pid is valid until freed (type invariant), and the kernel's check only
        // reads it.
        unsafe { bindings::pid_release_now(self.as_ptr()) }
    }

    /// Gives the pid up for freeing: the token is consumed, and the caller must free it.
    #[inline]
    #[must_use = "the pid must be freed, or it is lost"]
    pub(crate) fn into_raw(self) -> *mut bindings::pid {
        self.0.as_ptr()
    }
}
