//! Gossip messages to processor work: every topic's message to the chain's validation, its
//! verdict back to gossipsub (networking penalises the forwarder of a REJECTed message), the
//! accepted ones onward: blocks to `engine_newPayload` and then import, operations to the pool,
//! columns to availability (and reconstruction on a supernode). With the light-client server
//! on, the node's own new finality and optimistic updates are published once they are due
//! ([`publish_light_client_updates`]).
//!
//! [spec]: phase0/p2p-interface.md#the-gossip-domain-gossipsub,
//! altair/light-client/p2p-interface.md#the-gossip-domain-gossipsub

use std::sync::Arc;

use beacon_chain::gossip::BlockGossipError;
use beacon_chain::gossip::EnvelopeGossipError;
use beacon_chain::gossip::GossipVerifiedBlock;
use beacon_chain::timeline::SeenVia;
use beacon_chain::{BlockProcessed, PayloadProcessed, Verdict};
use beacon_processor::{BatchItem, DropReason, SubmitError, Task, WorkKind};
use libp2p::gossipsub::MessageId;
use networking::{GossipKind, GossipTopic, PeerId, PubsubMessage, Validation};
use types::{EthSpec, Root, SignedBeaconBlock, gloas::SignedExecutionPayloadEnvelope};

use crate::handlers::{GossipAggregateMessage, GossipItem};
use crate::{AcceptedGossip, Internal, Processor, Router};

/// The metric label of a topic: its name without the subnet.
pub fn topic_label(kind: GossipKind) -> &'static str {
    match kind {
        GossipKind::BeaconBlock => "beacon_block",
        GossipKind::BeaconAggregateAndProof => "beacon_aggregate_and_proof",
        GossipKind::Attestation(_) => "beacon_attestation",
        GossipKind::VoluntaryExit => "voluntary_exit",
        GossipKind::ProposerSlashing => "proposer_slashing",
        GossipKind::AttesterSlashing => "attester_slashing",
        GossipKind::SyncCommitteeContributionAndProof => "sync_committee_contribution_and_proof",
        GossipKind::SyncCommitteeMessage(_) => "sync_committee",
        GossipKind::BlsToExecutionChange => "bls_to_execution_change",
        GossipKind::BlobSidecar(_) => "blob_sidecar",
        GossipKind::DataColumnSidecar(_) => "data_column_sidecar",
        GossipKind::LightClientFinalityUpdate => "light_client_finality_update",
        GossipKind::LightClientOptimisticUpdate => "light_client_optimistic_update",
        GossipKind::ExecutionPayloadBid => "execution_payload_bid",
        GossipKind::ExecutionPayload => "execution_payload",
        GossipKind::PayloadAttestationMessage => "payload_attestation_message",
        GossipKind::ProposerPreferences => "proposer_preferences",
    }
}

fn verdict_label(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Accept => "accept",
        Verdict::Ignore => "ignore",
        Verdict::Reject => "reject",
    }
}

/// Reports `verdict` for a message to gossipsub and counts it.
pub(crate) fn report<E: EthSpec>(
    router: &Router<E>,
    topic: &'static str,
    message_id: MessageId,
    source: PeerId,
    verdict: Verdict,
) {
    router
        .metrics
        .gossip
        .with_label_values(&[topic, verdict_label(verdict)])
        .inc();
    let validation = match verdict {
        Verdict::Accept => Validation::Accept,
        Verdict::Ignore => Validation::Ignore,
        Verdict::Reject => Validation::Reject,
    };
    router
        .network
        .report_validation(message_id, source, validation);
}

