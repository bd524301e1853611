//! Block production and publication with a builder (a relay or mev-boost, ethereum/builder-specs).
//!
//! [`BlockProducer::produce_block_v3_with_builder`] asks the relay for a header (`getHeader`,
//! with its short timeout) while the local block is built, checks the bid
//! ([`builder_client::verify_builder_bid`]: the builder's signature, the header against the
//! state, the gas limit against the proposer's registration, the blob commitments within the
//! slot's limit), and chooses by value and `builder_boost_factor`
//! ([`builder_client::select_payload`]). Any builder failure (no relay, no registration, 204,
//! an error status, a timeout, an invalid bid, a lower value) yields the local block, with the
//! reason in [`BuilderOutcome`]; the other way round, when the local execution client fails
//! (an error, a timeout, a payload that fails its checks) a verified bid makes the block, as it
//! does in other clients (the boost factor has no local value to weigh it against; factor 0
//! asks no builder). Each call and bid is counted ([`super::builder_metrics`]).
//!
//! The blinded block has the operations packed for the slot's state (the same ones a local
//! block would carry) with the bid's header, commitments and execution requests. Its post-state comes from the state
//! transition of that body with a stand-in payload (the header's fields, the expected
//! withdrawals, no transactions), after which the two state fields a payload's transactions
//! reach are set to what the blinded block gives them: `latest_execution_payload_header` (the
//! bid's header) and `latest_block_header.body_root` (the blinded body's root, which is the
//! full body's). Nothing else in the transition reads the transactions.
//!
//! [`BlockProducer::publish_blinded_block`] checks the proposer's signature, then unblinds through
//! the relay: `submitBlindedBlock` (v1) reveals the payload and blobs, and the block is
//! published and imported like any `publishBlockV2` block (its columns' KZG proofs verified:
//! the blobs are the builder's); `submitBlindedBlockV2` (Fulu) has the relay publish, and the
//! block reaches this node by gossip (a relay without v2, answering 404 or 405, is asked with
//! v1).
//!
//! [spec]: builder-specs specs/bellatrix/validator.md, beacon-APIs apis/validator/block.v3.yaml

use std::sync::Arc;
use std::time::Instant;

use builder_client::{
    BidError, BidExpectations, BlindedBeaconBlock, BlindedBeaconBlockBody, BuilderBid,
    BuilderError, BuilderHttpClient, PayloadChoice, SignedBlindedBeaconBlock,
    SignedValidatorRegistrationV1, SubmitVersion, UnblindError, builder_domain, select_payload,
    verify_builder_bid, withdrawals_root,
};
use operation_pool::BlockOperations;
use state_processing::{
    CachedBeaconState, StateRef,
    common::{get_current_epoch, is_active_validator},
};
use tree_hash::TreeHash;
use types::{
    BLSPubkey, BLSSignature, Bytes32, EthSpec, ForkName, Root, SignedBeaconBlock, Slot, U256,
    ValidatorIndex, electra::ExecutionPayload, signing, typenum::Unsigned,
};

use super::builder_metrics::{
    BidOutcome, SubmitOutcome, bid_error_reason, count_bid, count_submit, observe_get_header,
    observe_submit,
};
use super::{BlockProducer, BlockTemplate, ProducedBlock, ProductionError, WEI_PER_GWEI};
use crate::gossip::{domain_at, head_pubkey, verify_one};
use crate::internal_error::InternalError;
use crate::publication::{BlockBroadcaster, BroadcastValidation, PublishError, PublishedBlock};

/// The relay a producer asks for headers, and how it unblinds.
#[derive(Debug, Clone)]
pub struct BuilderOptions {
    /// The relay's client (its URL, timeouts, encoding).
    pub client: Arc<BuilderHttpClient>,
    /// How blinded blocks are unblinded.
    pub submit: SubmitVersion,
}

