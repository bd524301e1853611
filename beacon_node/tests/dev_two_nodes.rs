//! `arbor dev --nodes 2`: two beacon nodes, each with its validator client and half of the
//! validators, connected over libp2p on 127.0.0.1: blocks, data columns, attestations and
//! aggregates cross between them by gossip, and the devnet finalizes on one head. (Its own test
//! binary, so that it does not share the two cores with the one-node devnet.)
#![cfg(feature = "mock-el")]

#[path = "common/devnet.rs"]
mod devnet;

#[test]
fn a_two_node_devnet_finalizes_on_one_head() {
    devnet::devnet_finalizes("arbor-dev-two-nodes", 2);
}
