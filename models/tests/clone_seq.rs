// SPDX-License-Identifier: GPL-2.0
//! The clone-seq protocol holds in every interleaving loom explores, and each
//! mutant that matters in an environment is caught there.

use forkscale_models::clone_seq::{check, check_reader, Env, Protocol, Reader, Writer, CORRECT};
use forkscale_models::failure_of;

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
fn mutant_without_kill_bump_lets_a_child_escape_the_kill() {
    let mutant = Protocol {
        kill_bump: false,
        ..CORRECT
    };
    for env in [Env::ThreadgroupRwsem, Env::NoRwsem] {
        let why = rejected(mutant, env, Writer::Kill);
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
    // On 6.12 the forking task cannot migrate during the read; other tasks' moves do
    // not change what it reads. The finding the review notes report.
    let mutant = Protocol {
        migrate_bump: false,
        ..CORRECT
    };
    check(mutant, Env::ThreadgroupRwsem, Writer::MigrateAndExit);
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
    // On 6.12 the forking task's own reference keeps its css_set alive during the read.
    let mutant = Protocol {
        inc_not_zero: false,
        ..CORRECT
    };
    check(mutant, Env::ThreadgroupRwsem, Writer::MigrateAndExit);
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
fn pinned_read_has_the_kill_window_of_the_stock_read() {
    // cgroup.kill as the code does it, the walk after the section: a read that sees the new
    // kill_seq before the walk ends, with the child linked after the walk, leaves a child
    // that nothing kills unless the parent's fatal-signal check catches the fork (not
    // modelled). Stock's locked read has that window, and so do the seqcount and the
    // pinned reads: the pinned read adds no window of its own.
    for reader in [Reader::Locked, Reader::Seqcount, Reader::Pinned] {
        let why = failure_of(|| {
            check_reader(reader, CORRECT, Env::ThreadgroupRwsem, Writer::KillThenWalk)
        });
        assert!(why.contains("survived"), "{reader:?}: {why}");
    }
}

#[test]
fn pinned_read_sees_a_kill_mid_section_where_the_seqcount_does_not() {
    // With the walk inside the section (the model's simplification, Writer::Kill) the
    // seqcount and the locked read never return a kill_seq from the middle of a kill; the
    // pinned read can. In the kernel the walk follows the section, so that guarantee of
    // the seqcount is one the kernel does not use (test above).
    check_reader(Reader::Locked, CORRECT, Env::ThreadgroupRwsem, Writer::Kill);
    check(CORRECT, Env::ThreadgroupRwsem, Writer::Kill);
    let why =
        failure_of(|| check_reader(Reader::Pinned, CORRECT, Env::ThreadgroupRwsem, Writer::Kill));
    assert!(why.contains("survived"), "{why}");
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
}
