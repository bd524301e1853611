//! The light client's side: the store, its initialization from a bootstrap, and the processing of
//! updates, with the generalized indices and helpers they use.
//!
//! The store holds one format's data ([`crate::format`]: Electra's, the default, or Gloas's);
//! data of earlier forks is upgraded to it first ([`crate::fork`], [`crate::gloas`]). Functions
//! that depend on the fork of a slot take the chain's `ChainSpec`.
//!
//! [spec]: altair/light-client/sync-protocol.md, capella/, deneb/, electra/ and gloas/light-client/sync-protocol.md

use ssz_types::{FixedVector, VariableList};
use tree_hash::TreeHash;
use types::merkle_proof::{floorlog2, get_subtree_index};
use types::signing::{DOMAIN_SYNC_COMMITTEE, compute_domain, compute_signing_root};
use types::{
    Address, ChainSpec, Epoch, EthSpec, ForkName, GENESIS_SLOT, Root, Slot, U256, altair, capella,
    deneb, phase0,
};

use crate::format::{LcBootstrap, LcHeader, LcUpdate};
use crate::{Header, LightClientError, Update};

/// `FINALIZED_ROOT_GINDEX`: `finalized_checkpoint.root` in an Altair through Deneb `BeaconState`.
pub const FINALIZED_ROOT_GINDEX: u64 = 105;
/// `CURRENT_SYNC_COMMITTEE_GINDEX`: `current_sync_committee` before Electra.
pub const CURRENT_SYNC_COMMITTEE_GINDEX: u64 = 54;
/// `NEXT_SYNC_COMMITTEE_GINDEX`: `next_sync_committee` before Electra.
pub const NEXT_SYNC_COMMITTEE_GINDEX: u64 = 55;
/// `FINALIZED_ROOT_GINDEX_ELECTRA`: `finalized_checkpoint.root` from Electra.
pub const FINALIZED_ROOT_GINDEX_ELECTRA: u64 = 169;
/// `CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA`: `current_sync_committee` from Electra.
pub const CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA: u64 = 86;
/// `NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA`: `next_sync_committee` from Electra.
pub const NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA: u64 = 87;
/// `FINALIZED_ROOT_GINDEX_GLOAS`: `finalized_checkpoint.root` from Gloas.
pub const FINALIZED_ROOT_GINDEX_GLOAS: u64 = 735;
/// `CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS`: `current_sync_committee` from Gloas.
pub const CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS: u64 = 2945;
/// `NEXT_SYNC_COMMITTEE_GINDEX_GLOAS`: `next_sync_committee` from Gloas.
pub const NEXT_SYNC_COMMITTEE_GINDEX_GLOAS: u64 = 2946;
/// `EXECUTION_PAYLOAD_GINDEX`: `execution_payload` in a `BeaconBlockBody` (from Capella).
pub const EXECUTION_PAYLOAD_GINDEX: u64 = 25;
/// `MIN_SYNC_COMMITTEE_PARTICIPANTS`.
pub const MIN_SYNC_COMMITTEE_PARTICIPANTS: u64 = 1;

/// `UPDATE_TIMEOUT`: `SLOTS_PER_EPOCH * EPOCHS_PER_SYNC_COMMITTEE_PERIOD`.
pub fn update_timeout<E: EthSpec>() -> Slot {
    E::slots_per_epoch() * E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD
}

/// `LightClientStore`: what a light client keeps between updates, in the format of its updates
/// `U` (Electra's unless upgraded to Gloas's).
///
/// [spec]: altair/light-client/sync-protocol.md#lightclientstore
#[derive(Debug, Clone, PartialEq)]
pub struct LightClientStore<E: EthSpec, U: LcUpdate<E> = Update<E>> {
    /// Header that is finalized.
    pub finalized_header: U::Header,
    /// Sync committee of the finalized header's period.
    pub current_sync_committee: altair::SyncCommittee<E>,
    /// Sync committee of the next period; all zero while unknown.
    pub next_sync_committee: altair::SyncCommittee<E>,
    /// Best available update to switch the finalized head to if nothing else comes.
    pub best_valid_update: Option<U>,
    /// Most recent available reasonably-safe header.
    pub optimistic_header: U::Header,
    /// Most participants seen in the previous period's signatures.
    pub previous_max_active_participants: u64,
    /// Most participants seen in the current period's signatures.
    pub current_max_active_participants: u64,
}

/// `compute_epoch_at_slot(slot)`.
fn epoch_at_slot<E: EthSpec>(slot: Slot) -> Epoch {
    slot / E::slots_per_epoch()
}

/// Whether `fork` is active at `epoch` under `spec`.
pub(crate) fn fork_active(spec: &ChainSpec, fork: ForkName, epoch: Epoch) -> bool {
    spec.fork_epoch(fork).is_some_and(|start| epoch >= start)
}

