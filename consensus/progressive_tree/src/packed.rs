//! [`ProgressivePackedList`]: a `ProgressiveList[T]` of packed basic values.

use std::fmt;
use std::io::Write;
use std::marker::PhantomData;

use milhouse::mem::MemorySize;
use packed_list::PackedValue;
use ssz::{Decode, DecodeError, Encode};
use tree_hash::{Hash256, PackedEncoding, TreeHash, TreeHashType};

use crate::Error;
use crate::flat::{Flat, Slot, locate_chunk};
use crate::hash::CHUNK_LEN;
use crate::page::PackedPage;

/// An SSZ `ProgressiveList[T]` of basic values (`uint8` … `uint64`), packed `32 / size_of(T)`
/// to a chunk, persistent and with cached Merkle hashes.
///
/// The SSZ encoding is the pages' bytes, so encoding and decoding are copies. The pages sit in
/// one flat vector (as in `packed_list::PackedList`): a read or write finds its page by index,
/// the first write to a page shared with a clone copies that page (2 KiB), and cloning copies
/// one pointer per page and the cached levels above the pages (≈ 64 bytes per page).
///
/// [spec]: ssz/simple-serialize.md#progressivelisttype (EIP-7916)
pub struct ProgressivePackedList<T> {
    len: usize,
    tree: Flat<PackedPage>,
    _marker: PhantomData<fn() -> T>,
}

impl<T: PackedValue> ProgressivePackedList<T> {
    /// Values per chunk.
    const PER_CHUNK: usize = CHUNK_LEN / T::SIZE;

    /// An empty list.
    pub fn empty() -> Self {
        ProgressivePackedList {
            len: 0,
            tree: Flat::default(),
            _marker: PhantomData,
        }
    }

    /// `len` values whose little-endian bytes are the concatenation of `slices` (which hold at
    /// least `len * size_of(T)` bytes; any more are ignored).
    fn from_byte_slices<'a>(len: usize, mut slices: impl Iterator<Item = &'a [u8]>) -> Self {
        let mut remaining = len * T::SIZE;
        let mut current: &[u8] = &[];
        let tree = Flat::build(|width| {
            if remaining == 0 {
                return None;
            }
            let mut page = PackedPage::new(width);
            let bytes = page.bytes_mut();
            let want = remaining.min(bytes.len());
            let mut filled = 0;
            while filled < want {
                if current.is_empty() {
                    current = slices.next()?;
                    continue;
                }
                let n = (want - filled).min(current.len());
                bytes[filled..filled + n].copy_from_slice(&current[..n]);
                current = &current[n..];
                filled += n;
            }
            remaining -= want;
            Some(page)
        });
        debug_assert_eq!(remaining, 0, "the slices hold fewer bytes than promised");
        ProgressivePackedList {
            len,
            tree,
            _marker: PhantomData,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where value `index` lives: its page position and its byte offset within the page.
    fn locate(index: usize) -> (Slot, usize) {
        let slot = locate_chunk::<PackedPage>(index / Self::PER_CHUNK);
        let offset = slot.chunk * CHUNK_LEN + index % Self::PER_CHUNK * T::SIZE;
        (slot, offset)
    }

    /// The value at `index`, if any. `O(1)`.
    pub fn get(&self, index: usize) -> Option<T> {
        if index >= self.len {
            return None;
        }
        let (slot, offset) = Self::locate(index);
        let bytes = self.tree.page(slot)?.bytes();
        Some(T::read_le(&bytes[offset..offset + T::SIZE]))
    }

    /// Writes `value` at `index` without a bounds check.
    fn write(&mut self, index: usize, value: T) {
        let (slot, offset) = Self::locate(index);
        let page = self.tree.page_mut(slot, PackedPage::new);
        value.write_le(&mut page.bytes_mut()[offset..offset + T::SIZE]);
        page.mark(slot.chunk);
    }

    /// Sets the value at `index`. `O(1)`, plus a copy of its page where it is shared with a
    /// clone.
    pub fn set(&mut self, index: usize, value: T) -> Result<(), Error> {
        if index >= self.len {
            return Err(Error::OutOfBounds {
                index,
                len: self.len,
            });
        }
        self.write(index, value);
        Ok(())
    }

    /// Replaces the value at `index` with `f` of it.
    pub fn update(&mut self, index: usize, f: impl FnOnce(T) -> T) -> Result<(), Error> {
        if index >= self.len {
            return Err(Error::OutOfBounds {
                index,
                len: self.len,
            });
        }
        // One lookup for the read and the write.
        let (slot, offset) = Self::locate(index);
        let page = self.tree.page_mut(slot, PackedPage::new);
        let bytes = &mut page.bytes_mut()[offset..offset + T::SIZE];
        f(T::read_le(bytes)).write_le(bytes);
        page.mark(slot.chunk);
        Ok(())
    }

    /// Appends `value`. `O(1)`.
    pub fn push(&mut self, value: T) {
        self.len += 1;
        self.write(self.len - 1, value);
    }

    /// Removes and returns the last value, if any. `O(1)`, plus a copy of its page where it is
    /// shared with a clone.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.len.checked_sub(1)?;
        let value = self.get(last)?;
        let (slot, offset) = Self::locate(last);
        let page = self.tree.page_mut(slot, PackedPage::new);
        // Bytes past the end stay zero: the chunk hashes as the spec pads it.
        page.bytes_mut()[offset..offset + T::SIZE].fill(0);
        page.mark(slot.chunk);
        self.len = last;
        self.tree.truncate(last.div_ceil(Self::PER_CHUNK));
        Some(value)
    }

    /// Removes the first `count` values, as the spec's `list = list[count:]` does.
    ///
    /// Every remaining value moves to another position, so every chunk and node changes: this
    /// rebuilds the tree by copying the remaining bytes, `O(len - count)`, and the next root
    /// hashes the whole tree (in parallel). `count == 0` costs nothing.
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
        let mut skip = count * T::SIZE;
        let pages = self.tree.pages();
        let slices = pages.iter().filter_map(|page| {
            let bytes = page.bytes();
            if skip >= bytes.len() {
                skip -= bytes.len();
                None
            } else {
                let rest = &bytes[skip..];
                skip = 0;
                Some(rest)
            }
        });
        let rebuilt = Self::from_byte_slices(self.len - count, slices);
        *self = rebuilt;
        Ok(())
    }

    /// The values, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.tree
            .pages()
            .into_iter()
            .flat_map(|page| page.bytes().chunks_exact(T::SIZE))
            .take(self.len)
            .map(T::read_le)
    }

    /// The values as a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }

    /// The SSZ bytes, page by page.
    fn byte_slices(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut remaining = self.len * T::SIZE;
        self.tree.pages().into_iter().map_while(move |page| {
            let take = remaining.min(page.bytes().len());
            remaining -= take;
            (take > 0).then(|| &page.bytes()[..take])
        })
    }

    /// Writes the list's SSZ (the values, little-endian) to `out` page by page, without
    /// building it whole in memory as [`Encode::ssz_append`] does.
    pub fn ssz_write(&self, out: &mut impl Write) -> std::io::Result<()> {
        self.byte_slices()
            .try_for_each(|bytes| out.write_all(bytes))
    }
}

