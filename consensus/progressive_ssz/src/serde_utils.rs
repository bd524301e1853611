//! JSON helpers in the consensus-spec style, for `#[serde(with = "…")]` on fields whose element
//! type's own serde does not follow it.
//!
//! [spec]: ssz/simple-serialize.md#json-mapping

/// `0x`-prefixed lower-case hex of `bytes`.
pub(crate) fn encode_prefixed_hex(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

/// The bytes of a `0x`-prefixed hex string.
pub(crate) fn decode_prefixed_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits = text
        .strip_prefix("0x")
        .ok_or_else(|| format!("hex string without 0x prefix: {text:?}"))?;
    hex::decode(digits).map_err(|e| format!("invalid hex string: {e}"))
}

/// `ProgressiveList<u64>` as an array of decimal strings (`["1", "2"]`), the JSON of
/// `ProgressiveList[uint64]` (e.g. Gloas `AttestingIndices`). Decimal numbers are accepted on
/// input too.
pub mod quoted_u64_list {
    use std::fmt;

    use serde::de::{SeqAccess, Visitor};
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::ProgressiveList;

    /// Writes `list` as an array of decimal strings.
    pub fn serialize<S: Serializer>(
        list: &ProgressiveList<u64>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(list.iter().map(u64::to_string))
    }

    /// Reads an array of decimal strings (or numbers).
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<ProgressiveList<u64>, D::Error> {
        deserializer.deserialize_seq(QuotedU64ListVisitor)
    }

    struct QuotedU64ListVisitor;

    impl<'de> Visitor<'de> for QuotedU64ListVisitor {
        type Value = ProgressiveList<u64>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of uint64 as decimal strings")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            // No capacity from the size hint: it comes from the input.
            let mut list = ProgressiveList::empty();
            while let Some(QuotedU64(value)) = seq.next_element()? {
                list.push(value);
            }
            Ok(list)
        }
    }

    /// One `uint64`, from a decimal string or a number.
    struct QuotedU64(u64);

    impl<'de> Deserialize<'de> for QuotedU64 {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(QuotedU64Visitor)
        }
    }

    struct QuotedU64Visitor;

    impl Visitor<'_> for QuotedU64Visitor {
        type Value = QuotedU64;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a uint64 as a decimal string")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<QuotedU64, E> {
            text.parse()
                .map(QuotedU64)
                .map_err(|e| E::custom(format!("invalid uint64 {text:?}: {e}")))
        }

        fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<QuotedU64, E> {
            Ok(QuotedU64(value))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::ProgressiveList;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Indices {
        #[serde(with = "quoted_u64_list")]
        indices: ProgressiveList<u64>,
    }

    #[test]
    fn quoted_u64_list_round_trips_as_strings() {
        let value = Indices {
            indices: ProgressiveList::new(vec![0, 18446744073709551615]),
        };
        let json = serde_json::to_string(&value).expect("serializable");
        assert_eq!(json, r#"{"indices":["0","18446744073709551615"]}"#);
        assert_eq!(
            serde_json::from_str::<Indices>(&json).expect("valid JSON"),
            value
        );
        assert_eq!(
            serde_json::from_str::<Indices>(r#"{"indices":[3,"4"]}"#).expect("valid JSON"),
            Indices {
                indices: ProgressiveList::new(vec![3, 4])
            }
        );
        assert!(serde_json::from_str::<Indices>(r#"{"indices":["-1"]}"#).is_err());
        assert!(
            serde_json::from_str::<Indices>(r#"{"indices":["18446744073709551616"]}"#).is_err()
        );
    }

    #[test]
    fn prefixed_hex_requires_prefix_and_even_digits() {
        assert_eq!(decode_prefixed_hex("0x0aFF"), Ok(vec![0x0a, 0xff]));
        assert_eq!(decode_prefixed_hex("0x"), Ok(vec![]));
        assert!(decode_prefixed_hex("0aff").is_err());
        assert!(decode_prefixed_hex("0xa").is_err());
        assert_eq!(encode_prefixed_hex(&[0xab, 0x01]), "0xab01");
    }
}
