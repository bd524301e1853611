//! The Gloas state against the Fulu state at 1,000,000 validators, in one run (issue 41: each
//! ≤ 1.25× Fulu).
//!
//! Both states hold the same content: the synthetic Fulu state (`state_harness::synthetic`,
//! placeholder keys) and a Gloas state built from its fields (validators, balances,
//! participation, inactivity scores, pending queues, vectors), with empty builder lists. The
//! Fulu state's lists are milhouse trees and `packed_list::PackedList`s; the Gloas state's are
//! `progressive_tree` lists.
//!
//! - `decode`: SSZ decode of the whole state.
//! - `root_from_scratch`: the root of a freshly decoded state (decoded per iteration, untimed).
//! - `block_root`: the incremental root after one block's writes on a clone of a hashed state
//!   (writes untimed): 32,000 participation flags (one slot's attesters at 1,000,000
//!   validators), 600 balances (sync committee rewards, withdrawals, the proposer), 16
//!   validators (exits, consolidations, deposits' effective balances).
//! - `clone_and_block_writes`: a clone of the hashed state and the same writes (the
//!   copy-on-write of every page and path they touch); the extra memory of the written clone
//!   over its pre-state is printed (`types::memory`), as is each state's whole size.
//!
//! Every timed iteration gets its own input (untimed setup) and its output is dropped right
//! after, untimed. Before the timed runs the setup prints diagnostics: the root of an unchanged
//! clone (the fields without cached roots), the Gloas fields whose root costs over 20 µs, and
//! clone + writes list by list, the two states alternating.
//!
//! `cargo bench -p types --bench gloas_state`. A table of medians and Gloas/Fulu ratios is
//! printed at the end. Roots hash large dirty subtrees on rayon's pool: compare
//! `RAYON_NUM_THREADS=1` and the default.
//!
//! Measured (2-core shared machine, load average 2–3, so ±20 % between runs; the ratio is what
//! to read), Gloas / Fulu over three runs: decode 0.61–0.66, root from scratch 0.88–0.95,
//! incremental root after a block 0.79–0.95, clone + a block's writes 0.91–1.13, memory 0.77
//! (state) and 1.01 (post-block clone). Details in `consensus/progressive_tree/README.md`.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "bench setup: a failed write or decode aborts the run"
)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use splitmix::splitmix64;
use ssz::{Decode, Encode};
use state_harness::synthetic::{SyntheticParams, build_state_with_placeholder_keys};
use tree_hash::TreeHash;
use types::typenum::Unsigned;
use types::{ChainSpec, ForkName, MainnetEthSpec, fulu, gloas};

type E = MainnetEthSpec;

const VALIDATORS: usize = 1_000_000;
/// One slot's attesters at 1,000,000 validators.
const PARTICIPATION_WRITES: u64 = 32_000;
/// Sync committee rewards (512), the withdrawal sweep (16), the proposer and some slack.
const BALANCE_WRITES: u64 = 600;
/// Exits, consolidations, effective balance changes from deposits.
const VALIDATOR_WRITES: u64 = 16;

fn build_fulu() -> fulu::BeaconState<E> {
    let spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    build_state_with_placeholder_keys::<E>(VALIDATORS as u64, &SyntheticParams::default(), &spec)
        .expect("build the synthetic state")
}

