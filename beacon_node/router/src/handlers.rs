//! The chain's batch handlers for the processor's batchable kinds: gossip attestations and
//! aggregates (one BLS batch per call) and data columns (one KZG batch per call, across
//! blocks). Every message gets its own verdict; accepted attestations go to the chain
//! (`accept_single_attestations`, `accept_aggregates`: fork choice and the operation pool);
//! columns go to the availability checker and may schedule reconstruction.

use std::collections::BTreeMap;
use std::sync::Arc;

use beacon_chain::gossip::{
    AttestationGossipError, GossipAggregate, GossipVerifiedDataColumn,
    PayloadAttestationGossipError, VerifiedAggregate,
};
use beacon_chain::{ColumnsProcessed, PayloadProcessed};
use beacon_processor::{BatchHandlers, BatchItem, DropReason, WorkerContext};
use libp2p::gossipsub::MessageId;
use networking::PeerId;
use types::{
    DataColumnSidecar, EthSpec, Root,
    electra::{SignedAggregateAndProof, SingleAttestation},
    gloas::PayloadAttestationMessage,
};

use crate::gossip::{dropped, report};
use crate::{AcceptedGossip, Internal, Router};

/// A gossip message handed to a batch handler: what it is, and whom its verdict is for.
#[derive(Debug, Clone)]
pub struct GossipItem<T> {
    /// The gossipsub message id the verdict is reported under.
    pub message_id: MessageId,
    /// The peer that forwarded it.
    pub source: PeerId,
    /// The subnet it arrived on (0 for global topics).
    pub subnet: u64,
    /// The message.
    pub message: T,
}

/// The batch handlers: the chain's batch gossip validation, the verdicts back to gossipsub.
pub struct ChainHandlers<E: EthSpec> {
    router: Arc<Router<E>>,
}

/// A gossip aggregate in the container of its topic's fork.
#[derive(Debug, Clone)]
pub enum GossipAggregateMessage<E: EthSpec> {
    /// Electra's container (Electra and Fulu digests).
    Electra(SignedAggregateAndProof<E>),
    /// Gloas's container (its attestation's progressive bits).
    Gloas(types::gloas::SignedAggregateAndProof<E>),
}

/// The verdict of each message of a batch the chain verified, in order: ACCEPT for the
/// verified ones (`on_accept` for each), the error's verdict for the others, and a lookup for
/// the block a refused message names when the chain has not seen it (`unknown_block`). The
/// verified ones are returned.
fn report_batch<E: EthSpec, V, X: std::fmt::Display>(
    router: &Arc<Router<E>>,
    topic: &'static str,
    ids: Vec<(MessageId, PeerId)>,
    results: Vec<Result<V, X>>,
    verdict: impl Fn(&X) -> beacon_chain::Verdict,
    unknown_block: impl Fn(&X) -> Option<Root>,
    mut on_accept: impl FnMut(&V),
) -> Vec<V> {
    let mut accepted = Vec::new();
    for ((message_id, source), result) in ids.into_iter().zip(results) {
        match result {
            Ok(verified) => {
                report(
                    router,
                    topic,
                    message_id,
                    source,
                    beacon_chain::Verdict::Accept,
                );
                on_accept(&verified);
                accepted.push(verified);
            }
            Err(e) => {
                tracing::trace!(topic, error = %e, "gossip message refused");
                if let Some(root) = unknown_block(&e) {
                    router.send_internal(Internal::UnknownBlock {
                        peer_id: source,
                        root,
                    });
                }
                report(router, topic, message_id, source, verdict(&e));
            }
        }
    }
    accepted
}

/// The block an attestation or aggregate names that the chain has not seen.
fn unseen_head_block(e: &AttestationGossipError) -> Option<Root> {
    match e {
        AttestationGossipError::UnknownHeadBlock(root) => Some(*root),
        _ => None,
    }
}

/// One container's aggregates through the chain's batch verification ([`report_batch`]).
fn verify_aggregates<E: EthSpec, A: GossipAggregate<E>>(
    router: &Arc<Router<E>>,
    items: Vec<(MessageId, PeerId, A)>,
    on_accept: impl FnMut(&VerifiedAggregate<E, A>),
) -> Vec<VerifiedAggregate<E, A>> {
    let chain = &router.chain;
    let (ids, inputs): (Vec<_>, Vec<_>) = items
        .into_iter()
        .map(|(message_id, source, aggregate)| ((message_id, source), aggregate))
        .unzip();
    let results = chain.verify_aggregates_for_gossip(inputs, chain.now_ms());
    report_batch(
        router,
        "beacon_aggregate_and_proof",
        ids,
        results,
        AttestationGossipError::verdict,
        unseen_head_block,
        on_accept,
    )
}

impl<E: EthSpec> std::fmt::Debug for ChainHandlers<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainHandlers").finish_non_exhaustive()
    }
}

impl<E: EthSpec> ChainHandlers<E> {
    pub(crate) fn new(router: Arc<Router<E>>) -> Self {
        Self { router }
    }
}

impl<E: EthSpec> BatchHandlers for ChainHandlers<E> {
    type Attestation = GossipItem<SingleAttestation>;
    type Aggregate = GossipItem<GossipAggregateMessage<E>>;
    type DataColumn = GossipItem<Arc<DataColumnSidecar<E>>>;
    type PayloadAttestation = GossipItem<PayloadAttestationMessage>;

