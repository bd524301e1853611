//! `upgrade_to_gloas`, its helpers `initialize_ptc_window` and
//! `onboard_builders_from_pending_deposits`, and the upgrades of pre-fork attestations and
//! attester slashings.
//!
//! [spec]: gloas/fork.md

use std::collections::{HashMap, HashSet};

use bls::PublicKeyBytes;
use milhouse::Vector;
use tree_hash::TreeHash;
use types::{
    BeaconState, ChainSpec, EthSpec, ExecutionAddress, FAR_FUTURE_EPOCH, ValidatorIndex, electra,
    fulu, gloas,
    gloas::{
        BUILDER_INDEX_SELF_BUILD, Builder, BuilderPendingPayment, ExecutionPayloadBid,
        PAYLOAD_BUILDER_VERSION,
    },
    signing::{DOMAIN_DEPOSIT, compute_signing_root},
    typenum::Unsigned,
};

use crate::{
    Error,
    common::{compute_epoch_at_slot, get_current_epoch},
    error::add,
    gloas::{
        builders::{empty_payment, is_builder_withdrawal_credential},
        ptc::compute_ptcs_of_epochs,
    },
    view::{PtcWindow, StateMut, StateRef},
};

/// `initialize_ptc_window(state)` [New in Gloas:EIP7732]: the PTC window of a state that has
/// none yet (at the upgrade and at genesis): zeros for the previous epoch, then `compute_ptc`
/// for every slot of the current and the next `MIN_SEED_LOOKAHEAD` epochs.
///
/// [spec]: gloas/fork.md#new-initialize_ptc_window
pub fn initialize_ptc_window<E: EthSpec>(state: &StateRef<'_, E>) -> Result<PtcWindow<E>, Error> {
    let slots = E::slots_per_epoch() as usize;
    let empty = Vector::new(vec![0; E::PtcSize::to_usize()])
        .map_err(|e| Error::Tree(format!("empty PTC: {e:?}")))?;
    let mut window = vec![empty; slots];
    let current_epoch = get_current_epoch(state);
    for ptc in compute_ptcs_of_epochs(state, current_epoch, 1 + E::MIN_SEED_LOOKAHEAD)? {
        window.push(Vector::new(ptc).map_err(|e| Error::Tree(format!("a PTC: {e:?}")))?);
    }
    Vector::new(window).map_err(|e| Error::Tree(format!("ptc_window: {e:?}")))
}

