//! Single-block lookups: a gossip block whose parent is unknown has its ancestry fetched by
//! root (`BeaconBlocksByRoot`, one block at a time back to a block the chain holds, at most
//! [`MAX_LOOKUP_DEPTH`] deep), the payload envelopes (Gloas, `ExecutionPayloadEnvelopesByRoot`)
//! of the blocks whose child in the fetched chain builds on their payload (the held block the
//! chain stops at included, when the chain has it without its payload), the custody columns of
//! every fetched block with blobs by root (`DataColumnSidecarsByRoot`), then the whole chain of
//! blocks imported in order as one segment on the processor's `rpc_block` kind (the checks and
//! the import of range sync, each envelope imported between its block and the child). A peer
//! that answers with another block, an envelope not asked for or bad data is penalised; one
//! that has nothing is passed over for the next peer that sent a descendant.
//!
//! [spec]: phase0/p2p-interface.md#beaconblocksbyroot, fulu/p2p-interface.md#datacolumnsidecarsbyroot-v1, gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1

use std::collections::HashMap;
use std::sync::Arc;

use beacon_processor::WorkKind;
use networking::rpc::{Request, Response, ResponseItem};
use networking::{OutboundRequestId, PeerId, RpcError};
use types::fulu::DataColumnsByRootIdentifier;
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{DataColumnSidecar, EthSpec, Root, SignedBeaconBlock};

use crate::batch::{BatchDownloader, builds_on_payload};
use crate::segment::{blob_count, submit_segment};
use crate::{Outcome, SyncContext, SyncError};

/// How many ancestors a lookup fetches by root before it leaves the gap to range sync.
pub const MAX_LOOKUP_DEPTH: usize = 32;

/// Lookups running at once; more unknown parents wait for range sync.
pub const MAX_LOOKUPS: usize = 16;

/// A processed lookup, back to the event loop.
#[derive(Debug)]
pub(crate) struct LookupOutcome {
    id: u64,
    result: Result<usize, SyncError>,
}

enum LookupState {
    /// Waiting for the block `root`.
    Block,
    /// Waiting for the payload envelopes of the blocks the fetched chain builds on.
    Envelopes { peer: PeerId },
    /// Waiting for the custody columns of the fetched blocks with blobs.
    Columns { peer: PeerId },
    /// Being imported.
    Processing { peer: PeerId },
}

struct Lookup<E: EthSpec> {
    /// The block being fetched now (the oldest unknown ancestor so far).
    root: Root,
    /// Fetched and gossiped blocks waiting for `root`, newest first.
    pending: Vec<Arc<SignedBeaconBlock<E>>>,
    /// Peers that sent a descendant and may have the ancestry, in the order they did.
    peers: Vec<PeerId>,
    state: LookupState,
    /// The imported block the fetched chain starts on, when the oldest fetched block builds
    /// on its payload and the chain does not have that payload: its envelope is imported
    /// before the chain.
    base: Option<Arc<SignedBeaconBlock<E>>>,
    /// The envelopes the fetched chain needs (of `base` and of pending blocks), by root.
    needed: Vec<Root>,
    /// The envelopes fetched.
    envelopes: Vec<Arc<SignedExecutionPayloadEnvelope<E>>>,
}

/// The lookups running.
pub(crate) struct BlockLookups<E: EthSpec> {
    ctx: Arc<SyncContext<E>>,
    lookups: HashMap<u64, Lookup<E>>,
    next_id: u64,
    /// Our outstanding requests, by the lookup they serve.
    requests: HashMap<OutboundRequestId, u64>,
}

fn label_of(result: &Result<usize, SyncError>) -> &'static str {
    match result {
        Ok(_) => "imported",
        Err(_) => "failed",
    }
}

impl<E: EthSpec> BlockLookups<E> {
    pub(crate) fn new(ctx: Arc<SyncContext<E>>) -> Self {
        Self {
            ctx,
            lookups: HashMap::new(),
            next_id: 0,
            requests: HashMap::new(),
        }
    }

    fn count(&self, result: &'static str) {
        self.ctx.metrics.lookups.with_label_values(&[result]).inc();
    }