/// Whether Gloas is active at `epoch` (`epoch >= GLOAS_FORK_EPOCH`).
pub(crate) fn gloas_active(spec: &ChainSpec, epoch: Epoch) -> bool {
    fork_active(spec, ForkName::Gloas, epoch)
}

/// `compute_fork_version(epoch)` as Gloas modifies it: `GLOAS_FORK_VERSION` from
/// `GLOAS_FORK_EPOCH`, else the version of the fork in force ([`ChainSpec::compute_fork_version`],
/// whose schedule includes Gloas).
///
/// [spec]: gloas/beacon-chain.md#modified-compute_fork_version
pub fn compute_fork_version(spec: &ChainSpec, epoch: Epoch) -> types::Version {
    spec.compute_fork_version(epoch)
}

/// `compute_sync_committee_period_at_slot(slot)`.
///
/// [spec]: altair/light-client/sync-protocol.md#compute_sync_committee_period_at_slot
pub fn compute_sync_committee_period_at_slot<E: EthSpec>(slot: Slot) -> u64 {
    epoch_at_slot::<E>(slot) / E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD
}

/// The first slot of sync committee `period`.
pub fn compute_start_slot_at_sync_committee_period<E: EthSpec>(period: u64) -> Slot {
    period
        .saturating_mul(E::EPOCHS_PER_SYNC_COMMITTEE_PERIOD)
        .saturating_mul(E::slots_per_epoch())
}

/// `finalized_root_gindex_at_slot(slot)`.
///
/// [spec]: gloas/light-client/sync-protocol.md#modified-finalized_root_gindex_at_slot
pub fn finalized_root_gindex_at_slot<E: EthSpec>(spec: &ChainSpec, slot: Slot) -> u64 {
    let epoch = epoch_at_slot::<E>(slot);
    if gloas_active(spec, epoch) {
        FINALIZED_ROOT_GINDEX_GLOAS
    } else if fork_active(spec, ForkName::Electra, epoch) {
        FINALIZED_ROOT_GINDEX_ELECTRA
    } else {
        FINALIZED_ROOT_GINDEX
    }
}

/// `current_sync_committee_gindex_at_slot(slot)`.
///
/// [spec]: gloas/light-client/sync-protocol.md#modified-current_sync_committee_gindex_at_slot
pub fn current_sync_committee_gindex_at_slot<E: EthSpec>(spec: &ChainSpec, slot: Slot) -> u64 {
    let epoch = epoch_at_slot::<E>(slot);
    if gloas_active(spec, epoch) {
        CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS
    } else if fork_active(spec, ForkName::Electra, epoch) {
        CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA
    } else {
        CURRENT_SYNC_COMMITTEE_GINDEX
    }
}

/// `next_sync_committee_gindex_at_slot(slot)`.
///
/// [spec]: gloas/light-client/sync-protocol.md#modified-next_sync_committee_gindex_at_slot
pub fn next_sync_committee_gindex_at_slot<E: EthSpec>(spec: &ChainSpec, slot: Slot) -> u64 {
    let epoch = epoch_at_slot::<E>(slot);
    if gloas_active(spec, epoch) {
        NEXT_SYNC_COMMITTEE_GINDEX_GLOAS
    } else if fork_active(spec, ForkName::Electra, epoch) {
        NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA
    } else {
        NEXT_SYNC_COMMITTEE_GINDEX
    }
}

/// `ExecutionPayloadHeader()` of Deneb: every field zero or empty.
pub fn empty_execution_payload_header<E: EthSpec>() -> deneb::ExecutionPayloadHeader<E> {
    deneb::ExecutionPayloadHeader {
        parent_hash: Root::ZERO,
        fee_recipient: Address::ZERO,
        state_root: Root::ZERO,
        receipts_root: Root::ZERO,
        logs_bloom: FixedVector::from_elem(0),
        prev_randao: Root::ZERO,
        block_number: 0,
        gas_limit: 0,
        gas_used: 0,
        timestamp: 0,
        extra_data: VariableList::empty(),
        base_fee_per_gas: U256::ZERO,
        block_hash: Root::ZERO,
        transactions_root: Root::ZERO,
        withdrawals_root: Root::ZERO,
        blob_gas_used: 0,
        excess_blob_gas: 0,
    }
}

/// `LightClientHeader()`: every field zero or empty.
pub fn empty_header<E: EthSpec>() -> Header<E> {
    Header {
        beacon: empty_beacon_block_header(),
        execution: empty_execution_payload_header(),
        execution_branch: FixedVector::from_elem(Root::ZERO),
    }
}

