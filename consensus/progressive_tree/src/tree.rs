//! The progressive Merkle tree: a chain of persistent binary subtrees of 1, 4, 16, … chunks.
//!
//! Subtree `k` covers chunks `(4^k - 1) / 3 .. (4^(k+1) - 1) / 3`. Its bottom `log2(page width)`
//! levels live inside *pages* (a page type caches its own inner nodes); above the pages it is a
//! tree of `Arc`'d branches, each with its hash cached in a `OnceLock`. Writes copy the branches
//! on their path that are shared with a clone (`Arc::make_mut`) and clear their hashes; a root
//! recomputes only branches without a hash, large independent halves on rayon.
//!
//! [spec]: ssz/simple-serialize.md#merkleization (merkleize_progressive, EIP-7916)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use milhouse::mem::MemorySize;

use crate::hash::{Chunk, hash_pair, hash_pairs_x2, zero_hash};

/// Branches at least this many levels above the pages hash their two halves in parallel when
/// both need it: `2^6` pages is thousands of hashes from scratch, well above rayon's overhead.
const PARALLEL_HEIGHT: usize = 6;
/// Roots go parallel only after at least this many page writes: a block's few hundred scattered
/// writes leave too little work per branch for rayon (measured slower than one thread).
const PARALLEL_WRITES: usize = 4096;

/// The leaves of a subtree: a run of chunks that caches its own inner nodes.
pub(crate) trait Page: Clone + Send + Sync + MemorySize {
    /// The widest page, in chunks (a power of two).
    const MAX_WIDTH: usize;

    /// The root of the page's `width` chunks (zero chunks past its contents).
    fn root(&self) -> Chunk;
}

/// A node of a subtree: all zero, a page, or a branch.
pub(crate) enum Node<P> {
    /// A subtree of zero chunks (nothing stored).
    Zero,
    /// A page of chunks (a node at height 0).
    Page(Arc<P>),
    /// Two children and their cached hash.
    Branch(Arc<Branch<P>>),
}

impl<P> Clone for Node<P> {
    fn clone(&self) -> Self {
        match self {
            Node::Zero => Node::Zero,
            Node::Page(page) => Node::Page(Arc::clone(page)),
            Node::Branch(branch) => Node::Branch(Arc::clone(branch)),
        }
    }
}

/// An inner node above the pages.
pub(crate) struct Branch<P> {
    /// `hash(left, right)`, absent after a write below.
    hash: OnceLock<Chunk>,
    left: Node<P>,
    right: Node<P>,
}

impl<P> Clone for Branch<P> {
    fn clone(&self) -> Self {
        Branch {
            hash: self.hash.clone(),
            left: self.left.clone(),
            right: self.right.clone(),
        }
    }
}

impl<P: Page> Node<P> {
    fn branch(left: Node<P>, right: Node<P>) -> Self {
        if matches!((&left, &right), (Node::Zero, Node::Zero)) {
            return Node::Zero;
        }
        Node::Branch(Arc::new(Branch {
            hash: OnceLock::new(),
            left,
            right,
        }))
    }

    /// Whether the node is a branch without a cached hash.
    fn needs_hash(&self) -> bool {
        matches!(self, Node::Branch(branch) if branch.hash.get().is_none())
    }

    /// The root of this node, `height` levels above pages of `2^page_log2` chunks. With
    /// `parallel`, the two halves of tall branches that both need hashing go to rayon.
    fn root(&self, height: usize, page_log2: usize, parallel: bool) -> Chunk {
        let branch = match self {
            Node::Zero => return *zero_hash(height + page_log2),
            Node::Page(page) => return page.root(),
            Node::Branch(branch) => branch,
        };
        if let Some(hash) = branch.hash.get() {
            return *hash;
        }
        if !(parallel
            && height >= PARALLEL_HEIGHT
            && branch.left.needs_hash()
            && branch.right.needs_hash())
        {
            return branch.root_by_levels(height, page_log2);
        }
        // No lock is held while the children are hashed (a `OnceLock` is only set afterwards),
        // so rayon may steal any work here without risking a deadlock on a node shared with
        // another list hashed at the same time.
        let below = height - 1;
        let (left, right) = rayon::join(
            || branch.left.root(below, page_log2, parallel),
            || branch.right.root(below, page_log2, parallel),
        );
        let hash = hash_pair(&left, &right);
        // Another thread may have set the same value meanwhile.
        let _ = branch.hash.set(hash);
        hash
    }

