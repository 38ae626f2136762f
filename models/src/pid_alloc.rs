// SPDX-License-Identifier: GPL-2.0
//! A loom model of pid allocation from per-CPU blocks (measure/0019's `kernel/pid.c`, argued in
//! `Documentation/design.rst`, "Pid numbers from per-CPU blocks").
//!
//! The namespace's idr stays the map from number to pid, and its cyclic cursor stays in
//! numbers. Under one `pidmap_lock` acquisition a CPU reserves a *block*: the next free
//! numbers the cursor would hand out, whose idr entries then name the block and a slot. A
//! fork claims a slot with compare-and-exchange and publishes its pid with a release store,
//! without the lock. A free returns its number to the idr under the lock, as stock does (the
//! batched release amortises that). A block's memory lives while its CPU still draws from
//! it or any of its slots is neither dead nor freed, and it stays on the kernel's list of
//! blocks until then: the kernel's *kill* walks that list under the lock and gives every
//! waiting number back (on an `ns_last_pid` write), so the last reference is dropped under the
//! lock too. Where no number is free after the cursor (it would wrap, or every number is
//! taken), the lowest waiting number is handed out instead, and a reservation that holds
//! numbers stops there. A CPU that is done with its block *releases* it and drops its hold;
//! a block given up with numbers still waiting (the module's flushes and unload) keeps them,
//! *parked*, and the next allocation takes the lowest parked number before the cursor's.
//!
//! Properties, each with the mutant that breaks it (tests/pid_alloc.rs):
//! - **one holder**: a number is never handed to two pids at once, even when
//!   `clone3(set_tid)` takes a number that waits in another CPU's block;
//! - **set_tid as stock**: `clone3(set_tid)` of a number no pid holds succeeds;
//! - **initialised**: a lookup that finds a pid sees it initialised;
//! - **gone when freed**: once a pid's free returns, a lookup of its number does not find it;
//! - **exhaustion as stock**: allocation fails only when every number is held by a pid;
//! - **next number**: after a write to `ns_last_pid`, a fork gets the next number;
//! - **no reuse before stock's**: the cursor wraps only when no number reserved since its
//!   last wrap waits in a block, as stock's wraps only once it has handed out every number
//!   after it, no fork is handed a number twice between wraps, and the cursor never wraps past
//!   a free number reserved since its last wrap and never handed out: otherwise a freed
//!   number would be handed out again while stock would still be handing out others;
//! - **no use after free**: neither a fork nor the kill walk touches a block that was freed.
//!
//! Not modelled: RCU (a lookup may read a freed block, which the kernel frees with
//! `call_rcu()`; blocks are never reused here), the batched release queues, `RESERVED_PIDS`,
//! `pid_max` writes and nested namespaces.

use crate::{name_the_race, named_access};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// Pid numbers 0..NUMS; a block holds up to K of them.
const NUMS: usize = 4;
const K: usize = 2;
/// Block objects: a reservation takes a fresh one, as a kernel block is a new allocation.
const BLOCKS: usize = 5;
/// Pid objects.
const PIDS: usize = 6;

/// idr entries: free, a block's slot, or the pid itself (the slow path).
const FREE: usize = 0;
const fn in_block(b: usize, i: usize) -> usize {
    1 + b * K + i
}
const fn direct(p: usize) -> usize {
    100 + p
}
/// An entry the slow path allocated, its pid not yet stored (the kernel's NULL entry).
const UNSET: usize = 99;
/// The block and slot an entry names, if it names one.
const fn block_slot(entry: usize) -> Option<(usize, usize)> {
    if entry == FREE || entry > BLOCKS * K {
        None
    } else {
        Some(((entry - 1) / K, (entry - 1) % K))
    }
}

/// Block slots: 0 while unused, then reserved and unclaimed, claimed by a fork not yet
/// published, dead (flushed unclaimed), or the published pid (freed or not).
const EMPTY: usize = 1;
const CLAIMED: usize = 2;
const DEAD: usize = 3;
const fn published(p: usize) -> usize {
    10 + p
}

