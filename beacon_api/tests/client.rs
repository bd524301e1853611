//! `BeaconNodeHttpClient` against a tiny in-test HTTP server on 127.0.0.1 that records each
//! request and answers with a fixed response. Every wait is bounded by a timeout that fails
//! the test.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is the test failing"
)]

use std::collections::HashMap;
use std::time::Duration;

use beacon_api::client::ProducedBlock;
use beacon_api::negotiation::PREFER_SSZ_ACCEPT;
use beacon_api::{
    ApiErrorBody, BeaconNodeHttpClient, BlockContents, BroadcastValidation, ClientError,
    ForkVersionedJson, NodeHealth, SignedBlockContents, StateId, Timeouts, ValidatorId,
    ValidatorStatusFilter,
};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use types::{BLSSignature, ForkName, MinimalEthSpec, U256};

type E = MinimalEthSpec;

/// Bound on any single wait in these tests.
const BOUND: Duration = Duration::from_secs(20);

/// A request as the server read it.
#[derive(Debug)]
struct Recorded {
    method: String,
    /// Path and query, as sent.
    target: String,
    /// Header names lower-cased.
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Recorded {
    fn query(&self) -> HashMap<String, String> {
        let url = reqwest::Url::parse(&format!("http://x{}", self.target)).unwrap();
        url.query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    fn path(&self) -> &str {
        self.target.split('?').next().unwrap()
    }
}

/// A fixed HTTP/1.1 response.
fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

fn json_response(status: u16, body: &str) -> Vec<u8> {
    response(
        status,
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Recorded {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "client closed before sending a full request head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap().split(' ');
    let method = request_line.next().unwrap().to_string();
    let target = request_line.next().unwrap().to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .map_or(0, |v| v.parse().unwrap());
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "client closed before sending the whole body");
        body.extend_from_slice(&chunk[..n]);
    }
    Recorded {
        method,
        target,
        headers,
        body,
    }
}

/// Serves one response per connection, in order; returns the base URL (with a path prefix, to
/// check that paths join under it) and the recorded requests once all are served.
async fn serve(responses: Vec<Vec<u8>>) -> (String, JoinHandle<Vec<Recorded>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/prefix/", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let mut recorded = Vec::new();
        for reply in responses {
            let (mut stream, _) = listener.accept().await.unwrap();
            recorded.push(read_request(&mut stream).await);
            stream.write_all(&reply).await.unwrap();
            stream.shutdown().await.unwrap();
        }
        recorded
    });
    (base, handle)
}

fn client(base: &str) -> BeaconNodeHttpClient {
    BeaconNodeHttpClient::from_url_str(base, Timeouts::default()).unwrap()
}

async fn finish(handle: JoinHandle<Vec<Recorded>>) -> Vec<Recorded> {
    tokio::time::timeout(BOUND, handle)
        .await
        .expect("server finished in time")
        .unwrap()
}

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const GENESIS: &str = r#"{"data":{"genesis_time":"1590832934","genesis_validators_root":"0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2","genesis_fork_version":"0x00000000"}}"#;
const PUBKEY: &str = "0x93247f2209abcacf57b75a51dafae777f9dd38bc7053d1af526f220a7489a6d3a2753e5f3e8b1cfe39b56f43611df74a";

#[tokio::test]
async fn get_genesis_reads_the_data_envelope() {
    let (base, server) = serve(vec![json_response(200, GENESIS)]).await;
    let genesis = tokio::time::timeout(BOUND, client(&base).get_beacon_genesis())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(genesis.data.genesis_time, 1_590_832_934);
    let requests = finish(server).await;
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].path(), "/prefix/eth/v1/beacon/genesis");
    assert_eq!(requests[0].headers["accept"], "application/json");
}