    /// Appends the pages under this node to `out`, left to right.
    fn collect_pages<'a>(&'a self, out: &mut Vec<&'a P>) {
        match self {
            Node::Zero => {}
            Node::Page(page) => out.push(page),
            Node::Branch(branch) => {
                branch.left.collect_pages(out);
                branch.right.collect_pages(out);
            }
        }
    }
}

impl<P: Page> Branch<P> {
    /// This branch's root, `height` levels above the pages, computed level by level from the
    /// bottom: the branches without a hash are gathered per level first, so that any two of
    /// one level (on different paths, too) go through the two-lane hash together.
    fn root_by_levels(&self, height: usize, page_log2: usize) -> Chunk {
        let mut levels: Vec<Vec<&Branch<P>>> = vec![Vec::new(); height + 1];
        levels[height].push(self);
        for h in (2..=height).rev() {
            let (lower, upper) = levels.split_at_mut(h);
            for branch in &upper[0] {
                for child in [&branch.left, &branch.right] {
                    if let Node::Branch(child) = child
                        && child.hash.get().is_none()
                    {
                        lower[h - 1].push(child);
                    }
                }
            }
        }
        for (h, level) in levels.iter().enumerate().skip(1) {
            // Children at `h - 1` are pages, zero, or branches hashed at the previous level.
            let child = |node: &Node<P>| node.root(h - 1, page_log2, false);
            let mut pairs = level.chunks_exact(2);
            for pair in &mut pairs {
                let (a, b) = (pair[0], pair[1]);
                let (a_left, a_right) = (child(&a.left), child(&a.right));
                let (b_left, b_right) = (child(&b.left), child(&b.right));
                let (hash_a, hash_b) = hash_pairs_x2((&a_left, &a_right), (&b_left, &b_right));
                let _ = a.hash.set(hash_a);
                let _ = b.hash.set(hash_b);
            }
            for branch in pairs.remainder() {
                let hash = hash_pair(&child(&branch.left), &child(&branch.right));
                let _ = branch.hash.set(hash);
            }
        }
        match self.hash.get() {
            Some(hash) => *hash,
            // Only when `height` is 0, which a branch never is.
            None => hash_pair(
                &self.left.root(height.saturating_sub(1), page_log2, false),
                &self.right.root(height.saturating_sub(1), page_log2, false),
            ),
        }
    }
}

/// Where a chunk lives: its subtree, the page within it and the chunk within the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    /// Subtree `k`, of `4^k` chunks.
    pub(crate) subtree: usize,
    /// Page index within the subtree.
    pub(crate) page: usize,
    /// Chunk index within the page.
    pub(crate) chunk: usize,
}

/// `log2` of the page width in subtree `k`: `min(4^k, P::MAX_WIDTH)` chunks.
pub(crate) fn page_log2<P: Page>(subtree: usize) -> usize {
    (2 * subtree).min(P::MAX_WIDTH.trailing_zeros() as usize)
}

/// Levels of branches above the pages of subtree `k`.
fn branch_height<P: Page>(subtree: usize) -> usize {
    2 * subtree - page_log2::<P>(subtree)
}

/// The first chunk of subtree `k`: `(4^k - 1) / 3`.
fn subtree_start(subtree: usize) -> usize {
    ((1usize << (2 * subtree)) - 1) / 3
}

