//! Gloas against Fulu, in one run, on the synthetic mainnet state with 1,000,000 validators
//! (`ARBOR_BENCH_VALIDATORS` changes the count): the Fulu state of the `stf` bench, and a copy
//! upgraded by `upgrade_to_gloas` (Gloas scheduled at the state's epoch).
//!
//! Both blocks carry the same operations, built by `state_harness` with real signatures: 8
//! aggregate attestations covering all 64 committees of the previous slot (since Electra a block
//! holds at most `MAX_ATTESTATIONS_ELECTRA` = 8 aggregates, each over many committees, so "128
//! attestations" cannot fit in one block; this is the same coverage), a full sync aggregate, 16
//! voluntary exits, a proposer and an attester slashing, 16 deposit, 16 withdrawal and 2
//! consolidation requests (in Gloas the parent payload's, in `parent_execution_requests`, the
//! parent bid committing to them). The Gloas block adds a self-build bid and 4 payload
//! attestations of the previous slot's PTC; the Fulu block has its execution payload.
//!
//! - `block_no_signatures/{fulu,gloas}`: `state_transition` (the slot and the block) with
//!   signatures off and without the state root;
//! - `signatures_batched/{fulu,gloas}`: gathering and verifying the block's signature sets in
//!   one batch (`BlockSignatureVerifier`; Gloas adds the payload attestations);
//! - `process_epoch/{fulu,gloas}`: epoch processing of the last slot of an epoch (Gloas: the
//!   builder pending payments and the PTC window included);
//! - `upgrade_to_gloas/10000_pending_deposits`: the upgrade of a Fulu state whose pending
//!   deposits are 10,000, 1 in 40 of them for new builders (`0xB0` credentials, real
//!   signatures: builder onboarding), a few builder top-ups and validator top-ups among them.
//!
//! At the end a table of the medians (from `target/criterion/<group>/<bench>/new/estimates.json`)
//! and the Gloas/Fulu ratios against the bounds (1.3× and 2 s) is printed, then the same
//! three ratios measured interleaved: `ARBOR_BENCH_PAIRS` (default 15) runs of each side,
//! alternating Fulu and Gloas (and which goes first), so that a machine whose load changes
//! during the run (criterion measures all of Fulu, then all of Gloas) weighs on both alike.
//!
//! `cargo bench -p state_processing --bench gloas_stf`

#![allow(
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use criterion::{BatchSize, Criterion, SamplingMode};
use rayon::prelude::*;
use ssz::Encode;
use state_harness::{
    AttestationSpec, BlockContents, DepositRequestSpec, GloasBlockContents, ParentPayload,
    SyncParticipation, build_block, build_gloas_block, gloas_parent_execution_requests,
    interop_secret_key,
    keys::interop_pubkeys_cached,
    synthetic::{SyntheticParams, address_of, build_state, warm_caches},
};
use state_processing::{
    CachedBeaconState, StateRef,
    common::get_pending_balance_to_withdraw,
    gloas::fork::upgrade_to_gloas,
    per_block::{AlwaysValid, BlockSignatureVerifier, VerifySignatures},
    per_epoch::process_epoch,
    per_slot::process_slots,
    state_transition::state_transition,
};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    BLSPubkey, BeaconState, ChainSpec, EthSpec, FAR_FUTURE_EPOCH, ForkName, MainnetEthSpec,
    SignedBeaconBlock,
    fulu::{DepositMessage, PendingDeposit},
    signing::{DOMAIN_DEPOSIT, compute_signing_root},
};

type E = MainnetEthSpec;

const GWEI_PER_ETH: u64 = 1_000_000_000;
/// Pending deposits of the upgrade's pre-state.
const UPGRADE_PENDING_DEPOSITS: u64 = 10_000;
/// One pending deposit in this many is for a new builder.
const BUILDER_EVERY: u64 = 40;
/// The bound on the Gloas/Fulu ratios.
const RATIO_BOUND: f64 = 1.3;
/// The bound on `upgrade_to_gloas`, in seconds.
const UPGRADE_BOUND_S: f64 = 2.0;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// One fork's side: its spec, its pre-state, its block, the pre-state at the block's slot, and
/// the pre-state moved to the last slot of its epoch.
struct Side {
    spec: ChainSpec,
    /// At the slot before the block, root cached, caches warm.
    pre: CachedBeaconState<E>,
    block: SignedBeaconBlock<E>,
    /// `pre` advanced to the block's slot (what the block's signatures are checked against).
    at_block_slot: CachedBeaconState<E>,
    /// `pre` moved to the last slot of its epoch, root cached.
    epoch_pre: CachedBeaconState<E>,
}

