//! Production and publication with a builder, end to end over real HTTP: a chain on the mock
//! execution client, the mock relay building its bids with the same client. A registered
//! proposer gets a blinded block on a better bid, signs it, publishes it: the relay is asked to
//! unblind, and the full block with the builder's blobs is published and imported. Every
//! builder failure (no registration, 204, an error, a timeout, a bad signature, a wrong parent,
//! a lower value, boost factor 0) yields the local block; a reveal with fewer blobs than
//! committed is refused before anything is broadcast.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use beacon_chain::execution::forkchoice_state_of;
use beacon_chain::{
    BeaconChain, BlindedPublication, BlindedPublishError, BlockBroadcaster, BlockProducer,
    BroadcastValidation, BuilderOptions, BuilderOutcome, ChainConfig, ManualSlotClock,
    ProducedBlindedBlock, ProducedBlockV3, ProducerConfig, PublishOutcome,
};
use builder_client::mock_relay::{MockRelay, RelayBehaviour};
use builder_client::{
    BidError, BuilderHttpClient, BuilderTimeouts, SignedBlindedBeaconBlock,
    SignedValidatorRegistrationV1, SubmitVersion, UnblindError, ValidatorRegistrationV1,
    builder_domain,
};
use execution_layer::{EngineApiClient, JwtSecret, PayloadAttributes, Timeouts};
use fork_choice::ThreadPoolBuilder;
use mock_execution_layer::{MockConfig, MockExecutionLayer};
use operation_pool::OperationPool;
use state_harness::interop_secret_key;
use state_processing::{
    CachedBeaconState,
    common::{
        compute_epoch_at_slot, get_beacon_proposer_index, get_current_epoch, get_domain,
        get_randao_mix,
    },
    genesis::{interop_genesis_block, interop_genesis_state},
    per_block::get_expected_withdrawals,
    per_slot::process_slots,
};
use store::{Store, StoreConfig};
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
}

struct Harness {
    spec: Arc<ChainSpec>,
    producer: BlockProducer<E>,
    relay: MockRelay<E>,
    _mock: MockExecutionLayer<E>,
    _dir: tempfile::TempDir,
}

fn engine(url: String, jwt: &JwtSecret) -> Arc<EngineApiClient> {
    let timeouts = Timeouts {
        get_payload: Duration::from_secs(120),
        new_payload: Duration::from_secs(60),
        forkchoice_updated: Duration::from_secs(60),
        ..Timeouts::default()
    };
    Arc::new(EngineApiClient::new(url, jwt.clone(), timeouts).unwrap())
}

/// A chain with a local block at slot 1, the clock in slot 2, a relay (`submit` for
/// unblinding) with a payload ready for slot 2 paying the builder fee recipient.
async fn harness(submit: SubmitVersion, get_header: Duration) -> Harness {
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
    let jwt = JwtSecret::random();
    let mock = MockExecutionLayer::<E>::start(
        MockConfig {
            jwt_secret: jwt.clone(),
            spec: (*spec).clone(),
            genesis_time: GENESIS_TIME,
            seed: 11,
            chain_id: 1337,
        },
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    mock.set_blobs_per_payload(BLOBS);
    let genesis =
        interop_genesis_state::<E>(VALIDATORS, GENESIS_TIME, mock.genesis_block_hash(), &spec)
            .unwrap();
    let mut genesis = CachedBeaconState::new(genesis);
    let genesis_block = interop_genesis_block::<E>(genesis.hash_tree_root().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store = Store::<E>::open(
        &dir.path().join("db"),
        (*spec).clone(),
        StoreConfig::default(),
    )
    .unwrap();
    let time_ms =
        |slot: u64| spec.compute_time_at_slot(GENESIS_TIME, Slot::from(slot)) * 1000 + 1000;
    let clock = Arc::new(ManualSlotClock::new(time_ms(1)));
    let chain = Arc::new(
        BeaconChain::from_anchor(
            Arc::new(store),
            genesis,
            genesis_block,
            spec.clone(),
            clock.clone(),
            Arc::new(ThreadPoolBuilder::new().num_threads(2).build().unwrap()),
            ChainConfig::default(),
        )
        .unwrap(),
    );
    let relay = MockRelay::<E>::start(
        (*spec).clone(),
        bls::SecretKey::random(),
        engine(mock.url(), &jwt),
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
    let producer = BlockProducer::new(
        chain.clone(),
        Arc::new(OperationPool::new()),
        engine(mock.url(), &jwt),
        ProducerConfig {
            default_fee_recipient: LOCAL_FEE_RECIPIENT,
            builder: Some(BuilderOptions {
                client: Arc::new(client),
                submit,
            }),
            ..ProducerConfig::default()
        },
    );

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
            forkchoice_state_of(&chain, &head).unwrap(),
            &attributes,
        )
        .await
        .unwrap();
    Harness {
        spec,
        producer,
        relay,
        _mock: mock,
        _dir: dir,
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

    let produced = expect_blinded(produce(&h, None).await);
    assert_eq!(produced.execution_payload_value, bid_value);
    assert!(produced.local_payload_value < bid_value);
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

    // Not registered: the relay is not even asked.
    assert_eq!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::NotRegistered
    );
    assert!(h.relay.header_requests().is_empty());
    register(&h, proposer).await;

    // Boost factor 0: local, the relay not asked.
    h.relay
        .set_bid_value(Some(U256::from(10u64).pow(U256::from(18u64))));
    assert_eq!(
        expect_local(produce(&h, Some(0)).await),
        BuilderOutcome::LocalRequested
    );
    assert!(h.relay.header_requests().is_empty());

    // A bid worth less than the local payload.
    h.relay.set_bid_value(Some(U256::from(1u64)));
    assert_eq!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::LocalChosen {
            builder_value: U256::from(1u64)
        }
    );
    h.relay
        .set_bid_value(Some(U256::from(10u64).pow(U256::from(18u64))));

    h.relay.set_behaviour(RelayBehaviour::NoBid);
    assert_eq!(expect_local(produce(&h, None).await), BuilderOutcome::NoBid);

    h.relay.set_behaviour(RelayBehaviour::Error(503));
    assert!(matches!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::Failed(_)
    ));

    h.relay
        .set_behaviour(RelayBehaviour::Delay(Duration::from_secs(30)));
    match expect_local(produce(&h, None).await) {
        BuilderOutcome::Failed(reason) => assert!(reason.contains("no answer within"), "{reason}"),
        other => panic!("{other:?}"),
    }

    h.relay.set_behaviour(RelayBehaviour::BadSignature);
    assert!(matches!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::InvalidBid(BidError::InvalidSignature(_))
    ));

    h.relay.set_behaviour(RelayBehaviour::WrongParent);
    assert!(matches!(
        expect_local(produce(&h, None).await),
        BuilderOutcome::InvalidBid(BidError::Mismatch {
            field: "parent hash",
            ..
        })
    ));

    // Honest again: the builder wins, so the fallbacks above were the failures' doing.
    h.relay.set_behaviour(RelayBehaviour::Honest);
    expect_blinded(produce(&h, None).await);
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