/// Reports the verdict on a message validated against the head state (sync committee
/// messages and contributions, exits, slashings, BLS changes). While the head is more than an
/// epoch behind the clock ([`beacon_chain::BeaconChain::head_is_behind`]: syncing), that state
/// cannot tell a message it refuses from one that is only newer than it (a validator it does
/// not have yet, a committee of a later period): a REJECT becomes an IGNORE, so that honest
/// peers are not penalised, and a syncing node does not ban the peers it syncs from.
pub(crate) fn report_head_state_refusal<E: EthSpec>(
    router: &Router<E>,
    topic: &'static str,
    message_id: MessageId,
    source: PeerId,
    verdict: Verdict,
    error: &dyn std::fmt::Display,
) {
    let verdict = if verdict == Verdict::Reject
        && router.chain.head_is_behind(router.chain.now_ms())
    {
        tracing::debug!(topic, peer_id = %source, %error, "head behind the clock: ignored, not rejected");
        Verdict::Ignore
    } else {
        verdict
    };
    report(router, topic, message_id, source, verdict);
}

/// A message the processor dropped (queue full, shutting down): IGNORE, counted.
pub(crate) fn dropped<E: EthSpec>(
    router: &Router<E>,
    topic: &'static str,
    message_id: MessageId,
    source: PeerId,
    reason: DropReason,
) {
    tracing::debug!(topic, ?reason, "gossip work dropped");
    router
        .metrics
        .gossip_dropped
        .with_label_values(&[topic])
        .inc();
    report(router, topic, message_id, source, Verdict::Ignore);
}

/// Submits work, logging the one refusal that has no drop handler (a batchable kind as a task:
/// a bug here, not a peer's doing).
pub(crate) fn submit<E: EthSpec>(
    processor: &Processor<E>,
    work: impl Into<beacon_processor::Work<ChainHandlersOf<E>>>,
) {
    match processor.submit(work) {
        Ok(()) | Err(SubmitError::ShuttingDown(_)) => {}
        Err(SubmitError::BatchableKindAsTask(task)) => {
            tracing::error!(kind = %task.kind().as_str(), "a batchable kind submitted as a task");
        }
    }
}

type ChainHandlersOf<E> = crate::ChainHandlers<E>;

/// A gossip task of `kind` running `run` on the message; dropped, it gives IGNORE.
fn gossip_task<E: EthSpec>(
    router: &Arc<Router<E>>,
    kind: WorkKind,
    topic: &'static str,
    message_id: MessageId,
    source: PeerId,
    run: impl FnOnce(&Arc<Router<E>>, MessageId, PeerId) + Send + 'static,
) -> Task {
    let on_run = router.clone();
    let on_drop = router.clone();
    let drop_id = message_id.clone();
    Task::new(kind, move |_| run(&on_run, message_id, source))
        .on_drop(move |reason| dropped(&on_drop, topic, drop_id, source, reason))
}

