//! Gloas block production with the proposer's own payload (a self-build): the block carries a
//! bid for the payload, and the payload follows in an envelope once the block is signed.
//!
//! The steps of `gloas/validator.md`:
//! - the head's payload variant the block builds on: `should_build_on_full` (the FULL variant
//!   when the head's envelope was imported and, for a head of the previous slot, the PTC did
//!   not find its payload late or its data unavailable);
//! - on FULL, the parent payload's execution requests go into the block
//!   (`parent_execution_requests`) and are applied to a copy of the state first: the
//!   withdrawals of the new payload and the operations packed from the pool are those valid
//!   after them (a withdrawal request can make a voluntary exit invalid); on EMPTY, the
//!   withdrawals are the state's `payload_expected_withdrawals`;
//! - `engine_forkchoiceUpdatedV4` on the parent payload's hash with `PayloadAttributesV4`
//!   (slot number, target gas limit), `engine_getPayloadV6`;
//! - the self-build bid: `BUILDER_INDEX_SELF_BUILD`, value 0, the point at infinity as its
//!   signature, the payload's hash, gas limit and fee recipient, the blobs' commitments and
//!   the root of the payload's requests;
//! - the block through the Gloas `process_block` for its state root.
//!
//! The payload, its requests and blobs are kept by block root: once the validator client has
//! signed the block, [`BlockProducer::produce_execution_payload_envelope`] gives the envelope
//! it signs next (`DOMAIN_BEACON_BUILDER`, the proposer's key).
//!
//! Not yet here (issue 45): payload attestations in the block (the node keeps no pool of PTC
//! messages yet: the list is empty, which is valid) and bids from builders.
//!
//! [spec]: gloas/validator.md#block-and-sidecar-proposal

use std::sync::Arc;
use std::time::Instant;

use execution_layer::PayloadAttributesV4;
use fork_choice::{PayloadStatus, gloas::GloasHead};
use state_processing::{
    CachedBeaconState,
    common::balance,
    gloas::{
        fork::{upgrade_attestation_to_gloas, upgrade_attester_slashing_to_gloas},
        per_block::{apply_parent_execution_payload, process_block, withdrawals},
    },
    per_block::VerifySignatures,
};
use tree_hash::TreeHash;
use types::{
    BLSSignature, Bytes32, EthSpec, ForkName, Gwei, Root, Slot, U256,
    gloas::{
        BUILDER_INDEX_SELF_BUILD, BeaconBlock, BeaconBlockBody, ExecutionPayload,
        ExecutionPayloadBid, ExecutionPayloadEnvelope, ExecutionRequests,
        SignedExecutionPayloadBid,
    },
};

use super::{
    BlockProducer, BuiltBlobs, PayloadFieldMismatch, ProducedBlock, ProductionError,
    ProductionTimings, check_field, list,
};
use crate::chain::{BeaconChain, ChainError, HeadSnapshot};
use crate::execution::{ExecutionError, forkchoice_state_of};

/// `WEI_PER_GWEI`.
const WEI_PER_GWEI: u64 = 1_000_000_000;

/// The payload of a Gloas block built here, kept for its envelope.
#[derive(Debug)]
pub struct BuiltGloasPayload<E: EthSpec> {
    /// The block's slot.
    pub slot: Slot,
    /// The block's parent root (the envelope's `parent_beacon_block_root`).
    pub parent_root: Root,
    /// The execution client's payload.
    pub payload: ExecutionPayload<E>,
    /// The payload's requests (the bid committed to their root).
    pub execution_requests: ExecutionRequests,
}

impl<E: EthSpec> BuiltGloasPayload<E> {
    /// The envelope of this payload for block `block_root` (a self-build).
    pub fn envelope(&self, block_root: Root) -> ExecutionPayloadEnvelope<E> {
        ExecutionPayloadEnvelope {
            payload: self.payload.clone(),
            execution_requests: self.execution_requests.clone(),
            builder_index: BUILDER_INDEX_SELF_BUILD,
            beacon_block_root: block_root,
            parent_beacon_block_root: self.parent_root,
        }
    }
}

