//! The pool on small interop states (minimal preset, Fulu at genesis, real signatures): every
//! packed operation is checked by running it through `state_processing` with its signature
//! verified.

use std::sync::Arc;

use bls::PublicKeyBytes;
use ssz_types::{BitList, BitVector, VariableList};
use state_harness::{BlockContents, aggregate_interop_secret_key, interop_secret_key};
use state_processing::{
    CachedBeaconState, CommitteeCache, StateRef,
    common::{
        compute_epoch_at_slot, get_block_root, get_block_root_at_slot, get_current_epoch,
        get_domain,
    },
    genesis::interop_genesis_state,
    per_block::{
        AlwaysValid, VerifySignatures, process_attestation, process_attester_slashing,
        process_block, process_bls_to_execution_change, process_proposer_slashing,
        process_sync_aggregate, process_voluntary_exit,
    },
    per_slot::process_slots,
};
use typenum::Unsigned;
use types::{
    Address, B256, BLSSignature, ChainSpec, EthSpec, FAR_FUTURE_EPOCH, ForkName, MinimalEthSpec,
    Root, Slot, ValidatorIndex,
    electra::{
        Attestation, AttestationData, AttesterSlashing, BLSToExecutionChange, BeaconBlockHeader,
        Checkpoint, IndexedAttestation, ProposerSlashing, SignedBLSToExecutionChange,
        SignedBeaconBlockHeader, SignedVoluntaryExit, SingleAttestation, SyncCommitteeContribution,
        VoluntaryExit,
    },
    signing::{
        DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, DOMAIN_BLS_TO_EXECUTION_CHANGE,
        DOMAIN_SYNC_COMMITTEE, DOMAIN_VOLUNTARY_EXIT, compute_domain, compute_signing_root,
    },
};

use crate::{InsertOutcome, OpPoolError, OperationPool, compute_on_chain_aggregate};

type E = MinimalEthSpec;

const VALIDATORS: usize = 64;

fn spec() -> ChainSpec {
    let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    // Exits straight from genesis.
    spec.shard_committee_period = 0;
    spec
}

fn genesis() -> CachedBeaconState<E> {
    let state =
        interop_genesis_state::<E>(VALIDATORS, 1_600_000_000, Root::repeat_byte(0x42), &spec())
            .expect("interop genesis");
    CachedBeaconState::new(state)
}

/// The interop genesis advanced (empty slots) to `slot`.
fn state_at(slot: Slot) -> CachedBeaconState<E> {
    let mut state = genesis();
    if slot > 0 {
        process_slots(&mut state, slot, &spec()).expect("process_slots");
    }
    state
}

fn sig(s: bls::Signature) -> BLSSignature {
    BLSSignature::from(s.serialize())
}

fn committees(state: &mut CachedBeaconState<E>, epoch: u64) -> Arc<CommitteeCache> {
    let CachedBeaconState { state, caches } = state;
    let view = StateRef::new(state).expect("view");
    caches.committees(&view, epoch).expect("committees")
}

fn committee(state: &mut CachedBeaconState<E>, slot: Slot, index: u64) -> Vec<ValidatorIndex> {
    committees(state, compute_epoch_at_slot::<E>(slot))
        .get_beacon_committee(slot, index)
        .expect("committee")
        .to_vec()
}

/// The data an honest attester of `slot` signs on `state` (head overridable).
fn data_for(state: &CachedBeaconState<E>, slot: Slot, head: Option<Root>) -> AttestationData {
    let view = state.view().expect("view");
    let target_epoch = compute_epoch_at_slot::<E>(slot);
    let source = if target_epoch == get_current_epoch(&view) {
        view.current_justified_checkpoint.clone()
    } else {
        view.previous_justified_checkpoint.clone()
    };
    AttestationData {
        slot,
        index: 0,
        beacon_block_root: head
            .unwrap_or_else(|| get_block_root_at_slot(&view, slot).expect("root")),
        source,
        target: Checkpoint {
            epoch: target_epoch,
            root: get_block_root(&view, target_epoch).expect("target root"),
        },
    }
}

fn sign_data(
    state: &CachedBeaconState<E>,
    data: &AttestationData,
    signers: &[u64],
) -> BLSSignature {
    let view = state.view().expect("view");
    let domain = get_domain(&view, DOMAIN_BEACON_ATTESTER, Some(data.target.epoch));
    let root = compute_signing_root(data, domain);
    sig(aggregate_interop_secret_key(signers.iter().copied())
        .expect("key")
        .sign(root.as_slice()))
}

/// A network aggregate of committee `index` of `slot` by the members at `positions`.
fn aggregate(
    state: &mut CachedBeaconState<E>,
    slot: Slot,
    index: u64,
    positions: &[usize],
    head: Option<Root>,
) -> Attestation<E> {
    let members = committee(state, slot, index);
    let data = data_for(state, slot, head);
    let mut aggregation_bits = BitList::with_capacity(members.len()).expect("bits");
    let mut signers = Vec::new();
    for &p in positions {
        aggregation_bits
            .set(p, true)
            .expect("position in committee");
        signers.push(members[p]);
    }
    let mut committee_bits = BitVector::new();
    committee_bits
        .set(index as usize, true)
        .expect("committee index");
    Attestation {
        aggregation_bits,
        signature: sign_data(state, &data, &signers),
        data,
        committee_bits,
    }
}

fn insert(
    pool: &OperationPool<E>,
    state: &mut CachedBeaconState<E>,
    a: &Attestation<E>,
) -> InsertOutcome {
    let c = committees(state, a.data.target.epoch);
    pool.insert_attestation(a, &c).expect("insert")
}

