//! The EIP-3076 slashing-protection interchange format, version 5, as JSON.
//!
//! Integers are decimal strings, byte strings `0x`-prefixed hex, as the EIP's schema says.
//!
//! [spec]: https://eips.ethereum.org/EIPS/eip-3076

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use types::{BLSPubkey, Epoch, FixedBytes, Root, Slot};

/// The only `interchange_format_version` this crate reads and writes.
pub const INTERCHANGE_FORMAT_VERSION: &str = "5";

/// Why an interchange document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InterchangeParseError {
    /// Not JSON, or not the interchange's shape (a missing field, a bad hex string or
    /// integer); the message names the place.
    #[error("invalid interchange JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A version other than [`INTERCHANGE_FORMAT_VERSION`].
    #[error(
        "unsupported interchange_format_version {found:?} (only {INTERCHANGE_FORMAT_VERSION:?})"
    )]
    UnsupportedVersion {
        /// The version the document declares.
        found: String,
    },
}

/// A whole interchange document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interchange {
    /// The format version and the chain the records belong to.
    pub metadata: InterchangeMetadata,
    /// One entry per validator (a validator may appear in several entries).
    pub data: Vec<InterchangeData>,
}

/// `metadata` of an interchange document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterchangeMetadata {
    /// `interchange_format_version`: `"5"`.
    pub interchange_format_version: String,
    /// The chain's `genesis_validators_root`.
    #[serde(with = "hex_bytes")]
    pub genesis_validators_root: Root,
}

/// The records of one validator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterchangeData {
    /// The validator's BLS public key.
    #[serde(with = "hex_bytes")]
    pub pubkey: BLSPubkey,
    /// Blocks it signed.
    pub signed_blocks: Vec<SignedBlock>,
    /// Attestations it signed.
    pub signed_attestations: Vec<SignedAttestation>,
}

/// A block proposal that was signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedBlock {
    /// The block's slot.
    #[serde(with = "decimal")]
    pub slot: Slot,
    /// The signing root of the block, when known.
    #[serde(
        default,
        with = "optional_hex_root",
        skip_serializing_if = "Option::is_none"
    )]
    pub signing_root: Option<Root>,
}

/// An attestation that was signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedAttestation {
    /// `data.source.epoch`.
    #[serde(with = "decimal")]
    pub source_epoch: Epoch,
    /// `data.target.epoch`.
    #[serde(with = "decimal")]
    pub target_epoch: Epoch,
    /// The signing root of the attestation data, when known.
    #[serde(
        default,
        with = "optional_hex_root",
        skip_serializing_if = "Option::is_none"
    )]
    pub signing_root: Option<Root>,
}

impl Interchange {
    /// Parses a document and checks its version.
    pub fn from_json_str(json: &str) -> Result<Self, InterchangeParseError> {
        Self::checked(serde_json::from_str(json)?)
    }

    /// Reads a document and checks its version.
    pub fn from_json_reader(reader: impl std::io::Read) -> Result<Self, InterchangeParseError> {
        Self::checked(serde_json::from_reader(reader)?)
    }

    fn checked(interchange: Self) -> Result<Self, InterchangeParseError> {
        let version = &interchange.metadata.interchange_format_version;
        if version != INTERCHANGE_FORMAT_VERSION {
            return Err(InterchangeParseError::UnsupportedVersion {
                found: version.clone(),
            });
        }
        Ok(interchange)
    }

    /// The document as pretty-printed JSON.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string_pretty(self)
            .expect("the interchange holds only strings, lists and objects")
    }
}

/// A value serialized as a decimal string (`"42"`), as the EIP's schema requires.
mod decimal {
    use super::*;

    pub(super) fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        // Decimal digits only: `u64::from_str` would also take a leading `+`.
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(de::Error::custom(format!(
                "expected a decimal integer string, got {text:?}"
            )));
        }
        u64::from_str(&text).map_err(|e| de::Error::custom(format!("{text:?}: {e}")))
    }
}

/// Fixed-size bytes serialized as `0x`-prefixed hex.
mod hex_bytes {
    use super::*;

    pub(super) fn serialize<S: Serializer, const N: usize>(
        value: &FixedBytes<N>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&HexDisplay(value.as_slice()))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        deserializer: D,
    ) -> Result<FixedBytes<N>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        parse_hex(&text).map_err(de::Error::custom)
    }
}

