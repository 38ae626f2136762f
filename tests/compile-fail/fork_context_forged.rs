// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a `ForkContext` made outside the clone-read hook's call, which would let
//! `get_pinned()` take a plain reference where current's css_set may be dying.

use kernel::{cgroup_clone::ForkContext, prelude::*};

module! {
    type: Misuse,
    name: "fork_context_forged",
    license: "GPL",
}

struct Misuse;

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let _ctx = ForkContext(kernel::types::NotThreadSafe);
        Ok(Misuse)
    }
}
