//! `state_transition(state, signed_block, validate_result)`: the slots up to the block, the
//! proposer's signature, the block, and the post-state root.
//!
//! The work is done on a clone of the caller's state (cheap: the state's trees and the caches
//! are shared until written) and committed only when everything succeeded, so a refused block
//! leaves the caller's state exactly as it was.
//!
//! [spec]: phase0/beacon-chain.md#beacon-chain-state-transition-function

use tree_hash::TreeHash;
use types::{ChainSpec, EthSpec, ForkName, SignedBeaconBlock, deneb, electra, gloas};

use crate::{
    CachedBeaconState, Error,
    per_block::{
        BlockProcessingError, BlockSignatureVerifier, ExecutionEngine, VerifySignatures,
        process_block_with_body_root, signature_sets,
    },
    per_slot::process_slots,
};

/// `state_transition(state, signed_block, validate_result)`.
///
/// `verify` decides how signatures are checked, the proposer's signature over the block
/// included (the spec's `verify_block_signature`); `validate_result` whether the block's
/// `state_root` must be the post-state's root. On success `state` is the post-state; on error it
/// is unchanged.
///
/// [spec]: phase0/beacon-chain.md#beacon-chain-state-transition-function
pub fn state_transition<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    block: &SignedBeaconBlock<E>,
    verify: VerifySignatures,
    validate_result: bool,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    transition_on_copy(
        state,
        block,
        Options {
            pre_state: PreState::BeforeBlockSlot,
            verify,
            validate_result,
            gather: false,
        },
        engine,
        spec,
    )
}

/// `state_transition` on a pre-state that may already be at the block's slot: the parent's
/// post-state advanced through the empty slots ahead of the block (a node advances its head
/// state before the next slot starts, so that the epoch transition and the slots' hashing are
/// not paid when the block arrives). A state before the block's slot is advanced as
/// `state_transition` does; one at the block's slot is taken as it is.
///
/// Nothing is lost in checks: `process_block_header` still requires the block's slot to be the
/// state's and after the latest block header's, and the block's parent root to be that
/// header's root, so a block on any other parent, or a state that already holds a block at the
/// slot, is refused. On error `state` is unchanged.
pub fn state_transition_from_advanced<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    block: &SignedBeaconBlock<E>,
    verify: VerifySignatures,
    validate_result: bool,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    transition_on_copy(
        state,
        block,
        Options {
            pre_state: PreState::AtOrBeforeBlockSlot,
            verify,
            validate_result,
            gather: false,
        },
        engine,
        spec,
    )
}

/// `state_transition` (or, with `pre_state_advanced`, [`state_transition_from_advanced`]) with
/// the block's signature sets gathered, not verified: the caller verifies them, with those of
/// other blocks (a range-sync segment's blocks in one batch), and must not keep the post-state
/// when they fail. The proposer's signature over the block is among them.
///
/// Signatures are gathered only for Electra and later blocks; a Deneb block's are verified one
/// by one where the spec checks them, and its verifier comes back empty. On error `state` is
/// unchanged.
pub fn state_transition_gathering_signatures<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    block: &SignedBeaconBlock<E>,
    pre_state_advanced: bool,
    validate_result: bool,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<BlockSignatureVerifier, BlockProcessingError> {
    let mut working = state.clone();
    let gathered = apply_block(
        &mut working,
        block,
        Options {
            pre_state: if pre_state_advanced {
                PreState::AtOrBeforeBlockSlot
            } else {
                PreState::BeforeBlockSlot
            },
            verify: VerifySignatures::Batched,
            validate_result,
            gather: true,
        },
        engine,
        spec,
    )?;
    *state = working;
    Ok(gathered.unwrap_or_default())
}

/// How a transition runs: where its pre-state may stand, how signatures are checked, whether
/// the post-state root is checked, and whether a batch of signatures is handed back to the
/// caller (`gather`) rather than verified.
#[derive(Debug, Clone, Copy)]
struct Options {
    pre_state: PreState,
    verify: VerifySignatures,
    validate_result: bool,
    gather: bool,
}

/// The transition on a copy of `state`, committed to `state` only when it succeeds.
fn transition_on_copy<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    block: &SignedBeaconBlock<E>,
    options: Options,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let mut working = state.clone();
    apply_block(&mut working, block, options, engine, spec)?;
    *state = working;
    Ok(())
}

/// Where the pre-state may stand relative to the block's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PreState {
    /// Before it (the spec's `process_slots` asserts it).
    BeforeBlockSlot,
    /// Before it, or at it when advanced there already.
    AtOrBeforeBlockSlot,
}

/// The spec's slot check of `state_transition` (`process_slots` asserts `state.slot < slot`),
/// relaxed to `<=` for a pre-state advanced ahead, and the slots run up to the block.
fn advance_to_block_slot<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    block_slot: types::Slot,
    pre_state: PreState,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let state_slot = *state.state.slot();
    let advanced_already = pre_state == PreState::AtOrBeforeBlockSlot && block_slot == state_slot;
    if block_slot <= state_slot && !advanced_already {
        return Err(BlockProcessingError::SlotNotAfterState {
            block: block_slot,
            state: state_slot,
        });
    }
    if block_slot > state_slot {
        process_slots(state, block_slot, spec).map_err(BlockProcessingError::Slots)?;
    }
    Ok(())
}

