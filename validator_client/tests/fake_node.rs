//! `run` against a small fake beacon node on 127.0.0.1: genesis a second ahead, one-second
//! slots, four interop validators. The node hands out duties and block contents and records
//! what the client publishes; the test waits (bounded) for the attestations, aggregates and
//! the block, checks their signatures over the chain's domains, then shuts the client down.
#![allow(
    clippy::unwrap_used,
    reason = "a test server; a failure is the test failing"
)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use beacon_api::block_contents::{Fulu as FuluContents, SignedBlockContents};
use beacon_api::{BlockContents, ProduceBlockV3Metadata};
use parking_lot::Mutex;
use serde_json::json;
use state_processing::genesis::interop_secret_key;
use tokio::sync::{mpsc, oneshot};
use types::electra::{SignedAggregateAndProof, SingleAttestation};
use types::phase0::{AttestationData, Checkpoint};
use types::signing::{
    DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, compute_domain,
    compute_signing_root,
};
use types::{BLSPubkey, ChainSpec, ForkName, MinimalEthSpec, Root, U256};
use validator_client::{DutyKind, KeySource, ValidatorClientConfig};

type E = MinimalEthSpec;

const GVR: Root = Root::repeat_byte(0x5a);
const VALIDATORS: u64 = 4;
/// The slot validator 0 proposes at.
const PROPOSAL_SLOT: u64 = 2;

/// What the client published.
#[derive(Debug)]
enum Published {
    Attestations(Vec<SingleAttestation>),
    Aggregates(Vec<SignedAggregateAndProof<E>>),
    Block(Vec<u8>),
}

struct Node {
    spec: ChainSpec,
    genesis_time: u64,
    pubkeys: Vec<BLSPubkey>,
    published: mpsc::UnboundedSender<Published>,
    head_events: Mutex<Vec<mpsc::UnboundedSender<String>>>,
}

fn json_response(value: serde_json::Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn spec() -> ChainSpec {
    let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    spec.slot_duration_ms = 1_000;
    spec.seconds_per_slot = 1;
    spec
}

/// The keys `check_same_chain` reads, as a node serves them.
fn config_spec(spec: &ChainSpec) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    map.insert("PRESET_BASE".into(), json!("minimal"));
    map.insert(
        "SLOT_DURATION_MS".into(),
        json!(spec.slot_duration_ms.to_string()),
    );
    for fork in ForkName::ALL {
        let name = match fork {
            ForkName::Phase0 => "GENESIS".to_string(),
            other => other.as_str().to_uppercase(),
        };
        map.insert(
            format!("{name}_FORK_VERSION"),
            json!(spec.fork_version(fork).to_string()),
        );
        if fork != ForkName::Phase0 {
            map.insert(format!("{name}_FORK_EPOCH"), json!("0"));
        }
    }
    map.insert("BLOB_SCHEDULE".into(), json!([]));
    serde_json::Value::Object(map)
}

fn attestation_data(slot: u64) -> AttestationData {
    AttestationData {
        slot,
        index: 0,
        beacon_block_root: Root::repeat_byte(slot as u8),
        source: Checkpoint {
            epoch: 0,
            root: Root::ZERO,
        },
        target: Checkpoint {
            epoch: 0,
            root: Root::repeat_byte(1),
        },
    }
}

fn query_slot(query: &Option<String>) -> u64 {
    query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("slot="))
        .and_then(|s| s.parse().ok())
        .unwrap()
}

async fn genesis(State(node): State<Arc<Node>>) -> Response {
    json_response(json!({"data": {
        "genesis_time": node.genesis_time.to_string(),
        "genesis_validators_root": GVR.to_string(),
        "genesis_fork_version": node.spec.genesis_fork_version.to_string(),
    }}))
}

async fn config(State(node): State<Arc<Node>>) -> Response {
    json_response(json!({ "data": config_spec(&node.spec) }))
}

async fn syncing() -> Response {
    json_response(json!({"data": {
        "head_slot": "0", "sync_distance": "0", "is_syncing": false,
        "is_optimistic": false, "el_offline": false
    }}))
}

