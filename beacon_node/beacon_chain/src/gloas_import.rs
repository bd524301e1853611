//! Gloas (EIP-7732) import: a block and its payload arrive apart, and each has its own path.
//!
//! ```text
//! SignedBeaconBlock::Gloas ──import_block──► check_block (lock) ─► state transition (pool) ─►
//!     store batch ─► insert_block_summary + the body's votes, slashings, payload attestations
//!     (lock) ─► head: the block's EMPTY node
//! SignedExecutionPayloadEnvelope ──verify_execution_payload_envelope──► (block known, checks
//!     on its post-state, custody columns of the bid's commitments) ─► engine_newPayloadV5 ─►
//!     import_verified_envelope: on_verified_execution_payload (lock) ─► head: its FULL node
//! ```
//!
//! **The first Gloas block** of a chain anchored before Gloas carries the chain's pre-Gloas
//! fork choice into a Gloas store first (`ChainForkChoice::cross_into_gloas`): each
//! pre-Gloas block as FULL, its payload verified.
//!
//! **The block** (`on_block` of `specs/gloas/fork-choice.md`) carries no payload, so it waits
//! for no data and asks no execution client: fork choice's `check_block` under its lock, the
//! state transition on the parent's post-state from the state cache on the chain's pool, the
//! block and post-state in one store batch, then [`GloasForkChoice::insert_block_summary`] (with
//! the PTC votes of the body's payload attestations, `notify_ptc_messages`), the body's
//! attestations (`on_attestation(is_from_block=True)`, indices computed on their targets'
//! checkpoint states without the lock) and attester slashings, and the head. A block that
//! builds on its parent's payload (`is_parent_node_full`) is refused until that payload's
//! envelope was imported ([`fork_choice::GloasError::ParentPayloadNotVerified`]; not recorded
//! as failed: the envelope may come).
//!
//! **Votes from gossip and the API** count as the body's do: attestations through
//! `BeaconChain::apply_votes_to_fork_choice` (`on_attestation(is_from_block=False)`, the
//! current slot's votes queued until it has passed; `data.index` checked by the Gloas gossip
//! rules in `gossip/attestation.rs`), payload attestation messages through
//! `BeaconChain::apply_payload_attestation_messages` (`gossip/payload_attestation.rs`).
//!
//! **The envelope** (`on_execution_payload_envelope`) is its own operation
//! ([`BeaconChain::import_execution_payload_envelope`]): its block known; the envelope's checks
//! (`verify_execution_payload_envelope`) on the block's post-state; the custody columns of the
//! block's root available (cells verified against the bid's `blob_kzg_commitments`); the
//! payload to the execution client (`engine_newPayloadV5`): VALID, SYNCING or ACCEPTED import it
//! (the last two optimistically), INVALID refuses the envelope. **An envelope that fails never
//! invalidates its block**: the block stays in fork choice, its EMPTY node viable, and a later
//! valid envelope may still make it FULL. Then
//! [`GloasForkChoice::on_verified_execution_payload`] and the head.
//!
//! **States.** In 1.7.0b4 the envelope does not change the beacon state: it is verified against
//! its block's post-state, and its effects (the builder's payment, the payload's requests,
//! `latest_block_hash`) come with the next block that builds on it
//! (`process_parent_execution_payload`). So a block root has one post-state, shared by its
//! EMPTY and FULL nodes, and the state cache and the store key it by block root as before
//! Gloas; there is no post-envelope state to store.
//!
//! **What persists.** Each imported envelope is kept in the store's envelope table (block root
//! → the envelope's SSZ), written by the store writer: queued under fork choice's lock as its
//! FULL node is recorded, so it lands after its block's batch (committed before fork choice
//! took the block) and before any fork choice record that holds that FULL node; the import
//! answers only once the write is committed, so an envelope acknowledged survives a crash.
//! Fork choice itself is not persisted after an envelope (it is, as before, with the imports
//! that write a whole state or an epoch snapshot). On reopening (`BeaconChain::open`), fork
//! choice restored from its last record and the blocks imported since replayed, the envelopes
//! stored for the split block and every later block fork choice holds are applied to it again
//! (`on_verified_execution_payload`, in slot order, each after its block), so the FULL
//! variants come back; a replayed block that builds on its parent's payload also marks that
//! payload verified (it was imported only once it was). A payload's verdict is not persisted:
//! after a restart it is not validated (optimistic) until the execution client says otherwise,
//! as before Gloas. The envelopes kept are what the req/resp server serves
//! (`ExecutionPayloadEnvelopesByRange` / `ByRoot`), and the store prunes them at finalization
//! (abandoned forks, and past the serving window).

use std::collections::BTreeSet;
use std::sync::Arc;

use fork_choice::{
    GloasError, GloasForkChoice, ThreadPool,
    gloas::{GloasArrival, GloasBlockSummary, PayloadAttestationVotes, slot_duties},
};
use state_processing::{
    CachedBeaconState,
    common::is_slashable_attestation_data,
    gloas::{
        envelope::{ExecutionPayloadEnvelopeInvalid, verify_execution_payload_envelope},
        per_block::{
            get_attesting_indices, get_indexed_payload_attestation, is_valid_indexed_attestation,
        },
    },
    per_block::{AlwaysValid, VerifySignatures},
    state_transition::{state_transition, state_transition_from_advanced},
};
use store::StoredAs;
use types::{
    ChainSpec, ColumnIndex, DataColumnSidecar, EthSpec, Root, SignedBeaconBlock, Slot,
    ValidatorIndex,
    gloas::{AttestationData, BeaconBlock, NewPayloadRequest, SignedExecutionPayloadEnvelope},
    phase0::Checkpoint,
    typenum::Unsigned,
};

use crate::block_verification::Imports;
use crate::chain::{BeaconChain, ChainError, ExecutionStatus, HeadSnapshot, UnimportedBlock};
use crate::events::{ChainEvent, EnvelopeSummary};
use crate::execution::{ExecutionError, PendingPayloadVerdict, payload_status_of};
use crate::gossip::GossipVerifiedEnvelope;
use crate::pending_payloads::{MissingPayloadParts, PayloadAvailability, ReadyPayload};
use crate::timeline::{SeenVia, Stage};

