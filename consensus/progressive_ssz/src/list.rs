//! `ProgressiveList[T]` of EIP-7916.

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use ssz::{BYTES_PER_LENGTH_OFFSET, Decode, DecodeError, Encode, SszEncoder};
use tree_hash::{Hash256, PackedEncoding, TreeHash, TreeHashType, mix_in_length};

use crate::merkleize::merkleize_progressive;

/// A list of any length hashed with the progressive Merkle tree shape (`ProgressiveList[T]`).
///
/// Serialized like `List[T, N]`; its JSON is an array of the elements' JSON.
///
/// [spec]: ssz/simple-serialize.md#composite-types (EIP-7916)
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
    /// The list holding `items`, in order.
    pub fn new(items: Vec<T>) -> Self {
        Self { items }
    }

    /// An empty list.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Appends `item` at the end of the list.
    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Removes and returns the last element, `None` when the list is empty.
    pub fn pop(&mut self) -> Option<T> {
        self.items.pop()
    }

    /// The elements as a slice.
    pub fn as_slice(&self) -> &[T] {
        &self.items
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

// Mutable access cannot change the length, and nothing is cached, so it keeps every invariant.
impl<T> DerefMut for ProgressiveList<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items
    }
}

impl<T> From<Vec<T>> for ProgressiveList<T> {
    fn from(items: Vec<T>) -> Self {
        Self { items }
    }
}

impl<T> From<ProgressiveList<T>> for Vec<T> {
    fn from(list: ProgressiveList<T>) -> Self {
        list.items
    }
}

impl<T> FromIterator<T> for ProgressiveList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self {
            items: iter.into_iter().collect(),
        }
    }
}

impl<T> Extend<T> for ProgressiveList<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        self.items.extend(iter);
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

impl<'a, T> IntoIterator for &'a mut ProgressiveList<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
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
            return Ok(Self::empty());
        }
        if !T::is_ssz_fixed_len() {
            // Checks the offsets: the first one sets the count and must be a multiple of the
            // offset size; all in order and in range.
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

impl<T: Serialize> Serialize for ProgressiveList<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(&self.items)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ProgressiveList<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(feature = "arbitrary")]
impl<'a, T: arbitrary::Arbitrary<'a>> arbitrary::Arbitrary<'a> for ProgressiveList<T> {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Vec::<T>::arbitrary(u).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::merkleize::hash_pair;

    fn length_chunk(len: u8) -> Hash256 {
        let mut chunk = [0u8; 32];
        chunk[0] = len;
        Hash256::from(chunk)
    }

    #[test]
    fn empty_list_root_is_zero_mixed_with_length_zero() {
        let list = ProgressiveList::<u64>::empty();
        assert_eq!(
            list.tree_hash_root(),
            hash_pair(&Hash256::ZERO, &Hash256::ZERO)
        );
        assert!(list.as_ssz_bytes().is_empty());
    }

    #[test]
    fn list_of_u16_packs_elements_and_mixes_in_length() {
        let list = ProgressiveList::new(vec![0x0102u16, 0x0304]);
        let mut packed = [0u8; 32];
        packed[..4].copy_from_slice(&[0x02, 0x01, 0x04, 0x03]);
        let expected = hash_pair(
            &hash_pair(&Hash256::from(packed), &Hash256::ZERO),
            &length_chunk(2),
        );
        assert_eq!(list.tree_hash_root(), expected);
        assert_eq!(list.as_ssz_bytes(), vec![0x02, 0x01, 0x04, 0x03]);
    }

    #[test]
    fn list_of_lists_hashes_element_roots() {
        let inner = ProgressiveList::new(vec![7u8]);
        let outer = ProgressiveList::new(vec![inner.clone()]);
        assert_eq!(
            outer.tree_hash_root(),
            hash_pair(
                &hash_pair(&inner.tree_hash_root(), &Hash256::ZERO),
                &length_chunk(1)
            )
        );
    }

    #[test]
    fn list_of_lists_round_trips() {
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
    fn rejects_partial_fixed_size_items() {
        assert!(ProgressiveList::<u32>::from_ssz_bytes(&[1, 2, 3, 4, 5]).is_err());
        assert!(ProgressiveList::<bool>::from_ssz_bytes(&[1, 2]).is_err());
    }

    #[test]
    fn rejects_bad_offsets() {
        type Nested = ProgressiveList<ProgressiveList<u8>>;
        // First offset not a multiple of 4.
        assert!(Nested::from_ssz_bytes(&[3, 0, 0, 0, 9]).is_err());
        // First offset past the end.
        assert!(Nested::from_ssz_bytes(&[8, 0, 0, 0]).is_err());
        // Offsets decreasing.
        assert!(Nested::from_ssz_bytes(&[8, 0, 0, 0, 6, 0, 0, 0, 1, 2]).is_err());
        // Offset past the end.
        assert!(Nested::from_ssz_bytes(&[8, 0, 0, 0, 20, 0, 0, 0, 1]).is_err());
        // Fewer than 4 bytes of offset.
        assert!(Nested::from_ssz_bytes(&[4, 0]).is_err());
    }

    #[test]
    fn json_is_an_array_of_element_json() {
        let list = ProgressiveList::new(vec![1u64, 2, 3]);
        let json = serde_json::to_string(&list).expect("serializable");
        assert_eq!(json, "[1,2,3]");
        let back: ProgressiveList<u64> = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(back, list);
    }

    #[test]
    fn vec_like_access() {
        let mut list: ProgressiveList<u8> = (1..=3).collect();
        list.push(4);
        list[0] = 9;
        assert_eq!(list.len(), 4);
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), vec![9, 2, 3, 4]);
        assert_eq!(list.pop(), Some(4));
        assert_eq!(list.into_vec(), vec![9, 2, 3]);
    }

    proptest! {
        #[test]
        fn fixed_size_items_round_trip(items in proptest::collection::vec(any::<u64>(), 0..200)) {
            let list = ProgressiveList::new(items);
            let bytes = list.as_ssz_bytes();
            prop_assert_eq!(bytes.len(), list.ssz_bytes_len());
            prop_assert_eq!(ProgressiveList::<u64>::from_ssz_bytes(&bytes), Ok(list));
        }

        #[test]
        fn variable_size_items_round_trip(
            items in proptest::collection::vec(proptest::collection::vec(any::<u16>(), 0..8), 0..40)
        ) {
            let list: ProgressiveList<ProgressiveList<u16>> =
                items.into_iter().map(ProgressiveList::new).collect();
            let bytes = list.as_ssz_bytes();
            prop_assert_eq!(bytes.len(), list.ssz_bytes_len());
            prop_assert_eq!(ProgressiveList::<ProgressiveList<u16>>::from_ssz_bytes(&bytes), Ok(list));
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = ProgressiveList::<ProgressiveList<u8>>::from_ssz_bytes(&bytes);
            let _ = ProgressiveList::<u32>::from_ssz_bytes(&bytes);
        }
    }
}
