//! `BlockContents` and `SignedBlockContents`: what produceBlockV3 returns and publishBlockV2
//! takes. Before Deneb they are the (signed) block alone; from Deneb they carry the blobs and
//! their KZG proofs beside it (one proof per blob in Deneb and Electra, one per cell —
//! `CELLS_PER_EXT_BLOB` per blob — from Fulu).
//!
//! [spec]: types/deneb/block_contents.yaml, types/electra/block_contents.yaml,
//! types/fulu/block_contents.yaml

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use ssz::{Decode, DecodeError, Encode};
use ssz_derive::{Decode as DeriveDecode, Encode as DeriveEncode};
use ssz_types::VariableList;
use ssz_types::typenum::Unsigned;
use types::{
    Blob, EthSpec, ForkName, KZGProof, altair, bellatrix, capella, deneb, electra, fulu, phase0,
};

use crate::envelope::ForkVersionedJson;

/// The blobs of a block with their KZG proofs, in the order of the block's commitments.
pub type Blobs<E> = VariableList<Blob<E>, <E as EthSpec>::MaxBlobCommitmentsPerBlock>;

/// The SSZ of [`Blobs`], each blob copied as one slice (`ssz_types` encodes and decodes a
/// fixed vector of bytes one byte at a time: about 10 ms of a 48-blob response).
pub(crate) mod blobs_ssz {
    /// Encoding, for `#[ssz(with)]`. Generic over the list's lengths (a blob's bytes, the most
    /// blobs), which the field's type fixes.
    pub(crate) mod encode {
        use ssz_types::typenum::Unsigned;
        use ssz_types::{FixedVector, VariableList};

        /// A list: variable length.
        pub(crate) fn is_ssz_fixed_len() -> bool {
            false
        }

        /// The offset a variable-length field takes in its container.
        pub(crate) fn ssz_fixed_len() -> usize {
            ssz::BYTES_PER_LENGTH_OFFSET
        }

        /// The blobs' bytes, back to back.
        pub(crate) fn ssz_bytes_len<B: Unsigned, M: Unsigned>(
            blobs: &VariableList<FixedVector<u8, B>, M>,
        ) -> usize {
            blobs.len() * B::to_usize()
        }

        /// Appends every blob's bytes.
        pub(crate) fn ssz_append<B: Unsigned, M: Unsigned>(
            blobs: &VariableList<FixedVector<u8, B>, M>,
            buf: &mut Vec<u8>,
        ) {
            buf.reserve(ssz_bytes_len(blobs));
            for blob in blobs.iter() {
                buf.extend_from_slice(blob);
            }
        }
    }

    /// Decoding, for `#[ssz(with)]`.
    pub(crate) mod decode {
        use ssz::DecodeError;
        use ssz_types::typenum::Unsigned;
        use ssz_types::{FixedVector, VariableList};

        pub(crate) use super::encode::{is_ssz_fixed_len, ssz_fixed_len};

