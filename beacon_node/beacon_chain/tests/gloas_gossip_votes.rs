//! Votes from gossip (and the API, which verifies them the same way) on a Gloas chain: single
//! attestations whose `data.index` is the payload status they support, checked by the Gloas
//! gossip rules (`verify_attestation_payload_status`) and counted by the Gloas fork choice; and
//! payload attestation messages of the PTC, checked by `validate_payload_attestation_message_gossip`
//! and counted as the PTC's votes on the block's payload.
//!
//! The chain starts from a Gloas interop genesis (every fork through Gloas at genesis) with the
//! mock execution client attached; blocks are self-built (`state_harness::gloas`) and their
//! envelopes imported with the verdict the mock is told to give.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::{
    ExecutionStatus, Verdict,
    gossip::{AttestationGossipError, PayloadAttestationGossipError, PayloadVotesApplied},
    harness::{ChainHarness, HarnessConfig},
};
use fork_choice::PayloadStatus;
use mock_execution_layer::MockPayloadStatus;
use state_harness::{
    BuiltBlock,
    gloas::{GloasBlockContents, ParentPayload, build_gloas_block, self_built_envelope},
};
use types::{
    BLSSignature, ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, Slot, ValidatorIndex,
    electra::SingleAttestation,
    gloas::{PayloadAttestationData, PayloadAttestationMessage},
    phase0::{AttestationData, Checkpoint},
    signing::{DOMAIN_BEACON_ATTESTER, DOMAIN_PTC_ATTESTER, compute_domain, compute_signing_root},
    subnets::compute_subnet_for_attestation,
};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;

async fn harness() -> ChainHarness<E> {
    HarnessConfig {
        spec: ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas),
        validators: 64,
        genesis_time: GENESIS_TIME,
        ..HarnessConfig::default()
    }
    .build()
    .await
    .unwrap()
}

/// A Gloas block at `slot` on the head's post-state, beside the head's payload.
fn block_on_head(h: &ChainHarness<E>, slot: Slot) -> BuiltBlock<E> {
    build_gloas_block(
        &h.chain.head().state,
        slot,
        &GloasBlockContents {
            base: Default::default(),
            payload_attestations: 0,
            parent_payload: ParentPayload::Empty,
        },
        &h.spec,
    )
    .unwrap()
}

/// Moves the clock to `built`'s slot and imports it.
fn import(h: &ChainHarness<E>, built: &BuiltBlock<E>) -> Root {
    h.set_slot(built.block.slot());
    h.chain
        .import_block(
            Arc::new(built.block.clone()),
            &[],
            &state_processing::per_block::AlwaysValid,
            ExecutionStatus::Valid,
        )
        .unwrap()
}

/// `built`'s self-built envelope imported with the mock answering `status` for its payload.
async fn import_envelope(h: &ChainHarness<E>, built: &BuiltBlock<E>, status: MockPayloadStatus) {
    let envelope = self_built_envelope(built, &h.spec).unwrap();
    h.mock
        .set_payload_status(envelope.message.payload.block_hash, status);
    h.chain
        .import_execution_payload_envelope(Arc::new(envelope), Vec::new())
        .await
        .unwrap();
}

/// The head: its block and payload variant.
fn head_variant(h: &ChainHarness<E>) -> (Root, Option<PayloadStatus>) {
    let head = h.chain.head();
    (head.block_root, head.payload_status)
}

/// Committee `committee_index` of `slot` (epoch 0: every target is the genesis block).
fn committee(h: &ChainHarness<E>, slot: Slot, committee_index: u64) -> (Vec<ValidatorIndex>, u64) {
    let mut state = h.chain.head().state.clone();
    let (view, caches) = state.view_mut().unwrap();
    let committees = caches
        .committees(&view.as_ref(), slot / E::slots_per_epoch())
        .unwrap();
    (
        committees
            .get_beacon_committee(slot, committee_index)
            .unwrap()
            .to_vec(),
        committees.committees_per_slot(),
    )
}

