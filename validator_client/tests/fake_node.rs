//! `run` against a small fake beacon node on 127.0.0.1: genesis a second ahead, one-second
//! slots, four interop validators. The node hands out duties and block contents and records
//! what the client publishes; the tests wait (bounded) for the attestations, aggregates, the
//! block, sync committee messages and contributions, check their signatures over the chain's
//! domains, then shut the client down; and check that doppelganger protection stops a client
//! whose keys are live elsewhere before it signs anything; and, on a Gloas chain, that a PTC
//! duty yields one vote signed in the PTC attester domain.
#![allow(clippy::unwrap_used, reason = "a test; a failure is the test failing")]

mod common;

use std::time::Duration;

use beacon_api::block_contents::SignedBlockContents;
use common::{Duties, E, GVR, Node, Published, pubkey, spec, start_node, verify};
use tokio::sync::oneshot;
use types::signing::{
    DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER,
    DOMAIN_CONTRIBUTION_AND_PROOF, DOMAIN_PTC_ATTESTER, DOMAIN_SYNC_COMMITTEE,
    DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, compute_domain, compute_signing_root,
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
    let sync_domain = compute_domain(DOMAIN_SYNC_COMMITTEE, spec.fulu_fork_version, GVR);
    let contribution_domain =
        compute_domain(DOMAIN_CONTRIBUTION_AND_PROOF, spec.fulu_fork_version, GVR);
    let selection_domain = compute_domain(
        DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
        spec.fulu_fork_version,
        GVR,
    );
    let mut sync_slots = std::collections::BTreeSet::new();
    let mut contributed = std::collections::BTreeSet::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while attested.len() < VALIDATORS as usize
        || aggregated.len() < VALIDATORS as usize
        || !proposed
        || sync_slots.len() < 3
        || contributed.len() < 2
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
            Published::SyncMessages(messages) => {
                for m in messages {
                    assert_eq!(m.validator_index, 0);
                    // The slot's block when the head event came first, else the node's head.
                    assert!(
                        m.beacon_block_root == common::HEAD_ROOT
                            || m.beacon_block_root == Root::repeat_byte(0xb1)
                    );
                    let root = compute_signing_root(&m.beacon_block_root, sync_domain);
                    assert!(verify(&pubkeys[0], root, &m.signature));
                    sync_slots.insert(m.slot);
                }
            }
            Published::Contributions(signed) => {
                for c in signed {
                    let message = &c.message;
                    assert_eq!(message.aggregator_index, 0);
                    let root = compute_signing_root(message, contribution_domain);
                    assert!(verify(&pubkeys[0], root, &c.signature));
                    let selection = types::altair::SyncAggregatorSelectionData {
                        slot: message.contribution.slot,
                        subcommittee_index: message.contribution.subcommittee_index,
                    };
                    let root = compute_signing_root(&selection, selection_domain);
                    assert!(verify(&pubkeys[0], root, &message.selection_proof));
                    // Positions 0 and 9: subcommittees 0 and 1 of the minimal preset's 4.
                    contributed.insert(message.contribution.subcommittee_index);
                }
            }
            Published::AttestationDataServed(_)
            | Published::BlockServed(_)
            | Published::PayloadAttestations(..)
            | Published::PayloadAttestationDataServed { .. } => {}
        }
    }
    // The node records a publication before it answers; the client counts it after. Wait
    // (bounded) for the counts to catch up before stopping the client.
    tokio::time::timeout(Duration::from_secs(10), async {
        while duty_metrics.performed_count(DutyKind::Attestation) < VALIDATORS
            || duty_metrics.performed_count(DutyKind::Aggregate) < VALIDATORS
            || duty_metrics.performed_count(DutyKind::Proposal) < 1
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the client counted what the node received");
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
    assert_eq!(duty_metrics.missed_total(), 0, "{duty_metrics:?}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doppelganger_protection_stops_the_client_before_it_signs() {
    let genesis_time = validator_client::timing::SlotClock::now().as_secs() + 1;
    let (addr, mut published, node) =
        common::start_node_with(genesis_time, VALIDATORS as usize, Duties::EpochZero, false).await;
    node.live.store(true, std::sync::atomic::Ordering::Relaxed);
    let datadir = tempfile::tempdir().unwrap();
    let config = ValidatorClientConfig {
        beacon_nodes: vec![format!("http://{addr}")],
        keys: KeySource::Interop {
            indices: 0..VALIDATORS,
        },
        datadir: datadir.path().to_path_buf(),
        doppelganger_protection: true,
        spec: Some(spec()),
        ..ValidatorClientConfig::default()
    };
    // Started in epoch 0: epoch 0's liveness is asked at epoch 1's start, and it is live.
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        validator_client::run::<E>(config, std::future::pending()),
    )
    .await
    .expect("the client stops within a minute");
    match result {
        Err(validator_client::VcError::Doppelganger { epoch, indices }) => {
            assert_eq!(epoch, 0);
            assert_eq!(indices, (0..VALIDATORS).collect::<Vec<_>>());
        }
        other => panic!("expected a doppelganger stop, got {other:?}"),
    }
    while let Ok(item) = published.try_recv() {
        assert!(
            matches!(
                item,
                Published::AttestationDataServed(_) | Published::BlockServed(_)
            ),
            "published while doppelganger protection ran: {item:?}"
        );
    }
}

/// On a Gloas chain a PTC duty yields exactly one posted `PayloadAttestationMessage` over the
/// node's data, signed in `DOMAIN_PTC_ATTESTER`; a slot the node has seen no block of (404)
/// yields no vote and no missed duty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ptc_duty_posts_one_vote_signed_in_the_ptc_attester_domain() {
    let spec = common::gloas_spec();
    let genesis_time = validator_client::timing::SlotClock::now().as_secs() + 1;
    let (addr, mut published) =
        start_node(genesis_time, VALIDATORS as usize, Duties::Ptc, false).await;
    let datadir = tempfile::tempdir().unwrap();
    let duty_metrics = std::sync::Arc::new(validator_client::Metrics::new(None));
    let config = ValidatorClientConfig {
        beacon_nodes: vec![format!("http://{addr}")],
        keys: KeySource::Interop {
            indices: 0..VALIDATORS,
        },
        datadir: datadir.path().to_path_buf(),
        duty_metrics: Some(duty_metrics.clone()),
        spec: Some(spec.clone()),
        ..ValidatorClientConfig::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let vc = tokio::spawn(validator_client::run::<E>(config, async move {
        let _ = stopped.await;
    }));

    let gloas_version = spec.gloas_fork_version.unwrap();
    let ptc_domain = compute_domain(DOMAIN_PTC_ATTESTER, gloas_version, GVR);
    let mut votes = Vec::new();
    let mut no_block_asked = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while votes.is_empty() || !no_block_asked {
        let item = tokio::time::timeout_at(deadline, published.recv())
            .await
            .expect("the client asked for both slots' data and voted within a minute")
            .expect("the node is up");
        match item {
            Published::PayloadAttestations(version, messages) => {
                assert_eq!(version.as_deref(), Some("gloas"));
                votes.extend(messages);
            }
            Published::PayloadAttestationDataServed { slot, found } => {
                assert_eq!(found, slot == common::PTC_VOTE_SLOT);
                no_block_asked |= slot == common::PTC_NO_BLOCK_SLOT;
            }
            other => panic!("a PTC-only chain published {other:?}"),
        }
    }
    tokio::time::timeout(Duration::from_secs(10), async {
        while duty_metrics.performed_count(DutyKind::PtcVote) < 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the client counted the published vote");
    stop.send(()).unwrap();
    vc.await.unwrap().expect("the client stops cleanly");
    while let Ok(item) = published.try_recv() {
        if let Published::PayloadAttestations(_, messages) = item {
            votes.extend(messages);
        }
    }

    assert_eq!(votes.len(), 1, "{votes:?}");
    let vote = &votes[0];
    assert_eq!(vote.validator_index, 1);
    assert_eq!(
        vote.data,
        common::payload_attestation_data(common::PTC_VOTE_SLOT)
    );
    let root = compute_signing_root(&vote.data, ptc_domain);
    assert!(verify(&pubkey(1), root, &vote.signature));
    // The same signature does not verify in another domain.
    let attester_root = compute_signing_root(
        &vote.data,
        compute_domain(DOMAIN_BEACON_ATTESTER, gloas_version, GVR),
    );
    assert!(!verify(&pubkey(1), attester_root, &vote.signature));
    assert_eq!(duty_metrics.signed_count(DutyKind::PtcVote), 1);
    assert_eq!(duty_metrics.performed_count(DutyKind::PtcVote), 1);
    // No block seen is no vote, not a missed one.
    assert_eq!(duty_metrics.missed_total(), 0, "{duty_metrics:?}");
}
