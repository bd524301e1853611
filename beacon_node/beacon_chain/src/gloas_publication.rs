//! Publication at Gloas: the block first (no payload, no columns inside), then, once the
//! validator client has signed it, the payload's envelope and the 128 column sidecars made from
//! the blobs the execution client built with the payload.
//!
//! A block goes through gossip validation, is broadcast (before its import at the `gossip`
//! level, after it at the consensus levels) and imported at once: there is no data to wait for
//! and no payload to execute. An envelope goes through gossip validation; its columns are made
//! from the blobs kept when the block was produced here (their proofs are the execution
//! client's: not checked again); the envelope and then the columns are handed to the network
//! before the import (the other nodes' PTC members judge the payload's timeliness on their
//! arrival), and the envelope is imported with the node's custody columns.
//!
//! [spec]: gloas/validator.md#block-and-sidecar-proposal, gloas/builder.md#constructing-the-signedexecutionpayloadenvelope

use std::sync::Arc;

use types::{DataColumnSidecar, EthSpec, SignedBeaconBlock, gloas::SignedExecutionPayloadEnvelope};

use crate::block_import::BlockProcessed;
use crate::data_column_sidecars::get_gloas_data_column_sidecars;
use crate::gloas_import::{EnvelopeError, PayloadProcessed};
use crate::gossip::{BlockGossipError, EnvelopeGossipError, GossipVerifiedBlock};
use crate::internal_error::InternalError;
use crate::production::BlockProducer;
use crate::publication::{
    BlockBroadcaster, BroadcastValidation, PublishError, PublishOutcome, PublishedBlock,
};
use crate::timeline::SeenVia;
use crate::workers::{WorkPriority, run_on_workers};

/// A published envelope.
#[derive(Debug, Clone)]
pub struct PublishedEnvelope<E: EthSpec> {
    /// The envelope's block.
    pub block_root: types::Root,
    /// The column sidecars handed to the network (all 128; none for a bid without blobs).
    pub data_columns: Vec<Arc<DataColumnSidecar<E>>>,
    /// What became of the payload: imported (the block FULL), or waiting.
    pub outcome: PayloadProcessed<E>,
}

