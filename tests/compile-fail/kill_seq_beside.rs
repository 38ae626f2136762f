// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a clone read that returns a kill_seq of its own beside the css_set, as
//! the trait once allowed.

use kernel::{
    cgroup_clone::{CloneRead, CurrentCssSet, ForkContext, ForkCssSet},
    prelude::*,
    sync::rcu,
};

module! {
    type: Misuse,
    name: "kill_seq_beside",
    description: "compile-fail test",
    license: "GPL",
    imports_ns: ["CGROUP_CLONE"],
}

struct Misuse;

/// Never registered: it only has to compile.
struct Read;

#[vtable]
impl CloneRead for Read {
    const NAME: &'static CStr = c"kill_seq_beside";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> (ForkCssSet<'ctx>, u32) {
        let rcu = rcu::read_lock();
        (CurrentCssSet::read(&rcu, ctx).get_pinned(ctx), 0)
    }
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let _ = Read;
        Ok(Misuse)
    }
}
