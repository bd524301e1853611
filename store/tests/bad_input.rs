//! A database the store cannot trust: a corrupted value, a truncated or foreign file, a schema
//! from a newer or older version. Each is a clear error that says what to do; none panics and
//! none is silently reused.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::{Chain, E, SPE, SlotReplayer, assert_same_state, fulu_spec};
use redb::{ReadableDatabase, ReadableTable};
use ssz::Encode;
use store::schema::{
    COLD_STATES, CURRENT_SCHEMA_VERSION, DATA_SIDECAR_SLOTS, HOT_STATES, META, SCHEMA_VERSION_KEY,
};
use store::{Store, StoreConfig, StoreError};

fn config() -> StoreConfig {
    StoreConfig {
        cold_snapshot_interval: 2 * SPE,
        cold_diff_interval: SPE,
        cache_size_bytes: 1 << 20,
        quick_repair: true,
    }
}

/// A database with the anchor and blocks 1..=`slots`, each with 128 one-blob columns.
fn populated(path: &std::path::Path, slots: u64) {
    let store: Store<E> = Store::open(path, fulu_spec(), config()).unwrap();
    store
        .init_anchor(
            Chain::state_root(0, 0),
            &Chain::state(0, 0),
            Chain::block_root(0, 0),
            &Chain::block(0, 0),
        )
        .unwrap();
    for slot in 1..=slots {
        let block = Chain::block(slot, 0);
        let root = block.canonical_root();
        let mut batch = store.begin_batch().unwrap();
        batch.put_block(root, &block).unwrap();
        for c in Chain::columns(slot, 0, 1) {
            batch.put_data_column(root, &c).unwrap();
        }
        batch.commit().unwrap();
    }
}

fn assert_says_purge(err: &StoreError) {
    let msg = err.to_string();
    assert!(msg.contains("--purge-db"), "no advice in: {msg}");
}

#[test]
fn a_corrupted_value_is_reported_not_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    populated(&path, 3);

    // Flip a byte inside block 2's SSZ, found in the file by its graffiti.
    let mut file = std::fs::read(&path).unwrap();
    let needle = Chain::block(2, 0).as_ssz_bytes();
    let at = file
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the block is stored as its SSZ bytes");
    file[at + needle.len() / 2] ^= 0x40;
    std::fs::write(&path, &file).unwrap();

    let store: Store<E> = Store::open(&path, fulu_spec(), config()).unwrap();
    let err = store.get_block(&Chain::block_root(2, 0)).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::CorruptValue { .. } | StoreError::Database(_)
        ),
        "{err}"
    );
    assert_says_purge(&err);
    let err = store.get_block_ssz(&Chain::block_root(2, 0)).unwrap_err();
    assert_says_purge(&err);
    // Untouched values still read.
    assert_eq!(
        store.get_block(&Chain::block_root(3, 0)).unwrap(),
        Some(Chain::block(3, 0))
    );
}

#[test]
fn a_truncated_file_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    populated(&path, 4);
    let len = std::fs::metadata(&path).unwrap().len();
    for keep in [len / 2, len / 8, 4096, 100] {
        let copy = dir.path().join(format!("db-{keep}"));
        std::fs::copy(&path, &copy).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&copy).unwrap();
        file.set_len(keep).unwrap();
        drop(file);
        match Store::<E>::open(&copy, fulu_spec(), config()) {
            Err(err) => assert_says_purge(&err),
            Ok(store) => {
                // If the header survived, every read must still fail cleanly, never panic or
                // return what was cut away.
                let read = store.get_block(&Chain::block_root(4, 0));
                assert!(
                    !matches!(read, Ok(Some(_))),
                    "a truncated file served a block"
                );
            }
        }
    }
}

#[test]
fn a_file_that_is_not_a_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    std::fs::write(&path, common::noise(64 * 1024, 5)).unwrap();
    let err = Store::<E>::open(&path, fulu_spec(), config())
        .err()
        .expect("refused");
    assert!(matches!(err, StoreError::Open { .. }), "{err}");
    assert_says_purge(&err);
}

