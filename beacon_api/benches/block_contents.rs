//! Encoding and decoding of a 48-blob Fulu `BlockContents` (what produceBlockV3 returns): the
//! block, 48 blobs and their 6,144 cell proofs, in SSZ and in JSON side by side.
//!
//! The block is built from seeded `arbitrary` bytes and then given a mainnet-like shape: 48 blob
//! commitments, 8 on-chain aggregates covering all 64 committees of a slot at 1,000,000
//! validators (31,250 bits each), 200 transactions of 400 bytes, no other operations. The blobs
//! dominate the size (48 × 128 KiB in SSZ, twice that in hex JSON).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::hint::black_box;

use arbitrary::{Arbitrary, Unstructured};
use beacon_api::block_contents::{BlockContents, Fulu};
use beacon_api::envelope::ForkVersionedJson;
use criterion::{Criterion, criterion_group, criterion_main};
use splitmix::SplitMix64;
use ssz_types::typenum::Unsigned;
use ssz_types::{BitList, BitVector, VariableList};
use types::{Blob, EthSpec, ForkName, KZGCommitment, KZGProof, MainnetEthSpec, fulu};

type E = MainnetEthSpec;

const BLOBS: usize = 48;
const CELLS_PER_EXT_BLOB: usize = 128;
/// Members of one slot's committees at 1,000,000 validators: 1,000,000 / 32.
const BITS_PER_AGGREGATE: usize = 31_250;

fn random_bytes(rng: &mut SplitMix64, len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    rng.fill_bytes(&mut bytes);
    bytes
}

fn contents() -> BlockContents<E> {
    let mut rng = SplitMix64::new(48);
    let block = (0..)
        .find_map(|_| {
            let bytes = random_bytes(&mut rng, 1 << 16);
            fulu::BeaconBlock::<E>::arbitrary(&mut Unstructured::new(&bytes)).ok()
        })
        .unwrap();
    let mut block = block;
    let body = &mut block.body;
    body.proposer_slashings = VariableList::empty();
    body.attester_slashings = VariableList::empty();
    body.deposits = VariableList::empty();
    body.voluntary_exits = VariableList::empty();
    body.bls_to_execution_changes = VariableList::empty();
    body.execution_requests = fulu::ExecutionRequests {
        deposits: VariableList::empty(),
        withdrawals: VariableList::empty(),
        consolidations: VariableList::empty(),
    };
    let template =
        fulu::Attestation::<E>::arbitrary(&mut Unstructured::new(&random_bytes(&mut rng, 4096)))
            .unwrap();
    let attestations = (0..8)
        .map(|_| {
            let mut bits = BitList::with_capacity(BITS_PER_AGGREGATE).unwrap();
            for i in 0..BITS_PER_AGGREGATE {
                bits.set(i, true).unwrap();
            }
            let mut committee_bits = BitVector::new();
            for i in 0..64 {
                committee_bits.set(i, true).unwrap();
            }
            fulu::Attestation::<E> {
                aggregation_bits: bits,
                committee_bits,
                ..template.clone()
            }
        })
        .collect::<Vec<_>>();
    body.attestations = VariableList::new(attestations).unwrap();
    body.execution_payload.transactions = VariableList::new(
        (0..200)
            .map(|_| VariableList::new(random_bytes(&mut rng, 400)).unwrap())
            .collect(),
    )
    .unwrap();
    body.blob_kzg_commitments = VariableList::new(
        (0..BLOBS)
            .map(|_| KZGCommitment::from_slice(&random_bytes(&mut rng, 48)))
            .collect(),
    )
    .unwrap();
    let blobs = (0..BLOBS)
        .map(|_| {
            Blob::<E>::new(random_bytes(
                &mut rng,
                <E as EthSpec>::BytesPerBlob::to_usize(),
            ))
            .unwrap()
        })
        .collect::<Vec<_>>();
    let kzg_proofs = (0..BLOBS * CELLS_PER_EXT_BLOB)
        .map(|_| KZGProof::from_slice(&random_bytes(&mut rng, 48)))
        .collect();
    BlockContents::Fulu(Fulu {
        block,
        kzg_proofs,
        blobs: VariableList::new(blobs).unwrap(),
    })
}

/// The JSON of produceBlockV3's `data`, as the server writes it.
fn to_json(contents: &BlockContents<E>) -> Vec<u8> {
    beacon_api::envelope::to_json(contents).unwrap()
}

fn from_json(bytes: &[u8]) -> BlockContents<E> {
    BlockContents::deserialize_by_fork(
        &mut serde_json::Deserializer::from_slice(bytes),
        ForkName::Fulu,
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let contents = contents();
    let ssz = contents.as_ssz_bytes();
    let json = to_json(&contents);
    assert_eq!(
        BlockContents::<E>::from_ssz_bytes_by_fork(&ssz, ForkName::Fulu).unwrap(),
        contents
    );
    assert_eq!(from_json(&json), contents);
    eprintln!(
        "48-blob Fulu BlockContents: {} bytes in SSZ, {} bytes in JSON",
        ssz.len(),
        json.len()
    );

    let mut group = c.benchmark_group("block_contents_48_blobs");
    group.sample_size(20);
    group.bench_function("ssz_encode", |b| {
        b.iter(|| black_box(black_box(&contents).as_ssz_bytes()))
    });
    // The floor of an SSZ encoding: the 48 blobs copied into one buffer, slice by slice.
    let Fulu {
        blobs: blob_list, ..
    } = match &contents {
        BlockContents::Fulu(fulu) => fulu,
        _ => unreachable!("Fulu contents"),
    };
    group.bench_function("blobs_copy_baseline", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(ssz.len());
            for blob in black_box(blob_list).iter() {
                out.extend_from_slice(blob);
            }
            black_box(out)
        })
    });
    group.bench_function("ssz_decode", |b| {
        b.iter(|| {
            black_box(
                BlockContents::<E>::from_ssz_bytes_by_fork(black_box(&ssz), ForkName::Fulu)
                    .unwrap(),
            )
        })
    });
    group.bench_function("json_encode", |b| {
        b.iter(|| black_box(to_json(black_box(&contents))))
    });
    group.bench_function("json_decode", |b| {
        b.iter(|| black_box(from_json(black_box(&json))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
