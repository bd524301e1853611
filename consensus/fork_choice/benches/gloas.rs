//! The Gloas fork choice's weights at mainnet scale: 1,000,000 validators' latest messages over
//! a 64-block tree of Gloas nodes (PENDING, EMPTY, FULL per block).
//!
//! - `gloas_weights/one_slot_changed`: one slot of changed votes (31,250 validators, spread
//!   over the registry as a shuffled committee's, moving to the newest block's FULL node), their
//!   node deltas (`GloasVotes::compute_deltas`) and the weights (`NodeTree::apply_deltas`):
//!   the part of `get_head` that grows with the registry.
//! - `gloas_votes/one_slot`: the latest-message updates of one slot of attestations.
//! - `gloas_get_head/one_slot_changed`: a full `GloasForkChoice::get_head` (the deltas and
//!   weights above, the viability filter `get_filtered_node_tree` over every node, and the
//!   walk from the justified checkpoint with `get_weight` and the payload tiebreaker) after one
//!   slot of changed votes (the same 31,250 validators, alternating between the newest
//!   block's FULL and EMPTY nodes), on a store built from block summaries (mainnet preset,
//!   every payload verified). The vote updates are untimed. Compare with the Fulu
//!   `get_head/one_slot_changed` (benches/fork_choice.rs), run back to back.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use fork_choice::JustifiedBalances;
use fork_choice::gloas::{
    GloasArrival, GloasBlockSummary, GloasForkChoice, GloasVotes, LatestMessage, NodeTree,
    PayloadStatus,
};
use rustc_hash::FxHashSet;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use types::gloas::AttestationData;
use types::phase0::{Checkpoint, Validator};
use types::{ChainSpec, EthSpec, ForkName, MainnetEthSpec, Root};

const VALIDATORS: usize = 1_000_000;
const BLOCKS: usize = 64;
const VOTES_PER_SLOT: usize = VALIDATORS / 32;
const BALANCE: u64 = 32_000_000_000;

/// The `n`th of a slot's attesters: spread over the whole registry in no order.
fn attester(n: usize) -> usize {
    n * 611_953 % VALIDATORS
}

fn root(i: usize) -> Root {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
    Root::from(bytes)
}

/// A 64-block tree: a main chain alternating FULL and EMPTY parents, a fork every 4th block.
/// Block `i`'s PENDING node is `3 * i`.
fn tree() -> NodeTree {
    let mut tree = NodeTree::default();
    for i in 0..BLOCKS {
        let parent = match i {
            0 => None,
            i if i % 4 == 3 => Some(3 * (i - 2) + 1),
            i => Some(3 * (i - 1) + 1 + i % 2),
        };
        let pending = tree.push(root(i), PayloadStatus::Pending, parent);
        tree.push(root(i), PayloadStatus::Empty, Some(pending));
        tree.push(root(i), PayloadStatus::Full, Some(pending));
    }
    tree
}

fn message(block: usize, slot: u64, payload_present: bool) -> LatestMessage {
    LatestMessage {
        slot,
        root: root(block),
        payload_present,
        block_slot: block as u64,
        pending: 3 * block as u32,
    }
}

/// The tree with every validator's vote counted, nothing queued.
fn voted() -> (NodeTree, GloasVotes, Vec<u64>) {
    let mut tree = tree();
    let mut votes = GloasVotes::default();
    let balances = vec![BALANCE; VALIDATORS];
    for v in 0..VALIDATORS {
        let block = v * 7919 % BLOCKS;
        votes
            .process_attestation(v as u64, &message(block, BLOCKS as u64, v % 2 == 0))
            .expect("index fits");
    }
    let mut deltas = votes
        .compute_deltas(tree.len(), &balances, &FxHashSet::default())
        .expect("nodes in range");
    tree.apply_deltas(&mut deltas).expect("positive weights");
    (tree, votes, balances)
}

