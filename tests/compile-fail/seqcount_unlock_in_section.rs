// SPDX-License-Identifier: GPL-2.0

//! Must not compile: the lock released while a write section is open.

use kernel::prelude::*;
use kernel::sync::{new_seqlock, SeqLock};

module! {
    type: Misuse,
    name: "seqcount_unlock_in_section",
    license: "GPL",
}

struct Misuse;

fn bump(value: &SeqLock<u64>) {
    let seq = value.seqcount();
    let mut locked = seq.lock();
    locked.write(|| drop(locked));
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(0u64), GFP_KERNEL)?;
        bump(&value);
        Ok(Misuse)
    }
}
