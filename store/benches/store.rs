//! Store benchmarks at mainnet scale (preset `mainnet`, Fulu from genesis):
//!
//! - `state/store_whole`, `state/load_whole`: a 1,000,000-validator state written as a hot
//!   epoch-boundary snapshot (SSZ encode, checksum, redb insert, fsync'd commit) and read back
//!   (read, checksum, decode).
//! - `state/diff_compute`, `state/diff_apply`: the cold diff of the next epoch's state against
//!   it (all balances, both participation lists, some inactivity scores, 64 new and 500 changed
//!   validators, the epoch's roots and randao mix), computed and applied to SSZ bytes.
//! - `state/load_cold_diff`: a cold state stored as a diff, loaded (snapshot + diff + decode).
//! - `state/load_31_slots_after_snapshot`: a cold state 31 slots after a snapshot: snapshot,
//!   decode, then 31 blocks read, decoded and handed to the replayer. The replayer here only
//!   advances the slot and header (the state transition is not this crate's), so the time is
//!   the store's share; the transition's own cost comes on top.
//! - `block/store_with_128_columns_48_blobs`: one ~110 KB block and its 128 data column
//!   sidecars of 48 cells each (12.7 MB), from SSZ bytes, in one fsync'd commit.
//! - `block/load_128_columns_48_blobs`: the 128 columns' SSZ bytes read back.
//!
//! Also printed once: the sizes of the state, of its diff, and the bytes on disk per epoch of
//! a synthetic chain (32 blocks with 128 columns at 48 blobs, one hot snapshot, one cold diff).
//!
//! `cargo bench -p store --bench store`. The database lives in a temporary directory on the
//! same disk as the target directory (`TMPDIR` moves it).

#![allow(
    clippy::unwrap_used,
    reason = "bench setup: a failed store operation aborts the run"
)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use packed_list::PackedList;
use splitmix::splitmix64;
use ssz::Encode;
use ssz_types::{FixedVector, VariableList};
use state_harness::synthetic::{
    SyntheticParams, build_state_with_placeholder_keys, placeholder_pubkey, root, validator,
};
use store::{ReplayError, StateReplayer, Store, StoreConfig, state_diff};
use typenum::Unsigned;
use types::fulu::BeaconState;
use types::phase0::Checkpoint;
use types::{ChainSpec, EthSpec, ForkName, MainnetEthSpec, Root};

type E = MainnetEthSpec;

// ---- The synthetic 1,000,000-validator state of `state_harness::synthetic` (placeholder keys:
// ---- the store never verifies a signature), at an epoch boundary.

const VALIDATORS: usize = 1_000_000;
/// A mainnet-like epoch-boundary slot (epoch 375,000), for the epochs derived from it.
const SLOT: u64 = 12_000_000;
const GWEI_PER_ETH: u64 = 1_000_000_000;

fn build_state() -> BeaconState<E> {
    let params = SyntheticParams {
        slot: SLOT,
        ..SyntheticParams::default()
    };
    build_state_with_placeholder_keys::<E>(VALIDATORS as u64, &params, &spec())
        .expect("build the synthetic state")
}

// ---- The chain around it.

const COLUMNS: u64 = 128;
const BLOBS: usize = 48;

fn spec() -> ChainSpec {
    ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu)
}

/// A synthetic root for `(kind, n)`.
fn synthetic(kind: u64, n: u64) -> Root {
    root(n, 1_000 + kind)
}

/// A Fulu block at `slot` with ~100 KB of transactions, as a block with a full payload has.
fn block(slot: u64, parent_root: Root, state_root: Root) -> types::SignedBeaconBlock<E> {
    let bytes: Vec<u8> = (0..8192u64)
        .flat_map(|i| splitmix64(i ^ slot).to_le_bytes())
        .collect();
    let mut block: types::fulu::SignedBeaconBlock<E> =
        arbitrary::Arbitrary::arbitrary(&mut arbitrary::Unstructured::new(&bytes)).unwrap();
    block.message.slot = slot;
    block.message.parent_root = parent_root;
    block.message.state_root = state_root;
    block.message.body.execution_payload.transactions = VariableList::new(
        (0..100u64)
            .map(|t| {
                VariableList::new(root(t, slot).as_slice().repeat(32)).expect("1 KiB transaction")
            })
            .collect(),
    )
    .unwrap();
    types::SignedBeaconBlock::Fulu(block)
}

