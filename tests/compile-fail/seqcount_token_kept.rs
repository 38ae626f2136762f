// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a read section opened by hand, whose snapshot could be checked against
//! another counter. Read sections exist only inside `read` and `try_read`.

use kernel::prelude::*;
use kernel::sync::SeqCount;

module! {
    type: Misuse,
    name: "seqcount_token_kept",
    license: "GPL",
}

struct Misuse;

#[allow(dead_code)]
fn peek(seq: &SeqCount) -> u32 {
    seq.begin()
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Misuse)
    }
}