#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// A fork claims a slot with compare-and-exchange, not a load and a store.
    pub claim_by_cas: bool,
    /// `clone3(set_tid)` of a number in a block claims its slot, as a fork would.
    pub set_tid_steals: bool,
    /// A fork publishes its pid with a release store.
    pub publish_release: bool,
    /// A free returns the number to the idr (the entry stops naming the block).
    pub free_clears_entry: bool,
    /// A write to `ns_last_pid` flushes every CPU's block.
    pub flush_on_last_pid: bool,
    /// A CPU's block counts the CPU's hold, so it outlives a flush while its CPU uses it.
    pub cache_holds_block: bool,
    /// A released block's last reference is dropped under the lock, never beside a kill walk.
    pub last_put_locked: bool,
    /// A block given up with numbers waiting keeps them, parked, and an allocation takes the
    /// lowest parked number before the cursor's; otherwise they go back to the idr.
    pub park_on_release: bool,
    /// The release records how many numbers it parked, which walks go by.
    pub count_parked: bool,
    /// What an allocation does where the cursor would wrap while numbers wait in blocks.
    pub wrap: Wrap,
    /// A reservation that holds numbers stops where the cursor would wrap, so that no block
    /// holds numbers from both sides of a wrap.
    pub reserve_stops_at_wrap: bool,
}

/// Where the cursor would wrap while numbers wait in blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wrap {
    /// It wraps, past them.
    Plain,
    /// They go back, and the cursor restarts at the lowest of them.
    RestartAtLowest,
    /// The lowest of them is handed out instead, and the cursor stays at the end until none
    /// waits (measure/0019's `pid_alloc_cyclic_locked()`).
    TakeWaiting,
}

pub const CORRECT: Protocol = Protocol {
    claim_by_cas: true,
    set_tid_steals: true,
    publish_release: true,
    free_clears_entry: true,
    flush_on_last_pid: true,
    cache_holds_block: true,
    last_put_locked: true,
    park_on_release: true,
    count_parked: true,
    wrap: Wrap::TakeWaiting,
    reserve_stops_at_wrap: true,
};

struct Block {
    /// Its numbers, set at reservation before any idr entry names the block.
    nrs: [AtomicUsize; K],
    slots: [AtomicUsize; K],
    /// The CPU's hold plus the slots neither dead nor freed.
    refs: AtomicUsize,
    /// On the kernel's list of blocks, which kill walks; changed under the lock.
    listed: AtomicBool,
    /// Released by its CPU, which claims no more; walks skip it unless it parks numbers.
    released: AtomicBool,
    /// Its EMPTY slots when it was released with some; changed under the lock.
    parked: AtomicUsize,
    /// Ghost: the block's memory was freed.
    freed: AtomicBool,
}

/// Under `pidmap_lock`.
struct Locked {
    /// The cyclic cursor: the next number to try, `NUMS` at the end of the range.
    cursor: usize,
    /// Block objects used so far; the live ones are those not `freed`.
    used: usize,
}

struct World {
    proto: Protocol,
    /// The idr's entries, written under `pidmap_lock`, read by lookups without it.
    idr: [AtomicUsize; NUMS],
    lock: Mutex<Locked>,
    blocks: [Block; BLOCKS],
    /// A pid's fields, written before it is published.
    pids: [UnsafeCell<usize>; PIDS],
    /// Ghost: how many pids hold each number.
    holders: [AtomicUsize; NUMS],
    /// Ghost: 0, or 1 + (the number the cursor wrapped to) * NUMS + (a number that waited).
    early_wrap: AtomicUsize,
    /// Ghost: the numbers a fork was handed since the cursor last wrapped or was set.
    since_wrap: [AtomicBool; NUMS],
    /// Ghost: 0, or 1 + a number a fork was handed twice between wraps.
    twice: AtomicUsize,
    /// Ghost: the numbers reserved since the cursor last wrapped or was set, not yet handed
    /// out (to a fork or `set_tid`).
    owed: [AtomicBool; NUMS],
    /// Ghost: 0, or 1 + a free number still owed when the cursor wrapped.
    skipped: AtomicUsize,
}

/// A CPU's block: the block and the next slot to try. Only its CPU touches it.
#[derive(Default)]
struct Cache {
    block: Option<usize>,
    next: usize,
}

impl World {
    fn new(proto: Protocol) -> Self {
        World {
            proto,
            idr: Default::default(),
            lock: Mutex::new(Locked { cursor: 0, used: 0 }),
            blocks: std::array::from_fn(|_| Block {
                nrs: Default::default(),
                slots: Default::default(),
                refs: AtomicUsize::new(0),
                listed: AtomicBool::new(false),
                released: AtomicBool::new(false),
                parked: AtomicUsize::new(0),
                freed: AtomicBool::new(false),
            }),
            pids: std::array::from_fn(|_| UnsafeCell::new(0)),
            holders: Default::default(),
            early_wrap: AtomicUsize::new(0),
            since_wrap: Default::default(),
            twice: AtomicUsize::new(0),
            owed: Default::default(),
            skipped: AtomicUsize::new(0),
        }
    }