/// The transition itself, writing into `state` as it goes. With `options.gather`, the batch of
/// signature sets is returned unverified (`None` when there is none: Deneb, or no batching).
fn apply_block<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    block: &SignedBeaconBlock<E>,
    options: Options,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<Option<BlockSignatureVerifier>, BlockProcessingError> {
    let fork = block.fork_name();
    match block {
        SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => {
            apply_message(state, fork, &b.message, &b.signature, options, engine, spec)
        }
        SignedBeaconBlock::Deneb(b) => {
            apply_deneb_block(state, b, options, engine, spec).map(|()| None)
        }
        SignedBeaconBlock::Gloas(b) => {
            apply_message(state, fork, &b.message, &b.signature, options, engine, spec)
        }
        other @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)) => Err(Error::UnsupportedFork(other.fork_name()).into()),
    }
}

/// What the transition needs of a block message, whatever its fork: its header fields, its
/// body's signature sets and its processing. Electra's message serves Electra and Fulu blocks.
trait BlockMessage<E: EthSpec> {
    fn slot(&self) -> types::Slot;
    fn proposer_index(&self) -> types::ValidatorIndex;
    fn state_root(&self) -> types::Root;
    fn parent_root(&self) -> types::Root;
    fn body_root(&self) -> types::Root;
    /// The body's signature sets, into `verifier`.
    fn include_body(
        &self,
        verifier: &mut BlockSignatureVerifier,
        state: &crate::StateRef<'_, E>,
        caches: &mut crate::Caches,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError>;
    /// `process_block`, the body's root given.
    fn process(
        &self,
        state: &mut crate::StateMut<'_, E>,
        caches: &mut crate::Caches,
        body_root: types::Root,
        verify: VerifySignatures,
        engine: &impl ExecutionEngine<E>,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError>;
}

impl<E: EthSpec> BlockMessage<E> for electra::BeaconBlock<E> {
    fn slot(&self) -> types::Slot {
        self.slot
    }
    fn proposer_index(&self) -> types::ValidatorIndex {
        self.proposer_index
    }
    fn state_root(&self) -> types::Root {
        self.state_root
    }
    fn parent_root(&self) -> types::Root {
        self.parent_root
    }
    fn body_root(&self) -> types::Root {
        self.body.tree_hash_root()
    }
    fn include_body(
        &self,
        verifier: &mut BlockSignatureVerifier,
        state: &crate::StateRef<'_, E>,
        caches: &mut crate::Caches,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError> {
        verifier.include_body(state, caches, self, spec)
    }
    fn process(
        &self,
        state: &mut crate::StateMut<'_, E>,
        caches: &mut crate::Caches,
        body_root: types::Root,
        verify: VerifySignatures,
        engine: &impl ExecutionEngine<E>,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError> {
        process_block_with_body_root(state, caches, self, body_root, verify, engine, spec)
    }
}

/// A Gloas block: it executes no payload (its bid commits to one, which an envelope delivers
/// and fork choice verifies), so the execution engine is not asked here.
impl<E: EthSpec> BlockMessage<E> for gloas::BeaconBlock<E> {
    fn slot(&self) -> types::Slot {
        self.slot
    }
    fn proposer_index(&self) -> types::ValidatorIndex {
        self.proposer_index
    }
    fn state_root(&self) -> types::Root {
        self.state_root
    }
    fn parent_root(&self) -> types::Root {
        self.parent_root
    }
    fn body_root(&self) -> types::Root {
        self.body.tree_hash_root()
    }
    fn include_body(
        &self,
        verifier: &mut BlockSignatureVerifier,
        state: &crate::StateRef<'_, E>,
        caches: &mut crate::Caches,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError> {
        verifier.include_gloas_body(state, caches, self, spec)
    }
    fn process(
        &self,
        state: &mut crate::StateMut<'_, E>,
        caches: &mut crate::Caches,
        body_root: types::Root,
        verify: VerifySignatures,
        _engine: &impl ExecutionEngine<E>,
        spec: &ChainSpec,
    ) -> Result<(), BlockProcessingError> {
        crate::gloas::per_block::process_block_with_body_root(
            state, caches, self, body_root, verify, spec,
        )
    }
}

/// The transition of one block message and its proposer's signature.
fn apply_message<E: EthSpec, M: BlockMessage<E>>(
    state: &mut CachedBeaconState<E>,
    block_fork: ForkName,
    message: &M,
    signature: &types::BLSSignature,
    options: Options,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<Option<BlockSignatureVerifier>, BlockProcessingError> {
    let Options {
        pre_state,
        verify,
        validate_result,
        gather,
    } = options;
    advance_to_block_slot(state, message.slot(), pre_state, spec)?;
    if block_fork != state.state.fork_name() {
        return Err(BlockProcessingError::ForkMismatch {
            block: block_fork,
            state: state.state.fork_name(),
        });
    }

    let body_root = message.body_root();
    let header_root = electra::BeaconBlockHeader {
        slot: message.slot(),
        proposer_index: message.proposer_index(),
        parent_root: message.parent_root(),
        state_root: message.state_root(),
        body_root,
    }
    .tree_hash_root();
    let (verify, batch) = {
        let (view, caches) = state.view_mut()?;
        match verify {
            VerifySignatures::None => (VerifySignatures::None, None),
            VerifySignatures::Individually => {
                verify_proposer_signature(
                    &view.as_ref(),
                    caches,
                    message.proposer_index(),
                    header_root,
                    signature,
                )?;
                (VerifySignatures::Individually, None)
            }
            VerifySignatures::Batched => {
                let mut verifier = BlockSignatureVerifier::new();
                verifier.include_block_proposal(
                    &view.as_ref(),
                    caches,
                    message.proposer_index(),
                    header_root,
                    signature,
                )?;
                message.include_body(&mut verifier, &view.as_ref(), caches, spec)?;
                (VerifySignatures::None, Some(verifier))
            }
        }
    };
    if gather {
        process_and_check_root(
            state,
            message,
            body_root,
            verify,
            validate_result,
            engine,
            spec,
        )?;
        return Ok(batch);
    }
    let Some(batch) = batch else {
        process_and_check_root(
            state,
            message,
            body_root,
            verify,
            validate_result,
            engine,
            spec,
        )?;
        return Ok(None);
    };
    // The batch holds its keys and messages: it needs nothing of the state any more, and is
    // verified beside the transition and the state root, on the caller's pool (one after the
    // other off a pool: no thread of its own). A bad signature is the block's error even when
    // the transition also failed.
    let (processed, verified) = crate::parallel::SECTIONS.beside(
        || {
            process_and_check_root(
                state,
                message,
                body_root,
                verify,
                validate_result,
                engine,
                spec,
            )
        },
        || batch.verify(),
    );
    verified?;
    processed.map(|()| None)
}

/// The proposer's signature over the block header of root `header_root`, verified alone.
fn verify_proposer_signature<E: EthSpec>(
    view: &crate::StateRef<'_, E>,
    caches: &crate::caches::Caches,
    proposer_index: types::ValidatorIndex,
    header_root: types::Root,
    signature: &types::BLSSignature,
) -> Result<(), BlockProcessingError> {
    let set = signature_sets::block_proposal_signature_set(
        view,
        caches,
        proposer_index,
        header_root,
        signature,
    );
    let valid = match set {
        Ok(set) => set.verify(),
        Err(signature_sets::SignatureSetError::Malformed) => false,
        Err(signature_sets::SignatureSetError::State(e)) => return Err(e.into()),
    };
    if valid {
        Ok(())
    } else {
        Err(BlockProcessingError::ProposerSignature)
    }
}

/// `process_block` on a state at the block's slot, then (with `validate_result`) the check of
/// the block's state root.
fn process_and_check_root<E: EthSpec, M: BlockMessage<E>>(
    state: &mut CachedBeaconState<E>,
    message: &M,
    body_root: types::Root,
    verify: VerifySignatures,
    validate_result: bool,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let (mut view, caches) = state.view_mut()?;
    message.process(&mut view, caches, body_root, verify, engine, spec)?;
    if validate_result {
        let computed = state.hash_tree_root()?;
        if message.state_root() != computed {
            return Err(BlockProcessingError::StateRoot {
                block: message.state_root(),
                computed,
            });
        }
    }
    Ok(())
}

fn apply_deneb_block<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    signed: &deneb::SignedBeaconBlock<E>,
    options: Options,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), BlockProcessingError> {
    let Options {
        pre_state,
        verify,
        validate_result,
        gather: _,
    } = options;
    let message = &signed.message;
    advance_to_block_slot(state, message.slot, pre_state, spec)?;
    if state.state.fork_name() != types::ForkName::Deneb {
        return Err(BlockProcessingError::ForkMismatch {
            block: types::ForkName::Deneb,
            state: state.state.fork_name(),
        });
    }
    let (mut view, caches) = state.view_mut()?;
    if verify.is_enabled() {
        let header_root = types::electra::BeaconBlockHeader {
            slot: message.slot,
            proposer_index: message.proposer_index,
            parent_root: message.parent_root,
            state_root: message.state_root,
            body_root: message.body.tree_hash_root(),
        }
        .tree_hash_root();
        verify_proposer_signature(
            &view.as_ref(),
            caches,
            message.proposer_index,
            header_root,
            &signed.signature,
        )?;
    }
    crate::deneb::process_block(&mut view, caches, message, verify, engine, spec)?;
    if validate_result {
        let computed = state.hash_tree_root()?;
        if message.state_root != computed {
            return Err(BlockProcessingError::StateRoot {
                block: message.state_root,
                computed,
            });
        }
    }
    Ok(())
}
