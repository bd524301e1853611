//! The full node's side: light-client headers, bootstraps and updates derived from blocks and
//! their post-states.
//!
//! Derivation covers Electra and Fulu blocks and states (the forks whose state proofs `types`
//! opens); earlier forks' give [`LightClientError::UnsupportedFork`]. Results are in Electra's
//! format; [`into_forked_bootstrap`] and its siblings wrap them in the fork's container for the
//! wire (Electra's and Fulu's formats are one). [`StateView`] also opens Gloas states, whose
//! Gloas-format data [`crate::gloas::block_to_light_client_header`] and the collector
//! ([`crate::GloasLightClientDataCollector`]) derive.
//!
//! [spec]: altair/light-client/full-node.md, capella/ and deneb/light-client/full-node.md

use ssz_types::FixedVector;
use tree_hash::TreeHash;
use types::merkle_proof::{ProofTree, compute_merkle_proof, floorlog2};
use types::{
    BeaconState, ChainSpec, EthSpec, ForkName, GENESIS_SLOT, Root, SignedBeaconBlock, Slot, altair,
    deneb, electra, phase0,
};

use crate::format::{LcData, LcHeader, normalized_branch};
use crate::sync_protocol::{
    EXECUTION_PAYLOAD_GINDEX, MIN_SYNC_COMMITTEE_PARTICIPANTS,
    compute_sync_committee_period_at_slot, current_sync_committee_gindex_at_slot,
    empty_sync_committee, finalized_root_gindex_at_slot, next_sync_committee_gindex_at_slot,
};
use crate::{Bootstrap, FinalityUpdate, Header, LightClientError, OptimisticUpdate, Update};

/// The parts of an Electra, Fulu or Gloas state that light-client data is derived from.
pub struct StateView<'a, E: EthSpec> {
    /// The state as a Merkle tree to prove fields of.
    pub tree: Box<dyn ProofTree + 'a>,
    /// `state.slot`.
    pub slot: Slot,
    /// `state.latest_block_header`.
    pub latest_block_header: &'a phase0::BeaconBlockHeader,
    /// `state.current_sync_committee`.
    pub current_sync_committee: &'a altair::SyncCommittee<E>,
    /// `state.next_sync_committee`.
    pub next_sync_committee: &'a altair::SyncCommittee<E>,
    /// `state.finalized_checkpoint`.
    pub finalized_checkpoint: &'a phase0::Checkpoint,
}

/// A classic container's tree, borrowed.
struct Borrowed<'a>(&'a dyn ProofTree);

impl ProofTree for Borrowed<'_> {
    fn field_roots(&self) -> Vec<Root> {
        self.0.field_roots()
    }

    fn field(&self, index: usize) -> Option<&dyn ProofTree> {
        self.0.field(index)
    }
}

impl<'a, E: EthSpec> StateView<'a, E> {
    /// The view of an Electra, Fulu or Gloas state (a Gloas state's progressive tree is built
    /// from its field roots here).
    pub fn new(state: &'a BeaconState<E>) -> Result<Self, LightClientError> {
        macro_rules! view {
            ($s:expr, $tree:expr) => {
                StateView {
                    tree: $tree,
                    slot: $s.slot,
                    latest_block_header: &$s.latest_block_header,
                    current_sync_committee: &$s.current_sync_committee,
                    next_sync_committee: &$s.next_sync_committee,
                    finalized_checkpoint: &$s.finalized_checkpoint,
                }
            };
        }
        match state {
            BeaconState::Electra(s) => Ok(view!(s, Box::new(Borrowed(s)))),
            BeaconState::Fulu(s) => Ok(view!(s, Box::new(Borrowed(s)))),
            BeaconState::Gloas(s) => Ok(view!(
                s,
                Box::new(types::merkle_proof::progressive::gloas_state_tree(s))
            )),
            other @ (BeaconState::Phase0(_)
            | BeaconState::Altair(_)
            | BeaconState::Bellatrix(_)
            | BeaconState::Capella(_)
            | BeaconState::Deneb(_)) => Err(LightClientError::UnsupportedFork(other.fork_name())),
        }
    }
}

/// The Electra/Fulu block inside `block`.
fn electra_block<E: EthSpec>(
    block: &SignedBeaconBlock<E>,
) -> Result<&electra::SignedBeaconBlock<E>, LightClientError> {
    match block {
        SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => Ok(b),
        other @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Gloas(_)) => Err(LightClientError::UnsupportedFork(other.fork_name())),
    }
}

