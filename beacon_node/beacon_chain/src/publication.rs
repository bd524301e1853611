//! Block publication (`publishBlockV2`): the block's data column sidecars computed from its blobs
//! and cell proofs (no proof is recomputed; the KZG check is skipped for blobs this node's
//! execution client built, and batched for any other), the `broadcast_validation` level
//! honoured, the block and then its columns handed to networking, and the block imported
//! through the chain's normal path with its columns as verified while the execution client
//! checks its payload (`engine_newPayload` beside the state transition; the import waits for
//! the verdict before fork choice, and goes on optimistically when the execution client cannot
//! be asked).
//!
//! Levels (Beacon API `broadcast_validation`):
//! - `gossip`: the block passes gossip validation, is broadcast, then imported;
//! - `consensus`: the block passes gossip validation and is imported (the full state
//!   transition) before it is broadcast, and is not broadcast when the execution client finds
//!   its payload invalid;
//! - `consensus_and_equivocation`: as `consensus`, and refused when the proposer has another
//!   block at the slot.
//!
//! A second block of the same proposer and slot fails the gossip rule "first block seen"
//! before any other check; at the `gossip` and `consensus` levels it is then held to the full
//! consensus check instead (imported first), since the Beacon API only refuses equivocations
//! at `consensus_and_equivocation`.
//!
//! [spec]: fulu/validator.md#constructing-the-datacolumnsidecars,
//! fulu/p2p-interface.md#data_column_sidecar_subnet_id

use std::sync::Arc;

use types::{
    DataColumnSidecar, EthSpec, ForkName, Root, SignedBeaconBlock, Slot, ValidatorIndex, signing,
    typenum::Unsigned,
};

use crate::block_import::BlockProcessed;
use crate::chain::{BeaconChain, ChainError, ExecutionStatus, UnimportedBlock, electra_message};
use crate::data_column_sidecars::{DataColumnSidecarError, get_data_column_sidecars_from_block};
use crate::data_column_verification::{
    KzgVerifiedDataColumn, verify_data_column_sidecars_standalone,
};
use crate::execution::{BlockPayloadVerdict, ExecutionError, update_execution_head};
use crate::gossip::{BlockGossipError, GossipVerifiedBlock, domain_at, head_pubkey, verify_one};
use crate::internal_error::InternalError;
use crate::production::{BlobData, BlockProducer, compute_cells_and_proofs};
use crate::timeline::{AvailableVia, SeenVia};
use crate::workers::{WorkPriority, WorkersUnavailable, run_on_workers};

/// A block's column sidecars, shared with networking.
type Columns<E> = Vec<Arc<DataColumnSidecar<E>>>;

/// The Beacon API's `broadcast_validation`: what a block must pass before it is broadcast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BroadcastValidation {
    /// Gossip validation only (the API's default).
    #[default]
    Gossip,
    /// Gossip validation and the full state transition (with the payload's verdict).
    Consensus,
    /// As `Consensus`, and no other block of the proposer at the slot.
    ConsensusAndEquivocation,
}

/// Where published blocks and columns go: the node's networking (gossipsub topics
/// `beacon_block` and `data_column_sidecar_{subnet}`).
pub trait BlockBroadcaster<E: EthSpec>: Send + Sync {
    /// Publishes the block on `beacon_block`.
    fn broadcast_block(&self, block: Arc<SignedBeaconBlock<E>>);
    /// Publishes each column on its subnet.
    fn broadcast_data_columns(&self, columns: Vec<Arc<DataColumnSidecar<E>>>);
    /// Publishes a Gloas payload envelope on `execution_payload`.
    fn broadcast_execution_payload_envelope(
        &self,
        envelope: Arc<types::gloas::SignedExecutionPayloadEnvelope<E>>,
    );
}

/// What became of a published block.
///
/// HTTP status of `publishBlockV2` for each: `Imported` and `AlreadyImported` 200;
/// `BroadcastNotImported` 202 (broadcast, then refused by the import: the API's "failed
/// validation, but was successfully broadcast anyway"); `Pending` 202 (broadcast, still
/// waiting for columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublishOutcome {
    /// Broadcast and imported.
    Imported,
    /// The chain had imported this block already: nothing was broadcast again.
    AlreadyImported,
    /// Broadcast (gossip level), then the import refused it (a [`ChainError`]) or the execution
    /// client found its payload invalid ([`PublishError::PayloadInvalid`]).
    BroadcastNotImported(InternalError),
    /// Broadcast; the chain still waits for some of its columns.
    Pending(BlockProcessed),
}

