//! The server on 127.0.0.1:0 over a real chain from an interop genesis (minimal preset, Fulu
//! at genesis), driven by `beacon_api`'s typed client so that client and server check each
//! other, and by raw requests for negotiation and error cases.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use beacon_api::{
    BeaconEvent, BeaconNodeHttpClient, BlockId, ClientError, EventTopic, StateId, Timeouts,
    ValidatorId, ValidatorStatusFilter, ValidatorsRequestBody,
};
use beacon_chain::harness::{ChainHarness, HarnessConfig};
use beacon_chain::{ExecutionStatus, ManualSlotClock, ProducerConfig};
use http_api::{ApiConfig, ApiContext, NoNetwork};
use state_harness::{BlockContents, build_block};
use state_processing::CachedBeaconState;
use state_processing::genesis::interop_secret_key;
use state_processing::per_block::AlwaysValid;
use tree_hash::TreeHash;
use types::electra::{AttestationData, SingleAttestation};
use types::{
    BLSSignature, ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock, Slot,
    signing,
};

mod common;

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const VALIDATORS: usize = 64;
/// Bound on every wait for the server or an event (a hang fails the test, not a timing).
const WAIT: Duration = Duration::from_secs(60);

struct Node {
    client: BeaconNodeHttpClient,
    base: String,
    ctx: Arc<ApiContext<E>>,
    network: Arc<NoNetwork>,
    clock: Arc<ManualSlotClock>,
    spec: Arc<ChainSpec>,
    genesis: CachedBeaconState<E>,
    genesis_root: Root,
    /// The chain and its mock execution client (`harness.mock`).
    harness: ChainHarness<E>,
    _server: common::Server<E>,
}

/// One second into `slot`, in milliseconds since the UNIX epoch.
fn time_ms(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 1000
}

async fn node_with(config: ApiConfig) -> Node {
    // The harness's chain (minimal preset, Fulu at genesis, 64 validators) with the producer's
    // default options and no execution client attached to the chain.
    let harness = HarnessConfig {
        genesis_time: GENESIS_TIME,
        validators: VALIDATORS,
        producer: ProducerConfig::default(),
        attach_execution_layer: false,
        ..HarnessConfig::default()
    }
    .build::<E>()
    .await
    .unwrap();
    let head = harness.chain.head();
    let (genesis, genesis_root) = (head.state.clone(), head.block_root);
    let network = Arc::new(NoNetwork::new());
    let server = common::serve(
        &harness,
        network.clone(),
        prometheus::Registry::new(),
        config,
    )
    .await;
    let base = server.base.clone();
    let client =
        BeaconNodeHttpClient::from_url_str(&base, Timeouts::from_slot_duration(WAIT)).unwrap();
    Node {
        client,
        base,
        ctx: server.ctx.clone(),
        network,
        clock: harness.clock.clone(),
        spec: harness.spec.clone(),
        genesis,
        genesis_root,
        harness,
        _server: server,
    }
}

async fn node() -> Node {
    node_with(ApiConfig::default()).await
}

impl Node {
    /// Builds the block at `slot` on `parent` (no operations), gossip-validates and imports it.
    fn import(
        &self,
        parent: &CachedBeaconState<E>,
        slot: Slot,
    ) -> (SignedBeaconBlock<E>, CachedBeaconState<E>) {
        let built = build_block(parent, slot, &BlockContents::default(), &self.spec).unwrap();
        let now = time_ms(&self.spec, slot);
        self.clock.set_ms(now);
        let chain = &self.ctx.chain;
        let verified = chain
            .verify_block_for_gossip(Arc::new(built.block.clone()), now)
            .unwrap();
        self.harness.import_valid(verified.block, &[]).unwrap();
        (built.block, built.post)
    }

    fn http(&self) -> reqwest::Client {
        reqwest::Client::new()
    }

    async fn get(&self, path: &str, accept: Option<&str>) -> reqwest::Response {
        let mut request = self.http().get(format!("{}{path}", self.base));
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        tokio::time::timeout(WAIT, request.send())
            .await
            .unwrap()
            .unwrap()
    }

    /// `SingleAttestation` of `validator` (in committee `index` at `data.slot`), signed with its
    /// interop key, or with `signer`'s key when given (a wrong signature).
    fn single_attestation(
        &self,
        validator: u64,
        index: u64,
        data: &AttestationData,
        signer: Option<u64>,
    ) -> SingleAttestation {
        let domain = signing::compute_domain(
            signing::DOMAIN_BEACON_ATTESTER,
            self.spec.compute_fork_version(data.target.epoch),
            self.ctx.chain.genesis_validators_root(),
        );
        let root = signing::compute_signing_root(data, domain);
        let key = interop_secret_key(signer.unwrap_or(validator) as usize);
        SingleAttestation {
            committee_index: index,
            attester_index: validator,
            data: data.clone(),
            signature: BLSSignature::from(key.sign(root.as_slice()).serialize()),
        }
    }
}

