//! A persistent SSZ `List` of packed basic values (`uint8` … `uint64`) with cached Merkle hashes.
//!
//! The beacon state's per-validator lists of small values — balances, the two participation
//! lists, inactivity scores — take scattered writes on every block (a slot's attesters are spread
//! over the whole registry) and are hashed after every block. [`PackedList`] is built for that
//! pattern:
//!
//! - values live in fixed-size *pages* of [`PAGE_CHUNKS`] 32-byte chunks, each page behind an
//!   `Arc`, so cloning a list copies one pointer per page and writes copy only the pages they touch;
//! - each page caches the inner nodes of its own subtree and a bitmask of the chunks written since,
//!   and the list caches the levels above the pages plus a bitmask of dirty pages; a root
//!   recomputes exactly the nodes on the paths of written chunks, dirty pages in parallel (rayon);
//! - the SSZ encoding *is* the page bytes, so encoding and decoding are copies.
//!
//! [spec]: ssz/simple-serialize.md#merkleization (packed basic lists)

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use milhouse::mem::MemorySize;
use rayon::prelude::*;
use ssz::{Decode, DecodeError, Encode};
use tree_hash::{Hash256, PackedEncoding, TreeHash, TreeHashType};
use typenum::Unsigned;

mod sha256x2;

use sha256x2::{hash_pair_fast, hash_pairs_x2};

/// SHA-256 of two 32-byte chunks (a Merkle node from its children): one pair through SHA-NI
/// with the padding block's schedule precomputed (`hash_pair_fast`), two independent pairs
/// interleaved at about the cost of one (`hash_pairs_x2`), and the portable path through the
/// compression function (`hash_pair_portable`). Other persistent trees (`progressive_tree`)
/// hash with them too.
pub mod hashing {
    pub use crate::sha256x2::{hash_pair_fast, hash_pair_portable, hash_pairs_x2};
}

/// Chunks per page. 64 makes every level of a page's subtree fit one `u64` bitmask.
pub const PAGE_CHUNKS: usize = 64;
/// Depth of a page's subtree.
const PAGE_DEPTH: usize = 6;
/// Dirty pages hashed in parallel only above this count: below it rayon's overhead dominates.
const PARALLEL_PAGES: usize = 8;
/// Bytes in a Merkle chunk.
const CHUNK_LEN: usize = 32;

type Chunk = [u8; CHUNK_LEN];

/// `zero_hash(d)`: the root of a depth-`d` tree of zero chunks, for every depth a 64-bit list
/// limit can need.
static ZERO_HASHES: LazyLock<[Chunk; 65]> = LazyLock::new(|| {
    let mut hashes = [[0u8; CHUNK_LEN]; 65];
    for d in 1..hashes.len() {
        hashes[d] = ethereum_hashing::hash32_concat(&hashes[d - 1], &hashes[d - 1]);
    }
    hashes
});

fn zero_hash(depth: usize) -> &'static Chunk {
    &ZERO_HASHES[depth.min(64)]
}

/// A fixed-size unsigned integer that SSZ packs into chunks (little-endian).
pub trait PackedValue:
    Copy + Default + PartialEq + Eq + fmt::Debug + Send + Sync + 'static
{
    /// Size of the value in bytes.
    const SIZE: usize;
    /// Reads a value from exactly `SIZE` little-endian bytes.
    fn read_le(bytes: &[u8]) -> Self;
    /// Writes the value as exactly `SIZE` little-endian bytes.
    fn write_le(self, out: &mut [u8]);
}

