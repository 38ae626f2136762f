// SPDX-License-Identifier: GPL-2.0

//! Control for `css_set_outlives_rcu.rs`: current's css_set used inside its RCU section builds.

use kernel::{
    cgroup_clone::{CloneRead, CurrentCssSet, ForkContext, ForkCssSet},
    prelude::*,
    sync::rcu,
};

module! {
    type: Control,
    name: "css_set_within_rcu",
    description: "compile-fail test",
    license: "GPL",
    imports_ns: ["CGROUP_CLONE"],
}

struct Control;

/// Never registered: it only has to compile.
struct Read;

#[vtable]
impl CloneRead for Read {
    const NAME: &'static CStr = c"css_set_within_rcu";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> ForkCssSet<'ctx> {
        let rcu = rcu::read_lock();
        let cset = CurrentCssSet::read(&rcu, ctx);
        cset.get_pinned(ctx)
    }
}

impl kernel::Module for Control {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let _ = Read;
        Ok(Control)
    }
}
