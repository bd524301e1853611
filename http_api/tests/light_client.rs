//! The light-client endpoints over a real chain (minimal preset, Fulu at genesis) whose blocks
//! carry full sync aggregates: each endpoint serves in JSON (`{version, data}`) and SSZ exactly
//! what the chain's light-client server holds, with the version header, and answers unknown or
//! malformed requests with the spec's 404 and 400.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use beacon_api::{BeaconEvent, BeaconNodeHttpClient, EventTopic, ForkVersionedResponse, Timeouts};
use beacon_chain::harness::{ChainHarness, HarnessConfig};
use beacon_chain::{BeaconChain, ManualSlotClock, ProducerConfig};
use http_api::{ApiConfig, NoNetwork};
use ssz::Encode;
use state_harness::{AttestationSpec, BlockContents, build_block};
use state_processing::CachedBeaconState;
use types::{ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, Slot, electra};

mod common;

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
/// Bound on every request (a hang fails the test, not a timing).
const WAIT: Duration = Duration::from_secs(60);

fn time_ms(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 1000
}

struct Node {
    base: String,
    chain: Arc<BeaconChain<E>>,
    clock: Arc<ManualSlotClock>,
    /// The head block's post-state, to build on.
    head_state: CachedBeaconState<E>,
    spec: Arc<ChainSpec>,
    genesis_root: Root,
    harness: ChainHarness<E>,
    _server: common::Server<E>,
}

/// A chain from an interop genesis with `blocks` blocks of full sync participation, served.
async fn node(blocks: Slot) -> Node {
    // The harness's chain (minimal preset, Fulu at genesis, 64 validators); nothing is
    // produced and no payload is sent to the execution client.
    let harness = HarnessConfig {
        genesis_time: GENESIS_TIME,
        producer: ProducerConfig::default(),
        attach_execution_layer: false,
        ..HarnessConfig::default()
    }
    .build::<E>()
    .await
    .unwrap();
    let (spec, clock) = (harness.spec.clone(), harness.clock.clone());
    let genesis_root = harness.chain.head().block_root;
    let mut parent = harness.chain.head().state.clone();
    for slot in 1..=blocks {
        let contents = BlockContents {
            attestations: vec![AttestationSpec::whole_slot(slot - 1)],
            ..BlockContents::default()
        };
        let built = build_block(&parent, slot, &contents, &spec).unwrap();
        clock.set_ms(time_ms(&spec, slot));
        harness.import_valid(Arc::new(built.block), &[]).unwrap();
        parent = built.post;
    }
    let server = common::serve(
        &harness,
        Arc::new(NoNetwork::new()),
        prometheus::Registry::new(),
        ApiConfig::default(),
    )
    .await;
    Node {
        base: server.base.clone(),
        chain: harness.chain.clone(),
        clock,
        head_state: parent,
        spec,
        genesis_root,
        harness,
        _server: server,
    }
}

impl Node {
    /// Builds and imports the block at `slot` on the head (full sync participation, votes for
    /// the slot before).
    fn import_next(&mut self, slot: Slot) {
        let contents = BlockContents {
            attestations: vec![AttestationSpec::whole_slot(slot - 1)],
            ..BlockContents::default()
        };
        let built = build_block(&self.head_state, slot, &contents, &self.spec).unwrap();
        self.clock.set_ms(time_ms(&self.spec, slot));
        self.harness
            .import_valid(Arc::new(built.block), &[])
            .unwrap();
        self.head_state = built.post;
    }

    async fn get(&self, path: &str, accept: &str) -> reqwest::Response {
        let request = reqwest::Client::new()
            .get(format!("{}{path}", self.base))
            .header("accept", accept);
        tokio::time::timeout(WAIT, request.send())
            .await
            .unwrap()
            .unwrap()
    }

