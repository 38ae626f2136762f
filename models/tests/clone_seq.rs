// SPDX-License-Identifier: GPL-2.0
//! The clone-seq protocol holds in every interleaving loom explores, and each
//! mutant that matters in an environment is caught there, by the property it breaks.

use forkscale_models::clone_seq::{
    check, check_clone_into, check_reader, last_trace, Env, Protocol, Reader, Writer, CORRECT,
    FAVORDYNMODS_RACE, UNORDERED_FREE,
};
use forkscale_models::failure_of;
use std::path::Path;

const READERS: [Reader; 3] = [Reader::Locked, Reader::Seqcount, Reader::Pinned];

/// The properties a mutant's test names.
const SURVIVED: &str = "a child forked during cgroup.kill survived";
const SURVIVED_INTO: &str = "a child cloned into the killed cgroup survived";
const SPANNED: &str = "a lockless read spanned a migration";

/// The interleaving of the check that just failed, also written to
/// `$FORKSCALE_MODEL_TRACES/<name>.txt` when that is set (tests/host/models.sh prints it).
fn failing_trace(name: &str, why: &str) -> Vec<String> {
    let trace = last_trace();
    if let Some(dir) = std::env::var_os("FORKSCALE_MODEL_TRACES") {
        let text = format!("{why}\n{}\n", trace.join("\n"));
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(Path::new(&dir).join(format!("{name}.txt")), text));
        assert!(
            written.is_ok(),
            "cannot write the trace of {name}: {written:?}"
        );
    }
    trace
}

/// Each of `steps` is in `trace`, in this order.
fn assert_steps_in_order(trace: &[String], why: &str, steps: &[&str]) {
    let at: Vec<_> = steps
        .iter()
        .map(|what| trace.iter().position(|s| s.contains(what)))
        .collect();
    assert!(
        at.iter().all(Option::is_some) && at.windows(2).all(|w| w[0] < w[1]),
        "{why}\n{}",
        trace.join("\n")
    );
}

/// `why` is the failure of `property`.
fn assert_property(why: &str, property: &str, what: impl std::fmt::Debug) {
    assert!(
        why.contains(property),
        "{what:?}: expected {property:?}, got: {why}"
    );
}

/// The checker rejects `check` with `property`.
fn rejected_with(property: &str, what: impl std::fmt::Debug, check: impl FnOnce()) {
    let why = failure_of(check);
    assert_property(&why, property, what);
}

#[test]
fn correct_protocol_against_kill() {
    for env in [Env::GlobalRwsem, Env::PerThreadgroupRwsem, Env::NoRwsem] {
        check(CORRECT, env, Writer::Kill);
    }
}

#[test]
fn correct_protocol_against_migration_and_last_put() {
    // The seqcount read against every move, under each rwsem mode and without one.
    for env in [Env::GlobalRwsem, Env::PerThreadgroupRwsem, Env::NoRwsem] {
        check(CORRECT, env, Writer::MoveOtherAndExit);
        check(CORRECT, env, Writer::MoveForker);
    }
}

#[test]
fn mutant_without_kill_bump_changes_no_outcome() {
    // The kill bump keeps a lockless read from returning a kill_seq from inside the kill's
    // write section. No outcome depends on it: a read before the section is caught at
    // cgroup_post_fork(), and a read after it is caught by the fatal-signal check once the
    // walk has signalled the parent, or not at all (the window below), with or without
    // the bump.
    let mutant = Protocol {
        kill_bump: false,
        ..CORRECT
    };
    for env in [Env::PerThreadgroupRwsem, Env::NoRwsem] {
        check(mutant, env, Writer::Kill);
        rejected_with(SURVIVED, env, || check(mutant, env, Writer::KillThenWalk));
    }
}

#[test]
fn mutant_without_migration_bump_tears_the_snapshot() {
    // Bumping on exit but not on migrate: a lockless read spans a move of the forking
    // task. Only possible where fork does not hold cgroup_threadgroup_rwsem.
    let mutant = Protocol {
        migrate_bump: false,
        ..CORRECT
    };
    rejected_with(SPANNED, mutant, || {
        check(mutant, Env::NoRwsem, Writer::MoveForker)
    });
}

