//! What a proposer checks of a builder's bid before signing its header, and the choice between
//! the bid and the local payload (`builder_boost_factor`).
//!
//! A bid that fails any check is dropped and the local payload used: the builder's signature in
//! the builder domain, the header against what the state fixes for the slot (parent hash,
//! timestamp, `prev_randao`, withdrawals) and against the registration (gas limit), the blob
//! commitments within the fork's limit, a non-zero value.
//!
//! [spec]: specs/bellatrix/builder.md#signing, specs/bellatrix/validator.md

use tree_hash::TreeHash;
use types::{BLSPubkey, Bytes32, ChainSpec, Domain, EthSpec, Hash32, Root, U256, signing};

use crate::containers::{BuilderBid, SignedBuilderBid};

/// What the proposer's node expects of a header for its slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BidExpectations {
    /// `state.latest_execution_payload_header.block_hash`.
    pub parent_hash: Hash32,
    /// `compute_time_at_slot(state, slot)`.
    pub timestamp: u64,
    /// `get_randao_mix(state, get_current_epoch(state))`.
    pub prev_randao: Bytes32,
    /// `hash_tree_root` of the state's expected withdrawals.
    pub withdrawals_root: Root,
    /// The parent payload's gas limit.
    pub parent_gas_limit: u64,
    /// The gas limit of the proposer's latest registration, when it registered.
    pub registered_gas_limit: Option<u64>,
    /// `get_blob_parameters(epoch).max_blobs_per_block` (Fulu) or `MAX_BLOBS_PER_BLOCK_ELECTRA`.
    pub max_blobs: u64,
    /// The builder's key, when the relay URL names one (`http://0xPUBKEY@host`).
    pub builder_pubkey: Option<BLSPubkey>,
}

/// Why a bid was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BidError {
    /// The bid's public key is not a valid BLS key.
    #[error("the builder key {0} is not a valid BLS public key")]
    InvalidBuilderKey(BLSPubkey),
    /// The bid is signed by another builder than the relay URL names.
    #[error("the bid is from builder {found}, the relay URL names {expected}")]
    UnexpectedBuilder {
        /// The key in the URL.
        expected: BLSPubkey,
        /// The key in the bid.
        found: BLSPubkey,
    },
    /// The signature is not the builder's over the bid.
    #[error("the bid's signature does not verify with builder key {0}")]
    InvalidSignature(BLSPubkey),
    /// A header field is not what the state fixes.
    #[error("the bid's {field} is {found}, expected {expected}")]
    Mismatch {
        /// The field.
        field: &'static str,
        /// What the node expects.
        expected: String,
        /// What the bid carries.
        found: String,
    },
    /// More blob commitments than a block may carry at the slot.
    #[error("{count} blob commitments in the bid, the slot allows {max}")]
    TooManyBlobs {
        /// Commitments in the bid.
        count: usize,
        /// The limit.
        max: u64,
    },
    /// A bid that pays nothing.
    #[error("the bid's value is zero")]
    ZeroValue,
}

/// A bid whose checks passed.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedBid<E: EthSpec> {
    /// The bid.
    pub bid: BuilderBid<E>,
}

/// The builder domain: `compute_domain(DOMAIN_APPLICATION_BUILDER)` with the genesis fork
/// version and a zero genesis validators root, as the builder spec signs bids and
/// registrations.
///
/// [spec]: specs/bellatrix/builder.md#signing
pub fn builder_domain(spec: &ChainSpec) -> Domain {
    spec.compute_genesis_domain(signing::DOMAIN_APPLICATION_BUILDER)
}

/// The gas limit a payload on a parent with `parent` gas should have for a proposer that asks
/// for `target`: as close as the EIP-1559 bound (a change of less than `parent / 1024`) allows.
///
/// [spec]: specs/bellatrix/builder.md#constructing-the-executionpayloadheader
pub fn expected_gas_limit(parent: u64, target: u64) -> u64 {
    let max_change = (parent / 1024).saturating_sub(1);
    if target > parent {
        parent.saturating_add(max_change).min(target)
    } else {
        parent.saturating_sub(max_change).max(target)
    }
}

