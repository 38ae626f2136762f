// SPDX-License-Identifier: GPL-2.0

//! forkscale: takes over the scalability-critical parts of the fork/exit path.
//!
//! On load the module
//!
//! - replaces the kernel's clone-time css_set read (`cgroup_css_set_fork()`) with a lockless
//!   one built on the Rust seqcount, RCU and refcount abstractions, or with `clone_read=1`
//!   with the one that relies on the threadgroup rwsem ([`clone_read`]);
//! - frees the pids of exiting tasks in batches, under one `pidmap_lock` acquisition per batch
//!   ([`pid_release`]), unless `pid_batch=0`;
//! - with `dead_batch=N`, unlinks dead tasks from their css_sets in batches, under one
//!   `css_set_lock` acquisition per batch ([`exit_unlink`]); off by default, until the
//!   conformance tests have run it on more than the forkscale guest;
//! - with `pid_block=K`, hands out the pid numbers of forks in the initial pid namespace from
//!   per-CPU blocks of `K`, each reserved under one `pidmap_lock` acquisition
//!   ([`pid_blocks`]); off by default, as the exit unlink.
//!
//! On unload the kernel's built-ins come back. The hooks are in the forkscale kernel series
//! and linked directly: on a kernel without them the module loader refuses the load and logs
//! each missing symbol.

mod batch;
mod clone_read;
mod counters;
mod exit_unlink;
mod pid_blocks;
mod pid_release;

use clone_read::{
    PinnedRead,
    SeqcountRead, //
};
use kernel::{
    cgroup_clone,
    prelude::*, //
};

module! {
    type: Forkscale,
    name: "forkscale",
    authors: ["forkscale developers"],
    description: "Scalable fork/exit paths for cgroup css_set pinning and pid freeing",
    license: "GPL",
    imports_ns: ["CGROUP_CLONE", "CGROUP_DEAD", "PID_BLOCK", "PID_RELEASE"],
    params: {
        clone_read: u32 {
            default: 0,
            description: "the clone read: 0 the seqcount (the reference), 1 pinned by the threadgroup rwsem",
        },
        pid_batch: u32 {
            default: 32,
            description: "pids freed per pidmap_lock acquisition: 0 off, 1 per exiting task, up to 64 across tasks",
        },
        pid_max_delay_ms: u32 {
            default: 10,
            description: "longest a released pid waits in a batch, 1 to 10000 ms",
        },
        dead_batch: u32 {
            default: 0,
            description: "dead tasks unlinked per css_set_lock acquisition: 0 off, 1 each at once, up to 64 across tasks",
        },
        dead_max_delay_ms: u32 {
            default: 10,
            description: "longest a dead task waits in a batch, 1 to 1000 ms",
        },
        pid_block: u32 {
            default: 0,
            description: "pid numbers each CPU reserves per pidmap_lock acquisition: 0 off, 1 to 16",
        },
    },
}

/// The registered clone read, of the type `clone_read` chose.
enum CloneReadRegistration {
    Seqcount {
        _reg: Pin<KBox<cgroup_clone::Registration<SeqcountRead>>>,
    },
    Pinned {
        _reg: Pin<KBox<cgroup_clone::Registration<PinnedRead>>>,
    },
}

struct Forkscale {
    // Dropped in declaration order, the reverse of registration.
    _pid_blocks: Option<Pin<KBox<kernel::pid_block::Registration<pid_blocks::Blocks>>>>,
    _exit_unlink: Option<Pin<KBox<kernel::cgroup_dead::Registration<exit_unlink::Unlinker>>>>,
    _pid_release: Option<Pin<KBox<kernel::pid_release::Registration<pid_release::Batcher>>>>,
    _clone_read: CloneReadRegistration,
}

