//! `Arbitrary` for the `milhouse` fields of `BeaconState`, and for the Gloas state's tree-backed
//! progressive lists (`progressive_tree`).
//!
//! milhouse's own `Arbitrary` builds trees field by field (random shapes, lengths and cached
//! hashes), which yields lists that claim more elements than they hold. These build valid
//! lists and vectors from arbitrary elements instead.

use arbitrary::{Arbitrary, Unstructured};
use milhouse::{List, UpdateMap, Value, Vector};
use progressive_tree::{PackedValue, ProgressivePackedList, ProgressiveTreeList};
use tree_hash::TreeHash;
use typenum::Unsigned;

/// A valid `milhouse::List` of arbitrary elements, at most `N` of them.
pub(crate) fn milhouse_list<'a, T, N, U>(
    u: &mut Unstructured<'a>,
) -> arbitrary::Result<List<T, N, U>>
where
    T: Value + Arbitrary<'a>,
    N: Unsigned,
    U: UpdateMap<T>,
{
    let len = u.arbitrary_len::<T>()?.min(N::to_usize());
    let values = (0..len)
        .map(|_| u.arbitrary())
        .collect::<arbitrary::Result<Vec<T>>>()?;
    List::new(values).map_err(|_| arbitrary::Error::IncorrectFormat)
}

/// A valid `milhouse::Vector` of exactly `N` arbitrary elements.
pub(crate) fn milhouse_vector<'a, T, N>(u: &mut Unstructured<'a>) -> arbitrary::Result<Vector<T, N>>
where
    T: Value + Arbitrary<'a>,
    N: Unsigned,
{
    let values = (0..N::to_usize())
        .map(|_| u.arbitrary())
        .collect::<arbitrary::Result<Vec<T>>>()?;
    Vector::new(values).map_err(|_| arbitrary::Error::IncorrectFormat)
}

/// A `ProgressiveTreeList` of arbitrary elements (a progressive list has no limit).
pub(crate) fn progressive_tree_list<'a, T>(
    u: &mut Unstructured<'a>,
) -> arbitrary::Result<ProgressiveTreeList<T>>
where
    T: TreeHash + Clone + Send + Sync + Arbitrary<'a>,
{
    let len = u.arbitrary_len::<T>()?;
    (0..len).map(|_| u.arbitrary()).collect()
}

/// A `ProgressivePackedList` of arbitrary basic values.
pub(crate) fn progressive_packed_list<'a, T>(
    u: &mut Unstructured<'a>,
) -> arbitrary::Result<ProgressivePackedList<T>>
where
    T: PackedValue + Arbitrary<'a>,
{
    let len = u.arbitrary_len::<T>()?;
    (0..len).map(|_| u.arbitrary()).collect()
}

/// A `milhouse::Vector` of exactly `M` vectors of exactly `N` arbitrary elements (Gloas
/// `ptc_window`).
pub(crate) fn milhouse_vector_of_vectors<'a, T, N, M>(
    u: &mut Unstructured<'a>,
) -> arbitrary::Result<Vector<Vector<T, N>, M>>
where
    T: Value + Send + Sync + Arbitrary<'a>,
    N: Unsigned,
    M: Unsigned,
{
    let rows = (0..M::to_usize())
        .map(|_| milhouse_vector(u))
        .collect::<arbitrary::Result<Vec<Vector<T, N>>>>()?;
    Vector::new(rows).map_err(|_| arbitrary::Error::IncorrectFormat)
}
