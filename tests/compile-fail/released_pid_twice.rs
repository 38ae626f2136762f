// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a `ReleasedPid` given up twice, which would free its pid twice.

#[path = "../../rust/released_pid.rs"]
mod released_pid;

use kernel::{bindings, prelude::*};
use released_pid::ReleasedPid;

module! {
    type: Misuse,
    name: "released_pid_twice",
    license: "GPL",
}

struct Misuse;

fn give_up(pid: ReleasedPid) -> *mut bindings::pid {
    pid.into_raw()
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: a null pointer gives `None`; no pid is handed over.
        if let Some(pid) = unsafe { ReleasedPid::new(core::ptr::null_mut()) } {
            give_up(pid);
            give_up(pid);
        }
        Ok(Misuse)
    }
}
