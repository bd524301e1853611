//! Range sync across the Gloas fork: a node at a Fulu anchor syncs to a peer whose chain goes
//! over to Gloas, its Gloas blocks' payloads coming as envelopes (by range, matched to their
//! blocks), their custody columns by range, and some payloads withheld (the next block builds
//! on the EMPTY variant): blocks and envelopes imported in order, the head the same block in
//! the same payload status as the peer's. A node that imported a block but not its envelope
//! looks the envelope up by root when a child builds on it: a range-sync batch starting on it
//! waits for the lookup and is retried, a gossip child is held and imported after it.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::sync::Arc;

use common::*;
use fork_choice::PayloadStatus;
use networking::rpc::{Request, Response, ResponseItem};
use networking::{GossipKind, GossipTopic, PubsubMessage};
use router::SyncState;
use state_harness::gloas::{
    GloasBlockContents, ParentPayload, build_gloas_block, self_built_envelope,
};
use state_harness::{AttestationSpec, BlockContents, BuiltBlock};
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{ChainSpec, DataColumnSidecar, EthSpec, ForkName, Root, Slot};

/// Gloas from epoch 3 (slot 24), Fulu before it.
fn fulu_then_gloas() -> Arc<ChainSpec> {
    let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    spec.gloas_fork_epoch = 3;
    Arc::new(spec)
}

/// A Gloas block of the served chain: the block, its envelope, and whether the peer holds it
/// (a withheld payload's envelope is never imported).
struct GloasSlot {
    built: BuiltBlock<E>,
    envelope: SignedExecutionPayloadEnvelope<E>,
    withheld: bool,
}

/// The served chain: Fulu blocks at slots 17 to 23 (imported by [`Node::start`]), then Gloas
/// blocks from the fork (slot 24) to 38 but 30, each imported into `a` with its envelope but
/// those of [`WITHHELD`]; [`BLOB_SLOT`]'s payload carries a blob.
struct ServedChain {
    fulu: Vec<BlockAndColumns>,
    gloas: Vec<GloasSlot>,
    /// The Gloas columns of [`BLOB_SLOT`]'s payload.
    blob_columns: Vec<DataColumnSidecar<E>>,
}

impl ServedChain {
    fn root_at(&self, slot: Slot) -> Root {
        self.gloas
            .iter()
            .find(|g| g.built.block.slot() == slot)
            .unwrap()
            .built
            .block
            .canonical_root()
    }
}

/// The last slot of the served chain, and the wall-clock slot of the tests.
const LAST_SLOT: Slot = 38;
/// The slot whose payload carries a blob (its columns come by range).
const BLOB_SLOT: Slot = 25;
/// 26's payload is withheld (27 builds on its EMPTY variant), and so is 32's, the last block of
/// the second batch (33, in the next batch, builds on EMPTY).
const WITHHELD: [Slot; 2] = [26, 32];

/// Starts the serving node `a` with the Fulu blocks, then imports its Gloas blocks and
/// envelopes ([`ServedChain`]).
async fn serving_node(spec: &Arc<ChainSpec>, anchor: &BuiltBlock<E>) -> (Node, ServedChain) {
    serving_node_to(spec, anchor, LAST_SLOT).await
}