/// Why an envelope was not published (400 of the API, except `Workers`: 503).
#[derive(Debug, thiserror::Error)]
pub enum EnvelopePublishError {
    /// The envelope failed gossip validation.
    #[error("gossip validation: {0}")]
    Gossip(#[source] Box<EnvelopeGossipError>),
    /// The bid commits to blobs and this node did not build them (it publishes envelopes of
    /// the blocks it produced).
    #[error("no blobs were built here for block {0}: its columns cannot be made")]
    NoBuiltBlobs(types::Root),
    /// The columns could not be made from the built blobs.
    #[error("data columns: {0}")]
    Columns(#[source] Box<PublishError>),
    /// Broadcast, then the import failed (the block stays EMPTY).
    #[error("import: {0}")]
    Import(#[source] Box<EnvelopeError>),
    /// The node's workers did not run the work (overloaded or stopping).
    #[error("workers: {0}")]
    Workers(#[source] crate::workers::WorkersUnavailable),
}

impl<E: EthSpec> BlockProducer<E> {
    /// `publishBlockV2` of a Gloas block: gossip validation, then the broadcast and the import
    /// (in the order `validation` asks).
    pub(crate) async fn publish_gloas_block(
        &self,
        block: Arc<SignedBeaconBlock<E>>,
        validation: BroadcastValidation,
        broadcaster: &dyn BlockBroadcaster<E>,
    ) -> Result<PublishedBlock<E>, PublishError> {
        let chain = self.chain().clone();
        let block_root = block.canonical_root();
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
        chain.record_block_seen(block_root, block.slot(), SeenVia::Api);
        let verified = match chain.verify_block_for_gossip(block.clone(), chain.now_ms()) {
            Ok(verified) => verified,
            Err(BlockGossipError::RepeatProposal { slot, proposer })
                if validation == BroadcastValidation::ConsensusAndEquivocation =>
            {
                return Err(PublishError::Equivocation { slot, proposer });
            }
            // A repeat of the proposer's slot at a weaker level goes to the import, which
            // checks everything (signature included) through the state transition.
            Err(BlockGossipError::RepeatProposal { .. }) => GossipVerifiedBlock {
                block: block.clone(),
                block_root,
            },
            Err(e) => return Err(PublishError::Gossip(e)),
        };
        if validation == BroadcastValidation::Gossip {
            broadcaster.broadcast_block(block.clone());
        }
        let imported = {
            let chain = chain.clone();
            run_on_workers(self.workers(), WorkPriority::P0, move || {
                chain.import_gossip_block(verified)
            })
            .await
            .map_err(PublishError::Workers)?
        };
        match imported {
            Ok(BlockProcessed::Imported(_)) => {
                if validation != BroadcastValidation::Gossip {
                    broadcaster.broadcast_block(block);
                }
                published.outcome = PublishOutcome::Imported;
                Ok(published)
            }
            Ok(pending @ BlockProcessed::Pending(_)) => {
                // A Gloas block waits for nothing: not reached, but said as it is.
                if validation != BroadcastValidation::Gossip {
                    broadcaster.broadcast_block(block);
                }
                published.outcome = PublishOutcome::Pending(pending);
                Ok(published)
            }
            Err(e) if validation == BroadcastValidation::Gossip => {
                published.outcome = PublishOutcome::BroadcastNotImported(InternalError::new(e));
                Ok(published)
            }
            Err(e) => Err(PublishError::Import(e)),
        }
    }

    /// Publishes the signed envelope of a block produced here: gossip validation, its 128
    /// columns made from the blobs kept at production, the envelope and then the columns
    /// handed to `broadcaster`, then the import (the node's custody columns with it).
    pub async fn publish_execution_payload_envelope(
        self: &Arc<Self>,
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        broadcaster: &dyn BlockBroadcaster<E>,
    ) -> Result<PublishedEnvelope<E>, EnvelopePublishError> {
        let block_root = envelope.message.beacon_block_root;
        self.chain().record_envelope_seen(block_root, SeenVia::Api);
        let verified = {
            let chain = self.chain().clone();
            run_on_workers(self.workers(), WorkPriority::P0, move || {
                chain.verify_execution_payload_envelope_for_gossip(envelope, chain.now_ms())
            })
            .await
            .map_err(EnvelopePublishError::Workers)?
            .map_err(|e| EnvelopePublishError::Gossip(Box::new(e)))?
        };
        // Usually computed already: production starts the cells while the block is signed.
        let columns = self.envelope_columns(&verified)?;
        broadcaster.broadcast_execution_payload_envelope(verified.envelope.clone());
        if !columns.is_empty() {
            broadcaster.broadcast_data_columns(columns.clone());
        }
        let outcome = {
            let chain = self.chain().clone();
            let columns = columns.clone();
            run_on_workers(self.workers(), WorkPriority::P0, move || {
                let slot = verified.slot;
                let first = chain.process_gossip_execution_payload_envelope(verified)?;
                if columns.is_empty() || !matches!(first, PayloadProcessed::Pending(_)) {
                    return Ok(first);
                }
                chain.process_gossip_gloas_columns(block_root, slot, columns)
            })
            .await
            .map_err(EnvelopePublishError::Workers)?
            .map_err(|e| EnvelopePublishError::Import(Box::new(e)))?
        };
        Ok(PublishedEnvelope {
            block_root,
            data_columns: columns,
            outcome,
        })
    }

    /// The 128 columns of a verified envelope's payload from the blobs built here, each
    /// recorded as seen (a copy from a peer is IGNOREd); none for a bid without blobs.
    fn envelope_columns(
        &self,
        verified: &crate::gossip::GossipVerifiedEnvelope<E>,
    ) -> Result<Vec<Arc<DataColumnSidecar<E>>>, EnvelopePublishError> {
        if verified.blobs == 0 {
            return Ok(Vec::new());
        }
        let chain = self.chain();
        let built = self
            .built_blobs(&verified.block_root)
            .ok_or(EnvelopePublishError::NoBuiltBlobs(verified.block_root))?;
        let cells = built.cells_and_proofs(chain.pool()).map_err(|e| {
            EnvelopePublishError::Columns(Box::new(PublishError::InvalidBlob {
                index: e.index,
                source: e.source,
            }))
        })?;
        let columns: Vec<Arc<DataColumnSidecar<E>>> =
            get_gloas_data_column_sidecars::<E>(verified.block_root, verified.slot, &cells)
                .map_err(|e| EnvelopePublishError::Columns(Box::new(PublishError::Columns(e))))?
                .into_iter()
                .map(Arc::new)
                .collect();
        let mut observed = chain.observed.lock();
        for column in &columns {
            let _ = observed
                .gloas_data_columns
                .observe(verified.slot, (verified.block_root, column.index()));
        }
        Ok(columns)
    }
}
