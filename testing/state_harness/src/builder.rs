//! Builds valid signed blocks against a [`CachedBeaconState`].
//!
//! [`build_block`] follows what a proposer does (spec `validator.md`): advance a copy of the
//! state to the slot, find the proposer, reveal randao, vote the current eth1 data, pack the
//! operations asked for, build an execution payload that matches the state (the execution
//! layer's verdict is assumed valid), run the block through `state_processing` to learn the
//! post-state root, and sign. Every signature is real (interop keys); aggregates are signed with
//! the sum of the signers' secret keys.
//!
//! [spec]: phase0/validator.md#block-proposal, electra/validator.md#block-and-sidecar-proposal

use bls::PublicKeyBytes;
use ssz_types::{BitList, BitVector, FixedVector, VariableList};
use state_processing::{
    CachedBeaconState, StateRef,
    common::{
        compute_epoch_at_slot, get_beacon_proposer_index, get_block_root, get_block_root_at_slot,
        get_current_epoch, get_domain, get_randao_mix, validator,
    },
    per_block::{AlwaysValid, VerifySignatures, process_block},
    per_slot::process_slots,
};
use tree_hash::TreeHash;
use typenum::Unsigned;
use types::{
    Address, B256, BLSSignature, ChainSpec, Epoch, EthSpec, ForkName, Gwei, KZGCommitment, Root,
    Slot, ValidatorIndex,
    electra::{
        Attestation, AttestationData, AttesterSlashing, BLSToExecutionChange, BeaconBlock,
        BeaconBlockBody, BeaconBlockHeader, Checkpoint, ConsolidationRequest, DepositMessage,
        DepositRequest, Eth1Data, ExecutionPayload, ExecutionRequests, IndexedAttestation,
        ProposerSlashing, SignedBLSToExecutionChange, SignedBeaconBlock, SignedBeaconBlockHeader,
        SignedVoluntaryExit, SyncAggregate, VoluntaryExit, WithdrawalRequest,
    },
    signing::{
        DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, DOMAIN_BLS_TO_EXECUTION_CHANGE,
        DOMAIN_DEPOSIT, DOMAIN_RANDAO, DOMAIN_SYNC_COMMITTEE, DOMAIN_VOLUNTARY_EXIT,
        compute_domain, compute_signing_root,
    },
};

use crate::{
    HarnessError,
    keys::{aggregate_interop_secret_key, interop_pubkey, interop_secret_key},
    withdrawals::get_expected_withdrawals,
};

/// The BLS signature of the point at infinity: the sync aggregate's signature with no
/// participants.
pub const G2_POINT_AT_INFINITY: [u8; 96] = {
    let mut bytes = [0u8; 96];
    bytes[0] = 0xc0;
    bytes
};

/// One on-chain aggregate attestation: some committees of one slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttestationSpec {
    /// The slot attested to; it must be before the block's slot and in its epoch or the one
    /// before.
    pub slot: Slot,
    /// Which committees of the slot: the committees are cut into `parts` contiguous groups and
    /// this attestation covers group `part`. `(0, 1)` is every committee. A group with no
    /// committee (more parts than committees) yields no attestation.
    pub part: (u64, u64),
    /// How many members of each committee take part, from the first (`None`: all).
    pub participants_per_committee: Option<usize>,
    /// A head vote other than the canonical block root of `slot` (a wrong head vote is valid,
    /// it only forfeits the head reward).
    pub head_override: Option<Root>,
}

impl AttestationSpec {
    /// Every member of every committee of `slot`.
    pub fn whole_slot(slot: Slot) -> Self {
        Self {
            slot,
            part: (0, 1),
            participants_per_committee: None,
            head_override: None,
        }
    }

    /// `parts` attestations that together cover every committee of `slot` once.
    pub fn slot_in_parts(slot: Slot, parts: u64) -> Vec<Self> {
        (0..parts)
            .map(|part| Self {
                part: (part, parts),
                ..Self::whole_slot(slot)
            })
            .collect()
    }
}

