// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a clone read that keeps the `ForkCssSet` of one fork beyond it, to return
//! it from a later one. The token borrows its fork's `ForkContext`, so it cannot be given a
//! longer lifetime than `get_cset`'s. (Kept in a lock or a static, it is also refused for not
//! being `Send`; `keep` isolates the lifetime.) Control: `css_set_within_rcu.rs`.

use kernel::{
    cgroup_clone::{CloneRead, CurrentCssSet, ForkContext, ForkCssSet},
    prelude::*,
    sync::rcu,
};

module! {
    type: Misuse,
    name: "fork_css_set_kept",
    license: "GPL",
    imports_ns: ["CGROUP_CLONE"],
}

struct Misuse;

/// Where a read would store the token for a later fork.
fn keep(_kept: ForkCssSet<'static>) {}

/// Never registered: it only has to compile.
struct Read;

#[vtable]
impl CloneRead for Read {
    const NAME: &'static CStr = c"fork_css_set_kept";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> ForkCssSet<'ctx> {
        let rcu = rcu::read_lock();
        let cset = CurrentCssSet::read(&rcu, ctx);
        keep(cset.get_pinned(ctx));
        cset.get_pinned(ctx)
    }
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Misuse)
    }
}
