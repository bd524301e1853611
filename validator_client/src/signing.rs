//! The honest validator's signatures: domains from the chain's fork schedule and genesis
//! validators root, and the spec's signing functions over them.
//!
//! Nothing here consults slashing protection: [`crate::validator_store::ValidatorStore`] does
//! that before it calls the block and attestation signers.
//!
//! [spec]: phase0/validator.md, altair/validator.md, electra/validator.md, gloas/validator.md

use std::sync::Arc;

use beacon_api::ValidatorRegistrationV1;
use bls::SecretKey;
use tree_hash::TreeHash;
use types::altair::{ContributionAndProof, SyncAggregatorSelectionData, SyncCommitteeMessage};
use types::electra::AggregateAndProof;
use types::gloas::PayloadAttestationData;
use types::phase0::AttestationData;
use types::signing::{
    DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_APPLICATION_BUILDER, DOMAIN_BEACON_ATTESTER,
    DOMAIN_BEACON_PROPOSER, DOMAIN_CONTRIBUTION_AND_PROOF, DOMAIN_PTC_ATTESTER, DOMAIN_RANDAO,
    DOMAIN_SELECTION_PROOF, DOMAIN_SYNC_COMMITTEE, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
    compute_domain, compute_signing_root,
};
use types::subnets::SYNC_COMMITTEE_SUBNET_COUNT;
use types::typenum::Unsigned;
use types::{
    BLSPubkey, BLSSignature, BeaconBlock, ChainSpec, Domain, DomainType, Epoch, EthSpec, Root,
    Slot, ValidatorIndex,
};

use crate::timing::compute_epoch_at_slot;

/// `TARGET_AGGREGATORS_PER_COMMITTEE`.
///
/// [spec]: phase0/validator.md#misc
pub const TARGET_AGGREGATORS_PER_COMMITTEE: u64 = 16;

/// `TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE`.
///
/// [spec]: altair/validator.md#misc
pub const TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE: u64 = 16;

/// A validator's secret key with its compressed public key.
pub struct ValidatorKey {
    secret: SecretKey,
    pubkey: BLSPubkey,
}

impl ValidatorKey {
    /// The key pair of `secret`.
    pub fn new(secret: SecretKey) -> Self {
        let pubkey = BLSPubkey::from(*secret.public_key().compress().as_bytes());
        Self { secret, pubkey }
    }

    /// The compressed public key.
    pub fn pubkey(&self) -> BLSPubkey {
        self.pubkey
    }

    /// `bls.Sign(privkey, signing_root)`.
    pub fn sign(&self, signing_root: Root) -> BLSSignature {
        BLSSignature::from(self.secret.sign(signing_root.as_slice()).serialize())
    }
}

impl std::fmt::Debug for ValidatorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("ValidatorKey")
            .field("pubkey", &self.pubkey)
            .finish()
    }
}

/// What every domain is computed from: the fork schedule and the chain's genesis validators
/// root.
#[derive(Debug, Clone)]
pub struct SigningContext {
    spec: Arc<ChainSpec>,
    genesis_validators_root: Root,
}

impl SigningContext {
    /// The context of the chain `spec` with `genesis_validators_root`.
    pub fn new(spec: Arc<ChainSpec>, genesis_validators_root: Root) -> Self {
        Self {
            spec,
            genesis_validators_root,
        }
    }

    /// The chain configuration.
    pub fn spec(&self) -> &ChainSpec {
        &self.spec
    }

    /// The genesis validators root.
    pub fn genesis_validators_root(&self) -> Root {
        self.genesis_validators_root
    }

    /// `get_domain(state, domain_type, epoch)` for a state on this chain: the fork version in
    /// force at `epoch` (a state's `fork.previous_version` before `fork.epoch` is the version
    /// the schedule had then).
    ///
    /// [spec]: phase0/beacon-chain.md#get_domain
    pub fn get_domain(&self, domain_type: DomainType, epoch: Epoch) -> Domain {
        compute_domain(
            domain_type,
            self.spec.compute_fork_version(epoch),
            self.genesis_validators_root,
        )
    }
}

