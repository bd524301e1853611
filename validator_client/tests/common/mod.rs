//! A small fake beacon node on 127.0.0.1 for the tests of `run`: it serves genesis, the
//! config, validators, duties, attestation data, aggregates, block contents, PTC duties and
//! payload attestation data, and the head event stream, and records what the client
//! publishes.
#![allow(
    clippy::unwrap_used,
    dead_code,
    unreachable_pub,
    reason = "a test server shared by several test binaries; a failure is the test failing"
)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arbitrary::{Arbitrary, Unstructured};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use beacon_api::block_contents::{Fulu as FuluContents, SignedBlockContents};
use beacon_api::{BlockContents, ProduceBlockV3Metadata};
use bls::interop_secret_key;
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::mpsc;
use types::electra::{SignedAggregateAndProof, SingleAttestation};
use types::phase0::{AttestationData, Checkpoint};
use types::{BLSPubkey, ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, U256};

pub type E = MinimalEthSpec;

pub const GVR: Root = Root::repeat_byte(0x5a);

/// Which validator has which duty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duties {
    /// Validator `i` attests at slot `i + 1` of epoch 0 and validator 0 proposes at slot 2;
    /// nothing after.
    EpochZero,
    /// In every epoch validator `i` attests and proposes at the epoch's slot `i`.
    EverySlot,
    /// A chain with Gloas from genesis ([`gloas_spec`]) where the only duties are PTC seats
    /// of epoch 0: validator 1 at [`PTC_VOTE_SLOT`] (the node serves its payload attestation
    /// data) and validator 2 at [`PTC_NO_BLOCK_SLOT`] (the node has seen no block: 404).
    Ptc,
}

/// With `Duties::Ptc`: the slot whose payload attestation data the node serves.
pub const PTC_VOTE_SLOT: u64 = 2;
/// With `Duties::Ptc`: a PTC slot for which the node has seen no block.
pub const PTC_NO_BLOCK_SLOT: u64 = 3;

/// What the client published.
#[derive(Debug)]
pub enum Published {
    Attestations(Vec<SingleAttestation>),
    Aggregates(Vec<SignedAggregateAndProof<E>>),
    Block(SignedBlockContents<E>),
    /// The node answered a request for the attestation data of this slot.
    AttestationDataServed(u64),
    /// The node answered a request for a block at this slot.
    BlockServed(u64),
    SyncMessages(Vec<types::altair::SyncCommitteeMessage>),
    Contributions(Vec<types::altair::SignedContributionAndProof<E>>),
    /// PTC votes posted in one request, with the request's `Eth-Consensus-Version`.
    PayloadAttestations(Option<String>, Vec<types::gloas::PayloadAttestationMessage>),
    /// The node answered a request for the payload attestation data of this slot (`found`:
    /// with data; else 404).
    PayloadAttestationDataServed {
        slot: u64,
        found: bool,
    },
}

pub struct Node {
    pub spec: ChainSpec,
    genesis_time: u64,
    pub pubkeys: Vec<BLSPubkey>,
    duties: Duties,
    /// When set, every attestation data and block answer differs from the previous ones for
    /// the same slot (so that a client signing twice would sign conflicting messages).
    vary: bool,
    /// When set, the liveness endpoint reports every validator live (a doppelganger).
    pub live: std::sync::atomic::AtomicBool,
    answers: AtomicU64,
    published: mpsc::UnboundedSender<Published>,
    head_events: Mutex<Vec<mpsc::UnboundedSender<String>>>,
    /// When set, blocks are served blinded (as a node whose relay's bid won); a blinded block
    /// published back is unblinded with the payload served and reported as `Published::Block`.
    pub blinded: std::sync::atomic::AtomicBool,
    /// Blinded blocks published to `/eth/v2/beacon/blinded_blocks` and unblinded.
    pub blinded_published: AtomicU64,
    /// The full blocks behind the blinded blocks served, by slot.
    served: Mutex<std::collections::HashMap<u64, types::electra::BeaconBlock<E>>>,
}

/// The test chain: minimal preset, every fork through Fulu at genesis, one-second slots.
pub fn spec() -> ChainSpec {
    let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    spec.slot_duration_ms = 1_000;
    spec.seconds_per_slot = 1;
    spec
}

