//! The Amsterdam engine API (`amsterdam.md`): the client against the mock execution client over
//! real HTTP on 127.0.0.1 with JWT, on both sides of the fork boundary.

use std::net::SocketAddr;
use std::time::Duration;

use execution_layer::client::{
    CAPABILITIES, ENGINE_FORKCHOICE_UPDATED_V4, ENGINE_GET_PAYLOAD_V6, ENGINE_NEW_PAYLOAD_V4,
    ENGINE_NEW_PAYLOAD_V5,
};
use execution_layer::json_structures::JsonExecutionPayloadV4;
use execution_layer::{
    BuiltPayload, ColumnIndices, EngineApiClient, EngineFork, Error, ForkchoiceState,
    GetPayloadResponse, GetPayloadV6Response, JwtSecret, PayloadAttributesV4, PayloadStatus,
    RpcErrorCode, Timeouts, get_execution_requests_list_gloas,
};
use mock_execution_layer::block_hash::{EMPTY_BLOCK_ACCESS_LIST, compute_block_hash_amsterdam};
use mock_execution_layer::{MockConfig, MockExecutionLayer, SlotFault};
use progressive_ssz::ProgressiveByteList;
use ssz_types::VariableList;
use types::{Address, B256, ChainSpec, ForkName, Hash32, MainnetEthSpec, Version, electra, gloas};

type E = MainnetEthSpec;

const SECRET: JwtSecret = JwtSecret::new([0x43; 32]);
const GENESIS_TIME: u64 = 1_760_000_000;
const SLOT: u64 = 12;
/// Mainnet slots per epoch: with Gloas at epoch 1, slot 31 is the last Osaka one.
const FIRST_AMSTERDAM_SLOT: u64 = 32;

/// Fulu at genesis, Gloas (Amsterdam) at `gloas_epoch`.
fn spec(gloas_epoch: u64) -> ChainSpec {
    let mut spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    spec.gloas_fork_version
        .get_or_insert(Version::new([0x07, 0, 0, 0]));
    spec.gloas_fork_epoch = gloas_epoch;
    spec
}

async fn mock(spec: ChainSpec) -> MockExecutionLayer<E> {
    let config = MockConfig {
        jwt_secret: SECRET,
        spec,
        genesis_time: GENESIS_TIME,
        seed: 3,
        chain_id: 1337,
    };
    let listen: SocketAddr = "127.0.0.1:0".parse().expect("address");
    MockExecutionLayer::start(config, listen)
        .await
        .expect("mock starts")
}

/// A client that knows the fork schedule.
fn client(mock: &MockExecutionLayer<E>, spec: &ChainSpec) -> EngineApiClient {
    unscheduled(mock).with_fork_schedule::<E>(spec, GENESIS_TIME)
}

/// A client without a fork schedule: every payload is pre-Amsterdam to it.
fn unscheduled(mock: &MockExecutionLayer<E>) -> EngineApiClient {
    let timeouts = Timeouts {
        get_payload: Duration::from_secs(60),
        ..Timeouts::default()
    };
    EngineApiClient::new(mock.url(), SECRET, timeouts).expect("client")
}

fn forkchoice(head: Hash32) -> ForkchoiceState {
    ForkchoiceState {
        head_block_hash: head,
        safe_block_hash: B256::ZERO,
        finalized_block_hash: B256::ZERO,
    }
}

fn attributes(slot: u64) -> PayloadAttributesV4 {
    PayloadAttributesV4 {
        timestamp: GENESIS_TIME + slot * SLOT,
        prev_randao: B256::repeat_byte(slot as u8),
        suggested_fee_recipient: Address::repeat_byte(0xfe),
        withdrawals: vec![],
        parent_beacon_block_root: B256::repeat_byte(0x80 | slot as u8),
        slot_number: slot,
        target_gas_limit: 36_000_000,
    }
}

/// fcU of the slot's era with attributes on `head`, then getPayload of that era.
async fn build(client: &EngineApiClient, head: Hash32, slot: u64) -> BuiltPayload<E> {
    let attributes = attributes(slot);
    let updated = client
        .forkchoice_updated(forkchoice(head), Some(&attributes), None, 0)
        .await
        .expect("fcU");
    assert_eq!(updated.payload_status, PayloadStatus::Valid);
    let id = updated.payload_id.expect("a payload id");
    client
        .get_payload::<E>(id, attributes.timestamp)
        .await
        .expect("getPayload")
}

