//! Partial data column messages of Gloas (`data_column_sidecar_{subnet_id}` partial messages):
//! some cells of one column of a block, with no header. The commitments they are checked
//! against are the block's bid's `blob_kzg_commitments`, so the block must be known and valid;
//! the Fulu header checks (signature, inclusion proof, proposer) are gone.
//!
//! [spec]: gloas/partial-columns/p2p-interface.md#modified-data_column_sidecar_subnet_id-partial-messages

use types::{
    ColumnIndex, EthSpec, KZGCommitment, Root, Slot,
    gloas::{PartialDataColumnGroupID, PartialDataColumnSidecar},
};

use super::Verdict;
use crate::chain::{BeaconChain, UnimportedBlock};
use crate::internal_error::InternalError;

/// Why a Gloas partial data column message is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GloasPartialColumnGossipError {
    /// [REJECT] The message holds no cell.
    #[error("the partial message holds no cell")]
    Empty,
    /// [REJECT] Cells and set bits differ in number.
    #[error("{cells} cells for {bits} set bits")]
    CellCount {
        /// Cells in the message.
        cells: usize,
        /// Set bits in the bitmap.
        bits: usize,
    },
    /// [REJECT] Proofs and set bits differ in number.
    #[error("{proofs} proofs for {bits} set bits")]
    ProofCount {
        /// Proofs in the message.
        proofs: usize,
        /// Set bits in the bitmap.
        bits: usize,
    },
    /// [IGNORE] The group's block has not been seen, or is still being imported (the message
    /// may be queued until it is).
    #[error("the group's block {0} has not been seen")]
    UnknownBlock(Root),
    /// [REJECT] The group's block failed validation.
    #[error("the group's block {0} failed validation")]
    InvalidBlock(Root),
    /// [REJECT] The group's block is a block before Gloas (its columns carry a header).
    #[error("the group's block {0} is a block before Gloas")]
    PreGloasBlock(Root),
    /// [REJECT] The group's slot is not its block's.
    #[error("group slot {group} is not the block's slot {block}")]
    SlotMismatch {
        /// `group_id.slot`.
        group: Slot,
        /// The block's slot.
        block: Slot,
    },
    /// [REJECT] The bitmap's length is not the number of the bid's commitments.
    #[error("a bitmap of {bits} bits for {commitments} commitments")]
    BitmapLength {
        /// `len(cells_present_bitmap)`.
        bits: usize,
        /// `len(bid.blob_kzg_commitments)`.
        commitments: usize,
    },
    /// [REJECT] The cells do not verify against their proofs and the bid's commitments.
    #[error("invalid partial column KZG proofs")]
    InvalidKzgProofs,
    /// [REJECT] A cell, proof or commitment is not a valid KZG value.
    #[error("malformed KZG data: {0}")]
    MalformedKzgData(#[source] kzg::Error),
    /// [IGNORE] The node could not load the block's post-state: ours, not the sender's.
    #[error("internal: {0}")]
    Internal(#[source] InternalError),
}

impl GloasPartialColumnGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::UnknownBlock(_) | Self::Internal(_) => Verdict::Ignore,
            Self::Empty
            | Self::CellCount { .. }
            | Self::ProofCount { .. }
            | Self::InvalidBlock(_)
            | Self::PreGloasBlock(_)
            | Self::SlotMismatch { .. }
            | Self::BitmapLength { .. }
            | Self::InvalidKzgProofs
            | Self::MalformedKzgData(_) => Verdict::Reject,
        }
    }
}

/// A Gloas partial data column message that passed gossip validation.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedGloasPartialDataColumn<E: EthSpec> {
    /// The message.
    pub sidecar: PartialDataColumnSidecar<E>,
    /// Its block.
    pub block_root: Root,
    /// Its column.
    pub column_index: ColumnIndex,
}

/// The checks that need no block: at least one cell, and as many cells and proofs as set
/// bits.
fn check_partial_shape<E: EthSpec>(
    sidecar: &PartialDataColumnSidecar<E>,
) -> Result<(), GloasPartialColumnGossipError> {
    let bits = sidecar.cells_present_bitmap.num_set_bits();
    if bits == 0 {
        return Err(GloasPartialColumnGossipError::Empty);
    }
    if sidecar.partial_column.len() != bits {
        return Err(GloasPartialColumnGossipError::CellCount {
            cells: sidecar.partial_column.len(),
            bits,
        });
    }
    if sidecar.kzg_proofs.len() != bits {
        return Err(GloasPartialColumnGossipError::ProofCount {
            proofs: sidecar.kzg_proofs.len(),
            bits,
        });
    }
    Ok(())
}

