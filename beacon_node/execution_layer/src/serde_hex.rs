//! The engine API's JSON encodings: `QUANTITY` (0x-hex, no leading zeros) and `DATA` (0x-hex
//! bytes, two digits per byte), as serde `with` modules.
//!
//! Decoding writes hex straight into the destination buffer (`[u8; N]`, or one allocation of the
//! exact length) with SIMD hex decoding from `const-hex`, and takes strings borrowed from the input
//! when the deserializer can lend them (`serde_json::from_slice` does), so a 128 KiB blob costs one
//! allocation and one pass.
//!
//! [spec]: https://github.com/ethereum/execution-apis/blob/main/src/engine/common.md#encoding

use std::fmt;
use std::marker::PhantomData;

use alloy_primitives::hex;
use progressive_ssz::{ProgressiveByteList, ProgressiveList};
use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserializer, Serializer};
use ssz_types::typenum::Unsigned;
use ssz_types::{FixedVector, VariableList};
use types::{Address, FixedBytes, U256};

/// Why a hex string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    /// The string does not start with `0x`.
    #[error("missing 0x prefix")]
    MissingPrefix,
    /// `DATA` with an odd number of digits.
    #[error("odd number of hex digits ({0})")]
    OddLength(usize),
    /// A character that is not a hex digit.
    #[error("invalid hex digit")]
    InvalidDigit,
    /// `DATA` of the wrong length for a fixed-size field.
    #[error("expected {expected} bytes, got {got}")]
    WrongLength {
        /// The field's size in bytes.
        expected: usize,
        /// The decoded length.
        got: usize,
    },
    /// `DATA` longer than the list's SSZ limit.
    #[error("{got} bytes exceed the limit of {limit}")]
    TooLong {
        /// The list's limit.
        limit: usize,
        /// The decoded length.
        got: usize,
    },
    /// A `QUANTITY` that is empty (`0x`), has a leading zero, or does not fit its type.
    #[error("invalid quantity: {0}")]
    InvalidQuantity(&'static str),
}

fn strip_prefix(s: &str) -> Result<&str, HexError> {
    s.strip_prefix("0x").ok_or(HexError::MissingPrefix)
}

fn digits_to_len(digits: &str) -> Result<usize, HexError> {
    if !digits.len().is_multiple_of(2) {
        return Err(HexError::OddLength(digits.len()));
    }
    Ok(digits.len() / 2)
}

/// Decodes `0x…` into exactly `out.len()` bytes.
pub fn decode_into(s: &str, out: &mut [u8]) -> Result<(), HexError> {
    let digits = strip_prefix(s)?;
    let len = digits_to_len(digits)?;
    if len != out.len() {
        return Err(HexError::WrongLength {
            expected: out.len(),
            got: len,
        });
    }
    hex::decode_to_slice(digits, out).map_err(|_| HexError::InvalidDigit)
}

/// Decodes `0x…` into a new vector of at most `limit` bytes.
pub fn decode_vec(s: &str, limit: usize) -> Result<Vec<u8>, HexError> {
    let digits = strip_prefix(s)?;
    let len = digits_to_len(digits)?;
    if len > limit {
        return Err(HexError::TooLong { limit, got: len });
    }
    let mut out = vec![0u8; len];
    hex::decode_to_slice(digits, &mut out).map_err(|_| HexError::InvalidDigit)?;
    Ok(out)
}

/// `0x` followed by two lowercase hex digits per byte.
pub fn encode(bytes: &[u8]) -> String {
    hex::encode_prefixed(bytes)
}

/// A byte string the engine API carries as `DATA`.
pub trait HexData: Sized {
    /// Decodes from a `0x`-prefixed hex string, checking the length the type allows.
    fn from_hex(s: &str) -> Result<Self, HexError>;
    /// The bytes to encode.
    fn hex_bytes(&self) -> &[u8];
}

impl<const N: usize> HexData for FixedBytes<N> {
    fn from_hex(s: &str) -> Result<Self, HexError> {
        let mut out = [0u8; N];
        decode_into(s, &mut out)?;
        Ok(Self(out))
    }
    fn hex_bytes(&self) -> &[u8] {
        self.as_slice()
    }
}

impl HexData for Address {
    fn from_hex(s: &str) -> Result<Self, HexError> {
        FixedBytes::<20>::from_hex(s).map(Address)
    }
    fn hex_bytes(&self) -> &[u8] {
        self.as_slice()
    }
}

