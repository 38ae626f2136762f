// SPDX-License-Identifier: GPL-2.0

//! forkscale: takes over the scalability-critical parts of the fork/exit path.
//!
//! On load the module
//!
//! - replaces the kernel's clone-time css_set read (`cgroup_css_set_fork()`) with a lockless
//!   one built on the Rust seqcount, RCU and refcount abstractions ([`clone_read`]);
//! - frees the pids of exiting tasks in batches, under one `pidmap_lock` acquisition per batch
//!   ([`pid_release`]), unless `pid_batch=0`.
//!
//! On unload the kernel's built-ins come back. The hooks are in the forkscale kernel series;
//! on a kernel without them the load fails with a message saying so.

mod clone_read;
mod counters;
mod css_set;
mod kernel_api;
mod pid_release;
mod released_pid;

use kernel::prelude::*;

module! {
    type: Forkscale,
    name: "forkscale",
    authors: ["forkscale developers"],
    description: "Scalable fork/exit paths for cgroup css_set pinning and pid freeing",
    license: "GPL",
    // The hooks are exported in these namespaces. The module looks them up by name rather
    // than linking them, but declares the imports that a direct user would need.
    imports_ns: ["CGROUP_CLONE", "PID_RELEASE"],
    params: {
        pid_batch: u32 {
            default: 32,
            description: "pids freed per pidmap_lock acquisition: 0 off, 1 per exiting task, up to 64 across tasks",
        },
        pid_max_delay_ms: u32 {
            default: 10,
            description: "longest a released pid waits in a batch, 1 to 1000 ms",
        },
    },
}

struct Forkscale {
    clone_read: Option<clone_read::Registration>,
    pid_release: Option<pid_release::Registration>,
}

impl kernel::Module for Forkscale {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let batch = module_parameters::pid_batch.value();
        let delay = module_parameters::pid_max_delay_ms.value();
        if batch > pid_release::BATCH_MAX {
            pr_err!(
                "pid_batch={} is out of range 0..={}\n",
                batch,
                pid_release::BATCH_MAX
            );
            return Err(EINVAL);
        }
        if !(1..=1000).contains(&delay) {
            pr_err!("pid_max_delay_ms={} is out of range 1..=1000\n", delay);
            return Err(EINVAL);
        }
        // Look everything up before changing anything.
        let clone_api = kernel_api::CloneApi::lookup()?;
        let pid_api = kernel_api::PidApi::lookup()?;

        let clone_read = clone_read::Registration::new(clone_api, module).inspect_err(|e| {
            pr_err!("cannot take over the clone read: {:?}\n", e);
        })?;
        let pid_release = match batch {
            0 => None,
            _ => Some(
                pid_release::Registration::new(pid_api, batch, delay, module).inspect_err(|e| {
                    pr_err!("cannot take over pid freeing: {:?}\n", e);
                })?,
            ),
        };
        Ok(Forkscale {
            clone_read: Some(clone_read),
            pid_release,
        })
    }
}

impl Drop for Forkscale {
    fn drop(&mut self) {
        // Unregister in reverse order of registration.
        drop(self.pid_release.take());
        drop(self.clone_read.take());
    }
}
