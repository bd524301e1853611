//! Property tests: both tree-backed progressive list kinds against an independent, from-scratch
//! merkleization (`progressive_ssz::merkleize_progressive` over the chunks, then
//! `mix_in_length`) after random sequences of pushes, sets, pops (from the back) and
//! `pop_front`s, with clones taken along the way that must keep their own roots; and the same at
//! 1,000,000 elements, built by pushes and then written at random.
//!
//! The reference keeps the values in a `Vec` (and, for containers, each element's root) and
//! hashes everything from scratch for each check; the lists hash only what changed since their
//! last root. Encodings (`Encode`, `ssz_write`) and decodings are checked against the `Vec`'s.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test code: a failed operation is a failed test"
)]

use progressive_tree::{PackedValue, ProgressivePackedList, ProgressiveTreeList};
use proptest::prelude::*;
use splitmix::SplitMix64;
use ssz::{Decode, Encode};
use ssz_derive::{Decode, Encode};
use tree_hash::{Hash256, TreeHash};
use tree_hash_derive::TreeHash;

/// A container element shaped like a pending partial withdrawal.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, TreeHash)]
struct Item {
    validator_index: u64,
    amount: u64,
    withdrawable_epoch: u64,
}

impl Item {
    fn new(seed: u64) -> Self {
        Item {
            validator_index: seed,
            amount: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            withdrawable_epoch: seed >> 7,
        }
    }
}

/// `mix_in_length(merkleize_progressive(chunks), len)` over the concatenated chunk bytes.
fn reference_root(chunk_bytes: &[u8], len: usize) -> Hash256 {
    tree_hash::mix_in_length(&progressive_ssz::merkleize_progressive(chunk_bytes), len)
}

/// The SSZ of basic values: their little-endian bytes, which are also their packed chunks.
fn packed_bytes<T: PackedValue>(values: &[T]) -> Vec<u8> {
    let mut bytes = vec![0; values.len() * T::SIZE];
    for (slot, value) in bytes.chunks_exact_mut(T::SIZE).zip(values) {
        value.write_le(slot);
    }
    bytes
}

/// What the two list kinds share, so one driver checks both.
trait Model: Clone {
    type Value: Clone + PartialEq + std::fmt::Debug;
    type List: TreeHash + Encode + Decode + Clone + PartialEq + std::fmt::Debug;

    fn make(seed: u64) -> Self::Value;
    fn from_values(values: Vec<Self::Value>) -> Self;
    fn build(values: &[Self::Value]) -> Self::List;
    fn len(&self) -> usize;
    fn push(&mut self, list: &mut Self::List, value: Self::Value);
    fn set(&mut self, list: &mut Self::List, index: usize, value: Self::Value);
    fn pop(&mut self, list: &mut Self::List);
    fn pop_front(&mut self, list: &mut Self::List, count: usize);
    fn root(&self) -> Hash256;
    fn ssz(&self) -> Vec<u8>;
    fn written(list: &Self::List) -> Vec<u8>;
    fn matches(&self, list: &Self::List) -> bool;
}

/// The reference of a `ProgressiveTreeList<Item>`: the values and their roots.
#[derive(Clone)]
struct Items {
    values: Vec<Item>,
    roots: Vec<u8>,
}

impl Model for Items {
    type Value = Item;
    type List = ProgressiveTreeList<Item>;

    fn make(seed: u64) -> Item {
        Item::new(seed)
    }
    fn from_values(values: Vec<Item>) -> Self {
        let roots = values.iter().flat_map(|v| v.tree_hash_root().0).collect();
        Items { values, roots }
    }
    fn build(values: &[Item]) -> Self::List {
        values.iter().cloned().collect()
    }
    fn len(&self) -> usize {
        self.values.len()
    }
    fn push(&mut self, list: &mut Self::List, value: Item) {
        self.roots.extend_from_slice(&value.tree_hash_root().0);
        list.push(value.clone());
        self.values.push(value);
    }
    fn set(&mut self, list: &mut Self::List, index: usize, value: Item) {
        // Half through `update` (a field written in place), half through `set`.
        if index.is_multiple_of(2) {
            let amount = value.amount;
            let mut expected = self.values[index].clone();
            expected.amount = amount;
            list.update(index, |item| item.amount = amount).unwrap();
            self.roots[index * 32..index * 32 + 32].copy_from_slice(&expected.tree_hash_root().0);
            self.values[index] = expected;
        } else {
            self.roots[index * 32..index * 32 + 32].copy_from_slice(&value.tree_hash_root().0);
            list.set(index, value.clone()).unwrap();
            self.values[index] = value;
        }
    }
    fn pop(&mut self, list: &mut Self::List) {
        assert_eq!(list.pop(), self.values.pop());
        self.roots.truncate(self.values.len() * 32);
    }
    fn pop_front(&mut self, list: &mut Self::List, count: usize) {
        list.pop_front(count).unwrap();
        self.values.drain(..count);
        self.roots.drain(..count * 32);
    }
    fn root(&self) -> Hash256 {
        reference_root(&self.roots, self.values.len())
    }
    fn ssz(&self) -> Vec<u8> {
        self.values.iter().flat_map(Encode::as_ssz_bytes).collect()
    }
    fn written(list: &Self::List) -> Vec<u8> {
        let mut out = Vec::new();
        list.ssz_write(&mut out).unwrap();
        out
    }
    fn matches(&self, list: &Self::List) -> bool {
        list.len() == self.values.len() && list.iter().eq(self.values.iter())
    }
}

