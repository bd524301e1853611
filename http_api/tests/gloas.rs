//! The API over a Gloas chain (minimal preset, every fork through Gloas at genesis, 64
//! validators, the mock execution client attached): the state endpoints on Gloas states (whose
//! registry and balances are progressive lists), and the endpoints of beacon-APIs
//! v5.0.0-alpha.2: execution payload envelopes, PTC duties, proposer duties v2,
//! `payload_attestation_data`, the payload attestation pool and node version v2, in JSON and SSZ.
//!
//! Blocks are self-built (`state_harness::gloas`), their envelopes imported with the mock told
//! the payload is VALID.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use beacon_chain::ExecutionStatus;
use beacon_chain::harness::{ChainHarness, HarnessConfig};
use http_api::{ApiConfig, ApiContext, NoNetwork};
use mock_execution_layer::MockPayloadStatus;
use serde_json::Value;
use ssz::{Decode, Encode};
use state_harness::BuiltBlock;
use state_harness::gloas::{
    GloasBlockContents, ParentPayload, build_gloas_block, self_built_envelope,
};
use state_processing::CachedBeaconState;
use state_processing::gloas::ptc::get_ptc;
use tree_hash::TreeHash;
use types::gloas::{
    PayloadAttestation, PayloadAttestationData, PayloadAttestationMessage,
    SignedExecutionPayloadEnvelope,
};
use types::signing::{DOMAIN_PTC_ATTESTER, compute_domain, compute_signing_root};
use types::typenum::Unsigned;
use types::{
    BLSSignature, BeaconState, ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, Slot,
    ValidatorIndex,
};

mod common;

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const VALIDATORS: usize = 64;
/// Bound on every wait for the server (a hang fails the test, not a timing).
const WAIT: Duration = Duration::from_secs(60);
const SSZ: &str = "application/octet-stream";

struct Node {
    base: String,
    ctx: Arc<ApiContext<E>>,
    network: Arc<NoNetwork>,
    genesis_root: Root,
    harness: ChainHarness<E>,
    _server: common::Server<E>,
}

async fn node() -> Node {
    node_with(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas)).await
}

async fn node_with(spec: ChainSpec) -> Node {
    let harness = HarnessConfig {
        spec,
        validators: VALIDATORS,
        genesis_time: GENESIS_TIME,
        ..HarnessConfig::default()
    }
    .build::<E>()
    .await
    .unwrap();
    let genesis_root = harness.chain.head().block_root;
    let network = Arc::new(NoNetwork::new());
    let server = common::serve(
        &harness,
        network.clone(),
        prometheus::Registry::new(),
        ApiConfig::default(),
    )
    .await;
    Node {
        base: server.base.clone(),
        ctx: server.ctx.clone(),
        network,
        genesis_root,
        harness,
        _server: server,
    }
}

impl Node {
    fn spec(&self) -> &ChainSpec {
        &self.harness.spec
    }

    /// Builds the Gloas block at `slot` on `parent` (a post-state), on the parent's payload or
    /// beside it, moves the clock to its slot and imports it.
    fn import(
        &self,
        parent: &CachedBeaconState<E>,
        slot: Slot,
        parent_payload: ParentPayload,
    ) -> (BuiltBlock<E>, Root) {
        let built = build_gloas_block(
            parent,
            slot,
            &GloasBlockContents {
                base: Default::default(),
                payload_attestations: 0,
                parent_payload,
            },
            self.spec(),
        )
        .unwrap();
        self.harness.set_slot(slot);
        let root = self
            .harness
            .chain
            .import_block(
                Arc::new(built.block.clone()),
                &[],
                &state_processing::per_block::AlwaysValid,
                ExecutionStatus::Valid,
            )
            .unwrap();
        (built, root)
    }

    /// Imports `built`'s self-built envelope (the mock finds its payload VALID) at the current
    /// clock; returns it.
    async fn import_envelope(&self, built: &BuiltBlock<E>) -> SignedExecutionPayloadEnvelope<E> {
        let envelope = self_built_envelope(built, self.spec()).unwrap();
        self.harness.mock.set_payload_status(
            envelope.message.payload.block_hash,
            MockPayloadStatus::Valid,
        );
        self.harness
            .chain
            .import_execution_payload_envelope(Arc::new(envelope.clone()), Vec::new())
            .await
            .unwrap();
        envelope
    }

