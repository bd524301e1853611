//! The light-client data formats a [`LightClientStore`](crate::LightClientStore) can hold:
//! Electra's (Deneb's header, kept by Electra and Fulu) and Gloas's (the execution block hash in
//! place of the execution payload header, deeper branches). The sync protocol's functions are
//! written once over these traits; each format's header answers
//! `is_valid_light_client_header` and `get_lc_execution_root` as its fork's spec defines them.
//!
//! [spec]: electra/light-client/sync-protocol.md, gloas/light-client/sync-protocol.md

use std::fmt::Debug;

use ssz_types::FixedVector;
use types::{ChainSpec, EthSpec, Root, SignedBeaconBlock, Slot, altair, electra, gloas, phase0};

use crate::LightClientError;
use crate::fork::fixed;

/// A `LightClientHeader` of one format.
pub trait LcHeader<E: EthSpec>: Clone + PartialEq + Debug {
    /// `header.beacon`.
    fn beacon(&self) -> &phase0::BeaconBlockHeader;
    /// `LightClientHeader()`: every field zero or empty.
    fn empty() -> Self;
    /// `is_valid_light_client_header(header)` of this format's fork.
    fn is_valid(&self, spec: &ChainSpec) -> bool;
    /// `get_lc_execution_root(header)` of this format's fork.
    fn execution_root(&self, spec: &ChainSpec) -> Root;
}

/// A `LightClientUpdate` of one format, with the finality and optimistic updates of the same
/// format (which the spec processes as updates with empty fields).
pub trait LcUpdate<E: EthSpec>: Clone + PartialEq + Debug {
    /// The format's `LightClientHeader`.
    type Header: LcHeader<E>;
    /// The format's `LightClientFinalityUpdate`.
    type FinalityUpdate: Clone + PartialEq + Debug;
    /// The format's `LightClientOptimisticUpdate`.
    type OptimisticUpdate: Clone + PartialEq + Debug;

    /// `update.attested_header`.
    fn attested_header(&self) -> &Self::Header;
    /// `update.next_sync_committee`.
    fn next_sync_committee(&self) -> &altair::SyncCommittee<E>;
    /// `update.next_sync_committee_branch`.
    fn next_sync_committee_branch(&self) -> &[Root];
    /// `update.finalized_header`.
    fn finalized_header(&self) -> &Self::Header;
    /// Replaces `update.finalized_header` (a forced update's attested header standing in).
    fn set_finalized_header(&mut self, header: Self::Header);
    /// `update.finality_branch`.
    fn finality_branch(&self) -> &[Root];
    /// `update.sync_aggregate`.
    fn sync_aggregate(&self) -> &altair::SyncAggregate<E>;
    /// `update.signature_slot`.
    fn signature_slot(&self) -> Slot;
    /// The update `process_light_client_finality_update` processes: no next sync committee.
    fn from_finality_update(update: &Self::FinalityUpdate) -> Self;
    /// The update `process_light_client_optimistic_update` processes: neither finality nor a
    /// next sync committee.
    fn from_optimistic_update(update: &Self::OptimisticUpdate) -> Self;
}

/// A `LightClientBootstrap` of one format.
pub trait LcBootstrap<E: EthSpec> {
    /// The updates a store initialized from this bootstrap processes.
    type Update: LcUpdate<E>;
    /// `bootstrap.header`.
    fn header(&self) -> &<Self::Update as LcUpdate<E>>::Header;
    /// `bootstrap.current_sync_committee`.
    fn current_sync_committee(&self) -> &altair::SyncCommittee<E>;
    /// `bootstrap.current_sync_committee_branch`.
    fn current_sync_committee_branch(&self) -> &[Root];
}

impl<E: EthSpec> LcHeader<E> for electra::LightClientHeader<E> {
    fn beacon(&self) -> &phase0::BeaconBlockHeader {
        &self.beacon
    }
    fn empty() -> Self {
        crate::sync_protocol::empty_header()
    }
    fn is_valid(&self, spec: &ChainSpec) -> bool {
        crate::sync_protocol::is_valid_light_client_header(spec, self)
    }
    fn execution_root(&self, spec: &ChainSpec) -> Root {
        crate::sync_protocol::get_lc_execution_root(spec, self)
    }
}

impl<E: EthSpec> LcHeader<E> for gloas::LightClientHeader {
    fn beacon(&self) -> &phase0::BeaconBlockHeader {
        &self.beacon
    }
    fn empty() -> Self {
        crate::gloas::empty_header()
    }
    fn is_valid(&self, spec: &ChainSpec) -> bool {
        crate::gloas::is_valid_light_client_header::<E>(spec, self)
    }
    fn execution_root(&self, spec: &ChainSpec) -> Root {
        crate::gloas::get_lc_execution_root::<E>(spec, self)
    }
}