/// [`serving_node`] with the Gloas blocks up to `last` (at least the last withheld slot).
async fn serving_node_to(
    spec: &Arc<ChainSpec>,
    anchor: &BuiltBlock<E>,
    last: Slot,
) -> (Node, ServedChain) {
    let fork_slot: Slot = 3 * E::slots_per_epoch();
    // Fulu blocks at slots 17 to 23.
    let fulu = build_chain(spec, anchor, fork_slot - ANCHOR_SLOT - 1, None);
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor,
            blocks: &fulu,
            current_slot: LAST_SLOT,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    let (commitments, make_columns) = gloas_blobs(1, 0x25);
    let mut blob_columns = Vec::new();
    let mut gloas: Vec<GloasSlot> = Vec::new();
    let mut parent = fulu.last().unwrap().0.post.clone();
    for slot in (fork_slot..=last).filter(|s| *s != 30) {
        let parent_payload = match gloas.last() {
            Some(p) if p.withheld => ParentPayload::Empty,
            _ => ParentPayload::Full,
        };
        // Votes for the slot of the block before (the whole committee of that slot).
        let previous_slot = gloas.last().map_or(fork_slot - 1, |p| p.built.block.slot());
        let contents = GloasBlockContents {
            base: BlockContents {
                attestations: vec![AttestationSpec::whole_slot(previous_slot)],
                blob_kzg_commitments: if slot == BLOB_SLOT {
                    commitments.clone()
                } else {
                    Vec::new()
                },
                ..Default::default()
            },
            parent_payload,
            ..Default::default()
        };
        let built = build_gloas_block(&parent, slot, &contents, spec).unwrap();
        let root = built.block.canonical_root();
        a.harness
            .import_valid(Arc::new(built.block.clone()), &[])
            .unwrap();
        let envelope = self_built_envelope(&built, spec).unwrap();
        let is_withheld = WITHHELD.contains(&slot);
        if !is_withheld {
            let columns: Vec<DataColumnSidecar<E>> = if slot == BLOB_SLOT {
                blob_columns = make_columns(root, slot);
                blob_columns.clone()
            } else {
                Vec::new()
            };
            a.chain
                .import_execution_payload_envelope(Arc::new(envelope.clone()), columns)
                .await
                .unwrap();
        }
        parent = built.post.clone();
        gloas.push(GloasSlot {
            built,
            envelope,
            withheld: is_withheld,
        });
    }
    let served = ServedChain {
        fulu,
        gloas,
        blob_columns,
    };
    let head = a.chain.head();
    assert_eq!(
        (head.block_root, head.payload_status),
        (served.root_at(last), Some(PayloadStatus::Full)),
        "the served chain's head is its last block, FULL"
    );
    for slot in WITHHELD {
        assert!(!a.chain.is_payload_verified(&served.root_at(slot)));
    }
    (a, served)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_range_syncs_across_the_gloas_fork_with_envelopes_and_withheld_payloads() {
    let spec = fulu_then_gloas();
    let anchor = anchor(&spec);
    let (a, served) = serving_node(&spec, &anchor).await;
    let ServedChain { fulu, gloas, .. } = &served;
    let head = a.chain.head();
    let root_at = |slot| served.root_at(slot);

    let b = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &[],
            current_slot: LAST_SLOT,
            custody: None,
            static_peers: vec![a.tcp_addr()],
        },
    )
    .await;
    b.wait_for_head(head.block_root).await;
    // The last batch's outcome (its last envelope imported after its block) ends range sync.
    b.wait_for_sync_state("synced", |s| *s == SyncState::Synced)
        .await;

    let b_head = b.chain.head();
    assert_eq!(
        (b_head.block_root, b_head.payload_status),
        (head.block_root, head.payload_status),
        "the same head block in the same payload status"
    );
    assert_eq!(b_head.finalized_checkpoint, head.finalized_checkpoint);
    assert_eq!(b_head.justified_checkpoint, head.justified_checkpoint);
    let store = b.chain.store();
    for g in gloas {
        let root = g.built.block.canonical_root();
        let stored = store.get_execution_payload_envelope(&root).unwrap();
        if g.withheld {
            assert_eq!(stored, None, "slot {}: withheld", g.built.block.slot());
            assert!(!b.chain.is_payload_verified(&root));
        } else {
            assert_eq!(
                stored.as_ref(),
                Some(&g.envelope),
                "slot {}: the envelope came by range and was stored",
                g.built.block.slot()
            );
            assert!(b.chain.is_payload_verified(&root));
        }
    }
    assert_eq!(
        store
            .data_column_indices(&root_at(BLOB_SLOT))
            .unwrap()
            .len(),
        128,
        "the blob payload's custody columns came by range and were stored"
    );
    let count = fulu.len() + gloas.len();
    assert_eq!(
        b.counter("beacon_sync_blocks_imported_total", &[]),
        count as f64,
        "every block came by range sync"
    );
    // Batches of 8 slots from 17: [17, 25), [25, 33), [33, 41), each imported at the first try.
    assert_eq!(
        b.counter("beacon_sync_batches_total", &[("result", "imported")]),
        3.0
    );
    assert_eq!(b.counter("beacon_sync_batches_total", &[]), 3.0);
    assert_eq!(
        a.counter(
            "beacon_rpc_requests_served_total",
            &[
                ("protocol", "execution_payload_envelopes_by_range"),
                ("result", "success")
            ]
        ),
        3.0,
        "each batch asked for its Gloas slots' envelopes"
    );
    a.stop().await;
    b.stop().await;
}