/// Who signs the sync aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncParticipation {
    /// No bits set; the signature is the point at infinity.
    Empty,
    /// Every member of the current sync committee.
    #[default]
    Full,
    /// Every member but every `n`-th (positions 0, n, 2n, … are absent).
    AllButEveryNth(usize),
}

/// A deposit request (EIP-6110) for interop key `key_index`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepositRequestSpec {
    /// Whose key: a new validator (an index past the registry) or a top-up.
    pub key_index: usize,
    /// The amount deposited.
    pub amount: Gwei,
    /// The credentials of a new validator.
    pub withdrawal_credentials: Root,
    /// Sign the deposit message (a bad signature is valid in a block: the deposit is dropped
    /// at epoch processing).
    pub valid_signature: bool,
}

impl DepositRequestSpec {
    /// A new validator with `0x01` (or `0x02` when `compounding`) credentials to `address`.
    pub fn new_validator(
        key_index: usize,
        amount: Gwei,
        address: Address,
        compounding: bool,
    ) -> Self {
        let mut credentials = [0u8; 32];
        credentials[0] = if compounding { 0x02 } else { 0x01 };
        credentials[12..].copy_from_slice(address.as_slice());
        Self {
            key_index,
            amount,
            withdrawal_credentials: B256::from(credentials),
            valid_signature: true,
        }
    }
}

/// What a block should carry besides its mandatory fields.
#[derive(Debug, Clone, Default)]
pub struct BlockContents {
    /// Aggregate attestations, in block order.
    pub attestations: Vec<AttestationSpec>,
    /// Who signs the sync aggregate.
    pub sync_aggregate: SyncParticipation,
    /// Proposers to slash for two conflicting headers at the slot before the block.
    pub proposer_slashings: Vec<ValidatorIndex>,
    /// Sets of validators to slash for a double vote (each set one `AttesterSlashing`).
    pub attester_slashings: Vec<Vec<ValidatorIndex>>,
    /// Validators that exit voluntarily (signed for the current epoch).
    pub voluntary_exits: Vec<ValidatorIndex>,
    /// `(validator, address)`: switch a validator's `0x00` credentials to `0x01` at `address`.
    /// The withdrawal key is taken to be the validator's own interop key (as interop genesis
    /// sets it up).
    pub bls_to_execution_changes: Vec<(ValidatorIndex, Address)>,
    /// Deposit requests, numbered from `deposit_request_start`.
    pub deposit_requests: Vec<DepositRequestSpec>,
    /// The index of the first deposit request; `None`: the state's
    /// `deposit_requests_start_index` when set, else `eth1_data.deposit_count`.
    pub deposit_request_start: Option<u64>,
    /// `(validator, amount)`: withdrawal requests from the validator's own execution address
    /// (amount 0 is a full exit).
    pub withdrawal_requests: Vec<(ValidatorIndex, Gwei)>,
    /// `(source, target)`: consolidation requests from the source's execution address
    /// (`source == target` asks to switch to compounding credentials).
    pub consolidation_requests: Vec<(ValidatorIndex, ValidatorIndex)>,
    /// The eth1 vote; `None`: the state's current `eth1_data`.
    pub eth1_data: Option<Eth1Data>,
    /// Graffiti.
    pub graffiti: Root,
    /// Blob KZG commitments (the payload carries no blob transactions; an execution engine
    /// that checks versioned hashes against the payload would refuse such a block).
    pub blob_kzg_commitments: Vec<KZGCommitment>,
}

/// A block built by [`build_block`] with the state after it.
#[derive(Debug, Clone)]
pub struct BuiltBlock<E: EthSpec> {
    /// The signed block, of the fork of its slot.
    pub block: types::SignedBeaconBlock<E>,
    /// The post-state (`state_transition(pre, block)`), its caches warm.
    pub post: CachedBeaconState<E>,
    /// The post-state root (equal to `block.message.state_root`).
    pub state_root: Root,
}