/// `BeaconBlockHeader()`: every field zero.
pub(crate) fn empty_beacon_block_header() -> phase0::BeaconBlockHeader {
    phase0::BeaconBlockHeader {
        slot: 0,
        proposer_index: 0,
        parent_root: Root::ZERO,
        state_root: Root::ZERO,
        body_root: Root::ZERO,
    }
}

/// `SyncCommittee()`: every key zero.
pub fn empty_sync_committee<E: EthSpec>() -> altair::SyncCommittee<E> {
    altair::SyncCommittee {
        pubkeys: FixedVector::from_elem(types::BLSPubkey::ZERO),
        aggregate_pubkey: types::BLSPubkey::ZERO,
    }
}

/// `get_lc_execution_root(header)`: the root of the header's execution payload header in the
/// format of the header's fork; zero before Capella.
///
/// [spec]: deneb/light-client/sync-protocol.md#modified-get_lc_execution_root
pub fn get_lc_execution_root<E: EthSpec>(spec: &ChainSpec, header: &Header<E>) -> Root {
    let epoch = epoch_at_slot::<E>(header.beacon.slot);
    if fork_active(spec, ForkName::Deneb, epoch) {
        return header.execution.tree_hash_root();
    }
    if fork_active(spec, ForkName::Capella, epoch) {
        return capella_execution_payload_header(&header.execution).tree_hash_root();
    }
    Root::ZERO
}

/// The Capella execution payload header inside a Deneb-format one (its fields before the blob
/// gas).
pub(crate) fn capella_execution_payload_header<E: EthSpec>(
    e: &deneb::ExecutionPayloadHeader<E>,
) -> capella::ExecutionPayloadHeader<E> {
    capella::ExecutionPayloadHeader {
        parent_hash: e.parent_hash,
        fee_recipient: e.fee_recipient,
        state_root: e.state_root,
        receipts_root: e.receipts_root,
        logs_bloom: e.logs_bloom.clone(),
        prev_randao: e.prev_randao,
        block_number: e.block_number,
        gas_limit: e.gas_limit,
        gas_used: e.gas_used,
        timestamp: e.timestamp,
        extra_data: e.extra_data.clone(),
        base_fee_per_gas: e.base_fee_per_gas,
        block_hash: e.block_hash,
        transactions_root: e.transactions_root,
        withdrawals_root: e.withdrawals_root,
    }
}

/// `is_valid_light_client_header(header)`: the execution fields fit the header's fork and the
/// execution branch proves them against the body root.
///
/// [spec]: deneb/light-client/sync-protocol.md#modified-is_valid_light_client_header
pub fn is_valid_light_client_header<E: EthSpec>(spec: &ChainSpec, header: &Header<E>) -> bool {
    let epoch = epoch_at_slot::<E>(header.beacon.slot);
    if !fork_active(spec, ForkName::Deneb, epoch)
        && (header.execution.blob_gas_used != 0 || header.execution.excess_blob_gas != 0)
    {
        return false;
    }
    if !fork_active(spec, ForkName::Capella, epoch) {
        return header.execution == empty_execution_payload_header()
            && header.execution_branch.iter().all(|node| node.is_zero());
    }
    types::merkle_proof::is_valid_merkle_branch(
        get_lc_execution_root(spec, header),
        &header.execution_branch,
        floorlog2(EXECUTION_PAYLOAD_GINDEX) as usize,
        get_subtree_index(EXECUTION_PAYLOAD_GINDEX),
        header.beacon.body_root,
    )
}

/// `is_sync_committee_update(update)`: the update carries a next sync committee branch.
///
/// [spec]: altair/light-client/sync-protocol.md#is_sync_committee_update
pub fn is_sync_committee_update<E: EthSpec, U: LcUpdate<E>>(update: &U) -> bool {
    update
        .next_sync_committee_branch()
        .iter()
        .any(|node| !node.is_zero())
}

/// `is_finality_update(update)`: the update carries a finality branch.
///
/// [spec]: altair/light-client/sync-protocol.md#is_finality_update
pub fn is_finality_update<E: EthSpec, U: LcUpdate<E>>(update: &U) -> bool {
    update.finality_branch().iter().any(|node| !node.is_zero())
}

/// `sum(sync_aggregate.sync_committee_bits)`.
fn participants<E: EthSpec, U: LcUpdate<E>>(update: &U) -> u64 {
    update.sync_aggregate().sync_committee_bits.num_set_bits() as u64
}

/// The update's attested and signature slots are in one period, and it carries the next sync
/// committee (`has_relevant_sync_committee` of `is_better_update`).
fn has_relevant_sync_committee<E: EthSpec, U: LcUpdate<E>>(update: &U) -> bool {
    is_sync_committee_update(update)
        && compute_sync_committee_period_at_slot::<E>(update.attested_header().beacon().slot)
            == compute_sync_committee_period_at_slot::<E>(update.signature_slot())
}

