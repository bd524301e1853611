//! Whole-list shuffle against per-index shuffling, at mainnet scale (1,000,000 validators, 90
//! rounds).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use swap_or_not_shuffle::{compute_shuffled_index, shuffle_list};

const VALIDATORS: usize = 1_000_000;
const MAINNET_ROUNDS: u8 = 90;
const SEED: [u8; 32] = [0x42; 32];

fn shuffle_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("shuffle");
    group.sample_size(10);

    let input: Vec<usize> = (0..VALIDATORS).collect();
    group.bench_function("shuffle_list 1M indices, 90 rounds", |b| {
        b.iter_batched(
            || input.clone(),
            |list| shuffle_list(black_box(list), MAINNET_ROUNDS, &SEED, true),
            criterion::BatchSize::LargeInput,
        )
    });

    // One committee's worth of per-index calls, the way a single lookup is done.
    group.bench_function("compute_shuffled_index x1000 of 1M, 90 rounds", |b| {
        b.iter(|| {
            (0..1000)
                .filter_map(|i| {
                    compute_shuffled_index(black_box(i), VALIDATORS, &SEED, MAINNET_ROUNDS)
                })
                .sum::<usize>()
        })
    });

    group.finish();
}

criterion_group!(benches, shuffle_benches);
criterion_main!(benches);
