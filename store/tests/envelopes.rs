//! Gloas's execution payload envelopes: stored with or after their block, read back as received
//! and decoded, kept across a reopen, pruned after the serving window and with abandoned forks,
//! and the table created by the migration from schema 4.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::{Chain, E, SPE, arbitrary, fulu_spec, synthetic_root};
use redb::{ReadableDatabase, TableHandle};
use ssz::Encode;
use store::schema::{
    CURRENT_SCHEMA_VERSION, EXECUTION_PAYLOAD_ENVELOPE_SLOTS, EXECUTION_PAYLOAD_ENVELOPES, META,
    SCHEMA_VERSION_KEY,
};
use store::{Store, StoreConfig, StoreError};
use types::gloas::SignedExecutionPayloadEnvelope;
use types::phase0::Checkpoint;
use types::{ChainSpec, ForkName, Root, SignedBeaconBlock, Slot};

fn config() -> StoreConfig {
    StoreConfig {
        cold_snapshot_interval: 2 * SPE,
        cold_diff_interval: SPE,
        cache_size_bytes: 1 << 20,
        quick_repair: true,
    }
}

/// Every fork through Gloas at genesis.
fn gloas_spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas)
}

/// Fulu at genesis, Gloas from epoch 1 (slot 8).
fn fulu_then_gloas() -> ChainSpec {
    let mut spec = fulu_spec();
    spec.gloas_fork_epoch = 1;
    spec
}

/// A Gloas block at `slot` on `branch`, child of `parent_root`.
fn gloas_block(slot: Slot, parent_root: Root, branch: u64) -> SignedBeaconBlock<E> {
    let mut block: types::gloas::SignedBeaconBlock<E> = arbitrary(4 * 1024, 11);
    block.message.slot = slot;
    block.message.proposer_index = branch;
    block.message.parent_root = parent_root;
    block.message.state_root = synthetic_root(9, slot, branch);
    SignedBeaconBlock::Gloas(block)
}

/// An envelope for the block `block_root` at `slot`, its other fields from `seed`.
fn envelope(block_root: Root, slot: Slot, seed: u64) -> SignedExecutionPayloadEnvelope<E> {
    let mut envelope: SignedExecutionPayloadEnvelope<E> = arbitrary(8 * 1024, seed);
    envelope.message.beacon_block_root = block_root;
    envelope.message.payload.slot_number = slot;
    envelope
}

/// Stores a Gloas block at each slot of `slots` (each the child of the one before, the first a
/// child of zero) with its envelope, one batch per slot; returns `(slot, root, envelope)`.
fn import_with_envelopes(
    store: &Store<E>,
    slots: impl IntoIterator<Item = Slot>,
) -> Vec<(Slot, Root, SignedExecutionPayloadEnvelope<E>)> {
    let mut parent = Root::ZERO;
    let mut out = Vec::new();
    for slot in slots {
        let block = gloas_block(slot, parent, 0);
        let root = block.canonical_root();
        let envelope = envelope(root, slot, slot);
        let mut batch = store.begin_batch().unwrap();
        batch.put_block(root, &block).unwrap();
        batch
            .put_execution_payload_envelope_ssz(&envelope.as_ssz_bytes())
            .unwrap();
        batch.commit().unwrap();
        out.push((slot, root, envelope));
        parent = root;
    }
    out
}

#[test]
fn an_envelope_round_trips_as_received_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let stored = {
        let store: Store<E> = Store::open(&path, gloas_spec(), config()).unwrap();
        let stored = import_with_envelopes(&store, [3, 5]);
        for (_, root, envelope) in &stored {
            assert!(store.has_execution_payload_envelope(root).unwrap());
            assert_eq!(
                store.get_execution_payload_envelope_ssz(root).unwrap(),
                Some(envelope.as_ssz_bytes())
            );
            assert_eq!(
                store.get_execution_payload_envelope(root).unwrap().as_ref(),
                Some(envelope)
            );
        }
        // A block without an envelope (an EMPTY one) has none.
        assert_eq!(
            store
                .get_execution_payload_envelope(&Root::repeat_byte(7))
                .unwrap(),
            None
        );
        stored
    };
    let store: Store<E> = Store::open(&path, gloas_spec(), config()).unwrap();
    for (_, root, envelope) in &stored {
        assert_eq!(
            store.get_execution_payload_envelope(root).unwrap().as_ref(),
            Some(envelope)
        );
    }
    let by_slot: Vec<(Slot, Root)> = stored.iter().map(|(s, r, _)| (*s, *r)).collect();
    assert_eq!(
        store.execution_payload_envelope_roots(0, 100).unwrap(),
        by_slot
    );
    assert_eq!(
        store.execution_payload_envelope_roots(4, 5).unwrap(),
        vec![]
    );
    assert_eq!(
        store.execution_payload_envelope_roots(4, 6).unwrap(),
        by_slot[1..].to_vec()
    );
}

