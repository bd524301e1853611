//! The hot/cold store over one redb database.
//!
//! - **Hot**: unfinalized blocks (by root, with a summary of slot and parent) and states: a full
//!   snapshot at every epoch boundary (a file beside the database, see [`crate::state_files`]),
//!   a summary for every other state naming its latest block and its epoch-boundary snapshot; a
//!   state between boundaries is the snapshot plus the blocks replayed by the caller's
//!   [`StateReplayer`].
//! - **Cold**: finalized blocks, the canonical block root of every slot that has one, the slot
//!   of every finalized state root, and states at a configurable grid: a full snapshot every
//!   `cold_snapshot_interval` slots and, in between, every `cold_diff_interval` slots, a
//!   [`crate::state_diff`] against the latest snapshot. Any other finalized state is the nearest
//!   grid state plus replayed blocks.
//! - **Sidecars**: data columns and blobs by (block root, index), indexed by slot, kept for the
//!   spec's retention windows and dropped with abandoned forks.
//! - **Envelopes** (Gloas): signed execution payload envelopes by block root, indexed by slot,
//!   kept for the spec's serving window and dropped with abandoned forks.
//!
//! Finalization ([`Store::migrate_to_finalized`]) moves the newly finalized chain from hot to
//! cold, writes the cold grid states, prunes abandoned forks and expired sidecars, and records the
//! new split and finalized checkpoint, all in one write transaction.

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use redb::{
    Database, ReadTransaction, ReadableDatabase, ReadableTable, TableHandle, WriteTransaction,
};
use ssz::Encode;
use tree_hash::TreeHash;
use types::phase0::Checkpoint;
use types::{
    BeaconState, BlobSidecar, ChainSpec, DataColumnSidecar, Epoch, EthSpec, ForkName, Root,
    SignedBeaconBlock, Slot,
};

use crate::codec::{self, Record, RecordReader, seal, sidecar_key, slot_root_key, unseal};
use crate::schema::{self, *};
use crate::state_diff;
use crate::state_files::{FileRef, StateFiles};
use crate::{StateReplayer, StoreError};

mod backfill;
mod batch;
mod envelopes;
mod migration;
mod reads;

pub use backfill::OldestBlock;

/// Tag of a cold state stored whole.
const COLD_FULL: u8 = 0;
/// Tag of a cold state stored as a diff against a full one.
const COLD_DIFF: u8 = 1;
/// Tag of a cold state stored whole in a file beside the database (since schema 4): the state
/// root (the file's name) and the file's reference follow. Snapshots stored inline
/// ([`COLD_FULL`]) by earlier schemas stay readable.
const COLD_FILE: u8 = 2;
/// Meta key of the slot of the latest full cold snapshot, the base of new diffs.
const COLD_SNAPSHOT_KEY: &str = "cold_snapshot_slot";
/// Byte offset of `state_roots` in an SSZ `BeaconState` of every fork: `genesis_time` (8),
/// `genesis_validators_root` (32), `slot` (8), `fork` (16), `latest_block_header` (112), then
/// `block_roots` (32 per slot of history).
const STATE_ROOTS_OFFSET_BEFORE_BLOCK_ROOTS: usize = 176;

/// How the store lays out cold states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// Slots between full cold state snapshots (a multiple of `SLOTS_PER_EPOCH`).
    pub cold_snapshot_interval: Slot,
    /// Slots between cold state diffs against the latest snapshot (a multiple of
    /// `SLOTS_PER_EPOCH` dividing `cold_snapshot_interval`); 0 stores snapshots only.
    pub cold_diff_interval: Slot,
    /// Bytes of redb's page cache.
    pub cache_size_bytes: usize,
    /// Save redb's allocator state with every commit (two-phase commit), so reopening after a
    /// crash is immediate instead of a walk over the whole file (see the README for the cost).
    pub quick_repair: bool,
}

