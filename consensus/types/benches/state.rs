//! Mainnet-scale `BeaconState` benchmarks: a synthetic Fulu state with 1,000,000 validators
//! (`state_harness::synthetic`, with placeholder keys: nothing here verifies a signature).
//!
//! - `decode`: SSZ decode of the whole state.
//! - `encode`: SSZ encode of the whole state (its size is printed once).
//! - `encode_in_pieces`: the same bytes written in pieces to a sink (`BeaconState::ssz_write`,
//!   how the store writes its snapshot files), without building them in memory.
//! - `hash_tree_root_from_scratch`: the root of a freshly decoded state, which has no cached
//!   hashes (a clone would share the original's cached ones, so every iteration decodes its own
//!   state, untimed).
//! - `block_updates/*`: a clone of a state whose root is cached (as a block's pre-state is kept)
//!   takes 75,000 scattered writes to `current_epoch_participation` and 10,000 (1 %) balance
//!   writes; timed as writes + root together, as the writes alone (including the copy-on-write of
//!   the pages they touch) and as the root alone (the incremental root).
//! - `sha256_64b_x100k`: 100,000 two-chunk hashes, the floor the roots are made of.
//!
//! `cargo bench -p types --bench state`. Roots hash dirty subtrees on rayon's pool, so compare
//! `RAYON_NUM_THREADS=1` and `=2`. `cargo bench -p packed_list` compares the packed lists with
//! `milhouse::List` in one process.

#![allow(
    clippy::unwrap_used,
    reason = "bench setup: a failed write or decode aborts the run"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use splitmix::splitmix64;
use ssz::{Decode, Encode};
use state_harness::synthetic::{SyntheticParams, build_state_with_placeholder_keys};
use tree_hash::TreeHash;
use types::fulu::BeaconState;
use types::{ChainSpec, ForkName, MainnetEthSpec};

type E = MainnetEthSpec;

const VALIDATORS: usize = 1_000_000;
const PARTICIPATION_WRITES: usize = 75_000;
const BALANCE_WRITES: usize = VALIDATORS / 100;

fn build_state() -> BeaconState<E> {
    let spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    build_state_with_placeholder_keys::<E>(VALIDATORS as u64, &SyntheticParams::default(), &spec)
        .expect("build the synthetic state")
}

/// 75,000 participation flag writes and 10,000 balance writes at scattered indices.
fn apply_block_updates(state: &mut BeaconState<E>, salt: u64) {
    let n = state.validators.len() as u64;
    for k in 0..PARTICIPATION_WRITES as u64 {
        let i = (splitmix64(k ^ salt) % n) as usize;
        state
            .current_epoch_participation
            .update(i, |flags| flags | 1 << (k % 3))
            .unwrap();
    }
    for k in 0..BALANCE_WRITES as u64 {
        let i = (splitmix64(k ^ salt ^ 0xba1a) % n) as usize;
        state
            .balances
            .update(i, |balance| balance + 1_000 + k)
            .unwrap();
    }
}

fn benches(c: &mut Criterion) {
    let start = std::time::Instant::now();
    let state = build_state();
    eprintln!("built the state in {:.2?}", start.elapsed());

    let start = std::time::Instant::now();
    let bytes = state.as_ssz_bytes();
    eprintln!(
        "state: {} validators, {} bytes ({:.1} MiB), first encode {:.2?}, RAYON_NUM_THREADS={}",
        state.validators.len(),
        bytes.len(),
        bytes.len() as f64 / (1 << 20) as f64,
        start.elapsed(),
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "unset".into()),
    );
    drop(state);

    let mut group = c.benchmark_group("state");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));

    group.bench_function("decode", |b| {
        b.iter_batched(
            || (),
            |()| BeaconState::<E>::from_ssz_bytes(black_box(&bytes)).unwrap(),
            BatchSize::PerIteration,
        )
    });

    let decoded = BeaconState::<E>::from_ssz_bytes(&bytes).unwrap();
    group.bench_function("encode", |b| b.iter(|| black_box(&decoded).as_ssz_bytes()));
    let state = types::BeaconState::Fulu(decoded.clone());
    group.bench_function("encode_in_pieces", |b| {
        b.iter(|| black_box(&state).ssz_write(&mut std::io::sink()).unwrap())
    });

    group.bench_function("hash_tree_root_from_scratch", |b| {
        b.iter_batched(
            || BeaconState::<E>::from_ssz_bytes(&bytes).unwrap(),
            |state| (state.tree_hash_root(), state),
            BatchSize::PerIteration,
        )
    });

    // The root of `decoded` is now cached; its clones share the cached hashes.
    let hashed = decoded;
    let start = std::time::Instant::now();
    let root = hashed.tree_hash_root();
    eprintln!(
        "root {root} computed in {:.2?} from scratch; again, cached: {:.2?}",
        start.elapsed(),
        {
            let start = std::time::Instant::now();
            black_box(hashed.tree_hash_root());
            start.elapsed()
        }
    );

    // A fresh set of indices per iteration; `Cell` as setup and routine both read it.
    let salt = std::cell::Cell::new(0u64);
    group.bench_function("block_updates/writes_and_root", |b| {
        b.iter_batched(
            || {
                salt.set(salt.get() + 1);
                hashed.clone()
            },
            |mut state| {
                apply_block_updates(&mut state, salt.get());
                (state.tree_hash_root(), state)
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("block_updates/writes", |b| {
        b.iter_batched(
            || {
                salt.set(salt.get() + 1);
                hashed.clone()
            },
            |mut state| {
                apply_block_updates(&mut state, salt.get());
                state
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("block_updates/root_only", |b| {
        b.iter_batched(
            || {
                salt.set(salt.get() + 1);
                let mut state = hashed.clone();
                apply_block_updates(&mut state, salt.get());
                state
            },
            |state| (state.tree_hash_root(), state),
            BatchSize::PerIteration,
        )
    });

    group.bench_function("sha256_64b_x100k", |b| {
        let a = [7u8; 32];
        b.iter(|| {
            let mut h = a;
            for _ in 0..100_000 {
                h = ethereum_hashing::hash32_concat(black_box(&h), &a);
            }
            h
        })
    });
    group.finish();
}

criterion_group!(state_benches, benches);
criterion_main!(state_benches);
