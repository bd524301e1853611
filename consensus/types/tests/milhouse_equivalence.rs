//! milhouse lists and vectors hash like a naive `Vec`-based merkleization.
//!
//! The reference below packs basic values into 32-byte chunks (or takes each composite element's
//! root as a chunk), merkleizes to the limit's depth with zero hashes and mixes in the length: the
//! spec's `hash_tree_root`, written from the spec's text and sharing only SHA-256 with milhouse.
//! Lengths sit on both sides of every packing and subtree boundary, up to 2^20 + 1, and each list
//! is checked as built by `List::new`, after `push`es onto a hashed list, and after scattered
//! `get_mut` writes to a hashed list (so stale cached hashes would show).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

use ethereum_hashing::hash32_concat;
use milhouse::{List, Value, Vector};
use proptest::prelude::*;
use splitmix::splitmix64;
use tree_hash::TreeHash;
use typenum::{U8192, U1099511627776, Unsigned};
use types::phase0::Validator;
use types::{B256, Hash256};

/// `VALIDATOR_REGISTRY_LIMIT`, the limit of every per-validator list in the state.
type RegistryLimit = U1099511627776;

// ---------------------------------------------------------------------------------------------
// The reference.
// ---------------------------------------------------------------------------------------------

/// A type the reference can merkleize: its chunks and how many elements one chunk holds.
trait Naive: Value + Send + Sync + Clone + PartialEq + std::fmt::Debug {
    /// Elements per 32-byte chunk: `32 / size` for basic types, 1 for composite ones.
    const PER_CHUNK: usize;
    /// The chunks of a sequence of values (`pack` for basic types, element roots otherwise).
    fn chunks(items: &[Self]) -> Vec<Hash256>;
    /// A deterministic value for index `i` and `seed`.
    fn sample(i: u64, seed: u64) -> Self;
}

/// Packs little-endian serialisations into right-zero-padded 32-byte chunks.
fn pack(bytes: impl IntoIterator<Item = u8>) -> Vec<Hash256> {
    let bytes: Vec<u8> = bytes.into_iter().collect();
    bytes
        .chunks(32)
        .map(|c| {
            let mut chunk = [0u8; 32];
            chunk[..c.len()].copy_from_slice(c);
            B256::from(chunk)
        })
        .collect()
}

/// A `u64` in a chunk, as the root of a basic value.
fn u64_chunk(v: u64) -> Hash256 {
    pack(v.to_le_bytes())[0]
}

impl Naive for u64 {
    const PER_CHUNK: usize = 4;
    fn chunks(items: &[Self]) -> Vec<Hash256> {
        pack(items.iter().flat_map(|v| v.to_le_bytes()))
    }
    fn sample(i: u64, seed: u64) -> Self {
        // Balances near 32 ETH, all different.
        32_000_000_000 + (splitmix64(i ^ seed) % 2_000_000_000)
    }
}

impl Naive for u8 {
    const PER_CHUNK: usize = 32;
    fn chunks(items: &[Self]) -> Vec<Hash256> {
        pack(items.iter().copied())
    }
    fn sample(i: u64, seed: u64) -> Self {
        // Participation flags use the low three bits; use all eight to catch packing mistakes.
        splitmix64(i ^ seed) as u8
    }
}

impl Naive for B256 {
    const PER_CHUNK: usize = 1;
    fn chunks(items: &[Self]) -> Vec<Hash256> {
        items.to_vec()
    }
    fn sample(i: u64, seed: u64) -> Self {
        let mut bytes = [0u8; 32];
        for (k, word) in bytes.chunks_mut(8).enumerate() {
            word.copy_from_slice(&splitmix64(i ^ seed ^ (k as u64) << 56).to_le_bytes());
        }
        B256::from(bytes)
    }
}

