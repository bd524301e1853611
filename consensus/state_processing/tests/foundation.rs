//! Tests of the shared foundation: committee and pubkey caches, the spec's helpers.
//!
//! States here are small Fulu states built by hand (minimal preset), independent of the vectors.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

use std::sync::Arc;

use bls::{PublicKeyBytes, SecretKey};
use milhouse::{List, Vector};
use packed_list::PackedList;
use ssz_types::{BitVector, FixedVector};
use state_processing::{
    CachedBeaconState, Caches,
    common::{
        compute_activation_exit_epoch, compute_exit_epoch_and_update_churn, get_seed,
        integer_squareroot, is_active_validator, is_valid_merkle_branch,
    },
};
use typenum::Unsigned;
use types::{
    B256, BeaconState, ChainSpec, EthSpec, FAR_FUTURE_EPOCH, MinimalEthSpec,
    fulu::{self, ExecutionPayloadHeader, SyncCommittee, Validator},
    phase0::{BeaconBlockHeader, Checkpoint, Eth1Data, Fork},
    signing::DOMAIN_BEACON_ATTESTER,
};

type E = MinimalEthSpec;

fn secret_key(i: u64) -> SecretKey {
    let mut bytes = [0u8; 32];
    bytes[24..].copy_from_slice(&(i + 1).to_be_bytes());
    SecretKey::from_bytes(&bytes).expect("small scalars are valid secret keys")
}

fn validator(i: u64, active: bool) -> Validator {
    Validator {
        pubkey: secret_key(i).public_key().compress().0.into(),
        withdrawal_credentials: B256::repeat_byte(0x01),
        effective_balance: 32_000_000_000,
        slashed: false,
        activation_eligibility_epoch: 0,
        activation_epoch: if active { 0 } else { FAR_FUTURE_EPOCH },
        exit_epoch: FAR_FUTURE_EPOCH,
        withdrawable_epoch: FAR_FUTURE_EPOCH,
    }
}

/// A Fulu state at `slot` with `n` validators, every fifth one not yet active.
fn state(n: u64, slot: u64) -> BeaconState<E> {
    let validators: Vec<Validator> = (0..n).map(|i| validator(i, i % 5 != 4)).collect();
    let pubkey = validators[0].pubkey;
    let sync_committee = SyncCommittee::<E> {
        pubkeys: FixedVector::new(vec![pubkey; <E as EthSpec>::SyncCommitteeSize::to_usize()])
            .unwrap(),
        aggregate_pubkey: pubkey,
    };
    let mixes: Vec<B256> = (0..<E as EthSpec>::EpochsPerHistoricalVector::to_u64())
        .map(|i| B256::left_padding_from(&(i * 7 + 1).to_be_bytes()))
        .collect();
    BeaconState::Fulu(fulu::BeaconState {
        genesis_time: 0,
        genesis_validators_root: B256::ZERO,
        slot,
        fork: Fork {
            previous_version: Default::default(),
            current_version: Default::default(),
            epoch: 0,
        },
        latest_block_header: BeaconBlockHeader {
            slot: 0,
            proposer_index: 0,
            parent_root: B256::ZERO,
            state_root: B256::ZERO,
            body_root: B256::ZERO,
        },
        block_roots: Vector::default(),
        state_roots: Vector::default(),
        historical_roots: List::default(),
        eth1_data: Eth1Data {
            deposit_root: B256::ZERO,
            deposit_count: 0,
            block_hash: B256::ZERO,
        },
        eth1_data_votes: List::default(),
        eth1_deposit_index: 0,
        balances: PackedList::new(vec![32_000_000_000; n as usize]).unwrap(),
        validators: List::new(validators).unwrap(),
        randao_mixes: Vector::new(mixes).unwrap(),
        slashings: Vector::default(),
        previous_epoch_participation: PackedList::new(vec![0; n as usize]).unwrap(),
        current_epoch_participation: PackedList::new(vec![0; n as usize]).unwrap(),
        justification_bits: BitVector::new(),
        previous_justified_checkpoint: Checkpoint {
            epoch: 0,
            root: B256::ZERO,
        },
        current_justified_checkpoint: Checkpoint {
            epoch: 0,
            root: B256::ZERO,
        },
        finalized_checkpoint: Checkpoint {
            epoch: 0,
            root: B256::ZERO,
        },
        inactivity_scores: PackedList::new(vec![0; n as usize]).unwrap(),
        current_sync_committee: sync_committee.clone(),
        next_sync_committee: sync_committee,
        latest_execution_payload_header: ExecutionPayloadHeader::<E> {
            parent_hash: B256::ZERO,
            fee_recipient: Default::default(),
            state_root: B256::ZERO,
            receipts_root: B256::ZERO,
            logs_bloom: Default::default(),
            prev_randao: B256::ZERO,
            block_number: 0,
            gas_limit: 0,
            gas_used: 0,
            timestamp: 0,
            extra_data: Default::default(),
            base_fee_per_gas: Default::default(),
            block_hash: B256::ZERO,
            transactions_root: B256::ZERO,
            withdrawals_root: B256::ZERO,
            blob_gas_used: 0,
            excess_blob_gas: 0,
        },
        next_withdrawal_index: 0,
        next_withdrawal_validator_index: 0,
        historical_summaries: List::default(),
        deposit_requests_start_index: u64::MAX,
        deposit_balance_to_consume: 0,
        exit_balance_to_consume: 0,
        earliest_exit_epoch: 0,
        consolidation_balance_to_consume: 0,
        earliest_consolidation_epoch: 0,
        pending_deposits: List::default(),
        pending_partial_withdrawals: List::default(),
        pending_consolidations: List::default(),
        proposer_lookahead: Vector::default(),
    })
}

