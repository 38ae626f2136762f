// SPDX-License-Identifier: GPL-2.0
//! A loom model of pid allocation from per-CPU blocks (issue 37's design, argued in
//! `Documentation/design.rst`, "Pid numbers from per-CPU blocks"; not yet in the series).
//!
//! The namespace's idr stays the map from number to pid. Under one `pidmap_lock`
//! acquisition a CPU reserves a *block*: the free numbers of the next aligned range from
//! the cyclic cursor. Their idr entries then point to the block, whose slots a fork claims
//! and publishes its pid in with atomic operations, without the lock. A free marks the
//! slot dead and drops the block's count of live numbers; the last one retires the block
//! under the lock, returning its numbers to the idr.
//!
//! Properties, each with the mutant that breaks it (tests/pid_alloc.rs):
//! - **one holder**: a number is never handed to two pids at once, even when
//!   `clone3(set_tid)` takes a number that waits in another CPU's block;
//! - **set_tid as stock**: `clone3(set_tid)` of a number no pid holds succeeds;
//! - **initialised**: a lookup that finds a pid sees it initialised;
//! - **gone when freed**: once a pid's free returns, a lookup of its number does not find it;
//! - **exhaustion as stock**: allocation fails only when every number is held by a pid;
//! - **next number**: after a write to `ns_last_pid`, a fork gets the next number.
//!
//! Not modelled: the RCU-deferred free of a retired block (blocks are never reused here)
//! and nested namespaces (each level would have blocks of its own).

use crate::{name_the_race, named_access};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// Pid numbers 0..NUMS, in ranges of `K`.
const NUMS: usize = 4;
const K: usize = 2;
const RANGES: usize = NUMS / K;
/// Block objects: a reservation takes a fresh one, as a kernel block is a new allocation.
const BLOCKS: usize = 3;
/// Pid objects.
const PIDS: usize = 6;

/// idr entries: free, reserved for a block, or the pid itself (the slow path).
const FREE: usize = 0;
const fn in_block(b: usize) -> usize {
    1 + b
}
const fn direct(p: usize) -> usize {
    100 + p
}

/// Block slots: reserved and unclaimed, claimed by a fork not yet published, dead (freed or
/// flushed), foreign (the number was not free at reservation), or the published pid.
const EMPTY: usize = 0;
const CLAIMED: usize = 1;
const DEAD: usize = 2;
const FOREIGN: usize = 3;
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
    /// A free marks its slot dead before it drops the block's live count.
    pub free_marks_dead: bool,
    /// An allocation that finds no number flushes every CPU's block.
    pub flush_on_exhaustion: bool,
    /// That flush also gives the numbers of dead slots back to the idr, before their block
    /// retires.
    pub reclaim_dead: bool,
    /// A write to `ns_last_pid` flushes every CPU's block.
    pub flush_on_last_pid: bool,
}

pub const CORRECT: Protocol = Protocol {
    claim_by_cas: true,
    set_tid_steals: true,
    publish_release: true,
    free_marks_dead: true,
    flush_on_exhaustion: true,
    reclaim_dead: true,
    flush_on_last_pid: true,
};

/// What runs against a fork on CPU 0, on CPU 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Racer {
    /// `clone3(set_tid)` of a number in the fork's block: 0, which the fork claims first,
    /// or 1, which it does not reach.
    SetTid(usize),
    /// A lookup of the number the fork gets.
    Lookup,
    /// A fork on a CPU without a block, with every other number held.
    Exhaustion,
}

struct Block {
    /// The range of numbers, set at reservation before any idr entry points here.
    range: AtomicUsize,
    slots: [AtomicUsize; K],
    /// Reserved numbers not yet dead.
    live: AtomicUsize,
}

