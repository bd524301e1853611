//! A synthetic Fulu state of any size, for benchmarks: realistic balances, participation,
//! inactivity scores, full root and randao vectors, and some of every pending queue. The one
//! builder of the `types`, `store` and `state_processing` benchmarks.
//!
//! - [`build_state`]: over real public keys (the interop keys), so blocks built on it carry
//!   signatures that verify (the state-transition benchmarks).
//! - [`build_state_with_placeholder_keys`]: over placeholder keys that are not curve points, for
//!   benchmarks that never verify a signature (encoding, hashing, storage); nothing is derived or
//!   signed, so a 1,000,000-validator state builds in seconds.
//!
//! The state is internally consistent where processing looks: the proposer lookahead, the sync
//! committees (real members with their aggregate key), `eth1_deposit_index` at the deposit
//! request start (no legacy deposits due), pending deposits signed by new interop keys (with
//! placeholder keys: placeholders there too).

use bls::PublicKeyBytes;
use milhouse::{List, Vector};
use packed_list::PackedList;
use splitmix::splitmix64;
use ssz_types::{FixedVector, VariableList};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    B256, BLSPubkey, ChainSpec, EthSpec, FAR_FUTURE_EPOCH, ForkName,
    fulu::{
        BeaconBlockHeader, BeaconState, Checkpoint, DepositMessage, Eth1Data,
        ExecutionPayloadHeader, Fork, HistoricalSummary, PendingConsolidation, PendingDeposit,
        PendingPartialWithdrawal, SyncCommittee, Validator,
    },
    signing::{DOMAIN_DEPOSIT, compute_signing_root},
};

use crate::{HarnessError, keys::interop_secret_key};

const GWEI_PER_ETH: u64 = 1_000_000_000;

/// Mainnet's genesis time, for the synthetic state and its payload timestamps.
const GENESIS_TIME: u64 = 1_606_824_023;

/// The `i`-th pseudo-random root of the stream `domain` (the state's roots, and any a
/// benchmark needs beside it: pick a `domain` the state does not use, such as 1,000 or more).
pub fn root(i: u64, domain: u64) -> B256 {
    let mut bytes = [0u8; 32];
    for (k, word) in bytes.chunks_mut(8).enumerate() {
        word.copy_from_slice(&splitmix64(i ^ (domain << 40) ^ ((k as u64) << 60)).to_le_bytes());
    }
    B256::from(bytes)
}

/// The placeholder public key of validator `i`: the compression flag, the index, and
/// pseudo-random bytes. Distinct for every `i`, and not a curve point.
pub fn placeholder_pubkey(i: u64) -> BLSPubkey {
    let mut bytes = [0u8; 48];
    bytes[0] = 0xa0;
    bytes[1..9].copy_from_slice(&i.to_be_bytes());
    bytes[16..24].copy_from_slice(&splitmix64(i).to_le_bytes());
    BLSPubkey::from(bytes)
}

/// The execution address the synthetic validator `i` withdraws to.
pub fn address_of(i: u64) -> types::Address {
    let mut bytes = [0u8; 20];
    bytes[..8].copy_from_slice(&splitmix64(i ^ 1).to_le_bytes());
    bytes[8..16].copy_from_slice(&i.to_le_bytes());
    types::Address::from(bytes)
}

/// What the synthetic state looks like.
#[derive(Debug, Clone)]
pub struct SyntheticParams {
    /// The state's slot (the block built on it goes at `slot + 1`).
    pub slot: u64,
    /// How many pending deposits (each signed by a fresh interop key past the registry).
    pub pending_deposits: u64,
}

impl Default for SyntheticParams {
    fn default() -> Self {
        // Mid-epoch, a mainnet-like epoch number.
        Self {
            slot: 12_000_000 + 16,
            pending_deposits: 64,
        }
    }
}