/// The block hash of block `i`'s bid.
fn block_hash(i: usize) -> Root {
    let mut bytes = [0xffu8; 32];
    bytes[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
    Root::from(bytes)
}

/// A [`GloasForkChoice`] of the blocks of [`tree`] (block `i` at slot `i`), every payload
/// verified, with every validator's vote as in [`voted`] and its weights counted.
fn store() -> GloasForkChoice<MainnetEthSpec> {
    type E = MainnetEthSpec;
    let spec = Arc::new(ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Gloas));
    let genesis = Checkpoint {
        epoch: 0,
        root: root(0),
    };
    let ptc: Vec<u64> = (0..<<E as EthSpec>::PtcSize as types::typenum::Unsigned>::U64).collect();
    let summary = |i: usize, parent: usize, on_full: bool| GloasBlockSummary {
        root: root(i),
        parent_root: root(parent),
        slot: i as u64,
        proposer_index: i as u64,
        bid_block_hash: block_hash(i),
        bid_parent_block_hash: if on_full {
            block_hash(parent)
        } else {
            Root::ZERO
        },
        justified: genesis.clone(),
        finalized: genesis.clone(),
        unrealized_justified: genesis.clone(),
        unrealized_finalized: genesis.clone(),
        arrival: GloasArrival {
            attestation_timely: false,
            ptc_timely: false,
        },
        ptc: ptc.clone(),
        slot_committee_members: Vec::new(),
        payload_attestations: Vec::new(),
    };
    let genesis_time = 1_600_000_000;
    let mut store =
        GloasForkChoice::<E>::from_anchor(&summary(0, 0, false), genesis_time, spec.clone());
    let validator = Validator {
        pubkey: Default::default(),
        withdrawal_credentials: Default::default(),
        effective_balance: BALANCE,
        slashed: false,
        activation_eligibility_epoch: 0,
        activation_epoch: 0,
        exit_epoch: u64::MAX,
        withdrawable_epoch: u64::MAX,
    };
    let validators = vec![validator; VALIDATORS];
    store.set_justified_balances(
        &genesis,
        JustifiedBalances::from_validators::<E>(0, VALIDATORS, validators.iter()),
    );
    store.on_tick(spec.compute_time_at_slot(genesis_time, BLOCKS as u64 + 1));
    store
        .on_verified_execution_payload(root(0), Ok(()))
        .expect("anchor known");
    for i in 1..BLOCKS {
        let block = match i {
            i if i % 4 == 3 => summary(i, i - 2, false),
            i => summary(i, i - 1, i % 2 == 1),
        };
        store.insert_block_summary(&block).expect("a valid block");
        store
            .on_verified_execution_payload(root(i), Ok(()))
            .expect("block known");
    }
    let mut by_block: Vec<Vec<u64>> = vec![Vec::new(); BLOCKS];
    for v in 0..VALIDATORS {
        by_block[v * 7919 % BLOCKS].push(v as u64);
    }
    for (block, indices) in by_block.iter().enumerate() {
        for payload_present in [false, true] {
            let indices: Vec<u64> = indices
                .iter()
                .copied()
                .filter(|v| (v % 2 == 0) == payload_present)
                .collect();
            store
                .update_latest_messages(&indices, &vote(block, BLOCKS as u64, payload_present))
                .expect("block known");
        }
    }
    store.get_head().expect("balances held");
    store
}

fn vote(block: usize, slot: u64, payload_present: bool) -> AttestationData {
    let checkpoint = Checkpoint {
        epoch: 0,
        root: root(0),
    };
    AttestationData {
        slot,
        index: u64::from(payload_present),
        beacon_block_root: root(block),
        source: checkpoint.clone(),
        target: checkpoint,
    }
}

fn benches(c: &mut Criterion) {
    let (tree, votes, balances) = voted();
    let none = FxHashSet::default();
    let newest = message(BLOCKS - 1, BLOCKS as u64 + 1, true);

    c.bench_function("gloas_weights/one_slot_changed", |b| {
        b.iter_batched(
            || {
                let mut votes = votes.clone();
                for v in 0..VOTES_PER_SLOT {
                    votes
                        .process_attestation(attester(v) as u64, &newest)
                        .expect("index fits");
                }
                (tree.clone(), votes)
            },
            |(mut tree, mut votes)| {
                let mut deltas = votes
                    .compute_deltas(tree.len(), &balances, &none)
                    .expect("nodes in range");
                tree.apply_deltas(&mut deltas).expect("valid weights");
                black_box(tree)
            },
            BatchSize::LargeInput,
        )
    });

    let attesters: Vec<u64> = (0..VOTES_PER_SLOT).map(|v| attester(v) as u64).collect();
    c.bench_function("gloas_votes/one_slot", |b| {
        b.iter_batched(
            || votes.clone(),
            |mut votes| {
                for &v in &attesters {
                    votes.process_attestation(v, &newest).expect("index fits");
                }
                black_box(votes)
            },
            BatchSize::LargeInput,
        )
    });

    let mut store = store();
    let mut slot = BLOCKS as u64;
    c.bench_function("gloas_get_head/one_slot_changed", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                slot += 1;
                store
                    .update_latest_messages(
                        &attesters,
                        &vote(BLOCKS - 1, slot, slot.is_multiple_of(2)),
                    )
                    .expect("block known");
                let start = Instant::now();
                black_box(store.get_head().expect("balances held"));
                total += start.elapsed();
            }
            total
        })
    });
}

criterion_group!(gloas, benches);
criterion_main!(gloas);
