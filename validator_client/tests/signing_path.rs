//! Slashing protection on the signing path: the validator store refuses to sign a double
//! vote, a surround vote or a second block at a slot, also after a restart and for a second
//! client with the same keys and database; it signs PTC votes (not slashable) without a
//! record, and nothing at all while doppelganger protection runs.

use std::sync::Arc;

use arbitrary::{Arbitrary, Unstructured};
use bls::interop_secret_key;
use slashing_protection::{NotSafe, SlashingDatabase};
use types::gloas::PayloadAttestationData;
use types::phase0::{AttestationData, Checkpoint};
use types::signing::{DOMAIN_PTC_ATTESTER, compute_domain, compute_signing_root};
use types::{BeaconBlock, ChainSpec, ForkName, MinimalEthSpec, Root, Slot};
use validator_client::signing::{SigningContext, ValidatorKey};
use validator_client::validator_store::{SignError, ValidatorStore};

type E = MinimalEthSpec;

const GVR: Root = Root::repeat_byte(0x42);

fn store(path: &std::path::Path, signing_enabled: bool) -> ValidatorStore {
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    let db = SlashingDatabase::open_or_create(path, GVR).expect("database opens");
    let keys = (0..2)
        .map(|i| ValidatorKey::new(interop_secret_key(i)))
        .collect();
    ValidatorStore::new(
        keys,
        db,
        SigningContext::new(Arc::new(spec), GVR),
        signing_enabled,
    )
    .expect("keys register")
}

fn data(source: u64, target: u64, root: u8) -> AttestationData {
    AttestationData {
        slot: target * 8,
        index: 0,
        beacon_block_root: Root::repeat_byte(root),
        source: Checkpoint {
            epoch: source,
            root: Root::ZERO,
        },
        target: Checkpoint {
            epoch: target,
            root: Root::repeat_byte(root),
        },
    }
}

fn block(slot: Slot, proposer: u64, graffiti: u8) -> BeaconBlock<E> {
    let bytes = vec![0u8; 4096];
    let mut block = types::electra::BeaconBlock::<E>::arbitrary(&mut Unstructured::new(&bytes))
        .expect("arbitrary block");
    block.slot = slot;
    block.proposer_index = proposer;
    block.body.graffiti = Root::repeat_byte(graffiti);
    BeaconBlock::Fulu(block)
}

fn refusal(result: Result<impl std::fmt::Debug, SignError>) -> NotSafe {
    match result {
        Err(SignError::NotSafe { reason, .. }) => *reason,
        other => panic!("expected a slashing protection refusal, got {other:?}"),
    }
}

#[test]
fn double_and_surround_votes_are_refused_before_signing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir.path().join("sp.redb"), true);
    let key = store.pubkeys()[0];
    store
        .sign_attestation(&key, 0, 0, data(2, 3, 1))
        .expect("first vote");
    // The same vote again is not slashable: it signs the same message.
    store
        .sign_attestation(&key, 0, 0, data(2, 3, 1))
        .expect("same data");
    assert!(matches!(
        refusal(store.sign_attestation(&key, 0, 0, data(2, 3, 2))),
        NotSafe::DoubleVote {
            target_epoch: 3,
            ..
        }
    ));
    store
        .sign_attestation(&key, 0, 0, data(3, 6, 1))
        .expect("later vote");
    assert!(matches!(
        refusal(store.sign_attestation(&key, 0, 0, data(4, 5, 1))),
        NotSafe::SurroundedVote { .. }
    ));
    assert!(matches!(
        refusal(store.sign_attestation(&key, 0, 0, data(1, 7, 1))),
        NotSafe::SurroundingVote { .. }
    ));
    // The other key has its own history.
    store
        .sign_attestation(&store.pubkeys()[1], 1, 0, data(2, 3, 2))
        .expect("other validator");
}

#[test]
fn a_second_block_at_a_slot_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir.path().join("sp.redb"), true);
    let key = store.pubkeys()[0];
    let signed = store.sign_block(&key, block(9, 0, 1)).expect("first block");
    assert_eq!(signed.slot(), 9);
    store
        .sign_block(&key, block(9, 0, 1))
        .expect("the same block again");
    assert!(matches!(
        refusal(store.sign_block(&key, block(9, 0, 2))),
        NotSafe::DoubleBlockProposal { slot: 9, .. }
    ));
    store.sign_block(&key, block(10, 0, 2)).expect("next slot");
}