/// The spec's `compute_committee`, element by element with `compute_shuffled_index`.
fn naive_committee(indices: &[u64], seed: &B256, index: u64, count: u64) -> Vec<u64> {
    let n = indices.len() as u64;
    let start = n * index / count;
    let end = n * (index + 1) / count;
    (start..end)
        .map(|i| {
            let j = swap_or_not_shuffle::compute_shuffled_index(
                i as usize,
                n as usize,
                &seed.0,
                <E as EthSpec>::SHUFFLE_ROUND_COUNT,
            )
            .unwrap();
            indices[j]
        })
        .collect()
}

#[test]
fn committee_cache_matches_compute_committee() {
    // 600 validators: 480 active, 2 committees per slot on the minimal preset.
    let mut cached = CachedBeaconState::new(state(600, 8 * 3 + 5));
    let (view, caches) = cached.view_mut().unwrap();
    let view = view.as_ref();
    for epoch in [2, 3, 4] {
        let cache = caches.committees(&view, epoch).unwrap();
        let active: Vec<u64> = (0..600).filter(|i| i % 5 != 4).collect();
        assert_eq!(cache.active_indices(), active.as_slice());
        assert_eq!(cache.total_active_balance(), 480 * 32_000_000_000);
        let per_slot = cache.committees_per_slot();
        // 480 / 8 slots / TARGET_COMMITTEE_SIZE 4 = 15, capped at MAX_COMMITTEES_PER_SLOT (4).
        assert_eq!(per_slot, 4);
        let seed = get_seed(&view, epoch, DOMAIN_BEACON_ATTESTER);
        let mut seen = Vec::new();
        for slot in epoch * 8..(epoch + 1) * 8 {
            for index in 0..per_slot {
                let committee = cache.get_beacon_committee(slot, index).unwrap();
                let i = (slot % 8) * per_slot + index;
                assert_eq!(
                    committee,
                    naive_committee(&active, &seed, i, per_slot * 8).as_slice(),
                    "epoch {epoch} slot {slot} committee {index}"
                );
                seen.extend_from_slice(committee);
            }
            assert!(cache.get_beacon_committee(slot, per_slot).is_err());
        }
        seen.sort_unstable();
        assert_eq!(
            seen, active,
            "every active validator in exactly one committee"
        );
    }
    // Epochs the state cannot see are refused, not guessed.
    assert!(caches.committees(&view, 6).is_err());
    assert!(caches.committees(&view, 0).is_err());
}

