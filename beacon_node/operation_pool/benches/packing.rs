//! Attestation packing at mainnet scale: a synthetic Fulu state with 1,000,000 validators
//! (`ARBOR_BENCH_VALIDATORS` changes the count) and a pool holding a full epoch of gossip
//! aggregates: for each of the 32 slots before the block, 4 overlapping aggregates (each member
//! in with probability 85 %) of each of the 64 committees, and for every fourth slot a second
//! data (another head vote) with 2 aggregates per committee at 50 %.
//!
//! Two states the block may be built on:
//! - `realistic`: the synthetic participation (95 % of the validators counted for every slot),
//!   with the two slots before the block not yet counted: the earlier blocks of the epoch
//!   included their attestations, so the value left is the last two slots and the stragglers;
//! - `nothing_included`: no vote of the window counted (blocks missed for an epoch).
//!
//! Benchmarks, per state:
//! - `max_cover`: `OperationPool::get_attestations` (reads the state's participation and
//!   balances for every committee in the pool, the lazy greedy, the on-chain aggregates with
//!   their signatures);
//! - `naive_by_bit_count`: the baseline over the same aggregates (decoded and hashed
//!   beforehand, so it times the choice and the aggregation only): per committee the aggregate
//!   with the most bits, per data the sum, the 8 data with the most bits.
//!
//! After the runs it prints, per state, the medians and the proposer reward each choice earns
//! (`process_attestation` on a clone of the state), with their ratios.
//!
//! `cargo bench -p operation_pool --bench packing`

#![allow(
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use bls::{AggregateSignature, Signature};
use criterion::{Criterion, SamplingMode};
use operation_pool::OperationPool;
use splitmix::splitmix64;
use ssz_types::{BitList, BitVector};
use state_harness::synthetic::{SyntheticParams, build_state_with_placeholder_keys};
use state_processing::{
    CachedBeaconState, StateRef,
    common::{compute_epoch_at_slot, get_block_root, get_block_root_at_slot, get_current_epoch},
    per_block::{VerifySignatures, process_attestation},
};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    BLSSignature, BeaconState, ChainSpec, EthSpec, ForkName, MainnetEthSpec, Root,
    electra::{Attestation, AttestationData, Checkpoint},
};

type E = MainnetEthSpec;

const AGGREGATES_PER_COMMITTEE: u64 = 4;

/// The pool's contents in the form the baseline reads.
struct Decoded {
    data: AttestationData,
    data_root: Root,
    committee_index: usize,
    bits: BitList<<E as EthSpec>::MaxValidatorsPerSlot>,
    signature: Signature,
}

fn data_for(state: &StateRef<'_, E>, slot: u64, head: Option<Root>) -> AttestationData {
    let epoch = compute_epoch_at_slot::<E>(slot);
    let source = if epoch == get_current_epoch(state) {
        state.current_justified_checkpoint.clone()
    } else {
        state.previous_justified_checkpoint.clone()
    };
    AttestationData {
        slot,
        index: 0,
        beacon_block_root: head.unwrap_or_else(|| get_block_root_at_slot(state, slot).unwrap()),
        source,
        target: Checkpoint {
            epoch,
            root: get_block_root(state, epoch).unwrap(),
        },
    }
}

/// Fills `pool` with the epoch of aggregates; all carry one valid signature (nothing verifies
/// them here, and every aggregate must still decode and add up).
fn fill_pool(state: &mut CachedBeaconState<E>, pool: &OperationPool<E>) {
    let signature = BLSSignature::from(
        state_processing::genesis::interop_secret_key(0)
            .sign(b"operation pool bench")
            .serialize(),
    );
    let block_slot = *state.state.slot();
    let CachedBeaconState { state: raw, caches } = state;
    let view = StateRef::new(raw).unwrap();
    for slot in block_slot - E::slots_per_epoch()..block_slot {
        let committees = caches
            .committees(&view, compute_epoch_at_slot::<E>(slot))
            .unwrap();
        let mut variants = vec![(data_for(&view, slot, None), AGGREGATES_PER_COMMITTEE, 85)];
        if slot % 4 == 0 {
            variants.push((data_for(&view, slot, Some(Root::repeat_byte(0x77))), 2, 50));
        }
        for (data, count, percent) in variants {
            for index in 0..committees.committees_per_slot() {
                let size = committees.get_beacon_committee(slot, index).unwrap().len();
                for k in 0..count {
                    let mut aggregation_bits = BitList::with_capacity(size).unwrap();
                    for p in 0..size {
                        let r = splitmix64(slot ^ (index << 20) ^ (k << 28) ^ ((p as u64) << 36));
                        if r % 100 < percent {
                            aggregation_bits.set(p, true).unwrap();
                        }
                    }
                    let mut committee_bits = BitVector::new();
                    committee_bits.set(index as usize, true).unwrap();
                    let attestation = Attestation {
                        aggregation_bits,
                        data: data.clone(),
                        signature,
                        committee_bits,
                    };
                    pool.insert_attestation(&attestation, &committees).unwrap();
                }
            }
        }
    }
}