pub(crate) fn sig(signature: bls::Signature) -> BLSSignature {
    BLSSignature::from(signature.serialize())
}

fn too_many<N: Unsigned>(what: &'static str, count: usize) -> Result<(), HarnessError> {
    if count > N::to_usize() {
        return Err(HarnessError::TooMany {
            what,
            count,
            limit: N::to_usize(),
        });
    }
    Ok(())
}

fn list<T, N: Unsigned>(
    what: &'static str,
    items: Vec<T>,
) -> Result<VariableList<T, N>, HarnessError> {
    too_many::<N>(what, items.len())?;
    VariableList::new(items).map_err(|_| HarnessError::TooMany {
        what,
        count: 0,
        limit: N::to_usize(),
    })
}

fn execution_address(
    state: &StateRef<'_, impl EthSpec>,
    index: ValidatorIndex,
) -> Result<Address, HarnessError> {
    let v = validator(state, index)?;
    if !matches!(v.withdrawal_credentials[0], 0x01 | 0x02) {
        return Err(HarnessError::NoExecutionAddress(index));
    }
    Ok(Address::from_slice(&v.withdrawal_credentials[12..]))
}

/// Builds a valid signed block at `slot` on `pre` with `contents`.
///
/// `pre` is left as it was; the post-state comes back with the block.
pub fn build_block<E: EthSpec>(
    pre: &CachedBeaconState<E>,
    slot: Slot,
    contents: &BlockContents,
    spec: &ChainSpec,
) -> Result<BuiltBlock<E>, HarnessError> {
    let state_slot = *pre.state.slot();
    if slot <= state_slot && !(slot == 0 && state_slot == 0) {
        return Err(HarnessError::SlotNotAfterState { slot, state_slot });
    }
    let mut state = pre.clone();
    if slot > state_slot {
        process_slots(&mut state, slot, spec).map_err(|e| HarnessError::Slots {
            slot,
            error: format!("{e:?}"),
        })?;
    }

    let block = {
        let CachedBeaconState { state: raw, caches } = &mut state;
        let view = StateRef::new(raw)?;
        let proposer_index = get_beacon_proposer_index(&view, caches)?;
        let epoch = get_current_epoch(&view);
        let parent_root = view.latest_block_header.tree_hash_root();

        let randao_reveal = sig(interop_secret_key(proposer_index as usize)
            .sign(compute_signing_root(&epoch, get_domain(&view, DOMAIN_RANDAO, None)).as_slice()));

        let attestations = contents
            .attestations
            .iter()
            .map(|a| build_attestation(&view, caches, a))
            .filter_map(Result::transpose)
            .collect::<Result<Vec<_>, _>>()?;

        let sync_aggregate = build_sync_aggregate(&view, caches, contents.sync_aggregate, slot)?;

        let proposer_slashings = contents
            .proposer_slashings
            .iter()
            .map(|&index| build_proposer_slashing(&view, index, slot))
            .collect::<Result<Vec<_>, _>>()?;

        let attester_slashings = contents
            .attester_slashings
            .iter()
            .map(|indices| build_attester_slashing(&view, indices, slot))
            .collect::<Result<Vec<_>, _>>()?;

        let voluntary_exits = build_voluntary_exits(&view, &contents.voluntary_exits, epoch, spec);
        let bls_to_execution_changes =
            build_bls_to_execution_changes(&view, &contents.bls_to_execution_changes, spec);

        let execution_requests = build_execution_requests(&view, contents, spec)?;
        let execution_payload = build_execution_payload::<E>(&view, slot, spec)?;

        BeaconBlock {
            slot,
            proposer_index,
            parent_root,
            state_root: Root::ZERO,
            body: BeaconBlockBody {
                randao_reveal,
                eth1_data: contents
                    .eth1_data
                    .clone()
                    .unwrap_or_else(|| view.eth1_data.clone()),
                graffiti: contents.graffiti,
                proposer_slashings: list("proposer slashings", proposer_slashings)?,
                attester_slashings: list("attester slashings", attester_slashings)?,
                attestations: list("attestations", attestations)?,
                deposits: VariableList::empty(),
                voluntary_exits: list("voluntary exits", voluntary_exits)?,
                sync_aggregate,
                execution_payload,
                bls_to_execution_changes: list(
                    "BLS-to-execution changes",
                    bls_to_execution_changes,
                )?,
                blob_kzg_commitments: list(
                    "blob KZG commitments",
                    contents.blob_kzg_commitments.clone(),
                )?,
                execution_requests,
            },
        }
    };

    let mut block = block;
    {
        let (mut view, caches) = state.view_mut()?;
        process_block(
            &mut view,
            caches,
            &block,
            VerifySignatures::None,
            &AlwaysValid,
            spec,
        )
        .map_err(|e| HarnessError::Block {
            slot,
            error: format!("{e:?}"),
        })?;
    }
    let state_root = state.hash_tree_root()?;
    block.state_root = state_root;

    let view = state.view()?;
    let block = sign_block(block, &view, spec);
    Ok(BuiltBlock {
        block,
        post: state,
        state_root,
    })
}