/// The update's finalized header is in its attested header's period
/// (`has_sync_committee_finality` of `is_better_update`).
fn has_sync_committee_finality<E: EthSpec, U: LcUpdate<E>>(update: &U) -> bool {
    compute_sync_committee_period_at_slot::<E>(update.finalized_header().beacon().slot)
        == compute_sync_committee_period_at_slot::<E>(update.attested_header().beacon().slot)
}

/// `is_better_update(new_update, old_update)`: whether `new_update` ranks above `old_update`.
///
/// [spec]: altair/light-client/sync-protocol.md#is_better_update
pub fn is_better_update<E: EthSpec, U: LcUpdate<E>>(new_update: &U, old_update: &U) -> bool {
    // Supermajority (> 2/3) participation first.
    let max_active_participants = new_update.sync_aggregate().sync_committee_bits.len() as u64;
    let new_participants = participants(new_update);
    let old_participants = participants(old_update);
    let new_has_supermajority = new_participants * 3 >= max_active_participants * 2;
    let old_has_supermajority = old_participants * 3 >= max_active_participants * 2;
    if new_has_supermajority != old_has_supermajority {
        return new_has_supermajority;
    }
    if !new_has_supermajority && new_participants != old_participants {
        return new_participants > old_participants;
    }
    // Then the presence of the relevant sync committee.
    let new_relevant = has_relevant_sync_committee(new_update);
    let old_relevant = has_relevant_sync_committee(old_update);
    if new_relevant != old_relevant {
        return new_relevant;
    }
    // Then any finality, then finality within the attested period.
    let new_has_finality = is_finality_update(new_update);
    let old_has_finality = is_finality_update(old_update);
    if new_has_finality != old_has_finality {
        return new_has_finality;
    }
    if new_has_finality {
        let new_sc_finality = has_sync_committee_finality(new_update);
        let old_sc_finality = has_sync_committee_finality(old_update);
        if new_sc_finality != old_sc_finality {
            return new_sc_finality;
        }
    }
    // Tiebreakers: participation, older attested data, earlier signature.
    if new_participants != old_participants {
        return new_participants > old_participants;
    }
    let new_attested_slot = new_update.attested_header().beacon().slot;
    let old_attested_slot = old_update.attested_header().beacon().slot;
    if new_attested_slot != old_attested_slot {
        return new_attested_slot < old_attested_slot;
    }
    new_update.signature_slot() < old_update.signature_slot()
}

/// `is_next_sync_committee_known(store)`.
///
/// [spec]: altair/light-client/sync-protocol.md#is_next_sync_committee_known
pub fn is_next_sync_committee_known<E: EthSpec, U: LcUpdate<E>>(
    store: &LightClientStore<E, U>,
) -> bool {
    store.next_sync_committee != empty_sync_committee()
}

/// `get_safety_threshold(store)`.
///
/// [spec]: altair/light-client/sync-protocol.md#get_safety_threshold
pub fn get_safety_threshold<E: EthSpec, U: LcUpdate<E>>(store: &LightClientStore<E, U>) -> u64 {
    store
        .previous_max_active_participants
        .max(store.current_max_active_participants)
        / 2
}

/// `is_valid_normalized_merkle_branch(leaf, branch, gindex, root)`: the branch's extra leading
/// nodes (a branch normalized to a deeper tree) are zero and the rest proves `leaf`.
///
/// [spec]: altair/light-client/sync-protocol.md#is_valid_normalized_merkle_branch
pub fn is_valid_normalized_merkle_branch(
    leaf: Root,
    branch: &[Root],
    gindex: u64,
    root: Root,
) -> bool {
    let depth = floorlog2(gindex) as usize;
    let index = get_subtree_index(gindex);
    let Some(num_extra) = branch.len().checked_sub(depth) else {
        return false;
    };
    if branch[..num_extra].iter().any(|node| !node.is_zero()) {
        return false;
    }
    types::merkle_proof::is_valid_merkle_branch(leaf, &branch[num_extra..], depth, index, root)
}