#[test]
fn committee_cache_is_shared_by_clones_and_rebuilt_on_a_new_seed() {
    let mut a = CachedBeaconState::new(state(64, 20));
    let first = {
        let (view, caches) = a.view_mut().unwrap();
        caches.committees(&view.as_ref(), 2).unwrap()
    };
    let mut b = a.clone();
    let again = {
        let (view, caches) = b.view_mut().unwrap();
        caches.committees(&view.as_ref(), 2).unwrap()
    };
    assert!(Arc::ptr_eq(&first, &again), "a clone reuses the cache");
    // A different randao mix for the seed's epoch gives a different seed: rebuilt.
    {
        let (view, caches) = b.view_mut().unwrap();
        let lookahead = <E as EthSpec>::MIN_SEED_LOOKAHEAD;
        let n = <E as EthSpec>::EpochsPerHistoricalVector::to_u64();
        let mix_epoch = (2 + n - lookahead - 1) % n;
        *view.randao_mixes.get_mut(mix_epoch as usize).unwrap() = B256::repeat_byte(9);
        let rebuilt = caches.committees(&view.as_ref(), 2).unwrap();
        assert!(!Arc::ptr_eq(&first, &rebuilt));
        assert_ne!(first.shuffling(), rebuilt.shuffling());
    }
}

#[test]
fn pubkey_cache_is_never_wrong_across_forks() {
    let base = state(10, 8);
    let mut a = CachedBeaconState::new(base.clone());
    let mut b = CachedBeaconState::with_caches_of(base, &a.caches);
    let key_a = secret_key(100).public_key().compress();
    let key_b = secret_key(200).public_key().compress();
    // Each fork appends a different validator at index 10.
    for (cached, key) in [(&mut a, key_a), (&mut b, key_b)] {
        let (mut view, caches) = cached.view_mut().unwrap();
        caches.index_pubkeys(&view.as_ref());
        let mut v = validator(0, true);
        v.pubkey = key.0.into();
        view.validators.push(v).unwrap();
        caches.push_validator(10, &key);
    }
    let lookup = |cached: &mut CachedBeaconState<E>, key: &PublicKeyBytes| {
        let (view, caches) = cached.view_mut().unwrap();
        caches.validator_index(&view.as_ref(), key)
    };
    assert_eq!(lookup(&mut a, &key_a), Some(10));
    assert_eq!(lookup(&mut a, &key_b), None);
    assert_eq!(lookup(&mut b, &key_b), Some(10));
    assert_eq!(lookup(&mut b, &key_a), None);
    assert_eq!(
        lookup(&mut a, &secret_key(3).public_key().compress()),
        Some(3)
    );
    assert_eq!(
        lookup(&mut a, &secret_key(999).public_key().compress()),
        None
    );
    // Decompressed keys follow each state's own registry.
    let (view, caches) = a.view_mut().unwrap();
    assert_eq!(caches.pubkey(&view.as_ref(), 10).unwrap().compress(), key_a);
    let (view, caches) = b.view_mut().unwrap();
    assert_eq!(caches.pubkey(&view.as_ref(), 10).unwrap().compress(), key_b);
    assert!(caches.pubkey(&view.as_ref(), 11).is_err());
}

