//! Production and publication with a builder, end to end over real HTTP: a chain on the mock
//! execution client, the mock relay building its bids with the same client. A registered
//! proposer gets a blinded block on a better bid, signs it, publishes it: the relay is asked to
//! unblind, and the full block with the builder's blobs is published and imported. Every
//! builder failure (no registration, 204, an error, a timeout, a bad signature, a wrong parent,
//! a lower value, boost factor 0) yields the local block; a failing local execution client
//! (an error, a timeout) with a valid bid yields the blinded block; a reveal with fewer blobs
//! than committed is refused before anything is broadcast. The builder metrics move with each
//! outcome (the tests run one at a time: the metrics are process-wide).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use beacon_chain::execution::forkchoice_state_of;
use beacon_chain::harness::{ChainHarness, HarnessConfig};
use beacon_chain::{
    BlindedPublication, BlindedPublishError, BlockBroadcaster, BlockProducer, BroadcastValidation,
    BuilderOptions, BuilderOutcome, ProducedBlindedBlock, ProducedBlockV3, ProducerConfig,
    ProductionError, PublishOutcome, production::builder_metrics,
};
use builder_client::mock_relay::{MockRelay, RelayBehaviour};
use builder_client::{
    BidError, BuilderHttpClient, BuilderTimeouts, SignedBlindedBeaconBlock,
    SignedValidatorRegistrationV1, SubmitVersion, UnblindError, ValidatorRegistrationV1,
    builder_domain,
};
use execution_layer::{EngineApiClient, JwtSecret, PayloadAttributes, Timeouts};
use mock_execution_layer::GetPayloadFault;
use operation_pool::OperationPool;
use state_harness::interop_secret_key;
use state_processing::{
    common::{
        compute_epoch_at_slot, get_beacon_proposer_index, get_current_epoch, get_domain,
        get_randao_mix,
    },
    per_block::get_expected_withdrawals,
    per_slot::process_slots,
};
use types::{
    Address, BLSPubkey, BLSSignature, ChainSpec, DataColumnSidecar, ForkName, MinimalEthSpec,
    SignedBeaconBlock, Slot, U256, ValidatorIndex,
    signing::{DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO, compute_signing_root},
};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const VALIDATORS: usize = 64;
const BLOBS: usize = 3;
const LOCAL_FEE_RECIPIENT: Address = Address::repeat_byte(0xfe);
const BUILDER_FEE_RECIPIENT: Address = Address::repeat_byte(0xb1);
/// The builder's slot: slot 1 carries a local block, so the parent payload has a gas limit
/// (the interop genesis header has none) for the bid's gas limit to be checked against.
const SLOT: u64 = 2;

#[derive(Default)]
struct Recorder {
    blocks: Mutex<Vec<Arc<SignedBeaconBlock<E>>>>,
    columns: Mutex<Vec<Arc<DataColumnSidecar<E>>>>,
}

impl BlockBroadcaster<E> for Recorder {
    fn broadcast_block(&self, block: Arc<SignedBeaconBlock<E>>) {
        self.blocks.lock().unwrap().push(block);
    }

    fn broadcast_data_columns(&self, columns: Vec<Arc<DataColumnSidecar<E>>>) {
        self.columns.lock().unwrap().extend(columns);
    }

    fn broadcast_execution_payload_envelope(
        &self,
        _: Arc<types::gloas::SignedExecutionPayloadEnvelope<E>>,
    ) {
        panic!("a Fulu relay flow publishes no envelope");
    }
}

struct Harness {
    /// The crate's chain harness (its producer has no relay).
    base: ChainHarness<E>,
    spec: Arc<ChainSpec>,
    /// Production with the relay.
    producer: Arc<BlockProducer<E>>,
    relay: MockRelay<E>,
    _serial: tokio::sync::MutexGuard<'static, ()>,
}

/// The builder metrics are process-wide: one test at a time, so that each sees only its own
/// counts.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn engine(url: String, jwt: &JwtSecret) -> Arc<EngineApiClient> {
    engine_with(url, jwt, Duration::from_secs(120))
}

fn engine_with(url: String, jwt: &JwtSecret, get_payload: Duration) -> Arc<EngineApiClient> {
    let timeouts = Timeouts {
        get_payload,
        new_payload: Duration::from_secs(60),
        forkchoice_updated: Duration::from_secs(60),
        ..Timeouts::default()
    };
    Arc::new(EngineApiClient::new(url, jwt.clone(), timeouts).unwrap())
}

