//! The execution payload envelope: the builder's (or self-building proposer's) delivery of the
//! payload a block's bid committed to. Gloas never applies it to the state: fork choice and
//! gossip only *verify* it against the post-state of its block, and its effects arrive with the
//! next block (`process_parent_execution_payload`).
//!
//! [`verify_execution_payload_envelope`] is pure: instead of calling the execution engine it
//! returns the `NewPayloadRequest` to hand it, and the caller asks the engine.
//!
//! [spec]: gloas/fork-choice.md#new-verify_execution_payload_envelope

use tree_hash::TreeHash;
use types::{
    ChainSpec, EthSpec, Root, Slot,
    gloas::{BUILDER_INDEX_SELF_BUILD, NewPayloadRequest, SignedExecutionPayloadEnvelope},
    signing::{DOMAIN_BEACON_BUILDER, compute_signing_root},
};

use crate::{
    Caches, Error,
    common::get_domain,
    gloas::builders::builder,
    per_block::{VerifySignatures, kzg_commitment_to_versioned_hash},
    view::StateRef,
};

/// A failed check of `verify_execution_payload_envelope`.
///
/// [spec]: gloas/fork-choice.md#new-verify_execution_payload_envelope
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecutionPayloadEnvelopeInvalid {
    /// `verify_execution_payload_envelope_signature(state, signed_envelope)`.
    #[error("the envelope signature is invalid")]
    InvalidSignature,
    /// `envelope.beacon_block_root == hash_tree_root(header)` (the latest header with the state
    /// root filled in).
    #[error("envelope block root {envelope} is not the block's root {expected}")]
    BeaconBlockRootMismatch {
        /// `envelope.beacon_block_root`.
        envelope: Root,
        /// The root of the state's latest block.
        expected: Root,
    },
    /// `envelope.parent_beacon_block_root == state.latest_block_header.parent_root`.
    #[error("envelope parent block root {envelope} is not the block's parent {expected}")]
    ParentBeaconBlockRootMismatch {
        /// `envelope.parent_beacon_block_root`.
        envelope: Root,
        /// `state.latest_block_header.parent_root`.
        expected: Root,
    },
    /// `envelope.builder_index == bid.builder_index`.
    #[error("envelope builder {envelope} is not the bid's builder {bid}")]
    BuilderIndexMismatch {
        /// `envelope.builder_index`.
        envelope: u64,
        /// `state.latest_execution_payload_bid.builder_index`.
        bid: u64,
    },
    /// `payload.prev_randao == bid.prev_randao`.
    #[error("payload prev_randao {payload} is not the bid's {bid}")]
    PrevRandaoMismatch {
        /// `payload.prev_randao`.
        payload: Root,
        /// `bid.prev_randao`.
        bid: Root,
    },
    /// `payload.gas_limit == bid.gas_limit`.
    #[error("payload gas limit {payload} is not the bid's {bid}")]
    GasLimitMismatch {
        /// `payload.gas_limit`.
        payload: u64,
        /// `bid.gas_limit`.
        bid: u64,
    },
    /// `payload.block_hash == bid.block_hash`.
    #[error("payload block hash {payload} is not the bid's {bid}")]
    BlockHashMismatch {
        /// `payload.block_hash`.
        payload: Root,
        /// `bid.block_hash`.
        bid: Root,
    },
    /// `hash_tree_root(envelope.execution_requests) == bid.execution_requests_root`.
    #[error("execution requests root {envelope} is not the bid's {bid}")]
    ExecutionRequestsRootMismatch {
        /// `hash_tree_root(envelope.execution_requests)`.
        envelope: Root,
        /// `bid.execution_requests_root`.
        bid: Root,
    },
    /// `payload.slot_number == state.slot`.
    #[error("payload slot number {payload} is not the state slot {state}")]
    SlotNumberMismatch {
        /// `payload.slot_number`.
        payload: Slot,
        /// `state.slot`.
        state: Slot,
    },
    /// `payload.parent_hash == state.latest_block_hash`.
    #[error("payload parent hash {payload} is not the latest block hash {expected}")]
    ParentHashMismatch {
        /// `payload.parent_hash`.
        payload: Root,
        /// `state.latest_block_hash`.
        expected: Root,
    },
    /// `payload.timestamp == compute_time_at_slot(state, state.slot)`.
    #[error("payload timestamp {payload} is not the slot's time {expected}")]
    TimestampMismatch {
        /// `payload.timestamp`.
        payload: u64,
        /// The slot's start time, in seconds.
        expected: u64,
    },
    /// `hash_tree_root(payload.withdrawals) == hash_tree_root(state.payload_expected_withdrawals)`.
    #[error("payload withdrawals are not the withdrawals the block debited")]
    WithdrawalsMismatch,
    /// A helper failed (an unknown builder, a broken state).
    #[error(transparent)]
    State(#[from] Error),
}

/// `verify_execution_payload_envelope_signature(state, signed_envelope)`: signed by the builder,
/// or for a self-build by the block's proposer (`DOMAIN_BEACON_BUILDER`). Undecodable keys or
/// signatures are invalid.
///
/// [spec]: gloas/beacon-chain.md#new-verify_execution_payload_envelope_signature
pub fn verify_execution_payload_envelope_signature<E: EthSpec>(
    state: &StateRef<'_, E>,
    caches: &Caches,
    signed_envelope: &SignedExecutionPayloadEnvelope<E>,
) -> Result<bool, Error> {
    let builder_index = signed_envelope.message.builder_index;
    let pubkey = if builder_index == BUILDER_INDEX_SELF_BUILD {
        match caches.pubkey(state, state.latest_block_header.proposer_index) {
            Ok(key) => key,
            Err(Error::InvalidPubkey(_)) => return Ok(false),
            Err(e) => return Err(e),
        }
    } else {
        let bytes = builder(&state.gloas()?, builder_index)?.pubkey;
        match bls::PublicKeyBytes(bytes.0).decompress() {
            Ok(key) => key,
            Err(_) => return Ok(false),
        }
    };
    let Ok(signature) = bls::Signature::deserialize(signed_envelope.signature.as_slice()) else {
        return Ok(false);
    };
    let domain = get_domain(state, DOMAIN_BEACON_BUILDER, None);
    let signing_root = compute_signing_root(&signed_envelope.message, domain);
    Ok(bls::verify(&pubkey, signing_root.as_slice(), &signature))
}

/// `verify_execution_payload_envelope(state, signed_envelope, execution_engine)` without the
/// engine: every consensus check of the envelope against `state`, the post-state of its block
/// (whose root, `hash_tree_root(state)`, the caller passes as `state_root`). On success, the
/// `NewPayloadRequest` whose verdict (`verify_and_notify_new_payload`) decides the envelope.
///
/// [spec]: gloas/fork-choice.md#new-verify_execution_payload_envelope
pub fn verify_execution_payload_envelope<E: EthSpec>(
    state: &StateRef<'_, E>,
    state_root: Root,
    caches: &Caches,
    signed_envelope: &SignedExecutionPayloadEnvelope<E>,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<NewPayloadRequest<E>, ExecutionPayloadEnvelopeInvalid> {
    let envelope = &signed_envelope.message;
    let payload = &envelope.payload;

    if verify.is_enabled()
        && !verify_execution_payload_envelope_signature(state, caches, signed_envelope)?
    {
        return Err(ExecutionPayloadEnvelopeInvalid::InvalidSignature);
    }

    // Consistency with the beacon block.
    let mut header = state.latest_block_header.clone();
    header.state_root = state_root;
    let block_root = header.tree_hash_root();
    if envelope.beacon_block_root != block_root {
        return Err(ExecutionPayloadEnvelopeInvalid::BeaconBlockRootMismatch {
            envelope: envelope.beacon_block_root,
            expected: block_root,
        });
    }
    if envelope.parent_beacon_block_root != state.latest_block_header.parent_root {
        return Err(
            ExecutionPayloadEnvelopeInvalid::ParentBeaconBlockRootMismatch {
                envelope: envelope.parent_beacon_block_root,
                expected: state.latest_block_header.parent_root,
            },
        );
    }

    // Consistency with the committed bid.
    let gloas = state.gloas()?;
    let bid = gloas.latest_execution_payload_bid;
    if envelope.builder_index != bid.builder_index {
        return Err(ExecutionPayloadEnvelopeInvalid::BuilderIndexMismatch {
            envelope: envelope.builder_index,
            bid: bid.builder_index,
        });
    }
    if payload.prev_randao != bid.prev_randao {
        return Err(ExecutionPayloadEnvelopeInvalid::PrevRandaoMismatch {
            payload: payload.prev_randao,
            bid: bid.prev_randao,
        });
    }
    if payload.gas_limit != bid.gas_limit {
        return Err(ExecutionPayloadEnvelopeInvalid::GasLimitMismatch {
            payload: payload.gas_limit,
            bid: bid.gas_limit,
        });
    }
    if payload.block_hash != bid.block_hash {
        return Err(ExecutionPayloadEnvelopeInvalid::BlockHashMismatch {
            payload: payload.block_hash,
            bid: bid.block_hash,
        });
    }
    let requests_root = envelope.execution_requests.tree_hash_root();
    if requests_root != bid.execution_requests_root {
        return Err(
            ExecutionPayloadEnvelopeInvalid::ExecutionRequestsRootMismatch {
                envelope: requests_root,
                bid: bid.execution_requests_root,
            },
        );
    }

    // The payload itself.
    if payload.slot_number != *state.slot {
        return Err(ExecutionPayloadEnvelopeInvalid::SlotNumberMismatch {
            payload: payload.slot_number,
            state: *state.slot,
        });
    }
    if payload.parent_hash != *gloas.latest_block_hash {
        return Err(ExecutionPayloadEnvelopeInvalid::ParentHashMismatch {
            payload: payload.parent_hash,
            expected: *gloas.latest_block_hash,
        });
    }
    let time = spec.compute_time_at_slot(*state.genesis_time, *state.slot);
    if payload.timestamp != time {
        return Err(ExecutionPayloadEnvelopeInvalid::TimestampMismatch {
            payload: payload.timestamp,
            expected: time,
        });
    }
    // Equal lists have equal roots, and (barring a hash collision) only they do.
    let expected = gloas.payload_expected_withdrawals;
    if payload.withdrawals.len() != expected.len()
        || !payload
            .withdrawals
            .iter()
            .zip(expected.iter())
            .all(|(a, b)| a == b)
    {
        return Err(ExecutionPayloadEnvelopeInvalid::WithdrawalsMismatch);
    }

    let versioned_hashes = bid
        .blob_kzg_commitments
        .iter()
        .map(kzg_commitment_to_versioned_hash)
        .collect::<Vec<_>>();
    Ok(NewPayloadRequest {
        execution_payload: payload.clone(),
        versioned_hashes: ssz_types::VariableList::new(versioned_hashes)
            .map_err(|_| Error::ListFull("versioned_hashes"))?,
        parent_beacon_block_root: envelope.parent_beacon_block_root,
        execution_requests: envelope.execution_requests.clone(),
    })
}
