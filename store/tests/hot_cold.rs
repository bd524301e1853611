//! The hot/cold split: replay between snapshots, the finalization migration, pruning of
//! abandoned forks and sidecar retention.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::{
    Chain, E, NUMBER_OF_COLUMNS, SPE, SlotReplayer, fulu_spec, header_of, snapshot_files,
};
use ssz::Encode;
use store::{Head, Store, StoreConfig, StoreError, StoredAs};
use types::phase0::Checkpoint;
use types::{ChainSpec, Root, Slot};

/// Cold snapshot every 2 epochs, diff every epoch.
fn config() -> StoreConfig {
    StoreConfig {
        cold_snapshot_interval: 2 * SPE,
        cold_diff_interval: SPE,
        cache_size_bytes: 16 << 20,
        quick_repair: true,
    }
}

fn open_with(dir: &tempfile::TempDir, spec: ChainSpec) -> Store<E> {
    let store = Store::open(&dir.path().join("db"), spec, config()).unwrap();
    store
        .init_anchor(
            Chain::state_root(0, 0),
            &Chain::state(0, 0),
            Chain::block_root(0, 0),
            &Chain::block(0, 0),
        )
        .unwrap();
    store
}

/// Imports the canonical block, its state and `columns` columns at each slot of `slots`.
fn import(store: &Store<E>, slots: impl IntoIterator<Item = Slot>, branch: u64, blobs: usize) {
    for slot in slots {
        let block = Chain::block(slot, branch);
        let root = block.canonical_root();
        let mut batch = store.begin_batch().unwrap();
        batch.put_block_ssz(root, &block.as_ssz_bytes()).unwrap();
        batch
            .put_state(Chain::state_root(slot, branch), &Chain::state(slot, branch))
            .unwrap();
        if blobs > 0 {
            for c in Chain::columns(slot, branch, blobs) {
                batch.put_data_column(root, &c).unwrap();
            }
        }
        if branch == 0 {
            batch
                .set_head(Head {
                    block_root: root,
                    state_root: Chain::state_root(slot, 0),
                    slot,
                })
                .unwrap();
        }
        batch.commit().unwrap();
    }
}

fn finalize(store: &Store<E>, epoch: u64) -> store::MigrationSummary {
    let slot = epoch * SPE;
    store
        .migrate_to_finalized(
            &Checkpoint {
                epoch,
                root: Chain::block_root(slot, 0),
            },
            Chain::state_root(slot, 0),
        )
        .unwrap()
}

#[test]
fn a_hot_state_is_its_epoch_snapshot_plus_the_blocks_since() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    import(&store, 1..=12, 0, 0);

    let mut replayer = SlotReplayer::default();
    let state = store
        .get_state(&Chain::state_root(11, 0), &mut replayer)
        .unwrap()
        .expect("stored");
    let expected: Vec<_> = (9..=11).map(|s| Chain::block_root(s, 0)).collect();
    assert_eq!(
        replayer.applied, expected,
        "blocks after the slot-8 snapshot"
    );
    assert_eq!(*state.slot(), 11);
    assert_eq!(
        state.latest_block_header(),
        &header_of(&Chain::block(11, 0))
    );

    // An epoch-boundary state is its own snapshot: nothing to replay, and exactly as stored.
    let mut replayer = SlotReplayer::default();
    let state = store
        .get_state(&Chain::state_root(8, 0), &mut replayer)
        .unwrap()
        .expect("stored");
    assert!(replayer.applied.is_empty());
    common::assert_same_state(&state, &Chain::state(8, 0));

    assert_eq!(
        store.head().unwrap().map(|h| h.block_root),
        Some(Chain::block_root(12, 0))
    );
}

