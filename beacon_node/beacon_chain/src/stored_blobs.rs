//! A block's blobs made from its stored data columns (Fulu's sidecars, or Gloas's that came
//! with the payload envelope), for the Beacon API's `getBlobs`; and a Fulu block's blob
//! sidecars, for `getBlobSidecars`.
//!
//! A blob is the first half of its row of the extended matrix: the cells of columns
//! `0..NUMBER_OF_COLUMNS / 2` concatenated (cells are evaluations in bit-reversed order, whose
//! first half is the blob's own domain). A node holding every one of those columns reads the
//! blobs directly; one holding at least half of all columns recovers each row first.
//!
//! [spec]: fulu/das-core.md#recover_matrix, deneb/validator.md#sidecar

use rayon::prelude::*;
use ssz_types::FixedVector;
use tree_hash::TreeHash;
use types::typenum::Unsigned;
use types::{Bytes32, EthSpec, KZGCommitment, KZGProof, Root, SignedBeaconBlock};

use crate::chain::BeaconChain;
use crate::data_column_sidecars::{
    DataColumnSidecarError, compute_kzg_commitments_inclusion_proof,
};

/// Why a block's blobs could not be made from its stored columns. The node holding too few
/// columns ([`Self::TooFewColumns`]) is an answer about what it has; every other variant is a
/// failure of the node (its store, or data it stored).
#[derive(Debug, thiserror::Error)]
pub enum StoredBlobsError {
    /// Fewer than half of the block's columns are stored: its blobs cannot be recovered.
    #[error("block {block_root}: {stored} of {columns} columns stored, the blobs need half")]
    TooFewColumns {
        /// The block.
        block_root: Root,
        /// The columns stored.
        stored: usize,
        /// `NUMBER_OF_COLUMNS`.
        columns: u64,
    },
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] store::StoreError),
    /// A column listed as stored could not be read back.
    #[error("column {index} of {block_root} vanished")]
    ColumnVanished {
        /// The block.
        block_root: Root,
        /// The column.
        index: u64,
    },
    /// A stored column has no cell for a blob of its block.
    #[error("column without row {row}")]
    MissingRow {
        /// The blob's position.
        row: usize,
    },
    /// A stored cell is not a cell.
    #[error("stored cell: {0}")]
    Cell(#[source] kzg::Error),
    /// Recovering a row from half the columns failed.
    #[error("recovering row {row}: {source}")]
    Recovery {
        /// The blob's position.
        row: usize,
        /// The failure.
        #[source]
        source: kzg::Error,
    },
    /// Blob sidecars are made from columns for Fulu blocks only.
    #[error("block {0} is not a Fulu block")]
    NotFulu(Root),
    /// The branch of the block's commitments against its body could not be built.
    #[error("block {block_root}: {source}")]
    InclusionProof {
        /// The block.
        block_root: Root,
        /// The failure.
        #[source]
        source: DataColumnSidecarError,
    },
    /// A blob asked for has no commitment in the block.
    #[error("no commitment {0}")]
    NoCommitment(usize),
    /// A recovered blob is not a blob.
    #[error("blob {index} of {block_root}: {source}")]
    Blob {
        /// The block.
        block_root: Root,
        /// The blob's position.
        index: usize,
        /// The failure.
        #[source]
        source: kzg::Error,
    },
    /// A blob's KZG proof could not be computed.
    #[error("KZG proof of blob {index}: {source}")]
    Proof {
        /// The blob's position.
        index: usize,
        /// The failure.
        #[source]
        source: kzg::Error,
    },
}

/// The Merkle tree of a block's commitments list below its length mix-in, built once for all
/// of the block's sidecars: each level's nodes as far as the list reaches, the zero subtrees
/// past its end left implicit (`types::merkle_proof::compute_merkle_proof` walks containers and
/// would pad the list to all `MAX_BLOB_COMMITMENTS_PER_BLOCK` leaves).
struct CommitmentsTree {
    /// `levels[0]`: the commitments' roots; each next level their parents.
    levels: Vec<Vec<[u8; 32]>>,
    /// The root of an all-zero subtree at each level.
    zeros: Vec<[u8; 32]>,
    len: usize,
}

impl CommitmentsTree {
    fn new<E: EthSpec>(commitments: &[KZGCommitment]) -> Self {
        let depth = E::MaxBlobCommitmentsPerBlock::to_usize()
            .next_power_of_two()
            .trailing_zeros() as usize;
        let mut levels = vec![
            commitments
                .iter()
                .map(|c| c.tree_hash_root().0)
                .collect::<Vec<_>>(),
        ];
        let mut zeros = vec![[0u8; 32]];
        for d in 0..depth {
            let zero = zeros[d];
            let above = levels[d]
                .chunks(2)
                .map(|pair| ethereum_hashing::hash32_concat(&pair[0], pair.get(1).unwrap_or(&zero)))
                .collect();
            levels.push(above);
            zeros.push(ethereum_hashing::hash32_concat(&zero, &zero));
        }
        Self {
            levels,
            zeros,
            len: commitments.len(),
        }
    }

    /// The branch of element `index` up to the list's root (its sibling at each level below
    /// the root), then the length the root mixes in.
    fn branch(&self, index: usize) -> Vec<Bytes32> {
        let depth = self.zeros.len() - 1;
        let mut branch: Vec<Bytes32> = (0..depth)
            .map(|d| {
                let sibling = (index >> d) ^ 1;
                Bytes32::from(
                    self.levels[d]
                        .get(sibling)
                        .copied()
                        .unwrap_or(self.zeros[d]),
                )
            })
            .collect();
        let mut length = [0u8; 32];
        length[..8].copy_from_slice(&(self.len as u64).to_le_bytes());
        branch.push(Bytes32::from(length));
        branch
    }
}

