//! Both list kinds against a plain, from-scratch merkleization and the plain `Vec` encoding.

use milhouse::mem::MemorySize;
use proptest::prelude::*;
use splitmix::SplitMix64;
use ssz::{Decode, Encode};
use ssz_derive::{Decode, Encode};
use tree_hash::{Hash256, TreeHash};
use tree_hash_derive::TreeHash;

use super::*;

type Chunk = [u8; 32];

fn reference_hash(left: &Chunk, right: &Chunk) -> Chunk {
    ethereum_hashing::hash32_concat(left, right)
}

/// `merkleize(chunks, width)`: a binary tree of `width` leaves, zero chunks past the input.
fn reference_merkleize(chunks: &[Chunk], width: usize) -> Chunk {
    let mut level: Vec<Chunk> = chunks.to_vec();
    level.resize(width, [0; 32]);
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| reference_hash(&pair[0], &pair[1]))
            .collect();
    }
    level[0]
}

/// `merkleize_progressive(chunks, width)`, recursively as the spec writes it.
fn reference_progressive(chunks: &[Chunk], width: usize) -> Chunk {
    if chunks.is_empty() {
        return [0; 32];
    }
    let split = chunks.len().min(width);
    reference_hash(
        &reference_merkleize(&chunks[..split], width),
        &reference_progressive(&chunks[split..], 4 * width),
    )
}

fn reference_root(chunks: &[Chunk], len: usize) -> Hash256 {
    tree_hash::mix_in_length(&Hash256::from(reference_progressive(chunks, 1)), len)
}

fn packed_reference_root<T: PackedValue>(values: &[T]) -> Hash256 {
    let mut bytes = Vec::new();
    for &value in values {
        let mut le = vec![0; T::SIZE];
        value.write_le(&mut le);
        bytes.extend_from_slice(&le);
    }
    let chunks: Vec<Chunk> = bytes
        .chunks(32)
        .map(|c| {
            let mut chunk = [0; 32];
            chunk[..c.len()].copy_from_slice(c);
            chunk
        })
        .collect();
    reference_root(&chunks, values.len())
}

/// A small container, like a pending withdrawal.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, TreeHash)]
struct Item {
    index: u64,
    amount: u64,
    epoch: u64,
}

impl Item {
    fn new(seed: u64) -> Self {
        Item {
            index: seed,
            amount: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            epoch: seed >> 3,
        }
    }
}

fn item_reference_root(values: &[Item]) -> Hash256 {
    let chunks: Vec<Chunk> = values.iter().map(|v| v.tree_hash_root().0).collect();
    reference_root(&chunks, values.len())
}

/// A container of variable size, to exercise SSZ offsets.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, TreeHash)]
struct Variable {
    tag: u8,
    data: ssz_types::VariableList<u8, typenum::U16>,
}

/// Lengths straddling every subtree and page boundary that small tests reach.
const BOUNDARY_LENGTHS: &[usize] = &[
    0, 1, 2, 4, 5, 6, 16, 20, 21, 22, 64, 84, 85, 86, 341, 342, 1365, 1366, 5461, 5462,
];

#[test]
fn packed_roots_match_the_spec_vectors() {
    // From consensus-spec-tests ssz_generic/basic_progressive_list (their lengths, not their
    // names: `proglist_uint64_max_342` holds 172 values).
    let root = |hex: &str| -> Hash256 { hex.parse().expect("a 32-byte hex root") };
    let u64s = |value: u64, len: usize| ProgressivePackedList::from(vec![value; len]);
    assert_eq!(
        u64s(u64::MAX, 1).tree_hash_root(),
        root("0x7bea313629252f757f27d17a1ce515715beedeff41a3f7f6c9ac47bfddcf447c")
    );
    assert_eq!(
        u64s(u64::MAX, 172).tree_hash_root(),
        root("0xe10fcb7004fc01ffbfef5063ca63c62953b630fd0635e210f583058f170304aa")
    );
    assert_eq!(
        u64s(0, 1249).tree_hash_root(),
        root("0x5e1cbc2c2f466c874fd5a81e57576171ccba461f16bbf4ab44ccc6b35f8d9151")
    );
    assert_eq!(
        ProgressivePackedList::from(vec![u8::MAX; 263]).tree_hash_root(),
        root("0x0d059a8613d79a489a74cd43560c81ffc535112c8613616cc834d48654c220b2")
    );
}

