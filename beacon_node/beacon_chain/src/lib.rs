//! The beacon chain: everything the node verifies, imports and serves goes through here
//! (`../shared/ARCHITECTURE.md`, "Data flow").
//!
//! Assembled piece by piece; today it holds the caches behind the p2p spec's "first one seen"
//! IGNORE rules ([`observed`]).

pub mod observed;
