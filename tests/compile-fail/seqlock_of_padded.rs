// SPDX-License-Identifier: GPL-2.0

//! Must not compile: a SeqLock of a type with padding, whose atomic word copies would read
//! uninitialised bytes (`FromBytes` alone is not enough, it needs `AsBytes` too).

use kernel::prelude::*;
use kernel::sync::new_seqlock;

module! {
    type: Misuse,
    name: "seqlock_of_padded",
    license: "GPL",
}

struct Misuse;

#[repr(C)]
#[derive(Clone, Copy)]
struct Padded(u8, u32);

// SAFETY: any bytes are a valid `Padded`: both fields are integers.
unsafe impl kernel::transmute::FromBytes for Padded {}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let _value = KBox::pin_init(new_seqlock!(Padded(0, 0)), GFP_KERNEL)?;
        Ok(Misuse)
    }
}