#[test]
fn boundary_lengths_match_the_reference() {
    for &len in BOUNDARY_LENGTHS {
        let items: Vec<Item> = (0..len as u64).map(Item::new).collect();
        let list = ProgressiveTreeList::from(items.clone());
        assert_eq!(
            list.tree_hash_root(),
            item_reference_root(&items),
            "items {len}"
        );

        let mut pushed = ProgressiveTreeList::from(items[..len / 2].to_vec());
        let _ = pushed.tree_hash_root();
        for item in &items[len / 2..] {
            pushed.push(item.clone());
        }
        assert_eq!(
            pushed.tree_hash_root(),
            item_reference_root(&items),
            "pushed {len}"
        );

        for values_len in [len, len * 4 + 3] {
            let values: Vec<u64> = (0..values_len as u64).map(|i| i * 7 + 1).collect();
            let list = ProgressivePackedList::from(values.clone());
            assert_eq!(
                list.tree_hash_root(),
                packed_reference_root(&values),
                "u64 {values_len}"
            );
            let bytes: Vec<u8> = (0..values_len).map(|i| (i % 251) as u8).collect();
            let list = ProgressivePackedList::from(bytes.clone());
            assert_eq!(
                list.tree_hash_root(),
                packed_reference_root(&bytes),
                "u8 {values_len}"
            );
        }
    }
}

#[test]
fn writes_after_a_clone_do_not_leak_into_it() {
    let mut a = ProgressiveTreeList::from((0..2000).map(Item::new).collect::<Vec<_>>());
    let root_a = a.tree_hash_root();
    let mut b = a.clone();
    b.set(1500, Item::new(7)).unwrap();
    b.push(Item::new(99));
    assert_eq!(a.tree_hash_root(), root_a);
    assert_eq!(a.get(1500), Some(&Item::new(1500)));
    a.update(0, |item| item.amount = 5).unwrap();
    assert_eq!(b.get(0), Some(&Item::new(0)));

    let mut c = ProgressivePackedList::from((0..2000u64).collect::<Vec<_>>());
    let root_c = c.tree_hash_root();
    let mut d = c.clone();
    d.set(1500, 7).unwrap();
    assert_eq!(c.tree_hash_root(), root_c);
    assert_eq!(c.get(1500), Some(1500));
    c.update(0, |v| v + 5).unwrap();
    assert_eq!(d.get(0), Some(0));
}

