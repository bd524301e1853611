//! `data_column_sidecar_{subnet_id}`: full sidecars (one by one or in batches whose KZG proofs
//! are verified together) and partial ones (the partial-columns extension).
//!
//! A block's sidecars share one signed header: its proposer signature is verified once and the
//! header's root remembered, so the other sidecars of the block skip the pairing.
//!
//! Gloas sidecars carry no header and no commitments: they name their block (root and slot),
//! which must be known, and their cells are verified against the blob commitments of the
//! block's bid (read from its post-state once per batch); they are seen once per
//! (block root, column index).
//!
//! [spec]: fulu/p2p-interface.md#new-data_column_sidecar_subnet_id,
//! gloas/p2p-interface.md#modified-data_column_sidecar_subnet_id,
//! fulu/partial-columns/p2p-interface.md#new-data_column_sidecar_subnet_id-partial-messages

use std::collections::HashMap;
use std::sync::Arc;

use fork_choice::{SidecarError, verify_data_column_sidecar, verify_data_column_sidecars};
use ssz_types::typenum::Unsigned;
use tree_hash::TreeHash;
use types::{
    ColumnIndex, DataColumnSidecar, EthSpec, Root, Slot, ValidatorIndex,
    fulu::{PartialDataColumnGroupID, PartialDataColumnHeader, PartialDataColumnSidecar},
    phase0::SignedBeaconBlockHeader,
    signing, subnets,
};

use super::block::expected_proposer;
use super::{Verdict, domain_at, head_pubkey, validator_count, verify_one};
use crate::chain::{BeaconChain, UnimportedBlock};
use crate::data_column_sidecars::{
    verify_data_column_sidecar_inclusion_proof, verify_kzg_commitments_inclusion_proof,
};
use crate::events::ChainEvent;
use crate::internal_error::InternalError;

/// Why a data column sidecar is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataColumnGossipError {
    /// [IGNORE] A Gloas sidecar of this block root and index was seen.
    #[error("sidecar {index} of block {block_root} was seen")]
    AlreadySeenForBlock {
        /// The sidecar's block.
        block_root: Root,
        /// The column index.
        index: ColumnIndex,
    },
    /// [IGNORE] Gloas: the sidecar's block has not been seen, or is still being imported (the
    /// sidecar may be queued until it is).
    #[error("the sidecar's block {0} has not been seen")]
    BlockUnknown(Root),
    /// [REJECT] Gloas: the sidecar's block failed validation.
    #[error("the sidecar's block {0} failed validation")]
    BlockInvalid(Root),
    /// [REJECT] Gloas: the sidecar's slot is not its block's.
    #[error("sidecar slot {slot} is not its block's slot {block_slot}")]
    SlotMismatch {
        /// `sidecar.slot`.
        slot: Slot,
        /// The block's slot.
        block_slot: Slot,
    },
    /// [REJECT] Gloas: the sidecar's block is a block before Gloas (it has no bid whose
    /// commitments a Gloas sidecar could be checked against).
    #[error("block {0} is a block before Gloas: no bid")]
    PreGloasBlock(Root),
    /// [IGNORE] A sidecar of this proposer, slot and index was seen.
    #[error("sidecar {index} of proposer {proposer} at slot {slot} was seen")]
    AlreadySeen {
        /// The slot.
        slot: Slot,
        /// The proposer.
        proposer: ValidatorIndex,
        /// The column index.
        index: ColumnIndex,
    },
    /// [REJECT] `verify_data_column_sidecar` fails.
    #[error("invalid sidecar: {0}")]
    InvalidSidecar(SidecarError),
    /// [REJECT] Gossiped on the wrong subnet.
    #[error("column {index} on subnet {found}")]
    WrongSubnet {
        /// The column index.
        index: ColumnIndex,
        /// The subnet it came on.
        found: u64,
    },
    /// [IGNORE] From a future slot.
    #[error("sidecar slot {0} is in the future")]
    FutureSlot(Slot),
    /// [IGNORE] Not after the finalized slot.
    #[error("sidecar slot {slot} is not after the finalized slot {finalized_slot}")]
    NotAfterFinalizedSlot {
        /// The sidecar's slot.
        slot: Slot,
        /// The finalized slot.
        finalized_slot: Slot,
    },
    /// [REJECT] The proposer index is not a validator.
    #[error("proposer index {0} out of range")]
    ProposerIndexOutOfRange(ValidatorIndex),
    /// [REJECT] The header's proposer signature is invalid.
    #[error("invalid proposer signature on the header")]
    InvalidProposerSignature,
    /// [IGNORE] The block's parent was not seen.
    #[error("parent {0} has not been seen")]
    ParentUnknown(Root),
    /// [REJECT] The block's parent failed validation.
    #[error("parent {0} failed validation")]
    ParentInvalid(Root),
    /// [REJECT] Not after the parent's slot.
    #[error("slot {slot} is not after the parent's slot {parent_slot}")]
    NotAfterParent {
        /// The sidecar's slot.
        slot: Slot,
        /// The parent's slot.
        parent_slot: Slot,
    },
    /// [REJECT] The finalized checkpoint is not an ancestor of the block.
    #[error("the finalized checkpoint is not an ancestor of the sidecar's block")]
    NotFinalizedDescendant,
    /// [REJECT] The commitments' inclusion proof fails.
    #[error("invalid inclusion proof")]
    InvalidInclusionProof,
    /// [REJECT] The cell proofs fail.
    #[error("invalid KZG proofs: {0}")]
    InvalidKzgProofs(SidecarError),
    /// [REJECT] Not the expected proposer.
    #[error("proposer {found}, expected {expected}")]
    WrongProposer {
        /// The expected proposer.
        expected: ValidatorIndex,
        /// The header's proposer.
        found: ValidatorIndex,
    },
    /// [IGNORE] The node could not compute what a rule needs (fork choice could not give the
    /// parent's post-state or checkpoint block, a state helper or a subnet computation failed).
    #[error("internal: {0}")]
    Internal(#[source] InternalError),
}

