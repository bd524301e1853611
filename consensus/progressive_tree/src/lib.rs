//! Persistent, tree-backed SSZ `ProgressiveList`s for the beacon state (EIP-7916, Gloas).
//!
//! A progressive list serializes like any list, but its Merkle tree is a chain of subtrees of
//! 1, 4, 16, 64, … chunks:
//! `root = mix_in_length(merkleize_progressive(chunks), len)` with
//! `merkleize_progressive(chunks, n) = hash(merkleize(chunks[:n], n),
//! merkleize_progressive(chunks[n:], 4n))`, and the zero chunk for no chunks.
//!
//! - [`ProgressiveTreeList`] holds composite elements (validators, builders, pending deposits,
//!   withdrawals and consolidations), one chunk (the element's cached root) each;
//! - [`ProgressivePackedList`] holds basic values (balances, participation flags, inactivity
//!   scores), packed several to a chunk.
//!
//! Both store their chunks in pages of up to 16 elements or 64 chunks behind `Arc`s, and a
//! root re-hashes only the pages written since the last one and the nodes above them. The
//! element pages sit under `Arc`'d branches with cached hashes (see `tree.rs`): a clone shares
//! everything, a write copies only the page and branches on its path that a clone still shares,
//! and large dirty subtrees hash in parallel. The packed pages sit in one flat vector with the
//! levels above them cached beside it (see `flat.rs`, the layout of `packed_list::PackedList`):
//! a write is one page lookup by index (tens of thousands per block for participation flags), a
//! clone copies a pointer per page and the cached levels, and written pages hash in parallel.
//!
//! [spec]: ssz/simple-serialize.md#merkleization (merkleize_progressive, EIP-7916)

mod flat;
mod hash;
mod list;
mod packed;
mod page;
mod tree;

pub use list::ProgressiveTreeList;
pub use packed::ProgressivePackedList;
pub use packed_list::PackedValue;

/// Why a list operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An index at or past the length.
    #[error("index {index} out of bounds for a list of length {len}")]
    OutOfBounds {
        /// The index asked for.
        index: usize,
        /// The list's length at the time.
        len: usize,
    },
    /// A `pop_front` of more elements than the list holds.
    #[error("cannot remove {count} elements from the front of a list of length {len}")]
    PopPastEnd {
        /// The number of elements asked to remove.
        count: usize,
        /// The list's length at the time.
        len: usize,
    },
}

#[cfg(test)]
mod tests;
