//! Untrusted bytes as a `SignedBeaconBlock` of every fork and both presets: decoding must not
//! panic, and a block that decodes must re-encode to the same bytes and hash.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ssz::Encode;
use tree_hash::TreeHash;
use types::{EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, SignedBeaconBlock};

fn check<E: EthSpec>(data: &[u8]) {
    for fork in ForkName::ALL {
        if let Ok(block) = SignedBeaconBlock::<E>::from_ssz_bytes_by_fork(data, fork) {
            assert_eq!(block.fork_name(), fork);
            assert!(
                block.as_ssz_bytes() == data,
                "{fork} {} block re-encodes differently",
                E::PRESET_BASE
            );
            block.tree_hash_root();
            block.canonical_root();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check::<MainnetEthSpec>(data);
    check::<MinimalEthSpec>(data);
});
