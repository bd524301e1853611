//! [`ProgressiveTreeList`]: a `ProgressiveList[T]` of composite elements (containers).

use std::fmt;
use std::io::Write;

use milhouse::mem::MemorySize;
use ssz::{BYTES_PER_LENGTH_OFFSET, Decode, DecodeError, Encode, TryFromIter};
use tree_hash::{Hash256, PackedEncoding, TreeHash, TreeHashType};

use crate::Error;
use crate::page::ElementPage;
use crate::tree::{Progressive, locate};

/// An SSZ `ProgressiveList[T]` of composite elements, persistent, with cached Merkle hashes.
///
/// Each element is one chunk of the tree (its `hash_tree_root`), cached per element. Cloning is
/// `O(log n)` pointer copies; the first write to a part shared with a clone copies one page of
/// 16 elements and the branches above it. For lists of basic values use
/// [`ProgressivePackedList`](crate::ProgressivePackedList) (SSZ packs those).
///
/// [spec]: ssz/simple-serialize.md#progressivelisttype (EIP-7916)
pub struct ProgressiveTreeList<T> {
    len: usize,
    tree: Progressive<ElementPage<T>>,
}

impl<T: TreeHash + Clone + Send + Sync> ProgressiveTreeList<T> {
    /// An empty list.
    pub fn empty() -> Self {
        ProgressiveTreeList {
            len: 0,
            tree: Progressive::default(),
        }
    }

    /// Builds a list from elements and, where known, their roots, without walking the tree.
    fn from_iter_with_roots(iter: impl IntoIterator<Item = (T, Option<Hash256>)>) -> Self {
        let mut iter = iter.into_iter().peekable();
        let mut len = 0;
        let tree = Progressive::build(|width| {
            iter.peek()?;
            let mut page = ElementPage::new(width);
            while !page.is_full() {
                let Some((value, root)) = iter.next() else {
                    break;
                };
                page.push(value, root.map(|r| r.0));
                len += 1;
            }
            Some(page)
        });
        ProgressiveTreeList { len, tree }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn out_of_bounds(&self, index: usize) -> Error {
        Error::OutOfBounds {
            index,
            len: self.len,
        }
    }

    /// The element at `index`, if any. `O(log n)`.
    pub fn get(&self, index: usize) -> Option<&T> {
        if index >= self.len {
            return None;
        }
        let position = locate::<ElementPage<T>>(index);
        self.tree.page(position)?.values().get(position.chunk)
    }

    /// The element at `index` for writing, if any: its root and the path above it are
    /// recomputed at the next root. `O(log n)`, plus a copy of one page and its path where they
    /// are shared with a clone.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        if index >= self.len {
            return None;
        }
        let position = locate::<ElementPage<T>>(index);
        self.tree
            .page_mut(position, ElementPage::new)
            .get_mut(position.chunk)
    }

    /// Applies `f` to the element at `index` and returns what it returns.
    pub fn update<R>(&mut self, index: usize, f: impl FnOnce(&mut T) -> R) -> Result<R, Error> {
        let error = self.out_of_bounds(index);
        self.get_mut(index).map(f).ok_or(error)
    }

    /// Replaces the element at `index`.
    pub fn set(&mut self, index: usize, value: T) -> Result<(), Error> {
        self.update(index, |slot| *slot = value)
    }

    /// Appends `value`. `O(log n)`.
    pub fn push(&mut self, value: T) {
        let position = locate::<ElementPage<T>>(self.len);
        self.tree
            .page_mut(position, ElementPage::new)
            .push(value, None);
        self.len += 1;
    }

    /// Removes and returns the last element, if any. `O(log n)`, plus a copy of one page and
    /// its path where they are shared with a clone.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.len.checked_sub(1)?;
        let position = locate::<ElementPage<T>>(last);
        let value = self.tree.page_mut(position, ElementPage::new).pop();
        self.len = last;
        self.tree.truncate(last);
        value
    }

    /// Removes the first `count` elements, as the spec's `list = list[count:]` does.
    ///
    /// Every remaining element moves to another chunk position, so every node of the tree
    /// changes: this rebuilds the tree from the remaining `len - count` elements, keeping their
    /// cached roots. It costs `O(len - count)` element clones now and `len - count` node hashes
    /// (in parallel) at the next root, but no element is re-hashed; `count == 0` costs nothing.
    pub fn pop_front(&mut self, count: usize) -> Result<(), Error> {
        if count > self.len {
            return Err(Error::PopPastEnd {
                count,
                len: self.len,
            });
        }
        if count == 0 {
            return Ok(());
        }
        let rebuilt = Self::from_iter_with_roots(
            self.tree
                .pages()
                .into_iter()
                .flat_map(|page| page.values_with_roots())
                .skip(count)
                .map(|(value, root)| (value.clone(), root.map(Hash256::from))),
        );
        *self = rebuilt;
        Ok(())
    }

    /// The elements, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.tree
            .pages()
            .into_iter()
            .flat_map(|page| page.values().iter())
    }

    /// The elements from `start` on, in order; whole pages before `start` are skipped without
    /// visiting their elements. `start == len` gives an empty iterator; past it, an error.
    pub fn iter_from(&self, start: usize) -> Result<impl Iterator<Item = &T> + '_, Error> {
        if start > self.len {
            return Err(self.out_of_bounds(start));
        }
        let mut skip = start;
        let mut pages = self.tree.pages().into_iter().peekable();
        while let Some(page) = pages.peek() {
            let held = page.values().len();
            if skip < held {
                break;
            }
            skip -= held;
            pages.next();
        }
        Ok(pages.flat_map(|page| page.values().iter()).skip(skip))
    }

    /// The elements as a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }
}

