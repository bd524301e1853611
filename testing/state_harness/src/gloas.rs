//! Builds valid signed Gloas blocks against a [`CachedBeaconState`] (EIP-7732 ePBS).
//!
//! [`build_gloas_block`] does what a Gloas proposer does (spec `gloas/validator.md`): advance a
//! copy of the state to the slot, find the proposer, reveal randao, build on the parent's
//! payload (FULL: its execution requests come in `parent_execution_requests`) or beside it
//! (EMPTY), bid for its own payload (a self-build: `BUILDER_INDEX_SELF_BUILD`, value 0, the
//! point-at-infinity signature), pack attestations in the Gloas container form (`data.index`
//! signals the payload), payload attestations of the previous slot's payload timeliness
//! committee (PTC), a sync aggregate and the other operations, run the block through
//! `state_processing` to learn the post-state root, and sign. Every signature is real (interop
//! keys); aggregates are signed with the sum of the signers' secret keys.
//!
//! [spec]: gloas/validator.md#block-and-sidecar-proposal, gloas/beacon-chain.md#block-processing

use ssz_types::BitVector;
use state_processing::{
    CachedBeaconState, StateRef,
    common::{
        compute_epoch_at_slot, get_beacon_proposer_index, get_block_root_at_slot,
        get_current_epoch, get_domain, get_randao_mix,
    },
    gloas::{per_block::is_attestation_same_slot, ptc::get_ptc},
    per_block::VerifySignatures,
    per_slot::process_slots,
};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    Address, B256, BLSSignature, ChainSpec, EthSpec, Root, Slot, ValidatorIndex,
    gloas::{
        Attestation, AttestationData, AttesterSlashing, BUILDER_INDEX_SELF_BUILD, BeaconBlock,
        BeaconBlockBody, ExecutionPayloadBid, ExecutionRequests, IndexedAttestation,
        PayloadAttestation, PayloadAttestationData, SignedBeaconBlock, SignedExecutionPayloadBid,
    },
    signing::{
        DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, DOMAIN_PTC_ATTESTER, DOMAIN_RANDAO,
        compute_signing_root,
    },
};

use crate::{
    AttestationSpec, BlockContents, BuiltBlock, HarnessError,
    builder::{
        G2_POINT_AT_INFINITY, build_attester_slashing, build_bls_to_execution_changes,
        build_execution_requests, build_proposer_slashing, build_sync_aggregate,
        build_voluntary_exits, ffg_vote, sig,
    },
    keys::{aggregate_interop_secret_key, interop_secret_key},
};

/// Whether the block builds on its parent's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParentPayload {
    /// The parent's payload arrived: the bid's parent hash is the parent bid's block hash, and
    /// the block carries the parent payload's execution requests (which must hash to the parent
    /// bid's `execution_requests_root`). Withdrawals are processed.
    #[default]
    Full,
    /// The parent's payload did not arrive: the bid builds on `state.latest_block_hash`, the
    /// block carries no execution requests and processes no withdrawals. Where the state's
    /// latest block hash is the parent bid's block hash (a freshly upgraded state), the two
    /// coincide and the block is FULL.
    Empty,
}

/// What a Gloas block should carry.
#[derive(Debug, Clone, Default)]
pub struct GloasBlockContents {
    /// The operations shared with earlier forks. Its deposit, withdrawal and consolidation
    /// requests are the parent payload's (`parent_execution_requests`), so they need
    /// [`ParentPayload::Full`] and a parent bid that committed to them (see
    /// [`gloas_parent_execution_requests`]); its blob commitments go in the bid.
    pub base: BlockContents,
    /// How many payload attestations (at most `MAX_PAYLOAD_ATTESTATIONS`) for the previous
    /// slot's block. The previous slot's PTC is cut into this many contiguous groups of
    /// positions; group `k` votes [`payload_vote`]`(k)`, every member of it signing.
    pub payload_attestations: usize,
    /// FULL or EMPTY parent.
    pub parent_payload: ParentPayload,
}