#[test]
fn an_envelope_is_stored_in_the_batch_of_its_block_or_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let store: Store<E> = Store::open(&dir.path().join("db"), gloas_spec(), config()).unwrap();
    let block = gloas_block(4, Root::ZERO, 0);
    let root = block.canonical_root();

    // Before its block: refused, and the batch stores nothing.
    let mut batch = store.begin_batch().unwrap();
    let err = batch
        .put_execution_payload_envelope(&envelope(root, 4, 1))
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::InvalidInput {
                what: "execution payload envelope",
                ..
            }
        ),
        "{err}"
    );
    drop(batch);
    assert!(!store.has_execution_payload_envelope(&root).unwrap());

    // Its block in an earlier batch: stored.
    store.put_block(root, &block).unwrap();
    let mut batch = store.begin_batch().unwrap();
    // A payload whose slot_number is not its block's slot: refused.
    let err = batch
        .put_execution_payload_envelope(&envelope(root, 5, 1))
        .unwrap_err();
    assert!(err.to_string().contains("slot_number 5"), "{err}");
    batch
        .put_execution_payload_envelope(&envelope(root, 4, 1))
        .unwrap();
    batch.commit().unwrap();
    assert_eq!(
        store.get_execution_payload_envelope(&root).unwrap(),
        Some(envelope(root, 4, 1))
    );

    // Bytes that are not an envelope.
    let mut batch = store.begin_batch().unwrap();
    assert!(matches!(
        batch.put_execution_payload_envelope_ssz(&[1, 2, 3]),
        Err(StoreError::InvalidInput { .. })
    ));

    // Deleted again, with its index entry.
    assert!(batch.delete_execution_payload_envelope(root).unwrap());
    assert!(!batch.delete_execution_payload_envelope(root).unwrap());
    batch.commit().unwrap();
    assert!(!store.has_execution_payload_envelope(&root).unwrap());
    assert_eq!(
        store.execution_payload_envelope_roots(0, 100).unwrap(),
        vec![]
    );
}

#[test]
fn an_envelope_of_a_block_before_gloas_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store: Store<E> = Store::open(&dir.path().join("db"), fulu_then_gloas(), config()).unwrap();
    // A Fulu block at slot 1.
    let block = Chain::block(1, 0);
    let root = block.canonical_root();
    store.put_block(root, &block).unwrap();
    let mut batch = store.begin_batch().unwrap();
    let err = batch
        .put_execution_payload_envelope(&envelope(root, 1, 2))
        .unwrap_err();
    assert!(err.to_string().contains("fulu slot"), "{err}");
}

#[test]
fn envelopes_are_pruned_after_the_serving_window() {
    let dir = tempfile::tempdir().unwrap();
    // A window of 2 epochs: MIN_VALIDATOR_WITHDRAWABILITY_DELAY 2 and no churn term.
    let mut spec = gloas_spec();
    spec.min_validator_withdrawability_delay = 2;
    spec.churn_limit_quotient_gloas = 0;
    spec.consolidation_churn_limit_quotient = 0;
    assert_eq!(spec.compute_min_epochs_for_block_requests_gloas(), 2);
    let store: Store<E> = Store::open(&dir.path().join("db"), spec, config()).unwrap();
    let stored = import_with_envelopes(&store, [SPE, 2 * SPE, 3 * SPE]);
    let root_at = |i: usize| stored[i].1;

    // At epoch 3 the window starts at epoch 1: everything stays.
    assert_eq!(store.prune_execution_payload_envelopes(3).unwrap(), 0);
    assert_eq!(
        store
            .execution_payload_envelope_roots(0, 100)
            .unwrap()
            .len(),
        3
    );
    // At epoch 4 it starts at epoch 2 (slot 16): the envelope of slot 8 goes.
    assert_eq!(store.prune_execution_payload_envelopes(4).unwrap(), 1);
    assert!(!store.has_execution_payload_envelope(&root_at(0)).unwrap());
    assert!(store.has_execution_payload_envelope(&root_at(1)).unwrap());
    assert!(store.has_execution_payload_envelope(&root_at(2)).unwrap());
    assert_eq!(
        store.execution_payload_envelope_roots(0, 100).unwrap(),
        vec![(2 * SPE, root_at(1)), (3 * SPE, root_at(2))]
    );
    // The blocks stay: only the envelopes have a window.
    assert!(store.get_block(&root_at(0)).unwrap().is_some());
    // Nothing more to prune at the same epoch.
    assert_eq!(store.prune_execution_payload_envelopes(4).unwrap(), 0);
}