/// Hands a gossip message to the processor as the work of its topic.
pub(crate) fn route_gossip<E: EthSpec>(
    router: &Arc<Router<E>>,
    processor: &Processor<E>,
    source: PeerId,
    message_id: MessageId,
    topic: GossipTopic,
    message: PubsubMessage<E>,
) {
    let label = topic_label(topic.kind);
    match message {
        PubsubMessage::BeaconBlock(block) => {
            let processor_for_import = processor.clone();
            submit(
                processor,
                gossip_task(
                    router,
                    WorkKind::GossipBlock,
                    label,
                    message_id,
                    source,
                    move |r, id, src| {
                        process_gossip_block(r, &processor_for_import, id, src, block)
                    },
                ),
            );
        }
        PubsubMessage::Attestation(subnet, attestation) => submit(
            processor,
            BatchItem::GossipAttestation(GossipItem {
                message_id,
                source,
                subnet,
                message: *attestation,
            }),
        ),
        PubsubMessage::AggregateAndProof(aggregate) => submit(
            processor,
            BatchItem::GossipAggregate(GossipItem {
                message_id,
                source,
                subnet: 0,
                message: GossipAggregateMessage::Electra(*aggregate),
            }),
        ),
        PubsubMessage::DataColumnSidecar(subnet, sidecar) => submit(
            processor,
            BatchItem::GossipDataColumn(GossipItem {
                message_id,
                source,
                subnet,
                message: sidecar,
            }),
        ),
        PubsubMessage::SyncCommitteeMessage(subnet, message) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipSyncCommitteeMessage,
                label,
                message_id,
                source,
                move |r, id, src| match r.chain.verify_sync_committee_message_for_gossip(
                    *message,
                    subnet,
                    r.chain.now_ms(),
                ) {
                    Ok(verified) => {
                        report(r, label, id, src, Verdict::Accept);
                        r.notify(AcceptedGossip::SyncCommitteeMessage {
                            message: &verified.message,
                            subnet: verified.subnet_id,
                        });
                    }
                    Err(e) => report_head_state_refusal(r, label, id, src, e.verdict(), &e),
                },
            ),
        ),
        PubsubMessage::SyncCommitteeContribution(contribution) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipSyncContribution,
                label,
                message_id,
                source,
                move |r, id, src| match r
                    .chain
                    .verify_sync_contribution_for_gossip(*contribution, r.chain.now_ms())
                {
                    Ok(verified) => {
                        report(r, label, id, src, Verdict::Accept);
                        r.notify(AcceptedGossip::SyncContribution(&verified.contribution));
                        if let Err(e) = r
                            .pool
                            .insert_sync_contribution(&verified.contribution.message.contribution)
                        {
                            tracing::debug!(error = %e, "sync contribution not pooled");
                        }
                    }
                    Err(e) => report_head_state_refusal(r, label, id, src, e.verdict(), &e),
                },
            ),
        ),
        PubsubMessage::VoluntaryExit(exit) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipVoluntaryExit,
                label,
                message_id,
                source,
                move |r, id, src| match r
                    .chain
                    .verify_voluntary_exit_for_gossip(*exit, r.chain.now_ms())
                {
                    Ok(verified) => {
                        report(r, label, id, src, Verdict::Accept);
                        r.notify(AcceptedGossip::VoluntaryExit(&verified.0));
                        r.pool.insert_voluntary_exit(verified.0);
                    }
                    Err(e) => report_head_state_refusal(r, label, id, src, e.verdict(), &e),
                },
            ),
        ),
        PubsubMessage::ProposerSlashing(slashing) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipProposerSlashing,
                label,
                message_id,
                source,
                move |r, id, src| match r.chain.verify_proposer_slashing_for_gossip(*slashing) {
                    Ok(verified) => {
                        report(r, label, id, src, Verdict::Accept);
                        r.notify(AcceptedGossip::ProposerSlashing(&verified.0));
                        if let Err(e) = r.pool.insert_proposer_slashing(verified.0) {
                            tracing::debug!(error = %e, "proposer slashing not pooled");
                        }
                    }
                    Err(e) => report_head_state_refusal(r, label, id, src, e.verdict(), &e),
                },
            ),
        ),
        PubsubMessage::AttesterSlashing(slashing) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipAttesterSlashing,
                label,
                message_id,
                source,
                move |r, id, src| match r.chain.verify_attester_slashing_for_gossip(*slashing) {
                    Ok(verified) => {
                        report(r, label, id, src, Verdict::Accept);
                        r.notify(AcceptedGossip::AttesterSlashing(&verified.slashing));
                        if let Err(e) = r.chain.on_attester_slashing(&verified) {
                            tracing::warn!(error = %e, "attester slashing not applied to fork choice");
                        }
                        if let Err(e) = r.pool.insert_attester_slashing(verified.slashing) {
                            tracing::debug!(error = %e, "attester slashing not pooled");
                        }
                    }
                    Err(e) => report_head_state_refusal(r, label, id, src, e.verdict(), &e),
                },
            ),
        ),
        PubsubMessage::BlsToExecutionChange(change) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipBlsToExecutionChange,
                label,
                message_id,
                source,
                move |r, id, src| match r
                    .chain
                    .verify_bls_to_execution_change_for_gossip(*change, r.chain.now_ms())
                {
                    Ok(verified) => {
                        report(r, label, id, src, Verdict::Accept);
                        r.notify(AcceptedGossip::BlsToExecutionChange(&verified.0));
                        r.pool.insert_bls_to_execution_change(verified.0);
                    }
                    Err(e) => report_head_state_refusal(r, label, id, src, e.verdict(), &e),
                },
            ),
        ),
        PubsubMessage::LightClientFinalityUpdate(update) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipLightClientFinalityUpdate,
                label,
                message_id,
                source,
                move |r, id, src| match r
                    .chain
                    .validate_light_client_finality_update(update, r.chain.now_ms())
                {
                    Ok(_) => report(r, label, id, src, Verdict::Accept),
                    Err(e) => {
                        tracing::debug!(peer_id = %src, error = %e, "light-client finality update not forwarded");
                        report(r, label, id, src, e.verdict());
                    }
                },
            ),
        ),
        PubsubMessage::LightClientOptimisticUpdate(update) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipLightClientOptimisticUpdate,
                label,
                message_id,
                source,
                move |r, id, src| match r
                    .chain
                    .validate_light_client_optimistic_update(update, r.chain.now_ms())
                {
                    Ok(_) => report(r, label, id, src, Verdict::Accept),
                    Err(e) => {
                        tracing::debug!(peer_id = %src, error = %e, "light-client optimistic update not forwarded");
                        report(r, label, id, src, e.verdict());
                    }
                },
            ),
        ),
        // Blob sidecars exist only at pre-Fulu digests, whose blocks this node does not import:
        // not forwarded, IGNORE, counted.
        PubsubMessage::BlobSidecar(..) => {
            report(router, label, message_id, source, Verdict::Ignore);
        }
        PubsubMessage::PayloadAttestationMessage(message) => submit(
            processor,
            BatchItem::GossipPayloadAttestation(GossipItem {
                message_id,
                source,
                subnet: 0,
                message: *message,
            }),
        ),
        PubsubMessage::GloasAggregateAndProof(aggregate) => submit(
            processor,
            BatchItem::GossipAggregate(GossipItem {
                message_id,
                source,
                subnet: 0,
                message: GossipAggregateMessage::Gloas(*aggregate),
            }),
        ),
        PubsubMessage::ExecutionPayload(envelope) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipExecutionPayload,
                label,
                message_id,
                source,
                move |r, id, src| process_gossip_envelope(r, id, src, envelope),
            ),
        ),
        PubsubMessage::GloasAttesterSlashing(slashing) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipAttesterSlashing,
                label,
                message_id,
                source,
                move |r, id, src| match r.chain.verify_attester_slashing_for_gossip(*slashing) {
                    Ok(verified) => {
                        report(r, label, id, src, Verdict::Accept);
                        // Its validators' weight leaves fork choice; the pool keeps it for a
                        // block (the chain published its event).
                        if let Err(e) = r.chain.on_attester_slashing(&verified) {
                            tracing::warn!(error = %e, "attester slashing not applied to fork choice");
                        }
                        if let Err(e) = r.pool.insert_gloas_attester_slashing(&verified.slashing) {
                            tracing::debug!(error = %e, "attester slashing not pooled");
                        }
                    }
                    Err(e) => report_head_state_refusal(r, label, id, src, e.verdict(), &e),
                },
            ),
        ),
        PubsubMessage::ExecutionPayloadBid(bid) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipExecutionPayloadBid,
                label,
                message_id,
                source,
                move |r, id, src| match r
                    .chain
                    .verify_execution_payload_bid_for_gossip((*bid).clone(), r.chain.now_ms())
                {
                    // Kept by the chain's bid caches (the best bid per parent).
                    Ok(_) => report(r, label, id, src, Verdict::Accept),
                    Err(e) => {
                        tracing::debug!(peer_id = %src, error = %e, "gossip bid refused");
                        report(r, label, id, src, e.verdict());
                    }
                },
            ),
        ),
        PubsubMessage::ProposerPreferences(preferences) => submit(
            processor,
            gossip_task(
                router,
                WorkKind::GossipProposerPreferences,
                label,
                message_id,
                source,
                move |r, id, src| match r.chain.verify_proposer_preferences_for_gossip(
                    (*preferences).clone(),
                    r.chain.now_ms(),
                ) {
                    // Kept by the chain's preferences store, which bids are checked against.
                    Ok(_) => report(r, label, id, src, Verdict::Accept),
                    Err(e) => {
                        tracing::debug!(peer_id = %src, error = %e, "gossip proposer preferences refused");
                        report(r, label, id, src, e.verdict());
                    }
                },
            ),
        ),
    }
}

