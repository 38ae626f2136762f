// SPDX-License-Identifier: GPL-2.0

//! Per-CPU blocks of pid numbers, registered with the kernel's `pid_block` hook.
//!
//! Every fork in `init_pid_ns` takes its number under the global `pidmap_lock`. With
//! `pid_block=K` (1 to [`SIZE_MAX`]) each CPU reserves the next `K` numbers the kernel's cyclic
//! allocator would give, under one acquisition, and forks on that CPU claim them without the
//! lock. The kernel keeps stock's answers itself: where a number waiting in a block would show
//! (a write of `ns_last_pid`, or of `pid_max` for the numbers over it) it gives them back under
//! `pidmap_lock`, a fork that finds no free number takes the lowest waiting one, and
//! `clone3(set_tid)` of a waiting number takes it from its block. A block given up (a flush, the
//! surplus of two forks reserving at once, unloading) parks its waiting numbers with the kernel,
//! whose next allocations take them first, as stock's cursor would hand them out next.
//! Unloading gives every block up, which only the module can do.

use crate::counters::current_cpu;
use kernel::{
    new_spinlock,
    pid_block::{
        FlushReason,
        PidBlock,
        PidBlocks,
        PidClaim,
        SLOTS, //
    },
    prelude::*,
    sync::SpinLock, //
};

/// The largest `pid_block`.
pub(crate) const SIZE_MAX: u32 = SLOTS;

/// The block one CPU draws from, on a cache line of its own: its CPU takes the lock on every fork.
#[pin_data]
#[cfg_attr(not(forkscale_packed_percpu), repr(align(64)))]
struct Holder {
    #[pin]
    block: SpinLock<Option<PidBlock>>,
}

/// A block of pid numbers for each CPU.
pub(crate) struct Blocks {
    size: u32,
    /// One holder for each CPU id below `nr_cpu_ids`, indexed by [`current_cpu()`].
    holders: Pin<KVBox<[Holder]>>,
}

impl Blocks {
    /// Blocks of `size` numbers (1 to [`SIZE_MAX`]).
    pub(crate) fn new(size: u32) -> Result<Self> {
        if !(1..=SIZE_MAX).contains(&size) {
            return Err(EINVAL);
        }
        let holders = KVBox::pin_slice(
            |_| try_pin_init!(Holder { block <- new_spinlock!(None) }? Error),
            kernel::cpu::nr_cpu_ids() as usize,
            GFP_KERNEL,
        )?;
        Ok(Self { size, holders })
    }

    /// Gives every held block back; true if there was any.
    fn give_back_all(&self) -> bool {
        let mut any = false;
        for holder in self.holders.iter() {
            // Dropped here, outside the holder's lock: the kernel takes `pidmap_lock`.
            let block = holder.block.lock().take();
            any |= block.is_some();
        }
        any
    }
}

impl PidBlocks for Blocks {
    const NAME: &'static CStr = c"forkscale";

    fn claim(&self) -> Option<PidClaim> {
        // Broken twin for `make check` (tests/twins.txt): claims nothing, so every fork takes
        // its number under `pidmap_lock`.
        #[cfg(forkscale_twin_no_block_claims)]
        return None;
        #[cfg_attr(forkscale_twin_no_block_claims, allow(unreachable_code))]
        let holder = self.holders.get(current_cpu())?;
        let spent = {
            // A claim may give back a number over a lowered `pid_max`, taking `pidmap_lock`
            // under this lock; the kernel never takes a holder's lock under `pidmap_lock`.
            let mut held = holder.block.lock();
            if let Some(claim) = (*held).as_mut().and_then(|block| block.claim()) {
                return Some(claim);
            }
            held.take()
        };
        // Outside the holder's lock: giving a block back may take `pidmap_lock`, and reserving
        // one allocates.
        drop(spent);
        let mut block = PidBlock::reserve(self.size)?;
        let claim = block.claim();
        // Another fork on this CPU may have installed a block meanwhile: keep that one, and
        // park this one's numbers.
        let surplus = {
            let mut held = holder.block.lock();
            match *held {
                None => held.replace(block),
                Some(_) => Some(block),
            }
        };
        drop(surplus);
        claim
    }

    fn flush(&self, reason: FlushReason) {
        // Broken twin for `make check` (tests/twins.txt), never in a normal build: ignores the
        // unload flush, which the test named there must notice.
        #[cfg(forkscale_twin_no_block_unload_flush)]
        if reason == FlushReason::Unload {
            return;
        }
        let _ = reason;
        self.give_back_all();
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        // Dropped after unregistering, when the kernel has had us give everything back and no
        // fork reaches us any more. A block still held means the unload flush missed it: a bug
        // worth reporting and surviving, so it is given back here.
        // Broken twin for `make check` (tests/twins.txt): keeps the numbers of the blocks
        // held at unload reserved for good.
        #[cfg(forkscale_twin_no_block_unload_flush)]
        for holder in self.holders.iter() {
            core::mem::forget(holder.block.lock().take());
        }
        if self.give_back_all() {
            pr_err!("pid blocks: a block was still held at unload\n");
        }
    }
}