async fn validators(State(node): State<Arc<Node>>) -> Response {
    let data: Vec<serde_json::Value> = node
        .pubkeys
        .iter()
        .enumerate()
        .map(|(index, pubkey)| {
            json!({
                "index": index.to_string(),
                "balance": "32000000000",
                "status": "active_ongoing",
                "validator": {
                    "pubkey": pubkey.to_string(),
                    "withdrawal_credentials": Root::ZERO.to_string(),
                    "effective_balance": "32000000000",
                    "slashed": false,
                    "activation_eligibility_epoch": "0",
                    "activation_epoch": "0",
                    "exit_epoch": u64::MAX.to_string(),
                    "withdrawable_epoch": u64::MAX.to_string(),
                }
            })
        })
        .collect();
    json_response(json!({"execution_optimistic": false, "finalized": false, "data": data}))
}

/// Validator `i` attests at slot `i + 1` of epoch 0, alone in a committee of 4 (so it
/// aggregates: the modulo is 1).
async fn attester_duties(State(node): State<Arc<Node>>, Path(epoch): Path<u64>) -> Response {
    let duties: Vec<serde_json::Value> = if epoch == 0 {
        node.pubkeys
            .iter()
            .enumerate()
            .map(|(i, pubkey)| {
                json!({
                    "pubkey": pubkey.to_string(), "validator_index": i.to_string(),
                    "committee_index": "0", "committee_length": "4",
                    "committees_at_slot": "1", "validator_committee_index": "0",
                    "slot": (i + 1).to_string(),
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    json_response(json!({
        "dependent_root": Root::ZERO.to_string(), "execution_optimistic": false, "data": duties
    }))
}

async fn proposer_duties(State(node): State<Arc<Node>>, Path(epoch): Path<u64>) -> Response {
    let duties = if epoch == 0 {
        vec![json!({
            "pubkey": node.pubkeys[0].to_string(), "validator_index": "0",
            "slot": PROPOSAL_SLOT.to_string(),
        })]
    } else {
        Vec::new()
    };
    json_response(json!({
        "dependent_root": Root::ZERO.to_string(), "execution_optimistic": false, "data": duties
    }))
}

async fn sync_duties() -> Response {
    json_response(json!({"execution_optimistic": false, "data": []}))
}

async fn attestation_data_route(RawQuery(query): RawQuery) -> Response {
    let data = attestation_data(query_slot(&query));
    json_response(json!({ "data": serde_json::to_value(&data).unwrap() }))
}

async fn aggregate(RawQuery(query): RawQuery) -> Response {
    let data = attestation_data(query_slot(&query));
    let mut committee_bits = ssz_types::BitVector::new();
    committee_bits.set(0, true).unwrap();
    let aggregate = types::electra::Attestation::<E> {
        aggregation_bits: ssz_types::BitList::with_capacity(4).unwrap(),
        data,
        signature: types::BLSSignature::repeat_byte(0),
        committee_bits,
    };
    json_response(json!({"version": "fulu", "data": serde_json::to_value(&aggregate).unwrap()}))
}

async fn pool_attestations(State(node): State<Arc<Node>>, body: Bytes) -> StatusCode {
    let attestations: Vec<SingleAttestation> = serde_json::from_slice(&body).unwrap();
    node.published
        .send(Published::Attestations(attestations))
        .unwrap();
    StatusCode::OK
}

async fn aggregates(State(node): State<Arc<Node>>, body: Bytes) -> StatusCode {
    let aggregates: Vec<SignedAggregateAndProof<E>> = serde_json::from_slice(&body).unwrap();
    node.published
        .send(Published::Aggregates(aggregates))
        .unwrap();
    StatusCode::OK
}

async fn produce_block(Path(slot): Path<u64>, RawQuery(query): RawQuery) -> Response {
    assert!(query.unwrap_or_default().contains("randao_reveal=0x"));
    let bytes = vec![0u8; 8192];
    let mut block =
        types::electra::BeaconBlock::<E>::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
    block.slot = slot;
    block.proposer_index = 0;
    let contents = BlockContents::<E>::Fulu(FuluContents {
        block,
        kzg_proofs: Vec::new(),
        blobs: Default::default(),
    });
    let metadata = ProduceBlockV3Metadata {
        consensus_version: ForkName::Fulu,
        execution_payload_blinded: false,
        execution_payload_value: U256::ZERO,
        consensus_block_value: U256::ZERO,
    };
    let mut response = Response::new(Body::from(contents.as_ssz_bytes()));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        "application/octet-stream".parse().unwrap(),
    );
    for (name, value) in metadata.to_headers() {
        headers.insert(name, value.parse().unwrap());
    }
    response
}

async fn publish_block(State(node): State<Arc<Node>>, body: Bytes) -> StatusCode {
    let contents = SignedBlockContents::<E>::from_ssz_bytes_by_fork(&body, ForkName::Fulu)
        .expect("the client publishes Fulu block contents in SSZ");
    let SignedBlockContents::Fulu(fulu) = &contents else {
        unreachable!()
    };
    let head = json!({
        "slot": fulu.signed_block.message.slot.to_string(),
        "block": Root::repeat_byte(0xb1).to_string(),
        "state": Root::ZERO.to_string(),
        "epoch_transition": false,
        "previous_duty_dependent_root": Root::ZERO.to_string(),
        "current_duty_dependent_root": Root::ZERO.to_string(),
        "execution_optimistic": false,
    });
    for subscriber in node.head_events.lock().iter() {
        let _ = subscriber.send(format!("event: head\ndata: {head}\n\n"));
    }
    node.published
        .send(Published::Block(body.to_vec()))
        .unwrap();
    StatusCode::OK
}

async fn events(State(node): State<Arc<Node>>) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    node.head_events.lock().push(tx);
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let frame = rx.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(frame)), rx))
    });
    let mut response = Response::new(Body::from_stream(stream));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, "text/event-stream".parse().unwrap());
    response
}

