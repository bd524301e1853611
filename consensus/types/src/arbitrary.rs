//! `Arbitrary` for the `milhouse` fields of `BeaconState`.
//!
//! milhouse's own `Arbitrary` builds trees field by field (random shapes, lengths and cached
//! hashes), which yields lists that claim more elements than they hold. These build valid
//! lists and vectors from arbitrary elements instead.

use arbitrary::{Arbitrary, Unstructured};
use milhouse::{List, UpdateMap, Value, Vector};
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
