//! The builder flow over the Beacon API, end to end over real HTTP: `register_validator`
//! reaches the relay, `produceBlockV3` answers a blinded block (JSON and SSZ, the blinded
//! header set) when the relay's bid wins, and `publishBlindedBlockV2` unblinds it through the
//! relay, publishes and imports it; a blinded block with a bad signature is refused with 400
//! before the relay sees it.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use beacon_api::{ForkVersionedJson, ProduceBlockV3Metadata};
use beacon_chain::execution::forkchoice_state_of;
use beacon_chain::harness::{ChainHarness, ChainStart, HarnessConfig};
use beacon_chain::{
    BlockProducer, BroadcastValidation, BuilderOptions, ProducerConfig, PublishOutcome,
};
use builder_client::mock_relay::MockRelay;
use builder_client::{
    BlindedBeaconBlock, BuilderHttpClient, BuilderTimeouts, SignedBlindedBeaconBlock,
    SignedValidatorRegistrationV1, SubmitVersion, ValidatorRegistrationV1, builder_domain,
};
use execution_layer::PayloadAttributes;
use http_api::{ApiConfig, ApiContext, NoNetwork};
use ssz::{Decode, Encode};
use state_processing::common::{
    compute_epoch_at_slot, get_beacon_proposer_index, get_current_epoch, get_domain, get_randao_mix,
};
use state_processing::genesis::interop_secret_key;
use state_processing::per_block::get_expected_withdrawals;
use state_processing::per_slot::process_slots;
use tree_hash::TreeHash;
use types::{
    Address, BLSPubkey, BLSSignature, BeaconBlock, ChainSpec, ForkName, MinimalEthSpec,
    SignedBeaconBlock, Slot, U256, ValidatorIndex, signing,
};

mod common;

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const VALIDATORS: usize = 64;
const BLOBS: usize = 2;
const WAIT: Duration = Duration::from_secs(60);
const BUILDER_FEE_RECIPIENT: Address = Address::repeat_byte(0xb1);

fn time_ms(spec: &ChainSpec, slot: u64) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, Slot::from(slot)) * 1000 + 1000
}

struct Node {
    base: String,
    ctx: Arc<ApiContext<E>>,
    spec: Arc<ChainSpec>,
    relay: MockRelay<E>,
    _harness: ChainHarness<E>,
    _server: common::Server<E>,
}

/// The proposer of `slot` on the head and its RANDAO reveal.
fn reveal(producer: &BlockProducer<E>, spec: &ChainSpec, slot: Slot) -> (ValidatorIndex, String) {
    let mut state = producer.chain().head().state.clone();
    process_slots(&mut state, slot, spec).unwrap();
    let (view, caches) = state.view_mut().unwrap();
    let view = view.as_ref();
    let proposer = get_beacon_proposer_index(&view, caches).unwrap();
    let root = signing::compute_signing_root(
        &get_current_epoch(&view),
        get_domain(&view, signing::DOMAIN_RANDAO, None),
    );
    let signature = interop_secret_key(proposer as usize).sign(root.as_slice());
    (
        proposer,
        BLSSignature::from(signature.serialize()).to_string(),
    )
}

/// The proposer's signature over a block root (full and blinded blocks share it).
fn sign_root(
    producer: &BlockProducer<E>,
    block: &impl TreeHash,
    slot: Slot,
    proposer: ValidatorIndex,
) -> BLSSignature {
    let state = producer.chain().head().state.clone();
    let view = state.view().unwrap();
    let domain = get_domain(
        &view,
        signing::DOMAIN_BEACON_PROPOSER,
        Some(compute_epoch_at_slot::<E>(slot)),
    );
    let root = signing::compute_signing_root(block, domain);
    BLSSignature::from(
        interop_secret_key(proposer as usize)
            .sign(root.as_slice())
            .serialize(),
    )
}

