// SPDX-License-Identifier: GPL-2.0
//! The clone-seq protocol holds in every interleaving loom explores, and each
//! mutant that matters in an environment is caught there.

use forkscale_models::clone_seq::{
    check, check_reader, last_trace, Env, Protocol, Reader, Writer, CORRECT,
};
use forkscale_models::failure_of;
use std::path::Path;

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

/// The checker rejects `proto`; returns which property failed.
fn rejected(proto: Protocol, env: Env, writer: Writer) -> String {
    failure_of(|| check(proto, env, writer))
}

#[test]
fn correct_protocol_against_kill() {
    check(CORRECT, Env::ThreadgroupRwsem, Writer::Kill);
    check(CORRECT, Env::NoRwsem, Writer::Kill);
}

#[test]
fn correct_protocol_against_migration_and_last_put() {
    check(CORRECT, Env::ThreadgroupRwsem, Writer::MigrateAndExit);
    check(CORRECT, Env::NoRwsem, Writer::MigrateAndExit);
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
    for env in [Env::ThreadgroupRwsem, Env::NoRwsem] {
        check(mutant, env, Writer::Kill);
        let why = rejected(mutant, env, Writer::KillThenWalk);
        assert!(why.contains("survived"), "{env:?}: {why}");
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
    let why = rejected(mutant, Env::NoRwsem, Writer::MigrateAndExit);
    assert!(why.contains("spanned a migration"), "{why}");
}

#[test]
fn mutant_without_migration_bump_is_harmless_under_the_threadgroup_rwsem() {
    // On 7.3 the forking task cannot migrate during the read; other tasks' moves do
    // not change what it reads. The finding the review notes report.
    let mutant = Protocol {
        migrate_bump: false,
        ..CORRECT
    };
    check(mutant, Env::ThreadgroupRwsem, Writer::MigrateAndExit);
    check(mutant, Env::ThreadgroupRwsem, Writer::Kill);
}

#[test]
fn mutant_with_plain_increment_revives_a_dying_css_set() {
    let mutant = Protocol {
        inc_not_zero: false,
        ..CORRECT
    };
    let why = rejected(mutant, Env::NoRwsem, Writer::MigrateAndExit);
    assert!(
        why.contains("use after free") || why.contains("freed twice") || why.contains("Causality"),
        "{why}"
    );
}

#[test]
fn mutant_with_plain_increment_is_harmless_under_the_threadgroup_rwsem() {
    // On 7.3 the forking task's own reference keeps its css_set alive during the read.
    let mutant = Protocol {
        inc_not_zero: false,
        ..CORRECT
    };
    check(mutant, Env::ThreadgroupRwsem, Writer::MigrateAndExit);
    check(mutant, Env::ThreadgroupRwsem, Writer::Kill);
}

#[test]
fn pinned_read_is_correct_against_moves_under_the_threadgroup_rwsem() {
    // The patch for merging: no counter, no lock, a plain increment. Other tasks' moves
    // and the last put of their css_set change nothing it reads.
    check_reader(
        Reader::Pinned,
        CORRECT,
        Env::ThreadgroupRwsem,
        Writer::MigrateAndExit,
    );
}

#[test]
fn every_read_has_the_kill_window_of_7_3() {
    // cgroup.kill as 7.3 does it: the walk after the section. The kill's section, then a
    // fork's read of the new kill_seq and its fatal-signal check, then the walk, which
    // signals the parent too late and finishes before cgroup_post_fork() links the child:
    // the child survives. Stock's locked read has that window, and so do the seqcount and
    // the pinned reads; selftests/forkscale/kill_window.c reproduces it in the guest.
    for reader in [Reader::Locked, Reader::Seqcount, Reader::Pinned] {
        let why = failure_of(|| {
            check_reader(reader, CORRECT, Env::ThreadgroupRwsem, Writer::KillThenWalk)
        });
        assert!(why.contains("survived"), "{reader:?}: {why}");
    }
}

#[test]
fn a_walk_inside_the_section_closes_the_window_for_every_read() {
    // If the walk, parent included, were done before any fork could read the new
    // kill_seq, every read would be right, the pinned one too: a read inside the section
    // meets a signalled parent at its fatal-signal check.
    for reader in [Reader::Locked, Reader::Seqcount, Reader::Pinned] {
        check_reader(reader, CORRECT, Env::ThreadgroupRwsem, Writer::Kill);
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
        let why = rejected(mutant, Env::NoRwsem, Writer::MigrateAndExit);
        assert!(
            why.contains("spanned a migration")
                || why.contains("use after free")
                || why.contains("Causality"),
            "{mutant:?}: {why}"
        );
    }
}

#[test]
fn barrier_mutants_are_harmless_under_the_threadgroup_rwsem() {
    // What the seqcount's barriers order is the forking task's own move, which the rwsem
    // already excludes.
    for mutant in BARRIER_MUTANTS {
        check(mutant, Env::ThreadgroupRwsem, Writer::MigrateAndExit);
        check(mutant, Env::ThreadgroupRwsem, Writer::Kill);
    }
}

#[test]
fn pinned_read_without_the_rwsem_is_rejected_where_the_seqcount_passes() {
    // What each design depends on: take the rwsem away from fork and the forking task can
    // move during the read. The seqcount read still passes (the test above it); the
    // pinned read revives or spans a move of its own css_set.
    check(CORRECT, Env::NoRwsem, Writer::MigrateAndExit);
    let why = failure_of(|| {
        check_reader(
            Reader::Pinned,
            CORRECT,
            Env::NoRwsem,
            Writer::MigrateAndExit,
        )
    });
    assert!(
        why.contains("use after free")
            || why.contains("freed twice")
            || why.contains("spanned a migration")
            || why.contains("Causality"),
        "{why}"
    );
    // The trace shows how: the forking task moves off the css_set the read loaded while
    // the read is still open, and nothing in the pinned read notices.
    let trace = failing_trace("pinned_read_without_the_rwsem", &why);
    assert_steps_in_order(
        &trace,
        &why,
        &[
            "pinned read: current's css_set A",
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
            Env::ThreadgroupRwsem,
            Writer::KillThenWalk,
        )
    });
    assert!(why.contains("survived"), "{why}");
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
