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
//! Ghost state (`migrations`) records what the writers did, for the properties only; the
//! protocol never reads it, and it is accessed `Relaxed` after the writer's barrier, so it
//! adds no synchronisation the kernel lacks (a barrier mutant stays visible).
//!
//! Loads of `task->cgroups` are `Relaxed`: the kernel's `rcu_dereference()` orders only the
//! loads that depend on the pointer, and the model's css_set contents never change while
//! they can be read. `rcu_read_unlock()` is a release and no barrier for later loads. The
//! only `SeqCst` is the grace period's full barrier and its counterpart at
//! `rcu_read_lock()`, which give RCU's guarantee that a reader starting after a grace
//! period began sees what was stored before it. `CLONE_INTO_CGROUP` is not modelled: there
//! the fork replaces the read's `kill_seq` under `cgroup_mutex`, which a kill holds from its
//! section to the end of its walk, so no read is involved in the kill.
//!
//! `cgroup.kill` is checked by its outcome: a fork that overlaps a kill either fails or
//! leaves a child that is killed. The walk signals every member, the forking parent
//! included, and `copy_process()` fails a fork whose parent has a fatal signal pending at
//! its check between the read and `cgroup_post_fork()`. Two kills are modelled:
//! [`Writer::KillThenWalk`] is 7.3's `__cgroup_kill()`, which walks after the write
//! section; [`Writer::Kill`] walks inside it, a kernel that would close the window the
//! walk-after order leaves (see the tests).

use loom::cell::UnsafeCell;
use loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
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
}

/// The protocol as forkscale implements it.
pub const CORRECT: Protocol = Protocol {
    kill_bump: true,
    migrate_bump: true,
    inc_not_zero: true,
    writer_wmb: true,
    reader_rmb: true,
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
    /// 7.3: `cgroup_css_set_fork()` holds `cgroup_threadgroup_rwsem` for reading (under
    /// `favordynmods`, the forking threadgroup's own rwsem), so the forking task cannot
    /// migrate; another task sharing its css_set can. Both locks exclude exactly that, so
    /// one environment covers both.
    ThreadgroupRwsem,
    /// A kernel where fork does not take the rwsem: the forking task itself migrates.
    NoRwsem,
}

/// The concurrent writer of a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Writer {
    /// `cgroup.kill` of the forking task's cgroup with the walk inside the write section.
    Kill,
    /// `cgroup.kill` as 7.3 does it: `kill_seq++` in the write section, then the walk over
    /// the cgroup's tasks, under `css_set_lock` again.
    KillThenWalk,
    /// A move from css_set A to B: of the forking task (NoRwsem) or of the other task
    /// (ThreadgroupRwsem), which then exits, dropping the last reference to A.
    MigrateAndExit,
}

const A: usize = 0;
const B: usize = 1;

fn name(cset: usize) -> &'static str {
    if cset == A {
        "A"
    } else {
        "B"
    }
}

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
    /// The forking parent has a fatal signal pending (written under `css_set_lock` by the
    /// walk, read by the fork's check; the kernel's siglock is modelled by that lock).
    parent_killed: AtomicBool,
    /// Ghost: moves of the forking task.
    migrations: AtomicUsize,
}

