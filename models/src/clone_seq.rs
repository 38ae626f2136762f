// SPDX-License-Identifier: GPL-2.0
//! A loom model of the lockless clone-time css_set reads against their writers:
//! migration, `cgroup.kill`, and the last put of a css_set with its RCU-deferred free.
//! Three readers: the seqcount protocol (v1/v2, the `seqcount` built-in and the module's
//! `clone_read.rs`), the pinned read of the patch for merging, which relies on
//! `cgroup_threadgroup_rwsem` instead, and stock's read under `css_set_lock`.
//!
//! The model keeps the kernel's orderings: writers hold `css_set_lock` and bracket their
//! stores with `write_seqcount_begin()`/`_end()` (counter increment plus `smp_wmb()`);
//! the reader does `read_seqcount_begin()` (load plus `smp_rmb()`), its loads,
//! `refcount_inc_not_zero()`, and `read_seqcount_retry()` (`smp_rmb()` plus load),
//! all under `rcu_read_lock()`, and falls back to the lock after `MAX_TRIES`.
//!
//! The locks around the read are 7.3's, as locks: `cgroup_threadgroup_change_begin()`
//! takes the global `cgroup_threadgroup_rwsem` for reading and, if
//! `cgroup_enable_per_threadgroup_rwsem` (`favordynmods`) is set, the forking process's
//! own rwsem too; both stay held until after `cgroup_post_fork()`. A move by pid
//! (`cgroup_procs_write_start()`, under `cgroup_mutex`) reads the flag and takes the
//! moved process's rwsem or the global one for writing. `cgroup_favor_dynmods()` sets
//! the flag under the global rwsem's write side. `CLONE_INTO_CGROUP` takes
//! `cgroup_mutex` before the rwsem and holds it as long; `__cgroup_kill()` holds
//! `cgroup_mutex` from its section to the end of its walk. Left out: 7.3's lock of a new
//! process's own rwsem in fork (`cgroup_fork_child_lock()`), which guards the child, not
//! the parent's read, and a thread moving itself (pid 0 written to `cgroup.threads`, which
//! takes no rwsem: that thread is not forking).
//!
//! Ghost state (`migrations`, and whether the kill's walk had finished) records what the
//! writers did, for the properties only; the protocol never reads it, and its atomics are
//! `Relaxed`, so it adds no synchronisation the kernel lacks (a barrier or lock mutant
//! stays visible).
//!
//! Loads of `task->cgroups` are `Relaxed`: the kernel's `rcu_dereference()` orders only the
//! loads that depend on the pointer, and the model's css_set contents never change while
//! they can be read. `rcu_read_unlock()` is a release and no barrier for later loads. The
//! only `SeqCst` is the grace period's full barrier and its counterpart at
//! `rcu_read_lock()`, which give RCU's guarantee that a reader starting after a grace
//! period began sees what was stored before it.
//!
//! The `favordynmods` flag, `cgroup_enable_per_threadgroup_rwsem`, is a data race in 7.3:
//! the v2 switch-on (`apply_cgroup_root_flags()`, from `cgroup_get_tree()` or
//! `cgroup_reconfigure()`, calling `cgroup_favor_dynmods()`) writes it plainly under the
//! global rwsem's write side and without `cgroup_mutex`, and a move by pid
//! (`cgroup_procs_write_start()`) reads it plainly under `cgroup_mutex` alone. KCSAN may
//! report it. A fork reads it under the global rwsem's read side, ordered with the write.
//! [`Protocol::favordynmods_marked`] off models the accesses as 7.3 has them, plain, and
//! loom reports the race; on, they are `Relaxed` (`READ_ONCE()`/`WRITE_ONCE()`), the race
//! taken as benign, and the properties are checked with either value the move may read:
//! it keeps the move out of the fork with both. That argument holds only for a read the
//! compiler makes once and whole, which is what `READ_ONCE()` would guarantee upstream.
//!
//! `cgroup.kill` is checked by its outcome: a fork that overlaps a kill either fails or
//! leaves a child that is killed. The walk signals every member, the forking parent
//! included if it is one, and `copy_process()` fails a fork whose parent has a fatal signal
//! pending at its check between the read and `cgroup_post_fork()`. Two kills are modelled:
//! [`Writer::KillThenWalk`] is 7.3's `__cgroup_kill()`, which walks after the write
//! section; [`Writer::Kill`] walks inside it, a kernel that would close the window the
//! walk-after order leaves (see the tests). A `CLONE_INTO_CGROUP` child of a parent outside
//! the killed cgroup may survive a kill only if the kill's walk happens before the fork's
//! read of the target's `kill_seq`.

use crate::{name_the_race, named_access};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex, RwLock, RwLockReadGuard};
use loom::thread;
use std::cell::{Cell, RefCell};

