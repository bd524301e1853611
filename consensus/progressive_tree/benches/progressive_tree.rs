//! Progressive lists against the fixed-depth lists the beacon state uses before Gloas, at
//! 1,000,000 elements, in one process (the ratios are what to read; the machines are shared):
//!
//! - `scratch`: the root of a freshly built list (every element and node hashed);
//! - `block`: on a clone of a hashed list, 300 scattered writes then the root (the clone is
//!   made outside the timing, as a block's pre-state is kept by the caller);
//! - `clone_writes`: clone, then 300 scattered writes (no root);
//! - `clone_block`: clone, 300 scattered writes, root: a block's whole cost to the list;
//! - `pop_front`: a 100,000-element queue loses its first 1,000 elements, then the root;
//!   `pop_front_odd` its first 1,001 (milhouse reuses aligned subtrees when the count has
//!   factors of two, 1,000 = 8 × 125).
//!
//! Containers (`Validator`-shaped) compare with `milhouse::List<_, 2^40>`, `u64` values with
//! `packed_list::PackedList<u64, 2^40>`. After criterion's output a summary prints each
//! ratio (progressive / fixed-depth, medians of runs alternating between the two).

#![allow(
    clippy::unwrap_used,
    reason = "bench setup: a failed list operation aborts the run"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use packed_list::PackedList;
use progressive_tree::{ProgressivePackedList, ProgressiveTreeList};
use splitmix::splitmix64;
use ssz_derive::{Decode, Encode};
use tree_hash::{Hash256, TreeHash};
use tree_hash_derive::TreeHash;
use typenum::U1099511627776 as Limit;

const LEN: usize = 1_000_000;
/// The benchmark groups, by their first path component.
const GROUPS: [&str; 2] = ["validators", "balances"];
const WRITES: usize = 300;
const QUEUE: usize = 100_000;
const POPPED: usize = 1_000;

/// The shape of a `Validator`: eight fields, two of them 32-byte roots.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, TreeHash)]
struct Validator {
    pubkey: Hash256,
    withdrawal_credentials: Hash256,
    effective_balance: u64,
    slashed: bool,
    activation_eligibility_epoch: u64,
    activation_epoch: u64,
    exit_epoch: u64,
    withdrawable_epoch: u64,
}

/// milhouse's list with a `BTreeMap` of pending writes: its default (`VecMap`) allocates up to
/// the highest index written, 130 MB for a write near the end of a million validators, which
/// would make the baseline look far worse than it has to be.
type Milhouse = milhouse::List<Validator, Limit, BTreeMap<usize, Validator>>;

fn validator(i: u64) -> Validator {
    Validator {
        pubkey: Hash256::repeat_byte(i as u8),
        withdrawal_credentials: Hash256::left_padding_from(&i.to_be_bytes()),
        effective_balance: 32_000_000_000,
        slashed: false,
        activation_eligibility_epoch: i,
        activation_epoch: i + 1,
        exit_epoch: u64::MAX,
        withdrawable_epoch: u64::MAX,
    }
}

fn indices(salt: u64) -> Vec<usize> {
    (0..WRITES as u64)
        .map(|i| (splitmix64(i ^ (salt << 32)) % LEN as u64) as usize)
        .collect()
}

/// The operations timed, for both list kinds, so that one function measures each pair.
trait Bench: Clone {
    fn build(n: usize) -> Self;
    fn write(&mut self, index: usize);
    fn pop(&mut self, count: usize);
    fn root(&mut self) -> Hash256;
}

impl Bench for ProgressiveTreeList<Validator> {
    fn build(n: usize) -> Self {
        (0..n as u64).map(validator).collect()
    }
    fn write(&mut self, index: usize) {
        self.get_mut(index).unwrap().effective_balance -= 1;
    }
    fn pop(&mut self, count: usize) {
        self.pop_front(count).unwrap();
    }
    fn root(&mut self) -> Hash256 {
        self.tree_hash_root()
    }
}

impl Bench for Milhouse {
    fn build(n: usize) -> Self {
        milhouse::List::new((0..n as u64).map(validator).collect()).unwrap()
    }
    fn write(&mut self, index: usize) {
        self.get_mut(index).unwrap().effective_balance -= 1;
    }
    fn pop(&mut self, count: usize) {
        self.pop_front(count).unwrap();
    }
    fn root(&mut self) -> Hash256 {
        self.apply_updates().unwrap();
        self.tree_hash_root()
    }
}

impl Bench for ProgressivePackedList<u64> {
    fn build(n: usize) -> Self {
        (0..n as u64).map(|i| 32_000_000_000 + i).collect()
    }
    fn write(&mut self, index: usize) {
        self.update(index, |v| v + 1).unwrap();
    }
    fn pop(&mut self, count: usize) {
        self.pop_front(count).unwrap();
    }
    fn root(&mut self) -> Hash256 {
        self.tree_hash_root()
    }
}

impl Bench for PackedList<u64, Limit> {
    fn build(n: usize) -> Self {
        PackedList::try_from_iter((0..n as u64).map(|i| 32_000_000_000 + i)).unwrap()
    }
    fn write(&mut self, index: usize) {
        self.update(index, |v| v + 1).unwrap();
    }
    fn pop(&mut self, count: usize) {
        // `PackedList` has no `pop_front`: rebuild from the rest, as a caller would.
        *self = PackedList::try_from_iter(self.iter().skip(count)).unwrap();
    }
    fn root(&mut self) -> Hash256 {
        self.tree_hash_root()
    }
}

