//! Progressive SSZ types: [`ProgressiveList`] and [`ProgressiveBitList`] of
//! [EIP-7916](https://eips.ethereum.org/EIPS/eip-7916), and progressive containers of
//! [EIP-7495](https://eips.ethereum.org/EIPS/eip-7495) ([`ProgressiveContainer`],
//! [`progressive_container!`]).
//!
//! Serialization is unchanged from the classic SSZ types (a progressive list serializes like a
//! `List`, a progressive bitlist like a `Bitlist`, a progressive container like a `Container` of
//! its present fields); only the Merkle tree shape differs, so there is no capacity limit.
//!
//! Written against `ssz::{Encode, Decode}` and `tree_hash::TreeHash` only, so that these types
//! compose with derived containers and can move to a library crate unchanged.

use std::ops::Deref;

use ssz::{BYTES_PER_LENGTH_OFFSET, Decode, DecodeError, Encode, SszEncoder};
use tree_hash::{BYTES_PER_CHUNK, Hash256, PackedEncoding, TreeHash, TreeHashType, mix_in_length};

/// Hashes two 32-byte nodes into their parent node.
pub(crate) fn hash_pair(left: &Hash256, right: &Hash256) -> Hash256 {
    Hash256::from(ethereum_hashing::hash32_concat(
        left.as_slice(),
        right.as_slice(),
    ))
}

/// `merkleize_progressive` of EIP-7916 over `chunk_bytes`, the concatenated 32-byte chunks (a
/// final partial chunk counts as one chunk, zero-padded).
///
/// The tree is a chain of subtrees of 1, 4, 16, … leaves: the root is
/// `hash(merkleize(chunks[:1], 1), hash(merkleize(chunks[1:5], 4), hash(…, ZERO)))`, with the
/// zero node closing the chain. No chunks gives the zero node.
///
/// [spec]: https://eips.ethereum.org/EIPS/eip-7916#progressive-merkle-tree
pub fn merkleize_progressive(chunk_bytes: &[u8]) -> Hash256 {
    let mut subtree_roots = Vec::new();
    let mut rest = chunk_bytes;
    let mut num_leaves: usize = 1;
    while !rest.is_empty() {
        let take = rest.len().min(num_leaves.saturating_mul(BYTES_PER_CHUNK));
        let (subtree, tail) = rest.split_at(take);
        subtree_roots.push(tree_hash::merkle_root(subtree, num_leaves));
        rest = tail;
        num_leaves = num_leaves.saturating_mul(4);
    }
    subtree_roots
        .iter()
        .rev()
        .fold(Hash256::ZERO, |right, left| hash_pair(left, &right))
}

/// A list of any length with the progressive Merkle tree shape (`ProgressiveList[T]`).
///
/// [spec]: https://eips.ethereum.org/EIPS/eip-7916#progressivelisttype
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProgressiveList<T> {
    items: Vec<T>,
}

impl<T> Default for ProgressiveList<T> {
    fn default() -> Self {
        Self { items: Vec::new() }
    }
}

impl<T> ProgressiveList<T> {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `item` at the end of the list.
    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// The elements, consuming the list.
    pub fn into_vec(self) -> Vec<T> {
        self.items
    }
}

impl<T> Deref for ProgressiveList<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<T> From<Vec<T>> for ProgressiveList<T> {
    fn from(items: Vec<T>) -> Self {
        Self { items }
    }
}

impl<T> FromIterator<T> for ProgressiveList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self {
            items: iter.into_iter().collect(),
        }
    }
}

impl<T> IntoIterator for ProgressiveList<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a ProgressiveList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<T: Encode> Encode for ProgressiveList<T> {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn ssz_bytes_len(&self) -> usize {
        if T::is_ssz_fixed_len() {
            T::ssz_fixed_len() * self.items.len()
        } else {
            self.items
                .iter()
                .map(|item| BYTES_PER_LENGTH_OFFSET + item.ssz_bytes_len())
                .sum()
        }
    }

    fn ssz_append(&self, buf: &mut Vec<u8>) {
        if T::is_ssz_fixed_len() {
            buf.reserve(T::ssz_fixed_len() * self.items.len());
            for item in &self.items {
                item.ssz_append(buf);
            }
        } else {
            let mut encoder =
                SszEncoder::container(buf, self.items.len() * BYTES_PER_LENGTH_OFFSET);
            for item in &self.items {
                encoder.append(item);
            }
            encoder.finalize();
        }
    }
}

