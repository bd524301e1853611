//! Mainnet-scale `BeaconState` benchmarks: a synthetic Fulu state with 1,000,000 validators.
//!
//! - `decode`: SSZ decode of the whole state.
//! - `encode`: SSZ encode of the whole state (its size is printed once).
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

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use milhouse::{List, Vector};
use packed_list::PackedList;
use ssz::{Decode, Encode};
use ssz_types::{FixedVector, VariableList};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::fulu::{
    BeaconState, ExecutionPayloadHeader, HistoricalSummary, PendingConsolidation, PendingDeposit,
    PendingPartialWithdrawal, SyncCommittee, Validator,
};
use types::phase0::{BeaconBlockHeader, Checkpoint, Eth1Data, Fork};
use types::{B256, EthSpec, FAR_FUTURE_EPOCH, MainnetEthSpec};

type E = MainnetEthSpec;

const VALIDATORS: usize = 1_000_000;
const PARTICIPATION_WRITES: usize = 75_000;
const BALANCE_WRITES: usize = VALIDATORS / 100;
/// A mainnet-like slot (epoch 375,000), for the epochs derived from it.
const SLOT: u64 = 12_000_000;
const GWEI_PER_ETH: u64 = 1_000_000_000;

/// A fixed, well-mixed permutation of `u64`s, for deterministic pseudo-random data.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn root(i: u64, domain: u64) -> B256 {
    let mut bytes = [0u8; 32];
    for (k, word) in bytes.chunks_mut(8).enumerate() {
        word.copy_from_slice(&splitmix64(i ^ (domain << 40) ^ ((k as u64) << 60)).to_le_bytes());
    }
    B256::from(bytes)
}

/// A distinct fake compressed pubkey: the compression flag, then the index.
fn pubkey(i: u64) -> types::BLSPubkey {
    let mut bytes = [0u8; 48];
    bytes[0] = 0xa0;
    bytes[1..9].copy_from_slice(&i.to_be_bytes());
    bytes[16..24].copy_from_slice(&splitmix64(i).to_le_bytes());
    bytes.into()
}

fn validator(i: u64) -> Validator {
    let r = splitmix64(i);
    let epoch = SLOT / 32;
    // 1 % compounding validators with larger effective balances, 5 % exited, a few slashed.
    let compounding = r.is_multiple_of(100);
    let exited = r % 20 == 1;
    let mut withdrawal_credentials = [0u8; 32];
    withdrawal_credentials[0] = if compounding { 0x02 } else { 0x01 };
    withdrawal_credentials[12..20].copy_from_slice(&splitmix64(i ^ 1).to_le_bytes());
    let activation_epoch = (i * 300_000) / VALIDATORS as u64;
    Validator {
        pubkey: pubkey(i),
        withdrawal_credentials: withdrawal_credentials.into(),
        effective_balance: if compounding {
            (32 + r % 2016) * GWEI_PER_ETH
        } else if r % 50 == 2 {
            31 * GWEI_PER_ETH
        } else {
            32 * GWEI_PER_ETH
        },
        slashed: r % 2000 == 3,
        activation_eligibility_epoch: activation_epoch.saturating_sub(4),
        activation_epoch,
        exit_epoch: if exited {
            epoch - r % 10_000
        } else {
            FAR_FUTURE_EPOCH
        },
        withdrawable_epoch: if exited {
            epoch - r % 10_000 + 256
        } else {
            FAR_FUTURE_EPOCH
        },
    }
}

fn sync_committee(offset: u64) -> SyncCommittee<E> {
    SyncCommittee {
        pubkeys: FixedVector::new((0..512).map(|i| pubkey(i * 1_953 + offset)).collect()).unwrap(),
        aggregate_pubkey: pubkey(u64::MAX - offset),
    }
}

