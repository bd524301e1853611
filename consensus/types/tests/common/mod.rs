//! Value generators shared by the integration tests that need the `arbitrary` feature.

#![allow(dead_code)]

use arbitrary::Unstructured;
use splitmix::splitmix64;
use types::EthSpec;

/// Defines `fn $name<E>(u) -> Result<types::$fork::BeaconState<E>>` through the state's derived
/// `Arbitrary` (which builds valid milhouse and packed lists from arbitrary elements).
macro_rules! state_generator {
    ($($name:ident => $fork:ident),* $(,)?) => {$(
        pub(crate) fn $name<E: EthSpec>(
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
    gloas_state => gloas,
);

/// `len` deterministic pseudo-random bytes.
pub(crate) fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    (0..len as u64)
        .map(|i| splitmix64(seed ^ i.wrapping_mul(0x0123_4567_89ab_cdef)) as u8)
        .collect()
}

/// An active validator whose fields are derived from `i` (for registries of any length).
pub(crate) fn validator(i: u64) -> types::phase0::Validator {
    types::phase0::Validator {
        pubkey: types::BLSPubkey::repeat_byte(i as u8),
        withdrawal_credentials: types::Bytes32::repeat_byte(1),
        effective_balance: 32_000_000_000,
        slashed: i.is_multiple_of(3),
        activation_eligibility_epoch: i,
        activation_epoch: i + 1,
        exit_epoch: u64::MAX,
        withdrawable_epoch: u64::MAX,
    }
}