/// `LcUpdate` and `LcBootstrap` for a fork module's containers, whose field names are the
/// spec's in every format.
macro_rules! impl_format {
    ($fork:ident, $header:ty) => {
        impl<E: EthSpec> LcUpdate<E> for $fork::LightClientUpdate<E> {
            type Header = $header;
            type FinalityUpdate = $fork::LightClientFinalityUpdate<E>;
            type OptimisticUpdate = $fork::LightClientOptimisticUpdate<E>;

            fn attested_header(&self) -> &Self::Header {
                &self.attested_header
            }
            fn next_sync_committee(&self) -> &altair::SyncCommittee<E> {
                &self.next_sync_committee
            }
            fn next_sync_committee_branch(&self) -> &[Root] {
                &self.next_sync_committee_branch
            }
            fn finalized_header(&self) -> &Self::Header {
                &self.finalized_header
            }
            fn set_finalized_header(&mut self, header: Self::Header) {
                self.finalized_header = header;
            }
            fn finality_branch(&self) -> &[Root] {
                &self.finality_branch
            }
            fn sync_aggregate(&self) -> &altair::SyncAggregate<E> {
                &self.sync_aggregate
            }
            fn signature_slot(&self) -> Slot {
                self.signature_slot
            }
            fn from_finality_update(update: &Self::FinalityUpdate) -> Self {
                Self {
                    attested_header: update.attested_header.clone(),
                    next_sync_committee: crate::sync_protocol::empty_sync_committee(),
                    next_sync_committee_branch: FixedVector::from_elem(Root::ZERO),
                    finalized_header: update.finalized_header.clone(),
                    finality_branch: update.finality_branch.clone(),
                    sync_aggregate: update.sync_aggregate.clone(),
                    signature_slot: update.signature_slot,
                }
            }
            fn from_optimistic_update(update: &Self::OptimisticUpdate) -> Self {
                Self {
                    attested_header: update.attested_header.clone(),
                    next_sync_committee: crate::sync_protocol::empty_sync_committee(),
                    next_sync_committee_branch: FixedVector::from_elem(Root::ZERO),
                    finalized_header: <$header as LcHeader<E>>::empty(),
                    finality_branch: FixedVector::from_elem(Root::ZERO),
                    sync_aggregate: update.sync_aggregate.clone(),
                    signature_slot: update.signature_slot,
                }
            }
        }

        impl<E: EthSpec> LcBootstrap<E> for $fork::LightClientBootstrap<E> {
            type Update = $fork::LightClientUpdate<E>;
            fn header(&self) -> &$header {
                &self.header
            }
            fn current_sync_committee(&self) -> &altair::SyncCommittee<E> {
                &self.current_sync_committee
            }
            fn current_sync_committee_branch(&self) -> &[Root] {
                &self.current_sync_committee_branch
            }
        }
    };
}

impl_format!(electra, electra::LightClientHeader<E>);
impl_format!(gloas, gloas::LightClientHeader);

/// The light-client data of one format as a full node derives it from blocks and states (what
/// [`DataCollector`](crate::data_collection::DataCollector) collects): the format's header of a
/// block, its branch depths, and its containers built from their parts. Branches are given
/// normalized to the format's depth (see [`normalized_branch`]).
pub trait LcData<E: EthSpec>: LcUpdate<E> {
    /// The format's `LightClientBootstrap`.
    type Bootstrap: Clone + PartialEq + Debug;
    /// The generalized index whose depth the format's `CurrentSyncCommitteeBranch` has.
    const CURRENT_SYNC_COMMITTEE_GINDEX: u64;
    /// The generalized index whose depth the format's `NextSyncCommitteeBranch` has.
    const NEXT_SYNC_COMMITTEE_GINDEX: u64;
    /// The generalized index whose depth the format's `FinalityBranch` has.
    const FINALIZED_ROOT_GINDEX: u64;

    /// `block_to_light_client_header(block)` of the format's fork.
    fn block_to_light_client_header(
        spec: &ChainSpec,
        block: &SignedBeaconBlock<E>,
    ) -> Result<Self::Header, LightClientError>;

    /// `LightClientBootstrap(header, current_sync_committee, current_sync_committee_branch)`.
    fn new_bootstrap(
        header: Self::Header,
        current_sync_committee: altair::SyncCommittee<E>,
        current_sync_committee_branch: &[Root],
    ) -> Result<Self::Bootstrap, LightClientError>;

    /// `bootstrap.header.beacon.slot`.
    fn bootstrap_slot(bootstrap: &Self::Bootstrap) -> Slot;

    /// `LightClientUpdate(…)` of its fields.
    #[allow(clippy::too_many_arguments)]
    fn new_update(
        attested_header: Self::Header,
        next_sync_committee: altair::SyncCommittee<E>,
        next_sync_committee_branch: &[Root],
        finalized_header: Self::Header,
        finality_branch: &[Root],
        sync_aggregate: altair::SyncAggregate<E>,
        signature_slot: Slot,
    ) -> Result<Self, LightClientError>;