/// The cell of blob `row` in a stored column of either fork (a Gloas sidecar holds its cells
/// as a Fulu one does; only the block it names and the commitments' place differ).
fn column_cell<E: EthSpec>(column: &types::DataColumnSidecar<E>, row: usize) -> Option<&[u8]> {
    match column {
        types::DataColumnSidecar::Fulu(c) => c.column.get(row).map(|cell| cell.as_ref()),
        types::DataColumnSidecar::Gloas(c) => c.column.get(row).map(|cell| cell.as_ref()),
    }
}

impl<E: EthSpec> BeaconChain<E> {
    /// The blobs `wanted` (positions among the block's commitments) of block `block_root`,
    /// from its stored columns: read from the first half, or each row recovered from any half.
    pub fn blobs_from_columns(
        &self,
        block_root: &Root,
        wanted: &[usize],
    ) -> Result<Vec<Vec<u8>>, StoredBlobsError> {
        let store = self.store();
        let columns = E::NumberOfColumns::to_u64();
        let half = columns / 2;
        let indices = store.data_column_indices(block_root)?;
        let systematic = (0..half).all(|i| indices.contains(&i));
        if !systematic && (indices.len() as u64) < half {
            return Err(StoredBlobsError::TooFewColumns {
                block_root: *block_root,
                stored: indices.len(),
                columns,
            });
        }
        let read: Vec<u64> = if systematic {
            (0..half).collect()
        } else {
            indices.iter().copied().take(half as usize).collect()
        };
        let mut sidecars = Vec::with_capacity(read.len());
        for i in &read {
            let column =
                store
                    .get_data_column(block_root, *i)?
                    .ok_or(StoredBlobsError::ColumnVanished {
                        block_root: *block_root,
                        index: *i,
                    })?;
            sidecars.push(column);
        }
        let mut blobs = Vec::with_capacity(wanted.len());
        for &row in wanted {
            let cells: Vec<&[u8]> = sidecars
                .iter()
                .map(|c| column_cell(c, row).ok_or(StoredBlobsError::MissingRow { row }))
                .collect::<Result<_, _>>()?;
            let blob = if systematic {
                cells.concat()
            } else {
                let cells: Vec<kzg::Cell> = cells
                    .iter()
                    .map(|c| kzg::cell_from_bytes(c))
                    .collect::<Result<_, _>>()
                    .map_err(StoredBlobsError::Cell)?;
                let recovered = kzg::recover_cells_and_kzg_proofs(&read, &cells)
                    .map_err(|source| StoredBlobsError::Recovery { row, source })?;
                recovered.cells[..half as usize]
                    .iter()
                    .flat_map(|c| c.to_bytes())
                    .collect()
            };
            blobs.push(blob);
        }
        Ok(blobs)
    }

    /// The blob sidecars `wanted` (positions among the commitments) of the Fulu `block`, made
    /// from its stored columns as the spec's `BlobSidecar` is made: the blob from its cells
    /// ([`Self::blobs_from_columns`]), its KZG proof computed (`compute_blob_kzg_proof`), the
    /// block's signed header, and the commitment's inclusion proof against the body root (the
    /// branch of element `index` in the commitments list, the list's length, then the list's
    /// branch in the body).
    ///
    /// [spec]: deneb/validator.md#sidecar
    pub fn blob_sidecars_from_columns(
        &self,
        block_root: &Root,
        block: &SignedBeaconBlock<E>,
        wanted: &[usize],
    ) -> Result<Vec<types::electra::BlobSidecar<E>>, StoredBlobsError> {
        let SignedBeaconBlock::Fulu(fulu_block) = block else {
            return Err(StoredBlobsError::NotFulu(*block_root));
        };
        let body = &fulu_block.message.body;
        let commitments = &body.blob_kzg_commitments;
        let body_branch = compute_kzg_commitments_inclusion_proof(body).map_err(|source| {
            StoredBlobsError::InclusionProof {
                block_root: *block_root,
                source,
            }
        })?;
        let signed_block_header = block.signed_block_header();
        let tree = CommitmentsTree::new::<E>(commitments);
        let blobs = self.blobs_from_columns(block_root, wanted)?;
        // A blob's KZG proof is the costly part (an MSM over the blob: ~60 ms each here): the
        // blobs are proven in parallel on the chain's data-parallel pool, where KZG work runs.
        self.pool().install(|| {
            wanted
                .par_iter()
                .zip(blobs.into_par_iter())
                .map(|(&index, bytes)| {
                    let commitment = commitments
                        .get(index)
                        .ok_or(StoredBlobsError::NoCommitment(index))?;
                    let blob =
                        kzg::blob_from_bytes(&bytes).map_err(|source| StoredBlobsError::Blob {
                            block_root: *block_root,
                            index,
                            source,
                        })?;
                    let proof =
                        kzg::compute_blob_kzg_proof(&blob, &kzg::KzgCommitment(commitment.0))
                            .map_err(|source| StoredBlobsError::Proof { index, source })?;
                    let mut branch = tree.branch(index);
                    branch.extend(body_branch.iter().copied());
                    Ok(types::electra::BlobSidecar {
                        index: index as u64,
                        blob: FixedVector::new(bytes)
                            .expect("blob_from_bytes took it: BYTES_PER_BLOB bytes"),
                        kzg_commitment: *commitment,
                        kzg_proof: KZGProof::from(proof.0),
                        signed_block_header: signed_block_header.clone(),
                        kzg_commitment_inclusion_proof: FixedVector::new(branch).expect(
                            "the list's branch, its length and the body's branch: \
                             KZG_COMMITMENT_INCLUSION_PROOF_DEPTH",
                        ),
                    })
                })
                .collect()
        })
    }
}