/// The synthetic state: 1,000,000 validators with realistic balances, participation and
/// inactivity scores, full root and randao vectors, and some of every pending queue.
fn build_state() -> BeaconState<E> {
    let n = VALIDATORS as u64;
    let epoch = SLOT / 32;
    let validators: Vec<Validator> = (0..n).map(validator).collect();
    let balances: Vec<u64> = validators
        .iter()
        .enumerate()
        .map(|(i, v)| v.effective_balance + splitmix64(i as u64 ^ 2) % (GWEI_PER_ETH / 4))
        .collect();
    let participation = |salt: u64| -> Vec<u8> {
        (0..n)
            .map(|i| match splitmix64(i ^ salt) % 100 {
                0..=94 => 0b111,
                95..=97 => 0b011,
                _ => 0,
            })
            .collect()
    };
    let inactivity_scores: Vec<u64> = (0..n)
        .map(|i| {
            let r = splitmix64(i ^ 5);
            if r.is_multiple_of(50) { r % 200 } else { 0 }
        })
        .collect();

    BeaconState {
        genesis_time: 1_606_824_023,
        genesis_validators_root: root(0, 99),
        slot: SLOT,
        fork: Fork {
            previous_version: [5, 0, 0, 0].into(),
            current_version: [6, 0, 0, 0].into(),
            epoch: epoch - 1000,
        },
        latest_block_header: BeaconBlockHeader {
            slot: SLOT,
            proposer_index: 4242,
            parent_root: root(1, 98),
            state_root: B256::ZERO,
            body_root: root(2, 98),
        },
        block_roots: Vector::new((0..8192).map(|i| root(i, 1)).collect()).unwrap(),
        state_roots: Vector::new((0..8192).map(|i| root(i, 2)).collect()).unwrap(),
        historical_roots: List::new((0..758).map(|i| root(i, 3)).collect()).unwrap(),
        eth1_data: Eth1Data {
            deposit_root: root(3, 98),
            deposit_count: n + 500_000,
            block_hash: root(4, 98),
        },
        eth1_data_votes: List::new(vec![]).unwrap(),
        eth1_deposit_index: n + 400_000,
        validators: List::new(validators).unwrap(),
        balances: PackedList::new(balances).unwrap(),
        randao_mixes: Vector::new((0..65536).map(|i| root(i, 4)).collect()).unwrap(),
        slashings: Vector::new(
            (0..8192u64)
                .map(|i| if i % 97 == 0 { 32 * GWEI_PER_ETH } else { 0 })
                .collect(),
        )
        .unwrap(),
        previous_epoch_participation: PackedList::new(participation(6)).unwrap(),
        current_epoch_participation: PackedList::new(participation(7)).unwrap(),
        justification_bits: Default::default(),
        previous_justified_checkpoint: Checkpoint {
            epoch: epoch - 2,
            root: root(5, 98),
        },
        current_justified_checkpoint: Checkpoint {
            epoch: epoch - 1,
            root: root(6, 98),
        },
        finalized_checkpoint: Checkpoint {
            epoch: epoch - 2,
            root: root(5, 98),
        },
        inactivity_scores: PackedList::new(inactivity_scores).unwrap(),
        current_sync_committee: sync_committee(0),
        next_sync_committee: sync_committee(7),
        latest_execution_payload_header: ExecutionPayloadHeader {
            parent_hash: root(7, 98),
            fee_recipient: Default::default(),
            state_root: root(8, 98),
            receipts_root: root(9, 98),
            logs_bloom: FixedVector::new(vec![0xff; 256]).unwrap(),
            prev_randao: root(10, 98),
            block_number: 22_000_000,
            gas_limit: 36_000_000,
            gas_used: 17_000_000,
            timestamp: 1_606_824_023 + SLOT * 12,
            extra_data: VariableList::new(b"arbor synthetic".to_vec()).unwrap(),
            base_fee_per_gas: types::U256::from(3_000_000_000u64),
            block_hash: root(11, 98),
            transactions_root: root(12, 98),
            withdrawals_root: root(13, 98),
            blob_gas_used: 786_432,
            excess_blob_gas: 0,
        },
        next_withdrawal_index: 90_000_000,
        next_withdrawal_validator_index: 123_456,
        historical_summaries: List::new(
            (0..1300)
                .map(|i| HistoricalSummary {
                    block_summary_root: root(i, 5),
                    state_summary_root: root(i, 6),
                })
                .collect(),
        )
        .unwrap(),
        deposit_requests_start_index: 2_000_000,
        deposit_balance_to_consume: 0,
        exit_balance_to_consume: 256 * GWEI_PER_ETH,
        earliest_exit_epoch: epoch + 10,
        consolidation_balance_to_consume: 0,
        earliest_consolidation_epoch: epoch + 20,
        pending_deposits: List::new(
            (0..2000)
                .map(|i| PendingDeposit {
                    pubkey: pubkey(n + i),
                    withdrawal_credentials: root(i, 7),
                    amount: 32 * GWEI_PER_ETH,
                    signature: [0xb0; 96].into(),
                    slot: SLOT - 1000 + i / 10,
                })
                .collect(),
        )
        .unwrap(),
        pending_partial_withdrawals: List::new(
            (0..100)
                .map(|i| PendingPartialWithdrawal {
                    validator_index: i * 9_973,
                    amount: GWEI_PER_ETH,
                    withdrawable_epoch: epoch + 256,
                })
                .collect(),
        )
        .unwrap(),
        pending_consolidations: List::new(
            (0..20)
                .map(|i| PendingConsolidation {
                    source_index: i * 7_919,
                    target_index: i * 7_919 + 1,
                })
                .collect(),
        )
        .unwrap(),
        proposer_lookahead: Vector::new(
            (0..<E as EthSpec>::ProposerLookaheadSlots::to_u64())
                .map(|i| splitmix64(i) % n)
                .collect(),
        )
        .unwrap(),
    }
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