/// `get_forkchoice_store(anchor_state, anchor_block)` for a Gloas anchor: the anchor block's
/// summary (its justified checkpoint the state's, the PTC and committees of its slot), the
/// store's checkpoints the anchor's.
///
/// [spec]: gloas/fork-choice.md#modified-get_forkchoice_store
pub(crate) fn gloas_anchor_store<E: EthSpec>(
    state: &CachedBeaconState<E>,
    block_root: Root,
    block: &BeaconBlock<E>,
    spec: &Arc<ChainSpec>,
) -> Result<GloasForkChoice<E>, ChainError> {
    let mut state = state.clone();
    let (justified, genesis_time) = {
        let view = state.view().map_err(ChainError::State)?;
        (
            view.current_justified_checkpoint.clone(),
            *view.genesis_time,
        )
    };
    // The anchor state may be a checkpoint state past its block; one too far past it to hold
    // the block's slot's PTC gets a PTC of no validator (no payload attestation for the
    // anchor can come from a block after that state anyway).
    let (ptc, slot_committee_members) = match slot_duties(&mut state, block.slot) {
        Ok(duties) => duties,
        Err(error) => {
            tracing::debug!(%block_root, %error, "the anchor's PTC is not in its state: none");
            (
                vec![ValidatorIndex::MAX; E::PtcSize::to_usize()],
                Vec::new(),
            )
        }
    };
    let checkpoint = Checkpoint {
        epoch: block.slot / E::slots_per_epoch(),
        root: block_root,
    };
    let bid = &block.body.signed_execution_payload_bid.message;
    let summary = GloasBlockSummary {
        root: block_root,
        parent_root: block.parent_root,
        slot: block.slot,
        proposer_index: block.proposer_index,
        bid_block_hash: bid.block_hash,
        bid_parent_block_hash: bid.parent_block_hash,
        justified,
        finalized: checkpoint.clone(),
        unrealized_justified: checkpoint.clone(),
        unrealized_finalized: checkpoint,
        arrival: GloasArrival {
            attestation_timely: true,
            ptc_timely: true,
        },
        ptc,
        slot_committee_members,
        payload_attestations: Vec::new(),
    };
    Ok(GloasForkChoice::from_anchor(
        &summary,
        genesis_time,
        spec.clone(),
    ))
}

/// The Gloas message of a block, or the error a Gloas chain gives a block of an earlier fork.
fn gloas_message<E: EthSpec>(
    block: &SignedBeaconBlock<E>,
    block_root: Root,
) -> Result<&BeaconBlock<E>, ChainError> {
    match block {
        SignedBeaconBlock::Gloas(b) => Ok(&b.message),
        SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Electra(_)
        | SignedBeaconBlock::Fulu(_) => Err(ChainError::PreGloasBlock {
            block_root,
            fork: block.fork_name(),
        }),
    }
}

/// A Gloas block fork choice checked, with its pre-state.
struct PreparedGloasBlock<E: EthSpec> {
    block_root: Root,
    arrival: GloasArrival,
    pre_state: CachedBeaconState<E>,
    pre_state_advanced: bool,
}

/// A Gloas block whose state transition passed: what fork choice takes of it, and its
/// post-state.
struct ProcessedGloasBlock<E: EthSpec> {
    summary: GloasBlockSummary,
    post_state: CachedBeaconState<E>,
}

/// The state transition of a Gloas block on its prepared pre-state, then what `on_block`
/// reads of the post-state: the indexed payload attestations of the body
/// (`notify_ptc_messages`), the pulled-up checkpoints (`compute_pulled_up_tip`), the PTC and
/// committees of its slot.
fn process_gloas_block<E: EthSpec>(
    prepared: PreparedGloasBlock<E>,
    signed_block: &SignedBeaconBlock<E>,
    block: &BeaconBlock<E>,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<ProcessedGloasBlock<E>, ChainError> {
    use fork_choice::Error;
    let PreparedGloasBlock {
        block_root,
        arrival,
        pre_state: mut state,
        pre_state_advanced,
    } = prepared;
    let transition = if pre_state_advanced {
        state_transition_from_advanced
    } else {
        state_transition
    };
    // A Gloas block carries no payload: the engine is not asked.
    transition(&mut state, signed_block, verify, true, &AlwaysValid, spec).map_err(|source| {
        Error::InvalidBlock {
            block: block_root,
            source,
        }
    })?;

    // `notify_ptc_messages`: the attesting indices of the body's payload attestations (none
    // counted for a block at slot 0).
    let mut payload_attestations = Vec::new();
    if *state.state.slot() != 0 {
        let view = state.view().map_err(Error::State)?;
        for payload_attestation in block.body.payload_attestations.iter() {
            let indexed = get_indexed_payload_attestation(&view, payload_attestation)
                .map_err(GloasError::Ptc)?;
            payload_attestations.push(PayloadAttestationVotes {
                data: payload_attestation.data.clone(),
                attesting_indices: indexed.attesting_indices.to_vec(),
            });
        }
    }

    // `compute_pulled_up_tip`, on a copy of the post-state.
    let fork_choice::PostStateCheckpoints {
        justified,
        finalized,
        unrealized_justified,
        unrealized_finalized,
    } = fork_choice::post_state_checkpoints(&mut state)?;
    let (ptc, slot_committee_members) = slot_duties(&mut state, block.slot)?;
    let bid = &block.body.signed_execution_payload_bid.message;
    Ok(ProcessedGloasBlock {
        summary: GloasBlockSummary {
            root: block_root,
            parent_root: block.parent_root,
            slot: block.slot,
            proposer_index: block.proposer_index,
            bid_block_hash: bid.block_hash,
            bid_parent_block_hash: bid.parent_block_hash,
            justified,
            finalized,
            unrealized_justified,
            unrealized_finalized,
            arrival,
            ptc,
            slot_committee_members,
            payload_attestations,
        },
        post_state: state,
    })
}

/// Runs `f` on `pool` (the chain's), or where it is when already on a pool's worker (the
/// processor's): the state transition's parallel parts then use that pool.
fn on_pool<R: Send>(pool: &ThreadPool, f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        f()
    } else {
        pool.install(f)
    }
}