impl DataColumnGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::AlreadySeen { .. }
            | Self::AlreadySeenForBlock { .. }
            | Self::BlockUnknown(_)
            | Self::FutureSlot(_)
            | Self::NotAfterFinalizedSlot { .. }
            | Self::ParentUnknown(_)
            | Self::Internal(_) => Verdict::Ignore,
            _ => Verdict::Reject,
        }
    }
}

/// Why a partial data column sidecar is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartialColumnGossipError {
    /// [REJECT] Neither a header nor cells.
    #[error("the partial message is empty")]
    Empty,
    /// [REJECT] Cells and set bits differ in number.
    #[error("{cells} cells for {bits} set bits")]
    CellCount {
        /// Cells.
        cells: usize,
        /// Set bits.
        bits: usize,
    },
    /// [REJECT] Proofs and set bits differ in number.
    #[error("{proofs} proofs for {bits} set bits")]
    ProofCount {
        /// Proofs.
        proofs: usize,
        /// Set bits.
        bits: usize,
    },
    /// [REJECT] The header differs from the one validated for the block.
    #[error("the header differs from the one validated before")]
    HeaderMismatch,
    /// [REJECT] The header is not of the group's block.
    #[error("header root {header} is not the group's block root {group}")]
    WrongGroup {
        /// The header's root.
        header: Root,
        /// The group id's root.
        group: Root,
    },
    /// [REJECT] The header has no commitments.
    #[error("the header has no commitments")]
    NoCommitments,
    /// A rule shared with full sidecars (its verdict is theirs).
    #[error(transparent)]
    Header(DataColumnGossipError),
    /// [IGNORE] Cells whose header was not validated yet.
    #[error("no validated header for block {0}")]
    HeaderUnknown(Root),
    /// [REJECT] The bitmap is not one bit per commitment.
    #[error("bitmap of {bits} for {commitments} commitments")]
    BitmapLength {
        /// Bitmap length.
        bits: usize,
        /// Commitments.
        commitments: usize,
    },
    /// [REJECT] The cells' proofs fail.
    #[error("invalid KZG proofs")]
    InvalidKzgProofs,
}

impl PartialColumnGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::HeaderUnknown(_) => Verdict::Ignore,
            Self::Header(e) => e.verdict(),
            _ => Verdict::Reject,
        }
    }
}