    /// The JSON body `{version, data}` of a 200 with the version header `fulu`.
    async fn versioned_json(&self, path: &str) -> serde_json::Value {
        let response = self.get(path, "application/json").await;
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(
            response.headers()["eth-consensus-version"],
            "fulu",
            "{path}"
        );
        let body: serde_json::Value =
            serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!(body["version"], "fulu", "{path}");
        body
    }

    /// The SSZ body of a 200.
    async fn ssz(&self, path: &str) -> Vec<u8> {
        let response = self.get(path, "application/octet-stream").await;
        assert_eq!(response.status(), 200, "{path}");
        response.bytes().await.unwrap().to_vec()
    }

    async fn json(&self, path: &str) -> serde_json::Value {
        let response = self.get(path, "application/json").await;
        assert_eq!(response.status(), 200, "{path}");
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
    }

    async fn status(&self, path: &str) -> u16 {
        self.get(path, "application/json").await.status().as_u16()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn light_client_endpoints_serve_the_chains_data_in_json_and_ssz() {
    let node = node(10).await;
    let chain = &node.chain;

    // Bootstrap of the anchor (genesis).
    let bootstrap = chain
        .light_client_bootstrap(&node.genesis_root)
        .unwrap()
        .unwrap();
    let path = format!(
        "/eth/v1/beacon/light_client/bootstrap/{}",
        node.genesis_root
    );
    let body = node.versioned_json(&path).await;
    let data: electra::LightClientBootstrap<E> =
        serde_json::from_value(body["data"].clone()).unwrap();
    assert_eq!(types::LightClientBootstrap::Fulu(data), bootstrap);
    assert_eq!(node.ssz(&path).await, bootstrap.as_ssz_bytes());
    let unknown = format!(
        "/eth/v1/beacon/light_client/bootstrap/{}",
        Root::repeat_byte(7)
    );
    assert_eq!(node.status(&unknown).await, 404);
    assert_eq!(
        node.status("/eth/v1/beacon/light_client/bootstrap/0x12")
            .await,
        400
    );

    // The best update of period 0, as an array in JSON and length-prefixed chunks in SSZ.
    let updates = chain.light_client_updates_by_range(0, 4).unwrap();
    assert_eq!(updates.len(), 1, "one period so far");
    let path = "/eth/v1/beacon/light_client/updates?start_period=0&count=4";
    let response = node.get(path, "application/json").await;
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let items = body.as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["version"], "fulu");
    let data: electra::LightClientUpdate<E> =
        serde_json::from_value(items[0]["data"].clone()).unwrap();
    assert_eq!(types::LightClientUpdate::Fulu(data.clone()), updates[0]);
    let bytes = node.ssz(path).await;
    let payload = updates[0].as_ssz_bytes();
    let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!(len, 4 + payload.len());
    assert_eq!(bytes.len(), 8 + len, "one chunk");
    let digest = node.spec.compute_fork_digest(
        chain.genesis_validators_root(),
        data.attested_header.beacon.slot / E::slots_per_epoch(),
    );
    assert_eq!(&bytes[8..12], digest.as_slice());
    assert_eq!(&bytes[12..], payload.as_slice());
    let none = "/eth/v1/beacon/light_client/updates?start_period=5&count=4";
    assert_eq!(node.json(none).await, serde_json::json!([]));
    assert_eq!(
        node.status("/eth/v1/beacon/light_client/updates?start_period=0")
            .await,
        400
    );
    assert_eq!(
        node.status("/eth/v1/beacon/light_client/updates?start_period=x&count=1")
            .await,
        400
    );

    // The latest finality and optimistic updates: signed at the head, attesting its parent.
    let finality = chain.light_client_finality_update().unwrap().unwrap();
    assert_eq!(finality.signature_slot(), 10);
    let path = "/eth/v1/beacon/light_client/finality_update";
    let body = node.versioned_json(path).await;
    let data: electra::LightClientFinalityUpdate<E> =
        serde_json::from_value(body["data"].clone()).unwrap();
    assert_eq!(types::LightClientFinalityUpdate::Fulu(data), finality);
    assert_eq!(node.ssz(path).await, finality.as_ssz_bytes());

    let optimistic = chain.light_client_optimistic_update().unwrap().unwrap();
    let path = "/eth/v1/beacon/light_client/optimistic_update";
    let body = node.versioned_json(path).await;
    let data: electra::LightClientOptimisticUpdate<E> =
        serde_json::from_value(body["data"].clone()).unwrap();
    assert_eq!(data.attested_header.beacon.slot, 9);
    assert_eq!(types::LightClientOptimisticUpdate::Fulu(data), optimistic);
    assert_eq!(node.ssz(path).await, optimistic.as_ssz_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_without_sync_signatures_has_no_latest_updates() {
    let node = node(0).await;
    assert_eq!(
        node.status("/eth/v1/beacon/light_client/finality_update")
            .await,
        404
    );
    assert_eq!(
        node.status("/eth/v1/beacon/light_client/optimistic_update")
            .await,
        404
    );
    let path = format!(
        "/eth/v1/beacon/light_client/bootstrap/{}",
        node.genesis_root
    );
    assert_eq!(node.status(&path).await, 200);
}

/// The next light-client event on `events` (others are skipped), within the test's bound.
async fn next_light_client_event(events: &mut beacon_api::EventStream) -> BeaconEvent<E> {
    loop {
        let event = tokio::time::timeout(WAIT, events.next_event::<E>())
            .await
            .expect("an event before the wait's bound")
            .expect("the stream stays open")
            .unwrap();
        if matches!(
            event,
            BeaconEvent::LightClientFinalityUpdate(_) | BeaconEvent::LightClientOptimisticUpdate(_)
        ) {
            return event;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_light_client_updates_are_sent_as_versioned_events() {
    let mut node = node(4).await;
    let client =
        BeaconNodeHttpClient::new(node.base.parse().unwrap(), Timeouts::default()).unwrap();
    let mut events = client
        .get_events(&[
            EventTopic::LightClientFinalityUpdate,
            EventTopic::LightClientOptimisticUpdate,
        ])
        .await
        .unwrap();

    // A new head attests a later block: a new optimistic update; the finalized header (genesis)
    // did not advance, so no finality update event.
    node.import_next(5);
    let optimistic = node
        .chain
        .light_client_optimistic_update()
        .unwrap()
        .unwrap();
    assert_eq!(
        next_light_client_event(&mut events).await,
        BeaconEvent::LightClientOptimisticUpdate(ForkVersionedResponse::new(
            ForkName::Fulu,
            optimistic
        ))
    );

    // Blocks until the finalized header advances past genesis.
    let finalized_slot = |node: &Node| {
        let update = node.chain.light_client_finality_update().unwrap().unwrap();
        match update {
            types::LightClientFinalityUpdate::Fulu(u) => u.finalized_header.beacon.slot,
            other @ (types::LightClientFinalityUpdate::Altair(_)
            | types::LightClientFinalityUpdate::Bellatrix(_)
            | types::LightClientFinalityUpdate::Capella(_)
            | types::LightClientFinalityUpdate::Deneb(_)
            | types::LightClientFinalityUpdate::Electra(_)
            | types::LightClientFinalityUpdate::Gloas(_)) => {
                panic!("a Fulu chain's update is Fulu: {other:?}")
            }
        }
    };
    let mut slot = 5;
    while finalized_slot(&node) == 0 {
        slot += 1;
        assert!(slot < 64, "finality advances within a few epochs");
        node.import_next(slot);
    }
    let finality = node.chain.light_client_finality_update().unwrap().unwrap();
    let expected = BeaconEvent::LightClientFinalityUpdate(ForkVersionedResponse::new(
        ForkName::Fulu,
        finality,
    ));
    // Optimistic events of the blocks in between may come first.
    loop {
        let event = next_light_client_event(&mut events).await;
        if let BeaconEvent::LightClientFinalityUpdate(_) = &event {
            assert_eq!(event, expected);
            break;
        }
    }
}
