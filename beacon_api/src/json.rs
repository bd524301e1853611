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
    hex_fixed_vec, hex_var_list, list_of_hex_var_list, quoted_u64_var_list,
};

/// `List[ByteVector[M], N]` (blobs) as a list of `0x`-prefixed hex strings. Unlike
/// `ssz_types`' helper of the same name (the `hex` crate, about 1 ms to encode a 128 KiB blob
/// and 0.4 ms to decode one), the hex is written and read with `const-hex` (SIMD, about a tenth
/// of that), and a string is decoded straight into its vector, borrowed from the input where
/// serde allows.
pub mod list_of_hex_fixed_vec {
    use std::borrow::Cow;
    use std::marker::PhantomData;

    use alloy_primitives::hex;
    use serde::de::{Error as _, SeqAccess, Visitor};
    use serde::ser::SerializeSeq;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use ssz_types::typenum::Unsigned;
    use ssz_types::{FixedVector, VariableList};

    /// Writes each vector as `0x`-prefixed lower-case hex.
    pub fn serialize<S, M, N>(
        list: &VariableList<FixedVector<u8, M>, N>,
        serializer: S,
    ) -> Result<S::Ok, S::Error>
    where
        S: Serializer,
        M: Unsigned,
        N: Unsigned,
    {
        let mut seq = serializer.serialize_seq(Some(list.len()))?;
        for bytes in list.iter() {
            seq.serialize_element(&HexRef(&bytes[..]))?;
        }
        seq.end()
    }

    /// Reads a list of `0x`-prefixed hex strings (either case) of exactly `M` bytes each, at
    /// most `N` of them.
    pub fn deserialize<'de, D, M, N>(
        deserializer: D,
    ) -> Result<VariableList<FixedVector<u8, M>, N>, D::Error>
    where
        D: Deserializer<'de>,
        M: Unsigned,
        N: Unsigned,
    {
        struct ListVisitor<M, N>(PhantomData<(M, N)>);
        impl<'de, M: Unsigned, N: Unsigned> Visitor<'de> for ListVisitor<M, N> {
            type Value = VariableList<FixedVector<u8, M>, N>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(
                    f,
                    "at most {} 0x-prefixed hex strings of {} bytes",
                    N::to_usize(),
                    M::to_usize()
                )
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(N::to_usize()));
                while let Some(HexFixed(item)) = seq.next_element::<HexFixed<M>>()? {
                    if items.len() == N::to_usize() {
                        return Err(A::Error::custom(format!(
                            "more than {} items",
                            N::to_usize()
                        )));
                    }
                    items.push(item);
                }
                VariableList::new(items).map_err(|e| A::Error::custom(format!("{e:?}")))
            }
        }
        deserializer.deserialize_seq(ListVisitor(PhantomData))
    }

    struct HexRef<'a>(&'a [u8]);

    impl Serialize for HexRef<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(&hex::encode_prefixed(self.0))
        }
    }

    struct HexFixed<M: Unsigned>(FixedVector<u8, M>);

    impl<'de, M: Unsigned> Deserialize<'de> for HexFixed<M> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let s = <Cow<'de, str>>::deserialize(deserializer)?;
            let digits = s
                .strip_prefix("0x")
                .ok_or_else(|| D::Error::custom("hex without its 0x prefix"))?;
            let len = M::to_usize();
            if digits.len() != 2 * len {
                return Err(D::Error::custom(format!(
                    "{} hex digits, expected {} ({len} bytes)",
                    digits.len(),
                    2 * len
                )));
            }
            let mut bytes = vec![0u8; len];
            hex::decode_to_slice(digits, &mut bytes).map_err(D::Error::custom)?;
            FixedVector::new(bytes)
                .map(HexFixed)
                .map_err(|e| D::Error::custom(format!("{e:?}")))
        }
    }
}

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

    type Vectors = VariableList<ssz_types::FixedVector<u8, typenum::U4>, typenum::U2>;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Ours(#[serde(with = "super::list_of_hex_fixed_vec")] Vectors);

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Theirs(#[serde(with = "ssz_types::serde_utils::list_of_hex_fixed_vec")] Vectors);

    #[test]
    fn blobs_hex_is_the_same_json_as_ssz_types_and_refuses_what_it_refuses() {
        let list = Vectors::new(vec![
            ssz_types::FixedVector::new(vec![0x0a, 0xbc, 0x00, 0xff]).unwrap(),
            ssz_types::FixedVector::new(vec![1, 2, 3, 4]).unwrap(),
        ])
        .unwrap();
        let json = serde_json::to_string(&Ours(list.clone())).unwrap();
        assert_eq!(json, r#"["0x0abc00ff","0x01020304"]"#);
        assert_eq!(json, serde_json::to_string(&Theirs(list.clone())).unwrap());
        assert_eq!(serde_json::from_str::<Ours>(&json).unwrap().0, list);
        // Upper-case digits read too; an empty list is an empty list.
        let upper: Ours = serde_json::from_str(r#"["0x0ABC00FF"]"#).unwrap();
        assert_eq!(upper.0[0], list[0]);
        assert!(serde_json::from_str::<Ours>("[]").unwrap().0.is_empty());
        for bad in [
            r#"["0abc00ff"]"#,                             // no prefix
            r#"["0x0abc00"]"#,                             // 3 bytes
            r#"["0x0abc00ff00"]"#,                         // 5 bytes
            r#"["0x0abc00fg"]"#,                           // not a digit
            r#"["0x0abc00ff","0x0abc00ff","0x0abc00ff"]"#, // 3 items
            r#""0x0abc00ff""#,                             // not a list
        ] {
            assert!(serde_json::from_str::<Ours>(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<Theirs>(bad).is_err(), "{bad}");
        }
    }
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
            (r#""fork":"fulu""#, r#""fork":"heze""#),
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
