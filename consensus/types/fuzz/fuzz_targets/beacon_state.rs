//! Untrusted bytes as a `BeaconState` of every fork and both presets: decoding must not panic,
//! and a state that decodes must re-encode to the same bytes and hash.
//!
//! A mainnet state's fixed part alone is ~2.6 MB, beyond what libFuzzer explores; the minimal
//! preset's (~10 KB) is where inputs actually decode, so both presets are tried.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ssz::Encode;
use tree_hash::TreeHash;
use types::{BeaconState, EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec};

fn check<E: EthSpec>(data: &[u8]) {
    for fork in ForkName::ALL {
        if let Ok(state) = BeaconState::<E>::from_ssz_bytes_by_fork(data, fork) {
            assert_eq!(state.fork_name(), fork);
            assert!(
                state.as_ssz_bytes() == data,
                "{fork} {} state re-encodes differently",
                E::PRESET_BASE
            );
            state.tree_hash_root();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check::<MainnetEthSpec>(data);
    check::<MinimalEthSpec>(data);
});
