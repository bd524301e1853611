//! State-transition benchmarks on a synthetic mainnet Fulu state with 1,000,000 validators
//! (`ARBOR_BENCH_VALIDATORS` changes the count).
//!
//! The state's public keys are the interop keys `0..n` (derived once and kept in
//! `target/state-harness-keys`); the block is built by `state_harness` with real signatures, its
//! aggregates signed with the sum of the signers' secret keys.
//!
//! - `block/stf_no_signatures`: `state_transition` of a full block (8 attestations covering all
//!   64 committees of the previous slot, a full sync aggregate, 16 deposit requests, 16 voluntary
//!   exits, 16 withdrawal requests, 2 consolidation requests, the payload's withdrawals, a
//!   proposer and an attester slashing) with signatures off and without the state root;
//! - `block/post_block_state_root`: the post-state root alone (pre-state root cached);
//! - `block/stf_and_state_root`: the two together;
//! - `block/signatures_batched`: gathering and verifying the block's signature sets in one
//!   batch (public keys decompressed once and cached, as a node does);
//! - `block/stf_signatures_batched_and_state_root`: the whole check of a gossip block, the
//!   batch verified on the pool beside the transition and the state root (against the sum of
//!   `stf_and_state_root` and `signatures_batched` when run one after the other);
//! - `pulled_up_tip/registry_walk` and `pulled_up_tip/progressive_balances`: fork choice's
//!   `compute_pulled_up_tip` on the block's post-state, by the spec's walk of the registry and
//!   by the target balances the caches keep block by block;
//! - `epoch/process_epoch`: epoch processing of the last slot of an epoch;
//! - `epoch/process_slots_across_boundary`: `process_slots` from that slot into the next epoch
//!   (the slot's root, epoch processing and the Fulu lookahead);
//! - `epoch/state_root_after_epoch`: the state root after epoch processing.
//!
//! With `ARBOR_BENCH_ORACLE=1` the same pre-states and block then go through the Lodestar oracle
//! (`stf.mjs --repeat`, installed by `make oracle`) and a side-by-side table is printed.
//!
//! Everything runs on a rayon pool of one thread per core (`bench_pool`): the transition's
//! parallel sections use the pool of their caller, and run sequentially off one.
//!
//! `cargo bench -p state_processing --bench stf`

#![allow(
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, SamplingMode};
use ssz::Encode;
use state_harness::{
    AttestationSpec, BlockContents, DepositRequestSpec, SyncParticipation, build_block,
    keys::interop_pubkeys_cached,
    oracle::{Oracle, OracleOutcome},
    synthetic::{SyntheticParams, address_of, build_state, warm_caches},
};
use state_processing::{
    CachedBeaconState, StateRef,
    common::get_pending_balance_to_withdraw,
    per_block::{AlwaysValid, BlockSignatureVerifier, VerifySignatures},
    per_epoch::{
        process_epoch, process_justification_and_finalization,
        process_justification_and_finalization_progressive,
    },
    per_slot::process_slots,
    state_transition::state_transition,
};
use tree_hash::TreeHash;
use types::{
    BeaconState, ChainSpec, EthSpec, FAR_FUTURE_EPOCH, ForkName, MainnetEthSpec, SignedBeaconBlock,
};

type E = MainnetEthSpec;

const GWEI_PER_ETH: u64 = 1_000_000_000;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

struct Fixture {
    spec: ChainSpec,
    /// At the slot before the block, root cached, caches warm.
    pre: CachedBeaconState<E>,
    block: SignedBeaconBlock<E>,
    /// `pre` advanced to the block's slot (what the block's signatures are checked against).
    at_block_slot: CachedBeaconState<E>,
    /// `pre` moved to the last slot of its epoch, root cached.
    epoch_pre: CachedBeaconState<E>,
}

