//! The oldest-block record: set by the anchor, moved back by backfilled blocks in the same
//! batch, kept across a reopen, and refusing blocks or records that do not fit.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::{Chain, E, fulu_spec};
use ssz::Encode;
use store::{OldestBlock, Store, StoreConfig, StoreError};
use types::{Root, Slot};

const ANCHOR: Slot = 16;

fn open(dir: &tempfile::TempDir) -> Store<E> {
    Store::open(&dir.path().join("db"), fulu_spec(), StoreConfig::default()).unwrap()
}

fn anchored(dir: &tempfile::TempDir, slot: Slot) -> Store<E> {
    let store = open(dir);
    store
        .init_anchor(
            Chain::state_root(slot, 0),
            &Chain::state(slot, 0),
            Chain::block_root(slot, 0),
            &Chain::block(slot, 0),
        )
        .unwrap();
    store
}

fn oldest_at(slot: Slot) -> OldestBlock {
    let block = Chain::block(slot, 0);
    OldestBlock {
        slot,
        root: block.canonical_root(),
        parent_root: block.parent_root(),
    }
}

/// Backfills the canonical blocks of `slots` (newest first) in one batch.
fn backfill(store: &Store<E>, slots: &[Slot]) {
    let mut batch = store.begin_batch().unwrap();
    for &slot in slots {
        let block = Chain::block(slot, 0);
        batch
            .put_backfilled_block(block.canonical_root(), &block)
            .unwrap();
    }
    batch
        .set_oldest_block(oldest_at(*slots.last().unwrap()))
        .unwrap();
    batch.commit().unwrap();
}

#[test]
fn the_anchor_is_the_oldest_block_and_genesis_needs_no_backfill() {
    let dir = tempfile::tempdir().unwrap();
    let store = anchored(&dir, ANCHOR);
    let oldest = store.oldest_block().unwrap().unwrap();
    assert_eq!(oldest, oldest_at(ANCHOR));
    assert_eq!(oldest.parent_root, Chain::block_root(ANCHOR - 1, 0));
    assert!(!oldest.is_genesis());

    let dir = tempfile::tempdir().unwrap();
    let store = anchored(&dir, 0);
    let oldest = store.oldest_block().unwrap().unwrap();
    assert!(oldest.is_genesis());
    assert_eq!(oldest.parent_root, Root::ZERO);

    let dir = tempfile::tempdir().unwrap();
    assert_eq!(open(&dir).oldest_block().unwrap(), None, "no anchor yet");
}

#[test]
fn backfilled_blocks_are_served_by_slot_and_the_record_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = anchored(&dir, ANCHOR);
    backfill(&store, &[15, 14, 13, 12, 11, 10, 9, 8]);
    assert_eq!(store.oldest_block().unwrap(), Some(oldest_at(8)));
    drop(store);

    let store = open(&dir);
    assert_eq!(store.oldest_block().unwrap(), Some(oldest_at(8)), "resumed");
    backfill(&store, &[7, 6, 5, 4, 3, 2, 1, 0]);
    let oldest = store.oldest_block().unwrap().unwrap();
    assert!(oldest.is_genesis());
    for slot in 0..ANCHOR {
        let block = Chain::block(slot, 0);
        let root = block.canonical_root();
        assert_eq!(store.block_root_at_slot(slot).unwrap(), Some(root));
        assert_eq!(
            store.get_block_ssz(&root).unwrap().unwrap(),
            block.as_ssz_bytes(),
            "slot {slot} byte for byte"
        );
    }
}

#[test]
fn a_batch_not_committed_leaves_the_record_and_the_blocks_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let store = anchored(&dir, ANCHOR);
    {
        let mut batch = store.begin_batch().unwrap();
        let block = Chain::block(15, 0);
        batch
            .put_backfilled_block(block.canonical_root(), &block)
            .unwrap();
        batch.set_oldest_block(oldest_at(15)).unwrap();
        // Dropped: as a crash before the commit.
    }
    assert_eq!(store.oldest_block().unwrap(), Some(oldest_at(ANCHOR)));
    assert_eq!(store.block_root_at_slot(15).unwrap(), None);
}

#[test]
fn refuses_blocks_at_or_after_the_oldest_and_records_that_do_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let store = anchored(&dir, ANCHOR);
    backfill(&store, &[15, 14]);
    let mut batch = store.begin_batch().unwrap();
    let at_oldest = Chain::block(14, 0);
    assert!(matches!(
        batch.put_backfilled_block(at_oldest.canonical_root(), &at_oldest),
        Err(StoreError::InvalidInput { .. })
    ));
    let after = Chain::block(ANCHOR + 1, 0);
    assert!(matches!(
        batch.put_backfilled_block(after.canonical_root(), &after),
        Err(StoreError::InvalidInput { .. })
    ));
    // A record naming a block the store does not hold at its slot.
    assert!(matches!(
        batch.set_oldest_block(oldest_at(13)),
        Err(StoreError::InvalidInput { .. })
    ));
    // A record moving forward again.
    assert!(matches!(
        batch.set_oldest_block(oldest_at(15)),
        Err(StoreError::InvalidInput { .. })
    ));
    drop(batch);
    assert_eq!(store.oldest_block().unwrap(), Some(oldest_at(14)));
}
