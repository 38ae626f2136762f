// SPDX-License-Identifier: GPL-2.0

//! The kernel side of the forkscale series, looked up by name when the module loads.
//!
//! Linking against these symbols directly would make `insmod` on a kernel without the series
//! fail in the module loader with "Unknown symbol", which does not tell the user what is
//! wrong. Looking them up with `__symbol_get()` lets `init` say which kernel is needed.
//!
//! The symbols live in vmlinux, which has no module reference count, so nothing is pinned and
//! there is nothing to put back.

use core::{
    ffi::{c_uint, c_void},
    ptr::NonNull,
};
use kernel::{bindings, c_str, prelude::*, str::CStr};

/// `__cgroup_clone_ops_register()`: the ops and the module that provides them.
pub(crate) type RegisterFn =
    unsafe extern "C" fn(*const bindings::cgroup_clone_ops, *mut bindings::module) -> i32;
/// `cgroup_clone_ops_unregister()`.
pub(crate) type UnregisterFn = unsafe extern "C" fn(*const bindings::cgroup_clone_ops);
/// `cgroup_clone_put_cset()`.
pub(crate) type PutCssSetFn = unsafe extern "C" fn(*mut bindings::css_set);
type SeqcountFn = unsafe extern "C" fn() -> *mut bindings::seqcount_spinlock_t;
type LockFn = unsafe extern "C" fn() -> *mut bindings::spinlock_t;

// The types above must match the C prototypes, which bindgen also sees. These constants are
// never used, so they add no reference to the symbols, but they stop the build if a prototype
// changes.
const _: RegisterFn = bindings::__cgroup_clone_ops_register;
const _: UnregisterFn = bindings::cgroup_clone_ops_unregister;
const _: PutCssSetFn = bindings::cgroup_clone_put_cset;
const _: SeqcountFn = bindings::cgroup_clone_seqcount;
const _: LockFn = bindings::cgroup_clone_lock;

/// The clone-read hooks of `include/linux/cgroup_clone.h`.
///
/// # Invariants
///
/// The function pointers are the kernel's functions of the same name, and `seqcount` and
/// `lock` are `css_set_for_clone_seq` and `css_set_lock`, all valid while the kernel runs.
pub(crate) struct CloneApi {
    pub(crate) register: RegisterFn,
    pub(crate) unregister: UnregisterFn,
    pub(crate) put_cset: PutCssSetFn,
    pub(crate) seqcount: NonNull<bindings::seqcount_spinlock_t>,
    pub(crate) lock: NonNull<bindings::spinlock_t>,
}

// SAFETY: the pointers refer to kernel objects that any CPU may use.
unsafe impl Send for CloneApi {}
// SAFETY: as above; nothing in `CloneApi` is mutated after lookup.
unsafe impl Sync for CloneApi {}

/// Looks `name` up among the kernel's GPL exports.
fn lookup(name: &CStr) -> Result<NonNull<c_void>> {
    // SAFETY: `name` is a NUL-terminated string that outlives the call.
    let addr = unsafe { bindings::__symbol_get(name.as_char_ptr()) };
    NonNull::new(addr).ok_or_else(|| {
        pr_err!(
            "this kernel lacks the forkscale hook {}: boot a kernel built from kernel/patches\n",
            name
        );
        ENODEV
    })
}

/// The names of the hooks, in the order [`CloneApi`] needs them.
pub(crate) struct HookNames {
    pub(crate) register: &'static CStr,
    pub(crate) unregister: &'static CStr,
    pub(crate) put_cset: &'static CStr,
    pub(crate) seqcount: &'static CStr,
    pub(crate) lock: &'static CStr,
}

/// What the forkscale series exports.
pub(crate) const HOOKS: HookNames = HookNames {
    register: c_str!("__cgroup_clone_ops_register"),
    unregister: c_str!("cgroup_clone_ops_unregister"),
    put_cset: c_str!("cgroup_clone_put_cset"),
    seqcount: c_str!("cgroup_clone_seqcount"),
    lock: c_str!("cgroup_clone_lock"),
};

impl CloneApi {
    /// Finds every hook, or fails with `ENODEV` and a message naming the first missing one.
    pub(crate) fn lookup() -> Result<Self> {
        Self::lookup_names(&HOOKS)
    }