        /// Blobs of exactly `B` bytes each, at most `M` of them.
        pub(crate) fn from_ssz_bytes<B: Unsigned, M: Unsigned>(
            bytes: &[u8],
        ) -> Result<VariableList<FixedVector<u8, B>, M>, DecodeError> {
            let size = B::to_usize();
            if !bytes.len().is_multiple_of(size) {
                return Err(DecodeError::InvalidByteLength {
                    len: bytes.len(),
                    expected: bytes.len() / size * size,
                });
            }
            let count = bytes.len() / size;
            let max = M::to_usize();
            if count > max {
                return Err(DecodeError::BytesInvalid(format!(
                    "{count} blobs, more than the list's limit of {max}"
                )));
            }
            let blobs = bytes
                .chunks_exact(size)
                .map(|chunk| {
                    FixedVector::new(chunk.to_vec())
                        .map_err(|e| DecodeError::BytesInvalid(format!("blob: {e:?}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            VariableList::new(blobs).map_err(|e| DecodeError::BytesInvalid(format!("blobs: {e:?}")))
        }
    }
}

/// A block's blob data: the KZG proofs and the blobs.
pub type BlobData<E> = (Vec<KZGProof>, Blobs<E>);

/// KZG proofs that do not match the blobs in number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{proofs} KZG proofs for {blobs} blobs at {fork}: expected {expected}")]
pub struct ProofCountMismatch {
    /// The fork of the contents.
    pub fork: ForkName,
    /// The proofs carried.
    pub proofs: usize,
    /// The blobs carried.
    pub blobs: usize,
    /// The proofs the blobs need (saturating at `usize::MAX`).
    pub expected: usize,
}

/// Checks the proof count against the blob count for `fork`: one per blob before Fulu, one per
/// cell from Fulu.
fn check_proof_count<E: EthSpec>(
    fork: ForkName,
    proofs: usize,
    blobs: usize,
) -> Result<(), ProofCountMismatch> {
    let per_blob = if fork >= ForkName::Fulu {
        E::CellsPerExtBlob::to_usize()
    } else {
        1
    };
    let expected = blobs.saturating_mul(per_blob);
    if proofs == expected {
        Ok(())
    } else {
        Err(ProofCountMismatch {
            fork,
            proofs,
            blobs,
            expected,
        })
    }
}

macro_rules! contents_types {
    (
        $(#[$doc:meta])* $name:ident, $block_field:ident, $enum_block:ident;
        $($(#[$vdoc:meta])* $with_blobs:ident<$fork_mod:ident>),+
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name<E: EthSpec> {
            /// Phase 0: the block alone.
            Phase0(phase0::$enum_block<E>),
            /// Altair: the block alone.
            Altair(altair::$enum_block<E>),
            /// Bellatrix: the block alone.
            Bellatrix(bellatrix::$enum_block<E>),
            /// Capella: the block alone.
            Capella(capella::$enum_block<E>),
            $($(#[$vdoc])* $with_blobs($with_blobs<E>),)+
        }

        $(
            #[doc = concat!("The ", stringify!($fork_mod), " `", stringify!($name), "`: the block, the blobs' KZG proofs and the blobs.")]
            #[derive(Debug, Clone, PartialEq, DeriveEncode, DeriveDecode, Serialize, Deserialize)]
            #[serde(bound = "E: EthSpec")]
            pub struct $with_blobs<E: EthSpec> {
                /// The block.
                pub $block_field: $fork_mod::$enum_block<E>,
                /// The KZG proofs of the blobs (per blob, or per cell from Fulu).
                pub kzg_proofs: Vec<KZGProof>,
                /// The blobs.
                #[serde(with = "crate::json::list_of_hex_fixed_vec")]
                #[ssz(with = "blobs_ssz")]
                pub blobs: Blobs<E>,
            }
        )+

        impl<E: EthSpec> $name<E> {
            /// The fork of the contents.
            pub fn fork_name(&self) -> ForkName {
                match self {
                    Self::Phase0(_) => ForkName::Phase0,
                    Self::Altair(_) => ForkName::Altair,
                    Self::Bellatrix(_) => ForkName::Bellatrix,
                    Self::Capella(_) => ForkName::Capella,
                    $(Self::$with_blobs(_) => ForkName::$with_blobs,)+
                }
            }

            /// The proof and blob counts, where the fork carries blobs.
            fn blob_counts(&self) -> Option<(usize, usize)> {
                match self {
                    Self::Phase0(_) | Self::Altair(_) | Self::Bellatrix(_) | Self::Capella(_) => None,
                    $(Self::$with_blobs(c) => Some((c.kzg_proofs.len(), c.blobs.len())),)+
                }
            }

            /// Checks that the proofs match the blobs in number.
            pub fn check_proof_count(&self) -> Result<(), ProofCountMismatch> {
                match self.blob_counts() {
                    Some((proofs, blobs)) => check_proof_count::<E>(self.fork_name(), proofs, blobs),
                    None => Ok(()),
                }
            }

            /// Decodes untrusted SSZ bytes as the contents of `fork`, the proof count checked.
            pub fn from_ssz_bytes_by_fork(bytes: &[u8], fork: ForkName) -> Result<Self, DecodeError> {
                let contents = match fork {
                    ForkName::Phase0 => Self::Phase0(Decode::from_ssz_bytes(bytes)?),
                    ForkName::Altair => Self::Altair(Decode::from_ssz_bytes(bytes)?),
                    ForkName::Bellatrix => Self::Bellatrix(Decode::from_ssz_bytes(bytes)?),
                    ForkName::Capella => Self::Capella(Decode::from_ssz_bytes(bytes)?),
                    $(ForkName::$with_blobs => Self::$with_blobs(Decode::from_ssz_bytes(bytes)?),)+
                    // A Gloas block carries a bid; its payload and blobs come apart, in an
                    // envelope (block production and publication at Gloas: issue 45).
                    ForkName::Gloas => {
                        return Err(DecodeError::BytesInvalid(format!(
                            "{} at fork {} is not supported",
                            stringify!($name),
                            ForkName::Gloas
                        )));
                    }
                };
                contents
                    .check_proof_count()
                    .map_err(|e| DecodeError::BytesInvalid(e.to_string()))?;
                Ok(contents)
            }

            /// The SSZ encoding.
            pub fn as_ssz_bytes(&self) -> Vec<u8> {
                match self {
                    Self::Phase0(b) => b.as_ssz_bytes(),
                    Self::Altair(b) => b.as_ssz_bytes(),
                    Self::Bellatrix(b) => b.as_ssz_bytes(),
                    Self::Capella(b) => b.as_ssz_bytes(),
                    $(Self::$with_blobs(c) => c.as_ssz_bytes(),)+
                }
            }
        }

        impl<E: EthSpec> ForkVersionedJson for $name<E> {
            fn serialize_data<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    Self::Phase0(b) => b.serialize(serializer),
                    Self::Altair(b) => b.serialize(serializer),
                    Self::Bellatrix(b) => b.serialize(serializer),
                    Self::Capella(b) => b.serialize(serializer),
                    $(Self::$with_blobs(c) => c.serialize(serializer),)+
                }
            }

            fn deserialize_by_fork<'de, D: Deserializer<'de>>(
                deserializer: D,
                fork: ForkName,
            ) -> Result<Self, D::Error> {
                let contents = match fork {
                    ForkName::Phase0 => Self::Phase0(Deserialize::deserialize(deserializer)?),
                    ForkName::Altair => Self::Altair(Deserialize::deserialize(deserializer)?),
                    ForkName::Bellatrix => Self::Bellatrix(Deserialize::deserialize(deserializer)?),
                    ForkName::Capella => Self::Capella(Deserialize::deserialize(deserializer)?),
                    $(ForkName::$with_blobs => Self::$with_blobs(Deserialize::deserialize(deserializer)?),)+
                    ForkName::Gloas => {
                        return Err(D::Error::custom(format!(
                            "{} at fork {} is not supported",
                            stringify!($name),
                            ForkName::Gloas
                        )));
                    }
                };
                contents.check_proof_count().map_err(D::Error::custom)?;
                Ok(contents)
            }
        }
    };
}

contents_types! {
    /// `BlockContents` by fork: the unsigned block produceBlockV3 returns (unblinded).
    BlockContents, block, BeaconBlock;
    /// Deneb: block, proofs and blobs.
    Deneb<deneb>,
    /// Electra: block, proofs and blobs.
    Electra<electra>,
    /// Fulu: block, cell proofs and blobs.
    Fulu<fulu>
}

/// The per-fork `BlockContents` of Deneb.
pub type DenebBlockContents<E> = Deneb<E>;

mod signed {
    use super::*;

    contents_types! {
        /// `SignedBlockContents` by fork: what publishBlockV2 takes.
        SignedBlockContents, signed_block, SignedBeaconBlock;
        /// Deneb: signed block, proofs and blobs.
        Deneb<deneb>,
        /// Electra: signed block, proofs and blobs.
        Electra<electra>,
        /// Fulu: signed block, cell proofs and blobs.
        Fulu<fulu>
    }
}

pub use signed::SignedBlockContents;
/// The per-fork `SignedBlockContents` structs (`signed::Deneb`, …).
pub use signed::{Deneb as SignedDeneb, Electra as SignedElectra, Fulu as SignedFulu};

impl<E: EthSpec> BlockContents<E> {
    /// Splits the contents into the fork-generic block and, from Deneb, its proofs and blobs.
    pub fn into_block_and_blobs(self) -> (types::BeaconBlock<E>, Option<BlobData<E>>) {
        match self {
            Self::Phase0(b) => (types::BeaconBlock::Phase0(b), None),
            Self::Altair(b) => (types::BeaconBlock::Altair(b), None),
            Self::Bellatrix(b) => (types::BeaconBlock::Bellatrix(b), None),
            Self::Capella(b) => (types::BeaconBlock::Capella(b), None),
            Self::Deneb(c) => (
                types::BeaconBlock::Deneb(c.block),
                Some((c.kzg_proofs, c.blobs)),
            ),
            Self::Electra(c) => (
                types::BeaconBlock::Electra(c.block),
                Some((c.kzg_proofs, c.blobs)),
            ),
            Self::Fulu(c) => (
                types::BeaconBlock::Fulu(c.block),
                Some((c.kzg_proofs, c.blobs)),
            ),
        }
    }
}

/// A signed block and blob data that do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContentsError {
    /// A Deneb-or-later block without blob data, or an earlier one with it.
    #[error("a {0} block {1} blob data")]
    BlobPresence(ForkName, &'static str),
    /// The proofs do not match the blobs in number.
    #[error(transparent)]
    ProofCount(#[from] ProofCountMismatch),
}

impl<E: EthSpec> SignedBlockContents<E> {
    /// Puts a signed block and its blob data (from Deneb; `None` before) together, checking
    /// that they fit.
    pub fn new(
        block: types::SignedBeaconBlock<E>,
        blobs: Option<BlobData<E>>,
    ) -> Result<Self, ContentsError> {
        use types::SignedBeaconBlock as B;
        let fork = block.fork_name();
        let contents = match (block, blobs) {
            (B::Phase0(b), None) => Self::Phase0(b),
            (B::Altair(b), None) => Self::Altair(b),
            (B::Bellatrix(b), None) => Self::Bellatrix(b),
            (B::Capella(b), None) => Self::Capella(b),
            (B::Deneb(b), Some((kzg_proofs, blobs))) => Self::Deneb(SignedDeneb {
                signed_block: b,
                kzg_proofs,
                blobs,
            }),
            (B::Electra(b), Some((kzg_proofs, blobs))) => Self::Electra(SignedElectra {
                signed_block: b,
                kzg_proofs,
                blobs,
            }),
            (B::Fulu(b), Some((kzg_proofs, blobs))) => Self::Fulu(SignedFulu {
                signed_block: b,
                kzg_proofs,
                blobs,
            }),
            (_, None) => return Err(ContentsError::BlobPresence(fork, "needs")),
            (_, Some(_)) => return Err(ContentsError::BlobPresence(fork, "cannot carry")),
        };
        contents
            .check_proof_count()
            .map_err(ContentsError::ProofCount)?;
        Ok(contents)
    }
}
