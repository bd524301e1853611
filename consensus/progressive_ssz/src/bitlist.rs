//! `ProgressiveBitlist` of EIP-7916.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use ssz::{Decode, DecodeError, Encode};
use tree_hash::{Hash256, PackedEncoding, TreeHash, TreeHashType, mix_in_length};

use crate::Error;
use crate::merkleize::merkleize_progressive;
use crate::serde_utils::{decode_prefixed_hex, encode_prefixed_hex};

/// A bitlist of any length hashed with the progressive Merkle tree shape (`ProgressiveBitlist`,
/// e.g. Gloas `AggregationBits`).
///
/// Serialized like `Bitlist[N]` (a delimiter bit after the last bit); its JSON is the SSZ bytes
/// as one `0x`-prefixed hex string, as for `ssz_types::BitList`.
///
/// [spec]: ssz/simple-serialize.md#bitlistn-progressivebitlist (EIP-7916)
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ProgressiveBitList {
    /// Bit `i` is bit `i % 8` of byte `i / 8`; exactly `len.div_ceil(8)` bytes and no bit at or
    /// above `len` set, so equal lists have equal bytes.
    bytes: Vec<u8>,
    len: usize,
}

impl ProgressiveBitList {
    /// An empty bitlist.
    pub fn new() -> Self {
        Self::default()
    }

    /// A bitlist of `len` bits, all unset.
    pub fn with_len(len: usize) -> Self {
        Self {
            bytes: vec![0; len.div_ceil(8)],
            len,
        }
    }

    /// The number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list holds no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `index`.
    pub fn get(&self, index: usize) -> Result<bool, Error> {
        if index >= self.len {
            return Err(Error::OutOfBounds {
                index,
                len: self.len,
            });
        }
        Ok(self.bit(index))
    }

    /// Sets bit `index` to `bit`.
    pub fn set(&mut self, index: usize, bit: bool) -> Result<(), Error> {
        if index >= self.len {
            return Err(Error::OutOfBounds {
                index,
                len: self.len,
            });
        }
        let mask = 1u8 << (index % 8);
        // `index < len` and `bytes.len() == len.div_ceil(8)`.
        let byte = &mut self.bytes[index / 8];
        if bit {
            *byte |= mask;
        } else {
            *byte &= !mask;
        }
        Ok(())
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

    /// The number of set bits.
    pub fn num_set_bits(&self) -> usize {
        self.bytes
            .iter()
            .map(|byte| byte.count_ones() as usize)
            .sum()
    }

    /// The indices of the set bits, in increasing order.
    pub fn set_indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&i| self.bit(i))
    }

    /// The bits in order.
    pub fn iter(&self) -> impl Iterator<Item = bool> + '_ {
        (0..self.len).map(|i| self.bit(i))
    }

    /// The bits packed little-endian into bytes, without the SSZ delimiter bit.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Bit `index`, which the caller has checked is below `len`.
    fn bit(&self, index: usize) -> bool {
        self.bytes[index / 8] & (1 << (index % 8)) != 0
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
        // The delimiter is bit `len`: in a fresh byte when the bits fill whole bytes.
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
        // When the delimiter shares the last data byte, keep only the bits below it.
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

impl Serialize for ProgressiveBitList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&encode_prefixed_hex(&self.as_ssz_bytes()))
    }
}