macro_rules! packed_value {
    ($($t:ty),*) => {$(
        impl PackedValue for $t {
            const SIZE: usize = std::mem::size_of::<$t>();

            fn read_le(bytes: &[u8]) -> Self {
                let mut buf = [0u8; std::mem::size_of::<$t>()];
                buf.copy_from_slice(bytes);
                <$t>::from_le_bytes(buf)
            }

            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

packed_value!(u8, u16, u32, u64);

/// Why a list operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An index at or past the length.
    #[error("index {index} out of bounds for a list of length {len}")]
    OutOfBounds {
        /// The index asked for.
        index: usize,
        /// The list's length at the time.
        len: usize,
    },
    /// A push or construction beyond the list's limit.
    #[error("list limit {limit} reached")]
    Full {
        /// The maximum number of elements the list may hold.
        limit: usize,
    },
}

/// The cached inner nodes of one page's subtree.
#[derive(Clone)]
struct PageHashes {
    /// Heap order: `nodes[1]` is the page root and node `i` has children `2i` and `2i + 1`;
    /// indices `PAGE_CHUNKS..2 * PAGE_CHUNKS` are the chunks themselves (not stored here).
    nodes: [Chunk; PAGE_CHUNKS],
    /// Chunks written since `nodes` was last brought up to date (bit `j` = chunk `j`).
    dirty: u64,
}

/// `PAGE_CHUNKS` chunks of packed values and their cached subtree, in one allocation.
struct Page {
    chunks: [Chunk; PAGE_CHUNKS],
    hashes: Mutex<PageHashes>,
}

fn unpoison<T>(result: Result<T, PoisonError<T>>) -> T {
    // A panic while holding the lock cannot leave the hashes half-written in a way that matters:
    // dirty bits are cleared only after every node is written, so the next root recomputes.
    result.unwrap_or_else(PoisonError::into_inner)
}

impl Page {
    fn zeroed() -> Self {
        Page {
            chunks: [[0; CHUNK_LEN]; PAGE_CHUNKS],
            hashes: Mutex::new(PageHashes {
                nodes: [[0; CHUNK_LEN]; PAGE_CHUNKS],
                dirty: u64::MAX,
            }),
        }
    }

    fn bytes(&self) -> &[u8] {
        self.chunks.as_flattened()
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        self.chunks.as_flattened_mut()
    }

    fn mark_dirty(&mut self, chunk: usize) {
        unpoison(self.hashes.get_mut()).dirty |= 1 << chunk;
    }

    /// The page's subtree root, recomputing only the nodes above written chunks.
    fn root(&self) -> Chunk {
        let mut guard = unpoison(self.hashes.lock());
        let hashes = &mut *guard;
        if hashes.dirty != 0 {
            // Parents of the dirty chunks (depth 5, heap indices 32..64).
            let mut mask = parent_mask(hashes.dirty);
            hash_parents(
                set_bits(mask),
                &self.chunks,
                None,
                &mut hashes.nodes[PAGE_CHUNKS / 2..],
            );
            // Inner levels up to the root: nodes `width..2 * width` from `2 * width..4 * width`.
            let mut width = PAGE_CHUNKS / 2;
            while width > 1 {
                width /= 2;
                mask = parent_mask(mask);
                let (parents, children) = hashes.nodes.split_at_mut(2 * width);
                hash_parents(
                    set_bits(mask),
                    &children[..2 * width],
                    None,
                    &mut parents[width..],
                );
            }
            hashes.dirty = 0;
        }
        hashes.nodes[1]
    }
}

/// The indices of the set bits of `mask`, lowest first.
fn set_bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let k = mask.trailing_zeros() as usize;
        mask &= mask.wrapping_sub(1);
        (k < 64).then_some(k)
    })
}

/// `parents[i] = hash(children[2i] + children[2i + 1])` for every `i` in `dirty`, the right child
/// being `missing_right` past the end of `children`. Nodes of one level are independent, so they
/// go two at a time through the interleaved SHA-256: a pair costs about what one hash does.
fn hash_parents(
    dirty: impl Iterator<Item = usize>,
    children: &[Chunk],
    missing_right: Option<&Chunk>,
    parents: &mut [Chunk],
) {
    let pair = |i: usize| {
        let right = children.get(2 * i + 1).or(missing_right);
        (
            &children[2 * i],
            right.expect("a parent has a right child or a zero subtree"),
        )
    };
    let mut waiting = None;
    for i in dirty {
        match waiting.take() {
            None => waiting = Some(i),
            Some(j) => (parents[j], parents[i]) = hash_pairs_x2(pair(j), pair(i)),
        }
    }
    if let Some(j) = waiting {
        let (left, right) = pair(j);
        parents[j] = hash_pair_fast(left, right);
    }
}