impl<E: EthSpec> Imports<'_, E> {
    /// The first part of a Gloas `on_block`: fork choice's checks (`check_block`, under its
    /// lock), then the pre-state (the parent's advanced state, else its post-state, loaded
    /// without the lock when the cache let go of it). `None` for a block fork choice has.
    fn prepare_gloas(
        &self,
        block_root: Root,
        block: &BeaconBlock<E>,
    ) -> Result<Option<PreparedGloasBlock<E>>, ChainError> {
        if !self.fork_choice.lock().is_gloas() {
            self.cross_into_gloas(block_root, block)?;
        }
        let bid = &block.body.signed_execution_payload_bid.message;
        let arrival = self
            .fork_choice
            .lock()
            .gloas_for_block(block_root)?
            .store
            .check_block(
                block_root,
                block.parent_root,
                block.slot,
                bid.parent_block_hash,
            )?;
        let Some(arrival) = arrival else {
            return Ok(None);
        };
        let (pre_state, pre_state_advanced) = match self
            .state_cache
            .advanced_state(&block.parent_root, block.slot)
        {
            Some(state) => (state, true),
            None => (self.block_state(&block.parent_root)?, false),
        };
        Ok(Some(PreparedGloasBlock {
            block_root,
            arrival,
            pre_state,
            pre_state_advanced,
        }))
    }

    /// The chain's first Gloas block, on a chain running the pre-Gloas store: the store is
    /// carried into a Gloas store (`ChainForkChoice::cross_into_gloas`). What it needs of
    /// states is read first, without the lock: the payload hash of the store's first block
    /// (the anchor's, from its state) and the parent state's validator count. A block whose
    /// parent fork choice does not hold crosses nothing ([`fork_choice::Error::UnknownParent`]).
    fn cross_into_gloas(&self, block_root: Root, block: &BeaconBlock<E>) -> Result<(), ChainError> {
        let first = {
            let fc = self.fork_choice.lock();
            if !fc.contains_block(&block.parent_root) {
                return Err(fork_choice::Error::UnknownParent {
                    block: block_root,
                    parent: block.parent_root,
                }
                .into());
            }
            fc.block_roots().first().copied()
        };
        let Some(first) = first else {
            return Ok(());
        };
        let anchor_payload_hash = {
            let state = self.block_state(&first)?;
            let view = state.view().map_err(ChainError::State)?;
            match view.gloas() {
                Ok(gloas) => *gloas.latest_block_hash,
                Err(_) => view.payload_header().map_err(ChainError::State)?.block_hash,
            }
        };
        let validators = {
            let state = self.block_state(&block.parent_root)?;
            let view = state.view().map_err(ChainError::State)?;
            view.validators.len() as u64
        };
        let spec = Arc::new(self.spec.clone());
        let mut fc = self.fork_choice.lock();
        fc.cross_into_gloas(anchor_payload_hash, validators, &spec)?;
        tracing::info!(
            %block_root,
            slot = block.slot,
            blocks = fc.block_roots().len(),
            "fork choice carried into Gloas at the chain's first Gloas block"
        );
        Ok(())
    }

    /// The votes of a Gloas block's attestations as `on_attestation(is_from_block=True)`
    /// counts them: each attestation's attesting indices on its target's checkpoint state,
    /// computed without fork choice's lock. An attestation whose target fork choice does not
    /// hold, or whose state cannot be had, is passed over, as fork choice would refuse it.
    fn gloas_block_votes(
        &self,
        block: &BeaconBlock<E>,
    ) -> Vec<(AttestationData, Vec<ValidatorIndex>)> {
        let targets_known: Vec<bool> = {
            let fc = self.fork_choice.lock();
            let finalized_epoch = fc.finalized_checkpoint().epoch;
            block
                .body
                .attestations
                .iter()
                .map(|a| {
                    a.data.target.epoch >= finalized_epoch && fc.contains_block(&a.data.target.root)
                })
                .collect()
        };
        let mut votes = Vec::with_capacity(block.body.attestations.len());
        for (attestation, known) in block.body.attestations.iter().zip(targets_known) {
            if !known {
                continue;
            }
            let Ok(mut state) = self.checkpoint_state(&attestation.data.target) else {
                tracing::debug!(
                    epoch = attestation.data.target.epoch,
                    root = %attestation.data.target.root,
                    "a block's vote passed over: its target's state is not to be had"
                );
                continue;
            };
            let Ok((view, caches)) = state.view_mut() else {
                continue;
            };
            let view = view.as_ref();
            let Ok(indices) = get_attesting_indices(&view, caches, attestation) else {
                continue;
            };
            votes.push((attestation.data.clone(), indices));
        }
        votes
    }

    /// The end of a Gloas `on_block`, under fork choice's lock: the justified balances it may
    /// need handed over first (without the lock), then the block's summary and its votes.
    /// The post-state goes to the state cache.
    fn insert_gloas(
        &self,
        processed: &ProcessedGloasBlock<E>,
        votes: &[(AttestationData, Vec<ValidatorIndex>)],
    ) -> Result<Root, ChainError> {
        let summary = &processed.summary;
        self.supply_justified_balances(&[
            summary.justified.clone(),
            summary.unrealized_justified.clone(),
        ]);
        let pins = {
            let mut chain_fc = self.fork_choice.lock();
            let fc = chain_fc.gloas_for_block(summary.root)?;
            let root = fc.store.insert_block_summary(summary)?;
            for (data, indices) in votes {
                // Valid in the transition; one fork choice cannot use (a vote for a block it
                // pruned, or for a payload it has not verified) is dropped, as the spec's
                // store would drop it.
                let _ = fc.store.on_indexed_attestation(data, indices, true);
            }
            debug_assert_eq!(root, summary.root);
            chain_fc.pins()
        };
        self.state_cache.insert_block_state(
            summary.root,
            summary.slot,
            processed.post_state.clone(),
        );
        self.state_cache.pin(pins);
        Ok(summary.root)
    }

    /// `on_attester_slashing` for the attester slashings of an inserted Gloas block: each
    /// one's attestations valid in the justified checkpoint block's post-state (signatures
    /// verified by the block's transition), the validators in both equivocating.
    fn apply_gloas_block_slashings(&self, block: &BeaconBlock<E>) {
        if block.body.attester_slashings.is_empty() {
            return;
        }
        let justified_root = self.fork_choice.lock().justified_checkpoint().root;
        let Ok(state) = self.block_state(&justified_root) else {
            tracing::debug!(%justified_root, "a block's attester slashings passed over: the justified state is not to be had");
            return;
        };
        let Ok(view) = state.view() else {
            return;
        };
        let mut equivocating = Vec::new();
        for slashing in block.body.attester_slashings.iter() {
            let (a1, a2) = (&slashing.attestation_1, &slashing.attestation_2);
            if !is_slashable_attestation_data(&a1.data, &a2.data) {
                continue;
            }
            let valid = [a1, a2].into_iter().all(|a| {
                is_valid_indexed_attestation(
                    &view,
                    &state.caches,
                    &a.attesting_indices,
                    &a.data,
                    &a.signature,
                    VerifySignatures::None,
                )
                .is_ok()
            });
            if valid {
                let second: std::collections::HashSet<ValidatorIndex> =
                    a2.attesting_indices.iter().copied().collect();
                equivocating.extend(
                    a1.attesting_indices
                        .iter()
                        .copied()
                        .filter(|i| second.contains(i)),
                );
            }
        }
        if !equivocating.is_empty() {
            let _ = self
                .fork_choice
                .lock()
                .on_verified_attester_slashing(&equivocating);
        }
    }

    /// A stored Gloas block imported again when the chain reopens: checked when first
    /// imported, so without signature checks. When it builds on its parent's payload, that
    /// payload is marked verified first: the block was imported only once it was (its envelope,
    /// applied again from the store before this block, may have been lost to a failed write).
    /// Returns the post-state; `None` for a block fork choice has.
    pub(crate) fn import_stored_gloas_block(
        &self,
        signed_block: &SignedBeaconBlock<E>,
        pool: &ThreadPool,
    ) -> Result<Option<CachedBeaconState<E>>, ChainError> {
        let block_root = signed_block.canonical_root();
        let block = gloas_message(signed_block, block_root)?;
        // (A chain still before Gloas carries its store into Gloas in `prepare_gloas`, every
        // pre-Gloas payload verified.)
        if let Some(fc) = self.fork_choice.lock().gloas_mut() {
            let bid = &block.body.signed_execution_payload_bid.message;
            let parent = fc.store.block_info(&block.parent_root);
            if let Some(parent) = parent
                && parent.bid_block_hash == bid.parent_block_hash
                && !parent.payload_verified
            {
                fc.store
                    .on_verified_execution_payload(parent.root, Ok(()))?;
            }
        }
        let Some(prepared) = self.prepare_gloas(block_root, block)? else {
            return Ok(None);
        };
        let spec = self.spec;
        let processed = on_pool(pool, || {
            process_gloas_block(prepared, signed_block, block, VerifySignatures::None, spec)
        })?;
        let votes = self.gloas_block_votes(block);
        self.insert_gloas(&processed, &votes)?;
        self.apply_gloas_block_slashings(block);
        Ok(Some(processed.post_state))
    }
}