/// Under `pidmap_lock`.
struct Locked {
    /// The cyclic cursor, in ranges.
    cursor: usize,
    /// The block currently reserved for each range, if any.
    reserved: [Option<usize>; RANGES],
    /// Block objects used so far.
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
            lock: Mutex::new(Locked {
                cursor: 0,
                reserved: [None; RANGES],
                used: 0,
            }),
            blocks: std::array::from_fn(|_| Block {
                range: AtomicUsize::new(0),
                slots: Default::default(),
                live: AtomicUsize::new(0),
            }),
            pids: std::array::from_fn(|_| UnsafeCell::new(0)),
            holders: Default::default(),
        }
    }

    fn hold(&self, nr: usize) {
        let before = self.holders[nr].fetch_add(1, Ordering::SeqCst);
        assert_eq!(before, 0, "number {nr} handed to two pids at once");
    }

    /// Reserves the next range from the cursor with a free number, under the lock.
    fn reserve(&self, locked: &mut Locked) -> Option<usize> {
        for step in 0..RANGES {
            let range = (locked.cursor + step) % RANGES;
            let free = (0..K).filter(|i| self.idr[range * K + i].load(Ordering::Relaxed) == FREE);
            if locked.reserved[range].is_some() || free.count() == 0 || locked.used == BLOCKS {
                continue;
            }
            let b = locked.used;
            locked.used += 1;
            let block = &self.blocks[b];
            block.range.store(range, Ordering::Relaxed);
            let mut live = 0;
            for i in 0..K {
                let entry = &self.idr[range * K + i];
                if entry.load(Ordering::Relaxed) == FREE {
                    block.slots[i].store(EMPTY, Ordering::Relaxed);
                    live += 1;
                } else {
                    block.slots[i].store(FOREIGN, Ordering::Relaxed);
                }
            }
            block.live.store(live, Ordering::Relaxed);
            for i in 0..K {
                if block.slots[i].load(Ordering::Relaxed) == EMPTY {
                    // Release: a lookup that finds the block sees its range and slots.
                    self.idr[range * K + i].store(in_block(b), Ordering::Release);
                }
            }
            locked.reserved[range] = Some(b);
            locked.cursor = (range + 1) % RANGES;
            return Some(b);
        }
        None
    }

    /// The last live number of block `b` died: its numbers go back to the idr.
    fn retire(&self, locked: &mut Locked, b: usize) {
        let range = self.blocks[b].range.load(Ordering::Relaxed);
        for i in 0..K {
            let entry = &self.idr[range * K + i];
            if entry.load(Ordering::Relaxed) == in_block(b) {
                entry.store(FREE, Ordering::Release);
            }
        }
        locked.reserved[range] = None;
    }

    /// Drops one live number of block `b`; the last retires it, taking the lock.
    fn drop_live(&self, b: usize, locked: Option<&mut Locked>) {
        if self.blocks[b].live.fetch_sub(1, Ordering::AcqRel) == 1 {
            match locked {
                Some(locked) => self.retire(locked, b),
                None => self.retire(&mut self.lock.lock().unwrap(), b),
            }
        }
    }

    /// Claims slot `i` of block `b`: the one step where a fork and `set_tid` can race.
    fn claim(&self, b: usize, i: usize) -> bool {
        let slot = &self.blocks[b].slots[i];
        if self.proto.claim_by_cas {
            slot.compare_exchange(EMPTY, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        } else {
            if slot.load(Ordering::Acquire) != EMPTY {
                return false;
            }
            slot.store(CLAIMED, Ordering::Relaxed);
            true
        }
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
    /// lock; on exhaustion, flush, reclaim, and take any free number directly.
    fn fork(&self, cache: &mut Cache, p: usize) -> Option<usize> {
        loop {
            if let Some(b) = cache.block {
                while cache.next < K {
                    let i = cache.next;
                    cache.next += 1;
                    if self.claim(b, i) {
                        let nr = self.blocks[b].range.load(Ordering::Relaxed) * K + i;
                        self.hold(nr);
                        self.publish(b, i, nr, p);
                        return Some(nr);
                    }
                }
                cache.block = None;
            }
            let mut locked = self.lock.lock().unwrap();
            if let Some(b) = self.reserve(&mut locked) {
                *cache = Cache {
                    block: Some(b),
                    next: 0,
                };
                continue;
            }
            if !self.proto.flush_on_exhaustion {
                return None;
            }
            self.flush(&mut locked, self.proto.reclaim_dead);
            return self.take_direct(&mut locked, p);
        }
    }

    /// The slow path, as stock: any free number, its entry the pid itself.
    fn take_direct(&self, _locked: &mut Locked, p: usize) -> Option<usize> {
        let nr = (0..NUMS).find(|&n| self.idr[n].load(Ordering::Relaxed) == FREE)?;
        self.hold(nr);
        // SAFETY: loom checks the access; nothing reads pid `p` before its entry is stored.
        self.pids[p].with_mut(|data| unsafe { *data = nr + 1 });
        self.idr[nr].store(direct(p), Ordering::Release);
        Some(nr)
    }

    /// Under the lock: every reserved block's unclaimed slots die, and with `reclaim` the
    /// numbers of dead slots go back to the idr before their block retires.
    fn flush(&self, locked: &mut Locked, reclaim: bool) {
        for range in 0..RANGES {
            let Some(b) = locked.reserved[range] else {
                continue;
            };
            for i in 0..K {
                let slot = &self.blocks[b].slots[i];
                if slot
                    .compare_exchange(EMPTY, DEAD, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    self.drop_live(b, Some(locked));
                }
                if locked.reserved[range].is_none() {
                    break;
                }
                if reclaim
                    && slot.load(Ordering::Acquire) == DEAD
                    && self.idr[range * K + i].load(Ordering::Relaxed) == in_block(b)
                {
                    self.idr[range * K + i].store(FREE, Ordering::Release);
                    slot.store(FOREIGN, Ordering::Relaxed);
                }
            }
        }
    }

    /// `clone3(set_tid = nr)`: under the lock, a free number, or one a block holds unclaimed.
    fn set_tid(&self, nr: usize, p: usize) -> Result<(), &'static str> {
        let mut locked = self.lock.lock().unwrap();
        let entry = self.idr[nr].load(Ordering::Relaxed);
        if entry == FREE {
            return self.take_direct(&mut locked, p).map(|_| ()).ok_or("EEXIST");
        }
        if entry >= direct(0) || !self.proto.set_tid_steals {
            return Err("EEXIST");
        }
        let b = entry - 1;
        let i = nr % K;
        if !self.claim(b, i) {
            return Err("EEXIST");
        }
        self.hold(nr);
        self.publish(b, i, nr, p);
        Ok(())
    }

    /// `free_pid()` of pid `p` at `nr`.
    fn free(&self, nr: usize) {
        self.holders[nr].fetch_sub(1, Ordering::SeqCst);
        let entry = self.idr[nr].load(Ordering::Acquire);
        if entry >= direct(0) {
            let _locked = self.lock.lock().unwrap();
            self.idr[nr].store(FREE, Ordering::Release);
            return;
        }
        let b = entry - 1;
        if self.proto.free_marks_dead {
            self.blocks[b].slots[nr % K].store(DEAD, Ordering::Release);
        }
        self.drop_live(b, None);
    }

    /// `find_pid_ns()`: the pid at `nr`, initialised, or none.
    fn lookup(&self, nr: usize) -> Option<usize> {
        let entry = self.idr[nr].load(Ordering::Acquire);
        let p = if entry >= direct(0) {
            entry - direct(0)
        } else if entry != FREE {
            let b = entry - 1;
            let slot = self.blocks[b].slots[nr % K].load(Ordering::Acquire);
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

    /// A write to `ns_last_pid`: the cursor moves to the range after `nr`.
    fn write_last_pid(&self, nr: usize) {
        let mut locked = self.lock.lock().unwrap();
        locked.cursor = (nr / K + 1) % RANGES;
        if self.proto.flush_on_last_pid {
            self.flush(&mut locked, false);
        }
    }
}

/// Checks `f` in every interleaving, a data race reported as the property it breaks.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::builder().check(f)));
    if let Err(panic) = result {
        std::panic::resume_unwind(name_the_race(panic));
    }
}

/// CPU 0 holds block 0 (numbers 0 and 1) and forks; CPU 1 runs `racer`.
pub fn check(proto: Protocol, racer: Racer) {
    model(move || {
        let world = Arc::new(World::new(proto));
        let mut cache0 = Cache::default();
        {
            let mut locked = world.lock.lock().unwrap();
            cache0.block = world.reserve(&mut locked);
        }
        if racer == Racer::Exhaustion {
            // Numbers 2 and 3 are held by long-lived pids.
            let mut locked = world.lock.lock().unwrap();
            world.take_direct(&mut locked, 2);
            world.take_direct(&mut locked, 3);
        }
        let w = world.clone();
        let forker = thread::spawn(move || w.fork(&mut cache0, 0));
        match racer {
            Racer::SetTid(nr) => {
                let stole = world.set_tid(nr, 1);
                let forked = forker.join().unwrap();
                assert!(
                    stole.is_ok() || forked == Some(nr),
                    "clone3(set_tid) refused number {nr}, which no pid held"
                );
            }
            Racer::Lookup => {
                let found = world.lookup(0);
                let forked = forker.join().unwrap();
                assert!(found.is_none() || forked == Some(0));
            }
            Racer::Exhaustion => {
                let mut cache1 = Cache::default();
                let got = world.fork(&mut cache1, 1);
                let forked = forker.join().unwrap();
                // Two numbers are free for the two forks.
                assert!(
                    got.is_some() && forked.is_some(),
                    "alloc_pid() failed with a number free"
                );
            }
        }
    });
}

/// A pid at number 0 is freed on CPU 0 while number 1 stays live; CPU 1 looks 0 up after
/// the free returned (a flag, release and acquire, orders the two).
pub fn check_free(proto: Protocol) {
    model(move || {
        let world = Arc::new(World::new(proto));
        let mut cache = Cache::default();
        {
            let mut locked = world.lock.lock().unwrap();
            cache.block = world.reserve(&mut locked);
        }
        assert_eq!(world.fork(&mut cache, 0), Some(0));
        assert_eq!(world.fork(&mut cache, 1), Some(1));
        let freed = Arc::new(AtomicUsize::new(0));
        let (w, f) = (world.clone(), freed.clone());
        let exiting = thread::spawn(move || {
            w.free(0);
            f.store(1, Ordering::Release);
        });
        let after = freed.load(Ordering::Acquire) == 1;
        let found = world.lookup(0);
        exiting.join().unwrap();
        assert!(
            !after || found.is_none(),
            "a lookup after free_pid() returned found the freed pid"
        );
    });
}

/// Exhaustion through a dead slot: number 0 is freed on CPU 0 while its block lives on
/// (number 1 is held), and 2 and 3 are held; a fork on CPU 1 that starts after the free
/// returned must get 0 back, as stock's would, and one that fails must succeed once the
/// free is done.
pub fn check_reclaim(proto: Protocol) {
    model(move || {
        let world = Arc::new(World::new(proto));
        let mut cache0 = Cache::default();
        {
            let mut locked = world.lock.lock().unwrap();
            cache0.block = world.reserve(&mut locked);
            world.take_direct(&mut locked, 2);
            world.take_direct(&mut locked, 3);
        }
        assert_eq!(world.fork(&mut cache0, 0), Some(0));
        assert_eq!(world.fork(&mut cache0, 1), Some(1));
        let freed = Arc::new(AtomicUsize::new(0));
        let (w, f) = (world.clone(), freed.clone());
        let exiting = thread::spawn(move || {
            w.free(0);
            f.store(1, Ordering::Release);
        });
        let after = freed.load(Ordering::Acquire) == 1;
        let mut cache1 = Cache::default();
        let got = world.fork(&mut cache1, 4);
        exiting.join().unwrap();
        let got = got.or_else(|| world.fork(&mut cache1, 5));
        assert!(
            got == Some(0) && (!after || world.lookup(0) == Some(4)),
            "alloc_pid() failed with a number free"
        );
    });
}

/// `ns_last_pid` is written to 1 while CPU 0 still holds block 0 with number 1 unclaimed:
/// stock's next fork gets 2.
pub fn check_last_pid(proto: Protocol) {
    model(move || {
        let world = Arc::new(World::new(proto));
        let mut cache = Cache::default();
        {
            let mut locked = world.lock.lock().unwrap();
            cache.block = world.reserve(&mut locked);
        }
        assert_eq!(world.fork(&mut cache, 0), Some(0));
        let w = world.clone();
        thread::spawn(move || w.write_last_pid(1)).join().unwrap();
        assert_eq!(
            world.fork(&mut cache, 1),
            Some(2),
            "a fork after writing ns_last_pid did not get the next number"
        );
    });
}
