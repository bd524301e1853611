//! Reading one `ssz_generic` case directory and checking it against a Rust type.
//!
//! [format]: consensus-specs `tests/formats/ssz_generic/README.md`

use std::fmt;
use std::path::Path;

use serde_yaml::Value;
use ssz::{Decode, Encode};
use tree_hash::{Hash256, TreeHash};

use super::yaml::ToYaml;
use crate::files::{decode_hex32, read_ssz_snappy, read_yaml};

/// The two kinds of `ssz_generic` cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Suite {
    /// `serialized.ssz_snappy` must decode, re-encode to the same bytes and hash to
    /// `meta.yaml`'s `root`; the value must equal `value.yaml`.
    Valid,
    /// `serialized.ssz_snappy` must fail to decode.
    Invalid,
}

impl Suite {
    /// The suite named by a vector directory (`valid` or `invalid`).
    pub(crate) fn from_dir_name(name: &str) -> Result<Self, String> {
        match name {
            "valid" => Ok(Self::Valid),
            "invalid" => Ok(Self::Invalid),
            other => Err(format!(
                "unknown suite {other:?} (expected valid or invalid)"
            )),
        }
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Valid => "valid",
            Self::Invalid => "invalid",
        })
    }
}

/// Runs the case in `case_dir` with `T` as the SSZ type under test.
pub(crate) fn check<T>(suite: Suite, case_dir: &Path) -> Result<(), String>
where
    T: Encode + Decode + TreeHash + ToYaml,
{
    let bytes = read_ssz_snappy(&case_dir.join("serialized.ssz_snappy"))?;
    match suite {
        Suite::Invalid => match T::from_ssz_bytes(&bytes) {
            Ok(_) => Err(format!(
                "invalid input decoded without error: 0x{}",
                abbreviated_hex(&bytes)
            )),
            Err(_) => Ok(()),
        },
        Suite::Valid => {
            let expected_root = read_root(case_dir)?;
            let expected_value: Value = read_yaml(&case_dir.join("value.yaml"))?;
            let value = T::from_ssz_bytes(&bytes)
                .map_err(|e| format!("valid input failed to decode: {e:?}"))?;
            let encoded = value.as_ssz_bytes();
            if encoded != bytes {
                return Err(format!(
                    "re-encoding differs: got 0x{}, expected 0x{}",
                    abbreviated_hex(&encoded),
                    abbreviated_hex(&bytes)
                ));
            }
            if value.ssz_bytes_len() != bytes.len() {
                return Err(format!(
                    "ssz_bytes_len {} differs from the encoding's {} bytes",
                    value.ssz_bytes_len(),
                    bytes.len()
                ));
            }
            let root = value.tree_hash_root();
            if root != expected_root {
                return Err(format!(
                    "hash_tree_root {root} differs from meta.yaml root {expected_root}"
                ));
            }
            let actual_value = value.to_yaml();
            if actual_value != expected_value {
                return Err(format!(
                    "decoded value differs from value.yaml: got {}, expected {}",
                    abbreviated_yaml(&actual_value),
                    abbreviated_yaml(&expected_value)
                ));
            }
            Ok(())
        }
    }
}

/// `root` of `meta.yaml`, a `0x`-prefixed 32-byte hex string.
fn read_root(case_dir: &Path) -> Result<Hash256, String> {
    let path = case_dir.join("meta.yaml");
    let meta: Value = read_yaml(&path)?;
    let root = meta
        .get("root")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{} has no root string", path.display()))?;
    decode_hex32(root)
        .map(Hash256::from)
        .map_err(|e| format!("{}: root: {e}", path.display()))
}

const MAX_SHOWN: usize = 200;

fn abbreviated_hex(bytes: &[u8]) -> String {
    let hex = hex::encode(&bytes[..bytes.len().min(MAX_SHOWN)]);
    if bytes.len() > MAX_SHOWN {
        format!("{hex}… ({} bytes)", bytes.len())
    } else {
        hex
    }
}

fn abbreviated_yaml(value: &Value) -> String {
    let text = serde_yaml::to_string(value).unwrap_or_else(|e| format!("<unprintable: {e}>"));
    let text = text.trim_end().replace('\n', " ");
    match text.char_indices().nth(MAX_SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
