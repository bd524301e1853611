//! `basic_progressive_list` (`proglist_<type>_…`) and `progressive_bitlist` handlers.

use std::fmt::Debug;
use std::path::Path;

use alloy_primitives::{U128, U256};
use progressive_ssz::{ProgressiveBitList, ProgressiveList};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_yaml::Value;
use ssz::{Decode, Encode};
use tree_hash::TreeHash;

use super::case::{Suite, check};
use super::yaml::ToYaml;
use crate::files::{read_ssz_snappy, read_yaml};

pub(super) fn run_basic_progressive_list(
    case: &str,
    suite: Suite,
    dir: &Path,
) -> Result<(), String> {
    let elem = case
        .strip_prefix("proglist_")
        .and_then(|rest| rest.split('_').next())
        .ok_or_else(|| format!("case name {case:?} is not proglist_<type>_…"))?;
    match elem {
        "bool" => check_with_serde::<ProgressiveList<bool>>(suite, dir),
        "uint8" => check_with_serde::<ProgressiveList<u8>>(suite, dir),
        "uint16" => check_with_serde::<ProgressiveList<u16>>(suite, dir),
        "uint32" => check_with_serde::<ProgressiveList<u32>>(suite, dir),
        "uint64" => check_with_serde::<ProgressiveList<u64>>(suite, dir),
        "uint128" => check::<ProgressiveList<U128>>(suite, dir),
        "uint256" => check::<ProgressiveList<U256>>(suite, dir),
        other => Err(format!("unknown progressive list element type {other:?}")),
    }
}

/// Every `progressive_bitlist` case is a `ProgressiveBitlist`.
pub(super) fn run_progressive_bitlist(suite: Suite, dir: &Path) -> Result<(), String> {
    check_with_serde::<ProgressiveBitList>(suite, dir)
}

/// [`check`], then, for a valid case, the type's own serde against `value.yaml` (whose form is
/// the type's JSON mapping for these element types): the decoded value serializes to it and
/// deserializes from it.
fn check_with_serde<T>(suite: Suite, dir: &Path) -> Result<(), String>
where
    T: Encode + Decode + TreeHash + ToYaml + Serialize + DeserializeOwned + PartialEq + Debug,
{
    check::<T>(suite, dir)?;
    if suite == Suite::Invalid {
        return Ok(());
    }
    let value = T::from_ssz_bytes(&read_ssz_snappy(&dir.join("serialized.ssz_snappy"))?)
        .map_err(|e| format!("valid input failed to decode: {e:?}"))?;
    let expected: Value = read_yaml(&dir.join("value.yaml"))?;
    let serialized =
        serde_yaml::to_value(&value).map_err(|e| format!("serde serialization failed: {e}"))?;
    if serialized != expected {
        return Err("serde serialization differs from value.yaml".into());
    }
    let deserialized: T = serde_yaml::from_value(expected)
        .map_err(|e| format!("value.yaml failed to deserialize with serde: {e}"))?;
    if deserialized != value {
        return Err("value.yaml deserialized with serde differs from the decoded value".into());
    }
    Ok(())
}