/// `initialize_light_client_store(trusted_block_root, bootstrap)`.
///
/// [spec]: altair/light-client/sync-protocol.md#initialize_light_client_store
pub fn initialize_light_client_store<E: EthSpec, B: LcBootstrap<E>>(
    spec: &ChainSpec,
    trusted_block_root: Root,
    bootstrap: &B,
) -> Result<LightClientStore<E, B::Update>, LightClientError> {
    let header = bootstrap.header();
    if !header.is_valid(spec) {
        return Err(LightClientError::InvalidHeader {
            which: "bootstrap",
            slot: header.beacon().slot,
        });
    }
    let root = header.beacon().tree_hash_root();
    if root != trusted_block_root {
        return Err(LightClientError::UntrustedBootstrap {
            expected: trusted_block_root,
            got: root,
        });
    }
    if !is_valid_normalized_merkle_branch(
        bootstrap.current_sync_committee().tree_hash_root(),
        bootstrap.current_sync_committee_branch(),
        current_sync_committee_gindex_at_slot::<E>(spec, header.beacon().slot),
        header.beacon().state_root,
    ) {
        return Err(LightClientError::InvalidBranch {
            which: "current_sync_committee",
        });
    }
    Ok(LightClientStore {
        finalized_header: header.clone(),
        current_sync_committee: bootstrap.current_sync_committee().clone(),
        next_sync_committee: empty_sync_committee(),
        best_valid_update: None,
        optimistic_header: header.clone(),
        previous_max_active_participants: 0,
        current_max_active_participants: 0,
    })
}

/// `validate_light_client_update(store, update, current_slot, genesis_validators_root)`.
///
/// [spec]: altair/light-client/sync-protocol.md#validate_light_client_update
pub fn validate_light_client_update<E: EthSpec, U: LcUpdate<E>>(
    spec: &ChainSpec,
    store: &LightClientStore<E, U>,
    update: &U,
    current_slot: Slot,
    genesis_validators_root: Root,
) -> Result<(), LightClientError> {
    // Enough participants.
    let sync_aggregate = update.sync_aggregate();
    let participants = participants(update);
    if participants < MIN_SYNC_COMMITTEE_PARTICIPANTS {
        return Err(LightClientError::TooFewParticipants { participants });
    }

    // No skipped sync committee period.
    let attested_header = update.attested_header();
    let finalized_header = update.finalized_header();
    if !attested_header.is_valid(spec) {
        return Err(LightClientError::InvalidHeader {
            which: "attested",
            slot: attested_header.beacon().slot,
        });
    }
    let update_attested_slot = attested_header.beacon().slot;
    let update_finalized_slot = finalized_header.beacon().slot;
    let signature_slot = update.signature_slot();
    if !(current_slot >= signature_slot
        && signature_slot > update_attested_slot
        && update_attested_slot >= update_finalized_slot)
    {
        return Err(LightClientError::SlotsOutOfOrder {
            current: current_slot,
            signature: signature_slot,
            attested: update_attested_slot,
            finalized: update_finalized_slot,
        });
    }
    let store_period =
        compute_sync_committee_period_at_slot::<E>(store.finalized_header.beacon().slot);
    let update_signature_period = compute_sync_committee_period_at_slot::<E>(signature_slot);
    let next_known = is_next_sync_committee_known(store);
    let period_ok = if next_known {
        update_signature_period == store_period || update_signature_period == store_period + 1
    } else {
        update_signature_period == store_period
    };
    if !period_ok {
        return Err(LightClientError::UnverifiablePeriod {
            store_period,
            signature_period: update_signature_period,
        });
    }

    // The update is relevant.
    let update_attested_period = compute_sync_committee_period_at_slot::<E>(update_attested_slot);
    let update_has_next_sync_committee =
        !next_known && is_sync_committee_update(update) && update_attested_period == store_period;
    if !(update_attested_slot > store.finalized_header.beacon().slot
        || update_has_next_sync_committee)
    {
        return Err(LightClientError::IrrelevantUpdate {
            attested: update_attested_slot,
        });
    }

    // The finality branch, if present, proves the finalized header against the attested state;
    // the genesis checkpoint's root is zero.
    let empty_header = U::Header::empty();
    if !is_finality_update(update) {
        if *finalized_header != empty_header {
            return Err(LightClientError::UnexpectedField {
                which: "finalized_header",
            });
        }
    } else {
        let finalized_root = if update_finalized_slot == GENESIS_SLOT {
            if *finalized_header != empty_header {
                return Err(LightClientError::UnexpectedField {
                    which: "finalized_header",
                });
            }
            Root::ZERO
        } else {
            if !finalized_header.is_valid(spec) {
                return Err(LightClientError::InvalidHeader {
                    which: "finalized",
                    slot: update_finalized_slot,
                });
            }
            finalized_header.beacon().tree_hash_root()
        };
        if !is_valid_normalized_merkle_branch(
            finalized_root,
            update.finality_branch(),
            finalized_root_gindex_at_slot::<E>(spec, update_attested_slot),
            attested_header.beacon().state_root,
        ) {
            return Err(LightClientError::InvalidBranch { which: "finality" });
        }
    }

    // The next sync committee, if present, is the attested state's.
    let next_sync_committee = update.next_sync_committee();
    if !is_sync_committee_update(update) {
        if *next_sync_committee != empty_sync_committee() {
            return Err(LightClientError::UnexpectedField {
                which: "next_sync_committee",
            });
        }
    } else {
        if update_attested_period == store_period
            && next_known
            && *next_sync_committee != store.next_sync_committee
        {
            return Err(LightClientError::NextSyncCommitteeMismatch);
        }
        if !is_valid_normalized_merkle_branch(
            next_sync_committee.tree_hash_root(),
            update.next_sync_committee_branch(),
            next_sync_committee_gindex_at_slot::<E>(spec, update_attested_slot),
            attested_header.beacon().state_root,
        ) {
            return Err(LightClientError::InvalidBranch {
                which: "next_sync_committee",
            });
        }
    }

    // The sync aggregate signs the attested header.
    let sync_committee = if update_signature_period == store_period {
        &store.current_sync_committee
    } else {
        &store.next_sync_committee
    };
    let mut participant_pubkeys = Vec::with_capacity(participants as usize);
    for (index, pubkey) in sync_committee.pubkeys.iter().enumerate() {
        if sync_aggregate
            .sync_committee_bits
            .get(index)
            .unwrap_or(false)
        {
            let key = bls::PublicKeyBytes(pubkey.0)
                .decompress()
                .map_err(|_| LightClientError::InvalidPublicKey { index })?;
            participant_pubkeys.push(key);
        }
    }
    let fork_version_slot = signature_slot.max(1) - 1;
    let fork_version = compute_fork_version(spec, epoch_at_slot::<E>(fork_version_slot));
    let domain = compute_domain(DOMAIN_SYNC_COMMITTEE, fork_version, genesis_validators_root);
    let signing_root = compute_signing_root(attested_header.beacon(), domain);
    let signature = bls::Signature::deserialize(sync_aggregate.sync_committee_signature.as_slice())
        .map_err(|_| LightClientError::InvalidSignature)?;
    if !bls::fast_aggregate_verify(&participant_pubkeys, signing_root.as_slice(), &signature) {
        return Err(LightClientError::InvalidSignature);
    }
    Ok(())
}

