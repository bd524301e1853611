//! The engine API client against the mock execution client over real HTTP with JWT.

use std::net::SocketAddr;
use std::time::Duration;

use execution_layer::client::CAPABILITIES;
use execution_layer::{
    ClientVersion, ElState, EngineApiClient, Error, ForkchoiceState, GetPayloadResponse, JwtSecret,
    PayloadAttributes, PayloadStatus, RpcErrorCode, Timeouts, get_execution_requests_list,
    verify_blobs_bundle_kzg,
};
use mock_execution_layer::block_hash::compute_block_hash;
use mock_execution_layer::{MockConfig, MockExecutionLayer, MockPayloadStatus};
use ssz_types::VariableList;
use types::electra::{ExecutionRequests, NewPayloadRequest, WithdrawalRequest};
use types::fulu::Withdrawal;
use types::{Address, B256, BLSPubkey, ChainSpec, ForkName, Hash32, MainnetEthSpec};

type E = MainnetEthSpec;

const SECRET: JwtSecret = JwtSecret::new([0x42; 32]);
const GENESIS_TIME: u64 = 1_750_000_000;

async fn mock() -> MockExecutionLayer<E> {
    mock_with_spec(ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu)).await
}

async fn mock_with_spec(spec: ChainSpec) -> MockExecutionLayer<E> {
    let config = MockConfig {
        jwt_secret: SECRET,
        spec,
        genesis_time: GENESIS_TIME,
        seed: 7,
        chain_id: 1337,
    };
    let listen: SocketAddr = "127.0.0.1:0".parse().expect("address");
    MockExecutionLayer::start(config, listen)
        .await
        .expect("mock starts")
}

/// Generous timeouts: the mock computes cell proofs while getPayload and getBlobs wait, on
/// cores the other test binaries share (a test of the answers, not of the node's deadlines;
/// the test of timeouts sets its own).
fn timeouts() -> Timeouts {
    let generous = Duration::from_secs(60);
    Timeouts {
        new_payload: generous,
        forkchoice_updated: generous,
        get_payload: generous,
        get_blobs: generous,
        new_payload_v5: generous,
        get_payload_bodies: generous,
        ..Timeouts::default()
    }
}

fn client(mock: &MockExecutionLayer<E>) -> EngineApiClient {
    EngineApiClient::new(mock.url(), SECRET, timeouts()).expect("client")
}

fn forkchoice(head: Hash32) -> ForkchoiceState {
    ForkchoiceState {
        head_block_hash: head,
        safe_block_hash: B256::ZERO,
        finalized_block_hash: B256::ZERO,
    }
}

fn attributes(timestamp: u64, randao: u8, withdrawals: Vec<Withdrawal>) -> PayloadAttributes {
    PayloadAttributes {
        timestamp,
        prev_randao: B256::repeat_byte(randao),
        suggested_fee_recipient: Address::repeat_byte(0xfe),
        withdrawals: withdrawals.iter().map(Into::into).collect(),
        parent_beacon_block_root: B256::repeat_byte(randao ^ 0xff),
    }
}

/// fcU with attributes on `head`, then getPayloadV5.
async fn build(
    client: &EngineApiClient,
    head: Hash32,
    attributes: &PayloadAttributes,
) -> GetPayloadResponse<E> {
    let updated = client
        .forkchoice_updated_v3(forkchoice(head), Some(attributes))
        .await
        .expect("fcU");
    assert_eq!(updated.payload_status, PayloadStatus::Valid);
    let id = updated.payload_id.expect("a payload id");
    client.get_payload_v5::<E>(id).await.expect("getPayload")
}

fn new_payload_request(
    built: &GetPayloadResponse<E>,
    attributes: &PayloadAttributes,
) -> NewPayloadRequest<E> {
    NewPayloadRequest {
        execution_payload: built.execution_payload.clone(),
        versioned_hashes: VariableList::new(
            built
                .blobs_bundle
                .commitments
                .iter()
                .map(mock_execution_layer::blobs::kzg_to_versioned_hash)
                .collect(),
        )
        .expect("within the limit"),
        parent_beacon_block_root: attributes.parent_beacon_block_root,
        execution_requests: built.execution_requests.clone(),
    }
}