std::thread_local! {
    /// The steps of the execution being checked, so that a failed property comes with
    /// the interleaving that broke it ([`last_trace`]). Kept outside loom's view: loom
    /// runs a model's threads one at a time on the test's thread, and this orders
    /// nothing. One per test thread, so tests may run in parallel.
    static TRACE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

loom::thread_local! {
    /// Which model thread records a step.
    static WHO: Cell<&'static str> = Cell::new("main");
}

fn step(what: String) {
    let who = WHO.with(|w| w.get());
    TRACE.with(|t| t.borrow_mut().push(format!("{who:>6}: {what}")));
}

/// The steps of the last execution loom ran on this thread: after a failed check, the
/// failing one.
pub fn last_trace() -> Vec<String> {
    TRACE.with(|t| t.borrow().clone())
}

/// Lockless attempts before the reader takes `css_set_lock`: `CGROUP_CLONE_MAX_TRIES` and the
/// module's `MAX_TRIES`.
pub const MAX_TRIES: usize = 4;

/// A freed css_set's memory reads as this, so a read after the free is caught.
const POISON: usize = usize::MAX;

/// What the model may get wrong on purpose: each field off is one mutant.
#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// `__cgroup_kill()` bumps the counter around `kill_seq++`.
    pub kill_bump: bool,
    /// `css_set_move_task()` bumps the counter for a move between two css_sets.
    pub migrate_bump: bool,
    /// The reader pins the css_set with `refcount_inc_not_zero()`, not a plain increment.
    pub inc_not_zero: bool,
    /// `write_seqcount_begin()`/`_end()` order the counter and the data (`smp_wmb()`).
    pub writer_wmb: bool,
    /// `read_seqcount_begin()`/`_retry()` order the counter and the data (`smp_rmb()`).
    pub reader_rmb: bool,
    /// `cgroup_favor_dynmods()` sets the flag under the global rwsem's write side, so
    /// no fork is between its begin and end when the mode changes.
    pub switch_on_excludes_forks: bool,
    /// A move in the per-threadgroup mode write-locks the moved process's rwsem (off:
    /// the other process's).
    pub move_locks_its_threadgroup: bool,
    /// `__cgroup_kill()` holds `cgroup_mutex` from its section to the end of its walk
    /// (off: for the section only).
    pub kill_mutex_over_walk: bool,
    /// `cgroup_enable_per_threadgroup_rwsem` is read and written marked
    /// (`READ_ONCE()`/`WRITE_ONCE()`, `Relaxed` here), so a move's read of it racing the
    /// switch-on's write is taken as benign and the other properties are checked with
    /// either value that read may return. Off: plain accesses, as 7.3 has them, and loom
    /// reports that race ([`FAVORDYNMODS_RACE`]).
    pub favordynmods_marked: bool,
    /// A `CLONE_INTO_CGROUP` fork takes `cgroup_mutex` before the threadgroup rwsems
    /// (off: not at all).
    pub into_takes_mutex: bool,
    /// A `CLONE_INTO_CGROUP` fork that takes `cgroup_mutex` holds it until after
    /// `cgroup_post_fork()` (off: until its read of the target's `kill_seq`).
    pub into_mutex_to_post_fork: bool,
}

/// The protocol as forkscale and 7.3 implement it, but for the `favordynmods` flag's
/// accesses, which 7.3 leaves plain ([`Protocol::favordynmods_marked`]).
pub const CORRECT: Protocol = Protocol {
    kill_bump: true,
    migrate_bump: true,
    inc_not_zero: true,
    writer_wmb: true,
    reader_rmb: true,
    switch_on_excludes_forks: true,
    move_locks_its_threadgroup: true,
    kill_mutex_over_walk: true,
    favordynmods_marked: true,
    into_takes_mutex: true,
    into_mutex_to_post_fork: true,
};

/// How `cgroup_css_set_fork()` reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reader {
    /// The seqcount protocol of v1/v2 and the module: validated, `inc_not_zero`, fallback.
    Seqcount,
    /// The patch for merging: no counter and no lock. Current's css_set with a plain
    /// increment and `READ_ONCE(kill_seq)`, relying on the threadgroup rwsem alone.
    Pinned,
    /// Stock: under `css_set_lock`.
    Locked,
}

/// The threadgroup rwsem mode of a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Env {
    /// `favordynmods` off: fork holds the global rwsem for reading, a move takes it for
    /// writing, so no move overlaps a fork.
    GlobalRwsem,
    /// `favordynmods` on from the start: fork also holds its own process's rwsem for
    /// reading, and a move takes only the moved process's for writing, so another
    /// process's move overlaps the fork.
    PerThreadgroupRwsem,
    /// `favordynmods` off at the start and switched on by a third thread.
    SwitchOn,
    /// A kernel where fork takes no rwsem (moves lock as with `favordynmods` off), so the
    /// forking task itself may move during the read.
    NoRwsem,
}