/// Every position of every duty names its validator's key in `committee`, and the duties cover
/// the whole committee.
fn assert_sync_duties_are(duties: &[beacon_api::SyncDuty], committee: &[types::BLSPubkey]) {
    let mut positions = 0;
    for duty in duties {
        for p in &duty.validator_sync_committee_indices {
            assert_eq!(committee[*p as usize], duty.pubkey, "position {p}");
            positions += 1;
        }
    }
    assert_eq!(positions, committee.len());
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn json_of<T: serde::de::DeserializeOwned>(response: reqwest::Response) -> T {
    let bytes = response.bytes().await.unwrap();
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
}

fn api_status(e: &ClientError) -> Option<u16> {
    e.status().map(|s| s.as_u16())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn genesis_config_and_node_endpoints_answer_the_spec_shape() {
    let n = node().await;
    let genesis = n.client.get_beacon_genesis().await.unwrap().data;
    assert_eq!(genesis.genesis_time, GENESIS_TIME);
    assert_eq!(
        genesis.genesis_validators_root,
        *n.genesis.state.genesis_validators_root()
    );
    assert_eq!(genesis.genesis_fork_version, n.spec.genesis_fork_version);

    let spec = n.client.get_config_spec().await.unwrap().data;
    assert_eq!(spec.get_u64("SLOTS_PER_EPOCH"), Some(E::slots_per_epoch()));
    assert_eq!(
        spec.get_u64("SECONDS_PER_SLOT"),
        Some(n.spec.seconds_per_slot)
    );
    assert_eq!(spec.get_str("PRESET_BASE"), Some("minimal"));
    assert_eq!(spec.get_str("DOMAIN_BEACON_ATTESTER"), Some("0x01000000"));
    assert_eq!(spec.get_u64("FULU_FORK_EPOCH"), Some(0));
    // Gloas config and preset keys (every key of the spec's files: config_spec's unit tests).
    assert_eq!(
        spec.get_u64("MAX_REQUEST_PAYLOADS"),
        Some(n.spec.max_request_payloads)
    );
    assert_eq!(spec.get_u64("PTC_SIZE"), Some(16));
    assert_eq!(
        spec.0.get("GAS_LIMIT_SCHEDULE"),
        Some(&serde_json::json!([]))
    );

    let schedule = n.client.get_config_fork_schedule().await.unwrap().data;
    // The scheduled forks: every one but Gloas, which this chain does not schedule.
    let scheduled = ForkName::ALL
        .into_iter()
        .filter(|&fork| n.spec.fork_epoch(fork).is_some())
        .count();
    assert_eq!(scheduled, ForkName::ALL.len() - 1);
    assert_eq!(schedule.len(), scheduled);
    assert_eq!(
        schedule.last().unwrap().current_version,
        n.spec.fulu_fork_version
    );
    let contract = n.client.get_config_deposit_contract().await.unwrap().data;
    assert_eq!(contract.chain_id, n.spec.deposit_chain_id);
    assert_eq!(contract.address, n.spec.deposit_contract_address);

    let version = n.client.get_node_version().await.unwrap().data;
    assert!(version.version.starts_with("Arbor/"), "{}", version.version);
    let syncing = n.client.get_node_syncing().await.unwrap().data;
    assert_eq!((syncing.head_slot, syncing.is_syncing), (0, false));
    assert_eq!(
        n.client.get_node_health(None).await.unwrap(),
        beacon_api::NodeHealth::Ready
    );
    assert_eq!(
        n.client.get_node_peer_count().await.unwrap().data.connected,
        0
    );
    n.client.get_node_identity().await.unwrap();

    let finality = n
        .client
        .get_beacon_states_finality_checkpoints(StateId::Head)
        .await
        .unwrap();
    assert!(finality.finalized, "the genesis state is finalized");
    assert_eq!(finality.data.finalized.epoch, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validators_are_found_by_index_key_and_status() {
    let n = node().await;
    let all = n
        .client
        .get_beacon_states_validators(StateId::Head, &[], &[])
        .await
        .unwrap()
        .data;
    assert_eq!(all.len(), VALIDATORS);
    assert!(all.iter().enumerate().all(|(i, v)| v.index == i as u64));

    let key5 = n
        .genesis
        .state
        .validators()
        .expect("a state before Gloas")
        .get(5)
        .unwrap()
        .pubkey;
    let some = n
        .client
        .get_beacon_states_validators(
            StateId::Genesis,
            &[
                ValidatorId::Index(3),
                ValidatorId::PublicKey(key5),
                ValidatorId::Index(9999),
            ],
            &[],
        )
        .await
        .unwrap()
        .data;
    assert_eq!(
        some.iter().map(|v| v.index).collect::<Vec<_>>(),
        [3, 5],
        "an unknown index is left out"
    );
    assert_eq!(some[1].validator.pubkey, key5);

    let active: ValidatorStatusFilter = "active".parse().unwrap();
    let exited: ValidatorStatusFilter = "exited".parse().unwrap();
    let by_status = |filter| {
        let client = &n.client;
        async move {
            client
                .get_beacon_states_validators(StateId::Head, &[], &[filter])
                .await
                .unwrap()
                .data
                .len()
        }
    };
    assert_eq!(by_status(active).await, VALIDATORS);
    assert_eq!(by_status(exited).await, 0);

    let posted = n
        .client
        .post_beacon_states_validators(
            StateId::Head,
            &ValidatorsRequestBody {
                ids: Some(vec![ValidatorId::Index(7)]),
                statuses: Some(vec![active]),
            },
        )
        .await
        .unwrap()
        .data;
    assert_eq!(posted.len(), 1);
    assert_eq!(
        posted[0].balance,
        n.genesis
            .state
            .balances()
            .expect("a state before Gloas")
            .get(7)
            .unwrap()
    );

    let one = n.get("/eth/v1/beacon/states/head/validators/4", None).await;
    assert_eq!(one.status(), 200);
    let missing = n
        .get("/eth/v1/beacon/states/head/validators/4444", None)
        .await;
    assert_eq!(missing.status(), 404);
    let bad = n
        .get("/eth/v1/beacon/states/head/validators?id=seven", None)
        .await;
    assert_eq!(bad.status(), 400);
    let body: beacon_api::ErrorMessage = json_of(bad).await;
    assert_eq!(body.code, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duties_match_the_state_committees_and_proposers() {
    let n = node().await;
    let indices: Vec<u64> = (0..VALIDATORS as u64).collect();
    let view = n.genesis.view().unwrap();
    let mut caches = n.genesis.caches.clone();
    for epoch in [0, 1] {
        let duties = n
            .client
            .post_validator_duties_attester(epoch, &indices)
            .await
            .unwrap();
        assert_eq!(duties.dependent_root, n.genesis_root);
        assert!(!duties.execution_optimistic);
        assert_eq!(
            duties.data.len(),
            VALIDATORS,
            "every validator attests once an epoch"
        );
        let committees = caches.committees(&view, epoch).unwrap();
        for duty in &duties.data {
            let committee = committees
                .get_beacon_committee(duty.slot, duty.committee_index)
                .unwrap();
            assert_eq!(
                committee[duty.validator_committee_index as usize],
                duty.validator_index
            );
            assert_eq!(duty.committee_length, committee.len() as u64);
            assert_eq!(duty.committees_at_slot, committees.committees_per_slot());
            assert_eq!(
                duty.pubkey,
                n.genesis
                    .state
                    .validators()
                    .expect("a state before Gloas")
                    .get(duty.validator_index as usize)
                    .unwrap()
                    .pubkey
            );
        }
    }

    let lookahead = view.proposer_lookahead.unwrap();
    for epoch in [0u64, 1] {
        let proposers = n.client.get_validator_duties_proposer(epoch).await.unwrap();
        assert_eq!(proposers.dependent_root, n.genesis_root);
        let spe = E::slots_per_epoch();
        let expected: Vec<(u64, u64)> = (0..spe)
            .map(|i| {
                (
                    epoch * spe + i,
                    *lookahead.get((epoch * spe + i) as usize).unwrap(),
                )
            })
            .collect();
        let got: Vec<(u64, u64)> = proposers
            .data
            .iter()
            .map(|d| (d.slot, d.validator_index))
            .collect();
        assert_eq!(got, expected, "epoch {epoch}");
    }

    let sync = n
        .client
        .post_validator_duties_sync(0, &indices)
        .await
        .unwrap();
    assert_sync_duties_are(&sync.data, &view.current_sync_committee.pubkeys);

    let future = n
        .client
        .post_validator_duties_attester(5, &indices)
        .await
        .unwrap_err();
    assert_eq!(api_status(&future), Some(400));
}

use ssz_types::typenum::Unsigned;

/// `getBlindedBlock`: the stored block with its payload replaced by the payload's header, in SSZ
/// and JSON, with the version header; its root is the block's and the signature the block's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blinded_blocks_are_the_stored_blocks_with_the_payloads_header() {
    let n = node().await;
    let (block, _) = n.import(&n.genesis, 1);
    let SignedBeaconBlock::Fulu(full) = &block else {
        panic!("a Fulu block")
    };
    let root = block.canonical_root();
    for id in ["1".to_string(), format!("{root}"), "head".to_string()] {
        let path = format!("/eth/v1/beacon/blinded_blocks/{id}");
        let ssz = n.get(&path, Some("application/octet-stream")).await;
        assert_eq!(ssz.status(), 200, "{path}");
        assert_eq!(ssz.headers()["eth-consensus-version"], "fulu");
        let bytes = ssz.bytes().await.unwrap();
        let blinded =
            <builder_client::SignedBlindedBeaconBlock<E> as ssz::Decode>::from_ssz_bytes(&bytes)
                .unwrap();
        assert_eq!(
            blinded.message.tree_hash_root(),
            root,
            "the full block's root"
        );
        assert_eq!(blinded.signature, full.signature);
        let header = &blinded.message.body.execution_payload_header;
        let payload = &full.message.body.execution_payload;
        assert_eq!(header.block_hash, payload.block_hash);
        assert_eq!(
            header.transactions_root,
            payload.transactions.tree_hash_root()
        );
        assert_eq!(
            blinded.message.body.blob_kzg_commitments,
            full.message.body.blob_kzg_commitments
        );
        let json = n.get(&path, Some("application/json")).await;
        assert_eq!(json.status(), 200);
        assert_eq!(json.headers()["eth-consensus-version"], "fulu");
        let value: serde_json::Value =
            serde_json::from_slice(&json.bytes().await.unwrap()).unwrap();
        assert_eq!(value["version"], "fulu");
        assert_eq!(value["finalized"], false);
        let data: builder_client::SignedBlindedBeaconBlock<E> =
            serde_json::from_value(value["data"].clone()).unwrap();
        assert_eq!(data, blinded, "JSON and SSZ are the same block");
    }
    let missing = n
        .get(
            &format!("/eth/v1/beacon/blinded_blocks/{}", Root::repeat_byte(9)),
            None,
        )
        .await;
    assert_eq!(missing.status(), 404);
}

/// A POST route whose request body the spec gives in JSON only answers an SSZ body with 415 (on
/// which a client that sends SSZ first, as Lodestar's does, sends JSON), not 400; the routes whose
/// spec takes SSZ do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssz_bodies_on_json_only_routes_are_415_and_taken_where_the_spec_allows_them() {
    let n = node().await;
    // The beacon-APIs v4.0.0 POST operations whose requestBody is application/json only.
    let json_only = [
        "/eth/v2/beacon/pool/attester_slashings",
        "/eth/v1/beacon/pool/bls_to_execution_changes",
        "/eth/v1/beacon/pool/proposer_slashings",
        "/eth/v1/beacon/pool/sync_committees",
        "/eth/v1/beacon/pool/voluntary_exits",
        "/eth/v1/beacon/rewards/attestations/0",
        "/eth/v1/beacon/rewards/sync_committee/head",
        "/eth/v1/beacon/states/head/validator_balances",
        "/eth/v1/beacon/states/head/validator_identities",
        "/eth/v1/beacon/states/head/validators",
        "/eth/v1/validator/beacon_committee_subscriptions",
        "/eth/v1/validator/duties/attester/0",
        "/eth/v1/validator/duties/sync/0",
        "/eth/v1/validator/liveness/0",
        "/eth/v1/validator/prepare_beacon_proposer",
        "/eth/v1/validator/contribution_and_proofs",
        "/eth/v1/validator/sync_committee_subscriptions",
    ];
    // `List[ValidatorIndex, ...]` of 0 and 1 in SSZ.
    let ssz_indices: Vec<u8> = [0u64, 1].iter().flat_map(|i| i.to_le_bytes()).collect();
    for route in json_only {
        let status = n
            .http()
            .post(format!("{}{route}", n.base))
            .header("content-type", "application/octet-stream")
            .header("eth-consensus-version", "fulu")
            .body(ssz_indices.clone())
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status.as_u16(), 415, "POST {route} with an SSZ body");
    }
    // The same duties in JSON are answered.
    let status = n
        .http()
        .post(format!("{}/eth/v1/validator/duties/attester/0", n.base))
        .header("content-type", "application/json")
        .body(r#"["0","1"]"#)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status.as_u16(), 200);
    // Routes whose spec takes SSZ bodies read them (an empty list of attestations, of
    // registrations): no 415.
    for route in [
        "/eth/v2/beacon/pool/attestations",
        "/eth/v1/validator/register_validator",
    ] {
        let status = n
            .http()
            .post(format!("{}{route}", n.base))
            .header("content-type", "application/octet-stream")
            .header("eth-consensus-version", "fulu")
            .body(Vec::<u8>::new())
            .send()
            .await
            .unwrap()
            .status();
        assert_ne!(status.as_u16(), 415, "POST {route} with an SSZ body");
    }
}

/// At the first slot of a sync committee period, before that slot's block, the head state is
/// still in the previous period: the duties of the clock's next period are served all the same
/// (from the head state advanced into the clock's period), and a period beyond is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_duties_follow_the_clocks_period_not_the_head_states() {
    let n = node().await;
    let spe = <E as EthSpec>::slots_per_epoch();
    let period_epochs = <E as EthSpec>::EPOCHS_PER_SYNC_COMMITTEE_PERIOD;
    // The clock at the first slot of period 1 (epoch 8); the head is the genesis block.
    let first_slot = period_epochs * spe;
    n.clock.set_ms(time_ms(&n.spec, first_slot));
    let indices: Vec<u64> = (0..VALIDATORS as u64).collect();
    // Epoch 16: the clock's next period, two periods after the head state's.
    let next_period_epoch = 2 * period_epochs;
    let sync = n
        .client
        .post_validator_duties_sync(next_period_epoch, &indices)
        .await
        .unwrap();
    let mut advanced = n.genesis.clone();
    state_processing::per_slot::process_slots(&mut advanced, first_slot, &n.spec).unwrap();
    let view = advanced.view().unwrap();
    assert_sync_duties_are(&sync.data, &view.next_sync_committee.pubkeys);
    // The clock's current period is served too.
    let current = n
        .client
        .post_validator_duties_sync(period_epochs, &indices)
        .await
        .unwrap();
    let positions: usize = current
        .data
        .iter()
        .map(|d| d.validator_sync_committee_indices.len())
        .sum();
    assert_eq!(positions, <E as EthSpec>::SyncCommitteeSize::to_usize());
    // Beyond the clock's next period: refused.
    let beyond = n
        .client
        .post_validator_duties_sync(3 * period_epochs, &indices)
        .await
        .unwrap_err();
    assert_eq!(api_status(&beyond), Some(400));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_single_attestation_is_accepted_and_a_bad_signature_is_an_indexed_error() {
    let n = node().await;
    let duties = n
        .client
        .post_validator_duties_attester(0, &(0..VALIDATORS as u64).collect::<Vec<_>>())
        .await
        .unwrap()
        .data;
    let slot0: Vec<_> = duties.iter().filter(|d| d.slot == 0).collect();
    assert!(slot0.len() >= 3, "slot 0 has attesters");
    let data = n
        .client
        .get_validator_attestation_data(0, slot0[0].committee_index)
        .await
        .unwrap()
        .data;
    assert_eq!(data.beacon_block_root, n.genesis_root);
    assert_eq!(data.target.root, n.genesis_root);
    assert_eq!(data.index, 0);
    let ssz_data = n
        .client
        .get_validator_attestation_data_ssz(0, slot0[0].committee_index)
        .await
        .unwrap();
    assert_eq!(ssz_data, data, "JSON and SSZ agree");

    let good = n.single_attestation(
        slot0[0].validator_index,
        slot0[0].committee_index,
        &data,
        None,
    );
    n.client
        .post_beacon_pool_attestations_v2(ForkName::Fulu, std::slice::from_ref(&good))
        .await
        .unwrap();
    assert_eq!(n.network.counts().attestations, 1);
    // A repeat of an accepted attestation is not an error for the validator client.
    n.client
        .post_beacon_pool_attestations_v2_ssz(ForkName::Fulu, std::slice::from_ref(&good))
        .await
        .unwrap();

    let aggregate = n
        .client
        .get_validator_aggregate_attestation_v2::<E>(
            0,
            data.tree_hash_root(),
            slot0[0].committee_index,
        )
        .await
        .unwrap();
    assert_eq!(aggregate.version, ForkName::Fulu);
    assert_eq!(aggregate.data.data(), &data);

    let second = n.single_attestation(
        slot0[1].validator_index,
        slot0[1].committee_index,
        &data,
        None,
    );
    let forged = n.single_attestation(
        slot0[2].validator_index,
        slot0[2].committee_index,
        &data,
        Some(slot0[1].validator_index),
    );
    let err = n
        .client
        .post_beacon_pool_attestations_v2(ForkName::Fulu, &[second, forged])
        .await
        .unwrap_err();
    let ClientError::Api { status, body, .. } = &err else {
        panic!("expected an API error, got {err:?}");
    };
    assert_eq!(status.as_u16(), 400);
    let beacon_api::ApiErrorBody::Indexed(indexed) = body else {
        panic!("expected the indexed error body, got {body:?}");
    };
    assert_eq!(indexed.failures.len(), 1);
    assert_eq!(indexed.failures[0].index, 1);
    assert!(
        indexed.failures[0].message.contains("signature"),
        "{}",
        indexed.failures[0].message
    );
    assert_eq!(
        n.network.counts().attestations,
        2,
        "the good one of the batch is published"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_and_block_events_arrive_after_an_import_and_blocks_are_served() {
    let n = node().await;
    let mut events = n
        .client
        .get_events(&[EventTopic::Head, EventTopic::Block])
        .await
        .unwrap();
    let (block, post) = n.import(&n.genesis, 1);
    let root = block.canonical_root();
    let mut seen_block = false;
    let mut seen_head = false;
    while !(seen_block && seen_head) {
        let event = tokio::time::timeout(WAIT, events.next_event::<E>())
            .await
            .expect("an event before the wait's bound")
            .expect("the stream stays open")
            .unwrap();
        match event {
            BeaconEvent::Block(b) => {
                assert_eq!((b.slot, b.block), (1, root));
                seen_block = true;
            }
            BeaconEvent::Head(h) => {
                assert_eq!((h.slot, h.block), (1, root));
                assert_eq!(h.state, block.state_root());
                assert_eq!(h.current_duty_dependent_root, n.genesis_root);
                seen_head = true;
            }
            other => panic!("unexpected event {other:?}"),
        }
    }

    let served = n
        .client
        .get_beacon_blocks_ssz::<E>(BlockId::Head)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(served, block);
    let by_slot = n
        .client
        .get_beacon_blocks_ssz::<E>(BlockId::Slot(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_slot, block);
    let genesis_block = n
        .client
        .get_beacon_blocks_ssz::<E>(BlockId::Genesis)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(genesis_block.canonical_root(), n.genesis_root);
    assert!(
        n.client
            .get_beacon_blocks_ssz::<E>(BlockId::Slot(2))
            .await
            .unwrap()
            .is_none(),
        "no block at an empty slot"
    );

    let header = n
        .client
        .get_beacon_headers_block_id(BlockId::Root(root))
        .await
        .unwrap();
    assert!(header.data.canonical);
    assert!(!header.finalized);
    assert_eq!(header.data.header, block.signed_block_header());
    let root_of_slot = n
        .client
        .get_beacon_blocks_root(BlockId::Slot(1))
        .await
        .unwrap();
    assert_eq!(root_of_slot.data.root, root);

    // JSON: the versioned envelope with the same block.
    let response = n
        .get("/eth/v2/beacon/blocks/head", Some("application/json"))
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["eth-consensus-version"], "fulu");
    let body: beacon_api::ForkVersionedResponse<SignedBeaconBlock<E>> = json_of(response).await;
    assert_eq!(body.data, block);
    assert_eq!(
        (body.execution_optimistic, body.finalized),
        (Some(false), Some(false))
    );

    // A block whose payload the execution client has not validated makes what rests on it
    // optimistic (once it is no longer the head, whose snapshot says so itself).
    let (child, _) = n.import(&post, 3);
    n.ctx
        .chain
        .set_payload_status(root, ExecutionStatus::NotValidated);
    let header = n
        .client
        .get_beacon_headers_block_id(BlockId::Slot(1))
        .await
        .unwrap();
    assert!(header.execution_optimistic);
    let state_root = n
        .client
        .get_beacon_states_finality_checkpoints(StateId::Slot(2))
        .await
        .unwrap();
    assert!(
        state_root.execution_optimistic,
        "slot 2's state rests on block 1"
    );
    let head = n
        .client
        .get_beacon_blocks_root(BlockId::Head)
        .await
        .unwrap();
    assert_eq!(head.data.root, child.canonical_root());
    assert!(!head.execution_optimistic);
    // A fork at slot 2 off block 1 (beside block 3 at slot 3): the tree has two leaves.
    let (fork, _) = n.import(&post, 2);
    let heads: serde_json::Value = json_of(n.get("/eth/v2/debug/beacon/heads", None).await).await;
    let mut leaves: Vec<String> = heads["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["root"].as_str().unwrap().to_string())
        .collect();
    leaves.sort();
    let mut expected = vec![
        child.canonical_root().to_string(),
        fork.canonical_root().to_string(),
    ];
    expected.sort();
    assert_eq!(leaves, expected);

    // States by slot: the genesis state (stored) and the head's.
    let (fork, genesis_ssz) = n
        .client
        .get_debug_beacon_states_ssz(StateId::Slot(0))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(fork, ForkName::Fulu);
    use ssz::Encode;
    assert_eq!(genesis_ssz, n.genesis.state.as_ssz_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negotiation_and_errors_follow_the_spec() {
    let n = node().await;
    let ssz = n
        .get(
            "/eth/v2/beacon/blocks/head",
            Some(beacon_api::negotiation::PREFER_SSZ_ACCEPT),
        )
        .await;
    assert_eq!(ssz.status(), 200);
    assert_eq!(ssz.headers()["content-type"], "application/octet-stream");
    assert_eq!(ssz.headers()["eth-consensus-version"], "fulu");
    let json = n
        .get(
            "/eth/v2/beacon/blocks/head",
            Some("application/octet-stream;q=0.5,application/json"),
        )
        .await;
    assert_eq!(json.headers()["content-type"], "application/json");
    let none = n.get("/eth/v2/beacon/blocks/head", Some("text/html")).await;
    assert_eq!(none.status(), 406);

    for (path, status) in [
        ("/eth/v1/beacon/states/current/root", 400),
        ("/eth/v1/beacon/states/99/root", 404),
        (
            "/eth/v1/beacon/states/0x1111111111111111111111111111111111111111111111111111111111111111/root",
            404,
        ),
        ("/eth/v1/beacon/headers/0x12", 400),
        ("/eth/v1/beacon/blocks/7/root", 404),
        ("/eth/v1/validator/attestation_data?slot=0", 400),
        (
            "/eth/v1/validator/attestation_data?slot=0&committee_index=99",
            400,
        ),
        (
            "/eth/v1/validator/attestation_data?slot=99&committee_index=0",
            400,
        ),
        ("/eth/v1/beacon/states/head/committees?epoch=9", 400),
        (
            "/eth/v1/beacon/states/head/committees?epoch=18446744073709551615",
            400,
        ),
        (
            "/eth/v3/validator/blocks/1000000000?randao_reveal=0xc00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
            400,
        ),
        ("/eth/v1/events", 400),
        ("/eth/v1/events?topics=nonsense", 400),
        ("/eth/v9/nowhere", 404),
    ] {
        let response = n.get(path, None).await;
        assert_eq!(response.status().as_u16(), status, "{path}");
        let body: beacon_api::ErrorMessage = json_of(response).await;
        assert_eq!(body.code, status, "{path}");
    }

    let http = n.http();
    let url = format!("{}/eth/v2/beacon/pool/attestations", n.base);
    let post = |content_type: &'static str, version: Option<&'static str>, body: &'static str| {
        let mut request = http
            .post(&url)
            .header("content-type", content_type)
            .body(body);
        if let Some(v) = version {
            request = request.header("eth-consensus-version", v);
        }
        request.send()
    };
    assert_eq!(
        post("text/plain", Some("fulu"), "[]")
            .await
            .unwrap()
            .status(),
        415
    );
    assert_eq!(
        post("application/json", None, "[]").await.unwrap().status(),
        400
    );
    assert_eq!(
        post("application/json", Some("fulu"), "[{")
            .await
            .unwrap()
            .status(),
        400
    );
    assert_eq!(
        post("application/json", Some("mars"), "[]")
            .await
            .unwrap()
            .status(),
        400
    );
    assert_eq!(
        post("application/json", Some("fulu"), "[]")
            .await
            .unwrap()
            .status(),
        200
    );
    let bad_ssz = http
        .post(&url)
        .header("content-type", "application/octet-stream")
        .header("eth-consensus-version", "fulu")
        .body(vec![1u8, 2, 3])
        .send()
        .await
        .unwrap();
    assert_eq!(bad_ssz.status(), 400);

    let metrics = n.get("/metrics", None).await.text().await.unwrap();
    assert!(metrics.contains("http_api_requests_total"), "{metrics}");
    assert!(
        metrics.contains(r#"route="/eth/v2/beacon/blocks/{block_id}""#),
        "latency per route template"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_binds_localhost_by_default_and_answers_cors_when_asked() {
    assert!(ApiConfig::default().listen.ip().is_loopback());
    assert_eq!(ApiConfig::default().listen.port(), 5052);
    let n = node_with(ApiConfig {
        allow_origin: Some("http://example.test".into()),
        ..ApiConfig::default()
    })
    .await;
    let response = n.get("/eth/v1/node/version", None).await;
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "http://example.test"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_produced_signed_and_published_becomes_the_head() {
    use beacon_api::block_contents::{BlockContents, SignedBlockContents};
    let n = node().await;
    n.harness.mock.set_blobs_per_payload(1);
    let slot: Slot = 1;
    n.clock.set_ms(time_ms(&n.spec, slot));
    let duties = n
        .client
        .get_validator_duties_proposer(0)
        .await
        .unwrap()
        .data;
    let proposer = duties
        .iter()
        .find(|d| d.slot == slot)
        .unwrap()
        .validator_index;
    let gvr = n.ctx.chain.genesis_validators_root();
    let domain = |d, epoch| signing::compute_domain(d, n.spec.compute_fork_version(epoch), gvr);
    let key = interop_secret_key(proposer as usize);
    let epoch: u64 = 0;
    let randao_root = signing::compute_signing_root(&epoch, domain(signing::DOMAIN_RANDAO, epoch));
    let randao = BLSSignature::from(key.sign(randao_root.as_slice()).serialize());

    // JSON: the v3 metadata in the headers and beside `data`.
    let response = n
        .get(
            &format!("/eth/v3/validator/blocks/{slot}?randao_reveal={randao}"),
            Some("application/json"),
        )
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["eth-consensus-version"], "fulu");
    assert_eq!(response.headers()["eth-execution-payload-blinded"], "false");
    assert!(
        response
            .headers()
            .contains_key("eth-execution-payload-value")
    );
    assert!(response.headers().contains_key("eth-consensus-block-value"));
    let body: serde_json::Value = json_of(response).await;
    assert_eq!(body["version"], "fulu");
    assert_eq!(body["execution_payload_blinded"], false);
    let from_json: BlockContents<E> =
        beacon_api::ForkVersionedJson::deserialize_by_fork(body["data"].clone(), ForkName::Fulu)
            .unwrap();
    let BlockContents::Fulu(from_json) = from_json else {
        panic!("a Fulu block")
    };
    assert_eq!(
        (from_json.block.slot, from_json.block.proposer_index),
        (slot, proposer)
    );

    // SSZ through the typed client, then signed and published.
    let (metadata, produced) = n
        .client
        .get_validator_blocks_v3::<E>(slot, &randao, None, None, false)
        .await
        .unwrap();
    assert_eq!(metadata.consensus_version, ForkName::Fulu);
    assert!(!metadata.execution_payload_blinded);
    let beacon_api::ProducedBlock::Full(BlockContents::Fulu(contents)) = produced else {
        panic!("a full Fulu block, got {produced:?}")
    };
    assert_eq!(contents.block.parent_root, n.genesis_root);
    assert_eq!(contents.blobs.len(), 1);
    assert_eq!(
        contents.kzg_proofs.len(),
        <E as EthSpec>::CellsPerExtBlob::to_usize()
    );
    let bad_reveal = n
        .get(
            &format!(
                "/eth/v3/validator/blocks/{slot}?randao_reveal={}",
                BLSSignature::from(interop_secret_key(0).sign(b"nonsense").serialize())
            ),
            None,
        )
        .await;
    assert_eq!(bad_reveal.status(), 400);

    let mut events = n.client.get_events(&[EventTopic::Head]).await.unwrap();
    let block_root = contents.block.tree_hash_root();
    let signing_root = signing::compute_signing_root(
        &contents.block,
        domain(signing::DOMAIN_BEACON_PROPOSER, epoch),
    );
    let signed = SignedBeaconBlock::Fulu(types::electra::SignedBeaconBlock {
        message: contents.block.clone(),
        signature: BLSSignature::from(key.sign(signing_root.as_slice()).serialize()),
    });
    let blob = contents.blobs[0].to_vec();
    let commitment = contents.block.body.blob_kzg_commitments[0];
    let signed_header = signed.signed_block_header();
    let signed_contents =
        SignedBlockContents::new(signed, Some((contents.kzg_proofs, contents.blobs))).unwrap();
    n.client
        .post_beacon_blocks_v2_ssz(&signed_contents, beacon_api::BroadcastValidation::Gossip)
        .await
        .unwrap();
    let event = tokio::time::timeout(WAIT, events.next_event::<E>())
        .await
        .expect("a head event before the wait's bound")
        .expect("the stream stays open")
        .unwrap();
    let BeaconEvent::Head(head) = event else {
        panic!("expected a head event, got {event:?}")
    };
    assert_eq!((head.slot, head.block), (slot, block_root));
    assert_eq!(n.ctx.chain.head().block_root, block_root);
    let counts = n.network.counts();
    assert_eq!(counts.blocks, 1);
    assert!(counts.data_columns > 0, "the block's columns are broadcast");
    // The same block again: already imported, 200, nothing broadcast again.
    n.client
        .post_beacon_blocks_v2(&signed_contents, beacon_api::BroadcastValidation::Consensus)
        .await
        .unwrap();
    assert_eq!(n.network.counts().blocks, 1);
    let columns = n
        .get(
            "/eth/v1/debug/beacon/data_column_sidecars/head?indices=0,1",
            None,
        )
        .await;
    assert_eq!(columns.status(), 200);
    let columns: serde_json::Value = json_of(columns).await;
    assert_eq!(columns["data"].as_array().map(Vec::len), Some(2));

    // The blob again, from the stored columns, in SSZ and JSON, filtered by versioned hash.
    let ssz_blobs = n
        .get(
            "/eth/v1/beacon/blobs/head",
            Some("application/octet-stream"),
        )
        .await;
    assert_eq!(ssz_blobs.status(), 200);
    assert_eq!(ssz_blobs.bytes().await.unwrap().to_vec(), blob);
    let mut versioned = ethereum_hashing::hash(commitment.as_slice());
    versioned[0] = 1;
    let hash = format!("0x{}", hex_of(&versioned));
    let json_blobs: serde_json::Value = json_of(
        n.get(
            &format!("/eth/v1/beacon/blobs/{block_root}?versioned_hashes={hash}"),
            None,
        )
        .await,
    )
    .await;
    assert_eq!(json_blobs["data"][0], format!("0x{}", hex_of(&blob)));
    let other: serde_json::Value = json_of(
        n.get(
            &format!(
                "/eth/v1/beacon/blobs/head?versioned_hashes=0x01{}",
                "00".repeat(31)
            ),
            None,
        )
        .await,
    )
    .await;
    assert_eq!(other["data"].as_array().map(Vec::len), Some(0));

    // The deprecated blob sidecars of the Fulu block, made from its columns: the blob, the block's
    // commitment, a KZG proof that verifies, the block's header and an inclusion proof that
    // verifies against its body root; the same in JSON; `indices` filters.
    let ssz_sidecars = n
        .get(
            "/eth/v1/beacon/blob_sidecars/head",
            Some("application/octet-stream"),
        )
        .await;
    assert_eq!(ssz_sidecars.status(), 200);
    assert_eq!(ssz_sidecars.headers()["eth-consensus-version"], "fulu");
    let bytes = ssz_sidecars.bytes().await.unwrap();
    let sidecar = <types::electra::BlobSidecar<E> as ssz::Decode>::from_ssz_bytes(&bytes).unwrap();
    assert_eq!(sidecar.index, 0);
    assert_eq!(sidecar.blob.to_vec(), blob);
    assert_eq!(sidecar.kzg_commitment, commitment);
    assert_eq!(sidecar.signed_block_header, signed_header);
    let kzg_blob = kzg::blob_from_bytes(&blob).unwrap();
    assert!(
        kzg::verify_blob_kzg_proof(
            &kzg_blob,
            &kzg::KzgCommitment(commitment.0),
            &kzg::KzgProof(sidecar.kzg_proof.0)
        )
        .unwrap()
    );
    assert!(
        beacon_chain::gossip::blob_sidecar::verify_blob_sidecar_inclusion_proof(
            &types::BlobSidecar::Electra(sidecar.clone())
        )
    );
    let json_sidecars: serde_json::Value = json_of(
        n.get(&format!("/eth/v1/beacon/blob_sidecars/{block_root}"), None)
            .await,
    )
    .await;
    assert_eq!(json_sidecars["version"], "fulu");
    let from_json: Vec<types::electra::BlobSidecar<E>> =
        serde_json::from_value(json_sidecars["data"].clone()).unwrap();
    assert_eq!(from_json, vec![sidecar]);
    let none: serde_json::Value = json_of(
        n.get("/eth/v1/beacon/blob_sidecars/head?indices=1", None)
            .await,
    )
    .await;
    assert_eq!(none["data"].as_array().map(Vec::len), Some(0));
    let tampered = {
        let mut s = from_json[0].clone();
        s.index = 1;
        types::BlobSidecar::Electra(s)
    };
    assert!(
        !beacon_chain::gossip::blob_sidecar::verify_blob_sidecar_inclusion_proof(&tampered),
        "the control: another index does not verify"
    );

    let url = format!("{}/eth/v2/beacon/blocks", n.base);
    let garbage = n
        .http()
        .post(&url)
        .header("content-type", "application/octet-stream")
        .header("eth-consensus-version", "fulu")
        .body(vec![0u8; 7])
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), 400);
    let unversioned = n
        .http()
        .post(&url)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(unversioned.status(), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identities_and_selections_answer_as_the_spec_says() {
    let n = node().await;
    let response = n
        .http()
        .post(format!(
            "{}/eth/v1/beacon/states/head/validator_identities",
            n.base
        ))
        .header("content-type", "application/json")
        .body(r#"["1","9999","2"]"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = json_of(response).await;
    let data = body["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "an unknown index is left out");
    assert_eq!(data[0]["index"], "1");
    assert_eq!(data[1]["activation_epoch"], "0");
    let key2 = n
        .genesis
        .state
        .validators()
        .expect("a state before Gloas")
        .get(2)
        .unwrap()
        .pubkey;
    assert_eq!(data[1]["pubkey"], key2.to_string());

    let ssz = n
        .http()
        .post(format!(
            "{}/eth/v1/beacon/states/head/validator_identities",
            n.base
        ))
        .header("accept", "application/octet-stream")
        .header("content-type", "application/json")
        .body(r#"["1","2"]"#)
        .send()
        .await
        .unwrap();
    assert_eq!(ssz.bytes().await.unwrap().len(), 2 * (8 + 48 + 8));

    let selections = n
        .http()
        .post(format!(
            "{}/eth/v1/validator/beacon_committee_selections",
            n.base
        ))
        .header("content-type", "application/json")
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(selections.status(), 501);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_committee_messages_make_the_contribution_served() {
    let n = node().await;
    let indices: Vec<u64> = (0..VALIDATORS as u64).collect();
    let duties = n
        .client
        .post_validator_duties_sync(0, &indices)
        .await
        .unwrap()
        .data;
    let member = &duties[0];
    let domain = signing::compute_domain(
        signing::DOMAIN_SYNC_COMMITTEE,
        n.spec.compute_fork_version(0),
        n.ctx.chain.genesis_validators_root(),
    );
    let root = signing::compute_signing_root(&n.genesis_root, domain);
    let message = types::altair::SyncCommitteeMessage {
        slot: 0,
        beacon_block_root: n.genesis_root,
        validator_index: member.validator_index,
        signature: BLSSignature::from(
            interop_secret_key(member.validator_index as usize)
                .sign(root.as_slice())
                .serialize(),
        ),
    };
    n.client
        .post_beacon_pool_sync_committees(std::slice::from_ref(&message))
        .await
        .unwrap();
    assert!(n.network.counts().sync_messages >= 1);
    let sub_size = <E as EthSpec>::SyncSubcommitteeSize::to_u64();
    let position = member.validator_sync_committee_indices[0];
    let subcommittee = position / sub_size;
    let contribution = n
        .client
        .get_validator_sync_committee_contribution::<E>(0, subcommittee, n.genesis_root)
        .await
        .unwrap()
        .data;
    assert_eq!(contribution.subcommittee_index, subcommittee);
    let expected_bits = member
        .validator_sync_committee_indices
        .iter()
        .filter(|p| *p / sub_size == subcommittee)
        .count();
    assert_eq!(contribution.aggregation_bits.num_set_bits(), expected_bits);
    assert!(
        contribution
            .aggregation_bits
            .get((position % sub_size) as usize)
            .unwrap()
    );

    // A message signed by another key is refused with its index.
    let mut forged = message.clone();
    forged.validator_index = duties[1].validator_index;
    let err = n
        .client
        .post_beacon_pool_sync_committees(&[forged])
        .await
        .unwrap_err();
    assert_eq!(api_status(&err), Some(400));

    // An exit at genesis: the validator has not served SHARD_COMMITTEE_PERIOD.
    let exit = n
        .http()
        .post(format!("{}/eth/v1/beacon/pool/voluntary_exits", n.base))
        .header("content-type", "application/json")
        .body(format!(
            r#"{{"message":{{"epoch":"0","validator_index":"1"}},"signature":"{}"}}"#,
            BLSSignature::ZERO
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(exit.status(), 400);
}

/// Every route with path values, query values, bodies, content types and versions of every
/// kind a fuzzer would try: the answer is never a 5xx (501 where the node declines a feature).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_generated_input_gets_a_server_error() {
    let n = node().await;
    let root = format!("0x{}", "ab".repeat(32));
    let key = format!("0x{}", "cd".repeat(48));
    let values = [
        "head",
        "genesis",
        "finalized",
        "justified",
        "0",
        "1",
        "18446744073709551615",
        "99999999999999999999",
        "-1",
        "current",
        "0x12",
        root.as_str(),
        key.as_str(),
        "%ff%fe",
        "",
    ];
    let queries = [
        "",
        "?id=0,1&status=active",
        "?id=x&status=retired",
        "?epoch=abc&index=zz&slot=-1",
        "?epoch=18446744073709551615&slot=18446744073709551615",
        "?epoch=18446744073709551615",
        "?epoch=18446744073709551614&index=18446744073709551615",
        "?slot=0&committee_index=0&attestation_data_root=0x12",
        &format!("?slot=0&committee_index=0&attestation_data_root={root}"),
        "?slot=0&subcommittee_index=9&beacon_block_root=0x",
        "?randao_reveal=0x00&skip_randao_verification=maybe",
        "?indices=0,999999&versioned_hashes=0x01",
        "?broadcast_validation=sometimes",
        "?topics=nonsense",
        "?syncing_status=1000&state=fine&direction=up",
    ];
    let routes = [
        "/eth/v1/beacon/blob_sidecars/{}",
        "/eth/v1/beacon/blobs/{}",
        "/eth/v1/beacon/blocks/{}/root",
        "/eth/v1/beacon/genesis",
        "/eth/v1/beacon/headers",
        "/eth/v1/beacon/headers/{}",
        "/eth/v1/beacon/rewards/blocks/{}",
        "/eth/v1/beacon/states/{}/committees",
        "/eth/v1/beacon/states/{}/finality_checkpoints",
        "/eth/v1/beacon/states/{}/fork",
        "/eth/v1/beacon/states/{}/pending_consolidations",
        "/eth/v1/beacon/states/{}/pending_deposits",
        "/eth/v1/beacon/states/{}/pending_partial_withdrawals",
        "/eth/v1/beacon/states/{}/proposer_lookahead",
        "/eth/v1/beacon/states/{}/randao",
        "/eth/v1/beacon/states/{}/root",
        "/eth/v1/beacon/states/{}/sync_committees",
        "/eth/v1/beacon/states/{}/validator_balances",
        "/eth/v1/beacon/states/{}/validators",
        "/eth/v1/beacon/states/{}/validators/{}",
        "/eth/v1/config/deposit_contract",
        "/eth/v1/config/fork_schedule",
        "/eth/v1/config/spec",
        "/eth/v1/debug/beacon/data_column_sidecars/{}",
        "/eth/v1/events",
        "/eth/v1/node/health",
        "/eth/v1/node/identity",
        "/eth/v1/node/peer_count",
        "/eth/v1/node/peers",
        "/eth/v1/node/peers/{}",
        "/eth/v1/node/syncing",
        "/eth/v1/node/version",
        "/eth/v1/validator/attestation_data",
        "/eth/v1/validator/duties/proposer/{}",
        "/eth/v1/validator/sync_committee_contribution",
        "/eth/v2/beacon/blocks/{}",
        "/eth/v2/beacon/blocks/{}/attestations",
        "/eth/v2/beacon/pool/attestations",
        "/eth/v2/debug/beacon/states/{}",
        "/eth/v2/debug/beacon/heads",
        "/eth/v1/debug/fork_choice",
        "/eth/v1/beacon/pool/proposer_slashings",
        "/eth/v1/beacon/pool/voluntary_exits",
        "/eth/v1/beacon/pool/bls_to_execution_changes",
        "/eth/v2/beacon/pool/attester_slashings",
        "/eth/v2/validator/aggregate_attestation",
        "/eth/v3/validator/blocks/{}",
        "/metrics",
    ];
    let accepts = [
        None,
        Some("application/octet-stream"),
        Some("text/html;q=0.1,*/*;q=0"),
    ];
    let mut requests = 0;
    for route in routes {
        for value in values {
            let path = route.replace("{}", value);
            for query in queries {
                if route == "/eth/v1/events" && !query.contains("nonsense") {
                    continue; // a valid stream stays open
                }
                for accept in accepts {
                    let status = n.get(&format!("{path}{query}"), accept).await.status();
                    requests += 1;
                    assert!(
                        status.as_u16() < 500,
                        "GET {path}{query} (accept {accept:?}): {status}"
                    );
                }
            }
        }
    }
    let posts = [
        "/eth/v1/beacon/pool/bls_to_execution_changes",
        "/eth/v1/beacon/pool/proposer_slashings",
        "/eth/v1/beacon/pool/sync_committees",
        "/eth/v1/beacon/pool/voluntary_exits",
        "/eth/v1/beacon/rewards/sync_committee/{}",
        "/eth/v1/beacon/rewards/attestations/{}",
        "/eth/v1/beacon/states/{}/validator_balances",
        "/eth/v1/beacon/states/{}/validator_identities",
        "/eth/v1/beacon/states/{}/validators",
        "/eth/v1/validator/beacon_committee_subscriptions",
        "/eth/v1/validator/contribution_and_proofs",
        "/eth/v1/validator/duties/attester/{}",
        "/eth/v1/validator/duties/sync/{}",
        "/eth/v1/validator/liveness/{}",
        "/eth/v1/validator/prepare_beacon_proposer",
        "/eth/v1/validator/register_validator",
        "/eth/v1/validator/sync_committee_subscriptions",
        "/eth/v2/beacon/blocks",
        "/eth/v2/beacon/pool/attestations",
        "/eth/v2/beacon/pool/attester_slashings",
        "/eth/v2/validator/aggregate_and_proofs",
    ];
    let bodies: [&[u8]; 10] = [
        b"",
        b"[]",
        b"{}",
        b"[{",
        b"null",
        br#"["1","x"]"#,
        br#"[{"validator_index":"1","fee_recipient":"0x12"}]"#,
        br#"[{"slot":"18446744073709551615","beacon_block_root":"0x0000000000000000000000000000000000000000000000000000000000000000","validator_index":"18446744073709551615","signature":"0x00"}]"#,
        b"\x00\x01\x02\x03",
        &[0u8; 4096],
    ];
    let content_types = [
        None,
        Some("application/json"),
        Some("application/octet-stream"),
    ];
    let versions = [None, Some("fulu"), Some("phase0"), Some("mars")];
    let http = n.http();
    for route in posts {
        for value in ["head", "0", "current"] {
            let path = route.replace("{}", value);
            for body in bodies {
                for content_type in content_types {
                    for version in versions {
                        let mut request =
                            http.post(format!("{}{path}", n.base)).body(body.to_vec());
                        if let Some(ct) = content_type {
                            request = request.header("content-type", ct);
                        }
                        if let Some(v) = version {
                            request = request.header("eth-consensus-version", v);
                        }
                        let status = tokio::time::timeout(WAIT, request.send())
                            .await
                            .unwrap()
                            .unwrap()
                            .status();
                        requests += 1;
                        assert!(
                            status.as_u16() < 500,
                            "POST {path} {content_type:?} {version:?} {:?}: {status}",
                            String::from_utf8_lossy(&body[..body.len().min(40)])
                        );
                    }
                }
            }
        }
    }
    assert!(requests > 5000, "{requests} requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_committee_rewards_follow_the_aggregate_bits() {
    let n = node().await;
    // A block whose sync aggregate misses every 4th position of the committee.
    let contents = BlockContents {
        sync_aggregate: state_harness::SyncParticipation::AllButEveryNth(4),
        ..BlockContents::default()
    };
    let built = build_block(&n.genesis, 1, &contents, &n.spec).unwrap();
    let now = time_ms(&n.spec, 1);
    n.clock.set_ms(now);
    let chain = &n.ctx.chain;
    let verified = chain
        .verify_block_for_gossip(Arc::new(built.block.clone()), now)
        .unwrap();
    chain
        .import_block(verified.block, &[], &AlwaysValid, ExecutionStatus::Valid)
        .unwrap();

    let response = n
        .http()
        .post(format!(
            "{}/eth/v1/beacon/rewards/sync_committee/head",
            n.base
        ))
        .header("content-type", "application/json")
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = json_of(response).await;
    let rewards: Vec<(u64, i64)> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["validator_index"].as_str().unwrap().parse().unwrap(),
                r["reward"].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    // Per member: (signed positions - missed positions) × the participant reward.
    let view = n.genesis.view().unwrap();
    let mut caches = n.genesis.caches.clone();
    let mut expected: std::collections::BTreeMap<u64, i64> = Default::default();
    for (position, key) in view.current_sync_committee.pubkeys.iter().enumerate() {
        let index = caches
            .validator_index(&view, &state_processing::common::misc::pubkey_bytes(key))
            .unwrap();
        *expected.entry(index).or_default() += if position % 4 == 0 { -1 } else { 1 };
    }
    assert_eq!(rewards.len(), expected.len());
    let unit = rewards
        .iter()
        .find(|(i, _)| expected[i] != 0)
        .map(|(i, r)| r / expected[i])
        .unwrap();
    assert!(unit > 0, "a participant earns");
    for (index, reward) in &rewards {
        assert_eq!(*reward, expected[index] * unit, "validator {index}");
    }

    let one = n
        .http()
        .post(format!("{}/eth/v1/beacon/rewards/sync_committee/1", n.base))
        .header("content-type", "application/json")
        .body(format!(r#"["{}"]"#, rewards[0].0))
        .send()
        .await
        .unwrap();
    let one: serde_json::Value = json_of(one).await;
    assert_eq!(one["data"].as_array().map(Vec::len), Some(1));
    let genesis = n
        .http()
        .post(format!(
            "{}/eth/v1/beacon/rewards/sync_committee/genesis",
            n.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(genesis.status(), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_ssz_of_states_and_state_lists_decode_to_the_same_value() {
    use ssz::{Decode, Encode};
    let n = node().await;
    let json: beacon_api::ForkVersionedResponse<types::BeaconState<E>> =
        json_of(n.get("/eth/v2/debug/beacon/states/genesis", None).await).await;
    assert_eq!(json.version, ForkName::Fulu);
    assert_eq!(json.finalized, Some(true));
    let (_, ssz) = n
        .client
        .get_debug_beacon_states_ssz(StateId::Genesis)
        .await
        .unwrap()
        .unwrap();
    let from_ssz = types::BeaconState::<E>::from_ssz_bytes_by_fork(&ssz, ForkName::Fulu).unwrap();
    assert_eq!(json.data, from_ssz);
    assert_eq!(from_ssz.as_ssz_bytes(), n.genesis.state.as_ssz_bytes());
    // Served again, by root: the same bytes.
    let (_, again) = n
        .client
        .get_debug_beacon_states_ssz(StateId::Root(n.genesis.state.tree_hash_root()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again, ssz);
    // The SSZ is written while it is sent, with its length announced; the JSON as well
    // (chunked).
    let response = n
        .get(
            "/eth/v2/debug/beacon/states/genesis",
            Some("application/octet-stream"),
        )
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-length"],
        ssz.len().to_string().as_str()
    );
    assert_eq!(response.headers()["eth-consensus-version"], "fulu");
    assert_eq!(response.bytes().await.unwrap(), ssz);
    let response = n.get("/eth/v2/debug/beacon/states/genesis", None).await;
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["eth-consensus-version"], "fulu");

    let lookahead_json: serde_json::Value = json_of(
        n.get("/eth/v1/beacon/states/head/proposer_lookahead", None)
            .await,
    )
    .await;
    let lookahead_ssz = n
        .get(
            "/eth/v1/beacon/states/head/proposer_lookahead",
            Some("application/octet-stream"),
        )
        .await
        .bytes()
        .await
        .unwrap();
    let from_json: Vec<u64> = lookahead_json["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    let from_ssz: Vec<u64> = lookahead_ssz
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(from_json, from_ssz);
    assert_eq!(
        from_json,
        n.genesis
            .view()
            .unwrap()
            .proposer_lookahead
            .unwrap()
            .iter()
            .copied()
            .collect::<Vec<_>>()
    );

    let deposits = n
        .get(
            "/eth/v1/beacon/states/head/pending_deposits",
            Some("application/octet-stream"),
        )
        .await;
    assert_eq!(deposits.headers()["eth-consensus-version"], "fulu");
    let deposits =
        Vec::<types::electra::PendingDeposit>::from_ssz_bytes(&deposits.bytes().await.unwrap())
            .unwrap();
    let deposits_json: serde_json::Value = json_of(
        n.get("/eth/v1/beacon/states/head/pending_deposits", None)
            .await,
    )
    .await;
    assert_eq!(
        deposits_json["data"].as_array().map(Vec::len),
        Some(deposits.len())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attestation_rewards_of_a_fully_attested_epoch_are_the_ideal_ones() {
    let n = node().await;
    let spe = E::slots_per_epoch();
    // Blocks through the last slot of epoch 1, each carrying every committee's vote for the
    // slot before: epoch 0 is attested in full.
    let mut parent = n.genesis.clone();
    for slot in 1..2 * spe {
        let contents = BlockContents {
            attestations: vec![state_harness::AttestationSpec::whole_slot(slot - 1)],
            ..BlockContents::default()
        };
        let built = build_block(&parent, slot, &contents, &n.spec).unwrap();
        let now = time_ms(&n.spec, slot);
        n.clock.set_ms(now);
        let verified = n
            .ctx
            .chain
            .verify_block_for_gossip(Arc::new(built.block.clone()), now)
            .unwrap();
        n.ctx
            .chain
            .import_block(verified.block, &[], &AlwaysValid, ExecutionStatus::Valid)
            .unwrap();
        parent = built.post;
    }
    let response = n
        .http()
        .post(format!("{}/eth/v1/beacon/rewards/attestations/0", n.base))
        .header("content-type", "application/json")
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = json_of(response).await;
    let total = body["data"]["total_rewards"].as_array().unwrap();
    let ideal = body["data"]["ideal_rewards"].as_array().unwrap();
    assert_eq!(total.len(), VALIDATORS);
    assert_eq!(ideal.len(), 1, "one effective balance at genesis");
    let value = |v: &serde_json::Value, k: &str| -> i64 { v[k].as_str().unwrap().parse().unwrap() };
    for reward in total {
        for flag in ["source", "target"] {
            assert!(value(reward, flag) > 0, "{reward}");
            assert_eq!(value(reward, flag), value(&ideal[0], flag), "{reward}");
        }
        assert_eq!(value(reward, "inactivity"), 0);
        // Phase0's inclusion delay reward is zero from Altair on, and served (Lodestar's type
        // requires the field).
        assert_eq!(value(reward, "inclusion_delay"), 0);
    }
    assert_eq!(value(&ideal[0], "inclusion_delay"), 0);

    let one = n
        .http()
        .post(format!("{}/eth/v1/beacon/rewards/attestations/0", n.base))
        .header("content-type", "application/json")
        .body(r#"["5"]"#)
        .send()
        .await
        .unwrap();
    let one: serde_json::Value = json_of(one).await;
    assert_eq!(one["data"]["total_rewards"][0]["validator_index"], "5");
    let future = n
        .http()
        .post(format!("{}/eth/v1/beacon/rewards/attestations/1", n.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        future.status(),
        404,
        "epoch 1 is paid at the end of epoch 2"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finality_reaches_the_event_stream_and_the_finalized_ids() {
    let n = node().await;
    let spe = E::slots_per_epoch();
    let mut events = n
        .client
        .get_events(&[EventTopic::FinalizedCheckpoint])
        .await
        .unwrap();
    let mut parent = n.genesis.clone();
    let mut blocks = Vec::new();
    for slot in 1..=4 * spe {
        let contents = BlockContents {
            attestations: vec![state_harness::AttestationSpec::whole_slot(slot - 1)],
            ..BlockContents::default()
        };
        let built = build_block(&parent, slot, &contents, &n.spec).unwrap();
        let now = time_ms(&n.spec, slot);
        n.clock.set_ms(now);
        let verified = n
            .ctx
            .chain
            .verify_block_for_gossip(Arc::new(built.block.clone()), now)
            .unwrap();
        n.ctx
            .chain
            .import_block(verified.block, &[], &AlwaysValid, ExecutionStatus::Valid)
            .unwrap();
        blocks.push(built.block.clone());
        parent = built.post;
    }
    // Proposer duties of past epochs (the head is in epoch 4) name the blocks' proposers.
    for epoch in [1, 2, 3] {
        let duties = n
            .client
            .get_validator_duties_proposer(epoch)
            .await
            .unwrap_or_else(|e| panic!("proposer duties of past epoch {epoch}: {e}"));
        assert_eq!(duties.data.len() as u64, spe, "epoch {epoch}");
        for duty in &duties.data {
            let block = blocks
                .iter()
                .find(|b| b.slot() == duty.slot)
                .expect("a block at every slot");
            assert_eq!(
                duty.validator_index,
                block.proposer_index(),
                "slot {}",
                duty.slot
            );
        }
    }
    let event = tokio::time::timeout(WAIT, events.next_event::<E>())
        .await
        .expect("a finalized_checkpoint event before the wait's bound")
        .expect("the stream stays open")
        .unwrap();
    let BeaconEvent::FinalizedCheckpoint(finalized) = event else {
        panic!("expected a finalized_checkpoint event, got {event:?}")
    };
    assert!(finalized.epoch >= 1, "{finalized:?}");
    let block = blocks
        .iter()
        .find(|b| b.canonical_root() == finalized.block)
        .expect("the finalized block is one of ours");
    assert_eq!(finalized.state, block.state_root());

    // The finalized ids follow.
    let root = n
        .client
        .get_beacon_blocks_root(BlockId::Finalized)
        .await
        .unwrap();
    assert!(root.finalized);
    let now_finalized = n.ctx.chain.head().finalized_checkpoint.clone();
    assert_eq!(root.data.root, now_finalized.root);
    let checkpoints = n
        .client
        .get_beacon_states_finality_checkpoints(StateId::Finalized)
        .await
        .unwrap();
    assert!(checkpoints.finalized);
    let header = n
        .client
        .get_beacon_headers_block_id(BlockId::Slot(1))
        .await
        .unwrap();
    assert!(
        header.finalized,
        "slot 1 is before the finalized checkpoint"
    );
    assert_eq!(header.data.root, blocks[0].canonical_root());

    // Past SLOTS_PER_HISTORICAL_ROOT: slots only the store's finalized index knows.
    for slot in 4 * spe + 1..=10 * spe {
        let contents = BlockContents {
            attestations: vec![state_harness::AttestationSpec::whole_slot(slot - 1)],
            ..BlockContents::default()
        };
        let built = build_block(&parent, slot, &contents, &n.spec).unwrap();
        let now = time_ms(&n.spec, slot);
        n.clock.set_ms(now);
        let verified = n
            .ctx
            .chain
            .verify_block_for_gossip(Arc::new(built.block.clone()), now)
            .unwrap();
        n.ctx
            .chain
            .import_block(verified.block, &[], &AlwaysValid, ExecutionStatus::Valid)
            .unwrap();
        parent = built.post;
    }
    let limit = <E as EthSpec>::SlotsPerHistoricalRoot::to_u64();
    assert!(n.ctx.chain.head().slot > limit + 2);
    let old = n
        .client
        .get_beacon_blocks_ssz::<E>(BlockId::Slot(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(old, blocks[1]);
    let (_, old_state) = n
        .client
        .get_debug_beacon_states_ssz(StateId::Slot(2))
        .await
        .unwrap()
        .unwrap();
    let old_state =
        types::BeaconState::<E>::from_ssz_bytes_by_fork(&old_state, ForkName::Fulu).unwrap();
    assert_eq!(old_state.tree_hash_root(), blocks[1].state_root());
    let genesis = n
        .client
        .get_beacon_states_finality_checkpoints(StateId::Genesis)
        .await
        .unwrap();
    assert!(genesis.finalized);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reorg_reaches_the_event_stream_with_both_heads_states() {
    let n = node().await;
    let mut events = n
        .client
        .get_events(&[EventTopic::ChainReorg])
        .await
        .unwrap();
    let (a, _) = n.import(&n.genesis, 1);
    // B at slot 2 on genesis, timely in its slot: the proposer boost makes it the head.
    let (b, _) = n.import(&n.genesis, 2);
    assert_eq!(n.ctx.chain.head().block_root, b.canonical_root());
    let event = tokio::time::timeout(WAIT, events.next_event::<E>())
        .await
        .expect("a chain_reorg event before the wait's bound")
        .expect("the stream stays open")
        .unwrap();
    let BeaconEvent::ChainReorg(reorg) = event else {
        panic!("expected a chain_reorg event, got {event:?}")
    };
    assert_eq!(
        (reorg.old_head_block, reorg.new_head_block),
        (a.canonical_root(), b.canonical_root())
    );
    assert_eq!(
        (reorg.old_head_state, reorg.new_head_state),
        (a.state_root(), b.state_root())
    );
    assert_eq!((reorg.slot, reorg.epoch), (2, 0));
    // Block A is no longer canonical.
    let header = n
        .client
        .get_beacon_headers_block_id(BlockId::Root(a.canonical_root()))
        .await
        .unwrap();
    assert!(!header.data.canonical);
    assert!(
        n.client
            .get_beacon_blocks_ssz::<E>(BlockId::Slot(1))
            .await
            .unwrap()
            .is_none(),
        "slot 1 is empty on the new chain"
    );
}

/// The pool listings serve exactly what the pool holds, in the spec's envelopes; empty lists
/// before anything is pooled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_listings_serve_the_pooled_operations() {
    let n = node().await;
    let lists = [
        ("/eth/v1/beacon/pool/proposer_slashings", false),
        ("/eth/v2/beacon/pool/attester_slashings", true),
        ("/eth/v1/beacon/pool/voluntary_exits", false),
        ("/eth/v1/beacon/pool/bls_to_execution_changes", false),
    ];
    for (path, versioned) in lists {
        let response = n.get(path, None).await;
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(
            response
                .headers()
                .get("eth-consensus-version")
                .map(|v| v.to_str().unwrap().to_string()),
            versioned.then(|| "fulu".to_string()),
            "{path}"
        );
        let body: serde_json::Value = json_of(response).await;
        assert_eq!(body["data"], serde_json::json!([]), "{path}");
        if versioned {
            assert_eq!(body["version"], "fulu");
        }
    }

    // Operations the harness signs for a block at slot 1, pooled without the block.
    let contents = BlockContents {
        proposer_slashings: vec![7, 3],
        attester_slashings: vec![vec![10, 11]],
        bls_to_execution_changes: vec![(30, types::Address::repeat_byte(0x30))],
        ..BlockContents::default()
    };
    let built = build_block(&n.genesis, 1, &contents, &n.spec).unwrap();
    let SignedBeaconBlock::Fulu(block) = &built.block else {
        panic!("a Fulu block")
    };
    let body = &block.message.body;
    for s in body.proposer_slashings.iter() {
        n.ctx.pool.insert_proposer_slashing(s.clone()).unwrap();
    }
    for s in body.attester_slashings.iter() {
        n.ctx.pool.insert_attester_slashing(s.clone()).unwrap();
    }
    // An exit signed by validator 20 (EIP-7044: the Capella domain); the pool lists what it
    // holds, valid on the head or not yet.
    let message = types::fulu::VoluntaryExit {
        epoch: 0,
        validator_index: 20,
    };
    let domain = signing::compute_domain(
        signing::DOMAIN_VOLUNTARY_EXIT,
        n.spec.capella_fork_version,
        n.ctx.chain.genesis_validators_root(),
    );
    let root = signing::compute_signing_root(&message, domain);
    let exit = types::fulu::SignedVoluntaryExit {
        message,
        signature: BLSSignature::from(interop_secret_key(20).sign(root.as_slice()).serialize()),
    };
    n.ctx.pool.insert_voluntary_exit(exit.clone());
    for c in body.bls_to_execution_changes.iter() {
        n.ctx.pool.insert_bls_to_execution_change(c.clone());
    }
    let mut proposer_slashings: Vec<_> = body.proposer_slashings.iter().cloned().collect();
    proposer_slashings.sort_by_key(|s| s.signed_header_1.message.proposer_index);
    let expected = [
        serde_json::to_value(&proposer_slashings).unwrap(),
        serde_json::to_value(body.attester_slashings.iter().collect::<Vec<_>>()).unwrap(),
        serde_json::to_value(vec![exit]).unwrap(),
        serde_json::to_value(body.bls_to_execution_changes.iter().collect::<Vec<_>>()).unwrap(),
    ];
    for ((path, _), expected) in lists.iter().zip(expected) {
        let served: serde_json::Value = json_of(n.get(path, None).await).await;
        assert_eq!(served["data"], expected, "{path}");
    }
    let served: serde_json::Value =
        json_of(n.get("/eth/v1/beacon/pool/proposer_slashings", None).await).await;
    assert_eq!(
        served["data"][0]["signed_header_1"]["message"]["proposer_index"], "3",
        "by proposer index"
    );
}

/// `debug/fork_choice` lists every block of the store with its parent, checkpoints' epochs,
/// weight, validity and payload hash; a fork shows both branches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_choice_lists_the_store_blocks_with_weights_and_validity() {
    let n = node().await;
    let (b1, post1) = n.import(&n.genesis, 1);
    let import = |parent: &CachedBeaconState<E>, slot: Slot, contents: &BlockContents, status| {
        let built = build_block(parent, slot, contents, &n.spec).unwrap();
        let now = time_ms(&n.spec, slot);
        n.clock.set_ms(now);
        let verified = n
            .ctx
            .chain
            .verify_block_for_gossip(Arc::new(built.block.clone()), now)
            .unwrap();
        n.ctx
            .chain
            .import_block(verified.block, &[], &AlwaysValid, status)
            .unwrap();
        built.block
    };
    // Block 2 carries slot 1's committee votes (for block 1): weight in the tree.
    let votes = BlockContents {
        attestations: vec![state_harness::AttestationSpec::whole_slot(1)],
        ..BlockContents::default()
    };
    let b2 = import(&post1, 2, &votes, ExecutionStatus::Valid);
    // A fork off block 1 at slot 3, imported with its payload not validated.
    let b3 = import(
        &post1,
        3,
        &BlockContents::default(),
        ExecutionStatus::NotValidated,
    );
    n.ctx.chain.recompute_head().unwrap();

    let response = n.get("/eth/v1/debug/fork_choice", None).await;
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = json_of(response).await;
    for checkpoint in ["justified_checkpoint", "finalized_checkpoint"] {
        assert_eq!(body[checkpoint]["epoch"], "0", "{body}");
        assert_eq!(
            body[checkpoint]["root"],
            n.genesis_root.to_string(),
            "{body}"
        );
    }
    let nodes = body["fork_choice_nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4, "genesis and three blocks: {body}");
    let node_of = |root: Root| {
        nodes
            .iter()
            .find(|n| n["block_root"] == root.to_string())
            .unwrap_or_else(|| panic!("no node {root}: {body}"))
    };
    let hash_of = |block: &SignedBeaconBlock<E>| match block {
        SignedBeaconBlock::Fulu(b) => b.message.body.execution_payload.block_hash.to_string(),
        SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Electra(_)
        | SignedBeaconBlock::Gloas(_) => panic!("a Fulu block"),
    };
    let genesis = node_of(n.genesis_root);
    assert_eq!(genesis["slot"], "0");
    assert_eq!(genesis["validity"], "valid", "the finalized anchor");
    for (block, slot, parent, validity) in [
        (&b1, "1", n.genesis_root, "valid"),
        (&b2, "2", b1.canonical_root(), "valid"),
        (&b3, "3", b1.canonical_root(), "optimistic"),
    ] {
        let node = node_of(block.canonical_root());
        assert_eq!(node["slot"], slot, "{node}");
        assert_eq!(node["parent_root"], parent.to_string(), "{node}");
        assert_eq!(node["justified_epoch"], "0", "{node}");
        assert_eq!(node["finalized_epoch"], "0", "{node}");
        assert_eq!(node["validity"], validity, "{node}");
        assert_eq!(node["execution_block_hash"], hash_of(block), "{node}");
    }
    // Weights are cumulative: a parent carries at least each child's weight.
    let weight = |root: Root| -> u64 { node_of(root)["weight"].as_str().unwrap().parse().unwrap() };
    let w1 = weight(b1.canonical_root());
    assert!(w1 > 0, "slot 1's votes are for block 1: {body}");
    assert!(w1 >= weight(b2.canonical_root()) + weight(b3.canonical_root()));
    assert!(weight(n.genesis_root) >= w1);
    assert_eq!(
        body["extra_data"]["head_root"],
        n.ctx.chain.head().block_root.to_string()
    );
}
