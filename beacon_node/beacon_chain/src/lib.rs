//! The beacon chain: everything the node verifies, imports and serves goes through here
//! (`../shared/ARCHITECTURE.md`, "Data flow").
//!
//! Assembled piece by piece; today it holds the caches behind the p2p spec's "first one seen"
//! IGNORE rules ([`observed`]) and the construction and inclusion proof of data column sidecars
//! ([`data_column_sidecars`]).

pub mod data_column_sidecars;
pub mod observed;
