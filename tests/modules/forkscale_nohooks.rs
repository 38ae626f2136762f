// SPDX-License-Identifier: GPL-2.0

//! Test module: the forkscale hook lookup on a kernel that lacks a hook.
//!
//! It runs the module's own lookup code with the register hook renamed to a symbol that no
//! kernel exports, which is what `insmod forkscale.ko` meets on a kernel without the series.
//! Loading must fail with `ENODEV` and a message that names the missing hook.

#[allow(dead_code)]
#[path = "../../rust/kernel_api.rs"]
mod kernel_api;

use kernel::{c_str, prelude::*};
use kernel_api::{CloneApi, HookNames, HOOKS};

module! {
    type: NoHooks,
    name: "forkscale_nohooks",
    authors: ["forkscale developers"],
    description: "Test: forkscale's hook lookup when a hook is missing",
    license: "GPL",
}

struct NoHooks;

impl kernel::Module for NoHooks {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let names = HookNames {
            register: c_str!("cgroup_clone_ops_register_absent"),
            ..HOOKS
        };
        CloneApi::lookup_names(&names)?;
        pr_err!("found a hook that no kernel exports\n");
        Err(EINVAL)
    }
}
