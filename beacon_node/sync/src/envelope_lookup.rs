//! Payload-envelope lookups (Gloas): the `SignedExecutionPayloadEnvelope` of a block the
//! chain has imported without its payload, fetched by root when a child builds on that
//! payload and so cannot be imported before it (`on_block`'s check that the parent payload is
//! verified). The envelope is asked for by `ExecutionPayloadEnvelopesByRoot` from the peers
//! that referred to the block (the sender of a held gossip child, the peer of a range-sync
//! batch), then from the other peers; a peer answering another block's envelope is
//! penalised, one with nothing is passed over. When the block's bid commits to blobs, the
//! block's custody columns (Gloas sidecars) come by `DataColumnSidecarsByRoot` from the same
//! peer. The envelope is then imported with them on the processor's `rpc_block` kind
//! (`BeaconChain::import_rpc_execution_payload_envelope`); a bad envelope or bad columns are
//! the serving peer's fault (penalised, the next peer asked), our own failures nobody's.
//!
//! What waits for the payload is told when the lookup ends ([`EnvelopeLookupDone`]): gossip
//! blocks held on the payload (the spec lets a client queue a block until the parent's
//! payload is retrieved) and range sync's batch.
//!
//! [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1, gloas/p2p-interface.md#beacon_block, gloas/fork-choice.md#new-on_execution_payload_envelope

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use beacon_processor::{Task, WorkKind};
use networking::rpc::{Request, Response, ResponseItem};
use networking::{OutboundRequestId, PeerId, RpcError};
use types::fulu::DataColumnsByRootIdentifier;
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{DataColumnSidecar, EthSpec, Root, SignedBeaconBlock, Slot};

use crate::batch::BatchDownloader;
use crate::segment::{blob_count, envelope_failure};
use crate::{Outcome, SyncContext, SyncError};

/// Envelope lookups running at once; another block's is not looked up until one ends.
pub const MAX_ENVELOPE_LOOKUPS: usize = 8;

/// Gossip blocks held on one lookup (more children of the same parent are dropped: a later
/// one comes by gossip or lookup again).
pub const MAX_HELD_BLOCKS: usize = 8;

/// A processed envelope, back to the event loop.
#[derive(Debug)]
pub(crate) struct EnvelopeOutcome {
    root: Root,
    result: Result<(), SyncError>,
}

/// An envelope lookup that ended: the blocks held on it and whether range sync waits for it.
#[derive(Debug)]
pub(crate) struct EnvelopeLookupDone<E: EthSpec> {
    /// The block whose envelope was looked up.
    pub(crate) root: Root,
    /// Whether the envelope is imported now (else no peer had a valid one, or we failed).
    pub(crate) imported: bool,
    /// Gossip blocks that waited for the payload, with their senders.
    pub(crate) held: Vec<(PeerId, Arc<SignedBeaconBlock<E>>)>,
    /// Whether range sync's batch waits for it.
    pub(crate) for_range: bool,
}

/// What to do after an envelope response.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Ask this peer next.
    Ask(PeerId),
    /// The envelope of the lookup's block came: fetch its columns and import it.
    Fetched,
    /// No peer is left to ask.
    GiveUp,
}

/// One lookup: the pure state machine (which peer to ask, whether an answer is right).
pub(crate) struct EnvelopeLookup<E: EthSpec> {
    root: Root,
    /// Peers that referred to the block, in the order they did: asked first.
    referenced: Vec<PeerId>,
    /// Peers asked already (each at most once per lookup).
    asked: HashSet<PeerId>,
    /// The envelope being fetched or imported.
    envelope: Option<Arc<SignedExecutionPayloadEnvelope<E>>>,
    /// The slot of the block (for the import's errors).
    slot: Slot,
    /// The peer serving the lookup now.
    serving: Option<PeerId>,
    /// Whether that peer was asked for the block's columns (its envelope came).
    columns_asked: bool,
    /// Whether the envelope is on the processor.
    processing: bool,
    /// Gossip blocks held on the payload, with their senders.
    held: Vec<(PeerId, Arc<SignedBeaconBlock<E>>)>,
    /// Whether range sync's batch waits for it.
    for_range: bool,
}

impl<E: EthSpec> EnvelopeLookup<E> {
    pub(crate) fn new(root: Root, referenced: Vec<PeerId>) -> Self {
        Self {
            root,
            referenced,
            asked: HashSet::new(),
            envelope: None,
            slot: 0,
            serving: None,
            columns_asked: false,
            processing: false,
            held: Vec::new(),
            for_range: false,
        }
    }