/// Bit `k` of the result is set when bit `2k` or `2k + 1` of `mask` is.
fn parent_mask(mask: u64) -> u64 {
    let mut pairs = (mask | (mask >> 1)) & 0x5555_5555_5555_5555;
    // Compact the even bits into the low half.
    pairs = (pairs | (pairs >> 1)) & 0x3333_3333_3333_3333;
    pairs = (pairs | (pairs >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
    pairs = (pairs | (pairs >> 4)) & 0x00ff_00ff_00ff_00ff;
    pairs = (pairs | (pairs >> 8)) & 0x0000_ffff_0000_ffff;
    (pairs | (pairs >> 16)) & 0x0000_0000_ffff_ffff
}

impl Clone for Page {
    fn clone(&self) -> Self {
        Page {
            chunks: self.chunks,
            hashes: Mutex::new(unpoison(self.hashes.lock()).clone()),
        }
    }
}

/// The levels above the pages, and which pages changed since they were computed.
#[derive(Clone, Default)]
struct Upper {
    /// `levels[0][p]` is page `p`'s root; `levels[k][i]` hashes `levels[k - 1][2i]` with
    /// `levels[k - 1][2i + 1]` (a zero subtree when absent). The last level has one node.
    levels: Vec<Vec<Chunk>>,
    /// Bit `p % 64` of word `p / 64` is set when page `p` changed.
    dirty_pages: Vec<u64>,
}

impl Upper {
    fn mark(&mut self, page: usize) {
        let word = page / 64;
        if self.dirty_pages.len() <= word {
            self.dirty_pages.resize(word + 1, 0);
        }
        self.dirty_pages[word] |= 1 << (page % 64);
    }

    fn take_dirty(&mut self) -> Vec<usize> {
        let mut pages = Vec::new();
        for (w, word) in self.dirty_pages.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                pages.push(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        pages
    }
}

/// An SSZ `List[T, N]` of packed basic values, persistent and with cached Merkle hashes.
pub struct PackedList<T: PackedValue, N: Unsigned> {
    len: usize,
    pages: Vec<Arc<Page>>,
    upper: Mutex<Upper>,
    _marker: PhantomData<fn() -> (T, N)>,
}

impl<T: PackedValue, N: Unsigned> PackedList<T, N> {
    /// Values per page.
    const PER_PAGE: usize = PAGE_CHUNKS * CHUNK_LEN / T::SIZE;

    /// The list's limit, `N`.
    pub fn limit() -> usize {
        N::to_usize()
    }

    /// An empty list.
    pub fn empty() -> Self {
        PackedList {
            len: 0,
            pages: Vec::new(),
            upper: Mutex::new(Upper::default()),
            _marker: PhantomData,
        }
    }

    /// A list of `values`, or [`Error::Full`] when there are more than `N`.
    pub fn new(values: Vec<T>) -> Result<Self, Error> {
        Self::try_from_iter(values)
    }

    /// A list of the values of `iter`, or [`Error::Full`] when there are more than `N`.
    pub fn try_from_iter(iter: impl IntoIterator<Item = T>) -> Result<Self, Error> {
        let mut list = Self::empty();
        for value in iter {
            list.push(value)?;
        }
        Ok(list)
    }

    /// `n` copies of `value`.
    pub fn repeat(value: T, n: usize) -> Result<Self, Error> {
        Self::try_from_iter(std::iter::repeat_n(value, n))
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn locate(index: usize) -> (usize, usize) {
        (index / Self::PER_PAGE, (index % Self::PER_PAGE) * T::SIZE)
    }

    /// The value at `index`, if any.
    pub fn get(&self, index: usize) -> Option<T> {
        if index >= self.len {
            return None;
        }
        let (page, offset) = Self::locate(index);
        let bytes = self.pages.get(page)?.bytes();
        Some(T::read_le(&bytes[offset..offset + T::SIZE]))
    }

    fn upper_mut(&mut self) -> &mut Upper {
        unpoison(self.upper.get_mut())
    }

    /// Sets the value at `index`. The first write to a page shared with a clone copies the page.
    pub fn set(&mut self, index: usize, value: T) -> Result<(), Error> {
        if index >= self.len {
            return Err(Error::OutOfBounds {
                index,
                len: self.len,
            });
        }
        let (page_index, offset) = Self::locate(index);
        let page = Arc::make_mut(&mut self.pages[page_index]);
        value.write_le(&mut page.bytes_mut()[offset..offset + T::SIZE]);
        page.mark_dirty(offset / CHUNK_LEN);
        self.upper_mut().mark(page_index);
        Ok(())
    }

    /// Applies `f` to the value at `index`.
    pub fn update(&mut self, index: usize, f: impl FnOnce(T) -> T) -> Result<(), Error> {
        let value = self.get(index).ok_or(Error::OutOfBounds {
            index,
            len: self.len,
        })?;
        self.set(index, f(value))
    }

    /// Appends `value`, or [`Error::Full`] at the limit.
    pub fn push(&mut self, value: T) -> Result<(), Error> {
        if self.len >= N::to_usize() {
            return Err(Error::Full {
                limit: N::to_usize(),
            });
        }
        if self.len == self.pages.len() * Self::PER_PAGE {
            self.pages.push(Arc::new(Page::zeroed()));
            let new_page = self.pages.len() - 1;
            self.upper_mut().mark(new_page);
        }
        self.len += 1;
        self.set(self.len - 1, value)
    }

    /// The values, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + '_ {
        (0..self.len).map(move |i| {
            let (page, offset) = Self::locate(i);
            T::read_le(&self.pages[page].bytes()[offset..offset + T::SIZE])
        })
    }

    /// Writes the list's SSZ (the values packed, little-endian) to `w`, page by page, without
    /// building it whole in memory as [`Encode::ssz_append`] does.
    pub fn ssz_write(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut remaining = self.len * T::SIZE;
        for page in &self.pages {
            if remaining == 0 {
                break;
            }
            let take = remaining.min(PAGE_CHUNKS * CHUNK_LEN);
            w.write_all(&page.bytes()[..take])?;
            remaining -= take;
        }
        Ok(())
    }

    /// The values as a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }

    /// Depth of the Merkle tree the limit `N` implies (in chunks).
    fn limit_depth() -> usize {
        let limit_chunks = (N::to_usize().saturating_mul(T::SIZE)).div_ceil(CHUNK_LEN);
        limit_chunks.next_power_of_two().trailing_zeros() as usize
    }

    /// The root of the data tree (before the length is mixed in).
    fn data_root(&self) -> Chunk {
        let limit_depth = Self::limit_depth();
        if limit_depth < PAGE_DEPTH {
            // A limit smaller than one page: the whole list fits in one small tree.
            let bytes = self.pages.first().map(|p| p.bytes()).unwrap_or(&[]);
            let used = (self.len * T::SIZE).min(bytes.len());
            return tree_hash::merkle_root(&bytes[..used], 1 << limit_depth).0;
        }
        if self.pages.is_empty() {
            return *zero_hash(limit_depth);
        }

        let mut upper = unpoison(self.upper.lock());
        let upper = &mut *upper;
        let dirty = upper.take_dirty();

        // Level sizes for the current page count.
        let mut sizes = vec![self.pages.len()];
        while *sizes.last().unwrap_or(&1) > 1 {
            let last = sizes[sizes.len() - 1];
            sizes.push(last.div_ceil(2));
        }
        upper.levels.resize_with(sizes.len(), Vec::new);
        for (level, &size) in upper.levels.iter_mut().zip(&sizes) {
            level.resize(size, [0; CHUNK_LEN]);
        }

        let pages = &self.pages;
        let roots: Vec<(usize, Chunk)> = if dirty.len() >= PARALLEL_PAGES {
            dirty.par_iter().map(|&p| (p, pages[p].root())).collect()
        } else {
            dirty.iter().map(|&p| (p, pages[p].root())).collect()
        };
        for &(p, root) in &roots {
            upper.levels[0][p] = root;
        }

        // Recompute the paths above the dirty pages, level by level.
        let mut indices = dirty;
        for k in 1..upper.levels.len() {
            for i in &mut indices {
                *i /= 2;
            }
            indices.dedup();
            let (below, above) = upper.levels.split_at_mut(k);
            let children = &below[k - 1];
            let level = &mut above[0];
            let zero = zero_hash(PAGE_DEPTH + k - 1);
            hash_parents(indices.iter().copied(), children, Some(zero), level);
        }

        let mut root = upper.levels[upper.levels.len() - 1][0];
        for depth in PAGE_DEPTH + upper.levels.len() - 1..limit_depth {
            root = hash_pair_fast(&root, zero_hash(depth));
        }
        root
    }
}

impl<T: PackedValue, N: Unsigned> Default for PackedList<T, N> {
    fn default() -> Self {
        Self::empty()
    }
}

/// Memory accounting ([`milhouse::mem::MemoryTracker`]): a page is counted once however many
/// lists share it (it is identified by its address inside its `Arc`), so a clone costs only
/// its own page pointers and upper levels, and a written copy the pages it copied.
impl MemorySize for Page {
    fn self_pointer(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn subtrees(&self) -> Vec<&dyn MemorySize> {
        Vec::new()
    }

    fn intrinsic_size(&self) -> usize {
        // The page and the `Arc`'s two counts, in one allocation.
        std::mem::size_of::<Self>() + 2 * std::mem::size_of::<usize>()
    }
}

impl<T: PackedValue, N: Unsigned> MemorySize for PackedList<T, N> {
    fn self_pointer(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn subtrees(&self) -> Vec<&dyn MemorySize> {
        self.pages
            .iter()
            .map(|page| &**page as &dyn MemorySize)
            .collect()
    }

    fn intrinsic_size(&self) -> usize {
        let upper = unpoison(self.upper.lock());
        let levels: usize = upper
            .levels
            .iter()
            .map(|level| level.capacity() * CHUNK_LEN)
            .sum();
        std::mem::size_of::<Self>()
            + self.pages.capacity() * std::mem::size_of::<Arc<Page>>()
            + upper.levels.capacity() * std::mem::size_of::<Vec<Chunk>>()
            + levels
            + upper.dirty_pages.capacity() * std::mem::size_of::<u64>()
    }
}

impl<T: PackedValue, N: Unsigned> Clone for PackedList<T, N> {
    fn clone(&self) -> Self {
        PackedList {
            len: self.len,
            pages: self.pages.clone(),
            upper: Mutex::new(unpoison(self.upper.lock()).clone()),
            _marker: PhantomData,
        }
    }
}

impl<T: PackedValue, N: Unsigned> PartialEq for PackedList<T, N> {
    fn eq(&self, other: &Self) -> bool {
        // Bytes past the length are always zero, so whole pages compare.
        self.len == other.len
            && self
                .pages
                .iter()
                .zip(&other.pages)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a.chunks == b.chunks)
    }
}

impl<T: PackedValue, N: Unsigned> Eq for PackedList<T, N> {}

impl<T: PackedValue, N: Unsigned> fmt::Debug for PackedList<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PackedValue, N: Unsigned> Encode for PackedList<T, N> {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn ssz_append(&self, buf: &mut Vec<u8>) {
        let mut remaining = self.len * T::SIZE;
        buf.reserve(remaining);
        for page in &self.pages {
            let take = remaining.min(PAGE_CHUNKS * CHUNK_LEN);
            buf.extend_from_slice(&page.bytes()[..take]);
            remaining -= take;
        }
    }

    fn ssz_bytes_len(&self) -> usize {
        self.len * T::SIZE
    }
}

impl<T: PackedValue, N: Unsigned> Decode for PackedList<T, N> {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn from_ssz_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        if !bytes.len().is_multiple_of(T::SIZE) {
            return Err(DecodeError::InvalidByteLength {
                len: bytes.len(),
                expected: bytes.len() / T::SIZE * T::SIZE,
            });
        }
        let len = bytes.len() / T::SIZE;
        if len > N::to_usize() {
            return Err(DecodeError::BytesInvalid(format!(
                "list of {len} values exceeds the limit {}",
                N::to_usize()
            )));
        }
        let mut upper = Upper::default();
        let pages = bytes
            .chunks(PAGE_CHUNKS * CHUNK_LEN)
            .enumerate()
            .map(|(p, page_bytes)| {
                let mut page = Page::zeroed();
                page.bytes_mut()[..page_bytes.len()].copy_from_slice(page_bytes);
                upper.mark(p);
                Arc::new(page)
            })
            .collect();
        Ok(PackedList {
            len,
            pages,
            upper: Mutex::new(upper),
            _marker: PhantomData,
        })
    }
}

impl<T: PackedValue, N: Unsigned> TreeHash for PackedList<T, N> {
    fn tree_hash_type() -> TreeHashType {
        TreeHashType::List
    }

    fn tree_hash_packed_encoding(&self) -> PackedEncoding {
        // Lists are never packed into a parent; their root stands in for them.
        PackedEncoding::from_slice(self.tree_hash_root().as_slice())
    }

    fn tree_hash_packing_factor() -> usize {
        1
    }

    fn tree_hash_root(&self) -> Hash256 {
        tree_hash::mix_in_length(&Hash256::from(self.data_root()), self.len)
    }
}

#[cfg(feature = "arbitrary")]
impl<'a, T, N> arbitrary::Arbitrary<'a> for PackedList<T, N>
where
    T: PackedValue + arbitrary::Arbitrary<'a>,
    N: Unsigned,
{
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let len = u.arbitrary_len::<T>()?.min(N::to_usize());
        let mut list = Self::empty();
        for _ in 0..len {
            list.push(u.arbitrary()?)
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        }
        Ok(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use typenum::{U4, U16, U1099511627776};

    type Limit = U1099511627776;

    /// The reference's own two-chunk hash, independent of [`hash_pair_fast`].
    fn reference_hash(left: &Chunk, right: &Chunk) -> Chunk {
        ethereum_hashing::hash32_concat(left, right)
    }

    fn reference_zero_hash(depth: usize) -> Chunk {
        (0..depth).fold([0; CHUNK_LEN], |h, _| reference_hash(&h, &h))
    }

    #[test]
    fn hash_pair_is_sha256_of_the_concatenation() {
        for (l, r) in [
            ([0u8; 32], [0u8; 32]),
            ([1; 32], [2; 32]),
            ([0xff; 32], [0x80; 32]),
        ] {
            assert_eq!(hash_pair_fast(&l, &r), reference_hash(&l, &r));
        }
        for d in 0..40 {
            assert_eq!(*zero_hash(d), reference_zero_hash(d));
        }
    }

    /// A clone shares every page: the memory tracker counts only its own pointers and upper
    /// levels. A write copies one page, which the tracker then counts for the copy alone.
    #[test]
    fn memory_is_counted_once_per_shared_page() {
        let page_size = std::mem::size_of::<Page>() + 2 * std::mem::size_of::<usize>();
        let list = PackedList::<u64, Limit>::try_from_iter(0..10_000u64).unwrap();
        let _ = list.tree_hash_root();
        let pages = 10_000usize.div_ceil(PackedList::<u64, Limit>::PER_PAGE);
        let mut tracker = milhouse::mem::MemoryTracker::default();
        let first = tracker.track_item(&list);
        assert_eq!(first.total_size, first.differential_size);
        assert!(first.total_size >= pages * page_size, "{first:?}");

        let mut copy = list.clone();
        let mut tracker_with_copy = tracker.clone();
        let shared = tracker_with_copy.track_item(&copy);
        assert!(shared.differential_size < page_size, "{shared:?}");

        copy.set(5_000, 1).unwrap();
        let written = tracker.track_item(&copy);
        assert!(
            written.differential_size >= page_size && written.differential_size < 2 * page_size,
            "{written:?}"
        );
    }

    /// A flat reference: pack, pad to the limit's depth with zero chunks, mix in the length.
    fn naive_root<T: PackedValue>(values: &[T], limit: usize) -> Hash256 {
        let mut bytes = Vec::new();
        for v in values {
            let mut b = vec![0; T::SIZE];
            v.write_le(&mut b);
            bytes.extend_from_slice(&b);
        }
        let limit_chunks = (limit * T::SIZE).div_ceil(CHUNK_LEN);
        let depth = limit_chunks.next_power_of_two().trailing_zeros() as usize;
        let mut layer: Vec<Chunk> = bytes
            .chunks(CHUNK_LEN)
            .map(|c| {
                let mut chunk = [0; CHUNK_LEN];
                chunk[..c.len()].copy_from_slice(c);
                chunk
            })
            .collect();
        for d in 0..depth {
            if layer.is_empty() {
                layer.push(reference_zero_hash(d));
            }
            if layer.len() % 2 == 1 {
                layer.push(reference_zero_hash(d));
            }
            layer = layer
                .chunks(2)
                .map(|pair| reference_hash(&pair[0], &pair[1]))
                .collect();
        }
        let root = layer.first().copied().unwrap_or(reference_zero_hash(depth));
        tree_hash::mix_in_length(&Hash256::from(root), values.len())
    }

    #[test]
    fn parent_mask_pairs_bits() {
        assert_eq!(parent_mask(0), 0);
        assert_eq!(parent_mask(0b11), 0b1);
        assert_eq!(parent_mask(0b100), 0b10);
        assert_eq!(parent_mask(1 << 63), 1 << 31);
        assert_eq!(parent_mask(u64::MAX), u32::MAX as u64);
    }

    #[test]
    fn roots_match_the_flat_reference_around_page_and_node_boundaries() {
        let per_page_u64 = PAGE_CHUNKS * 4;
        let per_page_u8 = PAGE_CHUNKS * 32;
        for len in [
            0,
            1,
            3,
            4,
            5,
            per_page_u64 - 1,
            per_page_u64,
            per_page_u64 + 1,
            2 * per_page_u64 + 1,
            5 * per_page_u64 + 3,
            64 * per_page_u64 + 1,
        ] {
            let values: Vec<u64> = (0..len as u64).map(|i| i * 0x9e37_79b9 + 1).collect();
            let list = PackedList::<u64, Limit>::new(values.clone()).unwrap();
            assert_eq!(
                list.tree_hash_root(),
                naive_root(&values, Limit::to_usize()),
                "u64 len {len}"
            );
        }
        for len in [
            0,
            1,
            31,
            32,
            33,
            per_page_u8 - 1,
            per_page_u8,
            per_page_u8 + 1,
            3 * per_page_u8 + 7,
        ] {
            let values: Vec<u8> = (0..len).map(|i| (i % 7) as u8).collect();
            let list = PackedList::<u8, Limit>::new(values.clone()).unwrap();
            assert_eq!(
                list.tree_hash_root(),
                naive_root(&values, Limit::to_usize()),
                "u8 len {len}"
            );
        }
    }

    #[test]
    fn small_limits_use_the_limit_depth() {
        let values = vec![1u64, 2, 3];
        let list = PackedList::<u64, U4>::new(values.clone()).unwrap();
        assert_eq!(list.tree_hash_root(), naive_root(&values, 4));
        let list = PackedList::<u64, U16>::new(values.clone()).unwrap();
        assert_eq!(list.tree_hash_root(), naive_root(&values, 16));
        assert_eq!(
            PackedList::<u64, U4>::new(vec![0; 5]),
            Err(Error::Full { limit: 4 })
        );
    }

    #[test]
    fn writes_after_a_clone_do_not_leak_into_it() {
        let mut a = PackedList::<u64, Limit>::new((0..2000).collect()).unwrap();
        let root_a = a.tree_hash_root();
        let mut b = a.clone();
        b.set(1500, 7).unwrap();
        b.push(99).unwrap();
        assert_eq!(a.tree_hash_root(), root_a);
        assert_eq!(a.get(1500), Some(1500));
        let mut expected: Vec<u64> = (0..2000).collect();
        expected[1500] = 7;
        expected.push(99);
        assert_eq!(b.to_vec(), expected);
        assert_eq!(b.tree_hash_root(), naive_root(&expected, Limit::to_usize()));
        a.set(0, 5).unwrap();
        assert_eq!(b.get(0), Some(0));
    }

    #[test]
    fn out_of_bounds_and_bad_bytes_are_errors() {
        let mut list = PackedList::<u64, U4>::new(vec![1, 2]).unwrap();
        assert_eq!(list.set(2, 0), Err(Error::OutOfBounds { index: 2, len: 2 }));
        assert_eq!(list.get(2), None);
        assert!(PackedList::<u64, U4>::from_ssz_bytes(&[0; 7]).is_err());
        assert!(PackedList::<u64, U4>::from_ssz_bytes(&[0; 40]).is_err());
        assert!(
            PackedList::<u64, U4>::from_ssz_bytes(&[])
                .unwrap()
                .is_empty()
        );
    }

    /// Lengths around every leaf, page and node boundary up to 2^20 + 1, for both value sizes:
    /// built at once, built by pushes onto a hashed list, and after scattered writes.
    #[test]
    fn boundary_lengths_match_the_reference_after_pushes_and_writes() {
        let mut lengths = vec![0usize, 1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65];
        for k in 7..=20 {
            lengths.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
        }
        fn check<T: PackedValue>(len: usize, value: impl Fn(usize) -> T) {
            let values: Vec<T> = (0..len).map(&value).collect();
            let expected = naive_root(&values, Limit::to_usize());
            let list = PackedList::<T, Limit>::new(values.clone()).unwrap();
            assert_eq!(list.tree_hash_root(), expected, "new, len {len}");

            // Half built, hashed, then the rest pushed.
            let mut pushed = PackedList::<T, Limit>::new(values[..len / 2].to_vec()).unwrap();
            let _ = pushed.tree_hash_root();
            for v in &values[len / 2..] {
                pushed.push(*v).unwrap();
            }
            assert_eq!(pushed.tree_hash_root(), expected, "pushed, len {len}");

            // Scattered writes on a clone of the hashed list.
            let mut written = list.clone();
            let mut reference = values;
            for k in 0..len.min(997) {
                let i = (k * 7919 + 13) % len;
                let v = value(i + 1_000_003);
                written.set(i, v).unwrap();
                reference[i] = v;
            }
            assert_eq!(
                written.tree_hash_root(),
                naive_root(&reference, Limit::to_usize()),
                "written, len {len}"
            );
            assert_eq!(
                list.tree_hash_root(),
                expected,
                "the original is untouched, len {len}"
            );
        }
        for &len in &lengths {
            check::<u64>(len, |i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            check::<u8>(len, |i| (i % 251) as u8);
        }
    }

    proptest! {
        #[test]
        fn scattered_writes_and_pushes_match_the_reference(
            initial in prop::collection::vec(any::<u64>(), 0..3000),
            writes in prop::collection::vec((any::<usize>(), any::<u64>()), 0..200),
            pushes in prop::collection::vec(any::<u64>(), 0..300),
            hash_midway in any::<bool>(),
        ) {
            let mut reference = initial.clone();
            let mut list = PackedList::<u64, Limit>::new(initial).unwrap();
            if hash_midway {
                prop_assert_eq!(list.tree_hash_root(), naive_root(&reference, Limit::to_usize()));
            }
            for (i, v) in writes {
                if !reference.is_empty() {
                    let i = i % reference.len();
                    reference[i] = v;
                    list.set(i, v).unwrap();
                }
            }
            let snapshot = list.clone();
            let snapshot_values = reference.clone();
            for v in pushes {
                reference.push(v);
                list.push(v).unwrap();
            }
            prop_assert_eq!(list.tree_hash_root(), naive_root(&reference, Limit::to_usize()));
            prop_assert_eq!(snapshot.tree_hash_root(), naive_root(&snapshot_values, Limit::to_usize()));
            prop_assert_eq!(list.to_vec(), reference.clone());
            let bytes = list.as_ssz_bytes();
            let mut written = Vec::new();
            list.ssz_write(&mut written).unwrap();
            prop_assert_eq!(&written, &bytes);
            let decoded = PackedList::<u64, Limit>::from_ssz_bytes(&bytes).unwrap();
            prop_assert_eq!(decoded.tree_hash_root(), list.tree_hash_root());
            prop_assert_eq!(decoded, list);
        }

        #[test]
        fn u8_lists_match_the_reference(
            initial in prop::collection::vec(any::<u8>(), 0..5000),
            writes in prop::collection::vec((any::<usize>(), any::<u8>()), 0..300),
        ) {
            let mut reference = initial.clone();
            let mut list = PackedList::<u8, Limit>::new(initial).unwrap();
            let _ = list.tree_hash_root();
            for (i, v) in writes {
                if !reference.is_empty() {
                    let i = i % reference.len();
                    reference[i] = v;
                    list.set(i, v).unwrap();
                }
            }
            prop_assert_eq!(list.tree_hash_root(), naive_root(&reference, Limit::to_usize()));
        }
    }
}
