//! Decoding an `engine_getPayloadV5` response with 48 blobs (≈13 MB of JSON) into our types,
//! the parts of that cost (scanning the JSON, decoding the hex, allocating), SSZ for comparison,
//! and the whole call over HTTP with JWT against the mock.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use execution_layer::{
    EngineApiClient, ForkchoiceState, GetPayloadResponse, JsonGetPayloadV5Response, JwtSecret,
    PayloadAttributes, Timeouts, get_execution_requests_list,
};
use mock_execution_layer::{MockConfig, MockExecutionLayer};
use ssz::{Decode, Encode};
use ssz_types::VariableList;
use types::fulu::ExecutionPayload;
use types::{
    Address, B256, Blob, BlobScheduleEntry, ChainSpec, EthSpec, ForkName, MainnetEthSpec, PayloadId,
};

type E = MainnetEthSpec;
const BLOBS: usize = 48;
const SECRET: JwtSecret = JwtSecret::new([0x42; 32]);
const GENESIS_TIME: u64 = 1_750_000_000;

/// A mock allowing 48 blobs from genesis, a client, and the id of a built 48-blob payload.
async fn setup() -> (MockExecutionLayer<E>, EngineApiClient, PayloadId) {
    let mut spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    spec.blob_schedule = vec![BlobScheduleEntry {
        epoch: 0,
        max_blobs_per_block: BLOBS as u64,
    }];
    let config = MockConfig {
        jwt_secret: SECRET,
        spec,
        genesis_time: GENESIS_TIME,
        seed: 1,
        chain_id: 1,
    };
    let mock = MockExecutionLayer::<E>::start(config, "127.0.0.1:0".parse().expect("address"))
        .await
        .expect("mock starts");
    mock.set_blobs_per_payload(BLOBS);
    let timeouts = Timeouts {
        get_payload: Duration::from_secs(120),
        ..Timeouts::default()
    };
    let client = EngineApiClient::new(mock.url(), SECRET, timeouts).expect("client");
    let attributes = PayloadAttributes {
        timestamp: GENESIS_TIME + 12,
        prev_randao: B256::repeat_byte(1),
        suggested_fee_recipient: Address::repeat_byte(2),
        withdrawals: vec![],
        parent_beacon_block_root: B256::repeat_byte(3),
    };
    let head = mock.genesis_block_hash();
    let updated = client
        .forkchoice_updated_v3(
            ForkchoiceState {
                head_block_hash: head,
                safe_block_hash: B256::ZERO,
                finalized_block_hash: B256::ZERO,
            },
            Some(&attributes),
        )
        .await
        .expect("fcU");
    let id = updated.payload_id.expect("building");
    (mock, client, id)
}

fn to_json(response: &GetPayloadResponse<E>) -> JsonGetPayloadV5Response<E> {
    JsonGetPayloadV5Response {
        execution_payload: response.execution_payload.clone().into(),
        block_value: response.block_value,
        blobs_bundle: response.blobs_bundle.clone(),
        should_override_builder: response.should_override_builder,
        execution_requests: get_execution_requests_list(&response.execution_requests),
    }
}

fn decode(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (mock, client, id) = runtime.block_on(setup());
    // The first call waits for the mock to compute 48 × 128 cell proofs.
    let built = runtime
        .block_on(client.get_payload_v5::<E>(id))
        .expect("getPayload");
    assert_eq!(built.blobs_bundle.blobs.len(), BLOBS);
    let response = to_json(&built);
    let json = serde_json::to_vec(&response).expect("serializes");
    println!(
        "getPayloadV5 response: {} bytes of JSON, {} transactions",
        json.len(),
        built.execution_payload.transactions.len()
    );

    let mut group = c.benchmark_group("get_payload_v5_48_blobs");
    group.sample_size(20);

    group.bench_function("json_to_types", |b| {
        b.iter(|| {
            let decoded: JsonGetPayloadV5Response<E> =
                serde_json::from_slice(&json).expect("decodes");
            GetPayloadResponse::from_json(decoded).expect("valid")
        })
    });

    group.bench_function("json_scan_only", |b| {
        b.iter(|| serde_json::from_slice::<serde::de::IgnoredAny>(&json).expect("valid JSON"))
    });

    let hex_blobs: Vec<String> = response
        .blobs_bundle
        .blobs
        .iter()
        .map(|b| execution_layer::serde_hex::encode(b))
        .collect();
    group.bench_function("hex_decode_blobs_only", |b| {
        b.iter(|| {
            hex_blobs
                .iter()
                .map(|h| {
                    let mut out = vec![0u8; 131_072];
                    execution_layer::serde_hex::decode_into(h, &mut out).expect("hex");
                    out
                })
                .collect::<Vec<_>>()
        })
    });

    // The hex work alone, into buffers allocated once: the rest of `hex_decode_blobs_only` is
    // allocating (and faulting in) fresh 128 KiB buffers.
    let mut buffers = vec![vec![0u8; 131_072]; hex_blobs.len()];
    group.bench_function("hex_decode_blobs_reused_buffers", |b| {
        b.iter(|| {
            for (h, out) in hex_blobs.iter().zip(buffers.iter_mut()) {
                execution_layer::serde_hex::decode_into(h, out).expect("hex");
            }
        })
    });

    // The same content as SSZ: payload + blobs + commitments + proofs.
    type Blobs = VariableList<Blob<E>, <E as EthSpec>::MaxBlobCommitmentsPerBlock>;
    let payload_ssz = built.execution_payload.as_ssz_bytes();
    let blobs_ssz = Blobs::new(response.blobs_bundle.blobs.clone())
        .expect("few")
        .as_ssz_bytes();
    let proofs_ssz: Vec<u8> = response
        .blobs_bundle
        .proofs
        .iter()
        .flat_map(|p| p.0)
        .collect();
    group.bench_function("ssz_to_types", |b| {
        b.iter(|| {
            let payload = ExecutionPayload::<E>::from_ssz_bytes(&payload_ssz).expect("ssz");
            let blobs = Blobs::from_ssz_bytes(&blobs_ssz).expect("ssz");
            let proofs: Vec<types::KZGProof> = proofs_ssz
                .chunks_exact(48)
                .map(types::KZGProof::from_slice)
                .collect();
            (payload, blobs, proofs)
        })
    });

    // The whole call: JWT, HTTP over loopback (the mock copies its cached response), decode.
    group.bench_function("http_get_payload_v5", |b| {
        b.iter(|| {
            runtime
                .block_on(client.get_payload_v5::<E>(id))
                .expect("getPayload")
        })
    });
    group.finish();
    drop(mock);
}

criterion_group!(benches, decode);
criterion_main!(benches);
