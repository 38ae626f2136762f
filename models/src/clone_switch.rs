// SPDX-License-Identifier: GPL-2.0
//! A loom model of switching the clone read at run time (patch measure/0002's
//! `cgroup_clone_switch()`), against a fork and a move of another task:
//!
//! - turning the rwlock read on: `cgroup_clone_rwlock_enter()` enables the writers' static
//!   key and cycles `css_set_lock`, then the static call points forks at the rwlock read;
//! - turning it off: the static call goes back, a grace period passes, then the key is
//!   disabled (`cgroup_clone_rwlock_leave()`);
//! - a module registering (its ops published a grace period before its function is
//!   reachable) and unregistering (the built-in back, a grace period, then its ops retired
//!   and its memory freed).
//!
//! A fork is the hook's read-side section (SRCU-fast since measure/0012, `rcu_read_lock()`
//! before; modelled as an RCU reader, as both give the same grace-period guarantee), a
//! load of the ops pointer, the static call, and the section's end. What the rwlock read protects is modelled as one non-atomic word
//! that a move writes, under `css_set_lock` and, while the key is on, the rwlock's write
//! side; the rwlock read reads it under the read side. Loom reports any read of it that
//! overlaps a write without ordering, and the check names it by the property it breaks.
//! Static-key and static-call updates patch text with full serialisation, so they and
//! their readers are `SeqCst`; RCU is modelled as in [`crate::clone_seq`].

use crate::{name_the_race, named_access};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex, RwLock};
use loom::thread;

/// What the static call can point at.
const LOCKED: usize = 0;
const RWLOCK: usize = 1;
const MODULE: usize = 2;

/// The ops pointer's values: the built-ins', or the module's.
const BUILTIN_OPS: usize = 0;
const MODULE_OPS: usize = 1;

/// A freed module's memory reads as this.
const POISON: usize = usize::MAX;

/// What loom's report of a race on the data a move writes is named.
pub const UNORDERED_READ: &str = "a fork's read of what a move writes was unordered with the write";
/// What a fork that runs a freed module breaks, loom's report of the race included.
pub const MODULE_AFTER_FREE: &str = "a fork ran the module after it was freed";

/// What the model may get wrong on purpose: each field off is one mutant.
#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// `cgroup_clone_rwlock_enter()` cycles `css_set_lock` after enabling the key.
    pub enter_cycles_lock: bool,
    /// A grace period between pointing the static call away from a read and what must
    /// wait for that read's callers: disabling the key, retiring a module's ops and
    /// freeing its memory.
    pub grace_period_after_switch: bool,
    /// A module's ops are published a grace period before its function is reachable.
    pub grace_period_before_module: bool,
}

/// The protocol as patch measure/0002 implements it.
pub const CORRECT: Protocol = Protocol {
    enter_cycles_lock: true,
    grace_period_after_switch: true,
    grace_period_before_module: true,
};

/// The switch of a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Switch {
    /// `locked` to `rwlock`.
    RwlockOn,
    /// `rwlock` to `locked`.
    RwlockOff,
    /// A module registers over `locked`.
    ModuleRegister,
    /// The module unregisters, `locked` comes back, the module's memory is freed.
    ModuleUnregister,
}

struct World {
    proto: Protocol,
    css_set_lock: Mutex<()>,
    clone_lock: RwLock<()>,
    /// `cgroup_clone_rwlock_writers`.
    key: AtomicBool,
    /// The static call's target and `cgroup_clone_current`.
    target: AtomicUsize,
    ops: AtomicUsize,
    rcu_readers: AtomicUsize,
    /// What a move changes and the rwlock read reads.
    css_data: UnsafeCell<usize>,
    /// The module's memory (its ops and code); POISON once freed.
    module_mem: UnsafeCell<usize>,
}

impl World {
    fn new(proto: Protocol, switch: Switch) -> Self {
        let (target, ops, key) = match switch {
            Switch::RwlockOn | Switch::ModuleRegister => (LOCKED, BUILTIN_OPS, false),
            Switch::RwlockOff => (RWLOCK, BUILTIN_OPS, true),
            Switch::ModuleUnregister => (MODULE, MODULE_OPS, false),
        };
        World {
            proto,
            css_set_lock: Mutex::new(()),
            clone_lock: RwLock::new(()),
            key: AtomicBool::new(key),
            target: AtomicUsize::new(target),
            ops: AtomicUsize::new(ops),
            rcu_readers: AtomicUsize::new(0),
            css_data: UnsafeCell::new(0),
            module_mem: UnsafeCell::new(0),
        }
    }