/// Signs `message` with its proposer's interop key, as a block of the fork of its slot, with the
/// fork and genesis validators root of `state` (any state of the chain in the block's fork).
pub fn sign_block<E: EthSpec>(
    message: BeaconBlock<E>,
    state: &StateRef<'_, E>,
    spec: &ChainSpec,
) -> types::SignedBeaconBlock<E> {
    let domain = get_domain(
        state,
        DOMAIN_BEACON_PROPOSER,
        Some(compute_epoch_at_slot::<E>(message.slot)),
    );
    let signature = sig(interop_secret_key(message.proposer_index as usize)
        .sign(compute_signing_root(&message, domain).as_slice()));
    let slot = message.slot;
    let signed = SignedBeaconBlock { message, signature };
    match spec.fork_name_at_slot::<E>(slot) {
        ForkName::Electra => types::SignedBeaconBlock::Electra(signed),
        ForkName::Fulu => types::SignedBeaconBlock::Fulu(signed),
        fork @ (ForkName::Phase0
        | ForkName::Altair
        | ForkName::Bellatrix
        | ForkName::Capella
        | ForkName::Deneb
        | ForkName::Gloas) => {
            panic!("the harness builds Electra and Fulu blocks, not {fork} blocks")
        }
    }
}

/// The checkpoint an attestation of `slot` votes as target, and the source that goes with it.
pub(crate) fn ffg_vote<E: EthSpec>(
    state: &StateRef<'_, E>,
    slot: Slot,
) -> Result<(Checkpoint, Checkpoint), HarnessError> {
    let target_epoch = compute_epoch_at_slot::<E>(slot);
    let target = Checkpoint {
        epoch: target_epoch,
        root: get_block_root(state, target_epoch)?,
    };
    let source = if target_epoch == get_current_epoch(state) {
        state.current_justified_checkpoint.clone()
    } else {
        state.previous_justified_checkpoint.clone()
    };
    Ok((source, target))
}

