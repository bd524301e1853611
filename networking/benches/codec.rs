//! Req/resp and gossip encoding at mainnet sizes: a data column sidecar of 48 blobs through the
//! `ssz_snappy` response codec, and the gossip message id of the same payload.

#![allow(
    clippy::unwrap_used,
    reason = "bench: a valid column that fails to encode or decode should abort the run"
)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::executor::block_on;
use futures::io::Cursor;
use networking::ForkContext;
use networking::gossip::{compress_snappy, compute_message_id};
use networking::rpc::codec::{encode_response_item, read_response_chunk};
use networking::rpc::{Protocol, ResponseItem};
use ssz::{Decode, Encode};
use types::{ChainSpec, DataColumnSidecar, ForkName, MainnetEthSpec, Root};

type E = MainnetEthSpec;

/// A Fulu data column sidecar with 48 cells, commitments and proofs of pseudo-random bytes.
fn column() -> Arc<DataColumnSidecar<E>> {
    let blobs = 48usize;
    let cell = 2048usize;
    // index, 4 offsets, header (8+8+32+32+32+96), inclusion proof 4*32, then the lists.
    let mut bytes = Vec::new();
    bytes.extend(7u64.to_le_bytes());
    let fixed = 8 + 4 * 3 + 208 + 4 * 32;
    let cells_len = blobs * cell;
    let commitments_len = blobs * 48;
    bytes.extend((fixed as u32).to_le_bytes());
    bytes.extend(((fixed + cells_len) as u32).to_le_bytes());
    bytes.extend(((fixed + cells_len + commitments_len) as u32).to_le_bytes());
    bytes.extend(vec![0u8; 208 + 4 * 32]);
    let mut x: u32 = 1;
    for _ in 0..(cells_len + 2 * commitments_len) {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        bytes.push((x >> 24) as u8);
    }
    let sidecar =
        types::fulu::DataColumnSidecar::<E>::from_ssz_bytes(&bytes).expect("valid layout");
    Arc::new(DataColumnSidecar::Fulu(sidecar))
}

fn bench(c: &mut Criterion) {
    let spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    let ctx = ForkContext::new(spec.clone(), Root::ZERO);
    let item = ResponseItem::DataColumnSidecar(column());
    let encoded = encode_response_item(Protocol::DataColumnsByRoot, &item, &ctx).unwrap();
    c.bench_function("rpc_encode_data_column_48_blobs", |b| {
        b.iter(|| encode_response_item(Protocol::DataColumnsByRoot, &item, &ctx).unwrap())
    });
    c.bench_function("rpc_decode_data_column_48_blobs", |b| {
        b.iter(|| {
            block_on(read_response_chunk::<E, _>(
                &mut Cursor::new(&encoded),
                Protocol::DataColumnsByRoot,
                &ctx,
            ))
            .unwrap()
            .unwrap()
            .unwrap()
        })
    });
    let ResponseItem::DataColumnSidecar(sidecar) = &item else {
        unreachable!()
    };
    let gossip = compress_snappy(&sidecar.as_ssz_bytes());
    let topic = "/eth2/00000000/data_column_sidecar_7/ssz_snappy";
    c.bench_function("gossip_message_id_data_column_48_blobs", |b| {
        b.iter(|| compute_message_id(&spec, ForkName::Fulu, topic, &gossip))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