    /// The no-reuse-before-stock property, over everything that ran: no wrap while a number
    /// waits, and no number handed to a fork twice between wraps.
    fn assert_no_early_reuse(&self) {
        let early = self.early_wrap.load(Ordering::Relaxed);
        assert!(
            early == 0,
            "the cursor wrapped to {} while number {} waited: a freed number is reused before \
             stock would reuse it",
            (early.max(1) - 1) / NUMS,
            (early.max(1) - 1) % NUMS
        );
        let twice = self.twice.load(Ordering::Relaxed);
        assert!(
            twice == 0,
            "number {} was handed out again before the cursor wrapped: a freed number is reused \
             before stock would reuse it",
            twice.max(1) - 1
        );
        let skipped = self.skipped.load(Ordering::Relaxed);
        assert!(
            skipped == 0,
            "number {} was reserved, never handed out and free when the cursor wrapped: a freed \
             number is reused before stock would reuse it",
            skipped.max(1) - 1
        );
    }

    /// Ghost: a fork was handed `nr` by the cursor's allocation (not `set_tid`).
    fn handed(&self, nr: usize) {
        if self.since_wrap[nr].swap(true, Ordering::SeqCst) {
            self.twice.store(1 + nr, Ordering::SeqCst);
        }
        self.owed[nr].store(false, Ordering::SeqCst);
    }

    /// Ghost: the cursor wrapped, or was set: every number may be handed out again.
    fn rewound(&self) {
        for used in &self.since_wrap {
            used.store(false, Ordering::SeqCst);
        }
        for owed in &self.owed {
            owed.store(false, Ordering::SeqCst);
        }
    }

    fn hold(&self, nr: usize) {
        let before = self.holders[nr].fetch_add(1, Ordering::SeqCst);
        assert_eq!(before, 0, "number {nr} handed to two pids at once");
    }

    /// Under the lock: `pid_alloc_cyclic_locked()`, the kernel's `idr_alloc_cyclic()` for
    /// `entry` in stock's order: a free number from the cursor to the end of the range; where
    /// there is none, a number waiting in a block ([`Wrap`]); then from the start (the wrap),
    /// the cursor then after the number. `reserving` is the block a reservation fills and how
    /// many numbers it holds already.
    fn alloc_cyclic(
        &self,
        locked: &mut Locked,
        entry: usize,
        reserving: Option<(usize, usize)>,
    ) -> Option<usize> {
        if self.proto.park_on_release {
            if let Some(nr) = self.take_lowest(locked, entry, true) {
                return Some(nr);
            }
        }
        let from = locked.cursor;
        let free = |n: &usize| self.idr[*n].load(Ordering::Relaxed) == FREE;
        let nr = match (from..NUMS).find(free) {
            Some(nr) => nr,
            None => {
                // Stock would wrap here, having handed out every number after the cursor: no
                // number reserved since the last wrap may wait.
                match self.proto.wrap {
                    Wrap::Plain => {}
                    Wrap::RestartAtLowest => {
                        if let Some(lowest) = self.flush(locked) {
                            locked.cursor = lowest;
                            return self.alloc_cyclic(locked, entry, reserving);
                        }
                    }
                    Wrap::TakeWaiting => {
                        if let Some(w) = self.take_lowest(locked, entry, false) {
                            return Some(w);
                        }
                    }
                }
                let held = reserving.filter(|&(_, n)| n > 0);
                if held.is_some() && self.proto.reserve_stops_at_wrap {
                    return None;
                }
                let nr = (0..from).find(free)?;
                // Recorded, and asserted once no lock is held: loom cannot unwind a panic
                // while another thread waits for the lock. The block being reserved is not
                // listed yet, and its numbers wait too.
                let own = held.map(|(b, _)| self.blocks[b].nrs[0].load(Ordering::Relaxed));
                if let Some(w) = (0..locked.used).find_map(|b| self.waiting_in(b)).or(own) {
                    self.early_wrap.store(1 + nr * NUMS + w, Ordering::Relaxed);
                }
                let owed_free = |n: &usize| self.owed[*n].load(Ordering::Relaxed) && free(n);
                if let Some(n) = (0..NUMS).find(owed_free) {
                    self.skipped.store(1 + n, Ordering::Relaxed);
                }
                self.rewound();
                nr
            }
        };
        // Release: a lookup that finds the entry sees what it names initialised.
        self.idr[nr].store(entry, Ordering::Release);
        locked.cursor = nr + 1;
        Some(nr)
    }