/// An execution payload envelope (Gloas): gossip validation, its verdict, then the chain holds
/// it until its block's custody columns are here and imports it
/// ([`BeaconChain::process_gossip_execution_payload_envelope`]). One for a block not seen yet
/// asks for that block.
fn process_gossip_envelope<E: EthSpec>(
    router: &Arc<Router<E>>,
    message_id: MessageId,
    source: PeerId,
    envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
) {
    let chain = &router.chain;
    let label = "execution_payload";
    chain.record_envelope_seen(envelope.message.beacon_block_root, SeenVia::Gossip);
    let verified =
        match chain.verify_execution_payload_envelope_for_gossip(envelope, chain.now_ms()) {
            Ok(verified) => verified,
            Err(e) => {
                tracing::debug!(peer_id = %source, error = %e, "gossip envelope refused");
                if let EnvelopeGossipError::UnknownBlock(root) = e {
                    router.send_internal(Internal::UnknownBlock {
                        peer_id: source,
                        root,
                    });
                }
                report(router, label, message_id, source, e.verdict());
                return;
            }
        };
    report(router, label, message_id, source, Verdict::Accept);
    let block_root = verified.block_root;
    match chain.process_gossip_execution_payload_envelope(verified) {
        Ok(PayloadProcessed::Imported(imported)) => {
            tracing::info!(%block_root, status = ?imported.status, "gossip envelope imported: the block is FULL");
        }
        Ok(PayloadProcessed::Pending(missing)) => {
            tracing::debug!(%block_root, missing = missing.missing_columns.len(), "gossip envelope waits for its columns");
        }
        Ok(PayloadProcessed::AlreadyImported(_) | PayloadProcessed::NotHeld(_)) => {}
        Err(e) => {
            tracing::warn!(%block_root, error = %e, "gossip envelope not imported: the block stays EMPTY");
        }
    }
}