impl Naive for Validator {
    const PER_CHUNK: usize = 1;
    fn chunks(items: &[Self]) -> Vec<Hash256> {
        items.iter().map(naive_validator_root).collect()
    }
    fn sample(i: u64, seed: u64) -> Self {
        let r = splitmix64(i ^ seed);
        let mut pubkey = [0u8; 48];
        pubkey[..8].copy_from_slice(&i.to_le_bytes());
        pubkey[8..16].copy_from_slice(&seed.to_le_bytes());
        pubkey[40..48].copy_from_slice(&r.to_le_bytes());
        Validator {
            pubkey: pubkey.into(),
            withdrawal_credentials: B256::sample(i, seed),
            effective_balance: 32_000_000_000 - (r % 3) * 1_000_000_000,
            slashed: r.is_multiple_of(97),
            activation_eligibility_epoch: r % 1000,
            activation_epoch: r % 1000 + 5,
            exit_epoch: if r.is_multiple_of(11) {
                r % 100_000
            } else {
                u64::MAX
            },
            withdrawable_epoch: if r.is_multiple_of(11) {
                r % 100_000 + 256
            } else {
                u64::MAX
            },
        }
    }
}

/// `hash_tree_root(Validator)` from the container's eight fields.
fn naive_validator_root(v: &Validator) -> Hash256 {
    let fields = vec![
        merkleize(pack(v.pubkey.0), 1),
        v.withdrawal_credentials,
        u64_chunk(v.effective_balance),
        u64_chunk(u64::from(v.slashed)),
        u64_chunk(v.activation_eligibility_epoch),
        u64_chunk(v.activation_epoch),
        u64_chunk(v.exit_epoch),
        u64_chunk(v.withdrawable_epoch),
    ];
    merkleize(fields, 3)
}

/// `zero_hashes[d]`: the root of a subtree of depth `d` whose leaves are all zero.
fn zero_hashes() -> &'static [Hash256] {
    static ZEROS: std::sync::LazyLock<Vec<Hash256>> = std::sync::LazyLock::new(|| {
        let mut zeros = vec![Hash256::ZERO];
        for d in 0..64 {
            let z: Hash256 = zeros[d];
            zeros.push(B256::from(hash32_concat(z.as_slice(), z.as_slice())));
        }
        zeros
    });
    &ZEROS
}

/// `merkleize(chunks, limit = 2^depth)`: pairs each level, padding with the zero subtree.
fn merkleize(mut layer: Vec<Hash256>, depth: usize) -> Hash256 {
    assert!(
        layer.len() as u128 <= 1u128 << depth,
        "more chunks than the limit"
    );
    let zeros = zero_hashes();
    if layer.is_empty() {
        return zeros[depth];
    }
    for zero in &zeros[..depth] {
        layer = layer
            .chunks(2)
            .map(|pair| {
                let right = pair.get(1).unwrap_or(zero);
                B256::from(hash32_concat(pair[0].as_slice(), right.as_slice()))
            })
            .collect();
    }
    layer[0]
}

/// `mix_in_length(root, length)`.
fn mix_in_length(root: Hash256, len: usize) -> Hash256 {
    B256::from(hash32_concat(
        root.as_slice(),
        u64_chunk(len as u64).as_slice(),
    ))
}

/// `ceil(log2(n))`, with `ceil_log2(0) == ceil_log2(1) == 0`.
fn ceil_log2(n: u64) -> usize {
    if n <= 1 {
        0
    } else {
        (64 - (n - 1).leading_zeros()) as usize
    }
}

/// Depth of the chunk tree of a list or vector of at most `limit` elements of `T`.
fn chunk_depth<T: Naive>(limit: usize) -> usize {
    ceil_log2((limit as u64).div_ceil(T::PER_CHUNK as u64))
}

/// `hash_tree_root(List[T, N])` of `items`.
fn naive_list_root<T: Naive, N: Unsigned>(items: &[T]) -> Hash256 {
    mix_in_length(
        merkleize(T::chunks(items), chunk_depth::<T>(N::to_usize())),
        items.len(),
    )
}