/// What a Gloas block builds on: the head, the variant of its payload, and what follows from
/// that choice.
struct GloasParent {
    /// `should_build_on_full(store, head, slot)`.
    full: bool,
    /// The requests of the head's payload, when building on it (empty otherwise, and for a
    /// parent before Gloas).
    parent_execution_requests: ExecutionRequests,
    /// The execution block the payload builds on.
    head_block_hash: types::Hash32,
}

impl<E: EthSpec> BeaconChain<E> {
    /// `should_build_on_full(store, head, slot)` for the chain's head block `root` of `slot`
    /// with its head variant `payload_status`. A head whose chain is still before Gloas has a
    /// payload inside its block: FULL.
    ///
    /// [spec]: gloas/fork-choice.md#new-should_build_on_full
    pub fn should_build_on_full(
        &self,
        root: Root,
        head_slot: Slot,
        payload_status: Option<PayloadStatus>,
        slot: Slot,
    ) -> Result<bool, ChainError> {
        let fc = self.fork_choice.lock();
        let Some(gloas) = fc.gloas_chain() else {
            return Ok(true);
        };
        let head = GloasHead {
            root,
            slot: head_slot,
            payload_status: payload_status.unwrap_or(PayloadStatus::Full),
        };
        gloas
            .store
            .should_build_on_full(&head, slot)
            .map_err(ChainError::from)
    }
}

impl<E: EthSpec> BlockProducer<E> {
    /// A self-built Gloas block at `slot` on the head (the Beacon API's block production at
    /// Gloas): see the module's documentation. The RANDAO reveal is checked unless
    /// `skip_randao_verification`; `graffiti` defaults to the configured one.
    ///
    /// [spec]: gloas/validator.md#constructing-the-beaconblockbody
    pub async fn produce_gloas_block(
        self: &Arc<Self>,
        slot: Slot,
        randao_reveal: BLSSignature,
        graffiti: Option<Bytes32>,
        skip_randao_verification: bool,
    ) -> Result<ProducedBlock<E>, ProductionError> {
        let started = Instant::now();
        let fork = self.chain.spec().fork_name_at_slot::<E>(slot);
        if fork != ForkName::Gloas {
            return Err(ProductionError::UnsupportedFork { slot, fork });
        }
        let (template, state) = self
            .on_workers(move |producer| {
                producer.block_template_for(
                    slot,
                    fork,
                    randao_reveal,
                    graffiti,
                    skip_randao_verification,
                )
            })
            .await?;
        let (parent, packing_state, withdrawals) = {
            let state = state.clone();
            let head = template.head.clone();
            self.on_workers(move |producer| producer.gloas_parent(&head, state, slot))
                .await?
        };

        // `prepare_execution_payload`: the build on the parent payload's hash.
        let payload_started = Instant::now();
        let parent_gas_limit = state
            .view()?
            .gloas()?
            .latest_execution_payload_bid
            .gas_limit;
        let gas_limit = if parent_gas_limit == 0 {
            self.config.target_gas_limit
        } else {
            parent_gas_limit
        };
        let attributes = PayloadAttributesV4 {
            timestamp: template.attributes.timestamp,
            prev_randao: template.attributes.prev_randao,
            suggested_fee_recipient: template.fee_recipient,
            withdrawals: withdrawals.iter().map(Into::into).collect(),
            parent_beacon_block_root: template.head.block_root,
            slot_number: slot,
            // The parent's gas limit (the configured target when the parent bid has none): the
            // limit stays where the chain has it.
            target_gas_limit: gas_limit,
        };
        let response = self
            .gloas_payload(&template.head, &parent, &attributes, &withdrawals)
            .await?;
        let payload_elapsed = payload_started.elapsed();

        let epoch = template.epoch;
        self.on_workers(move |producer| {
            let mut timings = template.timings;
            timings.payload = payload_elapsed;
            producer.gloas_block(
                GloasBlockParts {
                    template,
                    parent,
                    state,
                    packing_state,
                    response,
                    epoch,
                    started,
                },
                timings,
            )
        })
        .await
    }

