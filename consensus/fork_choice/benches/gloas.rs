//! The Gloas fork choice's weights at mainnet scale: 1,000,000 validators' latest messages over
//! a 64-block tree of Gloas nodes (PENDING, EMPTY, FULL per block).
//!
//! - `gloas_weights/one_slot_changed`: one slot of changed votes (31,250 validators, spread
//!   over the registry as a shuffled committee's, moving to the newest block's FULL node), their
//!   node deltas (`GloasVotes::compute_deltas`) and the weights (`NodeTree::apply_deltas`):
//!   the part of `get_head` that grows with the registry.
//! - `gloas_votes/one_slot`: the latest-message updates of one slot of attestations.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use fork_choice::gloas::{GloasVotes, LatestMessage, NodeTree, PayloadStatus};
use rustc_hash::FxHashSet;
use std::hint::black_box;
use types::Root;

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
}

criterion_group!(gloas, benches);
criterion_main!(gloas);
