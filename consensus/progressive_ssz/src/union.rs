//! Compatible unions (`CompatibleUnion({selector: type})`, EIP-8016, built on EIP-7495
//! progressive containers): [`compatible_union!`](crate::compatible_union).

/// The lowest selector a compatible union option may use.
pub const MIN_SELECTOR: u8 = 1;
/// The highest selector a compatible union option may use.
pub const MAX_SELECTOR: u8 = 127;

/// Whether `selectors` are legal compatible-union selectors: at least one, each in
/// [`MIN_SELECTOR`]`..=`[`MAX_SELECTOR`], no two equal.
///
/// [spec]: ssz/simple-serialize.md#illegal-types
pub const fn selectors_are_valid(selectors: &[u8]) -> bool {
    if selectors.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < selectors.len() {
        if selectors[i] < MIN_SELECTOR || selectors[i] > MAX_SELECTOR {
            return false;
        }
        let mut j = i + 1;
        while j < selectors.len() {
            if selectors[i] == selectors[j] {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

/// Declares a compatible union as an enum with one single-field variant per type option, and
/// implements `selector()`, `ssz::Encode`, `ssz::Decode`, `tree_hash::TreeHash`
/// (`mix_in_selector(hash_tree_root(data), selector)`) and serde (`{"selector": "<n>", "data":
/// …}`, the selector a decimal string).
///
/// Serialized as the one-byte selector followed by the option's serialization. Selectors are
/// checked at compile time (`1..=127`, distinct). The options must have compatible
/// Merkleization (e.g. progressive containers that agree on the field at each index): that is
/// the declarer's to ensure. Every option type needs `serde::Serialize` and
/// `serde::Deserialize`; when reading JSON, `selector` must come before `data`.
///
/// ```
/// use progressive_ssz::compatible_union;
///
/// compatible_union! {
///     /// A small or a large number.
///     #[derive(Debug, Clone, PartialEq)]
///     pub enum Number {
///         1 => Small(u16),
///         2 => Large(u64),
///     }
/// }
///
/// assert_eq!(Number::Small(3).selector(), 1);
/// assert_eq!(ssz::Encode::as_ssz_bytes(&Number::Small(3)), vec![1, 3, 0]);
/// ```
///
/// [spec]: ssz/simple-serialize.md#compatible-unions
#[macro_export]
macro_rules! compatible_union {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $selector:literal => $variant:ident($ty:ty)),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$variant_meta])* $variant($ty),)+
        }

        const _: () = assert!(
            $crate::selectors_are_valid(&[$($selector),+]),
            concat!(
                "invalid compatible union selectors for ",
                stringify!($name),
                ": each in 1..=127, no two equal"
            ),
        );

        impl $name {
            /// The selector of the held type option.
            #[allow(dead_code, reason = "part of every union's interface, used or not")]
            $vis fn selector(&self) -> u8 {
                match self {
                    $(Self::$variant(_) => $selector,)+
                }
            }
        }

        impl $crate::__private::ssz::Encode for $name {
            fn is_ssz_fixed_len() -> bool {
                false
            }

            fn ssz_bytes_len(&self) -> usize {
                1 + match self {
                    $(Self::$variant(data) => $crate::__private::ssz::Encode::ssz_bytes_len(data),)+
                }
            }

            fn ssz_append(&self, buf: &mut ::std::vec::Vec<u8>) {
                buf.push(self.selector());
                match self {
                    $(Self::$variant(data) => $crate::__private::ssz::Encode::ssz_append(data, buf),)+
                }
            }
        }

        impl $crate::__private::ssz::Decode for $name {
            fn is_ssz_fixed_len() -> bool {
                false
            }

            fn from_ssz_bytes(
                bytes: &[u8],
            ) -> ::std::result::Result<Self, $crate::__private::ssz::DecodeError> {
                let (&selector, data) = bytes.split_first().ok_or(
                    $crate::__private::ssz::DecodeError::InvalidByteLength { len: 0, expected: 1 },
                )?;
                match selector {
                    $($selector => <$ty as $crate::__private::ssz::Decode>::from_ssz_bytes(data)
                        .map(Self::$variant),)+
                    other => ::std::result::Result::Err(
                        $crate::__private::ssz::DecodeError::UnionSelectorInvalid(other),
                    ),
                }
            }
        }

        impl $crate::__private::tree_hash::TreeHash for $name {
            fn tree_hash_type() -> $crate::__private::tree_hash::TreeHashType {
                $crate::__private::tree_hash::TreeHashType::Container
            }

            // A union is never packed; a parent asking anyway gets the root as its chunk.
            fn tree_hash_packed_encoding(&self) -> $crate::__private::tree_hash::PackedEncoding {
                $crate::__private::tree_hash::PackedEncoding::from_slice(
                    $crate::__private::tree_hash::TreeHash::tree_hash_root(self).as_slice(),
                )
            }

            fn tree_hash_packing_factor() -> usize {
                1
            }

            fn tree_hash_root(&self) -> $crate::__private::tree_hash::Hash256 {
                let data_root = match self {
                    $(Self::$variant(data) => $crate::__private::tree_hash::TreeHash::tree_hash_root(data),)+
                };
                $crate::mix_in_selector(&data_root, self.selector())
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                match self {
                    $(Self::$variant(data) => $crate::__private::serialize_union(
                        serializer,
                        stringify!($name),
                        self.selector(),
                        data,
                    ),)+
                }
            }
        }

        impl $crate::__private::UnionOptions for $name {
            fn read_option<'de, A: $crate::__private::serde::de::MapAccess<'de>>(
                selector: u8,
                map: &mut A,
            ) -> ::std::result::Result<Self, A::Error> {
                match selector {
                    $($selector => map.next_value::<$ty>().map(Self::$variant),)+
                    other => ::std::result::Result::Err($crate::__private::unknown_selector::<A::Error>(other)),
                }
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                $crate::__private::deserialize_union(
                    deserializer,
                    concat!("a ", stringify!($name), " as {\"selector\", \"data\"}"),
                )
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use ssz::{Decode, Encode};
    use tree_hash::{Hash256, TreeHash};

    use super::*;
    use crate::merkleize::hash_pair;
    use crate::{ProgressiveBitList, progressive_container};

    compatible_union! {
        #[derive(Debug, Clone, PartialEq)]
        enum Example {
            1 => Small(u16),
            5 => Large(u64),
        }
    }

    progressive_container! {
        active_fields: [1],
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Square {
            side: u16,
        }
    }

    progressive_container! {
        active_fields: [0, 1, 1],
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Circle {
            radius: u16,
            bits: ProgressiveBitList,
        }
    }

    compatible_union! {
        #[derive(Debug, Clone, PartialEq)]
        enum Shape {
            1 => Square(Square),
            2 => Circle(Circle),
        }
    }

    #[test]
    fn encodes_selector_then_data() {
        assert_eq!(Example::Small(0x0102).as_ssz_bytes(), vec![1, 0x02, 0x01]);
        assert_eq!(Example::Large(7).ssz_bytes_len(), 9);
    }

    #[test]
    fn decodes_each_option() {
        assert_eq!(
            Example::from_ssz_bytes(&[1, 0x02, 0x01]),
            Ok(Example::Small(0x0102))
        );
        assert_eq!(
            Example::from_ssz_bytes(&[5, 7, 0, 0, 0, 0, 0, 0, 0]),
            Ok(Example::Large(7))
        );
    }

    #[test]
    fn rejects_empty_unknown_selector_and_wrong_data_length() {
        assert!(Example::from_ssz_bytes(&[]).is_err());
        assert!(Example::from_ssz_bytes(&[0, 1, 2]).is_err());
        assert!(Example::from_ssz_bytes(&[2, 1, 2]).is_err());
        assert!(Example::from_ssz_bytes(&[1]).is_err());
        assert!(Example::from_ssz_bytes(&[1, 1, 2, 3]).is_err());
    }

    #[test]
    fn root_mixes_in_selector() {
        let mut data = [0u8; 32];
        data[0] = 3;
        let mut selector = [0u8; 32];
        selector[0] = 5;
        assert_eq!(
            Example::Large(3).tree_hash_root(),
            hash_pair(&Hash256::from(data), &Hash256::from(selector))
        );
    }

    #[test]
    fn union_of_progressive_containers_round_trips() {
        let circle = Shape::Circle(Circle {
            radius: 9,
            bits: [true, false].into_iter().collect(),
        });
        let bytes = circle.as_ssz_bytes();
        assert_eq!(bytes, vec![2, 9, 0, 6, 0, 0, 0, 0b101]);
        assert_eq!(Shape::from_ssz_bytes(&bytes), Ok(circle.clone()));
        let Shape::Circle(inner) = &circle else {
            unreachable!("built as a circle")
        };
        assert_eq!(
            circle.tree_hash_root(),
            crate::mix_in_selector(&inner.tree_hash_root(), 2)
        );
    }

    #[test]
    fn json_has_string_selector_and_data() {
        let square = Shape::Square(Square { side: 4 });
        let json = serde_json::to_string(&square).expect("serializable");
        assert_eq!(json, r#"{"selector":"1","data":{"side":4}}"#);
        assert_eq!(
            serde_json::from_str::<Shape>(&json).expect("valid JSON"),
            square
        );
        assert_eq!(
            serde_json::from_str::<Shape>(
                r#"{"selector":2,"extra":null,"data":{"radius":1,"bits":"0x01"}}"#
            )
            .expect("valid JSON"),
            Shape::Circle(Circle {
                radius: 1,
                bits: ProgressiveBitList::new()
            })
        );
        for bad in [
            r#"{"selector":"3","data":{"side":4}}"#,
            r#"{"data":{"side":4},"selector":"1"}"#,
            r#"{"selector":"1"}"#,
            r#"{"selector":"1","selector":"1","data":{"side":4}}"#,
            r#"{"selector":"x","data":{"side":4}}"#,
            r#"{"selector":"1","data":{"radius":4}}"#,
        ] {
            assert!(serde_json::from_str::<Shape>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn selector_validation() {
        assert!(selectors_are_valid(&[1, 127]));
        assert!(!selectors_are_valid(&[]));
        assert!(!selectors_are_valid(&[0]));
        assert!(!selectors_are_valid(&[128]));
        assert!(!selectors_are_valid(&[3, 3]));
    }
}
