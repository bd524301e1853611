//! Signature domains and signing roots: the `DOMAIN_*` constants and the spec's
//! `compute_fork_data_root`, `compute_domain` and `compute_signing_root`.
//!
//! [spec]: phase0/beacon-chain.md#domain-types and phase0/beacon-chain.md#misc-1

use alloy_primitives::FixedBytes;
use tree_hash::TreeHash;

use crate::phase0::{ForkData, SigningData};
use crate::primitives::{Domain, DomainType, Root, Version};

/// `DOMAIN_BEACON_PROPOSER`.
///
/// [spec]: phase0/beacon-chain.md#domain-types
pub const DOMAIN_BEACON_PROPOSER: DomainType = FixedBytes([0x00, 0x00, 0x00, 0x00]);
/// `DOMAIN_BEACON_ATTESTER`.
///
/// [spec]: phase0/beacon-chain.md#domain-types
pub const DOMAIN_BEACON_ATTESTER: DomainType = FixedBytes([0x01, 0x00, 0x00, 0x00]);
/// `DOMAIN_RANDAO`.
///
/// [spec]: phase0/beacon-chain.md#domain-types
pub const DOMAIN_RANDAO: DomainType = FixedBytes([0x02, 0x00, 0x00, 0x00]);
/// `DOMAIN_DEPOSIT`: always computed with `GENESIS_FORK_VERSION` and a zero root.
///
/// [spec]: phase0/beacon-chain.md#domain-types
pub const DOMAIN_DEPOSIT: DomainType = FixedBytes([0x03, 0x00, 0x00, 0x00]);
/// `DOMAIN_VOLUNTARY_EXIT`.
///
/// [spec]: phase0/beacon-chain.md#domain-types
pub const DOMAIN_VOLUNTARY_EXIT: DomainType = FixedBytes([0x04, 0x00, 0x00, 0x00]);
/// `DOMAIN_SELECTION_PROOF`.
///
/// [spec]: phase0/beacon-chain.md#domain-types
pub const DOMAIN_SELECTION_PROOF: DomainType = FixedBytes([0x05, 0x00, 0x00, 0x00]);
/// `DOMAIN_AGGREGATE_AND_PROOF`.
///
/// [spec]: phase0/beacon-chain.md#domain-types
pub const DOMAIN_AGGREGATE_AND_PROOF: DomainType = FixedBytes([0x06, 0x00, 0x00, 0x00]);
/// `DOMAIN_APPLICATION_MASK`: the bit that marks domains of applications outside the protocol.
///
/// [spec]: phase0/beacon-chain.md#domain-types
pub const DOMAIN_APPLICATION_MASK: DomainType = FixedBytes([0x00, 0x00, 0x00, 0x01]);
/// `DOMAIN_SYNC_COMMITTEE`.
///
/// [spec]: altair/beacon-chain.md#domain-types
pub const DOMAIN_SYNC_COMMITTEE: DomainType = FixedBytes([0x07, 0x00, 0x00, 0x00]);
/// `DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF`.
///
/// [spec]: altair/beacon-chain.md#domain-types
pub const DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF: DomainType = FixedBytes([0x08, 0x00, 0x00, 0x00]);
/// `DOMAIN_CONTRIBUTION_AND_PROOF`.
///
/// [spec]: altair/beacon-chain.md#domain-types
pub const DOMAIN_CONTRIBUTION_AND_PROOF: DomainType = FixedBytes([0x09, 0x00, 0x00, 0x00]);
/// `DOMAIN_BLS_TO_EXECUTION_CHANGE`: always computed with `GENESIS_FORK_VERSION`.
///
/// [spec]: capella/beacon-chain.md#domain-types
pub const DOMAIN_BLS_TO_EXECUTION_CHANGE: DomainType = FixedBytes([0x0a, 0x00, 0x00, 0x00]);
/// `DOMAIN_BEACON_BUILDER`: builders' signatures over bids and payload envelopes.
///
/// [spec]: gloas/beacon-chain.md#domains
pub const DOMAIN_BEACON_BUILDER: DomainType = FixedBytes([0x0b, 0x00, 0x00, 0x00]);
/// `DOMAIN_PTC_ATTESTER`: payload timeliness committee members' signatures.
///
/// [spec]: gloas/beacon-chain.md#domains
pub const DOMAIN_PTC_ATTESTER: DomainType = FixedBytes([0x0c, 0x00, 0x00, 0x00]);
/// `DOMAIN_PROPOSER_PREFERENCES`: proposers' signatures over their preferences.
///
/// [spec]: gloas/beacon-chain.md#domains
pub const DOMAIN_PROPOSER_PREFERENCES: DomainType = FixedBytes([0x0d, 0x00, 0x00, 0x00]);
/// `DOMAIN_BUILDER_DEPOSIT`: a builder deposit's proof of possession, computed with
/// `compute_domain`'s defaults (genesis fork version, zero root).
///
/// [spec]: gloas/beacon-chain.md#domains
pub const DOMAIN_BUILDER_DEPOSIT: DomainType = FixedBytes([0x0e, 0x00, 0x00, 0x00]);
/// `DOMAIN_APPLICATION_BUILDER`: builder API registrations and bids (`DOMAIN_APPLICATION_MASK`
/// with application 0), computed with `GENESIS_FORK_VERSION` and a zero root.
///
/// [spec]: ethereum/builder-specs specs/bellatrix/builder.md#domain-types
pub const DOMAIN_APPLICATION_BUILDER: DomainType = FixedBytes([0x00, 0x00, 0x00, 0x01]);

