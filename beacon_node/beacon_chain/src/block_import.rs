//! From a verified block or column to an imported block: the data availability checker holds
//! gossip blocks until their custody columns are verified, then the block is imported without
//! checking those columns again (the checker's [`AvailableBlock`] is the proof).
//!
//! ```text
//! SignedBeaconBlock ─verify_block_for_gossip─► GossipVerifiedBlock ─┐
//! DataColumnSidecar ─verify_data_columns_for_gossip─► GossipVerifiedDataColumn ─┤
//!                                                                   ▼
//!                                    DataAvailabilityChecker (custody columns)
//!                                                                   │ AvailableBlock
//!                                                                   ▼
//!                    import_available_block: on_block (STF), store batch, head
//! ```

use std::sync::Arc;

use state_processing::per_block::ExecutionEngine;
use types::{EthSpec, ForkName, Root, Slot};

use crate::chain::{BeaconChain, ChainError, UnimportedBlock};
use crate::data_availability_checker::{Availability, AvailableBlock, MissingComponents};
use crate::data_column_sidecars::DataColumnSidecarError;
use crate::data_column_verification::KzgVerifiedDataColumn;
use crate::execution::PayloadStatusSource;
use crate::gossip::{GossipVerifiedBlock, GossipVerifiedDataColumn};
use crate::timeline::{AvailableVia, BlockTimeline, SeenVia, Stage};

/// What became of a block or a column handed to the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockProcessed {
    /// The block was imported.
    Imported(Root),
    /// The block (or the block of the column) waits for what is listed.
    Pending(MissingComponents),
}

/// What became of gossip columns of one block.
#[derive(Debug, Clone)]
pub enum ColumnsProcessed<E: EthSpec> {
    /// Fulu columns: what became of their block (one result per block they belong to).
    Blocks(Vec<BlockProcessed>),
    /// Gloas columns: what became of their block's payload.
    Payload(crate::gloas_import::PayloadProcessed<E>),
}

/// What reconstruction (or the execution client's blobs) produced.
#[derive(Debug, Clone)]
pub struct Reconstructed<E: EthSpec> {
    /// The columns made, to publish on the subnets the node is subscribed to.
    pub published: Vec<Arc<types::DataColumnSidecar<E>>>,
    /// What became of the block.
    pub outcome: Vec<BlockProcessed>,
}