/// A node with a relay, a local block imported at slot 1, the clock in slot 2 and the relay's
/// payload for slot 2 ready.
async fn node() -> Node {
    // The mock first: the relay builds its bids with it, and the producer asks the relay.
    let mut started = HarnessConfig {
        genesis_time: GENESIS_TIME,
        validators: VALIDATORS,
        blobs_per_payload: BLOBS,
        seed: 5,
        attach_execution_layer: false,
        clock_slot: Some(Slot::from(1u64)),
        ..HarnessConfig::default()
    }
    .start_execution_layer::<E>()
    .await
    .unwrap();
    let spec = Arc::new(started.config().spec.clone());
    let relay = MockRelay::<E>::start(
        (*spec).clone(),
        bls::SecretKey::random(),
        started.engine().unwrap(),
    )
    .await
    .unwrap();
    let client = BuilderHttpClient::new(
        &relay.url(),
        BuilderTimeouts {
            get_header: Duration::from_secs(5),
            ..BuilderTimeouts::default()
        },
    )
    .unwrap();
    started.config_mut().producer = ProducerConfig {
        builder: Some(BuilderOptions {
            client: Arc::new(client),
            submit: SubmitVersion::V1,
        }),
        ..ProducerConfig::default()
    };
    let harness = started.build(ChainStart::InteropGenesis).unwrap();
    let (chain, clock, producer) = (
        harness.chain.clone(),
        harness.clock.clone(),
        harness.producer.clone(),
    );

    // Slot 1: a local block, so that the parent payload carries a gas limit.
    let (_, randao) = reveal(&producer, &spec, Slot::from(1u64));
    let local = producer
        .produce_block_v3(Slot::from(1u64), randao.parse().unwrap(), None, false, None)
        .await
        .unwrap();
    let (BeaconBlock::Fulu(message) | BeaconBlock::Electra(message)) = &local.block else {
        panic!("an Electra-layout block")
    };
    let signed = SignedBeaconBlock::Fulu(types::electra::SignedBeaconBlock {
        message: message.clone(),
        signature: sign_root(&producer, message, local.slot, local.proposer_index),
    });
    let network = Arc::new(NoNetwork::new());
    let published = producer
        .publish_block(
            Arc::new(signed),
            Some((local.kzg_proofs.clone(), local.blobs.clone())),
            BroadcastValidation::Gossip,
            network.as_ref(),
        )
        .await
        .unwrap();
    assert_eq!(published.outcome, PublishOutcome::Imported);
    clock.set_ms(time_ms(&spec, 2));

    // The relay's payload for slot 2, as it would learn the attributes from payload_attributes.
    let head = chain.head();
    let mut state = head.state.clone();
    process_slots(&mut state, Slot::from(2u64), &spec).unwrap();
    let view = state.view().unwrap();
    let attributes = PayloadAttributes {
        timestamp: spec.compute_time_at_slot(GENESIS_TIME, Slot::from(2u64)),
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
            Slot::from(2u64),
            forkchoice_state_of(&chain, &head).unwrap(),
            &attributes,
        )
        .await
        .unwrap();
    relay.set_bid_value(Some(U256::from(10u64).pow(U256::from(18u64))));

    let server = common::serve(
        &harness,
        network,
        prometheus::Registry::new(),
        ApiConfig::default(),
    )
    .await;
    Node {
        base: server.base.clone(),
        ctx: server.ctx.clone(),
        spec,
        relay,
        _harness: harness,
        _server: server,
    }
}