/// Where the validators' public keys come from.
#[derive(Debug, Clone, Copy)]
enum Keys<'a> {
    /// One real key per validator.
    Real(&'a [PublicKeyBytes]),
    /// This many validators with [`placeholder_pubkey`]s.
    Placeholder(u64),
}

impl Keys<'_> {
    fn len(&self) -> u64 {
        match self {
            Keys::Real(keys) => keys.len() as u64,
            Keys::Placeholder(n) => *n,
        }
    }

    fn pubkey(&self, i: u64) -> BLSPubkey {
        match self {
            Keys::Real(keys) => BLSPubkey::from(keys[i as usize].0),
            Keys::Placeholder(_) => placeholder_pubkey(i),
        }
    }
}

/// The synthetic validator `i` of a registry of `n` at `epoch` (a validator past `n` is one a
/// benchmark adds later): 1 % compounding with larger balances, 2 % exited long ago, a few
/// slashed.
pub fn validator(i: u64, n: u64, epoch: u64, pubkey: BLSPubkey) -> Validator {
    let r = splitmix64(i);
    // 1 % compounding validators with larger balances, 2 % exited long ago, a few slashed.
    let compounding = r.is_multiple_of(100);
    let exited = r % 50 == 1;
    let mut withdrawal_credentials = [0u8; 32];
    withdrawal_credentials[0] = if compounding { 0x02 } else { 0x01 };
    withdrawal_credentials[12..].copy_from_slice(address_of(i).as_slice());
    let activation_epoch = (i * (epoch / 2)) / n.max(1);
    Validator {
        pubkey,
        withdrawal_credentials: withdrawal_credentials.into(),
        effective_balance: if compounding {
            (32 + r % 2016) * GWEI_PER_ETH
        } else if r % 50 == 2 {
            31 * GWEI_PER_ETH
        } else {
            32 * GWEI_PER_ETH
        },
        slashed: !exited && r % 4000 == 3,
        activation_eligibility_epoch: activation_epoch.saturating_sub(4),
        activation_epoch,
        exit_epoch: if exited {
            epoch - 300 - r % 10_000
        } else {
            FAR_FUTURE_EPOCH
        },
        withdrawable_epoch: if exited {
            epoch - 44 - r % 10_000
        } else if !exited && r % 4000 == 3 {
            epoch + 4096
        } else {
            FAR_FUTURE_EPOCH
        },
    }
}

/// Warms the caches a node keeps for its head state, as the benches' fixtures need them: the
/// committees of the previous, current and next epoch, the public-key index and the effective
/// balances (which epoch processing hands over at every epoch boundary).
pub fn warm_caches<E: EthSpec>(
    state: &mut state_processing::CachedBeaconState<E>,
) -> Result<(), HarnessError> {
    let state_processing::CachedBeaconState { state, caches } = state;
    let view = state_processing::StateRef::new(state)?;
    let epoch = state_processing::common::get_current_epoch(&view);
    for e in [epoch.saturating_sub(1), epoch, epoch + 1] {
        caches.committees(&view, e)?;
    }
    caches.index_pubkeys(&view);
    caches.effective_balances(&view);
    Ok(())
}

/// Builds the synthetic Fulu state over `pubkeys` (one validator per key; use
/// [`crate::keys::interop_pubkeys_cached`] for interop keys `0..n`).
pub fn build_state<E: EthSpec>(
    pubkeys: &[PublicKeyBytes],
    params: &SyntheticParams,
    spec: &ChainSpec,
) -> Result<BeaconState<E>, HarnessError> {
    build::<E>(Keys::Real(pubkeys), params, spec)
}

/// Builds the synthetic Fulu state with `n` validators whose keys are [`placeholder_pubkey`]s:
/// the same state as [`build_state`] but for the keys, the sync committees' aggregate keys and
/// the pending deposits' keys and signatures, none of which verify.
pub fn build_state_with_placeholder_keys<E: EthSpec>(
    n: u64,
    params: &SyntheticParams,
    spec: &ChainSpec,
) -> Result<BeaconState<E>, HarnessError> {
    build::<E>(Keys::Placeholder(n), params, spec)
}