/// A builder metric's value: a counter's count, or a histogram's number of observations.
fn metric(name: &str, labels: &[(&str, &str)]) -> u64 {
    let registry = prometheus::Registry::new();
    builder_metrics::register(&registry).unwrap();
    let Some(family) = registry.gather().into_iter().find(|f| f.name() == name) else {
        panic!("no metric {name}")
    };
    let histogram = family.get_field_type() == prometheus::proto::MetricType::HISTOGRAM;
    family
        .get_metric()
        .iter()
        .find(|m| {
            labels.iter().all(|(k, v)| {
                m.get_label()
                    .iter()
                    .any(|l| l.name() == *k && l.value() == *v)
            })
        })
        .map_or(0, |m| {
            if histogram {
                m.get_histogram().get_sample_count()
            } else {
                m.get_counter().get_value() as u64
            }
        })
}

/// `beacon_builder_bids_total{outcome, reason}`.
fn bids(outcome: &str, reason: &str) -> u64 {
    metric(
        "beacon_builder_bids_total",
        &[("outcome", outcome), ("reason", reason)],
    )
}

/// `beacon_builder_submit_blinded_total{outcome}`.
fn submits(outcome: &str) -> u64 {
    metric(
        "beacon_builder_submit_blinded_total",
        &[("outcome", outcome)],
    )
}

/// Every bid outcome's count, to compare before and after a step.
fn bid_counts() -> Vec<(&'static str, &'static str, u64)> {
    [
        ("received", ""),
        ("no_bid", ""),
        ("timeout", ""),
        ("error", ""),
        ("chosen", ""),
        ("local_chosen", ""),
        ("invalid", "invalid_signature"),
        ("invalid", "header_mismatch"),
    ]
    .into_iter()
    .map(|(outcome, reason)| (outcome, reason, bids(outcome, reason)))
    .collect()
}

/// The bid outcomes whose counts changed since `before`, with how much.
fn bid_changes(before: &[(&'static str, &'static str, u64)]) -> Vec<(&'static str, u64)> {
    bid_counts()
        .into_iter()
        .zip(before)
        .filter(|((_, _, now), (_, _, then))| now != then)
        .map(|((outcome, _, now), (_, _, then))| (outcome, now - then))
        .collect()
}

/// A chain with a local block at slot 1, the clock in slot 2, a relay (`submit` for
/// unblinding) with a payload ready for slot 2 paying the builder fee recipient.
async fn harness(submit: SubmitVersion, get_header: Duration) -> Harness {
    let serial = SERIAL.lock().await;
    let base = HarnessConfig {
        validators: VALIDATORS,
        genesis_time: GENESIS_TIME,
        blobs_per_payload: BLOBS,
        seed: 11,
        ..HarnessConfig::default()
    }
    .build::<E>()
    .await
    .unwrap();
    let spec = base.spec.clone();
    let (mock, jwt, chain, clock) = (&base.mock, &base.jwt, &base.chain, &base.clock);
    let time_ms =
        |slot: u64| spec.compute_time_at_slot(GENESIS_TIME, Slot::from(slot)) * 1000 + 1000;
    clock.set_ms(time_ms(1));
    let relay = MockRelay::<E>::start(
        (*spec).clone(),
        bls::SecretKey::random(),
        engine(mock.url(), jwt),
    )
    .await
    .unwrap();
    let client = BuilderHttpClient::new(
        &relay.url_with_pubkey(),
        BuilderTimeouts {
            get_header,
            ..BuilderTimeouts::default()
        },
    )
    .unwrap();
    let producer = Arc::new(BlockProducer::new(
        chain.clone(),
        Arc::new(OperationPool::new()),
        engine(mock.url(), jwt),
        ProducerConfig {
            default_fee_recipient: LOCAL_FEE_RECIPIENT,
            builder: Some(BuilderOptions {
                client: Arc::new(client),
                submit,
            }),
            ..ProducerConfig::default()
        },
    ));

    // Slot 1: a local block, published and imported.
    let (_, reveal) = reveal_at(&producer, &spec, Slot::from(1u64));
    let local = producer
        .produce_block_v3(Slot::from(1u64), reveal, None, false, None)
        .await
        .unwrap();
    let (types::BeaconBlock::Fulu(message) | types::BeaconBlock::Electra(message)) = &local.block
    else {
        panic!("an Electra-layout block")
    };
    let signature = sign_root(&producer, message, local.slot, local.proposer_index);
    let signed = SignedBeaconBlock::Fulu(types::electra::SignedBeaconBlock {
        message: message.clone(),
        signature,
    });
    let published = producer
        .publish_block(
            Arc::new(signed),
            Some((local.kzg_proofs.clone(), local.blobs.clone())),
            BroadcastValidation::Gossip,
            &Recorder::default(),
        )
        .await
        .unwrap();
    assert_eq!(published.outcome, PublishOutcome::Imported);
    clock.set_ms(time_ms(SLOT));
    let slot = Slot::from(SLOT);

    // The relay learns the slot's attributes as a real one does from payload_attributes.
    let head = chain.head();
    let mut state = head.state.clone();
    process_slots(&mut state, slot, &spec).unwrap();
    let view = state.view().unwrap();
    let attributes = PayloadAttributes {
        timestamp: spec.compute_time_at_slot(GENESIS_TIME, slot),
        prev_randao: get_randao_mix(&view, get_current_epoch(&view)),
        suggested_fee_recipient: BUILDER_FEE_RECIPIENT,
        withdrawals: get_expected_withdrawals(&view)
            .unwrap()
            .withdrawals
            .iter()
            .map(Into::into)
            .collect(),
        parent_beacon_block_root: head.block_root,
    };
    relay
        .prepare_payload(
            slot,
            forkchoice_state_of(chain, &head).unwrap(),
            &attributes,
        )
        .await
        .unwrap();
    Harness {
        base,
        spec,
        producer,
        relay,
        _serial: serial,
    }
}