/// A blinded block built on a builder's bid, with what the v3 response carries.
#[derive(Debug, Clone)]
pub struct ProducedBlindedBlock<E: EthSpec> {
    /// The unsigned blinded block (its state root set).
    pub block: BlindedBeaconBlock<E>,
    /// The bid's value in wei (the v3 `execution_payload_value`).
    pub execution_payload_value: U256,
    /// Wei the proposer earns from the block's consensus content.
    pub consensus_block_value: U256,
    /// The fork of the block.
    pub fork: ForkName,
    /// The block's slot.
    pub slot: Slot,
    /// The block's proposer.
    pub proposer_index: ValidatorIndex,
    /// The block's root (the full block's).
    pub block_root: Root,
    /// The local payload's value, which the bid beat (`None`: the execution client gave no
    /// usable payload, and the bid made the block).
    pub local_payload_value: Option<U256>,
    /// Why the execution client gave no usable payload, when it did not.
    pub local_payload_error: Option<String>,
}

/// Why a block carries the local payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuilderOutcome {
    /// No relay configured.
    NoBuilder,
    /// `builder_boost_factor` 0: the builder was not asked.
    LocalRequested,
    /// The proposer sent no registration.
    NotRegistered,
    /// The relay had no bid (204).
    NoBid,
    /// The relay failed (transport, status, timeout, decoding: a [`BuilderError`]), or could
    /// not be asked (a [`BidRequestError`]).
    Failed(InternalError),
    /// The bid did not pass its checks.
    InvalidBid(BidError),
    /// The blinded block could not be built on the bid (a [`ProductionError`]).
    BlindedBlockFailed(InternalError),
    /// The local payload was worth as much as the boosted bid (or its execution client asked
    /// for it).
    LocalChosen {
        /// The bid's value.
        builder_value: U256,
    },
}

/// Why the relay could not be asked for a bid for a block (a cause of
/// [`BuilderOutcome::Failed`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BidRequestError {
    /// The head state has no key for the slot's proposer.
    #[error("no key for proposer {0}")]
    NoProposerKey(ValidatorIndex),
    /// The state's expected withdrawals are more than a payload holds (no withdrawals root).
    #[error("{0} expected withdrawals, more than a payload holds")]
    TooManyWithdrawals(usize),
    /// A state helper failed.
    #[error("state: {0}")]
    State(#[from] state_processing::Error),
}

/// What `produceBlockV3` built: a full block (with why the builder was not used) or a
/// blinded one.
#[derive(Debug, Clone)]
pub enum ProducedBlockV3<E: EthSpec> {
    /// The local payload's block.
    Full {
        /// The block.
        block: ProducedBlock<E>,
        /// Why not a builder's.
        outcome: BuilderOutcome,
    },
    /// A blinded block on the builder's bid.
    Blinded(ProducedBlindedBlock<E>),
}