fn build_attestation<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut state_processing::Caches,
    spec_: &AttestationSpec,
) -> Result<Option<Attestation<E>>, HarnessError> {
    let committees = caches.committees(state, compute_epoch_at_slot::<E>(spec_.slot))?;
    let count = committees.committees_per_slot();
    let (part, parts) = spec_.part;
    let chosen: Vec<u64> = (0..count)
        .filter(|c| c * parts.max(1) / count == part)
        .collect();
    if chosen.is_empty() {
        // More parts than committees: this part is empty, and an attestation of no committee
        // is invalid.
        return Ok(None);
    }
    let (source, target) = ffg_vote(state, spec_.slot)?;
    let data = AttestationData {
        slot: spec_.slot,
        index: 0,
        beacon_block_root: match spec_.head_override {
            Some(root) => root,
            None => get_block_root_at_slot(state, spec_.slot)?,
        },
        source,
        target,
    };

    let mut bits: Vec<bool> = Vec::new();
    let mut signers: Vec<u64> = Vec::new();
    let mut committee_bits = BitVector::<E::MaxCommitteesPerSlot>::new();
    for &index in &chosen {
        committee_bits
            .set(index as usize, true)
            .map_err(|_| HarnessError::TooMany {
                what: "committees",
                count: index as usize + 1,
                limit: E::MaxCommitteesPerSlot::to_usize(),
            })?;
        let committee = committees.get_beacon_committee(spec_.slot, index)?;
        let take = spec_.participants_per_committee.unwrap_or(committee.len());
        for (position, &member) in committee.iter().enumerate() {
            let on = position < take;
            bits.push(on);
            if on {
                signers.push(member);
            }
        }
    }
    let mut aggregation_bits = BitList::<E::MaxValidatorsPerSlot>::with_capacity(bits.len())
        .map_err(|_| HarnessError::TooMany {
            what: "attesters in one attestation",
            count: bits.len(),
            limit: E::MaxValidatorsPerSlot::to_usize(),
        })?;
    for (i, on) in bits.iter().enumerate() {
        if *on {
            aggregation_bits
                .set(i, true)
                .expect("index below the capacity the list was made with");
        }
    }
    let domain = get_domain(state, DOMAIN_BEACON_ATTESTER, Some(data.target.epoch));
    let root = compute_signing_root(&data, domain);
    let signature = if signers.is_empty() {
        BLSSignature::from(G2_POINT_AT_INFINITY)
    } else {
        sig(aggregate_interop_secret_key(signers)?.sign(root.as_slice()))
    };
    Ok(Some(Attestation {
        aggregation_bits,
        data,
        signature,
        committee_bits,
    }))
}

pub(crate) fn build_sync_aggregate<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &mut state_processing::Caches,
    participation: SyncParticipation,
    slot: Slot,
) -> Result<SyncAggregate<E>, HarnessError> {
    let mut bits = BitVector::<E::SyncCommitteeSize>::new();
    let mut signers = Vec::new();
    for (position, pubkey) in state.current_sync_committee.pubkeys.iter().enumerate() {
        let on = match participation {
            SyncParticipation::Empty => false,
            SyncParticipation::Full => true,
            SyncParticipation::AllButEveryNth(n) => n == 0 || position % n != 0,
        };
        if on {
            let index = caches
                .validator_index(state, &PublicKeyBytes(pubkey.0))
                .ok_or(HarnessError::UnknownSyncCommitteeMember(position))?;
            bits.set(position, true)
                .expect("position below SYNC_COMMITTEE_SIZE");
            signers.push(index);
        }
    }
    let signature = if signers.is_empty() {
        BLSSignature::from(G2_POINT_AT_INFINITY)
    } else {
        let previous_slot = slot.max(1) - 1;
        let root = get_block_root_at_slot(state, previous_slot)?;
        let domain = get_domain(
            state,
            DOMAIN_SYNC_COMMITTEE,
            Some(compute_epoch_at_slot::<E>(previous_slot)),
        );
        sig(aggregate_interop_secret_key(signers)?
            .sign(compute_signing_root(&root, domain).as_slice()))
    };
    Ok(SyncAggregate {
        sync_committee_bits: bits,
        sync_committee_signature: signature,
    })
}

pub(crate) fn build_proposer_slashing<E: EthSpec>(
    state: &StateRef<'_, E>,
    proposer_index: ValidatorIndex,
    block_slot: Slot,
) -> Result<ProposerSlashing, HarnessError> {
    let header_slot = block_slot.saturating_sub(1);
    let domain = get_domain(
        state,
        DOMAIN_BEACON_PROPOSER,
        Some(compute_epoch_at_slot::<E>(header_slot)),
    );
    let key = interop_secret_key(proposer_index as usize);
    let header = |body_byte: u8| {
        let message = BeaconBlockHeader {
            slot: header_slot,
            proposer_index,
            parent_root: B256::repeat_byte(0x51),
            state_root: B256::repeat_byte(0x52),
            body_root: B256::repeat_byte(body_byte),
        };
        let signature = sig(key.sign(compute_signing_root(&message, domain).as_slice()));
        SignedBeaconBlockHeader { message, signature }
    };
    Ok(ProposerSlashing {
        signed_header_1: header(1),
        signed_header_2: header(2),
    })
}