/// The concurrent writer of a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Writer {
    /// `cgroup.kill` of cgroup 0 (css_set A's) with the walk inside the write section.
    Kill,
    /// `cgroup.kill` as 7.3 does it: `kill_seq++` in the write section, then the walk over
    /// the cgroup's tasks, under `css_set_lock` again.
    KillThenWalk,
    /// Another process, sharing the forking task's css_set A, moves to B and exits.
    MoveOtherAndExit,
    /// The forking task moves from A to B, putting A's last reference.
    MoveForker,
}

impl Writer {
    fn kills(self) -> bool {
        matches!(self, Writer::Kill | Writer::KillThenWalk)
    }
}

const A: usize = 0;
const B: usize = 1;

/// The tasks: the forking one and one of another process.
const FORKER: usize = 0;
const OTHER: usize = 1;

fn name(cset: usize) -> &'static str {
    if cset == A {
        "A"
    } else {
        "B"
    }
}

fn task_name(task: usize) -> &'static str {
    if task == FORKER {
        "forking task"
    } else {
        "other task"
    }
}

/// What loom's report of an access to the `favordynmods` flag unordered with another is
/// named. Only a move by pid reads the flag without a lock the switch-on holds.
pub const FAVORDYNMODS_RACE: &str =
    "a data race on favordynmods: a plain read unordered with the switch-on's plain write";

/// What loom's report of a read of a css_set unordered with its free is named, by css_set.
pub const READ_AFTER_FREE: [&str; 2] = [
    "use after free of css_set A: a read unordered with its free",
    "use after free of css_set B: a read unordered with its free",
];

/// What loom's report of the free of a css_set unordered with another access is named: that
/// access is a read (a use after free) or another free.
pub const UNORDERED_FREE: [&str; 2] = [
    "use after free or double free of css_set A: its free unordered with another access",
    "use after free or double free of css_set B: its free unordered with another access",
];

struct CssSet {
    refs: AtomicUsize,
    /// The css_set's default-hierarchy cgroup; POISON once freed.
    dfl_cgrp: UnsafeCell<usize>,
}

struct World {
    proto: Protocol,
    env: Env,
    css_set_lock: Mutex<()>,
    cgroup_mutex: Mutex<()>,
    /// `cgroup_threadgroup_rwsem`.
    threadgroup_rwsem: RwLock<()>,
    /// `signal->cgroup_threadgroup_rwsem` of the forking and of the other process.
    process_rwsem: [RwLock<()>; 2],
    /// `cgroup_enable_per_threadgroup_rwsem`: `favordynmods`, false to true only; marked
    /// or plain ([`Protocol::favordynmods_marked`]), the other one unused.
    favordynmods: AtomicBool,
    favordynmods_plain: UnsafeCell<bool>,
    seq: AtomicUsize,
    csets: [CssSet; 2],
    kill_seq: [AtomicUsize; 2],
    /// `task->cgroups` of the forking task and of the other task.
    cgroups: [AtomicUsize; 2],
    /// Readers inside `rcu_read_lock()`; a deferred free waits for zero.
    rcu_readers: AtomicUsize,
    /// The child: the css_set it was linked into (`usize::MAX`: not yet), and killed.
    child_cset: AtomicUsize,
    child_killed: AtomicBool,
    /// The forking parent has a fatal signal pending (written under `css_set_lock` by the
    /// walk, read by the fork's check; the kernel's siglock is modelled by that lock).
    parent_killed: AtomicBool,
    /// Ghost: moves of the forking task.
    migrations: AtomicUsize,
    /// Ghost: the kill's walk has finished. A loom atomic, so that loom sees the walk and
    /// a `CLONE_INTO_CGROUP` fork's read of it as dependent and runs them in both orders;
    /// `Relaxed`, so that it orders nothing: the read sees the walk for certain only if the
    /// walk happens before it, which is what the property asks.
    walked: AtomicBool,
}

/// What the reader returned, with the ghost values the properties need.
struct Snapshot {
    cset: usize,
    kill_seq: usize,
    lockless: bool,
    migrations_before: usize,
    migrations_after: usize,
    attempts: usize,
    /// `CLONE_INTO_CGROUP`: the kill's walk had finished when the fork read the
    /// target's `kill_seq`.
    walked: bool,
}