impl<E: EthSpec> BeaconChain<E> {
    /// The spec's Gloas `on_block` for `block` (root `block_root`, computed once upstream):
    /// no data to wait for and no payload to execute. Fork choice's checks, the state
    /// transition (on the chain's pool, without any lock), one store batch with the block and
    /// its post-state, then fork choice takes the block with its votes, payload attestations
    /// and slashings, and the head is recomputed: the block's EMPTY node until its envelope
    /// is imported ([`Self::import_execution_payload_envelope`]).
    ///
    /// [spec]: gloas/fork-choice.md#modified-on_block
    pub(crate) fn import_gloas_block(
        &self,
        block: Arc<SignedBeaconBlock<E>>,
        block_root: Root,
    ) -> Result<Root, ChainError> {
        let slot = block.slot();
        let now = self.now_ms();
        let message = gloas_message(&block, block_root)?;
        let verify = {
            let mut fc = self.fork_choice.lock();
            fc.on_tick(now / 1000);
            fc.verify_signatures()
        };
        let imports = self.imports();
        let processed = imports
            .prepare_gloas(block_root, message)
            .and_then(|prepared| match prepared {
                Some(prepared) => {
                    self.import_metrics
                        .observe_import(prepared.pre_state_advanced);
                    let spec = self.spec();
                    let block = &block;
                    on_pool(self.pool(), || {
                        process_gloas_block(prepared, block, message, verify, spec)
                    })
                    .map(Some)
                }
                None => Ok(None),
            });
        let processed = match processed {
            Ok(Some(processed)) => processed,
            Ok(None) => {
                self.unimported.lock().remove(&block_root);
                return Ok(block_root);
            }
            Err(e) => {
                self.record_failed_gloas_block(block_root, slot, &e);
                return Err(e);
            }
        };
        // The block goes to the store before fork choice takes it (as before Gloas).
        let stored = self.store_imported_block(block_root, &block, &[], &processed.post_state)?;
        let votes = imports.gloas_block_votes(message);
        if let Err(e) = imports.insert_gloas(&processed, &votes) {
            self.record_failed_gloas_block(block_root, slot, &e);
            return Err(e);
        }
        imports.apply_gloas_block_slashings(message);
        drop(imports);
        self.unimported.lock().remove(&block_root);
        self.persist_fork_choice_with(&block, &processed.post_state, stored);
        self.record_stage(block_root, slot, Stage::Imported);
        self.light_client_server
            .on_block(&processed.post_state.state, &block);
        let execution_optimistic = self
            .fork_choice
            .lock()
            .gloas_chain()
            .is_some_and(|g| g.head_optimistic(&block_root, fork_choice::PayloadStatus::Empty));
        self.events().publish(ChainEvent::Block {
            slot,
            block: block_root,
            execution_optimistic,
        });
        self.recompute_head()?;
        Ok(block_root)
    }

    /// Records a Gloas block whose import failed as failed (its descendants refused) when the
    /// block itself is at fault: not for an unknown parent, a block from the future, or one
    /// whose parent's payload is not verified yet (its envelope may still come).
    fn record_failed_gloas_block(&self, block_root: Root, slot: Slot, e: &ChainError) {
        let retriable = matches!(
            e,
            ChainError::ForkChoice(
                fork_choice::Error::UnknownParent { .. } | fork_choice::Error::FutureBlock { .. }
            ) | ChainError::GloasForkChoice(
                GloasError::ParentPayloadNotVerified { .. }
                    | GloasError::Store(
                        fork_choice::Error::UnknownParent { .. }
                            | fork_choice::Error::FutureBlock { .. }
                    )
            )
        );
        if e.fault() == fork_choice::Fault::Message && !retriable {
            self.record_unimported_block(
                block_root,
                UnimportedBlock::Failed {
                    slot,
                    payload: ExecutionStatus::NotValidated,
                },
            );
        }
    }