/// Why a pending block's missing columns could not be reconstructed
/// ([`BeaconChain::reconstruct_data_columns`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReconstructionError {
    /// Fewer than half the columns are held: the blobs cannot be recovered.
    #[error("{held} columns held, reconstruction needs {needed}")]
    TooFewColumns {
        /// Columns held for the block.
        held: usize,
        /// Columns reconstruction needs (half of them).
        needed: usize,
    },
    /// A held cell is unreadable, or the cells and proofs could not be recovered.
    #[error("recovering the cells: {0}")]
    Kzg(#[source] kzg::Error),
    /// The sidecars could not be built from the recovered cells and proofs.
    #[error("building the sidecars: {0}")]
    Sidecars(#[source] DataColumnSidecarError),
}

/// Why the execution client's blobs of a pending block could not be turned into its columns
/// ([`BeaconChain::process_execution_blobs`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecutionBlobsError {
    /// The block is not in the availability checker (imported, evicted or never seen).
    #[error("the block is not waiting for its columns")]
    NotPending,
    /// Blocks before Fulu have no data columns to build.
    #[error("a {0} block has no data columns")]
    NotFulu(ForkName),
    /// One blob is needed per blob commitment of the block.
    #[error("{blobs} blobs for {commitments} commitments")]
    BlobCount {
        /// Blobs given.
        blobs: usize,
        /// Blob commitments of the block.
        commitments: usize,
    },
    /// A blob came with the wrong number of cell proofs (`CELLS_PER_EXT_BLOB` are needed).
    #[error("{proofs} cell proofs, not {expected}")]
    CellProofCount {
        /// Cell proofs given for the blob.
        proofs: usize,
        /// `CELLS_PER_EXT_BLOB`.
        expected: usize,
    },
    /// A blob's cells could not be computed.
    #[error("computing the cells: {0}")]
    Kzg(#[source] kzg::Error),
    /// The sidecars could not be built from the cells and proofs.
    #[error("building the sidecars: {0}")]
    Sidecars(#[source] DataColumnSidecarError),
}

impl<E: EthSpec> BeaconChain<E> {
    /// Records that a block was first seen now (the router calls this when a block arrives,
    /// before it is verified).
    pub fn record_block_seen(&self, root: Root, slot: Slot, via: SeenVia) {
        let at = self.ms_into_slot(slot);
        self.timelines.lock().seen(root, slot, at, via);
    }

    /// Records that the execution payload envelope of block `root` (Gloas) was first seen now,
    /// on the block's timeline (nothing for a block the node has not seen: see
    /// [`crate::timeline`]). The router calls this when an envelope arrives, before it is
    /// verified; the chain does for req/resp and the API.
    pub fn record_envelope_seen(&self, root: Root, via: SeenVia) {
        self.timelines
            .lock()
            .envelope_seen(root, |slot| self.ms_into_slot(slot), via);
    }

    /// Records that the execution client answered `engine_newPayload` of a block now (the
    /// router calls this for a verdict it obtained beside the import).
    pub fn record_block_executed(&self, root: Root, slot: Slot) {
        self.record_stage(root, slot, Stage::Executed);
    }

    /// The timeline of a recent block.
    pub fn block_timeline(&self, root: &Root) -> Option<BlockTimeline> {
        self.timelines.lock().get(root)
    }

    /// Registers the chain's metrics (`beacon_block_delay_*_seconds`,
    /// `beacon_block_import_pre_state_total`, `beacon_state_advance_seconds`,
    /// `beacon_block_import_store_write_seconds`).
    pub fn register_metrics(
        &self,
        registry: &prometheus::Registry,
    ) -> Result<(), prometheus::Error> {
        self.timelines.lock().register(registry)?;
        self.import_metrics.register(registry)
    }

    /// A gossip-verified block's import, owned by the chain: `engine_newPayload` is sent for
    /// it (beside the import, [`Self::verify_payload_beside_import`]) unless it was already,
    /// then the block goes into the availability checker ([`Self::process_gossip_block`] with
    /// the verdict) and is imported when its custody columns are here. A payload the execution
    /// client found invalid already is never made available: its columns cannot import it
    /// later either.
    pub fn import_gossip_block(
        self: &Arc<Self>,
        block: GossipVerifiedBlock<E>,
    ) -> Result<BlockProcessed, ChainError> {
        let root = block.block_root;
        let slot = block.block.slot();
        // The router starts it as the block passes gossip validation, while the import waits
        // in the queue; a caller that did not gets it started here.
        if self.payload_verdicts.in_flight(&root).is_none() {
            self.verify_payload_beside_import(root, block.block.clone());
        }
        // Columns that complete the block later read the same verdict.
        let verdict = self.payload_verdict(&root);
        if verdict.get() == Some(crate::chain::ExecutionStatus::Invalidated) {
            self.record_unimported_block(
                root,
                UnimportedBlock::Failed {
                    slot,
                    payload: crate::chain::ExecutionStatus::Invalidated,
                },
            );
            return Err(ChainError::InvalidPayload(root));
        }
        self.process_gossip_block(block, &verdict, &verdict)
    }

    /// Gossip-verified columns of block `root`. Fulu's go into the availability checker with
    /// the block's own payload verdict (in flight or known); the block, when they complete it,
    /// is imported (a block not here yet is imported by its own arrival). Gloas's wait for
    /// their block's envelope ([`Self::process_gossip_gloas_columns`]; their block is imported
    /// already), and the payload, when they complete it, is imported.
    pub fn import_gossip_data_columns(
        &self,
        root: &Root,
        columns: Vec<GossipVerifiedDataColumn<E>>,
    ) -> Result<ColumnsProcessed<E>, ChainError> {
        let (gloas, fulu): (Vec<_>, Vec<_>) = columns
            .into_iter()
            .partition(|c| matches!(&*c.sidecar, types::DataColumnSidecar::Gloas(_)));
        if let Some(first) = gloas.first() {
            let slot = first.sidecar.slot();
            let sidecars = gloas.into_iter().map(|c| c.sidecar).collect();
            let payload = self
                .process_gossip_gloas_columns(*root, slot, sidecars)
                .map_err(|e| ChainError::Envelope(Box::new(e)))?;
            return Ok(ColumnsProcessed::Payload(payload));
        }
        let verdict = self.payload_verdict(root);
        self.process_gossip_data_columns(fulu, &verdict, &verdict)
            .map(ColumnsProcessed::Blocks)
    }

    /// [`Self::reconstruct_data_columns`] with the block's own payload verdict.
    pub fn reconstruct_missing_columns(&self, root: &Root) -> Result<Reconstructed<E>, ChainError> {
        let verdict = self.payload_verdict(root);
        self.reconstruct_data_columns(root, &verdict, &verdict)
    }

    /// [`Self::process_execution_blobs`] (the blobs from [`Self::blobs_from_execution_layer`])
    /// with the block's own payload verdict.
    pub fn import_execution_blobs(
        &self,
        root: &Root,
        blobs: &[crate::execution::ExecutionBlob],
    ) -> Result<Reconstructed<E>, ChainError> {
        let verdict = self.payload_verdict(root);
        self.process_execution_blobs(root, blobs, &verdict, &verdict)
    }

    /// A gossip-verified block into the availability checker; imported at once when its
    /// custody columns are already here (or it has no blobs).
    pub fn process_gossip_block(
        &self,
        block: GossipVerifiedBlock<E>,
        engine: &impl ExecutionEngine<E>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<BlockProcessed, ChainError> {
        let GossipVerifiedBlock { block, block_root } = block;
        let slot = block.slot();
        self.record_stage(block_root, slot, Stage::GossipVerified);
        // A Gloas block carries no payload and no data: imported at once, its payload (the
        // envelope and the columns) later on its own path.
        if matches!(&*block, types::SignedBeaconBlock::Gloas(_)) {
            return self
                .import_gloas_block(block, block_root)
                .map(BlockProcessed::Imported);
        }
        let (availability, evicted) = self
            .da_checker
            .lock()
            .put_block(block_root, block)
            .map_err(ChainError::Availability)?;
        self.forget_evicted(evicted);
        match availability {
            Availability::Available(available) => self
                .import_available_block(*available, engine, payload_status)
                .map(BlockProcessed::Imported),
            Availability::Missing(missing) => {
                self.record_unimported_block(block_root, UnimportedBlock::Pending { slot });
                Ok(BlockProcessed::Pending(missing))
            }
        }
    }

    /// Gossip-verified columns into the availability checker; every block they complete is
    /// imported. One result per block the columns belong to.
    pub fn process_gossip_data_columns(
        &self,
        columns: Vec<GossipVerifiedDataColumn<E>>,
        engine: &impl ExecutionEngine<E>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<Vec<BlockProcessed>, ChainError> {
        let columns = columns
            .into_iter()
            .map(|c| KzgVerifiedDataColumn::from_verified(c.sidecar, c.block_root))
            .collect();
        self.process_verified_columns(columns, AvailableVia::Columns, engine, payload_status)
    }

    /// Verified columns (from gossip, req/resp, the execution client's blobs or
    /// reconstruction) into the availability checker.
    pub(crate) fn process_verified_columns(
        &self,
        columns: Vec<KzgVerifiedDataColumn<E>>,
        via: AvailableVia,
        engine: &impl ExecutionEngine<E>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<Vec<BlockProcessed>, ChainError> {
        // Columns of a block imported already (they came after the ones that completed it, or
        // after its reconstruction) are not held again: they would wait for a block that
        // never comes back to the checker.
        let (columns, late): (Vec<_>, Vec<_>) = {
            let fc = self.fork_choice.lock();
            columns
                .into_iter()
                .partition(|c: &KzgVerifiedDataColumn<E>| !fc.contains_block(&c.block_root()))
        };
        let mut imported_roots: Vec<Root> = late.iter().map(|c| c.block_root()).collect();
        imported_roots.sort();
        imported_roots.dedup();
        let (availabilities, evicted) = self
            .da_checker
            .lock()
            .put_columns(columns)
            .map_err(ChainError::Availability)?;
        self.forget_evicted(evicted);
        let mut out: Vec<BlockProcessed> = imported_roots
            .into_iter()
            .map(BlockProcessed::Imported)
            .collect();
        for availability in availabilities {
            out.push(match availability {
                Availability::Available(available) => {
                    let root = available.block_root;
                    let slot = available.block.slot();
                    self.record_stage(root, slot, Stage::Available(via));
                    BlockProcessed::Imported(self.import_available_block(
                        *available,
                        engine,
                        payload_status,
                    )?)
                }
                Availability::Missing(missing) => BlockProcessed::Pending(missing),
            });
        }
        Ok(out)
    }

    /// Imports a block whose custody columns the availability checker verified: fork choice's
    /// availability hook is not asked to verify them again, the store keeps them.
    pub fn import_available_block(
        &self,
        available: AvailableBlock<E>,
        engine: &impl ExecutionEngine<E>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<Root, ChainError> {
        let slot = available.block.slot();
        let via = if available.columns.is_empty() {
            AvailableVia::NoBlobs
        } else {
            AvailableVia::Columns
        };
        self.record_stage(available.block_root, slot, Stage::Available(via));
        let stored = available.columns.iter().map(|c| &**c.sidecar()).collect();
        let root = self.import(
            available.block,
            available.block_root,
            &[],
            stored,
            engine,
            payload_status,
        )?;
        // Columns that arrived while the block was being imported made a new entry: it has
        // nothing left to wait for.
        self.da_checker.lock().discard(&root);
        Ok(root)
    }

    /// Blocks the checker evicted are no longer pending here either.
    fn forget_evicted(&self, evicted: Vec<Root>) {
        if evicted.is_empty() {
            return;
        }
        let mut unimported = self.unimported.lock();
        for root in evicted {
            if matches!(unimported.get(&root), Some(UnimportedBlock::Pending { .. })) {
                unimported.remove(&root);
            }
        }
    }

    /// Whether the supernode should reconstruct `root`'s missing columns now (it holds at least
    /// half of them and has not asked before). The router schedules
    /// [`Self::reconstruct_data_columns`] as processor work when this says yes.
    pub fn take_reconstruction_request(&self, root: &Root) -> bool {
        self.da_checker.lock().take_reconstruction_request(root)
    }

    /// Reconstructs every column of `root` from the half or more held
    /// (`recover_cells_and_kzg_proofs` per blob, in parallel on the chain's pool), feeds the
    /// missing ones to the availability checker as verified (they are computed, not received)
    /// and returns them for publication on the subnets the node is subscribed to, with what
    /// became of the block. Costs seconds at 48 blobs: scheduled work, never on the import
    /// path.
    ///
    /// A block imported meanwhile (its columns all arrived while the work was queued) is no
    /// error: nothing is published and the outcome says it is imported.
    ///
    /// [spec]: fulu/das-core.md#reconstruction-and-cross-seeding
    pub fn reconstruct_data_columns(
        &self,
        root: &Root,
        engine: &impl ExecutionEngine<E>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<Reconstructed<E>, ChainError> {
        let held = self.pending_columns(root);
        // The missing columns arrived (or the block was imported) while the work waited in
        // its queue: nothing is left to reconstruct.
        if held.is_empty() && self.fork_choice.lock().contains_block(root) {
            return Ok(Reconstructed {
                published: Vec::new(),
                outcome: vec![BlockProcessed::Imported(*root)],
            });
        }
        let reconstruction = |source| ChainError::Reconstruction {
            block_root: *root,
            source,
        };
        let half = <E::NumberOfColumns as types::typenum::Unsigned>::to_usize() / 2;
        if held.len() < half {
            return Err(reconstruction(ReconstructionError::TooFewColumns {
                held: held.len(),
                needed: half,
            }));
        }
        let sidecars: Vec<&types::fulu::DataColumnSidecar<E>> = held
            .iter()
            .map(|s| match &**s {
                types::DataColumnSidecar::Fulu(s) => Ok(s),
                types::DataColumnSidecar::Gloas(_) => {
                    Err(ChainError::UnsupportedFork(s.fork_name()))
                }
            })
            .collect::<Result<_, _>>()?;
        let first = sidecars[0];
        let indices: Vec<u64> = sidecars.iter().map(|s| s.index).collect();
        let blobs = first.kzg_commitments.len();
        let recovered: Vec<kzg::CellsAndProofs> = {
            use rayon::prelude::*;
            self.pool().install(|| {
                (0..blobs)
                    .into_par_iter()
                    .map(|blob| {
                        let cells = sidecars
                            .iter()
                            .map(|s| {
                                s.column
                                    .get(blob)
                                    .ok_or(kzg::Error::Empty { what: "cells" })
                                    .and_then(|c| kzg::cell_from_bytes(&c[..]))
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        kzg::recover_cells_and_kzg_proofs(&indices, &cells)
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
        }
        .map_err(|e| reconstruction(ReconstructionError::Kzg(e)))?;
        let all = crate::data_column_sidecars::get_data_column_sidecars::<E>(
            &first.signed_block_header,
            &first.kzg_commitments,
            &first.kzg_commitments_inclusion_proof,
            &recovered,
        )
        .map_err(|e| reconstruction(ReconstructionError::Sidecars(e)))?;
        let missing: Vec<Arc<types::DataColumnSidecar<E>>> = all
            .into_iter()
            .filter(|c| !indices.contains(&c.index()))
            .map(Arc::new)
            .collect();
        let verified = missing
            .iter()
            .map(|c| KzgVerifiedDataColumn::from_verified(c.clone(), *root))
            .collect();
        let outcome = self.process_verified_columns(
            verified,
            AvailableVia::Reconstruction,
            engine,
            payload_status,
        )?;
        Ok(Reconstructed {
            published: self.unseen_columns(missing),
            outcome,
        })
    }

    /// The columns of `columns` that no peer has sent yet, each now counted as seen: only those
    /// are published (gossipsub refuses, with a warning, to publish a message it has seen), and
    /// copies that come later are IGNOREd, as the gossip rule `data_column_sidecar_tuples`
    /// reads.
    fn unseen_columns(
        &self,
        columns: Vec<Arc<types::DataColumnSidecar<E>>>,
    ) -> Vec<Arc<types::DataColumnSidecar<E>>> {
        let mut observed = self.observed.lock();
        columns
            .into_iter()
            .filter(|c| match &**c {
                types::DataColumnSidecar::Fulu(c) => {
                    let header = &c.signed_block_header.message;
                    !observed
                        .data_columns
                        .observe(header.slot, (header.proposer_index, c.index))
                        .unwrap_or(true)
                }
                // Reconstruction and the execution client's blobs make Fulu sidecars only; a
                // Gloas one is not published from here (issue 44).
                types::DataColumnSidecar::Gloas(_) => false,
            })
            .collect()
    }

    /// The execution client's blobs of a pending block (`engine_getBlobsV2`: each blob with its
    /// `CELLS_PER_EXT_BLOB` cell proofs, in commitment order) turned into its column sidecars
    /// without verifying their KZG proofs (the execution client checked them; the p2p spec says
    /// to skip the check): the cells computed from each blob (in parallel on the chain's pool),
    /// the sidecars built from the block, the custody ones made available. Returns every
    /// sidecar (to publish on the subnets the node is subscribed to) and what became of the
    /// block.
    ///
    /// [spec]: fulu/p2p-interface.md#distributed-blob-publishing-using-blobs-retrieved-from-local-execution-layer-client
    pub fn process_execution_blobs(
        &self,
        root: &Root,
        blobs: &[crate::execution::ExecutionBlob],
        engine: &impl ExecutionEngine<E>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<Reconstructed<E>, ChainError> {
        let error = |source| ChainError::ExecutionBlobs {
            block_root: *root,
            source,
        };
        let block = self
            .da_checker
            .lock()
            .block(root)
            .ok_or_else(|| error(ExecutionBlobsError::NotPending))?;
        let commitments = match &*block {
            types::SignedBeaconBlock::Fulu(b) => b.message.body.blob_kzg_commitments.len(),
            other @ (types::SignedBeaconBlock::Phase0(_)
            | types::SignedBeaconBlock::Altair(_)
            | types::SignedBeaconBlock::Bellatrix(_)
            | types::SignedBeaconBlock::Capella(_)
            | types::SignedBeaconBlock::Deneb(_)
            | types::SignedBeaconBlock::Electra(_)
            | types::SignedBeaconBlock::Gloas(_)) => {
                return Err(error(ExecutionBlobsError::NotFulu(other.fork_name())));
            }
        };
        if blobs.len() != commitments {
            return Err(error(ExecutionBlobsError::BlobCount {
                blobs: blobs.len(),
                commitments,
            }));
        }
        let cells_and_proofs: Vec<kzg::CellsAndProofs> = {
            use rayon::prelude::*;
            self.pool().install(|| {
                blobs
                    .par_iter()
                    .map(|(blob, proofs)| {
                        let cells = kzg::compute_cells(blob).map_err(ExecutionBlobsError::Kzg)?;
                        let proofs: Box<[kzg::KzgProof; kzg::CELLS_PER_EXT_BLOB]> =
                            proofs.clone().into_boxed_slice().try_into().map_err(
                                |p: Box<[kzg::KzgProof]>| ExecutionBlobsError::CellProofCount {
                                    proofs: p.len(),
                                    expected: kzg::CELLS_PER_EXT_BLOB,
                                },
                            )?;
                        Ok(kzg::CellsAndProofs { cells, proofs })
                    })
                    .collect::<Result<Vec<_>, ExecutionBlobsError>>()
            })
        }
        .map_err(error)?;
        let sidecars: Vec<Arc<types::DataColumnSidecar<E>>> =
            crate::data_column_sidecars::get_data_column_sidecars_from_block(
                &block,
                &cells_and_proofs,
            )
            .map_err(|e| error(ExecutionBlobsError::Sidecars(e)))?
            .into_iter()
            .map(Arc::new)
            .collect();
        let verified = sidecars
            .iter()
            .map(|c| KzgVerifiedDataColumn::from_verified(c.clone(), *root))
            .collect();
        let outcome = self.process_verified_columns(
            verified,
            AvailableVia::GetBlobs,
            engine,
            payload_status,
        )?;
        Ok(Reconstructed {
            published: self.unseen_columns(sidecars),
            outcome,
        })
    }

    /// The custody columns held for a pending block (what reconstruction starts from).
    pub fn pending_columns(&self, root: &Root) -> Vec<Arc<types::DataColumnSidecar<E>>> {
        self.da_checker
            .lock()
            .columns(root)
            .into_iter()
            .map(|c| c.sidecar().clone())
            .collect()
    }
}
