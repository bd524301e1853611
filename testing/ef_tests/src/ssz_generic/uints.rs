//! `uints` and `boolean` handlers: basic types on their own.

use std::path::Path;

use alloy_primitives::{U128, U256};

use super::case::{Suite, check};

/// `uints` cases are named `uint_<bits>_…`.
pub(super) fn run_uints(case: &str, suite: Suite, dir: &Path) -> Result<(), String> {
    let bits = case
        .strip_prefix("uint_")
        .and_then(|rest| rest.split('_').next())
        .ok_or_else(|| format!("case name {case:?} is not uint_<bits>_…"))?;
    match bits {
        "8" => check::<u8>(suite, dir),
        "16" => check::<u16>(suite, dir),
        "32" => check::<u32>(suite, dir),
        "64" => check::<u64>(suite, dir),
        "128" => check::<U128>(suite, dir),
        "256" => check::<U256>(suite, dir),
        other => Err(format!("no uint type of {other} bits (case {case:?})")),
    }
}

/// Every `boolean` case is a `boolean`, whatever its name.
pub(super) fn run_boolean(suite: Suite, dir: &Path) -> Result<(), String> {
    check::<bool>(suite, dir)
}