    /// Under the lock: whether walks visit block `b` (listed, and not released by its CPU or
    /// parking numbers).
    fn walked(&self, b: usize) -> bool {
        let block = &self.blocks[b];
        block.listed.load(Ordering::Relaxed)
            && (!block.released.load(Ordering::Relaxed) || block.parked.load(Ordering::Relaxed) > 0)
    }

    /// Under the lock: whether block `b` parks numbers.
    fn parking(&self, b: usize) -> bool {
        self.blocks[b].listed.load(Ordering::Relaxed)
            && self.blocks[b].parked.load(Ordering::Relaxed) > 0
    }

    /// Under the lock: slot `i` of block `b`, if still empty, dies, and its number's idr entry
    /// becomes `entry` (FREE gives it back); the slot's reference goes. The number, if so.
    fn take_slot(&self, b: usize, i: usize, entry: usize) -> Option<usize> {
        let block = &self.blocks[b];
        block.slots[i]
            .compare_exchange(EMPTY, DEAD, Ordering::AcqRel, Ordering::Relaxed)
            .ok()?;
        // Only the lock's holders set `parked`: a release that found no EMPTY slot did not.
        if block.parked.load(Ordering::Relaxed) > 0 {
            block.parked.fetch_sub(1, Ordering::Relaxed);
        }
        let nr = block.nrs[i].load(Ordering::Relaxed);
        self.idr[nr].store(entry, Ordering::Release);
        self.put(b);
        Some(nr)
    }

    /// Under the lock: `pid_block_take_lowest_locked()`. The lowest number waiting in a
    /// block (a parked one, with `parked`) becomes `entry`'s, its slot dead, the cursor where
    /// it is.
    fn take_lowest(&self, locked: &mut Locked, entry: usize, parked: bool) -> Option<usize> {
        loop {
            let (b, i) = (0..locked.used)
                .flat_map(|b| (0..K).map(move |i| (b, i)))
                .filter(|&(b, i)| {
                    let visited = if parked {
                        self.parking(b)
                    } else {
                        self.walked(b)
                    };
                    visited && self.blocks[b].slots[i].load(Ordering::Relaxed) == EMPTY
                })
                .min_by_key(|&(b, i)| self.blocks[b].nrs[i].load(Ordering::Relaxed))?;
            // Its CPU may claim it first: then look again.
            if let Some(nr) = self.take_slot(b, i, entry) {
                return Some(nr);
            }
        }
    }

    /// Under the lock: a number waiting unclaimed in listed block `b`.
    fn waiting_in(&self, b: usize) -> Option<usize> {
        if !self.walked(b) {
            return None;
        }
        let block = &self.blocks[b];
        (0..K)
            .find(|&i| block.slots[i].load(Ordering::Relaxed) == EMPTY)
            .map(|i| block.nrs[i].load(Ordering::Relaxed))
    }

    /// Under the lock: the next free numbers from the cursor, up to K, as the cyclic
    /// allocator would hand them out, in a fresh block held by the calling CPU, then listed.
    fn reserve(&self, locked: &mut Locked) -> Option<usize> {
        if locked.used == BLOCKS {
            return None;
        }
        let b = locked.used;
        let block = &self.blocks[b];
        let mut n = 0;
        while n < K {
            // The slot first: the entry is stored with release, and lookups may find it.
            block.slots[n].store(EMPTY, Ordering::Relaxed);
            match self.alloc_cyclic(locked, in_block(b, n), Some((b, n))) {
                Some(nr) => {
                    block.nrs[n].store(nr, Ordering::Relaxed);
                    self.owed[nr].store(true, Ordering::SeqCst);
                }
                None => {
                    block.slots[n].store(0, Ordering::Relaxed);
                    break;
                }
            }
            n += 1;
        }
        if n == 0 {
            return None;
        }
        locked.used += 1;
        let hold = usize::from(self.proto.cache_holds_block);
        block.refs.store(n + hold, Ordering::Relaxed);
        block.listed.store(true, Ordering::Relaxed);
        Some(b)
    }