    /// A chain of Gloas blocks at slots `1..=last`, each with its envelope but the last, each
    /// after the first on its parent's payload; returns the blocks and their roots.
    async fn chain_to(&self, last: Slot) -> Vec<(BuiltBlock<E>, Root)> {
        let mut blocks: Vec<(BuiltBlock<E>, Root)> = Vec::new();
        for slot in 1..=last {
            let (parent, on) = match blocks.last() {
                Some((b, _)) => (b.post.clone(), ParentPayload::Full),
                // The genesis payload is not known: the first block builds beside it.
                None => (
                    self.harness.chain.head().state.clone(),
                    ParentPayload::Empty,
                ),
            };
            let (built, root) = self.import(&parent, slot, on);
            if slot < last {
                self.import_envelope(&built).await;
            }
            blocks.push((built, root));
        }
        blocks
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> reqwest::Response {
        tokio::time::timeout(WAIT, request.send())
            .await
            .unwrap()
            .unwrap()
    }

    async fn get(&self, path: &str, accept: Option<&str>) -> reqwest::Response {
        let mut request = reqwest::Client::new().get(format!("{}{path}", self.base));
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        self.send(request).await
    }

    /// `GET path` in JSON: the status and the body.
    async fn get_json(&self, path: &str) -> (u16, Value) {
        let response = self.get(path, None).await;
        let status = response.status().as_u16();
        (status, body_json(response).await)
    }

    /// `GET path` in SSZ: the status, `Eth-Consensus-Version` and the bytes.
    async fn get_ssz(&self, path: &str) -> (u16, Option<String>, Vec<u8>) {
        let response = self.get(path, Some(SSZ)).await;
        let status = response.status().as_u16();
        let version = response
            .headers()
            .get("eth-consensus-version")
            .map(|v| v.to_str().unwrap().to_owned());
        (status, version, response.bytes().await.unwrap().to_vec())
    }

    /// `POST path` with a JSON `body` (and `Eth-Consensus-Version` when given).
    async fn post_json(&self, path: &str, body: &Value, fork: Option<&str>) -> (u16, Value) {
        let mut request = reqwest::Client::new()
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body).unwrap());
        if let Some(fork) = fork {
            request = request.header("eth-consensus-version", fork);
        }
        let response = self.send(request).await;
        let status = response.status().as_u16();
        (status, body_json(response).await)
    }

    /// `PayloadAttestationMessage` of `validator` on `data`, signed with `signer`'s interop key.
    fn ptc_message(
        &self,
        validator: ValidatorIndex,
        data: &PayloadAttestationData,
        signer: ValidatorIndex,
    ) -> PayloadAttestationMessage {
        let domain = compute_domain(
            DOMAIN_PTC_ATTESTER,
            self.spec()
                .compute_fork_version(data.slot / E::slots_per_epoch()),
            self.ctx.chain.genesis_validators_root(),
        );
        let signature = bls::interop_secret_key(signer as usize)
            .sign(compute_signing_root(data, domain).as_slice())
            .serialize();
        PayloadAttestationMessage {
            validator_index: validator,
            data: data.clone(),
            signature: BLSSignature::from(signature),
        }
    }
}

async fn body_json(response: reqwest::Response) -> Value {
    let bytes = response.bytes().await.unwrap();
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
}

fn quoted(v: &Value) -> u64 {
    v.as_str()
        .unwrap_or_else(|| panic!("not a quoted integer: {v}"))
        .parse()
        .unwrap()
}

fn hex_of(bytes: &[u8]) -> String {
    let digits: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("0x{digits}")
}