impl HexData for Vec<u8> {
    fn from_hex(s: &str) -> Result<Self, HexError> {
        decode_vec(s, usize::MAX)
    }
    fn hex_bytes(&self) -> &[u8] {
        self
    }
}

impl<N: Unsigned> HexData for VariableList<u8, N> {
    fn from_hex(s: &str) -> Result<Self, HexError> {
        let bytes = decode_vec(s, N::to_usize())?;
        let got = bytes.len();
        Self::new(bytes).map_err(|_| HexError::TooLong {
            limit: N::to_usize(),
            got,
        })
    }
    fn hex_bytes(&self) -> &[u8] {
        self
    }
}

impl<N: Unsigned> HexData for FixedVector<u8, N> {
    fn from_hex(s: &str) -> Result<Self, HexError> {
        let digits = strip_prefix(s)?;
        let len = digits_to_len(digits)?;
        if len != N::to_usize() {
            return Err(HexError::WrongLength {
                expected: N::to_usize(),
                got: len,
            });
        }
        let mut out = vec![0u8; len];
        hex::decode_to_slice(digits, &mut out).map_err(|_| HexError::InvalidDigit)?;
        Self::new(out).map_err(|_| HexError::WrongLength {
            expected: N::to_usize(),
            got: len,
        })
    }
    fn hex_bytes(&self) -> &[u8] {
        self
    }
}

impl HexData for ProgressiveByteList {
    fn from_hex(s: &str) -> Result<Self, HexError> {
        decode_vec(s, usize::MAX).map(Self::new)
    }
    fn hex_bytes(&self) -> &[u8] {
        self
    }
}

struct HexVisitor<T>(PhantomData<T>);

impl<T: HexData> Visitor<'_> for HexVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a 0x-prefixed hex string")
    }

    fn visit_str<Er: de::Error>(self, v: &str) -> Result<T, Er> {
        T::from_hex(v).map_err(Er::custom)
    }
}

struct HexSeed<T>(PhantomData<T>);

impl<'de, T: HexData> DeserializeSeed<'de> for HexSeed<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_str(HexVisitor(PhantomData))
    }
}

/// `DATA`: one byte string.
pub mod data {
    use super::*;

    /// Serializes as `0x…`.
    pub fn serialize<S: Serializer, T: HexData>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(value.hex_bytes()))
    }

    /// Deserializes from `0x…`, checking the type's length.
    pub fn deserialize<'de, D: Deserializer<'de>, T: HexData>(d: D) -> Result<T, D::Error> {
        d.deserialize_str(HexVisitor(PhantomData))
    }
}

/// `DATA` or `null`.
pub mod opt_data {
    use super::*;

    /// Serializes `None` as `null`.
    pub fn serialize<S: Serializer, T: HexData>(
        value: &Option<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => s.serialize_str(&encode(v.hex_bytes())),
            None => s.serialize_none(),
        }
    }

    /// Deserializes `null` (or an absent field, with `#[serde(default)]`) as `None`.
    pub fn deserialize<'de, D: Deserializer<'de>, T: HexData>(d: D) -> Result<Option<T>, D::Error> {
        struct OptVisitor<T>(PhantomData<T>);
        impl<'de, T: HexData> Visitor<'de> for OptVisitor<T> {
            type Value = Option<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("null or a 0x-prefixed hex string")
            }
            fn visit_none<Er: de::Error>(self) -> Result<Self::Value, Er> {
                Ok(None)
            }
            fn visit_unit<Er: de::Error>(self) -> Result<Self::Value, Er> {
                Ok(None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_str(HexVisitor(PhantomData)).map(Some)
            }
        }
        d.deserialize_option(OptVisitor(PhantomData))
    }
}

/// Decodes a JSON array of `DATA` into a vector of at most `limit` items.
fn deserialize_seq<'de, D: Deserializer<'de>, T: HexData>(
    d: D,
    limit: usize,
) -> Result<Vec<T>, D::Error> {
    struct SeqVisitor<T> {
        limit: usize,
        _t: PhantomData<T>,
    }
    impl<'de, T: HexData> Visitor<'de> for SeqVisitor<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "an array of at most {} hex strings", self.limit)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            // The size hint comes from the peer: cap it so a lie cannot allocate much.
            let mut out =
                Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.limit).min(4096));
            while let Some(item) = seq.next_element_seed(HexSeed::<T>(PhantomData))? {
                if out.len() == self.limit {
                    return Err(de::Error::custom(format!(
                        "more than {} items in a list",
                        self.limit
                    )));
                }
                out.push(item);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(SeqVisitor {
        limit,
        _t: PhantomData,
    })
}