/// Applies `attestations` to a clone of `state` with their signatures checked one by one, and
/// returns the proposer's reward for them.
fn apply_verified(state: &CachedBeaconState<E>, attestations: &[Attestation<E>]) -> u64 {
    let mut scratch = state.clone();
    let total_before: u64 = scratch
        .state
        .balances()
        .expect("a state before Gloas")
        .iter()
        .sum();
    {
        let (mut view, caches) = scratch.view_mut().expect("view");
        for a in attestations {
            process_attestation(&mut view, caches, a, VerifySignatures::Individually)
                .expect("a packed attestation is valid and its signature verifies");
        }
    }
    let total_after: u64 = scratch
        .state
        .balances()
        .expect("a state before Gloas")
        .iter()
        .sum();
    total_after - total_before
}

fn set_bits(a: &Attestation<E>) -> usize {
    a.aggregation_bits.num_set_bits()
}

#[test]
fn pool_is_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<OperationPool<E>>();

    let mut state = state_at(3);
    let pool = OperationPool::<E>::new();
    let members = committee(&mut state, 1, 0);
    let data = data_for(&state, 1, None);
    let c = committees(&mut state, 0);
    let singles: Vec<SingleAttestation> = members
        .iter()
        .map(|&v| SingleAttestation {
            committee_index: 0,
            attester_index: v,
            signature: sign_data(&state, &data, &[v]),
            data: data.clone(),
        })
        .collect();
    std::thread::scope(|s| {
        for single in &singles {
            let (pool, c) = (&pool, &c);
            s.spawn(move || pool.insert_single_attestation(single, c).expect("insert"));
        }
    });
    assert_eq!(
        pool.counts().aggregates,
        1,
        "every single merged into one aggregate"
    );
    let packed = pool.get_attestations(&mut state).expect("pack");
    assert_eq!(packed.len(), 1);
    assert_eq!(set_bits(&packed[0]), members.len());
    apply_verified(&state, &packed);
}

#[test]
fn single_attestations_aggregate_naively_per_committee() {
    let mut state = state_at(3);
    let pool = OperationPool::<E>::new();
    let c = committees(&mut state, 0);
    let data = data_for(&state, 1, None);
    let mut outcomes = Vec::new();
    for index in 0..2u64 {
        for &v in &committee(&mut state, 1, index) {
            let single = SingleAttestation {
                committee_index: index,
                attester_index: v,
                signature: sign_data(&state, &data, &[v]),
                data: data.clone(),
            };
            outcomes.push(pool.insert_single_attestation(&single, &c).expect("insert"));
            assert_eq!(
                pool.insert_single_attestation(&single, &c).expect("insert"),
                InsertOutcome::AlreadyKnown
            );
        }
    }
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == InsertOutcome::New)
            .count(),
        2
    );
    assert_eq!(
        pool.counts().aggregates,
        2,
        "one naive aggregate per committee"
    );

    // An attester outside the committee it names is refused.
    let outsider = committee(&mut state, 1, 1)[0];
    let wrong = SingleAttestation {
        committee_index: 0,
        attester_index: outsider,
        signature: sign_data(&state, &data, &[outsider]),
        data: data.clone(),
    };
    assert_eq!(
        pool.insert_single_attestation(&wrong, &c),
        Err(OpPoolError::AttesterNotInCommittee {
            attester_index: outsider,
            committee_index: 0
        })
    );

    let packed = pool.get_attestations(&mut state).expect("pack");
    assert_eq!(packed.len(), 1, "both committees in one on-chain aggregate");
    assert_eq!(packed[0].committee_bits.num_set_bits(), 2);
    assert_eq!(set_bits(&packed[0]), 8);
    apply_verified(&state, &packed);
}

#[test]
fn covered_aggregates_are_dropped_and_disjoint_ones_merged() {
    let mut state = state_at(3);
    let pool = OperationPool::<E>::new();
    let a01 = aggregate(&mut state, 1, 0, &[0, 1], None);
    let a0 = aggregate(&mut state, 1, 0, &[0], None);
    let a012 = aggregate(&mut state, 1, 0, &[0, 1, 2], None);
    let a12 = aggregate(&mut state, 1, 0, &[1, 2], None);
    let a3 = aggregate(&mut state, 1, 0, &[3], None);
    assert_eq!(insert(&pool, &mut state, &a01), InsertOutcome::New);
    assert_eq!(insert(&pool, &mut state, &a0), InsertOutcome::AlreadyKnown);
    assert_eq!(insert(&pool, &mut state, &a012), InsertOutcome::New);
    assert_eq!(
        pool.counts().aggregates,
        1,
        "{{0,1}} is covered by {{0,1,2}}"
    );
    assert_eq!(insert(&pool, &mut state, &a12), InsertOutcome::AlreadyKnown);
    assert_eq!(insert(&pool, &mut state, &a3), InsertOutcome::Aggregated);
    let stored = pool.attestations().expect("list");
    assert_eq!(stored.len(), 1);
    assert_eq!(set_bits(&stored[0]), 4);
    apply_verified(&state, &stored);
}

