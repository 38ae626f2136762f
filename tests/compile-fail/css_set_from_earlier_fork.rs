// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a clone read that returns the css_set it kept from an earlier fork (the
//! module's former `stale_css_set` twin). A process that moved since would start its children
//! in the cgroup it left, out of reach of that cgroup's `cgroup.kill` and `pids.max`. Only
//! `CurrentCssSet` makes the `ForkCssSet` a read returns. Control: `css_set_within_rcu.rs`.

use kernel::{
    cgroup_clone::{CloneRead, CssSet, CurrentCssSet, ForkContext, ForkCssSet},
    prelude::*,
    sync::{aref::ARef, rcu},
};

module! {
    type: Misuse,
    name: "css_set_from_earlier_fork",
    license: "GPL",
    imports_ns: ["CGROUP_CLONE"],
}

struct Misuse;

/// Never registered: it only has to compile.
struct Read {
    earlier: ARef<CssSet>,
}

#[vtable]
impl CloneRead for Read {
    const NAME: &'static CStr = c"css_set_from_earlier_fork";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> ForkCssSet<'ctx> {
        let rcu = rcu::read_lock();
        let _current = CurrentCssSet::read(&rcu, ctx);
        self.earlier.clone()
    }
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Misuse)
    }
}
