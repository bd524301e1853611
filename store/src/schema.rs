//! The database layout, its version and the migrations between versions.
//!
//! | table | key | value |
//! |---|---|---|
//! | `meta` | name | schema version, head, finalized checkpoint, split, anchor, oldest block, fork choice |
//! | `hot_blocks` | block root | SSZ `SignedBeaconBlock` as received, sealed |
//! | `hot_block_summaries` | block root | slot, parent root |
//! | `hot_states` | state root | since schema 3, the reference (length, CRC) of the file `<db>.states/<root>.ssz` holding the sealed SSZ `BeaconState` of an epoch boundary; before, the sealed SSZ itself |
//! | `hot_state_summaries` | state root | slot, latest block root, epoch-boundary state root |
//! | `pending_snapshots` | state root | slot, since schema 3: epoch snapshots whose whole state is still to be written |
//! | `cold_blocks` | block root | SSZ finalized `SignedBeaconBlock`, sealed |
//! | `cold_block_roots` | slot | canonical finalized block root (slots with a block) |
//! | `cold_states` | slot | snapshot or diff against a snapshot, sealed; since schema 4 a snapshot is the reference (state root, length, CRC) of the file `<db>.cold/<root>.ssz` holding its sealed SSZ, before it was inline (and stays readable) |
//! | `cold_state_roots` | state root | slot |
//! | `data_columns` | block root ‖ index | SSZ `DataColumnSidecar`, sealed |
//! | `blob_sidecars` | block root ‖ index | SSZ `BlobSidecar`, sealed |
//! | `data_sidecar_slots` | slot ‖ block root | (), since schema 2: which blocks have sidecars, by slot |
//! | `execution_payload_envelopes` | beacon block root | since schema 5: SSZ Gloas `SignedExecutionPayloadEnvelope` as received, sealed with the fork of its block's slot |
//! | `execution_payload_envelope_slots` | slot ‖ block root | (), since schema 5: which blocks have an envelope, by slot |
//!
//! Values are sealed by [`crate::codec::seal`]. A migration is a function from one version's
//! layout to the next, run inside the same write transaction that records the new version, so a
//! crash leaves either the old or the new layout.

use redb::{ReadableTable, TableDefinition, WriteTransaction};
use types::{BlobSidecar, DataColumnSidecar, EthSpec, Slot};

use crate::StoreError;
use crate::codec::{self, slot_root_key};
use crate::state_files::StateFiles;

/// The schema this version of the store writes.
pub const CURRENT_SCHEMA_VERSION: u64 = 5;

/// Named metadata: schema version, head, finalized checkpoint, split, anchor.
pub const META: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("meta");
/// Unfinalized blocks by block root, SSZ as received, sealed.
pub const HOT_BLOCKS: TableDefinition<'_, [u8; 32], &[u8]> = TableDefinition::new("hot_blocks");
/// Slot and parent root of each hot block, by block root.
pub const HOT_BLOCK_SUMMARIES: TableDefinition<'_, [u8; 32], &[u8]> =
    TableDefinition::new("hot_block_summaries");
/// Unfinalized epoch-boundary states by state root: the reference of the file beside the
/// database that holds the sealed SSZ (the store's `state_files` module).
pub const HOT_STATES: TableDefinition<'_, [u8; 32], &[u8]> = TableDefinition::new("hot_states");
/// Slot, latest block root and epoch-boundary state root of each hot state, by state root.
pub const HOT_STATE_SUMMARIES: TableDefinition<'_, [u8; 32], &[u8]> =
    TableDefinition::new("hot_state_summaries");
/// Epoch snapshots stored as a summary until a background writer stores them whole (since
/// schema 3): state root → slot (little-endian `u64`).
pub const PENDING_SNAPSHOTS: TableDefinition<'_, [u8; 32], u64> =
    TableDefinition::new("pending_snapshots");
/// Finalized blocks by block root, SSZ, sealed.
pub const COLD_BLOCKS: TableDefinition<'_, [u8; 32], &[u8]> = TableDefinition::new("cold_blocks");
/// The canonical finalized block root at each slot that has a block.
pub const COLD_BLOCK_ROOTS: TableDefinition<'_, u64, [u8; 32]> =
    TableDefinition::new("cold_block_roots");
/// Finalized states by slot, each a snapshot (since schema 4, the reference of its file) or a
/// diff against a snapshot, sealed.
pub const COLD_STATES: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("cold_states");
/// The slot of each finalized state, by state root.
pub const COLD_STATE_ROOTS: TableDefinition<'_, [u8; 32], u64> =
    TableDefinition::new("cold_state_roots");