#[tokio::test]
async fn state_validators_send_ids_and_statuses_in_the_query() {
    let validator = fixture("validator.json");
    let body = format!(
        r#"{{"execution_optimistic":false,"finalized":true,"data":[{{"index":"1","balance":"31000000000","status":"active_ongoing","validator":{validator}}}]}}"#
    );
    let (base, server) = serve(vec![json_response(200, &body)]).await;
    let ids = [ValidatorId::Index(1), PUBKEY.parse().unwrap()];
    let statuses: [ValidatorStatusFilter; 2] =
        ["active".parse().unwrap(), "pending_queued".parse().unwrap()];
    let response = tokio::time::timeout(
        BOUND,
        client(&base).get_beacon_states_validators(StateId::Head, &ids, &statuses),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(response.finalized);
    assert_eq!(response.data[0].balance, 31_000_000_000);
    let requests = finish(server).await;
    assert_eq!(
        requests[0].path(),
        "/prefix/eth/v1/beacon/states/head/validators"
    );
    let query = requests[0].query();
    assert_eq!(query["id"], format!("1,{PUBKEY}"));
    assert_eq!(query["status"], "active,pending_queued");
}

#[tokio::test]
async fn attester_duties_post_quoted_indices() {
    let body = format!(
        r#"{{"dependent_root":"0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2","execution_optimistic":false,"data":[{{"pubkey":"{PUBKEY}","validator_index":"2","committee_index":"1","committee_length":"4","committees_at_slot":"2","validator_committee_index":"3","slot":"41"}}]}}"#
    );
    let (base, server) = serve(vec![json_response(200, &body)]).await;
    let duties = tokio::time::timeout(
        BOUND,
        client(&base).post_validator_duties_attester(5, &[2, 7]),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(duties.data[0].slot, 41);
    let requests = finish(server).await;
    assert_eq!(requests[0].method, "POST");
    assert_eq!(
        requests[0].path(),
        "/prefix/eth/v1/validator/duties/attester/5"
    );
    assert_eq!(requests[0].headers["content-type"], "application/json");
    assert_eq!(requests[0].body, br#"["2","7"]"#);
}

#[tokio::test]
async fn pool_failures_carry_the_indexed_error_body() {
    let failure = r#"{"code":400,"message":"some failures","failures":[{"index":1,"message":"invalid signature"}]}"#;
    let (base, server) = serve(vec![json_response(400, failure)]).await;
    let attestations: Vec<types::electra::SingleAttestation> =
        serde_json::from_value(fixture("single_attestations.json")).unwrap();
    let err = tokio::time::timeout(
        BOUND,
        client(&base).post_beacon_pool_attestations_v2(ForkName::Fulu, &attestations),
    )
    .await
    .unwrap()
    .expect_err("the node refused an item");
    let ClientError::Api {
        status,
        body: ApiErrorBody::Indexed(body),
        ..
    } = &err
    else {
        panic!("expected an indexed API error, got {err:?}");
    };
    assert_eq!(status.as_u16(), 400);
    assert_eq!(
        (body.failures[0].index, body.failures[0].message.as_str()),
        (1, "invalid signature")
    );
    let requests = finish(server).await;
    assert_eq!(
        requests[0].path(),
        "/prefix/eth/v2/beacon/pool/attestations"
    );
    assert_eq!(requests[0].headers["eth-consensus-version"], "fulu");
    let sent: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(sent, fixture("single_attestations.json"));
}

#[tokio::test]
async fn error_statuses_without_an_api_body_are_kept_verbatim() {
    let (base, server) = serve(vec![response(502, &[], b"bad gateway")]).await;
    let err = tokio::time::timeout(BOUND, client(&base).get_node_syncing())
        .await
        .unwrap()
        .expect_err("502");
    assert!(
        matches!(&err, ClientError::UnexpectedStatus { status, body, .. } if status.as_u16() == 502 && body == "bad gateway"),
        "{err:?}"
    );
    finish(server).await;
}

fn fulu_contents() -> BlockContents<E> {
    BlockContents::<E>::deserialize_by_fork(
        fixture("fulu_block_contents.json")["data"].clone(),
        ForkName::Fulu,
    )
    .unwrap()
}

const V3_HEADERS: [(&str, &str); 4] = [
    ("Eth-Consensus-Version", "fulu"),
    ("Eth-Execution-Payload-Blinded", "false"),
    ("Eth-Execution-Payload-Value", "12345"),
    ("Eth-Consensus-Block-Value", "678"),
];

#[tokio::test]
async fn produce_block_v3_asks_for_ssz_and_decodes_it_by_the_headers() {
    let contents = fulu_contents();
    let mut headers = V3_HEADERS.to_vec();
    headers.push(("Content-Type", "application/octet-stream"));
    let (base, server) = serve(vec![response(200, &headers, &contents.as_ssz_bytes())]).await;
    let randao = BLSSignature::repeat_byte(0xc0);
    let graffiti = types::Bytes32::repeat_byte(0x41);
    let (metadata, block) = tokio::time::timeout(
        BOUND,
        client(&base).get_validator_blocks_v3::<E>(66, &randao, Some(&graffiti), Some(100), true),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(metadata.consensus_version, ForkName::Fulu);
    assert_eq!(metadata.consensus_block_value, U256::from(678));
    assert_eq!(block, ProducedBlock::Full(contents));
    let requests = finish(server).await;
    assert_eq!(requests[0].path(), "/prefix/eth/v3/validator/blocks/66");
    assert_eq!(requests[0].headers["accept"], PREFER_SSZ_ACCEPT);
    let query = requests[0].query();
    assert_eq!(query["randao_reveal"], randao.to_string());
    assert_eq!(query["graffiti"], graffiti.to_string());
    assert_eq!(query["builder_boost_factor"], "100");
    assert_eq!(query["skip_randao_verification"], "");
}

#[tokio::test]
async fn produce_block_v3_reads_json_when_the_node_answers_json() {
    let body = fixture("fulu_block_contents.json").to_string();
    let mut headers = V3_HEADERS.to_vec();
    headers.push(("Content-Type", "application/json"));
    let (base, server) = serve(vec![response(200, &headers, body.as_bytes())]).await;
    let randao = BLSSignature::repeat_byte(0xc0);
    let (_, block) = tokio::time::timeout(
        BOUND,
        client(&base).get_validator_blocks_v3::<E>(66, &randao, None, None, false),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(block, ProducedBlock::Full(fulu_contents()));
    let requests = finish(server).await;
    let query = requests[0].query();
    assert!(!query.contains_key("graffiti") && !query.contains_key("skip_randao_verification"));
}

#[tokio::test]
async fn produce_block_v3_without_its_headers_is_an_error() {
    let contents = fulu_contents();
    let headers = [
        ("Content-Type", "application/octet-stream"),
        ("Eth-Consensus-Version", "fulu"),
    ];
    let (base, server) = serve(vec![response(200, &headers, &contents.as_ssz_bytes())]).await;
    let randao = BLSSignature::repeat_byte(0xc0);
    let err = tokio::time::timeout(
        BOUND,
        client(&base).get_validator_blocks_v3::<E>(66, &randao, None, None, false),
    )
    .await
    .unwrap()
    .expect_err("headers missing");
    assert!(matches!(err, ClientError::Header { .. }), "{err:?}");
    finish(server).await;
}

#[tokio::test]
async fn publish_block_v2_in_ssz_sends_the_bytes_and_the_version() {
    let (block, blobs) = fulu_contents().into_block_and_blobs();
    let types::BeaconBlock::Fulu(message) = block else {
        panic!("fixture is a Fulu block")
    };
    let signed = types::SignedBeaconBlock::Fulu(types::fulu::SignedBeaconBlock {
        message,
        signature: BLSSignature::repeat_byte(0xa1),
    });
    let contents = SignedBlockContents::new(signed, blobs).unwrap();
    let (base, server) = serve(vec![response(200, &[], b""), response(202, &[], b"")]).await;
    let client = client(&base);
    tokio::time::timeout(
        BOUND,
        client.post_beacon_blocks_v2_ssz(&contents, BroadcastValidation::ConsensusAndEquivocation),
    )
    .await
    .unwrap()
    .unwrap();
    // 202: broadcast but failed integration; still a success status for the caller.
    tokio::time::timeout(
        BOUND,
        client.post_beacon_blocks_v2(&contents, BroadcastValidation::Gossip),
    )
    .await
    .unwrap()
    .unwrap();
    let requests = finish(server).await;
    assert_eq!(requests[0].path(), "/prefix/eth/v2/beacon/blocks");
    assert_eq!(
        requests[0].query()["broadcast_validation"],
        "consensus_and_equivocation"
    );
    assert_eq!(
        requests[0].headers["content-type"],
        "application/octet-stream"
    );
    assert_eq!(requests[0].headers["eth-consensus-version"], "fulu");
    assert_eq!(
        SignedBlockContents::<E>::from_ssz_bytes_by_fork(&requests[0].body, ForkName::Fulu)
            .unwrap(),
        contents
    );
    assert_eq!(requests[1].headers["content-type"], "application/json");
    assert_eq!(requests[1].query()["broadcast_validation"], "gossip");
    let sent = SignedBlockContents::<E>::deserialize_by_fork(
        serde_json::from_slice::<Value>(&requests[1].body).unwrap(),
        ForkName::Fulu,
    )
    .unwrap();
    assert_eq!(sent, contents);
}

#[tokio::test]
async fn health_is_read_from_the_status_code() {
    let (base, server) = serve(vec![
        response(200, &[], b""),
        response(299, &[], b""),
        response(503, &[], b""),
    ])
    .await;
    let client = client(&base);
    let ask = |code| client.get_node_health(code);
    assert_eq!(
        tokio::time::timeout(BOUND, ask(None))
            .await
            .unwrap()
            .unwrap(),
        NodeHealth::Ready
    );
    assert_eq!(
        tokio::time::timeout(BOUND, ask(Some(299)))
            .await
            .unwrap()
            .unwrap(),
        NodeHealth::Syncing
    );
    assert_eq!(
        tokio::time::timeout(BOUND, ask(None))
            .await
            .unwrap()
            .unwrap(),
        NodeHealth::NotReady
    );
    let requests = finish(server).await;
    assert_eq!(requests[1].query()["syncing_status"], "299");
}

#[tokio::test]
async fn a_missing_block_is_none() {
    let (base, server) = serve(vec![json_response(
        404,
        r#"{"code":404,"message":"Block not found"}"#,
    )])
    .await;
    let block = tokio::time::timeout(
        BOUND,
        client(&base).get_beacon_blocks_ssz::<E>("finalized".parse().unwrap()),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(block, None);
    let requests = finish(server).await;
    assert_eq!(requests[0].path(), "/prefix/eth/v2/beacon/blocks/finalized");
    assert_eq!(requests[0].headers["accept"], "application/octet-stream");
}

#[tokio::test]
async fn a_node_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    // Accept and read the request, then hold the connection open without answering.
    let server = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let request = read_request(&mut stream).await;
        let mut rest = [0u8; 1];
        let _ = stream.read(&mut rest).await; // returns when the client gives up
        request
    });
    let timeouts = Timeouts {
        attestation: Duration::from_millis(200),
        ..Timeouts::default()
    };
    let client = BeaconNodeHttpClient::from_url_str(&base, timeouts).unwrap();
    let err = tokio::time::timeout(BOUND, client.get_validator_attestation_data(3, 1))
        .await
        .expect("the client's own timeout fires first")
        .expect_err("no answer");
    assert!(err.is_timeout(), "{err:?}");
    let request = tokio::time::timeout(BOUND, server).await.unwrap().unwrap();
    assert_eq!(request.query()["committee_index"], "1");
}

#[tokio::test]
async fn every_validator_client_endpoint_uses_its_spec_path_and_body() {
    let root = "0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2";
    let signed_block = fixture("fulu_signed_block.json")["data"].clone();
    let block =
        types::SignedBeaconBlock::<E>::deserialize_by_fork(signed_block, ForkName::Fulu).unwrap();
    let block_ssz = ssz::Encode::as_ssz_bytes(&block);
    let registration = format!(
        r#"[{{"message":{{"fee_recipient":"0xabcf8e0d4e9587369b2301d0790347320302cc09","gas_limit":"30000000","timestamp":"1700000000","pubkey":"{PUBKEY}"}},"signature":"0x{}"}}]"#,
        "1b".repeat(96)
    );
    let responses = vec![
        json_response(
            200,
            r#"{"data":{"SECONDS_PER_SLOT":"6","BLOB_SCHEDULE":[]}}"#,
        ),
        json_response(
            200,
            r#"{"data":[{"previous_version":"0x00000000","current_version":"0x06000000","epoch":"0"}]}"#,
        ),
        json_response(200, r#"{"data":{"version":"Other/v1.2.3/linux"}}"#),
        json_response(
            200,
            r#"{"data":{"peer_id":"16Uiu2","enr":"enr:-x","p2p_addresses":[],"discovery_addresses":[],"metadata":{"seq_number":"3","attnets":"0x00","syncnets":"0x00","custody_group_count":"128"}}}"#,
        ),
        json_response(
            200,
            r#"{"execution_optimistic":false,"finalized":false,"data":[]}"#,
        ),
        json_response(
            200,
            &format!(
                r#"{{"dependent_root":"{root}","execution_optimistic":false,"data":[{{"pubkey":"{PUBKEY}","validator_index":"4","slot":"80"}}]}}"#
            ),
        ),
        json_response(
            200,
            &format!(
                r#"{{"execution_optimistic":false,"data":[{{"pubkey":"{PUBKEY}","validator_index":"4","validator_sync_committee_indices":["3"]}}]}}"#
            ),
        ),
        response(
            200,
            &[
                ("Content-Type", "application/json"),
                ("Eth-Consensus-Version", "fulu"),
            ],
            fixture("aggregate_attestation.json").to_string().as_bytes(),
        ),
        response(200, &[], b""),
        response(200, &[], b""),
        json_response(
            200,
            &fixture("sync_committee_contribution.json").to_string(),
        ),
        response(200, &[], b""),
        response(200, &[], b""),
        response(200, &[], b""),
        response(200, &[], b""),
        response(200, &[], b""),
        json_response(200, r#"{"data":[{"index":"4","is_live":true}]}"#),
        response(
            200,
            &[
                ("Content-Type", "application/octet-stream"),
                ("Eth-Consensus-Version", "fulu"),
            ],
            b"\x01\x02",
        ),
        response(
            200,
            &[
                ("Content-Type", "application/octet-stream"),
                ("Eth-Consensus-Version", "fulu"),
            ],
            &block_ssz,
        ),
    ];
    let (base, server) = serve(responses).await;
    let c = client(&base);
    let root_value: types::Root = root.parse().unwrap();
    let run = async {
        assert_eq!(
            c.get_config_spec()
                .await
                .unwrap()
                .data
                .get_u64("SECONDS_PER_SLOT"),
            Some(6)
        );
        assert_eq!(
            c.get_config_fork_schedule().await.unwrap().data[0]
                .current_version
                .0,
            [6, 0, 0, 0]
        );
        assert_eq!(
            c.get_node_version().await.unwrap().data.version,
            "Other/v1.2.3/linux"
        );
        assert_eq!(
            c.get_node_identity()
                .await
                .unwrap()
                .data
                .metadata
                .custody_group_count,
            Some(128)
        );
        let body = beacon_api::ValidatorsRequestBody {
            ids: Some(vec![ValidatorId::Index(4)]),
            statuses: None,
        };
        assert!(
            c.post_beacon_states_validators(StateId::Finalized, &body)
                .await
                .unwrap()
                .data
                .is_empty()
        );
        let proposers = c.get_validator_duties_proposer(10).await.unwrap();
        assert_eq!(
            (proposers.dependent_root, proposers.data[0].slot),
            (root_value, 80)
        );
        assert_eq!(
            c.post_validator_duties_sync(10, &[4]).await.unwrap().data[0]
                .validator_sync_committee_indices,
            [3]
        );
        let aggregate = c
            .get_validator_aggregate_attestation_v2::<E>(65, root_value, 3)
            .await
            .unwrap();
        assert_eq!(aggregate.data.fork_name(), ForkName::Fulu);
        let aggregates: Vec<types::electra::SignedAggregateAndProof<E>> =
            serde_json::from_value(fixture("signed_aggregate_and_proofs.json")).unwrap();
        c.post_validator_aggregate_and_proofs_v2(ForkName::Fulu, &aggregates)
            .await
            .unwrap();
        let messages: Vec<types::altair::SyncCommitteeMessage> =
            serde_json::from_value(fixture("sync_committee_messages.json")).unwrap();
        c.post_beacon_pool_sync_committees(&messages).await.unwrap();
        let contribution = c
            .get_validator_sync_committee_contribution::<E>(66, 2, root_value)
            .await
            .unwrap();
        assert_eq!(contribution.data.subcommittee_index, 2);
        let contributions: Vec<types::altair::SignedContributionAndProof<E>> =
            serde_json::from_value(fixture("signed_contribution_and_proofs.json")).unwrap();
        c.post_validator_contribution_and_proofs(&contributions)
            .await
            .unwrap();
        let subscription = beacon_api::BeaconCommitteeSubscription {
            validator_index: 4,
            committee_index: 1,
            committees_at_slot: 2,
            slot: 81,
            is_aggregator: true,
        };
        c.post_validator_beacon_committee_subscriptions(&[subscription])
            .await
            .unwrap();
        let sync_subscription = beacon_api::SyncCommitteeSubscription {
            validator_index: 4,
            sync_committee_indices: vec![3],
            until_epoch: 256,
        };
        c.post_validator_sync_committee_subscriptions(&[sync_subscription])
            .await
            .unwrap();
        let preparation = beacon_api::ProposerPreparationData {
            validator_index: 4,
            fee_recipient: types::Address::repeat_byte(0xab),
        };
        c.post_validator_prepare_beacon_proposer(&[preparation])
            .await
            .unwrap();
        let registrations: Vec<beacon_api::SignedValidatorRegistrationV1> =
            serde_json::from_str(&registration).unwrap();
        c.post_validator_register_validator(&registrations)
            .await
            .unwrap();
        assert!(c.post_validator_liveness(9, &[4]).await.unwrap().data[0].is_live);
        assert_eq!(
            c.get_debug_beacon_states_ssz(StateId::Slot(64))
                .await
                .unwrap(),
            Some((ForkName::Fulu, vec![1, 2]))
        );
        assert_eq!(
            c.get_beacon_blocks_ssz::<E>(root.parse().unwrap())
                .await
                .unwrap(),
            Some(block.clone())
        );
    };
    tokio::time::timeout(BOUND, run)
        .await
        .expect("all requests answered in time");
    let requests = finish(server).await;
    let expected: [(&str, &str, Option<&str>); 19] = [
        ("GET", "/prefix/eth/v1/config/spec", None),
        ("GET", "/prefix/eth/v1/config/fork_schedule", None),
        ("GET", "/prefix/eth/v1/node/version", None),
        ("GET", "/prefix/eth/v1/node/identity", None),
        (
            "POST",
            "/prefix/eth/v1/beacon/states/finalized/validators",
            Some(r#"{"ids":["4"]}"#),
        ),
        ("GET", "/prefix/eth/v1/validator/duties/proposer/10", None),
        (
            "POST",
            "/prefix/eth/v1/validator/duties/sync/10",
            Some(r#"["4"]"#),
        ),
        (
            "GET",
            "/prefix/eth/v2/validator/aggregate_attestation",
            None,
        ),
        (
            "POST",
            "/prefix/eth/v2/validator/aggregate_and_proofs",
            None,
        ),
        ("POST", "/prefix/eth/v1/beacon/pool/sync_committees", None),
        (
            "GET",
            "/prefix/eth/v1/validator/sync_committee_contribution",
            None,
        ),
        (
            "POST",
            "/prefix/eth/v1/validator/contribution_and_proofs",
            None,
        ),
        (
            "POST",
            "/prefix/eth/v1/validator/beacon_committee_subscriptions",
            Some(
                r#"[{"validator_index":"4","committee_index":"1","committees_at_slot":"2","slot":"81","is_aggregator":true}]"#,
            ),
        ),
        (
            "POST",
            "/prefix/eth/v1/validator/sync_committee_subscriptions",
            Some(r#"[{"validator_index":"4","sync_committee_indices":["3"],"until_epoch":"256"}]"#),
        ),
        (
            "POST",
            "/prefix/eth/v1/validator/prepare_beacon_proposer",
            Some(
                r#"[{"validator_index":"4","fee_recipient":"0xabababababababababababababababababababab"}]"#,
            ),
        ),
        ("POST", "/prefix/eth/v1/validator/register_validator", None),
        (
            "POST",
            "/prefix/eth/v1/validator/liveness/9",
            Some(r#"["4"]"#),
        ),
        ("GET", "/prefix/eth/v2/debug/beacon/states/64", None),
        ("GET", &format!("/prefix/eth/v2/beacon/blocks/{root}"), None),
    ];
    assert_eq!(requests.len(), expected.len());
    for (request, (method, path, body)) in requests.iter().zip(expected) {
        assert_eq!((request.method.as_str(), request.path()), (method, path));
        if let Some(body) = body {
            assert_eq!(String::from_utf8_lossy(&request.body), body, "{path}");
        }
    }
    assert_eq!(requests[7].query()["attestation_data_root"], root);
    assert_eq!(requests[8].headers["eth-consensus-version"], "fulu");
    let sent: Value = serde_json::from_slice(&requests[8].body).unwrap();
    assert_eq!(sent, fixture("signed_aggregate_and_proofs.json"));
    assert_eq!(
        serde_json::from_slice::<Value>(&requests[9].body).unwrap(),
        fixture("sync_committee_messages.json")
    );
    assert_eq!(requests[10].query()["subcommittee_index"], "2");
    assert_eq!(
        serde_json::from_slice::<Value>(&requests[11].body).unwrap(),
        fixture("signed_contribution_and_proofs.json")
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&requests[15].body).unwrap(),
        serde_json::from_str::<Value>(&registration).unwrap()
    );
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let big = format!(r#"{{"data":{{"version":"{}"}}}}"#, "x".repeat(4096));
    // Declared length over the limit, and (for the error answer) a long body that is cut.
    let long_error = format!(r#"{{"code":500,"message":"{}"}}"#, "y".repeat(100_000));
    let (base, server) = serve(vec![
        json_response(200, &big),
        json_response(500, &long_error),
    ])
    .await;
    let client = client(&base).with_body_limits(beacon_api::BodyLimits {
        default: 1024,
        download: 1024,
    });
    let err = tokio::time::timeout(BOUND, client.get_node_version())
        .await
        .unwrap()
        .expect_err("too large");
    assert!(
        matches!(err, ClientError::BodyTooLarge { limit: 1024, .. }),
        "{err:?}"
    );
    let err = tokio::time::timeout(BOUND, client.get_node_version())
        .await
        .unwrap()
        .expect_err("500");
    // The error body is over the cap for error bodies: not read, so reported as unexpected.
    assert!(
        matches!(&err, ClientError::UnexpectedStatus { status, .. } if status.as_u16() == 500),
        "{err:?}"
    );
    finish(server).await;
}

#[tokio::test]
async fn attestation_endpoints_speak_ssz_too() {
    let attestations: Vec<types::electra::SingleAttestation> =
        serde_json::from_value(fixture("single_attestations.json")).unwrap();
    let data = attestations[0].data.clone();
    let aggregate = types::Attestation::<E>::deserialize_by_fork(
        fixture("aggregate_attestation.json")["data"].clone(),
        ForkName::Fulu,
    )
    .unwrap();
    let aggregates: Vec<types::electra::SignedAggregateAndProof<E>> =
        serde_json::from_value(fixture("signed_aggregate_and_proofs.json")).unwrap();
    let ssz_headers = [
        ("Content-Type", "application/octet-stream"),
        ("Eth-Consensus-Version", "fulu"),
    ];
    let (base, server) = serve(vec![
        response(200, &ssz_headers, &ssz::Encode::as_ssz_bytes(&data)),
        response(200, &ssz_headers, &ssz::Encode::as_ssz_bytes(&aggregate)),
        response(200, &[], b""),
        response(200, &[], b""),
        json_response(200, &fixture("attestation_data.json").to_string()),
    ])
    .await;
    let c = client(&base);
    let run = async {
        assert_eq!(
            c.get_validator_attestation_data_ssz(65, 0).await.unwrap(),
            data
        );
        let root = types::Root::repeat_byte(7);
        assert_eq!(
            c.get_validator_aggregate_attestation_v2_ssz::<E>(65, root, 1)
                .await
                .unwrap(),
            aggregate
        );
        c.post_beacon_pool_attestations_v2_ssz(ForkName::Fulu, &attestations)
            .await
            .unwrap();
        c.post_validator_aggregate_and_proofs_v2_ssz(ForkName::Fulu, &aggregates)
            .await
            .unwrap();
        // A JSON answer where SSZ was asked for is a typed error, not a misread.
        let err = c
            .get_validator_attestation_data_ssz(65, 0)
            .await
            .expect_err("JSON answer");
        assert!(matches!(err, ClientError::Ssz { .. }), "{err:?}");
    };
    tokio::time::timeout(BOUND, run)
        .await
        .expect("answered in time");
    let requests = finish(server).await;
    assert_eq!(requests[0].headers["accept"], "application/octet-stream");
    assert_eq!(
        requests[2].path(),
        "/prefix/eth/v2/beacon/pool/attestations"
    );
    assert_eq!(
        requests[2].headers["content-type"],
        "application/octet-stream"
    );
    assert_eq!(requests[2].headers["eth-consensus-version"], "fulu");
    let sent =
        <Vec<types::electra::SingleAttestation> as ssz::Decode>::from_ssz_bytes(&requests[2].body)
            .unwrap();
    assert_eq!(sent, attestations);
    let sent = <Vec<types::electra::SignedAggregateAndProof<E>> as ssz::Decode>::from_ssz_bytes(
        &requests[3].body,
    )
    .unwrap();
    assert_eq!(sent, aggregates);
}

#[tokio::test]
async fn the_event_stream_yields_events_as_they_arrive() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let request = read_request(&mut stream).await;
        // Headers at once, no length: the body is the open stream.
        stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n: hello\n\n")
            .await
            .unwrap();
        let head = r#"{"slot":"10","block":"0x9a2fefd2fdb57f74993c7780ea5b9030d2897b615b89f808011ca5aebed54eaf","state":"0x600e852a08c1200654ddf11025f1ceacb3c2e74bdd5c630cde0838b2591b69f9","epoch_transition":true,"previous_duty_dependent_root":"0x5e0043f107cb57913498fbf2f99ff55e730bf1e151f02f221e977c91a90a0e91","current_duty_dependent_root":"0x5e0043f107cb57913498fbf2f99ff55e730bf1e151f02f221e977c91a90a0e91","execution_optimistic":false}"#;
        stream
            .write_all(format!("event: head\ndata: {head}\n\n").as_bytes())
            .await
            .unwrap();
        stream.flush().await.unwrap();
        // The second event only after the client has seen the first: it was not buffered.
        release_rx.await.unwrap();
        stream.write_all(b"event: finalized_checkpoint\ndata: {\"block\":\"0x9a2fefd2fdb57f74993c7780ea5b9030d2897b615b89f808011ca5aebed54eaf\",\"state\":\"0x600e852a08c1200654ddf11025f1ceacb3c2e74bdd5c630cde0838b2591b69f9\",\"epoch\":\"2\",\"execution_optimistic\":false}\n\nevent: head\ndata: {}\n\n").await.unwrap();
        stream.shutdown().await.unwrap();
        request
    });
    let client = BeaconNodeHttpClient::from_url_str(&base, Timeouts::default()).unwrap();
    let topics = [
        beacon_api::EventTopic::Head,
        beacon_api::EventTopic::FinalizedCheckpoint,
    ];
    let mut events = tokio::time::timeout(BOUND, client.get_events(&topics))
        .await
        .unwrap()
        .unwrap();
    let first = tokio::time::timeout(BOUND, events.next_event::<E>())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(first, beacon_api::BeaconEvent::Head(ref h) if h.slot == 10 && h.epoch_transition),
        "{first:?}"
    );
    release_tx.send(()).unwrap();
    let second = tokio::time::timeout(BOUND, events.next_event::<E>())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(second, beacon_api::BeaconEvent::FinalizedCheckpoint(ref f) if f.epoch == 2),
        "{second:?}"
    );
    let bad = tokio::time::timeout(BOUND, events.next_event::<E>())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(bad, Err(ClientError::Event { .. })), "{bad:?}");
    assert!(
        tokio::time::timeout(BOUND, events.next_event::<E>())
            .await
            .unwrap()
            .is_none(),
        "stream closed"
    );
    let request = tokio::time::timeout(BOUND, server).await.unwrap().unwrap();
    assert_eq!(
        request.target,
        "/eth/v1/events?topics=head%2Cfinalized_checkpoint"
    );
    assert_eq!(request.headers["accept"], "text/event-stream");
}

#[tokio::test]
async fn checkpoint_sync_node_and_dvt_endpoints() {
    let root = "0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2";
    let checkpoint = format!(r#"{{"epoch":"3","root":"{root}"}}"#);
    let signature = format!("0x{}", "1b".repeat(96));
    let header = format!(
        r#"{{"root":"{root}","canonical":true,"header":{{"message":{{"slot":"96","proposer_index":"1","parent_root":"{root}","state_root":"{root}","body_root":"{root}"}},"signature":"{signature}"}}}}"#
    );
    let selection =
        format!(r#"[{{"validator_index":"1","slot":"2","selection_proof":"{signature}"}}]"#);
    let sync_selection = format!(
        r#"[{{"validator_index":"1","slot":"2","subcommittee_index":"3","selection_proof":"{signature}"}}]"#
    );
    let (base, server) = serve(vec![
        json_response(200, &format!(r#"{{"execution_optimistic":false,"finalized":true,"data":{{"previous_justified":{checkpoint},"current_justified":{checkpoint},"finalized":{checkpoint}}}}}"#)),
        json_response(200, &format!(r#"{{"execution_optimistic":false,"finalized":true,"data":{{"root":"{root}"}}}}"#)),
        json_response(200, &format!(r#"{{"execution_optimistic":true,"finalized":false,"data":{header}}}"#)),
        json_response(200, r#"{"data":{"disconnected":"1","connecting":"2","connected":"3","disconnecting":"4"}}"#),
        json_response(200, r#"{"data":{"chain_id":"17000","address":"0x4242424242424242424242424242424242424242"}}"#),
        json_response(200, &format!(r#"{{"data":{selection}}}"#)),
        json_response(200, &format!(r#"{{"data":{sync_selection}}}"#)),
    ])
    .await;
    let c = client(&base);
    let selections: Vec<beacon_api::BeaconCommitteeSelection> =
        serde_json::from_str(&selection).unwrap();
    let sync_selections: Vec<beacon_api::SyncCommitteeSelection> =
        serde_json::from_str(&sync_selection).unwrap();
    let run = async {
        let finality = c
            .get_beacon_states_finality_checkpoints(StateId::Head)
            .await
            .unwrap();
        assert_eq!(finality.data.finalized.epoch, 3);
        assert_eq!(
            c.get_beacon_blocks_root("finalized".parse().unwrap())
                .await
                .unwrap()
                .data
                .root,
            root.parse::<types::Root>().unwrap()
        );
        let header = c
            .get_beacon_headers_block_id(beacon_api::BlockId::Slot(96))
            .await
            .unwrap();
        assert!(header.execution_optimistic && header.data.canonical);
        assert_eq!(header.data.header.message.slot, 96);
        assert_eq!(c.get_node_peer_count().await.unwrap().data.connected, 3);
        assert_eq!(
            c.get_config_deposit_contract().await.unwrap().data.chain_id,
            17_000
        );
        assert_eq!(
            c.post_validator_beacon_committee_selections(&selections)
                .await
                .unwrap()
                .data,
            selections
        );
        assert_eq!(
            c.post_validator_sync_committee_selections(&sync_selections)
                .await
                .unwrap()
                .data,
            sync_selections
        );
    };
    tokio::time::timeout(BOUND, run)
        .await
        .expect("answered in time");
    let requests = finish(server).await;
    let paths: Vec<&str> = requests.iter().map(Recorded::path).collect();
    assert_eq!(
        paths,
        [
            "/prefix/eth/v1/beacon/states/head/finality_checkpoints",
            "/prefix/eth/v1/beacon/blocks/finalized/root",
            "/prefix/eth/v1/beacon/headers/96",
            "/prefix/eth/v1/node/peer_count",
            "/prefix/eth/v1/config/deposit_contract",
            "/prefix/eth/v1/validator/beacon_committee_selections",
            "/prefix/eth/v1/validator/sync_committee_selections",
        ]
    );
    assert_eq!(String::from_utf8_lossy(&requests[5].body), selection);
    assert_eq!(String::from_utf8_lossy(&requests[6].body), sync_selection);
}

/// A value of `T` from seeded bytes (`arbitrary`).
fn arbitrary_value<T: for<'a> arbitrary::Arbitrary<'a>>(seed: u64) -> T {
    let mut bytes = vec![0u8; 1 << 16];
    splitmix::SplitMix64::new(seed).fill_bytes(&mut bytes);
    T::arbitrary(&mut arbitrary::Unstructured::new(&bytes)).unwrap()
}

#[tokio::test]
async fn light_client_endpoints_decode_by_version_and_read_404_as_none() {
    let bootstrap: types::fulu::LightClientBootstrap<E> = arbitrary_value(1);
    let update: types::fulu::LightClientUpdate<E> = arbitrary_value(2);
    let optimistic: types::fulu::LightClientOptimisticUpdate<E> = arbitrary_value(3);
    let versioned = |data: String| format!(r#"{{"version":"fulu","data":{data}}}"#);
    let root: types::Root = [7u8; 32].into();
    let (base, server) = serve(vec![
        json_response(200, &versioned(serde_json::to_string(&bootstrap).unwrap())),
        json_response(404, r#"{"code":404,"message":"LC bootstrap unavailable"}"#),
        json_response(
            200,
            &format!("[{}]", versioned(serde_json::to_string(&update).unwrap())),
        ),
        json_response(
            404,
            r#"{"code":404,"message":"LC finality update unavailable"}"#,
        ),
        json_response(200, &versioned(serde_json::to_string(&optimistic).unwrap())),
    ])
    .await;
    let c = client(&base);
    let run = async {
        let got = c
            .get_beacon_light_client_bootstrap::<E>(root)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got.version, ForkName::Fulu);
        assert_eq!(got.data, types::LightClientBootstrap::Fulu(bootstrap));
        assert!(
            c.get_beacon_light_client_bootstrap::<E>(root)
                .await
                .unwrap()
                .is_none()
        );
        let updates = c.get_beacon_light_client_updates::<E>(3, 2).await.unwrap();
        assert_eq!(updates.len(), 1);
        assert_eq!(updates[0].data, types::LightClientUpdate::Fulu(update));
        assert!(
            c.get_beacon_light_client_finality_update::<E>()
                .await
                .unwrap()
                .is_none()
        );
        let got = c
            .get_beacon_light_client_optimistic_update::<E>()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            got.data,
            types::LightClientOptimisticUpdate::Fulu(optimistic)
        );
    };
    tokio::time::timeout(BOUND, run)
        .await
        .expect("answered in time");
    let requests = finish(server).await;
    let paths: Vec<&str> = requests.iter().map(Recorded::path).collect();
    let bootstrap_path = format!("/prefix/eth/v1/beacon/light_client/bootstrap/{root}");
    assert_eq!(
        paths,
        [
            bootstrap_path.as_str(),
            bootstrap_path.as_str(),
            "/prefix/eth/v1/beacon/light_client/updates",
            "/prefix/eth/v1/beacon/light_client/finality_update",
            "/prefix/eth/v1/beacon/light_client/optimistic_update",
        ]
    );
    let query = requests[2].query();
    assert_eq!(query["start_period"], "3");
    assert_eq!(query["count"], "2");
    assert!(
        requests
            .iter()
            .all(|r| r.headers["accept"] == "application/json")
    );
}

#[tokio::test]
async fn ptc_duties_data_and_votes_use_their_spec_paths() {
    let duties = format!(
        r#"{{"dependent_root":"0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2","execution_optimistic":false,"data":[{{"pubkey":"{PUBKEY}","validator_index":"2","slot":"43"}}]}}"#
    );
    let root = "0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2";
    let data = format!(
        r#"{{"version":"gloas","data":{{"beacon_block_root":"{root}","slot":"43","payload_present":true,"blob_data_available":false}}}}"#
    );
    let not_found = r#"{"code":404,"message":"no block seen for slot 44"}"#;
    let (base, server) = serve(vec![
        json_response(200, &duties),
        json_response(200, &data),
        json_response(404, not_found),
        json_response(200, ""),
    ])
    .await;
    let client = client(&base);
    let duties = tokio::time::timeout(BOUND, client.post_validator_duties_ptc(5, &[2, 7]))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (duties.data[0].validator_index, duties.data[0].slot),
        (2, 43)
    );
    let data = tokio::time::timeout(BOUND, client.get_validator_payload_attestation_data(43))
        .await
        .unwrap()
        .unwrap()
        .data;
    assert_eq!(data.slot, 43);
    assert!(data.payload_present && !data.blob_data_available);
    let missing = tokio::time::timeout(BOUND, client.get_validator_payload_attestation_data(44))
        .await
        .unwrap()
        .expect_err("no block seen");
    assert_eq!(missing.status().map(|s| s.as_u16()), Some(404));
    let message = types::gloas::PayloadAttestationMessage {
        validator_index: 2,
        data: data.clone(),
        signature: BLSSignature::repeat_byte(0xab),
    };
    tokio::time::timeout(
        BOUND,
        client.post_beacon_pool_payload_attestations(std::slice::from_ref(&message)),
    )
    .await
    .unwrap()
    .unwrap();
    let requests = finish(server).await;
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path(), "/prefix/eth/v1/validator/duties/ptc/5");
    assert_eq!(requests[0].body, br#"["2","7"]"#);
    assert_eq!(requests[1].method, "GET");
    assert_eq!(
        requests[1].path(),
        "/prefix/eth/v1/validator/payload_attestation_data/43"
    );
    assert_eq!(
        requests[2].path(),
        "/prefix/eth/v1/validator/payload_attestation_data/44"
    );
    assert_eq!(requests[3].method, "POST");
    assert_eq!(
        requests[3].path(),
        "/prefix/eth/v1/beacon/pool/payload_attestations"
    );
    assert_eq!(requests[3].headers["eth-consensus-version"], "gloas");
    assert_eq!(requests[3].headers["content-type"], "application/json");
    let sent: Vec<types::gloas::PayloadAttestationMessage> =
        serde_json::from_slice(&requests[3].body).unwrap();
    assert_eq!(sent, vec![message]);
    let sent: Value = serde_json::from_slice(&requests[3].body).unwrap();
    assert_eq!(sent[0]["validator_index"], "2");
    assert_eq!(sent[0]["data"]["slot"], "43");
}