/// One timed operation: `setup` outside the timing, `run` inside.
struct Case<L> {
    name: &'static str,
    setup: Box<dyn Fn() -> L>,
    run: Box<dyn Fn(L) -> L>,
}

fn cases<L: Bench + 'static>() -> Vec<Case<L>> {
    let mut hashed = L::build(LEN);
    hashed.root();
    let mut queue = L::build(QUEUE);
    queue.root();
    let writes = indices(1);
    let (h1, h2, h3) = (hashed.clone(), hashed.clone(), hashed.clone());
    let (w2, w3, q1) = (writes.clone(), writes.clone(), queue.clone());
    vec![
        Case {
            name: "scratch",
            setup: Box::new(|| L::build(LEN)),
            run: Box::new(|mut list| {
                black_box(list.root());
                list
            }),
        },
        Case {
            name: "block",
            setup: Box::new(move || h1.clone()),
            run: Box::new(move |mut list| {
                for &i in &writes {
                    list.write(i);
                }
                black_box(list.root());
                list
            }),
        },
        Case {
            name: "clone_writes",
            setup: Box::new(move || h2.clone()),
            run: Box::new(move |list| {
                let mut copy = list.clone();
                for &i in &w2 {
                    copy.write(i);
                }
                black_box(copy)
            }),
        },
        Case {
            name: "clone_block",
            setup: Box::new(move || h3.clone()),
            run: Box::new(move |list| {
                let mut copy = list.clone();
                for &i in &w3 {
                    copy.write(i);
                }
                black_box(copy.root());
                black_box(copy)
            }),
        },
        Case {
            name: "pop_front",
            setup: Box::new(move || q1.clone()),
            run: Box::new(|mut list| {
                list.pop(POPPED);
                black_box(list.root());
                list
            }),
        },
        Case {
            name: "pop_front_odd",
            setup: Box::new(move || queue.clone()),
            run: Box::new(|mut list| {
                list.pop(POPPED + 1);
                black_box(list.root());
                list
            }),
        },
    ]
}

/// Seconds of one timed call.
fn time_once<L>(case: &Case<L>) -> f64 {
    let input = (case.setup)();
    let start = Instant::now();
    let output = (case.run)(input);
    let elapsed = start.elapsed().as_secs_f64();
    drop(output);
    elapsed
}

/// Median seconds of each case, the two run alternately so that the shared machine's load
/// falls on both alike: 15 runs each, 5 for cases over 50 ms.
fn medians<P, F>(ours: &Case<P>, theirs: &Case<F>) -> (f64, f64) {
    let first = (time_once(ours), time_once(theirs));
    let runs = if first.0.max(first.1) > 0.05 { 5 } else { 15 };
    let (mut a, mut b) = (vec![first.0], vec![first.1]);
    for _ in 1..runs {
        a.push(time_once(ours));
        b.push(time_once(theirs));
    }
    let median = |mut times: Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    (median(a), median(b))
}

/// The benchmark filter criterion was given: the argument that is neither a flag nor a flag's
/// value.
fn filter() -> Option<String> {
    const TAKES_VALUE: &[&str] = &[
        "--profile-time",
        "--measurement-time",
        "--warm-up-time",
        "--sample-size",
        "--save-baseline",
        "--baseline",
        "--load-baseline",
        "--output-format",
        "--color",
        "--plotting-backend",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--nresamples",
        "--format",
    ];
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter()
        .enumerate()
        .filter(|(i, arg)| {
            !arg.starts_with('-') && (*i == 0 || !TAKES_VALUE.contains(&args[i - 1].as_str()))
        })
        .map(|(_, arg)| arg.clone())
        .next_back()
}

fn compare<P: Bench + 'static, F: Bench + 'static>(
    c: &mut Criterion,
    group: &str,
    summary: &mut Vec<String>,
) {
    // The same filter criterion applies; a filter naming another group skips building this one.
    let filter = filter();
    if filter.as_ref().is_some_and(|filter| {
        let head = filter.split('/').next().unwrap_or_default();
        GROUPS.contains(&head) && head != group
    }) {
        return;
    }
    let ours = cases::<P>();
    let theirs = cases::<F>();
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    for (p, f) in ours.iter().zip(&theirs) {
        g.bench_function(format!("{}/progressive", p.name), |b| {
            b.iter_batched(&p.setup, &p.run, BatchSize::LargeInput)
        });
        g.bench_function(format!("{}/fixed_depth", f.name), |b| {
            b.iter_batched(&f.setup, &f.run, BatchSize::LargeInput)
        });
    }
    g.finish();
    for (p, f) in ours.iter().zip(&theirs) {
        let id = format!("{group}/{}", p.name);
        if filter
            .as_ref()
            .is_some_and(|filter| !id.contains(filter.as_str()))
        {
            continue;
        }
        let (tp, tf) = medians(p, f);
        summary.push(format!(
            "{group:>10} {:>13}: progressive {:>9.3} ms, fixed-depth {:>9.3} ms, ratio {:.2}",
            p.name,
            tp * 1e3,
            tf * 1e3,
            tp / tf
        ));
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let mut summary = Vec::new();
    compare::<ProgressiveTreeList<Validator>, Milhouse>(&mut c, "validators", &mut summary);
    compare::<ProgressivePackedList<u64>, PackedList<u64, Limit>>(&mut c, "balances", &mut summary);
    c.final_summary();
    println!("\nprogressive / fixed-depth, {LEN} elements, {WRITES} writes per block:");
    for line in summary {
        println!("{line}");
    }
}
