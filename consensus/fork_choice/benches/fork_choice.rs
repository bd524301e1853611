//! Fork choice at mainnet scale: 1,000,000 validators' latest messages over a 64-block tree.
//!
//! - `get_head/one_slot_changed`: deltas for one slot of changed votes (31,250 validators,
//!   spread over the registry as a shuffled committee's), applied to the tree, viability and
//!   the head walk.
//! - `apply_votes/one_slot`: the latest-message updates of one slot of attestations
//!   (`update_latest_messages` for 31,250 attesting indices).
//! - `persist/encode_latest_messages`, `persist/decode_and_apply_latest_messages`: the votes of
//!   the persisted fork choice, written with each epoch's whole state and read at start-up.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use fork_choice::persist::{decode_latest_messages_from, encode_latest_messages};
use fork_choice::{ExecutionStatus, ProtoArray, ProtoNode, VoteTracker};
use std::hint::black_box;
use types::{Root, phase0::Checkpoint};

const VALIDATORS: usize = 1_000_000;
const BLOCKS: usize = 64;
const VOTES_PER_SLOT: usize = VALIDATORS / 32;
const BALANCE: u64 = 32_000_000_000;

/// The `n`th of a slot's attesters: spread over the whole registry in no order, as a shuffled
/// committee's are (a multiplicative permutation of the indices).
fn attester(n: usize) -> usize {
    n * 611_953 % VALIDATORS
}

fn root(i: usize) -> Root {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
    Root::from(bytes)
}

/// A 64-block tree: a main chain with a fork every 4th block.
fn tree() -> ProtoArray {
    let genesis = Checkpoint {
        epoch: 0,
        root: root(0),
    };
    let mut array = ProtoArray::default();
    for i in 0..BLOCKS {
        let parent_root = match i {
            0 => Root::ZERO,
            i if i % 4 == 3 => root(i - 2),
            i => root(i - 1),
        };
        array
            .insert(ProtoNode {
                root: root(i),
                parent: None,
                slot: i as u64,
                proposer_index: i as u64,
                parent_root,
                justified: genesis.clone(),
                unrealized_justified: genesis.clone(),
                finalized_epoch: 0,
                timely: true,
                weight: 0,
                execution_status: ExecutionStatus::NotValidated,
            })
            .expect("fresh roots");
    }
    array
}

/// The tree with every validator's vote applied, and the tracker with nothing queued.
fn voted() -> (ProtoArray, VoteTracker, Vec<u64>) {
    let mut array = tree();
    let mut votes = VoteTracker::default();
    let balances = vec![BALANCE; VALIDATORS];
    for v in 0..VALIDATORS {
        let node = (v * 7919 % BLOCKS) as u32;
        votes
            .process_attestation(v as u64, node, 1)
            .expect("index fits");
    }
    let mut deltas = votes
        .compute_deltas(array.len(), &balances)
        .expect("nodes in range");
    array.apply_deltas(&mut deltas).expect("positive weights");
    votes.commit(&balances);
    (array, votes, balances)
}

fn benches(c: &mut Criterion) {
    let genesis = Checkpoint {
        epoch: 0,
        root: root(0),
    };
    let (array, votes, balances) = voted();

    c.bench_function("get_head/one_slot_changed", |b| {
        b.iter_batched(
            || {
                let mut votes = votes.clone();
                for v in 0..VOTES_PER_SLOT {
                    let validator = attester(v);
                    votes
                        .process_attestation(validator as u64, (BLOCKS - 1) as u32, 2)
                        .expect("index fits");
                }
                (array.clone(), votes)
            },
            |(mut array, mut votes)| {
                let mut deltas = votes
                    .compute_deltas(array.len(), &balances)
                    .expect("nodes in range");
                array.apply_deltas(&mut deltas).expect("valid weights");
                votes.commit(&balances);
                black_box(
                    array
                        .find_head(&genesis, &genesis, 2, 32)
                        .expect("justified held"),
                )
            },
            BatchSize::LargeInput,
        )
    });

    let attesters: Vec<u64> = (0..VOTES_PER_SLOT).map(|v| attester(v) as u64).collect();
    c.bench_function("apply_votes/one_slot", |b| {
        b.iter_batched(
            || votes.clone(),
            |mut votes| {
                for &v in &attesters {
                    votes
                        .process_attestation(v, (BLOCKS - 1) as u32, 2)
                        .expect("index fits");
                }
                black_box(votes)
            },
            BatchSize::LargeInput,
        )
    });

    // The persisted fork choice's votes (written with each epoch's whole state, read once at
    // start-up): a pass over every latest message each way.
    let mut encoded = Vec::new();
    encode_latest_messages(&votes, &mut encoded);
    eprintln!(
        "persist: {VALIDATORS} latest messages encode to {} bytes",
        encoded.len()
    );
    c.bench_function("persist/encode_latest_messages", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            encode_latest_messages(black_box(&votes), &mut out);
            black_box(out)
        })
    });
    c.bench_function("persist/decode_and_apply_latest_messages", |b| {
        b.iter(|| {
            let (latest, rest) = decode_latest_messages_from(black_box(&encoded)).expect("valid");
            assert!(rest.is_empty());
            let mut restored = VoteTracker::default();
            for (index, node, epoch) in latest.iter() {
                restored
                    .process_attestation(index, node, epoch)
                    .expect("index fits");
            }
            black_box(restored)
        })
    });
}

criterion_group!(fork_choice, benches);
criterion_main!(fork_choice);