/// Clears the participation of the members of every committee of `slots`.
fn uncount(state: &mut CachedBeaconState<E>, slots: std::ops::Range<u64>) {
    let current = compute_epoch_at_slot::<E>(*state.state.slot());
    let mut members = Vec::new();
    {
        let CachedBeaconState { state: raw, caches } = &mut *state;
        let view = StateRef::new(raw).unwrap();
        for slot in slots {
            let epoch = compute_epoch_at_slot::<E>(slot);
            let committees = caches.committees(&view, epoch).unwrap();
            for committee in committees.get_beacon_committees_at_slot(slot).unwrap() {
                members.extend(committee.iter().map(|&v| (v, epoch == current)));
            }
        }
    }
    let BeaconState::Fulu(s) = &mut state.state else {
        panic!("a Fulu state");
    };
    for (v, is_current) in members {
        let list = if is_current {
            &mut s.current_epoch_participation
        } else {
            &mut s.previous_epoch_participation
        };
        list.set(v as usize, 0).unwrap();
    }
}

/// The baseline: per committee the aggregate with the most bits, per data their sum, the
/// `MAX_ATTESTATIONS_ELECTRA` data with the most bits, aggregated on chain.
fn naive_by_bit_count(decoded: &[Decoded], block_slot: u64, current: u64) -> Vec<Attestation<E>> {
    let mut by_data: BTreeMap<Root, (usize, BTreeMap<usize, usize>)> = BTreeMap::new();
    for (i, d) in decoded.iter().enumerate() {
        let in_window = d.data.slot + E::MIN_ATTESTATION_INCLUSION_DELAY <= block_slot
            && d.data.target.epoch + 1 >= current;
        if !in_window {
            continue;
        }
        let entry = by_data
            .entry(d.data_root)
            .or_insert_with(|| (i, BTreeMap::new()));
        let best = entry.1.entry(d.committee_index).or_insert(i);
        if d.bits.num_set_bits() > decoded[*best].bits.num_set_bits() {
            *best = i;
        }
    }
    let mut ranked: Vec<(usize, usize, &BTreeMap<usize, usize>)> = by_data
        .values()
        .map(|(first, committees)| {
            let bits = committees
                .values()
                .map(|&i| decoded[i].bits.num_set_bits())
                .sum();
            (bits, *first, committees)
        })
        .collect();
    ranked.sort_by_key(|r| std::cmp::Reverse(r.0));
    ranked
        .into_iter()
        .take(<E as EthSpec>::MaxAttestationsElectra::to_usize())
        .map(|(_, first, committees)| {
            let total: usize = committees.values().map(|&i| decoded[i].bits.len()).sum();
            let mut aggregation_bits = BitList::with_capacity(total).unwrap();
            let mut committee_bits = BitVector::new();
            let mut signature = AggregateSignature::infinity();
            let mut offset = 0;
            for (&index, &i) in committees {
                committee_bits.set(index, true).unwrap();
                for (p, bit) in decoded[i].bits.iter().enumerate() {
                    if bit {
                        aggregation_bits.set(offset + p, true).unwrap();
                    }
                }
                offset += decoded[i].bits.len();
                signature.add(&decoded[i].signature);
            }
            Attestation {
                aggregation_bits,
                data: decoded[first].data.clone(),
                signature: BLSSignature::from(signature.serialize()),
                committee_bits,
            }
        })
        .collect()
}