/// A peer serving the chain without the envelope of slot 25, whose child at slot 26 builds on
/// its payload: the peer withheld what its own chain proves it has; the batch is refused, the
/// peer penalised, and the batch comes from an honest peer that joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_omitting_an_envelope_a_child_builds_on_is_penalised_and_the_batch_fetched_from_another()
 {
    let spec = fulu_then_gloas();
    let anchor = anchor(&spec);
    let (a, served) = serving_node(&spec, &anchor).await;
    let head = a.chain.head();
    let omitted = served.root_at(BLOB_SLOT);

    let blocks: Vec<Arc<types::SignedBeaconBlock<E>>> = served
        .fulu
        .iter()
        .map(|(b, _)| Arc::new(b.block.clone()))
        .chain(served.gloas.iter().map(|g| Arc::new(g.built.block.clone())))
        .collect();
    let envelopes: Vec<(Slot, Arc<SignedExecutionPayloadEnvelope<E>>)> = served
        .gloas
        .iter()
        .filter(|g| !g.withheld && g.built.block.canonical_root() != omitted)
        .map(|g| (g.built.block.slot(), Arc::new(g.envelope.clone())))
        .collect();
    let columns: Vec<Arc<DataColumnSidecar<E>>> =
        served.blob_columns.iter().cloned().map(Arc::new).collect();
    let in_range = |slot: Slot, start: Slot, count: u64| slot >= start && slot < start + count;
    let serve: Server = Box::new(move |request| match request {
        Request::BlocksByRange(req) => Some(Response::success(
            blocks
                .iter()
                .filter(|b| in_range(b.slot(), req.start_slot, req.count))
                .map(|b| ResponseItem::Block(b.clone()))
                .collect(),
        )),
        Request::ExecutionPayloadEnvelopesByRange(req) => Some(Response::success(
            envelopes
                .iter()
                .filter(|(slot, _)| in_range(*slot, req.start_slot, req.count))
                .map(|(_, e)| ResponseItem::ExecutionPayloadEnvelope(e.clone()))
                .collect(),
        )),
        Request::DataColumnsByRange(req) => Some(Response::success(
            columns
                .iter()
                .filter(|c| {
                    in_range(c.slot(), req.start_slot, req.count)
                        && req.columns.contains(&c.index())
                })
                .map(|c| ResponseItem::DataColumnSidecar(c.clone()))
                .collect(),
        )),
        _ => None,
    });
    let status = router::status::local_status(a.router.as_ref().unwrap().router());
    let bad_peer = Client::serving(&spec, LAST_SLOT, status, vec![], serve).await;
    let bad_peer_id = bad_peer.network.local_peer_id();

    let b = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &[],
            current_slot: LAST_SLOT,
            custody: None,
            static_peers: vec![bad_peer.network.tcp_addr().unwrap()],
        },
    )
    .await;
    b.wait_until("a batch refused for a missing envelope", || {
        let n = b.counter(
            "beacon_sync_batches_total",
            &[("result", "missing_envelope")],
        );
        async move { n >= 1.0 }
    })
    .await;
    let score = b.network.peer_score(bad_peer_id).await;
    assert!(score < 0.0, "penalised: {score}");
    assert!(
        !b.chain.is_block_imported(&served.root_at(BLOB_SLOT + 1)),
        "nothing of the refused batch's blocks after the omission was imported"
    );

    // An honest peer joins: the batch is fetched from it and the chain completes, FULL.
    b.network.dial(a.tcp_addr());
    b.wait_for_head(head.block_root).await;
    b.wait_for_sync_state("synced", |s| *s == SyncState::Synced)
        .await;
    let b_head = b.chain.head();
    assert_eq!(
        (b_head.block_root, b_head.payload_status),
        (head.block_root, head.payload_status)
    );
    assert!(b.chain.is_payload_verified(&omitted));
    a.stop().await;
    b.stop().await;
}

