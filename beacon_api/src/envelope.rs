//! The response envelopes every endpoint wraps its data in, the fork-versioned form, and the
//! header names the spec defines.
//!
//! [spec]: beacon-node-oapi.yaml `components/headers`, and the `data`, `execution_optimistic`,
//! `finalized`, `version` and `dependent_root` properties of the responses.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use types::{EthSpec, ForkName, Root};

/// `Eth-Consensus-Version`: the fork of the data, on versioned responses and on SSZ or versioned
/// request bodies.
pub const CONSENSUS_VERSION_HEADER: &str = "Eth-Consensus-Version";
/// `Eth-Execution-Payload-Blinded`: whether produceBlockV3 returned a blinded block.
pub const EXECUTION_PAYLOAD_BLINDED_HEADER: &str = "Eth-Execution-Payload-Blinded";
/// `Eth-Execution-Payload-Value`: the payload's value in wei (decimal).
pub const EXECUTION_PAYLOAD_VALUE_HEADER: &str = "Eth-Execution-Payload-Value";
/// `Eth-Consensus-Block-Value`: the block's consensus rewards to the proposer in wei (decimal).
pub const CONSENSUS_BLOCK_VALUE_HEADER: &str = "Eth-Consensus-Block-Value";

/// `{ "data": ... }`: the envelope of every JSON response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenericResponse<T> {
    /// The response's data.
    pub data: T,
}

/// `{ "execution_optimistic": ..., "data": ... }`: data about a block or state that may rest on
/// an optimistically imported (not yet EL-verified) block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionOptimisticResponse<T> {
    /// True if the data references an unverified execution payload.
    pub execution_optimistic: bool,
    /// The response's data.
    pub data: T,
}

/// `{ "execution_optimistic": ..., "finalized": ..., "data": ... }`: data read at a block or
/// state, with whether it is optimistic and whether it is finalized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionOptimisticFinalizedResponse<T> {
    /// True if the data references an unverified execution payload.
    pub execution_optimistic: bool,
    /// True if the data is from a finalized block or state.
    pub finalized: bool,
    /// The response's data.
    pub data: T,
}

/// `{ "dependent_root": ..., "execution_optimistic": ..., "data": [...] }`: the duty responses.
/// A change of `dependent_root` means the duties must be fetched again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DutiesResponse<T> {
    /// The block the duties were decided by: `get_block_root_at_slot(state,
    /// compute_start_slot_at_epoch(epoch) - 1)` for proposer duties, and the same at `epoch - 1`
    /// for attester duties.
    pub dependent_root: Root,
    /// True if the data references an unverified execution payload.
    pub execution_optimistic: bool,
    /// The duties.
    pub data: T,
}

/// A value whose JSON shape depends on its fork, read with the fork named beside it (the
/// `version` field or the `Eth-Consensus-Version` header), since the JSON does not say.
pub trait ForkVersionedJson: Sized {
    /// Writes the value's JSON (the variant's own).
    fn serialize_data<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;

    /// Reads the JSON of this value at `fork`; a fork in which it does not exist is an error.
    fn deserialize_by_fork<'de, D: Deserializer<'de>>(
        deserializer: D,
        fork: ForkName,
    ) -> Result<Self, D::Error>;
}

/// `{ "version": ..., "execution_optimistic"?: ..., "finalized"?: ..., "data": ... }`: the
/// fork-versioned responses (blocks, states, aggregates, light-client objects), and the body of
/// versioned pool submissions.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkVersionedResponse<T> {
    /// The fork of `data`.
    pub version: ForkName,
    /// Present on responses read at a block or state.
    pub execution_optimistic: Option<bool>,
    /// Present on responses read at a block or state.
    pub finalized: Option<bool>,
    /// The data, in the shape of `version`.
    pub data: T,
}

impl<T> ForkVersionedResponse<T> {
    /// A response with only `version` and `data`.
    pub fn new(version: ForkName, data: T) -> Self {
        Self {
            version,
            execution_optimistic: None,
            finalized: None,
            data,
        }
    }
}

struct DataOf<'a, T>(&'a T);

impl<T: ForkVersionedJson> Serialize for DataOf<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_data(serializer)
    }
}