/// The threadgroup rwsems a fork holds from `cgroup_threadgroup_change_begin()` to its
/// end: dropped in field order, the process's before the global one, as the kernel does.
/// The kernel's end reads the flag again; releasing what begin took is the same where the
/// flag changes only under the global rwsem's write side, which the switch-on mutant
/// breaks (in the kernel it would also unbalance the process's rwsem).
struct ThreadgroupRead<'a> {
    _process: Option<RwLockReadGuard<'a, ()>>,
    _global: Option<RwLockReadGuard<'a, ()>>,
}

impl World {
    /// Css_set A is cgroup 0's, B cgroup 1's. The forking task starts in A, or in B when
    /// it clones into cgroup 0; the other task starts in A if it moves, else in B. Each
    /// task holds a reference on its css_set; B has one more, of the cgroup's setup, and
    /// A one of its own if no task starts there (the target cgroup's).
    fn new(proto: Protocol, env: Env, writer: Writer, into: bool) -> Self {
        let forker = if into { B } else { A };
        let other = if writer == Writer::MoveOtherAndExit {
            A
        } else {
            B
        };
        let in_a = [forker, other].iter().filter(|&&c| c == A).count();
        World {
            proto,
            env,
            css_set_lock: Mutex::new(()),
            cgroup_mutex: Mutex::new(()),
            threadgroup_rwsem: RwLock::new(()),
            process_rwsem: [RwLock::new(()), RwLock::new(())],
            favordynmods: AtomicBool::new(env == Env::PerThreadgroupRwsem),
            favordynmods_plain: UnsafeCell::new(env == Env::PerThreadgroupRwsem),
            seq: AtomicUsize::new(0),
            csets: [
                CssSet {
                    refs: AtomicUsize::new(in_a.max(1)),
                    dfl_cgrp: UnsafeCell::new(0),
                },
                CssSet {
                    refs: AtomicUsize::new(2 - in_a + 1),
                    dfl_cgrp: UnsafeCell::new(1),
                },
            ],
            kill_seq: [AtomicUsize::new(0), AtomicUsize::new(0)],
            cgroups: [AtomicUsize::new(forker), AtomicUsize::new(other)],
            rcu_readers: AtomicUsize::new(0),
            child_cset: AtomicUsize::new(usize::MAX),
            child_killed: AtomicBool::new(false),
            parent_killed: AtomicBool::new(false),
            migrations: AtomicUsize::new(0),
            walked: AtomicBool::new(false),
        }
    }

    /// Reads the `favordynmods` flag, marked or plainly.
    fn read_favordynmods(&self) -> bool {
        if self.proto.favordynmods_marked {
            return self.favordynmods.load(Ordering::Relaxed);
        }
        named_access(FAVORDYNMODS_RACE, || {
            // SAFETY: loom checks that no write races with this read.
            self.favordynmods_plain.with(|p| unsafe { *p })
        })
    }

    /// Sets the `favordynmods` flag, marked or plainly.
    fn write_favordynmods(&self) {
        if self.proto.favordynmods_marked {
            self.favordynmods.store(true, Ordering::Relaxed);
            return;
        }
        named_access(FAVORDYNMODS_RACE, || {
            // SAFETY: loom checks that no access races with this one.
            self.favordynmods_plain.with_mut(|p| unsafe { *p = true })
        })
    }

    fn write_begin(&self, bump: bool) {
        if bump {
            self.seq.fetch_add(1, Ordering::Relaxed);
            if self.proto.writer_wmb {
                fence(Ordering::Release);
            }
        }
    }