/// Why a blinded block was not published.
#[derive(Debug, thiserror::Error)]
pub enum BlindedPublishError {
    /// No relay is configured to unblind it.
    #[error("no builder is configured to unblind the block")]
    NoBuilder,
    /// Only Electra-layout blocks are produced and published here.
    #[error("a {0} blinded block cannot be published here")]
    UnsupportedFork(ForkName),
    /// The proposer's signature does not verify (nothing was sent to the relay).
    #[error("the blinded block's proposer signature does not verify")]
    InvalidSignature,
    /// The relay refused or failed.
    #[error("builder: {0}")]
    Builder(#[from] BuilderError),
    /// What the relay revealed does not complete the block.
    #[error("unblinding: {0}")]
    Unblind(#[from] UnblindError),
    /// The unblinded block was not published.
    #[error(transparent)]
    Publish(#[from] PublishError),
}

/// What became of a published blinded block.
#[derive(Debug, Clone)]
pub enum BlindedPublication<E: EthSpec> {
    /// Unblinded (v1), then published and imported here.
    Published(PublishedBlock<E>),
    /// The relay publishes it (v2); it arrives here by gossip.
    PublishedByRelay {
        /// The block's root.
        block_root: Root,
    },
}

impl<E: EthSpec> BlockProducer<E> {
    /// The relay, when one is configured.
    pub fn builder(&self) -> Option<&BuilderOptions> {
        self.config.builder.as_ref()
    }

    /// `registerValidator`: keeps each validator's latest registration (a newer timestamp
    /// replaces an older one) for production to know who registered and with which gas limit,
    /// and forwards them to the relay when one is configured. Only registrations of validators
    /// the head state has active or pending (`is_eligible_for_registration`), and not older
    /// than the one kept, are kept and forwarded: a relay refuses a batch naming any other.
    /// Returns how many were.
    ///
    /// [spec]: builder-specs specs/bellatrix/builder.md#is_eligible_for_registration
    pub async fn register_validators(
        &self,
        registrations: &[SignedValidatorRegistrationV1],
    ) -> Result<usize, BuilderError> {
        let eligible = self.eligible_for_registration(registrations);
        let registrations: Vec<_> = {
            let mut kept = self.builder_registrations.write();
            eligible
                .into_iter()
                .filter(|r| {
                    // An older registration than the one kept would be refused by the relay.
                    let newer = kept
                        .get(&r.message.pubkey)
                        .is_none_or(|old| old.timestamp <= r.message.timestamp);
                    if newer {
                        kept.insert(r.message.pubkey, r.message.clone());
                    }
                    newer
                })
                .collect()
        };
        match self.builder() {
            Some(builder) if !registrations.is_empty() => {
                builder.client.register_validator(&registrations).await?;
            }
            _ => {}
        }
        Ok(registrations.len())
    }

    /// The registrations whose validator is active or pending in the head state.
    fn eligible_for_registration(
        &self,
        registrations: &[SignedValidatorRegistrationV1],
    ) -> Vec<SignedValidatorRegistrationV1> {
        let mut state = self.chain.head().state.clone();
        let CachedBeaconState { state, caches } = &mut state;
        let Ok(view) = StateRef::new(state) else {
            return Vec::new();
        };
        let epoch = get_current_epoch(&view);
        registrations
            .iter()
            .filter(|r| {
                caches
                    .validator_index(&view, &bls::PublicKeyBytes(r.message.pubkey.0))
                    .and_then(|index| view.validators.get(index as usize))
                    .is_some_and(|v| is_active_validator(v, epoch) || v.activation_epoch > epoch)
            })
            .cloned()
            .collect()
    }

    /// `produceBlockV3` with the builder: the local block, or a blinded block on the relay's
    /// bid when it is valid and worth more (see the module's documentation). The relay is
    /// asked while the execution client builds and the pool packs; when the execution client
    /// gives no usable payload (an error, a timeout, a payload that fails its checks) a
    /// verified bid makes the block, at any `builder_boost_factor` but 0 (which asks no
    /// builder). Fails when neither gives a payload, with the execution client's error.
    pub async fn produce_block_v3_with_builder(
        self: &Arc<Self>,
        slot: Slot,
        randao_reveal: BLSSignature,
        graffiti: Option<Bytes32>,
        skip_randao_verification: bool,
        builder_boost_factor: Option<u64>,
    ) -> Result<ProducedBlockV3<E>, ProductionError> {
        let builder = match self.builder() {
            Some(builder) if builder_boost_factor != Some(0) => builder,
            configured => {
                let outcome = match configured {
                    None => BuilderOutcome::NoBuilder,
                    Some(_) => BuilderOutcome::LocalRequested,
                };
                let block = self
                    .produce_block_v3(
                        slot,
                        randao_reveal,
                        graffiti,
                        skip_randao_verification,
                        builder_boost_factor,
                    )
                    .await?;
                return Ok(ProducedBlockV3::Full { block, outcome });
            }
        };
        let (template, state) = self
            .on_workers(move |producer| {
                producer.block_template(slot, randao_reveal, graffiti, skip_randao_verification)
            })
            .await?;
        let request = self.bid_request(builder, &template, &state);
        // Both requests go out on the first polls; the packing runs beside them.
        let (local, bid, packed) = tokio::join!(
            self.local_payload(&template),
            async {
                match request {
                    Ok((expected, pubkey)) => {
                        self.builder_bid(builder, &template, expected, pubkey).await
                    }
                    Err(outcome) => Err(outcome),
                }
            },
            self.pack(state)
        );
        let (state, operations, pack_time) = packed?;
        let mut timings = template.timings;
        timings.pack = pack_time;

        let (local, bid) = match (local, bid) {
            (Ok(local), Ok(bid)) => (local, bid),
            (Ok(local), Err(outcome)) => {
                let block = self
                    .local_block_on_workers(template, state, operations, local, timings)
                    .await?;
                return Ok(ProducedBlockV3::Full { block, outcome });
            }
            (Err(error), Ok(bid)) => {
                // The execution client failed; the verified bid still makes the block.
                let local = Err(error.to_string());
                let blinded = self
                    .on_workers(move |producer| {
                        Ok(producer.blinded_block_on_bid(&template, state, operations, bid, local))
                    })
                    .await?;
                return match blinded {
                    Ok(blinded) => {
                        count_bid(BidOutcome::Chosen, "");
                        Ok(ProducedBlockV3::Blinded(blinded))
                    }
                    Err(_) => {
                        count_bid(BidOutcome::Error, "");
                        Err(error)
                    }
                };
            }
            // The execution client's error says more than why there was no bid.
            (Err(error), Err(_)) => return Err(error),
        };
        let choice = select_payload(
            local.response.block_value,
            bid.value,
            builder_boost_factor,
            local.response.should_override_builder,
        );
        if choice == PayloadChoice::Local {
            count_bid(BidOutcome::LocalChosen, "");
            let builder_value = bid.value;
            let block = self
                .local_block_on_workers(template, state, operations, local, timings)
                .await?;
            return Ok(ProducedBlockV3::Full {
                block,
                outcome: BuilderOutcome::LocalChosen { builder_value },
            });
        }
        // The blinded block's transition runs on a copy: the local block needs the state
        // should the blinded one fail.
        let blinded = {
            let (template, state, operations) =
                (template.clone(), state.clone(), operations.clone());
            let local_value = Ok(local.response.block_value);
            self.on_workers(move |producer| {
                Ok(producer.blinded_block_on_bid(&template, state, operations, bid, local_value))
            })
            .await?
        };
        match blinded {
            Ok(blinded) => {
                count_bid(BidOutcome::Chosen, "");
                Ok(ProducedBlockV3::Blinded(blinded))
            }
            Err(e) => {
                count_bid(BidOutcome::Error, "");
                let block = self
                    .local_block_on_workers(template, state, operations, local, timings)
                    .await?;
                Ok(ProducedBlockV3::Full {
                    block,
                    outcome: BuilderOutcome::BlindedBlockFailed(InternalError::new(e)),
                })
            }
        }
    }

    /// What the bid for the template's block must satisfy, and the proposer's key to ask
    /// with; the relay is not asked for a proposer that sent no registration.
    fn bid_request(
        &self,
        builder: &BuilderOptions,
        template: &BlockTemplate<E>,
        state: &CachedBeaconState<E>,
    ) -> Result<(BidExpectations, BLSPubkey), BuilderOutcome> {
        let failed = |e: BidRequestError| BuilderOutcome::Failed(InternalError::new(e));
        let proposer = template.proposer_index;
        let pubkey = head_pubkey(state, proposer)
            .map(|key| BLSPubkey::from(key.compress().0))
            .ok_or_else(|| failed(BidRequestError::NoProposerKey(proposer)))?;
        let registration = self.builder_registrations.read().get(&pubkey).cloned();
        let Some(registration) = registration else {
            return Err(BuilderOutcome::NotRegistered);
        };
        let view = state.view().map_err(|e| failed(e.into()))?;
        let spec = self.chain.spec();
        let expected = BidExpectations {
            parent_hash: template.parent_hash,
            timestamp: template.attributes.timestamp,
            prev_randao: template.attributes.prev_randao,
            withdrawals_root: withdrawals_root::<E>(&template.expected_withdrawals).ok_or_else(
                || {
                    failed(BidRequestError::TooManyWithdrawals(
                        template.expected_withdrawals.len(),
                    ))
                },
            )?,
            parent_gas_limit: view
                .payload_header()
                .map_err(|e| failed(e.into()))?
                .gas_limit,
            registered_gas_limit: Some(registration.gas_limit),
            max_blobs: if template.fork >= ForkName::Fulu {
                spec.get_blob_parameters(template.epoch).max_blobs_per_block
            } else {
                spec.max_blobs_per_block_electra
            },
            builder_pubkey: builder.client.builder_pubkey(),
        };
        Ok((expected, pubkey))
    }

    /// The relay's verified bid for the template's block, or why there is none (counted in
    /// `beacon_builder_bids_total`).
    async fn builder_bid(
        &self,
        builder: &BuilderOptions,
        template: &BlockTemplate<E>,
        expected: BidExpectations,
        pubkey: BLSPubkey,
    ) -> Result<BuilderBid<E>, BuilderOutcome> {
        let started = Instant::now();
        let answer = builder
            .client
            .get_header::<E>(template.fork, template.slot, expected.parent_hash, pubkey)
            .await;
        observe_get_header(started.elapsed());
        let signed = match answer {
            Ok(Some(signed)) => signed,
            Ok(None) => {
                count_bid(BidOutcome::NoBid, "");
                return Err(BuilderOutcome::NoBid);
            }
            Err(e) => {
                let outcome = if e.is_timeout() {
                    BidOutcome::Timeout
                } else {
                    BidOutcome::Error
                };
                count_bid(outcome, "");
                return Err(BuilderOutcome::Failed(InternalError::new(e)));
            }
        };
        count_bid(BidOutcome::Received, "");
        verify_builder_bid(signed, &expected, builder_domain(self.chain.spec()))
            .map(|verified| verified.bid)
            .map_err(|e| {
                count_bid(BidOutcome::Invalid, bid_error_reason(&e));
                BuilderOutcome::InvalidBid(e)
            })
    }

    /// The blinded block with the template's fields, `operations` and `bid`'s payload header,
    /// commitments and requests, its state root from the transition on `state` (the
    /// template's advanced state). `local_payload`: the local payload's value, or why the
    /// execution client gave none.
    fn blinded_block_on_bid(
        &self,
        template: &BlockTemplate<E>,
        mut state: CachedBeaconState<E>,
        operations: BlockOperations<E>,
        bid: BuilderBid<E>,
        local_payload: Result<U256, String>,
    ) -> Result<ProducedBlindedBlock<E>, ProductionError> {
        let header = bid.header;
        // The stand-in payload: every header field, the expected withdrawals (the header's
        // withdrawals root was checked against them), no transactions.
        let payload = ExecutionPayload::<E> {
            parent_hash: header.parent_hash,
            fee_recipient: header.fee_recipient,
            state_root: header.state_root,
            receipts_root: header.receipts_root,
            logs_bloom: header.logs_bloom.clone(),
            prev_randao: header.prev_randao,
            block_number: header.block_number,
            gas_limit: header.gas_limit,
            gas_used: header.gas_used,
            timestamp: header.timestamp,
            extra_data: header.extra_data.clone(),
            base_fee_per_gas: header.base_fee_per_gas,
            block_hash: header.block_hash,
            transactions: ssz_types::VariableList::empty(),
            withdrawals: ssz_types::VariableList::new(template.expected_withdrawals.clone())
                .map_err(|_| ProductionError::TooMany {
                    what: "withdrawals",
                    count: template.expected_withdrawals.len(),
                })?,
            blob_gas_used: header.blob_gas_used,
            excess_blob_gas: header.excess_blob_gas,
        };
        let body = Self::block_body(
            template,
            operations,
            payload,
            bid.blob_kzg_commitments.clone(),
            bid.execution_requests.clone(),
        )?;
        let message = types::electra::BeaconBlock {
            slot: template.slot,
            proposer_index: template.proposer_index,
            parent_root: template.head.block_root,
            state_root: Root::ZERO,
            body,
        };
        let blinded_body = BlindedBeaconBlockBody::from_body_with(
            &message.body,
            header.clone(),
            bid.blob_kzg_commitments,
            bid.execution_requests,
        );
        let body_root = blinded_body.tree_hash_root();
        let reward = self.transition(&mut state, &message, |view| {
            // What the real payload's transactions change: the cached header and the body root.
            // (This flow builds pre-Gloas blocks, whose states all hold a header.)
            if let Some(cached) = view.latest_execution_payload_header.as_deref_mut() {
                *cached = header;
            }
            view.latest_block_header.body_root = body_root;
        })?;
        let state_root = state.hash_tree_root()?;
        let block = BlindedBeaconBlock {
            slot: message.slot,
            proposer_index: message.proposer_index,
            parent_root: message.parent_root,
            state_root,
            body: blinded_body,
        };
        Ok(ProducedBlindedBlock {
            block_root: block.tree_hash_root(),
            block,
            execution_payload_value: bid.value,
            consensus_block_value: U256::from(reward) * U256::from(WEI_PER_GWEI),
            fork: template.fork,
            slot: template.slot,
            proposer_index: template.proposer_index,
            local_payload_value: local_payload.as_ref().ok().copied(),
            local_payload_error: local_payload.err(),
        })
    }

    /// `publishBlindedBlockV2`: the proposer's signature checked, the block unblinded through
    /// the relay and published (see the module's documentation).
    pub async fn publish_blinded_block(
        &self,
        block: SignedBlindedBeaconBlock<E>,
        fork: ForkName,
        validation: BroadcastValidation,
        broadcaster: &dyn BlockBroadcaster<E>,
    ) -> Result<BlindedPublication<E>, BlindedPublishError> {
        let builder = self.builder().ok_or(BlindedPublishError::NoBuilder)?;
        if fork < ForkName::Electra || !fork.is_implemented() {
            return Err(BlindedPublishError::UnsupportedFork(fork));
        }
        let block_root = block.message.tree_hash_root();
        if !self.verify_blinded_signature(&block, block_root) {
            return Err(BlindedPublishError::InvalidSignature);
        }
        let started = Instant::now();
        if builder.submit == SubmitVersion::V2 {
            match builder.client.submit_blinded_block_v2(fork, &block).await {
                Ok(()) => {
                    observe_submit(started.elapsed());
                    count_submit(SubmitOutcome::PublishedByRelay);
                    return Ok(BlindedPublication::PublishedByRelay { block_root });
                }
                // A relay without the v2 endpoint: unblind with v1 instead.
                Err(BuilderError::Status { status, .. }) if status == 404 || status == 405 => {}
                Err(e) => {
                    observe_submit(started.elapsed());
                    count_submit(SubmitOutcome::of_error(&e));
                    return Err(e.into());
                }
            }
        }
        let revealed = builder.client.submit_blinded_block_v1(fork, &block).await;
        observe_submit(started.elapsed());
        let revealed = revealed.inspect_err(|e| count_submit(SubmitOutcome::of_error(e)))?;
        let proofs_per_blob = if fork >= ForkName::Fulu {
            E::CellsPerExtBlob::to_usize()
        } else {
            1
        };
        let full = revealed
            .check_blobs(&block.message.body.blob_kzg_commitments, proofs_per_blob)
            .and_then(|()| {
                let bundle = revealed.blobs_bundle;
                block
                    .unblind(revealed.execution_payload)
                    .map(|full| (full, bundle))
            });
        let (full, bundle) = match full {
            Ok(full) => {
                count_submit(SubmitOutcome::Revealed);
                full
            }
            Err(e) => {
                count_submit(SubmitOutcome::InvalidReveal);
                return Err(e.into());
            }
        };
        let full = match fork {
            ForkName::Electra => SignedBeaconBlock::Electra(full),
            ForkName::Fulu => SignedBeaconBlock::Fulu(full),
            fork @ (ForkName::Phase0
            | ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Deneb
            | ForkName::Gloas) => {
                return Err(BlindedPublishError::UnsupportedFork(fork));
            }
        };
        let published = self
            .publish_block(
                Arc::new(full),
                Some((bundle.proofs, bundle.blobs)),
                validation,
                broadcaster,
            )
            .await?;
        Ok(BlindedPublication::Published(published))
    }

    /// The proposer's signature over the blinded block (of root `block_root`, the full
    /// block's), with the head state's key.
    fn verify_blinded_signature(
        &self,
        block: &SignedBlindedBeaconBlock<E>,
        block_root: Root,
    ) -> bool {
        let head = self.chain.head();
        let Some(key) = head_pubkey(&head.state, block.message.proposer_index) else {
            return false;
        };
        let domain = domain_at(
            self.chain.spec(),
            self.chain.genesis_validators_root(),
            signing::DOMAIN_BEACON_PROPOSER,
            block.message.slot / E::slots_per_epoch(),
        );
        verify_one(
            &key,
            signing::compute_signing_root(&block_root, domain),
            &block.signature,
        )
    }
}
