//! Progressive SSZ: the types of [EIP-7916](https://eips.ethereum.org/EIPS/eip-7916)
//! ([`ProgressiveList`], [`ProgressiveByteList`], [`ProgressiveBitList`]), progressive
//! containers of [EIP-7495](https://eips.ethereum.org/EIPS/eip-7495)
//! ([`progressive_container!`], [`ProgressiveContainer`]) and compatible unions of
//! [EIP-8016](https://eips.ethereum.org/EIPS/eip-8016) ([`compatible_union!`]), with
//! `ethereum_ssz` encoding, `tree_hash` roots and consensus-spec JSON.
//!
//! Serialization is that of the classic SSZ types (a progressive list is serialized like a
//! `List`, a progressive bitlist like a `Bitlist`, a progressive container like a `Container` of
//! its fields); only the Merkle tree shape differs ([`merkleize_progressive`]), and there is no
//! capacity limit.
//!
//! [spec]: ssz/simple-serialize.md

mod bitlist;
mod byte_list;
mod container;
mod list;
mod merkleize;
pub mod serde_utils;
mod union;

#[doc(hidden)]
pub mod __private;

pub use bitlist::ProgressiveBitList;
pub use byte_list::ProgressiveByteList;
pub use container::ProgressiveContainer;
pub use list::ProgressiveList;
pub use merkleize::{
    MAX_ACTIVE_FIELDS, active_fields_are_valid, merkleize_progressive, mix_in_active_fields,
    mix_in_selector, pack_active_fields, progressive_container_root,
};
pub use union::{MAX_SELECTOR, MIN_SELECTOR, selectors_are_valid};

/// What went wrong with a progressive SSZ value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Bit `index` of a bitlist of `len` bits was asked for.
    #[error("bit index {index} out of bounds for a bitlist of {len} bits")]
    OutOfBounds {
        /// The index asked for.
        index: usize,
        /// The bitlist's length.
        len: usize,
    },
}