/// Every `/eth/v1/beacon/states/{state_id}/*` endpoint answers for a Gloas state, with the
/// values of the state's progressive registry and balances; the debug state in JSON and SSZ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_state_endpoint_answers_for_a_gloas_state() {
    let n = node().await;
    let blocks = n.chain_to(3).await;
    let head = n.harness.chain.head();
    assert_eq!(head.block_root, blocks[2].1);
    let state = head.state.clone();
    assert_eq!(state.state.fork_name(), ForkName::Gloas);
    assert!(state.state.validators().is_none(), "a progressive registry");
    let view = state.view().unwrap();

    // Validators: every one, by index, by key, filtered by status; POST too.
    let (status, body) = n.get_json("/eth/v1/beacon/states/head/validators").await;
    assert_eq!(status, 200, "{body}");
    let data = body["data"].as_array().unwrap();
    assert_eq!(data.len(), VALIDATORS);
    for (i, v) in data.iter().enumerate() {
        let expected = view.validators.get(i).unwrap();
        assert_eq!(quoted(&v["index"]), i as u64);
        assert_eq!(quoted(&v["balance"]), view.balances.get(i).unwrap());
        assert_eq!(v["status"], "active_ongoing");
        assert_eq!(
            v["validator"]["pubkey"].as_str().unwrap(),
            hex_of(expected.pubkey.as_slice())
        );
    }
    let key = hex_of(view.validators.get(5).unwrap().pubkey.as_slice());
    let (status, body) = n
        .get_json(&format!("/eth/v1/beacon/states/head/validators/{key}"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(quoted(&body["data"]["index"]), 5);
    let (status, body) = n.get_json("/eth/v1/beacon/states/head/validators/7").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(quoted(&body["data"]["index"]), 7);
    let (status, _) = n.get_json("/eth/v1/beacon/states/head/validators/64").await;
    assert_eq!(status, 404);
    let (status, body) = n
        .get_json("/eth/v1/beacon/states/head/validators?id=1,3&status=active")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    let (status, body) = n
        .post_json(
            "/eth/v1/beacon/states/head/validators",
            &serde_json::json!({"ids": ["2", key], "statuses": ["exited"]}),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["data"].as_array().unwrap().is_empty(), "none exited");

    // Balances and identities (JSON and SSZ).
    let (status, body) = n
        .get_json("/eth/v1/beacon/states/head/validator_balances?id=0,63")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(quoted(&body["data"][1]["index"]), 63);
    assert_eq!(
        quoted(&body["data"][1]["balance"]),
        view.balances.get(63).unwrap()
    );
    let (status, body) = n
        .post_json(
            "/eth/v1/beacon/states/head/validator_balances",
            &serde_json::json!(["4"]),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        quoted(&body["data"][0]["balance"]),
        view.balances.get(4).unwrap()
    );
    let (status, body) = n
        .post_json(
            "/eth/v1/beacon/states/head/validator_identities",
            &serde_json::json!(["9"]),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"][0]["pubkey"].as_str().unwrap(),
        hex_of(view.validators.get(9).unwrap().pubkey.as_slice())
    );
    let response = n
        .send(
            reqwest::Client::new()
                .post(format!(
                    "{}/eth/v1/beacon/states/head/validator_identities",
                    n.base
                ))
                .header("content-type", "application/json")
                .header("accept", SSZ)
                .body(r#"["9","10"]"#),
        )
        .await;
    assert_eq!(response.status().as_u16(), 200);
    let ssz = response.bytes().await.unwrap();
    // Two (index, pubkey, activation_epoch) records of 8 + 48 + 8 bytes.
    assert_eq!(ssz.len(), 2 * 64);
    assert_eq!(&ssz[..8], &9u64.to_le_bytes());
    assert_eq!(
        &ssz[8..56],
        view.validators.get(9).unwrap().pubkey.as_slice()
    );

    // The other state endpoints.
    for path in [
        "root",
        "fork",
        "finality_checkpoints",
        "committees",
        "committees?epoch=1",
        "sync_committees",
        "randao",
        "pending_deposits",
        "pending_partial_withdrawals",
        "pending_consolidations",
        "proposer_lookahead",
    ] {
        let (status, body) = n
            .get_json(&format!("/eth/v1/beacon/states/head/{path}"))
            .await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (_, body) = n.get_json("/eth/v1/beacon/states/head/root").await;
    assert_eq!(body["data"]["root"], format!("{:?}", head.state_root));
    let (_, body) = n.get_json("/eth/v1/beacon/states/head/committees").await;
    let members: usize = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["validators"].as_array().unwrap().len())
        .sum();
    assert_eq!(members, VALIDATORS, "every active validator once an epoch");
    let (_, body) = n
        .get_json("/eth/v1/beacon/states/head/sync_committees")
        .await;
    assert_eq!(
        body["data"]["validators"].as_array().unwrap().len(),
        <E as EthSpec>::SyncCommitteeSize::to_usize()
    );

    // The debug state: JSON names the fork, SSZ decodes to the head state.
    let (status, body) = n.get_json("/eth/v2/debug/beacon/states/head").await;
    assert_eq!(status, 200);
    assert_eq!(body["version"], "gloas");
    assert_eq!(quoted(&body["data"]["slot"]), 3);
    let (status, version, bytes) = n.get_ssz("/eth/v2/debug/beacon/states/head").await;
    assert_eq!(status, 200);
    assert_eq!(version.as_deref(), Some("gloas"));
    let decoded = BeaconState::<E>::from_ssz_bytes(&bytes, n.spec()).unwrap();
    assert_eq!(decoded.tree_hash_root(), head.state_root);

    // A Gloas block's attestations.
    let (status, body) = n.get_json("/eth/v2/beacon/blocks/head/attestations").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], "gloas");
}