#[test]
fn a_newer_schema_is_refused_with_advice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    populated(&path, 1);
    set_schema_version(&path, CURRENT_SCHEMA_VERSION + 1);
    let err = Store::<E>::open(&path, fulu_spec(), config())
        .err()
        .expect("refused");
    assert!(
        matches!(err, StoreError::SchemaTooNew { found, .. } if found == CURRENT_SCHEMA_VERSION + 1),
        "{err}"
    );
    assert_says_purge(&err);
    // Migration does not go backwards either.
    assert!(matches!(
        Store::<E>::migrate_schema(&path),
        Err(StoreError::SchemaTooNew { .. })
    ));
}

#[test]
fn a_database_without_a_schema_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(redb::TableDefinition::<&str, u64>::new("someone_else"))
            .unwrap()
            .insert("x", 1)
            .unwrap();
        txn.commit().unwrap();
    }
    let err = Store::<E>::open(&path, fulu_spec(), config())
        .err()
        .expect("refused");
    assert!(matches!(err, StoreError::MissingSchemaVersion), "{err}");
    assert_says_purge(&err);
}

#[test]
fn a_schema_1_database_is_refused_then_migrated_to_the_current_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    populated(&path, 6);
    // Schema 1 is schema 2 without the sidecar slot index.
    inline_hot_states(&path);
    {
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.delete_table(DATA_SIDECAR_SLOTS).unwrap();
        txn.commit().unwrap();
    }
    set_schema_version(&path, 1);

    let err = Store::<E>::open(&path, fulu_spec(), config())
        .err()
        .expect("refused");
    assert!(
        matches!(err, StoreError::SchemaTooOld { found: 1, current } if current == CURRENT_SCHEMA_VERSION),
        "{err}"
    );
    assert!(err.to_string().contains("migrate"), "{err}");

    assert_eq!(
        Store::<E>::migrate_schema(&path).unwrap(),
        (1, CURRENT_SCHEMA_VERSION)
    );
    let mut spec = fulu_spec();
    spec.min_epochs_for_data_column_sidecars_requests = 0;
    let store: Store<E> = Store::open(&path, spec, config()).unwrap();
    assert_eq!(store.schema_version().unwrap(), CURRENT_SCHEMA_VERSION);
    // The rebuilt index drives retention: with a window of 0 epochs, current epoch 0 keeps
    // everything and current epoch 1 (cutoff slot 8) drops the columns of slots 1..=6.
    assert_eq!(store.prune_data_sidecars(0).unwrap(), 0);
    assert_eq!(store.prune_data_sidecars(1).unwrap(), 6);
    for slot in 1..=6 {
        assert!(
            store
                .data_column_indices(&Chain::block_root(slot, 0))
                .unwrap()
                .is_empty()
        );
    }
}

#[test]
fn a_schema_2_database_has_its_hot_states_moved_into_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    populated(&path, 3);
    inline_hot_states(&path);
    set_schema_version(&path, 2);
    let files = Store::<E>::state_files_dir_for(&path);
    assert_eq!(std::fs::read_dir(&files).unwrap().count(), 0);

    let err = Store::<E>::open(&path, fulu_spec(), config())
        .err()
        .expect("refused");
    assert!(
        matches!(err, StoreError::SchemaTooOld { found: 2, .. }),
        "{err}"
    );
    assert_eq!(
        Store::<E>::migrate_schema(&path).unwrap(),
        (2, CURRENT_SCHEMA_VERSION)
    );
    let store: Store<E> = Store::open(&path, fulu_spec(), config()).unwrap();
    assert_eq!(store.orphan_state_files_removed(), 0);
    assert_eq!(
        store.hot_snapshot_roots().unwrap(),
        vec![Chain::state_root(0, 0)]
    );
    assert_eq!(std::fs::read_dir(&files).unwrap().count(), 1);
    let state = store
        .get_state(&Chain::state_root(0, 0), &mut SlotReplayer::default())
        .unwrap()
        .expect("the anchor state");
    assert_same_state(&state, &Chain::state(0, 0));
}