async fn send(request: reqwest::RequestBuilder) -> reqwest::Response {
    tokio::time::timeout(WAIT, request.send())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_proposer_gets_publishes_and_imports_a_blinded_block() {
    let n = node().await;
    let http = reqwest::Client::new();
    let slot = Slot::from(2u64);
    let (proposer, randao) = reveal(&n.ctx.producer, &n.spec, slot);

    // register_validator, JSON: kept and forwarded.
    let key = interop_secret_key(proposer as usize);
    let message = ValidatorRegistrationV1 {
        fee_recipient: BUILDER_FEE_RECIPIENT,
        gas_limit: 60_000_000,
        timestamp: GENESIS_TIME,
        pubkey: BLSPubkey::from(key.public_key().compress().0),
    };
    let root = signing::compute_signing_root(&message, builder_domain(&n.spec));
    let registration = SignedValidatorRegistrationV1 {
        message,
        signature: BLSSignature::from(key.sign(root.as_slice()).serialize()),
    };
    let response = send(
        http.post(format!("{}/eth/v1/validator/register_validator", n.base))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&[&registration]).unwrap()),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        n.relay.registrations().get(&registration.message.pubkey),
        Some(&registration)
    );

    // produceBlockV3 in JSON: a blinded block with the builder's header.
    let url = format!(
        "{}/eth/v3/validator/blocks/{slot}?randao_reveal={randao}",
        n.base
    );
    let response = send(http.get(&url).header("accept", "application/json")).await;
    assert_eq!(response.status(), 200);
    let metadata =
        ProduceBlockV3Metadata::from_headers(|name| response.headers().get(name)?.to_str().ok())
            .unwrap();
    assert!(metadata.execution_payload_blinded);
    assert_eq!(
        metadata.execution_payload_value,
        U256::from(10u64).pow(U256::from(18u64))
    );
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["execution_payload_blinded"], true);
    assert_eq!(body["version"], "fulu");
    let blinded: BlindedBeaconBlock<E> = serde_json::from_value(body["data"].clone()).unwrap();
    assert_eq!(
        blinded.body.execution_payload_header.fee_recipient,
        BUILDER_FEE_RECIPIENT
    );
    assert_eq!(blinded.body.blob_kzg_commitments.len(), BLOBS);

    // The same in SSZ.
    let response = send(http.get(&url).header("accept", "application/octet-stream")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["eth-execution-payload-blinded"], "true");
    let ssz = response.bytes().await.unwrap();
    assert_eq!(
        BlindedBeaconBlock::<E>::from_ssz_bytes(&ssz).unwrap(),
        blinded
    );

    // A forged signature: 400, the relay never asked to unblind.
    let forged = SignedBlindedBeaconBlock {
        message: blinded.clone(),
        signature: sign_root(&n.ctx.producer, &blinded, slot, proposer + 1),
    };
    let response = send(
        http.post(format!("{}/eth/v1/beacon/blinded_blocks", n.base))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&forged).unwrap()),
    )
    .await;
    assert_eq!(response.status(), 400);
    assert!(n.relay.submitted_blocks().is_empty());

    // publishBlindedBlockV2 in SSZ at the consensus level: unblinded, published, imported.
    let signed = SignedBlindedBeaconBlock {
        message: blinded.clone(),
        signature: sign_root(&n.ctx.producer, &blinded, slot, proposer),
    };
    let response = send(
        http.post(format!(
            "{}/eth/v2/beacon/blinded_blocks?broadcast_validation=consensus",
            n.base
        ))
        .header("content-type", "application/octet-stream")
        .header("eth-consensus-version", "fulu")
        .body(signed.as_ssz_bytes()),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(n.relay.submitted_blocks(), vec![(1, signed)]);
    assert_eq!(n.ctx.chain.head().block_root, blinded.tree_hash_root());

    // The imported block is served in full with the builder's payload.
    let response = send(
        http.get(format!("{}/eth/v2/beacon/blocks/head", n.base))
            .header("accept", "application/json"),
    )
    .await;
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let block =
        SignedBeaconBlock::<E>::deserialize_by_fork(body["data"].clone(), ForkName::Fulu).unwrap();
    let SignedBeaconBlock::Fulu(block) = block else {
        panic!("a Fulu block")
    };
    assert_eq!(
        block.message.body.execution_payload.block_hash,
        blinded.body.execution_payload_header.block_hash
    );
}