#[tokio::test]
async fn happy_path_builds_a_chain_of_payloads() {
    let mock = mock().await;
    let client = client(&mock);
    assert_eq!(client.state().get(), ElState::Offline);

    let capabilities = client.exchange_capabilities().await.expect("capabilities");
    assert_eq!(capabilities, CAPABILITIES.map(str::to_owned).to_vec());
    assert_eq!(client.state().get(), ElState::Online);
    let versions = client
        .get_client_version_v1(&ClientVersion {
            code: "AB".into(),
            name: "arbor".into(),
            version: "0.1.0".into(),
            commit: types::Bytes4::ZERO,
        })
        .await
        .expect("client version");
    assert_eq!(versions[0].name, "arbor-mock-el");

    let mut requests = ExecutionRequests::<E> {
        deposits: VariableList::empty(),
        withdrawals: VariableList::empty(),
        consolidations: VariableList::empty(),
    };
    requests
        .withdrawals
        .push(WithdrawalRequest {
            source_address: Address::repeat_byte(3),
            validator_pubkey: BLSPubkey::repeat_byte(4),
            amount: 5,
        })
        .expect("room");
    mock.set_execution_requests(&requests);

    let genesis = mock.genesis_block_hash();
    let withdrawals = vec![Withdrawal {
        index: 9,
        validator_index: 10,
        address: Address::repeat_byte(11),
        amount: 12,
    }];
    let attrs1 = attributes(GENESIS_TIME + 12, 1, withdrawals.clone());
    let first = build(&client, genesis, &attrs1).await;
    let payload = &first.execution_payload;
    assert_eq!(payload.parent_hash, genesis);
    assert_eq!(payload.block_number, 1);
    assert_eq!(payload.timestamp, GENESIS_TIME + 12);
    assert_eq!(payload.prev_randao, B256::repeat_byte(1));
    assert_eq!(payload.fee_recipient, Address::repeat_byte(0xfe));
    assert_eq!(payload.withdrawals.to_vec(), withdrawals);
    assert_eq!(first.execution_requests, requests);
    assert!(first.blobs_bundle.blobs.is_empty());
    let list = get_execution_requests_list(&first.execution_requests);
    assert_eq!(
        compute_block_hash(payload, attrs1.parent_beacon_block_root, &list),
        payload.block_hash,
        "the block hash commits to the header fields"
    );

    let status = client
        .new_payload_v4(&new_payload_request(&first, &attrs1))
        .await
        .expect("newPayload");
    assert_eq!(status, PayloadStatus::Valid);
    assert!(mock.knows_block(&payload.block_hash));
    let updated = client
        .forkchoice_updated_v3(forkchoice(payload.block_hash), None)
        .await
        .expect("fcU");
    assert_eq!(updated.payload_status, PayloadStatus::Valid);
    assert_eq!(updated.payload_id, None);
    assert_eq!(mock.head_block_hash(), payload.block_hash);

    let attrs2 = attributes(GENESIS_TIME + 24, 2, vec![]);
    let second = build(&client, payload.block_hash, &attrs2).await;
    assert_eq!(second.execution_payload.parent_hash, payload.block_hash);
    assert_eq!(second.execution_payload.block_number, 2);
    assert_ne!(
        second.execution_payload.state_root, payload.state_root,
        "the synthetic state root moves with the chain"
    );
    let status = client
        .new_payload_v4(&new_payload_request(&second, &attrs2))
        .await
        .expect("newPayload");
    assert_eq!(status, PayloadStatus::Valid);
    assert_eq!(client.state().get(), ElState::Online);
}

