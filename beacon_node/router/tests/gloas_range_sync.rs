//! Range sync across the Gloas fork: a node at a Fulu anchor syncs to a peer whose chain goes
//! over to Gloas, its Gloas blocks' payloads coming as envelopes (by range, matched to their
//! blocks), their custody columns by range, and some payloads withheld (the next block builds
//! on the EMPTY variant): blocks and envelopes imported in order, the head the same block in
//! the same payload status as the peer's.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::sync::Arc;

use common::*;
use fork_choice::PayloadStatus;
use router::SyncState;
use state_harness::gloas::{
    GloasBlockContents, ParentPayload, build_gloas_block, self_built_envelope,
};
use state_harness::{AttestationSpec, BlockContents, BuiltBlock};
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{ChainSpec, DataColumnSidecar, EthSpec, ForkName, Slot};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_range_syncs_across_the_gloas_fork_with_envelopes_and_withheld_payloads() {
    let spec = fulu_then_gloas();
    let anchor = anchor(&spec);
    let fork_slot: Slot = 3 * E::slots_per_epoch();
    // Fulu blocks at slots 17 to 23.
    let fulu = build_chain(&spec, &anchor, fork_slot - ANCHOR_SLOT - 1, None);
    let last_slot: Slot = 38;
    let a = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &fulu,
            current_slot: last_slot,
            custody: None,
            static_peers: vec![],
        },
    )
    .await;

    // Gloas blocks at every slot from 24 to 38 but 30: 25's payload carries a blob (its columns
    // come by range); 26's payload is withheld (27 builds on its EMPTY variant), and so is
    // 32's, the last block of the second batch (33, in the next batch, builds on EMPTY).
    let blob_slot: Slot = 25;
    let withheld: [Slot; 2] = [26, 32];
    let (commitments, blob_columns) = gloas_blobs(1, 0x25);
    let mut gloas: Vec<GloasSlot> = Vec::new();
    let mut parent = fulu.last().unwrap().0.post.clone();
    for slot in (fork_slot..=last_slot).filter(|s| *s != 30) {
        let parent_payload = match gloas.last() {
            Some(p) if p.withheld => ParentPayload::Empty,
            _ => ParentPayload::Full,
        };
        // Votes for the slot of the block before (the whole committee of that slot).
        let previous_slot = gloas.last().map_or(fork_slot - 1, |p| p.built.block.slot());
        let contents = GloasBlockContents {
            base: BlockContents {
                attestations: vec![AttestationSpec::whole_slot(previous_slot)],
                blob_kzg_commitments: if slot == blob_slot {
                    commitments.clone()
                } else {
                    Vec::new()
                },
                ..Default::default()
            },
            parent_payload,
            ..Default::default()
        };
        let built = build_gloas_block(&parent, slot, &contents, &spec).unwrap();
        let root = built.block.canonical_root();
        a.harness
            .import_valid(Arc::new(built.block.clone()), &[])
            .unwrap();
        let envelope = self_built_envelope(&built, &spec).unwrap();
        let is_withheld = withheld.contains(&slot);
        if !is_withheld {
            let columns: Vec<DataColumnSidecar<E>> = if slot == blob_slot {
                blob_columns(root, slot)
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
    let root_at = |slot: Slot| {
        gloas
            .iter()
            .find(|g| g.built.block.slot() == slot)
            .unwrap()
            .built
            .block
            .canonical_root()
    };
    let head = a.chain.head();
    assert_eq!(
        (head.block_root, head.payload_status),
        (root_at(last_slot), Some(PayloadStatus::Full)),
        "the served chain's head is its last block, FULL"
    );
    for slot in withheld {
        assert!(!a.chain.is_payload_verified(&root_at(slot)));
    }

    let b = Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &[],
            current_slot: last_slot,
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
    for g in &gloas {
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
            .data_column_indices(&root_at(blob_slot))
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