#[test]
fn a_restart_or_a_second_client_on_the_database_signs_nothing_slashable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sp.redb");
    {
        let first = store(&path, true);
        let key = first.pubkeys()[0];
        first
            .sign_attestation(&key, 0, 0, data(0, 1, 1))
            .expect("vote");
        first.sign_block(&key, block(8, 0, 1)).expect("block");
    }
    // The same keys again over the same database (a restart, or the keys run twice in turn).
    let second = store(&path, true);
    let key = second.pubkeys()[0];
    assert!(matches!(
        refusal(second.sign_attestation(&key, 0, 0, data(0, 1, 9))),
        NotSafe::DoubleVote { .. }
    ));
    assert!(matches!(
        refusal(second.sign_block(&key, block(8, 0, 9))),
        NotSafe::DoubleBlockProposal { .. }
    ));
}

#[test]
fn nothing_is_signed_while_doppelganger_protection_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir.path().join("sp.redb"), false);
    let key = store.pubkeys()[0];
    assert!(matches!(
        store.sign_attestation(&key, 0, 0, data(0, 1, 1)),
        Err(SignError::DoppelgangerPending)
    ));
    assert!(matches!(
        store.randao_reveal::<E>(&key, 8),
        Err(SignError::DoppelgangerPending)
    ));
    store.enable_signing();
    store
        .sign_attestation(&key, 0, 0, data(0, 1, 1))
        .expect("cleared");
    let unknown = types::BLSPubkey::repeat_byte(7);
    assert!(matches!(
        store.sign_attestation(&unknown, 9, 0, data(0, 2, 1)),
        Err(SignError::UnknownValidator(_))
    ));
}

fn payload_attestation_data(slot: Slot, payload_present: bool) -> PayloadAttestationData {
    PayloadAttestationData {
        beacon_block_root: Root::repeat_byte(0xb1),
        slot,
        payload_present,
        blob_data_available: true,
    }
}

/// PTC votes are not slashable (gloas/validator.md has no slashing condition for them): two
/// different datas for one slot are both signed, and slashing protection records neither.
#[test]
fn ptc_votes_are_not_slashable_and_leave_no_slashing_protection_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir.path().join("sp.redb"), true);
    let key = store.pubkeys()[0];
    let present = store
        .sign_payload_attestation::<E>(&key, 0, payload_attestation_data(9, true))
        .expect("first vote");
    let absent = store
        .sign_payload_attestation::<E>(&key, 0, payload_attestation_data(9, false))
        .expect("a conflicting vote at the same slot is signed too");
    assert_ne!(present.signature, absent.signature);
    assert_eq!((present.validator_index, absent.validator_index), (0, 0));
    let spec = store.context().spec();
    let domain = compute_domain(DOMAIN_PTC_ATTESTER, spec.compute_fork_version(1), GVR);
    let public = bls::PublicKey::from_bytes(key.as_slice()).expect("valid key");
    for message in [&present, &absent] {
        let root = compute_signing_root(&message.data, domain);
        let signature =
            bls::Signature::deserialize(message.signature.as_slice()).expect("valid signature");
        assert!(bls::verify(&public, root.as_slice(), &signature));
    }
    let history = store
        .slashing_protection()
        .export_interchange(Some(&[key]))
        .expect("export");
    assert_eq!(history.data.len(), 1, "the key is registered");
    for validator in &history.data {
        assert!(validator.signed_blocks.is_empty(), "{validator:?}");
        assert!(validator.signed_attestations.is_empty(), "{validator:?}");
    }
    // Attestations are unaffected: the first vote of an epoch is still allowed.
    store
        .sign_attestation(&key, 0, 0, data(0, 1, 1))
        .expect("attestation");
}

#[test]
fn a_doppelganger_held_validator_signs_no_ptc_vote() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir.path().join("sp.redb"), false);
    let key = store.pubkeys()[0];
    assert!(matches!(
        store.sign_payload_attestation::<E>(&key, 0, payload_attestation_data(9, true)),
        Err(SignError::DoppelgangerPending)
    ));
    store.enable_signing();
    store
        .sign_payload_attestation::<E>(&key, 0, payload_attestation_data(9, true))
        .expect("cleared");
    let unknown = types::BLSPubkey::repeat_byte(7);
    assert!(matches!(
        store.sign_payload_attestation::<E>(&unknown, 9, payload_attestation_data(9, true)),
        Err(SignError::UnknownValidator(_))
    ));
}
