//! The costly middle of the spec's `on_block`, which needs nothing of fork choice: the
//! availability check (`is_data_available`, KZG on the processor's pool) beside the state
//! transition, then `compute_pulled_up_tip`'s justification on a copy of the post-state. Fork
//! choice checks the block before ([`fork_choice::ForkChoice::check_block`]) and takes the
//! result after ([`fork_choice::ForkChoice::insert_block`]); the post-state goes to the
//! chain's [`crate::state_cache::StateCache`].

use std::sync::Arc;

use fork_choice::{
    Arrival, AvailabilityError, BlockSummary, Columns, ForkChoice, JustifiedBalances, ThreadPool,
    is_data_available,
};

use crate::chain_fork_choice::ChainForkChoice;
use state_processing::{
    CachedBeaconState, Caches,
    per_block::{
        BlockSignatureVerifier, ExecutionEngine, VerifySignatures, get_indexed_attestation,
        is_valid_indexed_attestation,
    },
    state_transition::{
        state_transition, state_transition_from_advanced, state_transition_gathering_signatures,
    },
};
use store::Store;
use types::{
    ChainSpec, EthSpec, Root, SignedBeaconBlock, Slot, ValidatorIndex,
    electra::{AttestationData, BeaconBlock},
    phase0::Checkpoint,
};

use crate::chain::ChainError;
use crate::state_advance::ImportMetrics;
use crate::state_cache::StateCache;
use crate::tracked_mutex::TrackedMutex;

/// A block fork choice checked on arrival, with its pre-state (the parent's post-state, or
/// that state advanced ahead of the block by the slot timer).
#[derive(Debug)]
pub(crate) struct PreparedBlock<E: EthSpec> {
    pub(crate) block_root: Root,
    pub(crate) parent_root: Root,
    pub(crate) slot: Slot,
    pub(crate) pre_state: CachedBeaconState<E>,
    /// `pre_state` is the parent's advanced state.
    pub(crate) pre_state_advanced: bool,
    pub(crate) arrival: Arrival,
}

/// A block whose availability check and state transition passed: what fork choice takes of it,
/// and its post-state.
#[derive(Debug)]
pub(crate) struct ProcessedBlock<E: EthSpec> {
    pub(crate) summary: BlockSummary,
    pub(crate) post_state: CachedBeaconState<E>,
}

/// What a block's processing needs of the chain (cheap to clone).
#[derive(Debug, Clone)]
pub(crate) struct BlockProcessor {
    pub(crate) spec: Arc<ChainSpec>,
    pub(crate) verify_signatures: VerifySignatures,
    pub(crate) kzg_pool: Arc<ThreadPool>,
}

impl BlockProcessor {
    /// Runs the availability check on `columns` and the state transition of `signed_block` on
    /// the prepared pre-state, then the pulled-up checkpoints.
    pub(crate) fn process<E: EthSpec>(
        &self,
        prepared: PreparedBlock<E>,
        signed_block: &SignedBeaconBlock<E>,
        columns: Columns<'_, E>,
        engine: &impl ExecutionEngine<E>,
    ) -> Result<ProcessedBlock<E>, fork_choice::Error> {
        self.process_with(prepared, signed_block, columns, engine, false)
            .map(|(processed, _)| processed)
    }

    /// As [`Self::process`], with the block's signature sets gathered and handed back, not
    /// verified (when signatures are batched; with any other [`VerifySignatures`] they are
    /// checked as configured and the verifier is empty). For a range-sync segment, whose blocks'
    /// sets are verified together: the caller must verify them before the block is inserted.
    pub(crate) fn process_gathering_signatures<E: EthSpec>(
        &self,
        prepared: PreparedBlock<E>,
        signed_block: &SignedBeaconBlock<E>,
        columns: Columns<'_, E>,
        engine: &impl ExecutionEngine<E>,
    ) -> Result<(ProcessedBlock<E>, BlockSignatureVerifier), fork_choice::Error> {
        let gather = self.verify_signatures == VerifySignatures::Batched;
        self.process_with(prepared, signed_block, columns, engine, gather)
            .map(|(processed, sets)| (processed, sets.unwrap_or_default()))
    }