pub(crate) fn build_attester_slashing<E: EthSpec>(
    state: &StateRef<'_, E>,
    indices: &[ValidatorIndex],
    block_slot: Slot,
) -> Result<AttesterSlashing<E>, HarnessError> {
    let mut sorted = indices.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let slot = block_slot.saturating_sub(1);
    let (source, target) = ffg_vote(state, slot)?;
    let domain = get_domain(state, DOMAIN_BEACON_ATTESTER, Some(target.epoch));
    let key = aggregate_interop_secret_key(sorted.iter().copied())?;
    let indexed = |head_byte: u8| -> Result<IndexedAttestation<E>, HarnessError> {
        // A double vote: the same target, two different heads.
        let data = AttestationData {
            slot,
            index: 0,
            beacon_block_root: B256::repeat_byte(head_byte),
            source: source.clone(),
            target: target.clone(),
        };
        let signature = sig(key.sign(compute_signing_root(&data, domain).as_slice()));
        Ok(IndexedAttestation {
            attesting_indices: list("attesting indices", sorted.clone())?,
            data,
            signature,
        })
    };
    Ok(AttesterSlashing {
        attestation_1: indexed(0xa1)?,
        attestation_2: indexed(0xa2)?,
    })
}

pub(crate) fn build_execution_requests<E: EthSpec>(
    state: &StateRef<'_, E>,
    contents: &BlockContents,
    spec: &ChainSpec,
) -> Result<ExecutionRequests<E>, HarnessError> {
    // Only Electra and later states have the field, and only they build execution requests.
    let deposit_requests_start_index = state
        .deposit_requests_start_index
        .copied()
        .unwrap_or(state_processing::common::UNSET_DEPOSIT_REQUESTS_START_INDEX);
    let start = contents.deposit_request_start.unwrap_or(
        if deposit_requests_start_index
            == state_processing::common::UNSET_DEPOSIT_REQUESTS_START_INDEX
        {
            state.eth1_data.deposit_count
        } else {
            deposit_requests_start_index
        },
    );
    // Deposits are signed over the genesis fork version and a zero root, on every fork.
    let deposit_domain = spec.compute_genesis_domain(DOMAIN_DEPOSIT);
    let deposits = contents
        .deposit_requests
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let pubkey: types::BLSPubkey = interop_pubkey(d.key_index).0.into();
            let message = DepositMessage {
                pubkey,
                withdrawal_credentials: d.withdrawal_credentials,
                amount: d.amount,
            };
            let signature = if d.valid_signature {
                sig(interop_secret_key(d.key_index)
                    .sign(compute_signing_root(&message, deposit_domain).as_slice()))
            } else {
                sig(interop_secret_key(d.key_index).sign(b"not the deposit message"))
            };
            DepositRequest {
                pubkey,
                withdrawal_credentials: d.withdrawal_credentials,
                amount: d.amount,
                signature,
                index: start + k as u64,
            }
        })
        .collect::<Vec<_>>();
    let withdrawals = contents
        .withdrawal_requests
        .iter()
        .map(|&(index, amount)| {
            Ok(WithdrawalRequest {
                source_address: execution_address(state, index)?,
                validator_pubkey: validator(state, index)?.pubkey,
                amount,
            })
        })
        .collect::<Result<Vec<_>, HarnessError>>()?;
    let consolidations = contents
        .consolidation_requests
        .iter()
        .map(|&(source, target)| {
            Ok(ConsolidationRequest {
                source_address: execution_address(state, source)?,
                source_pubkey: validator(state, source)?.pubkey,
                target_pubkey: validator(state, target)?.pubkey,
            })
        })
        .collect::<Result<Vec<_>, HarnessError>>()?;
    Ok(ExecutionRequests {
        deposits: list("deposit requests", deposits)?,
        withdrawals: list("withdrawal requests", withdrawals)?,
        consolidations: list("consolidation requests", consolidations)?,
    })
}

