//! Crash safety of the signing path: a child process runs the validator client against a fake
//! beacon node that answers every request for attestation data or a block with a message
//! differing from its earlier answers for the same slot, and is killed with SIGKILL at random
//! moments, over and over, on the same data directory. The parent records everything the
//! child published and checks that no validator ever published two different attestations
//! for one target epoch nor two different blocks for one slot: a signature released for a
//! message whose record was lost would show up as such a pair after the restart.
//!
//! The child is this test binary re-run with `ARBOR_VC_CRASH_NODE` set, filtered to
//! `crash_child`. The kill points are random; the seed is printed so a failure can be replayed
//! with `ARBOR_VC_CRASH_SEED`.
#![allow(clippy::unwrap_used, reason = "a test; a failure is the test failing")]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

use beacon_api::block_contents::SignedBlockContents;
use common::{Duties, E, GVR, Published, pubkey, spec, start_node, verify};
use types::signing::{
    DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, compute_domain, compute_signing_root,
};
use types::{EthSpec, Root};
use validator_client::{KeySource, ValidatorClientConfig};

const KILLS: usize = 50;
const NODE_ENV: &str = "ARBOR_VC_CRASH_NODE";
const DATADIR_ENV: &str = "ARBOR_VC_CRASH_DATADIR";
const SEED_ENV: &str = "ARBOR_VC_CRASH_SEED";
const VALIDATORS: u64 = 8;

/// The child: the validator client, until killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_child() {
    let Ok(node) = std::env::var(NODE_ENV) else {
        return; // Only runs as the parent's child.
    };
    let datadir = std::env::var(DATADIR_ENV).unwrap();
    let config = ValidatorClientConfig {
        beacon_nodes: vec![node],
        keys: KeySource::Interop {
            indices: 0..VALIDATORS,
        },
        datadir: datadir.into(),
        spec: Some(spec()),
        ..ValidatorClientConfig::default()
    };
    validator_client::run::<E>(config, std::future::pending())
        .await
        .unwrap();
}

/// A small deterministic generator for the kill delays (splitmix64).
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_signing_never_releases_a_slashable_signature() {
    if std::env::var(NODE_ENV).is_ok() {
        return; // The child runs `crash_child` only.
    }
    let seed = std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| validator_client::timing::SlotClock::now().as_nanos() as u64);
    println!("{SEED_ENV}={seed}");
    let mut rng = seed;
    let spec = spec();
    let genesis_time = validator_client::timing::SlotClock::now().as_secs() + 1;
    let (addr, mut published) =
        start_node(genesis_time, VALIDATORS as usize, Duties::EverySlot, true).await;
    let datadir = tempfile::tempdir().unwrap();
    let attester_domain = compute_domain(DOMAIN_BEACON_ATTESTER, spec.fulu_fork_version, GVR);
    let proposer_domain = compute_domain(DOMAIN_BEACON_PROPOSER, spec.fulu_fork_version, GVR);

    // Every signing root published per (validator, target epoch) and per (proposer, slot).
    let mut votes: BTreeMap<(u64, u64), BTreeSet<Root>> = BTreeMap::new();
    let mut blocks: BTreeMap<(u64, u64), BTreeSet<Root>> = BTreeMap::new();
    // Requests for a slot whose vote or block was already published: the restarted client
    // was handed a conflicting message and had to refuse it (the test is not vacuous).
    let mut resign_attempts = 0u64;
    let spe = E::slots_per_epoch();
    let mut record = |item: Published| match item {
        Published::AttestationDataServed(slot) => {
            // EverySlot: the validator of `slot` is `slot % SLOTS_PER_EPOCH`.
            if votes.contains_key(&(slot % spe, slot / spe)) {
                resign_attempts += 1;
            }
        }
        Published::BlockServed(slot) => {
            if blocks.contains_key(&(slot % spe, slot)) {
                resign_attempts += 1;
            }
        }
        Published::Attestations(attestations) => {
            for a in attestations {
                let root = compute_signing_root(&a.data, attester_domain);
                assert!(verify(
                    &pubkey(a.attester_index as usize),
                    root,
                    &a.signature
                ));
                votes
                    .entry((a.attester_index, a.data.target.epoch))
                    .or_default()
                    .insert(root);
            }
        }
        Published::Block(contents) => {
            let SignedBlockContents::Fulu(fulu) = contents else {
                unreachable!()
            };
            let block = fulu.signed_block;
            let root = compute_signing_root(&block.message, proposer_domain);
            let proposer = block.message.proposer_index;
            assert!(verify(&pubkey(proposer as usize), root, &block.signature));
            blocks
                .entry((proposer, block.message.slot))
                .or_default()
                .insert(root);
        }
        Published::Aggregates(_)
        | Published::SyncMessages(_)
        | Published::Contributions(_)
        | Published::PayloadAttestations(..)
        | Published::PayloadAttestationDataServed { .. } => {}
    };

    let exe = std::env::current_exe().unwrap();
    for kill in 0..KILLS {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env(NODE_ENV, format!("http://{addr}"))
            .env(DATADIR_ENV, datadir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the child's first publication (bounded), then kill it after a random
        // delay: inside a later signing, between signing and publishing, or while idle.
        let first = tokio::time::timeout(Duration::from_secs(30), published.recv())
            .await
            .unwrap_or_else(|_| panic!("restart {kill}: the client published nothing in 30 s"))
            .unwrap();
        record(first);
        let delay = Duration::from_millis(next(&mut rng) % 700);
        let until = tokio::time::Instant::now() + delay;
        while let Ok(Some(item)) = tokio::time::timeout_at(until, published.recv()).await {
            record(item);
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        while let Ok(item) = published.try_recv() {
            record(item);
        }
    }

    let conflicting_votes: Vec<_> = votes.iter().filter(|(_, roots)| roots.len() > 1).collect();
    let conflicting_blocks: Vec<_> = blocks.iter().filter(|(_, roots)| roots.len() > 1).collect();
    assert!(
        conflicting_votes.is_empty(),
        "slashable votes published: {conflicting_votes:?}"
    );
    assert!(
        conflicting_blocks.is_empty(),
        "slashable blocks published: {conflicting_blocks:?}"
    );
    // The run covered several epochs of duties across the restarts.
    let epochs: BTreeSet<u64> = votes.keys().map(|(_, epoch)| *epoch).collect();
    assert!(epochs.len() >= 2, "only epochs {epochs:?} were attested");
    assert!(!blocks.is_empty());
    assert!(
        resign_attempts > 0,
        "no restart was handed a message conflicting with a published one"
    );
    println!(
        "{KILLS} kills: {} votes and {} blocks published over epochs {:?}, {resign_attempts} \
         conflicting messages handed to restarted clients",
        votes.len(),
        blocks.len(),
        epochs,
    );
}