    fn process_with<E: EthSpec>(
        &self,
        prepared: PreparedBlock<E>,
        signed_block: &SignedBeaconBlock<E>,
        columns: Columns<'_, E>,
        engine: &impl ExecutionEngine<E>,
        gather: bool,
    ) -> Result<(ProcessedBlock<E>, Option<BlockSignatureVerifier>), fork_choice::Error> {
        use fork_choice::Error;
        let PreparedBlock {
            block_root,
            parent_root,
            slot,
            pre_state: mut state,
            pre_state_advanced,
            arrival,
        } = prepared;
        // The availability check (KZG on the pool's threads) runs beside the state
        // transition: neither needs the other's result. Its verdict comes first, as in the
        // spec's order.
        let has_data = match &columns {
            Columns::Retrieved(sidecars) => !sidecars.is_empty(),
            Columns::Blobs { blobs, .. } => !blobs.is_empty(),
            Columns::Missing => false,
        };
        let transition = |state: &mut CachedBeaconState<E>| {
            // An advanced pre-state may be at the block's slot already, which the spec's
            // `state_transition` refuses; the block header's checks hold either way.
            if gather {
                return state_transition_gathering_signatures(
                    state,
                    signed_block,
                    pre_state_advanced,
                    true,
                    engine,
                    &self.spec,
                )
                .map(Some);
            }
            let transition = if pre_state_advanced {
                state_transition_from_advanced
            } else {
                state_transition
            };
            transition(
                state,
                signed_block,
                self.verify_signatures,
                true,
                engine,
                &self.spec,
            )
            .map(|()| None)
        };
        let (available, transitioned) = if has_data {
            // The check is spawned on a pool while this thread runs the transition; no thread
            // of its own. On a pool's worker (the processor's, when the chain imports) on that
            // pool, where an idle worker takes it (or this one runs it after the transition,
            // when none is idle); elsewhere (a test's thread) on the chain's pool.
            // `in_place_scope`: the transition stays on this thread without having to be
            // `Send` (the execution engine it calls need not be `Sync`).
            let mut available = None;
            let check = || is_data_available(columns, &self.spec, &self.kzg_pool);
            let transitioned = if rayon::current_thread_index().is_some() {
                rayon::in_place_scope(|scope| {
                    scope.spawn(|_| available = Some(check()));
                    transition(&mut state)
                })
            } else {
                self.kzg_pool.in_place_scope(|scope| {
                    scope.spawn(|_| available = Some(check()));
                    transition(&mut state)
                })
            };
            let available = available.unwrap_or(Err(AvailabilityError::NotRetrieved));
            (available, transitioned)
        } else {
            // No data to verify (the check answers at once: available when nothing is
            // committed to, not when the columns were not retrieved): no transition when the
            // data is not there.
            let available = is_data_available(columns, &self.spec, &self.kzg_pool);
            let transitioned = match available {
                Ok(()) => transition(&mut state),
                Err(_) => Ok(None),
            };
            (available, transitioned)
        };
        available.map_err(|source| Error::DataUnavailable {
            block: block_root,
            source,
        })?;
        let gathered = transitioned.map_err(|source| Error::InvalidBlock {
            block: block_root,
            source,
        })?;

        // The pulled-up checkpoints, on a copy of the post-state (`compute_pulled_up_tip`).
        // The target balances come from the state's caches, kept block by block: no walk of
        // the registry per block (built on the post-state itself when its lineage has none,
        // so that its descendants inherit them).
        let fork_choice::PostStateCheckpoints {
            justified,
            finalized,
            unrealized_justified,
            unrealized_finalized,
        } = fork_choice::post_state_checkpoints(&mut state)?;
        let payload_hash = match signed_block {
            SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => {
                Some(b.message.body.execution_payload.block_hash)
            }
            // The chain imports no block before Electra (its anchor is Electra or later).
            SignedBeaconBlock::Phase0(_)
            | SignedBeaconBlock::Altair(_)
            | SignedBeaconBlock::Bellatrix(_)
            | SignedBeaconBlock::Capella(_)
            | SignedBeaconBlock::Deneb(_)
            | SignedBeaconBlock::Gloas(_) => {
                return Err(Error::UnsupportedFork(signed_block.fork_name()));
            }
        };
        let processed = ProcessedBlock {
            summary: BlockSummary {
                root: block_root,
                parent_root,
                slot,
                proposer_index: signed_block.proposer_index(),
                justified,
                finalized,
                unrealized_justified,
                unrealized_finalized,
                payload_hash,
                is_timely: arrival.is_timely,
            },
            post_state: state,
        };
        Ok((processed, gathered))
    }
}

/// The parts of the chain a block's import reads and writes beside the transition: fork
/// choice behind its lock, the state cache, the store the cache loads from. The chain has one
/// ([`crate::BeaconChain`]); [`crate::BeaconChain::open`] builds one before the chain exists,
/// to import the stored blocks again.
pub(crate) struct Imports<'a, E: EthSpec> {
    pub(crate) fork_choice: &'a TrackedMutex<ChainForkChoice<E>>,
    pub(crate) state_cache: &'a StateCache<E>,
    pub(crate) store: &'a Store<E>,
    pub(crate) spec: &'a ChainSpec,
    /// The caches a state loaded from the store shares (the chain's public keys).
    pub(crate) caches: Caches,
    pub(crate) metrics: &'a ImportMetrics,
}

