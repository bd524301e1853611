//! `run` against a small fake beacon node on 127.0.0.1: genesis a second ahead, one-second
//! slots, four interop validators. The node hands out duties and block contents and records
//! what the client publishes; the test waits (bounded) for the attestations, aggregates and
//! the block, checks their signatures over the chain's domains, then shuts the client down.
#![allow(clippy::unwrap_used, reason = "a test; a failure is the test failing")]

mod common;

use std::time::Duration;

use beacon_api::block_contents::SignedBlockContents;
use common::{Duties, E, GVR, Node, Published, pubkey, spec, start_node, verify};
use tokio::sync::oneshot;
use types::signing::{
    DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, compute_domain,
    compute_signing_root,
};
use types::{BLSPubkey, Root};
use validator_client::{DutyKind, KeySource, ValidatorClientConfig};

const VALIDATORS: u64 = 4;
/// The slot validator 0 proposes at.
const PROPOSAL_SLOT: u64 = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_performs_attester_aggregator_and_proposer_duties() {
    let spec = spec();
    let genesis_time = validator_client::timing::SlotClock::now().as_secs() + 1;
    let (addr, mut published) =
        start_node(genesis_time, VALIDATORS as usize, Duties::EpochZero, false).await;
    let datadir = tempfile::tempdir().unwrap();
    let registry = prometheus::Registry::new();
    let duty_metrics = std::sync::Arc::new(validator_client::Metrics::new(Some(&registry)));
    let config = ValidatorClientConfig {
        beacon_nodes: vec![
            // The first node is down: every request falls back to the second.
            "http://127.0.0.1:1".to_string(),
            format!("http://{addr}"),
        ],
        keys: KeySource::Interop {
            indices: 0..VALIDATORS,
        },
        datadir: datadir.path().to_path_buf(),
        fee_recipient: Some(types::ExecutionAddress::repeat_byte(0xfe)),
        duty_metrics: Some(duty_metrics.clone()),
        spec: Some(spec.clone()),
        ..ValidatorClientConfig::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let vc = tokio::spawn(validator_client::run::<E>(config, async move {
        let _ = stopped.await;
    }));

    let pubkeys: Vec<BLSPubkey> = (0..VALIDATORS as usize).map(pubkey).collect();
    let attester_domain = compute_domain(DOMAIN_BEACON_ATTESTER, spec.fulu_fork_version, GVR);
    let aggregate_domain = compute_domain(DOMAIN_AGGREGATE_AND_PROOF, spec.fulu_fork_version, GVR);
    let proposer_domain = compute_domain(DOMAIN_BEACON_PROPOSER, spec.fulu_fork_version, GVR);

    let mut attested = std::collections::BTreeSet::new();
    let mut aggregated = std::collections::BTreeSet::new();
    let mut proposed = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while attested.len() < VALIDATORS as usize
        || aggregated.len() < VALIDATORS as usize
        || !proposed
    {
        let item = tokio::time::timeout_at(deadline, published.recv())
            .await
            .expect("the client performed every duty within a minute")
            .expect("the node is up");
        match item {
            Published::Attestations(attestations) => {
                for a in attestations {
                    let index = a.attester_index;
                    // Validator i attests at slot i + 1.
                    assert_eq!(a.data.slot, index + 1);
                    assert_eq!(a.data, Node::attestation_data(index + 1, 0));
                    let root = compute_signing_root(&a.data, attester_domain);
                    assert!(verify(&pubkeys[index as usize], root, &a.signature));
                    assert!(attested.insert(index), "validator {index} attested twice");
                }
            }
            Published::Aggregates(aggregates) => {
                for a in aggregates {
                    let index = a.message.aggregator_index;
                    let root = compute_signing_root(&a.message, aggregate_domain);
                    assert!(verify(&pubkeys[index as usize], root, &a.signature));
                    assert!(aggregated.insert(index));
                }
            }
            Published::Block(contents) => {
                let SignedBlockContents::Fulu(fulu) = contents else {
                    unreachable!()
                };
                let block = fulu.signed_block;
                assert_eq!(block.message.slot, PROPOSAL_SLOT);
                let root = compute_signing_root(&block.message, proposer_domain);
                assert!(verify(&pubkeys[0], root, &block.signature));
                assert!(!proposed, "one block per slot");
                proposed = true;
            }
            Published::AttestationDataServed(_) | Published::BlockServed(_) => {}
        }
    }
    stop.send(()).unwrap();
    vc.await.unwrap().expect("the client stops cleanly");

    let families = registry.gather();
    let count = |name: &str, kind: DutyKind| -> f64 {
        families
            .iter()
            .filter(|f| f.name() == name)
            .flat_map(|f| f.get_metric())
            .filter(|m| m.get_label().iter().any(|l| l.value() == kind.as_str()))
            .map(|m| m.get_counter().get_value())
            .sum()
    };
    assert_eq!(
        count("vc_duties_performed_total", DutyKind::Attestation),
        4.0
    );
    assert_eq!(count("vc_duties_performed_total", DutyKind::Proposal), 1.0);
    assert_eq!(count("vc_duties_missed_total", DutyKind::Attestation), 0.0);
    assert_eq!(duty_metrics.missed_total(), 0);
    assert_eq!(duty_metrics.performed_count(DutyKind::Aggregate), 4);
    // The vote and the block are in the slashing protection database.
    let db = slashing_protection::SlashingDatabase::open_or_create(
        datadir.path().join("slashing_protection.redb"),
        GVR,
    )
    .unwrap();
    assert!(
        db.check_and_insert_block_proposal(&pubkeys[0], PROPOSAL_SLOT, Root::repeat_byte(9))
            .is_err()
    );
}
