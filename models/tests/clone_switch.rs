// SPDX-License-Identifier: GPL-2.0
//! Switching the clone read at run time is safe in every interleaving loom explores,
//! and each step of the protocol is needed: without it the checker finds the failure.

use forkscale_models::clone_switch::{
    check, Protocol, Switch, CORRECT, MODULE_AFTER_FREE, UNORDERED_READ,
};
use forkscale_models::failure_of;

const ALL: [Switch; 4] = [
    Switch::RwlockOn,
    Switch::RwlockOff,
    Switch::ModuleRegister,
    Switch::ModuleUnregister,
];

#[test]
fn correct_protocol_for_every_switch() {
    for switch in ALL {
        check(CORRECT, switch);
    }
}

#[test]
fn mutant_enter_without_lock_cycle_races_a_move() {
    // A move that decided under css_set_lock, before the key was on, not to take the
    // rwlock is still writing when a fork already relies on the rwlock.
    let mutant = Protocol {
        enter_cycles_lock: false,
        ..CORRECT
    };
    let why = failure_of(|| check(mutant, Switch::RwlockOn));
    assert!(why.contains(UNORDERED_READ), "{why}");
    check(mutant, Switch::RwlockOff);
}

#[test]
fn mutant_without_grace_period_after_switch() {
    let mutant = Protocol {
        grace_period_after_switch: false,
        ..CORRECT
    };
    // The key goes off while a fork is still inside the rwlock read.
    let why = failure_of(|| check(mutant, Switch::RwlockOff));
    assert!(why.contains(UNORDERED_READ), "{why}");
    // A fork still inside the module's read when its memory is freed.
    let why = failure_of(|| check(mutant, Switch::ModuleUnregister));
    assert!(why.contains(MODULE_AFTER_FREE), "{why}");
}

#[test]
fn mutant_without_grace_period_before_module() {
    // A fork that loaded the built-in's ops reaches the module's function.
    let mutant = Protocol {
        grace_period_before_module: false,
        ..CORRECT
    };
    let why = failure_of(|| check(mutant, Switch::ModuleRegister));
    assert!(why.contains("passed other ops"), "{why}");
}