/// [`StoreConfig::cache_size_bytes`] by default: 256 MiB. redb's page cache is the node's
/// resident memory, and it fills as the database is written and read: with redb's own default
/// (1 GiB) and the cold snapshots inline, a node at 1,000,000 validators measured 1,549-1,617
/// MiB after two epochs, its cache not yet full (up to ~770 MiB more to come), against
/// 1,293-1,360 MiB with 256 MiB (the beacon chain's README, "Measured"). The whole states, hot
/// and cold snapshots, are files (schema 4), which the kernel's page cache serves outside the
/// node's memory, so the smaller cache does not slow their reads (README, "redb against plain
/// files").
pub const DEFAULT_CACHE_SIZE_BYTES: usize = 256 << 20;

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            // 64 mainnet epochs between snapshots, a diff every epoch (see the README for the
            // measurements behind these numbers).
            cold_snapshot_interval: 2048,
            cold_diff_interval: 32,
            cache_size_bytes: DEFAULT_CACHE_SIZE_BYTES,
            quick_repair: true,
        }
    }
}

/// The chain's head as last recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Root of the head block.
    pub block_root: Root,
    /// Root of the head block's post-state.
    pub state_root: Root,
    /// Slot of the head block.
    pub slot: Slot,
}

/// The boundary between hot and cold: the finalized checkpoint state and its block, kept in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Slot of the finalized checkpoint state: states before it are cold.
    pub slot: Slot,
    /// Root of the finalized checkpoint state.
    pub state_root: Root,
    /// Root of the finalized checkpoint's block.
    pub block_root: Root,
}

/// What one finalization migration did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrationSummary {
    /// Finalized blocks copied to the cold database.
    pub blocks_finalized: usize,
    /// Hot blocks of abandoned forks (and their sidecars and envelopes) deleted.
    pub blocks_pruned: usize,
    /// Hot states deleted (finalized or abandoned).
    pub states_pruned: usize,
    /// Cold grid states written whole.
    pub cold_snapshots: usize,
    /// Cold grid states written as diffs.
    pub cold_diffs: usize,
    /// Cold grid slots whose state was not in the hot database (readers replay from earlier).
    pub cold_states_missing: usize,
    /// Blocks with sidecars past a retention window (their columns, blobs or both deleted).
    pub sidecar_blocks_expired: usize,
    /// Execution payload envelopes past their serving window, deleted.
    pub envelopes_expired: usize,
}

/// The cold writes of a migration, prepared under a read transaction.
struct PreparedColdStates {
    /// The split they were prepared from.
    split: Split,
    new_slot: Slot,
    /// Every finalized slot since the split with its state root.
    state_roots: Vec<(Slot, Root)>,
    /// Sealed grid states by slot.
    cold_states: Vec<(Slot, Vec<u8>)>,
    last_snapshot: Option<Slot>,
    snapshots: usize,
    diffs: usize,
    missing: usize,
}

/// Slot and parent of a hot block.
#[derive(Debug, Clone, Copy)]
struct BlockSummary {
    slot: Slot,
    parent_root: Root,
}

/// Where a hot state comes from.
#[derive(Debug, Clone, Copy)]
struct StateSummary {
    slot: Slot,
    latest_block_root: Root,
    boundary_state_root: Root,
}

/// Arbor's database of blocks, states, blobs and data columns.
pub struct Store<E: EthSpec> {
    db: Database,
    /// The hot snapshots, one file each beside the database (see [`crate::state_files`]).
    state_files: StateFiles,
    /// The cold snapshots, one file each in a directory of their own.
    cold_files: StateFiles,
    /// Snapshot files no committed reference named, removed when the store opened.
    orphan_state_files: usize,
    spec: ChainSpec,
    config: StoreConfig,
    /// [`Self::refuse_writes`].
    #[cfg(feature = "test-utils")]
    refuse_writes: std::sync::atomic::AtomicBool,
    _preset: PhantomData<E>,
}

/// How [`StoreBatch::put_state_deferring_snapshot`] stored a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredAs {
    /// Whole: its epoch's snapshot, written (or stored already).
    Whole,
    /// As a summary naming its epoch's snapshot.
    Summary,
    /// Its epoch's snapshot, for now a summary naming the snapshot before it: to be written
    /// whole with [`StoreBatch::write_pending_snapshot`].
    PendingSnapshot,
}

