// SPDX-License-Identifier: GPL-2.0

//! Control for `released_pid_twice.rs`: the module's `ReleasedPid` given up once builds.

#[path = "../../rust/released_pid.rs"]
mod released_pid;

use kernel::{bindings, prelude::*};
use released_pid::ReleasedPid;

module! {
    type: Control,
    name: "released_pid_once",
    license: "GPL",
}

struct Control;

fn give_up(pid: ReleasedPid) -> *mut bindings::pid {
    pid.into_raw()
}

impl kernel::Module for Control {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: a null pointer gives `None`; no pid is handed over.
        if let Some(pid) = unsafe { ReleasedPid::new(core::ptr::null_mut()) } {
            give_up(pid);
        }
        Ok(Control)
    }
}
