// SPDX-License-Identifier: GPL-2.0

//! Must not compile: sharing a SeqLock of a value that may not be sent between threads, which
//! other threads could copy out (`Sync` needs `T: Send`).

use core::marker::PhantomData;
use kernel::prelude::*;
use kernel::sync::{new_seqlock, SeqLock};

module! {
    type: Misuse,
    name: "seqlock_shared_not_send",
    license: "GPL",
}

struct Misuse;

#[repr(transparent)]
#[derive(Clone, Copy)]
struct ThreadBound(u64, PhantomData<*mut u8>);

// SAFETY: a `u64` in a transparent wrapper: any bytes are valid and there is no padding.
unsafe impl kernel::transmute::FromBytes for ThreadBound {}
// SAFETY: as above.
unsafe impl kernel::transmute::AsBytes for ThreadBound {}

fn shared<T: Sync>(_value: &T) {}

fn share(value: &SeqLock<ThreadBound>) {
    shared(value);
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(ThreadBound(0, PhantomData)), GFP_KERNEL)?;
        share(&value);
        Ok(Misuse)
    }
}