#[test]
fn mutant_without_migration_bump_is_harmless_under_the_threadgroup_rwsem() {
    // On 7.3 the forking task cannot migrate during the read; another process's moves,
    // which the per-threadgroup mode lets overlap the read, do not change what it
    // reads. The finding the review notes report.
    let mutant = Protocol {
        migrate_bump: false,
        ..CORRECT
    };
    for writer in [Writer::MoveOtherAndExit, Writer::MoveForker, Writer::Kill] {
        check(mutant, Env::PerThreadgroupRwsem, writer);
    }
}

#[test]
fn mutant_with_plain_increment_revives_a_dying_css_set() {
    // The read revives the css_set the forking task's move has just put to zero, and its
    // own put after the failed retry frees it a second time, unordered with the first
    // (loom's data race, named: the free, whose unordered other access is here a free).
    let mutant = Protocol {
        inc_not_zero: false,
        ..CORRECT
    };
    rejected_with(UNORDERED_FREE[0], mutant, || {
        check(mutant, Env::NoRwsem, Writer::MoveForker)
    });
}

#[test]
fn mutant_with_plain_increment_is_harmless_under_the_threadgroup_rwsem() {
    // On 7.3 the forking task's own reference keeps its css_set alive during the read.
    let mutant = Protocol {
        inc_not_zero: false,
        ..CORRECT
    };
    for writer in [Writer::MoveOtherAndExit, Writer::MoveForker, Writer::Kill] {
        check(mutant, Env::PerThreadgroupRwsem, writer);
    }
}

#[test]
fn pinned_read_is_correct_against_moves_under_the_threadgroup_rwsem() {
    // The patch for merging: no counter, no lock, a plain increment. The forking task's
    // own move waits for the fork in either mode; another process's move and the last
    // put of its css_set change nothing it reads.
    for env in [Env::GlobalRwsem, Env::PerThreadgroupRwsem] {
        for writer in [Writer::MoveOtherAndExit, Writer::MoveForker] {
            check_reader(Reader::Pinned, CORRECT, env, writer);
        }
    }
}

#[test]
fn every_read_is_correct_while_favordynmods_is_switched_on() {
    // A third thread turns the per-threadgroup mode on during the fork. A fork that read
    // the flag off holds only the global rwsem, which the switch-on waits for; a move
    // reads the flag without that rwsem, and either value it reads excludes the fork. The
    // flag's accesses are marked (Relaxed), so that loom lets the move read either value
    // where 7.3's plain read races the write (the next test): the race is harmless.
    for reader in READERS {
        for writer in [Writer::MoveForker, Writer::MoveOtherAndExit] {
            check_reader(reader, CORRECT, Env::SwitchOn, writer);
        }
    }
}

#[test]
fn favordynmods_as_7_3_accesses_it_is_a_data_race_of_a_move_and_the_switch_on() {
    // 7.3 reads and writes cgroup_enable_per_threadgroup_rwsem plainly. A move by pid reads
    // it under cgroup_mutex alone; the switch-on writes it under the global rwsem's write
    // side alone: nothing orders the two, and loom reports the race. A fork reads it under
    // the global rwsem's read side, ordered with the write: against a kill, with no move,
    // there is no race, nor where the flag does not change.
    let as_7_3 = Protocol {
        favordynmods_marked: false,
        ..CORRECT
    };
    for reader in READERS {
        for writer in [Writer::MoveForker, Writer::MoveOtherAndExit] {
            let why = failure_of(|| check_reader(reader, as_7_3, Env::SwitchOn, writer));
            assert_property(&why, FAVORDYNMODS_RACE, (reader, writer));
            // Loom's first race: the switch-on, then the move's read under cgroup_mutex.
            let trace = last_trace();
            assert_steps_in_order(
                &trace,
                &why,
                &["favordynmods on", "move: cgroup_mutex taken"],
            );
            assert!(trace
                .last()
                .is_some_and(|s| s.ends_with("move: cgroup_mutex taken")));
            for env in [Env::GlobalRwsem, Env::PerThreadgroupRwsem] {
                check_reader(reader, as_7_3, env, writer);
            }
        }
        check_reader(reader, as_7_3, Env::SwitchOn, Writer::Kill);
    }
}

