//! Arbor's own endpoints over a real chain from an interop genesis (minimal preset, Fulu at
//! genesis): the block timeline as JSON, the status the page reads, the page itself. Then a
//! Gloas chain (every fork through Gloas at genesis, the mock execution client attached, the
//! blocks self-built by `state_harness::gloas`): the payload status and PTC participation of
//! FULL, EMPTY and PENDING blocks, and the envelope's events on the timeline.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use beacon_chain::harness::{ChainHarness, HarnessConfig};
use beacon_chain::timeline::SeenVia;
use beacon_chain::{BlockProcessed, ExecutionStatus, ManualSlotClock, ProducerConfig};
use http_api::{ApiConfig, ApiContext, NoNetwork};
use mock_execution_layer::MockPayloadStatus;
use ssz::Encode;
use state_harness::BuiltBlock;
use state_harness::gloas::{
    GloasBlockContents, ParentPayload, build_gloas_block, payload_vote, self_built_envelope,
};
use state_harness::{BlockContents, build_block};
use state_processing::CachedBeaconState;
use state_processing::per_block::AlwaysValid;
use types::typenum::Unsigned;
use types::{ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock, Slot};

mod common;

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const VALIDATORS: usize = 64;
/// Bound on every request (a hang fails the test, not a timing).
const WAIT: Duration = Duration::from_secs(60);

struct Node {
    base: String,
    ctx: Arc<ApiContext<E>>,
    clock: Arc<ManualSlotClock>,
    spec: Arc<ChainSpec>,
    genesis: CachedBeaconState<E>,
    genesis_root: Root,
    registry: prometheus::Registry,
    _harness: ChainHarness<E>,
    _server: common::Server<E>,
}

/// `ms` into `slot`, in milliseconds since the UNIX epoch.
fn time_ms(spec: &ChainSpec, slot: Slot, ms: u64) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + ms
}

/// A node serving the API on 127.0.0.1:0, its clock at genesis. No execution client is
/// called: blocks are imported with an engine that accepts every payload.
async fn node() -> Node {
    let harness = HarnessConfig {
        genesis_time: GENESIS_TIME,
        validators: VALIDATORS,
        producer: ProducerConfig::default(),
        attach_execution_layer: false,
        ms_into_slot: 0,
        ..HarnessConfig::default()
    }
    .build::<E>()
    .await
    .unwrap();
    let head = harness.chain.head();
    let (genesis, genesis_root) = (head.state.clone(), head.block_root);
    let registry = prometheus::Registry::new();
    let server = common::serve(
        &harness,
        Arc::new(NoNetwork::new()),
        registry.clone(),
        ApiConfig::default(),
    )
    .await;
    Node {
        base: server.base.clone(),
        ctx: server.ctx.clone(),
        clock: harness.clock.clone(),
        spec: harness.spec.clone(),
        genesis,
        genesis_root,
        registry,
        _harness: harness,
        _server: server,
    }
}

impl Node {
    /// The block at `slot` on `parent`: seen on gossip `seen_ms` into its slot, gossip-verified
    /// and imported `verified_ms` into it, then made the head.
    fn gossip_block(
        &self,
        parent: &CachedBeaconState<E>,
        slot: Slot,
        seen_ms: u64,
        verified_ms: u64,
    ) -> (SignedBeaconBlock<E>, CachedBeaconState<E>) {
        let built = build_block(parent, slot, &BlockContents::default(), &self.spec).unwrap();
        let chain = &self.ctx.chain;
        let root = built.block.canonical_root();
        self.clock.set_ms(time_ms(&self.spec, slot, seen_ms));
        chain.record_block_seen(root, slot, SeenVia::Gossip);
        let now = time_ms(&self.spec, slot, verified_ms);
        self.clock.set_ms(now);
        let verified = chain
            .verify_block_for_gossip(Arc::new(built.block.clone()), now)
            .unwrap();
        let processed = chain
            .process_gossip_block(verified, &AlwaysValid, ExecutionStatus::Valid)
            .unwrap();
        assert!(matches!(processed, BlockProcessed::Imported(r) if r == root));
        chain.recompute_head().unwrap();
        (built.block, built.post)
    }