/// The reference of a `ProgressivePackedList<T>`: the values.
#[derive(Clone)]
struct Packed<T>(Vec<T>);

impl<T: PackedValue + PartialEq + std::fmt::Debug + TruncateFrom> Model for Packed<T> {
    type Value = T;
    type List = ProgressivePackedList<T>;

    fn make(seed: u64) -> T {
        T::truncate_from(seed)
    }
    fn from_values(values: Vec<T>) -> Self {
        Packed(values)
    }
    fn build(values: &[T]) -> Self::List {
        values.iter().copied().collect()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn push(&mut self, list: &mut Self::List, value: T) {
        list.push(value);
        self.0.push(value);
    }
    fn set(&mut self, list: &mut Self::List, index: usize, value: T) {
        if index.is_multiple_of(2) {
            list.update(index, |_| value).unwrap();
        } else {
            list.set(index, value).unwrap();
        }
        self.0[index] = value;
    }
    fn pop(&mut self, list: &mut Self::List) {
        assert_eq!(list.pop(), self.0.pop());
    }
    fn pop_front(&mut self, list: &mut Self::List, count: usize) {
        list.pop_front(count).unwrap();
        self.0.drain(..count);
    }
    fn root(&self) -> Hash256 {
        reference_root(&packed_bytes(&self.0), self.0.len())
    }
    fn ssz(&self) -> Vec<u8> {
        packed_bytes(&self.0)
    }
    fn written(list: &Self::List) -> Vec<u8> {
        let mut out = Vec::new();
        list.ssz_write(&mut out).unwrap();
        out
    }
    fn matches(&self, list: &Self::List) -> bool {
        list.len() == self.0.len() && list.iter().eq(self.0.iter().copied())
    }
}

/// A basic value from random bits.
trait TruncateFrom {
    fn truncate_from(bits: u64) -> Self;
}

impl TruncateFrom for u8 {
    fn truncate_from(bits: u64) -> Self {
        bits as u8
    }
}

impl TruncateFrom for u64 {
    fn truncate_from(bits: u64) -> Self {
        bits
    }
}

/// One step of a random sequence.
#[derive(Debug, Clone)]
enum Op {
    Push(u64),
    /// Pushes this many values at once (to cross page and subtree boundaries).
    PushMany(usize, u64),
    Set(usize, u64),
    Pop,
    /// Pops this many values from the back.
    PopMany(usize),
    PopFront(usize),
    Hash,
    Snapshot,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u64>().prop_map(Op::Push),
        1 => (0usize..300, any::<u64>()).prop_map(|(n, s)| Op::PushMany(n, s)),
        6 => (any::<usize>(), any::<u64>()).prop_map(|(i, v)| Op::Set(i, v)),
        4 => Just(Op::Pop),
        1 => (0usize..300).prop_map(Op::PopMany),
        1 => (0usize..40).prop_map(Op::PopFront),
        3 => Just(Op::Hash),
        1 => Just(Op::Snapshot),
    ]
}

