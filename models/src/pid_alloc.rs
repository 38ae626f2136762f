// SPDX-License-Identifier: GPL-2.0
//! A loom model of pid allocation from per-CPU blocks (issue 37's design, argued in
//! `Documentation/design.rst`, "Pid numbers from per-CPU blocks"; not yet in the series).
//!
//! The namespace's idr stays the map from number to pid, and its cyclic cursor stays in
//! numbers. Under one `pidmap_lock` acquisition a CPU reserves a *block*: the next free
//! numbers the cursor would hand out, whose idr entries then name the block and a slot. A
//! fork claims a slot with compare-and-exchange and publishes its pid with a release store,
//! without the lock. A free returns its number to the idr under the lock, as stock does (the
//! batched release amortises that). A block's memory lives while its CPU still draws from
//! it or any of its slots is neither dead nor freed.
//!
//! Properties, each with the mutant that breaks it (tests/pid_alloc.rs):
//! - **one holder**: a number is never handed to two pids at once, even when
//!   `clone3(set_tid)` takes a number that waits in another CPU's block;
//! - **set_tid as stock**: `clone3(set_tid)` of a number no pid holds succeeds;
//! - **initialised**: a lookup that finds a pid sees it initialised;
//! - **gone when freed**: once a pid's free returns, a lookup of its number does not find it;
//! - **exhaustion as stock**: allocation fails only when every number is held by a pid;
//! - **next number**: after a write to `ns_last_pid`, a fork gets the next number;
//! - **no use after free**: a fork never claims a slot of a block that was freed.
//!
//! Not modelled: RCU (a lookup may read a freed block, which the kernel frees with
//! `kfree_rcu()`; blocks are never reused here), the batched release queues, `pid_max`
//! writes and nested namespaces.

use crate::{name_the_race, named_access};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// Pid numbers 0..NUMS; a block holds up to K of them.
const NUMS: usize = 4;
const K: usize = 2;
/// Block objects: a reservation takes a fresh one, as a kernel block is a new allocation.
const BLOCKS: usize = 3;
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
    /// An allocation that finds no number flushes every CPU's block.
    pub flush_on_exhaustion: bool,
    /// A write to `ns_last_pid` flushes every CPU's block.
    pub flush_on_last_pid: bool,
    /// A CPU's block counts the CPU's hold, so it outlives a flush while its CPU uses it.
    pub cache_holds_block: bool,
}

pub const CORRECT: Protocol = Protocol {
    claim_by_cas: true,
    set_tid_steals: true,
    publish_release: true,
    free_clears_entry: true,
    flush_on_exhaustion: true,
    flush_on_last_pid: true,
    cache_holds_block: true,
};

struct Block {
    /// Its numbers, set at reservation before any idr entry names the block.
    nrs: [AtomicUsize; K],
    slots: [AtomicUsize; K],
    /// The CPU's hold plus the slots neither dead nor freed.
    refs: AtomicUsize,
    /// Ghost: the block's memory was freed.
    freed: AtomicBool,
}

/// Under `pidmap_lock`.
struct Locked {
    /// The cyclic cursor: the next number to try.
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
                freed: AtomicBool::new(false),
            }),
            pids: std::array::from_fn(|_| UnsafeCell::new(0)),
            holders: Default::default(),
        }
    }

    fn hold(&self, nr: usize) {
        let before = self.holders[nr].fetch_add(1, Ordering::SeqCst);
        assert_eq!(before, 0, "number {nr} handed to two pids at once");
    }

    /// Under the lock: the next free numbers from the cursor, up to K, as the cyclic
    /// allocator would hand them out, in a fresh block held by the calling CPU.
    fn reserve(&self, locked: &mut Locked) -> Option<usize> {
        if locked.used == BLOCKS {
            return None;
        }
        let b = locked.used;
        let block = &self.blocks[b];
        let mut n = 0;
        for step in 0..NUMS {
            let nr = (locked.cursor + step) % NUMS;
            if n == K || self.idr[nr].load(Ordering::Relaxed) != FREE {
                continue;
            }
            block.nrs[n].store(nr, Ordering::Relaxed);
            block.slots[n].store(EMPTY, Ordering::Relaxed);
            n += 1;
        }
        if n == 0 {
            return None;
        }
        locked.used += 1;
        let hold = usize::from(self.proto.cache_holds_block);
        block.refs.store(n + hold, Ordering::Relaxed);
        let mut last = 0;
        for i in 0..n {
            last = block.nrs[i].load(Ordering::Relaxed);
            // Release: a lookup that finds the slot sees it initialised.
            self.idr[last].store(in_block(b, i), Ordering::Release);
        }
        locked.cursor = (last + 1) % NUMS;
        Some(b)
    }

    /// Drops one reference on block `b`; the last frees it (`kfree_rcu()` in the kernel).
    fn put(&self, b: usize) {
        if self.blocks[b].refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.blocks[b].freed.store(true, Ordering::SeqCst);
        }
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
                        self.publish(b, i, nr, p);
                        return Some(nr);
                    }
                }
                cache.block = None;
                if self.proto.cache_holds_block {
                    self.put(b);
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
            if !self.proto.flush_on_exhaustion {
                return None;
            }
            self.flush(&mut locked);
            return self.take_direct(&mut locked, p);
        }
    }

    /// The slow path, as stock: any free number, its entry the pid itself.
    fn take_direct(&self, _locked: &mut Locked, p: usize) -> Option<usize> {
        let nr = (0..NUMS).find(|&n| self.idr[n].load(Ordering::Relaxed) == FREE)?;
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

    /// Under the lock: every live block's unclaimed slots die, their numbers back to the idr.
    fn flush(&self, locked: &mut Locked) {
        for b in 0..locked.used {
            let block = &self.blocks[b];
            if block.freed.load(Ordering::SeqCst) {
                continue;
            }
            for i in 0..K {
                if block.slots[i]
                    .compare_exchange(EMPTY, DEAD, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    let nr = block.nrs[i].load(Ordering::Relaxed);
                    self.idr[nr].store(FREE, Ordering::Release);
                    self.put(b);
                }
            }
        }
    }

    /// `clone3(set_tid = nr)`: under the lock, a free number, or one a block holds unclaimed.
    fn set_tid(&self, nr: usize, p: usize) -> Result<(), &'static str> {
        let _locked = self.lock.lock().unwrap();
        let entry = self.idr[nr].load(Ordering::Relaxed);
        if entry == FREE {
            self.place_direct(nr, p);
            return Ok(());
        }
        if entry >= direct(0) || !self.proto.set_tid_steals {
            return Err("EEXIST");
        }
        let (b, i) = ((entry - 1) / K, (entry - 1) % K);
        if !self.claim(b, i) {
            return Err("EEXIST");
        }
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
        let in_a_block = entry < direct(0);
        if !in_a_block || self.proto.free_clears_entry {
            self.idr[nr].store(FREE, Ordering::Release);
        }
        if in_a_block {
            self.put((entry - 1) / K);
        }
    }

    /// `find_pid_ns()`: the pid at `nr`, initialised, or none.
    fn lookup(&self, nr: usize) -> Option<usize> {
        let entry = self.idr[nr].load(Ordering::Acquire);
        let p = if entry >= direct(0) {
            entry - direct(0)
        } else if entry != FREE {
            let (b, i) = ((entry - 1) / K, (entry - 1) % K);
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
        locked.cursor = (nr + 1) % NUMS;
        if self.proto.flush_on_last_pid {
            self.flush(&mut locked);
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
    });
}
