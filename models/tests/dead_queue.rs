// SPDX-License-Identifier: GPL-2.0
//! The exit unlink's lockless flushes keep their properties in every interleaving loom
//! explores, and each mutant of the rules is caught by the property it breaks.

use forkscale_models::dead_queue::{check, Protocol, Racer, CORRECT, FLUSH_MISSED, TIMER_LOST};
use forkscale_models::failure_of;

/// The checker rejects `mutant` against `racer`, by `property`.
fn rejected_by(mutant: Protocol, racer: Racer, property: &str) {
    let why = failure_of(|| check(mutant, racer));
    assert!(why.contains(property), "{why}");
}

#[test]
fn dead_queue_correct_protocol_against_flushes_and_the_timer() {
    check(CORRECT, Racer::Reader);
    check(CORRECT, Racer::Timer);
    check(CORRECT, Racer::TimerSameQueue);
}

#[test]
fn mutant_queueing_without_publishing_the_length_lets_a_flush_miss_the_task() {
    rejected_by(
        Protocol {
            publish_on_push: false,
            ..CORRECT
        },
        Racer::Reader,
        FLUSH_MISSED,
    );
}

#[test]
fn mutant_publishing_the_zero_before_the_unlink_lets_a_flush_miss_the_task() {
    rejected_by(
        Protocol {
            zero_after_unlink: false,
            ..CORRECT
        },
        Racer::Reader,
        FLUSH_MISSED,
    );
}

#[test]
fn mutant_publishing_and_reading_the_length_relaxed_lets_a_flush_miss_the_unlink() {
    rejected_by(
        Protocol {
            acquire_release: false,
            ..CORRECT
        },
        Racer::Reader,
        FLUSH_MISSED,
    );
}

#[test]
fn mutant_flushing_without_the_flush_lock_lets_a_reader_return_before_the_unlink() {
    rejected_by(
        Protocol {
            flush_lock: false,
            ..CORRECT
        },
        Racer::Reader,
        FLUSH_MISSED,
    );
}

#[test]
fn mutant_arming_on_a_plain_test_of_the_queued_work_leaves_a_task_queued_with_no_timer() {
    rejected_by(
        Protocol {
            arm_under_worker_lock: false,
            ..CORRECT
        },
        Racer::Timer,
        TIMER_LOST,
    );
}

/// The worker's lock matters only against the timer: a reader arms nothing.
#[test]
fn mutant_arming_on_a_plain_test_is_harmless_to_readers() {
    check(
        Protocol {
            arm_under_worker_lock: false,
            ..CORRECT
        },
        Racer::Reader,
    );
}

#[test]
fn mutant_flush_leaving_tasks_without_rearming_leaves_a_task_queued_with_no_timer() {
    rejected_by(
        Protocol {
            rearm_after_flush: false,
            ..CORRECT
        },
        Racer::TimerSameQueue,
        TIMER_LOST,
    );
}
