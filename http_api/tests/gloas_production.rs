//! Gloas production over HTTP: `GET /eth/v4/validator/blocks/{slot}` (the block alone, or with
//! its envelope and blobs), `GET /eth/v1/validator/execution_payload_envelopes/{slot}/{root}`,
//! and `POST /eth/v1/beacon/execution_payload_envelopes`, against a Gloas chain on the mock
//! execution client (Amsterdam methods).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use beacon_chain::harness::{ChainHarness, HarnessConfig};
use beacon_chain::{ExecutionStatus, ProducerConfig};
use fork_choice::PayloadStatus;
use http_api::{ApiConfig, NoNetwork};
use ssz::{Decode, Encode};
use state_harness::interop_secret_key;
use state_processing::common::get_domain;
use tree_hash::TreeHash;
use types::{
    BLSSignature, ChainSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock,
    gloas::{ExecutionPayloadEnvelope, SignedExecutionPayloadEnvelope},
    signing::{DOMAIN_BEACON_BUILDER, DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO, compute_signing_root},
};

mod common;

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
/// Bound on every request (a hang fails the test, not a timing).
const WAIT: Duration = Duration::from_secs(60);

async fn gloas_node() -> (ChainHarness<E>, common::Server<E>, Arc<NoNetwork>) {
    let harness = HarnessConfig {
        spec: ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas),
        genesis_time: GENESIS_TIME,
        validators: 64,
        blobs_per_payload: 1,
        producer: ProducerConfig::default(),
        ..HarnessConfig::default()
    }
    .build::<E>()
    .await
    .unwrap();
    let network = Arc::new(NoNetwork::new());
    let server = common::serve(
        &harness,
        network.clone(),
        prometheus::Registry::new(),
        ApiConfig::default(),
    )
    .await;
    (harness, server, network)
}

async fn get(base: &str, path: &str, accept: &str) -> reqwest::Response {
    tokio::time::timeout(
        WAIT,
        reqwest::Client::new()
            .get(format!("{base}{path}"))
            .header("accept", accept)
            .send(),
    )
    .await
    .unwrap()
    .unwrap()
}

fn sign(validator: u64, root: Root) -> BLSSignature {
    BLSSignature::from(
        interop_secret_key(validator as usize)
            .sign(root.as_slice())
            .serialize(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v4_block_and_its_envelope_are_produced_signed_and_the_envelope_published() {
    let (h, server, network) = gloas_node().await;
    let slot = 1;
    h.set_slot(slot);
    let (proposer, _) = h.proposer_and_reveal(slot).unwrap();
    let state = h.chain.head().state.clone();
    let view = state.view().unwrap();
    let epoch: u64 = 0;
    let randao = sign(
        proposer,
        compute_signing_root(&epoch, get_domain(&view, DOMAIN_RANDAO, None)),
    );

    // A slot before Gloas does not exist here; the parameter include_payload is required.
    let missing = get(
        &server.base,
        &format!("/eth/v4/validator/blocks/{slot}?randao_reveal={randao}"),
        "application/json",
    )
    .await;
    assert_eq!(missing.status(), 400);

    // JSON with the payload: the block, the envelope, the blob and its cell proofs.
    let response = get(
        &server.base,
        &format!("/eth/v4/validator/blocks/{slot}?randao_reveal={randao}&include_payload=true"),
        "application/json",
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["eth-consensus-version"], "gloas");
    assert_eq!(response.headers()["eth-execution-payload-included"], "true");
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["version"], "gloas");
    assert_eq!(body["execution_payload_included"], true);
    let block: types::gloas::BeaconBlock<E> =
        serde_json::from_value(body["data"]["block"].clone()).unwrap();
    let envelope: ExecutionPayloadEnvelope<E> =
        serde_json::from_value(body["data"]["execution_payload_envelope"].clone()).unwrap();
    assert_eq!(body["data"]["blobs"].as_array().unwrap().len(), 1);
    let root = block.tree_hash_root();
    assert_eq!(envelope.beacon_block_root, root);
    assert_eq!(
        envelope.payload.block_hash,
        block.body.signed_execution_payload_bid.message.block_hash
    );

    // SSZ without the payload: the block alone, the same block.
    let response = get(
        &server.base,
        &format!("/eth/v4/validator/blocks/{slot}?randao_reveal={randao}&include_payload=false"),
        "application/octet-stream",
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["eth-execution-payload-included"],
        "false"
    );
    let bytes = response.bytes().await.unwrap();
    let from_ssz = types::gloas::BeaconBlock::<E>::from_ssz_bytes(&bytes).unwrap();
    assert_eq!(from_ssz.tree_hash_root(), root);

    // The envelope of that block, by slot and root; another root is a 404.
    let response = get(
        &server.base,
        &format!("/eth/v1/validator/execution_payload_envelopes/{slot}/{root}"),
        "application/octet-stream",
    )
    .await;
    assert_eq!(response.status(), 200);
    let served =
        ExecutionPayloadEnvelope::<E>::from_ssz_bytes(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(served, envelope);
    let unknown = get(
        &server.base,
        &format!(
            "/eth/v1/validator/execution_payload_envelopes/{slot}/{}",
            Root::repeat_byte(9)
        ),
        "application/json",
    )
    .await;
    assert_eq!(unknown.status(), 404);

    // The block signed and imported (its gossip path is the chain's), then the envelope
    // signed by the proposer and published: 200, broadcast, the block FULL.
    let signature = sign(
        proposer,
        compute_signing_root(&block, get_domain(&view, DOMAIN_BEACON_PROPOSER, None)),
    );
    let signed_block = Arc::new(SignedBeaconBlock::Gloas(types::gloas::SignedBeaconBlock {
        message: block,
        signature,
    }));
    h.chain
        .import_block(
            signed_block,
            &[],
            &state_processing::per_block::AlwaysValid,
            ExecutionStatus::Valid,
        )
        .unwrap();
    let signed = SignedExecutionPayloadEnvelope {
        signature: sign(
            proposer,
            compute_signing_root(&envelope, get_domain(&view, DOMAIN_BEACON_BUILDER, None)),
        ),
        message: envelope,
    };
    let post = |included: &'static str, body: Vec<u8>| {
        let url = format!("{}/eth/v1/beacon/execution_payload_envelopes", server.base);
        async move {
            tokio::time::timeout(
                WAIT,
                reqwest::Client::new()
                    .post(url)
                    .header("content-type", "application/octet-stream")
                    .header("eth-consensus-version", "gloas")
                    .header("eth-blob-data-included", included)
                    .body(body)
                    .send(),
            )
            .await
            .unwrap()
            .unwrap()
        }
    };
    // The stateless form is refused with a reason, before anything is broadcast.
    let stateless = post("true", signed.as_ssz_bytes()).await;
    assert_eq!(stateless.status(), 400);
    assert_eq!(network.counts().envelopes, 0);

    let published = post("false", signed.as_ssz_bytes()).await;
    assert_eq!(published.status(), 200);
    let counts = network.counts();
    assert_eq!((counts.envelopes, counts.data_columns), (1, 128));
    let head = h.chain.head();
    assert_eq!(
        (head.block_root, head.payload_status),
        (root, Some(PayloadStatus::Full))
    );

    // A second copy fails gossip validation (seen): 400, nothing broadcast again.
    let again = post("false", signed.as_ssz_bytes()).await;
    assert_eq!(again.status(), 400);
    assert_eq!(network.counts().envelopes, 1);
}
