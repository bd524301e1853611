//! `PackedList` against `milhouse::List` on the beacon state's hot lists, at 1,000,000
//! validators, in one process (ratios are what to read; the machines are shared and noisy):
//!
//! - `balances_10k`: a `List[uint64]` takes 10,000 scattered writes (1 % of validators), then
//!   the root; the list is cloned first, as a block's pre-state is kept by the caller.
//! - `participation_75k`: a `List[uint8]` takes 75,000 scattered writes, then the root.
//! - `root_from_scratch`: the root of a freshly built 1,000,000-value `List[uint64]`.
//! - `decode`/`encode`: SSZ of the same list.
//! - `sha256_pairs`: 100,000 independent two-chunk hashes through `ethereum_hashing`, the bare
//!   `sha2` compression function, the SHA-NI one-message path and the two-message interleaved
//!   path (50,000 calls).

#![allow(
    clippy::unwrap_used,
    reason = "bench setup: a failed list operation aborts the run"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use packed_list::PackedList;
use packed_list::hashing::{hash_pair_fast, hash_pair_portable, hash_pairs_x2};
use splitmix::splitmix64;
use ssz::{Decode, Encode};
use tree_hash::TreeHash;
use typenum::U1099511627776 as Limit;

const VALIDATORS: usize = 1_000_000;

fn indices(n: usize, salt: u64) -> Vec<usize> {
    (0..n as u64)
        .map(|i| (splitmix64(i ^ (salt << 32)) % VALIDATORS as u64) as usize)
        .collect()
}

fn benches(c: &mut Criterion) {
    let balances: Vec<u64> = (0..VALIDATORS as u64).map(|i| 32_000_000_000 + i).collect();
    let flags: Vec<u8> = (0..VALIDATORS as u64).map(|i| (i % 8) as u8).collect();
    let balance_writes = indices(VALIDATORS / 100, 1);
    let flag_writes = indices(75_000, 2);

    let ours_u64 = PackedList::<u64, Limit>::new(balances.clone()).unwrap();
    ours_u64.tree_hash_root();
    let theirs_u64 = milhouse::List::<u64, Limit>::new(balances.clone()).unwrap();
    theirs_u64.tree_hash_root();
    let ours_u8 = PackedList::<u8, Limit>::new(flags.clone()).unwrap();
    ours_u8.tree_hash_root();
    let theirs_u8 = milhouse::List::<u8, Limit>::new(flags.clone()).unwrap();
    theirs_u8.tree_hash_root();

    let mut group = c.benchmark_group("packed_list");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));

    group.bench_function("balances_10k/packed_list", |b| {
        b.iter_batched(
            || ours_u64.clone(),
            |mut list| {
                for &i in &balance_writes {
                    list.update(i, |v| v + 1).unwrap();
                }
                black_box(list.tree_hash_root());
                list
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("balances_10k/milhouse", |b| {
        b.iter_batched(
            || theirs_u64.clone(),
            |mut list| {
                for &i in &balance_writes {
                    *list.get_mut(i).unwrap() += 1;
                }
                list.apply_updates().unwrap();
                black_box(list.tree_hash_root());
                list
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("participation_75k/packed_list", |b| {
        b.iter_batched(
            || ours_u8.clone(),
            |mut list| {
                for &i in &flag_writes {
                    list.update(i, |v| v | 0b111).unwrap();
                }
                black_box(list.tree_hash_root());
                list
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("participation_75k/milhouse", |b| {
        b.iter_batched(
            || theirs_u8.clone(),
            |mut list| {
                for &i in &flag_writes {
                    *list.get_mut(i).unwrap() |= 0b111;
                }
                list.apply_updates().unwrap();
                black_box(list.tree_hash_root());
                list
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("root_from_scratch/packed_list", |b| {
        b.iter_batched(
            || PackedList::<u64, Limit>::new(balances.clone()).unwrap(),
            |list| black_box(list.tree_hash_root()),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("root_from_scratch/milhouse", |b| {
        b.iter_batched(
            || milhouse::List::<u64, Limit>::new(balances.clone()).unwrap(),
            |list| black_box(list.tree_hash_root()),
            BatchSize::LargeInput,
        )
    });
    let bytes = ours_u64.as_ssz_bytes();
    group.bench_function("decode/packed_list", |b| {
        b.iter(|| PackedList::<u64, Limit>::from_ssz_bytes(black_box(&bytes)).unwrap())
    });
    group.bench_function("decode/milhouse", |b| {
        b.iter(|| milhouse::List::<u64, Limit>::from_ssz_bytes(black_box(&bytes)).unwrap())
    });
    group.bench_function("encode/packed_list", |b| {
        b.iter(|| black_box(&ours_u64).as_ssz_bytes())
    });
    group.bench_function("encode/milhouse", |b| {
        b.iter(|| black_box(&theirs_u64).as_ssz_bytes())
    });
    group.finish();
}

const PAIRS: usize = 100_000;

fn sha256_pairs(c: &mut Criterion) {
    let chunk = |i: u64| {
        let mut chunk = [0u8; 32];
        for (k, bytes) in chunk.chunks_exact_mut(8).enumerate() {
            bytes.copy_from_slice(&splitmix64(4 * i + k as u64).to_le_bytes());
        }
        chunk
    };
    let pairs: Vec<([u8; 32], [u8; 32])> = (0..PAIRS as u64)
        .map(|i| (chunk(2 * i), chunk(2 * i + 1)))
        .collect();
    let mut out = vec![[0u8; 32]; PAIRS];

    let mut group = c.benchmark_group("sha256_pairs");
    group.sample_size(20);
    group.throughput(criterion::Throughput::Elements(PAIRS as u64));
    group.bench_function("ethereum_hashing", |b| {
        b.iter(|| {
            for ((l, r), o) in pairs.iter().zip(&mut out) {
                *o = ethereum_hashing::hash32_concat(black_box(l), black_box(r));
            }
            black_box(&out);
        })
    });
    group.bench_function("compress256", |b| {
        b.iter(|| {
            for ((l, r), o) in pairs.iter().zip(&mut out) {
                *o = hash_pair_portable(black_box(l), black_box(r));
            }
            black_box(&out);
        })
    });
    group.bench_function("hash_pair_fast", |b| {
        b.iter(|| {
            for ((l, r), o) in pairs.iter().zip(&mut out) {
                *o = hash_pair_fast(black_box(l), black_box(r));
            }
            black_box(&out);
        })
    });
    group.bench_function("hash_pairs_x2", |b| {
        b.iter(|| {
            for (p, o) in pairs.chunks_exact(2).zip(out.chunks_exact_mut(2)) {
                (o[0], o[1]) = hash_pairs_x2(
                    (black_box(&p[0].0), black_box(&p[0].1)),
                    (black_box(&p[1].0), black_box(&p[1].1)),
                );
            }
            black_box(&out);
        })
    });
    group.finish();
}

criterion_group!(packed, benches, sha256_pairs);
criterion_main!(packed);