/// `block.message.body.sync_aggregate` of an Electra, Fulu or Gloas block.
pub(crate) fn sync_aggregate_of<E: EthSpec>(
    block: &SignedBeaconBlock<E>,
) -> Result<&altair::SyncAggregate<E>, LightClientError> {
    match block {
        SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => {
            Ok(&b.message.body.sync_aggregate)
        }
        SignedBeaconBlock::Gloas(b) => Ok(&b.message.body.sync_aggregate),
        other @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)) => Err(LightClientError::UnsupportedFork(other.fork_name())),
    }
}

/// The proof of the node at `gindex` of `tree`, normalized to the depth of `format_gindex`
/// (the format's branch for that field).
fn normalized_proof(
    tree: &dyn ProofTree,
    gindex: u64,
    format_gindex: u64,
) -> Result<Vec<Root>, LightClientError> {
    let (_, nodes) = compute_merkle_proof(tree, gindex)?;
    if nodes.len() > floorlog2(format_gindex) as usize {
        // A deeper tree than the format's (a Gloas state for Electra's format).
        return Err(LightClientError::BranchLength {
            expected: floorlog2(format_gindex) as usize,
            got: nodes.len(),
        });
    }
    Ok(normalized_branch(&nodes, format_gindex))
}

/// The leaf's branch at `gindex` of `tree`, as a fixed vector.
fn branch<N: ssz_types::typenum::Unsigned>(
    tree: &dyn ProofTree,
    gindex: u64,
) -> Result<FixedVector<Root, N>, LightClientError> {
    let (_, nodes) = compute_merkle_proof(tree, gindex)?;
    crate::fork::fixed(nodes)
}

/// `block_to_light_client_header(block)`: the block's header with its execution payload header
/// and the payload's branch in the body.
///
/// [spec]: deneb/light-client/full-node.md#modified-block_to_light_client_header
pub fn block_to_light_client_header<E: EthSpec>(
    block: &SignedBeaconBlock<E>,
) -> Result<Header<E>, LightClientError> {
    let block = electra_block(block)?;
    let message = &block.message;
    let payload = &message.body.execution_payload;
    // Electra and Fulu blocks are past Capella and Deneb: the payload is always included.
    let execution = deneb::ExecutionPayloadHeader {
        parent_hash: payload.parent_hash,
        fee_recipient: payload.fee_recipient,
        state_root: payload.state_root,
        receipts_root: payload.receipts_root,
        logs_bloom: payload.logs_bloom.clone(),
        prev_randao: payload.prev_randao,
        block_number: payload.block_number,
        gas_limit: payload.gas_limit,
        gas_used: payload.gas_used,
        timestamp: payload.timestamp,
        extra_data: payload.extra_data.clone(),
        base_fee_per_gas: payload.base_fee_per_gas,
        block_hash: payload.block_hash,
        transactions_root: payload.transactions.tree_hash_root(),
        withdrawals_root: payload.withdrawals.tree_hash_root(),
        blob_gas_used: payload.blob_gas_used,
        excess_blob_gas: payload.excess_blob_gas,
    };
    Ok(Header {
        beacon: phase0::BeaconBlockHeader {
            slot: message.slot,
            proposer_index: message.proposer_index,
            parent_root: message.parent_root,
            state_root: message.state_root,
            body_root: message.body.tree_hash_root(),
        },
        execution,
        execution_branch: branch(&message.body, EXECUTION_PAYLOAD_GINDEX)?,
    })
}

/// Checks that `state` is the immediate post-state of `block` (`state.slot ==
/// state.latest_block_header.slot` and the header with the state's root is the block's).
fn check_post_state<E: EthSpec>(
    state: &BeaconState<E>,
    view: &StateView<'_, E>,
    block: &SignedBeaconBlock<E>,
) -> Result<Root, LightClientError> {
    let block_root = block.canonical_root();
    let mut header = view.latest_block_header.clone();
    header.state_root = state.tree_hash_root();
    if view.slot != view.latest_block_header.slot || header.tree_hash_root() != block_root {
        return Err(LightClientError::StateNotOfBlock {
            state_slot: view.slot,
            block_root,
        });
    }
    Ok(block_root)
}

/// `create_light_client_bootstrap(state, block)`: the block's header with the current sync
/// committee of its post-state and that committee's branch.
///
/// [spec]: altair/light-client/full-node.md#create_light_client_bootstrap
pub fn create_light_client_bootstrap<E: EthSpec>(
    spec: &ChainSpec,
    state: &BeaconState<E>,
    block: &SignedBeaconBlock<E>,
) -> Result<Bootstrap<E>, LightClientError> {
    create_light_client_bootstrap_in::<E, Update<E>>(spec, state, block)
}