/// The slot's proposer and its RANDAO reveal.
fn proposer_and_reveal(h: &Harness) -> (ValidatorIndex, BLSSignature) {
    reveal_at(&h.producer, &h.spec, Slot::from(SLOT))
}

/// The proposer of `slot` on the head and its RANDAO reveal.
fn reveal_at(
    producer: &BlockProducer<E>,
    spec: &ChainSpec,
    slot: Slot,
) -> (ValidatorIndex, BLSSignature) {
    let mut state = producer.chain().head().state.clone();
    process_slots(&mut state, slot, spec).unwrap();
    let (view, caches) = state.view_mut().unwrap();
    let view = view.as_ref();
    let proposer = get_beacon_proposer_index(&view, caches).unwrap();
    let root = compute_signing_root(
        &get_current_epoch(&view),
        get_domain(&view, DOMAIN_RANDAO, None),
    );
    let reveal = interop_secret_key(proposer as usize).sign(root.as_slice());
    (proposer, BLSSignature::from(reveal.serialize()))
}

/// Registers the proposer with the relay through the producer.
async fn register(h: &Harness, proposer: ValidatorIndex) {
    let key = interop_secret_key(proposer as usize);
    let message = ValidatorRegistrationV1 {
        fee_recipient: BUILDER_FEE_RECIPIENT,
        gas_limit: 60_000_000,
        timestamp: GENESIS_TIME,
        pubkey: BLSPubkey::from(key.public_key().compress().0),
    };
    let root = compute_signing_root(&message, builder_domain(&h.spec));
    let registration = SignedValidatorRegistrationV1 {
        message,
        signature: BLSSignature::from(key.sign(root.as_slice()).serialize()),
    };
    let kept = h
        .producer
        .register_validators(std::slice::from_ref(&registration))
        .await
        .unwrap();
    assert_eq!(kept, 1);
    assert!(
        h.relay
            .registrations()
            .contains_key(&registration.message.pubkey)
    );
}

async fn produce(h: &Harness, boost: Option<u64>) -> ProducedBlockV3<E> {
    let (_, reveal) = proposer_and_reveal(h);
    h.producer
        .produce_block_v3_with_builder(Slot::from(SLOT), reveal, None, false, boost)
        .await
        .unwrap()
}

fn expect_local(produced: ProducedBlockV3<E>) -> BuilderOutcome {
    match produced {
        ProducedBlockV3::Full { block, outcome } => {
            let (types::BeaconBlock::Fulu(message) | types::BeaconBlock::Electra(message)) =
                &block.block
            else {
                panic!("an Electra-layout block")
            };
            assert_eq!(
                message.body.execution_payload.fee_recipient,
                LOCAL_FEE_RECIPIENT
            );
            outcome
        }
        ProducedBlockV3::Blinded(b) => {
            panic!("a blinded block on a bid of {}", b.execution_payload_value)
        }
    }
}