#[test]
fn finalization_drops_the_envelopes_of_abandoned_forks_and_keeps_the_finalized_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store: Store<E> = Store::open(&dir.path().join("db"), fulu_then_gloas(), config()).unwrap();
    store
        .init_anchor(
            Chain::state_root(0, 0),
            &Chain::state(0, 0),
            Chain::block_root(0, 0),
            &Chain::block(0, 0),
        )
        .unwrap();
    // Fulu blocks 1..=7, then two Gloas children of block 7 at slot 8: the canonical one
    // (finalized below) and a sibling that finalization abandons.
    for slot in 1..8 {
        store
            .put_block(Chain::block_root(slot, 0), &Chain::block(slot, 0))
            .unwrap();
    }
    let parent = Chain::block_root(7, 0);
    let canonical = gloas_block(8, parent, 0);
    let canonical_root = canonical.canonical_root();
    let sibling = gloas_block(8, parent, 1);
    let sibling_root = sibling.canonical_root();
    let mut batch = store.begin_batch().unwrap();
    for (root, block) in [(canonical_root, &canonical), (sibling_root, &sibling)] {
        batch.put_block(root, block).unwrap();
        batch
            .put_execution_payload_envelope(&envelope(root, 8, root.0[0].into()))
            .unwrap();
    }
    batch
        .put_state(Chain::state_root(8, 0), &Chain::state(8, 0))
        .unwrap();
    batch.commit().unwrap();

    let summary = store
        .migrate_to_finalized(
            &Checkpoint {
                epoch: 1,
                root: canonical_root,
            },
            Chain::state_root(8, 0),
        )
        .unwrap();
    assert_eq!(summary.blocks_pruned, 1);
    assert_eq!(summary.envelopes_expired, 0);
    assert!(
        store
            .has_execution_payload_envelope(&canonical_root)
            .unwrap()
    );
    assert!(!store.has_execution_payload_envelope(&sibling_root).unwrap());
    assert_eq!(
        store.execution_payload_envelope_roots(0, 100).unwrap(),
        vec![(8, canonical_root)]
    );
}

#[test]
fn a_schema_4_database_gets_the_envelope_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let block = gloas_block(2, Root::ZERO, 0);
    let root = block.canonical_root();
    {
        let store: Store<E> = Store::open(&path, gloas_spec(), config()).unwrap();
        store.put_block(root, &block).unwrap();
    }
    // Schema 4 is schema 5 without the envelope tables.
    {
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        assert!(txn.delete_table(EXECUTION_PAYLOAD_ENVELOPES).unwrap());
        assert!(txn.delete_table(EXECUTION_PAYLOAD_ENVELOPE_SLOTS).unwrap());
        txn.open_table(META)
            .unwrap()
            .insert(SCHEMA_VERSION_KEY, 4u64.to_le_bytes().as_slice())
            .unwrap();
        txn.commit().unwrap();
    }
    let err = Store::<E>::open(&path, gloas_spec(), config())
        .err()
        .expect("refused");
    assert!(
        matches!(err, StoreError::SchemaTooOld { found: 4, .. }),
        "{err}"
    );
    let (store, migrated) = Store::<E>::open_migrating(&path, gloas_spec(), config()).unwrap();
    assert_eq!(migrated, Some((4, CURRENT_SCHEMA_VERSION)));
    assert_eq!(CURRENT_SCHEMA_VERSION, 5);
    assert!(!store.has_execution_payload_envelope(&root).unwrap());
    let mut batch = store.begin_batch().unwrap();
    batch
        .put_execution_payload_envelope(&envelope(root, 2, 3))
        .unwrap();
    batch.commit().unwrap();
    assert_eq!(
        store.get_execution_payload_envelope(&root).unwrap(),
        Some(envelope(root, 2, 3))
    );
    drop(store);
    // The tables are there for good.
    let db = redb::Database::create(&path).unwrap();
    let names: Vec<String> = db
        .begin_read()
        .unwrap()
        .list_tables()
        .unwrap()
        .map(|t| t.name().to_owned())
        .collect();
    for table in [
        EXECUTION_PAYLOAD_ENVELOPES.name(),
        EXECUTION_PAYLOAD_ENVELOPE_SLOTS.name(),
    ] {
        assert!(names.iter().any(|n| n == table), "{table} in {names:?}");
    }
}
