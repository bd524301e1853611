//! Renders decoded values the way the vectors' `value.yaml` writes them (consensus-specs
//! `debug/encode.py`), so that a decoded value can be compared with the file.

use alloy_primitives::{U128, U256};
use progressive_ssz::{ProgressiveBitList, ProgressiveList};
use serde_yaml::Value;
use ssz::{BitList, BitVector, Encode};
use ssz_types::{FixedVector, VariableList};
use typenum::Unsigned;

/// A value in the YAML form of the spec tests' `value.yaml`.
pub(crate) trait ToYaml {
    /// This value as `encode(value)` of consensus-specs `debug/encode.py` writes it.
    fn to_yaml(&self) -> Value;
}

/// `0x`-prefixed lower-case hex, the form of byte lists and bitfields.
pub(crate) fn hex_yaml(bytes: &[u8]) -> Value {
    Value::String(format!("0x{}", hex::encode(bytes)))
}

macro_rules! small_uint_to_yaml {
    ($($ty:ty),+) => {
        $(impl ToYaml for $ty {
            fn to_yaml(&self) -> Value {
                Value::Number(u64::from(*self).into())
            }
        })+
    };
}
small_uint_to_yaml!(u8, u16, u32, u64);

// Integers wider than 8 bytes are written as decimal strings.
impl ToYaml for U128 {
    fn to_yaml(&self) -> Value {
        Value::String(self.to_string())
    }
}

impl ToYaml for U256 {
    fn to_yaml(&self) -> Value {
        Value::String(self.to_string())
    }
}

impl ToYaml for bool {
    fn to_yaml(&self) -> Value {
        Value::Bool(*self)
    }
}

fn sequence_yaml<'a, T: ToYaml + 'a>(items: impl IntoIterator<Item = &'a T>) -> Value {
    Value::Sequence(items.into_iter().map(ToYaml::to_yaml).collect())
}

impl<T: ToYaml, N: Unsigned> ToYaml for FixedVector<T, N> {
    fn to_yaml(&self) -> Value {
        sequence_yaml(self.iter())
    }
}

impl<T: ToYaml, N: Unsigned> ToYaml for VariableList<T, N> {
    fn to_yaml(&self) -> Value {
        sequence_yaml(self.iter())
    }
}

impl<T: ToYaml> ToYaml for ProgressiveList<T> {
    fn to_yaml(&self) -> Value {
        sequence_yaml(self.iter())
    }
}

impl<N: Unsigned + Clone> ToYaml for BitList<N> {
    fn to_yaml(&self) -> Value {
        hex_yaml(&self.as_ssz_bytes())
    }
}

impl<N: Unsigned + Clone> ToYaml for BitVector<N> {
    fn to_yaml(&self) -> Value {
        hex_yaml(&self.as_ssz_bytes())
    }
}

impl ToYaml for ProgressiveBitList {
    fn to_yaml(&self) -> Value {
        hex_yaml(&self.as_ssz_bytes())
    }
}

/// Implements [`ToYaml`] for a container as a mapping of the spec's field names; a field marked
/// `as hex` (byte lists: `ByteList`, `ProgressiveList[Byte]`) is written as its SSZ bytes in hex.
macro_rules! container_to_yaml {
    ($name:ty { $($key:literal => $field:ident $(as $hex:ident)?),+ $(,)? }) => {
        impl $crate::ssz_generic::yaml::ToYaml for $name {
            fn to_yaml(&self) -> ::serde_yaml::Value {
                let mut map = ::serde_yaml::Mapping::new();
                $(map.insert(
                    ::serde_yaml::Value::String($key.into()),
                    $crate::ssz_generic::yaml::container_to_yaml!(@field self.$field $(, $hex)?),
                );)+
                ::serde_yaml::Value::Mapping(map)
            }
        }
    };
    (@field $value:expr) => {
        $crate::ssz_generic::yaml::ToYaml::to_yaml(&$value)
    };
    (@field $value:expr, hex) => {
        $crate::ssz_generic::yaml::hex_yaml(&::ssz::Encode::as_ssz_bytes(&$value))
    };
}
pub(crate) use container_to_yaml;
