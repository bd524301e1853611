//! Gloas containers. Arbor does not run Gloas yet: this module holds only its light-client
//! containers, so that a light client (and the spec tests' light-client `sync` cases) can follow
//! a chain across the Gloas fork. The beacon-chain containers come with the fork itself.
//!
//! [spec]: gloas/light-client/sync-protocol.md#containers

use ssz_derive::{Decode, Encode};
use ssz_types::{FixedVector, typenum};
use tree_hash_derive::TreeHash;

use crate::{EthSpec, primitives::*};

pub use crate::altair::{SyncAggregate, SyncCommittee};
pub use crate::phase0::BeaconBlockHeader;

/// `FinalityBranch`: `Vector[Bytes32, floorlog2(FINALIZED_ROOT_GINDEX_GLOAS)]` (735: depth 9).
/// [Modified in Gloas:EIP7688]
pub type FinalityBranch = FixedVector<Bytes32, typenum::U9>;
/// `CurrentSyncCommitteeBranch`: `Vector[Bytes32, floorlog2(CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS)]`
/// (2945: depth 11).
/// [Modified in Gloas:EIP7688]
pub type CurrentSyncCommitteeBranch = FixedVector<Bytes32, typenum::U11>;
/// `NextSyncCommitteeBranch`: `Vector[Bytes32, floorlog2(NEXT_SYNC_COMMITTEE_GINDEX_GLOAS)]`
/// (2946: depth 11).
/// [Modified in Gloas:EIP7688]
pub type NextSyncCommitteeBranch = FixedVector<Bytes32, typenum::U11>;
/// `ExecutionBranch`: `Vector[Bytes32, floorlog2(EXECUTION_BLOCK_HASH_GINDEX_GLOAS)]` (2856:
/// depth 11), proving an execution block hash within `BeaconBlockBody`.
/// [Modified in Gloas:EIP7732]
pub type ExecutionBranch = FixedVector<Bytes32, typenum::U11>;

/// `LightClientHeader`: the block header a light client tracks, with the execution block hash
/// in place of Deneb's whole execution payload header.
///
/// [spec]: gloas/light-client/sync-protocol.md#modified-lightclientheader
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LightClientHeader {
    /// The beacon block header.
    pub beacon: BeaconBlockHeader,
    /// Hash of the execution block the beacon block builds on.
    /// [New in Gloas:EIP7732]
    pub execution_block_hash: Hash32,
    /// Merkle branch of `execution_block_hash` against `beacon.body_root`.
    /// [Modified in Gloas:EIP7732]
    pub execution_branch: ExecutionBranch,
}

/// `LightClientBootstrap`: a light client's trusted starting point: header and current sync
/// committee.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientbootstrap (with Gloas's header and branch)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientBootstrap<E: EthSpec> {
    /// Header matching the requested beacon block root.
    pub header: LightClientHeader,
    /// Current sync committee corresponding to `header.beacon.state_root`.
    pub current_sync_committee: SyncCommittee<E>,
    /// Merkle branch of `current_sync_committee` against the header's state root.
    pub current_sync_committee_branch: CurrentSyncCommitteeBranch,
}

/// `LightClientUpdate`: an attested header with next sync committee and finality proofs.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientupdate (with Gloas's header and branches)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    pub attested_header: LightClientHeader,
    /// Next sync committee corresponding to `attested_header.beacon.state_root`.
    pub next_sync_committee: SyncCommittee<E>,
    /// Merkle branch of `next_sync_committee` against the attested state root.
    pub next_sync_committee_branch: NextSyncCommitteeBranch,
    /// Finalized header corresponding to `attested_header.beacon.state_root`.
    pub finalized_header: LightClientHeader,
    /// Merkle branch of the finalized checkpoint root against the attested state root.
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `LightClientFinalityUpdate`: a finalized header with its proof and the sync aggregate that
/// signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientfinalityupdate (with Gloas's header and branch)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientFinalityUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    pub attested_header: LightClientHeader,
    /// Finalized header corresponding to `attested_header.beacon.state_root`.
    pub finalized_header: LightClientHeader,
    /// Merkle branch of the finalized checkpoint root against the attested state root.
    pub finality_branch: FinalityBranch,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}

/// `LightClientOptimisticUpdate`: the latest attested header and the sync aggregate that
/// signed it.
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientoptimisticupdate (with Gloas's header)
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "arbitrary", arbitrary(bound = "E: EthSpec"))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(bound = "E: EthSpec"))]
pub struct LightClientOptimisticUpdate<E: EthSpec> {
    /// Header attested to by the sync committee.
    pub attested_header: LightClientHeader,
    /// Sync committee aggregate signature over the attested header.
    pub sync_aggregate: SyncAggregate<E>,
    /// Slot at which the aggregate signature was created (untrusted).
    #[cfg_attr(feature = "serde", serde(with = "serde_utils::quoted_u64"))]
    pub signature_slot: Slot,
}