/// The envelope of a FULL block in JSON and SSZ (as imported); 404 for an EMPTY block and for
/// the genesis block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execution_payload_envelopes_are_served_from_the_store() {
    let n = node().await;
    let blocks = n.chain_to(2).await;
    let (b1, r1) = &blocks[0];
    let envelope = self_built_envelope(b1, n.spec()).unwrap();
    let path = format!("/eth/v1/beacon/execution_payload_envelopes/{r1:?}");

    let response = n.get(&path, None).await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.headers()["eth-consensus-version"]
            .to_str()
            .unwrap(),
        "gloas"
    );
    let body = body_json(response).await;
    assert_eq!(body["version"], "gloas");
    assert_eq!(body["finalized"], false);
    assert_eq!(
        body["data"]["message"]["beacon_block_root"],
        format!("{r1:?}")
    );
    assert_eq!(
        quoted(&body["data"]["message"]["payload"]["slot_number"]),
        1
    );
    let served: SignedExecutionPayloadEnvelope<E> =
        serde_json::from_value(body["data"].clone()).unwrap();
    assert_eq!(served, envelope);

    let (status, version, bytes) = n.get_ssz(&path).await;
    assert_eq!(status, 200);
    assert_eq!(version.as_deref(), Some("gloas"));
    assert_eq!(bytes, envelope.as_ssz_bytes());
    // By slot too.
    let (status, body) = n
        .get_json("/eth/v1/beacon/execution_payload_envelopes/1")
        .await;
    assert_eq!(status, 200, "{body}");

    // Slot 2's envelope never came (EMPTY), the genesis block has none, an unknown root.
    for id in [
        "head",
        "2",
        "genesis",
        &format!("{:?}", Root::repeat_byte(7)),
    ] {
        let (status, body) = n
            .get_json(&format!("/eth/v1/beacon/execution_payload_envelopes/{id}"))
            .await;
        assert_eq!(status, 404, "{id}: {body}");
    }
    let (status, _) = n
        .get_json("/eth/v1/beacon/execution_payload_envelopes/current")
        .await;
    assert_eq!(status, 400);
}

/// PTC duties are `get_ptc_assignment` of the asked validators (the first slot of the epoch
/// whose PTC holds each), for the current and next epochs, with the dependent root of
/// `epoch - 1`'s start; proposer duties v2 take the same dependent root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ptc_and_proposer_duties_follow_the_spec() {
    let n = node().await;
    let spe = E::slots_per_epoch();
    // Blocks through slot 9: the head is in epoch 1.
    let blocks = n.chain_to(spe + 1).await;
    let head = n.harness.chain.head();
    let view = head.state.view().unwrap();
    let all: Vec<String> = (0..VALIDATORS).map(|i| i.to_string()).collect();
    let root_at = |slot: Slot| blocks[slot as usize - 1].1;

    for epoch in [1, 2] {
        let (status, body) = n
            .post_json(
                &format!("/eth/v1/validator/duties/ptc/{epoch}"),
                &serde_json::json!(all),
                None,
            )
            .await;
        assert_eq!(status, 200, "{body}");
        // get_ptc_assignment per validator.
        let mut expected = Vec::new();
        for v in 0..VALIDATORS as u64 {
            let slot =
                (epoch * spe..(epoch + 1) * spe).find(|s| get_ptc(&view, *s).unwrap().contains(&v));
            if let Some(slot) = slot {
                expected.push((v, slot));
            }
        }
        let served: Vec<(u64, u64)> = body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (quoted(&d["validator_index"]), quoted(&d["slot"])))
            .collect();
        assert!(!served.is_empty());
        assert_eq!(served, expected, "epoch {epoch}");
        for d in body["data"].as_array().unwrap() {
            let v = quoted(&d["validator_index"]) as usize;
            assert_eq!(
                d["pubkey"].as_str().unwrap(),
                hex_of(view.validators.get(v).unwrap().pubkey.as_slice())
            );
        }
        // get_block_root_at_slot(state, compute_start_slot_at_epoch(epoch - 1) - 1).
        let dependent = match (epoch - 1) * spe {
            0 => n.genesis_root,
            start => root_at(start - 1),
        };
        assert_eq!(body["dependent_root"], format!("{dependent:?}"), "{epoch}");
        assert_eq!(body["execution_optimistic"], false);

        let (status, body) = n
            .get_json(&format!("/eth/v2/validator/duties/proposer/{epoch}"))
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["dependent_root"], format!("{dependent:?}"), "{epoch}");
        let proposers: Vec<u64> = body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| quoted(&d["validator_index"]))
            .collect();
        let lookahead = view.proposer_lookahead.unwrap();
        let start = ((epoch - 1) * spe) as usize;
        let expected: Vec<u64> = lookahead
            .iter()
            .skip(start)
            .take(spe as usize)
            .copied()
            .collect();
        assert_eq!(proposers, expected, "epoch {epoch}");
    }
    // Slot 8's block (the first of epoch 1) was proposed by the duty's validator.
    assert_eq!(
        blocks[spe as usize - 1].0.block.proposer_index(),
        view.proposer_lookahead
            .unwrap()
            .iter()
            .next()
            .copied()
            .unwrap()
    );
    // More than one epoch ahead of the clock, a malformed body.
    let (status, _) = n
        .post_json(
            "/eth/v1/validator/duties/ptc/3",
            &serde_json::json!(["0"]),
            None,
        )
        .await;
    assert_eq!(status, 400);
    let (status, _) = n
        .post_json(
            "/eth/v1/validator/duties/ptc/1",
            &serde_json::json!(["x"]),
            None,
        )
        .await;
    assert_eq!(status, 400);
}

