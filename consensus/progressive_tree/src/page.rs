//! The two page types: packed chunks of basic values, and elements with their cached roots.
//!
//! A page holds up to 64 chunks and caches the inner nodes of its own subtree with a bitmask of
//! the chunks written since, so a root after a write recomputes `log2(width)` nodes, not the
//! page. The cache sits behind a `Mutex` because roots are computed through `&self`; it is never
//! held while anything else is locked or while rayon runs, so it cannot deadlock.

use std::sync::{Mutex, PoisonError};

use milhouse::mem::MemorySize;
use tree_hash::TreeHash;

use crate::hash::{CHUNK_LEN, Chunk, hash_pair, hash_pairs_x2};
use crate::tree::Page;

/// Chunks per packed page: 2 KiB of values, and every level of the page fits a `u64` mask.
pub(crate) const PACKED_PAGE_CHUNKS: usize = 64;
/// Elements per element page: small, because a write to a page shared with a clone copies all
/// its elements.
pub(crate) const ELEMENT_PAGE_CHUNKS: usize = 16;

fn unpoison<T>(result: Result<T, PoisonError<T>>) -> T {
    // Dirty bits are cleared only after every node is written, so a panic while the lock was
    // held leaves at worst nodes that the next root recomputes.
    result.unwrap_or_else(PoisonError::into_inner)
}

/// Brings `nodes` up to date for the chunks in `dirty` and returns the page root.
///
/// `nodes` is in heap order: `nodes[1]` is the root and node `i` has children `2i` and `2i + 1`,
/// where indices `width..2 * width` are `leaves` themselves.
fn update_nodes(width: usize, leaves: &[Chunk], nodes: &mut [Chunk], dirty: u64) -> Chunk {
    if width == 1 {
        return leaves[0];
    }
    let child = |nodes: &[Chunk], i: usize| -> Chunk {
        if i >= width {
            leaves[i - width]
        } else {
            nodes[i]
        }
    };
    let mut mask = dirty;
    let mut level_width = width;
    while level_width > 1 {
        // Dirty nodes of this level, by their index within it, become dirty parents.
        let mut parents = 0u64;
        let mut bits = mask;
        while bits != 0 {
            parents |= 1 << (bits.trailing_zeros() / 2);
            bits &= bits - 1;
        }
        level_width /= 2;
        // Nodes of one level are independent: two at a time through the interleaved hash.
        let mut bits = parents;
        while bits != 0 {
            let a = level_width + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if bits == 0 {
                nodes[a] = hash_pair(&child(nodes, 2 * a), &child(nodes, 2 * a + 1));
                break;
            }
            let b = level_width + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (left_a, right_a) = (child(nodes, 2 * a), child(nodes, 2 * a + 1));
            let (left_b, right_b) = (child(nodes, 2 * b), child(nodes, 2 * b + 1));
            (nodes[a], nodes[b]) = hash_pairs_x2((&left_a, &right_a), (&left_b, &right_b));
        }
        mask = parents;
    }
    nodes[1]
}

fn all_bits(width: usize) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// The cached inner nodes of a packed page.
#[derive(Clone)]
struct PackedCache {
    nodes: [Chunk; PACKED_PAGE_CHUNKS],
    /// Chunks written since `nodes` was brought up to date.
    dirty: u64,
}

/// Up to [`PACKED_PAGE_CHUNKS`] chunks of packed values; bytes past the list's end are zero.
pub(crate) struct PackedPage {
    chunks: [Chunk; PACKED_PAGE_CHUNKS],
    width: usize,
    cache: Mutex<PackedCache>,
}

impl PackedPage {
    /// A zeroed page of `width` chunks.
    pub(crate) fn new(width: usize) -> Self {
        PackedPage {
            chunks: [[0; CHUNK_LEN]; PACKED_PAGE_CHUNKS],
            width,
            cache: Mutex::new(PackedCache {
                nodes: [[0; CHUNK_LEN]; PACKED_PAGE_CHUNKS],
                dirty: all_bits(width),
            }),
        }
    }

    /// The page's `width * 32` bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.chunks[..self.width].as_flattened()
    }

    /// The page's bytes for writing; the caller marks the chunks it changes.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        self.chunks[..self.width].as_flattened_mut()
    }

    /// Records that chunk `chunk` changed.
    pub(crate) fn mark(&mut self, chunk: usize) {
        unpoison(self.cache.get_mut()).dirty |= 1 << chunk;
    }
}

impl Clone for PackedPage {
    fn clone(&self) -> Self {
        PackedPage {
            chunks: self.chunks,
            width: self.width,
            cache: Mutex::new(unpoison(self.cache.lock()).clone()),
        }
    }
}

impl Page for PackedPage {
    const MAX_WIDTH: usize = PACKED_PAGE_CHUNKS;

    fn root(&self) -> Chunk {
        let mut cache = unpoison(self.cache.lock());
        let cache = &mut *cache;
        if cache.dirty == 0 && self.width > 1 {
            return cache.nodes[1];
        }
        let root = update_nodes(self.width, &self.chunks, &mut cache.nodes, cache.dirty);
        cache.dirty = 0;
        root
    }
}