#[test]
fn a_damaged_or_missing_state_file_is_reported_and_orphans_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    populated(&path, 1);
    let root = Chain::state_root(0, 0);
    let file = Store::<E>::state_files_dir_for(&path).join(format!("{root}.ssz"));
    let good = std::fs::read(&file).expect("the anchor state's file");

    // A flipped byte inside the state: the checksum catches it.
    let mut bad = good.clone();
    bad[good.len() / 2] ^= 0x40;
    std::fs::write(&file, &bad).unwrap();
    let store: Store<E> = Store::open(&path, fulu_spec(), config()).unwrap();
    let err = store
        .get_state(&root, &mut SlotReplayer::default())
        .unwrap_err();
    assert!(matches!(err, StoreError::CorruptValue { .. }), "{err}");
    assert_says_purge(&err);

    // Cut short: its length no longer matches the reference.
    std::fs::write(&file, &good[..good.len() - 100]).unwrap();
    let err = store
        .get_state(&root, &mut SlotReplayer::default())
        .unwrap_err();
    assert!(matches!(err, StoreError::CorruptValue { .. }), "{err}");

    // Gone while the database still references it.
    std::fs::remove_file(&file).unwrap();
    let err = store
        .get_state(&root, &mut SlotReplayer::default())
        .unwrap_err();
    assert!(
        matches!(err, StoreError::MissingStateFile { root: r, .. } if r == root),
        "{err}"
    );
    assert_says_purge(&err);
    drop(store);

    // A file no reference names (a batch that never committed) and a partial write are
    // removed at open; the referenced file is kept.
    std::fs::write(&file, &good).unwrap();
    let dir_path = Store::<E>::state_files_dir_for(&path);
    let orphan = dir_path.join(format!("{}.ssz", Chain::state_root(8, 0)));
    std::fs::write(&orphan, &good).unwrap();
    std::fs::write(
        dir_path.join(format!("{}.ssz.tmp", Chain::state_root(16, 0))),
        b"x",
    )
    .unwrap();
    let store: Store<E> = Store::open(&path, fulu_spec(), config()).unwrap();
    assert_eq!(store.orphan_state_files_removed(), 2);
    assert!(!orphan.exists());
    assert!(file.exists());
    store
        .get_state(&root, &mut SlotReplayer::default())
        .unwrap()
        .expect("the anchor state");
}

#[test]
fn a_damaged_or_missing_cold_snapshot_file_is_reported_and_orphans_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    populated(&path, 1);
    let root = Chain::state_root(0, 0);
    let file = Store::<E>::cold_files_dir_for(&path).join(format!("{root}.ssz"));
    let good = std::fs::read(&file).expect("the anchor's cold snapshot file");
    let store: Store<E> = Store::open(&path, fulu_spec(), config()).unwrap();
    assert_eq!(store.cold_snapshots().unwrap(), vec![(0, Some(root))]);
    let anchor = store
        .get_cold_state_by_slot(0, &mut SlotReplayer::default())
        .unwrap()
        .expect("the anchor's cold state");
    assert_same_state(&anchor, &Chain::state(0, 0));

    // A flipped byte, then a file cut short: the reference's checksum and length catch them.
    let mut bad = good.clone();
    bad[good.len() / 2] ^= 0x40;
    for damaged in [bad, good[..good.len() - 100].to_vec()] {
        std::fs::write(&file, &damaged).unwrap();
        let err = store
            .get_cold_state_by_slot(0, &mut SlotReplayer::default())
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::CorruptValue {
                    table: "cold_states",
                    ..
                }
            ),
            "{err}"
        );
        assert_says_purge(&err);
    }

    // Gone while the database still references it.
    std::fs::remove_file(&file).unwrap();
    let err = store
        .get_cold_state_by_slot(0, &mut SlotReplayer::default())
        .unwrap_err();
    assert!(
        matches!(err, StoreError::MissingStateFile { root: r, .. } if r == root),
        "{err}"
    );
    assert_says_purge(&err);
    drop(store);

    // A file no committed value references (a migration that never committed) and a partial
    // write are removed at open; the referenced file is kept.
    std::fs::write(&file, &good).unwrap();
    let cold_dir = Store::<E>::cold_files_dir_for(&path);
    let orphan = cold_dir.join(format!("{}.ssz", Chain::state_root(16, 0)));
    std::fs::write(&orphan, &good).unwrap();
    std::fs::write(cold_dir.join(format!("{root}.ssz.tmp3")), b"x").unwrap();
    let store: Store<E> = Store::open(&path, fulu_spec(), config()).unwrap();
    assert_eq!(store.orphan_state_files_removed(), 2);
    assert!(!orphan.exists());
    assert!(file.exists());
    let anchor = store
        .get_cold_state_by_slot(0, &mut SlotReplayer::default())
        .unwrap()
        .expect("the anchor's cold state");
    assert_same_state(&anchor, &Chain::state(0, 0));
}

