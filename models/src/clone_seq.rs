// SPDX-License-Identifier: GPL-2.0
//! A loom model of the lockless clone-time css_set reads against their writers:
//! migration, `cgroup.kill`, and the last put of a css_set with its RCU-deferred free.
//! Two readers: the seqcount protocol (v1/v2, the `seqcount` built-in and the module's
//! `clone_read.rs`) and the pinned read of the patch for merging, which relies on
//! `cgroup_threadgroup_rwsem` instead.
//!
//! The model keeps the kernel's orderings: writers hold `css_set_lock` and bracket their
//! stores with `write_seqcount_begin()`/`_end()` (counter increment plus `smp_wmb()`);
//! the reader does `read_seqcount_begin()` (load plus `smp_rmb()`), its loads,
//! `refcount_inc_not_zero()`, and `read_seqcount_retry()` (`smp_rmb()` plus load),
//! all under `rcu_read_lock()`, and falls back to the lock after `MAX_TRIES`.
//!
//! Ghost state (`kill_phase`, `migrations`) records what the writers did, for the
//! properties only; the protocol never reads it.
//!
//! Simplification: the kill's walk over the cgroup's tasks is modelled inside its write
//! section. In 6.12 `__cgroup_kill()` walks after the section, and a fork that read the
//! new `kill_seq` is then caught by the walk or by `copy_process()`'s fatal-signal check
//! on the parent, which the model leaves out. The model therefore checks the part the
//! seqcount is responsible for: no lockless read returns a `kill_seq` from the middle of
//! the section.

use loom::cell::UnsafeCell;
use loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// Lockless attempts before the reader takes `css_set_lock`, as in the kernel.
pub const MAX_TRIES: usize = 2;

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
}

/// The protocol as forkscale implements it.
pub const CORRECT: Protocol = Protocol {
    kill_bump: true,
    migrate_bump: true,
    inc_not_zero: true,
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

/// Who may change the forking task's css_set during the read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Env {
    /// 6.12: `cgroup_css_set_fork()` holds `cgroup_threadgroup_rwsem` for reading, so the
    /// forking task cannot migrate; another task sharing its css_set can.
    ThreadgroupRwsem,
    /// A kernel where fork does not take the rwsem: the forking task itself migrates.
    NoRwsem,
}

/// The concurrent writer of a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Writer {
    /// `cgroup.kill` of the forking task's cgroup.
    Kill,
    /// `cgroup.kill` as the code does it: `kill_seq++` in the write section, and the walk
    /// over the cgroup's tasks after it, each step under `css_set_lock`. The forking
    /// parent's fatal-signal check, which catches forks the walk signals, is not modelled.
    KillThenWalk,
    /// A move from css_set A to B: of the forking task (NoRwsem) or of the other task
    /// (ThreadgroupRwsem), which then exits, dropping the last reference to A.
    MigrateAndExit,
}

const A: usize = 0;
const B: usize = 1;

struct CssSet {
    refs: AtomicUsize,
    /// The css_set's default-hierarchy cgroup; POISON once freed.
    dfl_cgrp: UnsafeCell<usize>,
}

struct World {
    proto: Protocol,
    css_set_lock: Mutex<()>,
    seq: AtomicUsize,
    csets: [CssSet; 2],
    kill_seq: [AtomicUsize; 2],
    /// `task->cgroups` of the forking task and of one other task.
    forker: AtomicUsize,
    other: AtomicUsize,
    /// Readers inside `rcu_read_lock()`; a deferred free waits for zero.
    rcu_readers: AtomicUsize,
    /// The child: the css_set it was linked into (`usize::MAX`: not yet), and killed.
    child_cset: AtomicUsize,
    child_killed: AtomicBool,
    /// Ghost: 0 before the kill section, 1 inside, 2 after; moves of the forking task.
    kill_phase: AtomicUsize,
    migrations: AtomicUsize,
}

/// What the reader returned, with the ghost values the properties need.
struct Snapshot {
    cset: usize,
    kill_seq: usize,
    lockless: bool,
    kill_phase: usize,
    migrations_before: usize,
    migrations_after: usize,
    attempts: usize,
}

impl World {
    fn new(proto: Protocol, env: Env) -> Self {
        // A: the forking task's and the other task's references (the other task starts
        // in A in both environments). B: a reference held by the cgroup's setup.
        World {
            proto,
            css_set_lock: Mutex::new(()),
            seq: AtomicUsize::new(0),
            csets: [
                CssSet {
                    refs: AtomicUsize::new(if env == Env::NoRwsem { 1 } else { 2 }),
                    dfl_cgrp: UnsafeCell::new(0),
                },
                CssSet {
                    refs: AtomicUsize::new(1),
                    dfl_cgrp: UnsafeCell::new(1),
                },
            ],
            kill_seq: [AtomicUsize::new(0), AtomicUsize::new(0)],
            forker: AtomicUsize::new(A),
            other: AtomicUsize::new(if env == Env::NoRwsem { B } else { A }),
            rcu_readers: AtomicUsize::new(0),
            child_cset: AtomicUsize::new(usize::MAX),
            child_killed: AtomicBool::new(false),
            kill_phase: AtomicUsize::new(0),
            migrations: AtomicUsize::new(0),
        }
    }