fn check<T: PartialEq + std::fmt::Display>(
    field: &'static str,
    expected: T,
    found: T,
) -> Result<(), BidError> {
    if expected == found {
        return Ok(());
    }
    Err(BidError::Mismatch {
        field,
        expected: expected.to_string(),
        found: found.to_string(),
    })
}

/// Checks a signed bid against `expected`, its signature in `domain` ([`builder_domain`]).
pub fn verify_builder_bid<E: EthSpec>(
    signed: SignedBuilderBid<E>,
    expected: &BidExpectations,
    domain: Domain,
) -> Result<VerifiedBid<E>, BidError> {
    let bid = signed.message;
    if let Some(key) = expected.builder_pubkey
        && key != bid.pubkey
    {
        return Err(BidError::UnexpectedBuilder {
            expected: key,
            found: bid.pubkey,
        });
    }
    let header = &bid.header;
    check("parent hash", expected.parent_hash, header.parent_hash)?;
    check("timestamp", expected.timestamp, header.timestamp)?;
    check("prev_randao", expected.prev_randao, header.prev_randao)?;
    check(
        "withdrawals root",
        expected.withdrawals_root,
        header.withdrawals_root,
    )?;
    if let Some(target) = expected.registered_gas_limit {
        check(
            "gas limit",
            expected_gas_limit(expected.parent_gas_limit, target),
            header.gas_limit,
        )?;
    }
    let count = bid.blob_kzg_commitments.len();
    if count as u64 > expected.max_blobs {
        return Err(BidError::TooManyBlobs {
            count,
            max: expected.max_blobs,
        });
    }
    if bid.value.is_zero() {
        return Err(BidError::ZeroValue);
    }
    let key = bls::PublicKeyBytes(bid.pubkey.0)
        .decompress()
        .map_err(|_| BidError::InvalidBuilderKey(bid.pubkey))?;
    let signature = bls::Signature::deserialize(signed.signature.as_slice())
        .map_err(|_| BidError::InvalidSignature(bid.pubkey))?;
    let root = signing::compute_signing_root(&bid, domain);
    if !bls::verify(&key, root.as_slice(), &signature) {
        return Err(BidError::InvalidSignature(bid.pubkey));
    }
    Ok(VerifiedBid { bid })
}

/// Signs `bid` with `key` in `domain` (a builder's `get_bid_signature`; for relays and tests).
///
/// [spec]: specs/bellatrix/builder.md#packaging-into-a-signedbuilderbid
pub fn sign_builder_bid<E: EthSpec>(
    bid: BuilderBid<E>,
    key: &bls::SecretKey,
    domain: Domain,
) -> SignedBuilderBid<E> {
    let root = signing::compute_signing_root(&bid, domain);
    let signature = types::BLSSignature::from(key.sign(root.as_slice()).serialize());
    SignedBuilderBid {
        message: bid,
        signature,
    }
}

/// `hash_tree_root(withdrawals)` of a payload's withdrawal list.
pub fn withdrawals_root<E: EthSpec>(withdrawals: &[types::electra::Withdrawal]) -> Option<Root> {
    let list: ssz_types::VariableList<types::electra::Withdrawal, E::MaxWithdrawalsPerPayload> =
        ssz_types::VariableList::new(withdrawals.to_vec()).ok()?;
    Some(list.tree_hash_root())
}

/// Which payload a block carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadChoice {
    /// The local execution client's.
    Local,
    /// The builder's (a blinded block).
    Builder,
}