fn serialize_seq<S: Serializer, T: HexData>(items: &[T], s: S) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(items.len()))?;
    for item in items {
        seq.serialize_element(&encode(item.hex_bytes()))?;
    }
    seq.end()
}

/// `Array of DATA` as a `Vec`.
pub mod data_vec {
    use super::*;

    /// Serializes as a JSON array of `0x…` strings.
    pub fn serialize<S: Serializer, T: HexData>(items: &[T], s: S) -> Result<S::Ok, S::Error> {
        serialize_seq(items, s)
    }

    /// Deserializes a JSON array of `0x…` strings.
    pub fn deserialize<'de, D: Deserializer<'de>, T: HexData>(d: D) -> Result<Vec<T>, D::Error> {
        deserialize_seq(d, usize::MAX)
    }
}

/// `Array of DATA` as an SSZ `VariableList`, rejecting more items than its limit.
pub mod data_list {
    use super::*;

    /// Serializes as a JSON array of `0x…` strings.
    pub fn serialize<S: Serializer, T: HexData, N: Unsigned>(
        items: &VariableList<T, N>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        serialize_seq(items, s)
    }

    /// Deserializes a JSON array of `0x…` strings of at most `N` items.
    pub fn deserialize<'de, D: Deserializer<'de>, T: HexData, N: Unsigned>(
        d: D,
    ) -> Result<VariableList<T, N>, D::Error> {
        let items = deserialize_seq(d, N::to_usize())?;
        VariableList::new(items).map_err(|e| de::Error::custom(format!("{e:?}")))
    }
}

/// `Array of DATA` as a progressive list (Gloas's unbounded SSZ lists).
pub mod data_progressive_list {
    use super::*;

    /// Serializes as a JSON array of `0x…` strings.
    pub fn serialize<S: Serializer, T: HexData>(
        items: &ProgressiveList<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        serialize_seq(items, s)
    }

    /// Deserializes a JSON array of `0x…` strings.
    pub fn deserialize<'de, D: Deserializer<'de>, T: HexData>(
        d: D,
    ) -> Result<ProgressiveList<T>, D::Error> {
        deserialize_seq(d, usize::MAX).map(ProgressiveList::new)
    }
}

/// `Array of DATA|null`: a vector whose items may be `null`.
pub mod opt_data_vec {
    use super::*;

    /// Serializes `None` items as `null`.
    pub fn serialize<S: Serializer, T: HexData>(
        items: &[Option<T>],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(items.len()))?;
        for item in items {
            seq.serialize_element(&item.as_ref().map(|v| encode(v.hex_bytes())))?;
        }
        seq.end()
    }

    /// Deserializes a JSON array of `0x…` strings and `null`s.
    pub fn deserialize<'de, D: Deserializer<'de>, T: HexData>(
        d: D,
    ) -> Result<Vec<Option<T>>, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(transparent, bound = "T: HexData")]
        struct Item<T: HexData>(#[serde(with = "super::opt_data")] Option<T>);
        let items: Vec<Item<T>> = serde::Deserialize::deserialize(d)?;
        Ok(items.into_iter().map(|i| i.0).collect())
    }
}

/// Parses the digits of a `QUANTITY` (after `0x`) of at most `max_digits` digits.
fn quantity_digits(s: &str, max_digits: usize) -> Result<&str, HexError> {
    let digits = strip_prefix(s)?;
    if digits.is_empty() {
        return Err(HexError::InvalidQuantity("no digits"));
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err(HexError::InvalidQuantity("leading zero"));
    }
    if digits.len() > max_digits {
        return Err(HexError::InvalidQuantity("too large"));
    }
    Ok(digits)
}

/// A 64-bit `QUANTITY`: `0x` and the digits without leading zeros.
pub fn encode_quantity(value: u64) -> String {
    format!("{value:#x}")
}

/// Parses a 64-bit `QUANTITY`.
pub fn parse_quantity_u64(s: &str) -> Result<u64, HexError> {
    let digits = quantity_digits(s, 16)?;
    u64::from_str_radix(digits, 16).map_err(|_| HexError::InvalidDigit)
}

/// Parses a 256-bit `QUANTITY`.
pub fn parse_quantity_u256(s: &str) -> Result<U256, HexError> {
    let digits = quantity_digits(s, 64)?;
    U256::from_str_radix(digits, 16).map_err(|_| HexError::InvalidDigit)
}

