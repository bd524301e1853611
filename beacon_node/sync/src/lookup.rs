//! Single-block lookups: a gossip block whose parent is unknown has its ancestry fetched by
//! root (`BeaconBlocksByRoot`, one block at a time back to a block the chain holds, at most
//! [`MAX_LOOKUP_DEPTH`] deep), the custody columns of every fetched block with blobs by root
//! (`DataColumnSidecarsByRoot`), then the whole chain of blocks imported in order as one
//! segment on the processor's `rpc_block` kind (the checks and the import of range sync). A
//! peer that answers with another block or bad data is penalised; one that has nothing is
//! passed over for the next peer that sent a descendant.
//!
//! [spec]: phase0/p2p-interface.md#beaconblocksbyroot, fulu/p2p-interface.md#datacolumnsidecarsbyroot-v1

use std::collections::HashMap;
use std::sync::Arc;

use beacon_processor::WorkKind;
use networking::rpc::{Request, Response, ResponseItem};
use networking::{OutboundRequestId, PeerId, RpcError};
use types::fulu::DataColumnsByRootIdentifier;
use types::{DataColumnSidecar, EthSpec, Root, SignedBeaconBlock};

use crate::batch::BatchDownloader;
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
                if newest == Some(parent) && !matches!(lookup.state, LookupState::Processing { .. })
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
            },
        );
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
        self.retry_block(id, peer);
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
                    self.fetch_columns(id, peer);
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

    /// Asks `peer` for the custody columns of every pending block with blobs, or goes straight
    /// to the import when none has blobs.
    fn fetch_columns(&mut self, id: u64, peer: PeerId) {
        let Some(lookup) = self.lookups.get_mut(&id) else {
            return;
        };
        let custody: Vec<u64> = self.ctx.custody.iter().copied().collect();
        let ids: Vec<DataColumnsByRootIdentifier<E>> = lookup
            .pending
            .iter()
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
        let blocks: Vec<_> = lookup.pending.iter().rev().cloned().collect();
        submit_segment(
            &self.ctx,
            WorkKind::RpcBlock,
            blocks,
            columns,
            // Envelopes by root are not looked up yet: a Gloas block comes without its payload.
            Vec::new(),
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