#[test]
fn aggregates_are_refused_when_malformed() {
    let mut state = state_at(3);
    let pool = OperationPool::<E>::new();
    let c = committees(&mut state, 0);
    let mut two = aggregate(&mut state, 1, 0, &[0], None);
    two.committee_bits.set(1, true).expect("bit");
    assert_eq!(
        pool.insert_attestation(&two, &c),
        Err(OpPoolError::NotOneCommittee { count: 2 })
    );
    let mut short = aggregate(&mut state, 1, 0, &[0], None);
    short.aggregation_bits = BitList::with_capacity(3).expect("bits");
    assert!(matches!(
        pool.insert_attestation(&short, &c),
        Err(OpPoolError::AggregationBitsLength {
            expected: 4,
            got: 3,
            ..
        })
    ));
    let mut empty = aggregate(&mut state, 1, 0, &[0], None);
    empty.aggregation_bits = BitList::with_capacity(4).expect("bits");
    assert_eq!(
        pool.insert_attestation(&empty, &c),
        Err(OpPoolError::NoAttesters)
    );
    let wrong_epoch = committees(&mut state, 0);
    let mut later = aggregate(&mut state, 1, 0, &[0], None);
    later.data.slot = 9;
    assert!(matches!(
        pool.insert_attestation(&later, &wrong_epoch),
        Err(OpPoolError::TargetEpochSlotMismatch { .. })
    ));
    let mut bad_signature = aggregate(&mut state, 1, 0, &[0], None);
    bad_signature.signature = BLSSignature::repeat_byte(0x11);
    assert!(matches!(
        pool.insert_attestation(&bad_signature, &c),
        Err(OpPoolError::InvalidSignature(_))
    ));
    assert_eq!(pool.counts().aggregates, 0);
}

#[test]
fn compute_on_chain_aggregate_follows_the_spec() {
    let mut state = state_at(3);
    let a1 = aggregate(&mut state, 1, 1, &[1, 3], None);
    let a0 = aggregate(&mut state, 1, 0, &[0, 2], None);
    let on_chain = compute_on_chain_aggregate(&[a1.clone(), a0.clone()]).expect("aggregate");
    // Committee order, whatever the input order: committee 0's bits first.
    let bits: Vec<bool> = on_chain.aggregation_bits.iter().collect();
    assert_eq!(
        bits,
        vec![true, false, true, false, false, true, false, true]
    );
    assert_eq!(on_chain.committee_bits.num_set_bits(), 2);
    apply_verified(&state, &[on_chain]);

    assert_eq!(
        compute_on_chain_aggregate(&[a0.clone(), a0.clone()]),
        Err(OpPoolError::DuplicateCommittee(0))
    );
    let other = aggregate(&mut state, 2, 1, &[0], None);
    assert_eq!(
        compute_on_chain_aggregate(&[a0, other]),
        Err(OpPoolError::DataMismatch)
    );
    assert_eq!(
        compute_on_chain_aggregate::<E>(&[]),
        Err(OpPoolError::NoAttesters)
    );
}

#[test]
fn max_cover_prefers_new_coverage_over_more_bits() {
    let mut state = state_at(3);
    // Members 0, 1, 2 of committee 0 of slot 1 are already counted in the state.
    let counted = aggregate(&mut state, 1, 0, &[0, 1, 2], None);
    {
        let (mut view, caches) = state.view_mut().expect("view");
        process_attestation(&mut view, caches, &counted, VerifySignatures::None).expect("apply");
    }
    let pool = OperationPool::<E>::new();
    let more_bits = aggregate(&mut state, 1, 0, &[0, 1, 2], None);
    let new_vote = aggregate(&mut state, 1, 0, &[2, 3], None);
    insert(&pool, &mut state, &more_bits);
    insert(&pool, &mut state, &new_vote);
    assert_eq!(
        pool.counts().aggregates,
        2,
        "overlapping aggregates are both kept"
    );

    let packed = pool.get_attestations(&mut state).expect("pack");
    assert_eq!(packed.len(), 1, "the covered aggregate adds nothing");
    assert_eq!(packed[0].aggregation_bits, new_vote.aggregation_bits);
    assert!(apply_verified(&state, &packed) > 0);
}

#[test]
fn a_second_vote_of_covered_validators_is_not_packed() {
    let mut state = state_at(3);
    let pool = OperationPool::<E>::new();
    let all = [0, 1, 2, 3];
    let canonical = aggregate(&mut state, 2, 0, &all, None);
    let wrong_head = aggregate(&mut state, 2, 0, &all, Some(Root::repeat_byte(0x77)));
    insert(&pool, &mut state, &wrong_head);
    insert(&pool, &mut state, &canonical);
    let packed = pool.get_attestations(&mut state).expect("pack");
    // The canonical vote earns the head flag too; the other vote's flags are then all covered.
    assert_eq!(packed.len(), 1);
    assert_eq!(packed[0].data, canonical.data);
    apply_verified(&state, &packed);
}

#[test]
fn packing_takes_the_most_valuable_data_up_to_the_limit() {
    // Slot 12 (epoch 1): slots 0..=11 are in the window; 12 data for 8 places.
    let mut state = state_at(12);
    let pool = OperationPool::<E>::new();
    for slot in 0..12u64 {
        for index in 0..2 {
            let positions: &[usize] = if slot < 4 { &[0] } else { &[0, 1, 2, 3] };
            let a = aggregate(&mut state, slot, index, positions, None);
            insert(&pool, &mut state, &a);
        }
    }
    let packed = pool.get_attestations(&mut state).expect("pack");
    assert_eq!(
        packed.len(),
        <E as EthSpec>::MaxAttestationsElectra::to_usize()
    );
    let mut slots: Vec<u64> = packed.iter().map(|a| a.data.slot).collect();
    slots.sort_unstable();
    assert_eq!(
        slots,
        (4..12).collect::<Vec<_>>(),
        "the full slots, not the one-member ones"
    );
    // Largest gain first: slot 11 earns source, target and head.
    assert_eq!(packed[0].data.slot, 11);
    apply_verified(&state, &packed);
}