/// Data column sidecars by block root ‖ column index, SSZ, sealed.
pub const DATA_COLUMNS: TableDefinition<'_, [u8; 40], &[u8]> = TableDefinition::new("data_columns");
/// Blob sidecars by block root ‖ blob index, SSZ, sealed.
pub const BLOB_SIDECARS: TableDefinition<'_, [u8; 40], &[u8]> =
    TableDefinition::new("blob_sidecars");
/// Slot ‖ block root of every block with stored sidecars (since schema 2), to prune by slot.
pub const DATA_SIDECAR_SLOTS: TableDefinition<'_, [u8; 40], ()> =
    TableDefinition::new("data_sidecar_slots");

/// Signed execution payload envelopes (Gloas) by the root of the beacon block they fulfil, SSZ
/// as received, sealed (since schema 5).
///
/// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1
pub const EXECUTION_PAYLOAD_ENVELOPES: TableDefinition<'_, [u8; 32], &[u8]> =
    TableDefinition::new("execution_payload_envelopes");
/// Slot ‖ block root of every stored envelope (since schema 5): range serving and pruning by
/// slot.
pub const EXECUTION_PAYLOAD_ENVELOPE_SLOTS: TableDefinition<'_, [u8; 40], ()> =
    TableDefinition::new("execution_payload_envelope_slots");

/// `meta` key of the schema version, a little-endian `u64`.
pub const SCHEMA_VERSION_KEY: &str = "schema_version";
/// `meta` key of the recorded [`Head`](crate::Head).
pub const HEAD_KEY: &str = "head";
/// `meta` key of the finalized checkpoint.
pub const FINALIZED_KEY: &str = "finalized";
/// `meta` key of the hot/cold [`Split`](crate::Split).
pub const SPLIT_KEY: &str = "split";
/// `meta` key of the [`OldestBlock`](crate::OldestBlock): slot, root and parent root of the
/// oldest block held, moved back by backfill.
pub const OLDEST_BLOCK_KEY: &str = "oldest_block";
/// `meta` key of the persisted fork choice (its own layout, `fork_choice::ForkChoice::
/// to_persisted_bytes`), followed by a CRC-32; rewritten with each whole hot state.
pub const FORK_CHOICE_KEY: &str = "fork_choice";
/// Prefix of the `meta` keys of the light-client server's data (its best updates, bootstraps,
/// latest finality and optimistic updates), whose bytes the server encodes.
pub const LIGHT_CLIENT_PREFIX: &str = "light_client/";

/// Creates every table of the current schema (a no-op for those that exist).
pub fn create_tables(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(META)?;
    create_v1_data_tables(txn)?;
    txn.open_table(DATA_SIDECAR_SLOTS)?;
    txn.open_table(PENDING_SNAPSHOTS)?;
    create_v5_envelope_tables(txn)?;
    Ok(())
}

/// The tables schema 5 adds: the execution payload envelopes and their slot index.
fn create_v5_envelope_tables(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(EXECUTION_PAYLOAD_ENVELOPES)?;
    txn.open_table(EXECUTION_PAYLOAD_ENVELOPE_SLOTS)?;
    Ok(())
}

/// The tables of schema 1 besides `meta`.
pub(crate) fn create_v1_data_tables(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(HOT_BLOCKS)?;
    txn.open_table(HOT_BLOCK_SUMMARIES)?;
    txn.open_table(HOT_STATES)?;
    txn.open_table(HOT_STATE_SUMMARIES)?;
    txn.open_table(COLD_BLOCKS)?;
    txn.open_table(COLD_BLOCK_ROOTS)?;
    txn.open_table(COLD_STATES)?;
    txn.open_table(COLD_STATE_ROOTS)?;
    txn.open_table(DATA_COLUMNS)?;
    txn.open_table(BLOB_SIDECARS)?;
    Ok(())
}

/// Reads the schema version, `None` for a database without one.
pub fn read_schema_version(
    meta: &impl ReadableTable<&'static str, &'static [u8]>,
) -> Result<Option<u64>, StoreError> {
    let Some(value) = meta.get(SCHEMA_VERSION_KEY)? else {
        return Ok(None);
    };
    let bytes: [u8; 8] = value
        .value()
        .try_into()
        .map_err(|_| StoreError::CorruptValue {
            table: "meta",
            key: SCHEMA_VERSION_KEY.into(),
            reason: format!("{} bytes, expected 8", value.value().len()),
        })?;
    Ok(Some(u64::from_le_bytes(bytes)))
}

