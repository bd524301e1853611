//! The progressive Merkle tree of a packed list: its pages in one flat vector, the levels above
//! them cached per subtree.
//!
//! Packed lists (balances, participation flags, inactivity scores) take tens of thousands of
//! scattered writes per block. In the branch tree of `tree.rs` each of them walks and
//! copy-on-writes ~10 `Arc`'d branches; here a write is one `Arc::make_mut` of its page, found
//! by index, and one dirty bit, as in `packed_list::PackedList` (which the Fulu state uses).
//! A clone copies one pointer per page (≈ 3,900 for 1,000,000 `u64`s, 490 for as many `u8`s)
//! and the cached levels above them (≈ 2 chunks per page), again as `PackedList` does.
//!
//! Subtree `k` (`4^k` chunks) holds pages of `min(4^k, P::MAX_WIDTH)` chunks; its pages follow
//! those of subtree `k - 1` in the vector. A root hashes the written pages (on rayon when there
//! are several), then only the nodes above them, subtree by subtree, then the spine.
//!
//! [spec]: ssz/simple-serialize.md#merkleization (merkleize_progressive, EIP-7916)

use std::sync::{Arc, Mutex, PoisonError};

use milhouse::mem::MemorySize;
use rayon::prelude::*;

use crate::hash::{Chunk, hash_pair, hash_pairs_x2, zero_hash};
use crate::tree::{Page, locate, page_log2};

/// Written pages hashed on rayon only from this many: below it rayon's overhead dominates.
const PARALLEL_PAGES: usize = 8;

fn unpoison<T>(result: Result<T, PoisonError<T>>) -> T {
    // The cache is brought up to date before the dirty bits are cleared, so a panic while the
    // lock was held leaves at worst nodes that the next root recomputes.
    result.unwrap_or_else(PoisonError::into_inner)
}

/// Levels of branches above the pages of subtree `k`.
fn branch_height<P: Page>(subtree: usize) -> usize {
    2 * subtree - page_log2::<P>(subtree)
}

/// The pages of subtree `k`.
fn pages_in<P: Page>(subtree: usize) -> usize {
    1 << branch_height::<P>(subtree)
}

/// The index of subtree `k`'s first page in the flat vector. Subtrees up to `m` (where
/// `4^m = P::MAX_WIDTH` chunks) are one page each, subtree `m + j` is `4^j` pages.
fn first_page<P: Page>(subtree: usize) -> usize {
    let m = P::MAX_WIDTH.trailing_zeros() as usize / 2;
    debug_assert_eq!(1 << (2 * m), P::MAX_WIDTH, "pages of a power of 4 chunks");
    if subtree <= m + 1 {
        subtree
    } else {
        m + 1 + ((1 << (2 * (subtree - m))) - 4) / 3
    }
}

/// `m` with `4^m = P::MAX_WIDTH`: subtrees `0..=m` are one page each, wider ones are pages of
/// `P::MAX_WIDTH` chunks.
fn one_page_subtrees<P: Page>() -> usize {
    P::MAX_WIDTH.trailing_zeros() as usize / 2
}

/// The width in chunks of page `page` of the flat vector.
fn page_width<P: Page>(page: usize) -> usize {
    if page <= one_page_subtrees::<P>() {
        1 << (2 * page)
    } else {
        P::MAX_WIDTH
    }
}

/// Where a chunk lives in the flat vector: its page and its index within the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// Index of the page in the flat vector.
    pub(crate) page: usize,
    /// Chunk index within the page.
    pub(crate) chunk: usize,
}

/// Where chunk `chunk` lives. Past the one-page subtrees every page is full width and the pages
/// follow each other in chunk order, so this is a subtraction and a shift (a write to a packed
/// list computes it once).
pub(crate) fn locate_chunk<P: Page>(chunk: usize) -> Slot {
    let m = one_page_subtrees::<P>();
    // Chunks in subtrees 0..=m: (4^(m + 1) - 1) / 3.
    let small = ((1 << (2 * (m + 1))) - 1) / 3;
    match chunk.checked_sub(small) {
        Some(past) => Slot {
            page: m + 1 + past / P::MAX_WIDTH,
            chunk: past % P::MAX_WIDTH,
        },
        None => {
            let position = locate::<P>(chunk);
            Slot {
                page: position.subtree,
                chunk: position.chunk,
            }
        }
    }
}

