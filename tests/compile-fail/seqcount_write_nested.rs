// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a write section nested in another, which would make the count even mid-write.

use kernel::prelude::*;
use kernel::sync::{new_seqlock, SeqLock};

module! {
    type: Misuse,
    name: "seqcount_write_nested",
    license: "GPL",
}

struct Misuse;

fn bump(value: &SeqLock<u64>) {
    let seq = value.seqcount();
    let mut locked = seq.lock();
    locked.write(|| locked.write(|| ()));
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(0u64), GFP_KERNEL)?;
        bump(&value);
        Ok(Misuse)
    }
}