/// Signed single attestations of `voters` (of committee 0 of `slot`) for `block` with
/// `data.index = index`, each with its subnet.
fn votes(
    h: &ChainHarness<E>,
    genesis: Root,
    slot: Slot,
    block: Root,
    index: u64,
    voters: &[ValidatorIndex],
) -> Vec<(SingleAttestation, u64)> {
    let (_, committees_per_slot) = committee(h, slot, 0);
    let epoch = slot / E::slots_per_epoch();
    let data = AttestationData {
        slot,
        index,
        beacon_block_root: block,
        source: Checkpoint {
            epoch: 0,
            root: genesis,
        },
        target: Checkpoint {
            epoch,
            root: genesis,
        },
    };
    let domain = compute_domain(
        DOMAIN_BEACON_ATTESTER,
        h.spec.compute_fork_version(epoch),
        h.chain.genesis_validators_root(),
    );
    let signing_root = compute_signing_root(&data, domain);
    let subnet =
        compute_subnet_for_attestation::<E>(&h.spec, committees_per_slot, slot, 0).unwrap();
    voters
        .iter()
        .map(|&i| {
            let signature = bls::interop_secret_key(i as usize).sign(signing_root.as_slice());
            (
                SingleAttestation {
                    committee_index: 0,
                    attester_index: i,
                    data: data.clone(),
                    signature: BLSSignature::from(signature.serialize()),
                },
                subnet,
            )
        })
        .collect()
}

/// Gossip-verifies `attestations` two seconds into `slot` (the clock set there); those that
/// pass go to fork choice. Returns the verdicts, in order, and `(applied, queued, refused)`.
fn gossip(
    h: &ChainHarness<E>,
    slot: Slot,
    attestations: Vec<(SingleAttestation, u64)>,
) -> (
    Vec<Result<(), AttestationGossipError>>,
    (usize, usize, usize),
) {
    let now = h.spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 2000;
    h.clock.set_ms(now);
    let results = h
        .chain
        .verify_single_attestations_for_gossip(attestations, now);
    let counts = h.chain.apply_votes_to_fork_choice(
        results
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|v| v.fork_choice_vote()),
    );
    (results.into_iter().map(|r| r.map(|_| ())).collect(), counts)
}

