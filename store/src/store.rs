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
    /// Hot blocks of abandoned forks (and their sidecars) deleted.
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

    /// The schema version recorded in the database.
    pub fn schema_version(&self) -> Result<u64, StoreError> {
        let txn = self.read_txn()?;
        schema::read_schema_version(&txn.open_table(META)?)?.ok_or(StoreError::MissingSchemaVersion)
    }

    /// The head last recorded with [`StoreBatch::set_head`] or [`Self::record_head`] (a crash
    /// may lose one recorded with the latter since the last synced commit).
    pub fn head(&self) -> Result<Option<Head>, StoreError> {
        let txn = self.read_txn()?;
        let meta = txn.open_table(META)?;
        let Some(v) = meta.get(HEAD_KEY)? else {
            return Ok(None);
        };
        let mut r = RecordReader::new(v.value(), 72, "meta", HEAD_KEY.into())?;
        Ok(Some(Head {
            block_root: r.root()?,
            state_root: r.root()?,
            slot: r.u64()?,
        }))
    }

    /// The finalized checkpoint of the latest migration (or the anchor).
    pub fn finalized_checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        let txn = self.read_txn()?;
        let meta = txn.open_table(META)?;
        let Some(v) = meta.get(FINALIZED_KEY)? else {
            return Ok(None);
        };
        let mut r = RecordReader::new(v.value(), 40, "meta", FINALIZED_KEY.into())?;
        Ok(Some(Checkpoint {
            epoch: r.u64()?,
            root: r.root()?,
        }))
    }

    /// The hot/cold boundary.
    pub fn split(&self) -> Result<Option<Split>, StoreError> {
        let txn = self.read_txn()?;
        read_split(&txn.open_table(META)?)
    }

    /// The fork choice last recorded with [`StoreBatch::put_fork_choice`], its checksum
    /// checked.
    pub fn fork_choice(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.read_txn()?;
        let meta = txn.open_table(META)?;
        let Some(value) = meta.get(FORK_CHOICE_KEY)? else {
            return Ok(None);
        };
        let value = value.value();
        let corrupt = |reason: String| StoreError::CorruptValue {
            table: "meta",
            key: FORK_CHOICE_KEY.into(),
            reason,
        };
        let Some(len) = value.len().checked_sub(4) else {
            return Err(corrupt(format!("{} bytes", value.len())));
        };
        let stored = u32::from_le_bytes(value[len..].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&value[..len]);
        if stored != computed {
            return Err(corrupt(format!(
                "checksum {computed:08x} does not match the stored {stored:08x}"
            )));
        }
        Ok(Some(value[..len].to_vec()))
    }

    /// The light-client server's value under `key` (in the `light_client/` key space of `meta`),
    /// as it wrote it.
    pub fn get_light_client_data(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.read_txn()?;
        let meta = txn.open_table(META)?;
        let key = format!("{LIGHT_CLIENT_PREFIX}{key}");
        Ok(meta.get(key.as_str())?.map(|v| v.value().to_vec()))
    }

    /// The SSZ bytes of a block, exactly as they were stored.
    ///
    /// [spec]: phase0/p2p-interface.md#beaconblocksbyroot
    pub fn get_block_ssz(&self, block_root: &Root) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.read_txn()?;
        Ok(read_block_sealed(&txn, block_root)?.map(|(bytes, _, _)| bytes))
    }

    /// A block, decoded with the fork of its slot.
    pub fn get_block(&self, block_root: &Root) -> Result<Option<SignedBeaconBlock<E>>, StoreError> {
        let txn = self.read_txn()?;
        read_block_sealed(&txn, block_root)?
            .map(|(bytes, fork, table)| self.decode_block(&bytes, fork, table, block_root))
            .transpose()
    }

    /// The canonical block root of a finalized slot, `None` for an empty slot or one not yet
    /// finalized.
    pub fn block_root_at_slot(&self, slot: Slot) -> Result<Option<Root>, StoreError> {
        let txn = self.read_txn()?;
        Ok(txn
            .open_table(COLD_BLOCK_ROOTS)?
            .get(slot)?
            .map(|v| Root::from(v.value())))
    }

    /// The SSZ bytes of a data column sidecar, as received.
    pub fn get_data_column_ssz(
        &self,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .read_sidecar(DATA_COLUMNS, "data_columns", block_root, index)?
            .map(|(bytes, _)| bytes))
    }

    /// A data column sidecar, decoded with its stored fork.
    ///
    /// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyroot-v1
    pub fn get_data_column(
        &self,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<DataColumnSidecar<E>>, StoreError> {
        self.read_sidecar(DATA_COLUMNS, "data_columns", block_root, index)?
            .map(|(bytes, fork)| {
                DataColumnSidecar::from_ssz_bytes_by_fork(&bytes, fork).map_err(|e| {
                    StoreError::CorruptValue {
                        table: "data_columns",
                        key: format!("{}/{index}", key_str(block_root)),
                        reason: format!("{e:?}"),
                    }
                })
            })
            .transpose()
    }

    /// The indices of the data columns stored for a block.
    pub fn data_column_indices(&self, block_root: &Root) -> Result<Vec<u64>, StoreError> {
        self.sidecar_indices(DATA_COLUMNS, block_root)
    }

    /// The SSZ bytes of a blob sidecar, as received.
    pub fn get_blob_sidecar_ssz(
        &self,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .read_sidecar(BLOB_SIDECARS, "blob_sidecars", block_root, index)?
            .map(|(bytes, _)| bytes))
    }

    /// A blob sidecar, decoded with its stored fork.
    ///
    /// [spec]: deneb/p2p-interface.md#blobsidecarsbyroot-v1
    pub fn get_blob_sidecar(
        &self,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<BlobSidecar<E>>, StoreError> {
        self.read_sidecar(BLOB_SIDECARS, "blob_sidecars", block_root, index)?
            .map(|(bytes, fork)| {
                BlobSidecar::from_ssz_bytes_by_fork(&bytes, fork).map_err(|e| {
                    StoreError::CorruptValue {
                        table: "blob_sidecars",
                        key: format!("{}/{index}", key_str(block_root)),
                        reason: format!("{e:?}"),
                    }
                })
            })
            .transpose()
    }

    /// The indices of the blob sidecars stored for a block.
    pub fn blob_sidecar_indices(&self, block_root: &Root) -> Result<Vec<u64>, StoreError> {
        self.sidecar_indices(BLOB_SIDECARS, block_root)
    }

    /// Every unfinalized block the store holds, as `(slot, block root, parent root)` sorted by
    /// slot then root: what a restarting node imports again into fork choice on top of the
    /// split.
    pub fn hot_blocks(&self) -> Result<Vec<(Slot, Root, Root)>, StoreError> {
        let txn = self.read_txn()?;
        let summaries = read_all_block_summaries(&txn.open_table(HOT_BLOCK_SUMMARIES)?)?;
        let mut blocks: Vec<(Slot, Root, Root)> = summaries
            .into_iter()
            .map(|(root, s)| (s.slot, root, s.parent_root))
            .collect();
        blocks.sort_unstable();
        Ok(blocks)
    }

    /// A state by its root: hot (its epoch-boundary snapshot plus replayed blocks) or cold (the
    /// nearest grid state plus replayed canonical blocks).
    pub fn get_state(
        &self,
        state_root: &Root,
        replayer: &mut impl StateReplayer<E>,
    ) -> Result<Option<BeaconState<E>>, StoreError> {
        let txn = self.read_txn()?;
        if let Some(summary) =
            read_state_summary(&txn.open_table(HOT_STATE_SUMMARIES)?, state_root)?
        {
            return self
                .load_hot_state(&txn, state_root, summary, replayer)
                .map(Some);
        }
        let slot = txn
            .open_table(COLD_STATE_ROOTS)?
            .get(state_root.0)?
            .map(|v| v.value());
        match slot {
            Some(slot) => self.load_cold_state(&txn, slot, replayer).map(Some),
            None => Ok(None),
        }
    }

    /// The canonical finalized state at `slot` (at or before the split).
    pub fn get_cold_state_by_slot(
        &self,
        slot: Slot,
        replayer: &mut impl StateReplayer<E>,
    ) -> Result<Option<BeaconState<E>>, StoreError> {
        let txn = self.read_txn()?;
        match read_split(&txn.open_table(META)?)? {
            Some(split) if slot <= split.slot => {
                self.load_cold_state(&txn, slot, replayer).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Moves the chain up to the new finalized checkpoint from hot to cold, in one transaction:
    ///
    /// - the finalized blocks since the last split are copied to the cold tables, with their
    ///   canonical slots;
    /// - the finalized state roots are mapped to their slots, and the states on the cold grid
    ///   are written as snapshots or diffs;
    /// - hot blocks that do not descend from the finalized block (abandoned forks) are deleted
    ///   with their sidecars, finalized ones from the hot tables, and hot states before the
    ///   checkpoint or off the finalized chain;
    /// - sidecars past their retention window (counted from the finalized epoch) are deleted;
    /// - the split and the finalized checkpoint are recorded.
    ///
    /// The checkpoint state (at the first slot of `finalized.epoch`) must have been stored with
    /// [`StoreBatch::put_state`] as `finalized_state_root`.
    ///
    /// The grid states (reading whole states and computing diffs, seconds at mainnet scale) are
    /// prepared under a read transaction first, so block imports keep committing meanwhile;
    /// migrations themselves must not run concurrently (a moved split is an error).
    ///
    /// [spec]: phase0/fork-choice.md#on_block (finalization), phase0/beacon-chain.md#checkpoint
    pub fn migrate_to_finalized(
        &self,
        finalized: &Checkpoint,
        finalized_state_root: Root,
    ) -> Result<MigrationSummary, StoreError> {
        let mut summary = MigrationSummary::default();
        // The expensive part (reading the states, computing diffs) runs under a read
        // transaction, so imports can commit meanwhile; the write transaction only stores it.
        let Some(prepared) = self.prepare_cold_states(finalized, finalized_state_root)? else {
            return Ok(summary);
        };
        let new_slot = prepared.new_slot;

        let txn = self.begin_write()?;
        let split = read_split(&txn.open_table(META)?)?.ok_or(StoreError::NoAnchor)?;
        if split != prepared.split {
            return Err(invalid(
                "finalized checkpoint",
                "the split moved while the migration was prepared (concurrent migrations)",
            ));
        }

        // 1. The finalized chain since the split, newest first.
        let hot_block_summaries = read_all_block_summaries(&txn.open_table(HOT_BLOCK_SUMMARIES)?)?;
        let mut finalized_chain = Vec::new();
        let mut root = finalized.root;
        while root != split.block_root {
            let block = *hot_block_summaries
                .get(&root)
                .ok_or(StoreError::MissingBlock(root))?;
            if block.slot <= split.slot {
                return Err(invalid(
                    "finalized checkpoint",
                    format!(
                        "block {} does not descend from the split block",
                        finalized.root
                    ),
                ));
            }
            finalized_chain.push((root, block.slot));
            root = block.parent_root;
        }
        {
            let hot_blocks = txn.open_table(HOT_BLOCKS)?;
            let mut cold_blocks = txn.open_table(COLD_BLOCKS)?;
            let mut cold_roots = txn.open_table(COLD_BLOCK_ROOTS)?;
            for (root, slot) in &finalized_chain {
                let sealed = hot_blocks
                    .get(root.0)?
                    .ok_or(StoreError::MissingBlock(*root))?
                    .value()
                    .to_vec();
                cold_blocks.insert(root.0, sealed.as_slice())?;
                cold_roots.insert(*slot, root.0)?;
            }
        }
        summary.blocks_finalized = finalized_chain.len();

        // 2. Finalized state roots and the cold grid.
        {
            let mut cold_state_roots = txn.open_table(COLD_STATE_ROOTS)?;
            for (slot, root) in &prepared.state_roots {
                cold_state_roots.insert(root.0, *slot)?;
            }
            let mut cold = txn.open_table(COLD_STATES)?;
            for (slot, value) in &prepared.cold_states {
                cold.insert(*slot, value.as_slice())?;
            }
        }
        if let Some(slot) = prepared.last_snapshot {
            txn.open_table(META)?
                .insert(COLD_SNAPSHOT_KEY, slot.to_le_bytes().as_slice())?;
        }
        summary.cold_snapshots = prepared.snapshots;
        summary.cold_diffs = prepared.diffs;
        summary.cold_states_missing = prepared.missing;
        drop(prepared);

        let mut doomed_files = Vec::new();
        // 3. Prune: keep only hot blocks descending from the finalized block, and hot states on
        //    them from the checkpoint on.
        let finalized_set: HashSet<Root> = finalized_chain.iter().map(|(r, _)| *r).collect();
        let mut sorted: Vec<(Root, BlockSummary)> = hot_block_summaries.into_iter().collect();
        sorted.sort_by_key(|(_, s)| s.slot);
        let mut keep: HashSet<Root> = HashSet::from([finalized.root]);
        for (root, block) in &sorted {
            if keep.contains(&block.parent_root) && *root != split.block_root {
                keep.insert(*root);
            }
        }
        {
            let mut hot_blocks = txn.open_table(HOT_BLOCKS)?;
            let mut hot_summaries = txn.open_table(HOT_BLOCK_SUMMARIES)?;
            let mut columns = txn.open_table(DATA_COLUMNS)?;
            let mut blobs = txn.open_table(BLOB_SIDECARS)?;
            let mut sidecar_slots = txn.open_table(DATA_SIDECAR_SLOTS)?;
            for (root, block) in &sorted {
                if keep.contains(root) {
                    continue;
                }
                hot_blocks.remove(root.0)?;
                hot_summaries.remove(root.0)?;
                if !finalized_set.contains(root) && *root != split.block_root {
                    delete_sidecars(&mut columns, root)?;
                    delete_sidecars(&mut blobs, root)?;
                    sidecar_slots.remove(slot_root_key(block.slot, root))?;
                    summary.blocks_pruned += 1;
                }
            }
        }
        {
            let mut states = txn.open_table(HOT_STATES)?;
            let mut pending = txn.open_table(PENDING_SNAPSHOTS)?;
            let mut summaries = txn.open_table(HOT_STATE_SUMMARIES)?;
            let mut doomed = HashSet::new();
            let mut kept = Vec::new();
            for entry in summaries.iter()? {
                let (key, value) = entry?;
                let root = Root::from(key.value());
                let s = decode_state_summary(value.value(), &root)?;
                if s.slot < new_slot || !keep.contains(&s.latest_block_root) {
                    doomed.insert(root);
                } else {
                    kept.push((root, s));
                }
            }
            for root in &doomed {
                summaries.remove(root.0)?;
                pending.remove(root.0)?;
                if states.remove(root.0)?.is_some() {
                    doomed_files.push(*root);
                }
            }
            // A kept state naming a pruned snapshot (one that named an older snapshot while
            // its own was pending) names the checkpoint state instead: every kept state
            // descends from it.
            for (root, s) in kept {
                if doomed.contains(&s.boundary_state_root) {
                    let record = Record::default()
                        .u64(s.slot)
                        .root(&s.latest_block_root)
                        .root(&finalized_state_root)
                        .into_bytes();
                    summaries.insert(root.0, record.as_slice())?;
                }
            }
            summary.states_pruned = doomed.len();
        }

        // 4. Sidecar retention, from the finalized epoch (never later than the current one).
        summary.sidecar_blocks_expired = self.prune_sidecars_in(&txn, finalized.epoch)?;

        let mut meta = txn.open_table(META)?;
        write_split(
            &mut meta,
            &Split {
                slot: new_slot,
                state_root: finalized_state_root,
                block_root: finalized.root,
            },
        )?;
        write_finalized(&mut meta, finalized)?;
        drop(meta);
        txn.commit()?;
        // Only now that no committed reference names them, and under the write lock, each
        // checked once more: a batch that committed since may have stored one of these states
        // again (a late caller storing an old checkpoint state). One that cannot be deleted
        // stays an orphan until the next open.
        if !doomed_files.is_empty() {
            let txn = self.begin_write()?;
            {
                let states = txn.open_table(HOT_STATES)?;
                for root in &doomed_files {
                    if states.get(root.0)?.is_none() {
                        let _ = self.state_files.remove(root);
                    }
                }
            }
            txn.abort()?;
        }
        Ok(summary)
    }

    /// Deletes data columns older than `MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS` and blob
    /// sidecars older than `MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS` before `current_epoch`;
    /// returns how many blocks lost sidecars.
    ///
    /// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1
    pub fn prune_data_sidecars(&self, current_epoch: Epoch) -> Result<usize, StoreError> {
        let txn = self.begin_write()?;
        let n = self.prune_sidecars_in(&txn, current_epoch)?;
        txn.commit()?;
        Ok(n)
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

    fn prune_sidecars_in(
        &self,
        txn: &WriteTransaction,
        current_epoch: Epoch,
    ) -> Result<usize, StoreError> {
        let spe = E::slots_per_epoch();
        let column_cutoff = current_epoch
            .saturating_sub(self.spec.min_epochs_for_data_column_sidecars_requests)
            .saturating_mul(spe);
        let blob_cutoff = current_epoch
            .saturating_sub(self.spec.min_epochs_for_blob_sidecars_requests)
            .saturating_mul(spe);
        let end = column_cutoff.max(blob_cutoff);
        let mut index = txn.open_table(DATA_SIDECAR_SLOTS)?;
        let expired: Vec<(Slot, Root)> = index
            .range(..slot_root_key(end, &Root::ZERO))?
            .map(|e| e.map(|(k, _)| codec::split_slot_root_key(&k.value())))
            .collect::<Result<_, _>>()?;
        let mut columns = txn.open_table(DATA_COLUMNS)?;
        let mut blobs = txn.open_table(BLOB_SIDECARS)?;
        for (slot, root) in &expired {
            if *slot < column_cutoff {
                delete_sidecars(&mut columns, root)?;
            }
            if *slot < blob_cutoff {
                delete_sidecars(&mut blobs, root)?;
            }
            if *slot < column_cutoff.min(blob_cutoff) {
                index.remove(slot_root_key(*slot, root))?;
            }
        }
        Ok(expired.len())
    }

    /// Reads what a migration to `finalized` writes to the cold tables: the finalized state
    /// roots since the split and the grid states, as snapshots or diffs. `None` if the split is
    /// already there.
    fn prepare_cold_states(
        &self,
        finalized: &Checkpoint,
        finalized_state_root: Root,
    ) -> Result<Option<PreparedColdStates>, StoreError> {
        let history = slots_per_historical_root::<E>();
        let new_slot = finalized.epoch * E::slots_per_epoch();
        let txn = self.read_txn()?;
        let split = read_split(&txn.open_table(META)?)?.ok_or(StoreError::NoAnchor)?;
        if new_slot < split.slot {
            return Err(StoreError::FinalizationReverted {
                new: new_slot,
                split: split.slot,
            });
        }
        if new_slot == split.slot {
            return Ok(None);
        }
        if new_slot - split.slot > history {
            return Err(StoreError::MigrationGapTooLarge {
                from: split.slot,
                to: new_slot,
            });
        }

        // The checkpoint state's `state_roots` name every finalized state root since the split.
        let hot_states = txn.open_table(HOT_STATES)?;
        let read_hot = |root: &Root| self.read_hot_snapshot(&hot_states, root);
        let (finalized_state, _) = read_hot(&finalized_state_root)?
            .ok_or(StoreError::MissingFinalizedState(finalized_state_root))?;
        if peek_u64(&finalized_state, 40) != Some(new_slot) {
            return Err(invalid(
                "finalized state",
                format!("state {finalized_state_root} is not at the checkpoint slot {new_slot}"),
            ));
        }
        let state_roots_at = STATE_ROOTS_OFFSET_BEFORE_BLOCK_ROOTS + 32 * history as usize;
        let state_roots = (split.slot + 1..=new_slot)
            .map(|slot| {
                if slot == new_slot {
                    return Ok((slot, finalized_state_root));
                }
                let at = state_roots_at + 32 * (slot % history) as usize;
                finalized_state
                    .get(at..at + 32)
                    .map(|r| (slot, Root::from_slice(r)))
                    .ok_or_else(|| StoreError::CorruptValue {
                        table: "hot_states",
                        key: key_str(&finalized_state_root),
                        reason: "too short for its state_roots".into(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        drop(finalized_state);

        // The latest cold snapshot's SSZ, as the base of diffs.
        let cold = txn.open_table(COLD_STATES)?;
        let mut base: Option<(Slot, Vec<u8>)> = None;
        let base_slot = txn
            .open_table(META)?
            .get(COLD_SNAPSHOT_KEY)?
            .and_then(|v| peek_u64(v.value(), 0));
        if let Some(slot) = base_slot
            && let Some(value) = cold.get(slot)?.map(|v| v.value().to_vec())
        {
            let (value, _) = unseal(value, "cold_states", || slot.to_string())?;
            base = self
                .read_cold_snapshot(&value, slot)?
                .map(|ssz| (slot, ssz));
        }

        let mut prepared = PreparedColdStates {
            split,
            new_slot,
            state_roots,
            cold_states: Vec::new(),
            last_snapshot: None,
            snapshots: 0,
            diffs: 0,
            missing: 0,
        };
        let grid = if self.config.cold_diff_interval == 0 {
            self.config.cold_snapshot_interval
        } else {
            self.config.cold_diff_interval
        };
        let first_grid = (split.slot / grid + 1) * grid;
        for slot in (first_grid..=new_slot).step_by(grid as usize) {
            let (_, root) = prepared.state_roots[(slot - split.slot - 1) as usize];
            let Some((ssz_bytes, fork)) = read_hot(&root)? else {
                prepared.missing += 1;
                continue;
            };
            if !slot.is_multiple_of(self.config.cold_snapshot_interval)
                && let Some((base_slot, base_ssz)) = &base
            {
                let diff = state_diff::compute_diff(base_ssz, &ssz_bytes);
                // A diff that saves little is not worth the dependency on its base.
                if diff.len() < ssz_bytes.len() / 2 {
                    let mut value = Vec::with_capacity(9 + diff.len());
                    value.push(COLD_DIFF);
                    value.extend_from_slice(&base_slot.to_le_bytes());
                    value.extend_from_slice(&diff);
                    prepared.cold_states.push((slot, seal(&value, fork)));
                    prepared.diffs += 1;
                    continue;
                }
            }
            // Its file is written now, before the migration's transaction references it; a
            // migration that does not commit leaves an orphan, removed at the next open.
            let sealed = codec::seal_owned(ssz_bytes, fork);
            let value =
                self.write_cold_snapshot(&root, fork, |files| files.write(&root, &sealed))?;
            prepared.cold_states.push((slot, value));
            prepared.snapshots += 1;
            prepared.last_snapshot = Some(slot);
            base = Some((slot, codec::unseal_owned(sealed)));
        }
        Ok(Some(prepared))
    }

    fn read_sidecar(
        &self,
        table: redb::TableDefinition<'_, [u8; 40], &[u8]>,
        name: &'static str,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<(Vec<u8>, ForkName)>, StoreError> {
        let txn = self.read_txn()?;
        let value = txn
            .open_table(table)?
            .get(sidecar_key(block_root, index))?
            .map(|v| v.value().to_vec());
        value
            .map(|v| unseal(v, name, || format!("{}/{index}", key_str(block_root))))
            .transpose()
    }

    fn sidecar_indices(
        &self,
        table: redb::TableDefinition<'_, [u8; 40], &[u8]>,
        block_root: &Root,
    ) -> Result<Vec<u64>, StoreError> {
        let txn = self.read_txn()?;
        let table = txn.open_table(table)?;
        let indices = table
            .range(sidecar_key(block_root, 0)..=sidecar_key(block_root, u64::MAX))?
            .map(|e| {
                e.map(|(k, _)| u64::from_be_bytes(k.value()[32..].try_into().expect("8 bytes")))
            })
            .collect::<Result<_, _>>()?;
        Ok(indices)
    }

    fn decode_block(
        &self,
        bytes: &[u8],
        stored: ForkName,
        table: &'static str,
        root: &Root,
    ) -> Result<SignedBeaconBlock<E>, StoreError> {
        let block = SignedBeaconBlock::from_ssz_bytes(bytes, &self.spec).map_err(|e| {
            StoreError::CorruptValue {
                table,
                key: key_str(root),
                reason: format!("{e:?}"),
            }
        })?;
        if block.fork_name() != stored {
            return Err(StoreError::WrongFork {
                table,
                key: key_str(root),
                stored,
                expected: block.fork_name(),
            });
        }
        Ok(block)
    }

    fn decode_state(
        &self,
        bytes: &[u8],
        stored: ForkName,
        table: &'static str,
        key: String,
    ) -> Result<BeaconState<E>, StoreError> {
        let state = BeaconState::from_ssz_bytes(bytes, &self.spec).map_err(|e| {
            StoreError::CorruptValue {
                table,
                key: key.clone(),
                reason: format!("{e:?}"),
            }
        })?;
        if state.fork_name() != stored {
            return Err(StoreError::WrongFork {
                table,
                key,
                stored,
                expected: state.fork_name(),
            });
        }
        Ok(state)
    }

    /// The hot snapshot `root`, unsealed, from its file; `None` when `table` (of the caller's
    /// read transaction) has no reference to it.
    fn read_hot_snapshot(
        &self,
        table: &impl ReadableTable<[u8; 32], &'static [u8]>,
        root: &Root,
    ) -> Result<Option<(Vec<u8>, ForkName)>, StoreError> {
        let Some(reference) = table.get(root.0)? else {
            return Ok(None);
        };
        let reference = FileRef::from_bytes(reference.value(), "hot_states", root)?;
        if let Some(sealed) = self.state_files.read(root, reference)? {
            return unseal(sealed, "hot_states", || key_str(root)).map(Some);
        }
        // A migration that committed after the caller's transaction began may have pruned the
        // state and deleted its file: then it is gone, as a later read would find. A file
        // missing while its reference is still committed was lost.
        let still_referenced = self
            .db
            .begin_read()?
            .open_table(HOT_STATES)?
            .get(root.0)?
            .is_some();
        if still_referenced {
            Err(StoreError::MissingStateFile {
                root: *root,
                path: self.state_files.path(root),
            })
        } else {
            Ok(None)
        }
    }

    /// Writes the snapshot of the state `root` to its cold file with `write` (durably, before
    /// the transaction that references it commits) and returns the `cold_states` value that
    /// references it.
    fn write_cold_snapshot(
        &self,
        root: &Root,
        fork: ForkName,
        write: impl FnOnce(&StateFiles) -> Result<FileRef, StoreError>,
    ) -> Result<Vec<u8>, StoreError> {
        let reference = write(&self.cold_files)?;
        let mut value = Vec::with_capacity(1 + 32 + FileRef::LEN);
        value.push(COLD_FILE);
        value.extend_from_slice(root.as_slice());
        value.extend_from_slice(&reference.to_bytes());
        Ok(seal(&value, fork))
    }

    /// The SSZ of the cold state at `slot` when its unsealed `cold_states` value stores it
    /// whole (inline, or in its file); `None` when the value is a diff.
    fn read_cold_snapshot(&self, value: &[u8], slot: Slot) -> Result<Option<Vec<u8>>, StoreError> {
        match value.first() {
            Some(&COLD_FULL) => Ok(Some(value[1..].to_vec())),
            Some(&COLD_FILE) => {
                let (root, reference) = cold_file_reference(value, slot)?;
                let sealed = self.cold_files.read(&root, reference)?.ok_or_else(|| {
                    StoreError::MissingStateFile {
                        root,
                        path: self.cold_files.path(&root),
                    }
                })?;
                let (ssz_bytes, _) = unseal(sealed, "cold_states", || slot.to_string())?;
                Ok(Some(ssz_bytes))
            }
            Some(&COLD_DIFF) => Ok(None),
            other => Err(StoreError::CorruptValue {
                table: "cold_states",
                key: slot.to_string(),
                reason: format!("unknown state encoding {other:?}"),
            }),
        }
    }

    fn load_hot_state(
        &self,
        txn: &ReadTransaction,
        state_root: &Root,
        summary: StateSummary,
        replayer: &mut impl StateReplayer<E>,
    ) -> Result<BeaconState<E>, StoreError> {
        // The snapshot named, or, while that one is pending, the one its summary names.
        let states = txn.open_table(HOT_STATES)?;
        let pending = txn.open_table(PENDING_SNAPSHOTS)?;
        let state_summaries = txn.open_table(HOT_STATE_SUMMARIES)?;
        let mut boundary = summary.boundary_state_root;
        for hops in 0.. {
            if pending.get(boundary.0)?.is_none() {
                break;
            }
            let named = read_state_summary(&state_summaries, &boundary)?
                .ok_or(StoreError::MissingState(boundary))?
                .boundary_state_root;
            // Each pending snapshot names an older one; a cycle is a damaged table.
            if named == boundary || hops > slots_per_historical_root::<E>() {
                return Err(StoreError::CorruptValue {
                    table: "hot_state_summaries",
                    key: key_str(&boundary),
                    reason: "a pending snapshot that names no older snapshot".into(),
                });
            }
            boundary = named;
        }
        let (bytes, fork) = self
            .read_hot_snapshot(&states, &boundary)?
            .ok_or(StoreError::MissingState(boundary))?;
        let mut state = self.decode_state(&bytes, fork, "hot_states", key_str(&boundary))?;
        drop(bytes);
        if boundary == *state_root {
            return Ok(state);
        }

        // The blocks after the snapshot, found by walking back from the state's latest block.
        let summaries = txn.open_table(HOT_BLOCK_SUMMARIES)?;
        let mut chain = Vec::new();
        let mut root = summary.latest_block_root;
        loop {
            let block =
                read_block_summary(&summaries, &root)?.ok_or(StoreError::MissingBlock(root))?;
            if block.slot <= *state.slot() {
                break;
            }
            chain.push(root);
            root = block.parent_root;
        }
        let blocks = txn.open_table(HOT_BLOCKS)?;
        for root in chain.iter().rev() {
            let value = blocks
                .get(root.0)?
                .map(|v| v.value().to_vec())
                .ok_or(StoreError::MissingBlock(*root))?;
            let (bytes, fork) = unseal(value, "hot_blocks", || key_str(root))?;
            let block = self.decode_block(&bytes, fork, "hot_blocks", root)?;
            replayer
                .apply_block(&mut state, &block)
                .map_err(StoreError::Replay)?;
        }
        replayer
            .advance_to_slot(&mut state, summary.slot)
            .map_err(StoreError::Replay)?;
        Ok(state)
    }

    fn load_cold_state(
        &self,
        txn: &ReadTransaction,
        slot: Slot,
        replayer: &mut impl StateReplayer<E>,
    ) -> Result<BeaconState<E>, StoreError> {
        let cold = txn.open_table(COLD_STATES)?;
        let (grid_slot, value) = cold
            .range(..=slot)?
            .next_back()
            .transpose()?
            .map(|(k, v)| (k.value(), v.value().to_vec()))
            .ok_or(StoreError::MissingColdState(slot))?;
        let (value, fork) = unseal(value, "cold_states", || grid_slot.to_string())?;
        let whole = self.read_cold_snapshot(&value, grid_slot)?;
        let ssz_bytes = match (whole, value.first()) {
            (Some(ssz_bytes), _) => ssz_bytes,
            (None, Some(&COLD_DIFF)) => {
                let base_slot = peek_u64(&value, 1).ok_or_else(|| StoreError::CorruptValue {
                    table: "cold_states",
                    key: grid_slot.to_string(),
                    reason: "diff without a base slot".into(),
                })?;
                let base = cold
                    .get(base_slot)?
                    .map(|v| v.value().to_vec())
                    .ok_or(StoreError::MissingColdState(base_slot))?;
                let (base, _) = unseal(base, "cold_states", || base_slot.to_string())?;
                let base = self.read_cold_snapshot(&base, base_slot)?.ok_or_else(|| {
                    StoreError::CorruptValue {
                        table: "cold_states",
                        key: base_slot.to_string(),
                        reason: "the base of a diff is not a snapshot".into(),
                    }
                })?;
                state_diff::apply_diff(&base, &value[9..]).map_err(|source| StoreError::Diff {
                    table: "cold_states",
                    slot: grid_slot,
                    source,
                })?
            }
            (None, other) => {
                return Err(StoreError::CorruptValue {
                    table: "cold_states",
                    key: grid_slot.to_string(),
                    reason: format!("unknown state encoding {other:?}"),
                });
            }
        };
        drop(value);
        let mut state =
            self.decode_state(&ssz_bytes, fork, "cold_states", grid_slot.to_string())?;
        drop(ssz_bytes);

        let roots = txn.open_table(COLD_BLOCK_ROOTS)?;
        let blocks = txn.open_table(COLD_BLOCKS)?;
        for entry in roots.range(grid_slot + 1..=slot)? {
            let (_, root) = entry?;
            let root = Root::from(root.value());
            let value = blocks
                .get(root.0)?
                .map(|v| v.value().to_vec())
                .ok_or(StoreError::MissingBlock(root))?;
            let (bytes, fork) = unseal(value, "cold_blocks", || key_str(&root))?;
            let block = self.decode_block(&bytes, fork, "cold_blocks", &root)?;
            replayer
                .apply_block(&mut state, &block)
                .map_err(StoreError::Replay)?;
        }
        replayer
            .advance_to_slot(&mut state, slot)
            .map_err(StoreError::Replay)?;
        Ok(state)
    }
}

impl<E: EthSpec> StoreBatch<'_, E> {
    /// Stores an unfinalized block, SSZ-encoding it. Prefer [`Self::put_block_ssz`] with the
    /// bytes as received.
    pub fn put_block(
        &mut self,
        block_root: Root,
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), StoreError> {
        let expected = self.store.spec.fork_name_at_slot::<E>(block.slot());
        if block.fork_name() != expected {
            return Err(invalid(
                "block",
                format!(
                    "a {} block at slot {} where the chain is at {expected}",
                    block.fork_name(),
                    block.slot()
                ),
            ));
        }
        self.insert_block(block_root, &block.as_ssz_bytes(), block)
    }

    /// Stores an unfinalized block from its SSZ bytes as received (checked by decoding with the
    /// fork of its slot), so it can be served without re-encoding.
    pub fn put_block_ssz(&mut self, block_root: Root, bytes: &[u8]) -> Result<(), StoreError> {
        let block = SignedBeaconBlock::<E>::from_ssz_bytes(bytes, &self.store.spec)
            .map_err(|e| invalid("block SSZ", format!("{e:?}")))?;
        self.insert_block(block_root, bytes, &block)
    }

    fn insert_block(
        &mut self,
        block_root: Root,
        bytes: &[u8],
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), StoreError> {
        self.txn
            .open_table(HOT_BLOCKS)?
            .insert(block_root.0, seal(bytes, block.fork_name()).as_slice())?;
        let summary = Record::default()
            .u64(block.slot())
            .root(&block.parent_root())
            .into_bytes();
        self.txn
            .open_table(HOT_BLOCK_SUMMARIES)?
            .insert(block_root.0, summary.as_slice())?;
        Ok(())
    }

    /// Stores a hot state: whole at an epoch boundary (or when its boundary snapshot is not
    /// stored), otherwise as a summary naming its latest block and its boundary snapshot.
    /// Returns whether it was stored whole.
    pub fn put_state(
        &mut self,
        state_root: Root,
        state: &BeaconState<E>,
    ) -> Result<bool, StoreError> {
        Ok(self.store_state(state_root, state, false, None)? == StoredAs::Whole)
    }

    /// [`Self::put_state`], except that a state that would be stored whole (its epoch's
    /// snapshot) is recorded as a pending snapshot: a summary naming the nearest snapshot
    /// before it on its chain, so it loads by replaying the blocks since, until
    /// [`Self::write_pending_snapshot`] stores it whole. This keeps the ~135 MiB write of a
    /// mainnet state out of the batch of the block that reached the epoch boundary.
    pub fn put_state_deferring_snapshot(
        &mut self,
        state_root: Root,
        state: &BeaconState<E>,
    ) -> Result<StoredAs, StoreError> {
        self.store_state(state_root, state, true, None)
    }

    /// Stores `state` whole, as a pending snapshot (`defer`) or as a summary; `prewritten` is
    /// the reference of its file when that was written before the batch began.
    fn store_state(
        &mut self,
        state_root: Root,
        state: &BeaconState<E>,
        defer: bool,
        prewritten: Option<FileRef>,
    ) -> Result<StoredAs, StoreError> {
        let slot = *state.slot();
        let boundary_slot = slot - slot % E::slots_per_epoch();
        let mut states = self.txn.open_table(HOT_STATES)?;
        let mut pending = self.txn.open_table(PENDING_SNAPSHOTS)?;
        let mut summaries = self.txn.open_table(HOT_STATE_SUMMARIES)?;
        // A snapshot: stored whole, or pending.
        let is_snapshot = |root: &Root| -> Result<bool, StoreError> {
            Ok(states.get(root.0)?.is_some() || pending.get(root.0)?.is_some())
        };
        let root_at = |slot: Slot| -> Root {
            let index = (slot % slots_per_historical_root::<E>()) as usize;
            *state
                .state_roots()
                .get(index)
                .expect("state_roots has SLOTS_PER_HISTORICAL_ROOT entries")
        };
        // The nearest snapshot on this state's chain in the slots `from..slot`, newest first,
        // through its own `state_roots`: a snapshot, or the one a stored state's summary names
        // (a summary at or after `named_from`).
        let nearest_snapshot = |from: Slot, named_from: Slot| -> Result<Option<Root>, StoreError> {
            for earlier in (from..slot).rev() {
                let root = root_at(earlier);
                if is_snapshot(&root)? {
                    return Ok(Some(root));
                }
                if let Some(summary) = read_state_summary(&summaries, &root)?
                    && summary.slot >= named_from
                    && is_snapshot(&summary.boundary_state_root)?
                {
                    return Ok(Some(summary.boundary_state_root));
                }
            }
            Ok(None)
        };
        // The epoch's snapshot: the state at its first slot, or (that slot empty) the first
        // state of the epoch stored whole on this state's chain; the state itself when there
        // is none.
        let epoch_snapshot = nearest_snapshot(boundary_slot, boundary_slot)?;

        let (boundary_state_root, stored) = match epoch_snapshot {
            Some(snapshot) => (snapshot, StoredAs::Summary),
            // Stored whole already (same root, same bytes): kept.
            None if states.get(state_root.0)?.is_some() => (state_root, StoredAs::Whole),
            None => {
                // Deferred: the nearest snapshot before it on its chain (the state before it
                // that is stored, or the snapshot that one names).
                let previous = if defer {
                    nearest_snapshot(slot.saturating_sub(slots_per_historical_root::<E>()), 0)?
                } else {
                    None
                };
                match previous {
                    Some(previous) => {
                        pending.insert(state_root.0, slot)?;
                        (previous, StoredAs::PendingSnapshot)
                    }
                    None => {
                        // A file beside the database, written and synced before this batch's
                        // transaction references it.
                        let reference = match prewritten {
                            Some(reference) => reference,
                            None => self.store.write_state_file(state_root, state)?,
                        };
                        self.new_state_files.roots.push(state_root);
                        states.insert(state_root.0, reference.to_bytes().as_slice())?;
                        (state_root, StoredAs::Whole)
                    }
                }
            }
        };
        // The latest block header's state root is filled in at the next slot; until then the
        // block root is the header's root with this state's root in it.
        let mut header = state.latest_block_header().clone();
        if header.state_root == Root::ZERO {
            header.state_root = state_root;
        }
        let record = Record::default()
            .u64(slot)
            .root(&header.tree_hash_root())
            .root(&boundary_state_root)
            .into_bytes();
        summaries.insert(state_root.0, record.as_slice())?;
        if stored != StoredAs::PendingSnapshot {
            pending.remove(state_root.0)?;
        }
        Ok(stored)
    }

    /// Stores a data column sidecar, SSZ-encoding it.
    pub fn put_data_column(
        &mut self,
        block_root: Root,
        column: &DataColumnSidecar<E>,
    ) -> Result<(), StoreError> {
        let slot = column.slot();
        self.insert_sidecar(
            DATA_COLUMNS,
            block_root,
            column.index(),
            slot,
            &column.as_ssz_bytes(),
            column.fork_name(),
        )
    }

    /// Stores a data column sidecar from its SSZ bytes as received (checked by decoding).
    pub fn put_data_column_ssz(
        &mut self,
        block_root: Root,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        let (column, fork) = decode_by_slot::<_, E>(
            bytes,
            &self.store.spec,
            DataColumnSidecar::<E>::FORKS,
            |b, f| DataColumnSidecar::<E>::from_ssz_bytes_by_fork(b, f).map(|c| (c.slot(), c)),
        )
        .ok_or_else(|| invalid("data column SSZ", "does not decode at the fork of its slot"))?;
        let slot = column.slot();
        self.insert_sidecar(DATA_COLUMNS, block_root, column.index(), slot, bytes, fork)
    }

    /// Stores a blob sidecar, SSZ-encoding it.
    pub fn put_blob_sidecar(
        &mut self,
        block_root: Root,
        blob: &BlobSidecar<E>,
    ) -> Result<(), StoreError> {
        let (index, slot) = blob_index_and_slot(blob);
        self.insert_sidecar(
            BLOB_SIDECARS,
            block_root,
            index,
            slot,
            &blob.as_ssz_bytes(),
            blob.fork_name(),
        )
    }

    /// Stores a blob sidecar from its SSZ bytes as received (checked by decoding).
    pub fn put_blob_sidecar_ssz(
        &mut self,
        block_root: Root,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        let (blob, fork) =
            decode_by_slot::<_, E>(bytes, &self.store.spec, BlobSidecar::<E>::FORKS, |b, f| {
                BlobSidecar::<E>::from_ssz_bytes_by_fork(b, f)
                    .map(|s| (blob_index_and_slot(&s).1, s))
            })
            .ok_or_else(|| {
                invalid(
                    "blob sidecar SSZ",
                    "does not decode at the fork of its slot",
                )
            })?;
        let (index, slot) = blob_index_and_slot(&blob);
        self.insert_sidecar(BLOB_SIDECARS, block_root, index, slot, bytes, fork)
    }

    fn insert_sidecar(
        &mut self,
        table: redb::TableDefinition<'_, [u8; 40], &[u8]>,
        block_root: Root,
        index: u64,
        slot: Slot,
        bytes: &[u8],
        fork: ForkName,
    ) -> Result<(), StoreError> {
        let expected = self.store.spec.fork_name_at_slot::<E>(slot);
        if fork != expected {
            return Err(invalid(
                "sidecar",
                format!("a {fork} sidecar at slot {slot} where the chain is at {expected}"),
            ));
        }
        self.txn.open_table(table)?.insert(
            sidecar_key(&block_root, index),
            seal(bytes, fork).as_slice(),
        )?;
        self.txn
            .open_table(DATA_SIDECAR_SLOTS)?
            .insert(slot_root_key(slot, &block_root), ())?;
        Ok(())
    }

    /// Records the head.
    pub fn set_head(&mut self, head: Head) -> Result<(), StoreError> {
        let record = Record::default()
            .root(&head.block_root)
            .root(&head.state_root)
            .u64(head.slot)
            .into_bytes();
        self.txn
            .open_table(META)?
            .insert(HEAD_KEY, record.as_slice())?;
        Ok(())
    }

    /// Records the persisted fork choice (replacing the last one), with a CRC-32 after it.
    pub fn put_fork_choice(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        let mut value = Vec::with_capacity(bytes.len() + 4);
        value.extend_from_slice(bytes);
        value.extend_from_slice(&crc32fast::hash(bytes).to_le_bytes());
        self.txn
            .open_table(META)?
            .insert(FORK_CHOICE_KEY, value.as_slice())?;
        Ok(())
    }

    /// Writes the light-client server's `bytes` under `key` (in the `light_client/` key space of
    /// `meta`); `None` deletes the key.
    pub fn put_light_client_data(
        &mut self,
        key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let key = format!("{LIGHT_CLIENT_PREFIX}{key}");
        let mut meta = self.txn.open_table(META)?;
        match bytes {
            Some(bytes) => {
                meta.insert(key.as_str(), bytes)?;
            }
            None => {
                meta.remove(key.as_str())?;
            }
        }
        Ok(())
    }

    /// Commits every write of the batch atomically.
    pub fn commit(self) -> Result<(), StoreError> {
        let Self {
            txn,
            mut new_state_files,
            ..
        } = self;
        let result = txn.commit();
        // The files stay whatever the result: a commit that failed may still have reached the
        // disk, and a file without a committed reference is removed at the next open.
        new_state_files.roots.clear();
        new_state_files.cold_roots.clear();
        result?;
        Ok(())
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