    /// A peer referred to the block too: asked after the earlier ones.
    fn refer(&mut self, peer: PeerId) {
        if !self.referenced.contains(&peer) {
            self.referenced.push(peer);
        }
    }

    /// The next peer to ask: a referring peer not asked yet, else any of `others` not asked
    /// yet. `None`: every peer was asked.
    pub(crate) fn next_peer(&mut self, others: &[PeerId]) -> Option<PeerId> {
        let peer = self
            .referenced
            .iter()
            .chain(others)
            .find(|p| !self.asked.contains(*p))
            .copied()?;
        self.asked.insert(peer);
        self.serving = Some(peer);
        self.columns_asked = false;
        self.processing = false;
        self.envelope = None;
        Some(peer)
    }

    /// `peer`'s answer to the envelope request: the fault of the peer when it sent another
    /// block's envelope (or something else than envelopes), and the next step. An empty answer
    /// (the peer does not have it) is no fault: the next peer is asked.
    pub(crate) fn on_envelopes(
        &mut self,
        peer: PeerId,
        items: Vec<ResponseItem<E>>,
        others: &[PeerId],
    ) -> (Option<SyncError>, Step) {
        let mut fault = None;
        let mut found = None;
        for item in items {
            match item {
                ResponseItem::ExecutionPayloadEnvelope(envelope)
                    if envelope.message.beacon_block_root == self.root =>
                {
                    found = Some(envelope);
                }
                ResponseItem::ExecutionPayloadEnvelope(envelope) => {
                    fault = Some(SyncError::UnexpectedEnvelope {
                        block_root: envelope.message.beacon_block_root,
                    });
                }
                _ => fault = Some(SyncError::WrongItem),
            }
        }
        if fault.is_none()
            && let Some(envelope) = found
        {
            self.serving = Some(peer);
            self.envelope = Some(envelope);
            return (None, Step::Fetched);
        }
        let step = self.next_peer(others).map_or(Step::GiveUp, Step::Ask);
        (fault, step)
    }
}

/// The envelope lookups running.
pub(crate) struct EnvelopeLookups<E: EthSpec> {
    ctx: Arc<SyncContext<E>>,
    lookups: HashMap<Root, EnvelopeLookup<E>>,
    /// Our outstanding requests, by the lookup they serve.
    requests: HashMap<OutboundRequestId, Root>,
    /// Every relevant peer (asked after the referring ones).
    peers: Vec<PeerId>,
    /// Lookups that ended, for the manager.
    done: Vec<EnvelopeLookupDone<E>>,
}

impl<E: EthSpec> EnvelopeLookups<E> {
    pub(crate) fn new(ctx: Arc<SyncContext<E>>) -> Self {
        Self {
            ctx,
            lookups: HashMap::new(),
            requests: HashMap::new(),
            peers: Vec::new(),
            done: Vec::new(),
        }
    }

    fn count(&self, result: &'static str) {
        self.ctx
            .metrics
            .envelope_lookups
            .with_label_values(&[result])
            .inc();
    }

    /// A relevant peer: asked when the referring peers have nothing.
    pub(crate) fn add_peer(&mut self, peer: PeerId) {
        if !self.peers.contains(&peer) {
            self.peers.push(peer);
        }
    }

    /// A peer left: no longer asked; a lookup it was serving goes to the next peer.
    pub(crate) fn remove_peer(&mut self, peer: &PeerId) {
        self.peers.retain(|p| p != peer);
        let serving: Vec<Root> = self
            .lookups
            .iter_mut()
            .filter_map(|(root, l)| {
                l.referenced.retain(|p| p != peer);
                (l.serving == Some(*peer) && !l.processing).then_some(*root)
            })
            .collect();
        for root in serving {
            self.requests.retain(|_, r| *r != root);
            self.ask_next(root);
        }
    }

    /// Whether `request_id` is one of ours.
    pub(crate) fn owns(&self, request_id: &OutboundRequestId) -> bool {
        self.requests.contains_key(request_id)
    }

    /// The lookups that ended since the last call.
    pub(crate) fn take_done(&mut self) -> Vec<EnvelopeLookupDone<E>> {
        std::mem::take(&mut self.done)
    }