/// Once a state is recorded as finalized, the keys of its registry answer without the state
/// being read, and a key another fork cached at a finalized index first is replaced by the
/// finalized one; past the finalized length, each state's own registry still decides.
#[test]
fn pubkey_cache_trusts_the_finalized_registry_and_only_it() {
    let base = state(10, 8);
    let mut a = CachedBeaconState::new(base.clone());
    let mut b = CachedBeaconState::with_caches_of(base, &a.caches);
    let key_a = secret_key(100).public_key().compress();
    let key_b = secret_key(200).public_key().compress();
    let key_b2 = secret_key(201).public_key().compress();
    for (cached, keys) in [(&mut a, vec![key_a]), (&mut b, vec![key_b, key_b2])] {
        let (mut view, caches) = cached.view_mut().unwrap();
        caches.index_pubkeys(&view.as_ref());
        for (offset, key) in keys.into_iter().enumerate() {
            let mut v = validator(0, true);
            v.pubkey = key.0.into();
            view.validators.push(v).unwrap();
            caches.push_validator(10 + offset as u64, &key);
        }
    }
    let key = |cached: &CachedBeaconState<E>, index: u64| {
        cached
            .caches
            .pubkey(&cached.view().unwrap(), index)
            .map(|k| k.compress())
    };
    // Fork A asks first, so its key is the one cached at index 10.
    assert_eq!(key(&a, 10).unwrap(), key_a);
    assert_eq!(key(&b, 10).unwrap(), key_b);

    // B's chain is finalized with 11 validators (B's registry before its second deposit).
    let mut finalized = CachedBeaconState::with_caches_of(state(10, 8), &a.caches);
    {
        let (mut view, _) = finalized.view_mut().unwrap();
        let mut v = validator(0, true);
        v.pubkey = key_b.0.into();
        view.validators.push(v).unwrap();
    }
    finalized.set_finalized().unwrap();
    assert_eq!(key(&b, 10).unwrap(), key_b);
    // Index 10 is finalized: every live state holds B's key there, so it is answered without
    // reading the state (A's state is of an abandoned fork and is told the finalized key).
    assert_eq!(key(&a, 10).unwrap(), key_b);
    // Index 11 is past the finalized registry: each state's own registry decides.
    assert_eq!(key(&b, 11).unwrap(), key_b2);
    assert!(key(&a, 11).is_err(), "A has no validator 11");
    // An older, shorter state recorded later changes nothing.
    CachedBeaconState::with_caches_of(state(10, 8), &a.caches)
        .set_finalized()
        .unwrap();
    assert_eq!(key(&b, 10).unwrap(), key_b);

    // The batch form gives what the single form gives, key by key, and the same errors.
    let indices = [0, 3, 9, 10, 11, 10, 0];
    let batch = b
        .caches
        .pubkeys(&b.view().unwrap(), &indices)
        .unwrap()
        .iter()
        .map(|k| k.compress())
        .collect::<Vec<_>>();
    let single = indices
        .iter()
        .map(|&i| key(&b, i).unwrap())
        .collect::<Vec<_>>();
    assert_eq!(batch, single);
    assert!(b.caches.pubkeys(&b.view().unwrap(), &[0, 12]).is_err());
    assert!(a.caches.pubkeys(&a.view().unwrap(), &[0, 11]).is_err());
}

#[test]
fn pubkey_cache_finds_one_key_at_different_indices_on_different_forks() {
    let base = state(10, 8);
    let mut a = CachedBeaconState::new(base.clone());
    let mut b = CachedBeaconState::with_caches_of(base.clone(), &a.caches);
    let mut c = CachedBeaconState::with_caches_of(base, &a.caches);
    let shared = secret_key(300).public_key().compress();
    let other = secret_key(301).public_key().compress();
    // Fork a: the key at 10. Fork b: another key at 10, the key at 11. Fork c: neither.
    let push = |cached: &mut CachedBeaconState<E>, keys: &[PublicKeyBytes]| {
        let (mut view, caches) = cached.view_mut().unwrap();
        caches.index_pubkeys(&view.as_ref());
        for key in keys {
            let index = view.validators.len() as u64;
            let mut v = validator(0, true);
            v.pubkey = key.0.into();
            view.validators.push(v).unwrap();
            caches.push_validator(index, key);
        }
    };
    push(&mut a, &[shared]);
    push(&mut b, &[other, shared]);
    let lookup = |cached: &mut CachedBeaconState<E>, key: &PublicKeyBytes| {
        let (view, caches) = cached.view_mut().unwrap();
        caches.validator_index(&view.as_ref(), key)
    };
    assert_eq!(lookup(&mut a, &shared), Some(10));
    assert_eq!(lookup(&mut b, &shared), Some(11));
    assert_eq!(lookup(&mut b, &other), Some(10));
    assert_eq!(lookup(&mut a, &other), None);
    assert_eq!(lookup(&mut c, &shared), None);
    assert_eq!(lookup(&mut c, &other), None);
    // A clone of a taken before its push does not see the key either.
    let mut before = CachedBeaconState::with_caches_of(state(10, 8), &a.caches);
    assert_eq!(lookup(&mut before, &shared), None);
}

