// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a `ReleasedPid` made outside the kernel crate, whose drop would free a pid
//! that was never released (or is not a pid at all). Only the pid hook's `Registration` makes
//! one. Control: `released_pid_once.rs`.

use core::ptr::NonNull;
use kernel::{pid_release::ReleasedPid, prelude::*};

module! {
    type: Misuse,
    name: "released_pid_forged",
    license: "GPL",
}

struct Misuse;

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        drop(ReleasedPid(NonNull::dangling()));
        Ok(Misuse)
    }
}
