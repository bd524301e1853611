//! `ProgressiveByteList`, the alias of `ProgressiveList[byte]` (EIP-7916).

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use ssz::{Decode, DecodeError, Encode};
use tree_hash::{Hash256, PackedEncoding, TreeHash, TreeHashType, mix_in_length};

use crate::merkleize::merkleize_progressive;
use crate::serde_utils::{decode_prefixed_hex, encode_prefixed_hex};

/// Opaque bytes of any length hashed with the progressive Merkle tree shape
/// (`ProgressiveByteList`, e.g. Gloas `Transaction`).
///
/// Serialized and hashed exactly like `ProgressiveList<u8>`; its JSON is one `0x`-prefixed hex
/// string rather than an array of numbers.
///
/// [spec]: ssz/simple-serialize.md#aliases
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ProgressiveByteList {
    bytes: Vec<u8>,
}

impl ProgressiveByteList {
    /// The list holding `bytes`.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self { bytes }
    }

    /// The bytes, consuming the list.
    pub fn into_vec(self) -> Vec<u8> {
        self.bytes
    }
}

impl Deref for ProgressiveByteList {
    type Target = Vec<u8>;

    fn deref(&self) -> &Vec<u8> {
        &self.bytes
    }
}

// Nothing is cached, so any change to the bytes keeps every invariant.
impl DerefMut for ProgressiveByteList {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }
}

impl From<Vec<u8>> for ProgressiveByteList {
    fn from(bytes: Vec<u8>) -> Self {
        Self { bytes }
    }
}

impl From<&[u8]> for ProgressiveByteList {
    fn from(bytes: &[u8]) -> Self {
        Self {
            bytes: bytes.to_vec(),
        }
    }
}

impl From<ProgressiveByteList> for Vec<u8> {
    fn from(list: ProgressiveByteList) -> Self {
        list.bytes
    }
}

impl AsRef<[u8]> for ProgressiveByteList {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Encode for ProgressiveByteList {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn ssz_bytes_len(&self) -> usize {
        self.bytes.len()
    }

    fn ssz_append(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.bytes);
    }
}

impl Decode for ProgressiveByteList {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn from_ssz_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Ok(Self::from(bytes))
    }
}

impl TreeHash for ProgressiveByteList {
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
        mix_in_length(&merkleize_progressive(&self.bytes), self.bytes.len())
    }
}

impl Serialize for ProgressiveByteList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&encode_prefixed_hex(&self.bytes))
    }
}

impl<'de> Deserialize<'de> for ProgressiveByteList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        decode_prefixed_hex(&text)
            .map(Self::from)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for ProgressiveByteList {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Vec::<u8>::arbitrary(u).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::ProgressiveList;

    #[test]
    fn json_is_prefixed_hex() {
        let bytes = ProgressiveByteList::new(vec![0x00, 0xab, 0x10]);
        let json = serde_json::to_string(&bytes).expect("serializable");
        assert_eq!(json, "\"0x00ab10\"");
        let back: ProgressiveByteList = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(back, bytes);
        assert!(serde_json::from_str::<ProgressiveByteList>("\"00ab\"").is_err());
        assert!(serde_json::from_str::<ProgressiveByteList>("\"0xabc\"").is_err());
    }

    proptest! {
        #[test]
        fn encodes_and_hashes_like_a_progressive_list_of_u8(bytes in proptest::collection::vec(any::<u8>(), 0..700)) {
            let byte_list = ProgressiveByteList::new(bytes.clone());
            let list = ProgressiveList::new(bytes);
            prop_assert_eq!(byte_list.as_ssz_bytes(), list.as_ssz_bytes());
            prop_assert_eq!(byte_list.tree_hash_root(), list.tree_hash_root());
            prop_assert_eq!(ProgressiveByteList::from_ssz_bytes(&byte_list.as_ssz_bytes()), Ok(byte_list));
        }
    }
}
