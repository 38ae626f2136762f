// SPDX-License-Identifier: GPL-2.0

//! Control for `released_pid_twice.rs`: a `ReleasedPid` freed once builds.

use kernel::{
    pid_release::{free, ReleasedPid},
    prelude::*,
};

module! {
    type: Control,
    name: "released_pid_once",
    license: "GPL",
}

struct Control;

/// Only the kernel makes a `ReleasedPid`, so this is never called; it only has to compile.
#[allow(dead_code)]
fn free_once(pid: ReleasedPid) {
    free(Some(pid));
}

impl kernel::Module for Control {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Control)
    }
}