    /// Fork choice persisted after a Gloas block's import: handed to the store writer with a
    /// deferred epoch snapshot, or alone beside a whole state (a restart rebuilds the tree
    /// from it and replays the blocks imported since).
    fn persist_fork_choice_with(
        &self,
        block: &SignedBeaconBlock<E>,
        post_state: &CachedBeaconState<E>,
        stored: StoredAs,
    ) {
        match stored {
            StoredAs::Whole => self.persist_fork_choice(),
            StoredAs::PendingSnapshot => {
                // Queued under the lock: in the writer's queue in the order fork choice took
                // them, so older bytes never land over newer ones.
                let fc = self.fork_choice.lock();
                self.store_writer().write(
                    block.state_root(),
                    post_state.state.clone(),
                    fc.to_persisted_bytes(),
                );
            }
            StoredAs::Summary => {}
        }
    }

    /// Queues fork choice as it is now for the store (the store writer writes it after the
    /// writes queued before it). A failure is logged there: a restart then rebuilds fork choice
    /// from the record before.
    fn persist_fork_choice(&self) {
        let fc = self.fork_choice.lock();
        self.store_writer()
            .persist_fork_choice(fc.to_persisted_bytes());
    }
}

/// Why the custody columns of a Gloas block's payload are not available.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ColumnsUnavailable {
    /// Custody columns not given (not received yet).
    #[error("custody columns {0:?} missing")]
    Missing(Vec<ColumnIndex>),
    /// A column given is not a Gloas sidecar of this block.
    #[error("column {index} is not a Gloas sidecar of the envelope's block")]
    WrongBlock {
        /// The column's index.
        index: ColumnIndex,
    },
    /// A column whose cells and proofs are not one per commitment of the bid.
    #[error("column {index}: {cells} cells and {proofs} proofs for {commitments} commitments")]
    LengthMismatch {
        /// The column's index.
        index: ColumnIndex,
        /// Cells in the column.
        cells: usize,
        /// Proofs in the column.
        proofs: usize,
        /// The bid's commitments.
        commitments: usize,
    },
    /// A column whose cells fail KZG verification against the bid's commitments.
    #[error("column {index}: {error}")]
    Kzg {
        /// The column's index.
        index: ColumnIndex,
        /// What the KZG library found.
        error: kzg::Error,
    },
}

impl ColumnsUnavailable {
    /// Missing columns are nobody's fault (they may come); a bad one is its sender's.
    fn fault(&self) -> Option<fork_choice::Fault> {
        match self {
            Self::Missing(_) => None,
            Self::WrongBlock { .. } | Self::LengthMismatch { .. } | Self::Kzg { .. } => {
                Some(fork_choice::Fault::Message)
            }
        }
    }
}

/// Why an execution payload envelope was not imported. [`Self::fault`] says whose fault.
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    /// The envelope's beacon block is not in fork choice (not imported yet, or pruned).
    #[error("the envelope's block {0} is not known")]
    UnknownBlock(Root),
    /// The chain runs the pre-Gloas fork choice: no envelopes.
    #[error("the chain runs the pre-Gloas fork choice: envelope of {0} refused")]
    NotGloasChain(Root),
    /// `verify_execution_payload_envelope` failed on the block's post-state.
    #[error("envelope of {block_root}: {source}")]
    Invalid {
        /// The envelope's block.
        block_root: Root,
        /// The failed check.
        #[source]
        source: ExecutionPayloadEnvelopeInvalid,
    },
    /// The custody columns of the block are not available (`is_data_available`).
    #[error("envelope of {block_root}: {source}")]
    DataUnavailable {
        /// The envelope's block.
        block_root: Root,
        /// What is missing or wrong.
        #[source]
        source: ColumnsUnavailable,
    },
    /// The execution client found the payload INVALID. The block stays valid.
    #[error("the execution client found the payload of block {0} invalid")]
    InvalidPayload(Root),
    /// The chain (its store, states or fork choice) failed.
    #[error("{0}")]
    Chain(#[from] ChainError),
    /// The blocking task of the import ended without an answer (cancelled at shutdown).
    #[error("the envelope's import task ended: {0}")]
    Task(#[source] tokio::task::JoinError),
    /// The envelope was applied to fork choice (its block FULL while the node runs) but the
    /// store did not keep it: a restart loses its FULL node until it is imported again.
    #[error("envelope of {block_root} not stored: {source}")]
    NotStored {
        /// The envelope's block.
        block_root: Root,
        /// The store's failure.
        #[source]
        source: store::StoreError,
    },
    /// The store writer's thread stopped (it panicked): the envelope was applied to fork choice
    /// but not stored.
    #[error("envelope of {0} not stored: the store writer stopped")]
    StoreWriterStopped(Root),
}

impl EnvelopeError {
    /// Whose fault this is: the envelope's sender's ([`fork_choice::Fault::Message`]), ours
    /// ([`fork_choice::Fault::Local`]: the same envelope may import on a retry), or nobody's
    /// (`None`: its block or columns are not here yet; the envelope may import once they are).
    pub fn fault(&self) -> Option<fork_choice::Fault> {
        use fork_choice::Fault;
        match self {
            Self::UnknownBlock(_) => None,
            Self::DataUnavailable { source, .. } => source.fault(),
            Self::Invalid {
                source: ExecutionPayloadEnvelopeInvalid::State(_),
                ..
            }
            | Self::NotGloasChain(_)
            | Self::Task(_)
            | Self::NotStored { .. }
            | Self::StoreWriterStopped(_) => Some(Fault::Local),
            Self::Invalid { .. } | Self::InvalidPayload(_) => Some(Fault::Message),
            Self::Chain(e) => Some(e.fault()),
        }
    }
}

/// An envelope whose checks passed against its block's post-state, its custody columns
/// available: what remains is the execution client's verdict on its payload
/// ([`BeaconChain::import_verified_envelope`]).
#[derive(Debug, Clone)]
pub struct VerifiedEnvelope<E: EthSpec> {
    /// The envelope's block.
    pub block_root: Root,
    /// The block's slot.
    pub slot: Slot,
    /// The envelope.
    pub envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
    /// What `engine_newPayloadV5` is sent (`verify_and_notify_new_payload`).
    pub request: NewPayloadRequest<E>,
    /// The custody columns of the bid's commitments, stored with the envelope (empty for a bid
    /// without commitments).
    pub columns: Vec<Arc<DataColumnSidecar<E>>>,
}

/// The columns an envelope's availability is checked with.
enum EnvelopeColumns<'a, E: EthSpec> {
    /// As received (req/resp, tests): their KZG proofs checked against the bid.
    Unverified(&'a [DataColumnSidecar<E>]),
    /// Gossip verified already (KZG included): only their presence is checked.
    GossipVerified(Vec<Arc<DataColumnSidecar<E>>>),
}

/// The Gloas columns of `columns` whose index is in `custody`, one per index.
fn custody_of<'a, E: EthSpec>(
    columns: &'a [DataColumnSidecar<E>],
    custody: &BTreeSet<ColumnIndex>,
) -> Vec<&'a DataColumnSidecar<E>> {
    let mut seen = BTreeSet::new();
    columns
        .iter()
        .filter(|c| match c {
            DataColumnSidecar::Gloas(_) => custody.contains(&c.index()) && seen.insert(c.index()),
            DataColumnSidecar::Fulu(_) => false,
        })
        .collect()
}