/// A data column sidecar that passed gossip validation.
#[derive(Debug, Clone)]
pub struct GossipVerifiedDataColumn<E: EthSpec> {
    /// The sidecar.
    pub sidecar: Arc<DataColumnSidecar<E>>,
    /// Its block's root.
    pub block_root: Root,
}

/// A partial data column sidecar that passed gossip validation.
#[derive(Debug, Clone)]
pub struct VerifiedPartialDataColumn<E: EthSpec> {
    /// The partial sidecar.
    pub sidecar: PartialDataColumnSidecar<E>,
    /// Its block's root (the group id).
    pub block_root: Root,
    /// Its column index.
    pub column_index: ColumnIndex,
}

/// What survives the checks before KZG.
enum PendingColumn<E: EthSpec> {
    /// A Fulu sidecar (it carries its commitments), with its signed header.
    Fulu {
        sidecar: Arc<DataColumnSidecar<E>>,
        block_root: Root,
        signed_header: SignedBeaconBlockHeader,
        index: ColumnIndex,
    },
    /// A Gloas sidecar, in the KZG crate's types with its block's bid's commitments.
    Gloas {
        sidecar: Arc<DataColumnSidecar<E>>,
        column: GloasColumn,
    },
}

impl<E: EthSpec> PendingColumn<E> {
    fn sidecar(&self) -> &DataColumnSidecar<E> {
        match self {
            Self::Fulu { sidecar, .. } | Self::Gloas { sidecar, .. } => sidecar,
        }
    }

    fn gloas(&self) -> Option<&GloasColumn> {
        match self {
            Self::Fulu { .. } => None,
            Self::Gloas { column, .. } => Some(column),
        }
    }
}

/// A Gloas sidecar's cells and proofs, with the commitments of its block's bid.
struct GloasColumn {
    block_root: Root,
    block_slot: Slot,
    index: ColumnIndex,
    cells: Vec<kzg::Cell>,
    commitments: Arc<Vec<kzg::KzgCommitment>>,
    proofs: Vec<kzg::KzgProof>,
}

/// The blob commitments of the bids of the blocks a batch's Gloas sidecars name, each read
/// once from its block's post-state.
type BidCommitments = HashMap<Root, Arc<Vec<kzg::KzgCommitment>>>;

impl<E: EthSpec> BeaconChain<E> {
    /// The header rules shared by full and partial sidecars, from the future-slot check to the
    /// finalized-ancestor check: slot bounds, proposer index and signature (verified once per
    /// header), the parent seen, valid and earlier, the finalized checkpoint an ancestor.
    pub(crate) fn check_sidecar_header(
        &self,
        signed_header: &SignedBeaconBlockHeader,
        current_time_ms: u64,
    ) -> Result<Root, DataColumnGossipError> {
        let header = &signed_header.message;
        let slot = header.slot;
        if self.is_future_slot(slot, current_time_ms) {
            return Err(DataColumnGossipError::FutureSlot(slot));
        }
        let finalized = self.finalized_checkpoint();
        let finalized_slot = finalized.epoch * E::slots_per_epoch();
        if slot <= finalized_slot {
            return Err(DataColumnGossipError::NotAfterFinalizedSlot {
                slot,
                finalized_slot,
            });
        }
        let head = self.head();
        if header.proposer_index >= validator_count(&head.state) {
            // A head behind the parent (syncing) may not have the proposer yet: IGNORE.
            if !self.is_block_known(&header.parent_root) {
                return Err(DataColumnGossipError::ParentUnknown(header.parent_root));
            }
            return Err(DataColumnGossipError::ProposerIndexOutOfRange(
                header.proposer_index,
            ));
        }
        let block_root = header.tree_hash_root();
        let header_root = signed_header.tree_hash_root();
        let verified = self
            .observed
            .lock()
            .verified_headers
            .is_known(slot, &header_root)
            .unwrap_or(false);
        if !verified {
            let key = head_pubkey(&head.state, header.proposer_index)
                .ok_or(DataColumnGossipError::InvalidProposerSignature)?;
            let domain = domain_at(
                self.spec(),
                self.genesis_validators_root(),
                signing::DOMAIN_BEACON_PROPOSER,
                slot / E::slots_per_epoch(),
            );
            if !verify_one(
                &key,
                signing::compute_signing_root(header, domain),
                &signed_header.signature,
            ) {
                return Err(DataColumnGossipError::InvalidProposerSignature);
            }
            let _ = self
                .observed
                .lock()
                .verified_headers
                .observe(slot, header_root);
        }
        let parent = header.parent_root;
        if !self.is_block_known(&parent) {
            return Err(DataColumnGossipError::ParentUnknown(parent));
        }
        let fc = self.fork_choice.lock();
        if !fc.contains_block(&parent) {
            drop(fc);
            return Err(match self.unimported_block(&parent) {
                Some(UnimportedBlock::Pending { .. }) => {
                    DataColumnGossipError::ParentUnknown(parent)
                }
                _ => DataColumnGossipError::ParentInvalid(parent),
            });
        }
        let parent_slot = fc
            .block_slot(&parent)
            .ok_or(DataColumnGossipError::ParentUnknown(parent))?;
        if slot <= parent_slot {
            return Err(DataColumnGossipError::NotAfterParent { slot, parent_slot });
        }
        let checkpoint_block = fc
            .get_checkpoint_block(&parent, finalized.epoch)
            .map_err(|e| DataColumnGossipError::Internal(InternalError::new(e)))?;
        if checkpoint_block != finalized.root {
            return Err(DataColumnGossipError::NotFinalizedDescendant);
        }
        Ok(block_root)
    }