/// An epoch whose first slot is empty: its first block's state is stored whole, and the
/// later states of the epoch are replayed from it (they were each stored whole before).
#[test]
fn an_epoch_with_an_empty_first_slot_stores_one_whole_state() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    import(&store, 1..=7, 0, 0);
    let mut whole = Vec::new();
    for slot in 9..=12 {
        let block = Chain::block(slot, 0);
        let mut batch = store.begin_batch().unwrap();
        batch
            .put_block_ssz(block.canonical_root(), &block.as_ssz_bytes())
            .unwrap();
        if batch
            .put_state(Chain::state_root(slot, 0), &Chain::state(slot, 0))
            .unwrap()
        {
            whole.push(slot);
        }
        batch.commit().unwrap();
    }
    assert_eq!(whole, vec![9]);
    let mut replayer = SlotReplayer::default();
    let state = store
        .get_state(&Chain::state_root(12, 0), &mut replayer)
        .unwrap()
        .expect("stored");
    let expected: Vec<_> = (10..=12).map(|s| Chain::block_root(s, 0)).collect();
    assert_eq!(replayer.applied, expected, "blocks after the slot-9 state");
    assert_eq!(*state.slot(), 12);
}

#[test]
fn finalization_moves_the_chain_to_cold_and_prunes_abandoned_forks() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    import(&store, 1..=26, 0, 1);
    // Forks: one that finalization abandons (slot 5) and one still undecided (slot 25).
    import(&store, [5], 1, 1);
    import(&store, [25], 2, 1);
    let abandoned = Chain::block_root(5, 1);
    let undecided = Chain::block_root(25, 2);

    let snapshots = snapshot_files(&store);
    assert!(snapshots.contains(&Chain::state_root(8, 0)));
    let summary = finalize(&store, 2);
    // The snapshots before the checkpoint went with their references.
    let after = snapshot_files(&store);
    assert!(!after.contains(&Chain::state_root(0, 0)));
    assert!(!after.contains(&Chain::state_root(8, 0)));
    assert!(after.contains(&Chain::state_root(16, 0)));
    assert!(after.contains(&Chain::state_root(24, 0)));
    assert_eq!(summary.blocks_finalized, 16, "blocks 1..=16");
    assert_eq!(summary.blocks_pruned, 1, "the fork at slot 5");
    assert_eq!(summary.cold_snapshots, 1, "slot 16");
    assert_eq!(
        summary.cold_diffs, 1,
        "slot 8, against the anchor snapshot at 0"
    );
    assert_eq!(summary.cold_states_missing, 0);
    // The cold snapshots (the anchor's and slot 16's) are files; the diff is not.
    assert_eq!(
        store.cold_snapshots().unwrap(),
        vec![
            (0, Some(Chain::state_root(0, 0))),
            (16, Some(Chain::state_root(16, 0)))
        ]
    );
    let mut cold = vec![Chain::state_root(0, 0), Chain::state_root(16, 0)];
    cold.sort();
    assert_eq!(common::cold_snapshot_files(&store), cold);
    let mut replayer = SlotReplayer::default();
    let at_16 = store
        .get_cold_state_by_slot(16, &mut replayer)
        .unwrap()
        .unwrap();
    common::assert_same_state(&at_16, &Chain::state(16, 0));

    let split = store.split().unwrap().unwrap();
    assert_eq!(split.slot, 16);
    assert_eq!(split.block_root, Chain::block_root(16, 0));
    assert_eq!(
        store.finalized_checkpoint().unwrap(),
        Some(Checkpoint {
            epoch: 2,
            root: Chain::block_root(16, 0)
        })
    );

    // The abandoned fork is gone with its state and columns; the undecided one stays.
    assert_eq!(store.get_block(&abandoned).unwrap(), None);
    assert!(store.data_column_indices(&abandoned).unwrap().is_empty());
    assert!(
        store
            .get_state(&Chain::state_root(5, 1), &mut SlotReplayer::default())
            .unwrap()
            .is_none()
    );
    assert!(store.get_block(&undecided).unwrap().is_some());

    // Finalized blocks are served from cold, with their canonical slots and columns.
    for slot in 0..=16 {
        let root = Chain::block_root(slot, 0);
        assert_eq!(store.block_root_at_slot(slot).unwrap(), Some(root));
        assert_eq!(
            store.get_block_ssz(&root).unwrap(),
            Some(Chain::block(slot, 0).as_ssz_bytes())
        );
        if slot > 0 {
            assert_eq!(
                store.data_column_indices(&root).unwrap().len() as u64,
                NUMBER_OF_COLUMNS
            );
        }
    }
    assert_eq!(store.block_root_at_slot(17).unwrap(), None, "not finalized");

    // A cold grid state stored as a diff comes back exactly.
    let mut replayer = SlotReplayer::default();
    let at_8 = store
        .get_cold_state_by_slot(8, &mut replayer)
        .unwrap()
        .unwrap();
    common::assert_same_state(&at_8, &Chain::state(8, 0));
    assert!(replayer.applied.is_empty());

    // A finalized state between grid points, by root: the diff at 8 plus blocks 9..=12.
    let mut replayer = SlotReplayer::default();
    let at_12 = store
        .get_state(&Chain::state_root(12, 0), &mut replayer)
        .unwrap()
        .expect("finalized state root known");
    assert_eq!(
        replayer.applied,
        (9..=12)
            .map(|s| Chain::block_root(s, 0))
            .collect::<Vec<_>>()
    );
    assert_eq!(*at_12.slot(), 12);
    assert_eq!(
        at_12.latest_block_header(),
        &header_of(&Chain::block(12, 0))
    );

    // Hot states after the checkpoint still load from hot.
    let mut replayer = SlotReplayer::default();
    let at_19 = store
        .get_state(&Chain::state_root(19, 0), &mut replayer)
        .unwrap()
        .unwrap();
    assert_eq!(*at_19.slot(), 19);
    assert_eq!(replayer.applied.len(), 3);

    // Later finalizations continue from the split. Epoch 3 finalizes block 24, the parent of the
    // fork at 25, so that fork is still a candidate and stays.
    let summary = finalize(&store, 3);
    assert_eq!(summary.blocks_finalized, 8);
    assert!(store.get_block(&undecided).unwrap().is_some());
    assert_eq!(
        store.block_root_at_slot(24).unwrap(),
        Some(Chain::block_root(24, 0))
    );
}

