// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a writer given a reference into the value, which readers copy
//! concurrently (a data race). `update` passes the value and takes the new one.

use kernel::prelude::*;
use kernel::sync::{new_seqlock, SeqLock};

module! {
    type: Misuse,
    name: "seqlock_write_by_reference",
    license: "GPL",
}

struct Misuse;

fn bump(value: &SeqLock<u64>) {
    value.update(|v: &mut u64| *v += 1);
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(0u64), GFP_KERNEL)?;
        bump(&value);
        Ok(Misuse)
    }
}
