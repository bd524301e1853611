//! The execution payload: the consensus checks, the execution engine's verdict, and the cached
//! payload header.
//!
//! [spec]: fulu/beacon-chain.md#modified-process_execution_payload

use tree_hash::TreeHash;
use types::{
    ChainSpec, EthSpec, KZGCommitment, Root, VersionedHash,
    electra::{
        BeaconBlockBody, ExecutionPayload, ExecutionPayloadHeader, ExecutionRequests,
        NewPayloadRequest,
    },
};

use super::ExecutionPayloadInvalid;
use crate::{
    Error,
    common::{get_current_epoch, get_randao_mix, hash},
    view::StateMut,
};

/// `VERSIONED_HASH_VERSION_KZG`.
const VERSIONED_HASH_VERSION_KZG: u8 = 0x01;

/// Why an execution engine gave no verdict on a payload: the node's failure, never the block's.
/// (An engine the node cannot reach answers as the node's policy says, e.g. "not yet
/// validated" for an optimistic import, not with an error.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The payload's versioned hashes do not fit a new-payload request (callers check the blob
    /// count against the fork's maximum first, so this is a bug of the caller).
    #[error("{count} versioned hashes do not fit a new-payload request")]
    TooManyVersionedHashes {
        /// How many there were.
        count: usize,
    },
}

/// The execution layer as block processing sees it: a verdict on a payload.
///
/// The node implements it over the engine API; tests and the spec runners use [`AlwaysValid`] /
/// [`AlwaysInvalid`] (the `execution_valid` of a test case).
///
/// [spec]: bellatrix/beacon-chain.md#executionengine
pub trait ExecutionEngine<E: EthSpec> {
    /// `verify_and_notify_new_payload(new_payload_request)`: whether the payload is valid.
    /// `Err` when the node could not ask (its own failure: no peer is to blame).
    fn verify_and_notify_new_payload(
        &self,
        request: &NewPayloadRequest<E>,
    ) -> Result<bool, EngineError>;

    /// The same verdict, from the request's parts. The default builds the request (copying
    /// the payload); engines that do not look at it may answer without the copy.
    fn verify_new_payload_parts(
        &self,
        payload: &ExecutionPayload<E>,
        versioned_hashes: Vec<VersionedHash>,
        parent_beacon_block_root: Root,
        execution_requests: &ExecutionRequests<E>,
    ) -> Result<bool, EngineError> {
        let count = versioned_hashes.len();
        let request = NewPayloadRequest {
            execution_payload: payload.clone(),
            versioned_hashes: ssz_types::VariableList::new(versioned_hashes)
                .map_err(|_| EngineError::TooManyVersionedHashes { count })?,
            parent_beacon_block_root,
            execution_requests: execution_requests.clone(),
        };
        self.verify_and_notify_new_payload(&request)
    }

    /// The verdict on a Deneb payload (Deneb's `NewPayloadRequest` has no execution requests).
    /// The default asks [`Self::verify_new_payload_parts`] with no requests; an engine that
    /// tells payload versions apart (`engine_newPayloadV3` from V4) overrides it.
    ///
    /// [spec]: deneb/beacon-chain.md#modified-verify_and_notify_new_payload
    fn verify_new_payload_deneb(
        &self,
        payload: &ExecutionPayload<E>,
        versioned_hashes: Vec<VersionedHash>,
        parent_beacon_block_root: Root,
    ) -> Result<bool, EngineError> {
        let no_requests = ExecutionRequests {
            deposits: ssz_types::VariableList::empty(),
            withdrawals: ssz_types::VariableList::empty(),
            consolidations: ssz_types::VariableList::empty(),
        };
        self.verify_new_payload_parts(
            payload,
            versioned_hashes,
            parent_beacon_block_root,
            &no_requests,
        )
    }
}

/// An execution engine that finds every payload valid.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysValid;

impl<E: EthSpec> ExecutionEngine<E> for AlwaysValid {
    fn verify_and_notify_new_payload(&self, _: &NewPayloadRequest<E>) -> Result<bool, EngineError> {
        Ok(true)
    }

    fn verify_new_payload_parts(
        &self,
        _: &ExecutionPayload<E>,
        _: Vec<VersionedHash>,
        _: Root,
        _: &ExecutionRequests<E>,
    ) -> Result<bool, EngineError> {
        Ok(true)
    }
}

/// An execution engine that finds every payload invalid.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysInvalid;

impl<E: EthSpec> ExecutionEngine<E> for AlwaysInvalid {
    fn verify_and_notify_new_payload(&self, _: &NewPayloadRequest<E>) -> Result<bool, EngineError> {
        Ok(false)
    }

    fn verify_new_payload_parts(
        &self,
        _: &ExecutionPayload<E>,
        _: Vec<VersionedHash>,
        _: Root,
        _: &ExecutionRequests<E>,
    ) -> Result<bool, EngineError> {
        Ok(false)
    }
}

/// `kzg_commitment_to_versioned_hash(kzg_commitment)`.
///
/// [spec]: deneb/beacon-chain.md#kzg_commitment_to_versioned_hash
pub fn kzg_commitment_to_versioned_hash(commitment: &KZGCommitment) -> VersionedHash {
    let mut versioned = hash(commitment.as_slice());
    versioned[0] = VERSIONED_HASH_VERSION_KZG;
    versioned
}