    /// A gossip block `peer` sent whose parent's payload the chain has not verified (IGNOREd
    /// by gossip): held until the parent's envelope is looked up and imported. Returns the
    /// block when the payload is verified already (to be imported now).
    pub(crate) fn hold(
        &mut self,
        peer: PeerId,
        block: Arc<SignedBeaconBlock<E>>,
    ) -> Option<(PeerId, Arc<SignedBeaconBlock<E>>)> {
        let parent = block.parent_root();
        if self.ctx.chain.is_payload_verified(&parent) {
            return Some((peer, block));
        }
        if !self.start(parent, peer) {
            return None;
        }
        let lookup = self.lookups.get_mut(&parent)?;
        let root = block.canonical_root();
        if lookup.held.len() < MAX_HELD_BLOCKS
            && !lookup.held.iter().any(|(_, b)| b.canonical_root() == root)
        {
            lookup.held.push((peer, block));
        }
        None
    }

    /// Range sync's batch failed on the parent `root`'s missing payload: its envelope is
    /// looked up from `peer` (which served the batch) first. `false` when no lookup could
    /// start (the batch is then retried as any failed one).
    pub(crate) fn look_up_for_range(&mut self, root: Root, peer: PeerId) -> bool {
        if !self.start(root, peer) {
            return false;
        }
        if let Some(lookup) = self.lookups.get_mut(&root) {
            lookup.for_range = true;
        }
        true
    }

    /// Starts a lookup of `root`'s envelope from `peer` (or has `peer` join the running one).
    /// `false`: too many lookups, or the chain does not have the block.
    fn start(&mut self, root: Root, peer: PeerId) -> bool {
        if let Some(lookup) = self.lookups.get_mut(&root) {
            lookup.refer(peer);
            return true;
        }
        if self.lookups.len() >= MAX_ENVELOPE_LOOKUPS {
            self.count("too_many");
            tracing::debug!(%root, "too many envelope lookups");
            return false;
        }
        if !self.ctx.chain.is_block_imported(&root) {
            tracing::debug!(%root, "no envelope lookup for a block the chain does not have");
            return false;
        }
        tracing::debug!(%root, %peer, "looking up a payload envelope");
        self.lookups
            .insert(root, EnvelopeLookup::new(root, vec![peer]));
        self.ask_next(root);
        true
    }

    /// Asks the next peer for `root`'s envelope, or ends the lookup when none is left.
    fn ask_next(&mut self, root: Root) {
        let Some(lookup) = self.lookups.get_mut(&root) else {
            return;
        };
        match lookup.next_peer(&self.peers) {
            Some(peer) => self.ask(root, peer),
            None => self.finish(root, false, "no peer has the envelope"),
        }
    }

    fn ask(&mut self, root: Root, peer: PeerId) {
        let request = self
            .ctx
            .network
            .send_request(peer, Request::ExecutionPayloadEnvelopesByRoot(vec![root]));
        self.requests.insert(request, root);
    }

    /// The lookup ended: counted, and handed to the manager.
    fn finish(&mut self, root: Root, imported: bool, why: &'static str) {
        let Some(lookup) = self.lookups.remove(&root) else {
            return;
        };
        self.requests.retain(|_, r| *r != root);
        self.count(if imported { "imported" } else { "failed" });
        tracing::debug!(%root, imported, why, held = lookup.held.len(), "envelope lookup ended");
        self.done.push(EnvelopeLookupDone {
            root,
            imported,
            held: lookup.held,
            for_range: lookup.for_range,
        });
    }

    pub(crate) fn on_request_failed(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        error: &RpcError,
    ) {
        let Some(root) = self.requests.remove(&request_id) else {
            return;
        };
        tracing::debug!(%peer, %error, "envelope lookup request failed");
        self.ask_next(root);
    }

    pub(crate) fn on_response(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        response: Response<E>,
    ) {
        let Some(root) = self.requests.remove(&request_id) else {
            return;
        };
        let Some(lookup) = self.lookups.get_mut(&root) else {
            return;
        };
        if lookup.processing {
            return;
        }
        if !lookup.columns_asked {
            let (fault, step) = lookup.on_envelopes(peer, response.items, &self.peers);
            if let Some(fault) = fault {
                tracing::debug!(%peer, %root, error = %fault, "envelope lookup: wrong answer");
                BatchDownloader::report(&self.ctx, peer, true);
            }
            match step {
                Step::Ask(next) => self.ask(root, next),
                Step::Fetched => self.fetch_columns(root, peer),
                Step::GiveUp => self.finish(root, false, "no peer has the envelope"),
            }
            return;
        }
        // The columns: each must be one of the block's.
        let mut columns = Vec::new();
        for item in response.items {
            match item {
                ResponseItem::DataColumnSidecar(column) if column.block_root() == root => {
                    columns.push((*column).clone());
                }
                _ => {
                    BatchDownloader::report(&self.ctx, peer, true);
                    self.ask_next(root);
                    return;
                }
            }
        }
        self.process(root, peer, columns);
    }

