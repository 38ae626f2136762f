// SPDX-License-Identifier: GPL-2.0
//! A loom model of the batched exit unlink's flushes (patches measure/0017 and 0023, and the
//! module's `exit_unlink.rs`): dead tasks wait in per-CPU queues, each with its length
//! published for flushes that read it without the queue's lock; a flush moves a queue's tasks
//! out under that lock and unlinks them under a lock of its own, and a timer on the kernel's
//! kthread worker flushes what no reader did.
//!
//! Properties:
//! - a flush ordered after a task's queueing returns with the task unlinked, as a reader
//!   that takes no lock sees it: it reads the queue's length as non-zero and waits for any
//!   flush that holds the queue's tasks, or reads the zero stored (release) after the unlink
//!   (acquire);
//! - no task stays queued with no flush to come: a task queued into an empty queue arms the
//!   timer under the worker's lock, which the timer's flush takes to leave the work list
//!   before it reads the lengths.
//!
//! Not modelled: the kick at a full batch (`flush_soon()`), which only makes a flush come
//! earlier than the timer's.

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// Task 0 dies on CPU 0; task 1 is already queued on CPU 1 when the model starts.
const TASKS: usize = 2;

#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// A push publishes the queue's new length (under the queue's lock).
    pub publish_on_push: bool,
    /// A flush publishes the zero only after its unlink; otherwise when it moves the tasks out.
    pub zero_after_unlink: bool,
    /// The length is published with release and read with acquire; otherwise both relaxed.
    pub acquire_release: bool,
    /// A flush holds the queue's flush lock from its first look until its unlink is done.
    pub flush_lock: bool,
    /// Arming takes the worker's lock to test whether the timer is queued; otherwise it tests
    /// it with a plain load first, as the workqueue's `delayed_work_pending()` did.
    pub arm_under_worker_lock: bool,
    /// A flush that leaves tasks queued after it (queued while it ran, past the count it took)
    /// arms the timer for them.
    pub rearm_after_flush: bool,
}

pub const CORRECT: Protocol = Protocol {
    publish_on_push: true,
    zero_after_unlink: true,
    acquire_release: true,
    flush_lock: true,
    arm_under_worker_lock: true,
    rearm_after_flush: true,
};

/// What races task 0's death.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Racer {
    /// A reader that flushes once it has seen task 0 queued, while a second flush runs.
    Reader,
    /// The timer's flush, armed for task 1 and starting as task 0 dies.
    Timer,
    /// The same, with task 1 queued on CPU 0 too: task 0 finds the queue not empty and arms
    /// nothing, and the flush may count task 1 alone.
    TimerSameQueue,
}

/// The properties the checks assert, for the tests to name.
pub const FLUSH_MISSED: &str = "a flush ordered after a task's queueing returned with it linked";
pub const TIMER_LOST: &str = "a task stayed queued with no flush to come";

struct Queue {
    tasks: Mutex<Vec<usize>>,
    flushing: Mutex<()>,
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
    /// The kthread worker's lock, over whether the timer's work is on its lists.
    worker: Mutex<()>,
    /// The timer's work is on the worker's lists: written under `worker`, read under it or,
    /// for the mutant, without it.
    queued_work: AtomicBool,
    /// Ghost: task 0's `dead()` has returned; a reader that sees it is ordered after it.
    queued: AtomicBool,
}

impl World {
    fn new(proto: Protocol, racer: Racer) -> Self {
        let (first, second) = if racer == Racer::TimerSameQueue {
            (vec![1], vec![])
        } else {
            (vec![], vec![1])
        };
        World {
            proto,
            queues: [
                Queue {
                    len: AtomicUsize::new(first.len()),
                    tasks: Mutex::new(first),
                    flushing: Mutex::new(()),
                },
                Queue {
                    len: AtomicUsize::new(second.len()),
                    tasks: Mutex::new(second),
                    flushing: Mutex::new(()),
                },
            ],
            linked: Mutex::new([true; TASKS]),
            populated: [AtomicBool::new(true), AtomicBool::new(true)],
            worker: Mutex::new(()),
            // armed when task 1 was queued
            queued_work: AtomicBool::new(true),
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

    /// `kthread_queue_delayed_work()`: queues the work unless it is on the lists already.
    fn arm(&self) {
        if !self.proto.arm_under_worker_lock && self.queued_work.load(Ordering::Relaxed) {
            return;
        }
        let _worker = self.worker.lock().unwrap();
        if !self.queued_work.load(Ordering::Relaxed) {
            self.queued_work.store(true, Ordering::Relaxed);
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
            self.arm();
        }
    }

    /// The module's `flush_all()` and `flush_queue()`.
    fn flush(&self) {
        let (load, store) = self.orderings();
        for queue in &self.queues {
            if queue.len.load(load) == 0 {
                continue;
            }
            let _flushing = self
                .proto
                .flush_lock
                .then(|| queue.flushing.lock().unwrap());
            // the count it will take, then one task a hold, oldest first, as the module
            // takes UNLINK_MAX a hold
            let mut left = queue.tasks.lock().unwrap().len();
            if left == 0 {
                continue;
            }
            while left != 0 {
                let task = {
                    let mut tasks = queue.tasks.lock().unwrap();
                    if tasks.is_empty() {
                        break;
                    }
                    let task = tasks.remove(0);
                    if !self.proto.zero_after_unlink && tasks.is_empty() {
                        queue.len.store(0, store);
                    }
                    task
                };
                self.unlink(&[task]);
                left -= 1;
            }
            let rest = {
                let tasks = queue.tasks.lock().unwrap();
                queue.len.store(tasks.len(), store);
                tasks.len()
            };
            if rest != 0 && self.proto.rearm_after_flush {
                self.arm();
            }
        }
    }

    /// The timer's work on the kthread worker: it leaves the lists under the worker's lock
    /// (`kthread_worker_fn()`), then the work function flushes.
    fn timer(&self) {
        {
            let _worker = self.worker.lock().unwrap();
            self.queued_work.store(false, Ordering::Relaxed);
        }
        self.flush();
    }
}

pub fn check(proto: Protocol, racer: Racer) {
    let builder = crate::builder();
    builder.check(move || {
        let world = Arc::new(World::new(proto, racer));
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
            Racer::Timer | Racer::TimerSameQueue => world.timer(),
        }
        dying.join().unwrap();
        if racer != Racer::Reader {
            let linked = *world.linked.lock().unwrap();
            assert!(
                !linked.contains(&true) || world.queued_work.load(Ordering::Relaxed),
                "{TIMER_LOST}"
            );
        }
    });
}