    /// The last rule: the header's proposer is the one expected at its slot.
    pub(crate) fn check_sidecar_proposer(
        &self,
        signed_header: &SignedBeaconBlockHeader,
    ) -> Result<(), DataColumnGossipError> {
        let header = &signed_header.message;
        if !self.fork_choice.lock().contains_block(&header.parent_root) {
            return Err(DataColumnGossipError::ParentUnknown(header.parent_root));
        }
        // A parent whose post-state fork choice let go of is loaded back from the store,
        // without fork choice's lock.
        let parent_state = self
            .block_state_outside_lock(&header.parent_root)
            .map_err(|e| DataColumnGossipError::Internal(InternalError::new(e)))?;
        let expected = expected_proposer(&parent_state, header.slot, self.spec())
            .map_err(DataColumnGossipError::Internal)?;
        if header.proposer_index != expected {
            return Err(DataColumnGossipError::WrongProposer {
                expected,
                found: header.proposer_index,
            });
        }
        Ok(())
    }

    fn column_before_kzg(
        &self,
        sidecar: Arc<DataColumnSidecar<E>>,
        subnet_id: u64,
        current_time_ms: u64,
        bids: &mut BidCommitments,
    ) -> Result<PendingColumn<E>, DataColumnGossipError> {
        let inner = match &*sidecar {
            DataColumnSidecar::Fulu(inner) => inner,
            DataColumnSidecar::Gloas(inner) => {
                let column =
                    self.gloas_column_before_kzg(inner, subnet_id, current_time_ms, bids)?;
                return Ok(PendingColumn::Gloas { sidecar, column });
            }
        };
        let header = &inner.signed_block_header.message;
        let (slot, proposer, index) = (header.slot, header.proposer_index, inner.index);
        if self
            .observed
            .lock()
            .data_columns
            .is_known(slot, &(proposer, index))
            .unwrap_or(false)
        {
            return Err(DataColumnGossipError::AlreadySeen {
                slot,
                proposer,
                index,
            });
        }
        verify_data_column_sidecar(&sidecar, self.spec())
            .map_err(DataColumnGossipError::InvalidSidecar)?;
        let expected = subnets::compute_subnet_for_data_column_sidecar(self.spec(), index)
            .map_err(|e| DataColumnGossipError::Internal(InternalError::new(e)))?;
        if expected != subnet_id {
            return Err(DataColumnGossipError::WrongSubnet {
                index,
                found: subnet_id,
            });
        }
        let block_root = self.check_sidecar_header(&inner.signed_block_header, current_time_ms)?;
        if !verify_data_column_sidecar_inclusion_proof(&sidecar) {
            return Err(DataColumnGossipError::InvalidInclusionProof);
        }
        let signed_header = inner.signed_block_header.clone();
        Ok(PendingColumn::Fulu {
            sidecar,
            block_root,
            signed_header,
            index,
        })
    }

