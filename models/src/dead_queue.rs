// SPDX-License-Identifier: GPL-2.0
//! A loom model of the batched exit unlink's flushes (patch measure/0017 and the module's
//! `exit_unlink.rs`): dead tasks wait in per-CPU queues, each with its length published for
//! flushes that read it without the queue's lock, and a timer flushes what no reader did.
//!
//! Properties:
//! - a flush ordered after a task's queueing returns with the task unlinked, as a reader
//!   that takes no lock sees it: it reads the queue's length as non-zero and takes the
//!   lock, or reads the zero stored (release) after the unlink (acquire);
//! - no task stays queued with no flush to come: a task queued into an empty queue re-arms
//!   the timer unless the timer's flush, already running, sees it.

use loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// Task 0 dies on CPU 0; task 1 is already queued on CPU 1 when the model starts.
const TASKS: usize = 2;

#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// A push publishes the queue's new length (under the queue's lock).
    pub publish_on_push: bool,
    /// A drain unlinks its tasks, and only then publishes the zero (both under the queue's
    /// lock); otherwise it publishes the zero first.
    pub zero_after_unlink: bool,
    /// The length is published with release and read with acquire; otherwise both relaxed.
    pub acquire_release: bool,
    /// A task queued into an empty queue runs a full barrier before it tests whether the
    /// timer is pending, as the timer's flush does after clearing that bit.
    pub barrier_before_arming: bool,
}

pub const CORRECT: Protocol = Protocol {
    publish_on_push: true,
    zero_after_unlink: true,
    barrier_before_arming: true,
    acquire_release: true,
};

/// What races task 0's death.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Racer {
    /// A reader that flushes once it has seen task 0 queued, while a second flush runs.
    Reader,
    /// The timer's flush, armed for task 1 and starting as task 0 dies.
    Timer,
}

/// The properties the checks assert, for the tests to name.
pub const FLUSH_MISSED: &str = "a flush ordered after a task's queueing returned with it linked";
pub const TIMER_LOST: &str = "a task stayed queued with no flush to come";

struct Queue {
    tasks: Mutex<Vec<usize>>,
    len: AtomicUsize,
}

struct World {
    proto: Protocol,
    queues: [Queue; 2],
    /// Which tasks are on their css_set's list, under `css_set_lock`.
    linked: Mutex<[bool; TASKS]>,
    /// What a reader that takes no lock sees of the unlink (`cgroup_is_populated()` read
    /// for `cgroup.events`): written relaxed after it, so only the length's ordering makes
    /// a reader see it.
    populated: [AtomicBool; TASKS],
    /// The timer work's pending bit.
    pending: AtomicBool,
    /// Ghost: task 0's `dead()` has returned; a reader that sees it is ordered after it.
    queued: AtomicBool,
}

impl World {
    fn new(proto: Protocol) -> Self {
        World {
            proto,
            queues: [
                Queue {
                    tasks: Mutex::new(Vec::new()),
                    len: AtomicUsize::new(0),
                },
                Queue {
                    tasks: Mutex::new(vec![1]),
                    len: AtomicUsize::new(1),
                },
            ],
            linked: Mutex::new([true; TASKS]),
            populated: [AtomicBool::new(true), AtomicBool::new(true)],
            // armed when task 1 was queued
            pending: AtomicBool::new(true),
            queued: AtomicBool::new(false),
        }
    }

    /// `cgroup_dead_unlink()`: under `css_set_lock`.
    fn unlink(&self, tasks: &[usize]) {
        let mut linked = self.linked.lock().unwrap();
        for &t in tasks {
            assert!(linked[t], "task {t} unlinked twice");
            linked[t] = false;
            self.populated[t].store(false, Ordering::Relaxed);
        }
    }

    /// The length's orderings, or relaxed ones for the mutant.
    fn orderings(&self) -> (Ordering, Ordering) {
        if self.proto.acquire_release {
            (Ordering::Acquire, Ordering::Release)
        } else {
            (Ordering::Relaxed, Ordering::Relaxed)
        }
    }

    /// The module's `dead()`: queue the task, and arm the timer if the queue was empty.
    fn dead(&self, cpu: usize, task: usize) {
        let queue = &self.queues[cpu];
        let was_empty = {
            let mut tasks = queue.tasks.lock().unwrap();
            let was_empty = tasks.is_empty();
            tasks.push(task);
            if self.proto.publish_on_push {
                queue.len.store(tasks.len(), self.orderings().1);
            }
            was_empty
        };
        if was_empty {
            if self.proto.barrier_before_arming {
                fence(Ordering::SeqCst);
            }
            // `delayed_work_pending()`: a plain test of the bit; arming sets it
            if !self.pending.load(Ordering::Relaxed) {
                self.pending.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The module's `flush_all()`.
    fn flush(&self) {
        let (load, store) = self.orderings();
        for queue in &self.queues {
            if queue.len.load(load) == 0 {
                continue;
            }
            let mut tasks = queue.tasks.lock().unwrap();
            if tasks.is_empty() {
                continue;
            }
            let drained = core::mem::take(&mut *tasks);
            if self.proto.zero_after_unlink {
                self.unlink(&drained);
                queue.len.store(0, store);
            } else {
                queue.len.store(0, store);
                self.unlink(&drained);
            }
        }
    }

    /// The timer's work: the workqueue clears the pending bit and runs a full barrier
    /// (`set_work_pool_and_clear_pending()`) before the work function flushes.
    fn timer(&self) {
        self.pending.store(false, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        self.flush();
    }
}

pub fn check(proto: Protocol, racer: Racer) {
    let builder = crate::builder();
    builder.check(move || {
        let world = Arc::new(World::new(proto));
        let w = world.clone();
        let dying = thread::spawn(move || {
            w.dead(0, 0);
            w.queued.store(true, Ordering::Release);
        });
        match racer {
            Racer::Reader => {
                let w = world.clone();
                let other = thread::spawn(move || w.flush());
                if world.queued.load(Ordering::Acquire) {
                    world.flush();
                    // without css_set_lock, as cgroup.events reads populated
                    assert!(
                        !world.populated[0].load(Ordering::Relaxed),
                        "{FLUSH_MISSED}"
                    );
                }
                other.join().unwrap();
            }
            Racer::Timer => world.timer(),
        }
        dying.join().unwrap();
        if racer == Racer::Timer {
            let linked = *world.linked.lock().unwrap();
            assert!(
                !linked.contains(&true) || world.pending.load(Ordering::Relaxed),
                "{TIMER_LOST}"
            );
        }
    });
}