#[test]
fn a_batch_dropped_without_a_commit_leaves_no_state_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    let mut batch = store.begin_batch().unwrap();
    assert!(
        batch
            .put_state(Chain::state_root(8, 0), &Chain::state(8, 0))
            .unwrap(),
        "an epoch boundary is stored whole"
    );
    assert_eq!(
        std::fs::read_dir(store.state_files_dir()).unwrap().count(),
        2,
        "written before the commit"
    );
    drop(batch);
    assert_eq!(snapshot_files(&store).len(), 1, "only the anchor's");

    // Committed, it stays; stored again, the file is not rewritten.
    let mut batch = store.begin_batch().unwrap();
    batch
        .put_state(Chain::state_root(8, 0), &Chain::state(8, 0))
        .unwrap();
    batch.commit().unwrap();
    let file = store
        .state_files_dir()
        .join(format!("{}.ssz", Chain::state_root(8, 0)));
    let written = std::fs::metadata(&file).unwrap().modified().unwrap();
    let mut batch = store.begin_batch().unwrap();
    batch
        .put_state(Chain::state_root(8, 0), &Chain::state(8, 0))
        .unwrap();
    drop(batch);
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        written
    );
    assert_eq!(snapshot_files(&store).len(), 2);
}

/// Stores the block and its post-state at each slot, deferring snapshots; how each was stored.
fn import_deferring(store: &Store<E>, slots: impl IntoIterator<Item = Slot>) -> Vec<StoredAs> {
    slots
        .into_iter()
        .map(|slot| {
            let block = Chain::block(slot, 0);
            let mut batch = store.begin_batch().unwrap();
            batch.put_block(block.canonical_root(), &block).unwrap();
            let stored = batch
                .put_state_deferring_snapshot(Chain::state_root(slot, 0), &Chain::state(slot, 0))
                .unwrap();
            batch.commit().unwrap();
            stored
        })
        .collect()
}

