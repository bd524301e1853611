//! Serde helpers for the state's persistent lists in the Beacon API's JSON conventions (feature
//! `serde`): milhouse vectors as JSON arrays, and `u64` and `u8` lists as quoted decimals; and
//! for Gloas's progressive lists whose elements' own serde does not follow those conventions, and
//! the Gloas state's tree-backed progressive lists (`progressive_tree`).

use milhouse::{UpdateMap, Value, Vector};
use packed_list::PackedList;
use progressive_ssz::ProgressiveList;
use progressive_tree::{ProgressivePackedList, ProgressiveTreeList};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_utils::{quoted_u8, quoted_u64};
use ssz_types::FixedVector;
use ssz_types::typenum::Unsigned;

/// A milhouse vector as a JSON array of its elements.
pub(crate) mod vector {
    use super::*;

    pub(crate) fn serialize<T, N, U, S>(v: &Vector<T, N, U>, s: S) -> Result<S::Ok, S::Error>
    where
        T: Value + Serialize,
        N: Unsigned,
        U: UpdateMap<T>,
        S: Serializer,
    {
        s.collect_seq(v.iter())
    }

    pub(crate) fn deserialize<'de, T, N, U, D>(d: D) -> Result<Vector<T, N, U>, D::Error>
    where
        T: Value + Deserialize<'de>,
        N: Unsigned,
        U: UpdateMap<T>,
        D: Deserializer<'de>,
    {
        Vector::new(Vec::<T>::deserialize(d)?).map_err(|e| D::Error::custom(format!("{e:?}")))
    }
}

/// A milhouse vector of `u64` as a JSON array of quoted decimals.
pub(crate) mod quoted_u64_vector {
    use super::*;

    pub(crate) fn serialize<N, U, S>(v: &Vector<u64, N, U>, s: S) -> Result<S::Ok, S::Error>
    where
        N: Unsigned,
        U: UpdateMap<u64>,
        S: Serializer,
    {
        s.collect_seq(v.iter().map(|&value| quoted_u64::Quoted { value }))
    }

    pub(crate) fn deserialize<'de, N, U, D>(d: D) -> Result<Vector<u64, N, U>, D::Error>
    where
        N: Unsigned,
        U: UpdateMap<u64>,
        D: Deserializer<'de>,
    {
        let values = Vec::<quoted_u64::MaybeQuoted<u64>>::deserialize(d)?;
        Vector::new(values.into_iter().map(|q| q.value).collect())
            .map_err(|e| D::Error::custom(format!("{e:?}")))
    }
}

/// A packed list of `u64` (balances, inactivity scores) as a JSON array of quoted decimals.
pub(crate) mod quoted_u64_packed_list {
    use super::*;

    pub(crate) fn serialize<N: Unsigned, S: Serializer>(
        list: &PackedList<u64, N>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(|value| quoted_u64::Quoted { value }))
    }

    pub(crate) fn deserialize<'de, N: Unsigned, D: Deserializer<'de>>(
        d: D,
    ) -> Result<PackedList<u64, N>, D::Error> {
        let values = Vec::<quoted_u64::MaybeQuoted<u64>>::deserialize(d)?;
        PackedList::new(values.into_iter().map(|q| q.value).collect())
            .map_err(|e| D::Error::custom(format!("{e:?}")))
    }
}

/// A packed list of `u8` (participation flags) as a JSON array of quoted decimals.
pub(crate) mod quoted_u8_packed_list {
    use super::*;

    pub(crate) fn serialize<N: Unsigned, S: Serializer>(
        list: &PackedList<u8, N>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(|value| quoted_u8::Quoted { value }))
    }

    pub(crate) fn deserialize<'de, N: Unsigned, D: Deserializer<'de>>(
        d: D,
    ) -> Result<PackedList<u8, N>, D::Error> {
        let values = Vec::<quoted_u8::MaybeQuoted<u8>>::deserialize(d)?;
        PackedList::new(values.into_iter().map(|q| q.value).collect())
            .map_err(|e| D::Error::custom(format!("{e:?}")))
    }
}