/// `onboard_builders_from_pending_deposits(state)` [New in Gloas:EIP7732]: at the upgrade,
/// every pending deposit with a builder (`0xB0`) credential for a key that is neither a
/// validator's nor that of a validator-to-be (an earlier pending deposit with a valid signature)
/// becomes a builder, or tops one up; deposits with an invalid signature are dropped; the rest
/// stay in the queue, in order.
///
/// The spec checks signatures one at a time, and again in `is_pending_validator` for every
/// builder deposit. Here each signature that can matter (the deposits for keys that are not
/// validators', and that some builder deposit also names) is checked once, all of them in one
/// batch (verified one by one, in parallel, only when the batch fails), before the spec's loop
/// runs on the results.
///
/// [spec]: gloas/fork.md#new-onboard_builders_from_pending_deposits
pub fn onboard_builders_from_pending_deposits<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    spec: &ChainSpec,
) -> Result<(), Error> {
    let fork = state.fork_name;
    let deposits = state
        .as_ref()
        .pending_deposits
        .ok_or(Error::MissingField {
            field: "pending_deposits",
            fork,
        })?
        .to_vec();
    if deposits.is_empty() {
        return Ok(());
    }

    // `validator_pubkeys`, restricted to the keys the queue names: one walk of the registry.
    let queued: HashSet<PublicKeyBytes> = deposits
        .iter()
        .map(|d| PublicKeyBytes(d.pubkey.0))
        .collect();
    let validator_pubkeys: HashSet<PublicKeyBytes> = state
        .validators
        .as_ref()
        .iter()
        .map(|v| PublicKeyBytes(v.pubkey.0))
        .filter(|key| queued.contains(key))
        .collect();

    // The signatures the loop below can read: builder deposits for keys that are not
    // validators', and the deposits `is_pending_validator` would check for their keys.
    let builder_deposit_keys: HashSet<PublicKeyBytes> = deposits
        .iter()
        .filter(|d| is_builder_withdrawal_credential(&d.withdrawal_credentials))
        .map(|d| PublicKeyBytes(d.pubkey.0))
        .filter(|key| !validator_pubkeys.contains(key))
        .collect();
    let to_check: Vec<usize> = deposits
        .iter()
        .enumerate()
        .filter(|(_, d)| builder_deposit_keys.contains(&PublicKeyBytes(d.pubkey.0)))
        .map(|(i, _)| i)
        .collect();
    let mut valid = vec![false; deposits.len()];
    for (i, ok) in to_check
        .iter()
        .zip(verify_deposit_signatures(&deposits, &to_check, spec))
    {
        valid[*i] = ok;
    }

    // `builder_pubkeys`, kept up to date as builders are added (first index per key).
    let mut builder_index_of: HashMap<PublicKeyBytes, usize> = HashMap::new();
    // `get_index_for_new_builder`: builders that are withdrawn and empty can be reused. The
    // builders added here are not withdrawable and top-ups only raise balances, so the
    // reusable ones are those found now, used lowest first.
    let mut reusable: std::collections::VecDeque<usize> = Default::default();
    {
        let epoch = get_current_epoch(&state.as_ref());
        let builders = state.gloas_mut()?.builders.iter();
        for (index, builder) in builders.enumerate() {
            builder_index_of
                .entry(PublicKeyBytes(builder.pubkey.0))
                .or_insert(index);
            if builder.withdrawable_epoch <= epoch && builder.balance == 0 {
                reusable.push_back(index);
            }
        }
    }
    // `is_pending_validator(pending_deposits, pubkey)`: the keys of the kept deposits with a
    // valid signature.
    let mut pending_validators: HashSet<PublicKeyBytes> = HashSet::new();

    let mut pending_deposits = Vec::with_capacity(deposits.len());
    let builders = &mut *state.gloas_mut()?.builders;
    for (i, deposit) in deposits.into_iter().enumerate() {
        let key = PublicKeyBytes(deposit.pubkey.0);
        // Deposits for existing validators stay in the pending queue.
        if validator_pubkeys.contains(&key) {
            pending_deposits.push(deposit);
            continue;
        }
        match builder_index_of.get(&key) {
            None => {
                if !is_builder_withdrawal_credential(&deposit.withdrawal_credentials) {
                    if valid[i] {
                        pending_validators.insert(key);
                    }
                    pending_deposits.push(deposit);
                    continue;
                }
                if pending_validators.contains(&key) {
                    pending_deposits.push(deposit);
                    continue;
                }
                if !valid[i] {
                    continue;
                }
                // `add_builder_to_registry(state, pubkey, PAYLOAD_BUILDER_VERSION,
                // ExecutionAddress(withdrawal_credentials[12:]), amount, slot)`.
                let builder = Builder {
                    pubkey: deposit.pubkey,
                    version: PAYLOAD_BUILDER_VERSION,
                    execution_address: ExecutionAddress::from_slice(
                        &deposit.withdrawal_credentials[12..],
                    ),
                    balance: deposit.amount,
                    deposit_epoch: compute_epoch_at_slot::<E>(deposit.slot),
                    withdrawable_epoch: FAR_FUTURE_EPOCH,
                };
                let index = match reusable.pop_front() {
                    Some(index) => {
                        let len = builders.len();
                        *builders.get_mut(index).ok_or(Error::UnknownBuilder {
                            index: index as u64,
                            len,
                        })? = builder;
                        index
                    }
                    None => {
                        builders.push(builder);
                        builders.len() - 1
                    }
                };
                builder_index_of.insert(key, index);
            }
            Some(&index) => {
                let len = builders.len();
                let builder = builders.get_mut(index).ok_or(Error::UnknownBuilder {
                    index: index as u64,
                    len,
                })?;
                builder.balance = add(builder.balance, deposit.amount, "builder balance")?;
            }
        }
    }

    // `state.pending_deposits = PendingDeposits(pending_deposits)`.
    let queue = state.pending_deposits.as_mut().ok_or(Error::MissingField {
        field: "pending_deposits",
        fork,
    })?;
    let old_len = queue.len();
    if pending_deposits.len() != old_len {
        queue.pop_front(old_len)?;
        for deposit in pending_deposits {
            queue.push(deposit)?;
        }
    }
    Ok(())
}