fn expect_blinded(produced: ProducedBlockV3<E>) -> ProducedBlindedBlock<E> {
    match produced {
        ProducedBlockV3::Blinded(b) => b,
        ProducedBlockV3::Full { outcome, .. } => panic!("the local block: {outcome:?}"),
    }
}

/// The proposer's signature over `block` (a full or blinded block: the same root).
fn sign_root(
    producer: &BlockProducer<E>,
    block: &impl tree_hash::TreeHash,
    slot: Slot,
    proposer: ValidatorIndex,
) -> BLSSignature {
    let state = producer.chain().head().state.clone();
    let view = state.view().unwrap();
    let domain = get_domain(
        &view,
        DOMAIN_BEACON_PROPOSER,
        Some(compute_epoch_at_slot::<E>(slot)),
    );
    let root = compute_signing_root(block, domain);
    let signature = interop_secret_key(proposer as usize).sign(root.as_slice());
    BLSSignature::from(signature.serialize())
}

fn sign(h: &Harness, produced: &ProducedBlindedBlock<E>) -> SignedBlindedBeaconBlock<E> {
    SignedBlindedBeaconBlock {
        message: produced.block.clone(),
        signature: sign_root(
            &h.producer,
            &produced.block,
            produced.slot,
            produced.proposer_index,
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_better_bid_gives_a_blinded_block_that_is_unblinded_published_and_imported() {
    let h = harness(SubmitVersion::V1, Duration::from_secs(5)).await;
    let (proposer, _) = proposer_and_reveal(&h);
    register(&h, proposer).await;
    let bid_value = U256::from(10u64).pow(U256::from(18u64));
    h.relay.set_bid_value(Some(bid_value));

    let before = bid_counts();
    let headers = metric("beacon_builder_get_header_seconds", &[]);
    let produced = expect_blinded(produce(&h, None).await);
    assert_eq!(bid_changes(&before), vec![("received", 1), ("chosen", 1)]);
    assert_eq!(
        metric("beacon_builder_get_header_seconds", &[]),
        headers + 1
    );
    assert_eq!(produced.execution_payload_value, bid_value);
    assert!(produced.local_payload_value.unwrap() < bid_value);
    assert_eq!(produced.local_payload_error, None);
    assert_eq!(produced.fork, ForkName::Fulu);
    let body = &produced.block.body;
    assert_eq!(
        body.execution_payload_header.fee_recipient,
        BUILDER_FEE_RECIPIENT
    );
    assert_eq!(body.blob_kzg_commitments.len(), BLOBS);
    assert_eq!(h.relay.header_requests().len(), 1);

    let signed = sign(&h, &produced);
    let recorder = Recorder::default();
    let (revealed, submit_time) = (
        submits("revealed"),
        metric("beacon_builder_submit_blinded_seconds", &[]),
    );
    let published = h
        .producer
        .publish_blinded_block(
            signed.clone(),
            ForkName::Fulu,
            BroadcastValidation::Gossip,
            &recorder,
        )
        .await
        .unwrap();
    let BlindedPublication::Published(published) = published else {
        panic!("unblinded with v1, published here")
    };
    assert_eq!(submits("revealed"), revealed + 1);
    assert_eq!(
        metric("beacon_builder_submit_blinded_seconds", &[]),
        submit_time + 1
    );
    // The relay was asked to unblind exactly this block.
    let submitted = h.relay.submitted_blocks();
    assert_eq!(submitted.len(), 1);
    assert_eq!(submitted[0], (1, signed));
    // Imported: the blinded block's state root was the full block's.
    assert_eq!(published.outcome, PublishOutcome::Imported);
    assert_eq!(published.block_root, produced.block_root);
    assert_eq!(h.producer.chain().head().block_root, produced.block_root);
    // The builder's blobs are not this node's: their proofs were verified.
    assert!(published.kzg_verified);
    let blocks = recorder.blocks.lock().unwrap();
    assert_eq!(blocks.len(), 1);
    let SignedBeaconBlock::Fulu(full) = &*blocks[0] else {
        panic!("a Fulu block")
    };
    assert_eq!(
        full.message.body.execution_payload.fee_recipient,
        BUILDER_FEE_RECIPIENT
    );
    assert_eq!(recorder.columns.lock().unwrap().len(), 128);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_v2_the_relay_publishes_the_block() {
    let h = harness(SubmitVersion::V2, Duration::from_secs(5)).await;
    let (proposer, _) = proposer_and_reveal(&h);
    register(&h, proposer).await;
    h.relay.set_bid_value(Some(U256::from(u64::MAX)));
    let produced = expect_blinded(produce(&h, None).await);
    let recorder = Recorder::default();
    let by_relay = submits("published_by_relay");
    let outcome = h
        .producer
        .publish_blinded_block(
            sign(&h, &produced),
            ForkName::Fulu,
            BroadcastValidation::Gossip,
            &recorder,
        )
        .await
        .unwrap();
    assert!(matches!(
        outcome,
        BlindedPublication::PublishedByRelay { block_root } if block_root == produced.block_root
    ));
    assert_eq!(submits("published_by_relay"), by_relay + 1);
    let published = h.relay.published_blocks();
    assert_eq!(published.len(), 1);
    assert_eq!(
        tree_hash::TreeHash::tree_hash_root(&published[0].message),
        produced.block_root
    );
    assert!(recorder.blocks.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_without_v2_is_asked_with_v1() {
    let h = harness(SubmitVersion::V2, Duration::from_secs(5)).await;
    let (proposer, _) = proposer_and_reveal(&h);
    register(&h, proposer).await;
    h.relay.set_bid_value(Some(U256::from(u64::MAX)));
    let produced = expect_blinded(produce(&h, None).await);
    h.relay.set_behaviour(RelayBehaviour::NoV2);
    let recorder = Recorder::default();
    let outcome = h
        .producer
        .publish_blinded_block(
            sign(&h, &produced),
            ForkName::Fulu,
            BroadcastValidation::Gossip,
            &recorder,
        )
        .await
        .unwrap();
    let BlindedPublication::Published(published) = outcome else {
        panic!("unblinded with v1 after the 404")
    };
    assert_eq!(published.outcome, PublishOutcome::Imported);
    let versions: Vec<u8> = h.relay.submitted_blocks().iter().map(|(v, _)| *v).collect();
    assert_eq!(versions, vec![1]);
    assert!(h.relay.published_blocks().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_builder_failure_falls_back_to_the_local_payload() {
    let h = harness(SubmitVersion::V1, Duration::from_millis(500)).await;
    let (proposer, _) = proposer_and_reveal(&h);

    // A registration of a key the chain does not know is neither kept nor forwarded.
    let stranger = bls::SecretKey::random();
    let message = ValidatorRegistrationV1 {
        fee_recipient: BUILDER_FEE_RECIPIENT,
        gas_limit: 60_000_000,
        timestamp: GENESIS_TIME,
        pubkey: BLSPubkey::from(stranger.public_key().compress().0),
    };
    let root = compute_signing_root(&message, builder_domain(&h.spec));
    let unknown = SignedValidatorRegistrationV1 {
        message,
        signature: BLSSignature::from(stranger.sign(root.as_slice()).serialize()),
    };
    assert_eq!(h.producer.register_validators(&[unknown]).await.unwrap(), 0);
    assert!(h.relay.registrations().is_empty());

    // Not registered: the relay is not even asked (nothing counted).
    let before = bid_counts();
    assert_eq!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::NotRegistered
    );
    assert!(h.relay.header_requests().is_empty());
    assert_eq!(bid_changes(&before), vec![]);
    register(&h, proposer).await;

    // Boost factor 0: local, the relay not asked.
    h.relay
        .set_bid_value(Some(U256::from(10u64).pow(U256::from(18u64))));
    assert_eq!(
        expect_local(produce(&h, Some(0)).await),
        BuilderOutcome::LocalRequested
    );
    assert!(h.relay.header_requests().is_empty());

    assert_eq!(bid_changes(&before), vec![]);

    // A bid worth less than the local payload.
    h.relay.set_bid_value(Some(U256::from(1u64)));
    assert_eq!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::LocalChosen {
            builder_value: U256::from(1u64)
        }
    );
    assert_eq!(
        bid_changes(&before),
        vec![("received", 1), ("local_chosen", 1)]
    );
    h.relay
        .set_bid_value(Some(U256::from(10u64).pow(U256::from(18u64))));

    h.relay.set_behaviour(RelayBehaviour::NoBid);
    let before = bid_counts();
    assert_eq!(expect_local(produce(&h, None).await), BuilderOutcome::NoBid);
    assert_eq!(bid_changes(&before), vec![("no_bid", 1)]);

    h.relay.set_behaviour(RelayBehaviour::Error(503));
    let before = bid_counts();
    assert!(matches!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::Failed(_)
    ));
    assert_eq!(bid_changes(&before), vec![("error", 1)]);

    h.relay
        .set_behaviour(RelayBehaviour::Delay(Duration::from_secs(30)));
    let before = bid_counts();
    let headers = metric("beacon_builder_get_header_seconds", &[]);
    match expect_local(produce(&h, None).await) {
        BuilderOutcome::Failed(reason) => {
            assert!(reason.to_string().contains("no answer within"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(bid_changes(&before), vec![("timeout", 1)]);
    assert_eq!(
        metric("beacon_builder_get_header_seconds", &[]),
        headers + 1
    );

    h.relay.set_behaviour(RelayBehaviour::BadSignature);
    let before = bid_counts();
    assert!(matches!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::InvalidBid(BidError::InvalidSignature(_))
    ));
    assert_eq!(bid_changes(&before), vec![("received", 1), ("invalid", 1)]);
    assert_eq!(bids("invalid", "invalid_signature"), before[6].2 + 1);

    h.relay.set_behaviour(RelayBehaviour::WrongParent);
    let before = bid_counts();
    assert!(matches!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::InvalidBid(BidError::Mismatch {
            field: "parent hash",
            ..
        })
    ));
    assert_eq!(bid_changes(&before), vec![("received", 1), ("invalid", 1)]);
    assert_eq!(bids("invalid", "header_mismatch"), before[7].2 + 1);

    // Honest again: the builder wins, so the fallbacks above were the failures' doing.
    h.relay.set_behaviour(RelayBehaviour::Honest);
    let before = bid_counts();
    expect_blinded(produce(&h, None).await);
    assert_eq!(bid_changes(&before), vec![("received", 1), ("chosen", 1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reveal_with_fewer_blobs_than_committed_is_not_published() {
    let h = harness(SubmitVersion::V1, Duration::from_secs(5)).await;
    let (proposer, _) = proposer_and_reveal(&h);
    register(&h, proposer).await;
    h.relay.set_bid_value(Some(U256::from(u64::MAX)));
    let produced = expect_blinded(produce(&h, None).await);
    h.relay.set_behaviour(RelayBehaviour::WithholdBlob);
    let recorder = Recorder::default();
    let invalid_reveals = submits("invalid_reveal");
    let err = h
        .producer
        .publish_blinded_block(
            sign(&h, &produced),
            ForkName::Fulu,
            BroadcastValidation::Gossip,
            &recorder,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            BlindedPublishError::Unblind(UnblindError::BlobCountMismatch {
                commitments: BLOBS,
                blobs
            }) if blobs == BLOBS - 1
        ),
        "{err}"
    );
    assert_eq!(submits("invalid_reveal"), invalid_reveals + 1);
    assert!(recorder.blocks.lock().unwrap().is_empty());
    assert_ne!(h.producer.chain().head().block_root, produced.block_root);

    // A blinded block signed by another key is refused before the relay sees it.
    let mut forged = sign(&h, &produced);
    forged.signature = BLSSignature::from(
        interop_secret_key(proposer as usize + 1)
            .sign(&[0u8; 32])
            .serialize(),
    );
    let before = h.relay.submitted_blocks().len();
    assert!(matches!(
        h.producer
            .publish_blinded_block(
                forged,
                ForkName::Fulu,
                BroadcastValidation::Gossip,
                &recorder
            )
            .await,
        Err(BlindedPublishError::InvalidSignature)
    ));
    assert_eq!(h.relay.submitted_blocks().len(), before);
}

/// Registers `proposer` with `producer` (and so with the relay).
async fn register_with(producer: &BlockProducer<E>, spec: &ChainSpec, proposer: ValidatorIndex) {
    let key = interop_secret_key(proposer as usize);
    let message = ValidatorRegistrationV1 {
        fee_recipient: BUILDER_FEE_RECIPIENT,
        gas_limit: 60_000_000,
        timestamp: GENESIS_TIME,
        pubkey: BLSPubkey::from(key.public_key().compress().0),
    };
    let root = compute_signing_root(&message, builder_domain(spec));
    let registration = SignedValidatorRegistrationV1 {
        message,
        signature: BLSSignature::from(key.sign(root.as_slice()).serialize()),
    };
    assert_eq!(
        producer
            .register_validators(std::slice::from_ref(&registration))
            .await
            .unwrap(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_local_execution_client_with_a_valid_bid_gives_the_blinded_block() {
    let h = harness(SubmitVersion::V1, Duration::from_secs(5)).await;
    let (proposer, reveal) = proposer_and_reveal(&h);
    register(&h, proposer).await;
    // A bid worth less than the local payload: only the execution client's failure makes
    // the builder's the block.
    h.relay.set_bid_value(Some(U256::from(1u64)));
    assert!(matches!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::LocalChosen { .. }
    ));

    h.base
        .mock
        .set_get_payload_fault(Some(GetPayloadFault::Error));
    let before = bid_counts();
    let produced = expect_blinded(produce(&h, None).await);
    assert_eq!(bid_changes(&before), vec![("received", 1), ("chosen", 1)]);
    assert_eq!(produced.execution_payload_value, U256::from(1u64));
    assert_eq!(produced.local_payload_value, None);
    let error = produced.local_payload_error.clone().unwrap();
    assert!(error.contains("mock fault"), "{error}");
    assert_eq!(
        produced.block.body.execution_payload_header.fee_recipient,
        BUILDER_FEE_RECIPIENT
    );
    // A boost factor weighs the bid against nothing: it still makes the block.
    expect_blinded(produce(&h, Some(1)).await);
    // Factor 0 asks no builder: the execution client's error is the answer.
    let local_only = h
        .producer
        .produce_block_v3_with_builder(Slot::from(SLOT), reveal, None, false, Some(0))
        .await;
    assert!(
        matches!(local_only, Err(ProductionError::Execution(_))),
        "{local_only:?}"
    );
    // Neither a payload nor a bid: the execution client's error.
    h.relay.set_behaviour(RelayBehaviour::NoBid);
    let neither = h
        .producer
        .produce_block_v3_with_builder(Slot::from(SLOT), reveal, None, false, None)
        .await;
    assert!(
        matches!(neither, Err(ProductionError::Execution(_))),
        "{neither:?}"
    );
    h.relay.set_behaviour(RelayBehaviour::Honest);

    // The block on the bid is a valid block: unblinded, published and imported.
    let recorder = Recorder::default();
    let published = h
        .producer
        .publish_blinded_block(
            sign(&h, &produced),
            ForkName::Fulu,
            BroadcastValidation::Gossip,
            &recorder,
        )
        .await
        .unwrap();
    let BlindedPublication::Published(published) = published else {
        panic!("unblinded with v1, published here")
    };
    assert_eq!(published.outcome, PublishOutcome::Imported);
    assert_eq!(h.producer.chain().head().block_root, produced.block_root);
    assert_eq!(recorder.columns.lock().unwrap().len(), 128);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_execution_client_past_its_timeout_with_a_valid_bid_gives_the_blinded_block() {
    let h = harness(SubmitVersion::V1, Duration::from_secs(5)).await;
    let (proposer, _) = proposer_and_reveal(&h);
    // A producer on the same chain and relay whose getPayload gives up after 300 ms.
    let impatient = Arc::new(BlockProducer::new(
        h.producer.chain().clone(),
        h.producer.pool().clone(),
        engine_with(h.base.mock.url(), &h.base.jwt, Duration::from_millis(300)),
        h.producer.config().clone(),
    ));
    register_with(&impatient, &h.spec, proposer).await;
    h.base
        .mock
        .set_get_payload_fault(Some(GetPayloadFault::Delay(Duration::from_secs(30))));
    let (_, reveal) = proposer_and_reveal(&h);
    let produced = impatient
        .produce_block_v3_with_builder(Slot::from(SLOT), reveal, None, false, None)
        .await
        .unwrap();
    let produced = expect_blinded(produced);
    assert_eq!(produced.local_payload_value, None);
    assert!(produced.local_payload_error.is_some());

    // The reverse: the relay fails, the execution client answers again: the local block.
    h.base.mock.set_get_payload_fault(None);
    register(&h, proposer).await;
    h.relay.set_behaviour(RelayBehaviour::Error(500));
    assert!(matches!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::Failed(_)
    ));
}