/// Gossip validation of a block; an accepted one goes to the processor for its import by the
/// chain ([`BeaconChain::import_gossip_block`], which sends `engine_newPayload` beside the
/// state transition).
fn process_gossip_block<E: EthSpec>(
    router: &Arc<Router<E>>,
    processor: &Processor<E>,
    message_id: MessageId,
    source: PeerId,
    block: Arc<SignedBeaconBlock<E>>,
) {
    let chain = &router.chain;
    let now = chain.now_ms();
    chain.record_block_seen(block.canonical_root(), block.slot(), SeenVia::Gossip);
    match chain.verify_block_for_gossip(block.clone(), now) {
        Ok(verified) => {
            report(router, "beacon_block", message_id, source, Verdict::Accept);
            let root = verified.block_root;
            // The execution client checks the payload while the import waits in the queue.
            chain.verify_payload_beside_import(root, verified.block.clone());
            let on_drop = router.clone();
            let for_task = router.clone();
            let for_processor = processor.clone();
            let task = Task::new(WorkKind::GossipBlock, move |_| {
                import_gossip_block(&for_task, &for_processor, verified)
            })
            .on_drop(move |reason| {
                tracing::warn!(block_root = %root, ?reason, "gossip block import dropped");
                on_drop
                    .metrics
                    .gossip_dropped
                    .with_label_values(&["beacon_block_import"])
                    .inc();
            });
            submit(processor, task);
        }
        Err(e) => {
            let verdict = e.verdict();
            tracing::debug!(error = %e, "gossip block refused");
            match e {
                BlockGossipError::ParentUnknown { .. } => {
                    router.send_internal(Internal::UnknownParent {
                        peer_id: source,
                        block,
                    });
                }
                // The spec lets a client queue the block until the parent's payload is
                // retrieved: sync holds it and looks the parent's envelope up.
                BlockGossipError::ParentPayloadNotVerified { .. } => {
                    router.send_internal(Internal::ParentPayloadUnknown {
                        peer_id: source,
                        block,
                    });
                }
                _ => {}
            }
            report(router, "beacon_block", message_id, source, verdict);
        }
    }
}