async fn build_amsterdam(
    client: &EngineApiClient,
    head: Hash32,
    slot: u64,
) -> GetPayloadV6Response<E> {
    match build(client, head, slot).await {
        BuiltPayload::Amsterdam(built) => built,
        BuiltPayload::Osaka(_) => panic!("slot {slot} is an Amsterdam slot"),
    }
}

async fn build_osaka(client: &EngineApiClient, head: Hash32, slot: u64) -> GetPayloadResponse<E> {
    match build(client, head, slot).await {
        BuiltPayload::Osaka(built) => built,
        BuiltPayload::Amsterdam(_) => panic!("slot {slot} is an Osaka slot"),
    }
}

fn request_v5(built: &GetPayloadV6Response<E>, slot: u64) -> gloas::NewPayloadRequest<E> {
    gloas::NewPayloadRequest {
        execution_payload: built.execution_payload.clone(),
        versioned_hashes: VariableList::empty(),
        parent_beacon_block_root: attributes(slot).parent_beacon_block_root,
        execution_requests: built.execution_requests.clone(),
    }
}

fn request_v4(built: &GetPayloadResponse<E>, slot: u64) -> electra::NewPayloadRequest<E> {
    electra::NewPayloadRequest {
        execution_payload: built.execution_payload.clone(),
        versioned_hashes: VariableList::empty(),
        parent_beacon_block_root: attributes(slot).parent_beacon_block_root,
        execution_requests: built.execution_requests.clone(),
    }
}

