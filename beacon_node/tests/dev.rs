//! `arbor dev` as a user runs it: a one-process Fulu devnet with blobs (mock execution client,
//! a beacon node, a validator client over the Beacon API on 127.0.0.1) finalizes.
#![cfg(feature = "mock-el")]

#[path = "common/devnet.rs"]
mod devnet;

#[test]
fn a_devnet_with_blobs_finalizes() {
    devnet::devnet_finalizes("arbor-dev-finalizes", 1);
}
