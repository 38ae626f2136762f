// SPDX-License-Identifier: GPL-2.0

//! forkscale: takes over the scalability-critical parts of the fork/exit path.
//!
//! This is the module's skeleton: it announces itself on load and unload so that the test
//! VM can check that the out-of-tree build, `insmod` and `rmmod` work against the patched
//! kernel. The clone-path and pid-batching implementations register from here.

use kernel::prelude::*;

module! {
    type: Forkscale,
    name: "forkscale",
    author: "forkscale developers",
    description: "Scalable fork/exit paths for cgroup css_set pinning and pid freeing",
    license: "GPL",
}

struct Forkscale;

impl kernel::Module for Forkscale {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("loaded\n");
        Ok(Forkscale)
    }
}

impl Drop for Forkscale {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