/// The test chain of `Duties::Ptc`: [`spec`] with every fork through Gloas at genesis.
pub fn gloas_spec() -> ChainSpec {
    let mut spec = spec().with_forks_at_genesis_through(ForkName::Gloas);
    assert!(spec.gloas_fork_version.is_some(), "minimal.yaml has it");
    spec.slot_duration_ms = 1_000;
    spec
}

pub fn pubkey(index: usize) -> BLSPubkey {
    BLSPubkey::from(*interop_secret_key(index).public_key().compress().as_bytes())
}

fn json_response(value: serde_json::Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
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
            ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Deneb
            | ForkName::Electra
            | ForkName::Fulu
            | ForkName::Gloas => fork.as_str().to_uppercase(),
        };
        map.insert(
            format!("{name}_FORK_VERSION"),
            json!(spec.fork_version(fork).to_string()),
        );
        if fork != ForkName::Phase0 {
            let epoch = spec.fork_epoch(fork).unwrap_or(types::FAR_FUTURE_EPOCH);
            map.insert(format!("{name}_FORK_EPOCH"), json!(epoch.to_string()));
        }
    }
    map.insert("BLOB_SCHEDULE".into(), json!([]));
    serde_json::Value::Object(map)
}

impl Node {
    fn variant(&self) -> u8 {
        if self.vary {
            self.answers.fetch_add(1, Ordering::Relaxed) as u8
        } else {
            0
        }
    }