/// An optional root as `0x`-prefixed hex, absent when `None`.
mod optional_hex_root {
    use super::*;

    pub(super) fn serialize<S: Serializer>(
        value: &Option<Root>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(root) => serializer.collect_str(&HexDisplay(root.as_slice())),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Root>, D::Error> {
        let text = <Option<std::borrow::Cow<'de, str>>>::deserialize(deserializer)?;
        text.map(|t| parse_hex(&t).map_err(de::Error::custom))
            .transpose()
    }
}

fn parse_hex<const N: usize>(text: &str) -> Result<FixedBytes<N>, String> {
    let digits = text
        .strip_prefix("0x")
        .ok_or_else(|| format!("expected 0x-prefixed hex, got {text:?}"))?;
    if digits.len() != 2 * N {
        return Err(format!(
            "expected {N} bytes of hex, got {} characters in {text:?}",
            digits.len()
        ));
    }
    let mut bytes = [0u8; N];
    hex::decode_to_slice(digits, &mut bytes).map_err(|e| format!("{text:?}: {e}"))?;
    Ok(FixedBytes(bytes))
}

struct HexDisplay<'a>(&'a [u8]);

impl fmt::Display for HexDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{}", hex::encode(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUBKEY: &str = "0xa99a76ed7796f7be22d5b7e85deeb7c5677e88e511e0b337618f8c4eb61349b4bf2d153f649f7b53359fe8b94a38e44c";

    fn document(version: &str, slot: &str, root: &str) -> String {
        format!(
            r#"{{"metadata": {{"interchange_format_version": "{version}",
                "genesis_validators_root": "0x{gvr}"}},
              "data": [{{"pubkey": "{PUBKEY}",
                "signed_blocks": [{{"slot": {slot}{root}}}],
                "signed_attestations": [{{"source_epoch": "1", "target_epoch": "2"}}]}}]}}"#,
            gvr = "04".repeat(32),
        )
    }

    #[test]
    fn reads_the_eip_example_shape_and_round_trips() {
        let root = format!(r#", "signing_root": "0x{}""#, "ab".repeat(32));
        let interchange = Interchange::from_json_str(&document("5", "\"81952\"", &root)).unwrap();
        assert_eq!(interchange.data[0].signed_blocks[0].slot, 81952);
        assert_eq!(
            interchange.data[0].signed_blocks[0].signing_root,
            Some(Root::repeat_byte(0xab))
        );
        assert_eq!(
            interchange.data[0].signed_attestations[0].signing_root,
            None
        );
        assert_eq!(
            interchange.metadata.genesis_validators_root,
            Root::repeat_byte(4)
        );
        let again = Interchange::from_json_str(&interchange.to_json_string()).unwrap();
        assert_eq!(again, interchange);
        // An absent root stays absent on export.
        assert!(!interchange.to_json_string().contains("null"));
    }

    #[test]
    fn refuses_other_versions() {
        let err = Interchange::from_json_str(&document("4", "\"1\"", "")).unwrap_err();
        assert!(matches!(err, InterchangeParseError::UnsupportedVersion { found } if found == "4"));
    }

    #[test]
    fn refuses_numbers_that_are_not_decimal_strings() {
        for slot in [
            "1",
            "\"-1\"",
            "\"+1\"",
            "\"0x10\"",
            "\"\"",
            "\"18446744073709551616\"",
        ] {
            let err = Interchange::from_json_str(&document("5", slot, "")).unwrap_err();
            assert!(
                matches!(err, InterchangeParseError::Json(_)),
                "{slot}: {err}"
            );
        }
    }

    #[test]
    fn refuses_malformed_hex() {
        for root in [
            format!(r#", "signing_root": "{}""#, "ab".repeat(32)),
            format!(r#", "signing_root": "0x{}""#, "ab".repeat(31)),
            format!(r#", "signing_root": "0x{}zz""#, "ab".repeat(31)),
        ] {
            let err = Interchange::from_json_str(&document("5", "\"1\"", &root)).unwrap_err();
            assert!(
                matches!(err, InterchangeParseError::Json(_)),
                "{root}: {err}"
            );
        }
    }
}
