//! Crash safety: a child process extends a synthetic chain (blocks with their 128 columns and
//! states in one batch per slot, a fork block now and then, a finalization migration every
//! epoch) and is killed with SIGKILL at a random moment, over and over on the same database.
//! After every kill the parent opens the database and checks that the schema is current, that
//! the head and finalized checkpoint are the last committed ones, and that nothing half-written
//! is visible: a block is there with all its columns and its state, or not at all; a migration
//! happened entirely (blocks in cold, forks pruned, split moved) or not at all.
//!
//! The child is this test binary re-run with `ARBOR_STORE_CRASH_DB` set, filtered to
//! `crash_child`. The kill points are random; the seed is printed so a failure can be replayed
//! with `ARBOR_STORE_CRASH_SEED`.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Chain, E, NUMBER_OF_COLUMNS, SPE, SlotReplayer, fulu_spec, header_of};
use ssz::Encode;
use store::schema::CURRENT_SCHEMA_VERSION;
use store::{Head, Store, StoreConfig};
use types::phase0::Checkpoint;

const KILLS: usize = 105;
const DB_ENV: &str = "ARBOR_STORE_CRASH_DB";
/// Every `FORK_EVERY` slots the child also writes a competing block, abandoned later.
const FORK_EVERY: u64 = 3;

fn config() -> StoreConfig {
    StoreConfig {
        cold_snapshot_interval: 4 * SPE,
        cold_diff_interval: SPE,
        cache_size_bytes: 8 << 20,
        quick_repair: true,
    }
}

/// Sidecars are kept for 2 epochs so the database stays small over hundreds of restarts.
fn spec() -> types::ChainSpec {
    let mut spec = fulu_spec();
    spec.min_epochs_for_data_column_sidecars_requests = 2;
    spec
}