#[test]
fn a_schema_3_database_keeps_its_inline_cold_snapshot_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    populated(&path, 2);
    // Schema 3 stored cold snapshots inline: tag 0, the SSZ, the fork and CRC-32 trailer.
    let file =
        Store::<E>::cold_files_dir_for(&path).join(format!("{}.ssz", Chain::state_root(0, 0)));
    let sealed = std::fs::read(&file).unwrap();
    let (ssz_and_fork, _) = sealed.split_at(sealed.len() - 4);
    let mut inline = vec![0u8];
    inline.extend_from_slice(ssz_and_fork);
    let crc = crc32fast::hash(&inline);
    inline.extend_from_slice(&crc.to_le_bytes());
    {
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(COLD_STATES)
            .unwrap()
            .insert(0, inline.as_slice())
            .unwrap();
        txn.commit().unwrap();
    }
    std::fs::remove_file(&file).unwrap();
    set_schema_version(&path, 3);

    let err = Store::<E>::open(&path, fulu_spec(), config())
        .err()
        .expect("refused");
    assert!(
        matches!(err, StoreError::SchemaTooOld { found: 3, .. }),
        "{err}"
    );
    // As the node opens it: migrated, then opened; a second open has nothing to migrate.
    let (store, migrated) = Store::<E>::open_migrating(&path, fulu_spec(), config()).unwrap();
    assert_eq!(migrated, Some((3, CURRENT_SCHEMA_VERSION)));
    drop(store);
    let (store, migrated) = Store::<E>::open_migrating(&path, fulu_spec(), config()).unwrap();
    assert_eq!(migrated, None);
    assert_eq!(store.schema_version().unwrap(), CURRENT_SCHEMA_VERSION);
    assert_eq!(store.cold_snapshots().unwrap(), vec![(0, None)]);
    let anchor = store
        .get_cold_state_by_slot(0, &mut SlotReplayer::default())
        .unwrap()
        .expect("the anchor's inline cold state");
    assert_same_state(&anchor, &Chain::state(0, 0));
    assert_eq!(store.orphan_state_files_removed(), 0);
}

/// Turns the database's hot states back into the layout before schema 3: the sealed bytes in
/// `hot_states` itself, no files.
fn inline_hot_states(path: &std::path::Path) {
    let dir = Store::<E>::state_files_dir_for(path);
    let db = redb::Database::create(path).unwrap();
    let roots: Vec<[u8; 32]> = {
        let txn = db.begin_read().unwrap();
        let table = txn.open_table(HOT_STATES).unwrap();
        table
            .iter()
            .unwrap()
            .map(|e| e.unwrap().0.value())
            .collect()
    };
    let txn = db.begin_write().unwrap();
    {
        let mut table = txn.open_table(HOT_STATES).unwrap();
        for root in roots {
            let file = dir.join(format!("{}.ssz", types::Root::from(root)));
            let sealed = std::fs::read(&file).unwrap();
            table.insert(root, sealed.as_slice()).unwrap();
            std::fs::remove_file(&file).unwrap();
        }
    }
    txn.commit().unwrap();
}

fn set_schema_version(path: &std::path::Path, version: u64) {
    let db = redb::Database::create(path).unwrap();
    let txn = db.begin_write().unwrap();
    txn.open_table(META)
        .unwrap()
        .insert(SCHEMA_VERSION_KEY, version.to_le_bytes().as_slice())
        .unwrap();
    txn.commit().unwrap();
}