#[test]
fn exit_churn_follows_the_spec() {
    let spec = ChainSpec::minimal();
    let mut cached = CachedBeaconState::new(state(100, 16));
    let (mut view, caches) = cached.view_mut().unwrap();
    let total = caches.get_total_active_balance(&view.as_ref()).unwrap();
    assert_eq!(total, 80 * 32_000_000_000);
    // The churn: max(MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA, total / quotient), capped for exits.
    let churn = spec.max_per_epoch_activation_exit_churn_limit.min(
        spec.min_per_epoch_churn_limit_electra
            .max(total / spec.churn_limit_quotient),
    );
    let first_epoch = compute_activation_exit_epoch::<E>(2);
    let mut expected_epoch = first_epoch;
    let mut left = churn;
    for _ in 0..10 {
        let amount = 32_000_000_000;
        let epoch = compute_exit_epoch_and_update_churn(&mut view, caches, amount, &spec).unwrap();
        if amount > left {
            let extra = (amount - left - 1) / churn + 1;
            expected_epoch += extra;
            left += extra * churn;
        }
        left -= amount;
        assert_eq!(epoch, expected_epoch);
        assert_eq!(view.exit_balance_to_consume.as_deref(), Some(&left));
        assert_eq!(view.earliest_exit_epoch.as_deref(), Some(&expected_epoch));
    }
}

#[test]
fn integer_squareroot_is_the_floor() {
    for n in (0..10_000u64).chain([
        u64::MAX,
        u64::MAX - 1,
        1 << 62,
        ((1u64 << 32) - 1) * ((1u64 << 32) - 1),
    ]) {
        let r = integer_squareroot(n);
        assert!((r as u128) * (r as u128) <= n as u128, "{n}");
        assert!((r as u128 + 1) * (r as u128 + 1) > n as u128, "{n}");
    }
}

#[test]
fn merkle_branches_verify_and_tampering_fails() {
    use ethereum_hashing::hash32_concat;
    let leaves: Vec<B256> = (0..8u8).map(B256::repeat_byte).collect();
    let mut layers = vec![leaves.clone()];
    while layers.last().unwrap().len() > 1 {
        let prev = layers.last().unwrap();
        layers.push(
            prev.chunks(2)
                .map(|p| B256::from(hash32_concat(p[0].as_slice(), p[1].as_slice())))
                .collect(),
        );
    }
    let root = layers[3][0];
    for (i, leaf) in leaves.iter().enumerate() {
        let branch: Vec<B256> = (0..3).map(|d| layers[d][(i >> d) ^ 1]).collect();
        assert!(is_valid_merkle_branch(*leaf, &branch, 3, i as u64, root));
        assert!(!is_valid_merkle_branch(
            *leaf,
            &branch,
            3,
            (i ^ 1) as u64,
            root
        ));
        let mut bad = branch.clone();
        bad[1] = B256::repeat_byte(0xff);
        assert!(!is_valid_merkle_branch(*leaf, &bad, 3, i as u64, root));
        assert!(!is_valid_merkle_branch(
            *leaf,
            &branch[..2],
            3,
            i as u64,
            root
        ));
    }
}

#[test]
fn active_validator_predicate() {
    let mut v = validator(0, true);
    v.activation_epoch = 3;
    v.exit_epoch = 5;
    assert!(!is_active_validator(&v, 2));
    assert!(is_active_validator(&v, 3));
    assert!(is_active_validator(&v, 4));
    assert!(!is_active_validator(&v, 5));
    let _ = Caches::default();
}
