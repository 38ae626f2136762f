// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a clone read that replaces the kill_seq snapshot taken with the css_set
//! (a stale or made-up one lets the child escape a `cgroup.kill`).

use kernel::{
    cgroup_clone::{CloneRead, CurrentCssSet, ForkContext, ForkCssSet},
    prelude::*,
    sync::rcu,
};

module! {
    type: Misuse,
    name: "kill_seq_replaced",
    description: "compile-fail test",
    license: "GPL",
    imports_ns: ["CGROUP_CLONE"],
}

struct Misuse;

/// Never registered: it only has to compile.
struct Read;

#[vtable]
impl CloneRead for Read {
    const NAME: &'static CStr = c"kill_seq_replaced";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> ForkCssSet<'ctx> {
        let rcu = rcu::read_lock();
        let mut cset = CurrentCssSet::read(&rcu, ctx).get_pinned(ctx);
        cset.kill_seq = 0;
        cset
    }
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let _ = Read;
        Ok(Misuse)
    }
}