/// `apply_light_client_update(store, update)`.
///
/// [spec]: altair/light-client/sync-protocol.md#apply_light_client_update
pub fn apply_light_client_update<E: EthSpec, U: LcUpdate<E>>(
    store: &mut LightClientStore<E, U>,
    update: &U,
) -> Result<(), LightClientError> {
    let store_period =
        compute_sync_committee_period_at_slot::<E>(store.finalized_header.beacon().slot);
    let update_finalized_slot = update.finalized_header().beacon().slot;
    let update_finalized_period = compute_sync_committee_period_at_slot::<E>(update_finalized_slot);
    if !is_next_sync_committee_known(store) {
        if update_finalized_period != store_period {
            return Err(LightClientError::FinalizedPeriodMismatch {
                store_period,
                update_period: update_finalized_period,
            });
        }
        store.next_sync_committee = update.next_sync_committee().clone();
    } else if update_finalized_period == store_period + 1 {
        store.current_sync_committee = std::mem::replace(
            &mut store.next_sync_committee,
            update.next_sync_committee().clone(),
        );
        store.previous_max_active_participants = store.current_max_active_participants;
        store.current_max_active_participants = 0;
    }
    if update_finalized_slot > store.finalized_header.beacon().slot {
        store.finalized_header = update.finalized_header().clone();
        if update_finalized_slot > store.optimistic_header.beacon().slot {
            store.optimistic_header = store.finalized_header.clone();
        }
    }
    Ok(())
}

/// `process_light_client_store_force_update(store, current_slot)`: after `UPDATE_TIMEOUT`
/// without finality, applies the best valid update, its attested header standing in for the
/// finalized one when that does not advance.
///
/// [spec]: altair/light-client/sync-protocol.md#process_light_client_store_force_update
pub fn process_light_client_store_force_update<E: EthSpec, U: LcUpdate<E>>(
    store: &mut LightClientStore<E, U>,
    current_slot: Slot,
) -> Result<(), LightClientError> {
    let timed_out = current_slot
        > store
            .finalized_header
            .beacon()
            .slot
            .saturating_add(update_timeout::<E>());
    let Some(best) = store.best_valid_update.as_ref().filter(|_| timed_out) else {
        return Ok(());
    };
    // The attested header stands in for a finalized header that does not advance, so that
    // long non-finality still reaches later sync committee periods.
    let mut forced = best.clone();
    if forced.finalized_header().beacon().slot <= store.finalized_header.beacon().slot {
        let attested = forced.attested_header().clone();
        forced.set_finalized_header(attested);
    }
    // `apply_light_client_update` checks before it writes: on error the store is unchanged.
    apply_light_client_update(store, &forced)?;
    store.best_valid_update = None;
    Ok(())
}