/// Imports the served chain's Gloas blocks up to `upto` into `node` (whose Fulu blocks are
/// imported at its start), with their envelopes but those withheld and `skip`'s.
async fn import_served(node: &Node, served: &ServedChain, upto: Slot, skip: Slot) {
    for g in served.gloas.iter().filter(|g| g.built.block.slot() <= upto) {
        let slot = g.built.block.slot();
        node.harness
            .import_valid(Arc::new(g.built.block.clone()), &[])
            .unwrap();
        if g.withheld || slot == skip {
            continue;
        }
        let columns = if slot == BLOB_SLOT {
            served.blob_columns.clone()
        } else {
            Vec::new()
        };
        node.chain
            .import_execution_payload_envelope(Arc::new(g.envelope.clone()), columns)
            .await
            .unwrap();
    }
}

/// A node on the served chain's Fulu blocks and its Gloas blocks up to `upto`, with their
/// envelopes but `upto`'s (and the withheld ones): its head is `upto`'s block, whose payload it
/// lacks.
async fn node_missing_the_envelope_of(
    spec: &Arc<ChainSpec>,
    anchor: &BuiltBlock<E>,
    served: &ServedChain,
    upto: Slot,
) -> Node {
    let node = Node::start(
        spec.clone(),
        NodeSpec {
            anchor,
            blocks: &served.fulu,
            current_slot: LAST_SLOT,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;
    import_served(&node, served, upto, upto).await;
    node
}

/// `node`'s count of requests it served of `protocol`, successfully.
fn served(node: &Node, protocol: &str) -> f64 {
    node.counter(
        "beacon_rpc_requests_served_total",
        &[("protocol", protocol), ("result", "success")],
    )
}

/// The node holds [`BLOB_SLOT`]'s block but not its envelope (nor its columns); range sync's
/// first batch starts on the next slot, whose block builds on that payload: the batch fails
/// on the parent's missing payload (nobody blamed, no attempt spent), the envelope and its
/// custody columns are looked up by root and imported, and the batch retried then imported:
/// the chain completes on the peer's head without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_envelope_before_a_batch_is_looked_up_by_root_and_the_batch_retried() {
    let spec = fulu_then_gloas();
    let anchor = anchor(&spec);
    let (a, served_chain) = serving_node(&spec, &anchor).await;
    let head = a.chain.head();
    let missing = served_chain.root_at(BLOB_SLOT);
    // The next block builds on the missing payload.
    assert!(!WITHHELD.contains(&BLOB_SLOT));

    let b = node_missing_the_envelope_of(&spec, &anchor, &served_chain, BLOB_SLOT).await;
    assert_eq!(b.chain.head().block_root, missing);
    assert!(!b.chain.is_payload_verified(&missing));

    b.network.dial(a.tcp_addr());
    b.wait_for_head(head.block_root).await;
    b.wait_for_sync_state("synced", |s| *s == SyncState::Synced)
        .await;
    let b_head = b.chain.head();
    assert_eq!(
        (b_head.block_root, b_head.payload_status),
        (head.block_root, head.payload_status),
        "the same head block in the same payload status"
    );
    let envelope = &served_chain
        .gloas
        .iter()
        .find(|g| g.built.block.canonical_root() == missing)
        .unwrap()
        .envelope;
    assert_eq!(
        b.chain
            .store()
            .get_execution_payload_envelope(&missing)
            .unwrap()
            .as_ref(),
        Some(envelope),
        "the envelope was looked up and stored"
    );
    assert!(b.chain.is_payload_verified(&missing));
    assert_eq!(
        b.chain.store().data_column_indices(&missing).unwrap().len(),
        128,
        "its custody columns came by root with it"
    );
    assert_eq!(
        b.counter(
            "beacon_sync_envelope_lookups_total",
            &[("result", "imported")]
        ),
        1.0
    );
    assert_eq!(served(&a, "execution_payload_envelopes_by_root"), 1.0);
    assert_eq!(served(&a, "data_column_sidecars_by_root"), 1.0);
    // Batches of 8 slots from 26: [26, 34) failed once on the missing payload, then it and
    // [34, 42) imported; nothing else (no restart from the finalized checkpoint).
    assert_eq!(
        b.counter(
            "beacon_sync_batches_total",
            &[("result", "missing_envelope")]
        ),
        1.0
    );
    assert_eq!(
        b.counter("beacon_sync_batches_total", &[("result", "imported")]),
        2.0
    );
    assert_eq!(b.counter("beacon_sync_batches_total", &[]), 3.0);
    let score = b.network.peer_score(a.network.local_peer_id()).await;
    assert!(score >= 0.0, "the peer was not blamed: {score}");
    a.stop().await;
    b.stop().await;
}

/// The node holds the chain's last block but not its envelope; a child building on that
/// payload comes by gossip: IGNOREd (the parent's payload is not verified), held by sync while
/// the envelope is looked up by root from the sender, then imported: the node ends on the
/// sender's head with the envelope stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gossip_child_of_a_missing_payload_is_held_until_the_envelope_is_looked_up() {
    let spec = fulu_then_gloas();
    let anchor = anchor(&spec);
    let last: Slot = LAST_SLOT - 1;
    let (a, served_chain) = serving_node_to(&spec, &anchor, last).await;
    let missing = served_chain.root_at(last);

    let b = node_missing_the_envelope_of(&spec, &anchor, &served_chain, last).await;
    assert_eq!(b.chain.head().block_root, missing);
    assert!(!b.chain.is_payload_verified(&missing));
    // Connected once both hold the same blocks: no range sync.
    b.network.dial(a.tcp_addr());

    let digest = a
        .network
        .fork_context()
        .digest_at_epoch(LAST_SLOT / E::slots_per_epoch());
    let topic = GossipTopic::new(GossipKind::BeaconBlock, digest);
    a.wait_until("b in a's block mesh", || {
        let network = a.network.clone();
        async move { !network.mesh_peers(topic).await.is_empty() }
    })
    .await;
    for (node, other) in [(&a, "b"), (&b, "a")] {
        node.wait_until(&format!("{other}'s status answered"), || {
            let n = served(node, "status");
            async move { n >= 1.0 }
        })
        .await;
    }

    // a's next block builds on the payload b lacks; only the block is gossiped.
    let parent = served_chain.gloas.last().unwrap();
    let contents = GloasBlockContents {
        base: BlockContents {
            attestations: vec![AttestationSpec::whole_slot(last)],
            ..Default::default()
        },
        parent_payload: ParentPayload::Full,
        ..Default::default()
    };
    let child = build_gloas_block(&parent.built.post, LAST_SLOT, &contents, &spec).unwrap();
    let child_root = child.block.canonical_root();
    a.harness
        .import_valid(Arc::new(child.block.clone()), &[])
        .unwrap();
    a.network
        .publish(PubsubMessage::BeaconBlock(Arc::new(child.block.clone())));

    b.wait_for_head(child_root).await;
    let head = a.chain.head();
    let b_head = b.chain.head();
    assert_eq!(
        (b_head.block_root, b_head.payload_status),
        (head.block_root, head.payload_status),
        "b ends on a's head"
    );
    assert_eq!(
        b.chain
            .store()
            .get_execution_payload_envelope(&missing)
            .unwrap()
            .as_ref(),
        Some(&parent.envelope),
        "the parent's envelope was looked up and stored"
    );
    assert!(b.chain.is_payload_verified(&missing));
    assert_eq!(
        b.counter(
            "beacon_gossip_messages_total",
            &[("topic", "beacon_block"), ("verdict", "ignore")]
        ),
        1.0,
        "the child was ignored on gossip, then imported once the payload was"
    );
    assert_eq!(
        b.counter(
            "beacon_sync_envelope_lookups_total",
            &[("result", "imported")]
        ),
        1.0
    );
    assert_eq!(served(&a, "execution_payload_envelopes_by_root"), 1.0);
    assert_eq!(
        b.counter("beacon_sync_blocks_imported_total", &[]),
        0.0,
        "not by range sync"
    );
    a.stop().await;
    b.stop().await;
}

