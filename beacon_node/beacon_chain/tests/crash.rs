//! Crash safety at chain level: a child process imports blocks (with finalization and store
//! migrations every epoch) until it is killed with SIGKILL at a random moment; the parent then
//! reopens the store as a restarting node would and checks that the head is a block the store
//! holds with its post-state, that no head went backwards, and that import continues. 50 kills.
//!
//! Where the child dies is chosen by its own progress, not by the clock: the parent reads the
//! child's log lines and kills it right after a random number (0 to 5) of imports, while the
//! child is already building and importing the next block. Every wait is bounded. The child's
//! log and the store of a failing run stay under `target/beacon_chain_crash/`.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use beacon_chain::{BeaconChain, ChainConfig, ExecutionStatus, ManualSlotClock, SlotClock};
use fork_choice::ThreadPoolBuilder;
use state_harness::{AttestationSpec, BlockContents, build_block};
use state_processing::{CachedBeaconState, genesis::interop_genesis_state, per_block::AlwaysValid};
use store::{Store, StoreConfig};
use types::{ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, Slot};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const ANCHOR_SLOT: Slot = 16;
const KILLS: usize = 50;
const CHILD_ENV: &str = "ARBOR_CHAIN_CRASH_CHILD";

fn spec() -> Arc<ChainSpec> {
    Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu))
}

fn pool() -> Arc<fork_choice::ThreadPool> {
    Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap())
}

/// Opens the chain in `dir`: from the anchor the first time, from the store afterwards.
fn open_chain(dir: &Path, clock: Arc<ManualSlotClock>) -> BeaconChain<E> {
    let spec = spec();
    let store = Arc::new(
        Store::<E>::open(&dir.join("db"), (*spec).clone(), StoreConfig::default()).unwrap(),
    );
    if store.split().unwrap().is_some() {
        return BeaconChain::open(store, spec, clock, pool(), ChainConfig::default()).unwrap();
    }
    let genesis =
        interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec).unwrap();
    let anchor = build_block(
        &CachedBeaconState::new(genesis),
        ANCHOR_SLOT,
        &BlockContents::default(),
        &spec,
    )
    .unwrap();
    BeaconChain::from_anchor(
        store,
        anchor.post,
        anchor.block,
        spec,
        clock,
        pool(),
        ChainConfig::default(),
    )
    .unwrap()
}

/// Imports the next block on the head (attesting to it) through the gossip path.
fn import_next(chain: &BeaconChain<E>, clock: &ManualSlotClock) -> Slot {
    let spec = spec();
    let head = chain.head();
    let slot = head.slot + 1;
    let contents = BlockContents {
        attestations: vec![AttestationSpec::whole_slot(head.slot)],
        ..BlockContents::default()
    };
    let built = build_block(&head.state, slot, &contents, &spec).unwrap();
    let now = spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 500;
    clock.set_ms(now);
    let verified = chain
        .verify_block_for_gossip(Arc::new(built.block), now)
        .unwrap();
    chain
        .process_gossip_block(verified, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap();
    slot
}

/// The child: imports blocks until killed.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let clock = Arc::new(ManualSlotClock::new(0));
    let chain = open_chain(&dir, clock.clone());
    eprintln!("opened at slot {}", chain.head().slot);
    clock.set_ms(spec().compute_time_at_slot(GENESIS_TIME, chain.head().slot) * 1000 + 500);
    loop {
        let slot = import_next(&chain, &clock);
        eprintln!("imported slot {slot}");
    }
}

#[test]
fn a_chain_killed_at_random_points_reopens_to_a_consistent_head() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/beacon_chain_crash");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = splitmix::SplitMix64::new(0x00c0_ffee);
    let mut last_head: Slot = 0;
    let mut child_imports = 0;
    let mut pending_seen = 0;
    let mut migrations_requeued = 0;
    for kill in 0..KILLS {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &root)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Copy the child's log to a file and report each line.
        let stderr = child.stderr.take().unwrap();
        let mut log = std::fs::File::create(root.join(format!("child-{kill}.log"))).unwrap();
        let (lines, progress) = mpsc::channel();
        let copier = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = writeln!(log, "{line}");
                let _ = lines.send(line);
            }
        });
        // Die after the start and a random number of imports.
        let imports = rng.next_u64() % 6;
        let mut seen_imports = 0;
        let mut opened = false;
        while !opened || seen_imports < imports {
            let line = progress
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|e| panic!("kill {kill}: no progress from the child: {e}"));
            opened |= line.starts_with("opened");
            seen_imports += u64::from(line.starts_with("imported slot"));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        copier.join().unwrap();
        child_imports += seen_imports as usize;
        child_imports += progress
            .try_iter()
            .filter(|l| l.starts_with("imported slot"))
            .count();

        // Reopen as a restarting node: the head is a stored block with its state.
        let clock = Arc::new(ManualSlotClock::new(0));
        let chain = open_chain(&root, clock.clone());
        let head = chain.head();
        assert!(
            head.slot >= last_head,
            "kill {kill}: head went back from slot {last_head} to {}",
            head.slot
        );
        let block = chain.store().get_block(&head.block_root).unwrap();
        assert!(block.is_some(), "kill {kill}: head block missing");
        assert_eq!(block.unwrap().state_root(), head.state_root);
        let stored = chain.store().head().unwrap().unwrap();
        assert!(
            stored.slot <= head.slot,
            "kill {kill}: the store's head is ahead of the reopened head"
        );
        // An epoch snapshot the kill caught before the store writer stored it stays
        // pending: it loads by replay (the real transition) to its own root.
        for (root, _) in chain.store().pending_snapshots().unwrap() {
            pending_seen += 1;
            let spec = spec();
            let mut replayer = store::StateTransitionReplayer::new(&spec);
            let state = chain
                .store()
                .get_state(&root, &mut replayer)
                .unwrap()
                .unwrap_or_else(|| panic!("kill {kill}: pending snapshot {root} not found"));
            let mut state = CachedBeaconState::new(state);
            assert_eq!(state.hash_tree_root().unwrap(), root, "kill {kill}");
        }
        // A finalization whose migration the kill caught before the store writer ran it is
        // queued again by the reopen: once the writer is done, the split is the finalized
        // checkpoint.
        if chain.reopened().unwrap().migration_queued {
            migrations_requeued += 1;
        }
        chain.flush_store_writes();
        let split = chain.store().split().unwrap().unwrap();
        assert_eq!(
            (split.slot, split.block_root),
            (
                head.finalized_checkpoint.epoch * E::slots_per_epoch(),
                head.finalized_checkpoint.root
            ),
            "kill {kill}: the split is not the finalized checkpoint"
        );
        // Import continues.
        clock.set_ms(spec().compute_time_at_slot(GENESIS_TIME, head.slot) * 1000 + 500);
        let slot = import_next(&chain, &clock);
        assert_eq!(chain.head().slot, slot);
        assert!(clock.now_ms() > 0);
        last_head = slot;
    }
    // The children themselves imported (the parent's one block per round aside), so kills
    // landed in the middle of imports and of the migrations at each finalization.
    assert!(
        child_imports >= KILLS,
        "the children imported {child_imports} blocks in {KILLS} runs"
    );
    eprintln!(
        "{KILLS} kills; the children imported {child_imports} blocks; head at {last_head}; \
         {pending_seen} pending epoch snapshots found after a kill, each loaded by replay; \
         {migrations_requeued} finalization migrations queued again by a reopen"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