/// Imports a gossip-verified block; one that waits for its columns may have its blobs in the
/// execution client's pool.
fn import_gossip_block<E: EthSpec>(
    router: &Arc<Router<E>>,
    processor: &Processor<E>,
    verified: GossipVerifiedBlock<E>,
) {
    let root = verified.block_root;
    let slot = verified.block.slot();
    let block = verified.block.clone();
    match router.chain.import_gossip_block(verified) {
        Ok(BlockProcessed::Imported(root)) => {
            tracing::info!(block_root = %root, slot, "gossip block imported");
        }
        Ok(BlockProcessed::Pending(missing)) => {
            tracing::debug!(block_root = %root, slot, missing = missing.missing_columns.len(), "gossip block waits for its columns");
            fetch_blobs_from_engine(router, processor, root, block);
        }
        Err(e) => tracing::warn!(block_root = %root, slot, error = %e, "gossip block not imported"),
    }
}

/// A block waiting for its columns: the execution client may hold its blobs
/// ([`BeaconChain::blobs_from_execution_layer`]). When it holds all of them, the chain computes
/// the columns from them ([`BeaconChain::import_execution_blobs`], on the `gossip_block` kind:
/// it completes a gossip block's import) and those of the subnets the node follows are
/// published.
///
/// [spec]: fulu/p2p-interface.md#distributed-blob-publishing-using-blobs-retrieved-from-local-execution-layer-client
fn fetch_blobs_from_engine<E: EthSpec>(
    router: &Arc<Router<E>>,
    processor: &Processor<E>,
    root: Root,
    block: Arc<SignedBeaconBlock<E>>,
) {
    if beacon_chain::historical_blocks::blob_count(&block) == 0 {
        return;
    }
    let router = router.clone();
    let processor = processor.clone();
    router.clone().runtime.spawn(async move {
        let blobs = match router.chain.blobs_from_execution_layer(&block).await {
            Ok(Some(blobs)) => blobs,
            Ok(None) => {
                tracing::debug!(block_root = %root, "the execution client lacks some blobs");
                return;
            }
            Err(e) => {
                tracing::debug!(block_root = %root, error = %e, "getBlobsV2 failed");
                return;
            }
        };
        let on_run = router.clone();
        let task = Task::new(WorkKind::GossipBlock, move |_| {
            match on_run.chain.import_execution_blobs(&root, &blobs) {
                Ok(made) => {
                    let custody = made
                        .published
                        .into_iter()
                        .filter(|column| on_run.custody.contains(&column_index(column)));
                    publish_columns(&on_run, custody);
                }
                // Completed meanwhile by gossip columns, or evicted.
                Err(e) => tracing::debug!(block_root = %root, error = %e, "the engine's blobs not used"),
            }
        })
        .on_drop(move |reason| tracing::debug!(block_root = %root, ?reason, "the engine's blobs dropped"));
        submit(&processor, task);
    });
}

/// A column sidecar's index.
fn column_index<E: EthSpec>(column: &types::DataColumnSidecar<E>) -> u64 {
    column.index()
}

/// Publishes `columns` on their subnets.
fn publish_columns<E: EthSpec>(
    router: &Router<E>,
    columns: impl IntoIterator<Item = Arc<types::DataColumnSidecar<E>>>,
) {
    for column in columns {
        match types::subnets::compute_subnet_for_data_column_sidecar(
            router.chain.spec(),
            column_index(&column),
        ) {
            Ok(subnet) => router
                .network
                .publish(PubsubMessage::DataColumnSidecar(subnet, column)),
            Err(e) => tracing::warn!(error = %e, "no subnet for a column"),
        }
    }
}