/// A Gloas state with the Fulu state's content (empty builder registry and queues).
fn gloas_from(f: &fulu::BeaconState<E>) -> gloas::BeaconState<E> {
    gloas::BeaconState {
        genesis_time: f.genesis_time,
        genesis_validators_root: f.genesis_validators_root,
        slot: f.slot,
        fork: f.fork.clone(),
        latest_block_header: f.latest_block_header.clone(),
        block_roots: f.block_roots.clone(),
        state_roots: f.state_roots.clone(),
        historical_roots: f.historical_roots.clone(),
        eth1_data: f.eth1_data.clone(),
        eth1_data_votes: f.eth1_data_votes.clone(),
        eth1_deposit_index: f.eth1_deposit_index,
        validators: f.validators.iter().cloned().collect(),
        balances: f.balances.iter().collect(),
        randao_mixes: f.randao_mixes.clone(),
        slashings: f.slashings.clone(),
        previous_epoch_participation: f.previous_epoch_participation.iter().collect(),
        current_epoch_participation: f.current_epoch_participation.iter().collect(),
        justification_bits: f.justification_bits.clone(),
        previous_justified_checkpoint: f.previous_justified_checkpoint.clone(),
        current_justified_checkpoint: f.current_justified_checkpoint.clone(),
        finalized_checkpoint: f.finalized_checkpoint.clone(),
        inactivity_scores: f.inactivity_scores.iter().collect(),
        current_sync_committee: f.current_sync_committee.clone(),
        next_sync_committee: f.next_sync_committee.clone(),
        latest_block_hash: f.latest_execution_payload_header.block_hash,
        next_withdrawal_index: f.next_withdrawal_index,
        next_withdrawal_validator_index: f.next_withdrawal_validator_index,
        historical_summaries: f.historical_summaries.clone(),
        deposit_requests_start_index: f.deposit_requests_start_index,
        deposit_balance_to_consume: f.deposit_balance_to_consume,
        exit_balance_to_consume: f.exit_balance_to_consume,
        earliest_exit_epoch: f.earliest_exit_epoch,
        consolidation_balance_to_consume: f.consolidation_balance_to_consume,
        earliest_consolidation_epoch: f.earliest_consolidation_epoch,
        pending_deposits: f.pending_deposits.iter().cloned().collect(),
        pending_partial_withdrawals: f.pending_partial_withdrawals.iter().cloned().collect(),
        pending_consolidations: f.pending_consolidations.iter().cloned().collect(),
        proposer_lookahead: f.proposer_lookahead.clone(),
        builders: Default::default(),
        next_withdrawal_builder_index: 0,
        execution_payload_availability: Default::default(),
        builder_pending_payments: milhouse::Vector::new(vec![
            zero_payment();
            <E as types::EthSpec>::BuilderPendingPaymentsLength::to_usize()
        ])
        .unwrap(),
        builder_pending_withdrawals: Default::default(),
        latest_execution_payload_bid: gloas::ExecutionPayloadBid {
            parent_block_hash: Default::default(),
            parent_block_root: Default::default(),
            block_hash: f.latest_execution_payload_header.block_hash,
            prev_randao: Default::default(),
            fee_recipient: Default::default(),
            gas_limit: 60_000_000,
            builder_index: 0,
            slot: f.slot,
            value: 0,
            execution_payment: 0,
            blob_kzg_commitments: Default::default(),
            execution_requests_root: Default::default(),
        },
        payload_expected_withdrawals: Default::default(),
        ptc_window: milhouse::Vector::new(
            (0..<E as types::EthSpec>::PtcWindowSlots::to_u64())
                .map(|slot| {
                    let size = <E as types::EthSpec>::PtcSize::to_u64();
                    let members = (0..size)
                        .map(|j| splitmix64(slot * size + j) % VALIDATORS as u64)
                        .collect();
                    milhouse::Vector::new(members).unwrap()
                })
                .collect(),
        )
        .unwrap(),
    }
}

/// A zero `BuilderPendingPayment` (a fixed-size container: its zero bytes decode).
fn zero_payment() -> gloas::BuilderPendingPayment {
    let len = <gloas::BuilderPendingPayment as Encode>::ssz_fixed_len();
    gloas::BuilderPendingPayment::from_ssz_bytes(&vec![0; len]).unwrap()
}

/// The writes of one block, at indices drawn from `salt`, on either state.
macro_rules! block_writes {
    ($state:expr, $salt:expr) => {{
        let state = $state;
        let salt: u64 = $salt;
        let n = state.validators.len() as u64;
        for k in 0..PARTICIPATION_WRITES {
            let i = (splitmix64(k ^ salt) % n) as usize;
            state
                .current_epoch_participation
                .update(i, |flags| flags | 1 << (k % 3))
                .unwrap();
        }
        for k in 0..BALANCE_WRITES {
            let i = (splitmix64(k ^ salt ^ 0xba1a) % n) as usize;
            state.balances.update(i, |b| b + 1_000 + k).unwrap();
        }
        for k in 0..VALIDATOR_WRITES {
            let i = (splitmix64(k ^ salt ^ 0x7a1) % n) as usize;
            let validator = state.validators.get_mut(i).unwrap();
            validator.exit_epoch = 400_000 + k;
            validator.effective_balance -= 1_000_000_000;
        }
    }};
}

/// One block's writes on the Fulu state, including milhouse's `apply_updates` of the registry
/// (it defers the copies of a written validator's path until then; the state transition applies
/// them before the root).
fn fulu_block_writes(state: &mut fulu::BeaconState<E>, salt: u64) {
    block_writes!(&mut *state, salt);
    state.validators.apply_updates().unwrap();
}

