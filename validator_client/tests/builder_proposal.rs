//! Builder proposals: `run` against the fake beacon node serving blinded blocks (as a node whose
//! relay's bid won). The client registers its validators, signs the blinded block over the
//! proposer domain (its root is the full block's), and publishes it to
//! `/eth/v2/beacon/blinded_blocks`, where the node unblinds it with the payload it served.
#![allow(clippy::unwrap_used, reason = "a test; a failure is the test failing")]

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use beacon_api::block_contents::SignedBlockContents;
use common::{Duties, GVR, Published, pubkey, spec, start_node_with, verify};
use tokio::sync::oneshot;
use types::signing::{DOMAIN_BEACON_PROPOSER, compute_domain, compute_signing_root};
use validator_client::{KeySource, ValidatorClientConfig};

const VALIDATORS: u64 = 4;
/// The slot validator 0 proposes at (`Duties::EpochZero`).
const PROPOSAL_SLOT: u64 = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blinded_block_is_signed_and_published_to_blinded_blocks() {
    let spec = spec();
    let genesis_time = validator_client::timing::SlotClock::now().as_secs() + 1;
    let (addr, mut published, node) =
        start_node_with(genesis_time, VALIDATORS as usize, Duties::EpochZero, false).await;
    node.blinded.store(true, Ordering::Relaxed);
    let datadir = tempfile::tempdir().unwrap();
    let config = ValidatorClientConfig {
        beacon_nodes: vec![format!("http://{addr}")],
        keys: KeySource::Interop {
            indices: 0..VALIDATORS,
        },
        datadir: datadir.path().to_path_buf(),
        fee_recipient: Some(types::ExecutionAddress::repeat_byte(0xfe)),
        builder_proposals: true,
        spec: Some(spec.clone()),
        ..ValidatorClientConfig::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let vc = tokio::spawn(validator_client::run::<common::E>(config, async move {
        let _ = stopped.await;
    }));

    let proposer_domain = compute_domain(DOMAIN_BEACON_PROPOSER, spec.fulu_fork_version, GVR);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let block = loop {
        let item = tokio::time::timeout_at(deadline, published.recv())
            .await
            .expect("the client proposed within a minute")
            .expect("the node is up");
        if let Published::Block(SignedBlockContents::Fulu(fulu)) = item {
            break fulu.signed_block;
        }
    };
    assert_eq!(block.message.slot, PROPOSAL_SLOT);
    let root = compute_signing_root(&block.message, proposer_domain);
    assert!(verify(&pubkey(0), root, &block.signature));
    // It came through the blinded endpoint, not publishBlockV2.
    assert_eq!(node.blinded_published.load(Ordering::Relaxed), 1);

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(30), vc)
        .await
        .expect("the client stops")
        .unwrap()
        .unwrap();
}