async fn accept() -> StatusCode {
    StatusCode::OK
}

async fn liveness() -> Response {
    json_response(json!({"data": []}))
}

async fn start_node(genesis_time: u64) -> (SocketAddr, mpsc::UnboundedReceiver<Published>) {
    let (published, received) = mpsc::unbounded_channel();
    let pubkeys = (0..VALIDATORS as usize)
        .map(|i| BLSPubkey::from(*interop_secret_key(i).public_key().compress().as_bytes()))
        .collect();
    let node = Arc::new(Node {
        spec: spec(),
        genesis_time,
        pubkeys,
        published,
        head_events: Mutex::new(Vec::new()),
    });
    let app = Router::new()
        .route("/eth/v1/beacon/genesis", get(genesis))
        .route("/eth/v1/config/spec", get(config))
        .route("/eth/v1/node/syncing", get(syncing))
        .route("/eth/v1/beacon/states/{state}/validators", post(validators))
        .route(
            "/eth/v1/validator/duties/attester/{epoch}",
            post(attester_duties),
        )
        .route(
            "/eth/v1/validator/duties/proposer/{epoch}",
            get(proposer_duties),
        )
        .route("/eth/v1/validator/duties/sync/{epoch}", post(sync_duties))
        .route(
            "/eth/v1/validator/attestation_data",
            get(attestation_data_route),
        )
        .route("/eth/v2/validator/aggregate_attestation", get(aggregate))
        .route("/eth/v2/beacon/pool/attestations", post(pool_attestations))
        .route("/eth/v2/validator/aggregate_and_proofs", post(aggregates))
        .route("/eth/v3/validator/blocks/{slot}", get(produce_block))
        .route("/eth/v2/beacon/blocks", post(publish_block))
        .route("/eth/v1/events", get(events))
        .route(
            "/eth/v1/validator/beacon_committee_subscriptions",
            post(accept),
        )
        .route("/eth/v1/validator/prepare_beacon_proposer", post(accept))
        .route("/eth/v1/validator/liveness/{epoch}", post(liveness))
        .with_state(node);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, received)
}