    /// The rules of the Gloas `validate_data_column_sidecar_gossip` before KZG, in the spec's
    /// order: first seen for (block root, index), the subnet, not from a future slot, the block
    /// seen and valid, the slot the block's, then `verify_data_column_sidecar` against the
    /// block's bid's commitments (read from the block's post-state, once per batch).
    ///
    /// [spec]: gloas/p2p-interface.md#modified-data_column_sidecar_subnet_id
    fn gloas_column_before_kzg(
        &self,
        inner: &types::gloas::DataColumnSidecar<E>,
        subnet_id: u64,
        current_time_ms: u64,
        bids: &mut BidCommitments,
    ) -> Result<GloasColumn, DataColumnGossipError> {
        let (block_root, index, slot) = (inner.beacon_block_root, inner.index, inner.slot);
        let block_slot = self.fork_choice.lock().block_slot(&block_root);
        // The cache is keyed by the block's slot (one per root); a sidecar whose block is not
        // in fork choice cannot have been accepted.
        if let Some(block_slot) = block_slot
            && self
                .observed
                .lock()
                .gloas_data_columns
                .is_known(block_slot, &(block_root, index))
                .unwrap_or(false)
        {
            return Err(DataColumnGossipError::AlreadySeenForBlock { block_root, index });
        }
        let expected = subnets::compute_subnet_for_data_column_sidecar(self.spec(), index)
            .map_err(|e| DataColumnGossipError::Internal(InternalError::new(e)))?;
        if expected != subnet_id {
            return Err(DataColumnGossipError::WrongSubnet {
                index,
                found: subnet_id,
            });
        }
        if self.is_future_slot(slot, current_time_ms) {
            return Err(DataColumnGossipError::FutureSlot(slot));
        }
        let Some(block_slot) = block_slot else {
            return Err(match self.unimported_block(&block_root) {
                Some(UnimportedBlock::Failed { .. }) => {
                    DataColumnGossipError::BlockInvalid(block_root)
                }
                Some(UnimportedBlock::Pending { .. }) | None => {
                    DataColumnGossipError::BlockUnknown(block_root)
                }
            });
        };
        if slot != block_slot {
            return Err(DataColumnGossipError::SlotMismatch { slot, block_slot });
        }
        let commitments = match bids.get(&block_root) {
            Some(commitments) => commitments.clone(),
            None => {
                let commitments = Arc::new(self.bid_commitments(block_root)?);
                bids.insert(block_root, commitments.clone());
                commitments
            }
        };
        // `verify_data_column_sidecar(sidecar, bid.blob_kzg_commitments)`.
        if index >= E::NumberOfColumns::to_u64() {
            return Err(DataColumnGossipError::InvalidSidecar(
                SidecarError::IndexOutOfRange { index },
            ));
        }
        if inner.column.is_empty() {
            return Err(DataColumnGossipError::InvalidSidecar(
                SidecarError::NoCommitments { index },
            ));
        }
        if inner.column.len() != commitments.len() || inner.column.len() != inner.kzg_proofs.len() {
            return Err(DataColumnGossipError::InvalidSidecar(
                SidecarError::LengthMismatch {
                    index,
                    cells: inner.column.len(),
                    commitments: commitments.len(),
                    proofs: inner.kzg_proofs.len(),
                },
            ));
        }
        let cells = inner
            .column
            .iter()
            .map(|cell| kzg::cell_from_bytes(&cell[..]))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| {
                DataColumnGossipError::InvalidKzgProofs(SidecarError::Kzg { index, error })
            })?;
        Ok(GloasColumn {
            block_root,
            block_slot,
            index,
            cells,
            commitments,
            proofs: inner
                .kzg_proofs
                .iter()
                .map(|p| kzg::KzgProof(p.0))
                .collect(),
        })
    }

    /// `block.body.signed_execution_payload_bid.message.blob_kzg_commitments` of the imported
    /// block `block_root`: its post-state's `latest_execution_payload_bid` (the envelope does
    /// not change the state).
    fn bid_commitments(
        &self,
        block_root: Root,
    ) -> Result<Vec<kzg::KzgCommitment>, DataColumnGossipError> {
        let state = self
            .block_state_outside_lock(&block_root)
            .map_err(|e| DataColumnGossipError::Internal(InternalError::new(e)))?;
        let view = state
            .view()
            .map_err(|e| DataColumnGossipError::Internal(InternalError::new(e)))?;
        let Ok(gloas) = view.gloas() else {
            return Err(DataColumnGossipError::PreGloasBlock(block_root));
        };
        Ok(gloas
            .latest_execution_payload_bid
            .blob_kzg_commitments
            .iter()
            .map(|c| kzg::KzgCommitment(c.0))
            .collect())
    }

    /// Gloas: the sidecar recorded as seen for (block root, index), after its KZG proofs held.
    fn gloas_column_after_kzg(
        &self,
        sidecar: Arc<DataColumnSidecar<E>>,
        gloas: GloasColumn,
    ) -> Result<GossipVerifiedDataColumn<E>, DataColumnGossipError> {
        let (block_root, index) = (gloas.block_root, gloas.index);
        // A key outside the window (a block far past the finalized slot) is not recorded: the
        // sidecar is valid, a copy of it would be verified again.
        if self
            .observed
            .lock()
            .gloas_data_columns
            .observe(gloas.block_slot, (block_root, index))
            .unwrap_or(false)
        {
            return Err(DataColumnGossipError::AlreadySeenForBlock { block_root, index });
        }
        self.events().publish(ChainEvent::DataColumnSidecar {
            block_root,
            slot: gloas.block_slot,
            index,
        });
        Ok(GossipVerifiedDataColumn {
            block_root,
            sidecar,
        })
    }

    fn column_after_kzg(
        &self,
        pending: PendingColumn<E>,
    ) -> Result<GossipVerifiedDataColumn<E>, DataColumnGossipError> {
        let (sidecar, block_root, signed_header, index) = match pending {
            PendingColumn::Fulu {
                sidecar,
                block_root,
                signed_header,
                index,
            } => (sidecar, block_root, signed_header, index),
            PendingColumn::Gloas { sidecar, column } => {
                return self.gloas_column_after_kzg(sidecar, column);
            }
        };
        self.check_sidecar_proposer(&signed_header)?;
        let header = &signed_header.message;
        let (slot, proposer) = (header.slot, header.proposer_index);
        if self
            .observed
            .lock()
            .data_columns
            .observe(slot, (proposer, index))
            .unwrap_or(false)
        {
            return Err(DataColumnGossipError::AlreadySeen {
                slot,
                proposer,
                index,
            });
        }
        self.events().publish(ChainEvent::DataColumnSidecar {
            block_root,
            slot,
            index,
        });
        Ok(GossipVerifiedDataColumn {
            block_root,
            sidecar,
        })
    }

    /// `validate_data_column_sidecar_gossip(seen, store, state, sidecar, current_time_ms,
    /// subnet_id)`: Fulu's for a Fulu sidecar, Gloas's (the block known, its bid's commitments)
    /// for a Gloas one.
    ///
    /// [spec]: fulu/p2p-interface.md#new-data_column_sidecar_subnet_id,
    /// gloas/p2p-interface.md#modified-data_column_sidecar_subnet_id
    pub fn verify_data_column_for_gossip(
        &self,
        sidecar: Arc<DataColumnSidecar<E>>,
        subnet_id: u64,
        current_time_ms: u64,
    ) -> Result<GossipVerifiedDataColumn<E>, DataColumnGossipError> {
        self.verify_data_columns_for_gossip(vec![(sidecar, subnet_id)], current_time_ms)
            .pop()
            .expect("one result per sidecar")
    }

    /// [`Self::verify_data_column_for_gossip`] for a batch (sidecars of any blocks): every
    /// cell proof of the batch in one KZG batch, a failure attributed to its sidecar. One
    /// result per sidecar, in order.
    pub fn verify_data_columns_for_gossip(
        &self,
        sidecars: Vec<(Arc<DataColumnSidecar<E>>, u64)>,
        current_time_ms: u64,
    ) -> Vec<Result<GossipVerifiedDataColumn<E>, DataColumnGossipError>> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let mut bids = BidCommitments::new();
        let mut results: Vec<Result<PendingColumn<E>, DataColumnGossipError>> = sidecars
            .into_iter()
            .map(|(s, subnet)| self.column_before_kzg(s, subnet, current_time_ms, &mut bids))
            .collect();
        // Fulu sidecars carry their commitments; Gloas ones are checked against their bid's.
        let (fulu, gloas): (Vec<usize>, Vec<usize>) = (0..results.len())
            .filter(|&i| results[i].is_ok())
            .partition(|&i| results[i].as_ref().is_ok_and(|p| p.gloas().is_none()));
        let refs: Vec<&DataColumnSidecar<E>> = fulu
            .iter()
            .filter_map(|&i| results[i].as_ref().ok().map(|p| p.sidecar()))
            .collect();
        let kzg = crate::batch_metrics::timed(None, refs.len(), || {
            verify_data_column_sidecars(&refs, self.spec(), self.pool())
        });
        if let Err(failures) = kzg {
            for (position, error) in failures {
                results[fulu[position]] = Err(DataColumnGossipError::InvalidKzgProofs(error));
            }
        }
        let gloas_refs: Vec<kzg::ColumnRef<'_>> = gloas
            .iter()
            .filter_map(|&i| results[i].as_ref().ok().and_then(|p| p.gloas()))
            .map(|c| kzg::ColumnRef {
                index: c.index,
                cells: &c.cells,
                commitments: &c.commitments,
                proofs: &c.proofs,
            })
            .collect();
        let kzg = crate::batch_metrics::timed(None, gloas_refs.len(), || {
            kzg::verify_data_column_sidecar_kzg_proofs_batch(&gloas_refs, self.pool())
        });
        if let Err(failures) = kzg {
            let failures: Vec<(usize, SidecarError)> = failures
                .into_iter()
                .map(|(position, error)| {
                    let index = gloas_refs[position].index;
                    (position, SidecarError::Kzg { index, error })
                })
                .collect();
            drop(gloas_refs);
            for (position, error) in failures {
                results[gloas[position]] = Err(DataColumnGossipError::InvalidKzgProofs(error));
            }
        }
        results
            .into_iter()
            .map(|p| self.column_after_kzg(p?))
            .collect()
    }

    /// `validate_partial_data_column_sidecar_gossip(seen, store, state, sidecar,
    /// current_time_ms, group_id, column_index)`.
    ///
    /// [spec]: fulu/partial-columns/p2p-interface.md#new-data_column_sidecar_subnet_id-partial-messages
    pub fn verify_partial_data_column_for_gossip(
        &self,
        sidecar: PartialDataColumnSidecar<E>,
        group_id: &PartialDataColumnGroupID,
        column_index: ColumnIndex,
        current_time_ms: u64,
    ) -> Result<VerifiedPartialDataColumn<E>, PartialColumnGossipError> {
        self.prune_observed(self.slot_at_ms(current_time_ms));
        let header = sidecar.header.first();
        let bits = sidecar.cells_present_bitmap.num_set_bits();
        if header.is_none() && bits == 0 {
            return Err(PartialColumnGossipError::Empty);
        }
        if sidecar.partial_column.len() != bits {
            return Err(PartialColumnGossipError::CellCount {
                cells: sidecar.partial_column.len(),
                bits,
            });
        }
        if sidecar.kzg_proofs.len() != bits {
            return Err(PartialColumnGossipError::ProofCount {
                proofs: sidecar.kzg_proofs.len(),
                bits,
            });
        }
        let block_root = group_id.beacon_block_root;
        if let Some(header) = header {
            self.check_partial_header(header, block_root, current_time_ms)?;
        }
        if bits > 0 {
            let header = self
                .observed
                .lock()
                .partial_headers
                .get(&block_root)
                .cloned()
                .ok_or(PartialColumnGossipError::HeaderUnknown(block_root))?;
            let slot = header.signed_block_header.message.slot;
            if self.is_future_slot(slot, current_time_ms) {
                return Err(PartialColumnGossipError::Header(
                    DataColumnGossipError::FutureSlot(slot),
                ));
            }
            let finalized_slot = self.finalized_checkpoint().epoch * E::slots_per_epoch();
            if slot <= finalized_slot {
                return Err(PartialColumnGossipError::Header(
                    DataColumnGossipError::NotAfterFinalizedSlot {
                        slot,
                        finalized_slot,
                    },
                ));
            }
            if sidecar.cells_present_bitmap.len() != header.kzg_commitments.len() {
                return Err(PartialColumnGossipError::BitmapLength {
                    bits: sidecar.cells_present_bitmap.len(),
                    commitments: header.kzg_commitments.len(),
                });
            }
            if !verify_partial_data_column_sidecar_kzg_proofs(&sidecar, &header, column_index) {
                return Err(PartialColumnGossipError::InvalidKzgProofs);
            }
        }
        Ok(VerifiedPartialDataColumn {
            sidecar,
            block_root,
            column_index,
        })
    }

    /// The header half of partial-column validation; marks the header seen when it passes.
    fn check_partial_header(
        &self,
        header: &PartialDataColumnHeader<E>,
        group_root: Root,
        current_time_ms: u64,
    ) -> Result<(), PartialColumnGossipError> {
        if let Some(prior) = self.observed.lock().partial_headers.get(&group_root)
            && prior != header
        {
            return Err(PartialColumnGossipError::HeaderMismatch);
        }
        let header_root = header.signed_block_header.message.tree_hash_root();
        if header_root != group_root {
            return Err(PartialColumnGossipError::WrongGroup {
                header: header_root,
                group: group_root,
            });
        }
        if header.kzg_commitments.is_empty() {
            return Err(PartialColumnGossipError::NoCommitments);
        }
        self.check_sidecar_header(&header.signed_block_header, current_time_ms)
            .map_err(PartialColumnGossipError::Header)?;
        if !verify_kzg_commitments_inclusion_proof::<E>(
            &header.kzg_commitments,
            &header.kzg_commitments_inclusion_proof,
            header.signed_block_header.message.body_root,
        ) {
            return Err(PartialColumnGossipError::Header(
                DataColumnGossipError::InvalidInclusionProof,
            ));
        }
        self.check_sidecar_proposer(&header.signed_block_header)
            .map_err(PartialColumnGossipError::Header)?;
        self.observed
            .lock()
            .partial_headers
            .insert(group_root, header.clone());
        Ok(())
    }
}

