// SPDX-License-Identifier: GPL-2.0
//! The clone-seq protocol holds in every interleaving loom explores, and each
//! mutant that matters in an environment is caught there.

use forkscale_models::clone_seq::{check, Env, Protocol, Writer, CORRECT};
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