    fn write_begin(&self, bump: bool) {
        if bump {
            self.seq.fetch_add(1, Ordering::Relaxed);
            fence(Ordering::Release);
        }
    }

    fn write_end(&self, bump: bool) {
        if bump {
            fence(Ordering::Release);
            self.seq.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Dereference a css_set; a freed one is a use after free.
    fn dfl_cgrp(&self, cset: usize) -> usize {
        // SAFETY: loom checks that no write races with this read.
        let cgrp = self.csets[cset].dfl_cgrp.with(|p| unsafe { *p });
        assert_ne!(cgrp, POISON, "use after free of css_set {cset}");
        cgrp
    }

    /// RCU, reduced to what the read side needs: a grace period (below, in `put`) waits
    /// for every reader, and its full barrier pairs with the reader's, so a reader that
    /// starts after the grace period began sees every store made before it.
    fn rcu_read_lock(&self) {
        self.rcu_readers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    fn rcu_read_unlock(&self) {
        self.rcu_readers.fetch_sub(1, Ordering::SeqCst);
    }

    /// `put_css_set()`: the last put frees after a grace period (`kfree_rcu`).
    fn put(&self, cset: usize) {
        let old = self.csets[cset].refs.fetch_sub(1, Ordering::Release);
        assert_ne!(old, 0, "css_set {cset} put below zero");
        if old == 1 {
            fence(Ordering::SeqCst);
            while self.rcu_readers.load(Ordering::SeqCst) != 0 {
                thread::yield_now();
            }
            self.csets[cset].dfl_cgrp.with_mut(|p| {
                // SAFETY: loom checks that no access races with this one.
                let cgrp = unsafe { &mut *p };
                assert_ne!(*cgrp, POISON, "css_set {cset} freed twice");
                *cgrp = POISON;
            });
        }
    }

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

    /// `cgroup_css_set_fork()`'s read: the forking task's css_set, pinned, and the
    /// `kill_seq` of its cgroup.
    fn read(&self) -> Snapshot {
        for attempt in 1..=MAX_TRIES {
            self.rcu_read_lock();
            let seq = self.seq.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if seq & 1 != 0 {
                self.rcu_read_unlock();
                continue;
            }
            let kill_phase = self.kill_phase.load(Ordering::SeqCst);
            let migrations_before = self.migrations.load(Ordering::SeqCst);
            let cset = self.forker.load(Ordering::Acquire);
            let kill_seq = self.kill_seq[self.dfl_cgrp(cset)].load(Ordering::Relaxed);
            let pinned = if self.proto.inc_not_zero {
                self.inc_not_zero(cset)
            } else {
                self.csets[cset].refs.fetch_add(1, Ordering::Relaxed);
                true
            };
            self.rcu_read_unlock();
            if !pinned {
                continue;
            }
            // Ghost, read inside the window: a move seen here must fail the retry below.
            let migrations_after = self.migrations.load(Ordering::SeqCst);
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) != seq {
                self.put(cset);
                continue;
            }
            return Snapshot {
                cset,
                kill_seq,
                lockless: true,
                kill_phase,
                migrations_before,
                migrations_after,
                attempts: attempt,
            };
        }
        let _guard = self.css_set_lock.lock().unwrap();
        let cset = self.forker.load(Ordering::Relaxed);
        let kill_seq = self.kill_seq[self.dfl_cgrp(cset)].load(Ordering::Relaxed);
        self.csets[cset].refs.fetch_add(1, Ordering::Relaxed);
        let migrations = self.migrations.load(Ordering::SeqCst);
        Snapshot {
            cset,
            kill_seq,
            lockless: false,
            kill_phase: self.kill_phase.load(Ordering::SeqCst),
            migrations_before: migrations,
            migrations_after: migrations,
            attempts: MAX_TRIES + 1,
        }
    }

    /// The pinned read: one attempt, no counter, no lock; the forking task's own
    /// reference is what keeps the css_set alive, if nothing can move the task.
    fn read_pinned(&self) -> Snapshot {
        self.rcu_read_lock();
        let kill_phase = self.kill_phase.load(Ordering::SeqCst);
        let migrations_before = self.migrations.load(Ordering::SeqCst);
        let cset = self.forker.load(Ordering::Acquire);
        let kill_seq = self.kill_seq[self.dfl_cgrp(cset)].load(Ordering::Relaxed);
        self.csets[cset].refs.fetch_add(1, Ordering::Relaxed);
        let migrations_after = self.migrations.load(Ordering::SeqCst);
        self.rcu_read_unlock();
        Snapshot {
            cset,
            kill_seq,
            lockless: true,
            kill_phase,
            migrations_before,
            migrations_after,
            attempts: 1,
        }
    }

    /// Stock's read, under `css_set_lock`.
    fn read_locked(&self) -> Snapshot {
        let _guard = self.css_set_lock.lock().unwrap();
        let kill_phase = self.kill_phase.load(Ordering::SeqCst);
        let cset = self.forker.load(Ordering::Relaxed);
        let kill_seq = self.kill_seq[self.dfl_cgrp(cset)].load(Ordering::Relaxed);
        self.csets[cset].refs.fetch_add(1, Ordering::Relaxed);
        let migrations = self.migrations.load(Ordering::SeqCst);
        Snapshot {
            cset,
            kill_seq,
            lockless: false,
            kill_phase,
            migrations_before: migrations,
            migrations_after: migrations,
            attempts: 1,
        }
    }

    /// `__cgroup_kill()` as the code has it: the section, then the walk.
    fn kill_then_walk(&self) {
        self.kill_section(false);
        let _guard = self.css_set_lock.lock().unwrap();
        self.kill_walk();
    }

    /// The write section of a kill: `kill_seq++`, and the walk too if `walk_inside`.
    /// `css_set_lock` must not be held.
    fn kill_section(&self, walk_inside: bool) {
        let _guard = self.css_set_lock.lock().unwrap();
        self.write_begin(self.proto.kill_bump);
        self.kill_phase.store(1, Ordering::SeqCst);
        let next = self.kill_seq[0].load(Ordering::Relaxed) + 1;
        self.kill_seq[0].store(next, Ordering::Relaxed);
        if walk_inside {
            self.kill_walk();
        }
        self.write_end(self.proto.kill_bump);
    }

    /// The kill's walk: a child linked into cgroup 0 is killed. `css_set_lock` held.
    fn kill_walk(&self) {
        let child = self.child_cset.load(Ordering::Relaxed);
        if child != usize::MAX && self.dfl_cgrp(child) == 0 {
            self.child_killed.store(true, Ordering::Relaxed);
        }
        self.kill_phase.store(2, Ordering::SeqCst);
    }

    /// `cgroup_post_fork()`: link the child and kill it if a kill ran since the read.
    fn post_fork(&self, snap: &Snapshot) {
        let _guard = self.css_set_lock.lock().unwrap();
        let cgrp = self.dfl_cgrp(snap.cset);
        self.child_cset.store(snap.cset, Ordering::Relaxed);
        if self.kill_seq[cgrp].load(Ordering::Relaxed) != snap.kill_seq {
            self.child_killed.store(true, Ordering::Relaxed);
        }
    }

    /// `__cgroup_kill()` of cgroup 0 (css_set A's), which kills every linked member.
    fn kill(&self) {
        self.kill_section(true);
    }

    /// `css_set_move_task()` of `task` from A to B, then the put of A.
    fn migrate(&self, task: &AtomicUsize) {
        let forker = core::ptr::eq(task, &self.forker);
        {
            let _guard = self.css_set_lock.lock().unwrap();
            self.csets[B].refs.fetch_add(1, Ordering::Relaxed);
            self.write_begin(self.proto.migrate_bump);
            task.store(B, Ordering::Release);
            if forker {
                self.migrations.fetch_add(1, Ordering::SeqCst);
            }
            self.write_end(self.proto.migrate_bump);
        }
        self.put(A);
    }
}

/// Run one scenario with the seqcount reader under loom; panics (a failed property) if
/// any interleaving is bad.
pub fn check(proto: Protocol, env: Env, writer: Writer) {
    check_reader(Reader::Seqcount, proto, env, writer);
}

/// Like [`check`], with the reader given.
pub fn check_reader(reader: Reader, proto: Protocol, env: Env, writer: Writer) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(move || {
        let world = Arc::new(World::new(proto, env));
        let w = world.clone();
        let writer_thread = thread::spawn(move || match writer {
            Writer::Kill => w.kill(),
            Writer::KillThenWalk => w.kill_then_walk(),
            Writer::MigrateAndExit => {
                if env == Env::NoRwsem {
                    w.migrate(&w.forker);
                } else {
                    // The other task moves out of A and exits, dropping its reference.
                    w.migrate(&w.other);
                    w.put(B);
                }
            }
        });

        let snap = match reader {
            Reader::Seqcount => world.read(),
            Reader::Pinned => world.read_pinned(),
            Reader::Locked => world.read_locked(),
        };
        world.post_fork(&snap);
        writer_thread.join().unwrap();

        // Forward progress: never more than MAX_TRIES lockless attempts.
        assert!(snap.attempts <= MAX_TRIES + 1);
        // No stale kill_seq: a child whose fork overlapped the kill is killed.
        if writer != Writer::MigrateAndExit && world.dfl_cgrp(snap.cset) == 0 {
            assert!(
                world.child_killed.load(Ordering::Relaxed) || snap.kill_phase == 2,
                "a child forked during cgroup.kill survived (read kill_seq {}, lockless {})",
                snap.kill_seq,
                snap.lockless
            );
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
    });
}