    /// Drops one reference on block `b`; the last unlists and frees it (`call_rcu()` in the
    /// kernel). Under the lock, but for the mutant that drops a release's last without it.
    fn put(&self, b: usize) {
        if self.blocks[b].refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.blocks[b].listed.store(false, Ordering::Relaxed);
            self.blocks[b].freed.store(true, Ordering::SeqCst);
        }
    }

    /// `pid_block_release()`: CPU is done with block `b`. Under the lock its waiting numbers
    /// park (or go back); then its hold goes, without the lock unless it is the last reference.
    fn release(&self, b: usize) {
        let block = &self.blocks[b];
        let mut locked = None;
        let mut parked = 0;
        for i in 0..K {
            if block.slots[i].load(Ordering::Relaxed) != EMPTY {
                continue;
            }
            if locked.is_none() {
                locked = Some(self.lock.lock().unwrap());
            }
            if self.proto.park_on_release {
                parked += 1;
            } else {
                self.take_slot(b, i, FREE);
            }
        }
        if self.proto.count_parked {
            block.parked.store(parked, Ordering::Relaxed);
        }
        block.released.store(true, Ordering::Relaxed);
        if locked.is_none() {
            if !self.proto.last_put_locked {
                self.put(b);
                return;
            }
            // refcount_dec_not_one()
            let mut refs = block.refs.load(Ordering::Relaxed);
            while refs > 1 {
                match block.refs.compare_exchange(
                    refs,
                    refs - 1,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return,
                    Err(now) => refs = now,
                }
            }
            locked = Some(self.lock.lock().unwrap());
        }
        self.put(b);
        drop(locked);
    }

    /// Claims slot `i` of block `b`: the one step where a fork and `set_tid` can race.
    fn claim(&self, b: usize, i: usize) -> bool {
        let slot = &self.blocks[b].slots[i];
        let claimed = if self.proto.claim_by_cas {
            slot.compare_exchange(EMPTY, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        } else if slot.load(Ordering::Acquire) != EMPTY {
            false
        } else {
            slot.store(CLAIMED, Ordering::Relaxed);
            true
        };
        assert!(
            !self.blocks[b].freed.load(Ordering::SeqCst),
            "a fork used a block that was freed"
        );
        claimed
    }

    /// Initialises pid `p` for number `nr` and publishes it in slot `i` of block `b`.
    fn publish(&self, b: usize, i: usize, nr: usize, p: usize) {
        // SAFETY: loom checks the access; nothing reads pid `p` before it is published.
        self.pids[p].with_mut(|data| unsafe { *data = nr + 1 });
        let order = if self.proto.publish_release {
            Ordering::Release
        } else {
            Ordering::Relaxed
        };
        self.blocks[b].slots[i].store(published(p), order);
    }

    /// `alloc_pid()` on a CPU with `cache`: a number from its block, refilled under the
    /// lock; on exhaustion, flush and take any free number directly.
    fn fork(&self, cache: &mut Cache, p: usize) -> Option<usize> {
        loop {
            if let Some(b) = cache.block {
                assert!(
                    !self.blocks[b].freed.load(Ordering::SeqCst),
                    "a fork used a block that was freed"
                );
                while cache.next < K {
                    let i = cache.next;
                    cache.next += 1;
                    if self.claim(b, i) {
                        let nr = self.blocks[b].nrs[i].load(Ordering::Relaxed);
                        self.hold(nr);
                        self.handed(nr);
                        self.publish(b, i, nr, p);
                        return Some(nr);
                    }
                }
                cache.block = None;
                if self.proto.cache_holds_block {
                    self.release(b);
                }
            }
            let mut locked = self.lock.lock().unwrap();
            if let Some(b) = self.reserve(&mut locked) {
                *cache = Cache {
                    block: Some(b),
                    next: 0,
                };
                continue;
            }
            // No block: alloc_pid()'s own allocation, which takes a waiting number where
            // none is free after the cursor.
            return self.take_direct(&mut locked, p);
        }
    }

    /// The slow path, as stock's `alloc_pid()`: the cursor's next free number, its entry the
    /// pid itself (the kernel initialises the pid before it stores the entry).
    fn take_direct(&self, locked: &mut Locked, p: usize) -> Option<usize> {
        let nr = self.alloc_cyclic(locked, UNSET, None)?;
        self.handed(nr);
        self.place_direct(nr, p);
        Some(nr)
    }

    /// Under the lock: free number `nr` goes to pid `p`, initialised, its entry the pid.
    fn place_direct(&self, nr: usize, p: usize) {
        self.hold(nr);
        // SAFETY: loom checks the access; nothing reads pid `p` before its entry is stored.
        self.pids[p].with_mut(|data| unsafe { *data = nr + 1 });
        self.idr[nr].store(direct(p), Ordering::Release);
    }

    /// `pid_block_kill_locked()`: every walked block's unclaimed slots (waiting or parked)
    /// die, their numbers back to the idr. The lowest number given back, if any.
    fn flush(&self, locked: &mut Locked) -> Option<usize> {
        let mut lowest = None;
        for b in 0..locked.used {
            if !self.walked(b) {
                continue;
            }
            assert!(
                !self.blocks[b].freed.load(Ordering::SeqCst),
                "a kill walk touched a block that was freed"
            );
            for i in 0..K {
                if let Some(nr) = self.take_slot(b, i, FREE) {
                    lowest = Some(lowest.map_or(nr, |l: usize| l.min(nr)));
                }
            }
        }
        lowest
    }

    /// `clone3(set_tid = nr)`: under the lock, a free number, or one a block holds unclaimed.
    fn set_tid(&self, nr: usize, p: usize) -> Result<(), &'static str> {
        let _locked = self.lock.lock().unwrap();
        let entry = self.idr[nr].load(Ordering::Relaxed);
        if entry == FREE {
            self.place_direct(nr, p);
            return Ok(());
        }
        let Some((b, i)) = block_slot(entry).filter(|_| self.proto.set_tid_steals) else {
            return Err("EEXIST");
        };
        if !self.claim(b, i) {
            return Err("EEXIST");
        }
        self.owed[nr].store(false, Ordering::SeqCst);
        self.hold(nr);
        self.publish(b, i, nr, p);
        Ok(())
    }

    /// `free_pid()` of the pid at `nr`, under the lock as stock's (a batch of them in the
    /// kernel with the batched release).
    fn free(&self, nr: usize) {
        let _locked = self.lock.lock().unwrap();
        self.holders[nr].fetch_sub(1, Ordering::SeqCst);
        let entry = self.idr[nr].load(Ordering::Relaxed);
        let block = block_slot(entry);
        if block.is_none() || self.proto.free_clears_entry {
            self.idr[nr].store(FREE, Ordering::Release);
        }
        if let Some((b, _)) = block {
            self.put(b);
        }
    }

    /// `find_pid_ns()`: the pid at `nr`, initialised, or none.
    fn lookup(&self, nr: usize) -> Option<usize> {
        let entry = self.idr[nr].load(Ordering::Acquire);
        let p = if entry >= direct(0) {
            entry - direct(0)
        } else if let Some((b, i)) = block_slot(entry) {
            let slot = self.blocks[b].slots[i].load(Ordering::Acquire);
            slot.checked_sub(published(0))?
        } else {
            return None;
        };
        let data = named_access("a lookup found a pid not yet initialised", || {
            // SAFETY: loom checks the access against the pid's initialisation.
            self.pids[p].with(|data| unsafe { *data })
        });
        assert_eq!(data, nr + 1, "a lookup of {nr} found another number's pid");
        Some(p)
    }

    /// A write of `nr` to `ns_last_pid`: the cursor moves to the number after it.
    fn write_last_pid(&self, nr: usize) {
        let mut locked = self.lock.lock().unwrap();
        locked.cursor = nr + 1;
        self.rewound();
        if self.proto.flush_on_last_pid {
            self.flush(&mut locked);
        }
    }

    /// A CPU gives its block up, numbers still waiting or not (the module's flushes, unload).
    fn give_up(&self, cache: &mut Cache) {
        if let Some(b) = cache.block.take() {
            self.release(b);
        }
    }

    /// CPU 0's block, reserved at boot: numbers 0 and 1.
    fn boot_block(&self) -> Cache {
        let mut locked = self.lock.lock().unwrap();
        Cache {
            block: self.reserve(&mut locked),
            next: 0,
        }
    }
}