struct Fixture {
    validators: usize,
    fulu: Side,
    gloas: Side,
    /// The Fulu state with `UPGRADE_PENDING_DEPOSITS` pending deposits, root cached.
    upgrade_pre: types::fulu::BeaconState<E>,
    /// What the blocks' attestations cover, for the summary.
    attestation_note: String,
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

/// The operations both blocks carry (those of the `stf` bench's block).
fn block_contents(pre: &CachedBeaconState<E>, params: &SyntheticParams) -> BlockContents {
    let view = StateRef::new(&pre.state).unwrap();
    let mut taken = Vec::new();
    let exits = eligible(&view, 1_001, 16, &mut taken);
    let withdrawal_requests = eligible(&view, 500_003, 16, &mut taken);
    let switch = eligible(&view, 700_001, 1, &mut taken)[0];
    let target = (0..view.validators.len() as u64)
        .find(|&i| {
            let v = view.validators.get(i as usize).unwrap();
            v.withdrawal_credentials[0] == 0x02 && !v.slashed && v.exit_epoch == FAR_FUTURE_EPOCH
        })
        .expect("the synthetic state has compounding validators");
    let source = eligible(&view, 900_001, 1, &mut taken)[0];
    let slashed = eligible(&view, 300_007, 3, &mut taken);
    let first_new = view.validators.len() + view.pending_deposits.unwrap().len();
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
}

/// `state` moved to the last slot of its epoch, root cached.
fn at_end_of_epoch(state: &CachedBeaconState<E>) -> CachedBeaconState<E> {
    let mut out = state.clone();
    let last = |slot: u64| (slot / E::slots_per_epoch() + 1) * E::slots_per_epoch() - 1;
    match &mut out.state {
        BeaconState::Fulu(s) => s.slot = last(s.slot),
        BeaconState::Gloas(s) => s.slot = last(s.slot),
        other @ (BeaconState::Phase0(_)
        | BeaconState::Altair(_)
        | BeaconState::Bellatrix(_)
        | BeaconState::Capella(_)
        | BeaconState::Deneb(_)
        | BeaconState::Electra(_)) => panic!("a Fulu or Gloas state, not {}", other.fork_name()),
    }
    out.hash_tree_root().unwrap();
    out
}

fn advanced(state: &CachedBeaconState<E>, slot: u64, spec: &ChainSpec) -> CachedBeaconState<E> {
    let mut out = state.clone();
    process_slots(&mut out, slot, spec).unwrap();
    out.hash_tree_root().unwrap();
    out
}

/// 10,000 pending deposits, signed by fresh interop keys past the registry (and, for the
/// top-ups, by the validators' and builders' own keys): 1 in `BUILDER_EVERY` for a new builder
/// (`0xB0`), 1 in 400 a builder top-up, 1 in 10 a validator top-up, the rest new validators.
fn upgrade_deposits(n: u64, slot: u64, spec: &ChainSpec) -> Vec<PendingDeposit> {
    let domain = spec.compute_genesis_domain(DOMAIN_DEPOSIT);
    (0..UPGRADE_PENDING_DEPOSITS)
        .into_par_iter()
        .map(|k| {
            let (key_index, prefix, amount) = if k % BUILDER_EVERY == 0 {
                (n + k, 0xb0, 64 * GWEI_PER_ETH)
            } else if k % 400 == 20 {
                // A top-up of the builder deposited 20 before.
                (n + k - 20, 0xb0, GWEI_PER_ETH)
            } else if k % 10 == 5 {
                // A top-up of an existing validator.
                ((k * 97) % n, 0x01, GWEI_PER_ETH)
            } else {
                (n + k, 0x01, 32 * GWEI_PER_ETH)
            };
            let key = interop_secret_key(key_index as usize);
            let mut credentials = [0u8; 32];
            credentials[0] = prefix;
            credentials[12..].copy_from_slice(address_of(key_index).as_slice());
            let message = DepositMessage {
                pubkey: BLSPubkey::from(key.public_key().compress().0),
                withdrawal_credentials: credentials.into(),
                amount,
            };
            let signature = key.sign(compute_signing_root(&message, domain).as_slice());
            PendingDeposit {
                pubkey: message.pubkey,
                withdrawal_credentials: message.withdrawal_credentials,
                amount,
                signature: signature.serialize().into(),
                slot: slot - 4 * E::slots_per_epoch() - 64 + k / 64,
            }
        })
        .collect()
}

fn fixture() -> Fixture {
    let n: usize = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let fulu_spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);