/// Where chunk `index` lives.
pub(crate) fn locate<P: Page>(index: usize) -> Position {
    // Subtree k holds chunks c with 4^k <= 3c + 1 < 4^(k + 1).
    let scaled = 3 * index as u128 + 1;
    let subtree = ((127 - scaled.leading_zeros()) / 2) as usize;
    let offset = index - subtree_start(subtree);
    let log2 = page_log2::<P>(subtree);
    Position {
        subtree,
        page: offset >> log2,
        chunk: offset & ((1 << log2) - 1),
    }
}

/// The chain of subtrees holding a list's chunks, with the cached root of the chain.
pub(crate) struct Progressive<P> {
    /// Subtree `k` of `4^k` chunks; exactly as many as the chunks in use need.
    subtrees: Vec<Node<P>>,
    /// `merkleize_progressive` of the chunks, absent after a write.
    root: OnceLock<Chunk>,
    /// Page writes since the last root (saturating; a built tree counts as all written).
    writes: AtomicUsize,
}

impl<P> Clone for Progressive<P> {
    fn clone(&self) -> Self {
        Progressive {
            subtrees: self.subtrees.clone(),
            root: self.root.clone(),
            writes: AtomicUsize::new(self.writes.load(Ordering::Relaxed)),
        }
    }
}

impl<P: Page> Default for Progressive<P> {
    fn default() -> Self {
        Progressive {
            subtrees: Vec::new(),
            root: OnceLock::new(),
            writes: AtomicUsize::new(0),
        }
    }
}