/// Validators that may exit or ask for withdrawals: active, not slashed, not exiting, `0x01`,
/// with nothing pending to withdraw.
fn eligible(state: &StateRef<'_, E>, from: u64, count: usize, taken: &mut Vec<u64>) -> Vec<u64> {
    let mut out = Vec::new();
    let n = state.validators.len() as u64;
    let mut i = from % n;
    while out.len() < count {
        let v = state
            .validators
            .get(i as usize)
            .expect("index below the length");
        if !v.slashed
            && v.exit_epoch == FAR_FUTURE_EPOCH
            && v.withdrawal_credentials[0] == 0x01
            && get_pending_balance_to_withdraw(state, i) == Ok(0)
            && !taken.contains(&i)
        {
            out.push(i);
            taken.push(i);
        }
        i = (i + 7_717) % n;
    }
    out
}

fn fixture() -> Fixture {
    let n: usize = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);

    let start = Instant::now();
    let keys = interop_pubkeys_cached(n, &target_dir().join("state-harness-keys"))
        .expect("derive or read the interop public keys");
    eprintln!("{n} interop public keys in {:.2?}", start.elapsed());

    let start = Instant::now();
    let params = SyntheticParams::default();
    let state = build_state::<E>(&keys, &params, &spec).expect("build the synthetic state");
    let mut pre = CachedBeaconState::new(BeaconState::Fulu(state));
    let root = pre.hash_tree_root().unwrap();
    eprintln!(
        "synthetic state built and hashed in {:.2?}: root {root}",
        start.elapsed()
    );

    // Warm the caches a node keeps for its head state.
    warm_caches(&mut pre).unwrap();
    // A node's anchor is finalized: its registry's keys are the shared cache's trusted prefix.
    pre.set_finalized().unwrap();

    let slot = params.slot + 1;
    let contents = {
        let view = StateRef::new(&pre.state).unwrap();
        let mut taken = Vec::new();
        let exits = eligible(&view, 1_001, 16, &mut taken);
        let withdrawal_requests = eligible(&view, 500_003, 16, &mut taken);
        let switch = eligible(&view, 700_001, 1, &mut taken)[0];
        // A compounding target and an `0x01` source for a real consolidation.
        let target = (0..view.validators.len() as u64)
            .find(|&i| {
                let v = view.validators.get(i as usize).unwrap();
                v.withdrawal_credentials[0] == 0x02
                    && !v.slashed
                    && v.exit_epoch == FAR_FUTURE_EPOCH
            })
            .expect("the synthetic state has compounding validators");
        let source = eligible(&view, 900_001, 1, &mut taken)[0];
        let slashed = eligible(&view, 300_007, 3, &mut taken);
        let first_new = view.validators.len()
            + view
                .pending_deposits
                .expect("the synthetic state is an Electra state")
                .len();
        BlockContents {
            attestations: AttestationSpec::slot_in_parts(params.slot, 8),
            sync_aggregate: SyncParticipation::Full,
            proposer_slashings: vec![slashed[0]],
            attester_slashings: vec![vec![slashed[1], slashed[2]]],
            voluntary_exits: exits,
            deposit_requests: (0..16)
                .map(|k| {
                    let key = first_new + k;
                    DepositRequestSpec::new_validator(
                        key,
                        32 * GWEI_PER_ETH,
                        address_of(key as u64),
                        false,
                    )
                })
                .collect(),
            withdrawal_requests: withdrawal_requests.into_iter().map(|i| (i, 0)).collect(),
            consolidation_requests: vec![(switch, switch), (source, target)],
            ..BlockContents::default()
        }
    };
    let start = Instant::now();
    let built = build_block(&pre, slot, &contents, &spec).expect("build the benchmark block");
    let SignedBeaconBlock::Fulu(fulu_block) = &built.block else {
        panic!("the benchmark builds a Fulu block");
    };
    eprintln!(
        "block at slot {slot} built in {:.2?}: {} attestations, {} withdrawals, {} bytes",
        start.elapsed(),
        fulu_block.message.body.attestations.len(),
        fulu_block.message.body.execution_payload.withdrawals.len(),
        built.block.as_ssz_bytes().len()
    );

    let mut at_block_slot = pre.clone();
    process_slots(&mut at_block_slot, slot, &spec).unwrap();
    at_block_slot.hash_tree_root().unwrap();

    let mut epoch_pre = pre.clone();
    if let BeaconState::Fulu(s) = &mut epoch_pre.state {
        s.slot = (s.slot / E::slots_per_epoch() + 1) * E::slots_per_epoch() - 1;
    }
    epoch_pre.hash_tree_root().unwrap();

    Fixture {
        spec,
        pre,
        block: built.block,
        at_block_slot,
        epoch_pre,
    }
}