/// The Beacon API's `builder_boost_factor` rule: `0` always local, `2**64 - 1` always the
/// builder, otherwise local when `local_value >= builder_boost_factor * (builder_value //
/// 100)`; absent means 100 (compare the values as they are). The local payload also wins when
/// its execution client says `shouldOverrideBuilder`.
///
/// [spec]: beacon-APIs apis/validator/block.v3.yaml (`builder_boost_factor`)
pub fn select_payload(
    local_value: U256,
    builder_value: U256,
    builder_boost_factor: Option<u64>,
    should_override_builder: bool,
) -> PayloadChoice {
    let factor = builder_boost_factor.unwrap_or(100);
    if factor == 0 || should_override_builder {
        return PayloadChoice::Local;
    }
    if factor == u64::MAX {
        return PayloadChoice::Builder;
    }
    let boosted = (builder_value / U256::from(100u64)).saturating_mul(U256::from(factor));
    if local_value >= boosted {
        PayloadChoice::Local
    } else {
        PayloadChoice::Builder
    }
}

#[cfg(test)]
mod tests {
    use ssz_types::VariableList;
    use types::{MinimalEthSpec, electra::ExecutionRequests};

    use super::*;

    type E = MinimalEthSpec;

    fn expectations() -> BidExpectations {
        BidExpectations {
            parent_hash: Hash32::repeat_byte(1),
            timestamp: 1_600_000_012,
            prev_randao: Bytes32::repeat_byte(2),
            withdrawals_root: withdrawals_root::<E>(&[]).unwrap(),
            parent_gas_limit: 60_000_000,
            registered_gas_limit: Some(60_000_000),
            max_blobs: 6,
            builder_pubkey: None,
        }
    }

    fn bid(key: &bls::SecretKey, expected: &BidExpectations) -> BuilderBid<E> {
        let mut header =
            crate::containers::execution_payload_header(&types::electra::ExecutionPayload::<E> {
                parent_hash: expected.parent_hash,
                fee_recipient: types::Address::repeat_byte(3),
                state_root: Bytes32::ZERO,
                receipts_root: Bytes32::ZERO,
                logs_bloom: Default::default(),
                prev_randao: expected.prev_randao,
                block_number: 1,
                gas_limit: 60_000_000,
                gas_used: 0,
                timestamp: expected.timestamp,
                extra_data: VariableList::empty(),
                base_fee_per_gas: U256::from(7u64),
                block_hash: Hash32::repeat_byte(4),
                transactions: VariableList::empty(),
                withdrawals: VariableList::empty(),
                blob_gas_used: 0,
                excess_blob_gas: 0,
            });
        header.gas_limit = 60_000_000;
        BuilderBid {
            header,
            blob_kzg_commitments: VariableList::new(vec![types::KZGCommitment::ZERO; 2]).unwrap(),
            execution_requests: ExecutionRequests {
                deposits: VariableList::empty(),
                withdrawals: VariableList::empty(),
                consolidations: VariableList::empty(),
            },
            value: U256::from(10u64).pow(U256::from(18u64)),
            pubkey: BLSPubkey::from(key.public_key().compress().0),
        }
    }

    fn domain() -> Domain {
        builder_domain(&ChainSpec::minimal())
    }

    #[test]
    fn a_correct_bid_verifies() {
        let key = bls::SecretKey::random();
        let expected = expectations();
        let signed = sign_builder_bid(bid(&key, &expected), &key, domain());
        verify_builder_bid(signed, &expected, domain()).unwrap();
    }

    #[test]
    fn a_bid_signed_by_another_key_or_domain_is_refused() {
        let key = bls::SecretKey::random();
        let expected = expectations();
        let signed = sign_builder_bid(bid(&key, &expected), &bls::SecretKey::random(), domain());
        assert!(matches!(
            verify_builder_bid(signed, &expected, domain()),
            Err(BidError::InvalidSignature(_))
        ));
        // Signed in the mainnet builder domain (another genesis fork version).
        let mainnet = builder_domain(&ChainSpec::mainnet());
        let signed = sign_builder_bid(bid(&key, &expected), &key, mainnet);
        assert!(matches!(
            verify_builder_bid(signed, &expected, domain()),
            Err(BidError::InvalidSignature(_))
        ));
    }