    fn process_gossip_attestations(&self, batch: Vec<Self::Attestation>, _: &WorkerContext<'_>) {
        let router = &self.router;
        let chain = &router.chain;
        let (ids, inputs): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .map(|item| ((item.message_id, item.source), (item.message, item.subnet)))
            .unzip();
        let results = chain.verify_single_attestations_for_gossip(inputs, chain.now_ms());
        let accepted = report_batch(
            router,
            "beacon_attestation",
            ids,
            results,
            AttestationGossipError::verdict,
            unseen_head_block,
            |verified| router.notify(AcceptedGossip::SingleAttestation(&verified.attestation)),
        );
        if !accepted.is_empty() {
            let accepted = chain.accept_single_attestations(&router.pool, &accepted);
            tracing::trace!(?accepted, "gossip attestations accepted");
        }
    }

    /// Aggregates of both containers (Electra's before Gloas, Gloas's from its digest on; two
    /// only around the fork): each container's batch verified apart, then its accepted ones
    /// into fork choice (and, for Electra's, into the pool).
    fn process_gossip_aggregates(&self, batch: Vec<Self::Aggregate>, _: &WorkerContext<'_>) {
        let router = &self.router;
        let chain = &router.chain;
        let mut electra = Vec::new();
        let mut gloas = Vec::new();
        for item in batch {
            match item.message {
                GossipAggregateMessage::Electra(a) => {
                    electra.push((item.message_id, item.source, a))
                }
                GossipAggregateMessage::Gloas(a) => gloas.push((item.message_id, item.source, a)),
            }
        }
        if !electra.is_empty() {
            let accepted = verify_aggregates(router, electra, |verified| {
                router.notify(AcceptedGossip::Aggregate(&verified.signed_aggregate));
            });
            if !accepted.is_empty() {
                let accepted = chain.accept_aggregates(&router.pool, &accepted);
                tracing::trace!(?accepted, "gossip aggregates accepted");
            }
        }
        if !gloas.is_empty() {
            // Their votes count and the pool takes them (the chain published their events).
            let accepted = verify_aggregates(router, gloas, |_| {});
            if !accepted.is_empty() {
                let accepted = chain.accept_gloas_aggregates(&router.pool, &accepted);
                tracing::trace!(?accepted, "gossip Gloas aggregates accepted");
            }
        }
    }

    fn process_gossip_data_columns(&self, batch: Vec<Self::DataColumn>, _: &WorkerContext<'_>) {
        let router = &self.router;
        let chain = &router.chain;
        let (ids, inputs): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .map(|item| ((item.message_id, item.source), (item.message, item.subnet)))
            .unzip();
        let results = chain.verify_data_columns_for_gossip(inputs, chain.now_ms());
        let verified = report_batch(
            router,
            "data_column_sidecar",
            ids,
            results,
            |e| e.verdict(),
            |_| None,
            |_| {},
        );
        let mut by_block: BTreeMap<Root, Vec<GossipVerifiedDataColumn<E>>> = BTreeMap::new();
        for column in verified {
            by_block.entry(column.block_root).or_default().push(column);
        }
        for (root, columns) in by_block {
            match chain.import_gossip_data_columns(&root, columns) {
                Ok(ColumnsProcessed::Blocks(outcomes)) => {
                    for outcome in outcomes {
                        if let beacon_chain::BlockProcessed::Imported(imported) = outcome {
                            tracing::debug!(block_root = %imported, "columns processed: the block is imported");
                        }
                    }
                }
                Ok(ColumnsProcessed::Payload(PayloadProcessed::Imported(imported))) => {
                    tracing::debug!(block_root = %imported.block_root, "columns processed: the payload is imported");
                }
                Ok(ColumnsProcessed::Payload(_)) => {}
                Err(e) => tracing::warn!(block_root = %root, error = %e, "columns not processed"),
            }
            if chain.take_reconstruction_request(&root) {
                router.send_internal(Internal::Reconstruct(root));
            }
        }
    }

    /// Gloas PTC votes: one BLS batch (`verify_payload_attestation_messages_for_gossip`),
    /// each message its verdict, the accepted ones into fork choice together (the head
    /// recomputed once) and into the operation pool. A vote for a block not seen yet asks for
    /// that block.
    fn process_gossip_payload_attestations(
        &self,
        batch: Vec<Self::PayloadAttestation>,
        _: &WorkerContext<'_>,
    ) {
        let router = &self.router;
        let chain = &router.chain;
        let (ids, inputs): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .map(|item| ((item.message_id, item.source), item.message))
            .unzip();
        let results = chain.verify_payload_attestation_messages_for_gossip(inputs, chain.now_ms());
        let accepted = report_batch(
            router,
            "payload_attestation_message",
            ids,
            results,
            PayloadAttestationGossipError::verdict,
            |e| match e {
                PayloadAttestationGossipError::UnknownBlock(root) => Some(*root),
                _ => None,
            },
            |_| {},
        );
        if !accepted.is_empty() {
            match chain.accept_payload_attestation_messages(&router.pool, &accepted) {
                Ok(accepted) => tracing::trace!(?accepted, "gossip payload attestations accepted"),
                Err(e) => tracing::warn!(error = %e, "payload attestations not applied"),
            }
        }
    }

    fn dropped(&self, item: BatchItem<Self>, reason: DropReason) {
        let (topic, message_id, source) = match item {
            BatchItem::GossipAttestation(i) => ("beacon_attestation", i.message_id, i.source),
            BatchItem::GossipAggregate(i) => ("beacon_aggregate_and_proof", i.message_id, i.source),
            BatchItem::GossipDataColumn(i) => ("data_column_sidecar", i.message_id, i.source),
            BatchItem::GossipPayloadAttestation(i) => {
                ("payload_attestation_message", i.message_id, i.source)
            }
        };
        dropped(&self.router, topic, message_id, source, reason);
    }
}