/// `hash_tree_root(Vector[T, N])` of `items`.
fn naive_vector_root<T: Naive, N: Unsigned>(items: &[T]) -> Hash256 {
    assert_eq!(items.len(), N::to_usize());
    merkleize(T::chunks(items), chunk_depth::<T>(N::to_usize()))
}

#[test]
fn reference_matches_known_roots() {
    // The reference must itself be right: check it against tree_hash's roots of ssz_types
    // containers (a different implementation from milhouse) and known constants.
    let zeros = zero_hashes();
    assert_eq!(
        format!("{:x}", zeros[1]),
        "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b"
    );
    assert_eq!(chunk_depth::<u64>(RegistryLimit::to_usize()), 38);
    assert_eq!(chunk_depth::<u8>(RegistryLimit::to_usize()), 35);
    assert_eq!(chunk_depth::<Validator>(RegistryLimit::to_usize()), 40);
    assert_eq!(chunk_depth::<u64>(8192), 11);
    assert_eq!(chunk_depth::<B256>(8192), 13);

    type Small = typenum::U1024;
    for len in [0usize, 1, 3, 4, 5, 33, 129, 1024] {
        let balances: Vec<u64> = (0..len as u64).map(|i| u64::sample(i, 1)).collect();
        let flags: Vec<u8> = (0..len as u64).map(|i| u8::sample(i, 2)).collect();
        let validators: Vec<Validator> = (0..len.min(64) as u64)
            .map(|i| Validator::sample(i, 3))
            .collect();
        assert_eq!(
            naive_list_root::<u64, Small>(&balances),
            ssz_types::VariableList::<u64, Small>::new(balances.clone())
                .unwrap()
                .tree_hash_root(),
            "u64 × {len}"
        );
        assert_eq!(
            naive_list_root::<u8, Small>(&flags),
            ssz_types::VariableList::<u8, Small>::new(flags.clone())
                .unwrap()
                .tree_hash_root(),
            "u8 × {len}"
        );
        assert_eq!(
            naive_list_root::<Validator, Small>(&validators),
            ssz_types::VariableList::<Validator, Small>::new(validators.clone())
                .unwrap()
                .tree_hash_root(),
            "Validator × {}",
            validators.len()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Lengths and the checks.
// ---------------------------------------------------------------------------------------------

/// Lengths around every leaf and node boundary up to 2^10 + 1, then 2^k - 1, 2^k, 2^k + 1.
fn lengths(max_k: u32) -> Vec<usize> {
    let mut lengths = vec![
        0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023,
        1024, 1025,
    ];
    for k in 11..=max_k {
        lengths.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    lengths
}

/// The small lengths, where proptest picks the operations.
const SMALL_LENGTHS: &[usize] = &[
    0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
];

fn samples<T: Naive>(len: usize, seed: u64) -> Vec<T> {
    (0..len as u64).map(|i| T::sample(i, seed)).collect()
}

/// Pseudo-random distinct-ish indices below `len` (with the first and last), for scattered writes.
fn scattered_indices(len: usize, count: usize, seed: u64) -> Vec<usize> {
    if len == 0 {
        return vec![];
    }
    let mut indices = vec![0, len - 1];
    indices.extend((0..count as u64).map(|i| (splitmix64(i ^ seed) % len as u64) as usize));
    indices
}

/// `List::new` hashes like the reference at every length.
fn check_new<T: Naive>(max_k: u32) {
    for len in lengths(max_k) {
        let items = samples::<T>(len, len as u64);
        let list = List::<T, RegistryLimit>::new(items.clone()).unwrap();
        assert_eq!(
            list.tree_hash_root(),
            naive_list_root::<T, RegistryLimit>(&items),
            "List::new, length {len}"
        );
    }
}

/// A hashed list with pushes on top hashes like the reference: the first half built by
/// `List::new` and hashed (filling the cache), the second half pushed.
fn check_push<T: Naive>(max_k: u32) {
    for len in lengths(max_k) {
        let mut items = samples::<T>(len, len as u64 + 1);
        let split = len / 2;
        let mut list = List::<T, RegistryLimit>::new(items[..split].to_vec()).unwrap();
        assert_eq!(
            list.tree_hash_root(),
            naive_list_root::<T, RegistryLimit>(&items[..split])
        );
        for item in &items[split..] {
            list.push(item.clone()).unwrap();
        }
        list.apply_updates().unwrap();
        assert_eq!(list.len(), len);
        assert_eq!(
            list.tree_hash_root(),
            naive_list_root::<T, RegistryLimit>(&items),
            "List::new({split}) + {} pushes",
            len - split
        );

        // One more push across the boundary just reached, on the freshly hashed tree.
        let extra = T::sample(u64::MAX, len as u64);
        list.push(extra.clone()).unwrap();
        items.push(extra);
        list.apply_updates().unwrap();
        assert_eq!(
            list.tree_hash_root(),
            naive_list_root::<T, RegistryLimit>(&items),
            "List::new({split}) + {} pushes + 1",
            len - split
        );
    }
}

/// Scattered `get_mut` writes to a hashed list hash like the reference.
fn check_writes<T: Naive>(max_k: u32) {
    for len in lengths(max_k) {
        let mut items = samples::<T>(len, len as u64 + 2);
        let mut list = List::<T, RegistryLimit>::new(items.clone()).unwrap();
        list.tree_hash_root();
        // About 1 % of the list, at least a few, at most 10,000.
        let count = (len / 100).clamp(3, 10_000);
        for (n, i) in scattered_indices(len, count, len as u64)
            .into_iter()
            .enumerate()
        {
            let value = T::sample(n as u64, u64::MAX - len as u64);
            *list.get_mut(i).unwrap() = value.clone();
            items[i] = value;
        }
        list.apply_updates().unwrap();
        assert_eq!(
            list.tree_hash_root(),
            naive_list_root::<T, RegistryLimit>(&items),
            "{count} writes to a list of length {len}"
        );
    }
}

/// One step of the random operation sequences.
#[derive(Debug, Clone)]
enum Op {
    Push(u64),
    Write(usize, u64),
    /// `apply_updates`, then compare the root with the reference.
    Hash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u64>().prop_map(Op::Push),
        4 => (any::<usize>(), any::<u64>()).prop_map(|(i, v)| Op::Write(i, v)),
        1 => Just(Op::Hash),
    ]
}

/// Runs `ops` on a list of `len` elements and on a `Vec`, comparing roots at every `Hash`.
fn check_ops<T: Naive>(len: usize, seed: u64, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut items = samples::<T>(len, seed);
    let mut list = List::<T, RegistryLimit>::new(items.clone()).unwrap();
    prop_assert_eq!(
        list.tree_hash_root(),
        naive_list_root::<T, RegistryLimit>(&items)
    );
    for (n, op) in ops.iter().chain(std::iter::once(&Op::Hash)).enumerate() {
        match *op {
            Op::Push(v) => {
                let value = T::sample(v, seed);
                list.push(value.clone()).unwrap();
                items.push(value);
            }
            Op::Write(i, v) => {
                if !items.is_empty() {
                    let i = i % items.len();
                    let value = T::sample(v, seed);
                    *list.get_mut(i).unwrap() = value.clone();
                    items[i] = value;
                }
            }
            Op::Hash => {
                list.apply_updates().unwrap();
                prop_assert_eq!(list.len(), items.len());
                prop_assert_eq!(
                    list.tree_hash_root(),
                    naive_list_root::<T, RegistryLimit>(&items),
                    "after op {} of {:?}",
                    n,
                    ops
                );
            }
        }
    }
    // Reading back through the list must give the model's values too.
    prop_assert!(
        list.iter().eq(items.iter()),
        "list contents differ from the model"
    );
    Ok(())
}

// Balances: `List[Gwei, VALIDATOR_REGISTRY_LIMIT]`, 4 per chunk, up to 2^20 + 1.

#[test]
fn balances_new_match_reference() {
    check_new::<u64>(20);
}

#[test]
fn balances_push_match_reference() {
    check_push::<u64>(20);
}

#[test]
fn balances_writes_match_reference() {
    check_writes::<u64>(20);
}

// Participation flags: `List[ParticipationFlags, VALIDATOR_REGISTRY_LIMIT]`, 32 per chunk.

#[test]
fn participation_new_match_reference() {
    check_new::<u8>(20);
}

#[test]
fn participation_push_match_reference() {
    check_push::<u8>(20);
}

#[test]
fn participation_writes_match_reference() {
    check_writes::<u8>(20);
}

// Validators: `List[Validator, VALIDATOR_REGISTRY_LIMIT]`, one root per chunk; up to 2^14 + 1.

#[test]
fn validators_new_match_reference() {
    check_new::<Validator>(14);
}

#[test]
fn validators_push_match_reference() {
    check_push::<Validator>(14);
}

#[test]
fn validators_writes_match_reference() {
    check_writes::<Validator>(14);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn balances_random_ops_match_reference(
        len in prop::sample::select(SMALL_LENGTHS),
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 0..80),
    ) {
        check_ops::<u64>(len, seed, &ops)?;
    }

    #[test]
    fn participation_random_ops_match_reference(
        len in prop::sample::select(SMALL_LENGTHS),
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 0..80),
    ) {
        check_ops::<u8>(len, seed, &ops)?;
    }

    #[test]
    fn validators_random_ops_match_reference(
        len in prop::sample::select(SMALL_LENGTHS),
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 0..80),
    ) {
        check_ops::<Validator>(len, seed, &ops)?;
    }
}