fn build<E: EthSpec>(
    keys: Keys<'_>,
    params: &SyntheticParams,
    spec: &ChainSpec,
) -> Result<BeaconState<E>, HarnessError> {
    let n = keys.len();
    let slot = params.slot;
    let epoch = slot / E::slots_per_epoch();
    let validators: Vec<Validator> = (0..n)
        .map(|i| validator(i, n, epoch, keys.pubkey(i)))
        .collect();
    let balances: Vec<u64> = validators
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if v.exit_epoch != FAR_FUTURE_EPOCH
                && v.withdrawable_epoch < epoch
                && !splitmix64(i as u64 ^ 9).is_multiple_of(4)
            {
                // Most long-exited validators have been swept already.
                0
            } else {
                v.effective_balance + splitmix64(i as u64 ^ 2) % (GWEI_PER_ETH / 4)
            }
        })
        .collect();
    let participation = |salt: u64| -> Vec<u8> {
        (0..n)
            .map(|i| match splitmix64(i ^ salt) % 100 {
                0..=94 => 0b111,
                95..=97 => 0b011,
                _ => 0,
            })
            .collect()
    };
    let inactivity_scores: Vec<u64> = (0..n)
        .map(|i| {
            let r = splitmix64(i ^ 5);
            if r.is_multiple_of(50) { r % 200 } else { 0 }
        })
        .collect();

    let sync_committee = |offset: u64| -> Result<SyncCommittee<E>, HarnessError> {
        let size = E::SyncCommitteeSize::to_u64();
        let members: Vec<u64> = (0..size)
            .map(|k| (k * 1_953 + offset * 7_919) % n)
            .collect();
        let aggregate_pubkey = match keys {
            Keys::Real(pubkeys) => {
                let keys: Vec<bls::PublicKey> = members
                    .iter()
                    .map(|&i| pubkeys[i as usize].decompress())
                    .collect::<Result<_, _>>()
                    .map_err(|e| HarnessError::Io(format!("bad synthetic pubkey: {e}")))?;
                let aggregate = bls::eth_aggregate_pubkeys(&keys)
                    .map_err(|e| HarnessError::Io(format!("aggregate pubkey: {e}")))?;
                BLSPubkey::from(aggregate.0)
            }
            Keys::Placeholder(_) => placeholder_pubkey(u64::MAX - offset),
        };
        Ok(SyncCommittee {
            pubkeys: FixedVector::new(members.iter().map(|&i| keys.pubkey(i)).collect())
                .expect("SYNC_COMMITTEE_SIZE keys"),
            aggregate_pubkey,
        })
    };

    let deposit_domain = spec.compute_genesis_domain(DOMAIN_DEPOSIT);
    let pending_deposits: Vec<PendingDeposit> = (0..params.pending_deposits)
        .map(|k| {
            let mut credentials = [0u8; 32];
            credentials[0] = 0x01;
            credentials[12..].copy_from_slice(address_of(n + k).as_slice());
            let (pubkey, signature) = match keys {
                Keys::Real(_) => {
                    let key = interop_secret_key((n + k) as usize);
                    let message = DepositMessage {
                        pubkey: BLSPubkey::from(key.public_key().compress().0),
                        withdrawal_credentials: credentials.into(),
                        amount: 32 * GWEI_PER_ETH,
                    };
                    let signature =
                        key.sign(compute_signing_root(&message, deposit_domain).as_slice());
                    (message.pubkey, signature.serialize().into())
                }
                Keys::Placeholder(_) => (placeholder_pubkey(n + k), [0xb0; 96].into()),
            };
            PendingDeposit {
                pubkey,
                withdrawal_credentials: credentials.into(),
                amount: 32 * GWEI_PER_ETH,
                signature,
                // Old enough to be finalized, so epoch processing applies them.
                slot: slot - 4 * E::slots_per_epoch() - 64 + k / 8,
            }
        })
        .collect();

    let fork = spec.fork_at_epoch(epoch);
    if spec.fork_name_at_epoch(epoch) != ForkName::Fulu {
        return Err(HarnessError::Io(format!(
            "the synthetic state is Fulu; the spec's fork at epoch {epoch} is {}",
            spec.fork_name_at_epoch(epoch)
        )));
    }
    let lookahead_len = E::ProposerLookaheadSlots::to_u64();
    let active_mask = |i: u64| {
        validators[i as usize].exit_epoch == FAR_FUTURE_EPOCH && !validators[i as usize].slashed
    };
    let proposer_lookahead: Vec<u64> = (0..lookahead_len)
        .map(|k| {
            let mut i = splitmix64(k ^ 0x10_0000) % n;
            while !active_mask(i) {
                i = (i + 1) % n;
            }
            i
        })
        .collect();

    let deposit_index = n + 400_000;
    Ok(BeaconState {
        genesis_time: GENESIS_TIME,
        genesis_validators_root: root(0, 99),
        slot,
        fork: Fork {
            previous_version: fork.previous_version,
            current_version: fork.current_version,
            epoch: fork.epoch,
        },
        latest_block_header: BeaconBlockHeader {
            slot,
            proposer_index: proposer_lookahead[0],
            parent_root: root(1, 98),
            state_root: B256::ZERO,
            body_root: root(2, 98),
        },
        block_roots: Vector::new(
            (0..E::SlotsPerHistoricalRoot::to_u64())
                .map(|i| root(i, 1))
                .collect(),
        )?,
        state_roots: Vector::new(
            (0..E::SlotsPerHistoricalRoot::to_u64())
                .map(|i| root(i, 2))
                .collect(),
        )?,
        historical_roots: List::new((0..758).map(|i| root(i, 3)).collect())?,
        eth1_data: Eth1Data {
            deposit_root: root(3, 98),
            deposit_count: deposit_index,
            block_hash: root(4, 98),
        },
        eth1_data_votes: List::new(vec![])?,
        eth1_deposit_index: deposit_index,
        validators: List::new(validators)?,
        balances: PackedList::new(balances)?,
        randao_mixes: Vector::new(
            (0..E::EpochsPerHistoricalVector::to_u64())
                .map(|i| root(i, 4))
                .collect(),
        )?,
        slashings: Vector::new(
            (0..E::EpochsPerSlashingsVector::to_u64())
                .map(|i| {
                    if i.is_multiple_of(97) {
                        32 * GWEI_PER_ETH
                    } else {
                        0
                    }
                })
                .collect(),
        )?,
        previous_epoch_participation: PackedList::new(participation(6))?,
        current_epoch_participation: PackedList::new(participation(7))?,
        justification_bits: Default::default(),
        previous_justified_checkpoint: Checkpoint {
            epoch: epoch - 2,
            root: root(5, 98),
        },
        current_justified_checkpoint: Checkpoint {
            epoch: epoch - 1,
            root: root(6, 98),
        },
        finalized_checkpoint: Checkpoint {
            epoch: epoch - 2,
            root: root(5, 98),
        },
        inactivity_scores: PackedList::new(inactivity_scores)?,
        current_sync_committee: sync_committee(0)?,
        next_sync_committee: sync_committee(1)?,
        latest_execution_payload_header: ExecutionPayloadHeader {
            parent_hash: root(7, 98),
            fee_recipient: Default::default(),
            state_root: root(8, 98),
            receipts_root: root(9, 98),
            logs_bloom: FixedVector::new(vec![0xff; 256]).expect("256 bytes"),
            prev_randao: root(10, 98),
            block_number: 22_000_000,
            gas_limit: 36_000_000,
            gas_used: 17_000_000,
            timestamp: spec.compute_time_at_slot(GENESIS_TIME, slot),
            extra_data: VariableList::new(b"arbor synthetic".to_vec()).expect("short"),
            base_fee_per_gas: types::U256::from(3_000_000_000u64),
            block_hash: root(11, 98),
            transactions_root: root(12, 98),
            withdrawals_root: root(13, 98),
            blob_gas_used: 786_432,
            excess_blob_gas: 0,
        },
        next_withdrawal_index: 90_000_000,
        next_withdrawal_validator_index: 123_456 % n,
        historical_summaries: List::new(
            (0..1300)
                .map(|i| HistoricalSummary {
                    block_summary_root: root(i, 5),
                    state_summary_root: root(i, 6),
                })
                .collect(),
        )?,
        deposit_requests_start_index: deposit_index,
        deposit_balance_to_consume: 0,
        exit_balance_to_consume: 256 * GWEI_PER_ETH,
        earliest_exit_epoch: epoch + 10,
        consolidation_balance_to_consume: 0,
        earliest_consolidation_epoch: epoch + 20,
        pending_deposits: List::new(pending_deposits)?,
        pending_partial_withdrawals: List::new(
            (0..100)
                .map(|i| PendingPartialWithdrawal {
                    validator_index: (i * 9_973) % n,
                    amount: GWEI_PER_ETH,
                    withdrawable_epoch: epoch + 256,
                })
                .collect(),
        )?,
        pending_consolidations: List::new(
            (0..20)
                .map(|i| PendingConsolidation {
                    source_index: (i * 7_919) % n,
                    target_index: (i * 7_919 + 1) % n,
                })
                .collect(),
        )?,
        proposer_lookahead: Vector::new(proposer_lookahead)?,
    })
}

