// SPDX-License-Identifier: GPL-2.0

//! Must not compile: current's css_set used after its RCU section ended, when its memory may
//! already be freed.

use kernel::{
    cgroup_clone::{CloneRead, CurrentCssSet, ForkContext, ForkCssSet},
    prelude::*,
    sync::rcu,
};

module! {
    type: Misuse,
    name: "css_set_outlives_rcu",
    description: "compile-fail test",
    license: "GPL",
    imports_ns: ["CGROUP_CLONE"],
}

struct Misuse;

/// Never registered: it only has to compile.
struct Read;

#[vtable]
impl CloneRead for Read {
    const NAME: &'static CStr = c"css_set_outlives_rcu";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> ForkCssSet<'ctx> {
        let rcu = rcu::read_lock();
        let cset = CurrentCssSet::read(&rcu, ctx);
        drop(rcu);
        cset.get_pinned(ctx)
    }
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let _ = Read;
        Ok(Misuse)
    }
}