    let start = Instant::now();
    let keys = interop_pubkeys_cached(n, &target_dir().join("state-harness-keys"))
        .expect("derive or read the interop public keys");
    eprintln!("{n} interop public keys in {:.2?}", start.elapsed());

    let start = Instant::now();
    let params = SyntheticParams::default();
    let fulu_state = build_state::<E>(&keys, &params, &fulu_spec).expect("the synthetic state");
    let mut fulu_pre = CachedBeaconState::new(BeaconState::Fulu(fulu_state.clone()));
    fulu_pre.hash_tree_root().unwrap();
    warm_caches(&mut fulu_pre).unwrap();
    fulu_pre.set_finalized().unwrap();
    eprintln!("synthetic Fulu state built in {:.2?}", start.elapsed());

    // Gloas scheduled at the state's epoch: the upgraded state is that fork's first epoch.
    let mut gloas_spec = fulu_spec.clone();
    gloas_spec.gloas_fork_epoch = params.slot / E::slots_per_epoch();
    let start = Instant::now();
    let gloas_state = upgrade_to_gloas(fulu_state, &gloas_spec).expect("upgrade_to_gloas");
    eprintln!("upgraded to Gloas in {:.2?}", start.elapsed());
    let mut gloas_pre =
        CachedBeaconState::with_caches_of(BeaconState::Gloas(gloas_state), &fulu_pre.caches);
    warm_caches(&mut gloas_pre).unwrap();

    let slot = params.slot + 1;
    let contents = block_contents(&fulu_pre, &params);

    // The parent bid commits to the requests the Gloas block carries for its parent's payload.
    let requests = gloas_parent_execution_requests(&gloas_pre, &contents, &gloas_spec).unwrap();
    if let BeaconState::Gloas(s) = &mut gloas_pre.state {
        s.latest_execution_payload_bid.execution_requests_root = requests.tree_hash_root();
    }
    gloas_pre.hash_tree_root().unwrap();

    let start = Instant::now();
    let fulu_block = build_block(&fulu_pre, slot, &contents, &fulu_spec)
        .expect("build the Fulu block")
        .block;
    eprintln!(
        "Fulu block at slot {slot} built in {:.2?}: {} bytes",
        start.elapsed(),
        fulu_block.as_ssz_bytes().len()
    );
    let start = Instant::now();
    let gloas_contents = GloasBlockContents {
        base: contents,
        payload_attestations: E::MAX_PAYLOAD_ATTESTATIONS as usize,
        parent_payload: ParentPayload::Full,
    };
    let gloas_block = build_gloas_block(&gloas_pre, slot, &gloas_contents, &gloas_spec)
        .expect("build the Gloas block")
        .block;
    let SignedBeaconBlock::Gloas(g) = &gloas_block else {
        panic!("a Gloas block");
    };
    let SignedBeaconBlock::Fulu(f) = &fulu_block else {
        panic!("a Fulu block");
    };
    eprintln!(
        "Gloas block at slot {slot} built in {:.2?}: {} bytes; attestations {} (Fulu {}), \
         {} attesters in each; {} payload attestations; {} parent deposit requests",
        start.elapsed(),
        gloas_block.as_ssz_bytes().len(),
        g.message.body.attestations.len(),
        f.message.body.attestations.len(),
        g.message.body.attestations[0]
            .aggregation_bits
            .num_set_bits(),
        g.message.body.payload_attestations.len(),
        g.message.body.parent_execution_requests.deposits.len(),
    );

