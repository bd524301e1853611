//! Blocks with one invalid field are refused with the error that names the operation, its index
//! and the failed check — under each signature strategy — and leave the caller's state as it
//! was.
//!
//! The blocks are valid blocks of the minimal/fulu `sanity/blocks` vectors, changed one field at
//! a time and signed again with the spec tests' keys (validator `i` has secret key `i + 1`), so
//! that only the changed field is wrong. Reads `$ARBOR_SPEC_TESTS` (the directory `ef_tests`
//! runs the vectors from) and fails when the vectors are absent.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

use bls::SecretKey;
use state_processing::{
    CachedBeaconState,
    common::get_domain,
    per_block::{
        AlwaysInvalid, AlwaysValid, AttestationInvalid, BlockProcessingError,
        ExecutionPayloadInvalid, HeaderInvalid, IndexedAttestationInvalid, RandaoInvalid,
        SyncAggregateInvalid, VerifySignatures, VoluntaryExitInvalid, WithdrawalsInvalid,
    },
    state_transition::state_transition,
};
use tree_hash::TreeHash;
use types::{
    BLSSignature, BeaconState, ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root,
    SignedBeaconBlock, electra,
    signing::{DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO, compute_signing_root},
};

type E = MinimalEthSpec;

/// A sanity case: its pre-state and blocks.
struct Case {
    pre: BeaconState<E>,
    blocks: Vec<electra::SignedBeaconBlock<E>>,
}

/// The file's SSZ bytes (snappy's block format); the vectors are this test's fixed input, so an
/// unreadable one panics.
fn read(path: &std::path::Path) -> Vec<u8> {
    let compressed = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    snap::raw::Decoder::new()
        .decompress_vec(&compressed)
        .unwrap_or_else(|e| panic!("{}: bad snappy block: {e}", path.display()))
}

fn load_case(name: &str) -> Option<Case> {
    let root = std::env::var_os("ARBOR_SPEC_TESTS")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("missing vectors: ARBOR_SPEC_TESTS is not set"));
    let dir = root
        .join("tests/minimal/fulu/sanity/blocks/pyspec_tests")
        .join(name);
    if !dir.is_dir() {
        panic!("missing vectors: no sanity vectors at {}", dir.display());
    }
    let pre =
        BeaconState::from_ssz_bytes_by_fork(&read(&dir.join("pre.ssz_snappy")), ForkName::Fulu)
            .unwrap();
    let mut blocks = Vec::new();
    for i in 0.. {
        let path = dir.join(format!("blocks_{i}.ssz_snappy"));
        if !path.exists() {
            break;
        }
        let block =
            SignedBeaconBlock::<E>::from_ssz_bytes_by_fork(&read(&path), ForkName::Fulu).unwrap();
        let SignedBeaconBlock::Fulu(b) = block else {
            panic!("not a Fulu block: {:?}", block.fork_name());
        };
        blocks.push(b);
    }
    Some(Case { pre, blocks })
}

fn spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu)
}

/// The spec tests' secret key of validator `index`: `index + 1`.
fn secret_key(index: u64) -> SecretKey {
    let mut bytes = [0u8; 32];
    bytes[24..].copy_from_slice(&(index + 1).to_be_bytes());
    SecretKey::from_bytes(&bytes).unwrap()
}

fn sign(key: &SecretKey, root: Root) -> BLSSignature {
    BLSSignature::from(key.sign(root.as_slice()).serialize())
}

/// Signs `block` as its `proposer_index`, in the domain of `state` (a state of the same fork).
fn resign(block: &mut electra::SignedBeaconBlock<E>, state: &CachedBeaconState<E>) {
    let view = state.view().unwrap();
    let epoch = block.message.slot / E::slots_per_epoch();
    let domain = get_domain(&view, DOMAIN_BEACON_PROPOSER, Some(epoch));
    let root = compute_signing_root(&block.message, domain);
    block.signature = sign(&secret_key(block.message.proposer_index), root);
}

/// Applies the case's blocks before `index` and returns the state the block at `index` applies
/// to, with that block.
fn state_before(
    case: &Case,
    index: usize,
) -> (CachedBeaconState<E>, electra::SignedBeaconBlock<E>) {
    let spec = spec();
    let mut state = CachedBeaconState::new(case.pre.clone());
    for block in &case.blocks[..index] {
        let block = SignedBeaconBlock::Fulu(block.clone());
        state_transition(
            &mut state,
            &block,
            VerifySignatures::None,
            true,
            &AlwaysValid,
            &spec,
        )
        .unwrap();
    }
    (state, case.blocks[index].clone())
}

/// Runs `block` on `state` with each signature strategy and the state-root check; returns the
/// errors, after checking that each left the state unchanged.
fn refuse(
    state: &CachedBeaconState<E>,
    block: electra::SignedBeaconBlock<E>,
) -> Vec<BlockProcessingError> {
    let spec = spec();
    let block = SignedBeaconBlock::Fulu(block);
    let mut before = state.clone();
    let root_before = before.hash_tree_root().unwrap();
    [VerifySignatures::Individually, VerifySignatures::Batched]
        .into_iter()
        .map(|verify| {
            let mut working = state.clone();
            let error = state_transition(&mut working, &block, verify, true, &AlwaysValid, &spec)
                .expect_err("the block must be refused");
            assert_eq!(
                working.hash_tree_root().unwrap(),
                root_before,
                "a refused block ({verify:?}: {error}) changed the state"
            );
            assert_eq!(
                working.state, before.state,
                "a refused block changed the state"
            );
            error
        })
        .collect()
}

