//! The store's errors. Each says what went wrong with which value and, where the database itself
//! is at fault, what the operator can do about it.

use std::path::PathBuf;

use types::{ForkName, Root, Slot};

use crate::state_diff::DiffError;

/// What the operator can do when the database cannot be used as it is.
const PURGE_HINT: &str = "start again with `--purge-db` (the node will resync)";

/// An error of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file could not be opened or created.
    #[error(
        "cannot open the database at {path}: {source}; if the file is damaged or truncated, {PURGE_HINT}"
    )]
    Open {
        /// Path of the database file.
        path: PathBuf,
        /// redb's reason.
        #[source]
        source: redb::DatabaseError,
    },
    /// A read, write or commit failed inside redb.
    #[error("database error: {0}; if it persists, {PURGE_HINT}")]
    Database(#[from] redb::Error),
    /// The database was written by a newer Arbor, with a schema this version cannot read.
    #[error(
        "the database has schema version {found}, newer than the {supported} this version of Arbor \
         understands: run a newer Arbor, or {PURGE_HINT}"
    )]
    SchemaTooNew {
        /// The schema version recorded in the database.
        found: u64,
        /// The newest schema version this build reads.
        supported: u64,
    },
    /// The database has an older schema and must be migrated before use.
    #[error(
        "the database has schema version {found}, older than the current {current}: migrate it \
         with Store::migrate_schema (`arbor bn` does when it starts: Store::open_migrating), or {PURGE_HINT}"
    )]
    SchemaTooOld {
        /// The schema version recorded in the database.
        found: u64,
        /// The schema version this build writes.
        current: u64,
    },
    /// The database has tables but records no schema version.
    #[error(
        "the database has tables but no schema version: it was not written by Arbor or is damaged; {PURGE_HINT}"
    )]
    MissingSchemaVersion,
    /// No migration step starts at this schema version.
    #[error("no migration from schema version {from}; {PURGE_HINT}")]
    NoMigration {
        /// The schema version that has no migration to the next one.
        from: u64,
    },
    /// A stored value does not decode: a bad checksum, a wrong length or invalid SSZ.
    #[error("corrupted value in table `{table}` at key {key}: {reason}; {PURGE_HINT}")]
    CorruptValue {
        /// The table the value was read from.
        table: &'static str,
        /// The value's key, as hex or a slot number.
        key: String,
        /// What was wrong with the value.
        reason: String,
    },
    /// A stored value's fork tag differs from the fork the chain configuration gives its slot.
    #[error(
        "value in table `{table}` at key {key} was stored as {stored} but decodes as {expected} \
         under this chain configuration: the database belongs to another network; {PURGE_HINT}"
    )]
    WrongFork {
        /// The table the value was read from.
        table: &'static str,
        /// The value's key, as hex or a slot number.
        key: String,
        /// The fork recorded beside the value.
        stored: ForkName,
        /// The fork of the value's slot under this chain configuration.
        expected: ForkName,
    },
    /// The caller passed something the store refuses to write, such as undecodable SSZ or a
    /// second anchor.
    #[error("invalid {what}: {reason}")]
    InvalidInput {
        /// What was refused.
        what: &'static str,
        /// Why it was refused.
        reason: String,
    },
    /// The [`StoreConfig`](crate::StoreConfig) is inconsistent with itself or the chain spec.
    #[error("invalid store configuration: {0}")]
    InvalidConfig(String),
    /// The operation needs an anchor state and none has been stored yet.
    #[error(
        "the store has no anchor yet: call `init_anchor` with the genesis or checkpoint state first"
    )]
    NoAnchor,
    /// No block with this root is stored.
    #[error("block {0} is not in the store")]
    MissingBlock(Root),
    /// A hot snapshot file could not be written, read or deleted.
    #[error("hot state file {path}: {source}; if the file is damaged or missing, {PURGE_HINT}")]
    StateFile {
        /// The file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The `hot_states` or `cold_states` table references a snapshot file that is not on disk.
    #[error("the state {root} is stored in {path}, which is missing; {PURGE_HINT}")]
    MissingStateFile {
        /// The state's root.
        root: Root,
        /// Where its file should be.
        path: PathBuf,
    },
    /// No state with this root is in the store.
    #[error("state {0} is not in the store")]
    MissingState(Root),
    /// The cold database has no snapshot or diff at or before this slot.
    #[error("no cold state at or before slot {0}")]
    MissingColdState(Slot),
    /// The finalized checkpoint state to migrate is not in the hot database.
    #[error("finalized state root {0} has no state stored in the hot database")]
    MissingFinalizedState(Root),
    /// Finalization advanced by more than `SLOTS_PER_HISTORICAL_ROOT` since the last migration,
    /// so the finalized state's `state_roots` cannot name every state in between.
    #[error(
        "finalization moved from slot {from} to {to}, further than the state's root history covers; \
         migrate at every finalization"
    )]
    MigrationGapTooLarge {
        /// The current split slot.
        from: Slot,
        /// The new finalized slot.
        to: Slot,
    },
    /// A finalized checkpoint earlier than the one already migrated.
    #[error("finalized checkpoint at slot {new} is before the current split at slot {split}")]
    FinalizationReverted {
        /// The start slot of the new finalized checkpoint.
        new: Slot,
        /// The current split slot.
        split: Slot,
    },
    /// A stored state diff does not apply to its base.
    #[error(
        "state diff in table `{table}` at slot {slot} cannot be applied: {source}; {PURGE_HINT}"
    )]
    Diff {
        /// The table the diff was read from.
        table: &'static str,
        /// The slot of the state the diff encodes.
        slot: Slot,
        /// Why the diff did not apply.
        #[source]
        source: DiffError,
    },
    /// The [`StateReplayer`](crate::StateReplayer) failed while rebuilding a state.
    #[error("replaying blocks onto a stored state failed: {0}")]
    Replay(Box<dyn std::error::Error + Send + Sync>),
}

macro_rules! from_redb {
    ($($ty:ty),*) => {$(
        impl From<$ty> for StoreError {
            fn from(e: $ty) -> Self {
                StoreError::Database(e.into())
            }
        }
    )*};
}

from_redb!(
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);