/// A set of writes committed together, or not at all.
pub struct StoreBatch<'a, E: EthSpec> {
    store: &'a Store<E>,
    // Declared before `txn`, so a batch dropped without a commit deletes its files while its
    // transaction still holds the write lock: no other batch can reference one meanwhile.
    new_state_files: NewStateFiles<'a>,
    txn: WriteTransaction,
}

/// The snapshot files a batch wrote: deleted again if the batch is dropped without a commit.
struct NewStateFiles<'a> {
    files: &'a StateFiles,
    roots: Vec<Root>,
    cold_files: &'a StateFiles,
    cold_roots: Vec<Root>,
}

impl Drop for NewStateFiles<'_> {
    fn drop(&mut self) {
        // A file left behind is an orphan, removed when the store next opens.
        for root in &self.roots {
            let _ = self.files.remove(root);
        }
        for root in &self.cold_roots {
            let _ = self.cold_files.remove(root);
        }
    }
}

/// `SLOTS_PER_HISTORICAL_ROOT`: how far back a state's `state_roots` reach.
fn slots_per_historical_root<E: EthSpec>() -> u64 {
    <E::SlotsPerHistoricalRoot as typenum::Unsigned>::to_u64()
}

fn key_str(root: &Root) -> String {
    schema::hex_key(root.as_slice())
}

fn invalid(what: &'static str, reason: impl ToString) -> StoreError {
    StoreError::InvalidInput {
        what,
        reason: reason.to_string(),
    }
}

