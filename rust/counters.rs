// SPDX-License-Identifier: GPL-2.0

//! Event counters spread over per-CPU slots, so that tasks on different CPUs do not bounce one
//! cache line on every fork or exit.
//!
//! 7.3's kernel crate has no per-CPU variables. The slots are allocated at load, one for each
//! possible CPU id (`nr_cpu_ids`), and a slot is picked by the CPU the task runs on
//! (`CpuId::current()`); a task preempted and moved meanwhile only shares another CPU's slot,
//! and atomic additions keep the sums exact either way.

use kernel::{
    cpu::{
        nr_cpu_ids,
        CpuId, //
    },
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

/// The CPU the current task runs on, or ran on if it has moved since: below `nr_cpu_ids`.
#[inline]
pub(crate) fn current_cpu() -> usize {
    CpuId::current().as_u32() as usize
}

#[repr(align(64))]
struct Slot<const N: usize>([Atomic<u64>; N]);

/// `N` counters, indexed `0..N`.
pub(crate) struct Counters<const N: usize> {
    slots: Pin<KVBox<[Slot<N>]>>,
}

impl<const N: usize> Counters<N> {
    /// Zeroed counters, with a slot for every possible CPU.
    pub(crate) fn new() -> Result<Self> {
        let slots = KVBox::pin_slice(
            |_| Ok::<_, Error>(Slot([const { Atomic::new(0) }; N])),
            nr_cpu_ids() as usize,
            GFP_KERNEL,
        )?;
        Ok(Self { slots })
    }

    /// Adds `value` to counter `index`, wrapping. Every caller passes an index below `N`; one
    /// that did not would go uncounted rather than panic on the fork or exit path.
    pub(crate) fn add(&self, index: usize, value: u64) {
        // Broken twin for `make check` (tests/host/module_imports.sh): indexes without a check,
        // so the module links a panic path.
        #[cfg(forkscale_twin_panic_path)]
        self.slots[current_cpu()].0[index].add(value, Relaxed);
        #[cfg(not(forkscale_twin_panic_path))]
        if let Some(c) = self.slots.get(current_cpu()).and_then(|s| s.0.get(index)) {
            c.add(value, Relaxed);
        }
    }

    /// The sum of counter `index` over all slots, wrapping as the counters do.
    pub(crate) fn sum(&self, index: usize) -> u64 {
        self.slots
            .iter()
            .filter_map(|s| s.0.get(index))
            .fold(0, |sum, c| sum.wrapping_add(c.load(Relaxed)))
    }

    /// Zeroes every counter. Events that race with it may or may not be counted.
    pub(crate) fn reset(&self) {
        for slot in self.slots.iter() {
            for c in &slot.0 {
                c.store(0, Relaxed);
            }
        }
    }
}