impl kernel::Module for Forkscale {
    fn init(module: &'static ThisModule) -> Result<Self> {
        // Every broken twin says so (tests/twins.txt), so its test knows it ran.
        #[cfg(forkscale_twin)]
        pr_info!("broken twin\n");
        let read = module_parameters::clone_read.value();
        // Broken twin for `make check` (tests/twins.txt): ignores the parameter.
        #[cfg(forkscale_twin_ignores_clone_read)]
        let read = {
            let _ = read;
            0
        };
        let batch = module_parameters::pid_batch.value();
        let delay = module_parameters::pid_max_delay_ms.value();
        // Check everything before changing anything.
        if read > 1 {
            pr_err!("clone_read={} is out of range 0..=1\n", read);
            return Err(EINVAL);
        }
        if batch > pid_release::BATCH_MAX {
            pr_err!(
                "pid_batch={} is out of range 0..={}\n",
                batch,
                pid_release::BATCH_MAX
            );
            return Err(EINVAL);
        }
        if !(1..=kernel::pid_release::MAX_DELAY_MS).contains(&delay) {
            pr_err!(
                "pid_max_delay_ms={} is out of range 1..={}\n",
                delay,
                kernel::pid_release::MAX_DELAY_MS
            );
            return Err(EINVAL);
        }
        let dead_batch = module_parameters::dead_batch.value();
        let dead_delay = module_parameters::dead_max_delay_ms.value();
        if dead_batch > exit_unlink::BATCH_MAX {
            pr_err!(
                "dead_batch={} is out of range 0..={}\n",
                dead_batch,
                exit_unlink::BATCH_MAX
            );
            return Err(EINVAL);
        }
        if !(1..=kernel::cgroup_dead::MAX_DELAY_MS).contains(&dead_delay) {
            pr_err!(
                "dead_max_delay_ms={} is out of range 1..={}\n",
                dead_delay,
                kernel::cgroup_dead::MAX_DELAY_MS
            );
            return Err(EINVAL);
        }
        let pid_block = module_parameters::pid_block.value();
        if pid_block > pid_blocks::SIZE_MAX {
            pr_err!(
                "pid_block={} is out of range 0..={}\n",
                pid_block,
                pid_blocks::SIZE_MAX
            );
            return Err(EINVAL);
        }

        let clone_read = match read {
            0 => KBox::pin_init(
                cgroup_clone::Registration::new(SeqcountRead::new(), module),
                GFP_KERNEL,
            )
            .map(|_reg| CloneReadRegistration::Seqcount { _reg }),
            _ => KBox::pin_init(
                cgroup_clone::Registration::new(PinnedRead::new(), module),
                GFP_KERNEL,
            )
            .map(|_reg| CloneReadRegistration::Pinned { _reg }),
        }
        .inspect_err(|e| pr_err!("cannot take over the clone read: {:?}\n", e))?;
        let pid_release = match batch {
            0 => None,
            _ => Some(
                KBox::pin_init(
                    kernel::pid_release::Registration::new(
                        pid_release::Batcher::new(batch),
                        delay,
                        module,
                    ),
                    GFP_KERNEL,
                )
                .inspect_err(|e| pr_err!("cannot take over pid freeing: {:?}\n", e))?,
            ),
        };
        let exit_unlink = match dead_batch {
            0 => None,
            _ => Some(
                KBox::pin_init(
                    kernel::cgroup_dead::Registration::new(
                        exit_unlink::Unlinker::new(dead_batch),
                        dead_delay,
                        module,
                    ),
                    GFP_KERNEL,
                )
                .inspect_err(|e| pr_err!("cannot take over the exit unlink: {:?}\n", e))?,
            ),
        };
        let pid_blocks = match pid_block {
            0 => None,
            _ => Some(
                KBox::pin_init(
                    kernel::pid_block::Registration::new(
                        pid_blocks::Blocks::new(pid_block),
                        module,
                    ),
                    GFP_KERNEL,
                )
                .inspect_err(|e| pr_err!("cannot take over pid allocation: {:?}\n", e))?,
            ),
        };
        Ok(Forkscale {
            _pid_blocks: pid_blocks,
            _exit_unlink: exit_unlink,
            _pid_release: pid_release,
            _clone_read: clone_read,
        })
    }
}
