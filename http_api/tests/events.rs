//! `GET /eth/v1/events` for the operation topics and `payload_attributes`: operations submitted
//! through the pool endpoints are verified by the chain's gossip functions, which publish them
//! on the chain's event bus; each event's `data` must be the submitted object's JSON (the
//! spec's encoding, no `version` wrapper), and `payload_attributes` the spec's
//! `{version, data}` for the build the node started.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use beacon_api::events::{SseFrame, SseParser};
use beacon_api::{BeaconNodeHttpClient, ProposerPreparationData, Timeouts};
use beacon_chain::harness::{ChainHarness, HarnessConfig};
use beacon_chain::{ManualSlotClock, ProducerConfig};
use http_api::{ApiConfig, ApiContext, NoNetwork};
use state_harness::{BlockContents, build_block};
use state_processing::CachedBeaconState;
use state_processing::genesis::interop_secret_key;
use tree_hash::TreeHash;
use types::altair::{
    ContributionAndProof, SignedContributionAndProof, SyncAggregatorSelectionData,
};
use types::electra::{
    AggregateAndProof, AttestationData, SignedAggregateAndProof, SingleAttestation,
};
use types::typenum::Unsigned;
use types::{
    Address, BLSSignature, ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock,
    Slot, signing,
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

/// A node at genesis (minimal preset, Fulu at genesis) whose validators may exit at once
/// (`SHARD_COMMITTEE_PERIOD` 0), serving the API on 127.0.0.1:0.
async fn node() -> Node {
    let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    spec.shard_committee_period = 0;
    // The harness's chain with the producer's default options and no execution client
    // attached to the chain.
    let harness = HarnessConfig {
        spec,
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
    let server = common::serve(
        &harness,
        Arc::new(NoNetwork::new()),
        prometheus::Registry::new(),
        ApiConfig::default(),
    )
    .await;
    let base = server.base.clone();
    let client =
        BeaconNodeHttpClient::from_url_str(&base, Timeouts::from_slot_duration(WAIT)).unwrap();
    Node {
        client,
        base,
        ctx: server.ctx.clone(),
        clock: harness.clock.clone(),
        spec: harness.spec.clone(),
        genesis,
        genesis_root,
        harness,
        _server: server,
    }
}

/// An open `/eth/v1/events` stream, read frame by frame as the server sent it.
struct Events {
    response: reqwest::Response,
    parser: SseParser,
    ready: VecDeque<SseFrame>,
}

impl Events {
    async fn open(n: &Node, topics: &[&str]) -> Self {
        let response = tokio::time::timeout(
            WAIT,
            reqwest::Client::new()
                .get(format!(
                    "{}/eth/v1/events?topics={}",
                    n.base,
                    topics.join(",")
                ))
                .header("accept", "text/event-stream")
                .send(),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(response.status(), 200);
        Self {
            response,
            parser: SseParser::new(1 << 20),
            ready: VecDeque::new(),
        }
    }

    /// The next event: its name and its `data` as JSON.
    async fn next(&mut self) -> (String, serde_json::Value) {
        loop {
            if let Some(frame) = self.ready.pop_front() {
                let data = serde_json::from_str(&frame.data)
                    .unwrap_or_else(|e| panic!("{e}: {}", frame.data));
                return (frame.event, data);
            }
            let chunk = tokio::time::timeout(WAIT, self.response.chunk())
                .await
                .expect("an event within the bound")
                .unwrap()
                .expect("the stream stays open");
            self.ready.extend(self.parser.feed(&chunk).unwrap());
        }
    }
}

fn json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap()
}

/// Signs `object` with `validator`'s interop key under `domain_type` at `epoch`.
fn sign<T: TreeHash>(
    n: &Node,
    object: &T,
    domain_type: types::DomainType,
    epoch: u64,
    validator: u64,
) -> BLSSignature {
    let domain = signing::compute_domain(
        domain_type,
        n.spec.compute_fork_version(epoch),
        n.ctx.chain.genesis_validators_root(),
    );
    let root = signing::compute_signing_root(object, domain);
    BLSSignature::from(
        interop_secret_key(validator as usize)
            .sign(root.as_slice())
            .serialize(),
    )
}

async fn post(n: &Node, path: &str, body: serde_json::Value) {
    let response = tokio::time::timeout(
        WAIT,
        reqwest::Client::new()
            .post(format!("{}{path}", n.base))
            .header("content-type", "application/json")
            .header("eth-consensus-version", "fulu")
            .body(body.to_string())
            .send(),
    )
    .await
    .unwrap()
    .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, 200, "{path}: {text}");
}

/// The proposer of slot 1 on the genesis state.
fn slot_one_proposer(n: &Node) -> u64 {
    let built = build_block(&n.genesis, 1, &BlockContents::default(), &n.spec).unwrap();
    let SignedBeaconBlock::Fulu(block) = built.block else {
        panic!("a Fulu block");
    };
    block.message.proposer_index
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_submissions_arrive_on_their_topics_as_the_submitted_objects() {
    let n = node().await;
    let mut events = Events::open(
        &n,
        &[
            "single_attestation",
            "attestation",
            "voluntary_exit",
            "proposer_slashing",
            "attester_slashing",
            "bls_to_execution_change",
            "contribution_and_proof",
        ],
    )
    .await;

    // A single attestation of slot 0, then its aggregate (every member of a minimal committee
    // of fewer than TARGET_AGGREGATORS_PER_COMMITTEE validators is an aggregator).
    let duties = n
        .client
        .post_validator_duties_attester(0, &(0..VALIDATORS as u64).collect::<Vec<_>>())
        .await
        .unwrap()
        .data;
    let duty = duties.iter().find(|d| d.slot == 0).unwrap();
    let data: AttestationData = n
        .client
        .get_validator_attestation_data(0, duty.committee_index)
        .await
        .unwrap()
        .data;
    let single = SingleAttestation {
        committee_index: duty.committee_index,
        attester_index: duty.validator_index,
        data: data.clone(),
        signature: sign(
            &n,
            &data,
            signing::DOMAIN_BEACON_ATTESTER,
            0,
            duty.validator_index,
        ),
    };
    n.client
        .post_beacon_pool_attestations_v2(ForkName::Fulu, std::slice::from_ref(&single))
        .await
        .unwrap();
    assert_eq!(
        events.next().await,
        ("single_attestation".to_string(), json(&single))
    );

    let aggregate = n
        .client
        .get_validator_aggregate_attestation_v2::<E>(0, data.tree_hash_root(), duty.committee_index)
        .await
        .unwrap()
        .data;
    let types::Attestation::Fulu(aggregate) = aggregate else {
        panic!("a Fulu aggregate");
    };
    let message = AggregateAndProof {
        aggregator_index: duty.validator_index,
        aggregate: aggregate.clone(),
        selection_proof: sign(
            &n,
            &0u64,
            signing::DOMAIN_SELECTION_PROOF,
            0,
            duty.validator_index,
        ),
    };
    let signed = SignedAggregateAndProof {
        signature: sign(
            &n,
            &message,
            signing::DOMAIN_AGGREGATE_AND_PROOF,
            0,
            duty.validator_index,
        ),
        message,
    };
    n.client
        .post_validator_aggregate_and_proofs_v2(ForkName::Fulu, &[signed])
        .await
        .unwrap();
    assert_eq!(
        events.next().await,
        ("attestation".to_string(), json(&aggregate))
    );

    // A sync committee member's message of slot 0, then its contribution (every member of a
    // minimal subcommittee is an aggregator).
    let sync_duties = n
        .client
        .post_validator_duties_sync(0, &(0..VALIDATORS as u64).collect::<Vec<_>>())
        .await
        .unwrap()
        .data;
    let member = &sync_duties[0];
    let message = types::altair::SyncCommitteeMessage {
        slot: 0,
        beacon_block_root: n.genesis_root,
        validator_index: member.validator_index,
        signature: sign(
            &n,
            &n.genesis_root,
            signing::DOMAIN_SYNC_COMMITTEE,
            0,
            member.validator_index,
        ),
    };
    n.client
        .post_beacon_pool_sync_committees(std::slice::from_ref(&message))
        .await
        .unwrap();
    let subcommittee =
        member.validator_sync_committee_indices[0] / <E as EthSpec>::SyncSubcommitteeSize::to_u64();
    let contribution = n
        .client
        .get_validator_sync_committee_contribution::<E>(0, subcommittee, n.genesis_root)
        .await
        .unwrap()
        .data;
    let message = ContributionAndProof {
        aggregator_index: member.validator_index,
        contribution,
        selection_proof: sign(
            &n,
            &SyncAggregatorSelectionData {
                slot: 0,
                subcommittee_index: subcommittee,
            },
            signing::DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
            0,
            member.validator_index,
        ),
    };
    let signed = SignedContributionAndProof {
        signature: sign(
            &n,
            &message,
            signing::DOMAIN_CONTRIBUTION_AND_PROOF,
            0,
            member.validator_index,
        ),
        message,
    };
    n.client
        .post_validator_contribution_and_proofs(std::slice::from_ref(&signed))
        .await
        .unwrap();
    assert_eq!(
        events.next().await,
        ("contribution_and_proof".to_string(), json(&signed))
    );

    // Exits, slashings and a BLS change signed by the harness, none of the slot-1 proposer.
    let proposer = slot_one_proposer(&n);
    let mut others = (0..VALIDATORS as u64).filter(|&v| v != proposer);
    let mut pick = || others.next().unwrap();
    let contents = BlockContents {
        proposer_slashings: vec![pick()],
        attester_slashings: vec![vec![pick(), pick()]],
        voluntary_exits: vec![pick()],
        bls_to_execution_changes: vec![(pick(), Address::repeat_byte(0x42))],
        ..BlockContents::default()
    };
    let built = build_block(&n.genesis, 1, &contents, &n.spec).unwrap();
    let SignedBeaconBlock::Fulu(block) = built.block else {
        panic!("a Fulu block");
    };
    let body = block.message.body;

    let exit = &body.voluntary_exits[0];
    post(&n, "/eth/v1/beacon/pool/voluntary_exits", json(exit)).await;
    assert_eq!(
        events.next().await,
        ("voluntary_exit".to_string(), json(exit))
    );

    let proposer_slashing = &body.proposer_slashings[0];
    post(
        &n,
        "/eth/v1/beacon/pool/proposer_slashings",
        json(proposer_slashing),
    )
    .await;
    assert_eq!(
        events.next().await,
        ("proposer_slashing".to_string(), json(proposer_slashing))
    );

    let attester_slashing = &body.attester_slashings[0];
    post(
        &n,
        "/eth/v2/beacon/pool/attester_slashings",
        json(attester_slashing),
    )
    .await;
    assert_eq!(
        events.next().await,
        ("attester_slashing".to_string(), json(attester_slashing))
    );

    let change = &body.bls_to_execution_changes[0];
    post(
        &n,
        "/eth/v1/beacon/pool/bls_to_execution_changes",
        serde_json::json!([change]),
    )
    .await;
    let (topic, data) = events.next().await;
    assert_eq!(
        (topic.as_str(), &data),
        ("bls_to_execution_change", &json(change))
    );
    // The spec's encoding: quoted integers, 0x hex.
    assert!(data["message"]["validator_index"].is_string(), "{data}");
    assert!(
        data["signature"].as_str().unwrap().starts_with("0x"),
        "{data}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prepared_proposers_payload_build_is_announced_with_its_attributes() {
    let n = node().await;
    let mut events = Events::open(&n, &["payload_attributes"]).await;
    let fee_recipient = Address::repeat_byte(0xfe);
    let preparations: Vec<_> = (0..VALIDATORS as u64)
        .map(|validator_index| ProposerPreparationData {
            validator_index,
            fee_recipient,
        })
        .collect();
    n.client
        .post_validator_prepare_beacon_proposer(&preparations)
        .await
        .unwrap();
    let proposer = slot_one_proposer(&n);
    assert!(
        n.ctx
            .producer
            .prepare_payload_for_slot(1)
            .await
            .unwrap()
            .is_some(),
        "a prepared proposer gets a build"
    );
    let (topic, event) = events.next().await;
    assert_eq!(topic, "payload_attributes");
    assert_eq!(event, slot_one_attributes(&n, proposer, fee_recipient));
}

/// The `payload_attributes` event of a build for slot 1 on genesis.
fn slot_one_attributes(n: &Node, proposer: u64, fee_recipient: Address) -> serde_json::Value {
    let withdrawals: Vec<types::capella::Withdrawal> = Vec::new();
    // get_randao_mix(state, 0) of the genesis state, which slot 1 is still in.
    let prev_randao = *n.genesis.state.randao_mixes().get(0).unwrap();
    serde_json::json!({
        "version": "fulu",
        "data": {
            "proposer_index": proposer.to_string(),
            "proposal_slot": "1",
            "parent_block_number": "0",
            "parent_block_root": n.genesis_root,
            "parent_block_hash": n.harness.mock.genesis_block_hash(),
            "payload_attributes": {
                "timestamp": n.spec.compute_time_at_slot(GENESIS_TIME, 1).to_string(),
                "prev_randao": prev_randao,
                "suggested_fee_recipient": fee_recipient,
                "withdrawals": withdrawals,
                "parent_beacon_block_root": n.genesis_root,
            },
        },
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_produced_without_a_prepared_build_announces_the_build_it_starts() {
    let n = node().await;
    let mut events = Events::open(&n, &["payload_attributes"]).await;
    n.clock.set_ms(time_ms(&n.spec, 1));
    let proposer = slot_one_proposer(&n);
    let randao = sign(&n, &0u64, signing::DOMAIN_RANDAO, 0, proposer);
    n.client
        .get_validator_blocks_v3::<E>(1, &randao, None, None, false)
        .await
        .unwrap();
    let (topic, event) = events.next().await;
    assert_eq!(topic, "payload_attributes");
    assert_eq!(
        event,
        slot_one_attributes(
            &n,
            proposer,
            ProducerConfig::default().default_fee_recipient
        )
    );
}
