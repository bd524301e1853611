//! The spec's helper functions in their Electra / Fulu form, shared by block, epoch and slot
//! processing, in the spec's groups: [`math`] (math and crypto), [`predicates`], [`misc`],
//! [`accessors`] (beacon state accessors) and [`mutators`] (beacon state mutators), with the
//! constants here. Everything is re-exported, so `common::get_seed` and
//! `common::accessors::get_seed` are the same function.
//!
//! Names and argument order follow the spec.
//!
//! [spec]: electra/beacon-chain.md#helper-functions

pub mod accessors;
pub mod math;
pub mod misc;
pub mod mutators;
pub mod predicates;

pub use accessors::*;
pub use math::*;
pub use misc::*;
pub use mutators::*;
pub use predicates::*;

/// `ETH1_ADDRESS_WITHDRAWAL_PREFIX`.
pub const ETH1_ADDRESS_WITHDRAWAL_PREFIX: u8 = 0x01;
/// `COMPOUNDING_WITHDRAWAL_PREFIX` [New in Electra:EIP7251].
pub const COMPOUNDING_WITHDRAWAL_PREFIX: u8 = 0x02;
/// `BLS_WITHDRAWAL_PREFIX`.
pub const BLS_WITHDRAWAL_PREFIX: u8 = 0x00;
/// `UNSET_DEPOSIT_REQUESTS_START_INDEX` [New in Electra:EIP6110].
pub const UNSET_DEPOSIT_REQUESTS_START_INDEX: u64 = u64::MAX;
/// `FULL_EXIT_REQUEST_AMOUNT` [New in Electra:EIP7002].
pub const FULL_EXIT_REQUEST_AMOUNT: u64 = 0;
/// Participation flag indices and weights (Altair).
pub const TIMELY_SOURCE_FLAG_INDEX: usize = 0;
/// `TIMELY_TARGET_FLAG_INDEX`.
pub const TIMELY_TARGET_FLAG_INDEX: usize = 1;
/// `TIMELY_HEAD_FLAG_INDEX`.
pub const TIMELY_HEAD_FLAG_INDEX: usize = 2;
/// `TIMELY_SOURCE_WEIGHT`.
pub const TIMELY_SOURCE_WEIGHT: u64 = 14;
/// `TIMELY_TARGET_WEIGHT`.
pub const TIMELY_TARGET_WEIGHT: u64 = 26;
/// `TIMELY_HEAD_WEIGHT`.
pub const TIMELY_HEAD_WEIGHT: u64 = 14;
/// `SYNC_REWARD_WEIGHT`.
pub const SYNC_REWARD_WEIGHT: u64 = 2;
/// `PROPOSER_WEIGHT`.
pub const PROPOSER_WEIGHT: u64 = 8;
/// `WEIGHT_DENOMINATOR`.
pub const WEIGHT_DENOMINATOR: u64 = 64;
/// `PARTICIPATION_FLAG_WEIGHTS`, by flag index.
pub const PARTICIPATION_FLAG_WEIGHTS: [u64; 3] = [
    TIMELY_SOURCE_WEIGHT,
    TIMELY_TARGET_WEIGHT,
    TIMELY_HEAD_WEIGHT,
];