/// What became of a payload part (an envelope or columns) from gossip.
#[derive(Debug, Clone)]
pub enum PayloadProcessed<E: EthSpec> {
    /// The part completed the payload, which was imported.
    Imported(EnvelopeImported<E>),
    /// The payload waits for its other parts.
    Pending(MissingPayloadParts),
    /// The block's payload was imported already: the part is not needed.
    AlreadyImported(Root),
    /// Nothing of it was held: columns outside the node's custody, or a finalized slot.
    NotHeld(Root),
}

/// An imported envelope.
#[derive(Debug, Clone)]
pub struct EnvelopeImported<E: EthSpec> {
    /// The envelope's block, FULL in fork choice now.
    pub block_root: Root,
    /// The execution client's verdict (VALID, or not validated: SYNCING, ACCEPTED, no answer).
    pub status: ExecutionStatus,
    /// The head after the import.
    pub head: Arc<HeadSnapshot<E>>,
}

/// `is_data_available(beacon_block_root)` for a Gloas payload: the custody columns of the
/// block given, each a Gloas sidecar of it with a cell and proof per commitment of the bid,
/// their cells verified against the bid's `blob_kzg_commitments` in one KZG batch on `pool`.
/// A bid without commitments has nothing to sample.
///
/// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
pub fn verify_gloas_custody_columns<E: EthSpec>(
    block_root: Root,
    commitments: &[types::KZGCommitment],
    columns: &[DataColumnSidecar<E>],
    custody: &BTreeSet<ColumnIndex>,
    pool: &ThreadPool,
) -> Result<(), ColumnsUnavailable> {
    if commitments.is_empty() {
        return Ok(());
    }
    let mut sampled = Vec::with_capacity(custody.len());
    let mut missing = Vec::new();
    for &index in custody {
        let column = columns.iter().find_map(|c| match c {
            DataColumnSidecar::Gloas(c) if c.index == index => Some(c),
            DataColumnSidecar::Gloas(_) | DataColumnSidecar::Fulu(_) => None,
        });
        match column {
            Some(column) => sampled.push(column),
            None => missing.push(index),
        }
    }
    if !missing.is_empty() {
        return Err(ColumnsUnavailable::Missing(missing));
    }
    let kzg_commitments: Vec<kzg::KzgCommitment> = commitments
        .iter()
        .map(|c| kzg::KzgCommitment(c.0))
        .collect();
    let mut cells = Vec::with_capacity(sampled.len());
    let mut proofs = Vec::with_capacity(sampled.len());
    for column in &sampled {
        if column.beacon_block_root != block_root || column.index >= E::NumberOfColumns::to_u64() {
            return Err(ColumnsUnavailable::WrongBlock {
                index: column.index,
            });
        }
        if column.column.len() != commitments.len() || column.kzg_proofs.len() != commitments.len()
        {
            return Err(ColumnsUnavailable::LengthMismatch {
                index: column.index,
                cells: column.column.len(),
                proofs: column.kzg_proofs.len(),
                commitments: commitments.len(),
            });
        }
        let column_cells = column
            .column
            .iter()
            .map(|cell| kzg::cell_from_bytes(&cell[..]))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| ColumnsUnavailable::Kzg {
                index: column.index,
                error,
            })?;
        cells.push(column_cells);
        proofs.push(
            column
                .kzg_proofs
                .iter()
                .map(|p| kzg::KzgProof(p.0))
                .collect::<Vec<_>>(),
        );
    }
    let refs: Vec<kzg::ColumnRef<'_>> = sampled
        .iter()
        .zip(cells.iter().zip(&proofs))
        .map(|(column, (cells, proofs))| kzg::ColumnRef {
            index: column.index,
            cells,
            commitments: &kzg_commitments,
            proofs,
        })
        .collect();
    kzg::verify_data_column_sidecar_kzg_proofs_batch(&refs, pool).map_err(|failures| {
        let (i, error) = failures
            .into_iter()
            .next()
            .expect("a failed batch names a column");
        ColumnsUnavailable::Kzg {
            index: refs[i].index,
            error,
        }
    })
}

impl<E: EthSpec> BeaconChain<E> {
    /// The checks of `on_execution_payload_envelope` before the execution client: the block
    /// known to fork choice; `verify_execution_payload_envelope` on its post-state (loaded
    /// without any lock when the cache let go of it); the node's custody columns of the block
    /// (`columns`: what was received for its root) available against the bid's commitments,
    /// KZG on the chain's pool. Returns the request for `engine_newPayloadV5`.
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub fn verify_execution_payload_envelope(
        &self,
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        columns: &[DataColumnSidecar<E>],
    ) -> Result<VerifiedEnvelope<E>, EnvelopeError> {
        self.verify_envelope_with(envelope, EnvelopeColumns::Unverified(columns), false)
    }

    /// [`Self::verify_execution_payload_envelope`] for an envelope and columns gossip verified
    /// already: the envelope's signature and the columns' KZG proofs are not checked again.
    fn verify_gossip_verified_envelope(
        &self,
        ready: ReadyPayload<E>,
    ) -> Result<VerifiedEnvelope<E>, EnvelopeError> {
        self.verify_envelope_with(
            ready.envelope,
            EnvelopeColumns::GossipVerified(ready.columns),
            true,
        )
    }