fn verify(pubkey: &BLSPubkey, root: Root, signature: &types::BLSSignature) -> bool {
    let public = bls::PublicKey::from_bytes(pubkey.as_slice()).unwrap();
    let signature = bls::Signature::deserialize(signature.as_slice()).unwrap();
    bls::verify(&public, root.as_slice(), &signature)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_performs_attester_aggregator_and_proposer_duties() {
    let spec = spec();
    let genesis_time = validator_client::timing::SlotClock::now().as_secs() + 1;
    let (addr, mut published) = start_node(genesis_time).await;
    let datadir = tempfile::tempdir().unwrap();
    let registry = prometheus::Registry::new();
    let config = ValidatorClientConfig {
        beacon_nodes: vec![
            // The first node is down: every request falls back to the second.
            "http://127.0.0.1:1".to_string(),
            format!("http://{addr}"),
        ],
        keys: KeySource::Interop {
            indices: 0..VALIDATORS,
        },
        datadir: datadir.path().to_path_buf(),
        fee_recipient: Some(types::ExecutionAddress::repeat_byte(0xfe)),
        metrics: Some(registry.clone()),
        spec: Some(spec.clone()),
        ..ValidatorClientConfig::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let vc = tokio::spawn(validator_client::run::<E>(config, async move {
        let _ = stopped.await;
    }));

    let pubkeys: Vec<BLSPubkey> = (0..VALIDATORS as usize)
        .map(|i| BLSPubkey::from(*interop_secret_key(i).public_key().compress().as_bytes()))
        .collect();
    let attester_domain = compute_domain(DOMAIN_BEACON_ATTESTER, spec.fulu_fork_version, GVR);
    let aggregate_domain = compute_domain(DOMAIN_AGGREGATE_AND_PROOF, spec.fulu_fork_version, GVR);
    let proposer_domain = compute_domain(DOMAIN_BEACON_PROPOSER, spec.fulu_fork_version, GVR);

    let mut attested = std::collections::BTreeSet::new();
    let mut aggregated = std::collections::BTreeSet::new();
    let mut proposed = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while attested.len() < VALIDATORS as usize
        || aggregated.len() < VALIDATORS as usize
        || !proposed
    {
        let item = tokio::time::timeout_at(deadline, published.recv())
            .await
            .expect("the client performed every duty within a minute")
            .expect("the node is up");
        match item {
            Published::Attestations(attestations) => {
                for a in attestations {
                    let index = a.attester_index;
                    // Validator i attests at slot i + 1.
                    assert_eq!(a.data.slot, index + 1);
                    assert_eq!(a.data, attestation_data(index + 1));
                    let root = compute_signing_root(&a.data, attester_domain);
                    assert!(verify(&pubkeys[index as usize], root, &a.signature));
                    assert!(attested.insert(index), "validator {index} attested twice");
                }
            }
            Published::Aggregates(aggregates) => {
                for a in aggregates {
                    let index = a.message.aggregator_index;
                    let root = compute_signing_root(&a.message, aggregate_domain);
                    assert!(verify(&pubkeys[index as usize], root, &a.signature));
                    assert!(aggregated.insert(index));
                }
            }
            Published::Block(bytes) => {
                let contents =
                    SignedBlockContents::<E>::from_ssz_bytes_by_fork(&bytes, ForkName::Fulu)
                        .unwrap();
                let SignedBlockContents::Fulu(fulu) = contents else {
                    unreachable!()
                };
                let block = fulu.signed_block;
                assert_eq!(block.message.slot, PROPOSAL_SLOT);
                let root = compute_signing_root(&block.message, proposer_domain);
                assert!(verify(&pubkeys[0], root, &block.signature));
                assert!(!proposed, "one block per slot");
                proposed = true;
            }
        }
    }
    stop.send(()).unwrap();
    vc.await.unwrap().expect("the client stops cleanly");

    let families = registry.gather();
    let count = |name: &str, kind: DutyKind| -> f64 {
        families
            .iter()
            .filter(|f| f.name() == name)
            .flat_map(|f| f.get_metric())
            .filter(|m| m.get_label().iter().any(|l| l.value() == kind.as_str()))
            .map(|m| m.get_counter().get_value())
            .sum()
    };
    assert_eq!(
        count("vc_duties_performed_total", DutyKind::Attestation),
        4.0
    );
    assert_eq!(count("vc_duties_performed_total", DutyKind::Proposal), 1.0);
    assert_eq!(count("vc_duties_missed_total", DutyKind::Attestation), 0.0);
    // The vote and the block are in the slashing protection database.
    let db = slashing_protection::SlashingDatabase::open_or_create(
        datadir.path().join("slashing_protection.redb"),
        GVR,
    )
    .unwrap();
    assert!(
        db.check_and_insert_block_proposal(&pubkeys[0], PROPOSAL_SLOT, Root::repeat_byte(9))
            .is_err()
    );
}