/// The 128 column sidecars of `block`, 48 cells each.
fn columns(block: &types::SignedBeaconBlock<E>) -> Vec<Vec<u8>> {
    let header = block.signed_block_header();
    let cell_len = <E as EthSpec>::BytesPerCell::to_usize();
    (0..COLUMNS)
        .map(|index| {
            let cells = (0..BLOBS)
                .map(|b| {
                    let word = splitmix64(index << 8 | b as u64).to_le_bytes();
                    FixedVector::new(word.repeat(cell_len / 8)).unwrap()
                })
                .collect();
            types::fulu::DataColumnSidecar::<E> {
                index,
                column: VariableList::new(cells).unwrap(),
                kzg_commitments: VariableList::new(vec![[0xc0; 48].into(); BLOBS]).unwrap(),
                kzg_proofs: VariableList::new(vec![[0xc1; 48].into(); BLOBS]).unwrap(),
                signed_block_header: header.clone(),
                kzg_commitments_inclusion_proof: FixedVector::from_elem(root(index, 77)),
            }
            .as_ssz_bytes()
        })
        .collect()
}

/// The state one epoch later: every balance and participation flag changed, some inactivity
/// scores, 64 deposits and 500 changed validators, and the epoch's roots and randao mix.
fn next_epoch(state: &BeaconState<E>, epoch_salt: u64) -> BeaconState<E> {
    let mut next = state.clone();
    next.slot += 32;
    next.balances = PackedList::try_from_iter(state.balances.iter().enumerate().map(|(i, b)| {
        let r = splitmix64(i as u64 ^ epoch_salt);
        if r % 100 < 97 {
            b + 11_000 + r % 3_000
        } else {
            b.saturating_sub(8_000)
        }
    }))
    .unwrap();
    next.previous_epoch_participation = state.current_epoch_participation.clone();
    next.current_epoch_participation =
        PackedList::try_from_iter((0..state.validators.len() as u64).map(|i| {
            match splitmix64(i ^ epoch_salt ^ 7) % 100 {
                0..=94 => 0b111,
                95..=97 => 0b011,
                _ => 0,
            }
        }))
        .unwrap();
    for k in 0..20_000u64 {
        let i = (splitmix64(k ^ epoch_salt ^ 9) % state.validators.len() as u64) as usize;
        next.inactivity_scores.update(i, |s| s + 4).unwrap();
    }
    for k in 0..500u64 {
        let i = (splitmix64(k ^ epoch_salt ^ 11) % state.validators.len() as u64) as usize;
        next.validators.get_mut(i).unwrap().exit_epoch = SLOT / 32 + 300;
    }
    for k in 0..64u64 {
        let i = VALIDATORS as u64 + epoch_salt * 64 + k;
        next.validators
            .push(validator(
                i,
                VALIDATORS as u64,
                SLOT / 32,
                placeholder_pubkey(i),
            ))
            .unwrap();
        next.balances.push(32 * GWEI_PER_ETH).unwrap();
        next.previous_epoch_participation.push(0).unwrap();
        next.current_epoch_participation.push(0).unwrap();
        next.inactivity_scores.push(0).unwrap();
    }
    let epoch = next.slot / 32;
    *next
        .randao_mixes
        .get_mut((epoch % 65_536) as usize)
        .unwrap() = root(epoch, 40);
    for s in state.slot..next.slot {
        *next.block_roots.get_mut((s % 8192) as usize).unwrap() = synthetic(1, s);
        *next.state_roots.get_mut((s % 8192) as usize).unwrap() = synthetic(2, s);
    }
    next.validators.apply_updates().unwrap();
    next.randao_mixes.apply_updates().unwrap();
    next.block_roots.apply_updates().unwrap();
    next.state_roots.apply_updates().unwrap();
    next
}

/// Advances the slot and the latest block header only: a stand-in for the state transition.
struct SlotReplayer;

impl StateReplayer<E> for SlotReplayer {
    fn apply_block(
        &mut self,
        state: &mut types::BeaconState<E>,
        block: &types::SignedBeaconBlock<E>,
    ) -> Result<(), ReplayError> {
        *state.slot_mut() = block.slot();
        let mut header = block.signed_block_header().message;
        header.state_root = Root::ZERO;
        *state.latest_block_header_mut() = header;
        Ok(())
    }

    fn advance_to_slot(
        &mut self,
        state: &mut types::BeaconState<E>,
        slot: u64,
    ) -> Result<(), ReplayError> {
        *state.slot_mut() = slot;
        Ok(())
    }
}

fn file_mib(path: &Path) -> f64 {
    std::fs::metadata(path).unwrap().len() as f64 / (1 << 20) as f64
}