/// The proposer's reward for `attestations` on `state`.
fn proposer_reward(state: &CachedBeaconState<E>, attestations: &[Attestation<E>]) -> u64 {
    let mut scratch = state.clone();
    let before: u64 = scratch
        .state
        .balances()
        .expect("a state before Gloas")
        .iter()
        .sum();
    {
        let (mut view, caches) = scratch.view_mut().unwrap();
        for a in attestations {
            process_attestation(&mut view, caches, a, VerifySignatures::None).unwrap();
        }
    }
    let after: u64 = scratch
        .state
        .balances()
        .expect("a state before Gloas")
        .iter()
        .sum();
    after - before
}

fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[runs / 2].as_secs_f64() * 1e3
}

fn main() {
    let n: u64 = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    let setup = Instant::now();
    let state =
        build_state_with_placeholder_keys::<E>(n, &SyntheticParams::default(), &spec).unwrap();
    let mut base = CachedBeaconState::new(BeaconState::Fulu(state));
    let pool = OperationPool::<E>::new();
    fill_pool(&mut base, &pool);
    let block_slot = *base.state.slot();
    let current = compute_epoch_at_slot::<E>(block_slot);
    let decoded: Vec<Decoded> = pool
        .attestations()
        .unwrap()
        .into_iter()
        .map(|a| Decoded {
            committee_index: a.committee_bits.iter().position(|b| b).unwrap(),
            signature: Signature::deserialize(a.signature.as_slice()).unwrap(),
            data_root: a.data.tree_hash_root(),
            data: a.data,
            bits: a.aggregation_bits,
        })
        .collect();

    let mut realistic = base.clone();
    uncount(&mut realistic, block_slot - 2..block_slot);
    let mut nothing_included = base.clone();
    uncount(
        &mut nothing_included,
        block_slot - E::slots_per_epoch()..block_slot,
    );
    let counts = pool.counts();
    println!(
        "setup {:.1} s: {n} validators, {} data, {} aggregates in the pool",
        setup.elapsed().as_secs_f64(),
        counts.attestation_data,
        counts.aggregates
    );

    let mut c = Criterion::default().configure_from_args();
    let mut summary = Vec::new();
    for (name, state) in [
        ("realistic", &mut realistic),
        ("nothing_included", &mut nothing_included),
    ] {
        // Warm the caches the packing reads (committees, effective balances), as the
        // pre-advanced head state of a node has them.
        let packed = pool.get_attestations(state).unwrap();
        let naive = naive_by_bit_count(&decoded, block_slot, current);
        let mut group = c.benchmark_group(format!("attestation_packing/{name}"));
        group
            .sample_size(20)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
        group.bench_function("max_cover", |b| {
            b.iter(|| black_box(pool.get_attestations(state).unwrap()))
        });
        group.bench_function("naive_by_bit_count", |b| {
            b.iter(|| black_box(naive_by_bit_count(&decoded, block_slot, current)))
        });
        group.finish();
        let max_cover_ms = median_ms(21, || {
            black_box(pool.get_attestations(state).unwrap());
        });
        let naive_ms = median_ms(21, || {
            black_box(naive_by_bit_count(&decoded, block_slot, current));
        });
        summary.push((
            name,
            max_cover_ms,
            naive_ms,
            proposer_reward(state, &packed),
            proposer_reward(state, &naive),
            packed
                .iter()
                .map(|a| a.aggregation_bits.num_set_bits())
                .sum::<usize>(),
            naive
                .iter()
                .map(|a| a.aggregation_bits.num_set_bits())
                .sum::<usize>(),
        ));
    }
    c.final_summary();
    println!("\nmedians of 21 runs; proposer reward of the attestations chosen (Gwei):");
    for (name, mc_ms, nv_ms, mc_reward, nv_reward, mc_bits, nv_bits) in summary {
        println!(
            "{name:>16}: max_cover {mc_ms:.2} ms, naive {nv_ms:.2} ms (time {:.2}x); \
             reward {mc_reward} vs {nv_reward} ({:.2}x); bits {mc_bits} vs {nv_bits}",
            mc_ms / nv_ms,
            mc_reward as f64 / nv_reward.max(1) as f64,
        );
    }
}