/// `process_light_client_update(store, update, current_slot, genesis_validators_root)`.
/// On error the store is unchanged.
///
/// [spec]: altair/light-client/sync-protocol.md#process_light_client_update
pub fn process_light_client_update<E: EthSpec, U: LcUpdate<E>>(
    spec: &ChainSpec,
    store: &mut LightClientStore<E, U>,
    update: &U,
    current_slot: Slot,
    genesis_validators_root: Root,
) -> Result<(), LightClientError> {
    validate_light_client_update(spec, store, update, current_slot, genesis_validators_root)?;
    // Work on a copy so that a failing apply leaves the store as it was.
    let mut next = store.clone();
    let participants = participants(update);
    let bits_len = update.sync_aggregate().sync_committee_bits.len() as u64;

    // The best update, for a forced update when the timeout elapses.
    if next
        .best_valid_update
        .as_ref()
        .is_none_or(|best| is_better_update(update, best))
    {
        next.best_valid_update = Some(update.clone());
    }
    next.current_max_active_participants = next.current_max_active_participants.max(participants);

    // The optimistic header.
    let attested_slot = update.attested_header().beacon().slot;
    if participants > get_safety_threshold(&next)
        && attested_slot > next.optimistic_header.beacon().slot
    {
        next.optimistic_header = update.attested_header().clone();
    }

    // The finalized header, through the 2/3 threshold.
    let update_has_finalized_next_sync_committee = !is_next_sync_committee_known(&next)
        && is_sync_committee_update(update)
        && is_finality_update(update)
        && has_sync_committee_finality(update);
    if participants * 3 >= bits_len * 2
        && (update.finalized_header().beacon().slot > next.finalized_header.beacon().slot
            || update_has_finalized_next_sync_committee)
    {
        apply_light_client_update(&mut next, update)?;
        next.best_valid_update = None;
    }
    *store = next;
    Ok(())
}

/// `process_light_client_finality_update(store, finality_update, current_slot,
/// genesis_validators_root)`: a finality update as an update without a next sync committee.
///
/// [spec]: altair/light-client/sync-protocol.md#process_light_client_finality_update
pub fn process_light_client_finality_update<E: EthSpec, U: LcUpdate<E>>(
    spec: &ChainSpec,
    store: &mut LightClientStore<E, U>,
    finality_update: &U::FinalityUpdate,
    current_slot: Slot,
    genesis_validators_root: Root,
) -> Result<(), LightClientError> {
    let update = U::from_finality_update(finality_update);
    process_light_client_update(spec, store, &update, current_slot, genesis_validators_root)
}