#[test]
fn mutant_switch_on_without_the_write_lock_lets_a_move_into_the_pinned_read() {
    // The flag set without the global rwsem's write side: a fork that read it off holds
    // the global rwsem only, and a move that reads it on takes only the forking process's
    // rwsem, which the fork does not hold. The seqcount read sees the move and retries.
    let mutant = Protocol {
        switch_on_excludes_forks: false,
        ..CORRECT
    };
    check(mutant, Env::SwitchOn, Writer::MoveForker);
    let why =
        failure_of(|| check_reader(Reader::Pinned, mutant, Env::SwitchOn, Writer::MoveForker));
    assert_property(&why, SPANNED, mutant);
    assert_steps_in_order(
        &last_trace(),
        &why,
        &[
            "threadgroup_change_begin(): global rwsem only, favordynmods off",
            "pinned read: current's css_set A",
            "favordynmods on",
            "move: the forking task's process rwsem for writing",
            "forking task moved A -> B",
            "cgroup_post_fork()",
        ],
    );
}

#[test]
fn mutant_move_locking_the_other_process_lets_it_into_the_pinned_read() {
    // A move in the per-threadgroup mode that write-locks another process's rwsem than
    // the moved one's does not wait for the fork. The seqcount read retries.
    let mutant = Protocol {
        move_locks_its_threadgroup: false,
        ..CORRECT
    };
    check(mutant, Env::PerThreadgroupRwsem, Writer::MoveForker);
    let why = failure_of(|| {
        check_reader(
            Reader::Pinned,
            mutant,
            Env::PerThreadgroupRwsem,
            Writer::MoveForker,
        )
    });
    assert_property(&why, SPANNED, mutant);
    assert_steps_in_order(
        &last_trace(),
        &why,
        &[
            "threadgroup_change_begin(): global rwsem and own process's",
            "pinned read: current's css_set A",
            "move: the other task's process rwsem for writing",
            "forking task moved A -> B",
            "cgroup_post_fork()",
        ],
    );
}

#[test]
fn every_read_has_the_kill_window_of_7_3() {
    // cgroup.kill as 7.3 does it: the walk after the section. The kill's section, then a
    // fork's read of the new kill_seq and its fatal-signal check, then the walk, which
    // signals the parent too late and finishes before cgroup_post_fork() links the child:
    // the child survives. Stock's locked read has that window, and so do the seqcount and
    // the pinned reads; selftests/forkscale/kill_window.c reproduces it in the guest.
    for reader in READERS {
        rejected_with(SURVIVED, reader, || {
            check_reader(
                reader,
                CORRECT,
                Env::PerThreadgroupRwsem,
                Writer::KillThenWalk,
            )
        });
    }
}

#[test]
fn a_walk_inside_the_section_closes_the_window_for_every_read() {
    // If the walk, parent included, were done before any fork could read the new
    // kill_seq, every read would be right, the pinned one too: a read inside the section
    // meets a signalled parent at its fatal-signal check.
    for reader in READERS {
        check_reader(reader, CORRECT, Env::PerThreadgroupRwsem, Writer::Kill);
    }
}

#[test]
fn a_clone_into_child_survives_only_a_kill_that_finished_before_its_read() {
    // CLONE_INTO_CGROUP reads the target's kill_seq under cgroup_mutex, which the kill
    // holds from its section to the end of its walk: no window, for any read of
    // current's css_set, with 7.3's kill or the other.
    for reader in READERS {
        for writer in [Writer::KillThenWalk, Writer::Kill] {
            check_clone_into(reader, CORRECT, Env::PerThreadgroupRwsem, writer);
        }
    }
}

#[test]
fn mutant_kill_without_cgroup_mutex_over_its_walk_lets_a_clone_into_child_survive() {
    // The kill releases cgroup_mutex after its section: a CLONE_INTO_CGROUP fork reads
    // the new kill_seq with nothing ordering the walk before that read, and the walk
    // finds no child to kill. The first such execution loom meets runs the walk after the
    // fork's read with the locked read, and before it, unordered with it, with the others.
    let mutant = Protocol {
        kill_mutex_over_walk: false,
        ..CORRECT
    };
    for reader in READERS {
        let why = failure_of(|| {
            check_clone_into(
                reader,
                mutant,
                Env::PerThreadgroupRwsem,
                Writer::KillThenWalk,
            )
        });
        assert_property(&why, SURVIVED_INTO, reader);
        let trace = last_trace();
        for read_or_walk in [
            "CLONE_INTO_CGROUP: child's css_set A, target's kill_seq 1",
            "kill's walk: parent not a member, child not in the killed cgroup yet",
        ] {
            assert_steps_in_order(
                &trace,
                &why,
                &[
                    "kill's section: kill_seq -> 1",
                    "kill: cgroup_mutex released before the walk",
                    read_or_walk,
                    "cgroup_post_fork(): child linked into css_set A, kill_seq 1",
                ],
            );
        }
    }
}