#[test]
fn iter_from_starts_at_the_index_across_page_and_subtree_boundaries() {
    let values: Vec<Item> = (0..1400).map(Item::new).collect();
    let list = ProgressiveTreeList::from(values.clone());
    for start in [
        0, 1, 4, 5, 15, 16, 17, 20, 21, 84, 85, 341, 1000, 1399, 1400,
    ] {
        let got: Vec<Item> = list.iter_from(start).unwrap().cloned().collect();
        assert_eq!(got, values[start..], "from {start}");
    }
    assert!(list.iter_from(1401).is_err());
    assert_eq!(
        ProgressiveTreeList::<Item>::empty()
            .iter_from(0)
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn out_of_bounds_and_bad_bytes_are_errors() {
    let mut list = ProgressiveTreeList::from(vec![Item::new(1), Item::new(2)]);
    assert_eq!(
        list.set(2, Item::new(3)),
        Err(Error::OutOfBounds { index: 2, len: 2 })
    );
    assert_eq!(
        list.pop_front(3),
        Err(Error::PopPastEnd { count: 3, len: 2 })
    );
    assert!(list.get(2).is_none());
    assert!(ProgressiveTreeList::<Item>::from_ssz_bytes(&[0; 23]).is_err());
    let mut packed = ProgressivePackedList::from(vec![1u64, 2]);
    assert_eq!(
        packed.set(2, 0),
        Err(Error::OutOfBounds { index: 2, len: 2 })
    );
    assert!(ProgressivePackedList::<u64>::from_ssz_bytes(&[0; 7]).is_err());
    assert!(
        ProgressivePackedList::<u64>::from_ssz_bytes(&[])
            .unwrap()
            .is_empty()
    );
}

#[test]
fn variable_size_elements_encode_with_offsets() {
    let values: Vec<Variable> = (0..40u8)
        .map(|i| Variable {
            tag: i,
            data: ssz_types::VariableList::new(vec![i; usize::from(i % 5)]).unwrap(),
        })
        .collect();
    let list = ProgressiveTreeList::from(values.clone());
    let expected = values.as_ssz_bytes();
    assert_eq!(list.as_ssz_bytes(), expected);
    let mut written = Vec::new();
    list.ssz_write(&mut written).unwrap();
    assert_eq!(written, expected);
    let decoded = ProgressiveTreeList::<Variable>::from_ssz_bytes(&expected).unwrap();
    assert_eq!(decoded, list);
    let chunks: Vec<Chunk> = values.iter().map(|v| v.tree_hash_root().0).collect();
    assert_eq!(
        decoded.tree_hash_root(),
        reference_root(&chunks, values.len())
    );
}

/// A clone shares every page (and, for containers, every branch): the tracker counts only what
/// the clone holds itself. A write copies one page (and the branches above it), which the
/// tracker then counts for the copy alone.
#[test]
fn memory_is_counted_once_per_shared_node() {
    let list = ProgressivePackedList::from((0..100_000u64).collect::<Vec<_>>());
    let mut tracker = milhouse::mem::MemoryTracker::default();
    let first = tracker.track_item(&list);
    assert!(first.total_size >= 100_000 * 8, "{first:?}");

    let mut copy = list.clone();
    let mut tracker_with_copy = tracker.clone();
    let shared = tracker_with_copy.track_item(&copy);
    // A packed list's clone holds its own page pointers and cached upper levels (as
    // `packed_list::PackedList`'s does): a few percent of the values.
    assert_eq!(shared.differential_size, copy.intrinsic_size());
    assert!(
        shared.differential_size < first.total_size / 20,
        "{shared:?}"
    );

    copy.set(50_000, 1).unwrap();
    let written = tracker.track_item(&copy);
    assert!(
        written.differential_size > shared.differential_size + 2048
            && written.differential_size < shared.differential_size + 16 * 1024,
        "{written:?}"
    );

    let items = ProgressiveTreeList::from((0..10_000).map(Item::new).collect::<Vec<_>>());
    let mut tracker = milhouse::mem::MemoryTracker::default();
    let first = tracker.track_item(&items);
    assert!(
        first.total_size >= 10_000 * std::mem::size_of::<Item>(),
        "{first:?}"
    );
    let copy = items.clone();
    assert_eq!(
        tracker.track_item(&copy).differential_size,
        copy.intrinsic_size()
    );
}

/// One step of a random sequence.
#[derive(Debug, Clone)]
enum Op {
    Push(u64),
    Set(usize, u64),
    PopFront(usize),
    Hash,
    Snapshot,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u64>().prop_map(Op::Push),
        6 => (any::<usize>(), any::<u64>()).prop_map(|(i, v)| Op::Set(i, v)),
        1 => (0usize..40).prop_map(Op::PopFront),
        2 => Just(Op::Hash),
        1 => Just(Op::Snapshot),
    ]
}

/// Applies `ops` to a list and to a `Vec`, checking every root taken, every snapshot at the end,
/// and the encodings, against the reference.
fn check_sequence<L, V>(
    initial: Vec<V>,
    ops: &[Op],
    make: impl Fn(u64) -> V,
    reference: impl Fn(&[V]) -> Hash256,
) -> Result<(), TestCaseError>
where
    V: Clone + PartialEq + std::fmt::Debug + Encode,
    L: ListOps<V> + TreeHash + Encode + Decode + Clone + From<Vec<V>> + PartialEq + std::fmt::Debug,
{
    let mut list = L::from(initial.clone());
    let mut values = initial;
    let mut snapshots = Vec::new();
    for op in ops {
        match *op {
            Op::Push(v) => {
                list.push_value(make(v));
                values.push(make(v));
            }
            Op::Set(i, v) if !values.is_empty() => {
                let i = i % values.len();
                list.set_value(i, make(v));
                values[i] = make(v);
            }
            Op::Set(..) => {}
            Op::PopFront(n) => {
                let n = n.min(values.len());
                list.pop_values(n);
                values.drain(..n);
            }
            Op::Hash => prop_assert_eq!(list.tree_hash_root(), reference(&values)),
            Op::Snapshot => snapshots.push((list.clone(), values.clone())),
        }
    }
    prop_assert_eq!(list.tree_hash_root(), reference(&values));
    for (snapshot, snapshot_values) in &snapshots {
        prop_assert_eq!(snapshot.tree_hash_root(), reference(snapshot_values));
    }
    let bytes = values.as_ssz_bytes();
    prop_assert_eq!(&list.as_ssz_bytes(), &bytes);
    prop_assert_eq!(list.ssz_bytes_len(), bytes.len());
    let mut written = Vec::new();
    list.write_to(&mut written);
    prop_assert_eq!(&written, &bytes);
    let decoded = L::from_ssz_bytes(&bytes).expect("its own encoding decodes");
    prop_assert_eq!(decoded.tree_hash_root(), list.tree_hash_root());
    prop_assert_eq!(&decoded, &list);
    Ok(())
}

/// The operations both list kinds share, for one generic test.
trait ListOps<V> {
    fn push_value(&mut self, value: V);
    fn set_value(&mut self, index: usize, value: V);
    fn pop_values(&mut self, count: usize);
    fn write_to(&self, out: &mut Vec<u8>);
}

impl ListOps<Item> for ProgressiveTreeList<Item> {
    fn push_value(&mut self, value: Item) {
        self.push(value);
    }
    fn set_value(&mut self, index: usize, value: Item) {
        self.set(index, value).unwrap();
    }
    fn pop_values(&mut self, count: usize) {
        self.pop_front(count).unwrap();
    }
    fn write_to(&self, out: &mut Vec<u8>) {
        self.ssz_write(out).unwrap();
    }
}

impl<T: PackedValue> ListOps<T> for ProgressivePackedList<T> {
    fn push_value(&mut self, value: T) {
        self.push(value);
    }
    fn set_value(&mut self, index: usize, value: T) {
        self.set(index, value).unwrap();
    }
    fn pop_values(&mut self, count: usize) {
        self.pop_front(count).unwrap();
    }
    fn write_to(&self, out: &mut Vec<u8>) {
        self.ssz_write(out).unwrap();
    }
}

proptest! {
    #[test]
    fn random_item_sequences_match_the_reference(
        initial in prop::collection::vec(any::<u64>(), 0..1500),
        ops in prop::collection::vec(op(), 0..120),
    ) {
        let initial = initial.into_iter().map(Item::new).collect();
        check_sequence::<ProgressiveTreeList<Item>, _>(initial, &ops, Item::new, item_reference_root)?;
    }

    #[test]
    fn random_u64_sequences_match_the_reference(
        initial in prop::collection::vec(any::<u64>(), 0..6000),
        ops in prop::collection::vec(op(), 0..120),
    ) {
        check_sequence::<ProgressivePackedList<u64>, _>(initial, &ops, |v| v, packed_reference_root)?;
    }

    #[test]
    fn random_u8_sequences_match_the_reference(
        initial in prop::collection::vec(any::<u8>(), 0..6000),
        ops in prop::collection::vec(op(), 0..120),
    ) {
        check_sequence::<ProgressivePackedList<u8>, _>(initial, &ops, |v| v as u8, packed_reference_root)?;
    }
}

/// A million values, hashed, then written at scattered indices (and pushed onto), on a clone:
/// the incremental roots of both equal the reference's.
#[test]
fn a_million_packed_values_after_scattered_writes() {
    const LEN: usize = 1_000_000;
    let mut rng = SplitMix64::new(41);
    let mut values: Vec<u64> = (0..LEN).map(|_| rng.next_u64() >> 20).collect();
    let original = ProgressivePackedList::from(values.clone());
    let original_root = original.tree_hash_root();
    assert_eq!(original_root, packed_reference_root(&values));

    let mut list = original.clone();
    for _ in 0..500 {
        let i = (rng.next_u64() % LEN as u64) as usize;
        let v = rng.next_u64();
        list.set(i, v).unwrap();
        values[i] = v;
    }
    for _ in 0..3 {
        let v = rng.next_u64();
        list.push(v);
        values.push(v);
    }
    assert_eq!(list.tree_hash_root(), packed_reference_root(&values));
    assert_eq!(original.tree_hash_root(), original_root);

    // Enough writes for the parallel path over a partly hashed tree.
    for _ in 0..6000 {
        let i = (rng.next_u64() % LEN as u64) as usize;
        let v = rng.next_u64();
        list.set(i, v).unwrap();
        values[i] = v;
    }
    assert_eq!(list.tree_hash_root(), packed_reference_root(&values));
}

/// Two clones sharing most nodes, written differently and hashed on two threads at once.
#[test]
fn clones_hash_concurrently() {
    let base = ProgressiveTreeList::from((0..50_000).map(Item::new).collect::<Vec<_>>());
    let mut a = base.clone();
    let mut b = base.clone();
    let mut expected_a: Vec<Item> = base.to_vec();
    let mut expected_b = expected_a.clone();
    for k in 0..5000 {
        let i = k * 7 % 50_000;
        a.set(i, Item::new(k as u64)).unwrap();
        expected_a[i] = Item::new(k as u64);
        let j = k * 13 % 50_000;
        b.set(j, Item::new(!(k as u64))).unwrap();
        expected_b[j] = Item::new(!(k as u64));
    }
    let (root_a, root_b, root_base) = std::thread::scope(|s| {
        let ta = s.spawn(|| a.tree_hash_root());
        let tb = s.spawn(|| b.tree_hash_root());
        let base_root = base.tree_hash_root();
        (ta.join().unwrap(), tb.join().unwrap(), base_root)
    });
    assert_eq!(root_a, item_reference_root(&expected_a));
    assert_eq!(root_b, item_reference_root(&expected_b));
    assert_eq!(root_base, item_reference_root(&base.to_vec()));
}

/// The same for a million small containers.
#[test]
fn a_million_items_after_scattered_writes() {
    const LEN: usize = 1_000_000;
    let mut rng = SplitMix64::new(7916);
    let mut values: Vec<Item> = (0..LEN).map(|_| Item::new(rng.next_u64())).collect();
    let original = ProgressiveTreeList::from(values.clone());
    let original_root = original.tree_hash_root();
    let mut chunks: Vec<Chunk> = values.iter().map(|v| v.tree_hash_root().0).collect();
    assert_eq!(original_root, reference_root(&chunks, LEN));

    let mut list = original.clone();
    for _ in 0..500 {
        let i = (rng.next_u64() % LEN as u64) as usize;
        let seed = rng.next_u64();
        list.update(i, |item| item.amount = seed).unwrap();
        values[i].amount = seed;
        chunks[i] = values[i].tree_hash_root().0;
    }
    assert_eq!(list.tree_hash_root(), reference_root(&chunks, LEN));
    assert_eq!(original.tree_hash_root(), original_root);
    assert_eq!(list.get(LEN - 1), values.last());
}
