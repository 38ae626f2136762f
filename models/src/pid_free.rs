// SPDX-License-Identifier: GPL-2.0
//! A loom model of deferred, batched pid freeing (patch measure/0004 and the module's
//! `pid_release.rs`): released pids wait in per-CPU queues, and a batch returns them
//! to the pid map under one `pidmap_lock`.
//!
//! Properties:
//! - a pid number is never handed out while a task or a queue still holds it;
//! - exhaustion flushes before failing: `alloc_pid()` fails only if every pid that
//!   could have been freed was released after its flush looked at the queues;
//! - teardown does not wait for the delay: `zap_pid_ns_processes()` flushes, so a pid
//!   released before that flush is freed when it returns.

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// A pid space of two numbers, both taken when the model starts.
const PIDS: usize = 2;

#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// A flush empties every CPU's queue, not only the caller's.
    pub flush_all_cpus: bool,
    /// `alloc_pid()` flushes and retries once on `-ENOSPC`.
    pub retry_after_flush: bool,
    /// `zap_pid_ns_processes()` flushes before waiting for the namespace's tasks.
    pub flush_on_teardown: bool,
}

pub const CORRECT: Protocol = Protocol {
    flush_all_cpus: true,
    retry_after_flush: true,
    flush_on_teardown: true,
};

/// The racing operation of a scenario, on CPU 1, while a task on CPU 0 exits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Racer {
    /// `alloc_pid()` in a full pid space.
    Alloc,
    /// The namespace's teardown.
    Teardown,
}

struct World {
    proto: Protocol,
    /// The pid map (`idr`), under `pidmap_lock`: which numbers are allocated.
    pidmap: Mutex<[bool; PIDS]>,
    /// Per-CPU queues of released pid numbers.
    queues: [Mutex<Vec<usize>>; 2],
    /// Ghost: the task holding each number (a queued pid still holds its number).
    held: [AtomicBool; PIDS],
    /// Ghost: a flush (exhaustion or teardown) has started; read by the releaser under
    /// its queue lock, so "false" means the flush will find the pid.
    flush_started: AtomicBool,
    released_after_flush: AtomicBool,
}

impl World {
    fn new(proto: Protocol) -> Self {
        World {
            proto,
            pidmap: Mutex::new([true; PIDS]),
            queues: [Mutex::new(Vec::new()), Mutex::new(Vec::new())],
            held: [AtomicBool::new(true), AtomicBool::new(true)],
            flush_started: AtomicBool::new(false),
            released_after_flush: AtomicBool::new(false),
        }
    }

    /// `release_task()` after `tasklist_lock`: queue the pid on this CPU.
    fn release(&self, cpu: usize, nr: usize) {
        let mut queue = self.queues[cpu].lock().unwrap();
        if self.flush_started.load(Ordering::SeqCst) {
            self.released_after_flush.store(true, Ordering::SeqCst);
        }
        queue.push(nr);
    }

    /// Free a batch: every pid of the queue under one `pidmap_lock`.
    fn flush_queue(&self, cpu: usize) {
        let batch: Vec<usize> = core::mem::take(&mut *self.queues[cpu].lock().unwrap());
        if batch.is_empty() {
            return;
        }
        let mut map = self.pidmap.lock().unwrap();
        for nr in batch {
            assert!(map[nr], "pid {nr} freed twice");
            map[nr] = false;
            self.held[nr].store(false, Ordering::SeqCst);
        }
    }

    fn flush(&self, cpu: usize) {
        self.flush_started.store(true, Ordering::SeqCst);
        if self.proto.flush_all_cpus {
            self.flush_queue(0);
            self.flush_queue(1);
        } else {
            self.flush_queue(cpu);
        }
    }

    fn try_alloc(&self) -> Option<usize> {
        let mut map = self.pidmap.lock().unwrap();
        let nr = map.iter().position(|used| !used)?;
        assert!(
            !self.held[nr].load(Ordering::SeqCst),
            "pid {nr} reused while a task or a queue holds it"
        );
        map[nr] = true;
        self.held[nr].store(true, Ordering::SeqCst);
        Some(nr)
    }

    /// `alloc_pid()`: on exhaustion, flush the pending pids and try once more.
    fn alloc(&self, cpu: usize) -> Option<usize> {
        if let Some(nr) = self.try_alloc() {
            return Some(nr);
        }
        if !self.proto.retry_after_flush {
            return None;
        }
        self.flush(cpu);
        self.try_alloc()
    }
}

pub fn check(proto: Protocol, racer: Racer) {
    let builder = crate::builder();
    builder.check(move || {
        let world = Arc::new(World::new(proto));
        let w = world.clone();
        // CPU 0: the task holding pid 0 is reaped; its pid is released, not freed.
        let exiting = thread::spawn(move || w.release(0, 0));

        match racer {
            Racer::Alloc => {
                let got = world.alloc(1);
                exiting.join().unwrap();
                if got.is_none() {
                    assert!(
                        world.released_after_flush.load(Ordering::SeqCst),
                        "alloc_pid() failed while a released pid waited in a queue"
                    );
                }
            }
            Racer::Teardown => {
                if world.proto.flush_on_teardown {
                    world.flush(1);
                }
                let freed = !world.held[0].load(Ordering::SeqCst);
                exiting.join().unwrap();
                assert!(
                    freed || world.released_after_flush.load(Ordering::SeqCst),
                    "teardown returned with a pid released before it still queued"
                );
            }
        }
    });
}