    fn rcu_read_lock(&self) {
        self.rcu_readers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    fn rcu_read_unlock(&self) {
        self.rcu_readers.fetch_sub(1, Ordering::Release);
    }

    fn synchronize_rcu(&self) {
        fence(Ordering::SeqCst);
        while self.rcu_readers.load(Ordering::Acquire) != 0 {
            thread::yield_now();
        }
    }

    fn read_data(&self) -> usize {
        named_access(UNORDERED_READ, || {
            // SAFETY: loom checks that no write races with this read.
            self.css_data.with(|p| unsafe { *p })
        })
    }

    /// `cgroup_css_set_fork()`'s call through the hook.
    fn fork(&self) {
        self.rcu_read_lock();
        let ops = self.ops.load(Ordering::Acquire);
        match self.target.load(Ordering::SeqCst) {
            LOCKED => {
                let _guard = self.css_set_lock.lock().unwrap();
                self.read_data();
            }
            RWLOCK => {
                let _guard = self.clone_lock.read().unwrap();
                self.read_data();
            }
            _ => {
                assert_eq!(ops, MODULE_OPS, "the module's read was passed other ops");
                let mem = named_access(MODULE_AFTER_FREE, || {
                    // SAFETY: loom checks that no write races with this read.
                    self.module_mem.with(|p| unsafe { *p })
                });
                assert_ne!(mem, POISON, "{MODULE_AFTER_FREE}");
            }
        }
        self.rcu_read_unlock();
    }

    /// A move of another task: under `css_set_lock`, and the rwlock's write side while
    /// the key is on.
    fn migrate(&self) {
        let _guard = self.css_set_lock.lock().unwrap();
        let _write = if self.key.load(Ordering::SeqCst) {
            Some(self.clone_lock.write().unwrap())
        } else {
            None
        };
        named_access(UNORDERED_READ, || {
            // SAFETY: loom checks that no access races with this one.
            self.css_data.with_mut(|p| unsafe { *p += 1 })
        });
    }

    /// `cgroup_clone_switch()` for the scenario.
    fn switch(&self, switch: Switch) {
        match switch {
            Switch::RwlockOn => {
                self.key.store(true, Ordering::SeqCst);
                if self.proto.enter_cycles_lock {
                    drop(self.css_set_lock.lock().unwrap());
                }
                self.target.store(RWLOCK, Ordering::SeqCst);
                self.synchronize_rcu();
            }
            Switch::RwlockOff => {
                self.target.store(LOCKED, Ordering::SeqCst);
                if self.proto.grace_period_after_switch {
                    self.synchronize_rcu();
                }
                self.key.store(false, Ordering::SeqCst);
            }
            Switch::ModuleRegister => {
                self.ops.store(MODULE_OPS, Ordering::Release);
                if self.proto.grace_period_before_module {
                    self.synchronize_rcu();
                }
                self.target.store(MODULE, Ordering::SeqCst);
                self.synchronize_rcu();
            }
            Switch::ModuleUnregister => {
                self.target.store(LOCKED, Ordering::SeqCst);
                if self.proto.grace_period_after_switch {
                    self.synchronize_rcu();
                }
                self.ops.store(BUILTIN_OPS, Ordering::Release);
                // The module's memory goes once unregister returns.
                named_access(MODULE_AFTER_FREE, || {
                    // SAFETY: loom checks that no access races with this one.
                    self.module_mem.with_mut(|p| unsafe { *p = POISON })
                });
            }
        }
    }
}

/// Explores every interleaving of a fork, a move and `switch`; panics with the property
/// that failed, a data race named by the property it breaks.
pub fn check(proto: Protocol, switch: Switch) {
    let model = crate::builder();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        model.check(move || {
            let world = Arc::new(World::new(proto, switch));
            let switcher = {
                let world = world.clone();
                thread::spawn(move || world.switch(switch))
            };
            let mover = {
                let world = world.clone();
                thread::spawn(move || world.migrate())
            };
            world.fork();
            switcher.join().unwrap();
            mover.join().unwrap();
        })
    }));
    if let Err(panic) = result {
        std::panic::resume_unwind(name_the_race(panic));
    }
}