/// `verify_partial_data_column_sidecar_kzg_proofs(sidecar, all_commitments, column_index)`.
///
/// [spec]: fulu/partial-columns/p2p-interface.md#new-verify_partial_data_column_sidecar_kzg_proofs
pub fn verify_partial_data_column_sidecar_kzg_proofs<E: EthSpec>(
    sidecar: &PartialDataColumnSidecar<E>,
    header: &PartialDataColumnHeader<E>,
    column_index: ColumnIndex,
) -> bool {
    let blob_indices: Vec<usize> = sidecar
        .cells_present_bitmap
        .iter()
        .enumerate()
        .filter(|(_, bit)| *bit)
        .map(|(i, _)| i)
        .collect();
    let Some(commitments) = blob_indices
        .iter()
        .map(|&i| {
            header
                .kzg_commitments
                .get(i)
                .map(|c| kzg::KzgCommitment(c.0))
        })
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    let Ok(cells) = sidecar
        .partial_column
        .iter()
        .map(|cell| kzg::cell_from_bytes(&cell[..]))
        .collect::<Result<Vec<_>, _>>()
    else {
        return false;
    };
    let proofs: Vec<kzg::KzgProof> = sidecar
        .kzg_proofs
        .iter()
        .map(|p| kzg::KzgProof(p.0))
        .collect();
    let cell_indices = vec![column_index; cells.len()];
    kzg::verify_cell_kzg_proof_batch(&commitments, &cell_indices, &cells, &proofs).unwrap_or(false)
}
