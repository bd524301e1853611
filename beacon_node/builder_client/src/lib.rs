//! A client of the builder API (ethereum/builder-specs): registrations, bids, blinded blocks.
//!
//! - [`containers`]: `BuilderBid`, `SignedBuilderBid` and the revealed
//!   `ExecutionPayloadAndBlobsBundle` (Electra layout, used by Electra and Fulu); the blinded
//!   blocks, with blinding and unblinding, are `beacon_api`'s (`beacon_api::blinded`), re-exported.
//! - [`client`]: [`BuilderHttpClient`], the four calls (`registerValidator`, `getHeader`,
//!   `submitBlindedBlock` v1 and v2, `status`) in JSON or SSZ with per-call timeouts.
//! - [`verify`]: what a proposer checks of a bid ([`verify_builder_bid`]) and the
//!   `builder_boost_factor` choice ([`select_payload`]).
//! - `mock_relay` (feature `mock`): a relay for tests, over the mock execution client.
//!
//! [spec]: https://github.com/ethereum/builder-specs

pub mod client;
pub mod containers;
#[cfg(feature = "mock")]
pub mod mock_relay;
pub mod verify;

pub use client::{BuilderConfig, BuilderError, BuilderHttpClient, BuilderTimeouts, SubmitVersion};
pub use containers::{
    BlindedBeaconBlock, BlindedBeaconBlockBody, BlobsBundle, BuilderBid,
    ExecutionPayloadAndBlobsBundle, SignedBlindedBeaconBlock, SignedBuilderBid,
    SignedValidatorRegistrationV1, UnblindError, ValidatorRegistrationV1, execution_payload_header,
};
pub use verify::{
    BidError, BidExpectations, PayloadChoice, VerifiedBid, builder_domain, expected_gas_limit,
    select_payload, sign_builder_bid, verify_builder_bid, withdrawals_root,
};