/// Memory accounting: a page is counted once however many lists share it.
impl MemorySize for PackedPage {
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

/// The cached element roots and inner nodes of an element page.
#[derive(Clone)]
pub(crate) struct ElementCache {
    /// `leaves[j]` is element `j`'s root unless bit `j` of `stale` is set; zero past the end.
    leaves: [Chunk; ELEMENT_PAGE_CHUNKS],
    nodes: [Chunk; ELEMENT_PAGE_CHUNKS],
    /// Elements whose root must be recomputed.
    stale: u64,
    /// Leaves changed since `nodes` was brought up to date.
    dirty: u64,
}

/// Up to [`ELEMENT_PAGE_CHUNKS`] elements, each one chunk (its root) of the list's tree.
pub(crate) struct ElementPage<T> {
    values: Vec<T>,
    width: usize,
    cache: Mutex<ElementCache>,
}

impl<T> ElementPage<T> {
    /// An empty page of `width` chunks.
    pub(crate) fn new(width: usize) -> Self {
        ElementPage {
            values: Vec::with_capacity(width),
            width,
            cache: Mutex::new(ElementCache {
                leaves: [[0; CHUNK_LEN]; ELEMENT_PAGE_CHUNKS],
                nodes: [[0; CHUNK_LEN]; ELEMENT_PAGE_CHUNKS],
                stale: 0,
                dirty: all_bits(width),
            }),
        }
    }

    /// Whether every slot holds an element.
    pub(crate) fn is_full(&self) -> bool {
        self.values.len() == self.width
    }

    /// The elements.
    pub(crate) fn values(&self) -> &[T] {
        &self.values
    }

    /// Element `j` for writing; its root is recomputed at the next root.
    pub(crate) fn get_mut(&mut self, j: usize) -> Option<&mut T> {
        let value = self.values.get_mut(j)?;
        let cache = unpoison(self.cache.get_mut());
        cache.stale |= 1 << j;
        cache.dirty |= 1 << j;
        Some(value)
    }

    /// Appends `value`, whose root is `root` when known. The page must not be full.
    pub(crate) fn push(&mut self, value: T, root: Option<Chunk>) {
        let j = self.values.len();
        debug_assert!(j < self.width, "push onto a full page");
        self.values.push(value);
        let cache = unpoison(self.cache.get_mut());
        match root {
            Some(root) => cache.leaves[j] = root,
            None => cache.stale |= 1 << j,
        }
        cache.dirty |= 1 << j;
    }

    /// Removes and returns the last element; its slot hashes as a zero chunk again.
    pub(crate) fn pop(&mut self) -> Option<T> {
        let value = self.values.pop()?;
        let j = self.values.len();
        let cache = unpoison(self.cache.get_mut());
        cache.leaves[j] = [0; CHUNK_LEN];
        cache.stale &= !(1 << j);
        cache.dirty |= 1 << j;
        Some(value)
    }

    /// The elements with their cached roots (`None` where stale).
    pub(crate) fn values_with_roots(&self) -> impl Iterator<Item = (&T, Option<Chunk>)> {
        let cache = unpoison(self.cache.lock()).clone();
        self.values
            .iter()
            .enumerate()
            .map(move |(j, v)| (v, (cache.stale >> j & 1 == 0).then_some(cache.leaves[j])))
    }
}

impl<T: Clone> Clone for ElementPage<T> {
    fn clone(&self) -> Self {
        let mut values = Vec::with_capacity(self.width);
        values.extend_from_slice(&self.values);
        ElementPage {
            values,
            width: self.width,
            cache: Mutex::new(unpoison(self.cache.lock()).clone()),
        }
    }
}

impl<T: TreeHash + Clone + Send + Sync> Page for ElementPage<T> {
    const MAX_WIDTH: usize = ELEMENT_PAGE_CHUNKS;

    fn root(&self) -> Chunk {
        let mut cache = unpoison(self.cache.lock());
        let cache = &mut *cache;
        let mut stale = cache.stale;
        while stale != 0 {
            let j = stale.trailing_zeros() as usize;
            cache.leaves[j] = self.values[j].tree_hash_root().0;
            stale &= stale - 1;
        }
        cache.stale = 0;
        if cache.dirty == 0 && self.width > 1 {
            return cache.nodes[1];
        }
        let root = update_nodes(self.width, &cache.leaves, &mut cache.nodes, cache.dirty);
        cache.dirty = 0;
        root
    }
}

/// Memory accounting: a page is counted once however many lists share it. Heap memory owned by
/// the elements themselves is not counted (the beacon state's element types own none).
impl<T> MemorySize for ElementPage<T> {
    fn self_pointer(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn subtrees(&self) -> Vec<&dyn MemorySize> {
        Vec::new()
    }

    fn intrinsic_size(&self) -> usize {
        std::mem::size_of::<Self>()
            + 2 * std::mem::size_of::<usize>()
            + self.values.capacity() * std::mem::size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(leaves: &[Chunk]) -> Chunk {
        let mut level = leaves.to_vec();
        while level.len() > 1 {
            level = level.chunks(2).map(|p| hash_pair(&p[0], &p[1])).collect();
        }
        level[0]
    }

    #[test]
    fn page_nodes_follow_partial_updates() {
        for width in [1usize, 2, 4, 16, 64] {
            let mut leaves: Vec<Chunk> = (0..width).map(|i| [i as u8; 32]).collect();
            let mut nodes = [[0u8; 32]; 64];
            assert_eq!(
                update_nodes(width, &leaves, &mut nodes, all_bits(width)),
                naive(&leaves)
            );
            leaves[width - 1] = [0xaa; 32];
            leaves[width / 2] = [0xbb; 32];
            let dirty = 1 << (width - 1) | 1 << (width / 2);
            assert_eq!(
                update_nodes(width, &leaves, &mut nodes, dirty),
                naive(&leaves)
            );
        }
    }
}
