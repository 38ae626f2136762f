// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a SeqLock of a type with invalid bit patterns (a torn copy would be UB).

use kernel::prelude::*;
use kernel::sync::{new_seqlock, SeqLock};

module! {
    type: Misuse,
    name: "seqlock_of_reference",
    license: "GPL",
}

struct Misuse;

fn bump(_value: &SeqLock<u64>) {
    let _ = new_seqlock!(&[0u8][..]);
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(0u64), GFP_KERNEL)?;
        bump(&value);
        Ok(Misuse)
    }
}