fn benches(c: &mut Criterion) {
    let spec = spec();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    // The defaults: a snapshot every 64 epochs, a diff every epoch, a 256 MiB page cache
    // (`ARBOR_BENCH_DB_CACHE_MIB` sets another page cache, as `arbor bn --db-cache-mib`).
    let mut config = StoreConfig::default();
    if let Some(mib) = std::env::var("ARBOR_BENCH_DB_CACHE_MIB")
        .ok()
        .and_then(|mib| mib.parse::<usize>().ok())
    {
        config.cache_size_bytes = mib << 20;
    }
    let store: Store<E> = Store::open(&path, spec, config).unwrap();

    let start = Instant::now();
    let state0 = build_state();
    let state1 = next_epoch(&state0, 1);
    let (ssz0, ssz1) = (state0.as_ssz_bytes(), state1.as_ssz_bytes());
    eprintln!(
        "built two epochs of a {}-validator state in {:.1?}: {:.1} MiB of SSZ each",
        state0.validators.len(),
        start.elapsed(),
        ssz0.len() as f64 / (1 << 20) as f64
    );
    let start = Instant::now();
    let diff = state_diff::compute_diff(&ssz0, &ssz1);
    eprintln!(
        "diff of the next epoch: {} bytes ({:.2} MiB, {:.1}% of the state) in {:.1?}",
        diff.len(),
        diff.len() as f64 / (1 << 20) as f64,
        100.0 * diff.len() as f64 / ssz1.len() as f64,
        start.elapsed()
    );
    assert_eq!(state_diff::apply_diff(&ssz0, &diff).unwrap(), ssz1);

    // The anchor: a hot and a cold snapshot at SLOT.
    let (state0, state1) = (
        types::BeaconState::Fulu(state0),
        types::BeaconState::Fulu(state1),
    );
    let block0 = block(SLOT, root(0, 50), synthetic(2, SLOT));
    let start = Instant::now();
    store
        .init_anchor(
            synthetic(2, SLOT),
            &state0,
            block0.canonical_root(),
            &block0,
        )
        .unwrap();
    eprintln!(
        "anchor (hot + cold snapshot) written in {:.1?}",
        start.elapsed()
    );

    // One epoch of chain: 32 blocks with 128 columns of 48 blobs, then the next boundary state.
    let before_epoch = file_mib(&path);
    let mut parent = block0.canonical_root();
    let (mut block_bytes, mut column_bytes) = (0usize, 0usize);
    let start = Instant::now();
    for slot in SLOT + 1..=SLOT + 32 {
        let b = block(slot, parent, synthetic(2, slot));
        let root = b.canonical_root();
        let ssz = b.as_ssz_bytes();
        let cols = columns(&b);
        block_bytes += ssz.len();
        column_bytes += cols.iter().map(Vec::len).sum::<usize>();
        let mut batch = store.begin_batch().unwrap();
        batch.put_block_ssz(root, &ssz).unwrap();
        for col in &cols {
            batch.put_data_column_ssz(root, col).unwrap();
        }
        batch.commit().unwrap();
        parent = root;
    }
    let epoch_blocks = start.elapsed();
    let last_block = parent;
    let mut state1 = state1;
    {
        let mut header = store
            .get_block(&last_block)
            .unwrap()
            .unwrap()
            .signed_block_header()
            .message;
        header.state_root = Root::ZERO;
        *state1.latest_block_header_mut() = header;
    }
    let start = Instant::now();
    store.put_state(synthetic(2, SLOT + 32), &state1).unwrap();
    let hot_snapshot = start.elapsed();
    let after_hot = file_mib(&path);
    let start = Instant::now();
    let summary = store
        .migrate_to_finalized(
            &Checkpoint {
                epoch: SLOT / 32 + 1,
                root: last_block,
            },
            synthetic(2, SLOT + 32),
        )
        .unwrap();
    let migration = start.elapsed();
    let after_migration = file_mib(&path);
    eprintln!(
        "one epoch: 32 blocks ({:.2} MiB) + 4,096 columns ({:.1} MiB) stored in {epoch_blocks:.1?}; \
         hot snapshot in {hot_snapshot:.1?}; migration ({summary:?}) in {migration:.1?}; \
         database file {before_epoch:.0} -> {after_hot:.0} (hot) -> {after_migration:.0} MiB (after migration)",
        block_bytes as f64 / (1 << 20) as f64,
        column_bytes as f64 / (1 << 20) as f64,
    );

    // Where a whole-state load goes: decoding the bytes and dropping the decoded state.
    let start = Instant::now();
    let decoded = types::BeaconState::<E>::from_ssz_bytes(&ssz0, store.spec()).unwrap();
    let decode = start.elapsed();
    let start = Instant::now();
    drop(decoded);
    eprintln!(
        "decode of the state's SSZ: {decode:.1?}; dropping the decoded state: {:.1?}",
        start.elapsed()
    );

    let mut group = c.benchmark_group("state");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    // Each write under a fresh root (a stored root is not written again), its file deleted
    // after the timed write so the disk does not fill.
    let mut scratch = 0;
    group.bench_function("store_whole", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                scratch += 1;
                let root = synthetic(3, scratch);
                let start = Instant::now();
                store.put_state(root, black_box(&state0)).unwrap();
                total += start.elapsed();
                std::fs::remove_file(store.state_files_dir().join(format!("{root}.ssz"))).unwrap();
            }
            total
        })
    });
    group.bench_function("load_whole", |b| {
        b.iter(|| {
            store
                .get_state(&synthetic(2, SLOT), &mut SlotReplayer)
                .unwrap()
                .unwrap()
        })
    });
    group.bench_function("diff_compute", |b| {
        b.iter(|| state_diff::compute_diff(black_box(&ssz0), black_box(&ssz1)))
    });
    group.bench_function("diff_apply", |b| {
        b.iter(|| state_diff::apply_diff(black_box(&ssz0), black_box(&diff)).unwrap())
    });
    group.bench_function("load_cold_diff", |b| {
        b.iter(|| {
            store
                .get_cold_state_by_slot(SLOT + 32, &mut SlotReplayer)
                .unwrap()
                .unwrap()
        })
    });
    group.bench_function("load_31_slots_after_snapshot", |b| {
        b.iter(|| {
            store
                .get_cold_state_by_slot(SLOT + 31, &mut SlotReplayer)
                .unwrap()
                .unwrap()
        })
    });
    group.finish();
    drop((state0, state1, ssz0, ssz1, diff));

    let mut group = c.benchmark_group("block");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    let b0 = block(SLOT + 100, parent, synthetic(2, SLOT + 100));
    let b0_ssz = b0.as_ssz_bytes();
    let cols = columns(&b0);
    let mut n = 0u64;
    group.bench_function("store_with_128_columns_48_blobs", |b| {
        b.iter_batched(
            || {
                n += 1;
                synthetic(4, n)
            },
            |root| {
                let mut batch = store.begin_batch().unwrap();
                batch.put_block_ssz(root, &b0_ssz).unwrap();
                for col in &cols {
                    batch.put_data_column_ssz(root, col).unwrap();
                }
                batch.commit().unwrap();
            },
            BatchSize::PerIteration,
        )
    });
    // The same without redb's quick repair: cheaper commits, a full-file walk after a crash.
    let plain: Store<E> = Store::open(
        &dir.path().join("db-no-quick-repair"),
        self::spec(),
        StoreConfig {
            quick_repair: false,
            ..StoreConfig::default()
        },
    )
    .unwrap();
    group.bench_function("store_with_128_columns_48_blobs_no_quick_repair", |b| {
        b.iter_batched(
            || {
                n += 1;
                synthetic(4, n)
            },
            |root| {
                let mut batch = plain.begin_batch().unwrap();
                batch.put_block_ssz(root, &b0_ssz).unwrap();
                for col in &cols {
                    batch.put_data_column_ssz(root, col).unwrap();
                }
                batch.commit().unwrap();
            },
            BatchSize::PerIteration,
        )
    });
    drop(plain);
    let stored = synthetic(4, 1);
    group.bench_function("load_128_columns_48_blobs", |b| {
        b.iter(|| {
            (0..COLUMNS)
                .map(|i| {
                    store
                        .get_data_column_ssz(&stored, i)
                        .unwrap()
                        .unwrap()
                        .len()
                })
                .sum::<usize>()
        })
    });
    group.finish();

    // The floor redb is measured against: the same bytes written to plain files and fsync'd.
    let mut group = c.benchmark_group("baseline_files");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    let state_bytes = types::BeaconState::Fulu(build_state()).as_ssz_bytes();
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    group.bench_function("state_write_fsync", |b| {
        b.iter(|| write_synced(&files.join("state"), &state_bytes))
    });
    // What `put_state` did before schema 3: the sealed state as one value of a redb table,
    // committed durably (a database of its own, so the store's is not touched).
    let redb_db = redb::Database::create(dir.path().join("redb-baseline")).unwrap();
    let redb_table: redb::TableDefinition<'_, u64, &[u8]> = redb::TableDefinition::new("states");
    group.bench_function("state_write_redb", |b| {
        b.iter(|| {
            let txn = redb_db.begin_write().unwrap();
            txn.open_table(redb_table)
                .unwrap()
                .insert(0, state_bytes.as_slice())
                .unwrap();
            txn.commit().unwrap();
        })
    });
    drop(redb_db);
    group.bench_function("state_read", |b| {
        b.iter(|| std::fs::read(files.join("state")).unwrap().len())
    });
    group.bench_function("block_and_128_columns_write_fsync", |b| {
        b.iter(|| {
            write_synced(&files.join("block"), &b0_ssz);
            for (i, col) in cols.iter().enumerate() {
                write_synced(&files.join(format!("column_{i}")), col);
            }
        })
    });
    group.finish();
}

fn write_synced(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(bytes).unwrap();
    file.sync_all().unwrap();
}

criterion_group!(store_benches, benches);
criterion_main!(store_benches);
