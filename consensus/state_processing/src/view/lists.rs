//! The state's validator-indexed and queue lists as one type per kind, whatever the fork.
//!
//! Before Gloas these lists are SSZ `List[T, N]`s (milhouse's fixed-depth `List` for
//! containers, `PackedList` for basic values); from Gloas on they are `ProgressiveList[T]`s
//! (EIP-7688, `progressive_tree`). A view holds one of these enums per list, so the processing
//! the forks share is written once. The variant is the same for a whole state, so the `match`
//! in each method is a branch the CPU predicts every time.

use milhouse::{List, UpdateMap, Value, update_map::MaxMap};
use packed_list::{PackedList, PackedValue};
use progressive_tree::{ProgressivePackedList, ProgressiveTreeList};
use typenum::Unsigned;
use vec_map::VecMap;

use crate::Error;

impl From<progressive_tree::Error> for Error {
    fn from(e: progressive_tree::Error) -> Self {
        Error::Tree(format!("{e:?}"))
    }
}

/// One iterator type for the two variants of a list.
pub enum EitherIter<A, B> {
    /// The fixed-depth list's iterator.
    Fixed(A),
    /// The progressive list's iterator.
    Progressive(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for EitherIter<A, B> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            EitherIter::Fixed(a) => a.next(),
            EitherIter::Progressive(b) => b.next(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            EitherIter::Fixed(a) => a.size_hint(),
            EitherIter::Progressive(b) => b.size_hint(),
        }
    }
}

/// A state list of containers (`validators`, the pending queues), borrowed shared.
pub enum TreeListRef<'a, T: Value, N: Unsigned, U: UpdateMap<T> = MaxMap<VecMap<T>>> {
    /// `List[T, N]` (before Gloas).
    Fixed(&'a List<T, N, U>),
    /// `ProgressiveList[T]` (Gloas).
    Progressive(&'a ProgressiveTreeList<T>),
}

impl<T: Value, N: Unsigned, U: UpdateMap<T>> Clone for TreeListRef<'_, T, N, U> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Value, N: Unsigned, U: UpdateMap<T>> Copy for TreeListRef<'_, T, N, U> {}

/// A state list of containers, borrowed mutably.
pub enum TreeListMut<'a, T: Value, N: Unsigned, U: UpdateMap<T> = MaxMap<VecMap<T>>> {
    /// `List[T, N]` (before Gloas).
    Fixed(&'a mut List<T, N, U>),
    /// `ProgressiveList[T]` (Gloas).
    Progressive(&'a mut ProgressiveTreeList<T>),
}

/// A state list of basic values (`balances`, participation flags, inactivity scores), borrowed
/// shared.
pub enum PackedListRef<'a, T: PackedValue, N: Unsigned> {
    /// `List[T, N]` (before Gloas).
    Fixed(&'a PackedList<T, N>),
    /// `ProgressiveList[T]` (Gloas).
    Progressive(&'a ProgressivePackedList<T>),
}

impl<T: PackedValue, N: Unsigned> Clone for PackedListRef<'_, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: PackedValue, N: Unsigned> Copy for PackedListRef<'_, T, N> {}

/// A state list of basic values, borrowed mutably.
pub enum PackedListMut<'a, T: PackedValue, N: Unsigned> {
    /// `List[T, N]` (before Gloas).
    Fixed(&'a mut PackedList<T, N>),
    /// `ProgressiveList[T]` (Gloas).
    Progressive(&'a mut ProgressivePackedList<T>),
}

/// One value's read and write in a packed list of either kind. A walk that touches the same list
/// once per attester (a block's attestations: tens of thousands of writes) matches on the kind
/// once and runs generic over this trait, instead of matching in every `get` and `set`.
pub trait PackedValues<T: PackedValue> {
    /// Number of values.
    fn value_count(&self) -> usize;
    /// The value at `index`, if any.
    fn value(&self, index: usize) -> Option<T>;
    /// Replaces the value at `index`.
    fn set_value(&mut self, index: usize, value: T) -> Result<(), Error>;
}

impl<T: PackedValue, N: Unsigned> PackedValues<T> for PackedList<T, N> {
    #[inline]
    fn value_count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn value(&self, index: usize) -> Option<T> {
        self.get(index)
    }
    #[inline]
    fn set_value(&mut self, index: usize, value: T) -> Result<(), Error> {
        Ok(self.set(index, value)?)
    }
}

impl<T: PackedValue> PackedValues<T> for ProgressivePackedList<T> {
    #[inline]
    fn value_count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn value(&self, index: usize) -> Option<T> {
        self.get(index)
    }
    #[inline]
    fn set_value(&mut self, index: usize, value: T) -> Result<(), Error> {
        Ok(self.set(index, value)?)
    }
}

/// The `N` of a list whose SSZ type still carries a limit: the spec keeps its `…_LIMIT` checks
/// (a full pending queue refuses a request) for the progressive lists too.
fn limit<N: Unsigned>() -> usize {
    N::to_usize()
}

impl<'a, T, N, U> TreeListRef<'a, T, N, U>
where
    T: Value + Send + Sync,
    N: Unsigned,
    U: UpdateMap<T>,
{
    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            TreeListRef::Fixed(l) => l.len(),
            TreeListRef::Progressive(l) => l.len(),
        }
    }

    /// Whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The SSZ limit of the list's pre-Gloas type (`N`), which the spec's size checks use.
    pub fn limit(&self) -> usize {
        limit::<N>()
    }

    /// The element at `index`, if any.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&'a T> {
        match *self {
            TreeListRef::Fixed(l) => l.get(index),
            TreeListRef::Progressive(l) => l.get(index),
        }
    }

    /// The elements, in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a T> + use<'a, T, N, U> {
        match *self {
            TreeListRef::Fixed(l) => EitherIter::Fixed(l.iter()),
            TreeListRef::Progressive(l) => EitherIter::Progressive(l.iter()),
        }
    }

    /// The elements from `start` on.
    pub fn iter_from(
        &self,
        start: usize,
    ) -> Result<impl Iterator<Item = &'a T> + use<'a, T, N, U>, Error> {
        Ok(match *self {
            TreeListRef::Fixed(l) => EitherIter::Fixed(l.iter_from(start)?),
            TreeListRef::Progressive(l) => EitherIter::Progressive(l.iter_from(start)?),
        })
    }

    /// The elements as a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }

    /// `hash_tree_root` of the list (its pending writes must have been applied).
    pub fn tree_hash_root(&self) -> tree_hash::Hash256 {
        use tree_hash::TreeHash;
        match self {
            TreeListRef::Fixed(l) => l.tree_hash_root(),
            TreeListRef::Progressive(l) => l.tree_hash_root(),
        }
    }

    /// The list's SSZ encoding (the same bytes for both shapes: only the tree differs).
    pub fn as_ssz_bytes(&self) -> Vec<u8> {
        use ssz::Encode;
        match self {
            TreeListRef::Fixed(l) => l.as_ssz_bytes(),
            TreeListRef::Progressive(l) => l.as_ssz_bytes(),
        }
    }
}

