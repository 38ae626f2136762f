// SPDX-License-Identifier: GPL-2.0

//! A fixed-capacity queue of owning tokens (released pids, dead tasks) waiting for one lock
//! acquisition that handles them all.

/// Up to `N` tokens, in the first `len` slots.
pub(crate) struct Batch<T, const N: usize> {
    items: [Option<T>; N],
    len: usize,
}

impl<T, const N: usize> Batch<T, N> {
    pub(crate) const fn new() -> Self {
        Self {
            items: [const { None }; N],
            len: 0,
        }
    }

    /// How many tokens are queued.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Adds `item`, or hands it back if full.
    pub(crate) fn push(&mut self, item: T) -> Option<T> {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = Some(item);
                // Below `N`, since slot `len` exists: no overflow to check.
                self.len = self.len.wrapping_add(1);
                None
            }
            None => Some(item),
        }
    }

    /// Moves the oldest tokens, as many as `out` has slots, into `out`, and the rest to the
    /// front; returns how many moved. Takes no more than `len` steps.
    pub(crate) fn take_oldest(&mut self, out: &mut [Option<T>]) -> usize {
        let n = out.len().min(self.len);
        for (slot, item) in out.iter_mut().zip(self.items.iter_mut()).take(n) {
            *slot = item.take();
        }
        // Slots below `len` only, from `n` up: `wrapping_sub` cannot wrap, and every index is
        // checked by `get_mut`, so no panic path is linked.
        for from in n..self.len {
            let item = self.items.get_mut(from).and_then(Option::take);
            if let Some(slot) = self.items.get_mut(from.wrapping_sub(n)) {
                *slot = item;
            }
        }
        self.len = self.len.wrapping_sub(n);
        n
    }

    /// Empties `self`, handing back the slots that held its tokens.
    pub(crate) fn drain(&mut self) -> &mut [Option<T>] {
        let len = core::mem::replace(&mut self.len, 0);
        self.items.get_mut(..len).unwrap_or_default()
    }
}

/// How many tokens `items` holds. Not `Iterator::count()`, whose overflow check would link a
/// panic path into the module (`tests/host/module_imports.sh`).
pub(crate) fn count<T>(items: &[Option<T>]) -> u64 {
    items.iter().flatten().fold(0, |n, _| n.wrapping_add(1))
}
