//! The Beacon API's JSON conventions as serde helpers, for `#[serde(with = "...")]`.
//!
//! The spec (`types/primitive.yaml`) writes integers as quoted decimal strings (`"1"`), bytes as
//! `0x`-prefixed lower-case hex, bitlists and bitvectors as the hex of their SSZ bytes, and
//! `Uint256` values (wei) as quoted decimals too.
//!
//! The consensus containers get the same conventions from their own derives (the `serde` feature
//! of `types`, which uses the same `ethereum_serde_utils` and `ssz_types::serde_utils` modules);
//! this module is for the API's own types and for code outside `types`:
//!
//! | JSON | Rust | helper |
//! |---|---|---|
//! | `"123"` | `u64` | [`quoted_u64`] |
//! | `"123"` | `u8` | [`quoted_u8`] |
//! | `"123"` or absent | `Option<u64>` | [`quoted_u64_option`] |
//! | `["1", "2"]` | `Vec<u64>` | [`quoted_u64_vec`] |
//! | `"1000000000"` | `U256` | [`quoted_u256`] |
//! | `"0x0a0b"` | `Vec<u8>` | [`hex_bytes`] |
//! | `"0x0a0b"` | `FixedBytes<N>`, `B256`, `Address` | none needed: their own serde is 0x-hex |
//! | `"0x0a0b"` | `FixedVector<u8, N>` / `VariableList<u8, N>` | [`hex_fixed_vec`] / [`hex_var_list`] |
//! | `"0x01"` (SSZ of the bits) | `BitList<N>`, `BitVector<N>` | none needed: their own serde is hex SSZ |
//! | `"fulu"` | [`ForkName`] | [`fork_name`] |
//!
//! Decoding accepts unquoted integers as well (clients in the wild send both); encoding always
//! quotes.

use serde::{Deserialize, Deserializer, Serializer};
use types::ForkName;

pub use serde_utils::{quoted_u8, quoted_u64, quoted_u64_vec, quoted_u256};
pub use ssz_types::serde_utils::{
    hex_fixed_vec, hex_var_list, list_of_hex_fixed_vec, list_of_hex_var_list, quoted_u64_var_list,
};

/// `Vec<u8>` as `0x`-prefixed hex.
pub mod hex_bytes {
    use super::*;

    /// Writes the bytes as `0x`-prefixed lower-case hex.
    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&serde_utils::hex::encode(bytes))
    }

    /// Reads `0x`-prefixed hex (either case).
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        serde_utils::hex::decode(&s).map_err(serde::de::Error::custom)
    }
}

/// `Option<u64>` as a quoted decimal, `null` or absent for `None` (use with
/// `#[serde(default, skip_serializing_if = "Option::is_none")]` for optional fields).
pub mod quoted_u64_option {
    use super::*;

    /// Writes `Some(n)` as `"n"` and `None` as `null`.
    pub fn serialize<S: Serializer>(value: &Option<u64>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(n) => serializer.serialize_str(&n.to_string()),
            None => serializer.serialize_none(),
        }
    }

    /// Reads a quoted or unquoted integer, or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<u64>, D::Error> {
        #[derive(Deserialize)]
        struct Quoted(#[serde(with = "serde_utils::quoted_u64")] u64);
        Ok(Option::<Quoted>::deserialize(deserializer)?.map(|q| q.0))
    }
}

/// [`ForkName`] as the spec's lower-case name (`"phase0"`, …, `"fulu"`), the
/// `ConsensusVersion` schema.
pub mod fork_name {
    use super::*;

    /// Writes the fork's lower-case name.
    pub fn serialize<S: Serializer>(fork: &ForkName, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(fork.as_str())
    }