/// A tree-backed progressive list (the Gloas state's validators, builders and queues) as a JSON
/// array of its elements.
pub(crate) mod progressive_tree_list {
    use super::*;
    use tree_hash::TreeHash;

    pub(crate) fn serialize<T, S>(list: &ProgressiveTreeList<T>, s: S) -> Result<S::Ok, S::Error>
    where
        T: TreeHash + Clone + Send + Sync + Serialize,
        S: Serializer,
    {
        s.collect_seq(list.iter())
    }

    pub(crate) fn deserialize<'de, T, D>(d: D) -> Result<ProgressiveTreeList<T>, D::Error>
    where
        T: TreeHash + Clone + Send + Sync + Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(ProgressiveTreeList::from(Vec::<T>::deserialize(d)?))
    }
}

/// A tree-backed progressive list of `u64` (Gloas balances, inactivity scores) as a JSON array
/// of quoted decimals.
pub(crate) mod quoted_u64_progressive_packed_list {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        list: &ProgressivePackedList<u64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(|value| quoted_u64::Quoted { value }))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<ProgressivePackedList<u64>, D::Error> {
        let values = Vec::<quoted_u64::MaybeQuoted<u64>>::deserialize(d)?;
        Ok(values.into_iter().map(|q| q.value).collect())
    }
}

/// A tree-backed progressive list of `u8` (Gloas participation flags) as a JSON array of quoted
/// decimals.
pub(crate) mod quoted_u8_progressive_packed_list {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        list: &ProgressivePackedList<u8>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(|value| quoted_u8::Quoted { value }))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<ProgressivePackedList<u8>, D::Error> {
        let values = Vec::<quoted_u8::MaybeQuoted<u8>>::deserialize(d)?;
        Ok(values.into_iter().map(|q| q.value).collect())
    }
}

/// A milhouse vector of milhouse vectors of `u64` (Gloas `ptc_window`) as a JSON array of
/// arrays of quoted decimals.
pub(crate) mod quoted_u64_vector_of_vectors {
    use super::*;

    /// One inner vector, serialized as an array of quoted decimals.
    struct Row<'a, N: Unsigned>(&'a Vector<u64, N>);

    impl<N: Unsigned> Serialize for Row<'_, N> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(|&value| quoted_u64::Quoted { value }))
        }
    }

    pub(crate) fn serialize<N: Unsigned, M: Unsigned, S: Serializer>(
        v: &Vector<Vector<u64, N>, M>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|row| Row(row)))
    }

    pub(crate) fn deserialize<'de, N: Unsigned, M: Unsigned, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vector<Vector<u64, N>, M>, D::Error> {
        let rows = Vec::<Vec<quoted_u64::MaybeQuoted<u64>>>::deserialize(d)?;
        let rows = rows
            .into_iter()
            .map(|row| {
                Vector::new(row.into_iter().map(|q| q.value).collect())
                    .map_err(|e| D::Error::custom(format!("{e:?}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Vector::new(rows).map_err(|e| D::Error::custom(format!("{e:?}")))
    }
}

/// A progressive list of byte vectors (Gloas cells) as a JSON array of `0x` hex strings.
pub(crate) mod hex_fixed_vec_progressive_list {
    use super::*;

    pub(crate) fn serialize<N: Unsigned, S: Serializer>(
        list: &ProgressiveList<FixedVector<u8, N>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            list.iter()
                .map(|bytes| format!("0x{}", hex::encode(&bytes[..]))),
        )
    }

    pub(crate) fn deserialize<'de, N: Unsigned, D: Deserializer<'de>>(
        d: D,
    ) -> Result<ProgressiveList<FixedVector<u8, N>>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|text| {
                let digits = text
                    .strip_prefix("0x")
                    .ok_or_else(|| D::Error::custom("hex string without 0x prefix"))?;
                let bytes = hex::decode(digits).map_err(D::Error::custom)?;
                FixedVector::new(bytes).map_err(|e| D::Error::custom(format!("{e:?}")))
            })
            .collect()
    }
}