impl<T: Decode> Decode for ProgressiveList<T> {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn from_ssz_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.is_empty() {
            return Ok(Self::new());
        }
        if !T::is_ssz_fixed_len() {
            return ssz::decode_list_of_variable_length_items::<T, Vec<T>>(bytes, None)
                .map(Self::from);
        }
        let item_len = T::ssz_fixed_len();
        if item_len == 0 {
            return Err(DecodeError::ZeroLengthItem);
        }
        if !bytes.len().is_multiple_of(item_len) {
            return Err(DecodeError::InvalidByteLength {
                len: bytes.len(),
                expected: bytes.len().div_ceil(item_len) * item_len,
            });
        }
        bytes
            .chunks_exact(item_len)
            .map(T::from_ssz_bytes)
            .collect::<Result<Vec<_>, _>>()
            .map(Self::from)
    }
}

impl<T: TreeHash> TreeHash for ProgressiveList<T> {
    fn tree_hash_type() -> TreeHashType {
        TreeHashType::List
    }

    // A list is never packed; a parent asking anyway gets the root as its single chunk.
    fn tree_hash_packed_encoding(&self) -> PackedEncoding {
        PackedEncoding::from_slice(self.tree_hash_root().as_slice())
    }

    fn tree_hash_packing_factor() -> usize {
        1
    }

    fn tree_hash_root(&self) -> Hash256 {
        let chunk_bytes: Vec<u8> = if T::tree_hash_type() == TreeHashType::Basic {
            self.items
                .iter()
                .flat_map(|item| item.tree_hash_packed_encoding())
                .collect()
        } else {
            self.items
                .iter()
                .flat_map(|item| item.tree_hash_root().0)
                .collect()
        };
        mix_in_length(&merkleize_progressive(&chunk_bytes), self.items.len())
    }
}

/// A bitlist of any length with the progressive Merkle tree shape (`ProgressiveBitlist`).
///
/// [spec]: https://eips.ethereum.org/EIPS/eip-7916#progressivebitlist
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ProgressiveBitList {
    /// Bit `i` is bit `i % 8` of byte `i / 8`; exactly `len.div_ceil(8)` bytes, no bit at or
    /// above `len` set (so equal lists have equal bytes).
    bytes: Vec<u8>,
    len: usize,
}

impl ProgressiveBitList {
    /// An empty bitlist.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list holds no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `i`, or `None` past the end.
    pub fn get(&self, i: usize) -> Option<bool> {
        (i < self.len).then(|| self.bytes[i / 8] & (1 << (i % 8)) != 0)
    }

    /// Appends `bit` at the end of the list.
    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit && let Some(last) = self.bytes.last_mut() {
            *last |= 1 << (self.len % 8);
        }
        self.len += 1;
    }

    /// The bits in order.
    pub fn iter(&self) -> impl Iterator<Item = bool> + '_ {
        (0..self.len).map(|i| self.bytes[i / 8] & (1 << (i % 8)) != 0)
    }

    /// The bits packed little-endian into bytes, without the SSZ length delimiter.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl FromIterator<bool> for ProgressiveBitList {
    fn from_iter<I: IntoIterator<Item = bool>>(iter: I) -> Self {
        let mut bits = Self::new();
        for bit in iter {
            bits.push(bit);
        }
        bits
    }
}

impl Encode for ProgressiveBitList {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn ssz_bytes_len(&self) -> usize {
        self.len / 8 + 1
    }

    fn ssz_append(&self, buf: &mut Vec<u8>) {
        let start = buf.len();
        buf.extend_from_slice(&self.bytes);
        // The delimiter is bit `len`: a fresh byte when the bits fill whole bytes.
        buf.resize(start + self.len / 8 + 1, 0);
        if let Some(last) = buf.last_mut() {
            *last |= 1 << (self.len % 8);
        }
    }
}