/// `process_light_client_optimistic_update(store, optimistic_update, current_slot,
/// genesis_validators_root)`: an optimistic update as an update without finality or next sync
/// committee.
///
/// [spec]: altair/light-client/sync-protocol.md#process_light_client_optimistic_update
pub fn process_light_client_optimistic_update<E: EthSpec, U: LcUpdate<E>>(
    spec: &ChainSpec,
    store: &mut LightClientStore<E, U>,
    optimistic_update: &U::OptimisticUpdate,
    current_slot: Slot,
    genesis_validators_root: Root,
) -> Result<(), LightClientError> {
    let update = U::from_optimistic_update(optimistic_update);
    process_light_client_update(spec, store, &update, current_slot, genesis_validators_root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fork::normalize_merkle_branch;
    use types::MinimalEthSpec as E;
    use types::merkle_proof::compute_merkle_proof;

    fn update(participants: usize, attested_slot: Slot, signature_slot: Slot) -> Update<E> {
        let mut bits = ssz_types::BitVector::new();
        for i in 0..participants {
            bits.set(i, true).unwrap();
        }
        let mut attested_header = empty_header();
        attested_header.beacon.slot = attested_slot;
        Update {
            attested_header,
            next_sync_committee: empty_sync_committee(),
            next_sync_committee_branch: FixedVector::from_elem(Root::ZERO),
            finalized_header: empty_header(),
            finality_branch: FixedVector::from_elem(Root::ZERO),
            sync_aggregate: altair::SyncAggregate {
                sync_committee_bits: bits,
                sync_committee_signature: types::BLSSignature::ZERO,
            },
            signature_slot,
        }
    }

    fn store() -> LightClientStore<E> {
        LightClientStore {
            finalized_header: empty_header(),
            current_sync_committee: empty_sync_committee(),
            next_sync_committee: empty_sync_committee(),
            best_valid_update: None,
            optimistic_header: empty_header(),
            previous_max_active_participants: 0,
            current_max_active_participants: 0,
        }
    }

    #[test]
    fn is_better_update_ranks_supermajority_then_committee_then_finality_then_tiebreakers() {
        // 32 members: 22 is a supermajority (22 * 3 >= 64), 21 is not.
        let super_ = update(22, 10, 11);
        assert!(is_better_update(&super_, &update(21, 10, 11)));
        assert!(!is_better_update(&update(21, 10, 11), &super_));
        // Below the supermajority, more participants win.
        assert!(is_better_update(&update(20, 10, 11), &update(19, 10, 11)));
        // A relevant next sync committee beats none.
        let mut with_committee = update(22, 10, 11);
        with_committee.next_sync_committee_branch[0] = Root::repeat_byte(1);
        assert!(is_better_update(&with_committee, &update(32, 10, 11)));
        // Signed in the next period, the committee is not relevant.
        let mut late = with_committee.clone();
        late.signature_slot = compute_start_slot_at_sync_committee_period::<E>(1);
        assert!(!is_better_update(&late, &update(32, 10, 11)));
        // Finality beats none.
        let mut finalized = update(22, 10, 11);
        finalized.finality_branch[0] = Root::repeat_byte(1);
        assert!(is_better_update(&finalized, &update(22, 10, 11)));
        // Tiebreakers: participation, older attested slot, earlier signature slot.
        assert!(is_better_update(&update(32, 10, 11), &super_));
        assert!(is_better_update(&update(22, 9, 11), &update(22, 10, 11)));
        assert!(is_better_update(&update(22, 10, 11), &update(22, 10, 12)));
        assert!(!is_better_update(&super_, &super_));
    }

    #[test]
    fn normalized_branches_verify_only_with_zero_padding() {
        let checkpoint = phase0::Checkpoint {
            epoch: 7,
            root: Root::repeat_byte(9),
        };
        let root = checkpoint.tree_hash_root();
        // `root` is field 1 of the two-field container: generalized index 3.
        let (leaf, branch) = compute_merkle_proof(&checkpoint, 3).unwrap();
        assert!(is_valid_normalized_merkle_branch(leaf, &branch, 3, root));
        let padded: FixedVector<Root, ssz_types::typenum::U3> =
            normalize_merkle_branch(&branch, 8).unwrap();
        assert_eq!(padded[..2], [Root::ZERO, Root::ZERO]);
        assert!(is_valid_normalized_merkle_branch(leaf, &padded, 3, root));
        let mut bad = padded.clone();
        bad[0] = Root::repeat_byte(1);
        assert!(!is_valid_normalized_merkle_branch(leaf, &bad, 3, root));
        assert!(!is_valid_normalized_merkle_branch(
            Root::ZERO,
            &padded,
            3,
            root
        ));
        assert!(!is_valid_normalized_merkle_branch(leaf, &[], 3, root));
        assert!(matches!(
            normalize_merkle_branch::<ssz_types::typenum::U1>(&branch, 8),
            Err(LightClientError::BranchLength {
                expected: 1,
                got: 3
            })
        ));
    }

    #[test]
    fn rejected_updates_leave_the_store_unchanged() {
        let spec = ChainSpec::minimal();
        let mut s = store();
        let before = s.clone();
        assert_eq!(
            process_light_client_update(&spec, &mut s, &update(0, 10, 11), 20, Root::ZERO),
            Err(LightClientError::TooFewParticipants { participants: 0 })
        );
        assert!(matches!(
            process_light_client_update(&spec, &mut s, &update(5, 10, 11), 10, Root::ZERO),
            Err(LightClientError::SlotsOutOfOrder { current: 10, .. })
        ));
        // A committee of zero keys: no participant decodes.
        assert!(matches!(
            process_light_client_update(&spec, &mut s, &update(5, 10, 11), 20, Root::ZERO),
            Err(LightClientError::InvalidHeader { .. } | LightClientError::InvalidPublicKey { .. })
        ));
        assert_eq!(s, before);
    }

    #[test]
    fn a_force_update_needs_the_timeout_and_a_best_update() {
        let mut s = store();
        s.finalized_header.beacon.slot = 8;
        process_light_client_store_force_update(&mut s, 10_000).unwrap();
        assert_eq!(s, {
            let mut t = store();
            t.finalized_header.beacon.slot = 8;
            t
        });
        let mut best = update(5, 20, 21);
        best.next_sync_committee.aggregate_pubkey = types::BLSPubkey::repeat_byte(3);
        s.best_valid_update = Some(best.clone());
        // Not timed out yet: nothing happens.
        process_light_client_store_force_update(&mut s, 8 + update_timeout::<E>()).unwrap();
        assert_eq!(s.best_valid_update, Some(best.clone()));
        // Timed out: the attested header stands in for the finalized one.
        process_light_client_store_force_update(&mut s, 9 + update_timeout::<E>()).unwrap();
        assert_eq!(s.best_valid_update, None);
        assert_eq!(s.finalized_header, best.attested_header);
        assert_eq!(s.optimistic_header, best.attested_header);
        assert_eq!(s.next_sync_committee, best.next_sync_committee);
    }
}
