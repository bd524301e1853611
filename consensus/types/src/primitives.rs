//! The spec's custom types (`Slot`, `Root`, `BLSPubkey`, …) as Rust types.
//!
//! [spec]: phase0/beacon-chain.md#custom-types and the same section of every later fork.

pub use alloy_primitives::{Address, B256, FixedBytes, U256};
use ssz_types::{FixedVector, VariableList};

use crate::EthSpec;

/// A 32-byte hash; the type the merkleization functions return.
pub type Hash256 = B256;
pub type Root = B256;
pub type Bytes32 = B256;
pub type Hash32 = B256;
pub type Domain = B256;
pub type VersionedHash = B256;
pub type Bytes4 = FixedBytes<4>;
pub type Bytes8 = FixedBytes<8>;
pub type Bytes20 = FixedBytes<20>;
pub type Bytes48 = FixedBytes<48>;
pub type Bytes96 = FixedBytes<96>;
pub type Version = FixedBytes<4>;
pub type DomainType = FixedBytes<4>;
pub type ForkDigest = FixedBytes<4>;
pub type PayloadId = FixedBytes<8>;
/// A compressed BLS12-381 public key as it appears on the wire (48 bytes, not yet validated).
pub type BLSPubkey = FixedBytes<48>;
/// A compressed BLS12-381 signature as it appears on the wire (96 bytes, not yet validated).
pub type BLSSignature = FixedBytes<96>;
pub type KZGCommitment = FixedBytes<48>;
pub type KZGProof = FixedBytes<48>;
pub type ExecutionAddress = Address;

pub type Slot = u64;
pub type Epoch = u64;
pub type CommitteeIndex = u64;
pub type ValidatorIndex = u64;
pub type Gwei = u64;
pub type WithdrawalIndex = u64;
pub type BlobIndex = u64;
pub type ColumnIndex = u64;
pub type RowIndex = u64;
pub type CellIndex = u64;
pub type CustodyIndex = u64;
pub type SubnetId = u64;
pub type ParticipationFlags = u8;

/// An execution-layer transaction, opaque to the consensus layer.
pub type Transaction<E> = VariableList<u8, <E as EthSpec>::MaxBytesPerTransaction>;
/// A blob: `FIELD_ELEMENTS_PER_BLOB` field elements of 32 bytes.
pub type Blob<E> = FixedVector<u8, <E as EthSpec>::BytesPerBlob>;
/// A cell: `FIELD_ELEMENTS_PER_CELL` field elements of 32 bytes.
pub type Cell<E> = FixedVector<u8, <E as EthSpec>::BytesPerCell>;

/// `FAR_FUTURE_EPOCH`.
pub const FAR_FUTURE_EPOCH: Epoch = u64::MAX;
/// `GENESIS_SLOT`.
pub const GENESIS_SLOT: Slot = 0;
/// `GENESIS_EPOCH`.
pub const GENESIS_EPOCH: Epoch = 0;
/// `DEPOSIT_CONTRACT_TREE_DEPTH`.
pub const DEPOSIT_CONTRACT_TREE_DEPTH: u64 = 32;
/// `JUSTIFICATION_BITS_LENGTH`.
pub const JUSTIFICATION_BITS_LENGTH: u64 = 4;
/// `BYTES_PER_FIELD_ELEMENT`.
pub const BYTES_PER_FIELD_ELEMENT: u64 = 32;
