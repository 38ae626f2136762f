// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a SeqLock of a type that is not `Copy`, whose copies would each run its
//! drop (`FromBytes` and `AsBytes` say nothing about drop glue).

use kernel::prelude::*;
use kernel::sync::new_seqlock;

module! {
    type: Misuse,
    name: "seqlock_of_non_copy",
    license: "GPL",
}

struct Misuse;

#[repr(transparent)]
struct Counted(u64);

impl Drop for Counted {
    fn drop(&mut self) {
        pr_info!("dropped {}\n", self.0);
    }
}

// SAFETY: a `u64` in a transparent wrapper: any bytes are valid and there is no padding.
unsafe impl kernel::transmute::FromBytes for Counted {}
// SAFETY: as above.
unsafe impl kernel::transmute::AsBytes for Counted {}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let _value = KBox::pin_init(new_seqlock!(Counted(0)), GFP_KERNEL)?;
        Ok(Misuse)
    }
}