#[tokio::test]
async fn wrong_or_stale_jwt_is_refused_with_a_clear_error() {
    let mock = mock().await;
    let wrong =
        EngineApiClient::new(mock.url(), JwtSecret::new([1; 32]), timeouts()).expect("client");
    let error = wrong.exchange_capabilities().await.expect_err("refused");
    assert!(matches!(error, Error::Unauthorized { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("JWT"), "{message}");
    assert!(message.contains("signature does not match"), "{message}");
    assert_eq!(wrong.state().get(), ElState::Offline);

    // A correctly signed token issued two minutes ago.
    let stale = SECRET.token_at(execution_layer::jwt::unix_now() - 120);
    let response = reqwest::Client::new()
        .post(mock.url())
        .header("authorization", format!("Bearer {stale}"))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"engine_exchangeCapabilities","params":[[]]}"#)
        .send()
        .await
        .expect("HTTP works");
    assert_eq!(response.status().as_u16(), 401);
    let body = response.text().await.expect("body");
    assert!(body.contains("iat"), "{body}");

    let missing = reqwest::Client::new()
        .post(mock.url())
        .body("{}")
        .send()
        .await
        .expect("HTTP works");
    assert_eq!(missing.status().as_u16(), 401);
}

#[tokio::test]
async fn slow_engine_times_out_per_method() {
    let mock = mock().await;
    let client = EngineApiClient::new(
        mock.url(),
        SECRET,
        Timeouts {
            exchange_capabilities: Duration::from_millis(100),
            ..timeouts()
        },
    )
    .expect("client");
    client.exchange_capabilities().await.expect("fast enough");
    assert_eq!(client.state().get(), ElState::Online);
    mock.set_response_delay(Duration::from_millis(1500));
    let error = client.exchange_capabilities().await.expect_err("too slow");
    assert!(
        matches!(error, Error::Timeout { timeout, .. } if timeout == Duration::from_millis(100)),
        "{error:?}"
    );
    assert_eq!(client.state().get(), ElState::Offline);
    // The same delay is within forkchoiceUpdated's 8 s.
    let updated = client
        .forkchoice_updated_v3(forkchoice(mock.genesis_block_hash()), None)
        .await
        .expect("fcU waits longer");
    assert_eq!(updated.payload_status, PayloadStatus::Valid);
    assert_eq!(client.state().get(), ElState::Online);
}

#[tokio::test]
async fn malformed_json_is_a_typed_error() {
    let mock = mock().await;
    let client = client(&mock);
    mock.set_malformed_responses(true);
    let error = client.exchange_capabilities().await.expect_err("garbled");
    assert!(
        matches!(error, Error::MalformedResponse { .. }),
        "{error:?}"
    );
    mock.set_malformed_responses(false);
    client.exchange_capabilities().await.expect("recovers");
}

#[tokio::test]
async fn invalid_payloads_report_the_latest_valid_hash() {
    let mock = mock().await;
    let client = client(&mock);
    let genesis = mock.genesis_block_hash();
    let attrs = attributes(GENESIS_TIME + 12, 1, vec![]);
    let built = build(&client, genesis, &attrs).await;
    let request = new_payload_request(&built, &attrs);

    // Steered by the test: INVALID with the genesis as the latest valid ancestor.
    mock.set_payload_status(
        built.execution_payload.block_hash,
        MockPayloadStatus::Invalid {
            latest_valid_hash: Some(genesis),
        },
    );
    let status = client.new_payload_v4(&request).await.expect("newPayload");
    assert!(
        matches!(&status, PayloadStatus::Invalid { latest_valid_hash: Some(h), .. } if *h == genesis),
        "{status:?}"
    );
    assert!(!mock.knows_block(&built.execution_payload.block_hash));
    mock.clear_payload_status(&built.execution_payload.block_hash);

    // Found by the mock: a timestamp that does not follow the parent's, with a correct hash.
    let mut bad = request.clone();
    bad.execution_payload.timestamp = GENESIS_TIME;
    let list = get_execution_requests_list(&bad.execution_requests);
    bad.execution_payload.block_hash =
        compute_block_hash(&bad.execution_payload, bad.parent_beacon_block_root, &list);
    let status = client.new_payload_v4(&bad).await.expect("newPayload");
    assert!(
        matches!(&status, PayloadStatus::Invalid { latest_valid_hash: Some(h), .. } if *h == genesis),
        "{status:?}"
    );

    // A block hash that does not commit to the payload.
    let mut tampered = request.clone();
    tampered.execution_payload.gas_used += 1;
    let status = client.new_payload_v4(&tampered).await.expect("newPayload");
    assert!(
        matches!(
            &status,
            PayloadStatus::Invalid {
                latest_valid_hash: None,
                ..
            }
        ),
        "{status:?}"
    );

    // The untouched payload is still valid.
    assert_eq!(
        client.new_payload_v4(&request).await.expect("newPayload"),
        PayloadStatus::Valid
    );
}

#[tokio::test]
async fn syncing_and_accepted_mark_the_engine_syncing() {
    let mock = mock().await;
    let client = client(&mock);
    let genesis = mock.genesis_block_hash();
    let attrs = attributes(GENESIS_TIME + 12, 1, vec![]);
    let built = build(&client, genesis, &attrs).await;
    let request = new_payload_request(&built, &attrs);

    mock.set_syncing(true);
    assert_eq!(
        client.new_payload_v4(&request).await.expect("newPayload"),
        PayloadStatus::Syncing
    );
    assert_eq!(client.state().get(), ElState::Syncing);
    let updated = client
        .forkchoice_updated_v3(forkchoice(genesis), None)
        .await
        .expect("fcU");
    assert_eq!(updated.payload_status, PayloadStatus::Syncing);
    mock.set_syncing(false);
    // It kept the payload it answered SYNCING to, as a syncing client downloads the chain:
    // once synced, that payload is a head it knows.
    let updated = client
        .forkchoice_updated_v3(forkchoice(built.execution_payload.block_hash), None)
        .await
        .expect("fcU");
    assert_eq!(updated.payload_status, PayloadStatus::Valid);

    mock.set_payload_status(
        built.execution_payload.block_hash,
        MockPayloadStatus::Accepted,
    );
    assert_eq!(
        client.new_payload_v4(&request).await.expect("newPayload"),
        PayloadStatus::Accepted
    );
    mock.clear_payload_status(&built.execution_payload.block_hash);
    assert_eq!(
        client.new_payload_v4(&request).await.expect("newPayload"),
        PayloadStatus::Valid
    );
    assert_eq!(client.state().get(), ElState::Online);

    // An unknown head: SYNCING without a payload id.
    let updated = client
        .forkchoice_updated_v3(forkchoice(B256::repeat_byte(9)), Some(&attrs))
        .await
        .expect("fcU");
    assert_eq!(updated.payload_status, PayloadStatus::Syncing);
    assert_eq!(updated.payload_id, None);
}

#[tokio::test]
async fn spec_error_codes_come_back_typed() {
    let mock = mock().await;
    let client = client(&mock);
    let error = client
        .get_payload_v5::<E>(types::PayloadId::repeat_byte(0xee))
        .await
        .expect_err("unknown payload");
    assert!(
        matches!(
            error,
            Error::Rpc {
                code: RpcErrorCode::UnknownPayload,
                ..
            }
        ),
        "{error:?}"
    );
    let genesis = mock.genesis_block_hash();
    let error = client
        .forkchoice_updated_v3(
            forkchoice(genesis),
            Some(&attributes(GENESIS_TIME, 1, vec![])),
        )
        .await
        .expect_err("timestamp not after the head's");
    assert!(
        matches!(
            error,
            Error::Rpc {
                code: RpcErrorCode::InvalidPayloadAttributes,
                ..
            }
        ),
        "{error:?}"
    );
    let error = client
        .forkchoice_updated_v3(
            ForkchoiceState {
                finalized_block_hash: B256::repeat_byte(5),
                ..forkchoice(genesis)
            },
            None,
        )
        .await
        .expect_err("unknown finalized block");
    assert!(
        matches!(
            error,
            Error::Rpc {
                code: RpcErrorCode::InvalidForkchoiceState,
                ..
            }
        ),
        "{error:?}"
    );
    // The engine answered each time: it is online.
    assert_eq!(client.state().get(), ElState::Online);
}

#[tokio::test]
async fn engine_going_away_and_coming_back() {
    let mock = mock().await;
    let client = client(&mock);
    let mut states = client.state().subscribe();
    client.exchange_capabilities().await.expect("up");
    assert_eq!(*states.borrow_and_update(), ElState::Online);

    mock.go_offline().await;
    let error = client.exchange_capabilities().await.expect_err("down");
    assert!(matches!(error, Error::Unreachable { .. }), "{error:?}");
    assert!(error.to_string().contains(&mock.url()), "{error}");
    assert_eq!(*states.borrow_and_update(), ElState::Offline);
    assert_eq!(client.upcheck().await, ElState::Offline);

    mock.come_back().await.expect("rebinds the same port");
    assert_eq!(client.upcheck().await, ElState::Online);
    assert!(states.has_changed().expect("tracker alive"));
    // The chain survived the outage.
    let updated = client
        .forkchoice_updated_v3(forkchoice(mock.genesis_block_hash()), None)
        .await
        .expect("fcU");
    assert_eq!(updated.payload_status, PayloadStatus::Valid);
}

#[tokio::test]
async fn blob_bundles_verify_at_one_and_at_the_fork_limit() {
    // Mainnet's blob schedule (BPO1: 15, BPO2: 21) moved to epochs 0 and 1.
    let mut spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    assert_eq!(spec.blob_schedule.len(), 2);
    spec.blob_schedule[0].epoch = 0;
    spec.blob_schedule[1].epoch = 1;
    let mock = mock_with_spec(spec).await;
    let client = client(&mock);
    let genesis = mock.genesis_block_hash();

    mock.set_blobs_per_payload(1);
    let attrs = attributes(GENESIS_TIME + 12, 1, vec![]);
    let one = build(&client, genesis, &attrs).await;
    assert_eq!(one.blobs_bundle.blobs.len(), 1);
    assert_eq!(one.blobs_bundle.proofs.len(), 128);
    assert_eq!(one.execution_payload.blob_gas_used, 1 << 17);
    assert!(verify_blobs_bundle_kzg(&one.blobs_bundle).expect("well-formed"));
    assert_eq!(
        client
            .new_payload_v4(&new_payload_request(&one, &attrs))
            .await
            .expect("newPayload"),
        PayloadStatus::Valid
    );

    // Ask for more than allowed: the mock stops at the limit of the payload's epoch (epoch 1).
    mock.set_blobs_per_payload(usize::MAX);
    let attrs = attributes(GENESIS_TIME + 32 * 12, 2, vec![]);
    assert_eq!(mock.max_blobs_at(GENESIS_TIME + 12), 15);
    let limit = mock.max_blobs_at(attrs.timestamp) as usize;
    assert_eq!(limit, 21, "BPO2's limit");
    let full = build(&client, one.execution_payload.block_hash, &attrs).await;
    assert_eq!(full.blobs_bundle.blobs.len(), limit);
    assert_eq!(full.blobs_bundle.commitments.len(), limit);
    assert_eq!(full.blobs_bundle.proofs.len(), limit * 128);
    assert!(verify_blobs_bundle_kzg(&full.blobs_bundle).expect("well-formed"));

    // A swapped proof fails verification.
    let mut broken = full.blobs_bundle.clone();
    broken.proofs.swap(0, 1);
    assert!(!verify_blobs_bundle_kzg(&broken).expect("well-formed"));

    // Wrong versioned hashes make the payload INVALID.
    let mut request = new_payload_request(&full, &attrs);
    let good = request.clone();
    request.versioned_hashes = VariableList::empty();
    assert!(matches!(
        client.new_payload_v4(&request).await.expect("newPayload"),
        PayloadStatus::Invalid { .. }
    ));
    assert_eq!(
        client.new_payload_v4(&good).await.expect("newPayload"),
        PayloadStatus::Valid
    );

    // getBlobsV2 serves them from the pool, all or nothing.
    let hashes: Vec<_> = good.versioned_hashes.to_vec();
    let served = client
        .get_blobs_v2::<E>(&hashes)
        .await
        .expect("getBlobs")
        .expect("all in the pool");
    assert_eq!(served.len(), limit);
    for (i, item) in served.iter().enumerate() {
        assert_eq!(item.blob, full.blobs_bundle.blobs[i]);
        assert_eq!(
            item.proofs,
            full.blobs_bundle.proofs[i * 128..(i + 1) * 128]
        );
    }
    let mut with_unknown = hashes.clone();
    with_unknown.push(B256::repeat_byte(1));
    assert_eq!(
        client
            .get_blobs_v2::<E>(&with_unknown)
            .await
            .expect("getBlobs"),
        None
    );
}

/// Under a blob variety of 2 the third block carries the first block's blobs (computed once),
/// the second block others; the bundles verify either way.
#[tokio::test]
async fn blob_variety_repeats_blobs_every_n_blocks() {
    let mock = mock().await;
    let client = client(&mock);
    mock.set_blobs_per_payload(2);
    mock.set_blob_variety(Some(2));
    let mut parent = mock.genesis_block_hash();
    let mut bundles = Vec::new();
    for n in 1..=3u8 {
        let attrs = attributes(GENESIS_TIME + 12 * u64::from(n), n, vec![]);
        let built = build(&client, parent, &attrs).await;
        assert!(verify_blobs_bundle_kzg(&built.blobs_bundle).expect("well-formed"));
        assert_eq!(
            client
                .new_payload_v4(&new_payload_request(&built, &attrs))
                .await
                .expect("newPayload"),
            PayloadStatus::Valid
        );
        client
            .forkchoice_updated_v3(forkchoice(built.execution_payload.block_hash), None)
            .await
            .expect("fcU");
        parent = built.execution_payload.block_hash;
        bundles.push(built.blobs_bundle.commitments.clone());
    }
    assert_eq!(bundles[0].len(), 2);
    assert_ne!(bundles[0], bundles[1]);
    assert_ne!(bundles[1], bundles[2]);
    // Block numbers 1 and 3 are both odd: the same blobs.
    assert_eq!(bundles[0], bundles[2]);
}