#[test]
fn unchanged_blocks_are_accepted_by_every_strategy() {
    let Some(case) = load_case("attestation") else {
        return;
    };
    let (state, block) = state_before(&case, with_attestation(&case));
    for verify in [
        VerifySignatures::Individually,
        VerifySignatures::Batched,
        VerifySignatures::None,
    ] {
        let mut working = state.clone();
        state_transition(
            &mut working,
            &SignedBeaconBlock::Fulu(block.clone()),
            verify,
            true,
            &AlwaysValid,
            &spec(),
        )
        .unwrap_or_else(|e| panic!("{verify:?}: {e}"));
    }
}

#[test]
fn refuses_wrong_proposer_index() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    let expected = block.message.proposer_index;
    block.message.proposer_index = (expected + 1) % 8;
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::Header(HeaderInvalid::ProposerMismatch { expected: x, .. })
                    if x == expected
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_wrong_parent_root() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    block.message.parent_root = Root::repeat_byte(7);
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::Header(HeaderInvalid::ParentRootMismatch { .. })
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_wrong_state_root() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    block.message.state_root = Root::repeat_byte(1);
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(matches!(e, BlockProcessingError::StateRoot { .. }), "{e}");
    }
}

#[test]
fn refuses_proposer_signature_by_another_key() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    block.signature = sign(&secret_key(block.message.proposer_index + 1), Root::ZERO);
    for e in refuse(&state, block) {
        assert!(matches!(e, BlockProcessingError::ProposerSignature), "{e}");
    }
}

#[test]
fn refuses_randao_reveal_of_another_epoch() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    let view = state.view().unwrap();
    let domain = get_domain(&view, DOMAIN_RANDAO, None);
    let wrong_epoch: u64 = 1000;
    block.message.body.randao_reveal = sign(
        &secret_key(block.message.proposer_index),
        compute_signing_root(&wrong_epoch, domain),
    );
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::Randao(RandaoInvalid::InvalidSignature { .. })
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_payload_with_wrong_timestamp() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    block.message.body.execution_payload.timestamp += 1;
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::ExecutionPayload(
                    ExecutionPayloadInvalid::TimestampMismatch { .. }
                )
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_payload_the_engine_rejects() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, block) = state_before(&case, 0);
    let mut working = state.clone();
    let root_before = working.hash_tree_root().unwrap();
    let e = state_transition(
        &mut working,
        &SignedBeaconBlock::Fulu(block),
        VerifySignatures::Batched,
        true,
        &AlwaysInvalid,
        &spec(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            BlockProcessingError::ExecutionPayload(ExecutionPayloadInvalid::RejectedByEngine)
        ),
        "{e}"
    );
    assert_eq!(working.hash_tree_root().unwrap(), root_before);
}

#[test]
fn refuses_payload_with_an_unexpected_withdrawal() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    let withdrawals = &mut block.message.body.execution_payload.withdrawals;
    let expected = withdrawals.len();
    withdrawals
        .push(electra::Withdrawal {
            index: 0,
            validator_index: 0,
            address: Default::default(),
            amount: 1,
        })
        .unwrap();
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::Withdrawals(WithdrawalsInvalid::CountMismatch { expected: x, .. })
                    if x == expected
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_eth1_deposit_in_fulu() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    block
        .message
        .body
        .deposits
        .push(electra::Deposit {
            proof: Default::default(),
            data: electra::DepositData {
                pubkey: Default::default(),
                withdrawal_credentials: Default::default(),
                amount: 32_000_000_000,
                signature: Default::default(),
            },
        })
        .unwrap();
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::DepositCount {
                    expected: 0,
                    got: 1
                }
            ),
            "{e}"
        );
    }
}

/// The index of the first block of `case` with an attestation.
fn with_attestation(case: &Case) -> usize {
    case.blocks
        .iter()
        .position(|b| !b.message.body.attestations.is_empty())
        .expect("a block with an attestation")
}