impl Decode for ProgressiveBitList {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn from_ssz_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (&last, _) = bytes.split_last().ok_or_else(|| {
            DecodeError::BytesInvalid("ProgressiveBitList without delimiter byte".into())
        })?;
        if last == 0 {
            return Err(DecodeError::BytesInvalid(
                "ProgressiveBitList last byte has no delimiter bit".into(),
            ));
        }
        let delimiter = 7 - last.leading_zeros() as usize;
        let len = (bytes.len() - 1) * 8 + delimiter;
        let mut data = bytes.to_vec();
        data.truncate(len.div_ceil(8));
        // When the delimiter shares the last data byte, clear it and keep the bits below.
        if delimiter != 0
            && let Some(last) = data.last_mut()
        {
            *last &= (1u8 << delimiter) - 1;
        }
        Ok(Self { bytes: data, len })
    }
}

impl TreeHash for ProgressiveBitList {
    fn tree_hash_type() -> TreeHashType {
        TreeHashType::List
    }

    // A bitlist is never packed; a parent asking anyway gets the root as its single chunk.
    fn tree_hash_packed_encoding(&self) -> PackedEncoding {
        PackedEncoding::from_slice(self.tree_hash_root().as_slice())
    }

    fn tree_hash_packing_factor() -> usize {
        1
    }

    fn tree_hash_root(&self) -> Hash256 {
        mix_in_length(&merkleize_progressive(&self.bytes), self.len)
    }
}

/// The most `active_fields` entries a progressive container may have (one chunk of bits).
pub const MAX_ACTIVE_FIELDS: usize = 256;

/// A container with the EIP-7495 progressive Merkle tree shape: field `i` of `active_fields`
/// always sits at chunk `i` of a progressive tree; absent fields hash as zero chunks.
///
/// Serialization is that of a `Container` of the present fields (derive `ssz::Encode`/`Decode`);
/// declare types with [`progressive_container!`], which checks `ACTIVE_FIELDS` at compile time.
///
/// [spec]: https://eips.ethereum.org/EIPS/eip-7495#progressivecontainer
pub trait ProgressiveContainer {
    /// `active_fields`: one entry per stable field index, `true` where the type has that field.
    /// Non-empty, at most [`MAX_ACTIVE_FIELDS`] entries, last entry `true`, as many `true`
    /// entries as fields (see [`active_fields_are_valid`]).
    const ACTIVE_FIELDS: &'static [bool];

    /// `hash_tree_root` of each present field, in declaration order.
    fn field_roots(&self) -> Vec<Hash256>;
}

/// Whether `active_fields` is a valid EIP-7495 `active_fields` list for `num_fields` fields.
pub const fn active_fields_are_valid(active_fields: &[bool], num_fields: usize) -> bool {
    let len = active_fields.len();
    if len == 0 || len > MAX_ACTIVE_FIELDS || !active_fields[len - 1] {
        return false;
    }
    let mut active = 0;
    let mut i = 0;
    while i < len {
        if active_fields[i] {
            active += 1;
        }
        i += 1;
    }
    active == num_fields
}

/// `hash_tree_root` of a progressive container: `merkleize_progressive` of the field roots (zero
/// for inactive indices) with `pack_bits(active_fields)` mixed in.
///
/// [spec]: https://eips.ethereum.org/EIPS/eip-7495#merkleization
pub fn progressive_container_root<C: ProgressiveContainer + ?Sized>(container: &C) -> Hash256 {
    let mut field_roots = container.field_roots().into_iter();
    let mut chunk_bytes = Vec::with_capacity(C::ACTIVE_FIELDS.len() * BYTES_PER_CHUNK);
    for &active in C::ACTIVE_FIELDS {
        let root = if active {
            field_roots.next().unwrap_or(Hash256::ZERO)
        } else {
            Hash256::ZERO
        };
        chunk_bytes.extend_from_slice(root.as_slice());
    }
    let mut active_fields_chunk = [0u8; BYTES_PER_CHUNK];
    for (i, &active) in C::ACTIVE_FIELDS.iter().enumerate().take(MAX_ACTIVE_FIELDS) {
        if active {
            active_fields_chunk[i / 8] |= 1 << (i % 8);
        }
    }
    hash_pair(
        &merkleize_progressive(&chunk_bytes),
        &Hash256::from(active_fields_chunk),
    )
}