/// Reads the `u64` at `offset` of SSZ bytes.
fn peek_u64(bytes: &[u8], offset: usize) -> Option<u64> {
    bytes
        .get(offset..offset + 8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

impl<E: EthSpec> Store<E> {
    /// Opens the database at `path`, creating it if the file does not exist.
    ///
    /// A database of another schema version is refused with an error that says what to do.
    pub fn open(path: &Path, spec: ChainSpec, config: StoreConfig) -> Result<Self, StoreError> {
        let spe = E::slots_per_epoch();
        if config.cold_snapshot_interval == 0 || !config.cold_snapshot_interval.is_multiple_of(spe)
        {
            return Err(StoreError::InvalidConfig(format!(
                "cold_snapshot_interval {} is not a positive multiple of SLOTS_PER_EPOCH {spe}",
                config.cold_snapshot_interval
            )));
        }
        if config.cold_diff_interval != 0
            && (!config.cold_diff_interval.is_multiple_of(spe)
                || !config
                    .cold_snapshot_interval
                    .is_multiple_of(config.cold_diff_interval))
        {
            return Err(StoreError::InvalidConfig(format!(
                "cold_diff_interval {} must be 0 or a multiple of SLOTS_PER_EPOCH {spe} that \
                 divides cold_snapshot_interval {}",
                config.cold_diff_interval, config.cold_snapshot_interval
            )));
        }
        let db = open_database(path, config.cache_size_bytes)?;

        let txn = db.begin_write()?;
        let fresh = txn.list_tables()?.next().is_none();
        if fresh {
            schema::create_tables(&txn)?;
            schema::write_schema_version(&txn, CURRENT_SCHEMA_VERSION)?;
            txn.commit()?;
        } else {
            check_schema(&txn)?;
            txn.abort()?;
        }
        // Files written for batches that never committed (or whose references a committed
        // migration dropped before the files were deleted) go now.
        let state_files = StateFiles::open(path)?;
        let cold_files = StateFiles::open_cold(path)?;
        let (referenced, cold_referenced) = {
            let txn = db.begin_read()?;
            let hot = hot_snapshot_roots(&txn)?;
            (hot, cold_snapshot_file_roots(&txn, &cold_files.list()?)?)
        };
        let orphan_state_files = state_files.remove_orphans(&referenced.into_iter().collect())?
            + cold_files.remove_orphans(&cold_referenced)?;
        Ok(Self {
            db,
            state_files,
            cold_files,
            orphan_state_files,
            spec,
            config,
            #[cfg(feature = "test-utils")]
            refuse_writes: std::sync::atomic::AtomicBool::new(false),
            _preset: PhantomData,
        })
    }

    /// [`Self::open`], migrating a database of an older schema first ([`Self::migrate_schema`]):
    /// how a node opens its database after an upgrade. Returns the versions migrated from and
    /// to, when it migrated.
    pub fn open_migrating(
        path: &Path,
        spec: ChainSpec,
        config: StoreConfig,
    ) -> Result<(Self, Option<(u64, u64)>), StoreError> {
        match Self::open(path, spec.clone(), config.clone()) {
            Err(StoreError::SchemaTooOld { .. }) => {
                let migrated = Self::migrate_schema(path)?;
                Ok((Self::open(path, spec, config)?, Some(migrated)))
            }
            opened => Ok((opened?, None)),
        }
    }

    /// Migrates the database at `path` to the current schema; returns the versions it went
    /// from and to. All migrations run in one transaction.
    pub fn migrate_schema(path: &Path) -> Result<(u64, u64), StoreError> {
        let db = open_database(path, 64 << 20)?;
        let state_files = StateFiles::open(path)?;
        let txn = db.begin_write()?;
        let found = {
            let meta = txn.open_table(META)?;
            schema::read_schema_version(&meta)?.ok_or(StoreError::MissingSchemaVersion)?
        };
        if found > CURRENT_SCHEMA_VERSION {
            return Err(StoreError::SchemaTooNew {
                found,
                supported: CURRENT_SCHEMA_VERSION,
            });
        }
        schema::migrate::<E>(&txn, found, &state_files)?;
        txn.commit()?;
        Ok((found, CURRENT_SCHEMA_VERSION))
    }

    /// The chain configuration values are decoded with.
    pub fn spec(&self) -> &ChainSpec {
        &self.spec
    }

    /// The configuration the store was opened with.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// The directory of the hot snapshot files: `<database path>.states`.
    pub fn state_files_dir(&self) -> &Path {
        self.state_files.dir()
    }

    /// The directory [`Self::open`] keeps the hot snapshots of the database at `path` in.
    pub fn state_files_dir_for(path: &Path) -> PathBuf {
        StateFiles::dir_for(path)
    }

    /// The directory of the cold snapshot files: `<database path>.cold`.
    pub fn cold_files_dir(&self) -> &Path {
        self.cold_files.dir()
    }

    /// The directory [`Self::open`] keeps the cold snapshots of the database at `path` in.
    pub fn cold_files_dir_for(path: &Path) -> PathBuf {
        StateFiles::cold_dir_for(path)
    }

    /// The slots of the cold states stored whole, each with the root of its state when its
    /// snapshot is a file (schema 4 on) and `None` when it is inline (written before). Walks
    /// every cold state's value (diffs included): for checks and tools, not for a hot path.
    pub fn cold_snapshots(&self) -> Result<Vec<(Slot, Option<Root>)>, StoreError> {
        let txn = self.read_txn()?;
        let cold = txn.open_table(COLD_STATES)?;
        let mut snapshots = Vec::new();
        for entry in cold.iter()? {
            let (slot, value) = entry?;
            let slot = slot.value();
            match value.value().first() {
                Some(&COLD_FULL) => snapshots.push((slot, None)),
                Some(&COLD_FILE) => {
                    let (value, _) =
                        unseal(value.value().to_vec(), "cold_states", || slot.to_string())?;
                    snapshots.push((slot, Some(cold_file_reference(&value, slot)?.0)));
                }
                _ => {}
            }
        }
        Ok(snapshots)
    }

    /// How many snapshot files that no committed reference named were removed at open.
    pub fn orphan_state_files_removed(&self) -> usize {
        self.orphan_state_files
    }

    /// Stores the pending snapshot `state_root` whole (see
    /// [`StoreBatch::put_state_deferring_snapshot`]), with `fork_choice` (its persisted bytes)
    /// when given; later states of its epoch already name it. The file is written before
    /// the write transaction begins, so imports keep committing meanwhile. (When a snapshot
    /// of its epoch was stored before it meanwhile, as the checkpoint state of an epoch whose
    /// first slot is empty is, it becomes a summary naming that one.) Returns `false`,
    /// storing nothing, when it is not pending: stored already, or pruned by a finalization.
    pub fn write_pending_snapshot(
        &self,
        state_root: Root,
        state: &BeaconState<E>,
        fork_choice: Option<&[u8]>,
    ) -> Result<bool, StoreError> {
        let is_pending = |txn: &ReadTransaction| -> Result<bool, StoreError> {
            Ok(txn
                .open_table(PENDING_SNAPSHOTS)?
                .get(state_root.0)?
                .is_some())
        };
        if !is_pending(&self.read_txn()?)? {
            return Ok(false);
        }
        let reference = self.write_state_file(state_root, state)?;
        let mut batch = self.begin_batch()?;
        let (still_pending, whole) = {
            let pending = batch.txn.open_table(PENDING_SNAPSHOTS)?;
            let states = batch.txn.open_table(HOT_STATES)?;
            (
                pending.get(state_root.0)?.is_some(),
                states.get(state_root.0)?.is_some(),
            )
        };
        if !still_pending {
            if !whole {
                // Pruned meanwhile: the file goes with the batch.
                batch.new_state_files.roots.push(state_root);
            }
            return Ok(false);
        }
        let stored = batch.store_state(state_root, state, false, Some(reference))?;
        if stored != StoredAs::Whole {
            // Its epoch's snapshot is another state: the file is not referenced (deleted while
            // this batch holds the write lock).
            self.state_files.remove(&state_root)?;
        }
        if let Some(bytes) = fork_choice {
            batch.put_fork_choice(bytes)?;
        }
        batch.commit()?;
        Ok(true)
    }

    /// Writes `state`'s file (sealed SSZ), synced, and returns its reference.
    fn write_state_file(
        &self,
        state_root: Root,
        state: &BeaconState<E>,
    ) -> Result<FileRef, StoreError> {
        self.state_files.write_state(&state_root, state)
    }

    /// The pending snapshots (see [`StoreBatch::put_state_deferring_snapshot`]): state root
    /// and slot, oldest first.
    pub fn pending_snapshots(&self) -> Result<Vec<(Root, Slot)>, StoreError> {
        let txn = self.read_txn()?;
        let table = txn.open_table(PENDING_SNAPSHOTS)?;
        let mut pending = Vec::new();
        for entry in table.iter()? {
            let (root, slot) = entry?;
            pending.push((Root::from(root.value()), slot.value()));
        }
        pending.sort_by_key(|(root, slot)| (*slot, *root));
        Ok(pending)
    }

    /// The state roots of the hot states stored whole.
    pub fn hot_snapshot_roots(&self) -> Result<Vec<Root>, StoreError> {
        hot_snapshot_roots(&self.read_txn()?)
    }

    /// Test hook (`test-utils` feature): while `refuse` is true every write of the open store
    /// (a batch, a migration, a prune) fails with an I/O error before it starts, as on a full
    /// or failing disk; reads go on.
    #[cfg(feature = "test-utils")]
    pub fn refuse_writes(&self, refuse: bool) {
        self.refuse_writes
            .store(refuse, std::sync::atomic::Ordering::Relaxed);
    }

    /// Starts a batch of writes.
    pub fn begin_batch(&self) -> Result<StoreBatch<'_, E>, StoreError> {
        Ok(StoreBatch {
            store: self,
            new_state_files: NewStateFiles {
                files: &self.state_files,
                roots: Vec::new(),
                cold_files: &self.cold_files,
                cold_roots: Vec::new(),
            },
            txn: self.begin_write()?,
        })
    }

    /// A read transaction: never under the fork-choice lock ([`lock_guard::forbid`] panics in
    /// a debug build).
    #[track_caller]
    fn read_txn(&self) -> Result<redb::ReadTransaction, StoreError> {
        lock_guard::forbid("a store read");
        Ok(self.db.begin_read()?)
    }

    /// A write transaction: never under the fork-choice lock, as [`Self::read_txn`].
    #[track_caller]
    fn write_txn(&self) -> Result<WriteTransaction, StoreError> {
        lock_guard::forbid("a store write");
        Ok(self.db.begin_write()?)
    }

    fn begin_write(&self) -> Result<WriteTransaction, StoreError> {
        #[cfg(feature = "test-utils")]
        if self
            .refuse_writes
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(StoreError::Database(redb::Error::Io(
                std::io::Error::other("writes refused by Store::refuse_writes"),
            )));
        }
        let mut txn = self.write_txn()?;
        txn.set_quick_repair(self.config.quick_repair);
        Ok(txn)
    }

    /// Records the head in a commit of its own that is not synced to disk: it becomes durable
    /// with the next synced commit (every import's batch), and a crash before that loses only
    /// this record, the database going back to the head recorded before, consistent. The head
    /// is a record of the last head known, not something a restart needs (the chain recomputes
    /// its head from fork choice when it opens), so the fsync a synced commit costs (~1 ms on
    /// every head change) is not paid for it.
    pub fn record_head(&self, head: Head) -> Result<(), StoreError> {
        let mut batch = self.begin_batch()?;
        batch
            .txn
            .set_durability(redb::Durability::None)
            .map_err(redb::Error::from)?;
        batch.set_head(head)?;
        batch.commit()
    }

    /// Stores one unfinalized block (see [`StoreBatch::put_block`]).
    pub fn put_block(
        &self,
        block_root: Root,
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), StoreError> {
        let mut batch = self.begin_batch()?;
        batch.put_block(block_root, block)?;
        batch.commit()
    }

    /// Stores one hot state (see [`StoreBatch::put_state`]).
    pub fn put_state(&self, state_root: Root, state: &BeaconState<E>) -> Result<(), StoreError> {
        let mut batch = self.begin_batch()?;
        batch.put_state(state_root, state)?;
        batch.commit()
    }

    /// Records the genesis or checkpoint-sync anchor: its state (at an epoch boundary) and block
    /// become the first split, finalized checkpoint, head, cold snapshot and oldest block.
    pub fn init_anchor(
        &self,
        state_root: Root,
        state: &BeaconState<E>,
        block_root: Root,
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), StoreError> {
        let spe = E::slots_per_epoch();
        let slot = *state.slot();
        if !slot.is_multiple_of(spe) {
            return Err(invalid(
                "anchor state",
                format!("slot {slot} is not at an epoch boundary"),
            ));
        }
        let mut batch = self.begin_batch()?;
        if read_split(&batch.txn.open_table(META)?)?.is_some() {
            return Err(invalid("anchor", "the store already has an anchor"));
        }
        batch.put_block(block_root, block)?;
        batch.put_state(state_root, state)?;
        batch.set_head(Head {
            block_root,
            state_root,
            slot,
        })?;
        let txn = &batch.txn;
        {
            let hot = txn.open_table(HOT_BLOCKS)?;
            let sealed = hot
                .get(block_root.0)?
                .expect("the anchor block was inserted above")
                .value()
                .to_vec();
            txn.open_table(COLD_BLOCKS)?
                .insert(block_root.0, sealed.as_slice())?;
            txn.open_table(COLD_BLOCK_ROOTS)?
                .insert(block.slot(), block_root.0)?;
        }
        let cold_value = self.write_cold_snapshot(&state_root, state.fork_name(), |files| {
            files.write_state(&state_root, state)
        })?;
        batch.new_state_files.cold_roots.push(state_root);
        txn.open_table(COLD_STATES)?
            .insert(slot, cold_value.as_slice())?;
        txn.open_table(COLD_STATE_ROOTS)?
            .insert(state_root.0, slot)?;
        let mut meta = txn.open_table(META)?;
        meta.insert(COLD_SNAPSHOT_KEY, slot.to_le_bytes().as_slice())?;
        write_split(
            &mut meta,
            &Split {
                slot,
                state_root,
                block_root,
            },
        )?;
        write_finalized(
            &mut meta,
            &Checkpoint {
                epoch: slot / spe,
                root: block_root,
            },
        )?;
        drop(meta);
        backfill::write_oldest_block(
            txn,
            &OldestBlock {
                slot: block.slot(),
                root: block_root,
                parent_root: block.parent_root(),
            },
        )?;
        batch.commit()
    }

    /// Bytes the database file takes on disk.
    pub fn file_size(path: &Path) -> std::io::Result<u64> {
        std::fs::metadata(path).map(|m| m.len())
    }

    /// Compacts the database file (returns whether anything was freed).
    pub fn compact(&mut self) -> Result<bool, StoreError> {
        self.db
            .compact()
            .map_err(|e| StoreError::Database(e.into()))
    }
}