    /// A gossip block of `peer` whose parent is unknown: a lookup of the parent starts (or the
    /// peer and the block join the one running for it).
    pub(crate) fn on_unknown_parent(&mut self, peer: PeerId, block: Arc<SignedBeaconBlock<E>>) {
        let parent = block.parent_root();
        let root = block.canonical_root();
        for lookup in self.lookups.values_mut() {
            let newest = lookup.pending.first().map(|b| b.canonical_root());
            let joins = lookup.root == parent
                || lookup.root == root
                || newest == Some(parent)
                || lookup.pending.iter().any(|b| b.canonical_root() == root);
            if joins {
                if !lookup.peers.contains(&peer) {
                    lookup.peers.push(peer);
                }
                // A child of the newest pending block extends the chain being fetched.
                if newest == Some(parent)
                    && matches!(
                        lookup.state,
                        LookupState::Block | LookupState::Columns { .. }
                    )
                {
                    lookup.pending.insert(0, block);
                }
                return;
            }
        }
        self.start(peer, parent, vec![block]);
    }

    /// A block root `peer` referred to (an attestation's head block) that the chain has not
    /// imported: it is looked up (with its ancestry and columns) unless a lookup has it.
    pub(crate) fn on_unknown_block(&mut self, peer: PeerId, root: Root) {
        if self.ctx.chain.is_block_imported(&root) {
            return;
        }
        for lookup in self.lookups.values_mut() {
            if lookup.root == root || lookup.pending.iter().any(|b| b.canonical_root() == root) {
                if !lookup.peers.contains(&peer) {
                    lookup.peers.push(peer);
                }
                return;
            }
        }
        self.start(peer, root, Vec::new());
    }

