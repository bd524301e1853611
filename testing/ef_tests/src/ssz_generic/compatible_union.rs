//! `CompatibleUnion` of [EIP-8016](https://eips.ethereum.org/EIPS/eip-8016): a tagged union
//! whose options share a Merkle tree shape, declared with [`compatible_union!`].
//!
//! Serialized as the one-byte selector followed by the selected option's serialization; the
//! root is `mix_in_selector(hash_tree_root(data), selector)`.

use tree_hash::{BYTES_PER_CHUNK, Hash256};

use super::progressive::hash_pair;

/// The lowest selector a compatible union option may use.
pub const MIN_SELECTOR: u8 = 1;
/// The highest selector a compatible union option may use.
pub const MAX_SELECTOR: u8 = 127;

/// `mix_in_selector`: the root of a union whose selected data has root `root`.
///
/// [spec]: https://eips.ethereum.org/EIPS/eip-8016#merkleization
pub fn mix_in_selector(root: &Hash256, selector: u8) -> Hash256 {
    let mut chunk = [0u8; BYTES_PER_CHUNK];
    chunk[0] = selector;
    hash_pair(root, &Hash256::from(chunk))
}

/// Whether `selectors` are valid compatible-union selectors: at least one, each in
/// `MIN_SELECTOR..=MAX_SELECTOR`, no duplicates.
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

/// Declares a compatible union (EIP-8016) as an enum with one single-field variant per option
/// and implements `ssz::Encode`, `ssz::Decode`, `tree_hash::TreeHash` and `selector()`.
///
/// Selectors are checked at compile time (`1..=127`, distinct). The options must have
/// compatible Merkleization (EIP-8016 `is_compatible_merkleization`, e.g. progressive containers
/// that agree on the field at each index); that is the declarer's responsibility.
///
/// ```text
/// compatible_union! {
///     /// Transfer or call.
///     #[derive(Debug, Clone, PartialEq)]
///     pub enum Payload {
///         1 => Transfer(TransferTx),
///         2 => Call(CallTx),
///     }
/// }
/// ```
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
            $crate::ssz_generic::compatible_union::selectors_are_valid(&[$($selector),+]),
            concat!("invalid compatible union selectors for ", stringify!($name)),
        );

        impl $name {
            /// The selector of the held option.
            $vis fn selector(&self) -> u8 {
                match self {
                    $(Self::$variant(_) => $selector,)+
                }
            }
        }

        impl ::ssz::Encode for $name {
            fn is_ssz_fixed_len() -> bool {
                false
            }

            fn ssz_bytes_len(&self) -> usize {
                1 + match self {
                    $(Self::$variant(data) => ::ssz::Encode::ssz_bytes_len(data),)+
                }
            }

            fn ssz_append(&self, buf: &mut Vec<u8>) {
                buf.push(self.selector());
                match self {
                    $(Self::$variant(data) => ::ssz::Encode::ssz_append(data, buf),)+
                }
            }
        }

        impl ::ssz::Decode for $name {
            fn is_ssz_fixed_len() -> bool {
                false
            }

            fn from_ssz_bytes(bytes: &[u8]) -> Result<Self, ::ssz::DecodeError> {
                let (&selector, data) = bytes
                    .split_first()
                    .ok_or(::ssz::DecodeError::InvalidByteLength { len: 0, expected: 1 })?;
                match selector {
                    $($selector => <$ty as ::ssz::Decode>::from_ssz_bytes(data).map(Self::$variant),)+
                    other => Err(::ssz::DecodeError::UnionSelectorInvalid(other)),
                }
            }
        }

        impl ::tree_hash::TreeHash for $name {
            fn tree_hash_type() -> ::tree_hash::TreeHashType {
                ::tree_hash::TreeHashType::Container
            }

            // A union is never packed; a parent asking anyway gets the root as its chunk.
            fn tree_hash_packed_encoding(&self) -> ::tree_hash::PackedEncoding {
                ::tree_hash::PackedEncoding::from_slice(self.tree_hash_root().as_slice())
            }

            fn tree_hash_packing_factor() -> usize {
                1
            }

            fn tree_hash_root(&self) -> ::tree_hash::Hash256 {
                let data_root = match self {
                    $(Self::$variant(data) => ::tree_hash::TreeHash::tree_hash_root(data),)+
                };
                $crate::ssz_generic::compatible_union::mix_in_selector(&data_root, self.selector())
            }
        }
    };
}
pub(crate) use compatible_union;

#[cfg(test)]
mod tests {
    use ssz::{Decode, Encode};
    use tree_hash::TreeHash;

    use super::*;

    compatible_union! {
        #[derive(Debug, Clone, PartialEq)]
        enum Example {
            1 => Small(u16),
            5 => Large(u64),
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
    fn selector_validation() {
        assert!(selectors_are_valid(&[1, 127]));
        assert!(!selectors_are_valid(&[]));
        assert!(!selectors_are_valid(&[0]));
        assert!(!selectors_are_valid(&[128]));
        assert!(!selectors_are_valid(&[3, 3]));
    }
}