fn blob_index_and_slot<E: EthSpec>(blob: &BlobSidecar<E>) -> (u64, Slot) {
    match blob {
        BlobSidecar::Deneb(b) => (b.index, b.signed_block_header.message.slot),
        BlobSidecar::Electra(b) => (b.index, b.signed_block_header.message.slot),
    }
}

/// Decodes untrusted sidecar bytes with the fork their own slot says they belong to.
fn decode_by_slot<T, E: EthSpec>(
    bytes: &[u8],
    spec: &ChainSpec,
    forks: &[ForkName],
    decode: impl Fn(&[u8], ForkName) -> Result<(Slot, T), ssz::DecodeError>,
) -> Option<(T, ForkName)> {
    forks.iter().find_map(|&fork| match decode(bytes, fork) {
        Ok((slot, value)) if spec.fork_name_at_slot::<E>(slot) == fork => Some((value, fork)),
        _ => None,
    })
}

/// The state root and file reference of an unsealed [`COLD_FILE`] value of `cold_states`.
fn cold_file_reference(value: &[u8], slot: Slot) -> Result<(Root, FileRef), StoreError> {
    let corrupt = || StoreError::CorruptValue {
        table: "cold_states",
        key: slot.to_string(),
        reason: format!(
            "a file reference of {} bytes, expected {}",
            value.len().saturating_sub(1),
            32 + FileRef::LEN
        ),
    };
    if value.len() != 1 + 32 + FileRef::LEN {
        return Err(corrupt());
    }
    let root = Root::from_slice(&value[1..33]);
    Ok((
        root,
        FileRef::from_bytes(&value[33..], "cold_states", &root)?,
    ))
}