/// The vote of the `k`-th payload attestation of a block: `(payload_present,
/// blob_data_available)`, the four combinations for `k` in `0..4` (so that each is a distinct
/// aggregate, as a block's payload attestations are).
pub fn payload_vote(k: usize) -> (bool, bool) {
    (k.is_multiple_of(2), (k / 2).is_multiple_of(2))
}

fn block_error(slot: Slot, error: impl Into<String>) -> HarnessError {
    HarnessError::Block {
        slot,
        error: error.into(),
    }
}

fn too_many<N: Unsigned>(what: &'static str, count: usize) -> Result<(), HarnessError> {
    if count > N::to_usize() {
        return Err(HarnessError::TooMany {
            what,
            count,
            limit: N::to_usize(),
        });
    }
    Ok(())
}

/// The parent payload's execution requests for the deposit, withdrawal and consolidation
/// requests of `contents`, in the Gloas (progressive) form, as they would be for a block at the
/// slot of `state` (deposit indices from `deposit_requests_start_index`). A benchmark that wants
/// a block to carry them sets the parent bid's `execution_requests_root` to their root.
pub fn gloas_parent_execution_requests<E: EthSpec>(
    state: &CachedBeaconState<E>,
    contents: &BlockContents,
    spec: &ChainSpec,
) -> Result<ExecutionRequests, HarnessError> {
    gloas_requests(&state.view()?, contents, spec)
}

fn gloas_requests<E: EthSpec>(
    view: &StateRef<'_, E>,
    contents: &BlockContents,
    spec: &ChainSpec,
) -> Result<ExecutionRequests, HarnessError> {
    let requests = build_execution_requests::<E>(view, contents, spec)?;
    Ok(ExecutionRequests {
        deposits: requests.deposits.iter().cloned().collect(),
        withdrawals: requests.withdrawals.iter().cloned().collect(),
        consolidations: requests.consolidations.iter().cloned().collect(),
        builder_deposits: Default::default(),
        builder_exits: Default::default(),
    })
}