/// `payload_attestation_data` names the block of the slot, with its payload present only when
/// the envelope was imported by the payload deadline; the pool takes PTC members' votes (fork
/// choice is given them, the network gets them, the pool's aggregate holds their bits) and
/// refuses the others with `failures`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payload_attestation_data_and_the_pool() {
    let n = node().await;
    let blocks = n.chain_to(3).await;
    let (b3, r3) = &blocks[2];

    // Slot 2: its envelope came one second into the slot (the harness's clock).
    let (status, body) = n
        .get_json("/eth/v1/validator/payload_attestation_data/2")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], "gloas");
    assert_eq!(
        body["data"]["beacon_block_root"],
        format!("{:?}", blocks[1].1)
    );
    assert_eq!(body["data"]["payload_present"], true);
    assert_eq!(body["data"]["blob_data_available"], true);
    // Slot 3: no envelope yet.
    let (status, version, bytes) = n
        .get_ssz("/eth/v1/validator/payload_attestation_data/3")
        .await;
    assert_eq!(status, 200);
    assert_eq!(version.as_deref(), Some("gloas"));
    let data = PayloadAttestationData::from_ssz_bytes(&bytes).unwrap();
    assert_eq!(
        data,
        PayloadAttestationData {
            beacon_block_root: *r3,
            slot: 3,
            payload_present: false,
            blob_data_available: false,
        }
    );
    // The envelope after the payload deadline (half the slot): imported, not timely.
    let due_ms = n.spec().payload_due_bps * n.spec().slot_duration_ms / 10_000;
    n.harness
        .clock
        .set_ms(n.spec().compute_time_at_slot(GENESIS_TIME, 3) * 1000 + due_ms + 500);
    n.import_envelope(b3).await;
    let (_, body) = n
        .get_json("/eth/v1/validator/payload_attestation_data/3")
        .await;
    assert_eq!(body["data"]["payload_present"], false, "{body}");
    assert_eq!(body["data"]["blob_data_available"], true, "{body}");
    // A slot after the clock's; a slot without a block.
    let (status, _) = n
        .get_json("/eth/v1/validator/payload_attestation_data/9")
        .await;
    assert_eq!(status, 400);
    n.harness.set_slot(4);
    let (status, _) = n
        .get_json("/eth/v1/validator/payload_attestation_data/4")
        .await;
    assert_eq!(status, 404);

    // The pool: members of slot 3's PTC vote, in slot 3.
    n.harness.set_slot(3);
    let ptc = n.ctx.chain.block_ptc(r3).unwrap();
    assert_eq!(ptc.len(), <E as EthSpec>::PtcSize::to_usize());
    let mut members: Vec<u64> = ptc.clone();
    members.sort_unstable();
    members.dedup();
    let outsider = (0..VALIDATORS as u64).find(|v| !ptc.contains(v)).unwrap();
    let vote = PayloadAttestationData {
        beacon_block_root: *r3,
        slot: 3,
        payload_present: true,
        blob_data_available: true,
    };
    let good = [
        n.ptc_message(members[0], &vote, members[0]),
        n.ptc_message(members[1], &vote, members[1]),
    ];
    let bad_signature = n.ptc_message(members[2], &vote, members[0]);
    let not_member = n.ptc_message(outsider, &vote, outsider);
    let body = serde_json::to_value([&good[0], &bad_signature, &good[1], &not_member]).unwrap();

    // Without the version header: refused as a whole.
    let (status, body_missing) = n
        .post_json("/eth/v1/beacon/pool/payload_attestations", &body, None)
        .await;
    assert_eq!(status, 400, "{body_missing}");
    assert_eq!(n.network.counts().payload_attestations, 0);

    let (status, answer) = n
        .post_json(
            "/eth/v1/beacon/pool/payload_attestations",
            &body,
            Some("gloas"),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    let failed: Vec<u64> = answer["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["index"].as_u64().unwrap())
        .collect();
    assert_eq!(failed, vec![1, 3]);
    assert_eq!(n.network.counts().payload_attestations, 2);
    // Sent again (a validator client retrying): accepted, not published twice.
    let again = serde_json::to_value([&good[0]]).unwrap();
    let (status, answer) = n
        .post_json(
            "/eth/v1/beacon/pool/payload_attestations",
            &again,
            Some("gloas"),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(n.network.counts().payload_attestations, 2);

    // The pool's aggregate: the two members' positions, JSON and SSZ.
    let expected_bits: Vec<bool> = ptc
        .iter()
        .map(|m| *m == members[0] || *m == members[1])
        .collect();
    let (status, body) = n
        .get_json("/eth/v1/beacon/pool/payload_attestations?slot=3")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], "gloas");
    let aggregates: Vec<PayloadAttestation<E>> =
        serde_json::from_value(body["data"].clone()).unwrap();
    assert_eq!(aggregates.len(), 1);
    let bits: Vec<bool> = (0..ptc.len())
        .map(|i| aggregates[0].aggregation_bits.get(i).unwrap())
        .collect();
    assert_eq!(bits, expected_bits);
    assert_eq!(aggregates[0].data, vote);
    // Once per position, as `get_indexed_payload_attestation` lists a member drawn twice.
    let signature = {
        let mut aggregate = bls::AggregateSignature::infinity();
        for member in &ptc {
            if let Some(m) = good.iter().find(|m| m.validator_index == *member) {
                aggregate.add(&bls::Signature::deserialize(m.signature.as_slice()).unwrap());
            }
        }
        BLSSignature::from(aggregate.serialize())
    };
    assert_eq!(aggregates[0].signature, signature);
    let (status, version, bytes) = n
        .get_ssz("/eth/v1/beacon/pool/payload_attestations?slot=3")
        .await;
    assert_eq!(status, 200);
    assert_eq!(version.as_deref(), Some("gloas"));
    assert_eq!(
        Vec::<PayloadAttestation<E>>::from_ssz_bytes(&bytes).unwrap(),
        aggregates
    );
    let (_, body) = n
        .get_json("/eth/v1/beacon/pool/payload_attestations?slot=2")
        .await;
    assert!(body["data"].as_array().unwrap().is_empty());

    // SSZ submissions: a third member.
    let third = vec![n.ptc_message(members[2], &vote, members[2])];
    let response = n
        .send(
            reqwest::Client::new()
                .post(format!(
                    "{}/eth/v1/beacon/pool/payload_attestations",
                    n.base
                ))
                .header("content-type", SSZ)
                .header("eth-consensus-version", "gloas")
                .body(third.as_ssz_bytes()),
        )
        .await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(n.network.counts().payload_attestations, 3);
}