    /// Reads a fork name; an unknown name is an error naming it.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ForkName, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use ssz_types::{BitList, BitVector, VariableList, typenum};
    use types::{B256, Bytes4, ForkName, U256};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        #[serde(with = "super::quoted_u64")]
        slot: u64,
        #[serde(with = "super::quoted_u8")]
        flags: u8,
        #[serde(
            default,
            with = "super::quoted_u64_option",
            skip_serializing_if = "Option::is_none"
        )]
        maybe: Option<u64>,
        #[serde(with = "super::quoted_u64_vec")]
        indices: Vec<u64>,
        #[serde(with = "super::quoted_u256")]
        wei: U256,
        #[serde(with = "super::hex_bytes")]
        bytes: Vec<u8>,
        #[serde(with = "super::hex_var_list")]
        extra: VariableList<u8, typenum::U4>,
        root: B256,
        version: Bytes4,
        bits: BitList<typenum::U16>,
        vector: BitVector<typenum::U8>,
        #[serde(with = "super::fork_name")]
        fork: ForkName,
    }

    const SAMPLE_JSON: &str = r#"{"slot":"18446744073709551615","flags":"7","maybe":"3","indices":["1","22"],"wei":"123456789012345678901234567890","bytes":"0x00ff10","extra":"0xcafe","root":"0x0100000000000000000000000000000000000000000000000000000000000002","version":"0x05000000","bits":"0x0d","vector":"0x81","fork":"fulu"}"#;

    fn sample() -> Sample {
        let mut bits = BitList::with_capacity(3).expect("3 bits fit in 16");
        bits.set(0, true).expect("bit 0 exists");
        bits.set(2, true).expect("bit 2 exists");
        let mut vector = BitVector::new();
        vector.set(0, true).expect("bit 0 exists");
        vector.set(7, true).expect("bit 7 exists");
        let mut root = B256::ZERO;
        root.0[0] = 1;
        root.0[31] = 2;
        Sample {
            slot: u64::MAX,
            flags: 7,
            maybe: Some(3),
            indices: vec![1, 22],
            wei: U256::from(123_456_789_012_345_678_901_234_567_890_u128),
            bytes: vec![0, 0xff, 0x10],
            extra: VariableList::new(vec![0xca, 0xfe]).expect("2 bytes fit in 4"),
            root,
            version: Bytes4::from([5, 0, 0, 0]),
            bits,
            vector,
            fork: ForkName::Fulu,
        }
    }

    #[test]
    fn conventions_encode_as_the_spec_writes_them() {
        assert_eq!(
            serde_json::to_string(&sample()).expect("encodes"),
            SAMPLE_JSON
        );
    }

    #[test]
    fn conventions_decode_the_spec_shape() {
        let decoded: Sample = serde_json::from_str(SAMPLE_JSON).expect("decodes");
        assert_eq!(decoded, sample());
    }

    #[test]
    fn unquoted_integers_and_absent_options_are_accepted() {
        let json = SAMPLE_JSON
            .replace(
                r#""slot":"18446744073709551615""#,
                r#""slot":18446744073709551615"#,
            )
            .replace(r#""maybe":"3","#, "");
        let decoded: Sample = serde_json::from_str(&json).expect("decodes");
        assert_eq!(decoded.slot, u64::MAX);
        assert_eq!(decoded.maybe, None);
    }

    #[test]
    fn bad_values_are_errors_not_panics() {
        for (from, to) in [
            (
                r#""slot":"18446744073709551615""#,
                r#""slot":"18446744073709551616""#,
            ),
            (r#""slot":"18446744073709551615""#, r#""slot":"-1""#),
            (r#""bytes":"0x00ff10""#, r#""bytes":"0x0ff10""#),
            (r#""bytes":"0x00ff10""#, r#""bytes":"00zz""#),
            (r#""extra":"0xcafe""#, r#""extra":"0xcafecafe00""#),
            (r#""bits":"0x0d""#, r#""bits":"0x00""#),
            (r#""fork":"fulu""#, r#""fork":"gloas""#),
            (r#""root":"0x01"#, r#""root":"0x0101"#),
        ] {
            let json = SAMPLE_JSON.replace(from, to);
            assert_ne!(json, SAMPLE_JSON, "replacement {from} applied");
            assert!(
                serde_json::from_str::<Sample>(&json).is_err(),
                "{to} must be refused"
            );
        }
    }
}
