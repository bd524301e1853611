//! Genesis: the phase0 `initialize_beacon_state_from_eth1` and `is_valid_genesis_state` that the
//! genesis spec tests check, and an interop genesis at Fulu or Gloas with the standard
//! deterministic interop keys, for devnets and benchmarks.
//!
//! [spec]: phase0/beacon-chain.md#genesis

use std::collections::HashMap;

use milhouse::{List, Vector};
use packed_list::PackedList;
use ssz_types::{BitVector, FixedVector, VariableList};
use tree_hash::TreeHash;
use types::{
    BLSPubkey, BLSSignature, BeaconState, ChainSpec, EthSpec, FAR_FUTURE_EPOCH, ForkName,
    GENESIS_EPOCH, GENESIS_SLOT, Gwei, Root, U256, deneb, electra, fulu, gloas, phase0,
    signing::{DOMAIN_DEPOSIT, compute_signing_root},
};

use crate::{
    Caches, Error,
    common::{BLS_WITHDRAWAL_PREFIX, hash, is_active_validator, is_valid_merkle_branch},
    per_epoch::{get_next_sync_committee, initialize_proposer_lookahead},
    view::StateRef,
};

/// Why a genesis state could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenesisError {
    /// `process_deposit`'s Merkle proof check failed.
    #[error("deposit {index}: invalid Merkle proof against the deposit root")]
    InvalidDepositProof {
        /// The deposit's position in the list.
        index: usize,
    },
    /// The chain's genesis fork is one this function does not build.
    #[error("genesis at fork {0} is not supported here ({1})")]
    UnsupportedGenesisFork(ForkName, &'static str),
    /// Too many validators or deposits for the state's lists.
    #[error("genesis lists are full: {0}")]
    TooManyValidators(&'static str),
    /// A helper failed.
    #[error(transparent)]
    State(#[from] Error),
}

impl From<milhouse::Error> for GenesisError {
    fn from(e: milhouse::Error) -> Self {
        GenesisError::State(e.into())
    }
}

impl From<packed_list::Error> for GenesisError {
    fn from(e: packed_list::Error) -> Self {
        GenesisError::State(e.into())
    }
}

// ---------------------------------------------------------------------------------------------
// The deposit tree

/// `DEPOSIT_CONTRACT_TREE_DEPTH`.
const DEPOSIT_TREE_DEPTH: usize = types::DEPOSIT_CONTRACT_TREE_DEPTH as usize;

/// The root of `List[DepositData, 2**DEPOSIT_CONTRACT_TREE_DEPTH]` as leaves are appended,
/// with the deposit contract's incremental algorithm (one branch node per level).
struct DepositTree {
    branch: [Root; DEPOSIT_TREE_DEPTH],
    zero_hashes: [Root; DEPOSIT_TREE_DEPTH],
    count: u64,
}

fn hash_pair(left: &Root, right: &Root) -> Root {
    let mut buf = [0u8; 64];
    buf[..32].copy_from_slice(left.as_slice());
    buf[32..].copy_from_slice(right.as_slice());
    hash(&buf)
}

impl DepositTree {
    fn new() -> Self {
        let mut zero_hashes = [Root::ZERO; DEPOSIT_TREE_DEPTH];
        for depth in 1..DEPOSIT_TREE_DEPTH {
            zero_hashes[depth] = hash_pair(&zero_hashes[depth - 1], &zero_hashes[depth - 1]);
        }
        Self {
            branch: [Root::ZERO; DEPOSIT_TREE_DEPTH],
            zero_hashes,
            count: 0,
        }
    }

    fn push(&mut self, leaf: Root) {
        self.count += 1;
        let mut size = self.count;
        let mut node = leaf;
        for depth in 0..DEPOSIT_TREE_DEPTH {
            if size & 1 == 1 {
                self.branch[depth] = node;
                return;
            }
            node = hash_pair(&self.branch[depth], &node);
            size >>= 1;
        }
    }

    /// `hash_tree_root` of the list: the depth-32 root with the length mixed in.
    fn root(&self) -> Root {
        let mut node = Root::ZERO;
        let mut size = self.count;
        for depth in 0..DEPOSIT_TREE_DEPTH {
            node = if size & 1 == 1 {
                hash_pair(&self.branch[depth], &node)
            } else {
                hash_pair(&node, &self.zero_hashes[depth])
            };
            size >>= 1;
        }
        let mut length = Root::ZERO;
        length.0[..8].copy_from_slice(&self.count.to_le_bytes());
        hash_pair(&node, &length)
    }
}

// ---------------------------------------------------------------------------------------------
// Phase0 genesis from eth1 deposits

/// `initialize_beacon_state_from_eth1(eth1_block_hash, eth1_timestamp, deposits)`: the genesis
/// state of a chain whose genesis fork is phase0, from the deposits seen on eth1.
///
/// Deposit signatures are checked in parallel up front; deposits are then applied in order as
/// the spec does (only a key's first deposit needs a valid signature).
///
/// [spec]: phase0/beacon-chain.md#genesis-state
pub fn initialize_beacon_state_from_eth1<E: EthSpec>(
    eth1_block_hash: Root,
    eth1_timestamp: u64,
    deposits: &[phase0::Deposit],
    spec: &ChainSpec,
) -> Result<BeaconState<E>, GenesisError> {
    let fork = spec.fork_name_at_epoch(GENESIS_EPOCH);
    if fork != ForkName::Phase0 {
        return Err(GenesisError::UnsupportedGenesisFork(
            fork,
            "initialize_beacon_state_from_eth1 builds phase0 genesis states",
        ));
    }

    let domain = spec.compute_genesis_domain(DOMAIN_DEPOSIT);
    let signature_valid: Vec<bool> = crate::parallel::SECTIONS.map_collect(deposits, |deposit| {
        let message = phase0::DepositMessage {
            pubkey: deposit.data.pubkey,
            withdrawal_credentials: deposit.data.withdrawal_credentials,
            amount: deposit.data.amount,
        };
        is_valid_signature(
            &deposit.data.pubkey,
            &deposit.data.signature,
            &message,
            domain,
        )
    });

    let mut tree = DepositTree::new();
    let mut eth1_deposit_index: u64 = 0;
    let mut validators: Vec<phase0::Validator> = Vec::new();
    let mut balances: Vec<Gwei> = Vec::new();
    let mut index_of: HashMap<BLSPubkey, usize> = HashMap::new();
    let mut deposit_root = Root::ZERO;
    for (index, deposit) in deposits.iter().enumerate() {
        let leaf = deposit.data.tree_hash_root();
        tree.push(leaf);
        deposit_root = tree.root();
        // `process_deposit`: verify the Merkle branch (depth + 1 for the length mix-in).
        if !is_valid_merkle_branch(
            leaf,
            &deposit.proof,
            DEPOSIT_TREE_DEPTH + 1,
            eth1_deposit_index,
            deposit_root,
        ) {
            return Err(GenesisError::InvalidDepositProof { index });
        }
        eth1_deposit_index += 1;
        // `apply_deposit`.
        let data = &deposit.data;
        match index_of.get(&data.pubkey) {
            Some(&existing) => {
                balances[existing] = balances[existing]
                    .checked_add(data.amount)
                    .ok_or(Error::ArithmeticOverflow("increase_balance"))?;
            }
            None => {
                if signature_valid[index] {
                    index_of.insert(data.pubkey, validators.len());
                    validators.push(phase0::Validator {
                        pubkey: data.pubkey,
                        withdrawal_credentials: data.withdrawal_credentials,
                        effective_balance: (data.amount
                            - data.amount % E::EFFECTIVE_BALANCE_INCREMENT)
                            .min(E::MAX_EFFECTIVE_BALANCE),
                        slashed: false,
                        activation_eligibility_epoch: FAR_FUTURE_EPOCH,
                        activation_epoch: FAR_FUTURE_EPOCH,
                        exit_epoch: FAR_FUTURE_EPOCH,
                        withdrawable_epoch: FAR_FUTURE_EPOCH,
                    });
                    balances.push(data.amount);
                }
            }
        }
    }

    // Process activations.
    for (validator, &balance) in validators.iter_mut().zip(&balances) {
        validator.effective_balance =
            (balance - balance % E::EFFECTIVE_BALANCE_INCREMENT).min(E::MAX_EFFECTIVE_BALANCE);
        if validator.effective_balance == E::MAX_EFFECTIVE_BALANCE {
            validator.activation_eligibility_epoch = GENESIS_EPOCH;
            validator.activation_epoch = GENESIS_EPOCH;
        }
    }
    let validators =
        List::new(validators).map_err(|_| GenesisError::TooManyValidators("validators"))?;
    let genesis_validators_root = validators.tree_hash_root();

    let state = phase0::BeaconState {
        genesis_time: eth1_timestamp.saturating_add(spec.genesis_delay),
        genesis_validators_root,
        slot: GENESIS_SLOT,
        fork: phase0::Fork {
            previous_version: spec.genesis_fork_version,
            current_version: spec.genesis_fork_version,
            epoch: GENESIS_EPOCH,
        },
        latest_block_header: phase0::BeaconBlockHeader {
            slot: GENESIS_SLOT,
            proposer_index: 0,
            parent_root: Root::ZERO,
            state_root: Root::ZERO,
            body_root: empty_phase0_body::<E>().tree_hash_root(),
        },
        block_roots: Vector::from_elem(Root::ZERO)?,
        state_roots: Vector::from_elem(Root::ZERO)?,
        historical_roots: List::empty(),
        eth1_data: phase0::Eth1Data {
            deposit_root,
            deposit_count: deposits.len() as u64,
            block_hash: eth1_block_hash,
        },
        eth1_data_votes: List::empty(),
        eth1_deposit_index,
        validators,
        balances: PackedList::new(balances)?,
        // Seed RANDAO with eth1 entropy.
        randao_mixes: Vector::from_elem(eth1_block_hash)?,
        slashings: Vector::from_elem(0)?,
        previous_epoch_attestations: List::empty(),
        current_epoch_attestations: List::empty(),
        justification_bits: BitVector::new(),
        previous_justified_checkpoint: zero_checkpoint(),
        current_justified_checkpoint: zero_checkpoint(),
        finalized_checkpoint: zero_checkpoint(),
    };
    Ok(BeaconState::Phase0(state))
}

fn is_valid_signature<T: TreeHash>(
    pubkey: &BLSPubkey,
    signature: &BLSSignature,
    message: &T,
    domain: types::Domain,
) -> bool {
    let Ok(public_key) = bls::PublicKeyBytes(pubkey.0).decompress() else {
        return false;
    };
    let Ok(signature) = bls::Signature::deserialize(signature.as_slice()) else {
        return false;
    };
    bls::verify(
        &public_key,
        compute_signing_root(message, domain).as_slice(),
        &signature,
    )
}

fn zero_checkpoint() -> phase0::Checkpoint {
    phase0::Checkpoint {
        epoch: GENESIS_EPOCH,
        root: Root::ZERO,
    }
}

fn zero_eth1_data() -> phase0::Eth1Data {
    phase0::Eth1Data {
        deposit_root: Root::ZERO,
        deposit_count: 0,
        block_hash: Root::ZERO,
    }
}

/// `BeaconBlockBody()` of phase0: every field zero or empty.
fn empty_phase0_body<E: EthSpec>() -> phase0::BeaconBlockBody<E> {
    phase0::BeaconBlockBody {
        randao_reveal: BLSSignature::ZERO,
        eth1_data: zero_eth1_data(),
        graffiti: Root::ZERO,
        proposer_slashings: VariableList::empty(),
        attester_slashings: VariableList::empty(),
        attestations: VariableList::empty(),
        deposits: VariableList::empty(),
        voluntary_exits: VariableList::empty(),
    }
}

/// `is_valid_genesis_state(state)`: late enough, and enough validators active at genesis.
///
/// [spec]: phase0/beacon-chain.md#genesis-state
pub fn is_valid_genesis_state<E: EthSpec>(state: &BeaconState<E>, spec: &ChainSpec) -> bool {
    if *state.genesis_time() < spec.min_genesis_time {
        return false;
    }
    let Some(validators) = state.validators() else {
        // A genesis state of a fork whose registry Arbor does not read (Gloas).
        return false;
    };
    let active = validators
        .iter()
        .filter(|v| is_active_validator(v, GENESIS_EPOCH))
        .count() as u64;
    active >= spec.min_genesis_active_validator_count
}

// ---------------------------------------------------------------------------------------------
// Interop genesis

/// The interop secret key of validator `index` (in `bls`, where the validator client takes it
/// from too).
pub use bls::interop_secret_key;

/// A Fulu (or Gloas) genesis state of `validator_count` validators with the interop keys
/// ([`interop_secret_key`]), each with 32 ETH, active from genesis. The chain spec must
/// schedule Fulu at genesis; where it schedules Gloas at genesis too, the state is a Gloas one
/// (`gloas_genesis_from_fulu`).
///
/// Public keys are derived in parallel; see [`interop_genesis_state_from_pubkeys`] for what the
/// state holds.
pub fn interop_genesis_state<E: EthSpec>(
    validator_count: usize,
    genesis_time: u64,
    eth1_block_hash: Root,
    spec: &ChainSpec,
) -> Result<BeaconState<E>, GenesisError> {
    let pubkeys: Vec<BLSPubkey> = crate::parallel::SECTIONS.map_collect(0..validator_count, |i| {
        BLSPubkey::from(interop_secret_key(i).public_key().compress().0)
    });
    interop_genesis_state_from_pubkeys(&pubkeys, genesis_time, eth1_block_hash, spec)
}

/// The interop Fulu genesis state for validators with the given keys (callers that keep the
/// interop keys of a large registry pass them here instead of deriving them again).
///
/// Every validator has a BLS withdrawal credential (`0x00 ++ sha256(pubkey)[1:]`), 32 ETH and is
/// active from genesis. The eth1 data commits to the genesis deposits (with empty signatures:
/// the deposit tree is never read again, since `deposit_requests_start_index` is set to the
/// deposit count, as after EIP-6110 deposits arrive as execution requests); the latest
/// execution payload header carries `eth1_block_hash` as the execution genesis block hash;
/// sync committees and the proposer lookahead are computed as the spec defines them.
pub fn interop_genesis_state_from_pubkeys<E: EthSpec>(
    pubkeys: &[BLSPubkey],
    genesis_time: u64,
    eth1_block_hash: Root,
    spec: &ChainSpec,
) -> Result<BeaconState<E>, GenesisError> {
    let fork = spec.fork_name_at_epoch(GENESIS_EPOCH);
    if !matches!(fork, ForkName::Fulu | ForkName::Gloas) {
        return Err(GenesisError::UnsupportedGenesisFork(
            fork,
            "the interop genesis is built at Fulu or Gloas: schedule FULU_FORK_EPOCH at 0",
        ));
    }
    let n = pubkeys.len();
    let balance = E::MIN_ACTIVATION_BALANCE;
    let validators: Vec<electra::Validator> =
        crate::parallel::SECTIONS.map_collect(pubkeys, |pubkey| {
            let mut withdrawal_credentials = hash(pubkey.as_slice());
            withdrawal_credentials.0[0] = BLS_WITHDRAWAL_PREFIX;
            electra::Validator {
                pubkey: *pubkey,
                withdrawal_credentials,
                effective_balance: balance,
                slashed: false,
                activation_eligibility_epoch: GENESIS_EPOCH,
                activation_epoch: GENESIS_EPOCH,
                exit_epoch: FAR_FUTURE_EPOCH,
                withdrawable_epoch: FAR_FUTURE_EPOCH,
            }
        });
    let leaves: Vec<Root> = crate::parallel::SECTIONS.map_collect(&validators, |v| {
        phase0::DepositData {
            pubkey: v.pubkey,
            withdrawal_credentials: v.withdrawal_credentials,
            amount: balance,
            signature: BLSSignature::ZERO,
        }
        .tree_hash_root()
    });
    let mut tree = DepositTree::new();
    for leaf in leaves {
        tree.push(leaf);
    }

    let validators =
        List::new(validators).map_err(|_| GenesisError::TooManyValidators("validators"))?;
    let genesis_validators_root = validators.tree_hash_root();
    let empty_sync_committee = || electra::SyncCommittee::<E> {
        pubkeys: FixedVector::from_elem(BLSPubkey::ZERO),
        aggregate_pubkey: BLSPubkey::ZERO,
    };
    let state = fulu::BeaconState::<E> {
        genesis_time,
        genesis_validators_root,
        slot: GENESIS_SLOT,
        fork: fulu::Fork {
            previous_version: spec.electra_fork_version,
            current_version: spec.fulu_fork_version,
            epoch: GENESIS_EPOCH,
        },
        latest_block_header: phase0::BeaconBlockHeader {
            slot: GENESIS_SLOT,
            proposer_index: 0,
            parent_root: Root::ZERO,
            state_root: Root::ZERO,
            body_root: empty_electra_body::<E>().tree_hash_root(),
        },
        block_roots: Vector::from_elem(Root::ZERO)?,
        state_roots: Vector::from_elem(Root::ZERO)?,
        historical_roots: List::empty(),
        eth1_data: phase0::Eth1Data {
            deposit_root: tree.root(),
            deposit_count: n as u64,
            block_hash: eth1_block_hash,
        },
        eth1_data_votes: List::empty(),
        eth1_deposit_index: n as u64,
        validators,
        balances: PackedList::repeat(balance, n)?,
        randao_mixes: Vector::from_elem(eth1_block_hash)?,
        slashings: Vector::from_elem(0)?,
        previous_epoch_participation: PackedList::repeat(0, n)?,
        current_epoch_participation: PackedList::repeat(0, n)?,
        justification_bits: BitVector::new(),
        previous_justified_checkpoint: zero_checkpoint(),
        current_justified_checkpoint: zero_checkpoint(),
        finalized_checkpoint: zero_checkpoint(),
        inactivity_scores: PackedList::repeat(0, n)?,
        current_sync_committee: empty_sync_committee(),
        next_sync_committee: empty_sync_committee(),
        latest_execution_payload_header: deneb::ExecutionPayloadHeader {
            block_hash: eth1_block_hash,
            ..empty_payload_header::<E>()
        },
        next_withdrawal_index: 0,
        next_withdrawal_validator_index: 0,
        historical_summaries: List::empty(),
        deposit_requests_start_index: n as u64,
        deposit_balance_to_consume: 0,
        exit_balance_to_consume: 0,
        earliest_exit_epoch: GENESIS_EPOCH,
        consolidation_balance_to_consume: 0,
        earliest_consolidation_epoch: GENESIS_EPOCH,
        pending_deposits: List::empty(),
        pending_partial_withdrawals: List::empty(),
        pending_consolidations: List::empty(),
        proposer_lookahead: Vector::from_elem(0)?,
    };

    // The same committee is current and next at genesis.
    let wrapped = BeaconState::Fulu(state);
    let (sync_committee, lookahead) = {
        let view = StateRef::new(&wrapped)?;
        let sync_committee = get_next_sync_committee(&view, &mut Caches::default())?;
        (sync_committee, initialize_proposer_lookahead(&view)?)
    };
    let BeaconState::Fulu(mut state) = wrapped else {
        return Err(Error::UnsupportedFork(wrapped.fork_name()).into());
    };
    state.current_sync_committee = sync_committee.clone();
    state.next_sync_committee = sync_committee;
    state.proposer_lookahead = Vector::new(lookahead)?;
    if fork == ForkName::Gloas {
        return Ok(BeaconState::Gloas(gloas_genesis_from_fulu(
            state,
            eth1_block_hash,
            spec,
        )?));
    }
    Ok(BeaconState::Fulu(state))
}

/// The Gloas genesis state made from the Fulu one the same validators give, as the spec's test
/// helper `create_genesis_state` builds it at Gloas: the Fulu state upgraded
/// (`upgrade_to_gloas`: the fork versions, the progressive lists, `latest_block_hash` =
/// the execution genesis block hash, every payload available, the PTC window), then the genesis
/// bid (an empty block hash, the execution genesis block as its parent, the root of empty
/// requests) and a latest block header that commits to a body carrying that bid.
///
/// [spec]: tests/core/pyspec/eth_consensus_specs/test/helpers/genesis.py (`create_genesis_state`)
fn gloas_genesis_from_fulu<E: EthSpec>(
    state: fulu::BeaconState<E>,
    eth1_block_hash: Root,
    spec: &ChainSpec,
) -> Result<gloas::BeaconState<E>, GenesisError> {
    let mut state = crate::gloas::fork::upgrade_to_gloas(state, spec)?;
    state.latest_block_hash = eth1_block_hash;
    state.latest_execution_payload_bid = gloas::ExecutionPayloadBid {
        parent_block_hash: eth1_block_hash,
        parent_block_root: Root::ZERO,
        block_hash: Root::ZERO,
        prev_randao: Root::ZERO,
        fee_recipient: types::Address::ZERO,
        gas_limit: 0,
        builder_index: 0,
        slot: GENESIS_SLOT,
        value: 0,
        execution_payment: 0,
        blob_kzg_commitments: Default::default(),
        execution_requests_root: gloas::ExecutionRequests::default().tree_hash_root(),
    };
    state.latest_block_header = phase0::BeaconBlockHeader {
        slot: GENESIS_SLOT,
        proposer_index: 0,
        parent_root: Root::ZERO,
        state_root: Root::ZERO,
        body_root: gloas_genesis_body::<E>(&state.latest_execution_payload_bid).tree_hash_root(),
    };
    Ok(state)
}

/// The Gloas genesis block's body: `BeaconBlockBody()` whose signed bid's message is the
/// genesis state's bid.
fn gloas_genesis_body<E: EthSpec>(bid: &gloas::ExecutionPayloadBid) -> gloas::BeaconBlockBody<E> {
    gloas::BeaconBlockBody {
        randao_reveal: BLSSignature::ZERO,
        eth1_data: zero_eth1_data(),
        graffiti: Root::ZERO,
        proposer_slashings: Default::default(),
        attester_slashings: Default::default(),
        attestations: Default::default(),
        deposits: Default::default(),
        voluntary_exits: Default::default(),
        sync_aggregate: electra::SyncAggregate {
            sync_committee_bits: BitVector::new(),
            sync_committee_signature: BLSSignature::ZERO,
        },
        bls_to_execution_changes: Default::default(),
        signed_execution_payload_bid: gloas::SignedExecutionPayloadBid {
            message: bid.clone(),
            signature: BLSSignature::ZERO,
        },
        payload_attestations: Default::default(),
        parent_execution_requests: Default::default(),
    }
}

/// The genesis block of an interop genesis state of either fork: [`interop_genesis_block`] for
/// a Fulu state; for a Gloas state, the same empty block whose body carries the state's genesis
/// bid (the spec's `create_signed_genesis_block`), the body its `latest_block_header` commits
/// to. `state_root` is the genesis state's root.
///
/// [spec]: phase0/fork-choice.md#get_forkchoice_store
pub fn interop_genesis_block_of<E: EthSpec>(
    state: &BeaconState<E>,
    state_root: Root,
) -> types::SignedBeaconBlock<E> {
    match state {
        BeaconState::Gloas(state) => types::SignedBeaconBlock::Gloas(gloas::SignedBeaconBlock {
            message: gloas::BeaconBlock {
                slot: GENESIS_SLOT,
                proposer_index: 0,
                parent_root: Root::ZERO,
                state_root,
                body: gloas_genesis_body::<E>(&state.latest_execution_payload_bid),
            },
            signature: BLSSignature::ZERO,
        }),
        BeaconState::Phase0(_)
        | BeaconState::Altair(_)
        | BeaconState::Bellatrix(_)
        | BeaconState::Capella(_)
        | BeaconState::Deneb(_)
        | BeaconState::Electra(_)
        | BeaconState::Fulu(_) => interop_genesis_block::<E>(state_root),
    }
}

/// An `ExecutionPayloadHeader()` with every field zero or empty.
fn empty_payload_header<E: EthSpec>() -> deneb::ExecutionPayloadHeader<E> {
    deneb::ExecutionPayloadHeader {
        parent_hash: Root::ZERO,
        fee_recipient: types::Address::ZERO,
        state_root: Root::ZERO,
        receipts_root: Root::ZERO,
        logs_bloom: FixedVector::from_elem(0),
        prev_randao: Root::ZERO,
        block_number: 0,
        gas_limit: 0,
        gas_used: 0,
        timestamp: 0,
        extra_data: VariableList::empty(),
        base_fee_per_gas: U256::ZERO,
        block_hash: Root::ZERO,
        transactions_root: Root::ZERO,
        withdrawals_root: Root::ZERO,
        blob_gas_used: 0,
        excess_blob_gas: 0,
    }
}

/// `BeaconBlockBody()` of Electra (and Fulu): every field zero or empty.
/// The genesis block of an interop Fulu genesis state: `BeaconBlock(state_root=
/// hash_tree_root(genesis_state))` with the empty body the state's `latest_block_header`
/// commits to, unsigned (the spec's anchor block; nobody verifies its signature). `state_root`
/// is the genesis state's root.
///
/// [spec]: phase0/fork-choice.md#get_forkchoice_store
pub fn interop_genesis_block<E: EthSpec>(state_root: Root) -> types::SignedBeaconBlock<E> {
    types::SignedBeaconBlock::Fulu(electra::SignedBeaconBlock {
        message: electra::BeaconBlock {
            slot: GENESIS_SLOT,
            proposer_index: 0,
            parent_root: Root::ZERO,
            state_root,
            body: empty_electra_body::<E>(),
        },
        signature: BLSSignature::ZERO,
    })
}

fn empty_electra_body<E: EthSpec>() -> electra::BeaconBlockBody<E> {
    electra::BeaconBlockBody {
        randao_reveal: BLSSignature::ZERO,
        eth1_data: zero_eth1_data(),
        graffiti: Root::ZERO,
        proposer_slashings: VariableList::empty(),
        attester_slashings: VariableList::empty(),
        attestations: VariableList::empty(),
        deposits: VariableList::empty(),
        voluntary_exits: VariableList::empty(),
        sync_aggregate: electra::SyncAggregate {
            sync_committee_bits: BitVector::new(),
            sync_committee_signature: BLSSignature::ZERO,
        },
        execution_payload: deneb::ExecutionPayload {
            parent_hash: Root::ZERO,
            fee_recipient: types::Address::ZERO,
            state_root: Root::ZERO,
            receipts_root: Root::ZERO,
            logs_bloom: FixedVector::from_elem(0),
            prev_randao: Root::ZERO,
            block_number: 0,
            gas_limit: 0,
            gas_used: 0,
            timestamp: 0,
            extra_data: VariableList::empty(),
            base_fee_per_gas: U256::ZERO,
            block_hash: Root::ZERO,
            transactions: VariableList::empty(),
            withdrawals: VariableList::empty(),
            blob_gas_used: 0,
            excess_blob_gas: 0,
        },
        bls_to_execution_changes: VariableList::empty(),
        blob_kzg_commitments: VariableList::empty(),
        execution_requests: electra::ExecutionRequests {
            deposits: VariableList::empty(),
            withdrawals: VariableList::empty(),
            consolidations: VariableList::empty(),
        },
    }
}
