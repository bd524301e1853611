//! Topic re-subscription and ENR updates at fork boundaries, including a Blob-Parameters-Only
//! fork that changes the digest within Fulu.

mod common;

use common::*;
use networking::enr::Eth2Enr;
use networking::{GossipKind, GossipTopic, NetworkConfig};
use types::ForkDigest;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_and_enr_follow_a_bpo_fork() {
    let spec = bpo_spec();
    let d0 = spec.compute_fork_digest(GENESIS_VALIDATORS_ROOT, 0);
    let d5 = spec.compute_fork_digest(GENESIS_VALIDATORS_ROOT, 5);
    assert_ne!(d0, d5);

    let mut config: NetworkConfig = local_config();
    config.gossip_kinds = vec![GossipKind::BeaconBlock];
    let (handle, _events) = networking::start::<E>(config, spec).await.unwrap();
    let topics = |digests: &[ForkDigest]| {
        let mut t: Vec<GossipTopic> = digests
            .iter()
            .map(|d| GossipTopic::new(GossipKind::BeaconBlock, *d))
            .collect();
        t.sort();
        t
    };

    assert_eq!(handle.subscribed_topics().await, topics(&[d0]));
    let enr = handle.current_enr().await.unwrap();
    assert_eq!(enr.eth2().unwrap().fork_digest, d0);
    assert_eq!(enr.eth2().unwrap().next_fork_epoch, 5);
    assert_eq!(enr.next_fork_digest().unwrap(), d5);

    // One epoch before the boundary: both digests.
    handle.update_epoch(4);
    assert_eq!(handle.subscribed_topics().await, topics(&[d0, d5]));
    // At the boundary the old digest is kept for two epochs.
    handle.update_epoch(5);
    assert_eq!(handle.subscribed_topics().await, topics(&[d0, d5]));
    let enr = handle.current_enr().await.unwrap();
    assert_eq!(enr.eth2().unwrap().fork_digest, d5);
    assert_eq!(enr.eth2().unwrap().next_fork_epoch, u64::MAX);
    assert_eq!(enr.next_fork_digest().unwrap(), ForkDigest::ZERO);
    handle.update_epoch(7);
    assert_eq!(handle.subscribed_topics().await, topics(&[d5]));

    // New subscriptions go to the current digest only.
    handle.subscribe(GossipKind::DataColumnSidecar(9));
    let now = handle.subscribed_topics().await;
    assert!(now.contains(&GossipTopic::new(GossipKind::DataColumnSidecar(9), d5)));
    assert_eq!(now.len(), 2);
}
