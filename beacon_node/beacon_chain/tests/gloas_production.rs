//! Gloas self-build production against the mock execution client over the engine API
//! (`engine_forkchoiceUpdatedV4`, `engine_getPayloadV6`, `engine_newPayloadV5`): blocks with a
//! self-build bid for the mock's payload and blobs, signed with the interop keys and imported;
//! their envelopes produced, signed and imported (the block FULL); the next block built on the
//! FULL parent (its payload's requests carried, its hash the parent hash); and on the EMPTY
//! variant when the envelope never came.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use std::sync::Mutex;

use beacon_chain::gloas_publication::EnvelopePublishError;
use beacon_chain::harness::{ChainHarness, HarnessConfig};
use beacon_chain::{
    BlockBroadcaster, ExecutionStatus, PayloadProcessed, ProducedBlock, ProducerConfig,
    ProductionError,
};
use fork_choice::PayloadStatus;
use state_harness::interop_secret_key;
use state_processing::common::get_domain;
use types::{
    Address, BLSSignature, BeaconBlock, ChainSpec, ForkName, MinimalEthSpec, Root,
    SignedBeaconBlock, Slot,
    gloas::{
        BUILDER_INDEX_SELF_BUILD, PayloadAttestationData, PayloadAttestationMessage,
        SignedExecutionPayloadEnvelope,
    },
    signing::{
        DOMAIN_BEACON_BUILDER, DOMAIN_BEACON_PROPOSER, DOMAIN_PTC_ATTESTER, compute_domain,
        compute_signing_root,
    },
};

type E = MinimalEthSpec;

/// What the network was handed, in order.
#[derive(Default)]
struct Recorder {
    order: Mutex<Vec<String>>,
}

impl BlockBroadcaster<E> for Recorder {
    fn broadcast_block(&self, _: Arc<SignedBeaconBlock<E>>) {
        self.order.lock().unwrap().push("block".to_owned());
    }

    fn broadcast_data_columns(&self, columns: Vec<Arc<types::DataColumnSidecar<E>>>) {
        self.order
            .lock()
            .unwrap()
            .push(format!("columns {}", columns.len()));
    }

    fn broadcast_execution_payload_envelope(&self, _: Arc<SignedExecutionPayloadEnvelope<E>>) {
        self.order.lock().unwrap().push("envelope".to_owned());
    }
}

const GENESIS_TIME: u64 = 1_600_000_000;
const FEE_RECIPIENT: Address = Address::repeat_byte(0xfe);

async fn harness(blobs: usize) -> ChainHarness<E> {
    HarnessConfig {
        spec: ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas),
        validators: 64,
        genesis_time: GENESIS_TIME,
        blobs_per_payload: blobs,
        producer: ProducerConfig {
            default_fee_recipient: FEE_RECIPIENT,
            ..ProducerConfig::default()
        },
        ..HarnessConfig::default()
    }
    .build()
    .await
    .unwrap()
}

fn sign(key_of: u64, root: Root) -> BLSSignature {
    BLSSignature::from(
        interop_secret_key(key_of as usize)
            .sign(root.as_slice())
            .serialize(),
    )
}

/// Produces a Gloas block at `slot` on the head (the clock in the slot).
async fn produce(h: &ChainHarness<E>, slot: Slot) -> Result<ProducedBlock<E>, ProductionError> {
    h.set_slot(slot);
    let (_, reveal) = h.proposer_and_reveal(slot).unwrap();
    h.producer
        .produce_gloas_block(slot, reveal, None, false)
        .await
}

/// The produced block signed by its proposer and imported; its root.
fn sign_and_import(h: &ChainHarness<E>, produced: &ProducedBlock<E>) -> Arc<SignedBeaconBlock<E>> {
    let BeaconBlock::Gloas(message) = produced.block.clone() else {
        panic!("not a Gloas block: {:?}", produced.fork);
    };
    let state = h.chain.head().state.clone();
    let domain = get_domain(&state.view().unwrap(), DOMAIN_BEACON_PROPOSER, None);
    let signature = sign(
        message.proposer_index,
        compute_signing_root(&message, domain),
    );
    let block = Arc::new(SignedBeaconBlock::Gloas(types::gloas::SignedBeaconBlock {
        message,
        signature,
    }));
    let root = h
        .chain
        .import_block(
            block.clone(),
            &[],
            &state_processing::per_block::AlwaysValid,
            ExecutionStatus::Valid,
        )
        .unwrap();
    assert_eq!(root, produced.block_root);
    block
}