    /// The envelope of the Gloas block `block_root` built here, for the proposer to sign
    /// (`DOMAIN_BEACON_BUILDER`): the payload, its requests, `BUILDER_INDEX_SELF_BUILD`. `None`
    /// for a block this node did not build (or built too long ago).
    ///
    /// [spec]: gloas/builder.md#constructing-the-signedexecutionpayloadenvelope
    pub fn produce_execution_payload_envelope(
        &self,
        block_root: &Root,
    ) -> Option<ExecutionPayloadEnvelope<E>> {
        self.built_gloas_payload(block_root)
            .map(|built| built.envelope(*block_root))
    }

    /// The payload kept for the envelope of block `block_root`, when built here.
    pub fn built_gloas_payload(&self, block_root: &Root) -> Option<Arc<BuiltGloasPayload<E>>> {
        self.gloas_payloads
            .lock()
            .iter()
            .find(|(root, _)| root == block_root)
            .map(|(_, built)| built.clone())
    }

    /// The head's payload variant the block builds on, its consequences (see [`GloasParent`]),
    /// the state the operations are packed on (the parent payload applied on FULL) and the
    /// withdrawals the new payload must carry.
    fn gloas_parent(
        &self,
        head: &HeadSnapshot<E>,
        state: CachedBeaconState<E>,
        slot: Slot,
    ) -> Result<
        (
            GloasParent,
            CachedBeaconState<E>,
            Vec<types::electra::Withdrawal>,
        ),
        ProductionError,
    > {
        let chain = &self.chain;
        let slots = |e: ChainError| ProductionError::Slots {
            slot,
            source: Box::new(e),
        };
        let parent_fork = chain.spec().fork_name_at_slot::<E>(head.slot);
        let parent_bid = state.view()?.gloas()?.latest_execution_payload_bid.clone();
        let full = chain
            .should_build_on_full(head.block_root, head.slot, head.payload_status, slot)
            .map_err(slots)?;
        if parent_fork != ForkName::Gloas {
            // The first Gloas block: its parent's payload was inside the parent, and the
            // upgrade made the latest bid's hash that payload's.
            let withdrawals = state.view()?.gloas()?.payload_expected_withdrawals.to_vec();
            return Ok((
                GloasParent {
                    full: true,
                    parent_execution_requests: ExecutionRequests::default(),
                    head_block_hash: parent_bid.block_hash,
                },
                state,
                withdrawals,
            ));
        }
        if !full {
            let withdrawals = state.view()?.gloas()?.payload_expected_withdrawals.to_vec();
            return Ok((
                GloasParent {
                    full: false,
                    parent_execution_requests: ExecutionRequests::default(),
                    head_block_hash: parent_bid.parent_block_hash,
                },
                state,
                withdrawals,
            ));
        }
        let envelope = chain
            .store()
            .get_execution_payload_envelope(&head.block_root)
            .map_err(|e| slots(ChainError::Store(e)))?
            .ok_or(ProductionError::NoParentEnvelope(head.block_root))?;
        let requests = envelope.message.execution_requests;
        let mut applied = state;
        {
            let (mut view, caches) = applied.view_mut()?;
            apply_parent_execution_payload(&mut view, caches, &requests, chain.spec())
                .map_err(ProductionError::ParentPayload)?;
        }
        let withdrawals = withdrawals::get_expected_withdrawals(&applied.view()?)?.withdrawals;
        Ok((
            GloasParent {
                full: true,
                parent_execution_requests: requests,
                head_block_hash: parent_bid.block_hash,
            },
            applied,
            withdrawals,
        ))
    }

