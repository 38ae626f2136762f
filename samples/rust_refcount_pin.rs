// SPDX-License-Identifier: GPL-2.0

//! Rust `Refcount::inc_not_zero` sample.
//!
//! A lookup that finds an object without the lock its release takes (under RCU, for example)
//! must not revive an object whose last reference is already gone. It pins the object with
//! [`Refcount::inc_not_zero`], which takes a reference only while the count is not zero. Here
//! a pin keeps an object alive after its owner lets go, and once the pin's put was the last, a
//! second lookup is refused.

use kernel::{
    prelude::*,
    sync::{
        atomic::Relaxed,
        Refcount, //
    },
};

module! {
    type: RustRefcountPin,
    name: "rust_refcount_pin",
    authors: ["forkscale developers"],
    description: "Rust Refcount::inc_not_zero sample",
    license: "GPL",
}

struct Object {
    refs: Refcount,
    id: u32,
}

/// A reference that a lookup took; dropping it puts the reference.
struct Pinned<'a>(&'a Object);

impl Object {
    /// Takes a reference unless the object's last one is gone.
    fn try_pin(&self) -> Option<Pinned<'_>> {
        self.refs.inc_not_zero().then(|| Pinned(self))
    }

    /// Puts a reference; `true` if it was the last.
    fn put(&self) -> bool {
        self.refs.dec_and_test()
    }

    fn references(&self) -> i32 {
        self.refs.as_atomic().load(Relaxed)
    }
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        if self.0.put() {
            pr_info!("object {}: the last reference was a pin's\n", self.0.id);
        }
    }
}

struct RustRefcountPin;

impl kernel::Module for RustRefcountPin {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust Refcount::inc_not_zero sample (init)\n");
        // The owner's reference.
        let object = KBox::new(
            Object {
                refs: Refcount::new(1),
                id: 1,
            },
            GFP_KERNEL,
        )?;

        let pin = object.try_pin().ok_or(EINVAL)?;
        pr_info!(
            "object {}: pinned while live, {} references\n",
            object.id,
            object.references()
        );
        if object.put() {
            pr_err!("object {}: the owner's put was the last\n", object.id);
            return Err(EINVAL);
        }
        drop(pin);

        if object.try_pin().is_some() {
            pr_err!("object {}: pinned after its last put\n", object.id);
            return Err(EINVAL);
        }
        pr_info!(
            "object {}: a lookup after the last put is refused, {} references\n",
            object.id,
            object.references()
        );
        Ok(RustRefcountPin)
    }
}

impl Drop for RustRefcountPin {
    fn drop(&mut self) {
        pr_info!("Rust Refcount::inc_not_zero sample (exit)\n");
    }
}