/// Records `version` as the database's schema version in `txn`.
pub fn write_schema_version(txn: &WriteTransaction, version: u64) -> Result<(), StoreError> {
    txn.open_table(META)?
        .insert(SCHEMA_VERSION_KEY, version.to_le_bytes().as_slice())?;
    Ok(())
}

/// Applies the migrations from `from` up to [`CURRENT_SCHEMA_VERSION`] in `txn`.
pub(crate) fn migrate<E: EthSpec>(
    txn: &WriteTransaction,
    from: u64,
    state_files: &StateFiles,
) -> Result<(), StoreError> {
    let mut version = from;
    while version < CURRENT_SCHEMA_VERSION {
        match version {
            1 => migrate_v1_to_v2::<E>(txn)?,
            2 => migrate_v2_to_v3(txn, state_files)?,
            // Schema 4 writes new cold snapshots to files (`<db>.cold`); the ones stored inline
            // before stay where they are and readable, so there is nothing to move. The
            // version says that an older build, which cannot read the file references, must
            // not open the database.
            3 => {}
            // Schema 5 adds the (empty) tables of Gloas's execution payload envelopes: no
            // earlier schema stored any.
            4 => create_v5_envelope_tables(txn)?,
            other => return Err(StoreError::NoMigration { from: other }),
        }
        version += 1;
        write_schema_version(txn, version)?;
    }
    Ok(())
}

/// Schema 2 adds `data_sidecar_slots`, the index by slot that retention pruning walks: it is
/// rebuilt from the slot in the block header of every stored column and blob sidecar.
fn migrate_v1_to_v2<E: EthSpec>(txn: &WriteTransaction) -> Result<(), StoreError> {
    let mut index = txn.open_table(DATA_SIDECAR_SLOTS)?;
    for (table_def, name) in [
        (DATA_COLUMNS, "data_columns"),
        (BLOB_SIDECARS, "blob_sidecars"),
    ] {
        let table = txn.open_table(table_def)?;
        for entry in table.iter()? {
            let (key, value) = entry?;
            let key = key.value();
            let describe = || hex_key(&key);
            let (payload, fork) = codec::unseal(value.value().to_vec(), name, describe)?;
            let corrupt = |e: ssz::DecodeError| StoreError::CorruptValue {
                table: name,
                key: hex_key(&key),
                reason: format!("{e:?}"),
            };
            let slot: Slot = if name == "data_columns" {
                DataColumnSidecar::<E>::from_ssz_bytes_by_fork(&payload, fork)
                    .map_err(corrupt)?
                    .slot()
            } else {
                match BlobSidecar::<E>::from_ssz_bytes_by_fork(&payload, fork).map_err(corrupt)? {
                    BlobSidecar::Deneb(b) => b.signed_block_header.message.slot,
                    BlobSidecar::Electra(b) => b.signed_block_header.message.slot,
                }
            };
            let root = types::Root::from_slice(&key[..32]);
            index.insert(slot_root_key(slot, &root), ())?;
        }
    }
    Ok(())
}

/// Schema 3 adds `pending_snapshots` (empty) and moves the hot snapshots out of `hot_states` into files beside the database (a
/// durable write of a 1M-validator state into redb took 1.39 s, into a file 0.22 s): each
/// value is written to its file, synced, and replaced by the file's reference. The files are
/// written before the transaction commits, so a crash leaves schema 2 intact (and files that
/// the next migration rewrites).
fn migrate_v2_to_v3(txn: &WriteTransaction, state_files: &StateFiles) -> Result<(), StoreError> {
    txn.open_table(PENDING_SNAPSHOTS)?;
    let mut table = txn.open_table(HOT_STATES)?;
    let mut keys = Vec::new();
    for entry in table.iter()? {
        keys.push(entry?.0.value());
    }
    for key in keys {
        let root = types::Root::from(key);
        let sealed = match table.get(key)? {
            Some(value) => value.value().to_vec(),
            None => continue,
        };
        // Checked before it leaves the database, so a damaged value is not carried over.
        codec::check_sealed(&sealed, "hot_states", || hex_key(&key))?;
        let reference = state_files.write(&root, &sealed)?;
        drop(sealed);
        table.insert(key, reference.to_bytes().as_slice())?;
    }
    Ok(())
}

/// `0x…` of a key, for error messages.
pub fn hex_key(key: &[u8]) -> String {
    let mut s = String::with_capacity(2 + key.len() * 2);
    s.push_str("0x");
    for b in key {
        s.push_str(&format!("{b:02x}"));
    }
    s
}