    /// The attestation data of `slot` (its roots shifted by `variant`).
    pub fn attestation_data(slot: u64, variant: u8) -> AttestationData {
        let epoch = slot / E::slots_per_epoch();
        AttestationData {
            slot,
            index: 0,
            beacon_block_root: Root::repeat_byte((slot as u8).wrapping_add(variant)),
            source: Checkpoint {
                epoch: epoch.saturating_sub(1),
                root: Root::ZERO,
            },
            target: Checkpoint {
                epoch,
                root: Root::repeat_byte(variant),
            },
        }
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

async fn validators_route(State(node): State<Arc<Node>>) -> Response {
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

fn duty_slot(node: &Node, epoch: u64, index: usize) -> Option<u64> {
    match node.duties {
        Duties::EpochZero => (epoch == 0).then_some(index as u64 + 1),
        Duties::EverySlot => Some(epoch * E::slots_per_epoch() + index as u64),
        Duties::Ptc => None,
    }
}

/// Every validator alone in a committee of 4, so it aggregates (the modulo is 1).
async fn attester_duties(State(node): State<Arc<Node>>, Path(epoch): Path<u64>) -> Response {
    let duties: Vec<serde_json::Value> = node
        .pubkeys
        .iter()
        .enumerate()
        .filter_map(|(i, pubkey)| {
            let slot = duty_slot(&node, epoch, i)?;
            Some(json!({
                "pubkey": pubkey.to_string(), "validator_index": i.to_string(),
                "committee_index": "0", "committee_length": "4",
                "committees_at_slot": "1", "validator_committee_index": "0",
                "slot": slot.to_string(),
            }))
        })
        .collect();
    json_response(json!({
        "dependent_root": Root::ZERO.to_string(), "execution_optimistic": false, "data": duties
    }))
}

async fn proposer_duties(State(node): State<Arc<Node>>, Path(epoch): Path<u64>) -> Response {
    let duties: Vec<serde_json::Value> = match node.duties {
        Duties::EpochZero if epoch == 0 => vec![json!({
            "pubkey": node.pubkeys[0].to_string(), "validator_index": "0", "slot": "2",
        })],
        Duties::EpochZero | Duties::Ptc => Vec::new(),
        Duties::EverySlot => node
            .pubkeys
            .iter()
            .enumerate()
            .map(|(i, pubkey)| {
                json!({
                    "pubkey": pubkey.to_string(), "validator_index": i.to_string(),
                    "slot": duty_slot(&node, epoch, i).unwrap().to_string(),
                })
            })
            .collect(),
    };
    json_response(json!({
        "dependent_root": Root::ZERO.to_string(), "execution_optimistic": false, "data": duties
    }))
}

/// The block root the node reports as its head (the sync committee signs it).
pub const HEAD_ROOT: Root = Root::repeat_byte(0xee);

/// With `EpochZero` duties validator 0 holds sync committee positions 0 and 9 (subcommittees
/// 0 and 1 on the minimal preset); none otherwise.
async fn sync_duties(State(node): State<Arc<Node>>) -> Response {
    let data = match node.duties {
        Duties::EpochZero => vec![json!({
            "pubkey": node.pubkeys[0].to_string(), "validator_index": "0",
            "validator_sync_committee_indices": ["0", "9"],
        })],
        Duties::EverySlot | Duties::Ptc => Vec::new(),
    };
    json_response(json!({"execution_optimistic": false, "data": data}))
}

/// With `Duties::Ptc`, epoch 0's PTC seats of the validators asked for; none otherwise.
async fn ptc_duties(
    State(node): State<Arc<Node>>,
    Path(epoch): Path<u64>,
    body: Bytes,
) -> Response {
    let asked: Vec<String> = serde_json::from_slice(&body).unwrap();
    let seats = [(1usize, PTC_VOTE_SLOT), (2, PTC_NO_BLOCK_SLOT)];
    let data: Vec<serde_json::Value> = match node.duties {
        Duties::Ptc if epoch == 0 => seats
            .iter()
            .filter(|(i, _)| asked.contains(&i.to_string()))
            .map(|(i, slot)| {
                json!({
                    "pubkey": node.pubkeys[*i].to_string(),
                    "validator_index": i.to_string(),
                    "slot": slot.to_string(),
                })
            })
            .collect(),
        Duties::EpochZero | Duties::EverySlot | Duties::Ptc => Vec::new(),
    };
    json_response(json!({
        "dependent_root": Root::ZERO.to_string(), "execution_optimistic": false, "data": data
    }))
}

/// The payload attestation data the node serves for `slot`.
pub fn payload_attestation_data(slot: u64) -> types::gloas::PayloadAttestationData {
    types::gloas::PayloadAttestationData {
        beacon_block_root: Root::repeat_byte(slot as u8),
        slot,
        payload_present: true,
        blob_data_available: true,
    }
}

/// Data for [`PTC_VOTE_SLOT`]; 404 (no block seen) for any other slot.
async fn payload_attestation_data_route(
    State(node): State<Arc<Node>>,
    Path(slot): Path<u64>,
) -> Response {
    let found = slot == PTC_VOTE_SLOT;
    let _ = node
        .published
        .send(Published::PayloadAttestationDataServed { slot, found });
    if !found {
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "application/json")],
            json!({"code": 404, "message": format!("no block seen for slot {slot}")}).to_string(),
        )
            .into_response();
    }
    let data = payload_attestation_data(slot);
    json_response(json!({"version": "gloas", "data": serde_json::to_value(&data).unwrap()}))
}

async fn pool_payload_attestations(
    State(node): State<Arc<Node>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> StatusCode {
    let version = headers
        .get("eth-consensus-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let messages = serde_json::from_slice(&body).unwrap();
    let _ = node
        .published
        .send(Published::PayloadAttestations(version, messages));
    StatusCode::OK
}

async fn head_root() -> Response {
    json_response(json!({
        "execution_optimistic": false, "finalized": false,
        "data": {"root": HEAD_ROOT.to_string()}
    }))
}

async fn pool_sync_committees(State(node): State<Arc<Node>>, body: Bytes) -> StatusCode {
    let messages = serde_json::from_slice(&body).unwrap();
    let _ = node.published.send(Published::SyncMessages(messages));
    StatusCode::OK
}

async fn sync_contribution(RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let field = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name))
            .unwrap()
            .to_string()
    };
    let contribution = types::altair::SyncCommitteeContribution::<E> {
        slot: field("slot=").parse().unwrap(),
        beacon_block_root: field("beacon_block_root=").parse().unwrap(),
        subcommittee_index: field("subcommittee_index=").parse().unwrap(),
        aggregation_bits: ssz_types::BitVector::new(),
        signature: types::BLSSignature::repeat_byte(0),
    };
    json_response(json!({ "data": serde_json::to_value(&contribution).unwrap() }))
}