/// One block's writes on the Gloas state.
fn gloas_block_writes(state: &mut gloas::BeaconState<E>, salt: u64) {
    block_writes!(&mut *state, salt);
}

/// Per-iteration times of every benchmark, for the ratio table.
#[derive(Default)]
struct Samples(RefCell<BTreeMap<String, Vec<Duration>>>);

impl Samples {
    fn record(&self, name: &str, per_iteration: Duration) {
        self.0
            .borrow_mut()
            .entry(name.to_owned())
            .or_default()
            .push(per_iteration);
    }

    fn median(&self, name: &str) -> Duration {
        let mut times = self.0.borrow().get(name).cloned().unwrap_or_default();
        times.sort();
        times.get(times.len() / 2).copied().unwrap_or_default()
    }
}

/// Criterion's `iter_custom` timing `routine` on a fresh `setup()` each iteration.
fn timed<S, R>(
    samples: &Samples,
    name: &str,
    iters: u64,
    mut setup: impl FnMut() -> S,
    mut routine: impl FnMut(S) -> R,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let input = setup();
        let start = Instant::now();
        let output = routine(input);
        total += start.elapsed();
        // Dropped outside the timing, before the next iteration: the allocator reuses the
        // memory, as a node that prunes its old states does (keeping every iteration's state
        // alive made each one fault in fresh pages, which timed the kernel more than the lists).
        drop(output);
    }
    samples.record(name, total / iters.max(1) as u32);
    total
}