fn build_execution_payload<E: EthSpec>(
    state: &StateRef<'_, E>,
    slot: Slot,
    spec: &ChainSpec,
) -> Result<ExecutionPayload<E>, HarnessError> {
    let parent =
        state
            .latest_execution_payload_header
            .ok_or(state_processing::Error::MissingField {
                field: "latest_execution_payload_header",
                fork: state.fork_name,
            })?;
    let epoch: Epoch = get_current_epoch(state);
    let withdrawals = get_expected_withdrawals(state)?;
    let mut preimage = [0u8; 40];
    preimage[..32].copy_from_slice(parent.block_hash.as_slice());
    preimage[32..].copy_from_slice(&slot.to_le_bytes());
    Ok(ExecutionPayload {
        parent_hash: parent.block_hash,
        fee_recipient: Address::repeat_byte(0xfe),
        state_root: B256::repeat_byte(0x5e),
        receipts_root: B256::repeat_byte(0x8e),
        logs_bloom: FixedVector::default(),
        prev_randao: get_randao_mix(state, epoch),
        block_number: parent.block_number + 1,
        gas_limit: parent.gas_limit,
        gas_used: 0,
        timestamp: spec.compute_time_at_slot(*state.genesis_time, slot),
        extra_data: VariableList::empty(),
        base_fee_per_gas: parent.base_fee_per_gas,
        block_hash: B256::from(ethereum_hashing::hash_fixed(&preimage)),
        transactions: VariableList::empty(),
        withdrawals: list("withdrawals", withdrawals)?,
        blob_gas_used: 0,
        excess_blob_gas: 0,
    })
}

/// Signed voluntary exits of `validators` at `epoch` (signed with Capella's fork version, as
/// EIP-7044 fixes it from Deneb on).
pub(crate) fn build_voluntary_exits<E: EthSpec>(
    view: &StateRef<'_, E>,
    validators: &[ValidatorIndex],
    epoch: Epoch,
    spec: &ChainSpec,
) -> Vec<SignedVoluntaryExit> {
    let gvr = *view.genesis_validators_root;
    let exit_domain = compute_domain(DOMAIN_VOLUNTARY_EXIT, spec.capella_fork_version, gvr);
    validators
        .iter()
        .map(|&validator_index| {
            let message = VoluntaryExit {
                epoch,
                validator_index,
            };
            let root = compute_signing_root(&message, exit_domain);
            SignedVoluntaryExit {
                message,
                signature: sig(interop_secret_key(validator_index as usize).sign(root.as_slice())),
            }
        })
        .collect()
}

/// Signed BLS-to-execution changes of `(validator, address)` pairs (signed with the genesis fork
/// version, as the spec's domain for them is).
pub(crate) fn build_bls_to_execution_changes<E: EthSpec>(
    view: &StateRef<'_, E>,
    changes: &[(ValidatorIndex, Address)],
    spec: &ChainSpec,
) -> Vec<SignedBLSToExecutionChange> {
    let gvr = *view.genesis_validators_root;
    let change_domain = compute_domain(
        DOMAIN_BLS_TO_EXECUTION_CHANGE,
        spec.genesis_fork_version,
        gvr,
    );
    changes
        .iter()
        .map(|&(validator_index, to_execution_address)| {
            let key = interop_secret_key(validator_index as usize);
            let message = BLSToExecutionChange {
                validator_index,
                from_bls_pubkey: key.public_key().compress().0.into(),
                to_execution_address,
            };
            let root = compute_signing_root(&message, change_domain);
            SignedBLSToExecutionChange {
                message,
                signature: sig(key.sign(root.as_slice())),
            }
        })
        .collect()
}