    /// `engine_forkchoiceUpdatedV4` on the parent payload's hash with `attributes`, then
    /// `engine_getPayloadV6`; the payload's fields checked against what the attributes and the
    /// parent fix.
    async fn gloas_payload(
        &self,
        head: &HeadSnapshot<E>,
        parent: &GloasParent,
        attributes: &PayloadAttributesV4,
        withdrawals: &[types::electra::Withdrawal],
    ) -> Result<execution_layer::GetPayloadV6Response<E>, ProductionError> {
        let mut forkchoice = forkchoice_state_of(&self.chain, head)?;
        forkchoice.head_block_hash = parent.head_block_hash;
        let updated = self
            .engine
            .forkchoice_updated_v4(forkchoice, Some(attributes), None)
            .await
            .map_err(ExecutionError::from)?;
        let payload_id = updated
            .payload_id
            .ok_or(ProductionError::NoPayloadId(updated.payload_status))?;
        let response = self
            .engine
            .get_payload_v6::<E>(payload_id)
            .await
            .map_err(ExecutionError::from)?;
        let payload = &response.execution_payload;
        check_field(
            parent.head_block_hash,
            payload.parent_hash,
            |expected, found| PayloadFieldMismatch::ParentHash { expected, found },
        )?;
        check_field(
            attributes.timestamp,
            payload.timestamp,
            |expected, found| PayloadFieldMismatch::Timestamp { expected, found },
        )?;
        check_field(
            attributes.prev_randao,
            payload.prev_randao,
            |expected, found| PayloadFieldMismatch::PrevRandao { expected, found },
        )?;
        check_field(
            attributes.slot_number,
            payload.slot_number,
            |expected, found| PayloadFieldMismatch::SlotNumber { expected, found },
        )?;
        if !payload.withdrawals.iter().eq(withdrawals.iter()) {
            return Err(ProductionError::PayloadMismatch(
                PayloadFieldMismatch::Withdrawals {
                    expected: withdrawals.len(),
                    found: payload.withdrawals.len(),
                },
            ));
        }
        let bundle = &response.blobs_bundle;
        execution_layer::verify_blobs_bundle_shape::<E>(bundle).map_err(|_| {
            ProductionError::BlobsBundle {
                blobs: bundle.blobs.len(),
                commitments: bundle.commitments.len(),
                proofs: bundle.proofs.len(),
            }
        })?;
        Ok(response)
    }