/// The cached nodes above the pages.
#[derive(Clone, Default)]
struct Upper {
    /// `levels[k][h][i]`: node `i` at `h` levels above the pages of subtree `k` (`h = 0`: the
    /// page roots). A level holds only the nodes above stored pages; missing right children
    /// are zero subtrees.
    levels: Vec<Vec<Vec<Chunk>>>,
    /// Bit `p % 64` of word `p / 64`: page `p` was written since the last root.
    dirty: Vec<u64>,
    /// `merkleize_progressive` of the chunks, absent after a write.
    root: Option<Chunk>,
}

impl Upper {
    fn mark(&mut self, page: usize) {
        let word = page / 64;
        if self.dirty.len() <= word {
            self.dirty.resize(word + 1, 0);
        }
        self.dirty[word] |= 1 << (page % 64);
        self.root = None;
    }

    /// The written pages below `pages`, in order; clears the bits.
    fn take_dirty(&mut self, pages: usize) -> Vec<usize> {
        let mut written = Vec::new();
        for (w, word) in self.dirty.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                let page = w * 64 + bits.trailing_zeros() as usize;
                if page < pages {
                    written.push(page);
                }
                bits &= bits - 1;
            }
        }
        written
    }
}

/// The pages of a progressive tree in one vector, with the cached levels above them.
pub(crate) struct Flat<P> {
    /// Every stored page, in chunk order.
    pages: Vec<Arc<P>>,
    upper: Mutex<Upper>,
}

impl<P> Clone for Flat<P> {
    fn clone(&self) -> Self {
        Flat {
            pages: self.pages.clone(),
            upper: Mutex::new(unpoison(self.upper.lock()).clone()),
        }
    }
}

impl<P: Page> Default for Flat<P> {
    fn default() -> Self {
        Flat {
            pages: Vec::new(),
            upper: Mutex::new(Upper::default()),
        }
    }
}

