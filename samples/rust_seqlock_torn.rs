// SPDX-License-Identifier: GPL-2.0

//! Torn-read check for `kernel::sync::SeqLock`.
//!
//! On load, readers copy a four-word value that writers keep rewriting (every word to the same
//! new number) until the readers are done. Both run as chains of work items on the unbound
//! workqueue. A copy whose words differ is a torn read; the seqcount must never hand one out.
//! Readers also copy an unprotected twin of the value, which must tear: it shows that the check
//! detects tearing under this workload. The module logs the totals in one line and refuses to
//! load if it saw a torn read.
//!
//! Overlaps are rare when the vCPUs take turns in long slices (single-threaded TCG): a million
//! reads then see a handful of retries and control tears, sometimes none. So the readers go on
//! past their quota until both have been seen, up to a cap, and the guest test checks all three
//! counts.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::{
    new_condvar, new_mutex,
    prelude::*,
    sync::{new_seqlock, Arc, CondVar, Mutex, ReadPath, SeqLock},
    workqueue,
};

module! {
    type: TornReads,
    name: "rust_seqlock_torn",
    authors: ["forkscale developers"],
    description: "Readers against writers over a SeqLock: counts torn reads and retries",
    license: "GPL",
}

const READERS: u64 = 2;
const WRITERS: u64 = 2;
const READS_PER_READER: u64 = 500_000;
/// How far a reader may go past its quota while no retry or no control tear has been seen yet.
const READS_CAP_PER_READER: u64 = 8 * READS_PER_READER;
/// Reads and writes per work item. Each step requeues the next one, so that no item hogs a CPU:
/// with `PREEMPT_NONE`, workers that never return would starve the others (and, with writers
/// looping until the readers finish, livelock on a small guest).
const READS_PER_STEP: u64 = 5_000;
const WRITES_PER_STEP: u64 = 500;
/// Lockless attempts before a read falls back to the lock.
const MAX_TRIES: u32 = 4;

#[pin_data]
struct Shared {
    #[pin]
    value: SeqLock<[u64; 4]>,
    stop: AtomicBool,
    readers_left: AtomicU64,
    failed_spawns: AtomicU64,
    reads: AtomicU64,
    torn: AtomicU64,
    /// The same four words without the seqcount: the control that shows the check can see
    /// tearing under this very workload.
    unprotected: [AtomicU64; 4],
    unprotected_torn: AtomicU64,
    retries: AtomicU64,
    locked: AtomicU64,
    writes: AtomicU64,
    #[pin]
    running: Mutex<u64>,
    #[pin]
    all_done: CondVar,
}

impl Shared {
    fn read_some(&self, count: u64) {
        for _ in 0..count {
            let (words, path) = self.value.read_or_lock(MAX_TRIES);
            if words.iter().any(|w| *w != words[0]) {
                self.torn.fetch_add(1, Ordering::Relaxed);
            }
            let first = self.unprotected[0].load(Ordering::Relaxed);
            if self.unprotected[1..]
                .iter()
                .any(|w| w.load(Ordering::Relaxed) != first)
            {
                self.unprotected_torn.fetch_add(1, Ordering::Relaxed);
            }
            match path {
                ReadPath::Lockless { retries } => {
                    self.retries
                        .fetch_add(u64::from(retries), Ordering::Relaxed);
                }
                ReadPath::Locked => {
                    self.retries
                        .fetch_add(u64::from(MAX_TRIES), Ordering::Relaxed);
                    self.locked.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        self.reads.fetch_add(count, Ordering::Relaxed);
    }

    /// Whether writers have been seen inside a read, both by the seqcount and by the control.
    fn overlap_seen(&self) -> bool {
        self.retries.load(Ordering::Relaxed) != 0
            && self.unprotected_torn.load(Ordering::Relaxed) != 0
    }

    fn write_some(&self, count: u64) {
        for _ in 0..count {
            self.value.update(|words| {
                let next = words[0].wrapping_add(1);
                for control in &self.unprotected {
                    control.store(next, Ordering::Relaxed);
                }
                [next; 4]
            });
        }
        self.writes.fetch_add(count, Ordering::Relaxed);
    }

    fn finished(&self) {
        let mut running = self.running.lock();
        *running -= 1;
        if *running == 0 {
            self.all_done.notify_all();
        }
    }
}

/// Queues `step(shared)`; a worker whose next step cannot be queued ends there.
fn spawn(shared: Arc<Shared>, step: fn(Arc<Shared>, u64), arg: u64) {
    let s = shared.clone();
    if workqueue::system_unbound()
        .try_spawn(GFP_KERNEL, move || step(s, arg))
        .is_err()
    {
        shared.failed_spawns.fetch_add(1, Ordering::Relaxed);
        shared.stop.store(true, Ordering::Relaxed);
        shared.finished();
    }
}

fn reader_step(shared: Arc<Shared>, done: u64) {
    shared.read_some(READS_PER_STEP);
    let done = done + READS_PER_STEP;
    let more = done < READS_PER_READER || (done < READS_CAP_PER_READER && !shared.overlap_seen());
    if more && !shared.stop.load(Ordering::Relaxed) {
        spawn(shared, reader_step, done);
        return;
    }
    // The last reader stops the writers.
    if shared.readers_left.fetch_sub(1, Ordering::Relaxed) == 1 {
        shared.stop.store(true, Ordering::Relaxed);
    }
    shared.finished();
}

fn writer_step(shared: Arc<Shared>, _unused: u64) {
    shared.write_some(WRITES_PER_STEP);
    if shared.stop.load(Ordering::Relaxed) {
        shared.finished();
    } else {
        spawn(shared, writer_step, 0);
    }
}

struct TornReads;

impl kernel::Module for TornReads {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let shared = Arc::pin_init(
            pin_init!(Shared {
                value <- new_seqlock!([0u64; 4], "rust_seqlock_torn"),
                stop: AtomicBool::new(false),
                readers_left: AtomicU64::new(READERS),
                failed_spawns: AtomicU64::new(0),
                reads: AtomicU64::new(0),
                torn: AtomicU64::new(0),
                unprotected: [const { AtomicU64::new(0) }; 4],
                unprotected_torn: AtomicU64::new(0),
                retries: AtomicU64::new(0),
                locked: AtomicU64::new(0),
                writes: AtomicU64::new(0),
                running <- new_mutex!(READERS + WRITERS),
                all_done <- new_condvar!(),
            }),
            GFP_KERNEL,
        )?;

        for _ in 0..WRITERS {
            spawn(shared.clone(), writer_step, 0);
        }
        for _ in 0..READERS {
            spawn(shared.clone(), reader_step, 0);
        }

        let mut running = shared.running.lock();
        while *running != 0 {
            shared.all_done.wait(&mut running);
        }
        drop(running);

        if shared.failed_spawns.load(Ordering::Relaxed) != 0 {
            pr_err!("could not queue work: the run is incomplete\n");
            return Err(ENOMEM);
        }
        let torn = shared.torn.load(Ordering::Relaxed);
        pr_info!(
            "reads={} torn={} retries={} locked={} writes={} unprotected_torn={}\n",
            shared.reads.load(Ordering::Relaxed),
            torn,
            shared.retries.load(Ordering::Relaxed),
            shared.locked.load(Ordering::Relaxed),
            shared.writes.load(Ordering::Relaxed),
            shared.unprotected_torn.load(Ordering::Relaxed),
        );
        if torn != 0 {
            pr_err!("torn reads seen: the seqcount let an inconsistent copy through\n");
            return Err(EINVAL);
        }
        Ok(TornReads)
    }
}
