//! The spec's custom types (`Slot`, `Root`, `BLSPubkey`, …) as Rust types.
//!
//! [spec]: phase0/beacon-chain.md#custom-types and the same section of every later fork.

pub use alloy_primitives::{Address, B256, FixedBytes, U256};
use ssz_types::{FixedVector, VariableList};

use crate::EthSpec;

/// A 32-byte hash; the type the merkleization functions return.
pub type Hash256 = B256;
/// The hash tree root of an SSZ object.
pub type Root = B256;
/// 32 opaque bytes: randao mixes, graffiti, execution trie roots, Merkle branch nodes.
pub type Bytes32 = B256;
/// A 32-byte hash computed outside SSZ merkleization, such as an execution block hash.
pub type Hash32 = B256;
/// A signature domain: a domain type followed by the first 28 bytes of a fork data root.
pub type Domain = B256;
/// A blob's versioned hash: a version byte, then the tail of the SHA-256 of its KZG commitment.
pub type VersionedHash = B256;
/// 4 opaque bytes.
pub type Bytes4 = FixedBytes<4>;
/// 8 opaque bytes.
pub type Bytes8 = FixedBytes<8>;
/// 20 opaque bytes.
pub type Bytes20 = FixedBytes<20>;
/// 48 opaque bytes.
pub type Bytes48 = FixedBytes<48>;
/// 96 opaque bytes.
pub type Bytes96 = FixedBytes<96>;
/// A fork version, mixed into signature domains and fork digests.
pub type Version = FixedBytes<4>;
/// The 4-byte prefix that separates signatures by purpose (proposer, attester, randao, …).
pub type DomainType = FixedBytes<4>;
/// 4 bytes derived from the fork data root that name a fork of one chain on the network.
pub type ForkDigest = FixedBytes<4>;
/// The execution layer's identifier of a payload it is building.
pub type PayloadId = FixedBytes<8>;
/// A compressed BLS12-381 public key as it appears on the wire (48 bytes, not yet validated).
pub type BLSPubkey = FixedBytes<48>;
/// A compressed BLS12-381 signature as it appears on the wire (96 bytes, not yet validated).
pub type BLSSignature = FixedBytes<96>;
/// A compressed G1 point committing to a blob's polynomial (48 bytes, not yet validated).
pub type KZGCommitment = FixedBytes<48>;
/// A compressed G1 point proving evaluations of a committed polynomial (48 bytes, not validated).
pub type KZGProof = FixedBytes<48>;
/// A 20-byte execution-layer account address.
pub type ExecutionAddress = Address;

/// A slot number, counted from genesis.
pub type Slot = u64;
/// An epoch number, counted from genesis; `SLOTS_PER_EPOCH` slots each.
pub type Epoch = u64;
/// The index of a beacon committee within its slot.
pub type CommitteeIndex = u64;
/// A validator's position in the state's validator registry.
pub type ValidatorIndex = u64;
/// An amount of ether in Gwei (10^-9 ETH).
pub type Gwei = u64;
/// The global, monotonically increasing number of a withdrawal.
pub type WithdrawalIndex = u64;
/// A blob's position among its block's blob KZG commitments.
pub type BlobIndex = u64;
/// A column of the extended blob matrix, below `NUMBER_OF_COLUMNS`.
pub type ColumnIndex = u64;
/// A row of the extended blob matrix: the index of the blob it extends.
pub type RowIndex = u64;
/// A cell's position within an extended blob, below `CELLS_PER_EXT_BLOB`.
pub type CellIndex = u64;
/// A custody group, below `NUMBER_OF_CUSTODY_GROUPS`.
pub type CustodyIndex = u64;
/// A gossip subnet number (attestation, sync committee, blob or column subnet).
pub type SubnetId = u64;
/// A validator's epoch participation: one bit per timely source, target and head vote.
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