/// Node version v2: this node's `ClientVersionV1`, and the execution client's from
/// `engine_getClientVersionV1` (the mock's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_version_v2_names_both_clients() {
    let n = node().await;
    let (status, body) = n.get_json("/eth/v2/node/version").await;
    assert_eq!(status, 200, "{body}");
    let beacon = &body["data"]["beacon_node"];
    assert_eq!(beacon["code"], "AR");
    assert_eq!(beacon["name"], "Arbor");
    assert_eq!(beacon["version"], format!("v{}", env!("CARGO_PKG_VERSION")));
    let commit = beacon["commit"].as_str().unwrap();
    assert!(
        commit.len() == 10
            && commit.starts_with("0x")
            && commit[2..].chars().all(|c| c.is_ascii_hexdigit()),
        "{commit}"
    );
    assert_eq!(body["data"]["execution_client"]["name"], "arbor-mock-el");
    assert_eq!(body["data"]["execution_client"]["code"], "AR");
}

/// A Fulu chain whose Gloas fork is at epoch 1: PTC duties of epoch 0 are none, those of the
/// fork's epoch are read from the head state advanced into Gloas (as `upgrade_to_gloas` fills
/// its PTC window); the Gloas reads answer 404 while the chain has not crossed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ptc_duties_across_the_gloas_fork() {
    let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    spec.gloas_fork_epoch = 1;
    let n = node_with(spec).await;
    let head = n.harness.chain.head();
    assert_eq!(head.state.state.fork_name(), ForkName::Fulu);
    let all: Vec<String> = (0..VALIDATORS).map(|i| i.to_string()).collect();

    let (status, body) = n
        .post_json(
            "/eth/v1/validator/duties/ptc/0",
            &serde_json::json!(all),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["data"].as_array().unwrap().is_empty(), "{body}");
    assert_eq!(body["dependent_root"], format!("{:?}", n.genesis_root));

    let spe = E::slots_per_epoch();
    let mut advanced = head.state.clone();
    state_processing::per_slot::process_slots(&mut advanced, spe, n.spec()).unwrap();
    assert_eq!(advanced.state.fork_name(), ForkName::Gloas);
    let view = advanced.view().unwrap();
    let (status, body) = n
        .post_json(
            "/eth/v1/validator/duties/ptc/1",
            &serde_json::json!(all),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let served: Vec<(u64, u64)> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (quoted(&d["validator_index"]), quoted(&d["slot"])))
        .collect();
    let expected: Vec<(u64, u64)> = (0..VALIDATORS as u64)
        .filter_map(|v| {
            (spe..2 * spe)
                .find(|s| get_ptc(&view, *s).unwrap().contains(&v))
                .map(|slot| (v, slot))
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(served, expected);

    n.harness.set_slot(1);
    for path in [
        "/eth/v1/validator/payload_attestation_data/0",
        "/eth/v1/beacon/execution_payload_envelopes/head",
    ] {
        let (status, body) = n.get_json(path).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
}

/// The next server-sent event of `response`: its name and its `data`.
async fn next_event(
    response: &mut reqwest::Response,
    parser: &mut beacon_api::events::SseParser,
    ready: &mut std::collections::VecDeque<beacon_api::events::SseFrame>,
) -> (String, String) {
    loop {
        if let Some(frame) = ready.pop_front() {
            return (frame.event, frame.data);
        }
        let chunk = tokio::time::timeout(WAIT, response.chunk())
            .await
            .expect("an event within the bound")
            .unwrap()
            .expect("the stream stays open");
        ready.extend(parser.feed(&chunk).unwrap());
    }
}

/// `head_v2` follows the head's payload variant: a new head block is announced EMPTY (after
/// the deprecated `head`), and again, FULL, when its envelope arrives, with the spec's dependent
/// roots; `head` is not sent again for the same block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_v2_is_sent_again_when_the_payload_arrives() {
    let n = node().await;
    let mut response = n
        .send(
            reqwest::Client::new()
                .get(format!("{}/eth/v1/events?topics=head,head_v2", n.base))
                .header("accept", "text/event-stream"),
        )
        .await;
    assert_eq!(response.status().as_u16(), 200);
    let mut parser = beacon_api::events::SseParser::new(1 << 20);
    let mut ready = std::collections::VecDeque::new();

    let blocks = n.chain_to(1).await;
    let (b1, r1) = &blocks[0];
    let (event, data) = next_event(&mut response, &mut parser, &mut ready).await;
    assert_eq!(event, "head");
    let head: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(head["block"], format!("{r1:?}"));
    let mut heads_v2 = Vec::new();
    let (event, data) = next_event(&mut response, &mut parser, &mut ready).await;
    assert_eq!(event, "head_v2");
    heads_v2.push(data);
    n.import_envelope(b1).await;
    let (event, data) = next_event(&mut response, &mut parser, &mut ready).await;
    assert_eq!(event, "head_v2", "no second `head` for the same block");
    heads_v2.push(data);

    let state_root = n.harness.chain.head().state_root;
    for (data, status) in heads_v2.iter().zip([
        beacon_api::events::HeadPayloadStatus::Empty,
        beacon_api::events::HeadPayloadStatus::Full,
    ]) {
        let beacon_api::BeaconEvent::<E>::HeadV2(event) =
            beacon_api::BeaconEvent::decode("head_v2", data).unwrap()
        else {
            panic!("not head_v2: {data}");
        };
        assert_eq!(event.version, ForkName::Gloas);
        assert_eq!(event.data.slot, 1);
        assert_eq!(event.data.block, *r1);
        assert_eq!(event.data.state, state_root);
        assert_eq!(event.data.payload_status, status);
        // Epoch 0: both dependent roots underflow to the genesis block.
        assert_eq!(event.data.current_epoch_dependent_root, n.genesis_root);
        assert_eq!(event.data.next_epoch_dependent_root, n.genesis_root);
        assert!(!event.data.execution_optimistic);
    }
}

/// The Gloas events: an imported envelope announces its block's payload available and then
/// imported (`execution_payload_available`, `execution_payload`), a PTC vote that passed the
/// gossip rules is announced as `payload_attestation_message` (`{version, data}`); each decodes
/// with the client's decoder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gloas_events_announce_payloads_and_ptc_votes() {
    let n = node().await;
    let mut response = n
        .send(
            reqwest::Client::new()
                .get(format!(
                    "{}/eth/v1/events?topics=execution_payload,execution_payload_available,payload_attestation_message",
                    n.base
                ))
                .header("accept", "text/event-stream"),
        )
        .await;
    assert_eq!(response.status().as_u16(), 200);
    let mut parser = beacon_api::events::SseParser::new(1 << 20);
    let mut ready = std::collections::VecDeque::new();

    let blocks = n.chain_to(1).await;
    let (b1, r1) = &blocks[0];
    let envelope = n.import_envelope(b1).await;
    let (event, data) = next_event(&mut response, &mut parser, &mut ready).await;
    assert_eq!(event, "execution_payload_available");
    let beacon_api::BeaconEvent::<E>::ExecutionPayloadAvailable(available) =
        beacon_api::BeaconEvent::decode(&event, &data).unwrap()
    else {
        panic!("not execution_payload_available: {data}");
    };
    assert_eq!((available.slot, available.block_root), (1, *r1));
    let (event, data) = next_event(&mut response, &mut parser, &mut ready).await;
    assert_eq!(event, "execution_payload");
    let beacon_api::BeaconEvent::<E>::ExecutionPayload(imported) =
        beacon_api::BeaconEvent::decode(&event, &data).unwrap()
    else {
        panic!("not execution_payload: {data}");
    };
    assert_eq!(imported.slot, 1);
    assert_eq!(imported.block_root, *r1);
    assert_eq!(imported.block_hash, envelope.message.payload.block_hash);
    assert_eq!(imported.builder_index, envelope.message.builder_index);
    assert!(!imported.execution_optimistic);

    // A PTC member's vote on the slot-1 block, through the pool.
    let ptc = n.ctx.chain.block_ptc(r1).unwrap();
    let vote = PayloadAttestationData {
        beacon_block_root: *r1,
        slot: 1,
        payload_present: true,
        blob_data_available: true,
    };
    let message = n.ptc_message(ptc[0], &vote, ptc[0]);
    n.harness.set_slot(1);
    let body = serde_json::to_value([&message]).unwrap();
    let (status, answer) = n
        .post_json(
            "/eth/v1/beacon/pool/payload_attestations",
            &body,
            Some("gloas"),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let (event, data) = next_event(&mut response, &mut parser, &mut ready).await;
    assert_eq!(event, "payload_attestation_message");
    let beacon_api::BeaconEvent::<E>::PayloadAttestationMessage(received) =
        beacon_api::BeaconEvent::decode(&event, &data).unwrap()
    else {
        panic!("not payload_attestation_message: {data}");
    };
    assert_eq!(received.version, ForkName::Gloas);
    assert_eq!(received.data, message);
}

/// `POST /eth/v1/beacon/execution_payload_bids` checks a bid by the gossip topic's rules and
/// broadcasts only one they accept: a refused bid is a 400 that names the rule (in JSON and in
/// SSZ), nothing is published, and a body without Gloas's `Eth-Consensus-Version` is refused
/// before any check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bid_is_broadcast_only_when_it_passes_the_gossip_rules() {
    let n = node().await;
    let blocks = n.chain_to(2).await;
    let (b2, r2) = &blocks[1];
    let types::SignedBeaconBlock::Gloas(block) = &b2.block else {
        panic!("not a Gloas block");
    };
    let path = "/eth/v1/beacon/execution_payload_bids";
    // A builder's bid for the next slot on the head, from a builder the registry lacks.
    let mut bid = block.message.body.signed_execution_payload_bid.clone();
    bid.message.slot = 3;
    bid.message.parent_block_root = *r2;
    bid.message.builder_index = 0;
    bid.message.value = 1;
    let json = serde_json::to_value(&bid).unwrap();
    let (status, body) = n.post_json(path, &json, Some("gloas")).await;
    assert_eq!(status, 400, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with("the bid failed gossip validation: "),
        "{message}"
    );

    // The same bid in SSZ: decoded, then refused for the same reason.
    let response = n
        .send(
            reqwest::Client::new()
                .post(format!("{}{path}", n.base))
                .header("content-type", SSZ)
                .header("eth-consensus-version", "gloas")
                .body(bid.as_ssz_bytes()),
        )
        .await;
    assert_eq!(response.status().as_u16(), 400);
    assert_eq!(body_json(response).await["message"].as_str(), Some(message));

    // A slot far from the clock: the topic's first rule.
    let mut far = bid.clone();
    far.message.slot = 40;
    let (status, body) = n
        .post_json(path, &serde_json::to_value(&far).unwrap(), Some("gloas"))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("bid slot 40 is not the current or next slot"),
        "{body}"
    );

    // No version, a fork before Gloas, a body that is not a bid.
    for (fork, body) in [
        (None, json.clone()),
        (Some("fulu"), json.clone()),
        (Some("gloas"), serde_json::json!({"message": {}})),
    ] {
        let (status, answer) = n.post_json(path, &body, fork).await;
        assert_eq!(status, 400, "{fork:?}: {answer}");
    }
    assert_eq!(n.network.counts().bids, 0, "a refused bid was broadcast");
}