#[test]
fn a_deferred_snapshot_loads_by_replay_until_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    import(&store, 1..=7, 0, 0);
    let stored = import_deferring(&store, 8..=11);
    use StoredAs::{PendingSnapshot, Summary, Whole};
    assert_eq!(stored, [PendingSnapshot, Summary, Summary, Summary]);
    let root_8 = Chain::state_root(8, 0);
    assert_eq!(store.pending_snapshots().unwrap(), [(root_8, 8)]);
    assert_eq!(snapshot_files(&store).len(), 1, "the anchor's only");

    // Until written, the epoch's states load from the anchor's snapshot.
    for (slot, replayed) in [(8, 8), (11, 11)] {
        let mut replayer = SlotReplayer::default();
        let state = store
            .get_state(&Chain::state_root(slot, 0), &mut replayer)
            .unwrap()
            .expect("stored");
        assert_eq!(*state.slot(), slot);
        assert_eq!(
            state.latest_block_header(),
            &header_of(&Chain::block(slot, 0))
        );
        assert_eq!(replayer.applied.len(), replayed);
    }

    assert!(
        store
            .write_pending_snapshot(root_8, &Chain::state(8, 0), Some(b"fork choice"))
            .unwrap()
    );
    assert_eq!(
        store.fork_choice().unwrap().as_deref(),
        Some(&b"fork choice"[..])
    );
    assert!(store.pending_snapshots().unwrap().is_empty());
    assert!(snapshot_files(&store).contains(&root_8));
    let mut replayer = SlotReplayer::default();
    store
        .get_state(&Chain::state_root(11, 0), &mut replayer)
        .unwrap()
        .expect("stored");
    assert_eq!(
        replayer.applied.len(),
        3,
        "blocks 9..=11 on the written snapshot"
    );
    // Written once: nothing pending any more, and the states after it name it.
    assert!(
        !store
            .write_pending_snapshot(root_8, &Chain::state(8, 0), None)
            .unwrap()
    );
    assert_eq!(import_deferring(&store, [12]), [Summary]);
    // An epoch's snapshot that is stored whole already is kept as it is.
    assert_eq!(import_deferring(&store, [8]), [Whole]);
}

#[test]
fn a_deferred_snapshot_after_an_empty_first_slot_names_the_checkpoint_state_once_finalized() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    import(&store, 1..=15, 0, 0);
    // Slot 16 is empty: block 17 is on block 15, and its post-state is the epoch's snapshot,
    // deferred (naming the slot-8 snapshot through state 15).
    let mut block_17 = Chain::block(17, 0);
    let types::SignedBeaconBlock::Fulu(inner) = &mut block_17 else {
        unreachable!("a Fulu chain")
    };
    inner.message.parent_root = Chain::block_root(15, 0);
    let mut state_17 = Chain::state(17, 0);
    let mut header = block_17.signed_block_header().message;
    header.state_root = Root::ZERO;
    *state_17.latest_block_header_mut() = header;
    let root_17 = Chain::state_root(17, 0);
    let mut batch = store.begin_batch().unwrap();
    batch
        .put_block(block_17.canonical_root(), &block_17)
        .unwrap();
    assert_eq!(
        batch
            .put_state_deferring_snapshot(root_17, &state_17)
            .unwrap(),
        StoredAs::PendingSnapshot
    );
    batch.commit().unwrap();

    // Epoch 2 finalizes on block 15; its checkpoint state (block 15 advanced to slot 16) is
    // stored whole first, as the chain does. The slot-8 snapshot goes; state 17 now names
    // the checkpoint state and loads from it.
    let mut checkpoint_state = Chain::state(16, 0);
    *checkpoint_state.latest_block_header_mut() = Chain::block(15, 0).signed_block_header().message;
    let checkpoint_root = Chain::state_root(16, 0);
    store.put_state(checkpoint_root, &checkpoint_state).unwrap();
    let summary = store
        .migrate_to_finalized(
            &Checkpoint {
                epoch: 2,
                root: Chain::block_root(15, 0),
            },
            checkpoint_root,
        )
        .unwrap();
    assert!(summary.states_pruned >= 15);
    assert!(!snapshot_files(&store).contains(&Chain::state_root(8, 0)));
    assert_eq!(store.pending_snapshots().unwrap(), [(root_17, 17)]);
    let mut replayer = SlotReplayer::default();
    let state = store
        .get_state(&root_17, &mut replayer)
        .unwrap()
        .expect("kept");
    assert_eq!(replayer.applied, [block_17.canonical_root()]);
    assert_eq!(*state.slot(), 17);

    // Its epoch has a snapshot now (the checkpoint state at slot 16): no longer pending, it
    // stays a summary naming that one.
    assert!(
        store
            .write_pending_snapshot(root_17, &state_17, None)
            .unwrap()
    );
    assert!(store.pending_snapshots().unwrap().is_empty());
    assert!(!snapshot_files(&store).contains(&root_17));
    let mut replayer = SlotReplayer::default();
    store.get_state(&root_17, &mut replayer).unwrap().unwrap();
    assert_eq!(replayer.applied, [block_17.canonical_root()]);
}