/// A world whose CPU 0 has its block and forked pids 0 to `forks - 1` from it, in order.
fn booted(proto: Protocol, forks: usize) -> (Arc<World>, Cache) {
    let world = Arc::new(World::new(proto));
    let mut cache = world.boot_block();
    for p in 0..forks {
        assert_eq!(world.fork(&mut cache, p), Some(p));
    }
    (world, cache)
}

/// Checks `f` in every interleaving, a data race reported as the property it breaks.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::builder().check(f)));
    if let Err(panic) = result {
        std::panic::resume_unwind(name_the_race(panic));
    }
}

/// A fork on CPU 0, from its block, against `clone3(set_tid = nr)` on CPU 1: 0, the number
/// the fork claims first, or 1, which it does not reach (no race: a check of the answer).
pub fn check_set_tid(proto: Protocol, nr: usize) {
    model(move || {
        let (world, mut cache0) = booted(proto, 0);
        let w = world.clone();
        let forker = thread::spawn(move || w.fork(&mut cache0, 0));
        let stole = world.set_tid(nr, 1);
        let forked = forker.join().unwrap();
        assert!(
            stole.is_ok() || forked == Some(nr),
            "clone3(set_tid) refused number {nr}, which no pid held"
        );
        world.assert_no_early_reuse();
    });
}

