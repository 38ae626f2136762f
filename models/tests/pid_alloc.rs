// SPDX-License-Identifier: GPL-2.0
//! Pid allocation from per-CPU blocks keeps stock's answers in every interleaving loom
//! explores, and each mutant of its rules is caught by the property it breaks.

use forkscale_models::failure_of as failure;
use forkscale_models::pid_alloc::{
    check, check_free, check_last_pid, check_reclaim, Protocol, Racer, CORRECT,
};

#[test]
fn block_allocation_is_correct_against_every_racer() {
    check(CORRECT, Racer::SetTid(0));
    check(CORRECT, Racer::SetTid(1));
    check(CORRECT, Racer::Lookup);
    check(CORRECT, Racer::Exhaustion);
    check_free(CORRECT);
    check_reclaim(CORRECT);
    check_last_pid(CORRECT);
}

#[test]
fn mutant_claiming_by_load_and_store_hands_a_number_out_twice() {
    let proto = Protocol {
        claim_by_cas: false,
        ..CORRECT
    };
    let why = failure(move || check(proto, Racer::SetTid(0)));
    assert!(why.contains("handed to two pids at once"), "{why}");
}

#[test]
fn mutant_set_tid_without_stealing_refuses_a_free_number() {
    let proto = Protocol {
        set_tid_steals: false,
        ..CORRECT
    };
    let why = failure(move || check(proto, Racer::SetTid(1)));
    assert!(why.contains("refused number 1"), "{why}");
}

#[test]
fn mutant_publishing_relaxed_shows_an_uninitialised_pid() {
    let proto = Protocol {
        publish_release: false,
        ..CORRECT
    };
    let why = failure(move || check(proto, Racer::Lookup));
    assert!(why.contains("not yet initialised"), "{why}");
}

#[test]
fn mutant_freeing_without_the_dead_mark_leaves_the_pid_findable() {
    let proto = Protocol {
        free_marks_dead: false,
        ..CORRECT
    };
    let why = failure(move || check_free(proto));
    assert!(why.contains("found the freed pid"), "{why}");
}

#[test]
fn mutant_without_exhaustion_flush_fails_allocation() {
    let proto = Protocol {
        flush_on_exhaustion: false,
        ..CORRECT
    };
    let why = failure(move || check(proto, Racer::Exhaustion));
    assert!(why.contains("failed with a number free"), "{why}");
}

#[test]
fn mutant_without_reclaim_of_dead_slots_fails_allocation() {
    let proto = Protocol {
        reclaim_dead: false,
        ..CORRECT
    };
    let why = failure(move || check_reclaim(proto));
    assert!(why.contains("failed with a number free"), "{why}");
}

#[test]
fn mutant_without_flush_on_ns_last_pid_skips_the_next_number() {
    let proto = Protocol {
        flush_on_last_pid: false,
        ..CORRECT
    };
    let why = failure(move || check_last_pid(proto));
    assert!(why.contains("did not get the next number"), "{why}");
}
