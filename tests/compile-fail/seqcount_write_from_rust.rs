// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a write section of a counter that C owns and writes under its own lock.

use kernel::prelude::*;
use kernel::sync::SeqCount;

module! {
    type: Misuse,
    name: "seqcount_write_from_rust",
    license: "GPL",
}

struct Misuse;

#[allow(dead_code)]
fn bump(seq: &SeqCount) {
    seq.write(|| ());
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Misuse)
    }
}