impl<T: TreeHash + Encode + Clone + Send + Sync> ProgressiveTreeList<T> {
    /// Writes the list's SSZ to `out` one element at a time, never holding more than one
    /// element's encoding in memory (variable-size elements are measured first, for their
    /// offsets).
    pub fn ssz_write(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut buf = Vec::new();
        if !<T as Encode>::is_ssz_fixed_len() {
            let mut offset = self.len * BYTES_PER_LENGTH_OFFSET;
            for value in self.iter() {
                let encoded = u32::try_from(offset).map_err(|_| {
                    std::io::Error::other(format!("SSZ offset {offset} exceeds 2^32"))
                })?;
                out.write_all(&encoded.to_le_bytes())?;
                offset += value.ssz_bytes_len();
            }
        }
        for value in self.iter() {
            buf.clear();
            value.ssz_append(&mut buf);
            out.write_all(&buf)?;
        }
        Ok(())
    }
}

impl<T: TreeHash + Clone + Send + Sync> Default for ProgressiveTreeList<T> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<T> Clone for ProgressiveTreeList<T> {
    fn clone(&self) -> Self {
        ProgressiveTreeList {
            len: self.len,
            tree: self.tree.clone(),
        }
    }
}

impl<T: TreeHash + Clone + Send + Sync> From<Vec<T>> for ProgressiveTreeList<T> {
    fn from(values: Vec<T>) -> Self {
        values.into_iter().collect()
    }
}

impl<T: TreeHash + Clone + Send + Sync> FromIterator<T> for ProgressiveTreeList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self::from_iter_with_roots(iter.into_iter().map(|value| (value, None)))
    }
}

/// Lets `ssz` decode variable-size elements straight into the tree.
impl<T: TreeHash + Clone + Send + Sync> TryFromIter<T> for ProgressiveTreeList<T> {
    type Error = std::convert::Infallible;

    fn try_from_iter<I: IntoIterator<Item = T>>(iter: I) -> Result<Self, Self::Error> {
        Ok(iter.into_iter().collect())
    }
}

impl<T: TreeHash + Clone + Send + Sync + PartialEq> PartialEq for ProgressiveTreeList<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: TreeHash + Clone + Send + Sync + Eq> Eq for ProgressiveTreeList<T> {}

impl<T: TreeHash + Clone + Send + Sync + fmt::Debug> fmt::Debug for ProgressiveTreeList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: TreeHash + Encode + Clone + Send + Sync> Encode for ProgressiveTreeList<T> {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn ssz_append(&self, buf: &mut Vec<u8>) {
        buf.reserve(self.ssz_bytes_len());
        if <T as Encode>::is_ssz_fixed_len() {
            for value in self.iter() {
                value.ssz_append(buf);
            }
        } else {
            let mut offset = self.len * BYTES_PER_LENGTH_OFFSET;
            for value in self.iter() {
                buf.extend_from_slice(&ssz::encode_length(offset));
                offset += value.ssz_bytes_len();
            }
            for value in self.iter() {
                value.ssz_append(buf);
            }
        }
    }

    fn ssz_bytes_len(&self) -> usize {
        if <T as Encode>::is_ssz_fixed_len() {
            self.len * <T as Encode>::ssz_fixed_len()
        } else {
            self.iter()
                .map(|value| BYTES_PER_LENGTH_OFFSET + value.ssz_bytes_len())
                .sum()
        }
    }
}

impl<T: TreeHash + Decode + Clone + Send + Sync> Decode for ProgressiveTreeList<T> {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn from_ssz_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        if !<T as Decode>::is_ssz_fixed_len() {
            // No limit: the 4-byte offsets bound the length.
            return ssz::decode_list_of_variable_length_items(bytes, None);
        }
        let size = <T as Decode>::ssz_fixed_len();
        if size == 0 || !bytes.len().is_multiple_of(size) {
            return Err(DecodeError::InvalidByteLength {
                len: bytes.len(),
                expected: bytes.len() / size.max(1) * size,
            });
        }
        let mut error = None;
        let list = bytes
            .chunks_exact(size)
            .map_while(|element| match T::from_ssz_bytes(element) {
                Ok(value) => Some(value),
                Err(e) => {
                    error = Some(e);
                    None
                }
            })
            .collect();
        match error {
            Some(e) => Err(e),
            None => Ok(list),
        }
    }
}

impl<T: TreeHash + Clone + Send + Sync> TreeHash for ProgressiveTreeList<T> {
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
        tree_hash::mix_in_length(&Hash256::from(self.tree.root()), self.len)
    }
}

/// Memory accounting ([`milhouse::mem::MemoryTracker`]): pages and branches are counted once
/// however many lists share them, so a clone costs only its own few words.
impl<T: TreeHash + Clone + Send + Sync> MemorySize for ProgressiveTreeList<T> {
    fn self_pointer(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn subtrees(&self) -> Vec<&dyn MemorySize> {
        self.tree.memory_subtrees()
    }

    fn intrinsic_size(&self) -> usize {
        std::mem::size_of::<Self>() + self.tree.intrinsic_size()
    }
}