/// `create_light_client_bootstrap` in the format of `U`.
pub(crate) fn create_light_client_bootstrap_in<E: EthSpec, U: LcData<E>>(
    spec: &ChainSpec,
    state: &BeaconState<E>,
    block: &SignedBeaconBlock<E>,
) -> Result<U::Bootstrap, LightClientError> {
    let view = StateView::new(state)?;
    check_post_state(state, &view, block)?;
    let header = U::block_to_light_client_header(spec, block)?;
    let branch = normalized_proof(
        &*view.tree,
        current_sync_committee_gindex_at_slot::<E>(spec, view.slot),
        U::CURRENT_SYNC_COMMITTEE_GINDEX,
    )?;
    U::new_bootstrap(header, view.current_sync_committee.clone(), &branch)
}

/// `create_light_client_update(state, block, attested_state, attested_block, finalized_block)`:
/// the update whose sync aggregate is `block`'s, attesting `block`'s parent.
///
/// [spec]: altair/light-client/full-node.md#create_light_client_update
pub fn create_light_client_update<E: EthSpec>(
    spec: &ChainSpec,
    state: &BeaconState<E>,
    block: &SignedBeaconBlock<E>,
    attested_state: &BeaconState<E>,
    attested_block: &SignedBeaconBlock<E>,
    finalized_block: Option<&SignedBeaconBlock<E>>,
) -> Result<Update<E>, LightClientError> {
    create_light_client_update_in::<E, Update<E>>(
        spec,
        state,
        block,
        attested_state,
        attested_block,
        finalized_block,
    )
}

/// `create_light_client_update` in the format of `U`.
pub(crate) fn create_light_client_update_in<E: EthSpec, U: LcData<E>>(
    spec: &ChainSpec,
    state: &BeaconState<E>,
    block: &SignedBeaconBlock<E>,
    attested_state: &BeaconState<E>,
    attested_block: &SignedBeaconBlock<E>,
    finalized_block: Option<&SignedBeaconBlock<E>>,
) -> Result<U, LightClientError> {
    let sync_aggregate = sync_aggregate_of(block)?;
    let participants = sync_aggregate.sync_committee_bits.num_set_bits() as u64;
    if participants < MIN_SYNC_COMMITTEE_PARTICIPANTS {
        return Err(LightClientError::TooFewParticipants { participants });
    }
    let view = StateView::new(state)?;
    check_post_state(state, &view, block)?;
    let update_signature_period = compute_sync_committee_period_at_slot::<E>(block.slot());

    let attested = StateView::new(attested_state)?;
    let attested_root = check_post_state(attested_state, &attested, attested_block)?;
    if attested_root != block.parent_root() {
        return Err(LightClientError::NotParent {
            attested: attested_root,
            parent: block.parent_root(),
        });
    }
    let update_attested_period = compute_sync_committee_period_at_slot::<E>(attested_block.slot());

    let attested_header = U::block_to_light_client_header(spec, attested_block)?;
    // The next sync committee helps only when the current one signs.
    let (next_sync_committee, next_sync_committee_branch) =
        if update_attested_period == update_signature_period {
            let branch = normalized_proof(
                &*attested.tree,
                next_sync_committee_gindex_at_slot::<E>(spec, attested.slot),
                U::NEXT_SYNC_COMMITTEE_GINDEX,
            )?;
            (attested.next_sync_committee.clone(), branch)
        } else {
            (
                empty_sync_committee(),
                normalized_branch(&[], U::NEXT_SYNC_COMMITTEE_GINDEX),
            )
        };
    // Finality whenever the finalized block is at hand.
    let mut finalized_header = <U::Header as LcHeader<E>>::empty();
    let mut finality_branch = normalized_branch(&[], U::FINALIZED_ROOT_GINDEX);
    if let Some(finalized_block) = finalized_block {
        if finalized_block.slot() != GENESIS_SLOT {
            finalized_header = U::block_to_light_client_header(spec, finalized_block)?;
            let got = finalized_header.beacon().tree_hash_root();
            if got != attested.finalized_checkpoint.root {
                return Err(LightClientError::FinalizedRootMismatch {
                    expected: attested.finalized_checkpoint.root,
                    got,
                });
            }
        } else if !attested.finalized_checkpoint.root.is_zero() {
            return Err(LightClientError::FinalizedRootMismatch {
                expected: attested.finalized_checkpoint.root,
                got: Root::ZERO,
            });
        }
        finality_branch = normalized_proof(
            &*attested.tree,
            finalized_root_gindex_at_slot::<E>(spec, attested.slot),
            U::FINALIZED_ROOT_GINDEX,
        )?;
    }
    U::new_update(
        attested_header,
        next_sync_committee,
        &next_sync_committee_branch,
        finalized_header,
        &finality_branch,
        sync_aggregate.clone(),
        block.slot(),
    )
}