/// The node holds slot 36's block but not its envelope; the peer gossips only 38, on 37, each
/// building on its parent's payload: the lookup of the unknown parent fetches 37 by root, then
/// the envelopes of 36 and 37 by root (the chain crosses both FULL parents), and imports 36's
/// envelope, 37, its envelope and 38 in that order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_lookup_across_full_gloas_parents_fetches_their_envelopes_by_root() {
    let spec = fulu_then_gloas();
    let anchor = anchor(&spec);
    let last: Slot = LAST_SLOT - 2;
    let (a, served_chain) = serving_node_to(&spec, &anchor, last).await;
    let base = served_chain.root_at(last);

    let b = node_missing_the_envelope_of(&spec, &anchor, &served_chain, last).await;
    assert!(!b.chain.is_payload_verified(&base));
    b.network.dial(a.tcp_addr());
    let digest = a
        .network
        .fork_context()
        .digest_at_epoch(LAST_SLOT / E::slots_per_epoch());
    let topic = GossipTopic::new(GossipKind::BeaconBlock, digest);
    a.wait_until("b in a's block mesh", || {
        let network = a.network.clone();
        async move { !network.mesh_peers(topic).await.is_empty() }
    })
    .await;
    for (node, other) in [(&a, "b"), (&b, "a")] {
        node.wait_until(&format!("{other}'s status answered"), || {
            let n = served(node, "status");
            async move { n >= 1.0 }
        })
        .await;
    }

    // a learns 37 (with its envelope) and 38, each on its parent's payload; gossips only 38.
    let on_full = |slot: Slot| GloasBlockContents {
        base: BlockContents {
            attestations: vec![AttestationSpec::whole_slot(slot - 1)],
            ..Default::default()
        },
        parent_payload: ParentPayload::Full,
        ..Default::default()
    };
    let parent = &served_chain.gloas.last().unwrap().built;
    let middle = build_gloas_block(&parent.post, last + 1, &on_full(last + 1), &spec).unwrap();
    a.harness
        .import_valid(Arc::new(middle.block.clone()), &[])
        .unwrap();
    let middle_envelope = self_built_envelope(&middle, &spec).unwrap();
    a.chain
        .import_execution_payload_envelope(Arc::new(middle_envelope.clone()), Vec::new())
        .await
        .unwrap();
    let child = build_gloas_block(&middle.post, LAST_SLOT, &on_full(LAST_SLOT), &spec).unwrap();
    let child_root = child.block.canonical_root();
    a.harness
        .import_valid(Arc::new(child.block.clone()), &[])
        .unwrap();
    a.network
        .publish(PubsubMessage::BeaconBlock(Arc::new(child.block.clone())));

    b.wait_for_head(child_root).await;
    let head = a.chain.head();
    let b_head = b.chain.head();
    assert_eq!(
        (b_head.block_root, b_head.payload_status),
        (head.block_root, head.payload_status),
        "b ends on a's head"
    );
    let middle_root = middle.block.canonical_root();
    let store = b.chain.store();
    assert_eq!(
        store.get_execution_payload_envelope(&middle_root).unwrap(),
        Some(middle_envelope),
        "the fetched parent's envelope came by root"
    );
    assert_eq!(
        store
            .get_execution_payload_envelope(&base)
            .unwrap()
            .as_ref(),
        Some(&served_chain.gloas.last().unwrap().envelope),
        "so did the held base block's"
    );
    assert!(b.chain.is_payload_verified(&base) && b.chain.is_payload_verified(&middle_root));
    b.wait_until("the lookup's outcome", || {
        let n = b.counter("beacon_sync_lookups_total", &[]);
        async move { n >= 1.0 }
    })
    .await;
    assert_eq!(
        b.counter("beacon_sync_lookups_total", &[("result", "imported")]),
        1.0
    );
    assert_eq!(
        served(&a, "execution_payload_envelopes_by_root"),
        1.0,
        "both envelopes in one request"
    );
    assert_eq!(b.counter("beacon_sync_envelope_lookups_total", &[]), 0.0);
    assert_eq!(b.counter("beacon_sync_blocks_imported_total", &[]), 0.0);
    a.stop().await;
    b.stop().await;
}