    fn write_end(&self, bump: bool) {
        if bump {
            if self.proto.writer_wmb {
                fence(Ordering::Release);
            }
            self.seq.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `smp_rmb()` of the read side, unless the mutant drops it.
    fn read_barrier(&self) {
        if self.proto.reader_rmb {
            fence(Ordering::Acquire);
        }
    }

    /// Dereference a css_set; a freed one is a use after free.
    fn dfl_cgrp(&self, cset: usize) -> usize {
        let cgrp = named_access(READ_AFTER_FREE[cset], || {
            // SAFETY: loom checks that no write races with this read.
            self.csets[cset].dfl_cgrp.with(|p| unsafe { *p })
        });
        assert_ne!(
            cgrp,
            POISON,
            "use after free of css_set {}: a read of its freed memory",
            name(cset)
        );
        cgrp
    }

    /// RCU, reduced to what the read side needs: a grace period (below, in `put`) waits
    /// for every reader that has not released its section, and its full barrier pairs
    /// with the one here, so a reader that starts after the grace period began sees every
    /// store made before it.
    fn rcu_read_lock(&self) {
        self.rcu_readers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    /// Orders the section's accesses before a grace period that sees it end, and nothing
    /// else: the kernel's `rcu_read_unlock()` is no barrier for the reader's later loads.
    fn rcu_read_unlock(&self) {
        self.rcu_readers.fetch_sub(1, Ordering::Release);
    }

    /// `put_css_set()`: the last put frees after a grace period (`kfree_rcu`).
    fn put(&self, cset: usize) {
        let old = self.csets[cset].refs.fetch_sub(1, Ordering::Release);
        step(format!(
            "put css_set {}: refs {old} -> {}",
            name(cset),
            old.wrapping_sub(1)
        ));
        assert_ne!(old, 0, "css_set {} put below zero", name(cset));
        if old == 1 {
            fence(Ordering::SeqCst);
            while self.rcu_readers.load(Ordering::Acquire) != 0 {
                thread::yield_now();
            }
            step(format!("grace period over: css_set {} freed", name(cset)));
            let freed_before = named_access(UNORDERED_FREE[cset], || {
                self.csets[cset].dfl_cgrp.with_mut(|p| {
                    // SAFETY: loom checks that no access races with this one.
                    let cgrp = unsafe { &mut *p };
                    std::mem::replace(cgrp, POISON) == POISON
                })
            });
            assert!(!freed_before, "css_set {} freed twice", name(cset));
        }
    }

    /// `refcount_inc_not_zero()`: a load, then a compare-and-exchange loop. Loom compares
    /// the exchange only with the last access before it, the load (tokio-rs/loom#166), but
    /// every other access to a css_set's count is a read-modify-write, which loom compares
    /// with the load itself; with the load replaced by a guess, every test kept its verdict.
    fn inc_not_zero(&self, cset: usize) -> bool {
        let refs = &self.csets[cset].refs;
        let mut n = refs.load(Ordering::Relaxed);
        loop {
            if n == 0 {
                return false;
            }
            match refs.compare_exchange(n, n + 1, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => n = now,
            }
        }
    }

    /// `cgroup_threadgroup_change_begin(current)`: the global rwsem for reading, then, in
    /// the per-threadgroup mode, the forking process's own. Nothing where fork takes no
    /// rwsem.
    fn threadgroup_change_begin(&self) -> ThreadgroupRead<'_> {
        if self.env == Env::NoRwsem {
            return ThreadgroupRead {
                _process: None,
                _global: None,
            };
        }
        let global = self.threadgroup_rwsem.read().unwrap();
        // Stable while the global read is held: the switch-on writes it under the
        // write side.
        let per_threadgroup = self.read_favordynmods();
        let process = per_threadgroup.then(|| self.process_rwsem[FORKER].read().unwrap());
        step(format!(
            "threadgroup_change_begin(): global rwsem{}",
            if per_threadgroup {
                " and own process's"
            } else {
                " only, favordynmods off"
            }
        ));
        ThreadgroupRead {
            _process: process,
            _global: Some(global),
        }
    }

    /// `cgroup_css_set_fork()`'s read: the forking task's css_set, pinned, and the
    /// `kill_seq` of its cgroup.
    fn read(&self) -> Snapshot {
        for attempt in 1..=MAX_TRIES {
            self.rcu_read_lock();
            let seq = self.seq.load(Ordering::Relaxed);
            self.read_barrier();
            if seq & 1 != 0 {
                step(format!("seqcount read {attempt}: seq {seq} odd, retry"));
                self.rcu_read_unlock();
                continue;
            }
            let migrations_before = self.migrations.load(Ordering::Relaxed);
            let cset = self.cgroups[FORKER].load(Ordering::Relaxed);
            step(format!(
                "seqcount read {attempt}: seq {seq}, current's css_set {}",
                name(cset)
            ));
            let kill_seq = self.kill_seq[self.dfl_cgrp(cset)].load(Ordering::Relaxed);
            let pinned = if self.proto.inc_not_zero {
                self.inc_not_zero(cset)
            } else {
                self.csets[cset].refs.fetch_add(1, Ordering::Relaxed);
                true
            };
            step(format!("kill_seq {kill_seq}, pinned: {pinned}"));
            self.rcu_read_unlock();
            if !pinned {
                continue;
            }
            // Ghost, read inside the window: a move seen here must fail the retry below.
            let migrations_after = self.migrations.load(Ordering::Relaxed);
            self.read_barrier();
            if self.seq.load(Ordering::Relaxed) != seq {
                step("seq changed: retry".to_string());
                self.put(cset);
                continue;
            }
            return Snapshot {
                cset,
                kill_seq,
                lockless: true,
                migrations_before,
                migrations_after,
                attempts: attempt,
                walked: false,
            };
        }
        let _guard = self.css_set_lock.lock().unwrap();
        let cset = self.cgroups[FORKER].load(Ordering::Relaxed);
        let kill_seq = self.kill_seq[self.dfl_cgrp(cset)].load(Ordering::Relaxed);
        self.csets[cset].refs.fetch_add(1, Ordering::Relaxed);
        step(format!(
            "fallback under css_set_lock: css_set {}, kill_seq {kill_seq}",
            name(cset)
        ));
        let migrations = self.migrations.load(Ordering::Relaxed);
        Snapshot {
            cset,
            kill_seq,
            lockless: false,
            migrations_before: migrations,
            migrations_after: migrations,
            attempts: MAX_TRIES + 1,
            walked: false,
        }
    }

    /// The pinned read: one attempt, no counter, no lock; the forking task's own
    /// reference is what keeps the css_set alive, if nothing can move the task.
    fn read_pinned(&self) -> Snapshot {
        self.rcu_read_lock();
        let migrations_before = self.migrations.load(Ordering::Relaxed);
        let cset = self.cgroups[FORKER].load(Ordering::Relaxed);
        step(format!("pinned read: current's css_set {}", name(cset)));
        let kill_seq = self.kill_seq[self.dfl_cgrp(cset)].load(Ordering::Relaxed);
        let refs = self.csets[cset].refs.fetch_add(1, Ordering::Relaxed);
        step(format!(
            "kill_seq {kill_seq}, get: refs {refs} -> {}",
            refs + 1
        ));
        let migrations_after = self.migrations.load(Ordering::Relaxed);
        self.rcu_read_unlock();
        Snapshot {
            cset,
            kill_seq,
            lockless: true,
            migrations_before,
            migrations_after,
            attempts: 1,
            walked: false,
        }
    }

    /// Stock's read, under `css_set_lock`.
    fn read_locked(&self) -> Snapshot {
        let _guard = self.css_set_lock.lock().unwrap();
        let cset = self.cgroups[FORKER].load(Ordering::Relaxed);
        let kill_seq = self.kill_seq[self.dfl_cgrp(cset)].load(Ordering::Relaxed);
        self.csets[cset].refs.fetch_add(1, Ordering::Relaxed);
        step(format!(
            "locked read: css_set {}, kill_seq {kill_seq}",
            name(cset)
        ));
        let migrations = self.migrations.load(Ordering::Relaxed);
        Snapshot {
            cset,
            kill_seq,
            lockless: false,
            migrations_before: migrations,
            migrations_after: migrations,
            attempts: 1,
            walked: false,
        }
    }

    /// `CLONE_INTO_CGROUP` after the read, `cgroup_mutex` held: the child's css_set is
    /// the target cgroup's (A: `find_css_set()` takes a reference), its `kill_seq` the
    /// target's, read under `cgroup_mutex` alone, and current's css_set is put.
    fn clone_into(&self, current: Snapshot) -> Snapshot {
        self.csets[A].refs.fetch_add(1, Ordering::Relaxed);
        let kill_seq = self.kill_seq[0].load(Ordering::Relaxed);
        let walked = self.walked.load(Ordering::Relaxed);
        step(format!(
            "CLONE_INTO_CGROUP: child's css_set A, target's kill_seq {kill_seq}"
        ));
        self.put(current.cset);
        Snapshot {
            cset: A,
            kill_seq,
            walked,
            ..current
        }
    }

    /// `__cgroup_kill()` of cgroup 0 with the walk inside the write section.
    fn kill(&self) {
        let _mutex = self.cgroup_mutex.lock().unwrap();
        self.kill_section(true);
    }

    /// `__cgroup_kill()` as the code has it: the section, then the walk, all under
    /// `cgroup_mutex` unless the mutant drops it after the section.
    fn kill_then_walk(&self) {
        let mutex = self.cgroup_mutex.lock().unwrap();
        self.kill_section(false);
        let _mutex = if self.proto.kill_mutex_over_walk {
            Some(mutex)
        } else {
            drop(mutex);
            step("kill: cgroup_mutex released before the walk".to_string());
            None
        };
        let _guard = self.css_set_lock.lock().unwrap();
        self.kill_walk();
    }

    /// The write section of a kill: `kill_seq++`, and the walk too if `walk_inside`.
    /// `css_set_lock` must not be held.
    fn kill_section(&self, walk_inside: bool) {
        let _guard = self.css_set_lock.lock().unwrap();
        self.write_begin(self.proto.kill_bump);
        // One read-modify-write, not a load and a store: loom compares a store only with
        // the last access to the atomic before it, which the kill's own load would be, so a
        // fork's load of kill_seq made before the kill's might never be run after the store
        // (tokio-rs/loom#166). `Relaxed` adds no ordering; the kernel's `kill_seq++` is
        // under `css_set_lock` too.
        let next = self.kill_seq[0].fetch_add(1, Ordering::Relaxed) + 1;
        step(format!("kill's section: kill_seq -> {next}"));
        if walk_inside {
            self.kill_walk();
        }
        self.write_end(self.proto.kill_bump);
    }

    /// The kill's walk over cgroup 0: the parent, if a member, and a child linked into
    /// it are signalled. `css_set_lock` held.
    fn kill_walk(&self) {
        let parent = self.dfl_cgrp(self.cgroups[FORKER].load(Ordering::Relaxed)) == 0;
        if parent {
            self.parent_killed.store(true, Ordering::Relaxed);
        }
        let child = self.child_cset.load(Ordering::Relaxed);
        let linked = child != usize::MAX && self.dfl_cgrp(child) == 0;
        if linked {
            self.child_killed.store(true, Ordering::Relaxed);
        }
        self.walked.store(true, Ordering::Relaxed);
        step(format!(
            "kill's walk: parent {}, child {}",
            if parent { "signalled" } else { "not a member" },
            if linked {
                "killed"
            } else {
                "not in the killed cgroup yet"
            }
        ));
    }

    /// `copy_process()`'s `fatal_signal_pending()` check, after the read: false fails the
    /// fork.
    fn fatal_signal_check(&self) -> bool {
        let _guard = self.css_set_lock.lock().unwrap();
        let pending = self.parent_killed.load(Ordering::Relaxed);
        step(format!("fatal_signal_pending(): {pending}"));
        !pending
    }

    /// `cgroup_post_fork()`: link the child and kill it if a kill ran since the read.
    fn post_fork(&self, snap: &Snapshot) {
        let _guard = self.css_set_lock.lock().unwrap();
        let cgrp = self.dfl_cgrp(snap.cset);
        self.child_cset.store(snap.cset, Ordering::Relaxed);
        let now = self.kill_seq[cgrp].load(Ordering::Relaxed);
        if now != snap.kill_seq {
            self.child_killed.store(true, Ordering::Relaxed);
        }
        step(format!(
            "cgroup_post_fork(): child linked into css_set {}, kill_seq {now}{}",
            name(snap.cset),
            if now != snap.kill_seq {
                ": child killed"
            } else {
                ""
            }
        ));
    }

    /// `cgroup_procs_write_start()` to `_finish()` around a move of `task`: under
    /// `cgroup_mutex`, the flag (read under that mutex alone) picks the rwsem to
    /// write-lock, the moved process's or the global one.
    fn move_task(&self, task: usize) {
        let _mutex = self.cgroup_mutex.lock().unwrap();
        step("move: cgroup_mutex taken".to_string());
        let per_threadgroup = self.read_favordynmods();
        let _write = if per_threadgroup {
            let process = if self.proto.move_locks_its_threadgroup {
                task
            } else {
                OTHER - task
            };
            let write = self.process_rwsem[process].write().unwrap();
            step(format!(
                "move: the {}'s process rwsem for writing",
                task_name(process)
            ));
            write
        } else {
            let write = self.threadgroup_rwsem.write().unwrap();
            step("move: the global rwsem for writing".to_string());
            write
        };
        self.migrate(task);
    }

    /// `css_set_move_task()` of `task` from A to B, then the put of A.
    fn migrate(&self, task: usize) {
        {
            let _guard = self.css_set_lock.lock().unwrap();
            self.csets[B].refs.fetch_add(1, Ordering::Relaxed);
            self.write_begin(self.proto.migrate_bump);
            self.cgroups[task].store(B, Ordering::Release);
            if task == FORKER {
                self.migrations.fetch_add(1, Ordering::Relaxed);
            }
            step(format!("{} moved A -> B", task_name(task)));
            self.write_end(self.proto.migrate_bump);
        }
        self.put(A);
    }

    /// `cgroup_favor_dynmods()` turning the per-threadgroup mode on.
    fn favor_dynmods(&self) {
        let _write = self
            .proto
            .switch_on_excludes_forks
            .then(|| self.threadgroup_rwsem.write().unwrap());
        self.write_favordynmods();
        step("favordynmods on".to_string());
    }
}

/// Run one scenario with the seqcount reader under loom; panics (a failed property) if
/// any interleaving is bad.
pub fn check(proto: Protocol, env: Env, writer: Writer) {
    check_reader(Reader::Seqcount, proto, env, writer);
}

/// Like [`check`], with the reader given.
pub fn check_reader(reader: Reader, proto: Protocol, env: Env, writer: Writer) {
    // Loom's exploration is bounded and starts from the order the threads were created
    // in, so every scenario runs twice: with the fork on the model's main thread and the
    // writer spawned, and the other way round. A switcher, where there is one, is spawned
    // first in both.
    for fork_first in [true, false] {
        check_order(reader, proto, env, writer, false, fork_first);
    }
}

/// Like [`check_reader`], for a `CLONE_INTO_CGROUP` fork into cgroup 0 by a parent in
/// cgroup 1, against a kill of cgroup 0.
pub fn check_clone_into(reader: Reader, proto: Protocol, env: Env, writer: Writer) {
    assert!(
        writer.kills(),
        "CLONE_INTO_CGROUP is modelled against kills"
    );
    for fork_first in [true, false] {
        check_order(reader, proto, env, writer, true, fork_first);
    }
}

fn write(world: &World, writer: Writer) {
    match writer {
        Writer::Kill => world.kill(),
        Writer::KillThenWalk => world.kill_then_walk(),
        Writer::MoveOtherAndExit => {
            // The other process moves out of A and exits, dropping its reference.
            world.move_task(OTHER);
            world.put(B);
        }
        Writer::MoveForker => world.move_task(FORKER),
    }
}

/// The fork: `cgroup_css_set_fork()`'s locks and read, the fatal-signal check, and
/// `cgroup_post_fork()` if it passed; then the locks go.
fn fork(world: &World, reader: Reader, into: bool) -> (Snapshot, bool) {
    let mut mutex =
        (into && world.proto.into_takes_mutex).then(|| world.cgroup_mutex.lock().unwrap());
    let rwsems = world.threadgroup_change_begin();
    let mut snap = match reader {
        Reader::Seqcount => world.read(),
        Reader::Pinned => world.read_pinned(),
        Reader::Locked => world.read_locked(),
    };
    if into {
        snap = world.clone_into(snap);
        if mutex.is_some() && !world.proto.into_mutex_to_post_fork {
            mutex = None;
            step("CLONE_INTO_CGROUP: cgroup_mutex released before the link".to_string());
        }
    }
    let forked = world.fatal_signal_check();
    if forked {
        world.post_fork(&snap);
    }
    drop(rwsems);
    drop(mutex);
    (snap, forked)
}

fn check_order(
    reader: Reader,
    proto: Protocol,
    env: Env,
    writer: Writer,
    into: bool,
    fork_first: bool,
) {
    let builder = crate::builder();
    // A failed check prints the failing execution's steps (libtest shows them with the
    // failure) before the panic goes on, a data race named by the property it breaks.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        builder.check(move || {
            TRACE.with(|t| t.borrow_mut().clear());
            let world = Arc::new(World::new(proto, env, writer, into));
            // favordynmods switched on by a third thread, concurrent with both.
            let switcher = (env == Env::SwitchOn).then(|| {
                let w = world.clone();
                thread::spawn(move || {
                    WHO.with(|who| who.set("switch"));
                    w.favor_dynmods()
                })
            });
            let w = world.clone();
            let (snap, forked) = if fork_first {
                WHO.with(|who| who.set("fork"));
                let writer_thread = thread::spawn(move || {
                    WHO.with(|who| who.set("writer"));
                    write(&w, writer)
                });
                let result = fork(&world, reader, into);
                writer_thread.join().unwrap();
                result
            } else {
                WHO.with(|who| who.set("writer"));
                let fork_thread = thread::spawn(move || {
                    WHO.with(|who| who.set("fork"));
                    fork(&w, reader, into)
                });
                write(&world, writer);
                fork_thread.join().unwrap()
            };
            if let Some(switcher) = switcher {
                switcher.join().unwrap();
            }
            WHO.with(|who| who.set("end"));

            // Forward progress: never more than MAX_TRIES lockless attempts.
            assert!(snap.attempts <= MAX_TRIES + 1);
            // cgroup.kill: a fork by a member of the killed cgroup fails, or its child
            // dies; a child cloned into it from outside survives only a kill that had
            // finished before its read.
            if forked
                && writer.kills()
                && world.dfl_cgrp(snap.cset) == 0
                && !world.child_killed.load(Ordering::Relaxed)
            {
                if into {
                    assert!(
                        snap.walked,
                        "a child cloned into the killed cgroup survived a kill that had not \
                         finished before its read (read kill_seq {})",
                        snap.kill_seq
                    );
                } else {
                    panic!(
                        "a child forked during cgroup.kill survived (read kill_seq {}, \
                         lockless {})",
                        snap.kill_seq, snap.lockless
                    );
                }
            }
            // A lockless read is a snapshot: no migration happened inside it.
            if snap.lockless {
                assert_eq!(
                    snap.migrations_before, snap.migrations_after,
                    "a lockless read spanned a migration"
                );
            }
            // The child's reference pins its css_set until the child exits.
            world.dfl_cgrp(snap.cset);
            world.put(snap.cset);
        })
    }));
    if let Err(panic) = result {
        let panic = name_the_race(panic);
        eprintln!("the failing interleaving:\n{}", last_trace().join("\n"));
        std::panic::resume_unwind(panic);
    }
}