#[test]
fn refuses_attestation_with_nonzero_data_index() {
    let Some(case) = load_case("attestation") else {
        return;
    };
    let (state, mut block) = state_before(&case, with_attestation(&case));
    block.message.body.attestations[0].data.index = 1;
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::Attestation {
                    index: 0,
                    reason: AttestationInvalid::NonZeroDataIndex(1)
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_attestation_with_another_signature() {
    let Some(case) = load_case("attestation") else {
        return;
    };
    let (state, mut block) = state_before(&case, with_attestation(&case));
    // A valid signature, by a key that is not the attesters' sum.
    block.message.body.attestations[0].signature = sign(&secret_key(0), Root::ZERO);
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::Attestation {
                    index: 0,
                    reason: AttestationInvalid::IndexedAttestation(
                        IndexedAttestationInvalid::InvalidSignature
                    )
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_attestation_with_too_many_aggregation_bits() {
    let Some(case) = load_case("attestation") else {
        return;
    };
    let (state, mut block) = state_before(&case, with_attestation(&case));
    let bits = &block.message.body.attestations[0].aggregation_bits;
    let len = bits.len();
    let mut longer = ssz::BitList::with_capacity(len + 1).unwrap();
    for i in 0..len {
        longer.set(i, bits.get(i).unwrap()).unwrap();
    }
    block.message.body.attestations[0].aggregation_bits = longer;
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::Attestation {
                    index: 0,
                    reason: AttestationInvalid::AggregationBitsLength { expected, got }
                } if expected == len && got == len + 1
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_voluntary_exit_from_the_future() {
    let Some(case) = load_case("voluntary_exit") else {
        return;
    };
    let index = case
        .blocks
        .iter()
        .position(|b| !b.message.body.voluntary_exits.is_empty())
        .expect("a block with an exit");
    let (state, mut block) = state_before(&case, index);
    let exit = &mut block.message.body.voluntary_exits[0];
    exit.message.epoch = 1_000;
    // Valid signature over the changed exit, so that only the epoch is wrong.
    let view = state.view().unwrap();
    let domain = types::signing::compute_domain(
        types::signing::DOMAIN_VOLUNTARY_EXIT,
        spec().capella_fork_version,
        *view.genesis_validators_root,
    );
    exit.signature = sign(
        &secret_key(exit.message.validator_index),
        compute_signing_root(&exit.message, domain),
    );
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::VoluntaryExit {
                    index: 0,
                    reason: VoluntaryExitInvalid::FutureEpoch { exit: 1_000, .. }
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_sync_aggregate_with_a_flipped_bit() {
    let Some(case) = load_case("sync_committee_committee__full") else {
        return;
    };
    let (state, mut block) = state_before(&case, 0);
    let bits = &mut block.message.body.sync_aggregate.sync_committee_bits;
    let first = bits.get(0).unwrap();
    bits.set(0, !first).unwrap();
    resign(&mut block, &state);
    for e in refuse(&state, block) {
        assert!(
            matches!(
                e,
                BlockProcessingError::SyncAggregate(SyncAggregateInvalid::InvalidSignature { .. })
            ),
            "{e}"
        );
    }
}

#[test]
fn refuses_block_not_after_the_state() {
    let Some(case) = load_case("empty_block_transition") else {
        return;
    };
    let (mut state, block) = state_before(&case, 0);
    let spec = spec();
    let block = SignedBeaconBlock::Fulu(block);
    state_transition(
        &mut state,
        &block,
        VerifySignatures::Batched,
        true,
        &AlwaysValid,
        &spec,
    )
    .unwrap();
    let root = state.hash_tree_root().unwrap();
    let e = state_transition(
        &mut state,
        &block,
        VerifySignatures::Batched,
        true,
        &AlwaysValid,
        &spec,
    )
    .unwrap_err();
    assert!(
        matches!(e, BlockProcessingError::SlotNotAfterState { .. }),
        "{e}"
    );
    assert_eq!(state.hash_tree_root().unwrap(), root);
    // The refused replay did not disturb the post-state either.
    assert_eq!(root, state.state.tree_hash_root());
}

#[test]
fn process_block_strategies_agree_and_batched_names_the_bad_signature() {
    let Some(case) = load_case("attestation") else {
        return;
    };
    let spec = spec();
    let (state, block) = state_before(&case, with_attestation(&case));
    let mut at_slot = state.clone();
    state_processing::per_slot::process_slots(&mut at_slot, block.message.slot, &spec).unwrap();
    let roots: Vec<Root> = [
        VerifySignatures::Individually,
        VerifySignatures::Batched,
        VerifySignatures::None,
    ]
    .into_iter()
    .map(|verify| {
        let mut working = at_slot.clone();
        let (mut view, caches) = working.view_mut().unwrap();
        state_processing::per_block::process_block(
            &mut view,
            caches,
            &block.message,
            verify,
            &AlwaysValid,
            &spec,
        )
        .unwrap_or_else(|e| panic!("{verify:?}: {e}"));
        working.hash_tree_root().unwrap()
    })
    .collect();
    assert!(roots.windows(2).all(|w| w[0] == w[1]), "{roots:?}");

    // A bad attestation signature: the batch fails, and the error names the attestation.
    let mut bad = block.message.clone();
    bad.body.attestations[0].signature = sign(&secret_key(0), Root::ZERO);
    let mut working = at_slot.clone();
    let (mut view, caches) = working.view_mut().unwrap();
    let e = state_processing::per_block::process_block(
        &mut view,
        caches,
        &bad,
        VerifySignatures::Batched,
        &AlwaysValid,
        &spec,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            BlockProcessingError::Attestation {
                index: 0,
                reason: AttestationInvalid::IndexedAttestation(
                    IndexedAttestationInvalid::InvalidSignature
                )
            }
        ),
        "{e}"
    );
}