/// Builds a valid signed Gloas block at `slot` on `pre` (a Gloas state, or one that
/// `process_slots` takes into Gloas by `slot`) with `contents`.
///
/// `pre` is left as it was; the post-state comes back with the block.
pub fn build_gloas_block<E: EthSpec>(
    pre: &CachedBeaconState<E>,
    slot: Slot,
    contents: &GloasBlockContents,
    spec: &ChainSpec,
) -> Result<BuiltBlock<E>, HarnessError> {
    let state_slot = *pre.state.slot();
    if slot <= state_slot {
        return Err(HarnessError::SlotNotAfterState { slot, state_slot });
    }
    let base = &contents.base;
    too_many::<E::MaxAttestationsElectra>("attestations", base.attestations.len())?;
    too_many::<E::MaxProposerSlashings>("proposer slashings", base.proposer_slashings.len())?;
    too_many::<E::MaxAttesterSlashingsElectra>(
        "attester slashings",
        base.attester_slashings.len(),
    )?;
    too_many::<E::MaxVoluntaryExits>("voluntary exits", base.voluntary_exits.len())?;
    too_many::<E::MaxBlsToExecutionChanges>(
        "BLS-to-execution changes",
        base.bls_to_execution_changes.len(),
    )?;
    if contents.payload_attestations as u64 > E::MAX_PAYLOAD_ATTESTATIONS {
        return Err(HarnessError::TooMany {
            what: "payload attestations",
            count: contents.payload_attestations,
            limit: E::MAX_PAYLOAD_ATTESTATIONS as usize,
        });
    }

    let mut state = pre.clone();
    process_slots(&mut state, slot, spec).map_err(|e| HarnessError::Slots {
        slot,
        error: format!("{e:?}"),
    })?;

    let block = {
        let CachedBeaconState { state: raw, caches } = &mut state;
        let view = StateRef::new(raw)?;
        let gloas = view.gloas()?;
        let proposer_index = get_beacon_proposer_index(&view, caches)?;
        let epoch = get_current_epoch(&view);
        let parent_root = view.latest_block_header.tree_hash_root();

        // The parent's payload: FULL when the bid builds on the parent bid's block hash.
        let parent_bid = gloas.latest_execution_payload_bid;
        let full = contents.parent_payload == ParentPayload::Full
            || *gloas.latest_block_hash == parent_bid.block_hash;
        let parent_execution_requests = if full {
            let requests = gloas_requests(&view, base, spec)?;
            if requests.tree_hash_root() != parent_bid.execution_requests_root {
                return Err(block_error(
                    slot,
                    "the parent execution requests asked for are not those the parent bid \
                     committed to (its execution_requests_root)",
                ));
            }
            requests
        } else {
            if !base.deposit_requests.is_empty()
                || !base.withdrawal_requests.is_empty()
                || !base.consolidation_requests.is_empty()
            {
                return Err(block_error(
                    slot,
                    "execution requests need a FULL parent (ParentPayload::Full)",
                ));
            }
            ExecutionRequests::default()
        };
        let parent_block_hash = if full {
            parent_bid.block_hash
        } else {
            *gloas.latest_block_hash
        };
        // What `process_attestation` reads as the parent's payload availability, after
        // `process_parent_execution_payload` marked a FULL parent available.
        let parent_slot = parent_bid.slot;
        let parent_payload_available = full
            || gloas
                .execution_payload_availability
                .get((parent_slot % E::SlotsPerHistoricalRoot::to_u64()) as usize)
                .unwrap_or(false);

        let randao_reveal = sig(interop_secret_key(proposer_index as usize)
            .sign(compute_signing_root(&epoch, get_domain(&view, DOMAIN_RANDAO, None)).as_slice()));

        let attestations = base
            .attestations
            .iter()
            .map(|a| build_gloas_attestation(&view, caches, a, parent_payload_available))
            .filter_map(Result::transpose)
            .collect::<Result<Vec<_>, _>>()?;

        let payload_attestations = (0..contents.payload_attestations)
            .map(|k| {
                build_payload_attestation(
                    &view,
                    parent_root,
                    slot,
                    k,
                    contents.payload_attestations,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;

        let sync_aggregate = build_sync_aggregate(&view, caches, base.sync_aggregate, slot)?;

        let proposer_slashings = base
            .proposer_slashings
            .iter()
            .map(|&index| build_proposer_slashing(&view, index, slot))
            .collect::<Result<Vec<_>, _>>()?;

        let attester_slashings = base
            .attester_slashings
            .iter()
            .map(|indices| {
                let s = build_attester_slashing(&view, indices, slot)?;
                let upgrade = |a: types::electra::IndexedAttestation<E>| IndexedAttestation {
                    attesting_indices: a.attesting_indices.iter().copied().collect(),
                    data: a.data,
                    signature: a.signature,
                };
                Ok(AttesterSlashing {
                    attestation_1: upgrade(s.attestation_1),
                    attestation_2: upgrade(s.attestation_2),
                })
            })
            .collect::<Result<Vec<_>, HarnessError>>()?;

        let voluntary_exits = build_voluntary_exits(&view, &base.voluntary_exits, epoch, spec);
        let bls_to_execution_changes =
            build_bls_to_execution_changes(&view, &base.bls_to_execution_changes, spec);

        // The self-build bid (gloas/validator.md): the proposer's own payload, value 0, the
        // point-at-infinity signature; the promised block hash derived from its parent's and
        // the slot, the payload to come carrying no requests.
        let mut preimage = [0u8; 40];
        preimage[..32].copy_from_slice(parent_block_hash.as_slice());
        preimage[32..].copy_from_slice(&slot.to_le_bytes());
        let bid = ExecutionPayloadBid {
            parent_block_hash,
            parent_block_root: get_block_root_at_slot(&view, slot - 1)?,
            block_hash: B256::from(ethereum_hashing::hash_fixed(&preimage)),
            prev_randao: get_randao_mix(&view, epoch),
            fee_recipient: Address::repeat_byte(0xfe),
            gas_limit: parent_bid.gas_limit,
            builder_index: BUILDER_INDEX_SELF_BUILD,
            slot,
            value: 0,
            execution_payment: 0,
            blob_kzg_commitments: base.blob_kzg_commitments.iter().cloned().collect(),
            execution_requests_root: ExecutionRequests::default().tree_hash_root(),
        };

        BeaconBlock {
            slot,
            proposer_index,
            parent_root,
            state_root: Root::ZERO,
            body: BeaconBlockBody {
                randao_reveal,
                eth1_data: base
                    .eth1_data
                    .clone()
                    .unwrap_or_else(|| view.eth1_data.clone()),
                graffiti: base.graffiti,
                proposer_slashings: proposer_slashings.into_iter().collect(),
                attester_slashings: attester_slashings.into_iter().collect(),
                attestations: attestations.into_iter().collect(),
                deposits: Default::default(),
                voluntary_exits: voluntary_exits.into_iter().collect(),
                sync_aggregate,
                bls_to_execution_changes: bls_to_execution_changes.into_iter().collect(),
                signed_execution_payload_bid: SignedExecutionPayloadBid {
                    message: bid,
                    signature: BLSSignature::from(G2_POINT_AT_INFINITY),
                },
                payload_attestations: payload_attestations.into_iter().collect(),
                parent_execution_requests,
            },
        }
    };

    let mut block = block;
    {
        let (mut view, caches) = state.view_mut()?;
        state_processing::gloas::per_block::process_block(
            &mut view,
            caches,
            &block,
            VerifySignatures::None,
            spec,
        )
        .map_err(|e| block_error(slot, format!("{e:?}")))?;
    }
    let state_root = state.hash_tree_root()?;
    block.state_root = state_root;

    let view = state.view()?;
    let block = sign_gloas_block(block, &view);
    Ok(BuiltBlock {
        block,
        post: state,
        state_root,
    })
}

/// Signs a Gloas block with its proposer's interop key, with the fork and genesis validators
/// root of `state` (any Gloas state of the chain).
pub fn sign_gloas_block<E: EthSpec>(
    message: BeaconBlock<E>,
    state: &StateRef<'_, E>,
) -> types::SignedBeaconBlock<E> {
    let domain = get_domain(
        state,
        DOMAIN_BEACON_PROPOSER,
        Some(compute_epoch_at_slot::<E>(message.slot)),
    );
    let signature = sig(interop_secret_key(message.proposer_index as usize)
        .sign(compute_signing_root(&message, domain).as_slice()));
    types::SignedBeaconBlock::Gloas(SignedBeaconBlock { message, signature })
}

/// An aggregate of some committees of one slot, in the Gloas form. `data.index` is 0 for an
/// attestation of the block proposed at its own slot (the spec requires it), else the parent
/// payload's availability (what earns the head flag).
fn build_gloas_attestation<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut state_processing::Caches,
    spec_: &AttestationSpec,
    parent_payload_available: bool,
) -> Result<Option<Attestation<E>>, HarnessError> {
    let committees = caches.committees(state, compute_epoch_at_slot::<E>(spec_.slot))?;
    let count = committees.committees_per_slot();
    let (part, parts) = spec_.part;
    let chosen: Vec<u64> = (0..count)
        .filter(|c| c * parts.max(1) / count == part)
        .collect();
    if chosen.is_empty() {
        return Ok(None);
    }
    let (source, target) = ffg_vote(state, spec_.slot)?;
    let mut data = AttestationData {
        slot: spec_.slot,
        index: 0,
        beacon_block_root: match spec_.head_override {
            Some(root) => root,
            None => get_block_root_at_slot(state, spec_.slot)?,
        },
        source,
        target,
    };
    if !is_attestation_same_slot(state, &data)? {
        data.index = u64::from(parent_payload_available);
    }

    let mut aggregation_bits = types::gloas::AggregationBits::new();
    let mut signers: Vec<u64> = Vec::new();
    let mut committee_bits = BitVector::<E::MaxCommitteesPerSlot>::new();
    for &index in &chosen {
        committee_bits
            .set(index as usize, true)
            .map_err(|_| HarnessError::TooMany {
                what: "committees",
                count: index as usize + 1,
                limit: E::MaxCommitteesPerSlot::to_usize(),
            })?;
        let committee = committees.get_beacon_committee(spec_.slot, index)?;
        let take = spec_.participants_per_committee.unwrap_or(committee.len());
        for (position, &member) in committee.iter().enumerate() {
            let on = position < take;
            aggregation_bits.push(on);
            if on {
                signers.push(member);
            }
        }
    }
    let domain = get_domain(state, DOMAIN_BEACON_ATTESTER, Some(data.target.epoch));
    let root = compute_signing_root(&data, domain);
    let signature = if signers.is_empty() {
        BLSSignature::from(G2_POINT_AT_INFINITY)
    } else {
        sig(aggregate_interop_secret_key(signers)?.sign(root.as_slice()))
    };
    Ok(Some(Attestation {
        aggregation_bits,
        data,
        signature,
        committee_bits,
    }))
}

/// The `k`-th of `parts` payload attestations for the block at `slot - 1` (root
/// `parent_root`): the `k`-th contiguous group of its PTC's positions, voting
/// [`payload_vote`]`(k)`. A member who sits at several positions signs once per position, as
/// the indexed attestation lists it once per position.
fn build_payload_attestation<E: EthSpec>(
    state: &StateRef<'_, E>,
    parent_root: Root,
    slot: Slot,
    k: usize,
    parts: usize,
) -> Result<PayloadAttestation<E>, HarnessError> {
    let attested_slot = slot - 1;
    let ptc = get_ptc(state, attested_slot)?;
    let size = E::PtcSize::to_usize();
    let mut aggregation_bits = BitVector::<E::PtcSize>::new();
    let mut signers: Vec<ValidatorIndex> = Vec::new();
    for (position, &member) in ptc.iter().enumerate() {
        if position * parts / size == k {
            aggregation_bits
                .set(position, true)
                .expect("position below PTC_SIZE");
            signers.push(member);
        }
    }
    let (payload_present, blob_data_available) = payload_vote(k);
    let data = PayloadAttestationData {
        beacon_block_root: parent_root,
        slot: attested_slot,
        payload_present,
        blob_data_available,
    };
    let domain = get_domain(
        state,
        DOMAIN_PTC_ATTESTER,
        Some(compute_epoch_at_slot::<E>(attested_slot)),
    );
    let signature = if signers.is_empty() {
        BLSSignature::from(G2_POINT_AT_INFINITY)
    } else {
        sig(aggregate_interop_secret_key(signers)?
            .sign(compute_signing_root(&data, domain).as_slice()))
    };
    Ok(PayloadAttestation {
        aggregation_bits,
        data,
        signature,
    })
}

/// The self-built envelope of a Gloas block `built` made by [`build_gloas_block`]: the payload
/// its post-state expects (parent hash, withdrawals, slot, timestamp) with its bid's block hash,
/// fee recipient, randao and gas limit (synthetic roots, no transactions, no execution
/// requests), signed by the proposer (`DOMAIN_BEACON_BUILDER`, a self-build).
///
/// [spec]: gloas/validator.md#constructing-the-signedexecutionpayloadenvelope
pub fn self_built_envelope<E: EthSpec>(
    built: &BuiltBlock<E>,
    spec: &ChainSpec,
) -> Result<types::gloas::SignedExecutionPayloadEnvelope<E>, HarnessError> {
    use types::gloas::{
        BlockAccessList, ExecutionPayload, ExecutionPayloadEnvelope, SignedExecutionPayloadEnvelope,
    };
    let view = built.post.view()?;
    let gloas = view.gloas()?;
    let bid = &gloas.latest_execution_payload_bid;
    let slot = *view.slot;
    let payload = ExecutionPayload::<E> {
        parent_hash: *gloas.latest_block_hash,
        fee_recipient: bid.fee_recipient,
        state_root: Root::repeat_byte(0x11),
        receipts_root: Root::repeat_byte(0x22),
        logs_bloom: Default::default(),
        prev_randao: bid.prev_randao,
        block_number: slot,
        gas_limit: bid.gas_limit,
        gas_used: 0,
        timestamp: spec.compute_time_at_slot(*view.genesis_time, slot),
        extra_data: Default::default(),
        base_fee_per_gas: types::U256::from(7u64),
        block_hash: bid.block_hash,
        transactions: Default::default(),
        withdrawals: gloas
            .payload_expected_withdrawals
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .into(),
        blob_gas_used: 0,
        excess_blob_gas: 0,
        block_access_list: BlockAccessList::new(vec![0xc0]),
        slot_number: slot,
    };
    let message = ExecutionPayloadEnvelope {
        payload,
        execution_requests: Default::default(),
        builder_index: BUILDER_INDEX_SELF_BUILD,
        beacon_block_root: built.block.canonical_root(),
        parent_beacon_block_root: built.block.parent_root(),
    };
    let domain = get_domain(&view, types::signing::DOMAIN_BEACON_BUILDER, None);
    let signature = sig(interop_secret_key(built.block.proposer_index() as usize)
        .sign(compute_signing_root(&message, domain).as_slice()));
    Ok(SignedExecutionPayloadEnvelope { message, signature })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        SyncParticipation,
        keys::interop_pubkey,
        synthetic::{SyntheticParams, build_state, warm_caches},
    };
    use bls::PublicKeyBytes;
    use state_processing::per_block::BlockSignatureVerifier;
    use types::{BeaconState, ForkName, MainnetEthSpec};

    type E = MainnetEthSpec;

    /// A small synthetic Fulu state upgraded to Gloas at its epoch, and the spec that schedules
    /// Gloas there.
    fn upgraded(n: usize) -> (CachedBeaconState<E>, ChainSpec, SyntheticParams) {
        let mut spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
        let params = SyntheticParams::default();
        let keys: Vec<PublicKeyBytes> = (0..n).map(interop_pubkey).collect();
        let fulu = build_state::<E>(&keys, &params, &spec).expect("synthetic state");
        spec.gloas_fork_epoch = params.slot / E::slots_per_epoch();
        let gloas = state_processing::gloas::fork::upgrade_to_gloas(fulu, &spec).expect("upgrade");
        let mut state = CachedBeaconState::new(BeaconState::Gloas(gloas));
        warm_caches(&mut state).expect("caches");
        (state, spec, params)
    }

    #[test]
    fn a_gloas_block_with_attestations_and_payload_attestations_verifies_and_applies() {
        let (pre, spec, params) = upgraded(2_048);
        let slot = params.slot + 1;
        let contents = GloasBlockContents {
            base: BlockContents {
                attestations: AttestationSpec::slot_in_parts(params.slot, 8),
                sync_aggregate: SyncParticipation::Full,
                voluntary_exits: vec![],
                ..BlockContents::default()
            },
            payload_attestations: 4,
            parent_payload: ParentPayload::Full,
        };
        let built = build_gloas_block(&pre, slot, &contents, &spec).expect("built");
        let types::SignedBeaconBlock::Gloas(signed) = &built.block else {
            panic!("a Gloas block");
        };
        let body = &signed.message.body;
        assert!(!body.attestations.is_empty());
        assert_eq!(body.payload_attestations.len(), 4);
        assert_eq!(
            body.signed_execution_payload_bid.message.builder_index,
            BUILDER_INDEX_SELF_BUILD
        );

        // Every signature verifies, in one batch, against the state at the block's slot.
        let mut at_slot = pre.clone();
        process_slots(&mut at_slot, slot, &spec).expect("slots");
        let CachedBeaconState { state: raw, caches } = &mut at_slot;
        let view = StateRef::new(raw).expect("view");
        let mut verifier = BlockSignatureVerifier::new();
        verifier
            .include_block_proposal(
                &view,
                caches,
                signed.message.proposer_index,
                signed.message.tree_hash_root(),
                &signed.signature,
            )
            .expect("proposal set");
        verifier
            .include_gloas_body(&view, caches, &signed.message, &spec)
            .expect("body sets");
        // Randao, attestations, 4 payload attestations, sync aggregate, proposal.
        assert_eq!(verifier.len(), 3 + body.attestations.len() + 4);
        verifier.verify().expect("the block's signatures verify");

        // And the block applies, its signatures checked, to the state root it names.
        let mut post = at_slot.clone();
        {
            let (mut view, caches) = post.view_mut().expect("view");
            state_processing::gloas::per_block::process_block(
                &mut view,
                caches,
                &signed.message,
                VerifySignatures::Batched,
                &spec,
            )
            .expect("the block applies");
        }
        assert_eq!(
            post.hash_tree_root().expect("root"),
            signed.message.state_root
        );
    }

    /// Applies `block` to `pre` with its signatures checked in one batch; the post-state root
    /// must be the block's.
    fn apply_verified(
        pre: &CachedBeaconState<E>,
        block: &types::SignedBeaconBlock<E>,
        spec: &ChainSpec,
    ) {
        let types::SignedBeaconBlock::Gloas(signed) = block else {
            panic!("a Gloas block");
        };
        let mut state = pre.clone();
        process_slots(&mut state, signed.message.slot, spec).expect("slots");
        {
            let CachedBeaconState { state: raw, caches } = &mut state;
            let view = StateRef::new(raw).expect("view");
            let mut verifier = BlockSignatureVerifier::new();
            verifier
                .include_block_proposal(
                    &view,
                    caches,
                    signed.message.proposer_index,
                    signed.message.tree_hash_root(),
                    &signed.signature,
                )
                .expect("proposal set");
            verifier.verify().expect("the proposal signature verifies");
        }
        {
            let (mut view, caches) = state.view_mut().expect("view");
            state_processing::gloas::per_block::process_block(
                &mut view,
                caches,
                &signed.message,
                VerifySignatures::Batched,
                spec,
            )
            .expect("the block applies");
        }
        assert_eq!(
            state.hash_tree_root().expect("root"),
            signed.message.state_root
        );
    }

    #[test]
    fn a_child_builds_on_a_full_or_an_empty_parent() {
        let (pre, spec, params) = upgraded(2_048);
        let first = build_gloas_block(
            &pre,
            params.slot + 1,
            &GloasBlockContents {
                payload_attestations: 2,
                ..GloasBlockContents::default()
            },
            &spec,
        )
        .expect("the first block");
        let types::SignedBeaconBlock::Gloas(parent) = &first.block else {
            panic!("a Gloas block");
        };
        let parent_bid = &parent.message.body.signed_execution_payload_bid.message;
        let slot = params.slot + 2;
        for parent_payload in [ParentPayload::Full, ParentPayload::Empty] {
            let contents = GloasBlockContents {
                base: BlockContents {
                    attestations: AttestationSpec::slot_in_parts(params.slot + 1, 1),
                    ..BlockContents::default()
                },
                payload_attestations: 4,
                parent_payload,
            };
            let child = build_gloas_block(&first.post, slot, &contents, &spec).expect("a child");
            let types::SignedBeaconBlock::Gloas(signed) = &child.block else {
                panic!("a Gloas block");
            };
            let bid = &signed.message.body.signed_execution_payload_bid.message;
            match parent_payload {
                // On the parent's payload: its promised hash.
                ParentPayload::Full => assert_eq!(bid.parent_block_hash, parent_bid.block_hash),
                // Beside it: the hash the parent built on.
                ParentPayload::Empty => {
                    assert_eq!(bid.parent_block_hash, parent_bid.parent_block_hash)
                }
            }
            assert_ne!(bid.block_hash, bid.parent_block_hash);
            // The attestation votes for the parent, proposed at its own slot: index 0.
            assert_eq!(signed.message.body.attestations[0].data.index, 0);
            apply_verified(&first.post, &child.block, &spec);
        }
    }

    #[test]
    fn requests_the_parent_bid_did_not_commit_to_are_refused() {
        let (pre, spec, params) = upgraded(256);
        let contents = GloasBlockContents {
            base: BlockContents {
                withdrawal_requests: vec![(1, 0)],
                ..BlockContents::default()
            },
            parent_payload: ParentPayload::Full,
            ..GloasBlockContents::default()
        };
        // A fresh upgrade's parent bid committed to no requests.
        assert!(matches!(
            build_gloas_block(&pre, params.slot + 1, &contents, &spec),
            Err(HarnessError::Block { .. })
        ));
    }
}