    /// The envelope came from `peer`: its block's custody columns are asked for when its bid
    /// commits to blobs, else it is imported now.
    fn fetch_columns(&mut self, root: Root, peer: PeerId) {
        let block = match self.ctx.chain.store().get_block(&root) {
            Ok(Some(block)) => block,
            Ok(None) => return self.finish(root, false, "the block left the store"),
            Err(error) => {
                tracing::warn!(%root, %error, "envelope lookup: block read failed");
                return self.finish(root, false, "store read failed");
            }
        };
        let Some(lookup) = self.lookups.get_mut(&root) else {
            return;
        };
        lookup.slot = block.slot();
        let custody: Vec<u64> = self.ctx.custody.iter().copied().collect();
        if blob_count(&block) == 0 || custody.is_empty() {
            return self.process(root, peer, Vec::new());
        }
        let Ok(columns) = custody.try_into() else {
            return self.finish(root, false, "custody too large for one request");
        };
        lookup.columns_asked = true;
        let request = self.ctx.network.send_request(
            peer,
            Request::DataColumnsByRoot(vec![DataColumnsByRootIdentifier {
                block_root: root,
                columns,
            }]),
        );
        self.requests.insert(request, root);
    }

    /// Imports the envelope with `columns` on the processor.
    fn process(&mut self, root: Root, peer: PeerId, columns: Vec<DataColumnSidecar<E>>) {
        let Some(lookup) = self.lookups.get_mut(&root) else {
            return;
        };
        let Some(envelope) = lookup.envelope.clone() else {
            return self.ask_next(root);
        };
        lookup.processing = true;
        lookup.serving = Some(peer);
        let slot = lookup.slot;
        let on_run = self.ctx.clone();
        let on_drop = self.ctx.clone();
        let task = Task::new(WorkKind::RpcBlock, move |_| {
            let result = if on_run.chain.is_payload_verified(&root) {
                Ok(())
            } else {
                on_run
                    .chain
                    .import_rpc_execution_payload_envelope(envelope, &columns)
                    .map(|_| ())
                    .map_err(|e| envelope_failure(slot, root, e))
            };
            on_run.send_outcome(Outcome::Envelope(EnvelopeOutcome { root, result }));
        })
        .on_drop(move |_| {
            on_drop.send_outcome(Outcome::Envelope(EnvelopeOutcome {
                root,
                result: Err(SyncError::Dropped),
            }))
        });
        self.ctx.submit(task);
    }