#[test]
fn the_inclusion_window_is_respected_and_old_attestations_pruned() {
    let mut state = state_at(3);
    let pool = OperationPool::<E>::new();
    // Slot 3 is the state's slot: too early for a block at slot 3 (its head is the latest
    // block the attesters saw, the one of slot 2).
    let head = get_block_root_at_slot(&state.view().expect("view"), 2).expect("root");
    let too_early = aggregate(&mut state, 3, 0, &[0, 1], Some(head));
    let ok = aggregate(&mut state, 2, 0, &[0, 1], None);
    insert(&pool, &mut state, &too_early);
    insert(&pool, &mut state, &ok);
    let packed = pool.get_attestations(&mut state).expect("pack");
    assert_eq!(packed.len(), 1);
    assert_eq!(packed[0].data.slot, 2);

    // Two epochs later, epoch 0 is neither the current nor the previous epoch.
    let mut later = state_at(2 * 8 + 1);
    assert!(pool.get_attestations(&mut later).expect("pack").is_empty());
    assert_eq!(pool.counts().attestation_data, 2);
    pool.prune_on_head(&later).expect("prune");
    assert_eq!(pool.counts().attestation_data, 0);
}

#[test]
fn attestations_of_another_shuffling_are_not_packed() {
    let mut state = state_at(3);
    let pool = OperationPool::<E>::new();
    let a = aggregate(&mut state, 2, 0, &[0, 1], None);
    insert(&pool, &mut state, &a);
    // The same data seen with another epoch's committees is refused.
    let mut other = state_at(9);
    let epoch1 = committees(&mut other, 1);
    assert!(matches!(
        pool.insert_attestation(&a, &epoch1),
        Err(OpPoolError::CommitteesEpochMismatch { .. })
    ));
    // A state whose randao differs has another shuffling: nothing is packed on it.
    let mut forked = state.clone();
    if let types::BeaconState::Fulu(s) = &mut forked.state {
        for i in 0..<E as EthSpec>::EpochsPerHistoricalVector::to_usize() {
            *s.randao_mixes.get_mut(i).expect("mix") = B256::repeat_byte(0x99);
        }
    }
    forked.caches.clear_committees();
    assert!(pool.get_attestations(&mut forked).expect("pack").is_empty());
    assert_eq!(pool.get_attestations(&mut state).expect("pack").len(), 1);
}

/// A contribution of subcommittee `index` at `slot` by the members at `positions`.
fn contribution(
    state: &mut CachedBeaconState<E>,
    slot: Slot,
    index: u64,
    positions: &[usize],
) -> SyncCommitteeContribution<E> {
    let CachedBeaconState { state: raw, caches } = state;
    let view = StateRef::new(raw).expect("view");
    let size = <E as EthSpec>::SyncSubcommitteeSize::to_usize();
    let root = get_block_root_at_slot(&view, slot).expect("root");
    let domain = get_domain(
        &view,
        DOMAIN_SYNC_COMMITTEE,
        Some(compute_epoch_at_slot::<E>(slot)),
    );
    let message = compute_signing_root(&root, domain);
    let mut aggregation_bits = BitVector::new();
    let mut signers = Vec::new();
    for &p in positions {
        aggregation_bits.set(p, true).expect("position");
        let pubkey = &view.current_sync_committee.pubkeys[index as usize * size + p];
        signers.push(
            caches
                .validator_index(&view, &PublicKeyBytes(pubkey.0))
                .expect("member"),
        );
    }
    SyncCommitteeContribution {
        slot,
        beacon_block_root: root,
        subcommittee_index: index,
        aggregation_bits,
        signature: sig(aggregate_interop_secret_key(signers)
            .expect("key")
            .sign(message.as_slice())),
    }
}