    async fn get(&self, path: &str) -> (u16, String, serde_json::Value) {
        let response = tokio::time::timeout(
            WAIT,
            reqwest::Client::new()
                .get(format!("{}{path}", self.base))
                .send(),
        )
        .await
        .unwrap()
        .unwrap();
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let bytes = response.bytes().await.unwrap();
        let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
        let text = if json.is_null() {
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            content_type
        };
        (status, text, json)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeline_of_a_block_is_served_by_any_block_id() {
    let n = node().await;
    let (block1, post1) = n.gossip_block(&n.genesis, 1, 120, 180);
    let (block2, _) = n.gossip_block(&post1, 2, 40, 90);
    let root1 = block1.canonical_root();
    let root2 = block2.canonical_root();

    for id in ["1".to_string(), format!("{root1}")] {
        let (status, _, body) = n.get(&format!("/arbor/v1/blocks/{id}/timeline")).await;
        assert_eq!(status, 200, "{body}");
        let t = &body["data"];
        assert_eq!(t["block_root"], root1.to_string().as_str());
        assert_eq!(t["slot"], "1");
        assert_eq!(
            t["seen"],
            serde_json::json!({"delay_ms": 120, "via": "gossip"})
        );
        assert_eq!(t["gossip_verified"]["delay_ms"], 180);
        // No blobs: available as soon as it passed gossip validation.
        assert_eq!(
            t["available"],
            serde_json::json!({"delay_ms": 180, "via": "no_blobs"})
        );
        assert_eq!(t["imported"]["delay_ms"], 180);
        assert_eq!(t["head"]["delay_ms"], 180);
    }
    let (status, _, body) = n.get("/arbor/v1/blocks/head/timeline").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["block_root"], root2.to_string().as_str());
    assert_eq!(body["data"]["seen"]["delay_ms"], 40);
    assert_eq!(body["data"]["imported"]["delay_ms"], 90);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_untracked_blocks_are_404_and_bad_ids_400() {
    let n = node().await;
    let _ = n.gossip_block(&n.genesis, 1, 100, 150);
    // An unknown root, an empty slot, a slot past the head: the spec's 404 body.
    for id in [format!("{}", Root::repeat_byte(7)), "2".into(), "9".into()] {
        let (status, _, body) = n.get(&format!("/arbor/v1/blocks/{id}/timeline")).await;
        assert_eq!(status, 404, "{id}: {body}");
        assert_eq!(body["code"], 404);
        assert!(body["message"].is_string());
    }
    // The anchor is known but was never seen or imported here: it has no timeline.
    for id in ["genesis".to_string(), format!("{}", n.genesis_root)] {
        let (status, _, body) = n.get(&format!("/arbor/v1/blocks/{id}/timeline")).await;
        assert_eq!(status, 404, "{id}: {body}");
        assert!(
            body["message"].as_str().unwrap().contains("no timeline"),
            "{body}"
        );
    }
    for id in ["heads", "0x12", "-1"] {
        let (status, _, body) = n.get(&format!("/arbor/v1/blocks/{id}/timeline")).await;
        assert_eq!(status, 400, "{id}: {body}");
        assert_eq!(body["code"], 400);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_lists_the_last_blocks_and_the_processor_queues() {
    let n = node().await;
    // A processor's queue gauge in the registry the API reads (a node without p2p has none).
    let queues = prometheus::IntGaugeVec::new(
        prometheus::Opts::new("beacon_processor_queue_length", "queue"),
        &["kind"],
    )
    .unwrap();
    n.registry.register(Box::new(queues.clone())).unwrap();
    queues.with_label_values(&["gossip_attestation"]).set(5);
    queues.with_label_values(&["gossip_block"]).set(0);

    let (status, _, body) = n.get("/arbor/v1/status").await;
    assert_eq!(status, 200, "{body}");
    let blocks = body["data"]["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "the anchor alone: {body}");
    assert!(blocks[0]["timeline"].is_null());

    let (block1, post1) = n.gossip_block(&n.genesis, 1, 100, 150);
    let (block3, _) = n.gossip_block(&post1, 3, 20, 60);
    let (status, _, body) = n.get("/arbor/v1/status").await;
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["head_slot"], "3");
    assert_eq!(
        data["head_root"],
        block3.canonical_root().to_string().as_str()
    );
    assert_eq!(data["clock_slot"], "3");
    let blocks = data["blocks"].as_array().unwrap();
    let slots: Vec<&str> = blocks.iter().map(|b| b["slot"].as_str().unwrap()).collect();
    assert_eq!(slots, ["3", "1", "0"], "newest first, through parents");
    assert_eq!(
        blocks[1]["block_root"],
        block1.canonical_root().to_string().as_str()
    );
    assert_eq!(
        blocks[1]["proposer_index"],
        block1.proposer_index().to_string().as_str()
    );
    assert_eq!(blocks[1]["blob_count"], 0);
    assert_eq!(blocks[1]["columns_stored"], 0);
    assert_eq!(blocks[1]["column_indices"], serde_json::json!([]));
    assert_eq!(blocks[1]["columns_total"], 128);
    assert_eq!(blocks[1]["timeline"]["seen"]["delay_ms"], 100);
    assert_eq!(blocks[0]["timeline"]["imported"]["delay_ms"], 60);
    assert!(blocks[2]["timeline"].is_null(), "the anchor has none");
    // Before Gloas: no payload status nor PTC participation (absent, not zeros), and no
    // envelope on the timeline.
    for block in blocks {
        let block = block.as_object().unwrap();
        assert!(!block.contains_key("payload_status"), "{block:?}");
        assert!(!block.contains_key("ptc_participation"), "{block:?}");
    }
    for key in ["envelope_seen", "envelope_imported"] {
        assert!(blocks[1]["timeline"][key].is_null(), "{key}: {body}");
    }
    let queues = data["processor_queues"].as_array().unwrap();
    let attestation = queues
        .iter()
        .find(|q| q["kind"] == "gossip_attestation")
        .unwrap();
    assert_eq!(attestation["length"], 5);
    assert_eq!(attestation["dropped_total"], 0);
    assert_eq!(queues.len(), 2);
    assert!(data["processor_workers"].as_array().unwrap().is_empty());
    // A node without p2p has no peers to group.
    for key in ["peers_by_client", "peers_by_custody", "peer_clients"] {
        assert_eq!(data[key], serde_json::json!([]), "{key}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_is_served_at_the_root() {
    let n = node().await;
    let response = tokio::time::timeout(
        WAIT,
        reqwest::Client::new().get(format!("{}/", n.base)).send(),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{:?}",
        response.headers()
    );
    let page = response.text().await.unwrap();
    assert!(page.contains("<title>Arbor status</title>"));
    // Another path is still the API's 404 body, not the page.
    let (status, _, body) = n.get("/nothing/here").await;
    assert_eq!(status, 404);
    assert_eq!(body["code"], 404);
}

/// A Gloas node: every fork through Gloas at genesis, the mock execution client attached.
async fn gloas_node() -> (ChainHarness<E>, common::Server<E>) {
    let harness = HarnessConfig {
        spec: ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas),
        genesis_time: GENESIS_TIME,
        validators: VALIDATORS,
        producer: ProducerConfig::default(),
        ..HarnessConfig::default()
    }
    .build::<E>()
    .await
    .unwrap();
    let server = common::serve(
        &harness,
        Arc::new(NoNetwork::new()),
        prometheus::Registry::new(),
        ApiConfig::default(),
    )
    .await;
    (harness, server)
}

/// Builds the Gloas block at `slot` on `parent` (a post-state), on the parent's payload or
/// beside it, with the PTC votes on its parent in `payload_attestations` aggregates, moves the
/// clock `ms` into its slot and imports it.
fn import_gloas(
    h: &ChainHarness<E>,
    parent: &CachedBeaconState<E>,
    slot: Slot,
    parent_payload: ParentPayload,
    payload_attestations: usize,
    ms: u64,
) -> (BuiltBlock<E>, Root) {
    let built = build_gloas_block(
        parent,
        slot,
        &GloasBlockContents {
            base: Default::default(),
            payload_attestations,
            parent_payload,
        },
        &h.spec,
    )
    .unwrap();
    h.clock.set_ms(time_ms(&h.spec, slot, ms));
    let root = h
        .chain
        .import_block(
            Arc::new(built.block.clone()),
            &[],
            &AlwaysValid,
            ExecutionStatus::Valid,
        )
        .unwrap();
    (built, root)
}

async fn get_json(base: &str, path: &str) -> serde_json::Value {
    let response = tokio::time::timeout(
        WAIT,
        reqwest::Client::new().get(format!("{base}{path}")).send(),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(response.status(), 200, "{path}");
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

/// Slot 1 FULL (its envelope published through the API, its child built on the payload and
/// packing every PTC position's vote, half saying present), slot 2 EMPTY (no envelope, its
/// child built beside it and packing no vote), slot 3 the head, PENDING until its envelope
/// comes by req/resp and it is FULL; the envelopes' first sighting and import on their blocks'
/// timelines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_shows_the_payload_status_and_ptc_participation_of_gloas_blocks() {
    let (h, server) = gloas_node().await;
    let base = &server.base;
    let ptc_size = <E as EthSpec>::PtcSize::to_u64();
    let genesis = h.chain.head().state.clone();

    // Slot 1 (the genesis payload is not known: beside it); its envelope POSTed 2.5 s in.
    let (b1, r1) = import_gloas(&h, &genesis, 1, ParentPayload::Empty, 0, 400);
    let envelope = self_built_envelope(&b1, &h.spec).unwrap();
    h.mock.set_payload_status(
        envelope.message.payload.block_hash,
        MockPayloadStatus::Valid,
    );
    h.clock.set_ms(time_ms(&h.spec, 1, 2_500));
    let published = tokio::time::timeout(
        WAIT,
        reqwest::Client::new()
            .post(format!("{base}/eth/v1/beacon/execution_payload_envelopes"))
            .header("content-type", "application/octet-stream")
            .header("eth-consensus-version", "gloas")
            .header("eth-blob-data-included", "false")
            .body(envelope.as_ssz_bytes())
            .send(),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(published.status(), 200);
    assert!(h.chain.is_payload_verified(&r1));

    // Slot 2 on slot 1's payload, with the PTC's votes on slot 1 in two aggregates; no
    // envelope. Slot 3 beside slot 2's payload, with no votes.
    let (b2, r2) = import_gloas(&h, &b1.post, 2, ParentPayload::Full, 2, 300);
    let (b3, r3) = import_gloas(&h, &b2.post, 3, ParentPayload::Empty, 0, 200);
    assert_eq!(h.chain.head().block_root, r3);

    let body = get_json(base, "/arbor/v1/status").await;
    let blocks = body["data"]["blocks"].as_array().unwrap();
    let slots: Vec<&str> = blocks.iter().map(|b| b["slot"].as_str().unwrap()).collect();
    assert_eq!(slots, ["3", "2", "1", "0"], "{body}");
    let roots: Vec<&str> = blocks[..3]
        .iter()
        .map(|b| b["block_root"].as_str().unwrap())
        .collect();
    assert_eq!(roots, [r3, r2, r1].map(|r| r.to_string()));

    // The head: its payload may still come; nothing packed its votes yet.
    assert_eq!(blocks[0]["payload_status"], "PENDING", "{body}");
    assert!(
        blocks[0]
            .as_object()
            .unwrap()
            .contains_key("ptc_participation")
            && blocks[0]["ptc_participation"].is_null(),
        "{body}"
    );
    // Slot 2: its child built beside its payload, and packed no vote on it.
    assert_eq!(blocks[1]["payload_status"], "EMPTY", "{body}");
    assert_eq!(
        blocks[1]["ptc_participation"],
        serde_json::json!({"votes": 0, "payload_present": 0, "committee_size": ptc_size})
    );
    // Slot 1: its child built on its payload and packed every PTC position's vote, the first
    // aggregate's half saying present.
    assert!(
        payload_vote(0).0 && !payload_vote(1).0,
        "the harness's votes changed"
    );
    assert_eq!(blocks[2]["payload_status"], "FULL", "{body}");
    assert_eq!(
        blocks[2]["ptc_participation"],
        serde_json::json!({
            "votes": ptc_size,
            "payload_present": ptc_size / 2,
            "committee_size": ptc_size,
        })
    );
    // Slot 1's envelope on its timeline: first seen through the API, imported (the mock
    // answered at once; the clock did not move).
    let t1 = &blocks[2]["timeline"];
    assert_eq!(
        t1["envelope_seen"],
        serde_json::json!({"delay_ms": 2_500, "via": "api"})
    );
    assert_eq!(
        t1["envelope_imported"],
        serde_json::json!({"delay_ms": 2_500})
    );
    assert_eq!(t1["imported"]["delay_ms"], 400);
    for key in ["envelope_seen", "envelope_imported"] {
        assert!(blocks[1]["timeline"][key].is_null(), "{key}: {body}");
        assert!(blocks[0]["timeline"][key].is_null(), "{key}: {body}");
    }

    // Slot 3's envelope by req/resp 3.2 s into its slot: the head FULL.
    let envelope3 = self_built_envelope(&b3, &h.spec).unwrap();
    h.mock.set_payload_status(
        envelope3.message.payload.block_hash,
        MockPayloadStatus::Valid,
    );
    h.clock.set_ms(time_ms(&h.spec, 3, 3_200));
    let chain = h.chain.clone();
    let status = tokio::task::spawn_blocking(move || {
        chain
            .import_rpc_execution_payload_envelope(Arc::new(envelope3), &[])
            .unwrap()
            .status
    })
    .await
    .unwrap();
    assert_eq!(status, ExecutionStatus::Valid);
    let body = get_json(base, "/arbor/v1/status").await;
    let head = &body["data"]["blocks"][0];
    assert_eq!(head["block_root"], r3.to_string().as_str());
    assert_eq!(head["payload_status"], "FULL", "{body}");
    // The timeline endpoint serves the same events.
    let t3 = get_json(base, "/arbor/v1/blocks/head/timeline").await;
    assert_eq!(
        t3["data"]["envelope_seen"],
        serde_json::json!({"delay_ms": 3_200, "via": "rpc"})
    );
    assert_eq!(
        t3["data"]["envelope_imported"],
        serde_json::json!({"delay_ms": 3_200})
    );
    assert_eq!(t3["data"]["imported"]["delay_ms"], 200);
}
