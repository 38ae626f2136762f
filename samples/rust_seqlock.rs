// SPDX-License-Identifier: GPL-2.0

//! Rust SeqLock sample.
//!
//! A pair of counters that writers move forward together and readers copy without a lock. A
//! read of the DebugFS file `rust_seqlock/pair` prints a lockless [`SeqLock::read`] of the pair;
//! a write of `n` to it adds `n` to both halves in one [`SeqLock::update`]. A reader that
//! overlaps a writer retries, so the two halves it prints are always equal, however many
//! writers and readers run at once.

use core::fmt;
use kernel::{
    debugfs::{
        Dir,
        File, //
    },
    prelude::*,
    sync::{
        new_seqlock,
        SeqLock, //
    },
    uaccess::UserSliceReader, //
};

module! {
    type: RustSeqLock,
    name: "rust_seqlock",
    authors: ["forkscale developers"],
    description: "Rust SeqLock sample",
    license: "GPL",
}

/// Two counters that every update moves by the same amount.
type Pair = SeqLock<[u64; 2]>;

/// The longest write accepted: a `u64` in decimal is at most 20 digits, and a newline may follow.
const MAX_WRITE: usize = 24;

struct RustSeqLock {
    // Removing the file waits for the reads and writes in progress, before the pair goes.
    _pair: Pin<KBox<File<Pair>>>,
    _dir: Dir,
}

fn show(pair: &Pair, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let [a, b] = pair.read();
    writeln!(f, "{a} {b}")
}

fn advance(pair: &Pair, reader: &mut UserSliceReader) -> Result {
    let mut buf = [0u8; MAX_WRITE];
    let n = reader.len();
    if n > buf.len() {
        return Err(EINVAL);
    }
    reader.read_slice(&mut buf[..n])?;
    let by: u64 = core::str::from_utf8(&buf[..n])
        .map_err(|_| EINVAL)?
        .trim()
        .parse()
        .map_err(|_| EINVAL)?;
    // Both halves in one write section: no reader sees one moved without the other.
    pair.update(|[a, b]| [a.wrapping_add(by), b.wrapping_add(by)]);
    Ok(())
}

impl kernel::Module for RustSeqLock {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("Rust SeqLock sample (init)\n");
        let dir = Dir::new(c"rust_seqlock");
        let pair = KBox::pin_init(
            dir.read_write_callback_file(
                c"pair",
                new_seqlock!([0u64, 0u64], "rust_seqlock_pair"),
                &show,
                &advance,
            ),
            GFP_KERNEL,
        )?;
        Ok(RustSeqLock {
            _pair: pair,
            _dir: dir,
        })
    }
}

impl Drop for RustSeqLock {
    fn drop(&mut self) {
        pr_info!("Rust SeqLock sample (exit)\n");
    }
}