/// `compute_fork_data_root(current_version, genesis_validators_root)`: the root that separates
/// signatures (and, through the fork digest, p2p topics) across forks and chains.
///
/// [spec]: phase0/beacon-chain.md#compute_fork_data_root
pub fn compute_fork_data_root(current_version: Version, genesis_validators_root: Root) -> Root {
    ForkData {
        current_version,
        genesis_validators_root,
    }
    .tree_hash_root()
}

/// `compute_domain(domain_type, fork_version, genesis_validators_root)`: the domain type
/// followed by the first 28 bytes of the fork data root.
///
/// The spec's optional arguments default to `GENESIS_FORK_VERSION` and a zero root; see
/// [`crate::ChainSpec::compute_genesis_domain`].
///
/// [spec]: phase0/beacon-chain.md#compute_domain
pub fn compute_domain(
    domain_type: DomainType,
    fork_version: Version,
    genesis_validators_root: Root,
) -> Domain {
    let fork_data_root = compute_fork_data_root(fork_version, genesis_validators_root);
    let mut domain = Domain::ZERO;
    domain[..4].copy_from_slice(domain_type.as_slice());
    domain[4..].copy_from_slice(&fork_data_root[..28]);
    domain
}

/// `compute_signing_root(ssz_object, domain)`: the root a BLS signature over `ssz_object` in
/// `domain` signs.
///
/// [spec]: phase0/beacon-chain.md#compute_signing_root
pub fn compute_signing_root<T: TreeHash + ?Sized>(ssz_object: &T, domain: Domain) -> Root {
    SigningData {
        object_root: ssz_object.tree_hash_root(),
        domain,
    }
    .tree_hash_root()
}

#[cfg(test)]
mod tests {
    use alloy_primitives::{b256, fixed_bytes};

    use super::*;

    /// `hash(pad32(version) ++ genesis_validators_root)`: the two-field container's root
    /// computed by hand, independently of the `TreeHash` derive.
    fn fork_data_root_by_hand(version: Version, genesis_validators_root: Root) -> Root {
        let mut version_chunk = [0u8; 32];
        version_chunk[..4].copy_from_slice(version.as_slice());
        Root::from(ethereum_hashing::hash32_concat(
            &version_chunk,
            genesis_validators_root.as_slice(),
        ))
    }

    #[test]
    fn fork_data_root_is_the_hash_of_the_two_chunks() {
        let gvr = b256!("0x4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95");
        for version in [fixed_bytes!("0x00000000"), fixed_bytes!("0x06000000")] {
            assert_eq!(
                compute_fork_data_root(version, gvr),
                fork_data_root_by_hand(version, gvr)
            );
        }
    }

    #[test]
    fn compute_domain_matches_published_values() {
        // The builder domain on every network with a zero-root genesis fork version 0x00000000,
        // as mev-boost and the relays compute it.
        assert_eq!(
            compute_domain(
                DOMAIN_APPLICATION_BUILDER,
                fixed_bytes!("0x00000000"),
                Root::ZERO
            ),
            b256!("0x00000001f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a9")
        );
        // The mainnet Bellatrix proposer domain; bytes 4..8 are the Bellatrix fork digest.
        let mainnet_gvr =
            b256!("0x4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95");
        assert_eq!(
            compute_domain(
                DOMAIN_BEACON_PROPOSER,
                fixed_bytes!("0x02000000"),
                mainnet_gvr
            ),
            b256!("0x000000004a26c58b08add8089b75caa540848881a8d4f0af0be83417a85c0f45")
        );
    }

    #[test]
    fn compute_domain_is_type_then_fork_data_root_prefix() {
        let version = fixed_bytes!("0x90000074");
        let gvr = b256!("0xd8ea171f3c94aea21ebc42a1ed61052acf3f9209c00e4efbaaddac09ed9b8078");
        let domain = compute_domain(DOMAIN_SYNC_COMMITTEE, version, gvr);
        let root = fork_data_root_by_hand(version, gvr);
        assert_eq!(&domain[..4], DOMAIN_SYNC_COMMITTEE.as_slice());
        assert_eq!(&domain[4..], &root[..28]);
    }

    #[test]
    fn signing_root_hashes_object_root_with_domain() {
        let object = fixed_bytes!("0x0102030405060708");
        let domain = compute_domain(DOMAIN_RANDAO, fixed_bytes!("0x01000000"), Root::ZERO);
        // A `Bytes8` is one chunk, zero-padded; `SigningData` is two chunks.
        let mut object_root = [0u8; 32];
        object_root[..8].copy_from_slice(object.as_slice());
        let expected = Root::from(ethereum_hashing::hash32_concat(
            &object_root,
            domain.as_slice(),
        ));
        assert_eq!(compute_signing_root(&object, domain), expected);
    }
}
