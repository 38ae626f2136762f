// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a `ForkCssSet` made from any css_set reference, outside `CurrentCssSet`.
//! Control: `css_set_within_rcu.rs`.

use kernel::{
    cgroup_clone::{CloneRead, CssSet, CurrentCssSet, ForkContext, ForkCssSet},
    prelude::*,
    sync::{aref::ARef, rcu},
};

module! {
    type: Misuse,
    name: "fork_css_set_forged",
    license: "GPL",
    imports_ns: ["CGROUP_CLONE"],
}

struct Misuse;

/// Never registered: it only has to compile.
struct Read {
    other: ARef<CssSet>,
}

#[vtable]
impl CloneRead for Read {
    const NAME: &'static CStr = c"fork_css_set_forged";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> ForkCssSet<'ctx> {
        let rcu = rcu::read_lock();
        let current = CurrentCssSet::read(&rcu, ctx);
        ForkCssSet {
            cset: self.other.clone(),
            kill_seq: current.get_pinned(ctx).kill_seq(),
            _ctx: core::marker::PhantomData,
        }
    }
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Misuse)
    }
}