/// Which of the cold snapshot files `on_disk` (by state root) a committed `cold_states` value
/// references: the slot of each root (`cold_state_roots`) must hold a [`COLD_FILE`] value that
/// names it. The others are orphans.
fn cold_snapshot_file_roots(
    txn: &ReadTransaction,
    on_disk: &[Root],
) -> Result<HashSet<Root>, StoreError> {
    let roots = txn.open_table(COLD_STATE_ROOTS)?;
    let cold = txn.open_table(COLD_STATES)?;
    let mut referenced = HashSet::new();
    for root in on_disk {
        let Some(slot) = roots.get(root.0)?.map(|slot| slot.value()) else {
            continue;
        };
        let Some(value) = cold.get(slot)?.map(|v| v.value().to_vec()) else {
            continue;
        };
        let (value, _) = unseal(value, "cold_states", || slot.to_string())?;
        if value.first() == Some(&COLD_FILE) && cold_file_reference(&value, slot)?.0 == *root {
            referenced.insert(*root);
        }
    }
    Ok(referenced)
}

/// The keys of `hot_states`: the roots of the hot states stored whole.
fn hot_snapshot_roots(txn: &ReadTransaction) -> Result<Vec<Root>, StoreError> {
    let table = txn.open_table(HOT_STATES)?;
    let mut roots = Vec::new();
    for entry in table.iter()? {
        roots.push(Root::from(entry?.0.value()));
    }
    Ok(roots)
}

