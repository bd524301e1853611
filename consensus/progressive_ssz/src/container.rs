//! Progressive containers of EIP-7495: [`ProgressiveContainer`] and [`progressive_container!`].

/// A container with the EIP-7495 progressive Merkle tree shape: the field at index `i` of
/// `active_fields` always sits at chunk `i` of a progressive tree, absent indices hash as zero
/// chunks, and `active_fields` is mixed into the root.
///
/// Serialization is that of a `Container` of the present fields. Declare types with
/// [`progressive_container!`](crate::progressive_container), or implement `ssz::Encode`,
/// `ssz::Decode` and `tree_hash::TreeHash` by hand, hashing with
/// [`progressive_container_root`](crate::progressive_container_root)`(Self::ACTIVE_FIELDS,
/// field_roots)`.
///
/// [spec]: ssz/simple-serialize.md#composite-types (EIP-7495)
pub trait ProgressiveContainer {
    /// `active_fields`: one entry per stable field index, `true` where the type has that field.
    /// Legal when [`active_fields_are_valid`](crate::active_fields_are_valid) for the number of
    /// fields (the macro checks it at compile time).
    const ACTIVE_FIELDS: &'static [bool];
}

/// Declares a progressive container (EIP-7495): the struct as written, with
/// [`ProgressiveContainer`], `ssz::Encode`, `ssz::Decode` (those of a `Container` of the fields
/// in order) and `tree_hash::TreeHash` (`mix_in_active_fields(merkleize_progressive(...))`).
///
/// `active_fields` is a list of `0`/`1` (`[1, 0, 1]`) or a repetition (`[1; 13]`); it is checked
/// at compile time (legal configuration, one `1` per field). Attributes, including derives such
/// as `serde::Serialize`, pass through to the struct and its fields. Type parameters may carry
/// bounds that are trait names in scope (`<E: EthSpec + Clone>`); paths, generic bounds and
/// `where` clauses are not supported. The caller needs no dependency on
/// `ethereum_ssz` or `tree_hash` beyond what its field types need.
///
/// ```
/// use progressive_ssz::{ProgressiveBitList, progressive_container};
///
/// progressive_container! {
///     active_fields: [1, 0, 1],
///     /// A version of the container without field 1.
///     #[derive(Debug, Clone, PartialEq)]
///     pub struct Example {
///         pub a: u8,
///         pub c: ProgressiveBitList,
///     }
/// }
///
/// let value = Example { a: 1, c: ProgressiveBitList::with_len(3) };
/// let bytes = ssz::Encode::as_ssz_bytes(&value);
/// assert_eq!(<Example as ssz::Decode>::from_ssz_bytes(&bytes), Ok(value));
/// ```
#[macro_export]
macro_rules! progressive_container {
    (
        active_fields: [$($bit:literal),+ $(,)?],
        $(#[$meta:meta])*
        $vis:vis struct $name:ident
            $(< $($gen:ident $(: $bound:ident $(+ $more:ident)*)?),+ $(,)? >)?
        {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty),+ $(,)?
        }
    ) => {
        const _: () = assert!(
            $($bit <= 1)&&+,
            concat!("active_fields entries of ", stringify!($name), " must be 0 or 1"),
        );
        $crate::progressive_container! {
            @define [$($bit == 1),+],
            $(#[$meta])*
            $vis struct $name $(< $($gen $(: $bound $(+ $more)*)?),+ >)? {
                $($(#[$field_meta])* $field_vis $field : $ty),+
            }
        }
    };
    (
        active_fields: [$bit:literal; $count:expr],
        $(#[$meta:meta])*
        $vis:vis struct $name:ident
            $(< $($gen:ident $(: $bound:ident $(+ $more:ident)*)?),+ $(,)? >)?
        {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty),+ $(,)?
        }
    ) => {
        const _: () = assert!(
            $bit <= 1,
            concat!("active_fields entries of ", stringify!($name), " must be 0 or 1"),
        );
        $crate::progressive_container! {
            @define [$bit == 1; $count],
            $(#[$meta])*
            $vis struct $name $(< $($gen $(: $bound $(+ $more)*)?),+ >)? {
                $($(#[$field_meta])* $field_vis $field : $ty),+
            }
        }
    };
    (
        @define [$($active:tt)+],
        $(#[$meta:meta])*
        $vis:vis struct $name:ident
            $(< $($gen:ident $(: $bound:ident $(+ $more:ident)*)?),+ >)?
        {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty),+
        }
    ) => {
        $(#[$meta])*
        $vis struct $name $(< $($gen $(: $bound $(+ $more)*)?),+ >)? {
            $($(#[$field_meta])* $field_vis $field: $ty,)+
        }

        const _: () = assert!(
            $crate::active_fields_are_valid(&[$($active)+], [$(stringify!($field)),+].len()),
            concat!(
                "invalid active_fields for ",
                stringify!($name),
                ": at most 256 entries, ending in 1, one 1 per field"
            ),
        );

        impl $(< $($gen $(: $bound $(+ $more)*)?),+ >)? $crate::ProgressiveContainer
            for $name $(< $($gen),+ >)?
        {
            const ACTIVE_FIELDS: &'static [bool] = &[$($active)+];
        }

        impl $(< $($gen $(: $bound $(+ $more)*)?),+ >)? $crate::__private::ssz::Encode
            for $name $(< $($gen),+ >)?
        {
            fn is_ssz_fixed_len() -> bool {
                $(<$ty as $crate::__private::ssz::Encode>::is_ssz_fixed_len())&&+
            }

            fn ssz_fixed_len() -> usize {
                if <Self as $crate::__private::ssz::Encode>::is_ssz_fixed_len() {
                    0 $(+ <$ty as $crate::__private::ssz::Encode>::ssz_fixed_len())+
                } else {
                    $crate::__private::ssz::BYTES_PER_LENGTH_OFFSET
                }
            }

            fn ssz_bytes_len(&self) -> usize {
                0 $(+ if <$ty as $crate::__private::ssz::Encode>::is_ssz_fixed_len() {
                    <$ty as $crate::__private::ssz::Encode>::ssz_fixed_len()
                } else {
                    $crate::__private::ssz::BYTES_PER_LENGTH_OFFSET
                        + $crate::__private::ssz::Encode::ssz_bytes_len(&self.$field)
                })+
            }

            fn ssz_append(&self, buf: &mut ::std::vec::Vec<u8>) {
                // A variable-size field's `ssz_fixed_len` is the size of its offset.
                let fixed_len = 0 $(+ <$ty as $crate::__private::ssz::Encode>::ssz_fixed_len())+;
                let mut encoder = $crate::__private::ssz::SszEncoder::container(buf, fixed_len);
                $(encoder.append(&self.$field);)+
                encoder.finalize();
            }
        }

        impl $(< $($gen $(: $bound $(+ $more)*)?),+ >)? $crate::__private::ssz::Decode
            for $name $(< $($gen),+ >)?
        {
            fn is_ssz_fixed_len() -> bool {
                $(<$ty as $crate::__private::ssz::Decode>::is_ssz_fixed_len())&&+
            }

            fn ssz_fixed_len() -> usize {
                if <Self as $crate::__private::ssz::Decode>::is_ssz_fixed_len() {
                    0 $(+ <$ty as $crate::__private::ssz::Decode>::ssz_fixed_len())+
                } else {
                    $crate::__private::ssz::BYTES_PER_LENGTH_OFFSET
                }
            }

            fn from_ssz_bytes(
                bytes: &[u8],
            ) -> ::std::result::Result<Self, $crate::__private::ssz::DecodeError> {
                // The builder checks the offsets (first one right after the fixed part, in
                // order, in range) and that a fixed-size container has no extra bytes.
                let mut builder = $crate::__private::ssz::SszDecoderBuilder::new(bytes);
                $(builder.register_type::<$ty>()?;)+
                let mut decoder = builder.build()?;
                ::std::result::Result::Ok(Self {
                    $($field: decoder.decode_next::<$ty>()?,)+
                })
            }
        }

        impl $(< $($gen $(: $bound $(+ $more)*)?),+ >)? $crate::__private::tree_hash::TreeHash
            for $name $(< $($gen),+ >)?
        {
            fn tree_hash_type() -> $crate::__private::tree_hash::TreeHashType {
                $crate::__private::tree_hash::TreeHashType::Container
            }

            // A container is never packed; a parent asking anyway gets the root as its chunk.
            fn tree_hash_packed_encoding(&self) -> $crate::__private::tree_hash::PackedEncoding {
                $crate::__private::tree_hash::PackedEncoding::from_slice(
                    $crate::__private::tree_hash::TreeHash::tree_hash_root(self).as_slice(),
                )
            }

            fn tree_hash_packing_factor() -> usize {
                1
            }

            fn tree_hash_root(&self) -> $crate::__private::tree_hash::Hash256 {
                $crate::progressive_container_root(
                    <Self as $crate::ProgressiveContainer>::ACTIVE_FIELDS,
                    [$($crate::__private::tree_hash::TreeHash::tree_hash_root(&self.$field)),+],
                )
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use ssz::{Decode, Encode};
    use tree_hash::{Hash256, TreeHash};

    use crate::merkleize::hash_pair;
    use crate::{ProgressiveBitList, ProgressiveContainer, ProgressiveList};

    fn uint_chunk(value: u8) -> Hash256 {
        let mut chunk = [0u8; 32];
        chunk[0] = value;
        Hash256::from(chunk)
    }

    progressive_container! {
        active_fields: [1, 0, 1],
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        struct Sparse {
            a: u8,
            c: u16,
        }
    }

    progressive_container! {
        active_fields: [1, 1, 0, 1],
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        struct Variable {
            a: u16,
            b: ProgressiveList<u8>,
            #[serde(rename = "bits")]
            c: ProgressiveBitList,
        }
    }

    /// A trait standing in for a preset trait such as `EthSpec`.
    trait Preset: Clone + PartialEq + std::fmt::Debug {}

    #[derive(Debug, Clone, PartialEq)]
    struct Mainnet;
    impl Preset for Mainnet {}

    progressive_container! {
        active_fields: [1; 2],
        #[derive(Debug, Clone, PartialEq)]
        struct Generic<P: Preset, T: Encode + Decode + TreeHash + Clone> {
            items: ProgressiveList<T>,
            marker: ProgressiveList<Wrapper<P>>,
        }
    }

    #[derive(Debug, Clone, PartialEq)]
    struct Wrapper<P>(std::marker::PhantomData<P>);

    impl<P> Encode for Wrapper<P> {
        fn is_ssz_fixed_len() -> bool {
            true
        }
        fn ssz_fixed_len() -> usize {
            1
        }
        fn ssz_bytes_len(&self) -> usize {
            1
        }
        fn ssz_append(&self, buf: &mut Vec<u8>) {
            buf.push(0);
        }
    }

    impl<P> Decode for Wrapper<P> {
        fn is_ssz_fixed_len() -> bool {
            true
        }
        fn ssz_fixed_len() -> usize {
            1
        }
        fn from_ssz_bytes(bytes: &[u8]) -> Result<Self, ssz::DecodeError> {
            match bytes {
                [0] => Ok(Self(std::marker::PhantomData)),
                _ => Err(ssz::DecodeError::BytesInvalid("not a zero byte".into())),
            }
        }
    }

    impl<P> TreeHash for Wrapper<P> {
        fn tree_hash_type() -> tree_hash::TreeHashType {
            tree_hash::TreeHashType::Basic
        }
        fn tree_hash_packed_encoding(&self) -> tree_hash::PackedEncoding {
            tree_hash::PackedEncoding::from_slice(&[0])
        }
        fn tree_hash_packing_factor() -> usize {
            32
        }
        fn tree_hash_root(&self) -> Hash256 {
            Hash256::ZERO
        }
    }

    #[test]
    fn hashes_absent_fields_as_zero_and_mixes_in_active_fields() {
        let value = Sparse { a: 1, c: 2 };
        let zero = Hash256::ZERO;
        let second = hash_pair(&hash_pair(&zero, &uint_chunk(2)), &hash_pair(&zero, &zero));
        let expected = hash_pair(
            &hash_pair(&uint_chunk(1), &hash_pair(&second, &zero)),
            &uint_chunk(0b101),
        );
        assert_eq!(value.tree_hash_root(), expected);
        assert_eq!(Sparse::ACTIVE_FIELDS, &[true, false, true]);
    }

    #[test]
    fn fixed_size_container_serializes_fields_in_order() {
        let value = Sparse { a: 1, c: 0x0302 };
        assert!(<Sparse as Encode>::is_ssz_fixed_len());
        assert_eq!(<Sparse as Encode>::ssz_fixed_len(), 3);
        assert_eq!(value.as_ssz_bytes(), vec![1, 2, 3]);
        assert_eq!(Sparse::from_ssz_bytes(&[1, 2, 3]), Ok(value));
        assert!(Sparse::from_ssz_bytes(&[1, 2]).is_err());
        assert!(Sparse::from_ssz_bytes(&[1, 2, 3, 4]).is_err());
    }

    #[test]
    fn variable_size_container_round_trips_with_offsets() {
        let value = Variable {
            a: 7,
            b: ProgressiveList::new(vec![1, 2, 3]),
            c: [true, true].into_iter().collect(),
        };
        assert!(!<Variable as Encode>::is_ssz_fixed_len());
        let bytes = value.as_ssz_bytes();
        // a (2) + two offsets (8), then b's 3 bytes and c's 1 byte.
        assert_eq!(bytes, vec![7, 0, 10, 0, 0, 0, 13, 0, 0, 0, 1, 2, 3, 0b111]);
        assert_eq!(bytes.len(), value.ssz_bytes_len());
        assert_eq!(Variable::from_ssz_bytes(&bytes), Ok(value));
    }

    #[test]
    fn rejects_bad_offsets() {
        // First offset points into the fixed part.
        assert!(Variable::from_ssz_bytes(&[7, 0, 9, 0, 0, 0, 13, 0, 0, 0, 1, 2, 3, 7]).is_err());
        // First offset skips bytes.
        assert!(Variable::from_ssz_bytes(&[7, 0, 11, 0, 0, 0, 13, 0, 0, 0, 1, 2, 3, 7]).is_err());
        // Offsets decreasing.
        assert!(Variable::from_ssz_bytes(&[7, 0, 10, 0, 0, 0, 9, 0, 0, 0, 1, 2, 3, 7]).is_err());
        // Offset past the end.
        assert!(Variable::from_ssz_bytes(&[7, 0, 10, 0, 0, 0, 15, 0, 0, 0, 1, 2, 3, 7]).is_err());
        // Truncated fixed part.
        assert!(Variable::from_ssz_bytes(&[7, 0, 10, 0]).is_err());
        // Bitlist without its delimiter.
        assert!(Variable::from_ssz_bytes(&[7, 0, 10, 0, 0, 0, 13, 0, 0, 0, 1, 2, 3, 0]).is_err());
    }

    #[test]
    fn json_is_an_object_of_fields() {
        let value = Variable {
            a: 7,
            b: ProgressiveList::new(vec![1, 2]),
            c: [true].into_iter().collect(),
        };
        let json = serde_json::to_string(&value).expect("serializable");
        assert_eq!(json, r#"{"a":7,"b":[1,2],"bits":"0x03"}"#);
        assert_eq!(
            serde_json::from_str::<Variable>(&json).expect("valid JSON"),
            value
        );
    }

    #[test]
    fn generic_container_hashes_and_round_trips() {
        let value = Generic::<Mainnet, u32> {
            items: ProgressiveList::new(vec![1, 2]),
            marker: ProgressiveList::new(vec![Wrapper(std::marker::PhantomData)]),
        };
        let bytes = value.as_ssz_bytes();
        assert_eq!(
            Generic::<Mainnet, u32>::from_ssz_bytes(&bytes),
            Ok(value.clone())
        );
        assert_eq!(
            value.tree_hash_root(),
            crate::progressive_container_root(
                &[true, true],
                [value.items.tree_hash_root(), value.marker.tree_hash_root()]
            )
        );
    }
}