#[test]
fn a_pending_checkpoint_state_is_refused_by_the_migration() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    import(&store, 1..=15, 0, 0);
    import_deferring(&store, 16..=17);
    let err = store
        .migrate_to_finalized(
            &Checkpoint {
                epoch: 2,
                root: Chain::block_root(16, 0),
            },
            Chain::state_root(16, 0),
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::MissingFinalizedState(_)), "{err}");
}

#[test]
fn finalizing_the_same_checkpoint_twice_is_a_no_op_and_going_back_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    import(&store, 1..=17, 0, 0);
    finalize(&store, 2);
    assert_eq!(finalize(&store, 2), store::MigrationSummary::default());
    let err = store
        .migrate_to_finalized(
            &Checkpoint {
                epoch: 1,
                root: Chain::block_root(8, 0),
            },
            Chain::state_root(8, 0),
        )
        .unwrap_err();
    assert!(
        matches!(err, StoreError::FinalizationReverted { .. }),
        "{err}"
    );
}

#[test]
fn data_columns_are_kept_for_the_retention_window_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = fulu_spec();
    spec.min_epochs_for_data_column_sidecars_requests = 1;
    let store = open_with(&dir, spec);
    import(&store, 1..=33, 0, 1);
    finalize(&store, 2);
    // Finalized epoch 2, window 1 epoch: columns before slot 8 are gone.
    for slot in 1..=33 {
        let n = store
            .data_column_indices(&Chain::block_root(slot, 0))
            .unwrap()
            .len() as u64;
        assert_eq!(
            n,
            if slot < 8 { 0 } else { NUMBER_OF_COLUMNS },
            "slot {slot}"
        );
    }
    // The chain may prune with the wall-clock epoch, ahead of finality.
    assert!(store.prune_data_sidecars(4).unwrap() > 0);
    for slot in 1..=33 {
        let n = store
            .data_column_indices(&Chain::block_root(slot, 0))
            .unwrap()
            .len() as u64;
        assert_eq!(
            n,
            if slot < 24 { 0 } else { NUMBER_OF_COLUMNS },
            "slot {slot}"
        );
    }
}

#[test]
fn the_store_reopens_with_everything_it_committed() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open_with(&dir, fulu_spec());
        import(&store, 1..=20, 0, 1);
        finalize(&store, 1);
    }
    let store: Store<E> = Store::open(&dir.path().join("db"), fulu_spec(), config()).unwrap();
    assert_eq!(store.head().unwrap().unwrap().slot, 20);
    assert_eq!(store.split().unwrap().unwrap().slot, 8);
    assert_eq!(
        store.get_block(&Chain::block_root(20, 0)).unwrap(),
        Some(Chain::block(20, 0))
    );
    assert_eq!(
        store
            .get_data_column(&Chain::block_root(20, 0), 127)
            .unwrap(),
        Some(Chain::columns(20, 0, 1).remove(127))
    );
}

/// A head recorded without a sync (`record_head`) is read back at once, and becomes durable
/// with the next synced commit: the reopened store has it.
#[test]
fn a_recorded_head_is_read_at_once_and_kept_by_the_next_commit() {
    let dir = tempfile::tempdir().unwrap();
    let head = |slot| Head {
        block_root: Chain::block_root(slot, 0),
        state_root: Chain::state_root(slot, 0),
        slot,
    };
    {
        let store = open_with(&dir, fulu_spec());
        import(&store, 1..=4, 0, 0);
        store.record_head(head(3)).unwrap();
        assert_eq!(store.head().unwrap(), Some(head(3)));
        // A synced commit of something else.
        let mut batch = store.begin_batch().unwrap();
        batch.put_fork_choice(&[1, 2, 3]).unwrap();
        batch.commit().unwrap();
    }
    let store: Store<E> = Store::open(&dir.path().join("db"), fulu_spec(), config()).unwrap();
    assert_eq!(store.head().unwrap(), Some(head(3)));
}