fn open_database(path: &Path, cache_size: usize) -> Result<Database, StoreError> {
    let mut builder = redb::Builder::new();
    builder.set_cache_size(cache_size);
    builder.create(path).map_err(|source| StoreError::Open {
        path: path.to_owned(),
        source,
    })
}

fn check_schema(txn: &WriteTransaction) -> Result<(), StoreError> {
    let has_meta = txn.list_tables()?.any(|t| t.name() == META.name());
    if !has_meta {
        return Err(StoreError::MissingSchemaVersion);
    }
    let meta = txn.open_table(META)?;
    match schema::read_schema_version(&meta)? {
        None => Err(StoreError::MissingSchemaVersion),
        Some(v) if v > CURRENT_SCHEMA_VERSION => Err(StoreError::SchemaTooNew {
            found: v,
            supported: CURRENT_SCHEMA_VERSION,
        }),
        Some(v) if v < CURRENT_SCHEMA_VERSION => Err(StoreError::SchemaTooOld {
            found: v,
            current: CURRENT_SCHEMA_VERSION,
        }),
        Some(_) => Ok(()),
    }
}

/// A value's payload, its fork and the table it was found in.
type Found = (Vec<u8>, ForkName, &'static str);

fn read_block_sealed(txn: &ReadTransaction, root: &Root) -> Result<Option<Found>, StoreError> {
    for (table, name) in [(HOT_BLOCKS, "hot_blocks"), (COLD_BLOCKS, "cold_blocks")] {
        let value = txn
            .open_table(table)?
            .get(root.0)?
            .map(|v| v.value().to_vec());
        if let Some(value) = value {
            let (bytes, fork) = unseal(value, name, || key_str(root))?;
            return Ok(Some((bytes, fork, name)));
        }
    }
    Ok(None)
}

fn decode_block_summary(bytes: &[u8], root: &Root) -> Result<BlockSummary, StoreError> {
    let mut r = RecordReader::new(bytes, 40, "hot_block_summaries", key_str(root))?;
    Ok(BlockSummary {
        slot: r.u64()?,
        parent_root: r.root()?,
    })
}

fn read_block_summary(
    table: &impl ReadableTable<[u8; 32], &'static [u8]>,
    root: &Root,
) -> Result<Option<BlockSummary>, StoreError> {
    table
        .get(root.0)?
        .map(|v| decode_block_summary(v.value(), root))
        .transpose()
}

fn read_all_block_summaries(
    table: &impl ReadableTable<[u8; 32], &'static [u8]>,
) -> Result<HashMap<Root, BlockSummary>, StoreError> {
    let mut out = HashMap::new();
    for entry in table.iter()? {
        let (key, value) = entry?;
        let root = Root::from(key.value());
        out.insert(root, decode_block_summary(value.value(), &root)?);
    }
    Ok(out)
}

fn decode_state_summary(bytes: &[u8], root: &Root) -> Result<StateSummary, StoreError> {
    let mut r = RecordReader::new(bytes, 72, "hot_state_summaries", key_str(root))?;
    Ok(StateSummary {
        slot: r.u64()?,
        latest_block_root: r.root()?,
        boundary_state_root: r.root()?,
    })
}

fn read_state_summary(
    table: &impl ReadableTable<[u8; 32], &'static [u8]>,
    root: &Root,
) -> Result<Option<StateSummary>, StoreError> {
    table
        .get(root.0)?
        .map(|v| decode_state_summary(v.value(), root))
        .transpose()
}

fn read_split(
    meta: &impl ReadableTable<&'static str, &'static [u8]>,
) -> Result<Option<Split>, StoreError> {
    let Some(v) = meta.get(SPLIT_KEY)? else {
        return Ok(None);
    };
    let mut r = RecordReader::new(v.value(), 72, "meta", SPLIT_KEY.into())?;
    Ok(Some(Split {
        slot: r.u64()?,
        state_root: r.root()?,
        block_root: r.root()?,
    }))
}

fn write_split(
    meta: &mut redb::Table<'_, &'static str, &'static [u8]>,
    split: &Split,
) -> Result<(), StoreError> {
    let record = Record::default()
        .u64(split.slot)
        .root(&split.state_root)
        .root(&split.block_root)
        .into_bytes();
    meta.insert(SPLIT_KEY, record.as_slice())?;
    Ok(())
}

fn write_finalized(
    meta: &mut redb::Table<'_, &'static str, &'static [u8]>,
    checkpoint: &Checkpoint,
) -> Result<(), StoreError> {
    let record = Record::default()
        .u64(checkpoint.epoch)
        .root(&checkpoint.root)
        .into_bytes();
    meta.insert(FINALIZED_KEY, record.as_slice())?;
    Ok(())
}

fn delete_sidecars(
    table: &mut redb::Table<'_, [u8; 40], &'static [u8]>,
    block_root: &Root,
) -> Result<(), StoreError> {
    table.retain_in(
        sidecar_key(block_root, 0)..=sidecar_key(block_root, u64::MAX),
        |_, _| false,
    )?;
    Ok(())
}