/// Declares a progressive container (EIP-7495): a struct deriving `ssz::Encode`/`ssz::Decode`
/// (serialized like a `Container` of its fields) with [`ProgressiveContainer`] and
/// `tree_hash::TreeHash` implemented for the given `active_fields` (checked at compile time).
///
/// ```text
/// progressive_container! {
///     active_fields: [1, 0, 1],
///     /// A version that dropped field 1.
///     #[derive(Debug, Clone, PartialEq)]
///     pub struct Example {
///         pub a: u8,
///         pub c: ProgressiveBitList,
///     }
/// }
/// ```
macro_rules! progressive_container {
    (
        active_fields: [$($bit:literal),+ $(,)?],
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(::ssz_derive::Encode, ::ssz_derive::Decode)]
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty,)+
        }

        const _: () = assert!(
            $crate::ssz_generic::progressive::active_fields_are_valid(
                <$name as $crate::ssz_generic::progressive::ProgressiveContainer>::ACTIVE_FIELDS,
                [$(stringify!($field)),+].len(),
            ),
            concat!("invalid active_fields for ", stringify!($name)),
        );

        impl $crate::ssz_generic::progressive::ProgressiveContainer for $name {
            const ACTIVE_FIELDS: &'static [bool] = &[$($bit == 1),+];

            fn field_roots(&self) -> Vec<::tree_hash::Hash256> {
                vec![$(::tree_hash::TreeHash::tree_hash_root(&self.$field)),+]
            }
        }

        impl ::tree_hash::TreeHash for $name {
            fn tree_hash_type() -> ::tree_hash::TreeHashType {
                ::tree_hash::TreeHashType::Container
            }

            // A container is never packed; a parent asking anyway gets the root as its chunk.
            fn tree_hash_packed_encoding(&self) -> ::tree_hash::PackedEncoding {
                ::tree_hash::PackedEncoding::from_slice(self.tree_hash_root().as_slice())
            }

            fn tree_hash_packing_factor() -> usize {
                1
            }

            fn tree_hash_root(&self) -> ::tree_hash::Hash256 {
                $crate::ssz_generic::progressive::progressive_container_root(self)
            }
        }
    };
}
pub(crate) use progressive_container;

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(byte: u8) -> [u8; 32] {
        [byte; 32]
    }

    fn h(a: &Hash256, b: &Hash256) -> Hash256 {
        hash_pair(a, b)
    }

    fn c(byte: u8) -> Hash256 {
        Hash256::from(chunk(byte))
    }

    fn chunks(bytes: &[u8]) -> Vec<u8> {
        bytes.iter().flat_map(|&b| chunk(b)).collect()
    }

    #[test]
    fn merkleize_progressive_of_nothing_is_zero() {
        assert_eq!(merkleize_progressive(&[]), Hash256::ZERO);
    }

    #[test]
    fn merkleize_progressive_of_one_chunk() {
        assert_eq!(
            merkleize_progressive(&chunks(&[1])),
            h(&c(1), &Hash256::ZERO)
        );
    }

    #[test]
    fn merkleize_progressive_pads_partial_chunk() {
        let mut padded = [0u8; 32];
        padded[0] = 7;
        assert_eq!(
            merkleize_progressive(&[7]),
            h(&Hash256::from(padded), &Hash256::ZERO)
        );
    }

    #[test]
    fn merkleize_progressive_of_two_chunks_pads_second_subtree_to_four() {
        let zero = Hash256::ZERO;
        let second = h(&h(&c(2), &zero), &h(&zero, &zero));
        assert_eq!(
            merkleize_progressive(&chunks(&[1, 2])),
            h(&c(1), &h(&second, &zero))
        );
    }

    #[test]
    fn merkleize_progressive_of_six_chunks_opens_third_subtree() {
        let zero = Hash256::ZERO;
        let second = h(&h(&c(2), &c(3)), &h(&c(4), &c(5)));
        // Third subtree: 16 leaves, only the first one set.
        let mut third = c(6);
        let mut zero_subtree = zero;
        for _ in 0..4 {
            third = h(&third, &zero_subtree);
            zero_subtree = h(&zero_subtree, &zero_subtree);
        }
        assert_eq!(
            merkleize_progressive(&chunks(&[1, 2, 3, 4, 5, 6])),
            h(&c(1), &h(&second, &h(&third, &zero)))
        );
    }

    #[test]
    fn progressive_list_of_u16_packs_and_mixes_in_length() {
        let list = ProgressiveList::from(vec![0x0102u16, 0x0304]);
        let mut packed = [0u8; 32];
        packed[..4].copy_from_slice(&[0x02, 0x01, 0x04, 0x03]);
        let mut length = [0u8; 32];
        length[0] = 2;
        let expected = h(
            &h(&Hash256::from(packed), &Hash256::ZERO),
            &Hash256::from(length),
        );
        assert_eq!(list.tree_hash_root(), expected);
        assert_eq!(list.as_ssz_bytes(), vec![0x02, 0x01, 0x04, 0x03]);
    }

    #[test]
    fn empty_progressive_list_root_is_zero_mixed_with_zero_length() {
        let list = ProgressiveList::<u64>::new();
        assert_eq!(list.tree_hash_root(), h(&Hash256::ZERO, &Hash256::ZERO));
    }

    #[test]
    fn progressive_list_rejects_partial_items() {
        assert!(ProgressiveList::<u32>::from_ssz_bytes(&[1, 2, 3, 4, 5]).is_err());
        assert!(ProgressiveList::<bool>::from_ssz_bytes(&[1, 2]).is_err());
    }

    #[test]
    fn progressive_list_of_lists_round_trips() {
        let list: ProgressiveList<ProgressiveList<u8>> =
            vec![vec![1u8, 2].into(), vec![].into(), vec![3].into()].into();
        let bytes = list.as_ssz_bytes();
        assert_eq!(bytes.len(), list.ssz_bytes_len());
        assert_eq!(
            ProgressiveList::<ProgressiveList<u8>>::from_ssz_bytes(&bytes),
            Ok(list)
        );
    }

    #[test]
    fn progressive_bitlist_round_trips_with_delimiter() {
        for len in [0usize, 1, 7, 8, 9, 16, 255, 256, 257] {
            let bits: ProgressiveBitList = (0..len).map(|i| i % 3 == 0).collect();
            let bytes = bits.as_ssz_bytes();
            assert_eq!(bytes.len(), len / 8 + 1);
            assert_eq!(bytes.len(), bits.ssz_bytes_len());
            let decoded = ProgressiveBitList::from_ssz_bytes(&bytes).expect("valid encoding");
            assert_eq!(decoded, bits);
            assert_eq!(decoded.len(), len);
        }
    }

    #[test]
    fn progressive_bitlist_rejects_missing_delimiter() {
        assert!(ProgressiveBitList::from_ssz_bytes(&[]).is_err());
        assert!(ProgressiveBitList::from_ssz_bytes(&[0]).is_err());
        assert!(ProgressiveBitList::from_ssz_bytes(&[0xff, 0]).is_err());
    }

    #[test]
    fn progressive_bitlist_root_packs_bits_without_delimiter() {
        let bits: ProgressiveBitList = [true, false, true].into_iter().collect();
        let mut packed = [0u8; 32];
        packed[0] = 0b101;
        let mut length = [0u8; 32];
        length[0] = 3;
        assert_eq!(
            bits.tree_hash_root(),
            h(
                &h(&Hash256::from(packed), &Hash256::ZERO),
                &Hash256::from(length)
            )
        );
    }

    progressive_container! {
        active_fields: [1, 0, 1],
        #[derive(Debug, Clone, PartialEq)]
        struct Sparse {
            a: u8,
            c: u16,
        }
    }

    #[test]
    fn progressive_container_hashes_absent_fields_as_zero_and_mixes_in_active_fields() {
        let value = Sparse { a: 1, c: 2 };
        let mut a = [0u8; 32];
        a[0] = 1;
        let mut c_root = [0u8; 32];
        c_root[0] = 2;
        let zero = Hash256::ZERO;
        let second = h(&h(&zero, &Hash256::from(c_root)), &h(&zero, &zero));
        let mut active = [0u8; 32];
        active[0] = 0b101;
        let expected = h(
            &h(&Hash256::from(a), &h(&second, &zero)),
            &Hash256::from(active),
        );
        assert_eq!(value.tree_hash_root(), expected);
        assert_eq!(value.as_ssz_bytes(), vec![1, 2, 0]);
    }

    #[test]
    fn active_fields_validation() {
        assert!(active_fields_are_valid(&[true], 1));
        assert!(active_fields_are_valid(&[true, false, true], 2));
        assert!(!active_fields_are_valid(&[], 0));
        assert!(!active_fields_are_valid(&[true, false], 1));
        assert!(!active_fields_are_valid(&[true, true], 1));
        assert!(!active_fields_are_valid(&[true; 257], 257));
    }
}