/// `get_epoch_signature(state, block, privkey)`: the RANDAO reveal of a block at `slot`.
///
/// [spec]: phase0/validator.md#randao-reveal
pub fn get_epoch_signature<E: EthSpec>(
    ctx: &SigningContext,
    slot: Slot,
    key: &ValidatorKey,
) -> BLSSignature {
    let epoch = compute_epoch_at_slot::<E>(slot);
    let domain = ctx.get_domain(DOMAIN_RANDAO, epoch);
    key.sign(compute_signing_root(&epoch, domain))
}

/// The signing root of `block` (`get_block_signature` signs it).
///
/// [spec]: phase0/validator.md#signature
pub fn block_signing_root<E: EthSpec>(ctx: &SigningContext, block: &BeaconBlock<E>) -> Root {
    let domain = ctx.get_domain(
        DOMAIN_BEACON_PROPOSER,
        compute_epoch_at_slot::<E>(block.slot()),
    );
    compute_signing_root(block, domain)
}

/// The signing root of a blinded block: the full block's, in the proposer domain.
///
/// [spec]: builder-specs specs/bellatrix/builder.md#signing
pub fn blinded_block_signing_root<E: EthSpec>(
    ctx: &SigningContext,
    block: &beacon_api::BlindedBeaconBlock<E>,
) -> Root {
    let domain = ctx.get_domain(
        DOMAIN_BEACON_PROPOSER,
        compute_epoch_at_slot::<E>(block.slot),
    );
    compute_signing_root(block, domain)
}

/// The signing root of an attestation's `data` (`get_attestation_signature` signs it).
///
/// [spec]: phase0/validator.md#aggregate-signature
pub fn attestation_signing_root(ctx: &SigningContext, data: &AttestationData) -> Root {
    let domain = ctx.get_domain(DOMAIN_BEACON_ATTESTER, data.target.epoch);
    compute_signing_root(data, domain)
}

/// `get_slot_signature(state, slot, privkey)`: the selection proof of an aggregator.
///
/// [spec]: phase0/validator.md#aggregation-selection
pub fn get_slot_signature<E: EthSpec>(
    ctx: &SigningContext,
    slot: Slot,
    key: &ValidatorKey,
) -> BLSSignature {
    let domain = ctx.get_domain(DOMAIN_SELECTION_PROOF, compute_epoch_at_slot::<E>(slot));
    key.sign(compute_signing_root(&slot, domain))
}