/// `clone3(set_tid = 1)` after the pid at 1, from CPU 0's block, was freed, while number 0
/// of the same block is still held: stock gives the number back.
pub fn check_set_tid_freed(proto: Protocol) {
    model(move || {
        let (world, _) = booted(proto, 2);
        let w = world.clone();
        thread::spawn(move || w.free(1)).join().unwrap();
        assert_eq!(
            world.set_tid(1, 2),
            Ok(()),
            "clone3(set_tid) refused number 1, which no pid held"
        );
        world.assert_no_early_reuse();
    });
}

/// A lookup of number 0 on CPU 1 while CPU 0 forks and publishes its pid there.
pub fn check_lookup(proto: Protocol) {
    model(move || {
        let (world, mut cache0) = booted(proto, 0);
        let w = world.clone();
        let forker = thread::spawn(move || w.fork(&mut cache0, 0));
        world.lookup(0);
        forker.join().unwrap();
        world.assert_no_early_reuse();
    });
}

/// The pid at number 0 is freed on CPU 0 while number 1 stays held; CPU 1 looks 0 up, and
/// one that started after the free returned (a flag, release and acquire) must not find it.
pub fn check_free(proto: Protocol) {
    model(move || {
        let (world, _) = booted(proto, 2);
        let freed = Arc::new(AtomicBool::new(false));
        let (w, f) = (world.clone(), freed.clone());
        let exiting = thread::spawn(move || {
            w.free(0);
            f.store(true, Ordering::Release);
        });
        let after = freed.load(Ordering::Acquire);
        let found = world.lookup(0);
        exiting.join().unwrap();
        assert!(
            !after || found.is_none(),
            "a lookup after free_pid() returned found the freed pid"
        );
        world.assert_no_early_reuse();
    });
}

/// CPU 0 holds a block of numbers 0 and 1 and forks; numbers 2 and 3 are held by
/// long-lived pids; a fork on CPU 1, which has no block, must get the other free number.
pub fn check_exhaustion(proto: Protocol) {
    model(move || {
        let (world, mut cache0) = booted(proto, 0);
        assert_eq!(world.set_tid(2, 2), Ok(()));
        assert_eq!(world.set_tid(3, 3), Ok(()));
        let w = world.clone();
        let forker = thread::spawn(move || w.fork(&mut cache0, 0));
        let mut cache1 = Cache::default();
        let got = world.fork(&mut cache1, 1);
        let forked = forker.join().unwrap();
        // Two numbers are free for the two forks.
        assert!(
            got.is_some() && forked.is_some(),
            "alloc_pid() failed with a number free"
        );
        world.assert_no_early_reuse();
    });
}

/// `ns_last_pid` is written to `nr` (0 or 1) after CPU 0 forked 0 from its block: stock's
/// next fork gets `nr + 1`, the next number not in use.
pub fn check_last_pid(proto: Protocol, nr: usize) {
    model(move || {
        let (world, mut cache) = booted(proto, 1);
        let w = world.clone();
        thread::spawn(move || w.write_last_pid(nr)).join().unwrap();
        assert_eq!(
            world.fork(&mut cache, 1),
            Some(nr + 1),
            "a fork after writing ns_last_pid {nr} did not get the next number"
        );
        world.assert_no_early_reuse();
    });
}