#[test]
fn sync_aggregate_takes_the_best_contribution_per_subcommittee() {
    let mut state = state_at(5);
    let pool = OperationPool::<E>::new();
    let empty = pool.get_sync_aggregate(&state).expect("aggregate");
    assert_eq!(empty.sync_committee_bits.num_set_bits(), 0);
    assert_eq!(
        empty.sync_committee_signature.0,
        bls::Signature::INFINITY_BYTES
    );

    let fewer = contribution(&mut state, 4, 0, &[0, 1, 2]);
    let more = contribution(&mut state, 4, 0, &[0, 1, 2, 3, 4, 5, 6]);
    let left = contribution(&mut state, 4, 1, &[0, 1]);
    let right = contribution(&mut state, 4, 1, &[2, 3]);
    let overlapping = contribution(&mut state, 4, 1, &[1, 2]);
    let stale = contribution(&mut state, 3, 2, &[0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(
        pool.insert_sync_contribution(&fewer),
        Ok(InsertOutcome::New)
    );
    assert_eq!(pool.insert_sync_contribution(&more), Ok(InsertOutcome::New));
    assert_eq!(
        pool.insert_sync_contribution(&fewer),
        Ok(InsertOutcome::AlreadyKnown)
    );
    assert_eq!(pool.insert_sync_contribution(&left), Ok(InsertOutcome::New));
    assert_eq!(
        pool.insert_sync_contribution(&right),
        Ok(InsertOutcome::Aggregated)
    );
    assert_eq!(
        pool.insert_sync_contribution(&overlapping),
        Ok(InsertOutcome::AlreadyKnown)
    );
    assert_eq!(
        pool.insert_sync_contribution(&stale),
        Ok(InsertOutcome::New)
    );
    let mut out_of_range = left.clone();
    out_of_range.subcommittee_index = 4;
    assert_eq!(
        pool.insert_sync_contribution(&out_of_range),
        Err(OpPoolError::SubcommitteeIndexOutOfRange(4))
    );

    let sync_aggregate = pool.get_sync_aggregate(&state).expect("aggregate");
    let bits: Vec<usize> = sync_aggregate
        .sync_committee_bits
        .iter()
        .enumerate()
        .filter(|(_, b)| *b)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        bits,
        vec![0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11],
        "slot 3's contribution is not for this block"
    );
    let mut scratch = state.clone();
    let (mut view, caches) = scratch.view_mut().expect("view");
    process_sync_aggregate(
        &mut view,
        caches,
        &sync_aggregate,
        VerifySignatures::Individually,
    )
    .expect("the aggregate signature verifies");

    pool.prune_on_head(&state).expect("prune");
    assert_eq!(
        pool.counts().sync_contributions,
        0,
        "slots before the head's are dropped"
    );
}

fn proposer_slashing(state: &CachedBeaconState<E>, proposer: ValidatorIndex) -> ProposerSlashing {
    let view = state.view().expect("view");
    let slot = *view.slot;
    let domain = get_domain(
        &view,
        DOMAIN_BEACON_PROPOSER,
        Some(compute_epoch_at_slot::<E>(slot)),
    );
    let header = |byte: u8| {
        let message = BeaconBlockHeader {
            slot,
            proposer_index: proposer,
            parent_root: B256::repeat_byte(1),
            state_root: B256::repeat_byte(2),
            body_root: B256::repeat_byte(byte),
        };
        let signature = sig(interop_secret_key(proposer as usize)
            .sign(compute_signing_root(&message, domain).as_slice()));
        SignedBeaconBlockHeader { message, signature }
    };
    ProposerSlashing {
        signed_header_1: header(3),
        signed_header_2: header(4),
    }
}

fn attester_slashing(
    state: &CachedBeaconState<E>,
    indices: &[ValidatorIndex],
) -> AttesterSlashing<E> {
    let data_1 = data_for(state, 1, Some(Root::repeat_byte(0xa1)));
    let data_2 = data_for(state, 1, Some(Root::repeat_byte(0xa2)));
    let indexed = |data: AttestationData| IndexedAttestation {
        attesting_indices: VariableList::new(indices.to_vec()).expect("indices"),
        signature: sign_data(state, &data, indices),
        data,
    };
    AttesterSlashing {
        attestation_1: indexed(data_1),
        attestation_2: indexed(data_2),
    }
}

fn voluntary_exit(
    state: &CachedBeaconState<E>,
    index: ValidatorIndex,
    epoch: u64,
) -> SignedVoluntaryExit {
    let view = state.view().expect("view");
    let domain = compute_domain(
        DOMAIN_VOLUNTARY_EXIT,
        spec().capella_fork_version,
        *view.genesis_validators_root,
    );
    let message = VoluntaryExit {
        epoch,
        validator_index: index,
    };
    let signature =
        sig(interop_secret_key(index as usize)
            .sign(compute_signing_root(&message, domain).as_slice()));
    SignedVoluntaryExit { message, signature }
}

fn bls_change(state: &CachedBeaconState<E>, index: ValidatorIndex) -> SignedBLSToExecutionChange {
    let view = state.view().expect("view");
    let domain = compute_domain(
        DOMAIN_BLS_TO_EXECUTION_CHANGE,
        spec().genesis_fork_version,
        *view.genesis_validators_root,
    );
    let key = interop_secret_key(index as usize);
    let message = BLSToExecutionChange {
        validator_index: index,
        from_bls_pubkey: key.public_key().compress().0.into(),
        to_execution_address: Address::repeat_byte(index as u8),
    };
    let signature = sig(key.sign(compute_signing_root(&message, domain).as_slice()));
    SignedBLSToExecutionChange { message, signature }
}

/// Applies the packed operations to a clone of `state` in block order, signatures checked.
fn apply_operations(
    state: &CachedBeaconState<E>,
    ops: &crate::PackedOperations<E>,
) -> CachedBeaconState<E> {
    let spec = spec();
    let mut scratch = state.clone();
    {
        let v = VerifySignatures::Individually;
        let (mut view, caches) = scratch.view_mut().expect("view");
        for s in &ops.proposer_slashings {
            process_proposer_slashing(&mut view, caches, s, v, &spec).expect("proposer slashing");
        }
        for s in &ops.attester_slashings {
            process_attester_slashing(&mut view, caches, s, v, &spec).expect("attester slashing");
        }
        for e in &ops.voluntary_exits {
            process_voluntary_exit(&mut view, caches, e, v, &spec).expect("exit");
        }
        for c in &ops.bls_to_execution_changes {
            process_bls_to_execution_change(&mut view, c, v, &spec).expect("change");
        }
    }
    scratch
}

#[test]
fn proposer_slashings_are_packed_revalidated_and_pruned() {
    let spec = spec();
    let state = state_at(2);
    let pool = OperationPool::<E>::new();
    for v in [3, 5] {
        assert_eq!(
            pool.insert_proposer_slashing(proposer_slashing(&state, v)),
            Ok(InsertOutcome::New)
        );
    }
    assert_eq!(
        pool.insert_proposer_slashing(proposer_slashing(&state, 3)),
        Ok(InsertOutcome::AlreadyKnown)
    );
    let mut same = proposer_slashing(&state, 7);
    same.signed_header_2 = same.signed_header_1.clone();
    assert!(matches!(
        pool.insert_proposer_slashing(same),
        Err(OpPoolError::ProposerSlashingNotSlashable(_))
    ));
    let ops = pool
        .get_slashings_exits_and_changes(&state, &spec)
        .expect("pack");
    assert_eq!(ops.proposer_slashings.len(), 2);

    // Once validator 5 is slashed, its slashing is skipped, then pruned on finality.
    let slashed = apply_operations(
        &state,
        &crate::PackedOperations {
            proposer_slashings: vec![proposer_slashing(&state, 5)],
            attester_slashings: vec![],
            voluntary_exits: vec![],
            bls_to_execution_changes: vec![],
        },
    );
    let ops = pool
        .get_slashings_exits_and_changes(&slashed, &spec)
        .expect("pack");
    assert_eq!(ops.proposer_slashings, vec![proposer_slashing(&state, 3)]);
    apply_operations(&slashed, &ops);
    pool.prune_on_finality(&slashed).expect("prune");
    assert_eq!(pool.counts().proposer_slashings, 1);
}

#[test]
fn attester_slashing_packing_maximises_newly_slashed_validators() {
    let spec = spec();
    let state = state_at(3);
    let pool = OperationPool::<E>::new();
    let a = attester_slashing(&state, &[1, 2, 3]);
    let b = attester_slashing(&state, &[4, 5, 6, 7, 8]);
    let c = attester_slashing(&state, &[1, 2, 3, 4]);
    for s in [&a, &b, &c] {
        assert_eq!(
            pool.insert_attester_slashing(s.clone()),
            Ok(InsertOutcome::New)
        );
    }
    assert_eq!(
        pool.insert_attester_slashing(a.clone()),
        Ok(InsertOutcome::AlreadyKnown)
    );
    let mut not_slashable = a.clone();
    not_slashable.attestation_2 = not_slashable.attestation_1.clone();
    assert!(matches!(
        pool.insert_attester_slashing(not_slashable),
        Err(OpPoolError::AttesterSlashingNotSlashable(_))
    ));

    // MAX_ATTESTER_SLASHINGS_ELECTRA is 1: the one slashing five.
    assert_eq!(<E as EthSpec>::MaxAttesterSlashingsElectra::to_usize(), 1);
    let ops = pool
        .get_slashings_exits_and_changes(&state, &spec)
        .expect("pack");
    assert_eq!(ops.attester_slashings, vec![b.clone()]);

    // With 5..=8 slashed, `c` slashes four new validators and `b` one, `a` three.
    let after = apply_operations(
        &state,
        &crate::PackedOperations {
            proposer_slashings: vec![],
            attester_slashings: vec![attester_slashing(&state, &[5, 6, 7, 8])],
            voluntary_exits: vec![],
            bls_to_execution_changes: vec![],
        },
    );
    let ops = pool
        .get_slashings_exits_and_changes(&after, &spec)
        .expect("pack");
    assert_eq!(ops.attester_slashings, vec![c.clone()]);
    apply_operations(&after, &ops);

    // A slashing whose validators are all slashed is pruned on finality.
    let all_slashed = apply_operations(
        &after,
        &crate::PackedOperations {
            proposer_slashings: vec![],
            attester_slashings: vec![attester_slashing(&state, &[1, 2, 3, 4])],
            voluntary_exits: vec![],
            bls_to_execution_changes: vec![],
        },
    );
    pool.prune_on_finality(&all_slashed).expect("prune");
    assert_eq!(pool.counts().attester_slashings, 0);
}

#[test]
fn exits_are_revalidated_against_the_block_state() {
    let spec = spec();
    let state = state_at(9);
    let epoch = 1;
    let pool = OperationPool::<E>::new();
    // 10: valid. 11: already exiting in the state. 12: slashed by a proposer slashing of the
    // same block. 13: for a future epoch.
    let exiting = apply_operations(
        &state,
        &crate::PackedOperations {
            proposer_slashings: vec![],
            attester_slashings: vec![],
            voluntary_exits: vec![voluntary_exit(&state, 11, epoch)],
            bls_to_execution_changes: vec![],
        },
    );
    for (v, e) in [(10, epoch), (11, epoch), (12, epoch), (13, epoch + 1)] {
        assert_eq!(
            pool.insert_voluntary_exit(voluntary_exit(&state, v, e)),
            InsertOutcome::New
        );
    }
    assert_eq!(
        pool.insert_voluntary_exit(voluntary_exit(&state, 10, epoch)),
        InsertOutcome::AlreadyKnown
    );
    pool.insert_proposer_slashing(proposer_slashing(&state, 12))
        .expect("insert");
    let ops = pool
        .get_slashings_exits_and_changes(&exiting, &spec)
        .expect("pack");
    let exited: Vec<u64> = ops
        .voluntary_exits
        .iter()
        .map(|e| e.message.validator_index)
        .collect();
    assert_eq!(exited, vec![10]);
    assert_eq!(ops.proposer_slashings.len(), 1);
    let after = apply_operations(&exiting, &ops);

    // Finality of that state prunes 10, 11 and 12; the future exit stays.
    pool.prune_on_finality(&after).expect("prune");
    assert_eq!(pool.counts().voluntary_exits, 1);
    let view = after.view().expect("view");
    assert_eq!(
        view.validators.get(13).expect("validator").exit_epoch,
        FAR_FUTURE_EPOCH
    );
}

#[test]
fn exits_and_changes_stop_at_their_block_limits() {
    let spec = spec();
    let state = state_at(9);
    let pool = OperationPool::<E>::new();
    for v in 20..40 {
        pool.insert_voluntary_exit(voluntary_exit(&state, v, 1));
        pool.insert_bls_to_execution_change(bls_change(&state, v));
    }
    let ops = pool
        .get_slashings_exits_and_changes(&state, &spec)
        .expect("pack");
    assert_eq!(
        ops.voluntary_exits.len(),
        <E as EthSpec>::MaxVoluntaryExits::to_usize()
    );
    assert_eq!(
        ops.bls_to_execution_changes.len(),
        <E as EthSpec>::MaxBlsToExecutionChanges::to_usize()
    );
    apply_operations(&state, &ops);
}

#[test]
fn bls_changes_already_applied_are_skipped_and_pruned() {
    let spec = spec();
    let state = state_at(2);
    let pool = OperationPool::<E>::new();
    pool.insert_bls_to_execution_change(bls_change(&state, 1));
    pool.insert_bls_to_execution_change(bls_change(&state, 2));
    // A change signed by a key that is not the withdrawal key's is never packed.
    let mut wrong_key = bls_change(&state, 3);
    wrong_key.message.from_bls_pubkey = bls_change(&state, 4).message.from_bls_pubkey;
    pool.insert_bls_to_execution_change(wrong_key);
    let changed = apply_operations(
        &state,
        &crate::PackedOperations {
            proposer_slashings: vec![],
            attester_slashings: vec![],
            voluntary_exits: vec![],
            bls_to_execution_changes: vec![bls_change(&state, 1)],
        },
    );
    let ops = pool
        .get_slashings_exits_and_changes(&changed, &spec)
        .expect("pack");
    let indices: Vec<u64> = ops
        .bls_to_execution_changes
        .iter()
        .map(|c| c.message.validator_index)
        .collect();
    assert_eq!(indices, vec![2]);
    pool.prune_on_finality(&changed).expect("prune");
    assert_eq!(
        pool.counts().bls_to_execution_changes,
        2,
        "1 is gone; 2 and 3 wait"
    );
}

#[test]
fn a_block_of_everything_the_pool_packs_passes_process_block() {
    let spec = spec();
    let block_slot = 10;
    let pre = state_at(9);
    let mut at_slot = state_at(block_slot);
    let pool = OperationPool::<E>::new();
    for slot in 2..block_slot {
        for index in 0..2 {
            let a = aggregate(&mut at_slot, slot, index, &[0, 1, 2], None);
            insert(&pool, &mut at_slot, &a);
            let b = aggregate(&mut at_slot, slot, index, &[2, 3], None);
            insert(&pool, &mut at_slot, &b);
        }
    }
    for k in 0..4 {
        let c = contribution(&mut at_slot, block_slot - 1, k, &[0, 1, 2, 3, 5, 7]);
        pool.insert_sync_contribution(&c).expect("insert");
    }
    pool.insert_proposer_slashing(proposer_slashing(&at_slot, 30))
        .expect("insert");
    pool.insert_attester_slashing(attester_slashing(&at_slot, &[31, 32]))
        .expect("insert");
    pool.insert_voluntary_exit(voluntary_exit(&at_slot, 33, 1));
    pool.insert_voluntary_exit(voluntary_exit(&at_slot, 30, 1));
    pool.insert_bls_to_execution_change(bls_change(&at_slot, 34));

    let ops = pool
        .get_block_operations(&mut at_slot, &spec)
        .expect("pack");
    assert_eq!(ops.attestations.len(), 8);
    assert_eq!(
        ops.operations.voluntary_exits.len(),
        1,
        "30 is slashed by the same block"
    );
    assert_eq!(ops.sync_aggregate.sync_committee_bits.num_set_bits(), 24);

    let built = state_harness::build_block(&pre, block_slot, &BlockContents::default(), &spec)
        .expect("harness block");
    let types::SignedBeaconBlock::Fulu(signed) = built.block else {
        panic!("a Fulu block");
    };
    let mut block = signed.message;
    let body = &mut block.body;
    body.attestations = VariableList::new(ops.attestations).expect("attestations");
    body.sync_aggregate = ops.sync_aggregate;
    body.proposer_slashings = VariableList::new(ops.operations.proposer_slashings).expect("list");
    body.attester_slashings = VariableList::new(ops.operations.attester_slashings).expect("list");
    body.voluntary_exits = VariableList::new(ops.operations.voluntary_exits).expect("list");
    body.bls_to_execution_changes =
        VariableList::new(ops.operations.bls_to_execution_changes).expect("list");
    let mut state = at_slot.clone();
    let (mut view, caches) = state.view_mut().expect("view");
    process_block(
        &mut view,
        caches,
        &block,
        VerifySignatures::Batched,
        &AlwaysValid,
        &spec,
    )
    .expect("the packed block is valid, every signature included");
}

#[test]
fn a_full_committee_keeps_its_largest_aggregates() {
    // 512 validators: 4 committees of 16 per slot, room for many overlapping aggregates.
    let genesis = interop_genesis_state::<E>(512, 1_600_000_000, Root::repeat_byte(0x42), &spec())
        .expect("interop genesis");
    let mut state = CachedBeaconState::new(genesis);
    process_slots(&mut state, 3, &spec()).expect("process_slots");
    let pool = OperationPool::<E>::new();
    assert_eq!(committee(&mut state, 1, 0).len(), 16);
    // Seventeen 3-member aggregates, all sharing member 0 (never disjoint, none a subset).
    let pairs: Vec<(usize, usize)> = (2..=12)
        .map(|j| (1, j))
        .chain((3..=8).map(|j| (2, j)))
        .collect();
    assert_eq!(pairs.len(), crate::MAX_AGGREGATES_PER_COMMITTEE + 1);
    let mut outcomes = Vec::new();
    for (i, j) in pairs {
        let a = aggregate(&mut state, 1, 0, &[0, i, j], None);
        outcomes.push(insert(&pool, &mut state, &a));
    }
    assert!(outcomes[..16].iter().all(|o| *o == InsertOutcome::New));
    assert_eq!(outcomes[16], InsertOutcome::Full);
    assert_eq!(
        pool.counts().aggregates,
        crate::MAX_AGGREGATES_PER_COMMITTEE
    );
    // A larger one takes the place of a smaller one.
    let larger = aggregate(&mut state, 1, 0, &[0, 9, 10, 11], None);
    assert_eq!(insert(&pool, &mut state, &larger), InsertOutcome::New);
    assert_eq!(
        pool.counts().aggregates,
        crate::MAX_AGGREGATES_PER_COMMITTEE
    );
    assert!(
        pool.attestations()
            .expect("list")
            .iter()
            .any(|a| a.aggregation_bits == larger.aggregation_bits)
    );
    // Packing takes the largest first, then, with places left, more attestations of the same
    // data, each adding members the earlier ones missed.
    let packed = pool.get_attestations(&mut state).expect("pack");
    assert_eq!(packed[0].aggregation_bits, larger.aggregation_bits);
    assert_eq!(
        packed.len(),
        <E as EthSpec>::MaxAttestationsElectra::to_usize()
    );
    let mut seen = std::collections::BTreeSet::new();
    for a in &packed {
        let members: Vec<usize> = (0..16)
            .filter(|&p| a.aggregation_bits.get(p).expect("bit"))
            .collect();
        let new = members.iter().filter(|p| !seen.contains(*p)).count();
        assert!(
            new > 0,
            "every attestation packed adds a member: {members:?}"
        );
        seen.extend(members);
    }
    apply_verified(&state, &packed);
}

/// `state_at(3)` with the effective balances of members 0 and 2 of committee 0 of slot 1 set.
fn with_balances(balance_0: u64, balance_2: u64) -> CachedBeaconState<E> {
    let mut state = state_at(3);
    let members = committee(&mut state, 1, 0);
    let types::BeaconState::Fulu(s) = &mut state.state else {
        panic!("a Fulu state");
    };
    for (p, balance) in [(0, balance_0), (2, balance_2)] {
        s.validators
            .get_mut(members[p] as usize)
            .expect("validator")
            .effective_balance = balance;
    }
    // Committees and effective balances are read again from the changed registry.
    CachedBeaconState::new(state.state)
}

#[test]
fn max_cover_weighs_votes_by_effective_balance() {
    const ETH: u64 = 1_000_000_000;
    // {0, 1} against {1, 2}: whichever of members 0 and 2 has the larger balance decides, both
    // through the exact look-up (2,000 ETH) and through the one-byte code (31 and 40 ETH).
    for (balance_0, balance_2, winner) in [
        (2_000 * ETH, 32 * ETH, [0usize, 1]),
        (31 * ETH, 40 * ETH, [1, 2]),
        (40 * ETH, 31 * ETH, [0, 1]),
        (32 * ETH, 2_000 * ETH, [1, 2]),
    ] {
        let mut state = with_balances(balance_0, balance_2);
        let pool = OperationPool::<E>::new();
        let first = aggregate(&mut state, 1, 0, &[0, 1], None);
        let second = aggregate(&mut state, 1, 0, &[1, 2], None);
        insert(&pool, &mut state, &first);
        insert(&pool, &mut state, &second);
        let packed = pool.get_attestations(&mut state).expect("pack");
        let expected = if winner == [0, 1] { &first } else { &second };
        assert_eq!(
            packed[0].aggregation_bits, expected.aggregation_bits,
            "balances {balance_0} and {balance_2}"
        );
        // The greedy's gains are the spec's: the first pick earns more than the second.
        let first_reward = apply_verified(&state, &packed[..1]);
        let other = if winner == [0, 1] { &second } else { &first };
        assert!(first_reward > apply_verified(&state, std::slice::from_ref(other)));
    }
}

#[test]
fn operations_lists_everything_stored_including_what_a_block_would_skip() {
    let spec = spec();
    let state = state_at(2);
    let pool = OperationPool::<E>::new();
    assert_eq!(
        pool.operations(),
        crate::PackedOperations {
            proposer_slashings: vec![],
            attester_slashings: vec![],
            voluntary_exits: vec![],
            bls_to_execution_changes: vec![],
        }
    );
    for v in [5, 3] {
        pool.insert_proposer_slashing(proposer_slashing(&state, v))
            .expect("slashing");
    }
    pool.insert_attester_slashing(attester_slashing(&state, &[1, 2]))
        .expect("attester slashing");
    // An exit of a later epoch (not valid on the state yet, so not packed) is still listed: the
    // listing is the pool, not a block.
    pool.insert_voluntary_exit(voluntary_exit(&state, 9, 5));
    pool.insert_bls_to_execution_change(bls_change(&state, 11));
    pool.insert_bls_to_execution_change(bls_change(&state, 4));

    let all = pool.operations();
    assert_eq!(
        all.proposer_slashings,
        vec![proposer_slashing(&state, 3), proposer_slashing(&state, 5)],
        "by proposer index"
    );
    assert_eq!(
        all.attester_slashings,
        vec![attester_slashing(&state, &[1, 2])]
    );
    assert_eq!(all.voluntary_exits, vec![voluntary_exit(&state, 9, 5)]);
    assert_eq!(
        all.bls_to_execution_changes,
        vec![bls_change(&state, 4), bls_change(&state, 11)]
    );
    let packed = pool
        .get_slashings_exits_and_changes(&state, &spec)
        .expect("pack");
    assert!(
        packed.voluntary_exits.is_empty(),
        "the exit is not valid on the state yet"
    );
    let counts = pool.counts();
    assert_eq!(
        (
            counts.proposer_slashings,
            counts.attester_slashings,
            counts.voluntary_exits,
            counts.bls_to_execution_changes
        ),
        (2, 1, 1, 2)
    );
}