/// `is_valid_deposit_signature` of the deposits at `indices`, in order: one batch, and one by
/// one in parallel only when the batch fails. Undecodable keys and signatures are invalid.
fn verify_deposit_signatures(
    deposits: &[electra::PendingDeposit],
    indices: &[usize],
    spec: &ChainSpec,
) -> Vec<bool> {
    if indices.is_empty() {
        return Vec::new();
    }
    let domain = spec.compute_genesis_domain(DOMAIN_DEPOSIT);
    // Decoding a key and a signature is most of the cost outside the pairing: in parallel.
    let sets: Vec<Option<bls::SignatureSet>> =
        crate::parallel::SECTIONS.map_collect(indices, |&i| {
            let deposit = &deposits[i];
            let public_key = PublicKeyBytes(deposit.pubkey.0).decompress().ok()?;
            let signature = bls::Signature::deserialize(deposit.signature.as_slice()).ok()?;
            let message = electra::DepositMessage {
                pubkey: deposit.pubkey,
                withdrawal_credentials: deposit.withdrawal_credentials,
                amount: deposit.amount,
            };
            let root = compute_signing_root(&message, domain);
            Some(bls::SignatureSet::new(signature, vec![public_key], root.0))
        });
    let mut valid: Vec<bool> = sets.iter().map(Option::is_some).collect();
    let decoded: Vec<usize> = (0..sets.len()).filter(|&k| valid[k]).collect();
    let batch: Vec<bls::SignatureSet> = sets.into_iter().flatten().collect();
    if batch.is_empty() {
        return valid;
    }
    if let Err(failed) = bls::verify_signature_sets_attributed(&batch, crate::parallel::SECTIONS) {
        for k in failed {
            valid[decoded[k]] = false;
        }
    }
    valid
}

/// `upgrade_to_gloas(pre)` [New in Gloas]: the Fulu state under the Gloas fork version, its
/// registry and queues as progressive lists (EIP-7688), the payload header replaced by
/// `latest_block_hash` and a self-build bid made from the header (its parent hash, block hash,
/// prev_randao and gas limit) and the latest block header (its parent root and slot), every
/// slot's payload available, the PTC window filled, and the queued builder deposits onboarded.
///
/// [spec]: gloas/fork.md#upgrading-the-state
pub fn upgrade_to_gloas<E: EthSpec>(
    pre: fulu::BeaconState<E>,
    spec: &ChainSpec,
) -> Result<gloas::BeaconState<E>, Error> {
    let epoch = compute_epoch_at_slot::<E>(pre.slot);
    let wrapped = BeaconState::Fulu(pre);
    let ptc_window = initialize_ptc_window(&StateRef::new(&wrapped)?)?;
    let BeaconState::Fulu(pre) = wrapped else {
        return Err(Error::UnsupportedFork(wrapped.fork_name()));
    };
    let header = &pre.latest_execution_payload_header;
    // The bid of the last pre-fork block, as if self-built: what the first Gloas block's bid
    // and withdrawals check against (`parent_block_hash == latest_block_hash`, the parent
    // block's root and slot). 1.7.0b4's vectors fill every field the header has; the spec
    // snapshot read here set only the block hash, the gas limit and the requests root.
    let latest_execution_payload_bid = ExecutionPayloadBid {
        parent_block_hash: header.parent_hash,
        parent_block_root: pre.latest_block_header.parent_root,
        block_hash: header.block_hash,
        prev_randao: header.prev_randao,
        fee_recipient: Default::default(),
        gas_limit: header.gas_limit,
        builder_index: BUILDER_INDEX_SELF_BUILD,
        slot: pre.latest_block_header.slot,
        value: 0,
        execution_payment: 0,
        blob_kzg_commitments: Default::default(),
        execution_requests_root: gloas::ExecutionRequests::default().tree_hash_root(),
    };
    let payments: Vec<BuilderPendingPayment> =
        vec![empty_payment(); E::BuilderPendingPaymentsLength::to_usize()];
    let mut availability = ssz_types::BitVector::<E::SlotsPerHistoricalRoot>::new();
    for i in 0..E::SlotsPerHistoricalRoot::to_usize() {
        availability
            .set(i, true)
            .map_err(|e| Error::Tree(format!("execution_payload_availability: {e:?}")))?;
    }
    let post = gloas::BeaconState {
        genesis_time: pre.genesis_time,
        genesis_validators_root: pre.genesis_validators_root,
        slot: pre.slot,
        fork: gloas::Fork {
            previous_version: pre.fork.current_version,
            current_version: spec.fork_version(types::ForkName::Gloas),
            epoch,
        },
        latest_block_header: pre.latest_block_header,
        block_roots: pre.block_roots,
        state_roots: pre.state_roots,
        historical_roots: pre.historical_roots,
        eth1_data: pre.eth1_data,
        eth1_data_votes: pre.eth1_data_votes,
        eth1_deposit_index: pre.eth1_deposit_index,
        validators: pre.validators.iter().cloned().collect(),
        balances: pre.balances.iter().collect(),
        randao_mixes: pre.randao_mixes,
        slashings: pre.slashings,
        previous_epoch_participation: pre.previous_epoch_participation.iter().collect(),
        current_epoch_participation: pre.current_epoch_participation.iter().collect(),
        justification_bits: pre.justification_bits,
        previous_justified_checkpoint: pre.previous_justified_checkpoint,
        current_justified_checkpoint: pre.current_justified_checkpoint,
        finalized_checkpoint: pre.finalized_checkpoint,
        inactivity_scores: pre.inactivity_scores.iter().collect(),
        current_sync_committee: pre.current_sync_committee,
        next_sync_committee: pre.next_sync_committee,
        latest_block_hash: header.block_hash,
        next_withdrawal_index: pre.next_withdrawal_index,
        next_withdrawal_validator_index: pre.next_withdrawal_validator_index,
        historical_summaries: pre.historical_summaries,
        deposit_requests_start_index: pre.deposit_requests_start_index,
        deposit_balance_to_consume: pre.deposit_balance_to_consume,
        exit_balance_to_consume: pre.exit_balance_to_consume,
        earliest_exit_epoch: pre.earliest_exit_epoch,
        consolidation_balance_to_consume: pre.consolidation_balance_to_consume,
        earliest_consolidation_epoch: pre.earliest_consolidation_epoch,
        pending_deposits: pre.pending_deposits.iter().cloned().collect(),
        pending_partial_withdrawals: pre.pending_partial_withdrawals.iter().cloned().collect(),
        pending_consolidations: pre.pending_consolidations.iter().cloned().collect(),
        proposer_lookahead: pre.proposer_lookahead,
        builders: Default::default(),
        next_withdrawal_builder_index: 0,
        execution_payload_availability: availability,
        builder_pending_payments: Vector::new(payments)
            .map_err(|e| Error::Tree(format!("builder_pending_payments: {e:?}")))?,
        builder_pending_withdrawals: Default::default(),
        latest_execution_payload_bid,
        payload_expected_withdrawals: Default::default(),
        ptc_window,
    };
    let mut wrapped = BeaconState::Gloas(post);
    {
        let mut view = StateMut::new(&mut wrapped)?;
        onboard_builders_from_pending_deposits(&mut view, spec)?;
        view.apply_updates()?;
    }
    match wrapped {
        BeaconState::Gloas(post) => Ok(post),
        other @ (BeaconState::Phase0(_)
        | BeaconState::Altair(_)
        | BeaconState::Bellatrix(_)
        | BeaconState::Capella(_)
        | BeaconState::Deneb(_)
        | BeaconState::Electra(_)
        | BeaconState::Fulu(_)) => Err(Error::UnsupportedFork(other.fork_name())),
    }
}