impl<P: Page> Progressive<P> {
    /// A tree of the pages that `fill` returns, given each page's width in chunks, in order,
    /// until it returns `None`. Every page but the last must be full.
    pub(crate) fn build(mut fill: impl FnMut(usize) -> Option<P>) -> Self {
        let mut subtrees = Vec::new();
        'subtrees: for subtree in 0.. {
            let log2 = page_log2::<P>(subtree);
            let height = branch_height::<P>(subtree);
            let mut level = Vec::new();
            let mut exhausted = false;
            for _ in 0..1usize << height {
                match fill(1 << log2) {
                    Some(page) => level.push(Node::Page(Arc::new(page))),
                    None => {
                        exhausted = true;
                        break;
                    }
                }
            }
            if level.is_empty() {
                break 'subtrees;
            }
            for _ in 0..height {
                let mut pairs = level.into_iter();
                let mut parents = Vec::new();
                while let Some(left) = pairs.next() {
                    parents.push(Node::branch(left, pairs.next().unwrap_or(Node::Zero)));
                }
                level = parents;
            }
            subtrees.push(level.pop().unwrap_or(Node::Zero));
            if exhausted {
                break;
            }
        }
        Progressive {
            subtrees,
            root: OnceLock::new(),
            writes: AtomicUsize::new(usize::MAX),
        }
    }

    /// The page at `position`, if one is stored.
    pub(crate) fn page(&self, position: Position) -> Option<&P> {
        let mut node = self.subtrees.get(position.subtree)?;
        let height = branch_height::<P>(position.subtree);
        for level in (0..height).rev() {
            node = match node {
                Node::Branch(branch) if position.page >> level & 1 == 0 => &branch.left,
                Node::Branch(branch) => &branch.right,
                Node::Zero | Node::Page(_) => return None,
            };
        }
        match node {
            Node::Page(page) => Some(page),
            Node::Zero | Node::Branch(_) => None,
        }
    }

    /// The page at `position` for writing: missing subtrees, branches and pages are created
    /// (`empty` makes a page of the given width), shared ones copied, and every hash on the
    /// path cleared. The caller marks what it changes inside the page.
    pub(crate) fn page_mut(
        &mut self,
        position: Position,
        empty: impl FnOnce(usize) -> P,
    ) -> &mut P {
        self.root.take();
        let writes = self.writes.get_mut();
        *writes = writes.saturating_add(1);
        while self.subtrees.len() <= position.subtree {
            self.subtrees.push(Node::Zero);
        }
        let height = branch_height::<P>(position.subtree);
        let width = 1 << page_log2::<P>(position.subtree);
        let mut node = &mut self.subtrees[position.subtree];
        for level in (0..height).rev() {
            if matches!(node, Node::Zero) {
                *node = Node::Branch(Arc::new(Branch {
                    hash: OnceLock::new(),
                    left: Node::Zero,
                    right: Node::Zero,
                }));
            }
            let Node::Branch(branch) = node else {
                unreachable!("a node above the pages is a branch or zero");
            };
            let branch = Arc::make_mut(branch);
            branch.hash.take();
            node = if position.page >> level & 1 == 0 {
                &mut branch.left
            } else {
                &mut branch.right
            };
        }
        if matches!(node, Node::Zero) {
            *node = Node::Page(Arc::new(empty(width)));
        }
        match node {
            Node::Page(page) => Arc::make_mut(page),
            Node::Zero | Node::Branch(_) => unreachable!("a node at height 0 is a page"),
        }
    }

    /// Drops the subtrees that hold none of the first `chunks` chunks, after a `pop` emptied
    /// the last one: the chain must end at the last subtree in use, or its root would differ
    /// from `merkleize_progressive` of the chunks.
    pub(crate) fn truncate(&mut self, chunks: usize) {
        let keep = match chunks.checked_sub(1) {
            Some(last) => locate::<P>(last).subtree + 1,
            None => 0,
        };
        if self.subtrees.len() > keep {
            self.subtrees.truncate(keep);
            self.root.take();
        }
    }

    /// The pages, in chunk order.
    pub(crate) fn pages(&self) -> Vec<&P> {
        let mut pages = Vec::new();
        for subtree in &self.subtrees {
            subtree.collect_pages(&mut pages);
        }
        pages
    }

    /// `merkleize_progressive` of the chunks: `hash(subtree_0, hash(subtree_1, … hash(subtree_last,
    /// ZERO)))`, recomputing only what writes cleared.
    pub(crate) fn root(&self) -> Chunk {
        if let Some(root) = self.root.get() {
            return *root;
        }
        let parallel = self.writes.load(Ordering::Relaxed) >= PARALLEL_WRITES;
        let mut root = [0; 32];
        for (k, subtree) in self.subtrees.iter().enumerate().rev() {
            let subtree_root = subtree.root(branch_height::<P>(k), page_log2::<P>(k), parallel);
            root = hash_pair(&subtree_root, &root);
        }
        let _ = self.root.set(root);
        self.writes.store(0, Ordering::Relaxed);
        root
    }

    /// The subtrees' top nodes, for memory accounting.
    pub(crate) fn memory_subtrees(&self) -> Vec<&dyn MemorySize> {
        self.subtrees
            .iter()
            .filter_map(|node| match node {
                Node::Zero => None,
                Node::Page(page) => Some(&**page as &dyn MemorySize),
                Node::Branch(branch) => Some(&**branch as &dyn MemorySize),
            })
            .collect()
    }

    /// Bytes held directly (the subtree vector).
    pub(crate) fn intrinsic_size(&self) -> usize {
        self.subtrees.capacity() * std::mem::size_of::<Node<P>>()
    }
}

/// Memory accounting: a branch is counted once however many lists share it.
impl<P: Page> MemorySize for Branch<P> {
    fn self_pointer(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn subtrees(&self) -> Vec<&dyn MemorySize> {
        [&self.left, &self.right]
            .into_iter()
            .filter_map(|node| match node {
                Node::Zero => None,
                Node::Page(page) => Some(&**page as &dyn MemorySize),
                Node::Branch(branch) => Some(&**branch as &dyn MemorySize),
            })
            .collect()
    }

    fn intrinsic_size(&self) -> usize {
        // The branch and the `Arc`'s two counts, in one allocation.
        std::mem::size_of::<Self>() + 2 * std::mem::size_of::<usize>()
    }
}