/// The first 8 bytes of `hash(signature)` as a little-endian integer.
fn hash_signature_to_u64(signature: &BLSSignature) -> u64 {
    let digest = ethereum_hashing::hash_fixed(signature.as_slice());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

/// `is_aggregator(state, slot, index, slot_signature)`, given the committee's length.
///
/// [spec]: phase0/validator.md#aggregation-selection
pub fn is_aggregator(committee_length: u64, slot_signature: &BLSSignature) -> bool {
    let modulo = (committee_length / TARGET_AGGREGATORS_PER_COMMITTEE).max(1);
    hash_signature_to_u64(slot_signature).is_multiple_of(modulo)
}

/// `get_aggregate_and_proof_signature(state, aggregate_and_proof, privkey)`.
///
/// [spec]: phase0/validator.md#broadcast-aggregate
pub fn get_aggregate_and_proof_signature<E: EthSpec>(
    ctx: &SigningContext,
    aggregate_and_proof: &AggregateAndProof<E>,
    key: &ValidatorKey,
) -> BLSSignature {
    let slot = aggregate_and_proof.aggregate.data.slot;
    let domain = ctx.get_domain(DOMAIN_AGGREGATE_AND_PROOF, compute_epoch_at_slot::<E>(slot));
    key.sign(compute_signing_root(aggregate_and_proof, domain))
}

/// `get_aggregate_and_proof_signature` over Gloas's container (its aggregate's bits a
/// progressive list).
///
/// [spec]: phase0/validator.md#broadcast-aggregate
pub fn get_gloas_aggregate_and_proof_signature<E: EthSpec>(
    ctx: &SigningContext,
    aggregate_and_proof: &types::gloas::AggregateAndProof<E>,
    key: &ValidatorKey,
) -> BLSSignature {
    let slot = aggregate_and_proof.aggregate.data.slot;
    let domain = ctx.get_domain(DOMAIN_AGGREGATE_AND_PROOF, compute_epoch_at_slot::<E>(slot));
    key.sign(compute_signing_root(aggregate_and_proof, domain))
}

/// `get_sync_committee_message(state, block_root, validator_index, privkey)` for a message at
/// `slot` (the state's slot).
///
/// [spec]: altair/validator.md#sync-committee-messages
pub fn get_sync_committee_message<E: EthSpec>(
    ctx: &SigningContext,
    slot: Slot,
    block_root: Root,
    validator_index: ValidatorIndex,
    key: &ValidatorKey,
) -> SyncCommitteeMessage {
    let domain = ctx.get_domain(DOMAIN_SYNC_COMMITTEE, compute_epoch_at_slot::<E>(slot));
    SyncCommitteeMessage {
        slot,
        beacon_block_root: block_root,
        validator_index,
        signature: key.sign(compute_signing_root(&block_root, domain)),
    }
}

/// The sync subcommittee of a position in the sync committee:
/// `index // (SYNC_COMMITTEE_SIZE // SYNC_COMMITTEE_SUBNET_COUNT)`.
///
/// [spec]: altair/validator.md#broadcast-sync-committee-message
pub fn sync_subcommittee_index<E: EthSpec>(sync_committee_index: u64) -> u64 {
    let subcommittee_size = (E::SyncCommitteeSize::to_u64() / SYNC_COMMITTEE_SUBNET_COUNT).max(1);
    sync_committee_index / subcommittee_size
}

/// `get_sync_committee_selection_proof(state, slot, subcommittee_index, privkey)`.
///
/// [spec]: altair/validator.md#aggregation-selection
pub fn get_sync_committee_selection_proof<E: EthSpec>(
    ctx: &SigningContext,
    slot: Slot,
    subcommittee_index: u64,
    key: &ValidatorKey,
) -> BLSSignature {
    let domain = ctx.get_domain(
        DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
        compute_epoch_at_slot::<E>(slot),
    );
    let signing_data = SyncAggregatorSelectionData {
        slot,
        subcommittee_index,
    };
    key.sign(compute_signing_root(&signing_data, domain))
}

/// `is_sync_committee_aggregator(signature)`.
///
/// [spec]: altair/validator.md#aggregation-selection
pub fn is_sync_committee_aggregator<E: EthSpec>(signature: &BLSSignature) -> bool {
    let modulo = (E::SyncCommitteeSize::to_u64()
        / SYNC_COMMITTEE_SUBNET_COUNT
        / TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE)
        .max(1);
    hash_signature_to_u64(signature).is_multiple_of(modulo)
}

/// `get_contribution_and_proof_signature(state, contribution_and_proof, privkey)`.
///
/// [spec]: altair/validator.md#broadcast-sync-committee-contribution
pub fn get_contribution_and_proof_signature<E: EthSpec>(
    ctx: &SigningContext,
    contribution_and_proof: &ContributionAndProof<E>,
    key: &ValidatorKey,
) -> BLSSignature {
    let slot = contribution_and_proof.contribution.slot;
    let domain = ctx.get_domain(
        DOMAIN_CONTRIBUTION_AND_PROOF,
        compute_epoch_at_slot::<E>(slot),
    );
    key.sign(compute_signing_root(contribution_and_proof, domain))
}

/// `get_execution_payload_envelope_signature(state, envelope, privkey)`: a self-building
/// proposer signs its payload's envelope as its builder (`DOMAIN_BEACON_BUILDER` at the epoch
/// of the payload's slot).
///
/// [spec]: gloas/builder.md#constructing-the-signedexecutionpayloadenvelope
pub fn get_execution_payload_envelope_signature<E: EthSpec>(
    ctx: &SigningContext,
    envelope: &types::gloas::ExecutionPayloadEnvelope<E>,
    key: &ValidatorKey,
) -> BLSSignature {
    let domain = ctx.get_domain(
        types::signing::DOMAIN_BEACON_BUILDER,
        compute_epoch_at_slot::<E>(envelope.payload.slot_number),
    );
    key.sign(compute_signing_root(envelope, domain))
}

/// `get_payload_attestation_message_signature(state, attestation, privkey)`: a PTC member's
/// signature over the message's `data` (`DOMAIN_PTC_ATTESTER` at the epoch of `data.slot`).
/// The validator index is not signed, so the signature is over the data alone.
///
/// [spec]: gloas/validator.md#constructing-the-payloadattestationmessage
pub fn get_payload_attestation_message_signature<E: EthSpec>(
    ctx: &SigningContext,
    data: &PayloadAttestationData,
    key: &ValidatorKey,
) -> BLSSignature {
    let domain = ctx.get_domain(DOMAIN_PTC_ATTESTER, compute_epoch_at_slot::<E>(data.slot));
    key.sign(compute_signing_root(data, domain))
}

/// The signature of a builder registration: `DOMAIN_APPLICATION_BUILDER` with the genesis fork
/// version and a zero root, on every fork.
///
/// [spec]: ethereum/builder-specs specs/bellatrix/builder.md#signing
pub fn get_validator_registration_signature(
    spec: &ChainSpec,
    registration: &ValidatorRegistrationV1,
    key: &ValidatorKey,
) -> BLSSignature {
    let domain = spec.compute_genesis_domain(DOMAIN_APPLICATION_BUILDER);
    key.sign(compute_signing_root(registration, domain))
}

/// The hash tree root of `value` (an attestation data's root names it to the aggregate
/// endpoint).
pub fn hash_tree_root<T: TreeHash>(value: &T) -> Root {
    value.tree_hash_root()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bls::interop_secret_key;
    use types::{MainnetEthSpec, MinimalEthSpec};

    fn context() -> SigningContext {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(types::ForkName::Fulu);
        SigningContext::new(Arc::new(spec), Root::repeat_byte(0x42))
    }

    /// The spec's formula written out again for the test: `bytes_to_uint64(hash(sig)[0:8]) %
    /// max(1, len // 16) == 0`.
    fn reference_is_aggregator(committee_length: u64, signature: &BLSSignature) -> bool {
        let d = ethereum_hashing::hash(signature.as_slice());
        let value = u64::from_le_bytes(d[..8].try_into().expect("8 bytes"));
        value % std::cmp::max(1, committee_length / 16) == 0
    }

    #[test]
    fn interop_key_zero_has_the_published_public_key() {
        // The first interop validator's public key, as every client's interop genesis has it.
        let key = ValidatorKey::new(interop_secret_key(0));
        assert_eq!(
            key.pubkey().to_string(),
            "0xa99a76ed7796f7be22d5b7e85deeb7c5677e88e511e0b337618f8c4eb61349b4bf2d153f649f7b53359fe8b94a38e44c"
        );
    }

    #[test]
    fn small_committees_make_everyone_an_aggregator() {
        let ctx = context();
        let key = ValidatorKey::new(interop_secret_key(3));
        for slot in 0..16 {
            let proof = get_slot_signature::<MinimalEthSpec>(&ctx, slot, &key);
            // Fewer than 32 members: the modulo is 1.
            assert!(is_aggregator(1, &proof));
            assert!(is_aggregator(31, &proof));
        }
    }

    #[test]
    fn aggregator_selection_follows_the_spec_formula() {
        let ctx = context();
        let mut selected = 0;
        let trials = 256;
        for index in 0..8 {
            let key = ValidatorKey::new(interop_secret_key(index));
            for slot in 0..trials / 8 {
                let proof = get_slot_signature::<MinimalEthSpec>(&ctx, slot, &key);
                for length in [32, 64, 128, 500, 2048] {
                    assert_eq!(
                        is_aggregator(length, &proof),
                        reference_is_aggregator(length, &proof)
                    );
                }
                selected += usize::from(is_aggregator(128, &proof));
            }
        }
        // A committee of 128 has modulo 8: about one in eight is selected (256 draws: expect
        // 32; the bounds are ten standard deviations wide, so a correct formula never misses).
        assert!((5..=80).contains(&selected), "{selected} of {trials}");
    }

    #[test]
    fn known_hash_values_decide_selection() {
        // hash(0x00 * 96)[0:8] as a little-endian integer, computed independently:
        // sha256(96 zero bytes) = 0x2ea9ab9198d1638007400cd2c3bef1cc745b864b76011a0e1bc52180ac6452d4.
        let zero = BLSSignature::ZERO;
        assert_eq!(hash_signature_to_u64(&zero), 0x8063_d198_91ab_a92e);
        // 0x8063d19891aba92e % 8 = 6: not an aggregator of a committee of 128 (modulo 8), but
        // one of 32 (modulo 2)? 6 % 2 = 0: yes.
        assert!(!is_aggregator(128, &zero));
        assert!(is_aggregator(32, &zero));
        // Sync: mainnet modulo = 512 / 4 / 16 = 8; minimal = 32 / 4 / 16 = 0 → 1.
        assert!(!is_sync_committee_aggregator::<MainnetEthSpec>(&zero));
        assert!(is_sync_committee_aggregator::<MinimalEthSpec>(&zero));
    }

    #[test]
    fn sync_subcommittees_split_the_committee_in_four() {
        // Mainnet: 512 / 4 = 128 per subcommittee; minimal: 32 / 4 = 8.
        assert_eq!(sync_subcommittee_index::<MainnetEthSpec>(127), 0);
        assert_eq!(sync_subcommittee_index::<MainnetEthSpec>(128), 1);
        assert_eq!(sync_subcommittee_index::<MainnetEthSpec>(511), 3);
        assert_eq!(sync_subcommittee_index::<MinimalEthSpec>(7), 0);
        assert_eq!(sync_subcommittee_index::<MinimalEthSpec>(31), 3);
    }

    #[test]
    fn domains_follow_the_fork_schedule() {
        let mut spec = ChainSpec::minimal();
        spec.altair_fork_epoch = 2;
        let ctx = SigningContext::new(Arc::new(spec.clone()), Root::repeat_byte(1));
        assert_eq!(
            ctx.get_domain(DOMAIN_RANDAO, 1),
            compute_domain(
                DOMAIN_RANDAO,
                spec.genesis_fork_version,
                Root::repeat_byte(1)
            )
        );
        assert_eq!(
            ctx.get_domain(DOMAIN_RANDAO, 2),
            compute_domain(
                DOMAIN_RANDAO,
                spec.altair_fork_version,
                Root::repeat_byte(1)
            )
        );
    }

    #[test]
    fn payload_attestations_are_signed_in_the_ptc_attester_domain_of_the_data_slot() {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(types::ForkName::Fulu);
        spec.gloas_fork_epoch = 2;
        let gloas_version = spec.gloas_fork_version.expect("minimal.yaml has it");
        let ctx = SigningContext::new(Arc::new(spec), Root::repeat_byte(0x42));
        let key = ValidatorKey::new(interop_secret_key(1));
        let data = PayloadAttestationData {
            beacon_block_root: Root::repeat_byte(7),
            slot: 17,
            payload_present: true,
            blob_data_available: false,
        };
        let signature =
            get_payload_attestation_message_signature::<MinimalEthSpec>(&ctx, &data, &key);
        let domain = compute_domain(DOMAIN_PTC_ATTESTER, gloas_version, Root::repeat_byte(0x42));
        let public = bls::PublicKey::from_bytes(key.pubkey().as_slice()).expect("valid key");
        let decoded = bls::Signature::deserialize(signature.as_slice()).expect("valid signature");
        let root = compute_signing_root(&data, domain);
        assert!(bls::verify(&public, root.as_slice(), &decoded));
        // Another domain type, or the data changed, does not verify.
        let other = compute_domain(
            DOMAIN_BEACON_ATTESTER,
            gloas_version,
            Root::repeat_byte(0x42),
        );
        let other_root = compute_signing_root(&data, other);
        assert!(!bls::verify(&public, other_root.as_slice(), &decoded));
        let absent = PayloadAttestationData {
            payload_present: false,
            ..data
        };
        let absent_root = compute_signing_root(&absent, domain);
        assert!(!bls::verify(&public, absent_root.as_slice(), &decoded));
    }

    #[test]
    fn signatures_verify_under_the_public_key() {
        let ctx = context();
        let key = ValidatorKey::new(interop_secret_key(5));
        let reveal = get_epoch_signature::<MinimalEthSpec>(&ctx, 17, &key);
        let epoch: Epoch = 2;
        let root = compute_signing_root(&epoch, ctx.get_domain(DOMAIN_RANDAO, epoch));
        let public = bls::PublicKey::from_bytes(key.pubkey().as_slice()).expect("valid key");
        let signature = bls::Signature::deserialize(reveal.as_slice()).expect("valid signature");
        assert!(bls::verify(&public, root.as_slice(), &signature));
    }
}