fn block_benches(c: &mut Criterion, f: &Fixture) {
    let mut group = c.benchmark_group("block");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));

    let stf = |state: &mut CachedBeaconState<E>| {
        state_transition(
            state,
            &f.block,
            VerifySignatures::None,
            false,
            &AlwaysValid,
            &f.spec,
        )
        .expect("the benchmark block is valid")
    };
    group.bench_function("stf_no_signatures", |b| {
        b.iter_batched(
            || f.pre.clone(),
            |mut state| {
                stf(&mut state);
                state
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("post_block_state_root", |b| {
        b.iter_batched(
            || {
                let mut state = f.pre.clone();
                stf(&mut state);
                state.apply_updates().unwrap();
                state
            },
            |state| (state.state.tree_hash_root(), state),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("stf_and_state_root", |b| {
        b.iter_batched(
            || f.pre.clone(),
            |mut state| {
                state_transition(
                    &mut state,
                    &f.block,
                    VerifySignatures::None,
                    true,
                    &AlwaysValid,
                    &f.spec,
                )
                .expect("the benchmark block is valid, its state root included");
                state
            },
            BatchSize::PerIteration,
        )
    });
    // What a node runs on a gossip block: the transition with its signatures batched (the
    // batch verified beside the transition and the root) and the state root checked.
    group.bench_function("stf_signatures_batched_and_state_root", |b| {
        b.iter_batched(
            || f.pre.clone(),
            |mut state| {
                state_transition(
                    &mut state,
                    &f.block,
                    VerifySignatures::Batched,
                    true,
                    &AlwaysValid,
                    &f.spec,
                )
                .expect("the benchmark block is valid, its signatures and state root included");
                state
            },
            BatchSize::PerIteration,
        )
    });
    let SignedBeaconBlock::Fulu(signed) = &f.block else {
        panic!("a Fulu block")
    };
    let signatures = |mut state: CachedBeaconState<E>| {
        let CachedBeaconState { state: raw, caches } = &mut state;
        let view = StateRef::new(raw).unwrap();
        let mut verifier = BlockSignatureVerifier::new();
        verifier
            .include_block_proposal(
                &view,
                caches,
                signed.message.proposer_index,
                signed.message.tree_hash_root(),
                &signed.signature,
            )
            .unwrap();
        verifier
            .include_body(&view, caches, &signed.message, &f.spec)
            .unwrap();
        black_box(verifier.len());
        verifier
            .verify()
            .expect("the benchmark block's signatures verify");
        state
    };
    group.bench_function("signatures_batched", |b| {
        b.iter_batched(
            || f.at_block_slot.clone(),
            signatures,
            BatchSize::PerIteration,
        )
    });
    // The same with a public-key cache that knows no finalized state, so that every key is
    // checked against the state's registry (a million-leaf tree read per attester): what the
    // row above cost before the finalized prefix. Warmed by one run first.
    let keys_from_state = {
        let mut state = CachedBeaconState::new(f.at_block_slot.state.clone());
        warm_caches(&mut state).unwrap();
        signatures(state.clone());
        state
    };
    group.bench_function("signatures_batched_keys_read_from_state_baseline", |b| {
        b.iter_batched(
            || keys_from_state.clone(),
            signatures,
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// Fork choice's `compute_pulled_up_tip` on the block's post-state: the spec's
/// `process_justification_and_finalization` (a walk of the registry and both participation
/// lists) against the same step weighing the target balances the caches keep block by block.
fn pulled_up_tip_benches(c: &mut Criterion, f: &Fixture) {
    let mut post = f.pre.clone();
    state_transition(
        &mut post,
        &f.block,
        VerifySignatures::None,
        false,
        &AlwaysValid,
        &f.spec,
    )
    .expect("the benchmark block is valid");
    post.progressive_balances().unwrap();
    let mut group = c.benchmark_group("pulled_up_tip");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));
    group.bench_function("registry_walk", |b| {
        b.iter_batched(
            || post.clone(),
            |mut state| {
                let (mut view, _) = state.view_mut().unwrap();
                process_justification_and_finalization(&mut view, &f.spec).unwrap();
                state
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("progressive_balances", |b| {
        b.iter_batched(
            || post.clone(),
            |mut state| {
                process_justification_and_finalization_progressive(&mut state).unwrap();
                state
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn epoch_benches(c: &mut Criterion, f: &Fixture) {
    let mut group = c.benchmark_group("epoch");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(15));
    group.bench_function("process_epoch", |b| {
        b.iter_batched(
            || f.epoch_pre.clone(),
            |mut state| {
                {
                    let (mut view, caches) = state.view_mut().unwrap();
                    process_epoch(&mut view, caches, &f.spec).expect("epoch processing succeeds");
                }
                state
            },
            BatchSize::PerIteration,
        )
    });
    let next = *f.epoch_pre.state.slot() + 1;
    group.bench_function("process_slots_across_boundary", |b| {
        b.iter_batched(
            || f.epoch_pre.clone(),
            |mut state| {
                process_slots(&mut state, next, &f.spec).expect("process_slots succeeds");
                state
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("state_root_after_epoch", |b| {
        b.iter_batched(
            || {
                let mut state = f.epoch_pre.clone();
                process_slots(&mut state, next, &f.spec).unwrap();
                state.apply_updates().unwrap();
                state
            },
            |state| (state.state.tree_hash_root(), state),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// Medians of `runs` runs of `f` in milliseconds.
fn median_ms(runs: usize, mut f: impl FnMut() -> Duration) -> f64 {
    let mut times: Vec<f64> = (0..runs).map(|_| f().as_secs_f64() * 1e3).collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The same inputs through the Lodestar oracle, beside Arbor's medians.
fn oracle_side_by_side(f: &Fixture) {
    let oracle = match Oracle::locate("mainnet") {
        Ok(o) => o,
        Err(e) => {
            eprintln!("oracle comparison skipped: {e}");
            return;
        }
    };
    let repeat: u32 = std::env::var("ARBOR_ORACLE_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let dir = target_dir().join("oracle-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let write_state = |name: &str, state: &CachedBeaconState<E>| {
        let mut state = state.clone();
        state.apply_updates().unwrap();
        let path = dir.join(name);
        std::fs::write(&path, state.state.as_ssz_bytes()).unwrap();
        path
    };
    let pre_path = write_state("pre.ssz", &f.pre);
    let epoch_path = write_state("epoch_pre.ssz", &f.epoch_pre);
    let block_path = dir.join("block.ssz");
    std::fs::write(&block_path, f.block.as_ssz_bytes()).unwrap();

    let runs = repeat as usize;
    let arbor_stf = median_ms(runs, || {
        let mut state = f.pre.clone();
        let t = Instant::now();
        state_transition(
            &mut state,
            &f.block,
            VerifySignatures::None,
            false,
            &AlwaysValid,
            &f.spec,
        )
        .unwrap();
        t.elapsed()
    });
    let arbor_root = median_ms(runs, || {
        let mut state = f.pre.clone();
        state_transition(
            &mut state,
            &f.block,
            VerifySignatures::None,
            false,
            &AlwaysValid,
            &f.spec,
        )
        .unwrap();
        state.apply_updates().unwrap();
        let t = Instant::now();
        black_box(state.state.tree_hash_root());
        t.elapsed()
    });
    let next = *f.epoch_pre.state.slot() + 1;
    let arbor_slots = median_ms(runs, || {
        let mut state = f.epoch_pre.clone();
        let t = Instant::now();
        process_slots(&mut state, next, &f.spec).unwrap();
        t.elapsed()
    });
    let arbor_epoch_root = median_ms(runs, || {
        let mut state = f.epoch_pre.clone();
        process_slots(&mut state, next, &f.spec).unwrap();
        state.apply_updates().unwrap();
        let t = Instant::now();
        black_box(state.state.tree_hash_root());
        t.elapsed()
    });

    let summary = |outcome: OracleOutcome, what: &str| -> Option<(f64, f64, String)> {
        match outcome {
            OracleOutcome::Accepted { summary, steps } => Some((
                summary["ms_transition"].as_f64().unwrap_or(f64::NAN),
                summary["ms_hash_tree_root"].as_f64().unwrap_or(f64::NAN),
                steps
                    .first()
                    .map(|s| s.post_state_root.to_string())
                    .unwrap_or_default(),
            )),
            OracleOutcome::Rejected { error, stage, .. } => {
                eprintln!("oracle rejected the {what} at {stage}: {error}");
                None
            }
        }
    };
    let start = Instant::now();
    let block_run = oracle
        .run(
            &pre_path,
            std::slice::from_ref(&block_path),
            None,
            false,
            repeat,
            None,
        )
        .map_err(|e| eprintln!("oracle: {e}"))
        .ok()
        .and_then(|o| summary(o, "block"));
    eprintln!("oracle block runs took {:.1?}", start.elapsed());
    let start = Instant::now();
    let slots_run = oracle
        .run(&epoch_path, &[], Some(next), false, repeat, None)
        .map_err(|e| eprintln!("oracle: {e}"))
        .ok()
        .and_then(|o| summary(o, "epoch"));
    eprintln!("oracle epoch runs took {:.1?}", start.elapsed());

    let mut arbor_post = f.pre.clone();
    state_transition(
        &mut arbor_post,
        &f.block,
        VerifySignatures::None,
        false,
        &AlwaysValid,
        &f.spec,
    )
    .unwrap();
    let arbor_block_root = arbor_post.hash_tree_root().unwrap().to_string();
    let mut arbor_epoch = f.epoch_pre.clone();
    process_slots(&mut arbor_epoch, next, &f.spec).unwrap();
    let arbor_epoch_root_value = arbor_epoch.hash_tree_root().unwrap().to_string();

    println!("\nside by side, medians of {repeat} runs (ms), signatures off:");
    println!(
        "{:<44} {:>10} {:>10} {:>8}",
        "", "Arbor", "Lodestar", "ratio"
    );
    let row = |name: &str, arbor: f64, lodestar: Option<f64>| match lodestar {
        Some(l) => println!("{name:<44} {arbor:>10.2} {l:>10.2} {:>7.1}x", l / arbor),
        None => println!("{name:<44} {arbor:>10.2} {:>10} {:>8}", "-", "-"),
    };
    row(
        "block: state_transition (slot + block)",
        arbor_stf,
        block_run.as_ref().map(|r| r.0),
    );
    row(
        "block: post-state hash_tree_root",
        arbor_root,
        block_run.as_ref().map(|r| r.1),
    );
    row(
        "epoch: process_slots across the boundary",
        arbor_slots,
        slots_run.as_ref().map(|r| r.0),
    );
    row(
        "epoch: post-state hash_tree_root",
        arbor_epoch_root,
        slots_run.as_ref().map(|r| r.1),
    );
    if let Some((_, _, root)) = &block_run {
        println!(
            "post-block root: Arbor {arbor_block_root}, Lodestar {root} ({})",
            if *root == arbor_block_root {
                "equal"
            } else {
                "DIFFERENT"
            }
        );
    }
    if let Some((_, _, root)) = &slots_run {
        println!(
            "post-epoch root: Arbor {arbor_epoch_root_value}, Lodestar {root} ({})",
            if *root == arbor_epoch_root_value {
                "equal"
            } else {
                "DIFFERENT"
            }
        );
    }
}

fn main() {
    // The transition's parallel sections run on the pool of the thread that calls it (in the
    // node, the beacon processor's main pool): the whole run is on a pool of one thread per
    // core, as that pool is by default.
    bench_pool().install(|| {
        let fixture = fixture();
        let mut c = Criterion::default().configure_from_args();
        block_benches(&mut c, &fixture);
        pulled_up_tip_benches(&mut c, &fixture);
        epoch_benches(&mut c, &fixture);
        c.final_summary();
        if std::env::var_os("ARBOR_BENCH_ORACLE").is_some() {
            oracle_side_by_side(&fixture);
        }
    })
}

/// A rayon pool of one thread per core, to run the benchmarks on.
fn bench_pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .thread_name(|i| format!("bench-{i}"))
        .build()
        .unwrap()
}