impl<'a, T, N, U> TreeListMut<'a, T, N, U>
where
    T: Value + Send + Sync,
    N: Unsigned,
    U: UpdateMap<T>,
{
    /// A shared view of the same list.
    #[inline]
    pub fn as_ref(&self) -> TreeListRef<'_, T, N, U> {
        match self {
            TreeListMut::Fixed(l) => TreeListRef::Fixed(l),
            TreeListMut::Progressive(l) => TreeListRef::Progressive(l),
        }
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.as_ref().len()
    }

    /// Whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The SSZ limit of the list's pre-Gloas type (`N`).
    pub fn limit(&self) -> usize {
        limit::<N>()
    }

    /// The element at `index`, if any.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&T> {
        match self {
            TreeListMut::Fixed(l) => l.get(index),
            TreeListMut::Progressive(l) => l.get(index),
        }
    }

    /// The element at `index` for writing, if any.
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        match self {
            TreeListMut::Fixed(l) => l.get_mut(index),
            TreeListMut::Progressive(l) => l.get_mut(index),
        }
    }

    /// Appends `value`; a full fixed-limit list refuses.
    pub fn push(&mut self, value: T) -> Result<(), Error> {
        match self {
            TreeListMut::Fixed(l) => l.push(value)?,
            TreeListMut::Progressive(l) => l.push(value),
        }
        Ok(())
    }

    /// Removes the first `count` elements (`list = list[count:]`).
    pub fn pop_front(&mut self, count: usize) -> Result<(), Error> {
        match self {
            TreeListMut::Fixed(l) => l.pop_front(count)?,
            TreeListMut::Progressive(l) => l.pop_front(count)?,
        }
        Ok(())
    }

    /// Replaces the whole list with `values`.
    pub fn replace(&mut self, values: Vec<T>) -> Result<(), Error> {
        match self {
            TreeListMut::Fixed(l) => **l = List::new(values)?,
            TreeListMut::Progressive(l) => **l = ProgressiveTreeList::from(values),
        }
        Ok(())
    }

    /// The elements, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        match self {
            TreeListMut::Fixed(l) => EitherIter::Fixed(l.iter()),
            TreeListMut::Progressive(l) => EitherIter::Progressive(l.iter()),
        }
    }

    /// Folds pending writes into the tree (milhouse's buffered writes; progressive lists write
    /// through).
    pub fn apply_updates(&mut self) -> Result<(), Error> {
        if let TreeListMut::Fixed(l) = self {
            l.apply_updates()?;
        }
        Ok(())
    }
}