#[test]
fn mutant_clone_into_without_cgroup_mutex_lets_its_child_survive() {
    // A CLONE_INTO_CGROUP fork that takes no cgroup_mutex reads the target's kill_seq
    // whenever it likes: after the kill's section, with the walk not ordered before it,
    // and the walk finds no child. With either kill.
    let mutant = Protocol {
        into_takes_mutex: false,
        ..CORRECT
    };
    for reader in READERS {
        for writer in [Writer::KillThenWalk, Writer::Kill] {
            rejected_with(SURVIVED_INTO, (reader, writer), || {
                check_clone_into(reader, mutant, Env::PerThreadgroupRwsem, writer)
            });
        }
    }
}

#[test]
fn mutant_clone_into_releasing_cgroup_mutex_after_its_read_is_harmless_to_kill() {
    // What cgroup_mutex gives a CLONE_INTO_CGROUP fork against cgroup.kill is a read of
    // kill_seq outside the kill: a kill that starts after the read is caught by
    // cgroup_post_fork()'s comparison or by the walk, as for any fork. With either kill.
    let mutant = Protocol {
        into_mutex_to_post_fork: false,
        ..CORRECT
    };
    for reader in READERS {
        for writer in [Writer::KillThenWalk, Writer::Kill] {
            check_clone_into(reader, mutant, Env::PerThreadgroupRwsem, writer);
        }
    }
}

/// The seqcount without its `smp_wmb()`, and without its `smp_rmb()`.
const BARRIER_MUTANTS: [Protocol; 2] = [
    Protocol {
        writer_wmb: false,
        ..CORRECT
    },
    Protocol {
        reader_rmb: false,
        ..CORRECT
    },
];

#[test]
fn barrier_mutants_are_rejected_where_the_forking_task_can_move() {
    for mutant in BARRIER_MUTANTS {
        rejected_with(SPANNED, mutant, || {
            check(mutant, Env::NoRwsem, Writer::MoveForker)
        });
    }
}

#[test]
fn barrier_mutants_are_harmless_under_the_threadgroup_rwsem() {
    // What the seqcount's barriers order is the forking task's own move, which the rwsem
    // already excludes.
    for mutant in BARRIER_MUTANTS {
        for writer in [Writer::MoveOtherAndExit, Writer::MoveForker, Writer::Kill] {
            check(mutant, Env::PerThreadgroupRwsem, writer);
        }
    }
}

#[test]
fn pinned_read_without_the_rwsem_is_rejected_where_the_seqcount_passes() {
    // What each design depends on: take the rwsem away from fork and the forking task can
    // move during the read. The seqcount read still passes; the pinned read spans a move
    // of its own css_set.
    check(CORRECT, Env::NoRwsem, Writer::MoveForker);
    let why =
        failure_of(|| check_reader(Reader::Pinned, CORRECT, Env::NoRwsem, Writer::MoveForker));
    assert_property(&why, SPANNED, Reader::Pinned);
    // The trace shows how: the forking task moves off the css_set the read loaded while
    // the read is still open, and nothing in the pinned read notices.
    let trace = failing_trace("pinned_read_without_the_rwsem", &why);
    assert_steps_in_order(
        &trace,
        &why,
        &[
            "pinned read: current's css_set A",
            "move: the global rwsem for writing",
            "forking task moved A -> B",
            "cgroup_post_fork()",
        ],
    );
}

#[test]
fn a_failed_kill_check_comes_with_its_interleaving() {
    // Loom is deterministic (and pinned by Cargo.lock): the first failing execution,
    // the one traced, is the same in every run.
    // 7.3's window, as every_read_has_the_kill_window_of_7_3 finds it: the kill's section,
    // then the fork's read of the new kill_seq and its fatal-signal check, then the walk,
    // with the child not linked yet.
    let why = failure_of(|| {
        check_reader(
            Reader::Locked,
            CORRECT,
            Env::PerThreadgroupRwsem,
            Writer::KillThenWalk,
        )
    });
    assert_property(&why, SURVIVED, Reader::Locked);
    let trace = failing_trace("kill_window_of_7_3", &why);
    assert_steps_in_order(
        &trace,
        &why,
        &[
            "kill's section: kill_seq -> 1",
            "locked read: css_set A, kill_seq 1",
            "fatal_signal_pending(): false",
            "kill's walk: parent signalled, child not in the killed cgroup yet",
            "cgroup_post_fork(): child linked into css_set A, kill_seq 1",
        ],
    );
}