/// As [`a_missing_envelope_before_a_batch_is_looked_up_by_root_and_the_batch_retried`], from a
/// peer that serves the batches honestly but answers the envelope by root with another block's:
/// it is penalised and the lookup fails (nobody else to ask); once an honest peer joins, the
/// envelope comes from it and the chain completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_answering_another_blocks_envelope_by_root_is_penalised() {
    let spec = fulu_then_gloas();
    let anchor = anchor(&spec);
    let (a, served_chain) = serving_node(&spec, &anchor).await;
    let head = a.chain.head();
    let missing = served_chain.root_at(BLOB_SLOT);

    let blocks: Vec<Arc<types::SignedBeaconBlock<E>>> = served_chain
        .gloas
        .iter()
        .map(|g| Arc::new(g.built.block.clone()))
        .collect();
    let envelopes: Vec<(Slot, Arc<SignedExecutionPayloadEnvelope<E>>)> = served_chain
        .gloas
        .iter()
        .filter(|g| !g.withheld)
        .map(|g| (g.built.block.slot(), Arc::new(g.envelope.clone())))
        .collect();
    // Another block's envelope (the fork block's), for any root.
    let wrong = envelopes[0].1.clone();
    assert_ne!(wrong.message.beacon_block_root, missing);
    let in_range = |slot: Slot, start: Slot, count: u64| slot >= start && slot < start + count;
    let serve: Server = Box::new(move |request| match request {
        Request::BlocksByRange(req) => Some(Response::success(
            blocks
                .iter()
                .filter(|b| in_range(b.slot(), req.start_slot, req.count))
                .map(|b| ResponseItem::Block(b.clone()))
                .collect(),
        )),
        Request::ExecutionPayloadEnvelopesByRange(req) => Some(Response::success(
            envelopes
                .iter()
                .filter(|(slot, _)| in_range(*slot, req.start_slot, req.count))
                .map(|(_, e)| ResponseItem::ExecutionPayloadEnvelope(e.clone()))
                .collect(),
        )),
        Request::DataColumnsByRange(_) => Some(Response::success(Vec::new())),
        Request::ExecutionPayloadEnvelopesByRoot(_) => Some(Response::success(vec![
            ResponseItem::ExecutionPayloadEnvelope(wrong.clone()),
        ])),
        _ => None,
    });
    let status = router::status::local_status(a.router.as_ref().unwrap().router());
    let bad_peer = Client::serving(&spec, LAST_SLOT, status, vec![], serve).await;
    let bad_peer_id = bad_peer.network.local_peer_id();

    let b = node_missing_the_envelope_of(&spec, &anchor, &served_chain, BLOB_SLOT).await;
    b.network.dial(bad_peer.network.tcp_addr().unwrap());
    b.wait_until("an envelope lookup failed", || {
        let n = b.counter(
            "beacon_sync_envelope_lookups_total",
            &[("result", "failed")],
        );
        async move { n >= 1.0 }
    })
    .await;
    let score = b.network.peer_score(bad_peer_id).await;
    assert!(score < 0.0, "penalised: {score}");
    assert!(!b.chain.is_payload_verified(&missing));
    assert!(
        !b.chain
            .is_block_imported(&served_chain.root_at(BLOB_SLOT + 1)),
        "the child waits for the payload"
    );

    // An honest peer joins: the envelope (and the batches) come from it.
    b.network.dial(a.tcp_addr());
    b.wait_for_head(head.block_root).await;
    assert!(b.chain.is_payload_verified(&missing));
    assert!(served(&a, "execution_payload_envelopes_by_root") >= 1.0);
    assert!(
        b.counter(
            "beacon_sync_envelope_lookups_total",
            &[("result", "imported")]
        ) >= 1.0
    );
    a.stop().await;
    b.stop().await;
}