/// Moves the clock to `slot`, ticks fork choice (the queued votes whose slot has passed count)
/// and recomputes the head.
fn tick(h: &ChainHarness<E>, slot: Slot) {
    h.set_slot(slot);
    h.chain.on_tick();
    h.chain.recompute_head().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gossip_votes_with_index_1_move_the_weight_to_the_full_node_and_index_0_to_the_empty_one() {
    let h = harness().await;
    let genesis = h.chain.head().block_root;
    let b1 = block_on_head(&h, 1);
    let r1 = import(&h, &b1);
    import_envelope(&h, &b1, MockPayloadStatus::Valid).await;
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Full)));

    // Slot 2: one validator says the payload of slot 1 was not there (index 0). The vote waits
    // for slot 3; then the EMPTY node carries weight and the FULL node none, so the head is
    // slot 1's EMPTY node (without votes the tiebreaker would choose FULL).
    let (slot2, _) = committee(&h, 2, 0);
    let (verdicts, counts) = gossip(&h, 2, votes(&h, genesis, 2, r1, 0, &slot2[..1]));
    assert_eq!(verdicts, vec![Ok(())]);
    assert_eq!(counts, (0, 1, 0), "queued until slot 2 has passed");
    tick(&h, 3);
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Empty)));

    // Slot 3: a whole committee says it was there (index 1): from slot 4 on their weight makes
    // the FULL node the head.
    let (slot3, _) = committee(&h, 3, 0);
    assert!(slot3.len() >= 2, "a committee of {}", slot3.len());
    let (verdicts, counts) = gossip(&h, 3, votes(&h, genesis, 3, r1, 1, &slot3));
    assert_eq!(verdicts, vec![Ok(()); slot3.len()]);
    assert_eq!(counts, (0, slot3.len(), 0));
    h.chain.recompute_head().unwrap();
    assert_eq!(
        head_variant(&h),
        (r1, Some(PayloadStatus::Empty)),
        "not before their slot has passed"
    );
    tick(&h, 4);
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Full)));

    // A vote of a slot that has passed counts at once.
    let (verdicts, counts) = gossip(&h, 4, votes(&h, genesis, 2, r1, 1, &slot2[1..2]));
    assert_eq!(verdicts, vec![Ok(())]);
    assert_eq!(counts, (1, 0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gossip_votes_for_payloads_not_seen_or_not_validated_are_ignored_and_malformed_ones_rejected()
 {
    let h = harness().await;
    let genesis = h.chain.head().block_root;
    let b1 = block_on_head(&h, 1);
    let r1 = import(&h, &b1);
    let (slot1, _) = committee(&h, 1, 0);
    let (slot2, _) = committee(&h, 2, 0);

    // An index above 1: REJECT, before anything else is looked at.
    let (verdicts, _) = gossip(&h, 2, votes(&h, genesis, 2, r1, 2, &slot2[..1]));
    assert_eq!(
        verdicts,
        vec![Err(AttestationGossipError::DataIndexAboveOne(2))]
    );
    assert_eq!(
        AttestationGossipError::DataIndexAboveOne(2).verdict(),
        Verdict::Reject
    );

    // Slot 1's own committee saying its payload is present: REJECT (the payload cannot be
    // there yet in the block's own slot).
    let (verdicts, _) = gossip(&h, 1, votes(&h, genesis, 1, r1, 1, &slot1[..1]));
    assert_eq!(
        verdicts,
        vec![Err(AttestationGossipError::SameSlotPayloadVote(r1))]
    );
    assert_eq!(
        AttestationGossipError::SameSlotPayloadVote(r1).verdict(),
        Verdict::Reject
    );

    // Slot 2 says slot 1's payload is present, but its envelope was not imported: IGNORE, and
    // the validator may vote again (nothing was recorded as seen).
    let (verdicts, counts) = gossip(&h, 2, votes(&h, genesis, 2, r1, 1, &slot2[..1]));
    assert_eq!(
        verdicts,
        vec![Err(AttestationGossipError::PayloadNotSeen(r1))]
    );
    assert_eq!(counts, (0, 0, 0));
    assert_eq!(
        AttestationGossipError::PayloadNotSeen(r1).verdict(),
        Verdict::Ignore
    );

    // The envelope comes, but the execution client is syncing: the payload is optimistic and
    // a vote for it still IGNOREd.
    import_envelope(&h, &b1, MockPayloadStatus::Syncing).await;
    h.clock
        .set_ms(h.spec.compute_time_at_slot(GENESIS_TIME, 2) * 1000 + 2000);
    let (verdicts, _) = gossip(&h, 2, votes(&h, genesis, 2, r1, 1, &slot2[..1]));
    assert_eq!(
        verdicts,
        vec![Err(AttestationGossipError::PayloadOptimistic(r1))]
    );
    assert_eq!(
        AttestationGossipError::PayloadOptimistic(r1).verdict(),
        Verdict::Ignore
    );

    // A vote saying the payload is absent (index 0) passes whatever the payload, and so does
    // the same-slot vote with index 0.
    let (verdicts, counts) = gossip(&h, 2, votes(&h, genesis, 2, r1, 0, &slot2[..1]));
    assert_eq!(verdicts, vec![Ok(())]);
    assert_eq!(counts, (0, 1, 0));
    let (verdicts, _) = gossip(&h, 2, votes(&h, genesis, 1, r1, 0, &slot1[..1]));
    assert_eq!(verdicts, vec![Ok(())]);
}

/// The distinct members of the payload timeliness committee of `built`'s slot, from its
/// post-state.
fn ptc(built: &BuiltBlock<E>) -> Vec<ValidatorIndex> {
    let view = built.post.view().unwrap();
    let mut members = state_processing::gloas::ptc::get_ptc(&view, built.block.slot()).unwrap();
    members.sort_unstable();
    members.dedup();
    members
}

/// `validator`'s payload attestation message on `block` at `slot` (payload and blob data both
/// `present`), signed by `signer`'s key.
fn ptc_message(
    h: &ChainHarness<E>,
    block: Root,
    slot: Slot,
    present: bool,
    validator: ValidatorIndex,
    signer: ValidatorIndex,
) -> PayloadAttestationMessage {
    let data = PayloadAttestationData {
        beacon_block_root: block,
        slot,
        payload_present: present,
        blob_data_available: present,
    };
    let domain = compute_domain(
        DOMAIN_PTC_ATTESTER,
        h.spec.compute_fork_version(slot / E::slots_per_epoch()),
        h.chain.genesis_validators_root(),
    );
    let signature = bls::interop_secret_key(signer as usize)
        .sign(compute_signing_root(&data, domain).as_slice())
        .serialize();
    PayloadAttestationMessage {
        validator_index: validator,
        data,
        signature: BLSSignature::from(signature),
    }
}

/// Gossip-verifies `messages` at `ms_into_slot` milliseconds into `slot` (the clock set there).
fn gossip_ptc(
    h: &ChainHarness<E>,
    slot: Slot,
    ms_into_slot: u64,
    messages: Vec<PayloadAttestationMessage>,
) -> Vec<
    Result<beacon_chain::gossip::VerifiedPayloadAttestationMessage, PayloadAttestationGossipError>,
> {
    let now = h.spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + ms_into_slot;
    h.clock.set_ms(now);
    h.chain
        .verify_payload_attestation_messages_for_gossip(messages, now)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payload_attestation_messages_are_verified_by_the_gossip_rules_with_typed_verdicts() {
    let h = harness().await;
    let b1 = block_on_head(&h, 1);
    let r1 = import(&h, &b1);
    let members = ptc(&b1);
    assert!(members.len() >= 3, "a PTC of {members:?}");
    let outsider = (0..64).find(|i| !members.contains(i)).unwrap();
    let (a, b, c) = (members[0], members[1], members[2]);

    // One batch: a valid message, one signed by another key (the batch fails and the bad one
    // is found), one of a validator outside the PTC, one for a block never seen, one of a
    // validator past the registry.
    let results = gossip_ptc(
        &h,
        1,
        3000,
        vec![
            ptc_message(&h, r1, 1, true, a, a),
            ptc_message(&h, r1, 1, true, b, c),
            ptc_message(&h, r1, 1, true, outsider, outsider),
            ptc_message(&h, Root::repeat_byte(0xab), 1, true, c, c),
            ptc_message(&h, r1, 1, true, 1_000_000, a),
        ],
    );
    let errors: Vec<_> = results.iter().map(|r| r.as_ref().err().cloned()).collect();
    assert_eq!(
        errors,
        vec![
            None,
            Some(PayloadAttestationGossipError::InvalidSignature),
            Some(PayloadAttestationGossipError::NotInPtc {
                validator: outsider,
                slot: 1
            }),
            Some(PayloadAttestationGossipError::UnknownBlock(
                Root::repeat_byte(0xab)
            )),
            Some(PayloadAttestationGossipError::UnknownValidator(1_000_000)),
        ]
    );
    let verdicts: Vec<_> = errors.iter().flatten().map(|e| e.verdict()).collect();
    assert_eq!(
        verdicts,
        vec![
            Verdict::Reject,
            Verdict::Reject,
            Verdict::Ignore,
            Verdict::Reject
        ]
    );
    let verified = results[0].as_ref().unwrap();
    assert_eq!(verified.message.validator_index, a);
    assert_eq!(
        h.chain
            .apply_payload_attestation_messages([verified])
            .unwrap(),
        PayloadVotesApplied {
            applied: 1,
            refused: 0
        }
    );

    // The same validator again (another vote, a valid signature): IGNORE. Two of one
    // validator in one batch: the first only. The member whose signature was bad may send a
    // good one.
    let results = gossip_ptc(
        &h,
        1,
        3500,
        vec![
            ptc_message(&h, r1, 1, false, a, a),
            ptc_message(&h, r1, 1, true, c, c),
            ptc_message(&h, r1, 1, true, c, c),
            ptc_message(&h, r1, 1, true, b, b),
        ],
    );
    let errors: Vec<_> = results.iter().map(|r| r.as_ref().err().cloned()).collect();
    let seen = |validator| PayloadAttestationGossipError::AlreadySeen { validator, slot: 1 };
    assert_eq!(errors, vec![Some(seen(a)), None, Some(seen(c)), None]);
    assert_eq!(seen(a).verdict(), Verdict::Ignore);

    // Slot 2: a message for slot 1 is no longer current (IGNORE); one for slot 2 on the slot-1
    // block is not at its assigned slot (IGNORE).
    let results = gossip_ptc(
        &h,
        2,
        3000,
        vec![
            ptc_message(&h, r1, 1, true, members[3], members[3]),
            ptc_message(&h, r1, 2, true, members[3], members[3]),
        ],
    );
    let errors: Vec<_> = results.iter().map(|r| r.as_ref().err().cloned()).collect();
    assert_eq!(
        errors,
        vec![
            Some(PayloadAttestationGossipError::NotCurrentSlot(1)),
            Some(PayloadAttestationGossipError::NotAtAssignedSlot {
                root: r1,
                block_slot: 1,
                slot: 2
            }),
        ]
    );
    assert!(
        errors
            .iter()
            .flatten()
            .all(|e| e.verdict() == Verdict::Ignore)
    );
}

/// Slot 1's block with its envelope; during slot 1, when `ptc_votes`, every member of its PTC
/// says its payload and blob data were there; then slot 2's block built beside that payload
/// (on slot 1's EMPTY node). Returns the two roots.
async fn slot_two_beside_slot_one_payload(h: &ChainHarness<E>, ptc_votes: bool) -> (Root, Root) {
    let b1 = block_on_head(h, 1);
    let r1 = import(h, &b1);
    import_envelope(h, &b1, MockPayloadStatus::Valid).await;
    if ptc_votes {
        let messages = ptc(&b1)
            .into_iter()
            .map(|i| ptc_message(h, r1, 1, true, i, i))
            .collect();
        let verified: Vec<_> = gossip_ptc(h, 1, 3000, messages)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let applied = h
            .chain
            .apply_payload_attestation_messages(&verified)
            .unwrap();
        assert_eq!(applied.applied, verified.len());
    }
    let b2 = build_gloas_block(
        &b1.post,
        2,
        &GloasBlockContents {
            base: Default::default(),
            payload_attestations: 0,
            parent_payload: ParentPayload::Empty,
        },
        &h.spec,
    )
    .unwrap();
    let r2 = import(h, &b2);
    (r1, r2)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ptc_quorum_for_the_payload_makes_its_full_node_win_over_a_block_built_beside_it() {
    // Without PTC votes: slot 2's block, boosted and built on slot 1's EMPTY node, is the head
    // (`should_extend_payload` is false for slot 1, so EMPTY wins the tiebreak).
    let h = harness().await;
    let (_, r2) = slot_two_beside_slot_one_payload(&h, false).await;
    assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Empty)));

    // With a PTC quorum saying slot 1's payload and its data were on time: the payload is to
    // be extended, slot 1's FULL node wins the tiebreak, and the block built beside it loses.
    let h = harness().await;
    let (r1, _) = slot_two_beside_slot_one_payload(&h, true).await;
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Full)));
}