    /// An envelope was imported, or failed: the peer penalised and the next one asked when
    /// the envelope or its columns were bad, the lookup ended otherwise.
    pub(crate) fn on_processed(
        &mut self,
        outcome: EnvelopeOutcome,
        full_custody: impl Fn(&PeerId) -> bool,
    ) {
        let Some(lookup) = self.lookups.get_mut(&outcome.root) else {
            return;
        };
        let Some(peer) = lookup.serving.filter(|_| lookup.processing) else {
            return;
        };
        lookup.processing = false;
        match outcome.result {
            Ok(()) => {
                tracing::info!(root = %outcome.root, "payload envelope looked up and imported");
                self.finish(outcome.root, true, "imported");
            }
            Err(error) if error.blames(full_custody(&peer)) => {
                tracing::debug!(%peer, %error, "envelope lookup: the peer's envelope refused");
                BatchDownloader::report(&self.ctx, peer, true);
                self.ask_next(outcome.root);
            }
            // A peer custodying fewer columns than ours need not have them all: another may.
            Err(error @ SyncError::MissingColumns { .. }) => {
                tracing::debug!(%peer, %error, "envelope lookup: columns missing, next peer");
                self.ask_next(outcome.root);
            }
            Err(error) => {
                tracing::debug!(%error, "envelope lookup failed (not the peer's fault)");
                self.finish(outcome.root, false, "import failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use types::MinimalEthSpec as E;

    fn envelope_for(root: Root, seed: u8) -> Arc<SignedExecutionPayloadEnvelope<E>> {
        let bytes: Vec<u8> = (0..1u32 << 16)
            .map(|i| (i.wrapping_mul(31) as u8) ^ seed)
            .collect();
        let mut envelope =
            SignedExecutionPayloadEnvelope::<E>::arbitrary(&mut Unstructured::new(&bytes))
                .expect("arbitrary envelope");
        envelope.message.beacon_block_root = root;
        Arc::new(envelope)
    }

    fn item(envelope: Arc<SignedExecutionPayloadEnvelope<E>>) -> ResponseItem<E> {
        ResponseItem::ExecutionPayloadEnvelope(envelope)
    }

    #[test]
    fn the_referring_peers_are_asked_first_then_the_others_each_once() {
        let (a, b, c) = (PeerId::random(), PeerId::random(), PeerId::random());
        let mut lookup = EnvelopeLookup::<E>::new(Root::repeat_byte(1), vec![a]);
        lookup.refer(b);
        lookup.refer(a);
        assert_eq!(lookup.next_peer(&[c, a]), Some(a));
        assert_eq!(lookup.next_peer(&[c, a]), Some(b));
        assert_eq!(lookup.next_peer(&[c, a]), Some(c));
        assert_eq!(lookup.next_peer(&[c, a]), None, "every peer asked once");
    }

    #[test]
    fn an_empty_answer_is_no_fault_and_the_next_peer_is_asked() {
        let (a, b) = (PeerId::random(), PeerId::random());
        let root = Root::repeat_byte(1);
        let mut lookup = EnvelopeLookup::<E>::new(root, vec![a]);
        assert_eq!(lookup.next_peer(&[b]), Some(a));
        assert_eq!(lookup.on_envelopes(a, vec![], &[b]), (None, Step::Ask(b)));
        assert_eq!(lookup.serving, Some(b));
        assert_eq!(
            lookup.on_envelopes(b, vec![], &[b]),
            (None, Step::GiveUp),
            "nobody left: the lookup ends, nobody penalised"
        );
    }

    #[test]
    fn another_blocks_envelope_is_the_peers_fault_and_the_next_peer_is_asked() {
        let (a, b) = (PeerId::random(), PeerId::random());
        let root = Root::repeat_byte(1);
        let other = Root::repeat_byte(2);
        let mut lookup = EnvelopeLookup::<E>::new(root, vec![a]);
        assert_eq!(lookup.next_peer(&[b]), Some(a));
        assert_eq!(
            lookup.on_envelopes(a, vec![item(envelope_for(other, 7))], &[b]),
            (
                Some(SyncError::UnexpectedEnvelope { block_root: other }),
                Step::Ask(b)
            )
        );
        // The right envelope beside a wrong one is still a wrong answer.
        let mut mixed = EnvelopeLookup::<E>::new(root, vec![a]);
        assert_eq!(mixed.next_peer(&[]), Some(a));
        let (fault, step) = mixed.on_envelopes(
            a,
            vec![item(envelope_for(root, 3)), item(envelope_for(other, 4))],
            &[],
        );
        assert!(fault.is_some_and(|e| e.blames(false)));
        assert_eq!(step, Step::GiveUp);
        // Something else than an envelope too.
        let mut wrong_item = EnvelopeLookup::<E>::new(root, vec![a]);
        assert_eq!(wrong_item.next_peer(&[]), Some(a));
        assert_eq!(
            wrong_item.on_envelopes(
                a,
                vec![ResponseItem::Status(networking::rpc::StatusMessage {
                    fork_digest: Default::default(),
                    finalized_root: Root::ZERO,
                    finalized_epoch: 0,
                    head_root: Root::ZERO,
                    head_slot: 0,
                    earliest_available_slot: 0,
                })],
                &[]
            ),
            (Some(SyncError::WrongItem), Step::GiveUp)
        );
    }

    #[test]
    fn the_right_envelope_is_kept_for_the_import() {
        let (a, b) = (PeerId::random(), PeerId::random());
        let root = Root::repeat_byte(1);
        let envelope = envelope_for(root, 9);
        let mut lookup = EnvelopeLookup::<E>::new(root, vec![a, b]);
        assert_eq!(lookup.next_peer(&[]), Some(a));
        assert_eq!(lookup.on_envelopes(a, vec![], &[]), (None, Step::Ask(b)));
        assert_eq!(
            lookup.on_envelopes(b, vec![item(envelope.clone())], &[]),
            (None, Step::Fetched)
        );
        assert_eq!(lookup.serving, Some(b));
        assert_eq!(lookup.envelope, Some(envelope));
    }
}
