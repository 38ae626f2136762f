// SPDX-License-Identifier: GPL-2.0

//! Builds: the control of the seqlock compile-fail tests, a value replaced and read.

use kernel::prelude::*;
use kernel::sync::{new_seqlock, SeqLock};

module! {
    type: Misuse,
    name: "seqlock_update",
    license: "GPL",
}

struct Misuse;

/// A type of one's own, as the misuses next to this control define theirs.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct Plain(u64);

// SAFETY: a `u64` in a transparent wrapper: any bytes are valid and there is no padding.
unsafe impl kernel::transmute::FromBytes for Plain {}
// SAFETY: as above.
unsafe impl kernel::transmute::AsBytes for Plain {}

fn shared<T: Sync>(_value: &T) {}

fn bump(value: &SeqLock<u64>) {
    value.update(|v| v.wrapping_add(1));
    let read = value.read();
    let bounded = value.try_read(4).unwrap_or_else(|| value.read_locked());
    pr_info!("{} {}\n", read, bounded);
}

impl kernel::Module for Misuse {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let value = KBox::pin_init(new_seqlock!(0u64), GFP_KERNEL)?;
        bump(&value);
        let plain = KBox::pin_init(new_seqlock!(Plain(1)), GFP_KERNEL)?;
        plain.update(|p| Plain(p.0.wrapping_add(1)));
        shared(&*plain);
        Ok(Misuse)
    }
}
