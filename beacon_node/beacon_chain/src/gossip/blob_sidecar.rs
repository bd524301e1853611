//! `blob_sidecar_{subnet_id}` (Deneb and Electra; Fulu replaced blob sidecars with data
//! columns). Kept so the node validates blob sidecars of pre-Fulu networks and the Electra
//! vectors run.
//!
//! [spec]: electra/p2p-interface.md#modified-blob_sidecar_subnet_id

use std::sync::Arc;

use tree_hash::TreeHash;
use types::{BlobSidecar, EthSpec, Root, Slot, ValidatorIndex, subnets, typenum::Unsigned};

use super::Verdict;
use super::data_column::DataColumnGossipError;
use crate::chain::BeaconChain;
use crate::data_column_sidecars::BLOB_KZG_COMMITMENTS_GINDEX;
use crate::internal_error::InternalError;

/// Why a blob sidecar is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobSidecarGossipError {
    /// [REJECT] The blob index is past the fork's maximum.
    #[error("blob index {index} out of range (maximum {max})")]
    IndexOutOfRange {
        /// The index.
        index: u64,
        /// The fork's maximum blobs per block.
        max: u64,
    },
    /// [REJECT] Gossiped on the wrong subnet.
    #[error("blob {index} on subnet {found}")]
    WrongSubnet {
        /// The blob index.
        index: u64,
        /// The subnet it came on.
        found: u64,
    },
    /// A header rule shared with data column sidecars (its verdict is theirs).
    #[error(transparent)]
    Header(DataColumnGossipError),
    /// [REJECT] The commitment's inclusion proof fails.
    #[error("invalid inclusion proof")]
    InvalidInclusionProof,
    /// [REJECT] The blob does not match its commitment and proof.
    #[error("invalid blob KZG proof")]
    InvalidKzgProof,
    /// [IGNORE] A sidecar of this proposer, slot and index was seen.
    #[error("blob {index} of proposer {proposer} at slot {slot} was seen")]
    AlreadySeen {
        /// The slot.
        slot: Slot,
        /// The proposer.
        proposer: ValidatorIndex,
        /// The blob index.
        index: u64,
    },
}

impl BlobSidecarGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::AlreadySeen { .. } => Verdict::Ignore,
            Self::Header(e) => e.verdict(),
            _ => Verdict::Reject,
        }
    }
}

/// A blob sidecar that passed gossip validation.
#[derive(Debug, Clone)]
pub struct GossipVerifiedBlobSidecar<E: EthSpec> {
    /// The sidecar.
    pub sidecar: Arc<BlobSidecar<E>>,
    /// Its block's root.
    pub block_root: Root,
}

/// `verify_blob_sidecar_inclusion_proof(blob_sidecar)`: the commitment is element `index` of
/// the `blob_kzg_commitments` of the body the header commits to.
///
/// [spec]: deneb/p2p-interface.md#verify_blob_sidecar_inclusion_proof
pub fn verify_blob_sidecar_inclusion_proof<E: EthSpec>(sidecar: &BlobSidecar<E>) -> bool {
    let (index, commitment, proof, body_root) = match sidecar {
        BlobSidecar::Deneb(s) => (
            s.index,
            &s.kzg_commitment,
            &s.kzg_commitment_inclusion_proof[..],
            s.signed_block_header.message.body_root,
        ),
        BlobSidecar::Electra(s) => (
            s.index,
            &s.kzg_commitment,
            &s.kzg_commitment_inclusion_proof[..],
            s.signed_block_header.message.body_root,
        ),
    };
    // `get_generalized_index(BeaconBlockBody, "blob_kzg_commitments", index)`: the list's
    // field, its data root (left child of the length mix-in), then element `index` among
    // `MAX_BLOB_COMMITMENTS_PER_BLOCK` leaves.
    let list_depth = E::MaxBlobCommitmentsPerBlock::to_u64()
        .next_power_of_two()
        .trailing_zeros();
    let Some(gindex) = (BLOB_KZG_COMMITMENTS_GINDEX * 2)
        .checked_shl(list_depth)
        .and_then(|g| g.checked_add(index))
    else {
        return false;
    };
    let depth = 63 - gindex.leading_zeros() as usize;
    if depth != E::KzgCommitmentInclusionProofDepth::to_usize() {
        return false;
    }
    state_processing::common::is_valid_merkle_branch(
        commitment.tree_hash_root(),
        proof,
        depth,
        gindex - (1 << depth),
        body_root,
    )
}

impl<E: EthSpec> BeaconChain<E> {
    /// `validate_blob_sidecar_gossip(seen, store, state, blob_sidecar, current_time_ms,
    /// subnet_id)`.
    ///
    /// [spec]: electra/p2p-interface.md#modified-blob_sidecar_subnet_id
    pub fn verify_blob_sidecar_for_gossip(
        &self,
        sidecar: Arc<BlobSidecar<E>>,
        subnet_id: u64,
        current_time_ms: u64,
    ) -> Result<GossipVerifiedBlobSidecar<E>, BlobSidecarGossipError> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let (index, signed_header, blob, commitment, proof, electra) = match &*sidecar {
            BlobSidecar::Deneb(s) => (
                s.index,
                &s.signed_block_header,
                &s.blob[..],
                s.kzg_commitment,
                s.kzg_proof,
                false,
            ),
            BlobSidecar::Electra(s) => (
                s.index,
                &s.signed_block_header,
                &s.blob[..],
                s.kzg_commitment,
                s.kzg_proof,
                true,
            ),
        };
        let max = if electra {
            self.spec().max_blobs_per_block_electra
        } else {
            self.spec().max_blobs_per_block
        };
        if index >= max {
            return Err(BlobSidecarGossipError::IndexOutOfRange { index, max });
        }
        let expected = subnets::compute_subnet_for_blob_sidecar(self.spec(), index, electra)
            .map_err(InternalError::new)
            .map_err(|e| BlobSidecarGossipError::Header(DataColumnGossipError::Internal(e)))?;
        if expected != subnet_id {
            return Err(BlobSidecarGossipError::WrongSubnet {
                index,
                found: subnet_id,
            });
        }
        let block_root = self
            .check_sidecar_header(signed_header, current_time_ms)
            .map_err(BlobSidecarGossipError::Header)?;
        if !verify_blob_sidecar_inclusion_proof(&sidecar) {
            return Err(BlobSidecarGossipError::InvalidInclusionProof);
        }
        let valid = kzg::blob_from_bytes(blob)
            .and_then(|b| {
                kzg::verify_blob_kzg_proof(
                    &b,
                    &kzg::KzgCommitment(commitment.0),
                    &kzg::KzgProof(proof.0),
                )
            })
            .unwrap_or(false);
        if !valid {
            return Err(BlobSidecarGossipError::InvalidKzgProof);
        }
        let header = &signed_header.message;
        let (slot, proposer) = (header.slot, header.proposer_index);
        if self
            .observed
            .lock()
            .blob_sidecars
            .is_known(slot, &(proposer, index))
            .unwrap_or(false)
        {
            return Err(BlobSidecarGossipError::AlreadySeen {
                slot,
                proposer,
                index,
            });
        }
        self.check_sidecar_proposer(signed_header)
            .map_err(BlobSidecarGossipError::Header)?;
        if self
            .observed
            .lock()
            .blob_sidecars
            .observe(slot, (proposer, index))
            .unwrap_or(false)
        {
            return Err(BlobSidecarGossipError::AlreadySeen {
                slot,
                proposer,
                index,
            });
        }
        Ok(GossipVerifiedBlobSidecar {
            sidecar,
            block_root,
        })
    }
}