    /// `LightClientFinalityUpdate(…)` of its fields.
    fn new_finality_update(
        attested_header: Self::Header,
        finalized_header: Self::Header,
        finality_branch: &[Root],
        sync_aggregate: altair::SyncAggregate<E>,
        signature_slot: Slot,
    ) -> Result<Self::FinalityUpdate, LightClientError>;

    /// `create_light_client_optimistic_update` of the update a finality update is part of.
    fn optimistic_update_of(update: &Self::FinalityUpdate) -> Self::OptimisticUpdate;
}

/// `normalize_merkle_branch(branch, gindex)` as nodes: `branch` padded at the front with zero
/// nodes to the depth of `gindex`.
///
/// [spec]: electra/light-client/fork.md#normalize_merkle_branch
pub fn normalized_branch(branch: &[Root], gindex: u64) -> Vec<Root> {
    let depth = types::merkle_proof::floorlog2(gindex) as usize;
    let mut nodes = vec![Root::ZERO; depth.saturating_sub(branch.len())];
    nodes.extend_from_slice(branch);
    nodes
}

/// `LcData` for a fork module's containers.
macro_rules! impl_data {
    ($fork:ident, $current:expr, $next:expr, $finalized:expr, $header_of_block:expr) => {
        impl<E: EthSpec> LcData<E> for $fork::LightClientUpdate<E> {
            type Bootstrap = $fork::LightClientBootstrap<E>;
            const CURRENT_SYNC_COMMITTEE_GINDEX: u64 = $current;
            const NEXT_SYNC_COMMITTEE_GINDEX: u64 = $next;
            const FINALIZED_ROOT_GINDEX: u64 = $finalized;

            fn block_to_light_client_header(
                spec: &ChainSpec,
                block: &SignedBeaconBlock<E>,
            ) -> Result<Self::Header, LightClientError> {
                $header_of_block(spec, block)
            }

            fn new_bootstrap(
                header: Self::Header,
                current_sync_committee: altair::SyncCommittee<E>,
                current_sync_committee_branch: &[Root],
            ) -> Result<Self::Bootstrap, LightClientError> {
                Ok($fork::LightClientBootstrap {
                    header,
                    current_sync_committee,
                    current_sync_committee_branch: fixed(current_sync_committee_branch.to_vec())?,
                })
            }

            fn bootstrap_slot(bootstrap: &Self::Bootstrap) -> Slot {
                bootstrap.header.beacon.slot
            }

            fn new_update(
                attested_header: Self::Header,
                next_sync_committee: altair::SyncCommittee<E>,
                next_sync_committee_branch: &[Root],
                finalized_header: Self::Header,
                finality_branch: &[Root],
                sync_aggregate: altair::SyncAggregate<E>,
                signature_slot: Slot,
            ) -> Result<Self, LightClientError> {
                Ok(Self {
                    attested_header,
                    next_sync_committee,
                    next_sync_committee_branch: fixed(next_sync_committee_branch.to_vec())?,
                    finalized_header,
                    finality_branch: fixed(finality_branch.to_vec())?,
                    sync_aggregate,
                    signature_slot,
                })
            }

            fn new_finality_update(
                attested_header: Self::Header,
                finalized_header: Self::Header,
                finality_branch: &[Root],
                sync_aggregate: altair::SyncAggregate<E>,
                signature_slot: Slot,
            ) -> Result<Self::FinalityUpdate, LightClientError> {
                Ok($fork::LightClientFinalityUpdate {
                    attested_header,
                    finalized_header,
                    finality_branch: fixed(finality_branch.to_vec())?,
                    sync_aggregate,
                    signature_slot,
                })
            }

            fn optimistic_update_of(update: &Self::FinalityUpdate) -> Self::OptimisticUpdate {
                $fork::LightClientOptimisticUpdate {
                    attested_header: update.attested_header.clone(),
                    sync_aggregate: update.sync_aggregate.clone(),
                    signature_slot: update.signature_slot,
                }
            }
        }
    };
}

impl_data!(
    electra,
    crate::sync_protocol::CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA,
    crate::sync_protocol::NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA,
    crate::sync_protocol::FINALIZED_ROOT_GINDEX_ELECTRA,
    |_spec: &ChainSpec, block: &SignedBeaconBlock<E>| {
        crate::full_node::block_to_light_client_header(block)
    }
);
impl_data!(
    gloas,
    crate::sync_protocol::CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS,
    crate::sync_protocol::NEXT_SYNC_COMMITTEE_GINDEX_GLOAS,
    crate::sync_protocol::FINALIZED_ROOT_GINDEX_GLOAS,
    crate::gloas::block_to_light_client_header::<E>
);
