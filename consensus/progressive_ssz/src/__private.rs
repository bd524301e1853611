//! What the macros expand to: re-exported crates and the serde plumbing of compatible unions.
//! Not a stable interface.

use std::fmt;
use std::marker::PhantomData;

pub use serde;
pub use ssz;
pub use tree_hash;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Reading the `data` of a compatible union once its selector is known.
pub trait UnionOptions: Sized {
    /// Reads the next map value as the type option of `selector`.
    fn read_option<'de, A: MapAccess<'de>>(selector: u8, map: &mut A) -> Result<Self, A::Error>;
}

/// The error for a selector the union does not have.
pub fn unknown_selector<E: de::Error>(selector: u8) -> E {
    E::custom(format!("unknown compatible union selector {selector}"))
}

/// Writes `{"selector": "<selector>", "data": <data>}`.
pub fn serialize_union<S: Serializer, T: Serialize + ?Sized>(
    serializer: S,
    name: &'static str,
    selector: u8,
    data: &T,
) -> Result<S::Ok, S::Error> {
    let mut object = serializer.serialize_struct(name, 2)?;
    object.serialize_field("selector", &selector.to_string())?;
    object.serialize_field("data", data)?;
    object.end()
}

/// Reads `{"selector": …, "data": …}` (selector first; other keys ignored).
pub fn deserialize_union<'de, D: Deserializer<'de>, U: UnionOptions>(
    deserializer: D,
    expecting: &'static str,
) -> Result<U, D::Error> {
    deserializer.deserialize_map(UnionVisitor {
        expecting,
        union: PhantomData,
    })
}

struct UnionVisitor<U> {
    expecting: &'static str,
    union: PhantomData<U>,
}

impl<'de, U: UnionOptions> Visitor<'de> for UnionVisitor<U> {
    type Value = U;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<U, A::Error> {
        let mut selector = None;
        let mut value = None;
        while let Some(key) = map.next_key::<UnionKey>()? {
            match key {
                UnionKey::Selector => {
                    if selector.is_some() {
                        return Err(de::Error::duplicate_field("selector"));
                    }
                    selector = Some(map.next_value::<Selector>()?.0);
                }
                UnionKey::Data => {
                    if value.is_some() {
                        return Err(de::Error::duplicate_field("data"));
                    }
                    // The data's type depends on the selector; without buffering (which
                    // serde offers only privately) it must already be known.
                    let selector = selector.ok_or_else(|| {
                        de::Error::custom("compatible union: \"selector\" must precede \"data\"")
                    })?;
                    value = Some(U::read_option(selector, &mut map)?);
                }
                UnionKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match (selector, value) {
            (None, _) => Err(de::Error::missing_field("selector")),
            (Some(_), None) => Err(de::Error::missing_field("data")),
            (Some(_), Some(value)) => Ok(value),
        }
    }
}

/// A key of a union's JSON object.
enum UnionKey {
    Selector,
    Data,
    Other,
}

impl<'de> Deserialize<'de> for UnionKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(UnionKeyVisitor)
    }
}

struct UnionKeyVisitor;

impl Visitor<'_> for UnionKeyVisitor {
    type Value = UnionKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<UnionKey, E> {
        Ok(match key {
            "selector" => UnionKey::Selector,
            "data" => UnionKey::Data,
            _ => UnionKey::Other,
        })
    }
}

/// A selector as a decimal string (the JSON mapping) or a number.
struct Selector(u8);

impl<'de> Deserialize<'de> for Selector {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SelectorVisitor)
    }
}

struct SelectorVisitor;

impl Visitor<'_> for SelectorVisitor {
    type Value = Selector;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a selector as a decimal string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Selector, E> {
        text.parse()
            .map(Selector)
            .map_err(|e| E::custom(format!("invalid selector {text:?}: {e}")))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Selector, E> {
        u8::try_from(value)
            .map(Selector)
            .map_err(|_| E::custom(format!("selector {value} out of range")))
    }
}