    fn verify_envelope_with(
        &self,
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        columns: EnvelopeColumns<'_, E>,
        signature_verified: bool,
    ) -> Result<VerifiedEnvelope<E>, EnvelopeError> {
        let block_root = envelope.message.beacon_block_root;
        let verify = {
            let fc = self.fork_choice.lock();
            if !fc.is_gloas() {
                return Err(EnvelopeError::NotGloasChain(block_root));
            }
            if !fc.contains_block(&block_root) {
                return Err(EnvelopeError::UnknownBlock(block_root));
            }
            if signature_verified {
                VerifySignatures::None
            } else {
                fc.verify_signatures()
            }
        };
        let mut state = self.block_state_outside_lock(&block_root)?;
        let state_root = state.hash_tree_root().map_err(ChainError::State)?;
        let (request, slot, commitments) = {
            let view = state.view().map_err(ChainError::State)?;
            let request = on_pool(self.pool(), || {
                verify_execution_payload_envelope(
                    &view,
                    state_root,
                    &state.caches,
                    &envelope,
                    verify,
                    self.spec(),
                )
            })
            .map_err(|source| EnvelopeError::Invalid { block_root, source })?;
            let gloas = view.gloas().map_err(ChainError::State)?;
            let commitments: Vec<types::KZGCommitment> = gloas
                .latest_execution_payload_bid
                .blob_kzg_commitments
                .iter()
                .cloned()
                .collect();
            (request, *view.slot, commitments)
        };
        let custody = self.custody_columns();
        let unavailable = |source| EnvelopeError::DataUnavailable { block_root, source };
        let columns = if commitments.is_empty() {
            Vec::new()
        } else {
            match columns {
                EnvelopeColumns::Unverified(columns) => {
                    verify_gloas_custody_columns::<E>(
                        block_root,
                        &commitments,
                        columns,
                        &custody,
                        self.pool(),
                    )
                    .map_err(unavailable)?;
                    custody_of(columns, &custody)
                        .into_iter()
                        .map(|c| Arc::new(c.clone()))
                        .collect()
                }
                EnvelopeColumns::GossipVerified(columns) => {
                    let held: BTreeSet<ColumnIndex> = columns.iter().map(|c| c.index()).collect();
                    let missing: Vec<ColumnIndex> = custody.difference(&held).copied().collect();
                    if !missing.is_empty() {
                        return Err(unavailable(ColumnsUnavailable::Missing(missing)));
                    }
                    columns
                        .into_iter()
                        .filter(|c| custody.contains(&c.index()))
                        .collect()
                }
            }
        };
        Ok(VerifiedEnvelope {
            block_root,
            slot,
            envelope,
            request,
            columns,
        })
    }

    /// The end of `on_execution_payload_envelope`, with the execution client's verdict on
    /// the payload (`status`, from `engine_newPayloadV5`): INVALID refuses the envelope and
    /// leaves its block as it was (valid, EMPTY); VALID or not validated (SYNCING, ACCEPTED,
    /// no answer: optimistic) makes the block's FULL node (`on_verified_execution_payload`),
    /// records the verdict, queues the envelope for the store (under fork choice's lock: before
    /// any fork choice record holding the FULL node) and recomputes the head, then answers once
    /// the store committed the envelope (behind the store writer's earlier jobs: an epoch
    /// snapshot or a migration may delay the answer, not the head). A store failure is
    /// [`EnvelopeError::NotStored`]: the FULL node stays while the node runs.
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub fn import_verified_envelope(
        &self,
        verified: VerifiedEnvelope<E>,
        status: ExecutionStatus,
    ) -> Result<EnvelopeImported<E>, EnvelopeError> {
        let block_root = verified.block_root;
        self.record_stage(block_root, verified.slot, Stage::Executed);
        let summary = EnvelopeSummary {
            slot: verified.slot,
            builder_index: verified.envelope.message.builder_index,
            block_hash: verified.envelope.message.payload.block_hash,
            block_root,
        };
        if status == ExecutionStatus::Invalidated {
            tracing::warn!(%block_root, "the execution client found the envelope's payload invalid: the envelope is refused, the block stays");
            return Err(EnvelopeError::InvalidPayload(block_root));
        }
        let written = {
            let mut chain_fc = self.fork_choice.lock();
            let Some(fc) = chain_fc.gloas_mut() else {
                return Err(EnvelopeError::NotGloasChain(block_root));
            };
            fc.store
                .on_verified_execution_payload(block_root, Ok(()))
                .map_err(|e| match e {
                    GloasError::UnknownBeaconBlock(root) => EnvelopeError::UnknownBlock(root),
                    other => EnvelopeError::Chain(other.into()),
                })?;
            // A VALID verdict already recorded (a second copy of the envelope) stays.
            let recorded = fc.payload_statuses.entry(block_root).or_insert(status);
            if status == ExecutionStatus::Valid {
                *recorded = status;
            }
            self.store_writer()
                .put_execution_payload_envelope(verified.envelope, verified.columns)
        };
        // The block is FULL in fork choice from here (before the store's answer, as the head).
        self.record_stage(block_root, verified.slot, Stage::EnvelopeImported);
        // Parts of the payload still held from gossip are not needed any more.
        self.pending_payloads.lock().remove(&block_root);
        let head = self.recompute_head()?;
        let written = written.ok_or(EnvelopeError::StoreWriterStopped(block_root))?;
        match written.recv() {
            Ok(Ok(())) => {}
            Ok(Err(source)) => {
                tracing::error!(%block_root, error = %source, "the envelope was not stored: a restart loses its FULL node");
                return Err(EnvelopeError::NotStored { block_root, source });
            }
            // The writer dropped the job unanswered: its thread stopped.
            Err(_) => return Err(EnvelopeError::StoreWriterStopped(block_root)),
        }
        // Announced once stored: a reader that asks for the envelope finds it.
        self.events()
            .publish(ChainEvent::ExecutionPayloadAvailable {
                slot: summary.slot,
                block_root,
            });
        self.events().publish(ChainEvent::ExecutionPayload {
            envelope: summary,
            execution_optimistic: status != ExecutionStatus::Valid,
        });
        Ok(EnvelopeImported {
            block_root,
            status,
            head,
        })
    }

    /// `on_execution_payload_envelope(store, signed_envelope)` for an envelope and the custody
    /// columns received for its block: [`Self::verify_execution_payload_envelope`] on a
    /// blocking thread (the checks on the chain's pool), `engine_newPayloadV5` to the attached
    /// execution client (no client, or one that cannot be asked: not validated, an optimistic
    /// import, as for a block's payload before Gloas), then [`Self::import_verified_envelope`].
    /// An envelope that fails, at any step, leaves its block valid.
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub async fn import_execution_payload_envelope(
        self: &Arc<Self>,
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        columns: Vec<DataColumnSidecar<E>>,
    ) -> Result<EnvelopeImported<E>, EnvelopeError> {
        let chain = self.clone();
        let verified = tokio::task::spawn_blocking(move || {
            chain.verify_execution_payload_envelope(envelope, &columns)
        })
        .await
        .map_err(EnvelopeError::Task)??;
        let status = match self.execution_layer() {
            Some(execution) => match execution.engine.new_payload_v5(&verified.request).await {
                Ok(answer) => payload_status_of(&answer),
                Err(e) => {
                    let e = ExecutionError::from(e);
                    tracing::warn!(block_root = %verified.block_root, error = %e, "newPayloadV5 failed: importing the envelope optimistically");
                    ExecutionStatus::NotValidated
                }
            },
            None => ExecutionStatus::NotValidated,
        };
        let chain = self.clone();
        tokio::task::spawn_blocking(move || chain.import_verified_envelope(verified, status))
            .await
            .map_err(EnvelopeError::Task)?
    }