/// `verify_partial_data_column_sidecar_kzg_proofs(sidecar, kzg_commitments, column_index)`:
/// each present cell against the commitment of its blob and its proof, in one batch. The
/// bitmap's length is checked against the commitments before.
///
/// [spec]: gloas/partial-columns/p2p-interface.md#modified-verify_partial_data_column_sidecar_kzg_proofs
pub fn verify_gloas_partial_data_column_kzg_proofs<E: EthSpec>(
    sidecar: &PartialDataColumnSidecar<E>,
    kzg_commitments: &[KZGCommitment],
    column_index: ColumnIndex,
) -> Result<bool, kzg::Error> {
    let Some(commitments) = sidecar
        .cells_present_bitmap
        .set_indices()
        .map(|i| kzg_commitments.get(i).map(|c| kzg::KzgCommitment(c.0)))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(false);
    };
    let cells = sidecar
        .partial_column
        .iter()
        .map(|cell| kzg::cell_from_bytes(&cell[..]))
        .collect::<Result<Vec<_>, _>>()?;
    let proofs: Vec<kzg::KzgProof> = sidecar
        .kzg_proofs
        .iter()
        .map(|p| kzg::KzgProof(p.0))
        .collect();
    let cell_indices = vec![column_index; cells.len()];
    kzg::verify_cell_kzg_proof_batch(&commitments, &cell_indices, &cells, &proofs)
}

impl<E: EthSpec> BeaconChain<E> {
    /// The Gloas `validate_partial_data_column_sidecar_gossip(store, sidecar, group_id,
    /// column_index)`: the rules in the spec's order, the commitments the block's bid's (read
    /// from its post-state, whose latest bid it is).
    ///
    /// [spec]: gloas/partial-columns/p2p-interface.md#modified-data_column_sidecar_subnet_id-partial-messages
    pub fn verify_gloas_partial_data_column_for_gossip(
        &self,
        sidecar: PartialDataColumnSidecar<E>,
        group_id: &PartialDataColumnGroupID,
        column_index: ColumnIndex,
    ) -> Result<VerifiedGloasPartialDataColumn<E>, GloasPartialColumnGossipError> {
        check_partial_shape(&sidecar)?;
        let block_root = group_id.beacon_block_root;
        let block_slot = self.fork_choice.lock().block_slot(&block_root);
        let Some(block_slot) = block_slot else {
            return Err(match self.unimported_block(&block_root) {
                Some(UnimportedBlock::Failed { .. }) => {
                    GloasPartialColumnGossipError::InvalidBlock(block_root)
                }
                Some(UnimportedBlock::Pending { .. }) | None => {
                    GloasPartialColumnGossipError::UnknownBlock(block_root)
                }
            });
        };
        if group_id.slot != block_slot {
            return Err(GloasPartialColumnGossipError::SlotMismatch {
                group: group_id.slot,
                block: block_slot,
            });
        }
        let state = self
            .block_state_outside_lock(&block_root)
            .map_err(|e| GloasPartialColumnGossipError::Internal(InternalError::new(e)))?;
        let view = state
            .view()
            .map_err(|e| GloasPartialColumnGossipError::Internal(InternalError::new(e)))?;
        let Ok(gloas) = view.gloas() else {
            return Err(GloasPartialColumnGossipError::PreGloasBlock(block_root));
        };
        let commitments = &gloas.latest_execution_payload_bid.blob_kzg_commitments;
        if sidecar.cells_present_bitmap.len() != commitments.len() {
            return Err(GloasPartialColumnGossipError::BitmapLength {
                bits: sidecar.cells_present_bitmap.len(),
                commitments: commitments.len(),
            });
        }
        let valid = verify_gloas_partial_data_column_kzg_proofs(
            &sidecar,
            commitments.as_slice(),
            column_index,
        )
        .map_err(GloasPartialColumnGossipError::MalformedKzgData)?;
        if !valid {
            return Err(GloasPartialColumnGossipError::InvalidKzgProofs);
        }
        Ok(VerifiedGloasPartialDataColumn {
            sidecar,
            block_root,
            column_index,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec;

    fn sidecar(
        bits: &[bool],
        cells: usize,
        proofs: usize,
    ) -> PartialDataColumnSidecar<MinimalEthSpec> {
        // `AggregationBits` is the progressive bit list type.
        let mut bitmap = types::gloas::AggregationBits::new();
        for &bit in bits {
            bitmap.push(bit);
        }
        PartialDataColumnSidecar {
            cells_present_bitmap: bitmap,
            partial_column: vec![Default::default(); cells].into(),
            kzg_proofs: vec![Default::default(); proofs].into(),
        }
    }

    #[test]
    fn an_empty_message_or_counts_unlike_the_bitmap_are_rejected() {
        let empty = check_partial_shape(&sidecar(&[false, false], 0, 0)).unwrap_err();
        assert_eq!(empty, GloasPartialColumnGossipError::Empty);
        assert_eq!(
            check_partial_shape(&sidecar(&[true, true], 1, 2)),
            Err(GloasPartialColumnGossipError::CellCount { cells: 1, bits: 2 })
        );
        assert_eq!(
            check_partial_shape(&sidecar(&[true, false], 1, 0)),
            Err(GloasPartialColumnGossipError::ProofCount { proofs: 0, bits: 1 })
        );
        assert_eq!(check_partial_shape(&sidecar(&[false, true], 1, 1)), Ok(()));
        assert_eq!(empty.verdict(), Verdict::Reject);
        assert_eq!(
            GloasPartialColumnGossipError::UnknownBlock(Root::ZERO).verdict(),
            Verdict::Ignore
        );
    }

    #[test]
    fn a_bit_past_the_commitments_does_not_verify() {
        let message = sidecar(&[false, true], 1, 1);
        assert_eq!(
            verify_gloas_partial_data_column_kzg_proofs(
                &message,
                &[KZGCommitment::repeat_byte(1)],
                0
            ),
            Ok(false)
        );
    }
}
