// SPDX-License-Identifier: GPL-2.0

//! Event counters spread over per-CPU slots, so that tasks on different CPUs do not bounce one
//! cache line on every fork or exit.
//!
//! 7.3's kernel crate has no per-CPU variables. A slot is picked by the CPU the task runs on
//! (`CpuId::current()`); a task preempted and moved meanwhile only shares another CPU's slot,
//! and atomic additions keep the sums exact either way.

use kernel::{
    bindings,
    cpu::CpuId,
    sync::atomic::{Atomic, Relaxed},
};

/// One slot per possible CPU id.
pub(crate) const SLOTS: usize = bindings::NR_CPUS as usize;

/// The CPU the current task runs on, or ran on if it has moved since, at most `NR_CPUS - 1`.
#[inline]
pub(crate) fn current_cpu() -> usize {
    CpuId::current().as_u32() as usize % SLOTS
}

#[repr(align(64))]
struct Slot<const N: usize>([Atomic<u64>; N]);

/// `N` counters, indexed `0..N`.
pub(crate) struct Counters<const N: usize> {
    slots: [Slot<N>; SLOTS],
}

impl<const N: usize> Counters<N> {
    pub(crate) const fn new() -> Self {
        Self {
            slots: [const { Slot([const { Atomic::new(0) }; N]) }; SLOTS],
        }
    }

    /// Adds `value` to counter `index`, wrapping. Every caller passes an index below `N`; one
    /// that did not would go uncounted rather than panic on the fork or exit path.
    pub(crate) fn add(&self, index: usize, value: u64) {
        // Broken twin for `make check` (tests/host/module_imports.sh): indexes by the raw CPU
        // id, which the compiler cannot bound, so the module links a panic path.
        #[cfg(forkscale_twin_panic_path)]
        self.slots[CpuId::current().as_u32() as usize].0[index].add(value, Relaxed);
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
        for slot in &self.slots {
            for c in &slot.0 {
                c.store(0, Relaxed);
            }
        }
    }
}