/// A root that changes whenever any part of the state does (for sanity checks in benches).
pub fn state_root<E: EthSpec>(state: &BeaconState<E>) -> B256 {
    state.tree_hash_root()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::interop_pubkey;
    use ssz::{Decode, Encode};
    use types::MainnetEthSpec;

    // The mainnet preset: the pending queues are longer than the minimal preset's limits.
    type E = MainnetEthSpec;

    fn spec() -> ChainSpec {
        ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu)
    }

    #[test]
    fn placeholder_state_differs_from_the_real_one_only_in_keys_and_signatures() {
        let n = 64;
        let params = SyntheticParams {
            pending_deposits: 4,
            ..SyntheticParams::default()
        };
        let pubkeys: Vec<PublicKeyBytes> = (0..n).map(interop_pubkey).collect();
        let real = build_state::<E>(&pubkeys, &params, &spec()).expect("real keys");
        let mut placeholder =
            build_state_with_placeholder_keys::<E>(n as u64, &params, &spec()).expect("built");
        assert_ne!(real.tree_hash_root(), placeholder.tree_hash_root());

        // Put the real keys and signatures in: the states are then the same.
        let validators: Vec<Validator> = placeholder
            .validators
            .iter()
            .zip(real.validators.iter())
            .map(|(v, r)| Validator {
                pubkey: r.pubkey,
                ..v.clone()
            })
            .collect();
        placeholder.validators = List::new(validators).expect("same length");
        placeholder.current_sync_committee = real.current_sync_committee.clone();
        placeholder.next_sync_committee = real.next_sync_committee.clone();
        placeholder.pending_deposits = real.pending_deposits.clone();
        assert_eq!(real.tree_hash_root(), placeholder.tree_hash_root());
    }

    #[test]
    fn placeholder_keys_are_distinct_and_the_state_round_trips() {
        let state =
            build_state_with_placeholder_keys::<E>(300, &SyntheticParams::default(), &spec())
                .expect("built");
        let mut keys: Vec<BLSPubkey> = state.validators.iter().map(|v| v.pubkey).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 300);
        assert!(PublicKeyBytes(keys[0].0).decompress().is_err());
        let bytes = state.as_ssz_bytes();
        let decoded = BeaconState::<E>::from_ssz_bytes(&bytes).expect("decodes");
        assert_eq!(decoded.tree_hash_root(), state.tree_hash_root());
    }
}
