//! Value generators shared by the integration tests that need the `arbitrary` feature.

#![allow(dead_code)]

use arbitrary::Unstructured;
use types::EthSpec;

/// Defines `fn $name<E>(u) -> Result<types::$fork::BeaconState<E>>` through the state's derived
/// `Arbitrary` (which builds valid milhouse and packed lists from arbitrary elements).
macro_rules! state_generator {
    ($($name:ident => $fork:ident),* $(,)?) => {$(
        pub fn $name<E: EthSpec>(
            u: &mut Unstructured<'_>,
        ) -> arbitrary::Result<types::$fork::BeaconState<E>> {
            u.arbitrary()
        }
    )*};
}

state_generator!(
    phase0_state => phase0,
    altair_state => altair,
    bellatrix_state => bellatrix,
    capella_state => capella,
    deneb_state => deneb,
    electra_state => electra,
    fulu_state => fulu,
);

/// A fixed, well-mixed permutation of `u64`s, for deterministic pseudo-random data.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `len` deterministic pseudo-random bytes.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    (0..len as u64)
        .map(|i| splitmix64(seed ^ i.wrapping_mul(0x0123_4567_89ab_cdef)) as u8)
        .collect()
}