impl<T: ForkVersionedJson> Serialize for ForkVersionedResponse<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a, D: Serialize> {
            #[serde(with = "crate::json::fork_name")]
            version: &'a ForkName,
            #[serde(skip_serializing_if = "Option::is_none")]
            execution_optimistic: Option<bool>,
            #[serde(skip_serializing_if = "Option::is_none")]
            finalized: Option<bool>,
            data: D,
        }
        Out {
            version: &self.version,
            execution_optimistic: self.execution_optimistic,
            finalized: self.finalized,
            data: DataOf(&self.data),
        }
        .serialize(serializer)
    }
}

impl<'de, T: ForkVersionedJson> Deserialize<'de> for ForkVersionedResponse<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `data` can only be read once `version` is known, and JSON objects are unordered.
        #[derive(Deserialize)]
        struct In {
            #[serde(with = "crate::json::fork_name")]
            version: ForkName,
            #[serde(default)]
            execution_optimistic: Option<bool>,
            #[serde(default)]
            finalized: Option<bool>,
            data: serde_json::Value,
        }
        let raw = In::deserialize(deserializer)?;
        let data = T::deserialize_by_fork(raw.data, raw.version).map_err(D::Error::custom)?;
        Ok(Self {
            version: raw.version,
            execution_optimistic: raw.execution_optimistic,
            finalized: raw.finalized,
            data,
        })
    }
}

/// Reads `bytes` as the JSON of a fork-generic value at `fork` (a body whose fork came in the
/// `Eth-Consensus-Version` header).
pub fn from_json_by_fork<T: ForkVersionedJson>(
    bytes: &[u8],
    fork: ForkName,
) -> Result<T, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = T::deserialize_by_fork(&mut deserializer, fork)?;
    deserializer.end()?;
    Ok(value)
}

/// Writes the JSON of a fork-generic value (without its version).
pub fn to_json<T: ForkVersionedJson>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::new();
    value.serialize_data(&mut serde_json::Serializer::new(&mut out))?;
    Ok(out)
}

/// `Vec<T>` of fork-generic values all of one fork (pool submissions, block attestations).
impl<T: ForkVersionedJson> ForkVersionedJson for Vec<T> {
    fn serialize_data<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for item in self {
            seq.serialize_element(&DataOf(item))?;
        }
        seq.end()
    }

    fn deserialize_by_fork<'de, D: Deserializer<'de>>(
        deserializer: D,
        fork: ForkName,
    ) -> Result<Self, D::Error> {
        Vec::<serde_json::Value>::deserialize(deserializer)?
            .into_iter()
            .map(|item| T::deserialize_by_fork(item, fork).map_err(D::Error::custom))
            .collect()
    }
}

/// Implements [`ForkVersionedJson`] for a fork enum of `types` by delegating to the variant;
/// invoked by `types::fork_variants!`, the one table of the fork enums' forks and types.
macro_rules! fork_versioned_enum {
    ($(;)? $name:ident { $($variant:ident => $ty:ty),+ $(,)? }) => {
        impl<E: EthSpec> ForkVersionedJson for types::$name<E> {
            fn serialize_data<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Self::$variant(inner) => inner.serialize(serializer),)+
                }
            }

            fn deserialize_by_fork<'de, D: Deserializer<'de>>(
                deserializer: D,
                fork: ForkName,
            ) -> Result<Self, D::Error> {
                match fork {
                    $(ForkName::$variant => <$ty>::deserialize(deserializer).map(Self::$variant),)+
                    #[allow(unreachable_patterns)]
                    other => Err(D::Error::custom(format!(
                        "{} does not exist at fork {other}",
                        stringify!($name)
                    ))),
                }
            }
        }
    };
}

types::fork_variants!(@each fork_versioned_enum);

/// Implements [`ForkVersionedJson`] for a container whose shape is the same at every fork it is
/// served at (the version still travels beside it, as the endpoint requires).
macro_rules! fork_versioned_fixed {
    ($($ty:ty),+ $(,)?) => {$(
        impl ForkVersionedJson for $ty {
            fn serialize_data<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.serialize(serializer)
            }

            fn deserialize_by_fork<'de, D: Deserializer<'de>>(
                deserializer: D,
                _fork: ForkName,
            ) -> Result<Self, D::Error> {
                <$ty>::deserialize(deserializer)
            }
        }
    )+};
}

fork_versioned_fixed!(
    types::electra::SingleAttestation,
    types::gloas::SignedExecutionPayloadBid,
    types::gloas::PayloadAttestationMessage,
);