    /// Like [`CloneApi::lookup`], with the names given. Only a test passes names other than
    /// [`HOOKS`], and they must name functions with the prototypes of the real hooks.
    pub(crate) fn lookup_names(names: &HookNames) -> Result<Self> {
        let register = lookup(names.register)?;
        let unregister = lookup(names.unregister)?;
        let put_cset = lookup(names.put_cset)?;
        let seqcount = lookup(names.seqcount)?;
        let lock = lookup(names.lock)?;

        // SAFETY: each address is the kernel's function of that name, whose prototype is the
        // type it is turned into (checked against the bindings above).
        let (register, unregister, put_cset, seqcount_fn, lock_fn) = unsafe {
            (
                core::mem::transmute::<*mut c_void, RegisterFn>(register.as_ptr()),
                core::mem::transmute::<*mut c_void, UnregisterFn>(unregister.as_ptr()),
                core::mem::transmute::<*mut c_void, PutCssSetFn>(put_cset.as_ptr()),
                core::mem::transmute::<*mut c_void, SeqcountFn>(seqcount.as_ptr()),
                core::mem::transmute::<*mut c_void, LockFn>(lock.as_ptr()),
            )
        };
        // SAFETY: both accessors take no arguments and return the address of a static object.
        let (seqcount, lock) = unsafe { (seqcount_fn(), lock_fn()) };

        // INVARIANT: the functions are the named kernel functions; the accessors return the
        // static seqcount and lock, which are never null.
        Ok(Self {
            register,
            unregister,
            put_cset,
            seqcount: NonNull::new(seqcount).ok_or(ENODEV)?,
            lock: NonNull::new(lock).ok_or(ENODEV)?,
        })
    }
}

/// `__pid_release_ops_register()`: the ops and the module that provides them.
pub(crate) type PidRegisterFn =
    unsafe extern "C" fn(*const bindings::pid_release_ops, *mut bindings::module) -> i32;
/// `pid_release_ops_unregister()`.
pub(crate) type PidUnregisterFn = unsafe extern "C" fn(*const bindings::pid_release_ops);
/// `pid_release_schedule_flush()`.
pub(crate) type ScheduleFlushFn = unsafe extern "C" fn();
/// `pid_release_now()`.
pub(crate) type ReleaseNowFn = unsafe extern "C" fn(*mut bindings::pid) -> bool;
/// `pid_release_free()`.
pub(crate) type PidFreeFn = unsafe extern "C" fn(*mut *mut bindings::pid, c_uint);

const _: PidRegisterFn = bindings::__pid_release_ops_register;
const _: PidUnregisterFn = bindings::pid_release_ops_unregister;
const _: ScheduleFlushFn = bindings::pid_release_schedule_flush;
const _: ReleaseNowFn = bindings::pid_release_now;
const _: PidFreeFn = bindings::pid_release_free;

/// The pid-release hooks of `include/linux/pid_release.h`.
///
/// # Invariants
///
/// The function pointers are the kernel's functions of the same name, valid while the kernel
/// runs.
pub(crate) struct PidApi {
    pub(crate) register: PidRegisterFn,
    pub(crate) unregister: PidUnregisterFn,
    pub(crate) schedule_flush: ScheduleFlushFn,
    pub(crate) release_now: ReleaseNowFn,
    pub(crate) free: PidFreeFn,
}

impl PidApi {
    /// Finds every hook, or fails with `ENODEV` and a message naming the first missing one.
    pub(crate) fn lookup() -> Result<Self> {
        let register = lookup(c_str!("__pid_release_ops_register"))?;
        let unregister = lookup(c_str!("pid_release_ops_unregister"))?;
        let schedule_flush = lookup(c_str!("pid_release_schedule_flush"))?;
        let release_now = lookup(c_str!("pid_release_now"))?;
        let free = lookup(c_str!("pid_release_free"))?;

        // SAFETY: each address is the kernel's function of that name, whose prototype is the
        // type it is turned into (checked against the bindings above).
        let (register, unregister, schedule_flush, release_now, free) = unsafe {
            (
                core::mem::transmute::<*mut c_void, PidRegisterFn>(register.as_ptr()),
                core::mem::transmute::<*mut c_void, PidUnregisterFn>(unregister.as_ptr()),
                core::mem::transmute::<*mut c_void, ScheduleFlushFn>(schedule_flush.as_ptr()),
                core::mem::transmute::<*mut c_void, ReleaseNowFn>(release_now.as_ptr()),
                core::mem::transmute::<*mut c_void, PidFreeFn>(free.as_ptr()),
            )
        };
        // INVARIANT: as stated above.
        Ok(Self {
            register,
            unregister,
            schedule_flush,
            release_now,
            free,
        })
    }
}