#[test]
fn invalid_configurations_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (snapshot, diff) in [(0, 0), (12, 0), (16, 12), (16, 24)] {
        let config = StoreConfig {
            cold_snapshot_interval: snapshot,
            cold_diff_interval: diff,
            cache_size_bytes: 1 << 20,
            quick_repair: true,
        };
        let err = Store::<E>::open(&dir.path().join("db"), fulu_spec(), config)
            .err()
            .expect("refused");
        assert!(matches!(err, StoreError::InvalidConfig(_)), "{err}");
    }
}

#[test]
fn snapshots_only_when_diffs_are_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig {
        cold_snapshot_interval: SPE,
        cold_diff_interval: 0,
        cache_size_bytes: 1 << 20,
        quick_repair: true,
    };
    let store = Store::<E>::open(&dir.path().join("db"), fulu_spec(), config).unwrap();
    store
        .init_anchor(
            Chain::state_root(0, 0),
            &Chain::state(0, 0),
            Chain::block_root(0, 0),
            &Chain::block(0, 0),
        )
        .unwrap();
    import(&store, 1..=17, 0, 0);
    let summary = finalize(&store, 2);
    assert_eq!((summary.cold_snapshots, summary.cold_diffs), (2, 0));
    assert_eq!(
        common::cold_snapshot_files(&store).len(),
        3,
        "slots 0, 8 and 16"
    );
}

#[test]
fn snapshot_writes_finalizations_and_reads_at_once_leave_every_reference_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(&dir, fulu_spec());
    import(&store, 1..=7, 0, 0);
    let last = 6 * SPE;
    let stored = import_deferring(&store, 8..=last);
    assert_eq!(
        stored
            .iter()
            .filter(|s| **s == StoredAs::PendingSnapshot)
            .count() as u64,
        last / SPE,
        "slots 8, 16, ..., 48"
    );
    let pending = store.pending_snapshots().unwrap();
    std::thread::scope(|scope| {
        // The store writer, several times over (a late job finds its state stored or
        // pruned).
        scope.spawn(|| {
            for _ in 0..3 {
                for (root, slot) in &pending {
                    store
                        .write_pending_snapshot(*root, &Chain::state(*slot, 0), Some(b"fc"))
                        .unwrap();
                }
            }
        });
        // Readers: a state is found or (pruned meanwhile) not found, never a missing file.
        scope.spawn(|| {
            for round in 0..200u64 {
                let slot = 8 + round % (last - 8);
                match store.get_state(&Chain::state_root(slot, 0), &mut SlotReplayer::default()) {
                    Ok(_) | Err(StoreError::MissingState(_)) => {}
                    Err(e) => panic!("reading state {slot}: {e}"),
                }
            }
        });
        // Finalizations, each storing its checkpoint state first (pending or not) as the chain
        // does, and once more late: a caller that saw the same finality.
        for epoch in 1..=4 {
            let slot = epoch * SPE;
            let root = Chain::state_root(slot, 0);
            for _ in 0..2 {
                store
                    .write_pending_snapshot(root, &Chain::state(slot, 0), None)
                    .unwrap();
                store.put_state(root, &Chain::state(slot, 0)).unwrap();
                if store.split().unwrap().unwrap().slot < slot {
                    store
                        .migrate_to_finalized(
                            &Checkpoint {
                                epoch,
                                root: Chain::block_root(slot, 0),
                            },
                            root,
                        )
                        .unwrap();
                }
            }
        }
    });
    snapshot_files(&store);
    common::cold_snapshot_files(&store);
    assert!(store.pending_snapshots().unwrap().is_empty());
    for slot in 4 * SPE..=last {
        let state = store
            .get_state(&Chain::state_root(slot, 0), &mut SlotReplayer::default())
            .unwrap()
            .expect("kept");
        assert_eq!(*state.slot(), slot);
    }
}