impl<'de> Deserialize<'de> for ProgressiveBitList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let bytes = decode_prefixed_hex(&text).map_err(serde::de::Error::custom)?;
        Self::from_ssz_bytes(&bytes)
            .map_err(|e| serde::de::Error::custom(format!("invalid ProgressiveBitList: {e:?}")))
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for ProgressiveBitList {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(u.arbitrary_iter::<bool>()?
            .collect::<arbitrary::Result<Vec<_>>>()?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::merkleize::hash_pair;

    #[test]
    fn round_trips_with_delimiter() {
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
    fn rejects_missing_delimiter() {
        assert!(ProgressiveBitList::from_ssz_bytes(&[]).is_err());
        assert!(ProgressiveBitList::from_ssz_bytes(&[0]).is_err());
        assert!(ProgressiveBitList::from_ssz_bytes(&[0xff, 0]).is_err());
    }

    #[test]
    fn empty_encodes_as_lone_delimiter_and_hashes_zero_with_length_zero() {
        let bits = ProgressiveBitList::new();
        assert_eq!(bits.as_ssz_bytes(), vec![1]);
        assert_eq!(
            bits.tree_hash_root(),
            hash_pair(&Hash256::ZERO, &Hash256::ZERO)
        );
    }

    #[test]
    fn root_packs_bits_without_delimiter() {
        let bits: ProgressiveBitList = [true, false, true].into_iter().collect();
        let mut packed = [0u8; 32];
        packed[0] = 0b101;
        let mut length = [0u8; 32];
        length[0] = 3;
        assert_eq!(
            bits.tree_hash_root(),
            hash_pair(
                &hash_pair(&Hash256::from(packed), &Hash256::ZERO),
                &Hash256::from(length)
            )
        );
    }

    #[test]
    fn get_set_and_count() {
        let mut bits = ProgressiveBitList::with_len(10);
        assert_eq!(bits.len(), 10);
        assert_eq!(bits.num_set_bits(), 0);
        bits.set(0, true).expect("in range");
        bits.set(9, true).expect("in range");
        bits.set(4, true).expect("in range");
        bits.set(4, false).expect("in range");
        assert_eq!(bits.get(9), Ok(true));
        assert_eq!(bits.get(4), Ok(false));
        assert_eq!(bits.get(10), Err(Error::OutOfBounds { index: 10, len: 10 }));
        assert!(bits.set(10, true).is_err());
        assert_eq!(bits.num_set_bits(), 2);
        assert_eq!(bits.set_indices().collect::<Vec<_>>(), vec![0, 9]);
        assert_eq!(bits.as_ssz_bytes(), vec![0b0000_0001, 0b0000_0110]);
    }

    #[test]
    fn json_is_hex_of_ssz_bytes() {
        let bits: ProgressiveBitList = [true, false, true].into_iter().collect();
        let json = serde_json::to_string(&bits).expect("serializable");
        assert_eq!(json, "\"0x0d\"");
        let back: ProgressiveBitList = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(back, bits);
        assert!(serde_json::from_str::<ProgressiveBitList>("\"0x00\"").is_err());
        assert!(serde_json::from_str::<ProgressiveBitList>("\"0x\"").is_err());
    }

    #[cfg(feature = "arbitrary")]
    #[test]
    fn arbitrary_values_round_trip() {
        use arbitrary::{Arbitrary, Unstructured};

        let entropy: Vec<u8> = (0..=255).collect();
        let mut u = Unstructured::new(&entropy);
        let bits = ProgressiveBitList::arbitrary(&mut u).expect("enough entropy");
        let list = crate::ProgressiveList::<u16>::arbitrary(&mut u).expect("enough entropy");
        assert_eq!(
            ProgressiveBitList::from_ssz_bytes(&bits.as_ssz_bytes()),
            Ok(bits)
        );
        assert_eq!(
            crate::ProgressiveList::<u16>::from_ssz_bytes(&list.as_ssz_bytes()),
            Ok(list)
        );
    }

    proptest! {
        #[test]
        fn bits_round_trip(bits in proptest::collection::vec(any::<bool>(), 0..600)) {
            let list: ProgressiveBitList = bits.iter().copied().collect();
            prop_assert_eq!(list.iter().collect::<Vec<_>>(), bits.clone());
            let decoded = ProgressiveBitList::from_ssz_bytes(&list.as_ssz_bytes());
            prop_assert_eq!(decoded, Ok(list.clone()));
            prop_assert_eq!(list.num_set_bits(), bits.iter().filter(|b| **b).count());
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(list) = ProgressiveBitList::from_ssz_bytes(&bytes) {
                prop_assert_eq!(list.as_ssz_bytes(), bytes);
            }
        }
    }
}