/// CPU 0 forked 0 from its block and forks again, while CPU 1 writes `ns_last_pid` (a
/// flush) and frees the pid at 0: the block's last slot and its last pid go, and CPU 0 must
/// not claim from freed memory.
pub fn check_stale_block(proto: Protocol) {
    model(move || {
        let (world, mut cache0) = booted(proto, 1);
        let w = world.clone();
        let forker = thread::spawn(move || w.fork(&mut cache0, 1));
        world.write_last_pid(1);
        world.free(0);
        forker.join().unwrap();
        world.assert_no_early_reuse();
    });
}

/// CPU 0 holds a block of numbers 0 and 1 and forked 0 from it; CPU 1 forked 2 and 3 from
/// its own, so the cursor is at the end; the pids at 0 and 2 are freed. CPU 1 forks again,
/// and its reservation reaches the end while 1 waits in CPU 0's block, which CPU 0 may be
/// claiming; then CPU 1 forks once more. Stock would hand out 1 before it wrapped, and 0
/// before 2.
pub fn check_wrap(proto: Protocol) {
    model(move || {
        let (world, mut cache0) = booted(proto, 1);
        let mut cache1 = Cache::default();
        assert_eq!(world.fork(&mut cache1, 1), Some(2));
        assert_eq!(world.fork(&mut cache1, 2), Some(3));
        world.free(0);
        world.free(2);
        let w = world.clone();
        let cpu0 = thread::spawn(move || w.fork(&mut cache0, 3));
        let got1 = world.fork(&mut cache1, 4);
        let got0 = cpu0.join().unwrap();
        let again = world.fork(&mut cache1, 5);
        world.assert_no_early_reuse();
        assert!(
            got0.is_some() && got1.is_some() && again.is_some(),
            "alloc_pid() failed with a number free"
        );
    });
}

/// CPU 0 forked 0 and 1 from its block and both were freed, so its hold is the block's last
/// reference; CPU 0 forks again and releases the block while CPU 1 writes `ns_last_pid`,
/// whose kill walks the blocks under the lock.
pub fn check_release(proto: Protocol) {
    model(move || {
        let (world, mut cache0) = booted(proto, 2);
        world.free(0);
        world.free(1);
        let w = world.clone();
        let cpu0 = thread::spawn(move || w.fork(&mut cache0, 2));
        world.write_last_pid(3);
        assert!(
            cpu0.join().unwrap().is_some(),
            "alloc_pid() failed with a number free"
        );
        world.assert_no_early_reuse();
    });
}

/// CPU 0 forked 0 and 1 from its block; `ns_last_pid` is written to 2, so the cursor is at 3,
/// one number from the end; the pid at 0 is freed. Both CPUs fork: the first reservation takes
/// 3 and reaches the end. Stock hands out 3 before it wraps to 0, and a block that took 3 and
/// wrapped to 0 would keep 3 waiting past the wrap.
pub fn check_straddle(proto: Protocol) {
    model(move || {
        let (world, mut cache0) = booted(proto, 2);
        world.write_last_pid(2);
        world.free(0);
        let w = world.clone();
        let cpu1 = thread::spawn(move || w.fork(&mut Cache::default(), 2));
        let got0 = world.fork(&mut cache0, 3);
        let got1 = cpu1.join().unwrap();
        world.assert_no_early_reuse();
        assert!(
            got0.is_some() && got1.is_some(),
            "alloc_pid() failed with a number free"
        );
    });
}

/// CPU 0 forked 0 from its block and gives the block up with 1 still waiting (a flush, the
/// module's unload); the pid at 0 is freed. CPU 1 forks three times, while CPU 0 forks once.
/// Stock hands out 1, 2 and 3 before it wraps to 0.
pub fn check_give_up(proto: Protocol) {
    model(move || {
        let (world, mut cache0) = booted(proto, 1);
        world.give_up(&mut cache0);
        world.free(0);
        let w = world.clone();
        let cpu0 = thread::spawn(move || w.fork(&mut cache0, 1));
        let mut cache1 = Cache::default();
        let got1 = (2..5)
            .map(|p| world.fork(&mut cache1, p))
            .collect::<Vec<_>>();
        let got0 = cpu0.join().unwrap();
        world.assert_no_early_reuse();
        assert!(
            got0.is_some() && got1.iter().all(Option::is_some),
            "alloc_pid() failed with a number free"
        );
    });
}
