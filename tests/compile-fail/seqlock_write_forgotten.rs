// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a write section kept as a value, which could be forgotten with the lock
//! released, leaving the count odd and readers validating torn copies. Only `update` writes.

use kernel::prelude::*;
use kernel::sync::{new_seqlock, SeqLock};

module! {
    type: Misuse,
    name: "seqlock_write_forgotten",
    license: "GPL",
}

struct Misuse;

fn bump(value: &SeqLock<u64>) {
    core::mem::forget(value.write());
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(0u64), GFP_KERNEL)?;
        bump(&value);
        Ok(Misuse)
    }
}
