//! Gossip validation of every Fulu topic, as the p2p spec's `validate_*_gossip` functions read:
//! the same rules in the same order, each failure a typed error that says whether the message is
//! to be IGNOREd or REJECTed ([`Verdict`]). A message that passes comes back as a checked type
//! (`GossipVerifiedBlock`, `VerifiedSingleAttestation`, …) that consumed the unchecked one, and
//! the spec's `Seen` caches are updated as the spec's functions update them.
//!
//! Topics whose messages arrive in bursts (attestations, aggregates, data column sidecars) also
//! have batch forms: the checks before the signature (or KZG) run per message, the signatures
//! of the whole batch are verified at once (on failure one by one in parallel, so the bad one
//! is attributed), and the checks after it run per message, re-checking the `Seen` cache under
//! its lock so two copies in one batch are not both accepted.
//!
//! State used: the head state for the validator registry and public keys (the spec's "head
//! state"), the parent block's post-state for a block's proposer, and the target checkpoint's
//! state for attestation committees.
//!
//! [spec]: phase0/p2p-interface.md#global-topics, fulu/p2p-interface.md#global-topics

pub mod attestation;
pub mod blob_sidecar;
pub mod block;
pub mod data_column;
pub mod envelope;
pub mod execution_payload_bid;
pub mod light_client;
pub mod operations;
pub mod partial_data_column;
pub mod payload_attestation;
pub mod proposer_preferences;
pub mod sync_committee;

use bls::{PublicKey, Signature};
use state_processing::CachedBeaconState;
use types::{ChainSpec, Domain, DomainType, Epoch, EthSpec, Root, ValidatorIndex, signing};

pub use attestation::{
    AttestationGossipError, ForkChoiceVote, GossipAggregate, VerifiedAggregate,
    VerifiedSingleAttestation,
};
pub use blob_sidecar::{BlobSidecarGossipError, GossipVerifiedBlobSidecar};
pub use block::{
    BlockBodyLimitError, BlockGossipError, BlockOperation, GossipVerifiedBlock,
    verify_block_body_operation_limits,
};
pub use data_column::{
    DataColumnGossipError, GossipVerifiedDataColumn, PartialColumnGossipError,
    VerifiedPartialDataColumn,
};
pub use envelope::{
    EnvelopeGossipError, ExecutionRequestsLimitError, GossipVerifiedEnvelope,
    verify_execution_requests_limits,
};
pub use execution_payload_bid::{
    BidGossipError, ExecutionPayloadBidCaches, VerifiedExecutionPayloadBid,
    is_gas_limit_target_compatible,
};
pub use light_client::{
    LightClientGossipError, VerifiedLightClientFinalityUpdate, VerifiedLightClientOptimisticUpdate,
};
pub use operations::{
    GossipAttesterSlashing, IndexedAttestationParts, OperationGossipError,
    VerifiedAttesterSlashing, VerifiedBlsToExecutionChange, VerifiedProposerSlashing,
    VerifiedVoluntaryExit,
};
pub use partial_data_column::{GloasPartialColumnGossipError, VerifiedGloasPartialDataColumn};
pub use payload_attestation::{
    PayloadAttestationGossipError, PayloadVotesApplied, VerifiedPayloadAttestationMessage,
};
pub use proposer_preferences::{
    ProposerPreferencesGossipError, ProposerPreferencesStore, VerifiedProposerPreferences,
};
pub use sync_committee::{
    SyncCommitteeGossipError, SyncCommitteeStateError, VerifiedSyncCommitteeMessage,
    VerifiedSyncContribution,
};

/// What gossipsub is told about a message (and what the peer's score learns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Valid: forward it.
    Accept,
    /// Not forwarded, the sender not penalised (duplicate, too early, unknown parent, …).
    Ignore,
    /// Invalid: not forwarded, the sender penalised.
    Reject,
}

/// `TARGET_AGGREGATORS_PER_COMMITTEE`.
///
/// [spec]: phase0/validator.md#constants
pub const TARGET_AGGREGATORS_PER_COMMITTEE: u64 = 16;

/// `TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE`.
///
/// [spec]: altair/validator.md#constants
pub const TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE: u64 = 16;

/// `bytes_to_uint64(hash(signature)[0:8])`.
fn hash_to_u64(signature: &types::BLSSignature) -> u64 {
    let digest = ethereum_hashing::hash_fixed(signature.as_slice());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

/// `is_aggregator(state, slot, index, slot_signature)` for a committee of `committee_len`.
///
/// [spec]: phase0/validator.md#aggregation-selection
pub fn is_aggregator(committee_len: usize, slot_signature: &types::BLSSignature) -> bool {
    let modulo = (committee_len as u64 / TARGET_AGGREGATORS_PER_COMMITTEE).max(1);
    hash_to_u64(slot_signature).is_multiple_of(modulo)
}

/// `is_sync_committee_aggregator(signature)`.
///
/// [spec]: altair/validator.md#aggregation-selection
pub fn is_sync_committee_aggregator<E: EthSpec>(signature: &types::BLSSignature) -> bool {
    let modulo = (E::SyncCommitteeSize::to_u64()
        / types::subnets::SYNC_COMMITTEE_SUBNET_COUNT
        / TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE)
        .max(1);
    hash_to_u64(signature).is_multiple_of(modulo)
}

use ssz_types::typenum::Unsigned;

/// The domain of `domain_type` at `epoch`, from the fork schedule (not from a state's `fork`,
/// which may not have reached the message's fork yet).
pub(crate) fn domain_at(
    spec: &ChainSpec,
    genesis_validators_root: Root,
    domain_type: DomainType,
    epoch: Epoch,
) -> Domain {
    signing::compute_domain(
        domain_type,
        spec.compute_fork_version(epoch),
        genesis_validators_root,
    )
}

/// Whether `signature` by `key` over `signing_root` verifies (a signature that does not
/// decode does not).
pub(crate) fn verify_one(
    key: &PublicKey,
    signing_root: Root,
    signature: &types::BLSSignature,
) -> bool {
    Signature::deserialize(signature.as_slice())
        .is_ok_and(|s| bls::verify(key, signing_root.as_slice(), &s))
}

/// The decompressed public key of validator `index` in the head state, or `None` past the
/// registry (or for a key that does not decompress).
pub(crate) fn head_pubkey<E: EthSpec>(
    head: &CachedBeaconState<E>,
    index: ValidatorIndex,
) -> Option<PublicKey> {
    let view = head.view().ok()?;
    head.caches.pubkey(&view, index).ok()
}

/// The number of validators in `state`, of any fork (through its view:
/// `BeaconState::validators` is the pre-Gloas list only, and reading it made every index of a
/// Gloas head state "out of range", so sync committee messages and contributions were
/// rejected on a Gloas chain); 0 for a state whose view cannot be made.
pub(crate) fn validator_count<E: EthSpec>(state: &CachedBeaconState<E>) -> u64 {
    state.view().map_or(0, |view| view.validators.len() as u64)
}