    /// `engine_newPayloadV5` for a verified envelope from a synchronous caller (a processor
    /// worker): sent on the execution client's runtime, its answer waited for as long as an
    /// import waits for a block's verdict. No client, a failed call or no answer in time: not
    /// validated (an optimistic import).
    fn new_payload_v5_verdict(&self, verified: &VerifiedEnvelope<E>) -> ExecutionStatus {
        let Some(execution) = self.payload_verdicts.execution_layer() else {
            return ExecutionStatus::NotValidated;
        };
        let (sender, pending) = PendingPayloadVerdict::channel();
        let engine = execution.engine.clone();
        let request = verified.request.clone();
        let block_root = verified.block_root;
        execution.runtime.spawn(async move {
            match engine.new_payload_v5(&request).await {
                Ok(answer) => sender.send(payload_status_of(&answer)),
                Err(e) => {
                    let e = ExecutionError::from(e);
                    tracing::warn!(%block_root, error = %e, "newPayloadV5 failed: importing the envelope optimistically");
                    sender.send(ExecutionStatus::NotValidated);
                }
            }
        });
        pending
            .wait(self.payload_verdicts.wait())
            .unwrap_or(ExecutionStatus::NotValidated)
    }

    /// `on_execution_payload_envelope` for an envelope and its block's custody columns as
    /// received by req/resp, from a synchronous caller (a processor worker: range sync imports
    /// a segment's envelopes in order with its blocks): [`Self::verify_execution_payload_envelope`],
    /// `engine_newPayloadV5` waited for as a block's verdict is (no answer in time: optimistic),
    /// then [`Self::import_verified_envelope`]. An envelope that fails leaves its block valid.
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub fn import_rpc_execution_payload_envelope(
        &self,
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        columns: &[DataColumnSidecar<E>],
    ) -> Result<EnvelopeImported<E>, EnvelopeError> {
        self.record_envelope_seen(envelope.message.beacon_block_root, SeenVia::Rpc);
        let verified = self.verify_execution_payload_envelope(envelope, columns)?;
        let status = self.new_payload_v5_verdict(&verified);
        self.import_verified_envelope(verified, status)
    }

    /// A payload whose envelope and custody columns passed gossip validation
    /// ([`PendingPayloads`] made it ready): the envelope's checks against its block's
    /// post-state (signature and KZG not again), `engine_newPayloadV5`, then
    /// [`Self::import_verified_envelope`] (the envelope and its columns stored, the block FULL).
    /// An envelope that fails leaves its block valid.
    ///
    /// [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope
    pub fn import_available_payload(
        &self,
        ready: ReadyPayload<E>,
    ) -> Result<EnvelopeImported<E>, EnvelopeError> {
        let verified = self.verify_gossip_verified_envelope(ready)?;
        let status = self.new_payload_v5_verdict(&verified);
        self.import_verified_envelope(verified, status)
    }

    /// A gossip-verified envelope: imported at once when its block's custody columns are here
    /// (or its bid has no commitments), else held until they come. An envelope of a block whose
    /// payload is imported already is not held.
    pub fn process_gossip_execution_payload_envelope(
        &self,
        verified: GossipVerifiedEnvelope<E>,
    ) -> Result<PayloadProcessed<E>, EnvelopeError> {
        let block_root = verified.block_root;
        if self.is_payload_verified(&block_root) {
            return Ok(PayloadProcessed::AlreadyImported(block_root));
        }
        let custody = self.custody_columns();
        let put = self.pending_payloads.lock().put_envelope(
            block_root,
            verified.slot,
            verified.blobs,
            verified.envelope,
            &custody,
        );
        self.on_payload_part(block_root, put)
    }

    /// Gossip-verified Gloas columns of block `root` (at `slot`), held until the block's
    /// envelope is here; the payload, when they complete it, is imported. Columns of a block
    /// whose payload is imported already are not held.
    pub fn process_gossip_gloas_columns(
        &self,
        block_root: Root,
        slot: Slot,
        columns: Vec<Arc<DataColumnSidecar<E>>>,
    ) -> Result<PayloadProcessed<E>, EnvelopeError> {
        if self.is_payload_verified(&block_root) {
            return Ok(PayloadProcessed::AlreadyImported(block_root));
        }
        let custody = self.custody_columns();
        let put = self
            .pending_payloads
            .lock()
            .put_columns(block_root, slot, columns, &custody);
        self.on_payload_part(block_root, put)
    }

    fn on_payload_part(
        &self,
        block_root: Root,
        put: Option<(PayloadAvailability<E>, Vec<Root>)>,
    ) -> Result<PayloadProcessed<E>, EnvelopeError> {
        let Some((availability, evicted)) = put else {
            return Ok(PayloadProcessed::NotHeld(block_root));
        };
        for root in evicted {
            tracing::debug!(block_root = %root, "a payload waiting for its parts was evicted: they can come again by req/resp");
        }
        match availability {
            PayloadAvailability::Ready(ready) => self
                .import_available_payload(*ready)
                .map(PayloadProcessed::Imported),
            PayloadAvailability::Missing(missing) => Ok(PayloadProcessed::Pending(missing)),
        }
    }

    /// Whether fork choice holds the payload of Gloas block `root` as verified (its envelope
    /// imported: the block has a FULL node). `false` for an unknown block and before Gloas.
    pub fn is_payload_verified(&self, root: &Root) -> bool {
        self.fork_choice
            .lock()
            .gloas_chain()
            .is_some_and(|g| g.store.is_payload_verified(root))
    }

    /// The columns the node custodies.
    fn custody_columns(&self) -> BTreeSet<ColumnIndex> {
        self.da_checker.lock().custody_columns().clone()
    }
}