/// Schedules the reconstruction of `root`'s missing columns (after a sixth of a slot, in case
/// the rest arrive) and publishes what it makes.
pub(crate) fn schedule_reconstruction<E: EthSpec>(
    router: &Arc<Router<E>>,
    processor: &Processor<E>,
    root: Root,
) {
    let delay = std::time::Duration::from_millis(
        router.chain.spec().slot_duration_ms * RECONSTRUCTION_DELAY_BPS / 10_000,
    );
    let runtime = router.runtime.clone();
    let router = router.clone();
    let task = Task::new(WorkKind::ColumnReconstruction, move |_| {
        match router.chain.reconstruct_missing_columns(&root) {
            Ok(reconstructed) => publish_columns(&router, reconstructed.published),
            Err(e) => tracing::warn!(block_root = %root, error = %e, "reconstruction failed"),
        }
    })
    .on_drop(move |reason| tracing::debug!(block_root = %root, ?reason, "reconstruction dropped"));
    // Half the columns are in: the rest are usually milliseconds behind. The work (a second or
    // more of CPU) waits a sixth of a slot first and finds nothing to do when they came.
    let processor = processor.clone();
    runtime.spawn(async move {
        tokio::time::sleep(delay).await;
        submit(&processor, task);
    });
}

/// Basis points of a slot that reconstruction waits after it is asked for.
const RECONSTRUCTION_DELAY_BPS: u64 = 1_667;

/// Publishes the light-client server's new finality and optimistic updates (the chain's
/// `LightClientFinalityUpdate` / `LightClientOptimisticUpdate` events) on their topics, each
/// no earlier than `get_sync_message_due_ms()` into its signature slot (when peers start
/// forwarding it), and only if it is newer than any forwarded already (from a peer or by us).
/// Runs until `shutdown` turns true or the chain's event bus closes.
///
/// [spec]: altair/light-client/full-node.md#deriving-light-client-data,
/// altair/light-client/p2p-interface.md#light_client_finality_update
pub(crate) async fn publish_light_client_updates<E: EthSpec>(
    router: Arc<Router<E>>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    use beacon_chain::events::ChainEvent;
    use tokio::sync::broadcast::error::RecvError;
    let mut events = router.chain.events().subscribe();
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    return;
                }
                continue;
            }
        };
        let (signature_slot, finality) = match event {
            Ok(ChainEvent::LightClientFinalityUpdate { signature_slot, .. }) => {
                (signature_slot, true)
            }
            Ok(ChainEvent::LightClientOptimisticUpdate { signature_slot, .. }) => {
                (signature_slot, false)
            }
            Ok(_) => continue,
            // Missed events: the next update's event comes with its block.
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return,
        };
        let due = router.chain.light_client_update_due_ms(signature_slot);
        let wait = due.saturating_sub(router.chain.now_ms());
        if wait > 0 {
            tokio::select! {
                () = tokio::time::sleep(std::time::Duration::from_millis(wait)) => {}
                _ = shutdown.changed() => return,
            }
        }
        // The latest update now, which a later head may have replaced (then it is that one's
        // turn, if newer than what was forwarded).
        let message = if finality {
            match router.chain.light_client_finality_update() {
                Ok(Some(update)) => router
                    .chain
                    .forward_own_light_client_finality_update(&update)
                    .map(|()| PubsubMessage::LightClientFinalityUpdate(Arc::new(update))),
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "light-client finality update unreadable");
                    continue;
                }
            }
        } else {
            match router.chain.light_client_optimistic_update() {
                Ok(Some(update)) => router
                    .chain
                    .forward_own_light_client_optimistic_update(&update)
                    .map(|()| PubsubMessage::LightClientOptimisticUpdate(Arc::new(update))),
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "light-client optimistic update unreadable");
                    continue;
                }
            }
        };
        match message {
            Ok(message) => router.network.publish(message),
            Err(e) => tracing::debug!(error = %e, "own light-client update not published"),
        }
    }
}
