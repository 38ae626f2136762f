// SPDX-License-Identifier: GPL-2.0
//! Pid allocation from per-CPU blocks keeps stock's answers in every interleaving loom
//! explores, and each mutant of its rules is caught by the property it breaks.

use forkscale_models::failure_of as failure;
use forkscale_models::pid_alloc::{
    check_exhaustion, check_free, check_give_up, check_last_pid, check_lookup, check_release,
    check_set_tid, check_set_tid_freed, check_stale_block, check_straddle, check_wrap, Protocol,
    Wrap, CORRECT,
};

#[test]
fn block_allocation_keeps_stocks_answers() {
    check_set_tid(CORRECT, 0);
    check_set_tid(CORRECT, 1);
    check_set_tid_freed(CORRECT);
    check_lookup(CORRECT);
    check_free(CORRECT);
    check_exhaustion(CORRECT);
    check_last_pid(CORRECT, 0);
    check_last_pid(CORRECT, 1);
    check_stale_block(CORRECT);
    check_wrap(CORRECT);
    check_straddle(CORRECT);
    check_release(CORRECT);
    check_give_up(CORRECT);
}

#[test]
fn mutant_claiming_by_load_and_store_hands_a_number_out_twice() {
    let proto = Protocol {
        claim_by_cas: false,
        ..CORRECT
    };
    let why = failure(move || check_set_tid(proto, 0));
    assert!(why.contains("handed to two pids at once"), "{why}");
}

#[test]
fn mutant_set_tid_without_stealing_refuses_a_free_number() {
    let proto = Protocol {
        set_tid_steals: false,
        ..CORRECT
    };
    let why = failure(move || check_set_tid(proto, 1));
    assert!(why.contains("refused number 1"), "{why}");
}

#[test]
fn mutant_publishing_relaxed_shows_an_uninitialised_pid() {
    let proto = Protocol {
        publish_release: false,
        ..CORRECT
    };
    let why = failure(move || check_lookup(proto));
    assert!(why.contains("not yet initialised"), "{why}");
}

#[test]
fn mutant_free_keeping_the_entry_leaves_the_pid_findable() {
    let proto = Protocol {
        free_clears_entry: false,
        ..CORRECT
    };
    let why = failure(move || check_free(proto));
    assert!(why.contains("found the freed pid"), "{why}");
}

#[test]
fn mutant_free_keeping_the_entry_refuses_set_tid_of_the_freed_number() {
    let proto = Protocol {
        free_clears_entry: false,
        ..CORRECT
    };
    let why = failure(move || check_set_tid_freed(proto));
    assert!(why.contains("refused number 1"), "{why}");
}

#[test]
fn mutant_wrapping_past_waiting_numbers_fails_allocation_at_exhaustion() {
    let proto = Protocol {
        wrap: Wrap::Plain,
        ..CORRECT
    };
    let why = failure(move || check_exhaustion(proto));
    assert!(why.contains("failed with a number free"), "{why}");
}

#[test]
fn mutant_without_flush_on_ns_last_pid_skips_the_next_number() {
    let proto = Protocol {
        flush_on_last_pid: false,
        ..CORRECT
    };
    let why = failure(move || check_last_pid(proto, 1));
    assert!(why.contains("did not get the next number"), "{why}");
}

#[test]
fn mutant_block_without_its_cpus_hold_is_used_after_free() {
    let proto = Protocol {
        cache_holds_block: false,
        ..CORRECT
    };
    let why = failure(move || check_stale_block(proto));
    assert!(why.contains("used a block that was freed"), "{why}");
}

#[test]
fn mutant_wrapping_past_waiting_numbers_reuses_a_freed_one_before_stock() {
    let proto = Protocol {
        wrap: Wrap::Plain,
        ..CORRECT
    };
    let why = failure(move || check_wrap(proto));
    assert!(why.contains("while number 1 waited"), "{why}");
}

#[test]
fn mutant_restarting_at_the_lowest_waiting_number_hands_a_freed_one_out_again() {
    let proto = Protocol {
        wrap: Wrap::RestartAtLowest,
        ..CORRECT
    };
    let why = failure(move || check_wrap(proto));
    assert!(why.contains("number 2 was handed out again"), "{why}");
}

#[test]
fn mutant_releasing_the_last_reference_unlocked_frees_a_block_under_a_kill_walk() {
    let proto = Protocol {
        last_put_locked: false,
        ..CORRECT
    };
    let why = failure(move || check_release(proto));
    assert!(
        why.contains("kill walk touched a block that was freed"),
        "{why}"
    );
}

#[test]
fn mutant_reserving_across_the_wrap_keeps_a_number_waiting_past_it() {
    let proto = Protocol {
        reserve_stops_at_wrap: false,
        ..CORRECT
    };
    let why = failure(move || check_straddle(proto));
    assert!(why.contains("while number 3 waited"), "{why}");
}

#[test]
fn mutant_release_giving_numbers_back_wraps_past_them() {
    let proto = Protocol {
        park_on_release: false,
        ..CORRECT
    };
    let why = failure(move || check_give_up(proto));
    assert!(why.contains("never handed out"), "{why}");
}

#[test]
fn mutant_release_losing_its_parked_count_fails_allocation_with_a_number_parked() {
    let proto = Protocol {
        count_parked: false,
        ..CORRECT
    };
    let why = failure(move || check_give_up(proto));
    assert!(why.contains("failed with a number free"), "{why}");
}