    let committees: usize = g
        .message
        .body
        .attestations
        .iter()
        .map(|a| a.committee_bits.num_set_bits())
        .sum();
    let attestation_note = format!(
        "attestations: {} aggregates over {committees} committees of the previous slot in both \
         blocks (a block holds at most MAX_ATTESTATIONS_ELECTRA = {} aggregates); Gloas adds {} \
         payload attestations",
        g.message.body.attestations.len(),
        <E as EthSpec>::MaxAttestationsElectra::to_usize(),
        g.message.body.payload_attestations.len(),
    );
    eprintln!("{attestation_note}");

    let start = Instant::now();
    let mut upgrade_pre = match &fulu_pre.state {
        BeaconState::Fulu(s) => s.clone(),
        other @ (BeaconState::Phase0(_)
        | BeaconState::Altair(_)
        | BeaconState::Bellatrix(_)
        | BeaconState::Capella(_)
        | BeaconState::Deneb(_)
        | BeaconState::Electra(_)
        | BeaconState::Gloas(_)) => panic!("the Fulu side, not {}", other.fork_name()),
    };
    upgrade_pre.pending_deposits =
        milhouse::List::new(upgrade_deposits(n as u64, params.slot, &fulu_spec)).unwrap();
    upgrade_pre.tree_hash_root();
    eprintln!(
        "{UPGRADE_PENDING_DEPOSITS} pending deposits signed in {:.2?}",
        start.elapsed()
    );
    // Once, to check that builders are onboarded.
    let start = Instant::now();
    let upgraded = upgrade_to_gloas(upgrade_pre.clone(), &gloas_spec).unwrap();
    eprintln!(
        "upgrade_to_gloas with {UPGRADE_PENDING_DEPOSITS} pending deposits in {:.2?}: {} builders \
         onboarded, {} deposits left pending",
        start.elapsed(),
        upgraded.builders.len(),
        upgraded.pending_deposits.len()
    );
    assert_eq!(
        upgraded.builders.len() as u64,
        UPGRADE_PENDING_DEPOSITS / BUILDER_EVERY,
        "every builder deposit onboards a builder"
    );
    drop(upgraded);

    let fulu = Side {
        at_block_slot: advanced(&fulu_pre, slot, &fulu_spec),
        epoch_pre: at_end_of_epoch(&fulu_pre),
        spec: fulu_spec,
        pre: fulu_pre,
        block: fulu_block,
    };
    let gloas = Side {
        at_block_slot: advanced(&gloas_pre, slot, &gloas_spec),
        epoch_pre: at_end_of_epoch(&gloas_pre),
        spec: gloas_spec,
        pre: gloas_pre,
        block: gloas_block,
    };
    Fixture {
        validators: n,
        fulu,
        gloas,
        upgrade_pre,
        attestation_note,
    }
}

fn transition(state: &mut CachedBeaconState<E>, side: &Side) {
    state_transition(
        state,
        &side.block,
        VerifySignatures::None,
        false,
        &AlwaysValid,
        &side.spec,
    )
    .expect("the benchmark block is valid");
}

/// Gathers the block's signature sets (the proposal's and the body's) and verifies them in one
/// batch, against the state at the block's slot.
fn signatures(mut state: CachedBeaconState<E>, side: &Side) -> CachedBeaconState<E> {
    let CachedBeaconState { state: raw, caches } = &mut state;
    let view = StateRef::new(raw).unwrap();
    let mut verifier = BlockSignatureVerifier::new();
    match &side.block {
        SignedBeaconBlock::Fulu(b) => {
            verifier
                .include_block_proposal(
                    &view,
                    caches,
                    b.message.proposer_index,
                    b.message.tree_hash_root(),
                    &b.signature,
                )
                .unwrap();
            verifier
                .include_body(&view, caches, &b.message, &side.spec)
                .unwrap();
        }
        SignedBeaconBlock::Gloas(b) => {
            verifier
                .include_block_proposal(
                    &view,
                    caches,
                    b.message.proposer_index,
                    b.message.tree_hash_root(),
                    &b.signature,
                )
                .unwrap();
            verifier
                .include_gloas_body(&view, caches, &b.message, &side.spec)
                .unwrap();
        }
        other @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Electra(_)) => {
            panic!("a Fulu or Gloas block, not {}", other.fork_name())
        }
    }
    black_box(verifier.len());
    verifier
        .verify()
        .expect("the benchmark block's signatures verify");
    state
}

