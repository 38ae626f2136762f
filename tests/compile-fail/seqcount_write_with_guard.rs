// SPDX-License-Identifier: GPL-2.0

//! Control for the compile-fail test: a seqcount write that passes the lock's guard builds.

use kernel::prelude::*;
use kernel::sync::{new_seqlock, SeqLock};

module! {
    type: Control,
    name: "seqcount_write_with_guard",
    license: "GPL",
}

struct Control;

fn bump(value: &SeqLock<u64>) -> Result {
    let seq = value.seqcount();
    let guard = seq.lock().lock();
    seq.write(&guard, || ())
}

impl kernel::Module for Control {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(0u64), GFP_KERNEL)?;
        bump(&value)?;
        Ok(Control)
    }
}
