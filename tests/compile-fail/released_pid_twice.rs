// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a `ReleasedPid` freed twice.

use kernel::{
    pid_release::{free, ReleasedPid},
    prelude::*,
};

module! {
    type: Misuse,
    name: "released_pid_twice",
    license: "GPL",
}

struct Misuse;

/// Only the kernel makes a `ReleasedPid`, so this is never called; it only has to compile.
#[allow(dead_code)]
fn free_twice(pid: ReleasedPid) {
    free(Some(pid));
    free(Some(pid));
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Misuse)
    }
}
