//! Arbor's consensus types: the SSZ containers of every fork, the presets as types and the
//! runtime chain configuration.
//!
//! Each fork has its own module holding that fork's containers as the spec defines them; a
//! container the fork did not change is re-exported from the fork that last defined it, so
//! `types::fulu::Checkpoint` and `types::phase0::Checkpoint` are the same type.

pub mod altair;
#[cfg(feature = "arbitrary")]
mod arbitrary;
pub mod bellatrix;
pub mod capella;
pub mod chain_spec;
mod combined;
pub mod deneb;
pub mod electra;
mod eth_spec;
mod fork_name;
pub mod fulu;
pub mod gloas;
pub mod memory;
pub mod merkle_proof;
pub mod phase0;
pub mod primitives;
#[cfg(feature = "serde")]
mod serde_state;
pub mod signing;
mod ssz_write;
pub mod subnets;

pub use chain_spec::{BlobParameters, BlobScheduleEntry, ChainSpec, ConfigError, Network};
pub use combined::{
    Attestation, AttesterSlashing, BeaconBlock, BeaconBlockBody, BeaconState, BlobSidecar,
    DataColumnSidecar, ExecutionPayload, ExecutionPayloadHeader, LightClientBootstrap,
    LightClientFinalityUpdate, LightClientHeader, LightClientOptimisticUpdate, LightClientUpdate,
    SignedBeaconBlock,
};
pub use eth_spec::{EthSpec, MainnetEthSpec, MinimalEthSpec, PresetUnsigned};
pub use fork_name::{ForkName, UnknownForkName};
pub use primitives::*;
/// Type-level integers of the presets, re-exported for code that names list limits.
pub use ssz_types::typenum;