/// An aggregate in Gloas's container of committee 0 of `slot` for `block` with
/// `data.index = index`, every member attesting, aggregated by the committee's first member.
fn gloas_aggregate(
    h: &ChainHarness<E>,
    genesis: Root,
    slot: Slot,
    block: Root,
    index: u64,
) -> types::gloas::SignedAggregateAndProof<E> {
    use types::gloas::{AggregateAndProof, AggregationBits, Attestation, SignedAggregateAndProof};
    use types::signing::{DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_SELECTION_PROOF};
    let (members, _) = committee(h, slot, 0);
    let (single, _) = votes(h, genesis, slot, block, index, &members[..1])
        .pop()
        .unwrap();
    let data = single.data;
    let epoch = slot / E::slots_per_epoch();
    let domain = |domain_type| {
        compute_domain(
            domain_type,
            h.spec.compute_fork_version(epoch),
            h.chain.genesis_validators_root(),
        )
    };
    let aggregate_key =
        state_harness::aggregate_interop_secret_key(members.iter().copied()).unwrap();
    let signature =
        aggregate_key.sign(compute_signing_root(&data, domain(DOMAIN_BEACON_ATTESTER)).as_slice());
    let mut aggregation_bits = AggregationBits::with_len(members.len());
    for i in 0..members.len() {
        aggregation_bits.set(i, true).unwrap();
    }
    let mut committee_bits = ssz_types::BitVector::new();
    committee_bits.set(0, true).unwrap();
    let aggregator = members[0];
    let key = bls::interop_secret_key(aggregator as usize);
    let selection_proof =
        key.sign(compute_signing_root(&slot, domain(DOMAIN_SELECTION_PROOF)).as_slice());
    let message = AggregateAndProof {
        aggregator_index: aggregator,
        aggregate: Attestation {
            aggregation_bits,
            data,
            signature: BLSSignature::from(signature.serialize()),
            committee_bits,
        },
        selection_proof: BLSSignature::from(selection_proof.serialize()),
    };
    let signature =
        key.sign(compute_signing_root(&message, domain(DOMAIN_AGGREGATE_AND_PROOF)).as_slice());
    SignedAggregateAndProof {
        message,
        signature: BLSSignature::from(signature.serialize()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregates_in_gloas_container_follow_the_gloas_rules_and_carry_their_payload_status() {
    for (index, variant) in [(0, PayloadStatus::Empty), (1, PayloadStatus::Full)] {
        let h = harness().await;
        let genesis = h.chain.head().block_root;
        let b1 = block_on_head(&h, 1);
        let r1 = import(&h, &b1);
        import_envelope(&h, &b1, MockPayloadStatus::Valid).await;

        // Same-slot index 1 and an index above 1: REJECT.
        let now = h.spec.compute_time_at_slot(GENESIS_TIME, 1) * 1000 + 2000;
        h.clock.set_ms(now);
        let err = h
            .chain
            .verify_aggregate_for_gossip(gloas_aggregate(&h, genesis, 1, r1, 1), now)
            .unwrap_err();
        assert_eq!(err, AttestationGossipError::SameSlotPayloadVote(r1));
        let now = h.spec.compute_time_at_slot(GENESIS_TIME, 2) * 1000 + 2000;
        h.clock.set_ms(now);
        let err = h
            .chain
            .verify_aggregate_for_gossip(gloas_aggregate(&h, genesis, 2, r1, 2), now)
            .unwrap_err();
        assert_eq!(err, AttestationGossipError::DataIndexAboveOne(2));

        // Slot 2's committee, aggregated, says the payload of slot 1 was there or not: from
        // slot 3 on its weight decides between slot 1's two nodes.
        let verified = h
            .chain
            .verify_aggregate_for_gossip(gloas_aggregate(&h, genesis, 2, r1, index), now)
            .unwrap();
        assert_eq!(verified.fork_choice_vote().data.index, index);
        let accepted = h.chain.accept_gloas_aggregates(&h.op_pool, [&verified]);
        assert_eq!((accepted.votes_queued, accepted.pooled), (1, 1));
        // The pool keeps it in Electra's container, its payload signal kept.
        let pooled = h.op_pool.attestations().unwrap();
        assert!(
            pooled
                .iter()
                .any(|a| a.data.slot == 2 && a.data.index == index),
            "index {index}: {pooled:?}"
        );
        tick(&h, 3);
        assert_eq!(head_variant(&h), (r1, Some(variant)), "index {index}");
    }
}