/// What the reader returned, with the ghost values the properties need.
struct Snapshot {
    cset: usize,
    kill_seq: usize,
    lockless: bool,
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
            parent_killed: AtomicBool::new(false),
            migrations: AtomicUsize::new(0),
        }
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
        // SAFETY: loom checks that no write races with this read.
        let cgrp = self.csets[cset].dfl_cgrp.with(|p| unsafe { *p });
        assert_ne!(cgrp, POISON, "use after free of css_set {cset}");
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
        assert_ne!(old, 0, "css_set {cset} put below zero");
        if old == 1 {
            fence(Ordering::SeqCst);
            while self.rcu_readers.load(Ordering::Acquire) != 0 {
                thread::yield_now();
            }
            step(format!("grace period over: css_set {} freed", name(cset)));
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
            self.read_barrier();
            if seq & 1 != 0 {
                step(format!("seqcount read {attempt}: seq {seq} odd, retry"));
                self.rcu_read_unlock();
                continue;
            }
            let migrations_before = self.migrations.load(Ordering::Relaxed);
            let cset = self.forker.load(Ordering::Relaxed);
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
            };
        }
        let _guard = self.css_set_lock.lock().unwrap();
        let cset = self.forker.load(Ordering::Relaxed);
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
        }
    }

    /// The pinned read: one attempt, no counter, no lock; the forking task's own
    /// reference is what keeps the css_set alive, if nothing can move the task.
    fn read_pinned(&self) -> Snapshot {
        self.rcu_read_lock();
        let migrations_before = self.migrations.load(Ordering::Relaxed);
        let cset = self.forker.load(Ordering::Relaxed);
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
        }
    }

    /// Stock's read, under `css_set_lock`.
    fn read_locked(&self) -> Snapshot {
        let _guard = self.css_set_lock.lock().unwrap();
        let cset = self.forker.load(Ordering::Relaxed);
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
        let next = self.kill_seq[0].load(Ordering::Relaxed) + 1;
        self.kill_seq[0].store(next, Ordering::Relaxed);
        step(format!("kill's section: kill_seq -> {next}"));
        if walk_inside {
            self.kill_walk();
        }
        self.write_end(self.proto.kill_bump);
    }

    /// The kill's walk: the parent, a member of cgroup 0, and a child linked into cgroup 0
    /// are signalled. `css_set_lock` held.
    fn kill_walk(&self) {
        self.parent_killed.store(true, Ordering::Relaxed);
        let child = self.child_cset.load(Ordering::Relaxed);
        let linked = child != usize::MAX && self.dfl_cgrp(child) == 0;
        if linked {
            self.child_killed.store(true, Ordering::Relaxed);
        }
        step(format!(
            "kill's walk: parent signalled, child {}",
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
                self.migrations.fetch_add(1, Ordering::Relaxed);
            }
            step(format!(
                "{} moved A -> B",
                if forker { "forking task" } else { "other task" }
            ));
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
    // Loom's exploration is bounded and starts from the order the threads were created
    // in, so every scenario runs twice: with the fork started first, and with the writer
    // started first.
    for fork_first in [true, false] {
        check_order(reader, proto, env, writer, fork_first);
    }
}

fn write(world: &World, env: Env, writer: Writer) {
    match writer {
        Writer::Kill => world.kill(),
        Writer::KillThenWalk => world.kill_then_walk(),
        Writer::MigrateAndExit => {
            if env == Env::NoRwsem {
                world.migrate(&world.forker);
            } else {
                // The other task moves out of A and exits, dropping its reference.
                world.migrate(&world.other);
                world.put(B);
            }
        }
    }
}

/// The fork: the read, the fatal-signal check, and `cgroup_post_fork()` if it passed.
fn fork(world: &World, reader: Reader) -> (Snapshot, bool) {
    let snap = match reader {
        Reader::Seqcount => world.read(),
        Reader::Pinned => world.read_pinned(),
        Reader::Locked => world.read_locked(),
    };
    let forked = world.fatal_signal_check();
    if forked {
        world.post_fork(&snap);
    }
    (snap, forked)
}

fn check_order(reader: Reader, proto: Protocol, env: Env, writer: Writer, fork_first: bool) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    // A failed check prints the failing execution's steps (libtest shows them with the
    // failure) before the panic goes on.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        builder.check(move || {
            TRACE.with(|t| t.borrow_mut().clear());
            let world = Arc::new(World::new(proto, env));
            let w = world.clone();
            let (snap, forked) = if fork_first {
                WHO.with(|who| who.set("fork"));
                let writer_thread = thread::spawn(move || {
                    WHO.with(|who| who.set("writer"));
                    write(&w, env, writer)
                });
                let result = fork(&world, reader);
                writer_thread.join().unwrap();
                result
            } else {
                WHO.with(|who| who.set("writer"));
                let fork_thread = thread::spawn(move || {
                    WHO.with(|who| who.set("fork"));
                    fork(&w, reader)
                });
                write(&world, env, writer);
                fork_thread.join().unwrap()
            };
            WHO.with(|who| who.set("end"));

            // Forward progress: never more than MAX_TRIES lockless attempts.
            assert!(snap.attempts <= MAX_TRIES + 1);
            // cgroup.kill: a fork by a member of the killed cgroup fails, or its child dies.
            if forked && writer != Writer::MigrateAndExit && world.dfl_cgrp(snap.cset) == 0 {
                assert!(
                    world.child_killed.load(Ordering::Relaxed),
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
        })
    }));
    if let Err(panic) = result {
        eprintln!("the failing interleaving:\n{}", last_trace().join("\n"));
        std::panic::resume_unwind(panic);
    }
}