    #[test]
    fn each_header_field_the_state_fixes_is_checked() {
        let key = bls::SecretKey::random();
        let expected = expectations();
        type Change = fn(&mut BuilderBid<E>);
        let cases: [(&str, Change); 5] = [
            ("parent hash", |b| {
                b.header.parent_hash = Hash32::repeat_byte(9)
            }),
            ("timestamp", |b| b.header.timestamp += 12),
            ("prev_randao", |b| b.header.prev_randao = Bytes32::ZERO),
            ("withdrawals root", |b| {
                b.header.withdrawals_root = Root::ZERO
            }),
            ("gas limit", |b| b.header.gas_limit = 30_000_000),
        ];
        for (name, change) in cases {
            let mut bid = bid(&key, &expected);
            change(&mut bid);
            let signed = sign_builder_bid(bid, &key, domain());
            match verify_builder_bid(signed, &expected, domain()) {
                Err(BidError::Mismatch { field, .. }) => assert_eq!(field, name),
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn too_many_blobs_zero_value_and_another_builder_are_refused() {
        let key = bls::SecretKey::random();
        let mut expected = expectations();
        expected.max_blobs = 1;
        let signed = sign_builder_bid(bid(&key, &expected), &key, domain());
        assert_eq!(
            verify_builder_bid(signed, &expected, domain()),
            Err(BidError::TooManyBlobs { count: 2, max: 1 })
        );

        let expected = expectations();
        let mut zero = bid(&key, &expected);
        zero.value = U256::ZERO;
        let signed = sign_builder_bid(zero, &key, domain());
        assert_eq!(
            verify_builder_bid(signed, &expected, domain()),
            Err(BidError::ZeroValue)
        );

        let mut pinned = expectations();
        pinned.builder_pubkey = Some(BLSPubkey::repeat_byte(0xaa));
        let signed = sign_builder_bid(bid(&key, &pinned), &key, domain());
        assert!(matches!(
            verify_builder_bid(signed, &pinned, domain()),
            Err(BidError::UnexpectedBuilder { .. })
        ));
    }

    #[test]
    fn gas_limit_moves_toward_the_target_within_the_bound() {
        assert_eq!(expected_gas_limit(30_000_000, 30_000_000), 30_000_000);
        // 30M / 1024 - 1 = 29_295.
        assert_eq!(expected_gas_limit(30_000_000, 60_000_000), 30_029_295);
        assert_eq!(expected_gas_limit(30_000_000, 10_000_000), 29_970_705);
        assert_eq!(expected_gas_limit(30_000_000, 30_010_000), 30_010_000);
    }

    #[test]
    fn boost_factor_selects_as_the_beacon_api_says() {
        let local = U256::from(1_000u64);
        let more = U256::from(1_100u64);
        let less = U256::from(900u64);
        // No factor means 100: the larger value wins, a tie goes to the local payload.
        assert_eq!(
            select_payload(local, more, None, false),
            PayloadChoice::Builder
        );
        assert_eq!(
            select_payload(local, less, None, false),
            PayloadChoice::Local
        );
        assert_eq!(
            select_payload(local, local, None, false),
            PayloadChoice::Local
        );
        assert_eq!(
            select_payload(local, more, Some(100), false),
            PayloadChoice::Builder
        );
        // 0: always local.
        assert_eq!(
            select_payload(U256::ZERO, more, Some(0), false),
            PayloadChoice::Local
        );
        // 90 %: 1_100 counts as 990 < 1_000.
        assert_eq!(
            select_payload(local, more, Some(90), false),
            PayloadChoice::Local
        );
        // 200 %: 900 counts as 1_800.
        assert_eq!(
            select_payload(local, less, Some(200), false),
            PayloadChoice::Builder
        );
        // 2**64 - 1: always the builder.
        assert_eq!(
            select_payload(local, less, Some(u64::MAX), false),
            PayloadChoice::Builder
        );
        // The execution client asks for its own payload.
        assert_eq!(
            select_payload(local, more, None, true),
            PayloadChoice::Local
        );
    }
}