/// A published block.
#[derive(Debug, Clone)]
pub struct PublishedBlock<E: EthSpec> {
    /// The block's root.
    pub block_root: Root,
    /// The column sidecars broadcast (empty for a block without blobs or already imported).
    pub data_columns: Vec<Arc<DataColumnSidecar<E>>>,
    /// What became of it.
    pub outcome: PublishOutcome,
    /// Whether the columns' KZG proofs were verified (a block not built here) or trusted (its
    /// blobs are the ones this node's execution client built).
    pub kzg_verified: bool,
    /// The execution client's verdict on the payload, when it was asked.
    pub payload_status: Option<ExecutionStatus>,
    /// `engine_forkchoiceUpdatedV3` after the import failed (the head moved in the chain, not
    /// yet at the execution client); `None` when it succeeded or was not sent.
    pub execution_head_error: Option<String>,
}

/// Why a block was not published. Each is a 400 of `publishBlockV2` (the block was not
/// broadcast), except `Engine` (503: the execution client could not be asked).
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// Blocks are published from Electra on, blobs as columns from Fulu on.
    #[error("a {fork} block with {blobs} blobs cannot be published here")]
    UnsupportedFork {
        /// The block's fork.
        fork: ForkName,
        /// Its blob commitments.
        blobs: usize,
    },
    /// The block failed gossip validation.
    #[error("gossip validation: {0}")]
    Gossip(BlockGossipError),
    /// The block was seen before and failed validation.
    #[error("block {0} failed validation before")]
    KnownInvalid(Root),
    /// Another block of the proposer at the slot was seen (`consensus_and_equivocation`).
    #[error("proposer {proposer} already has a block at slot {slot}")]
    Equivocation {
        /// The slot.
        slot: Slot,
        /// The proposer.
        proposer: ValidatorIndex,
    },
    /// The block commits to blobs but none were given.
    #[error("the block commits to {commitments} blobs but no blobs were given")]
    MissingBlobs {
        /// The block's commitments.
        commitments: usize,
    },
    /// The blobs given are not as many as the block's commitments.
    #[error("{blobs} blobs given for {commitments} commitments")]
    BlobCountMismatch {
        /// The block's commitments.
        commitments: usize,
        /// Blobs given.
        blobs: usize,
    },
    /// The proofs given are not `CELLS_PER_EXT_BLOB` per blob.
    #[error("{proofs} cell proofs for {blobs} blobs, expected {expected}")]
    ProofCountMismatch {
        /// Blobs given.
        blobs: usize,
        /// Proofs given.
        proofs: usize,
        /// `blobs × CELLS_PER_EXT_BLOB`.
        expected: usize,
    },
    /// A blob is not a list of canonical field elements.
    #[error("blob {index}: {source}")]
    InvalidBlob {
        /// The blob's position.
        index: usize,
        /// Why.
        #[source]
        source: kzg::Error,
    },
    /// The columns could not be built.
    #[error("data columns: {0}")]
    Columns(#[from] DataColumnSidecarError),
    /// The cell proofs do not verify against the block's commitments (columns listed).
    #[error("the cell proofs of columns {0:?} do not verify")]
    InvalidColumns(Vec<u64>),
    /// The execution client found the payload invalid (consensus levels: not broadcast).
    #[error("the execution client found the payload of {0} invalid")]
    PayloadInvalid(Root),
    /// The execution client could not be asked.
    #[error("execution: {0}")]
    Engine(#[from] ExecutionError),
    /// The chain refused the block (consensus levels: not broadcast).
    #[error("import: {0}")]
    Import(#[from] ChainError),
    /// The node's workers did not run the import (overloaded or stopping).
    #[error("import: {0}")]
    Workers(#[source] WorkersUnavailable),
}

impl<E: EthSpec> BlockProducer<E> {
    /// `publishBlockV2`: publishes `block` with its blobs and cell proofs (`blobs`: `(proofs,
    /// blobs)` as the Fulu `SignedBlockContents` carries them) at the `validation` level
    /// through `broadcaster`, and imports it.
    pub async fn publish_block(
        &self,
        block: Arc<SignedBeaconBlock<E>>,
        blobs: Option<BlobData<E>>,
        validation: BroadcastValidation,
        broadcaster: &dyn BlockBroadcaster<E>,
    ) -> Result<PublishedBlock<E>, PublishError> {
        if matches!(&*block, SignedBeaconBlock::Gloas(_)) {
            // The payload and the blobs come after the block, in its envelope.
            if let Some((_, blobs)) = &blobs
                && !blobs.is_empty()
            {
                return Err(PublishError::UnsupportedFork {
                    fork: ForkName::Gloas,
                    blobs: blobs.len(),
                });
            }
            return self
                .publish_gloas_block(block, validation, broadcaster)
                .await;
        }
        let chain = self.chain();
        let commitments = electra_message(&block)
            .map(|m| m.body.blob_kzg_commitments.len())
            .map_err(|fork| PublishError::UnsupportedFork { fork, blobs: 0 })?;
        if commitments > 0 && block.fork_name() < ForkName::Fulu {
            return Err(PublishError::UnsupportedFork {
                fork: block.fork_name(),
                blobs: commitments,
            });
        }
        let block_root = block.canonical_root();
        let slot = block.slot();
        let mut published = PublishedBlock {
            block_root,
            data_columns: Vec::new(),
            outcome: PublishOutcome::AlreadyImported,
            kzg_verified: false,
            payload_status: None,
            execution_head_error: None,
        };
        if chain.fork_choice.lock().contains_block(&block_root) {
            return Ok(published);
        }
        let pending = match chain.unimported_block(&block_root) {
            Some(UnimportedBlock::Failed { .. }) => {
                return Err(PublishError::KnownInvalid(block_root));
            }
            Some(UnimportedBlock::Pending { .. }) => true,
            None => false,
        };
        // The blobs' shape before anything else (cheap, and a refusal here marks nothing seen).
        let blobs = check_blobs::<E>(commitments, blobs)?;
        chain.record_block_seen(block_root, slot, SeenVia::Api);

        // Gossip validation first, at every level (a block waiting for its columns passed it).
        let mut level = validation;
        let verified = if pending {
            None
        } else {
            match chain.verify_block_for_gossip(block.clone(), chain.now_ms()) {
                Ok(verified) => Some(verified),
                Err(BlockGossipError::RepeatProposal { slot, proposer }) => {
                    if validation == BroadcastValidation::ConsensusAndEquivocation {
                        return Err(PublishError::Equivocation { slot, proposer });
                    }
                    // The gossip rules stop at "first block seen": hold it to the state
                    // transition instead, its signature checked first (a copy with a bad
                    // signature must not mark the block's root as failed).
                    if !self.verify_proposer_signature(&block, block_root) {
                        return Err(PublishError::Gossip(BlockGossipError::InvalidSignature));
                    }
                    level = BroadcastValidation::Consensus;
                    Some(GossipVerifiedBlock {
                        block: block.clone(),
                        block_root,
                    })
                }
                Err(e) => return Err(PublishError::Gossip(e)),
            }
        };

        let (columns, kzg_verified) = self.build_columns(&block, block_root, blobs)?;
        published.kzg_verified = kzg_verified;
        published.data_columns = columns.clone();

        if level == BroadcastValidation::Gossip {
            broadcast(broadcaster, &block, &columns);
        }
        // `engine_newPayload` beside the import: the state transition runs on the node's
        // workers (the processor's `api_request_p0`, its parallel sections on the processor's
        // pool; tokio's blocking pool without a processor) while the execution client checks
        // the payload, and waits for its verdict before fork choice (as for a gossip block).
        // An execution client that cannot be asked leaves the payload not validated: the block
        // is imported optimistically, at every level (the consensus levels do not cover the
        // payload's execution).
        let sender = chain.expect_payload_verdict(block_root, slot);
        let verdict = chain.payload_verdict(&block_root);
        let import = {
            let chain = chain.clone();
            let columns = columns.clone();
            // Spawned, so that it is queued now, not once the execution client has answered.
            tokio::spawn(run_on_workers(
                self.workers(),
                WorkPriority::P0,
                move || import_published(&chain, verified, block_root, &columns, &verdict),
            ))
        };
        let answer = chain
            .notify_new_payload_beside_import(self.engine(), block_root, &block, sender)
            .await;
        let imported: Result<BlockProcessed, PublishError> = match import.await {
            Ok(Ok(imported)) => imported.map_err(PublishError::from),
            Ok(Err(e)) => Err(PublishError::Workers(e)),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(ChainError::ImportTask(e).into()),
        };
        let status = answer.unwrap_or(ExecutionStatus::NotValidated);
        published.payload_status = Some(status);
        // The consensus levels wait for the execution client's answer even when the import
        // went on without it (optimistically, past the chain's verdict wait): an invalid
        // payload is never broadcast there.
        if status == ExecutionStatus::Invalidated {
            // Its descendants are refused as the descendants of any invalid block are.
            chain.record_unimported_block(
                block_root,
                UnimportedBlock::Failed {
                    slot,
                    payload: ExecutionStatus::Invalidated,
                },
            );
            if level == BroadcastValidation::Gossip {
                published.outcome = PublishOutcome::BroadcastNotImported(InternalError::new(
                    PublishError::PayloadInvalid(block_root),
                ));
                return Ok(published);
            }
            return Err(PublishError::PayloadInvalid(block_root));
        }
        let processed = match imported {
            Ok(processed) => processed,
            Err(e) if level == BroadcastValidation::Gossip => {
                published.outcome = PublishOutcome::BroadcastNotImported(InternalError::new(e));
                return Ok(published);
            }
            Err(e) => return Err(e),
        };
        if level != BroadcastValidation::Gossip {
            broadcast(broadcaster, &block, &columns);
        }
        published.outcome = match processed {
            BlockProcessed::Imported(_) => PublishOutcome::Imported,
            pending @ BlockProcessed::Pending(_) => PublishOutcome::Pending(pending),
        };
        if published.outcome == PublishOutcome::Imported {
            published.execution_head_error = update_execution_head(chain, self.engine(), None)
                .await
                .err()
                .map(|e| e.to_string());
        }
        Ok(published)
    }

    /// The proposer's signature over `block` (of root `block_root`), with the head state's key.
    fn verify_proposer_signature(&self, block: &SignedBeaconBlock<E>, block_root: Root) -> bool {
        let chain = self.chain();
        let head = chain.head();
        let Some(key) = head_pubkey(&head.state, block.proposer_index()) else {
            return false;
        };
        let domain = domain_at(
            chain.spec(),
            chain.genesis_validators_root(),
            signing::DOMAIN_BEACON_PROPOSER,
            block.slot() / E::slots_per_epoch(),
        );
        verify_one(
            &key,
            signing::compute_signing_root(&block_root, domain),
            &block.signature(),
        )
    }

    /// The block's data column sidecars for publication: the blob data's shape checked, then
    /// [`Self::build_columns`] (what `publish_block` does between gossip validation and the
    /// broadcast). Returns the sidecars and whether their KZG proofs were verified (`false` for
    /// blobs this node built, or no blobs).
    pub fn data_column_sidecars_for_publication(
        &self,
        block: &SignedBeaconBlock<E>,
        blobs: Option<BlobData<E>>,
    ) -> Result<(Columns<E>, bool), PublishError> {
        let commitments = electra_message(block)
            .map(|m| m.body.blob_kzg_commitments.len())
            .map_err(|fork| PublishError::UnsupportedFork { fork, blobs: 0 })?;
        let blobs = check_blobs::<E>(commitments, blobs)?;
        self.build_columns(block, block.canonical_root(), blobs)
    }

    /// The block's 128 column sidecars from `blobs`: the cells computed from each blob (in
    /// parallel on the chain's pool), the proofs taken as given. Their KZG proofs are verified
    /// in one batch unless the blobs and proofs are those this node's execution client built
    /// for this very block. Returns the sidecars and whether they were verified.
    fn build_columns(
        &self,
        block: &SignedBeaconBlock<E>,
        block_root: Root,
        blobs: Option<BlobData<E>>,
    ) -> Result<(Columns<E>, bool), PublishError> {
        let Some((proofs, blobs)) = blobs else {
            return Ok((Vec::new(), false));
        };
        let built = self
            .built_blobs(&block_root)
            .filter(|b| b.blobs == blobs && b.kzg_proofs == proofs);
        let built_here = built.is_some();
        let pool = self.chain().pool();
        let cells_and_proofs = match built {
            Some(built) => built.cells_and_proofs(pool),
            None => pool
                .install(|| compute_cells_and_proofs::<E>(&blobs, &proofs))
                .map(Arc::new),
        }
        .map_err(|e| PublishError::InvalidBlob {
            index: e.index,
            source: e.source,
        })?;
        let sidecars: Vec<Arc<DataColumnSidecar<E>>> =
            get_data_column_sidecars_from_block(block, &cells_and_proofs)?
                .into_iter()
                .map(Arc::new)
                .collect();
        if built_here {
            return Ok((sidecars, false));
        }
        let chain = self.chain();
        let outcome =
            verify_data_column_sidecars_standalone(sidecars.clone(), chain.spec(), chain.pool());
        if !outcome.failed.is_empty() {
            let bad = outcome
                .failed
                .iter()
                .filter_map(|(position, _)| sidecars.get(*position))
                .map(|s| s.index())
                .collect();
            return Err(PublishError::InvalidColumns(bad));
        }
        Ok((sidecars, true))
    }
}

/// The chain's normal import path: the columns (verified or built from verified blobs)
/// into the availability checker, then the gossip-verified block, imported once its custody
/// columns are all there. A block already waiting there (`verified` is `None`) is completed
/// by the columns.
fn import_published<E: EthSpec>(
    chain: &BeaconChain<E>,
    verified: Option<GossipVerifiedBlock<E>>,
    block_root: Root,
    columns: &[Arc<DataColumnSidecar<E>>],
    verdict: &BlockPayloadVerdict,
) -> Result<BlockProcessed, ChainError> {
    let verified_columns = columns
        .iter()
        .map(|c| KzgVerifiedDataColumn::from_verified(c.clone(), block_root))
        .collect::<Vec<_>>();
    let mut outcomes = if verified_columns.is_empty() {
        Vec::new()
    } else {
        chain.process_verified_columns(verified_columns, AvailableVia::Columns, verdict, verdict)?
    };
    match verified {
        Some(block) => chain.process_gossip_block(block, verdict, verdict),
        None => outcomes
            .pop()
            .ok_or(ChainError::NoColumnsGiven { block_root }),
    }
}

/// The shape rules of a block's blob data: blobs when it commits to any, one per commitment,
/// `CELLS_PER_EXT_BLOB` proofs per blob. `None` when there is nothing to build columns from.
fn check_blobs<E: EthSpec>(
    commitments: usize,
    blobs: Option<BlobData<E>>,
) -> Result<Option<BlobData<E>>, PublishError> {
    let (proofs, blobs) = match blobs {
        None if commitments == 0 => return Ok(None),
        None => return Err(PublishError::MissingBlobs { commitments }),
        Some(b) => b,
    };
    if blobs.len() != commitments {
        return Err(PublishError::BlobCountMismatch {
            commitments,
            blobs: blobs.len(),
        });
    }
    let expected = blobs.len() * E::CellsPerExtBlob::to_usize();
    if proofs.len() != expected {
        return Err(PublishError::ProofCountMismatch {
            blobs: blobs.len(),
            proofs: proofs.len(),
            expected,
        });
    }
    Ok((commitments > 0).then_some((proofs, blobs)))
}

/// The block, then its columns (the block first, so peers that get a column know its header).
fn broadcast<E: EthSpec>(
    broadcaster: &dyn BlockBroadcaster<E>,
    block: &Arc<SignedBeaconBlock<E>>,
    columns: &[Arc<DataColumnSidecar<E>>],
) {
    broadcaster.broadcast_block(block.clone());
    if !columns.is_empty() {
        broadcaster.broadcast_data_columns(columns.to_vec());
    }
}