impl<'a, T, N> PackedListRef<'a, T, N>
where
    T: PackedValue,
    N: Unsigned,
{
    /// Number of values.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            PackedListRef::Fixed(l) => l.len(),
            PackedListRef::Progressive(l) => l.len(),
        }
    }

    /// Whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `index`, if any.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        match self {
            PackedListRef::Fixed(l) => l.get(index),
            PackedListRef::Progressive(l) => l.get(index),
        }
    }

    /// The values, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + use<'a, T, N> {
        match *self {
            PackedListRef::Fixed(l) => EitherIter::Fixed(l.iter()),
            PackedListRef::Progressive(l) => EitherIter::Progressive(l.iter()),
        }
    }

    /// `hash_tree_root` of the list.
    pub fn tree_hash_root(&self) -> tree_hash::Hash256 {
        use tree_hash::TreeHash;
        match self {
            PackedListRef::Fixed(l) => l.tree_hash_root(),
            PackedListRef::Progressive(l) => l.tree_hash_root(),
        }
    }

    /// The list's SSZ encoding (the values, little-endian, back to back).
    pub fn as_ssz_bytes(&self) -> Vec<u8> {
        use ssz::Encode;
        match self {
            PackedListRef::Fixed(l) => l.as_ssz_bytes(),
            PackedListRef::Progressive(l) => l.as_ssz_bytes(),
        }
    }

    /// The values as a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        match self {
            PackedListRef::Fixed(l) => l.to_vec(),
            PackedListRef::Progressive(l) => l.to_vec(),
        }
    }
}

impl<'a, T, N> PackedListMut<'a, T, N>
where
    T: PackedValue,
    N: Unsigned,
{
    /// A shared view of the same list.
    #[inline]
    pub fn as_ref(&self) -> PackedListRef<'_, T, N> {
        match self {
            PackedListMut::Fixed(l) => PackedListRef::Fixed(l),
            PackedListMut::Progressive(l) => PackedListRef::Progressive(l),
        }
    }

    /// Number of values.
    #[inline]
    pub fn len(&self) -> usize {
        self.as_ref().len()
    }

    /// Whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `index`, if any.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        self.as_ref().get(index)
    }

    /// Replaces the value at `index`.
    #[inline]
    pub fn set(&mut self, index: usize, value: T) -> Result<(), Error> {
        match self {
            PackedListMut::Fixed(l) => l.set(index, value)?,
            PackedListMut::Progressive(l) => l.set(index, value)?,
        }
        Ok(())
    }

    /// Replaces the value at `index` with `f` of it.
    #[inline]
    pub fn update(&mut self, index: usize, f: impl FnOnce(T) -> T) -> Result<(), Error> {
        match self {
            PackedListMut::Fixed(l) => l.update(index, f)?,
            PackedListMut::Progressive(l) => l.update(index, f)?,
        }
        Ok(())
    }

    /// Appends `value`; a full fixed-limit list refuses.
    pub fn push(&mut self, value: T) -> Result<(), Error> {
        match self {
            PackedListMut::Fixed(l) => l.push(value)?,
            PackedListMut::Progressive(l) => l.push(value),
        }
        Ok(())
    }

    /// Replaces the whole list with `n` copies of `value` (the participation rotation).
    pub fn fill(&mut self, value: T, n: usize) -> Result<(), Error> {
        match self {
            PackedListMut::Fixed(l) => **l = PackedList::repeat(value, n)?,
            PackedListMut::Progressive(l) => {
                **l = ProgressivePackedList::from(vec![value; n]);
            }
        }
        Ok(())
    }

    /// The values, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        match self {
            PackedListMut::Fixed(l) => EitherIter::Fixed(l.iter()),
            PackedListMut::Progressive(l) => EitherIter::Progressive(l.iter()),
        }
    }

    /// `previous = current; current = [0] * n`: the participation rotation at an epoch's end.
    /// The new zero list is built from zero bytes, one copy per page.
    pub fn rotate_into(&mut self, previous: &mut Self, n: usize) -> Result<(), Error> {
        use ssz::Decode;
        let zero_bytes = vec![0u8; n * T::SIZE];
        match (self, previous) {
            (PackedListMut::Fixed(current), PackedListMut::Fixed(previous)) => {
                let zeros = PackedList::from_ssz_bytes(&zero_bytes)
                    .map_err(|_| Error::ListFull("current_epoch_participation"))?;
                **previous = std::mem::replace(*current, zeros);
            }
            (PackedListMut::Progressive(current), PackedListMut::Progressive(previous)) => {
                let zeros = ProgressivePackedList::from_ssz_bytes(&zero_bytes)
                    .map_err(|e| Error::Tree(format!("{e:?}")))?;
                **previous = std::mem::replace(*current, zeros);
            }
            _ => return Err(Error::ListKindsDiffer("participation rotation")),
        }
        Ok(())
    }
}
