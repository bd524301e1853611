//! `basic_progressive_list` (`proglist_<type>_…`) and `progressive_bitlist` handlers.

use std::path::Path;

use alloy_primitives::{U128, U256};

use super::case::{Suite, check};
use super::progressive::{ProgressiveBitList, ProgressiveList};

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
        "bool" => check::<ProgressiveList<bool>>(suite, dir),
        "uint8" => check::<ProgressiveList<u8>>(suite, dir),
        "uint16" => check::<ProgressiveList<u16>>(suite, dir),
        "uint32" => check::<ProgressiveList<u32>>(suite, dir),
        "uint64" => check::<ProgressiveList<u64>>(suite, dir),
        "uint128" => check::<ProgressiveList<U128>>(suite, dir),
        "uint256" => check::<ProgressiveList<U256>>(suite, dir),
        other => Err(format!("unknown progressive list element type {other:?}")),
    }
}

/// Every `progressive_bitlist` case is a `ProgressiveBitlist`.
pub(super) fn run_progressive_bitlist(suite: Suite, dir: &Path) -> Result<(), String> {
    check::<ProgressiveBitList>(suite, dir)
}