/// The producer's envelope of `block`, signed by the proposer (a self-build).
fn signed_envelope(
    h: &ChainHarness<E>,
    block: &SignedBeaconBlock<E>,
) -> Arc<SignedExecutionPayloadEnvelope<E>> {
    let message = h
        .producer
        .produce_execution_payload_envelope(&block.canonical_root())
        .unwrap();
    assert_eq!(message.builder_index, BUILDER_INDEX_SELF_BUILD);
    let state = h.chain.head().state.clone();
    let domain = get_domain(&state.view().unwrap(), DOMAIN_BEACON_BUILDER, None);
    let signature = sign(
        block.proposer_index(),
        compute_signing_root(&message, domain),
    );
    Arc::new(SignedExecutionPayloadEnvelope { message, signature })
}

fn bid(block: &SignedBeaconBlock<E>) -> types::gloas::ExecutionPayloadBid {
    let SignedBeaconBlock::Gloas(b) = block else {
        panic!("not a Gloas block");
    };
    b.message.body.signed_execution_payload_bid.message.clone()
}

fn head_variant(h: &ChainHarness<E>) -> (Root, Option<PayloadStatus>) {
    let head = h.chain.head();
    (head.block_root, head.payload_status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn self_built_blocks_and_their_envelopes_make_a_full_chain() {
    let h = harness(2).await;
    let genesis = h.chain.head();
    // The genesis bid promises no payload (block hash zero): its EMPTY variant is the head,
    // and a block builds on the execution genesis block, the bid's parent hash.
    let genesis_hash = genesis
        .state
        .view()
        .unwrap()
        .gloas()
        .unwrap()
        .latest_execution_payload_bid
        .parent_block_hash;

    // The mock's payloads carry a withdrawal request (for a key no validator has: a no-op
    // when applied), which the child of a FULL block carries as its parent's.
    let requests = types::gloas::ExecutionRequests {
        withdrawals: vec![types::electra::WithdrawalRequest {
            source_address: Address::repeat_byte(0x42),
            validator_pubkey: types::BLSPubkey::repeat_byte(0x42),
            amount: 7,
        }]
        .into(),
        ..Default::default()
    };
    h.mock.set_execution_requests_gloas(&requests);

    // Slot 1: a block on genesis, its bid for the mock's payload and its two blobs.
    let produced = produce(&h, 1).await.unwrap();
    assert_eq!(produced.fork, ForkName::Gloas);
    assert_eq!(produced.blobs.len(), 2);
    let b1 = sign_and_import(&h, &produced);
    let bid1 = bid(&b1);
    assert_eq!(bid1.builder_index, BUILDER_INDEX_SELF_BUILD);
    assert_eq!(bid1.value, 0);
    assert_eq!(bid1.slot, 1);
    assert_eq!(bid1.parent_block_hash, genesis_hash);
    assert_eq!(bid1.parent_block_root, genesis.block_root);
    assert_eq!(bid1.blob_kzg_commitments.len(), 2);
    assert_eq!(bid1.fee_recipient, FEE_RECIPIENT);
    assert_eq!(
        head_variant(&h),
        (b1.canonical_root(), Some(PayloadStatus::Empty))
    );

    // Its envelope, published: the envelope and then its 128 columns handed to the network,
    // then imported (the execution client accepts the bid's payload: newPayloadV5).
    let envelope = signed_envelope(&h, &b1);
    assert_eq!(envelope.message.payload.block_hash, bid1.block_hash);
    let recorder = Recorder::default();
    let published = h
        .producer
        .publish_execution_payload_envelope(envelope.clone(), &recorder)
        .await
        .unwrap();
    assert_eq!(
        *recorder.order.lock().unwrap(),
        vec!["envelope".to_owned(), "columns 128".to_owned()]
    );
    assert_eq!(published.data_columns.len(), 128);
    let PayloadProcessed::Imported(imported) = &published.outcome else {
        panic!("not imported: {:?}", published.outcome);
    };
    assert_eq!(imported.status, ExecutionStatus::Valid);
    assert_eq!(
        head_variant(&h),
        (b1.canonical_root(), Some(PayloadStatus::Full))
    );
    // The columns a peer sends back are copies: IGNOREd.
    let err = h
        .chain
        .verify_data_column_for_gossip(published.data_columns[3].clone(), 3, h.chain.now_ms())
        .unwrap_err();
    assert_eq!(err.verdict(), beacon_chain::Verdict::Ignore);
    // Published again: refused by gossip validation (seen), nothing broadcast.
    let err = h
        .producer
        .publish_execution_payload_envelope(envelope, &recorder)
        .await
        .unwrap_err();
    assert!(matches!(err, EnvelopePublishError::Gossip(_)), "{err}");
    assert_eq!(recorder.order.lock().unwrap().len(), 2);

    // Slot 2 on the FULL parent: the parent's payload hash is the new payload's parent.
    let produced = produce(&h, 2).await.unwrap();
    let b2 = sign_and_import(&h, &produced);
    let bid2 = bid(&b2);
    assert_eq!(bid2.parent_block_hash, bid1.block_hash);
    let SignedBeaconBlock::Gloas(g2) = &*b2 else {
        panic!("not Gloas")
    };
    assert_eq!(g2.message.body.parent_execution_requests, requests);
    assert_eq!(
        bid1.execution_requests_root,
        tree_hash::TreeHash::tree_hash_root(&requests)
    );
    let envelope2 = signed_envelope(&h, &b2);
    assert_eq!(envelope2.message.payload.parent_hash, bid1.block_hash);
    let columns2 = h.producer.built_blobs(&b2.canonical_root()).unwrap();
    h.chain
        .import_execution_payload_envelope(envelope2, gloas_columns_of(&h, &b2, &columns2))
        .await
        .unwrap();
    assert_eq!(
        head_variant(&h),
        (b2.canonical_root(), Some(PayloadStatus::Full))
    );

    // Slot 3, whose envelope never comes; slot 4 builds on its EMPTY variant: the parent hash
    // is the one slot 3's bid built on.
    let produced = produce(&h, 3).await.unwrap();
    let b3 = sign_and_import(&h, &produced);
    let bid3 = bid(&b3);
    assert_eq!(bid3.parent_block_hash, bid(&b2).block_hash);
    let produced = produce(&h, 4).await.unwrap();
    let b4 = sign_and_import(&h, &produced);
    let bid4 = bid(&b4);
    assert_eq!(bid4.parent_block_hash, bid3.parent_block_hash);
    let SignedBeaconBlock::Gloas(g4) = &*b4 else {
        panic!("not Gloas")
    };
    assert_eq!(
        g4.message.body.parent_execution_requests,
        Default::default()
    );
    assert_eq!(head_variant(&h).0, b4.canonical_root());
}

/// The payload attestation message of PTC member `validator` on `block` at `slot`, signed.
fn ptc_message(
    h: &ChainHarness<E>,
    block: Root,
    slot: Slot,
    present: bool,
    validator: u64,
) -> PayloadAttestationMessage {
    let data = PayloadAttestationData {
        beacon_block_root: block,
        slot,
        payload_present: present,
        blob_data_available: present,
    };
    let domain = compute_domain(
        DOMAIN_PTC_ATTESTER,
        h.spec.compute_fork_version(slot / 8),
        h.chain.genesis_validators_root(),
    );
    PayloadAttestationMessage {
        validator_index: validator,
        data: data.clone(),
        signature: sign(validator, compute_signing_root(&data, domain)),
    }
}

/// The PTC's votes on a block (from gossip or the API: verified, then accepted into fork choice
/// and the operation pool) are packed by the next slot's block, which imports (the state
/// transition checks the aggregate signatures); attesters' payload signal follows fork choice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ptc_votes_on_the_parent_are_packed_and_attesters_signal_its_payload() {
    let h = harness(1).await;
    let produced = produce(&h, 1).await.unwrap();
    let b1 = sign_and_import(&h, &produced);
    let r1 = b1.canonical_root();
    // A vote of the block's own slot always signals 0 (same-slot), FULL or not.
    assert_eq!(h.chain.attestation_payload_index(1, r1), 0);
    // The head EMPTY: a later slot's vote for it says its payload is not there.
    assert_eq!(h.chain.attestation_payload_index(2, r1), 0);
    let envelope = signed_envelope(&h, &b1);
    h.producer
        .publish_execution_payload_envelope(envelope, &Recorder::default())
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Full)));
    assert_eq!(h.chain.attestation_payload_index(1, r1), 0);
    assert_eq!(h.chain.attestation_payload_index(2, r1), 1);

    // Slot 1's committee (members may hold several positions), all but one member voting
    // "present", that one "absent"; verified late in slot 1 and accepted.
    let ptc = {
        let head = h.chain.head();
        let view = head.state.view().unwrap();
        state_processing::gloas::ptc::get_ptc(&view, 1).unwrap()
    };
    let mut members = ptc.clone();
    members.sort_unstable();
    members.dedup();
    let (absent, present) = members.split_first().unwrap();
    let mut messages: Vec<_> = present
        .iter()
        .map(|v| ptc_message(&h, r1, 1, true, *v))
        .collect();
    messages.push(ptc_message(&h, r1, 1, false, *absent));
    let now = h.spec.compute_time_at_slot(GENESIS_TIME, 1) * 1000 + 4000;
    h.clock.set_ms(now);
    let verified: Vec<_> = h
        .chain
        .verify_payload_attestation_messages_for_gossip(messages, now)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let accepted = h
        .chain
        .accept_payload_attestation_messages(&h.op_pool, &verified)
        .unwrap();
    assert_eq!(accepted.votes.applied, members.len());
    assert_eq!((accepted.pooled, accepted.not_pooled), (members.len(), 0));
    assert_eq!(h.op_pool.payload_attestations(Some(1)).unwrap().len(), 2);

    // Slot 2 packs both aggregates, the fuller first, each at its members' positions.
    let produced = produce(&h, 2).await.unwrap();
    let b2 = sign_and_import(&h, &produced);
    let SignedBeaconBlock::Gloas(g2) = &*b2 else {
        panic!("not Gloas")
    };
    let packed: Vec<_> = g2.message.body.payload_attestations.iter().collect();
    assert_eq!(packed.len(), 2);
    assert!(packed[0].data.payload_present && !packed[1].data.payload_present);
    for p in &packed {
        for (i, member) in ptc.iter().enumerate() {
            let voted_absent = member == absent;
            assert_eq!(
                p.aggregation_bits.get(i).unwrap(),
                voted_absent != p.data.payload_present,
                "position {i}"
            );
        }
    }
    // b1 is now an ancestor the head's chain built on FULL: a slot-2 vote for it says 1.
    assert_eq!(h.chain.attestation_payload_index(2, r1), 1);
    // Slot 3 packs nothing: its parent's slot (2) had no votes.
    let produced = produce(&h, 3).await.unwrap();
    let b3 = sign_and_import(&h, &produced);
    let SignedBeaconBlock::Gloas(g3) = &*b3 else {
        panic!("not Gloas")
    };
    assert!(g3.message.body.payload_attestations.is_empty());
    // b2's envelope never came: the head's chain built on b2's EMPTY variant.
    assert_eq!(h.chain.attestation_payload_index(3, b2.canonical_root()), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_is_not_produced_for_a_slot_before_gloas_by_the_gloas_path() {
    let h = HarnessConfig {
        spec: ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu),
        validators: 64,
        genesis_time: GENESIS_TIME,
        ..HarnessConfig::default()
    }
    .build::<E>()
    .await
    .unwrap();
    h.set_slot(1);
    let (_, reveal) = h.proposer_and_reveal(1).unwrap();
    let err = h
        .producer
        .produce_gloas_block(1, reveal, None, false)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ProductionError::UnsupportedFork {
                slot: 1,
                fork: ForkName::Fulu
            }
        ),
        "{err}"
    );
}

/// The Gloas column sidecars of `block` from the blobs it was built with (every column: the
/// chain takes its custody ones).
fn gloas_columns_of(
    h: &ChainHarness<E>,
    block: &SignedBeaconBlock<E>,
    built: &beacon_chain::production::BuiltBlobs<E>,
) -> Vec<types::DataColumnSidecar<E>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let cells = built.cells_and_proofs(&pool).unwrap();
    let root = block.canonical_root();
    let slot = block.slot();
    let _ = h;
    let columns = <<E as types::EthSpec>::NumberOfColumns as types::typenum::Unsigned>::to_u64();
    (0..columns)
        .map(|index| {
            types::DataColumnSidecar::Gloas(types::gloas::DataColumnSidecar {
                index,
                column: cells
                    .iter()
                    .map(|blob| {
                        types::Cell::<E>::new(blob.cells[index as usize].to_bytes().to_vec())
                            .unwrap()
                    })
                    .collect::<Vec<_>>()
                    .into(),
                kzg_proofs: cells
                    .iter()
                    .map(|blob| types::KZGProof::from(blob.proofs[index as usize].0))
                    .collect::<Vec<_>>()
                    .into(),
                slot,
                beacon_block_root: root,
            })
        })
        .collect()
}
