// SPDX-License-Identifier: GPL-2.0
//! Model-checked protocols of forkscale, run by `cargo test` (see tests/).
//!
//! - [`clone_seq`]: the lockless clone-time css_set read against migrations,
//!   `cgroup.kill` and the last put with its RCU-deferred free;
//! - [`clone_switch`]: switching the clone read at run time: the rwlock read's
//!   writer key on and off, a module registering and unregistering;
//! - [`pid_free`]: deferred, batched pid freeing against allocation, exhaustion and
//!   namespace teardown.
//!
//! Each model takes the protocol as a value, so a test can switch one rule off (a
//! mutant) and assert that the checker then finds a failing interleaving.

pub mod clone_seq;
pub mod clone_switch;
pub mod pid_free;

/// Runs a check that must fail and returns its failure message, so a mutant's test
/// can assert which property broke. Panics if the check passed.
pub fn failure_of(check: impl FnOnce()) -> String {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
    std::panic::set_hook(hook);
    match result {
        Ok(()) => panic!("the checker accepted a mutant"),
        Err(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    }
}