    /// Starts a lookup of `root` from `peer`, with `pending` (newest first) waiting for it.
    fn start(&mut self, peer: PeerId, root: Root, pending: Vec<Arc<SignedBeaconBlock<E>>>) {
        if self.lookups.len() >= MAX_LOOKUPS {
            self.count("too_many");
            tracing::debug!(%root, "too many lookups: the block is left to range sync");
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        let request = self
            .ctx
            .network
            .send_request(peer, Request::BlocksByRoot(vec![root]));
        self.requests.insert(request, id);
        tracing::debug!(%root, %peer, waiting = pending.len(), "looking up an unknown block");
        self.lookups.insert(
            id,
            Lookup {
                root,
                pending,
                peers: vec![peer],
                state: LookupState::Block,
                base: None,
                needed: Vec::new(),
                envelopes: Vec::new(),
            },
        );
    }

    /// A block of `peer` whose parent is imported now (with its payload: a gossip block held
    /// on its parent's envelope): imported through a lookup of no ancestor.
    pub(crate) fn on_parent_imported(&mut self, peer: PeerId, block: Arc<SignedBeaconBlock<E>>) {
        let root = block.canonical_root();
        if self.ctx.chain.is_block_imported(&root)
            || self
                .lookups
                .values()
                .any(|l| l.pending.iter().any(|b| b.canonical_root() == root))
        {
            return;
        }
        if self.lookups.len() >= MAX_LOOKUPS {
            self.count("too_many");
            tracing::debug!(%root, "too many lookups: the block is left to range sync");
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.lookups.insert(
            id,
            Lookup {
                root,
                pending: vec![block],
                peers: vec![peer],
                state: LookupState::Block,
                base: None,
                needed: Vec::new(),
                envelopes: Vec::new(),
            },
        );
        self.ancestry_complete(id, peer);
    }

    /// Whether `request_id` is one of ours.
    pub(crate) fn owns(&self, request_id: &OutboundRequestId) -> bool {
        self.requests.contains_key(request_id)
    }

    /// The lookup is given up.
    fn drop_lookup(&mut self, id: u64, why: &str) {
        if let Some(lookup) = self.lookups.remove(&id) {
            tracing::debug!(root = %lookup.root, why, "lookup dropped");
            self.requests.retain(|_, l| *l != id);
            self.count("dropped");
        }
    }

    /// Asks the next peer (after `failed`) for the lookup's current block, or drops it.
    fn retry_block(&mut self, id: u64, failed: PeerId) {
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        lookup.peers.retain(|p| *p != failed);
        let Some(&peer) = lookup.peers.first() else {
            self.drop_lookup(id, "no peer has the block");
            return;
        };
        lookup.state = LookupState::Block;
        let request = self
            .ctx
            .network
            .send_request(peer, Request::BlocksByRoot(vec![lookup.root]));
        self.requests.insert(request, id);
    }

    pub(crate) fn on_request_failed(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        error: &RpcError,
    ) {
        let Some(id) = self.requests.remove(&request_id) else {
            return;
        };
        tracing::debug!(%peer, %error, "lookup request failed");
        let fetching_block = self
            .lookups
            .get(&id)
            .is_some_and(|l| matches!(l.state, LookupState::Block));
        if fetching_block {
            self.retry_block(id, peer);
        } else {
            // The ancestry is complete: its envelopes and columns from the next peer (not
            // the oldest block again).
            self.retry_data(id, peer);
        }
    }

    /// Asks the next peer (after `failed`) for the complete ancestry's envelopes and
    /// columns, or drops the lookup.
    fn retry_data(&mut self, id: u64, failed: PeerId) {
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        lookup.peers.retain(|p| *p != failed);
        match lookup.peers.first().copied() {
            Some(next) => self.ask_envelopes(id, next),
            None => self.drop_lookup(id, "no peer has the envelopes or columns"),
        }
    }

    pub(crate) fn on_response(
        &mut self,
        peer: PeerId,
        request_id: OutboundRequestId,
        response: Response<E>,
    ) {
        let Some(id) = self.requests.remove(&request_id) else {
            return;
        };
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        match lookup.state {
            LookupState::Block => {
                let root = lookup.root;
                let block = response.items.into_iter().find_map(|item| match item {
                    ResponseItem::Block(block) => Some(block),
                    _ => None,
                });
                let Some(block) = block else {
                    // The peer does not have it (or answered an error): the next one may.
                    self.retry_block(id, peer);
                    return;
                };
                if block.canonical_root() != root {
                    BatchDownloader::report(&self.ctx, peer, true);
                    self.retry_block(id, peer);
                    return;
                }
                let parent = block.parent_root();
                lookup.pending.push(block);
                if self.ctx.chain.is_block_imported(&parent) {
                    self.ancestry_complete(id, peer);
                } else if lookup.pending.len() > MAX_LOOKUP_DEPTH {
                    self.drop_lookup(id, "deeper than a lookup goes: left to range sync");
                } else {
                    lookup.root = parent;
                    let request = self
                        .ctx
                        .network
                        .send_request(peer, Request::BlocksByRoot(vec![parent]));
                    self.requests.insert(request, id);
                }
            }
            LookupState::Envelopes { peer: from } => {
                self.on_envelopes(id, from, response.items);
            }
            LookupState::Columns { peer: from } => {
                let columns = response
                    .items
                    .into_iter()
                    .filter_map(|item| match item {
                        ResponseItem::DataColumnSidecar(c) => Some(c),
                        _ => None,
                    })
                    .collect();
                self.process(id, from, columns);
            }
            LookupState::Processing { .. } => {}
        }
    }

    /// The ancestry is fetched back to an imported block: the envelopes the chain needs
    /// (each block whose child builds on its payload, the imported base block included when
    /// its payload is not verified) are asked for from `peer`, or the columns when none is.
    ///
    /// [spec]: gloas/fork-choice.md#modified-on_block
    fn ancestry_complete(&mut self, id: u64, peer: PeerId) {
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        let mut needed = Vec::new();
        lookup.base = None;
        if let Some(oldest) = lookup.pending.last()
            && oldest.signed_execution_payload_bid().is_some()
        {
            let base_root = oldest.parent_root();
            if !self.ctx.chain.is_payload_verified(&base_root) {
                match self.ctx.chain.store().get_block(&base_root) {
                    Ok(Some(base)) if builds_on_payload(&base, oldest) => {
                        needed.push(base_root);
                        lookup.base = Some(Arc::new(base));
                    }
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(%base_root, %error, "lookup: the base block's read failed");
                    }
                }
            }
        }
        // `pending` is newest first: each block with the one before it (its child).
        for pair in lookup.pending.windows(2) {
            let [child, parent] = pair else {
                continue;
            };
            if child.parent_root() == parent.canonical_root() && builds_on_payload(parent, child) {
                needed.push(parent.canonical_root());
            }
        }
        lookup.needed = needed;
        lookup.envelopes.clear();
        self.ask_envelopes(id, peer);
    }

    /// Asks `peer` for the lookup's needed envelopes (the columns next when none is needed).
    fn ask_envelopes(&mut self, id: u64, peer: PeerId) {
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        if lookup.needed.is_empty() {
            self.fetch_columns(id, peer);
            return;
        }
        lookup.state = LookupState::Envelopes { peer };
        let request = self.ctx.network.send_request(
            peer,
            Request::ExecutionPayloadEnvelopesByRoot(lookup.needed.clone()),
        );
        self.requests.insert(request, id);
    }

    /// `peer`'s envelopes: one not asked for (or twice) is its fault; when one is missing the
    /// next peer that sent a descendant is asked.
    fn on_envelopes(&mut self, id: u64, peer: PeerId, items: Vec<ResponseItem<E>>) {
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        let mut envelopes: Vec<Arc<SignedExecutionPayloadEnvelope<E>>> = Vec::new();
        let mut wrong = false;
        for item in items {
            match item {
                ResponseItem::ExecutionPayloadEnvelope(envelope)
                    if lookup.needed.contains(&envelope.message.beacon_block_root)
                        && !envelopes.iter().any(|e| {
                            e.message.beacon_block_root == envelope.message.beacon_block_root
                        }) =>
                {
                    envelopes.push(envelope);
                }
                _ => wrong = true,
            }
        }
        if wrong {
            BatchDownloader::report(&self.ctx, peer, true);
        }
        if wrong || envelopes.len() < lookup.needed.len() {
            self.retry_data(id, peer);
            return;
        }
        lookup.envelopes = envelopes;
        self.fetch_columns(id, peer);
    }

    /// Asks `peer` for the custody columns of every pending block with blobs (and of the base
    /// block whose envelope is imported), or goes straight to the import when none has blobs.
    fn fetch_columns(&mut self, id: u64, peer: PeerId) {
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        let custody: Vec<u64> = self.ctx.custody.iter().copied().collect();
        let ids: Vec<DataColumnsByRootIdentifier<E>> = lookup
            .pending
            .iter()
            .chain(lookup.base.iter())
            .filter(|b| blob_count(b) > 0)
            .filter_map(|b| {
                Some(DataColumnsByRootIdentifier {
                    block_root: b.canonical_root(),
                    columns: custody.clone().try_into().ok()?,
                })
            })
            .collect();
        if ids.is_empty() {
            self.process(id, peer, Vec::new());
            return;
        }
        lookup.state = LookupState::Columns { peer };
        let request = self
            .ctx
            .network
            .send_request(peer, Request::DataColumnsByRoot(ids));
        self.requests.insert(request, id);
    }

    /// `engine_newPayload` for each block, oldest first, then the import as one segment.
    fn process(&mut self, id: u64, peer: PeerId, columns: Vec<Arc<DataColumnSidecar<E>>>) {
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        lookup.state = LookupState::Processing { peer };
        // The base block (imported already: skipped) leads, for its envelope's import.
        let blocks: Vec<_> = lookup
            .base
            .iter()
            .chain(lookup.pending.iter().rev())
            .cloned()
            .collect();
        submit_segment(
            &self.ctx,
            WorkKind::RpcBlock,
            blocks,
            columns,
            lookup.envelopes.clone(),
            move |result| Outcome::Lookup(LookupOutcome { id, result }),
        );
    }

    /// A lookup's blocks were imported, or failed (the peer penalised when at fault).
    pub(crate) fn on_processed(
        &mut self,
        outcome: LookupOutcome,
        full_custody: impl Fn(&PeerId) -> bool,
    ) {
        let Some(lookup) = self.lookups.remove(&outcome.id) else {
            return;
        };
        self.requests.retain(|_, l| *l != outcome.id);
        let LookupState::Processing { peer } = lookup.state else {
            return;
        };
        self.count(label_of(&outcome.result));
        match outcome.result {
            Ok(imported) => {
                tracing::info!(imported, head = %self.ctx.chain.head().block_root, "lookup imported its blocks");
            }
            Err(error) => {
                tracing::debug!(%peer, %error, "lookup failed");
                BatchDownloader::report(&self.ctx, peer, error.blames(full_custody(&peer)));
            }
        }
    }

    /// A peer left: it is no longer asked.
    pub(crate) fn remove_peer(&mut self, peer: &PeerId) {
        for lookup in self.lookups.values_mut() {
            lookup.peers.retain(|p| p != peer);
        }
    }
}
