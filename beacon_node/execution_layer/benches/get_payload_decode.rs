//! Decoding an `engine_getPayloadV5` response with 48 blobs (≈12.6 MB of hex) into our types,
//! and the parts of that cost: scanning the JSON, decoding the hex, and SSZ for comparison.

use criterion::{Criterion, criterion_group, criterion_main};
use execution_layer::mock::blobs::generate_blob_entries;
use execution_layer::{BlobsBundle, GetPayloadResponse, JsonGetPayloadV5Response};
use ssz::{Decode, Encode};
use ssz_types::{FixedVector, VariableList};
use types::fulu::ExecutionPayload;
use types::{Address, B256, Blob, EthSpec, MainnetEthSpec, U256};

type E = MainnetEthSpec;
const BLOBS: usize = 48;

fn response() -> JsonGetPayloadV5Response<E> {
    let entries = generate_blob_entries(1, 1, BLOBS).expect("KZG on generated blobs");
    let transactions: Vec<Vec<u8>> = entries
        .chunks(6)
        .enumerate()
        .map(|(i, c)| {
            let hashes: Vec<_> = c.iter().map(|e| e.versioned_hash).collect();
            execution_layer::mock::blobs::blob_transaction(1, i as u64, &hashes)
        })
        .collect();
    let payload = ExecutionPayload::<E> {
        parent_hash: B256::repeat_byte(1),
        fee_recipient: Address::repeat_byte(2),
        state_root: B256::repeat_byte(3),
        receipts_root: B256::repeat_byte(4),
        logs_bloom: FixedVector::default(),
        prev_randao: B256::repeat_byte(5),
        block_number: 1,
        gas_limit: 60_000_000,
        gas_used: 21_000 * transactions.len() as u64,
        timestamp: 1_750_000_012,
        extra_data: VariableList::empty(),
        base_fee_per_gas: U256::from(1_000_000_000u64),
        block_hash: B256::repeat_byte(6),
        transactions: VariableList::new(
            transactions
                .into_iter()
                .map(|t| VariableList::new(t).expect("small"))
                .collect(),
        )
        .expect("few"),
        withdrawals: VariableList::empty(),
        blob_gas_used: (BLOBS as u64) << 17,
        excess_blob_gas: 0,
    };
    JsonGetPayloadV5Response {
        execution_payload: payload.into(),
        block_value: U256::from(1u64),
        blobs_bundle: BlobsBundle {
            commitments: entries.iter().map(|e| e.commitment).collect(),
            proofs: entries.iter().flat_map(|e| e.proofs.clone()).collect(),
            blobs: entries
                .iter()
                .map(|e| FixedVector::new(e.blob.clone()).expect("blob size"))
                .collect(),
        },
        should_override_builder: false,
        execution_requests: vec![],
    }
}

fn decode(c: &mut Criterion) {
    let response = response();
    let json = serde_json::to_vec(&response).expect("serializes");
    println!("getPayloadV5 response: {} bytes of JSON", json.len());

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

    // The same content as SSZ: payload + blobs + commitments + proofs.
    type Blobs = VariableList<Blob<E>, <E as EthSpec>::MaxBlobCommitmentsPerBlock>;
    let payload: ExecutionPayload<E> = response.execution_payload.clone().into();
    let payload_ssz = payload.as_ssz_bytes();
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
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