fn benches(c: &mut Criterion) {
    let start = Instant::now();
    let fulu_state = build_fulu();
    let gloas_state = gloas_from(&fulu_state);
    eprintln!("built both states in {:.2?}", start.elapsed());
    let fulu_bytes = fulu_state.as_ssz_bytes();
    let gloas_bytes = gloas_state.as_ssz_bytes();
    let mut written = Vec::new();
    gloas_state.ssz_write(&mut written).unwrap();
    assert_eq!(written, gloas_bytes, "the Gloas state written in pieces");
    drop(written);
    eprintln!(
        "{} validators; SSZ: Fulu {} bytes, Gloas {} bytes; RAYON_NUM_THREADS={}",
        gloas_state.validators.len(),
        fulu_bytes.len(),
        gloas_bytes.len(),
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "unset".into()),
    );
    drop((fulu_state, gloas_state));

    let samples = Samples::default();
    let mut group = c.benchmark_group("gloas_vs_fulu");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));

    group.bench_function("decode/fulu", |b| {
        b.iter_custom(|iters| {
            timed(
                &samples,
                "decode/fulu",
                iters,
                || (),
                |()| fulu::BeaconState::<E>::from_ssz_bytes(black_box(&fulu_bytes)).unwrap(),
            )
        })
    });
    group.bench_function("decode/gloas", |b| {
        b.iter_custom(|iters| {
            timed(
                &samples,
                "decode/gloas",
                iters,
                || (),
                |()| gloas::BeaconState::<E>::from_ssz_bytes(black_box(&gloas_bytes)).unwrap(),
            )
        })
    });

    group.bench_function("root_from_scratch/fulu", |b| {
        b.iter_custom(|iters| {
            timed(
                &samples,
                "root_from_scratch/fulu",
                iters,
                || fulu::BeaconState::<E>::from_ssz_bytes(&fulu_bytes).unwrap(),
                |state| (state.tree_hash_root(), state),
            )
        })
    });
    group.bench_function("root_from_scratch/gloas", |b| {
        b.iter_custom(|iters| {
            timed(
                &samples,
                "root_from_scratch/gloas",
                iters,
                || gloas::BeaconState::<E>::from_ssz_bytes(&gloas_bytes).unwrap(),
                |state| (state.tree_hash_root(), state),
            )
        })
    });

    // Hashed pre-states: their clones share the cached hashes.
    let fulu_state = fulu::BeaconState::<E>::from_ssz_bytes(&fulu_bytes).unwrap();
    let gloas_state = gloas::BeaconState::<E>::from_ssz_bytes(&gloas_bytes).unwrap();
    let fulu_root = fulu_state.tree_hash_root();
    let gloas_root = gloas_state.tree_hash_root();
    eprintln!("roots: Fulu {fulu_root}, Gloas {gloas_root}");
    // What a root costs with nothing written (the fields without cached roots), median of 21.
    let unchanged = |root: &dyn Fn() -> tree_hash::Hash256| {
        let mut times: Vec<Duration> = (0..21)
            .map(|_| {
                let start = Instant::now();
                black_box(root());
                start.elapsed()
            })
            .collect();
        times.sort();
        times[times.len() / 2]
    };
    eprintln!(
        "root of an unchanged clone: Fulu {:.2?}, Gloas {:.2?} (of which ptc_window {:.2?}, \
         builder_pending_payments {:.2?})",
        unchanged(&|| fulu_state.clone().tree_hash_root()),
        unchanged(&|| gloas_state.clone().tree_hash_root()),
        unchanged(&|| gloas_state.ptc_window.tree_hash_root()),
        unchanged(&|| gloas_state.builder_pending_payments.tree_hash_root()),
    );

    // The Gloas fields whose root costs more than 20 µs on an unchanged clone.
    let clone = gloas_state.clone();
    macro_rules! slow_fields {
        ($($field:ident),* $(,)?) => {$(
            let took = unchanged(&|| clone.$field.tree_hash_root());
            if took > Duration::from_micros(20) {
                eprintln!("  Gloas field {}: {took:.2?}", stringify!($field));
            }
        )*};
    }
    slow_fields!(
        genesis_time,
        genesis_validators_root,
        slot,
        fork,
        latest_block_header,
        block_roots,
        state_roots,
        historical_roots,
        eth1_data,
        eth1_data_votes,
        eth1_deposit_index,
        validators,
        balances,
        randao_mixes,
        slashings,
        previous_epoch_participation,
        current_epoch_participation,
        justification_bits,
        previous_justified_checkpoint,
        current_justified_checkpoint,
        finalized_checkpoint,
        inactivity_scores,
        current_sync_committee,
        next_sync_committee,
        latest_block_hash,
        next_withdrawal_index,
        next_withdrawal_validator_index,
        historical_summaries,
        deposit_requests_start_index,
        deposit_balance_to_consume,
        exit_balance_to_consume,
        earliest_exit_epoch,
        consolidation_balance_to_consume,
        earliest_consolidation_epoch,
        pending_deposits,
        pending_partial_withdrawals,
        pending_consolidations,
        proposer_lookahead,
        builders,
        next_withdrawal_builder_index,
        execution_payload_availability,
        builder_pending_payments,
        builder_pending_withdrawals,
        latest_execution_payload_bid,
        payload_expected_withdrawals,
        ptc_window,
    );
    eprintln!(
        "  clone: Fulu {:.2?}, Gloas {:.2?}",
        unchanged(&|| {
            black_box(fulu_state.clone());
            tree_hash::Hash256::ZERO
        }),
        unchanged(&|| {
            black_box(gloas_state.clone());
            tree_hash::Hash256::ZERO
        }),
    );
    drop(clone);

    // Clone + one block's writes, list by list, the two states alternating (medians of 15).
    macro_rules! per_list {
        ($name:literal, |$state:ident, $salt:ident| $writes:expr) => {{
            let (mut fulu_times, mut gloas_times) = (Vec::new(), Vec::new());
            for round in 0..15u64 {
                let start = Instant::now();
                let mut $state = fulu_state.clone();
                let $salt = round;
                $writes;
                fulu_times.push(start.elapsed());
                drop($state);
                let start = Instant::now();
                let mut $state = gloas_state.clone();
                $writes;
                gloas_times.push(start.elapsed());
                drop($state);
            }
            fulu_times.sort();
            gloas_times.sort();
            eprintln!(
                "  clone + {}: Fulu {:.2?}, Gloas {:.2?}",
                $name, fulu_times[7], gloas_times[7]
            );
        }};
    }
    per_list!("nothing", |state, salt| black_box((&mut state, salt)));
    per_list!("participation writes", |state, salt| {
        let n = state.validators.len() as u64;
        for k in 0..PARTICIPATION_WRITES {
            let i = (splitmix64(k ^ salt) % n) as usize;
            state
                .current_epoch_participation
                .update(i, |flags| flags | 1 << (k % 3))
                .unwrap();
        }
    });
    per_list!("validator writes", |state, salt| {
        let n = state.validators.len() as u64;
        for k in 0..VALIDATOR_WRITES {
            let i = (splitmix64(k ^ salt ^ 0x7a1) % n) as usize;
            let validator = state.validators.get_mut(i).unwrap();
            validator.exit_epoch = 400_000 + k;
            validator.effective_balance -= 1_000_000_000;
        }
        black_box(&mut state.validators);
    });
    per_list!("whole block", |state, salt| {
        block_writes!(&mut state, salt)
    });
    per_list!("balance writes", |state, salt| {
        let n = state.validators.len() as u64;
        for k in 0..BALANCE_WRITES {
            let i = (splitmix64(k ^ salt ^ 0xba1a) % n) as usize;
            state.balances.update(i, |b| b + 1_000 + k).unwrap();
        }
    });

    // A fresh set of indices per iteration.
    let salt = std::cell::Cell::new(0u64);
    let next_salt = || {
        salt.set(salt.get() + 1);
        salt.get()
    };

    group.bench_function("block_root/fulu", |b| {
        b.iter_custom(|iters| {
            timed(
                &samples,
                "block_root/fulu",
                iters,
                || {
                    let mut state = fulu_state.clone();
                    fulu_block_writes(&mut state, next_salt());
                    state
                },
                |state| (state.tree_hash_root(), state),
            )
        })
    });
    group.bench_function("block_root/gloas", |b| {
        b.iter_custom(|iters| {
            timed(
                &samples,
                "block_root/gloas",
                iters,
                || {
                    let mut state = gloas_state.clone();
                    gloas_block_writes(&mut state, next_salt());
                    state
                },
                |state| (state.tree_hash_root(), state),
            )
        })
    });

    group.bench_function("clone_and_block_writes/fulu", |b| {
        b.iter_custom(|iters| {
            timed(
                &samples,
                "clone_and_block_writes/fulu",
                iters,
                next_salt,
                |salt| {
                    let mut state = fulu_state.clone();
                    fulu_block_writes(&mut state, salt);
                    state
                },
            )
        })
    });
    group.bench_function("clone_and_block_writes/gloas", |b| {
        b.iter_custom(|iters| {
            timed(
                &samples,
                "clone_and_block_writes/gloas",
                iters,
                next_salt,
                |salt| {
                    let mut state = gloas_state.clone();
                    gloas_block_writes(&mut state, salt);
                    state
                },
            )
        })
    });
    group.finish();

    // Memory: each hashed state whole, and what a clone with one block's writes (hashed, as a
    // post-state is kept) adds to it.
    let mut fulu_post = fulu_state.clone();
    fulu_block_writes(&mut fulu_post, 1 << 40);
    fulu_post.tree_hash_root();
    let mut gloas_post = gloas_state.clone();
    gloas_block_writes(&mut gloas_post, 1 << 40);
    gloas_post.tree_hash_root();
    let fulu_pre = types::BeaconState::Fulu(fulu_state);
    let fulu_post = types::BeaconState::Fulu(fulu_post);
    let fulu_sizes = types::memory::differential_sizes([&fulu_pre, &fulu_post]);
    let gloas_sizes = types::memory::gloas_differential_sizes([&gloas_state, &gloas_post]);

    let mib = |bytes: usize| bytes as f64 / (1 << 20) as f64;
    println!();
    println!("Gloas against Fulu, {VALIDATORS} validators (medians of criterion's samples):");
    println!(
        "{:<28} {:>12} {:>12} {:>8}",
        "benchmark", "Fulu", "Gloas", "ratio"
    );
    for name in [
        "decode",
        "root_from_scratch",
        "block_root",
        "clone_and_block_writes",
    ] {
        let fulu = samples.median(&format!("{name}/fulu"));
        let gloas = samples.median(&format!("{name}/gloas"));
        println!(
            "{name:<28} {:>12} {:>12} {:>7.2}x",
            format!("{fulu:.2?}"),
            format!("{gloas:.2?}"),
            gloas.as_secs_f64() / fulu.as_secs_f64()
        );
    }
    println!(
        "{:<28} {:>10.1}Mi {:>10.1}Mi {:>7.2}x",
        "memory: state",
        mib(fulu_sizes[0]),
        mib(gloas_sizes[0]),
        gloas_sizes[0] as f64 / fulu_sizes[0] as f64
    );
    println!(
        "{:<28} {:>10.2}Mi {:>10.2}Mi {:>7.2}x",
        "memory: post-block clone",
        mib(fulu_sizes[1]),
        mib(gloas_sizes[1]),
        gloas_sizes[1] as f64 / fulu_sizes[1] as f64
    );
}

criterion_group!(gloas_benches, benches);
criterion_main!(gloas_benches);