async fn contributions(State(node): State<Arc<Node>>, body: Bytes) -> StatusCode {
    let signed = serde_json::from_slice(&body).unwrap();
    let _ = node.published.send(Published::Contributions(signed));
    StatusCode::OK
}

async fn attestation_data_route(
    State(node): State<Arc<Node>>,
    RawQuery(query): RawQuery,
) -> Response {
    let slot = query_slot(&query);
    let data = Node::attestation_data(slot, node.variant());
    let _ = node.published.send(Published::AttestationDataServed(slot));
    json_response(json!({ "data": serde_json::to_value(&data).unwrap() }))
}

async fn aggregate(RawQuery(query): RawQuery) -> Response {
    let data = Node::attestation_data(query_slot(&query), 0);
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
    let _ = node.published.send(Published::Attestations(attestations));
    StatusCode::OK
}

async fn aggregates(State(node): State<Arc<Node>>, body: Bytes) -> StatusCode {
    let aggregates: Vec<SignedAggregateAndProof<E>> = serde_json::from_slice(&body).unwrap();
    let _ = node.published.send(Published::Aggregates(aggregates));
    StatusCode::OK
}

async fn produce_block(
    State(node): State<Arc<Node>>,
    Path(slot): Path<u64>,
    RawQuery(query): RawQuery,
) -> Response {
    assert!(query.unwrap_or_default().contains("randao_reveal=0x"));
    let bytes = vec![0u8; 8192];
    let mut block =
        types::electra::BeaconBlock::<E>::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
    block.slot = slot;
    block.proposer_index = match node.duties {
        // No proposer duties under `Ptc`: a block asked for anyway is validator 0's.
        Duties::EpochZero | Duties::Ptc => 0,
        Duties::EverySlot => slot % E::slots_per_epoch(),
    };
    block.body.graffiti = Root::repeat_byte(node.variant());
    if node.blinded.load(Ordering::Relaxed) {
        let blinded = beacon_api::BlindedBeaconBlock::from_block(&block);
        node.served.lock().insert(slot, block);
        return block_v3_answer(&node, slot, true, ssz::Encode::as_ssz_bytes(&blinded));
    }
    let contents = BlockContents::<E>::Fulu(FuluContents {
        block,
        kzg_proofs: Vec::new(),
        blobs: Default::default(),
    });
    block_v3_answer(&node, slot, false, contents.as_ssz_bytes())
}