/// Applies `ops` to a list built from `initial` and to the reference; every root taken, every
/// snapshot's root at the end (clones must not see later writes), the encodings and a decode
/// must agree with the reference.
fn check<M: Model>(initial: Vec<M::Value>, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut list = M::build(&initial);
    let mut model = M::from_values(initial);
    let mut snapshots: Vec<(M::List, M)> = Vec::new();
    for op in ops {
        match *op {
            Op::Push(seed) => model.push(&mut list, M::make(seed)),
            Op::PushMany(n, seed) => {
                for k in 0..n as u64 {
                    model.push(&mut list, M::make(seed.wrapping_add(k)));
                }
            }
            Op::Set(i, seed) if model.len() > 0 => {
                let i = i % model.len();
                model.set(&mut list, i, M::make(seed));
            }
            Op::Set(..) => {}
            Op::Pop => model.pop(&mut list),
            Op::PopMany(n) => {
                for _ in 0..n.min(model.len() + 1) {
                    model.pop(&mut list);
                }
            }
            Op::PopFront(n) => model.pop_front(&mut list, n.min(model.len())),
            Op::Hash => prop_assert_eq!(list.tree_hash_root(), model.root()),
            Op::Snapshot => snapshots.push((list.clone(), model.clone())),
        }
    }
    prop_assert!(model.matches(&list));
    prop_assert_eq!(list.tree_hash_root(), model.root());
    for (snapshot, snapshot_model) in &snapshots {
        prop_assert!(snapshot_model.matches(snapshot));
        prop_assert_eq!(snapshot.tree_hash_root(), snapshot_model.root());
    }
    let bytes = model.ssz();
    prop_assert_eq!(&list.as_ssz_bytes(), &bytes);
    prop_assert_eq!(list.ssz_bytes_len(), bytes.len());
    prop_assert_eq!(&M::written(&list), &bytes);
    let decoded = M::List::from_ssz_bytes(&bytes).unwrap();
    prop_assert_eq!(decoded.tree_hash_root(), model.root());
    prop_assert_eq!(&decoded, &list);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn container_lists_match_a_from_scratch_merkleization(
        initial in prop::collection::vec(any::<u64>(), 0..1500),
        ops in prop::collection::vec(op(), 0..150),
    ) {
        check::<Items>(initial.into_iter().map(Item::new).collect(), &ops)?;
    }

    #[test]
    fn u64_lists_match_a_from_scratch_merkleization(
        initial in prop::collection::vec(any::<u64>(), 0..6000),
        ops in prop::collection::vec(op(), 0..150),
    ) {
        check::<Packed<u64>>(initial, &ops)?;
    }

    #[test]
    fn u8_lists_match_a_from_scratch_merkleization(
        initial in prop::collection::vec(any::<u8>(), 0..6000),
        ops in prop::collection::vec(op(), 0..150),
    ) {
        check::<Packed<u8>>(initial, &ops)?;
    }
}

/// Lengths just below, at and past the subtree boundaries (1, 5, 21, 85, 341, 1365 chunks) and
/// the page boundaries inside them: pops across every boundary shrink the chain of subtrees.
#[test]
fn pops_across_every_boundary_match_the_reference() {
    fn run<M: Model>(len: usize) {
        let mut list = M::build(&[]);
        let mut model = M::from_values(Vec::new());
        for k in 0..len as u64 {
            model.push(&mut list, M::make(k));
        }
        assert_eq!(list.tree_hash_root(), model.root());
        while model.len() > 0 {
            model.pop(&mut list);
            assert_eq!(list.tree_hash_root(), model.root(), "len {}", model.len());
        }
        assert_eq!(list, M::build(&[]));
        // Pushing again after emptying.
        for k in 0..70 {
            model.push(&mut list, M::make(k));
        }
        assert_eq!(list.tree_hash_root(), model.root());
    }
    run::<Items>(1400);
    run::<Packed<u64>>(1400 * 4);
    run::<Packed<u8>>(400 * 32);
}

/// Random writes at 1,000,000 elements: the list is built by pushes (and, for a second list, by
/// `collect`), hashed, cloned, then takes random sets, pushes and pops, with roots checked
/// against the reference after each round and the clone's root unchanged.
fn a_million<M: Model>(seed: u64) {
    const LEN: usize = 1_000_000;
    const ROUNDS: usize = 3;
    const OPS_PER_ROUND: usize = 2_000;
    let mut rng = SplitMix64::new(seed);
    let values: Vec<M::Value> = (0..LEN).map(|_| M::make(rng.next_u64())).collect();
    let collected = M::build(&values);

    let mut list = M::build(&[]);
    let mut model = M::from_values(Vec::with_capacity(LEN + 1000));
    for value in values {
        model.push(&mut list, value);
    }
    let root = model.root();
    assert_eq!(collected.tree_hash_root(), root);
    assert_eq!(list.tree_hash_root(), root);

    let original = list.clone();
    for _ in 0..ROUNDS {
        for _ in 0..OPS_PER_ROUND {
            let r = rng.next_u64();
            match r % 10 {
                0 => model.push(&mut list, M::make(rng.next_u64())),
                1 => model.pop(&mut list),
                _ => {
                    let i = (rng.next_u64() % model.len() as u64) as usize;
                    model.set(&mut list, i, M::make(rng.next_u64()));
                }
            }
        }
        assert_eq!(list.tree_hash_root(), model.root());
    }
    // Enough writes at once for the parallel re-hash.
    for _ in 0..6_000 {
        let i = (rng.next_u64() % model.len() as u64) as usize;
        model.set(&mut list, i, M::make(rng.next_u64()));
    }
    assert_eq!(list.tree_hash_root(), model.root());
    assert!(model.matches(&list));
    assert_eq!(original.tree_hash_root(), root);
    assert_eq!(M::written(&list), model.ssz());
}

#[test]
fn a_million_containers_after_random_writes() {
    a_million::<Items>(41);
}

#[test]
fn a_million_u64s_after_random_writes() {
    a_million::<Packed<u64>>(7916);
}

#[test]
fn a_million_u8s_after_random_writes() {
    a_million::<Packed<u8>>(7688);
}