/// `QUANTITY`, 64 bits.
pub mod quantity {
    use super::*;

    /// Serializes as `0x…` without leading zeros (`0x0` for zero).
    pub fn serialize<S: Serializer>(value: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{value:#x}"))
    }

    /// Deserializes a strict `QUANTITY`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = u64;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 0x-prefixed hex quantity")
            }
            fn visit_str<Er: de::Error>(self, v: &str) -> Result<u64, Er> {
                parse_quantity_u64(v).map_err(Er::custom)
            }
        }
        d.deserialize_str(V)
    }
}

/// `QUANTITY`, 256 bits.
pub mod quantity_u256 {
    use super::*;

    /// Serializes as `0x…` without leading zeros (`0x0` for zero).
    pub fn serialize<S: Serializer>(value: &U256, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{value:#x}"))
    }

    /// Deserializes a strict 256-bit `QUANTITY`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<U256, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = U256;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 0x-prefixed hex quantity")
            }
            fn visit_str<Er: de::Error>(self, v: &str) -> Result<U256, Er> {
                parse_quantity_u256(v).map_err(Er::custom)
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::B256;

    #[test]
    fn quantities_are_strict() {
        assert_eq!(parse_quantity_u64("0x0"), Ok(0));
        assert_eq!(parse_quantity_u64("0x1a"), Ok(26));
        assert_eq!(parse_quantity_u64("0xffffffffffffffff"), Ok(u64::MAX));
        assert!(parse_quantity_u64("0x").is_err());
        assert!(parse_quantity_u64("0x01").is_err());
        assert!(parse_quantity_u64("1a").is_err());
        assert!(parse_quantity_u64("0x10000000000000000").is_err());
        assert!(parse_quantity_u64("0xg").is_err());
        assert_eq!(parse_quantity_u256("0x100"), Ok(U256::from(256u64)));
        assert_eq!(format!("{:#x}", U256::ZERO), "0x0");
        assert_eq!(format!("{:#x}", 0u64), "0x0");
    }

    #[test]
    fn data_checks_length_and_prefix() {
        let hash = format!("0x{}", "ab".repeat(32));
        let parsed = B256::from_hex(&hash).expect("32 bytes");
        assert_eq!(parsed, B256::repeat_byte(0xab));
        assert_eq!(encode(parsed.as_slice()), hash);
        assert!(B256::from_hex(&format!("0x{}", "ab".repeat(31))).is_err());
        assert!(B256::from_hex(&"ab".repeat(32)).is_err());
        assert!(B256::from_hex(&format!("0x{}", "zz".repeat(32))).is_err());
        assert!(Vec::<u8>::from_hex("0xabc").is_err());
        assert_eq!(Vec::<u8>::from_hex("0x"), Ok(vec![]));
        type L = VariableList<u8, ssz_types::typenum::U2>;
        assert!(L::from_hex("0x0102").is_ok());
        assert_eq!(
            L::from_hex("0x010203"),
            Err(HexError::TooLong { limit: 2, got: 3 })
        );
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
        struct Sample {
            #[serde(with = "quantity")]
            small: u64,
            #[serde(with = "quantity_u256")]
            big: U256,
            #[serde(with = "data")]
            bytes: Vec<u8>,
            #[serde(with = "data_vec")]
            hashes: Vec<types::B256>,
        }

        proptest! {
            #[test]
            fn json_round_trips(
                small: u64,
                big in any::<[u8; 32]>(),
                bytes in proptest::collection::vec(any::<u8>(), 0..300),
                hashes in proptest::collection::vec(any::<[u8; 32]>(), 0..5),
            ) {
                let sample = Sample {
                    small,
                    big: U256::from_be_bytes(big),
                    bytes,
                    hashes: hashes.into_iter().map(types::B256::new).collect(),
                };
                let json = serde_json::to_string(&sample).expect("serializes");
                let back: Sample = serde_json::from_str(&json).expect("deserializes");
                prop_assert_eq!(back, sample);
            }

            #[test]
            fn quantities_match_a_naive_parser(value: u64) {
                // Canonical form round-trips; the same value zero-padded is refused.
                let text = format!("{value:#x}");
                prop_assert_eq!(parse_quantity_u64(&text), Ok(value));
                let padded = format!("0x0{value:x}");
                prop_assert!(parse_quantity_u64(&padded).is_err());
            }
        }
    }
}