    /// The block: the operations packed on `packing_state`, the bid, the transition of `state`
    /// for the state root; the payload and blobs kept for the envelope and the columns.
    fn gloas_block(
        &self,
        parts: GloasBlockParts<E>,
        mut timings: ProductionTimings,
    ) -> Result<ProducedBlock<E>, ProductionError> {
        let GloasBlockParts {
            template,
            parent,
            mut state,
            mut packing_state,
            response,
            epoch,
            started,
        } = parts;
        let slot = template.slot;
        let max = self
            .chain
            .spec()
            .get_blob_parameters(epoch)
            .max_blobs_per_block;
        let count = response.blobs_bundle.commitments.len();
        if count as u64 > max {
            return Err(ProductionError::TooManyBlobs { count, max });
        }

        let pack_started = Instant::now();
        let operations = self
            .pool
            .get_block_operations(&mut packing_state, self.chain.spec())?;
        // The PTC's votes on the parent, which `process_payload_attestation` takes only from
        // the slot right before the block's.
        let payload_attestations = if template.head.slot.saturating_add(1) == slot {
            self.pool
                .get_payload_attestations(template.head.block_root, template.head.slot)?
        } else {
            Vec::new()
        };
        timings.pack = pack_started.elapsed();
        drop(packing_state);

        let payload = response.execution_payload;
        let execution_requests = response.execution_requests;
        let bundle = response.blobs_bundle;
        let prev_randao = template.attributes.prev_randao;
        let bid = ExecutionPayloadBid {
            parent_block_hash: parent.head_block_hash,
            parent_block_root: template.head.block_root,
            block_hash: payload.block_hash,
            prev_randao,
            fee_recipient: payload.fee_recipient,
            gas_limit: payload.gas_limit,
            builder_index: BUILDER_INDEX_SELF_BUILD,
            slot,
            value: 0,
            execution_payment: 0,
            blob_kzg_commitments: bundle.commitments.iter().cloned().collect(),
            execution_requests_root: execution_requests.tree_hash_root(),
        };
        let ops = operations.operations;
        let attester_slashings = ops
            .attester_slashings
            .into_iter()
            .map(upgrade_attester_slashing_to_gloas)
            .collect::<Vec<_>>();
        let attestations = operations
            .attestations
            .into_iter()
            .map(upgrade_attestation_to_gloas)
            .collect::<Vec<_>>();
        let body = BeaconBlockBody {
            randao_reveal: template.randao_reveal,
            eth1_data: template.eth1_data.clone(),
            graffiti: template.graffiti,
            proposer_slashings: ops.proposer_slashings.into_iter().collect(),
            attester_slashings: attester_slashings.into_iter().collect(),
            attestations: attestations.into_iter().collect(),
            deposits: Default::default(),
            voluntary_exits: ops.voluntary_exits.into_iter().collect(),
            sync_aggregate: operations.sync_aggregate,
            bls_to_execution_changes: ops.bls_to_execution_changes.into_iter().collect(),
            signed_execution_payload_bid: SignedExecutionPayloadBid {
                message: bid,
                signature: BLSSignature::from(bls::Signature::INFINITY_BYTES),
            },
            payload_attestations: payload_attestations.into_iter().collect(),
            parent_execution_requests: parent.parent_execution_requests,
        };
        let mut message = BeaconBlock {
            slot,
            proposer_index: template.proposer_index,
            parent_root: template.head.block_root,
            state_root: Root::ZERO,
            body,
        };

        let transition_started = Instant::now();
        let reward = gloas_transition(&mut state, &message, self.chain.spec())?;
        timings.transition = transition_started.elapsed();
        let root_started = Instant::now();
        let state_root = state.hash_tree_root()?;
        timings.state_root = root_started.elapsed();
        message.state_root = state_root;
        let block_root = message.tree_hash_root();
        tracing::debug!(%block_root, slot, full_parent = parent.full, "Gloas block produced");

        let commitments = list("blob KZG commitments", bundle.commitments)?;
        let blobs = list("blobs", bundle.blobs)?;
        if self.built_blobs(&block_root).is_none() {
            let built = Arc::new(BuiltBlobs::new(
                commitments,
                bundle.proofs.clone(),
                Clone::clone(&blobs),
            ));
            {
                let mut cache = self.built.lock();
                cache.push_back((block_root, built.clone()));
                while cache.len() > self.config.built_blobs_cache.max(1) {
                    cache.pop_front();
                }
            }
            if !built.blobs.is_empty() {
                // The cells the envelope's columns need, while the validator client signs (a
                // failure is found again, and reported, by the envelope's publication).
                let pool = self.chain.pool().clone();
                self.chain.pool().spawn(move || built.precompute(&pool));
            }
        }
        {
            let mut cache = self.gloas_payloads.lock();
            if !cache.iter().any(|(root, _)| *root == block_root) {
                cache.push_back((
                    block_root,
                    Arc::new(BuiltGloasPayload {
                        slot,
                        parent_root: template.head.block_root,
                        payload,
                        execution_requests,
                    }),
                ));
                while cache.len() > self.config.built_blobs_cache.max(1) {
                    cache.pop_front();
                }
            }
        }
        let produced = ProducedBlock {
            block: types::BeaconBlock::Gloas(message),
            kzg_proofs: bundle.proofs,
            blobs,
            execution_payload_value: response.block_value,
            consensus_block_value: U256::from(reward) * U256::from(WEI_PER_GWEI),
            fork: ForkName::Gloas,
            slot,
            proposer_index: template.proposer_index,
            block_root,
            state_root,
            payload_id: Default::default(),
            should_override_builder: response.should_override_builder,
            timings: ProductionTimings {
                total: started.elapsed(),
                ..timings
            },
        };
        self.observe(&produced.timings);
        Ok(produced)
    }
}

/// What [`BlockProducer::gloas_block`] assembles the block from.
struct GloasBlockParts<E: EthSpec> {
    template: super::BlockTemplate<E>,
    parent: GloasParent,
    state: CachedBeaconState<E>,
    packing_state: CachedBeaconState<E>,
    response: execution_layer::GetPayloadV6Response<E>,
    epoch: types::Epoch,
    started: Instant,
}

/// The Gloas `process_block` of `message` on `state` without signature checks (the reveal was
/// checked, the operations were verified on their way into the pool, the bid is the node's own);
/// the proposer's reward in gwei (its balance change, its withdrawals added back).
fn gloas_transition<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    message: &BeaconBlock<E>,
    spec: &types::ChainSpec,
) -> Result<Gwei, ProductionError> {
    let proposer = message.proposer_index;
    let before = balance(&state.view()?, proposer)?;
    {
        let (mut view, caches) = state.view_mut()?;
        process_block(&mut view, caches, message, VerifySignatures::None, spec)
            .map_err(ProductionError::BlockProcessing)?;
    }
    let after = balance(&state.view()?, proposer)?;
    Ok(after.saturating_sub(before))
}