/// `upgrade_attestation_to_gloas(pre)`: a Fulu (Electra) attestation as a Gloas one, to pack it
/// into a Gloas block; the same bits, data and signature.
///
/// [spec]: gloas/fork.md#upgrading-attestations-and-attester-slashings
pub fn upgrade_attestation_to_gloas<E: EthSpec>(
    pre: electra::Attestation<E>,
) -> gloas::Attestation<E> {
    gloas::Attestation {
        aggregation_bits: pre.aggregation_bits.iter().collect(),
        data: pre.data,
        signature: pre.signature,
        committee_bits: pre.committee_bits,
    }
}

/// `upgrade_indexed_attestation_to_gloas(pre)`: a Fulu (Electra) indexed attestation as a
/// Gloas one.
///
/// [spec]: gloas/fork.md#upgrading-attestations-and-attester-slashings
pub fn upgrade_indexed_attestation_to_gloas<E: EthSpec>(
    pre: electra::IndexedAttestation<E>,
) -> gloas::IndexedAttestation {
    let indices: Vec<ValidatorIndex> = pre.attesting_indices.into();
    gloas::IndexedAttestation {
        attesting_indices: indices.into(),
        data: pre.data,
        signature: pre.signature,
    }
}

/// `upgrade_attester_slashing_to_gloas(pre)`: both attestations of a Fulu (Electra) attester
/// slashing upgraded.
///
/// [spec]: gloas/fork.md#upgrading-attestations-and-attester-slashings
pub fn upgrade_attester_slashing_to_gloas<E: EthSpec>(
    pre: electra::AttesterSlashing<E>,
) -> gloas::AttesterSlashing {
    gloas::AttesterSlashing {
        attestation_1: upgrade_indexed_attestation_to_gloas(pre.attestation_1),
        attestation_2: upgrade_indexed_attestation_to_gloas(pre.attestation_2),
    }
}
