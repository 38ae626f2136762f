// SPDX-License-Identifier: GPL-2.0

//! The clone-time css_set reads this module offers the kernel's `cgroup_clone` hook.
//!
//! - [`SeqcountRead`], the default and the reference: the kernel's `seqcount` built-in written
//!   with the Rust abstractions. Under an RCU guard, read current's css_set and its `kill_seq`
//!   inside a `css_set_for_clone_seq` read section and pin the css_set with `inc_not_zero`.
//!   Migrations and `cgroup.kill` bump the counter, so an unchanged counter means the two
//!   belong together. After [`MAX_TRIES`] invalidated attempts the read runs under
//!   `css_set_lock`, so writers cannot starve a fork.
//! - [`PinnedRead`] (`clone_read=1`): no counter and no lock, because the threadgroup rwsem
//!   that the fork holds keeps current's css_set from changing (see [`ForkContext`]).

use crate::counters::Counters;
use kernel::{
    cgroup_clone::{
        self,
        clone_seqcount,
        CloneRead,
        CloneReadStats,
        CloneSeqCount,
        CurrentCssSet,
        ForkContext,
        ForkCssSet, //
    },
    prelude::*,
    sync::rcu, //
};

/// Lockless attempts before the read takes `css_set_lock`.
pub(crate) const MAX_TRIES: u32 = 4;

/// Indices into a read's counters.
const LOCKLESS: usize = 0;
const RETRIES: usize = 1;
const LOCKED: usize = 2;

fn read_counters(counters: &Counters<3>) -> CloneReadStats {
    CloneReadStats {
        lockless: counters.sum(LOCKLESS),
        retries: counters.sum(RETRIES),
        locked: counters.sum(LOCKED),
    }
}

/// One read of current's css_set and its `kill_seq`, the css_set pinned with `inc_not_zero`;
/// `None` if it was dying. With `window`, the debug delay point runs between the reads and the
/// pin, where the C `seqcount` read has it.
#[inline]
fn read_once<'ctx>(
    rcu: &rcu::Guard,
    ctx: &'ctx ForkContext,
    window: bool,
) -> Option<ForkCssSet<'ctx>> {
    let cset = CurrentCssSet::read(rcu, ctx);
    if window {
        cgroup_clone::read_window_delay();
    }
    cset.try_get()
}

/// The seqcount read over `css_set_for_clone_seq`, with `css_set_lock` as its fallback.
pub(crate) struct SeqcountRead {
    seq: CloneSeqCount,
    counters: Counters<3>,
}

impl SeqcountRead {
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            seq: clone_seqcount(),
            counters: Counters::new()?,
        })
    }
}

#[vtable]
impl CloneRead for SeqcountRead {
    const NAME: &'static CStr = c"forkscale";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> ForkCssSet<'ctx> {
        // Twin for `make check` (tests/twins.txt, run by tests/host/harness.sh): a read that
        // sleeps, which an unload must wait for.
        #[cfg(forkscale_twin_sleeps_in_clone_read)]
        kernel::time::delay::fsleep(kernel::time::Delta::from_secs(1));
        // The fallback takes `css_set_lock` with interrupts disabled, as every user of the lock
        // does. Nothing is put under it: `try_get()` cannot fail there, and its reference is
        // returned.
        let rcu = rcu::read_lock();
        // Broken twin for `make check` (tests/twins.txt): one attempt, never validated.
        #[cfg(forkscale_twin_unvalidated_read)]
        if let Some(found) = read_once(&rcu, ctx, true) {
            self.counters.add(LOCKLESS, 1);
            return found;
        }
        // Broken twin for `make check` (tests/twins.txt): every read takes `css_set_lock` and is
        // counted as lockless, which only the kernel's own count of the lock can tell.
        #[cfg(forkscale_twin_locked_clone_read)]
        if let Some(found) = self.seq.read_locked(|| read_once(&rcu, ctx, false)) {
            self.counters.add(LOCKLESS, 1);
            return found;
        }
        loop {
            let mut attempts: u32 = 0;
            let lockless = self.seq.try_read(MAX_TRIES, || {
                attempts = attempts.wrapping_add(1);
                // The series' debug delay point is inside the lockless attempts, where the
                // `seqcount` built-in has it, not under the lock.
                read_once(&rcu, ctx, true)
            });
            let attempt = match lockless {
                Some(attempt) => {
                    self.counters.add(LOCKLESS, 1);
                    self.counters
                        .add(RETRIES, u64::from(attempts.saturating_sub(1)));
                    attempt
                }
                None => {
                    self.counters.add(LOCKED, 1);
                    self.counters.add(RETRIES, u64::from(attempts));
                    self.seq.read_locked(|| read_once(&rcu, ctx, false))
                }
            };
            // A validated attempt has failed `inc_not_zero` only if current's css_set died
            // without a migration, which cannot happen: current holds a reference on it. Under
            // the lock the read cannot fail at all. Looping keeps the fork correct regardless.
            if let Some(found) = attempt {
                // Broken twin for `make check` (tests/twins.txt): leaks a reference.
                #[cfg(forkscale_twin_css_set_leak)]
                core::mem::forget(kernel::sync::aref::ARef::from(found.css_set()));
                return found;
            }
        }
    }

    fn read_stats(&self) -> CloneReadStats {
        read_counters(&self.counters)
    }

    fn reset_stats(&self) {
        self.counters.reset();
    }
}

/// The read that relies on the fork's threadgroup rwsem, like the kernel's `pinned` built-in.
pub(crate) struct PinnedRead {
    counters: Counters<3>,
}

impl PinnedRead {
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            counters: Counters::new()?,
        })
    }
}

#[vtable]
impl CloneRead for PinnedRead {
    const NAME: &'static CStr = c"forkscale_pinned";

    fn get_cset<'ctx>(&self, ctx: &'ctx ForkContext) -> ForkCssSet<'ctx> {
        let rcu = rcu::read_lock();
        let cset = CurrentCssSet::read(&rcu, ctx);
        self.counters.add(LOCKLESS, 1);
        // `kill_seq` only grows and `cgroup_post_fork()` re-reads it under the lock, so a stale
        // snapshot can only make the child notice a kill, never miss one.
        cset.get_pinned(ctx)
    }

    fn read_stats(&self) -> CloneReadStats {
        read_counters(&self.counters)
    }

    fn reset_stats(&self) {
        self.counters.reset();
    }
}