/// `create_light_client_finality_update(update)`.
///
/// [spec]: altair/light-client/full-node.md#create_light_client_finality_update
pub fn create_light_client_finality_update<E: EthSpec>(update: &Update<E>) -> FinalityUpdate<E> {
    FinalityUpdate {
        attested_header: update.attested_header.clone(),
        finalized_header: update.finalized_header.clone(),
        finality_branch: update.finality_branch.clone(),
        sync_aggregate: update.sync_aggregate.clone(),
        signature_slot: update.signature_slot,
    }
}

/// `create_light_client_optimistic_update(update)`.
///
/// [spec]: altair/light-client/full-node.md#create_light_client_optimistic_update
pub fn create_light_client_optimistic_update<E: EthSpec>(
    update: &Update<E>,
) -> OptimisticUpdate<E> {
    OptimisticUpdate {
        attested_header: update.attested_header.clone(),
        sync_aggregate: update.sync_aggregate.clone(),
        signature_slot: update.signature_slot,
    }
}

/// The fork whose format light-client data about a header at `slot` has.
pub fn light_client_fork_at_slot<E: EthSpec>(spec: &ChainSpec, slot: Slot) -> ForkName {
    spec.fork_name_at_slot::<E>(slot)
}

/// A latest-format bootstrap as `fork`'s container (Electra or Fulu).
pub fn into_forked_bootstrap<E: EthSpec>(
    fork: ForkName,
    bootstrap: Bootstrap<E>,
) -> Result<types::LightClientBootstrap<E>, LightClientError> {
    match fork {
        ForkName::Electra => Ok(types::LightClientBootstrap::Electra(bootstrap)),
        ForkName::Fulu => Ok(types::LightClientBootstrap::Fulu(bootstrap)),
        other @ (ForkName::Phase0
        | ForkName::Altair
        | ForkName::Bellatrix
        | ForkName::Capella
        | ForkName::Deneb
        | ForkName::Gloas) => Err(LightClientError::UnsupportedFork(other)),
    }
}

/// A latest-format update as `fork`'s container (Electra or Fulu).
pub fn into_forked_update<E: EthSpec>(
    fork: ForkName,
    update: Update<E>,
) -> Result<types::LightClientUpdate<E>, LightClientError> {
    match fork {
        ForkName::Electra => Ok(types::LightClientUpdate::Electra(update)),
        ForkName::Fulu => Ok(types::LightClientUpdate::Fulu(update)),
        other @ (ForkName::Phase0
        | ForkName::Altair
        | ForkName::Bellatrix
        | ForkName::Capella
        | ForkName::Deneb
        | ForkName::Gloas) => Err(LightClientError::UnsupportedFork(other)),
    }
}

/// A latest-format finality update as `fork`'s container (Electra or Fulu).
pub fn into_forked_finality_update<E: EthSpec>(
    fork: ForkName,
    update: FinalityUpdate<E>,
) -> Result<types::LightClientFinalityUpdate<E>, LightClientError> {
    match fork {
        ForkName::Electra => Ok(types::LightClientFinalityUpdate::Electra(update)),
        ForkName::Fulu => Ok(types::LightClientFinalityUpdate::Fulu(update)),
        other @ (ForkName::Phase0
        | ForkName::Altair
        | ForkName::Bellatrix
        | ForkName::Capella
        | ForkName::Deneb
        | ForkName::Gloas) => Err(LightClientError::UnsupportedFork(other)),
    }
}

/// A latest-format optimistic update as `fork`'s container (Electra or Fulu).
pub fn into_forked_optimistic_update<E: EthSpec>(
    fork: ForkName,
    update: OptimisticUpdate<E>,
) -> Result<types::LightClientOptimisticUpdate<E>, LightClientError> {
    match fork {
        ForkName::Electra => Ok(types::LightClientOptimisticUpdate::Electra(update)),
        ForkName::Fulu => Ok(types::LightClientOptimisticUpdate::Fulu(update)),
        other @ (ForkName::Phase0
        | ForkName::Altair
        | ForkName::Bellatrix
        | ForkName::Capella
        | ForkName::Deneb
        | ForkName::Gloas) => Err(LightClientError::UnsupportedFork(other)),
    }
}
