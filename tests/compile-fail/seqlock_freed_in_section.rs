// SPDX-License-Identifier: GPL-2.0

//! Must not compile: the seqlock, and its lock, freed while a write section is open.

use kernel::prelude::*;
use kernel::sync::new_seqlock;

module! {
    type: Misuse,
    name: "seqlock_freed_in_section",
    license: "GPL",
}

struct Misuse;

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(0u64), GFP_KERNEL)?;
        value.update(|v| {
            drop(value);
            v
        });
        Ok(Misuse)
    }
}
