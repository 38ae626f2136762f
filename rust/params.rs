// SPDX-License-Identifier: GPL-2.0

//! Module parameters and `.modinfo` entries.
//!
//! 6.12's `module!` cannot declare parameters, so [`module_param_u32!`] declares them the way
//! C's `module_param()` does: a `struct kernel_param` in the `__param` section, which the
//! module loader parses with the kernel's `param_ops_uint` before `init` runs. A value that is
//! not a number fails the load there; `init` checks the ranges.

use core::{cell::UnsafeCell, ffi::c_void};
use kernel::bindings;

/// An unsigned parameter's storage.
///
/// # Invariants
///
/// The value is written only by the module loader, before `init` runs (the parameters are
/// read-only in sysfs), so reading it afterwards races with nothing.
pub(crate) struct ParamU32(UnsafeCell<u32>);

// SAFETY: by the type invariant there are no concurrent writes once the module runs.
unsafe impl Sync for ParamU32 {}

impl ParamU32 {
    pub(crate) const fn new(default: u32) -> Self {
        Self(UnsafeCell::new(default))
    }

    /// The value given at load time, or the default.
    pub(crate) fn get(&self) -> u32 {
        // SAFETY: the pointer is valid; by the type invariant nothing writes it any more.
        unsafe { core::ptr::read_volatile(self.0.get()) }
    }

    /// The storage, for the `kernel_param` entry.
    pub(crate) const fn as_arg(&self) -> *mut c_void {
        self.0.get().cast()
    }
}

/// A `struct kernel_param` entry of the `__param` section.
#[repr(transparent)]
pub(crate) struct KernelParam(pub(crate) bindings::kernel_param);

// SAFETY: the entry is immutable; the loader reads it and writes only through `arg`, whose
// storage is a `ParamU32`.
unsafe impl Sync for KernelParam {}

/// Declares `$storage` as the module parameter `$name` (read-only in sysfs).
macro_rules! module_param_u32 {
    ($entry:ident, $storage:ident, $name:literal, $desc:literal) => {
        #[link_section = "__param"]
        #[used(compiler)]
        static $entry: $crate::params::KernelParam =
            $crate::params::KernelParam(kernel::bindings::kernel_param {
                name: concat!($name, "\0").as_ptr().cast(),
                mod_: core::ptr::addr_of_mut!(kernel::bindings::__this_module),
                ops: core::ptr::addr_of!(kernel::bindings::param_ops_uint),
                perm: 0o444,
                level: -1,
                flags: 0,
                __bindgen_anon_1: kernel::bindings::kernel_param__bindgen_ty_1 {
                    arg: $storage.as_arg(),
                },
            });

        $crate::params::modinfo!(concat!("parm=", $name, ":", $desc, "\0"));
        $crate::params::modinfo!(concat!("parmtype=", $name, ":uint\0"));
    };
}
pub(crate) use module_param_u32;

/// Adds the NUL-terminated string `$entry` to the module's `.modinfo`, as `modinfo` lists it.
macro_rules! modinfo {
    ($entry:expr) => {
        const _: () = {
            const ENTRY: &[u8] = $entry.as_bytes();
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static MODINFO: [u8; ENTRY.len()] = {
                let mut out = [0u8; ENTRY.len()];
                let mut i = 0;
                while i < ENTRY.len() {
                    out[i] = ENTRY[i];
                    i += 1;
                }
                out
            };
        };
    };
}
pub(crate) use modinfo;