/// `process_execution_payload(state, body, execution_engine)` [Modified in Fulu]: the payload
/// continues the last one, uses the current randao mix and the slot's time, carries no more
/// blobs than the fork allows (from Fulu on, the blob schedule's limit), and the execution engine
/// finds it valid; its header becomes the latest.
///
/// [spec]: electra/beacon-chain.md#modified-process_execution_payload,
/// fulu/beacon-chain.md#modified-process_execution_payload
pub fn process_execution_payload<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    body: &BeaconBlockBody<E>,
    engine: &impl ExecutionEngine<E>,
    spec: &ChainSpec,
) -> Result<(), ExecutionPayloadInvalid> {
    let payload = &body.execution_payload;
    check_execution_payload(state, payload, spec)?;
    let epoch = get_current_epoch(&state.as_ref());
    let max_blobs = if state.fork_name.fulu_enabled() {
        spec.get_blob_parameters(epoch).max_blobs_per_block
    } else {
        spec.max_blobs_per_block_electra
    };
    if body.blob_kzg_commitments.len() as u64 > max_blobs {
        return Err(ExecutionPayloadInvalid::TooManyBlobCommitments {
            count: body.blob_kzg_commitments.len(),
            max: max_blobs,
        });
    }

    let versioned_hashes = body
        .blob_kzg_commitments
        .iter()
        .map(kzg_commitment_to_versioned_hash)
        .collect();
    let valid = engine
        .verify_new_payload_parts(
            payload,
            versioned_hashes,
            state.latest_block_header.parent_root,
            &body.execution_requests,
        )
        .map_err(ExecutionPayloadInvalid::EngineFailed)?;
    if !valid {
        return Err(ExecutionPayloadInvalid::RejectedByEngine);
    }
    cache_execution_payload_header(state, payload)?;
    Ok(())
}

/// The checks of `process_execution_payload` every fork since Deneb makes: the payload
/// continues the latest one, carries the current randao mix and the slot's time.
pub(crate) fn check_execution_payload<E: EthSpec>(
    state: &StateMut<'_, E>,
    payload: &ExecutionPayload<E>,
    spec: &ChainSpec,
) -> Result<(), ExecutionPayloadInvalid> {
    let expected_parent =
        payload_header(state.latest_execution_payload_header.as_deref(), state)?.block_hash;
    if payload.parent_hash != expected_parent {
        return Err(ExecutionPayloadInvalid::ParentHashMismatch {
            payload: payload.parent_hash,
            expected: expected_parent,
        });
    }
    let epoch = get_current_epoch(&state.as_ref());
    let mix = get_randao_mix(&state.as_ref(), epoch);
    if payload.prev_randao != mix {
        return Err(ExecutionPayloadInvalid::PrevRandaoMismatch {
            payload: payload.prev_randao,
            expected: mix,
        });
    }
    let time = spec.compute_time_at_slot(*state.genesis_time, *state.slot);
    if payload.timestamp != time {
        return Err(ExecutionPayloadInvalid::TimestampMismatch {
            payload: payload.timestamp,
            expected: time,
        });
    }
    Ok(())
}

/// `state.latest_execution_payload_header = ExecutionPayloadHeader(…)`: caches the header of
/// `payload`.
pub(crate) fn cache_execution_payload_header<E: EthSpec>(
    state: &mut StateMut<'_, E>,
    payload: &ExecutionPayload<E>,
) -> Result<(), Error> {
    let fork = state.fork_name;
    let header =
        state
            .latest_execution_payload_header
            .as_deref_mut()
            .ok_or(Error::MissingField {
                field: "latest_execution_payload_header",
                fork,
            })?;
    *header = ExecutionPayloadHeader {
        parent_hash: payload.parent_hash,
        fee_recipient: payload.fee_recipient,
        state_root: payload.state_root,
        receipts_root: payload.receipts_root,
        logs_bloom: payload.logs_bloom.clone(),
        prev_randao: payload.prev_randao,
        block_number: payload.block_number,
        gas_limit: payload.gas_limit,
        gas_used: payload.gas_used,
        timestamp: payload.timestamp,
        extra_data: payload.extra_data.clone(),
        base_fee_per_gas: payload.base_fee_per_gas,
        block_hash: payload.block_hash,
        transactions_root: payload.transactions.tree_hash_root(),
        withdrawals_root: payload.withdrawals.tree_hash_root(),
        blob_gas_used: payload.blob_gas_used,
        excess_blob_gas: payload.excess_blob_gas,
    };
    Ok(())
}

/// `state.latest_execution_payload_header`, which every fork before Gloas has (Gloas removed it:
/// its blocks carry a bid, processed by `gloas::process_execution_payload_bid`).
fn payload_header<'h, E: EthSpec>(
    header: Option<&'h ExecutionPayloadHeader<E>>,
    state: &StateMut<'_, E>,
) -> Result<&'h ExecutionPayloadHeader<E>, Error> {
    header.ok_or(Error::MissingField {
        field: "latest_execution_payload_header",
        fork: state.fork_name,
    })
}
