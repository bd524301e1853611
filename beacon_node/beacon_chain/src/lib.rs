//! The beacon chain: everything the node verifies, imports and serves goes through here
//! (`../shared/ARCHITECTURE.md`, "Data flow").
//!
//! Assembled piece by piece; today it holds the caches behind the p2p spec's "first one seen"
//! IGNORE rules ([`observed`]) the construction and inclusion proof of data column sidecars
//! ([`data_column_sidecars`]), their KZG batches ([`data_column_verification`]) and the data
//! availability checker that holds blocks until their custody columns are here
//! ([`data_availability_checker`]).

pub mod data_availability_checker;
pub mod data_column_sidecars;
pub mod data_column_verification;
pub mod observed;

#[cfg(test)]
mod test_utils;
