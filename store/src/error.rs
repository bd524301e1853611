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
    #[error(
        "cannot open the database at {path}: {source}; if the file is damaged or truncated, {PURGE_HINT}"
    )]
    Open {
        path: PathBuf,
        #[source]
        source: redb::DatabaseError,
    },
    #[error("database error: {0}; if it persists, {PURGE_HINT}")]
    Database(#[from] redb::Error),
    #[error(
        "the database has schema version {found}, newer than the {supported} this version of Arbor \
         understands: run a newer Arbor, or {PURGE_HINT}"
    )]
    SchemaTooNew { found: u64, supported: u64 },
    #[error(
        "the database has schema version {found}, older than the current {current}: migrate it \
         with `arbor db migrate` (Store::migrate_schema), or {PURGE_HINT}"
    )]
    SchemaTooOld { found: u64, current: u64 },
    #[error(
        "the database has tables but no schema version: it was not written by Arbor or is damaged; {PURGE_HINT}"
    )]
    MissingSchemaVersion,
    #[error("no migration from schema version {from}; {PURGE_HINT}")]
    NoMigration { from: u64 },
    #[error("corrupted value in table `{table}` at key {key}: {reason}; {PURGE_HINT}")]
    CorruptValue {
        table: &'static str,
        key: String,
        reason: String,
    },
    #[error(
        "value in table `{table}` at key {key} was stored as {stored} but decodes as {expected} \
         under this chain configuration: the database belongs to another network; {PURGE_HINT}"
    )]
    WrongFork {
        table: &'static str,
        key: String,
        stored: ForkName,
        expected: ForkName,
    },
    #[error("invalid {what}: {reason}")]
    InvalidInput { what: &'static str, reason: String },
    #[error("invalid store configuration: {0}")]
    InvalidConfig(String),
    #[error(
        "the store has no anchor yet: call `init_anchor` with the genesis or checkpoint state first"
    )]
    NoAnchor,
    #[error("block {0} is not in the store")]
    MissingBlock(Root),
    #[error("state {0} is not in the store")]
    MissingState(Root),
    #[error("no cold state at or before slot {0}")]
    MissingColdState(Slot),
    #[error("finalized state root {0} has no state stored in the hot database")]
    MissingFinalizedState(Root),
    #[error(
        "finalization moved from slot {from} to {to}, further than the state's root history covers; \
         migrate at every finalization"
    )]
    MigrationGapTooLarge { from: Slot, to: Slot },
    #[error("finalized checkpoint at slot {new} is before the current split at slot {split}")]
    FinalizationReverted { new: Slot, split: Slot },
    #[error(
        "state diff in table `{table}` at slot {slot} cannot be applied: {source}; {PURGE_HINT}"
    )]
    Diff {
        table: &'static str,
        slot: Slot,
        #[source]
        source: DiffError,
    },
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