fn sides(f: &Fixture) -> [(&'static str, &Side); 2] {
    [("fulu", &f.fulu), ("gloas", &f.gloas)]
}

fn block_benches(c: &mut Criterion, f: &Fixture) {
    let mut group = c.benchmark_group("block_no_signatures");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    for (name, side) in sides(f) {
        group.bench_function(name, |b| {
            b.iter_batched(
                || side.pre.clone(),
                |mut state| {
                    transition(&mut state, side);
                    state
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();

    let mut group = c.benchmark_group("signatures_batched");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    for (name, side) in sides(f) {
        group.bench_function(name, |b| {
            b.iter_batched(
                || side.at_block_slot.clone(),
                |state| signatures(state, side),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn epoch_benches(c: &mut Criterion, f: &Fixture) {
    let mut group = c.benchmark_group("process_epoch");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(15));
    for (name, side) in sides(f) {
        group.bench_function(name, |b| {
            b.iter_batched(
                || side.epoch_pre.clone(),
                |mut state| {
                    {
                        let (mut view, caches) = state.view_mut().unwrap();
                        process_epoch(&mut view, caches, &side.spec)
                            .expect("epoch processing succeeds");
                    }
                    state
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn upgrade_benches(c: &mut Criterion, f: &Fixture) {
    let mut group = c.benchmark_group("upgrade_to_gloas");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(15));
    group.bench_function(
        format!("{UPGRADE_PENDING_DEPOSITS}_pending_deposits"),
        |b| {
            b.iter_batched(
                || f.upgrade_pre.clone(),
                |pre| upgrade_to_gloas(pre, &f.gloas.spec).expect("upgrade_to_gloas succeeds"),
                BatchSize::PerIteration,
            )
        },
    );
    group.finish();
}

/// The median of `<group>/<bench>` in this run, in milliseconds, from criterion's
/// `new/estimates.json` (`None` when the bench did not run this time).
fn median_ms(group: &str, bench: &str, since: SystemTime) -> Option<f64> {
    let home = std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("criterion"));
    let path = home.join(group).join(bench).join("new/estimates.json");
    if std::fs::metadata(&path).ok()?.modified().ok()? < since {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let median = &text[text.find("\"median\"")?..];
    let value = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = value.find([',', '}'])?;
    value[..end].trim().parse::<f64>().ok().map(|ns| ns / 1e6)
}

fn summary(f: &Fixture, since: SystemTime) {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
    println!(
        "\nGloas against Fulu, {} validators, medians of this run (ms):",
        f.validators
    );
    println!("({})", f.attestation_note);
    println!(
        "{:<24} {:>10} {:>10} {:>8} {:>8} {:>6}",
        "", "Fulu", "Gloas", "ratio", "bound", "ok"
    );
    for group in ["block_no_signatures", "signatures_batched", "process_epoch"] {
        let fulu = median_ms(group, "fulu", since);
        let gloas = median_ms(group, "gloas", since);
        let ratio = fulu.zip(gloas).map(|(f, g)| g / f);
        println!(
            "{group:<24} {:>10} {:>10} {:>8} {:>7.1}x {:>6}",
            ms(fulu),
            ms(gloas),
            ratio.map_or_else(|| "-".to_string(), |r| format!("{r:.2}x")),
            RATIO_BOUND,
            ratio.map_or("-", |r| if r <= RATIO_BOUND { "yes" } else { "NO" }),
        );
    }
    let upgrade = median_ms(
        "upgrade_to_gloas",
        &format!("{UPGRADE_PENDING_DEPOSITS}_pending_deposits"),
        since,
    );
    println!(
        "{:<24} {:>10} {:>10} {:>8} {:>7.1}s {:>6}",
        "upgrade_to_gloas",
        "",
        ms(upgrade),
        "",
        UPGRADE_BOUND_S,
        upgrade.map_or("-", |u| if u <= UPGRADE_BOUND_S * 1e3 {
            "yes"
        } else {
            "NO"
        }),
    );
    println!(
        "(upgrade_to_gloas: {UPGRADE_PENDING_DEPOSITS} pending deposits, {} for new builders)",
        UPGRADE_PENDING_DEPOSITS / BUILDER_EVERY
    );
}

/// `pairs` runs of `fulu` and of `gloas`, alternating (Fulu first in even pairs, Gloas first in
/// odd ones): the medians of each side (ms) and the median of the pairs' Gloas/Fulu ratios.
fn interleaved(
    pairs: usize,
    mut fulu: impl FnMut() -> Duration,
    mut gloas: impl FnMut() -> Duration,
) -> (f64, f64, f64) {
    let mut f = Vec::with_capacity(pairs);
    let mut g = Vec::with_capacity(pairs);
    for pair in 0..pairs {
        let (a, b) = if pair % 2 == 0 {
            let a = fulu();
            (a, gloas())
        } else {
            let b = gloas();
            (fulu(), b)
        };
        f.push(a.as_secs_f64() * 1e3);
        g.push(b.as_secs_f64() * 1e3);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut ratios: Vec<f64> = f.iter().zip(&g).map(|(f, g)| g / f).collect();
    (median(&mut f), median(&mut g), median(&mut ratios))
}

/// One timed run of a measure on one side.
type Run = dyn Fn(&Side) -> Duration;

fn interleaved_summary(f: &Fixture) {
    let pairs: usize = std::env::var("ARBOR_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15)
        .max(1);
    let block = |side: &Side| {
        let mut state = side.pre.clone();
        let start = Instant::now();
        transition(&mut state, side);
        let elapsed = start.elapsed();
        drop(black_box(state));
        elapsed
    };
    let sigs = |side: &Side| {
        let state = side.at_block_slot.clone();
        let start = Instant::now();
        let state = signatures(state, side);
        let elapsed = start.elapsed();
        drop(black_box(state));
        elapsed
    };
    let epoch = |side: &Side| {
        let mut state = side.epoch_pre.clone();
        let start = Instant::now();
        {
            let (mut view, caches) = state.view_mut().unwrap();
            process_epoch(&mut view, caches, &side.spec).expect("epoch processing succeeds");
        }
        let elapsed = start.elapsed();
        drop(black_box(state));
        elapsed
    };
    println!(
        "\nthe same, interleaved: {pairs} runs of each, Fulu and Gloas alternating (ms; ratio: \
         the median of the pairs' ratios):"
    );
    println!(
        "{:<24} {:>10} {:>10} {:>8} {:>8} {:>6}",
        "", "Fulu", "Gloas", "ratio", "bound", "ok"
    );
    let rows: [(&str, &Run); 3] = [
        ("block_no_signatures", &block),
        ("signatures_batched", &sigs),
        ("process_epoch", &epoch),
    ];
    for (name, run) in rows {
        let (fulu, gloas, ratio) = interleaved(pairs, || run(&f.fulu), || run(&f.gloas));
        println!(
            "{name:<24} {fulu:>10.2} {gloas:>10.2} {:>8} {RATIO_BOUND:>7.1}x {:>6}",
            format!("{ratio:.2}x"),
            if ratio <= RATIO_BOUND { "yes" } else { "NO" },
        );
    }
}

fn main() {
    // The transition's parallel sections run on the pool of the thread that calls it (in the
    // node, the beacon processor's main pool): the whole run is on a pool of one thread per
    // core, as that pool is by default.
    rayon::ThreadPoolBuilder::new()
        .num_threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .thread_name(|i| format!("bench-{i}"))
        .build()
        .unwrap()
        .install(|| {
            let fixture = fixture();
            let since = SystemTime::now();
            let mut c = Criterion::default().configure_from_args();
            block_benches(&mut c, &fixture);
            epoch_benches(&mut c, &fixture);
            upgrade_benches(&mut c, &fixture);
            c.final_summary();
            summary(&fixture, since);
            interleaved_summary(&fixture);
        })
}