impl<T: PackedValue> Default for ProgressivePackedList<T> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<T> Clone for ProgressivePackedList<T> {
    fn clone(&self) -> Self {
        ProgressivePackedList {
            len: self.len,
            tree: self.tree.clone(),
            _marker: PhantomData,
        }
    }
}

impl<T: PackedValue> From<Vec<T>> for ProgressivePackedList<T> {
    fn from(values: Vec<T>) -> Self {
        values.into_iter().collect()
    }
}

impl<T: PackedValue> FromIterator<T> for ProgressivePackedList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut iter = iter.into_iter().peekable();
        let mut len = 0;
        let tree = Flat::build(|width| {
            iter.peek()?;
            let mut page = PackedPage::new(width);
            for (slot, value) in page.bytes_mut().chunks_exact_mut(T::SIZE).zip(&mut iter) {
                value.write_le(slot);
                len += 1;
            }
            Some(page)
        });
        ProgressivePackedList {
            len,
            tree,
            _marker: PhantomData,
        }
    }
}

impl<T: PackedValue> PartialEq for ProgressivePackedList<T> {
    fn eq(&self, other: &Self) -> bool {
        // Equal lengths give equal page layouts, and bytes past the length are zero.
        self.len == other.len
            && self
                .tree
                .pages()
                .iter()
                .zip(other.tree.pages())
                .all(|(a, b)| std::ptr::eq(*a, b) || a.bytes() == b.bytes())
    }
}

impl<T: PackedValue> Eq for ProgressivePackedList<T> {}

impl<T: PackedValue> fmt::Debug for ProgressivePackedList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PackedValue> Encode for ProgressivePackedList<T> {
    fn is_ssz_fixed_len() -> bool {
        false
    }

    fn ssz_append(&self, buf: &mut Vec<u8>) {
        buf.reserve(self.len * T::SIZE);
        for bytes in self.byte_slices() {
            buf.extend_from_slice(bytes);
        }
    }

    fn ssz_bytes_len(&self) -> usize {
        self.len * T::SIZE
    }
}

impl<T: PackedValue> Decode for ProgressivePackedList<T> {
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
        Ok(Self::from_byte_slices(
            bytes.len() / T::SIZE,
            std::iter::once(bytes),
        ))
    }
}

impl<T: PackedValue> TreeHash for ProgressivePackedList<T> {
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

/// Memory accounting ([`milhouse::mem::MemoryTracker`]): pages are counted once however many
/// lists share them, so a clone costs only its own page pointers and cached upper levels.
impl<T: PackedValue> MemorySize for ProgressivePackedList<T> {
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