impl<P: Page> Flat<P> {
    /// A tree of the pages that `fill` returns, given each page's width in chunks, in order,
    /// until it returns `None`. Every page but the last must be full.
    pub(crate) fn build(mut fill: impl FnMut(usize) -> Option<P>) -> Self {
        let mut pages = Vec::new();
        'subtrees: for subtree in 0.. {
            let width = 1 << page_log2::<P>(subtree);
            for _ in 0..pages_in::<P>(subtree) {
                match fill(width) {
                    Some(page) => pages.push(Arc::new(page)),
                    None => break 'subtrees,
                }
            }
        }
        let mut upper = Upper::default();
        for page in 0..pages.len() {
            upper.mark(page);
        }
        Flat {
            pages,
            upper: Mutex::new(upper),
        }
    }

    /// The page at `slot`, if one is stored.
    pub(crate) fn page(&self, slot: Slot) -> Option<&P> {
        self.pages.get(slot.page).map(|page| &**page)
    }

    /// The page at `slot` for writing: missing pages up to it are created (`empty` makes a page
    /// of the given width), a shared one copied, and its root cleared. The caller marks what it
    /// changes inside the page.
    pub(crate) fn page_mut(&mut self, slot: Slot, empty: impl Fn(usize) -> P) -> &mut P {
        let upper = unpoison(self.upper.get_mut());
        while self.pages.len() <= slot.page {
            let new = self.pages.len();
            self.pages.push(Arc::new(empty(page_width::<P>(new))));
            upper.mark(new);
        }
        upper.mark(slot.page);
        Arc::make_mut(&mut self.pages[slot.page])
    }

    /// The pages, in chunk order.
    pub(crate) fn pages(&self) -> Vec<&P> {
        self.pages.iter().map(|page| &**page).collect()
    }

    /// Drops the subtrees that hold none of the first `chunks` chunks (see
    /// `Progressive::truncate`).
    pub(crate) fn truncate(&mut self, chunks: usize) {
        let keep = match chunks.checked_sub(1) {
            Some(last) => locate::<P>(last).subtree + 1,
            None => 0,
        };
        let pages = first_page::<P>(keep);
        if self.pages.len() > pages {
            self.pages.truncate(pages);
            let upper = unpoison(self.upper.get_mut());
            upper.levels.truncate(keep);
            upper.root = None;
        }
    }

    /// `merkleize_progressive` of the chunks, recomputing only the written pages and the nodes
    /// above them.
    pub(crate) fn root(&self) -> Chunk {
        let mut guard = unpoison(self.upper.lock());
        let upper = &mut *guard;
        if let Some(root) = upper.root {
            return root;
        }
        let dirty = upper.take_dirty(self.pages.len());
        let pages = &self.pages;
        let roots: Vec<(usize, Chunk)> = if dirty.len() >= PARALLEL_PAGES {
            dirty.par_iter().map(|&p| (p, pages[p].root())).collect()
        } else {
            dirty.iter().map(|&p| (p, pages[p].root())).collect()
        };

        // Subtree by subtree: the written pages' roots, then the nodes above them.
        let mut roots = roots.into_iter().peekable();
        let mut start = 0;
        let mut subtree = 0;
        while start < pages.len() {
            let count = pages_in::<P>(subtree).min(pages.len() - start);
            let height = branch_height::<P>(subtree);
            let log2 = page_log2::<P>(subtree);
            if upper.levels.len() <= subtree {
                upper.levels.push(Vec::new());
            }
            let levels = &mut upper.levels[subtree];
            levels.resize_with(height + 1, Vec::new);
            for (h, level) in levels.iter_mut().enumerate() {
                level.resize(count.div_ceil(1 << h), [0; 32]);
            }
            let mut indices = Vec::new();
            while let Some(&(p, root)) = roots.peek() {
                if p >= start + count {
                    break;
                }
                levels[0][p - start] = root;
                indices.push(p - start);
                roots.next();
            }
            for h in 1..=height {
                for i in &mut indices {
                    *i /= 2;
                }
                indices.dedup();
                let (below, above) = levels.split_at_mut(h);
                hash_parents(
                    &indices,
                    &below[h - 1],
                    zero_hash(h - 1 + log2),
                    &mut above[0],
                );
            }
            start += count;
            subtree += 1;
        }

        let mut root = [0; 32];
        for levels in upper.levels[..subtree].iter().rev() {
            let subtree_root = levels.last().and_then(|level| level.first());
            root = hash_pair(subtree_root.unwrap_or(&[0; 32]), &root);
        }
        upper.root = Some(root);
        root
    }

    /// The pages, for memory accounting.
    pub(crate) fn memory_subtrees(&self) -> Vec<&dyn MemorySize> {
        self.pages
            .iter()
            .map(|page| &**page as &dyn MemorySize)
            .collect()
    }

    /// Bytes held by this list alone: the page pointers and the cached levels.
    pub(crate) fn intrinsic_size(&self) -> usize {
        let upper = unpoison(self.upper.lock());
        let nodes: usize = upper
            .levels
            .iter()
            .flatten()
            .map(|level| level.capacity())
            .sum();
        self.pages.capacity() * std::mem::size_of::<Arc<P>>()
            + nodes * std::mem::size_of::<Chunk>()
            + upper.dirty.capacity() * std::mem::size_of::<u64>()
    }
}

/// `parents[i] = hash(children[2i], children[2i + 1])` for every `i` in `indices` (sorted), the
/// right child being `zero` past the end of `children`; two at a time through the interleaved
/// SHA-256.
fn hash_parents(indices: &[usize], children: &[Chunk], zero: &Chunk, parents: &mut [Chunk]) {
    let pair = |i: usize| (&children[2 * i], children.get(2 * i + 1).unwrap_or(zero));
    let mut pairs = indices.chunks_exact(2);
    for two in &mut pairs {
        let (a, b) = (two[0], two[1]);
        (parents[a], parents[b]) = hash_pairs_x2(pair(a), pair(b));
    }
    for &i in pairs.remainder() {
        let (left, right) = pair(i);
        parents[i] = hash_pair(left, right);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::PackedPage;

    /// The shortcut of `locate_chunk` agrees with the subtree layout.
    #[test]
    fn locate_chunk_follows_the_subtrees() {
        for chunk in (0..200_000).chain([5_592_404, 5_592_405, 5_592_406]) {
            let position = locate::<PackedPage>(chunk);
            let slot = locate_chunk::<PackedPage>(chunk);
            assert_eq!(
                slot,
                Slot {
                    page: first_page::<PackedPage>(position.subtree) + position.page,
                    chunk: position.chunk,
                },
                "chunk {chunk}"
            );
            assert_eq!(
                page_width::<PackedPage>(slot.page),
                1 << page_log2::<PackedPage>(position.subtree)
            );
        }
    }
}