/// One JSON-RPC call with a valid JWT, for what the typed client would not send.
async fn raw_call(
    mock: &MockExecutionLayer<E>,
    method: &str,
    params: serde_json::Value,
) -> serde_json::Value {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = reqwest::Client::new()
        .post(mock.url())
        .header("authorization", format!("Bearer {}", SECRET.token()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("HTTP works")
        .bytes()
        .await
        .expect("a body");
    serde_json::from_slice(&response).expect("a JSON-RPC answer")
}

fn is_unsupported_fork<T: std::fmt::Debug>(result: Result<T, Error>) -> bool {
    matches!(
        result,
        Err(Error::Rpc {
            code: RpcErrorCode::UnsupportedFork,
            ..
        })
    )
}

#[tokio::test]
async fn a_chain_crosses_the_amsterdam_boundary_with_each_eras_methods() {
    let spec = spec(1);
    let mock = mock(spec.clone()).await;
    let client = client(&mock, &spec);
    let boundary = GENESIS_TIME + FIRST_AMSTERDAM_SLOT * SLOT;
    assert_eq!(client.amsterdam_time(), Some(boundary));
    assert_eq!(client.engine_fork_at(boundary - 1), EngineFork::Osaka);
    assert_eq!(client.engine_fork_at(boundary), EngineFork::Amsterdam);

    let capabilities = client.exchange_capabilities().await.expect("capabilities");
    assert_eq!(capabilities, CAPABILITIES.map(str::to_owned).to_vec());
    for method in [
        ENGINE_NEW_PAYLOAD_V5,
        ENGINE_FORKCHOICE_UPDATED_V4,
        ENGINE_GET_PAYLOAD_V6,
    ] {
        assert!(capabilities.iter().any(|c| c == method), "{method}");
    }

    // The last Osaka slot: fcUV3, getPayloadV5, newPayloadV4.
    let genesis = mock.genesis_block_hash();
    let last = FIRST_AMSTERDAM_SLOT - 1;
    let osaka = build_osaka(&client, genesis, last).await;
    assert_eq!(osaka.execution_payload.timestamp, boundary - SLOT);
    let status = client
        .new_payload_v4(&request_v4(&osaka, last))
        .await
        .expect("newPayloadV4");
    assert_eq!(status, PayloadStatus::Valid);
    let osaka_hash = osaka.execution_payload.block_hash;
    let updated = client
        .forkchoice_updated(forkchoice(osaka_hash), None, None, boundary - SLOT)
        .await
        .expect("fcUV3");
    assert_eq!(updated.payload_status, PayloadStatus::Valid);

    // The first Amsterdam slot: fcUV4, getPayloadV6, newPayloadV5.
    let first = build_amsterdam(&client, osaka_hash, FIRST_AMSTERDAM_SLOT).await;
    let payload = &first.execution_payload;
    assert_eq!(payload.parent_hash, osaka_hash);
    assert_eq!(payload.timestamp, boundary);
    assert_eq!(payload.slot_number, FIRST_AMSTERDAM_SLOT);
    assert_eq!(&payload.block_access_list[..], &EMPTY_BLOCK_ACCESS_LIST);
    assert_eq!(
        payload.gas_limit, 36_000_000,
        "the target gas limit is used"
    );
    let root = attributes(FIRST_AMSTERDAM_SLOT).parent_beacon_block_root;
    let requests = get_execution_requests_list_gloas(&first.execution_requests);
    assert_eq!(
        compute_block_hash_amsterdam(payload, root, &requests),
        payload.block_hash
    );
    // The hash covers the slot number and the access list.
    let mut other_slot = payload.clone();
    other_slot.slot_number += 1;
    assert_ne!(
        compute_block_hash_amsterdam(&other_slot, root, &requests),
        payload.block_hash
    );
    let status = client
        .new_payload_v5(&request_v5(&first, FIRST_AMSTERDAM_SLOT))
        .await
        .expect("newPayloadV5");
    assert_eq!(status, PayloadStatus::Valid);
    assert!(mock.knows_block(&payload.block_hash));
    let custody = ColumnIndices::from_indices([0, 5, 127]).expect("columns");
    let updated = client
        .forkchoice_updated_v4(forkchoice(payload.block_hash), None, Some(&custody))
        .await
        .expect("fcUV4");
    assert_eq!(updated.payload_status, PayloadStatus::Valid);
    assert_eq!(mock.head_block_hash(), payload.block_hash);

    // Bodies: the access list is null for the pre-Amsterdam blocks.
    let unknown = B256::repeat_byte(0x99);
    let bodies = client
        .get_payload_bodies_by_hash_v2(&[genesis, osaka_hash, payload.block_hash, unknown])
        .await
        .expect("bodies by hash");
    assert_eq!(bodies.len(), 4);
    let genesis_body = bodies[0].as_ref().expect("genesis body");
    assert_eq!(genesis_body.block_access_list, None);
    assert_eq!(genesis_body.withdrawals, Some(vec![]));
    assert_eq!(
        bodies[1].as_ref().expect("Osaka body").block_access_list,
        None
    );
    assert_eq!(
        bodies[2]
            .as_ref()
            .expect("Amsterdam body")
            .block_access_list,
        Some(EMPTY_BLOCK_ACCESS_LIST.to_vec())
    );
    assert!(bodies[3].is_none(), "unknown block");

    let range = client
        .get_payload_bodies_by_range_v2(1, 10)
        .await
        .expect("bodies by range");
    assert_eq!(range.len(), 2, "no trailing nulls past the head");
    assert_eq!(range[0].as_ref().expect("block 1").block_access_list, None);
    assert_eq!(
        range[1].as_ref().expect("block 2").block_access_list,
        Some(EMPTY_BLOCK_ACCESS_LIST.to_vec())
    );
    assert!(
        client
            .get_payload_bodies_by_range_v2(3, 5)
            .await
            .expect("past the head")
            .is_empty()
    );
    let zero = client.get_payload_bodies_by_range_v2(0, 1).await;
    assert!(
        matches!(
            zero,
            Err(Error::Rpc {
                code: RpcErrorCode::InvalidParams,
                ..
            })
        ),
        "{zero:?}"
    );

    mock.prune_block_access_lists();
    let pruned = client
        .get_payload_bodies_by_hash_v2(&[payload.block_hash])
        .await
        .expect("bodies by hash");
    let pruned = pruned[0].as_ref().expect("the body stays");
    assert_eq!(pruned.block_access_list, None, "null once pruned");
}

#[tokio::test]
async fn each_era_refuses_the_other_eras_methods() {
    let spec = spec(1);
    let mock = mock(spec.clone()).await;
    let client = client(&mock, &spec);
    let genesis = mock.genesis_block_hash();
    let last = FIRST_AMSTERDAM_SLOT - 1;
    let osaka = build_osaka(&client, genesis, last).await;
    client
        .new_payload_v4(&request_v4(&osaka, last))
        .await
        .expect("newPayloadV4");
    let osaka_hash = osaka.execution_payload.block_hash;
    let amsterdam = build_amsterdam(&client, osaka_hash, FIRST_AMSTERDAM_SLOT).await;

    // Our client refuses before sending: the era's method is named.
    let mut late = request_v4(&osaka, last);
    late.execution_payload.timestamp = GENESIS_TIME + FIRST_AMSTERDAM_SLOT * SLOT;
    match client.new_payload_v4(&late).await {
        Err(Error::WrongFork {
            method,
            fork: EngineFork::Amsterdam,
            instead,
            ..
        }) => {
            assert_eq!(method, ENGINE_NEW_PAYLOAD_V4);
            assert_eq!(instead, ENGINE_NEW_PAYLOAD_V5);
        }
        other => panic!("expected WrongFork, got {other:?}"),
    }
    let mut early = request_v5(&amsterdam, FIRST_AMSTERDAM_SLOT);
    early.execution_payload.timestamp -= SLOT;
    assert!(matches!(
        client.new_payload_v5(&early).await,
        Err(Error::WrongFork {
            fork: EngineFork::Osaka,
            ..
        })
    ));
    let v3_attributes = |slot: u64| {
        let a = attributes(slot);
        execution_layer::PayloadAttributes {
            timestamp: a.timestamp,
            prev_randao: a.prev_randao,
            suggested_fee_recipient: a.suggested_fee_recipient,
            withdrawals: a.withdrawals,
            parent_beacon_block_root: a.parent_beacon_block_root,
        }
    };
    assert!(matches!(
        client
            .forkchoice_updated_v3(
                forkchoice(osaka_hash),
                Some(&v3_attributes(FIRST_AMSTERDAM_SLOT))
            )
            .await,
        Err(Error::WrongFork {
            fork: EngineFork::Amsterdam,
            ..
        })
    ));
    assert!(matches!(
        client
            .forkchoice_updated_v4(forkchoice(genesis), Some(&attributes(last)), None)
            .await,
        Err(Error::WrongFork {
            fork: EngineFork::Osaka,
            ..
        })
    ));

    // The mock answers -38005 to a client that sends them anyway: one without the schedule
    // (everything Osaka to it) and one that takes everything for Amsterdam.
    let osaka_only = unscheduled(&mock);
    assert!(is_unsupported_fork(
        osaka_only
            .forkchoice_updated_v3(
                forkchoice(osaka_hash),
                Some(&v3_attributes(FIRST_AMSTERDAM_SLOT))
            )
            .await
    ));
    assert!(is_unsupported_fork(osaka_only.new_payload_v4(&late).await));
    let amsterdam_id = client
        .forkchoice_updated_v4(
            forkchoice(osaka_hash),
            Some(&attributes(FIRST_AMSTERDAM_SLOT)),
            None,
        )
        .await
        .expect("fcUV4")
        .payload_id
        .expect("a payload id");
    assert!(is_unsupported_fork(
        osaka_only.get_payload_v5::<E>(amsterdam_id).await
    ));

    let amsterdam_only = unscheduled(&mock).with_amsterdam_time(Some(0));
    assert!(is_unsupported_fork(
        amsterdam_only
            .forkchoice_updated_v4(forkchoice(genesis), Some(&attributes(last)), None)
            .await
    ));
    assert!(is_unsupported_fork(
        amsterdam_only.new_payload_v5(&early).await
    ));
    let osaka_id = client
        .forkchoice_updated_v3(forkchoice(genesis), Some(&v3_attributes(last)))
        .await
        .expect("fcUV3")
        .payload_id
        .expect("a payload id");
    let refused = amsterdam_only.get_payload_v6::<E>(osaka_id).await;
    assert!(
        is_unsupported_fork(refused),
        "getPayloadV6 of an Osaka payload"
    );
    // The same payloads still come back through the right method.
    assert!(client.get_payload_v5::<E>(osaka_id).await.is_ok());
    assert!(client.get_payload_v6::<E>(amsterdam_id).await.is_ok());
}

#[tokio::test]
async fn new_payload_v5_needs_a_block_access_list_and_fcu_v4_sixteen_custody_bytes() {
    let spec = spec(0);
    let mock = mock(spec.clone()).await;
    let client = client(&mock, &spec);
    let genesis = mock.genesis_block_hash();
    let built = build_amsterdam(&client, genesis, 1).await;
    let root = attributes(1).parent_beacon_block_root;

    // Missing `blockAccessList`: -32602.
    let mut payload = serde_json::to_value(JsonExecutionPayloadV4::from(
        built.execution_payload.clone(),
    ))
    .expect("encodes");
    payload
        .as_object_mut()
        .expect("object")
        .remove("blockAccessList");
    let answer = raw_call(
        &mock,
        ENGINE_NEW_PAYLOAD_V5,
        serde_json::json!([payload, [], root, []]),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("blockAccessList")),
        "{answer}"
    );

    // A block access list that is not an RLP list (the hash does cover it): INVALID.
    let mut bad = request_v5(&built, 1);
    bad.execution_payload.block_access_list = ProgressiveByteList::new(vec![0x01]);
    bad.execution_payload.block_hash = compute_block_hash_amsterdam(
        &bad.execution_payload,
        root,
        &get_execution_requests_list_gloas(&bad.execution_requests),
    );
    let status = client.new_payload_v5(&bad).await.expect("an answer");
    assert!(
        matches!(status, PayloadStatus::Invalid { .. }),
        "{status:?}"
    );

    // `custodyColumns` must be 16 bytes: -32602; null is fine.
    let state = serde_json::to_value(forkchoice(genesis)).expect("encodes");
    let answer = raw_call(
        &mock,
        ENGINE_FORKCHOICE_UPDATED_V4,
        serde_json::json!([state, null, "0x0102"]),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let answer = raw_call(
        &mock,
        ENGINE_FORKCHOICE_UPDATED_V4,
        serde_json::json!([state, null, null]),
    )
    .await;
    assert_eq!(
        answer["result"]["payloadStatus"]["status"], "VALID",
        "{answer}"
    );
    // Attributes of the wrong structure (V3 in a V4 call): -38003.
    let mut v3 = serde_json::to_value(attributes(1)).expect("encodes");
    let object = v3.as_object_mut().expect("object");
    object.remove("slotNumber");
    object.remove("targetGasLimit");
    let answer = raw_call(
        &mock,
        ENGINE_FORKCHOICE_UPDATED_V4,
        serde_json::json!([state, v3, null]),
    )
    .await;
    assert_eq!(answer["error"]["code"], -38003, "{answer}");

    // The well-formed payload is valid.
    let status = client
        .new_payload_v5(&request_v5(&built, 1))
        .await
        .expect("newPayloadV5");
    assert_eq!(status, PayloadStatus::Valid);
}

#[tokio::test]
async fn slot_faults_withhold_delay_or_leave_a_payload_unvalidated() {
    let spec = spec(0);
    let mock = mock(spec.clone()).await;
    let client = client(&mock, &spec);
    let genesis = mock.genesis_block_hash();
    let first = build_amsterdam(&client, genesis, 1).await;
    client
        .new_payload_v5(&request_v5(&first, 1))
        .await
        .expect("newPayloadV5");
    let parent = first.execution_payload.block_hash;

    // Withheld: getPayload answers -38001 while the fault stands, the payload otherwise.
    mock.set_slot_fault(2, Some(SlotFault::Withhold));
    let id = client
        .forkchoice_updated_v4(forkchoice(parent), Some(&attributes(2)), None)
        .await
        .expect("fcUV4")
        .payload_id
        .expect("a payload id");
    let withheld = client.get_payload_v6::<E>(id).await;
    assert!(
        matches!(
            withheld,
            Err(Error::Rpc {
                method: ENGINE_GET_PAYLOAD_V6,
                code: RpcErrorCode::UnknownPayload,
                ..
            })
        ),
        "{withheld:?}"
    );
    mock.set_slot_fault(2, None);
    assert!(client.get_payload_v6::<E>(id).await.is_ok());

    // Never validated: getPayload answers, newPayload says SYNCING, the block is not taken.
    mock.set_slot_fault(3, Some(SlotFault::NewPayloadSyncing));
    let unvalidated = build_amsterdam(&client, parent, 3).await;
    let status = client
        .new_payload_v5(&request_v5(&unvalidated, 3))
        .await
        .expect("newPayloadV5");
    assert_eq!(status, PayloadStatus::Syncing);
    assert!(!mock.knows_block(&unvalidated.execution_payload.block_hash));
    let updated = client
        .forkchoice_updated_v4(
            forkchoice(unvalidated.execution_payload.block_hash),
            None,
            None,
        )
        .await
        .expect("fcUV4");
    assert_eq!(updated.payload_status, PayloadStatus::Syncing);

    // Delayed: asked first, the delayed payload arrives after one asked later.
    mock.set_slot_fault(4, Some(SlotFault::Delay(Duration::from_secs(3))));
    let start = |slot: u64| {
        let client = &client;
        async move {
            client
                .forkchoice_updated_v4(forkchoice(parent), Some(&attributes(slot)), None)
                .await
                .expect("fcUV4")
                .payload_id
                .expect("a payload id")
        }
    };
    let delayed_id = start(4).await;
    let prompt_id = start(5).await;
    // The delay comes after the build: whichever build ends first, the delayed answer is last.
    let (order_tx, mut order_rx) = tokio::sync::mpsc::unbounded_channel();
    let fetch = |id, slot: u64| {
        let client = &client;
        let order_tx = order_tx.clone();
        async move {
            let built = client.get_payload_v6::<E>(id).await.expect("getPayloadV6");
            order_tx.send(slot).expect("receiver alive");
            built
        }
    };
    let (delayed, prompt) = tokio::join!(fetch(delayed_id, 4), fetch(prompt_id, 5));
    drop(order_tx);
    assert_eq!(delayed.execution_payload.slot_number, 4);
    assert_eq!(prompt.execution_payload.slot_number, 5);
    let mut order = vec![];
    while let Some(slot) = order_rx.recv().await {
        order.push(slot);
    }
    assert_eq!(order, vec![5, 4], "the delayed slot's payload comes last");
}

#[tokio::test]
async fn get_blobs_v4_serves_the_requested_cells_of_pooled_blobs() {
    let spec = spec(0);
    let mock = mock(spec.clone()).await;
    let client = client(&mock, &spec);
    mock.set_blobs_per_payload(1);
    let built = build_amsterdam(&client, mock.genesis_block_hash(), 1).await;
    let hash =
        mock_execution_layer::blobs::kzg_to_versioned_hash(&built.blobs_bundle.commitments[0]);
    let indices = ColumnIndices::from_indices([1, 64]).expect("columns");
    let items = client
        .get_blobs_v4(&[hash, B256::repeat_byte(0x01)], &indices)
        .await
        .expect("getBlobsV4")
        .expect("not syncing");
    assert_eq!(items.len(), 2);
    let item = items[0].as_ref().expect("the pooled blob");
    assert_eq!(item.blob_cells.len(), 2);
    assert_eq!(
        item.proofs,
        vec![
            Some(built.blobs_bundle.proofs[1]),
            Some(built.blobs_bundle.proofs[64])
        ]
    );
    let cells =
        kzg::compute_cells(&kzg::blob_from_bytes(&built.blobs_bundle.blobs[0]).expect("a blob"))
            .expect("cells");
    assert_eq!(
        item.blob_cells[1].as_deref(),
        Some(&cells[64].to_bytes()[..])
    );
    assert!(items[1].is_none(), "a blob not in the pool is null");
    mock.set_syncing(true);
    assert_eq!(
        client
            .get_blobs_v4(&[hash], &indices)
            .await
            .expect("answer"),
        None,
        "null while syncing"
    );
}