// Vectors: `Vector[Root, SLOTS_PER_HISTORICAL_ROOT]` and `Vector[Gwei, EPOCHS_PER_SLASHINGS_VECTOR]`.

/// `Vector::new`, then writes to a hashed vector, hash like the reference.
fn check_vector<T: Naive>(writes: &[(usize, u64)], seed: u64) -> Result<(), TestCaseError> {
    let mut items = samples::<T>(8192, seed);
    let mut vector = Vector::<T, U8192>::new(items.clone()).unwrap();
    prop_assert_eq!(
        vector.tree_hash_root(),
        naive_vector_root::<T, U8192>(&items)
    );
    for &(i, v) in writes {
        let i = i % items.len();
        let value = T::sample(v, seed);
        *vector.get_mut(i).unwrap() = value.clone();
        items[i] = value;
    }
    vector.apply_updates().unwrap();
    prop_assert_eq!(
        vector.tree_hash_root(),
        naive_vector_root::<T, U8192>(&items)
    );
    Ok(())
}

#[test]
fn vectors_match_reference_at_boundaries() {
    // Writes at the first and last index of every leaf chunk and subtree boundary.
    let boundaries: Vec<(usize, u64)> = lengths(13)
        .into_iter()
        .filter(|&i| i < 8192)
        .chain([8191])
        .map(|i| (i, i as u64))
        .collect();
    check_vector::<B256>(&boundaries, 7).unwrap();
    check_vector::<u64>(&boundaries, 8).unwrap();
    // All of them, so every cached hash is replaced.
    let all: Vec<(usize, u64)> = (0..8192).map(|i| (i, i as u64 + 1)).collect();
    check_vector::<B256>(&all, 9).unwrap();
    check_vector::<u64>(&all, 10).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn vectors_match_reference_after_random_writes(
        seed in any::<u64>(),
        writes in prop::collection::vec((0usize..8192, any::<u64>()), 0..200),
    ) {
        check_vector::<B256>(&writes, seed)?;
        check_vector::<u64>(&writes, seed)?;
    }
}
