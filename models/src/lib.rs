// SPDX-License-Identifier: GPL-2.0
//! Model-checked protocols of forkscale, run by `cargo test` (see tests/).
//!
//! - [`clone_seq`]: the lockless clone-time css_set read against migrations,
//!   `cgroup.kill` and the last put with its RCU-deferred free, under the threadgroup
//!   rwsems, `favordynmods` and `CLONE_INTO_CGROUP`;
//! - [`clone_switch`]: switching the clone read at run time: the rwlock read's
//!   writer key on and off, a module registering and unregistering;
//! - [`pid_free`]: deferred, batched pid freeing against allocation, exhaustion and
//!   namespace teardown;
//! - [`pid_alloc`]: pid allocation from per-CPU blocks (measure/0019)
//!   against `clone3(set_tid)`, lookups, frees, exhaustion, `ns_last_pid`, the cursor's
//!   wrap and the release of a block;
//! - [`dead_queue`]: the batched exit unlink's flushes, which read each queue's length
//!   without its lock, against a concurrent flush and the timer.
//!
//! Each model takes the protocol as a value, so a test can switch one rule off (a
//! mutant) and assert that the checker then finds a failing interleaving, and which
//! property it broke.
//!
//! Loom's search is bounded to [`PREEMPTION_BOUND`] preemptions per execution unless the
//! environment says otherwise ([`builder`]): `LOOM_MAX_PREEMPTIONS=<n>` for another bound,
//! `FORKSCALE_MODEL_UNBOUNDED=1` for none.

use std::any::Any;
use std::cell::Cell;

pub mod clone_seq;
pub mod clone_switch;
pub mod dead_queue;
pub mod pid_alloc;
pub mod pid_free;

std::thread_local! {
    /// The property that the `UnsafeCell` access in progress breaks if loom finds it
    /// unordered with another ([`named_access`]). Outside loom's view, like the traces:
    /// loom runs a model's threads one at a time on the test's thread.
    static ACCESS: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// The preemptions loom tries per execution when the environment sets no bound.
pub const PREEMPTION_BOUND: usize = 3;

/// Loom's model builder for the models' checks. Loom's `Builder::new()` reads its settings
/// from the environment: `LOOM_MAX_PREEMPTIONS` (a number) is the preemption bound, and
/// where it is unset the bound is [`PREEMPTION_BOUND`], unless `FORKSCALE_MODEL_UNBOUNDED`
/// is set (not empty), which leaves loom unbounded. Loom also reads `LOOM_MAX_BRANCHES`
/// (an execution longer than that fails), and `LOOM_MAX_DURATION` and
/// `LOOM_MAX_PERMUTATIONS`, which would end a search early and pass a check loom did not
/// finish: those two are refused.
pub fn builder() -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    assert!(
        builder.max_duration.is_none() && builder.max_permutations.is_none(),
        "LOOM_MAX_DURATION or LOOM_MAX_PERMUTATIONS is set: a check would pass unfinished"
    );
    let unbounded = std::env::var_os("FORKSCALE_MODEL_UNBOUNDED").is_some_and(|v| !v.is_empty());
    if unbounded {
        assert!(
            builder.preemption_bound.is_none(),
            "FORKSCALE_MODEL_UNBOUNDED and LOOM_MAX_PREEMPTIONS are both set"
        );
    } else if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(PREEMPTION_BOUND);
    }
    builder
}

/// Runs `access`, one access to a loom `UnsafeCell`, under the name of the property an
/// unordered access there breaks. Loom reports a data race as a "Causality violation"
/// panic that names no property; [`name_the_race`] turns it into `property`.
pub fn named_access<R>(property: &'static str, access: impl FnOnce() -> R) -> R {
    ACCESS.with(|a| a.set(Some(property)));
    let result = access();
    ACCESS.with(|a| a.set(None));
    result
}

/// The message of a panic payload, if it has one.
fn message(payload: &(dyn Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
}

/// A model check's panic, with loom's data-race report inside a [`named_access`]
/// replaced by the property that access names, loom's words kept after it.
pub fn name_the_race(payload: Box<dyn Any + Send>) -> Box<dyn Any + Send> {
    let property = ACCESS.with(|a| a.take());
    match (property, message(payload.as_ref())) {
        (Some(property), Some(loom)) if loom.contains("Causality violation") => {
            Box::new(format!("{property} (loom: {})", loom.trim_end()))
        }
        _ => payload,
    }
}

/// Runs a check that must fail and returns its failure message, so a mutant's test
/// can assert which property broke. Panics if the check passed.
pub fn failure_of(check: impl FnOnce()) -> String {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
    std::panic::set_hook(hook);
    match result {
        Ok(()) => panic!("the checker accepted a mutant"),
        Err(payload) => message(payload.as_ref()).unwrap_or_default(),
    }
}