impl<E: EthSpec> Imports<'_, E> {
    /// The post-state of block `root`: the state cache's, else loaded from the store without
    /// any lock (counted) and kept in the cache.
    pub(crate) fn block_state(&self, root: &Root) -> Result<CachedBeaconState<E>, ChainError> {
        let (state, loaded) =
            self.state_cache
                .block_state_or_load(root, self.store, self.spec, &self.caches)?;
        if loaded {
            self.metrics.observe_state_load_outside_lock();
        }
        Ok(state)
    }

    /// `store.checkpoint_states[target]`: the state cache's, else computed without any lock
    /// (the target block's post-state advanced to the epoch's first slot) and kept there.
    pub(crate) fn checkpoint_state(
        &self,
        target: &Checkpoint,
    ) -> Result<CachedBeaconState<E>, ChainError> {
        let (state, loaded) = self.state_cache.checkpoint_state_or_load(
            target,
            self.store,
            self.spec,
            &self.caches,
        )?;
        if loaded {
            self.metrics.observe_state_load_outside_lock();
        }
        Ok(state)
    }

    /// The first part of `on_block`: fork choice's checks (`check_block`, under its lock), then
    /// the pre-state: the parent's post-state advanced ahead of the block when the slot timer
    /// advanced it, else the parent's post-state (loaded when the cache let go of it). `None`
    /// for a block fork choice has already.
    pub(crate) fn prepare(
        &self,
        block: &SignedBeaconBlock<E>,
    ) -> Result<Option<PreparedBlock<E>>, ChainError> {
        let block_root = block.canonical_root();
        let parent_root = block.parent_root();
        let slot = block.slot();
        let Some(arrival) = self
            .fork_choice
            .lock()
            .fulu_for_block(block_root, block.fork_name())?
            .check_block(block_root, parent_root, slot)?
        else {
            return Ok(None);
        };
        let (pre_state, pre_state_advanced) =
            match self.state_cache.advanced_state(&parent_root, slot) {
                Some(state) => (state, true),
                None => (self.block_state(&parent_root)?, false),
            };
        Ok(Some(PreparedBlock {
            block_root,
            parent_root,
            slot,
            pre_state,
            pre_state_advanced,
            arrival,
        }))
    }

    /// [`Self::prepare`] for a block whose parent is processed but not inserted yet (the next
    /// block of a range-sync segment): fork choice's `check_child_block`, the parent's
    /// post-state as the pre-state. `None` for a block fork choice has already.
    pub(crate) fn prepare_child(
        &self,
        parent: &ProcessedBlock<E>,
        block: &SignedBeaconBlock<E>,
    ) -> Result<Option<PreparedBlock<E>>, ChainError> {
        let block_root = block.canonical_root();
        let parent_root = block.parent_root();
        let slot = block.slot();
        if parent_root != parent.summary.root {
            return Err(fork_choice::Error::UnknownParent {
                block: block_root,
                parent: parent_root,
            }
            .into());
        }
        let Some(arrival) = self
            .fork_choice
            .lock()
            .fulu_for_block(block_root, block.fork_name())?
            .check_child_block(block_root, slot)?
        else {
            return Ok(None);
        };
        Ok(Some(PreparedBlock {
            block_root,
            parent_root,
            slot,
            pre_state: parent.post_state.clone(),
            pre_state_advanced: false,
            arrival,
        }))
    }

    /// Hands fork choice the justified balances it lacks: those of its justified and unrealized
    /// justified checkpoints and of `extra` (a block's, about to be inserted), each computed
    /// from the checkpoint's state without fork choice's lock. One whose state cannot be had
    /// is logged and left out: fork choice then says, typed, what it cannot do without it.
    pub(crate) fn supply_justified_balances(&self, extra: &[Checkpoint]) {
        let wanted: Vec<Checkpoint> = {
            let fc = self.fork_choice.lock();
            let justified_epoch = fc.justified_checkpoint().epoch;
            let mut wanted = fc.wanted_justified_balances();
            wanted.extend(
                extra
                    .iter()
                    .filter(|checkpoint| {
                        checkpoint.epoch >= justified_epoch
                            && !fc.has_justified_balances(checkpoint)
                    })
                    .cloned(),
            );
            wanted.sort_unstable_by_key(|c| (c.epoch, c.root));
            wanted.dedup();
            wanted
        };
        if wanted.is_empty() {
            return;
        }
        let mut computed = Vec::with_capacity(wanted.len());
        for checkpoint in wanted {
            let balances = self
                .checkpoint_state(&checkpoint)
                .and_then(|state| Ok(JustifiedBalances::from_state(&state)?));
            match balances {
                Ok(balances) => computed.push((checkpoint, balances)),
                Err(e) => tracing::debug!(
                    epoch = checkpoint.epoch,
                    root = %checkpoint.root,
                    error = %e,
                    "justified balances not computed"
                ),
            }
        }
        let mut fc = self.fork_choice.lock();
        for (checkpoint, balances) in computed {
            fc.set_justified_balances(&checkpoint, balances);
        }
    }

    /// The votes of `block`'s attestations as `on_attestation(is_from_block=True)` counts them:
    /// each attestation's attesting indices by its target's checkpoint state
    /// (`store_target_checkpoint_state`), computed without fork choice's lock. Their signatures
    /// were verified by the block's state transition; an attestation whose target fork choice
    /// does not hold, or whose state cannot be had, is passed over, as fork choice would refuse
    /// it.
    pub(crate) fn block_votes(
        &self,
        message: &BeaconBlock<E>,
    ) -> Vec<(AttestationData, Vec<ValidatorIndex>)> {
        let targets_known: Vec<bool> = {
            let fc = self.fork_choice.lock();
            let finalized_epoch = fc.finalized_checkpoint().epoch;
            message
                .body
                .attestations
                .iter()
                .map(|a| {
                    a.data.target.epoch >= finalized_epoch && fc.contains_block(&a.data.target.root)
                })
                .collect()
        };
        let mut votes = Vec::with_capacity(message.body.attestations.len());
        for (attestation, known) in message.body.attestations.iter().zip(targets_known) {
            if !known {
                continue;
            }
            let mut state = match self.checkpoint_state(&attestation.data.target) {
                Ok(state) => state,
                Err(e) => {
                    tracing::debug!(
                        epoch = attestation.data.target.epoch,
                        root = %attestation.data.target.root,
                        error = %e,
                        "a block's vote passed over: its target's state is not to be had"
                    );
                    continue;
                }
            };
            let Ok((view, caches)) = state.view_mut() else {
                continue;
            };
            let view = view.as_ref();
            let Ok(indexed) = get_indexed_attestation(&view, caches, attestation) else {
                continue;
            };
            if is_valid_indexed_attestation(&view, caches, &indexed, VerifySignatures::None)
                .is_err()
            {
                continue;
            }
            votes.push((attestation.data.clone(), indexed.attesting_indices.to_vec()));
        }
        votes
    }

    /// The end of `on_block` for a processed block, under fork choice's lock: the justified
    /// balances it may need are handed over first ([`Self::supply_justified_balances`], without
    /// the lock), then the block goes in with its votes (`votes`, [`Self::block_votes`]), and
    /// `under_lock` runs with it in (the execution verdict). Returns the block root; the
    /// post-state goes to the state cache.
    pub(crate) fn insert(
        &self,
        processed: &ProcessedBlock<E>,
        votes: &[(AttestationData, Vec<ValidatorIndex>)],
        under_lock: impl FnOnce(&mut ForkChoice<E>),
    ) -> Result<Root, ChainError> {
        let summary = &processed.summary;
        self.supply_justified_balances(&[
            summary.justified.clone(),
            summary.unrealized_justified.clone(),
        ]);
        let pins = {
            let mut chain_fc = self.fork_choice.lock();
            let fc = chain_fc.fulu_for_block(summary.root, types::ForkName::Fulu)?;
            let root = fc.insert_block(summary)?;
            under_lock(fc);
            for (data, indices) in votes {
                // Valid in the transition; one fork choice cannot use (a vote for a block it
                // pruned) is dropped, as the spec's store would drop it.
                let _ = fc.on_indexed_attestation(data, indices, true);
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

    /// `on_attester_slashing` for the attester slashings of an inserted block: each one's
    /// attestations valid in the justified checkpoint block's post-state (their signatures
    /// verified by the block's transition), the validators in both equivocating.
    pub(crate) fn apply_block_slashings(&self, message: &BeaconBlock<E>) {
        if message.body.attester_slashings.is_empty() {
            return;
        }
        let justified_root = self.fork_choice.lock().justified_checkpoint().root;
        let state = match self.block_state(&justified_root) {
            Ok(state) => state,
            Err(e) => {
                tracing::debug!(%justified_root, error = %e, "a block's attester slashings passed over: the justified state is not to be had");
                return;
            }
        };
        let Ok(view) = state.view() else {
            return;
        };
        let mut equivocating = Vec::new();
        for slashing in message.body.attester_slashings.iter() {
            let Ok(indices) = fork_choice::slashable_indices(slashing) else {
                continue;
            };
            let valid = [&slashing.attestation_1, &slashing.attestation_2]
                .into_iter()
                .all(|a| {
                    is_valid_indexed_attestation(&view, &state.caches, a, VerifySignatures::None)
                        .is_ok()
                });
            if valid {
                equivocating.extend(indices);
            }
        }
        if !equivocating.is_empty() {
            let _ = self
                .fork_choice
                .lock()
                .on_verified_attester_slashing(&equivocating);
        }
    }
}