/// A produceBlockV3 answer in SSZ with its metadata headers.
fn block_v3_answer(node: &Node, slot: u64, blinded: bool, ssz: Vec<u8>) -> Response {
    let metadata = ProduceBlockV3Metadata {
        consensus_version: ForkName::Fulu,
        execution_payload_blinded: blinded,
        execution_payload_value: U256::ZERO,
        consensus_block_value: U256::ZERO,
    };
    let _ = node.published.send(Published::BlockServed(slot));
    let mut response = Response::new(Body::from(ssz));
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

async fn publish_blinded_block(State(node): State<Arc<Node>>, body: Bytes) -> StatusCode {
    use ssz::Decode;
    let blinded = beacon_api::SignedBlindedBeaconBlock::<E>::from_ssz_bytes(&body)
        .expect("the client publishes a Fulu blinded block in SSZ");
    let served = node
        .served
        .lock()
        .get(&blinded.message.slot)
        .cloned()
        .expect("a blinded block this node served");
    let signed_block = blinded
        .unblind(served.body.execution_payload)
        .expect("the blinded block commits to the payload served");
    node.blinded_published.fetch_add(1, Ordering::Relaxed);
    let contents = SignedBlockContents::Fulu(beacon_api::block_contents::SignedFulu {
        signed_block,
        kzg_proofs: Vec::new(),
        blobs: Default::default(),
    });
    published_block(&node, contents)
}

async fn publish_block(State(node): State<Arc<Node>>, body: Bytes) -> StatusCode {
    let contents = SignedBlockContents::<E>::from_ssz_bytes_by_fork(&body, ForkName::Fulu)
        .expect("the client publishes Fulu block contents in SSZ");
    published_block(&node, contents)
}

/// Announces a published block on the head stream and reports it.
fn published_block(node: &Node, contents: SignedBlockContents<E>) -> StatusCode {
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
    let _ = node.published.send(Published::Block(contents));
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

async fn liveness(State(node): State<Arc<Node>>, body: Bytes) -> Response {
    let indices: Vec<String> = serde_json::from_slice(&body).unwrap();
    let live = node.live.load(Ordering::Relaxed);
    let data: Vec<serde_json::Value> = indices
        .iter()
        .map(|i| json!({"index": i, "is_live": live}))
        .collect();
    json_response(json!({ "data": data }))
}

/// Starts a node for `validators` interop validators with genesis at `genesis_time`.
pub async fn start_node(
    genesis_time: u64,
    validators: usize,
    duties: Duties,
    vary: bool,
) -> (SocketAddr, mpsc::UnboundedReceiver<Published>) {
    let (addr, received, _) = start_node_with(genesis_time, validators, duties, vary).await;
    (addr, received)
}

/// [`start_node`], also returning the node (to switch `live`).
pub async fn start_node_with(
    genesis_time: u64,
    validators: usize,
    duties: Duties,
    vary: bool,
) -> (SocketAddr, mpsc::UnboundedReceiver<Published>, Arc<Node>) {
    let (published, received) = mpsc::unbounded_channel();
    let node = Arc::new(Node {
        spec: match duties {
            Duties::Ptc => gloas_spec(),
            Duties::EpochZero | Duties::EverySlot => spec(),
        },
        genesis_time,
        pubkeys: (0..validators).map(pubkey).collect(),
        duties,
        vary,
        live: std::sync::atomic::AtomicBool::new(false),
        answers: AtomicU64::new(0),
        published,
        head_events: Mutex::new(Vec::new()),
        blinded: std::sync::atomic::AtomicBool::new(false),
        blinded_published: AtomicU64::new(0),
        served: Mutex::new(std::collections::HashMap::new()),
    });
    let app = Router::new()
        .route("/eth/v1/beacon/genesis", get(genesis))
        .route("/eth/v1/config/spec", get(config))
        .route("/eth/v1/node/syncing", get(syncing))
        .route(
            "/eth/v1/beacon/states/{state}/validators",
            post(validators_route),
        )
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
        .route("/eth/v2/beacon/blinded_blocks", post(publish_blinded_block))
        .route("/eth/v1/validator/register_validator", post(accept))
        .route("/eth/v1/events", get(events))
        .route(
            "/eth/v1/validator/beacon_committee_subscriptions",
            post(accept),
        )
        .route("/eth/v1/validator/prepare_beacon_proposer", post(accept))
        .route("/eth/v1/validator/liveness/{epoch}", post(liveness))
        .route("/eth/v1/beacon/blocks/{block_id}/root", get(head_root))
        .route(
            "/eth/v1/beacon/pool/sync_committees",
            post(pool_sync_committees),
        )
        .route(
            "/eth/v1/validator/sync_committee_contribution",
            get(sync_contribution),
        )
        .route(
            "/eth/v1/validator/contribution_and_proofs",
            post(contributions),
        )
        .route(
            "/eth/v1/validator/sync_committee_subscriptions",
            post(accept),
        )
        .route("/eth/v1/validator/duties/ptc/{epoch}", post(ptc_duties))
        .route(
            "/eth/v1/validator/payload_attestation_data/{slot}",
            get(payload_attestation_data_route),
        )
        .route(
            "/eth/v1/beacon/pool/payload_attestations",
            post(pool_payload_attestations),
        )
        .with_state(Arc::clone(&node));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, received, node)
}

/// `bls.Verify(pubkey, root, signature)`.
pub fn verify(pubkey: &BLSPubkey, root: Root, signature: &types::BLSSignature) -> bool {
    let public = bls::PublicKey::from_bytes(pubkey.as_slice()).unwrap();
    let signature = bls::Signature::deserialize(signature.as_slice()).unwrap();
    bls::verify(&public, root.as_slice(), &signature)
}
