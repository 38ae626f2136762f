// SPDX-License-Identifier: GPL-2.0
//! Deferred pid freeing keeps its bounds in every interleaving loom explores, and each
//! mutant of the flushing rules is caught.

use forkscale_models::failure_of;
use forkscale_models::pid_free::{check, Protocol, Racer, CORRECT};

fn failure(proto: Protocol, racer: Racer) -> String {
    failure_of(|| check(proto, racer))
}

#[test]
fn correct_protocol_against_allocation_and_teardown() {
    check(CORRECT, Racer::Alloc);
    check(CORRECT, Racer::Teardown);
}

#[test]
fn mutant_flushing_only_the_local_cpu_fails_allocation() {
    let why = failure(
        Protocol {
            flush_all_cpus: false,
            ..CORRECT
        },
        Racer::Alloc,
    );
    assert!(why.contains("alloc_pid() failed"), "{why}");
}

#[test]
fn mutant_without_retry_fails_allocation() {
    let why = failure(
        Protocol {
            retry_after_flush: false,
            ..CORRECT
        },
        Racer::Alloc,
    );
    assert!(why.contains("alloc_pid() failed"), "{why}");
}

#[test]
fn mutant_without_teardown_flush_leaves_pids_queued() {
    let why = failure(
        Protocol {
            flush_on_teardown: false,
            ..CORRECT
        },
        Racer::Teardown,
    );
    assert!(why.contains("still queued"), "{why}");
}