fn write_slot(store: &Store<E>, slot: u64, branch: u64) {
    let block = Chain::block(slot, branch);
    let root = block.canonical_root();
    let mut batch = store.begin_batch().unwrap();
    batch.put_block_ssz(root, &block.as_ssz_bytes()).unwrap();
    batch
        .put_state(Chain::state_root(slot, branch), &Chain::state(slot, branch))
        .unwrap();
    for c in Chain::columns(slot, branch, 1) {
        batch.put_data_column(root, &c).unwrap();
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

/// The child: continue the chain from the stored head until killed.
#[test]
fn crash_child() {
    let Ok(path) = std::env::var(DB_ENV) else {
        return; // Only runs as the parent's child.
    };
    let store: Store<E> = Store::open(Path::new(&path), spec(), config()).unwrap();
    println!("@opened");
    let head = store.head().unwrap().expect("the parent wrote the anchor");
    let mut finalized = store.finalized_checkpoint().unwrap().unwrap().epoch;
    for slot in head.slot + 1.. {
        if slot % FORK_EVERY == 0 {
            write_slot(&store, slot, 1);
        }
        write_slot(&store, slot, 0);
        println!("@committed {slot}");
        // Finalize the epoch before last as soon as it is due (also right after a restart that
        // interrupted a migration).
        let target = (slot / SPE).saturating_sub(2);
        if target > finalized {
            println!("@migrating {target}");
            store
                .migrate_to_finalized(
                    &Checkpoint {
                        epoch: target,
                        root: Chain::block_root(target * SPE, 0),
                    },
                    Chain::state_root(target * SPE, 0),
                )
                .unwrap();
            finalized = target;
            println!("@finalized {target}");
        }
    }
}

/// What the child said before it died.
#[derive(Debug, Default)]
struct Progress {
    opened: bool,
    committed: Option<u64>,
    migrating: Option<u64>,
    finalized: Option<u64>,
    /// When the parent read the last `@migrating` line.
    migration_seen: Option<Instant>,
    /// Migrations seen from start to end, as the parent read them.
    migration_times: Vec<Duration>,
}

/// Where a run's kill is aimed.
#[derive(Clone, Copy)]
enum Aim {
    /// After a random delay from the spawn.
    Anytime(Duration),
    /// A random delay after the child announces a finalization migration.
    Migration(Duration),
}

fn run_child_and_kill(path: &Path, aim: Aim) -> Progress {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(DB_ENV, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });

    let mut progress = Progress::default();
    let record = |line: &str, progress: &mut Progress| {
        // libtest prints its own words before the child's first line.
        let Some(at) = line.find('@') else {
            return;
        };
        let mut words = line[at + 1..].split_whitespace();
        let what = words.next();
        let value = words.next().and_then(|v| v.parse().ok());
        match what {
            Some("opened") => progress.opened = true,
            Some("committed") => progress.committed = value,
            Some("migrating") => {
                progress.migrating = value;
                progress.migration_seen = Some(Instant::now());
            }
            Some("finalized") => {
                progress.finalized = value;
                progress.migrating = None;
                if let Some(seen) = progress.migration_seen.take() {
                    progress.migration_times.push(seen.elapsed());
                }
            }
            _ => {}
        }
    };
    let deadline = Instant::now()
        + match aim {
            Aim::Anytime(delay) => delay,
            // Give up on a migration after a few epochs' worth of slots.
            Aim::Migration(_) => Duration::from_secs(3),
        };
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        match lines.recv_timeout(deadline - now) {
            Ok(line) => {
                record(&line, &mut progress);
                if let (Aim::Migration(delay), Some(_)) = (aim, progress.migrating) {
                    std::thread::sleep(delay);
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => break,
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the child exited on its own"),
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    reader.join().unwrap();
    // Lines written before the kill but not yet read.
    for line in lines.try_iter() {
        record(&line, &mut progress);
    }
    progress
}

/// Everything that must hold after a kill, given the last progress the child reported.
fn check(
    path: &Path,
    last_committed: u64,
    last_finalized: u64,
    migrating: Option<u64>,
) -> (u64, u64, usize) {
    let store: Store<E> = Store::open(path, spec(), config()).expect("reopens after SIGKILL");
    assert_eq!(store.schema_version().unwrap(), CURRENT_SCHEMA_VERSION);

    // The hot snapshot files are exactly those referenced: a file written for a batch the kill
    // cut short was removed at open, and no committed reference lost its file.
    common::snapshot_files(&store);
    // So are the cold snapshot files (a migration killed after writing one left an orphan),
    // and every cold snapshot reads back.
    common::cold_snapshot_files(&store);
    for (slot, _) in store.cold_snapshots().unwrap() {
        let cold = store
            .get_cold_state_by_slot(slot, &mut SlotReplayer::default())
            .unwrap()
            .expect("a cold snapshot");
        common::assert_same_state(&cold, &Chain::state(slot, 0));
    }
    let orphans = store.orphan_state_files_removed();

    // The head is the last reported commit or the one after (committed, killed before saying so).
    let head = store.head().unwrap().expect("head");
    assert!(
        head.slot == last_committed || head.slot == last_committed + 1,
        "head at {} after the child reported {last_committed}",
        head.slot
    );
    assert_eq!(head.block_root, Chain::block_root(head.slot, 0));
    assert_eq!(head.state_root, Chain::state_root(head.slot, 0));

    // The head block, its state and all its columns, or the batch would not be visible at all.
    assert_eq!(
        store.get_block(&head.block_root).unwrap(),
        Some(Chain::block(head.slot, 0))
    );
    if head.slot > 0 {
        // (The anchor at slot 0 has no columns.)
        let columns = store.data_column_indices(&head.block_root).unwrap();
        assert_eq!(columns, (0..NUMBER_OF_COLUMNS).collect::<Vec<_>>());
        assert_eq!(
            store.get_data_column(&head.block_root, 77).unwrap(),
            Some(Chain::columns(head.slot, 0, 1).remove(77))
        );
    }
    let state = store
        .get_state(&head.state_root, &mut SlotReplayer::default())
        .unwrap()
        .expect("head state");
    assert_eq!(*state.slot(), head.slot);
    assert_eq!(
        state.latest_block_header(),
        &header_of(&Chain::block(head.slot, 0))
    );
    // A block one past the head was never committed with a head update; if its batch was cut
    // short it must be invisible.
    let next = Chain::block_root(head.slot + 1, 0);
    assert_eq!(store.get_block(&next).unwrap(), None);
    assert!(store.data_column_indices(&next).unwrap().is_empty());

    // Finalization: the last reported one, or the one being migrated when killed; never half.
    let finalized = store.finalized_checkpoint().unwrap().expect("finalized");
    assert!(
        finalized.epoch == last_finalized || Some(finalized.epoch) == migrating,
        "finalized epoch {} after the child reported {last_finalized} (migrating to {migrating:?})",
        finalized.epoch
    );
    let split_slot = finalized.epoch * SPE;
    assert_eq!(finalized.root, Chain::block_root(split_slot, 0));
    let split = store.split().unwrap().unwrap();
    assert_eq!(
        (split.slot, split.block_root, split.state_root),
        (split_slot, finalized.root, Chain::state_root(split_slot, 0))
    );
    // The finalized chain is in cold up to the split and nowhere beyond it.
    for slot in split_slot.saturating_sub(SPE)..=split_slot {
        assert_eq!(
            store.block_root_at_slot(slot).unwrap(),
            Some(Chain::block_root(slot, 0)),
            "finalized slot {slot}"
        );
    }
    assert_eq!(store.block_root_at_slot(split_slot + 1).unwrap(), None);
    // Forks before the split are pruned with their columns; those after it are kept.
    for slot in split_slot.saturating_sub(2 * SPE).max(1)..=head.slot {
        if slot % FORK_EVERY != 0 {
            continue;
        }
        let fork = Chain::block_root(slot, 1);
        let present = store.get_block(&fork).unwrap().is_some();
        let columns = store.data_column_indices(&fork).unwrap().len() as u64;
        if slot <= split_slot {
            assert!(
                !present && columns == 0,
                "fork at {slot} survived finalization"
            );
        } else if slot < head.slot {
            assert!(
                present && columns == NUMBER_OF_COLUMNS,
                "fork at {slot} lost"
            );
        }
    }
    // The cold state at the split decodes.
    let cold = store
        .get_cold_state_by_slot(split_slot, &mut SlotReplayer::default())
        .unwrap()
        .expect("cold state at the split");
    common::assert_same_state(&cold, &Chain::state(split_slot, 0));
    (head.slot, finalized.epoch, orphans)
}

#[test]
fn sigkill_at_random_points_leaves_a_consistent_database() {
    if std::env::var(DB_ENV).is_ok() {
        return;
    }
    let seed: u64 = std::env::var("ARBOR_STORE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("seed {seed} (ARBOR_STORE_CRASH_SEED={seed} replays the kill delays)");
    let mut rng = splitmix::SplitMix64::new(seed);

    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("db");
    {
        let store: Store<E> = Store::open(&path, spec(), config()).unwrap();
        store
            .init_anchor(
                Chain::state_root(0, 0),
                &Chain::state(0, 0),
                Chain::block_root(0, 0),
                &Chain::block(0, 0),
            )
            .unwrap();
    }

    let started = Instant::now();
    let (mut committed, mut finalized) = (0u64, 0u64);
    let (mut before_open, mut mid_chain, mut mid_migration) = (0, 0, 0);
    let mut migration_times = Vec::new();
    let mut orphan_files = 0;
    for kill in 0..KILLS {
        // A slot takes ~30-50 ms here (128 columns, fsync'd commits), opening ~5-40 ms. Two
        // kills in three land anywhere (start-up, open, writes); the third within ~10 ms of the
        // start of a finalization migration, which a random delay would rarely hit.
        let r = rng.next_u64();
        let lagging = committed / SPE > finalized + 4;
        let aim = if lagging {
            // Killing migrations can starve finalization; let one run finish a few.
            Aim::Anytime(Duration::from_millis(1_500))
        } else if kill % 3 != 2 {
            Aim::Anytime(Duration::from_micros(2_000 + r % 200_000))
        } else {
            Aim::Migration(Duration::from_micros(r % 10_000))
        };
        let progress = run_child_and_kill(&path, aim);
        match (&progress, progress.migrating) {
            (p, _) if !p.opened => before_open += 1,
            (_, Some(_)) => mid_migration += 1,
            _ => mid_chain += 1,
        }
        migration_times.extend_from_slice(&progress.migration_times);
        let reported_commit = progress.committed.unwrap_or(committed).max(committed);
        let reported_final = progress.finalized.unwrap_or(finalized).max(finalized);
        let (head, fin, orphans) =
            check(&path, reported_commit, reported_final, progress.migrating);
        orphan_files += orphans;
        assert!(
            head >= committed && fin >= finalized,
            "kill {kill}: went backwards"
        );
        (committed, finalized) = (head, fin);
    }
    let size = std::fs::metadata(&path).unwrap().len();
    migration_times.sort();
    println!(
        "{} complete migrations seen, median {:?}, max {:?} (debug build, as read from the child's output)",
        migration_times.len(),
        migration_times.get(migration_times.len() / 2),
        migration_times.last()
    );
    println!(
        "{KILLS} kills in {:.1?}: {before_open} before the database was open, {mid_chain} while \
         writing blocks, {mid_migration} inside a finalization migration; head at slot \
         {committed}, finalized epoch {finalized}, database {:.1} MiB; {orphan_files} orphaned \
         state files removed at open",
        started.elapsed(),
        size as f64 / (1 << 20) as f64
    );
    assert!(committed > 0, "the child never committed anything");
}
