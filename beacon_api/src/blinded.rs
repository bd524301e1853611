//! The blinded blocks of the Electra layout (Electra and Fulu): a block whose body carries its
//! execution payload's header in place of the payload, as produceBlockV3 answers when a
//! builder's bid wins, as a validator client signs it and as publishBlindedBlockV2 takes it back;
//! and the conversions between full and blinded blocks (same root, so one signature signs both).
//!
//! The builder API (`builder_client`) shares these containers with the Beacon API; they live
//! here, with the API's other types, so that a validator client needs no builder client.
//!
//! [spec]: ethereum/builder-specs specs/electra/builder.md, specs/fulu/builder.md

use serde::{Deserialize, Serialize};
use ssz_derive::{Decode, Encode};
use ssz_types::VariableList;
use tree_hash::TreeHash;
use tree_hash_derive::TreeHash;
use types::electra::{
    Attestation, AttesterSlashing, BeaconBlock, BeaconBlockBody, Deposit, Eth1Data,
    ExecutionPayload, ExecutionPayloadHeader, ExecutionRequests, ProposerSlashing,
    SignedBLSToExecutionChange, SignedBeaconBlock, SignedVoluntaryExit, SyncAggregate,
};
use types::{BLSSignature, Bytes32, EthSpec, KZGCommitment, Root, Slot, ValidatorIndex};

/// `BlindedBeaconBlockBody` [Modified in Electra]: a `BeaconBlockBody` with the payload's
/// header in place of the payload. Its hash tree root is the full body's.
///
/// [spec]: specs/electra/builder.md#blindedbeaconblockbody
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec")]
pub struct BlindedBeaconBlockBody<E: EthSpec> {
    /// The proposer's signature over the epoch.
    pub randao_reveal: BLSSignature,
    /// The proposer's eth1 data vote.
    pub eth1_data: Eth1Data,
    /// Arbitrary bytes chosen by the proposer.
    pub graffiti: Bytes32,
    /// Proposer slashings.
    pub proposer_slashings: VariableList<ProposerSlashing, E::MaxProposerSlashings>,
    /// Attester slashings.
    pub attester_slashings: VariableList<AttesterSlashing<E>, E::MaxAttesterSlashingsElectra>,
    /// Attestations.
    pub attestations: VariableList<Attestation<E>, E::MaxAttestationsElectra>,
    /// Deposits.
    pub deposits: VariableList<Deposit, E::MaxDeposits>,
    /// Voluntary exits.
    pub voluntary_exits: VariableList<SignedVoluntaryExit, E::MaxVoluntaryExits>,
    /// The sync committee's signature over the parent root.
    pub sync_aggregate: SyncAggregate<E>,
    /// The header of the payload the block commits to.
    pub execution_payload_header: ExecutionPayloadHeader<E>,
    /// BLS-to-execution changes.
    pub bls_to_execution_changes:
        VariableList<SignedBLSToExecutionChange, E::MaxBlsToExecutionChanges>,
    /// The commitments of the payload's blobs.
    pub blob_kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    /// The payload's execution requests.
    pub execution_requests: ExecutionRequests<E>,
}

/// `BlindedBeaconBlock`: a block whose body is blinded. Its root is the full block's, so the
/// proposer's signature over it signs the full block too.
///
/// [spec]: specs/bellatrix/builder.md#blindedbeaconblock
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec")]
pub struct BlindedBeaconBlock<E: EthSpec> {
    /// The slot.
    #[serde(with = "serde_utils::quoted_u64")]
    pub slot: Slot,
    /// The proposer.
    #[serde(with = "serde_utils::quoted_u64")]
    pub proposer_index: ValidatorIndex,
    /// The parent block's root.
    pub parent_root: Root,
    /// The post-state root.
    pub state_root: Root,
    /// The blinded body.
    pub body: BlindedBeaconBlockBody<E>,
}

/// `SignedBlindedBeaconBlock`: a blinded block with the proposer's signature (in
/// `DOMAIN_BEACON_PROPOSER`, as for the full block).
///
/// [spec]: specs/bellatrix/builder.md#signedblindedbeaconblock
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec")]
pub struct SignedBlindedBeaconBlock<E: EthSpec> {
    /// The blinded block.
    pub message: BlindedBeaconBlock<E>,
    /// The proposer's signature.
    pub signature: BLSSignature,
}

/// Why a revealed payload does not complete a blinded block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnblindError {
    /// The payload is not the one whose header the block commits to.
    #[error("the revealed payload (block hash {found}) is not the committed one ({expected})")]
    PayloadMismatch {
        /// The committed header's block hash.
        expected: Root,
        /// The revealed payload's block hash.
        found: Root,
    },
    /// The bundle's commitments are not the block's.
    #[error("the revealed blobs bundle's commitments are not the block's")]
    CommitmentsMismatch,
    /// The bundle carries fewer (or more) blobs than the block commits to.
    #[error("{blobs} blobs revealed for {commitments} committed")]
    BlobCountMismatch {
        /// Commitments in the block.
        commitments: usize,
        /// Blobs revealed.
        blobs: usize,
    },
    /// The proofs are not as many as the fork requires.
    #[error("{proofs} proofs for {blobs} blobs, expected {expected}")]
    ProofCountMismatch {
        /// Blobs revealed.
        blobs: usize,
        /// Proofs revealed.
        proofs: usize,
        /// What the fork requires.
        expected: usize,
    },
}

/// The header of `payload`: its lists replaced by their roots (the `ExecutionPayloadHeader`
/// of `get_bid`, and what `process_execution_payload` caches in the state).
///
/// [spec]: specs/bellatrix/builder.md#constructing-the-builderbid
pub fn execution_payload_header<E: EthSpec>(
    payload: &ExecutionPayload<E>,
) -> ExecutionPayloadHeader<E> {
    ExecutionPayloadHeader {
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
    }
}

impl<E: EthSpec> BlindedBeaconBlockBody<E> {
    /// The blinded form of `body`, with `header` for its payload (the payload's own header,
    /// or a builder's) and the builder's commitments and requests.
    pub fn from_body_with(
        body: &BeaconBlockBody<E>,
        header: ExecutionPayloadHeader<E>,
        blob_kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
        execution_requests: ExecutionRequests<E>,
    ) -> Self {
        Self {
            randao_reveal: body.randao_reveal,
            eth1_data: body.eth1_data.clone(),
            graffiti: body.graffiti,
            proposer_slashings: body.proposer_slashings.clone(),
            attester_slashings: body.attester_slashings.clone(),
            attestations: body.attestations.clone(),
            deposits: body.deposits.clone(),
            voluntary_exits: body.voluntary_exits.clone(),
            sync_aggregate: body.sync_aggregate.clone(),
            execution_payload_header: header,
            bls_to_execution_changes: body.bls_to_execution_changes.clone(),
            blob_kzg_commitments,
            execution_requests,
        }
    }

    /// The full body with `payload` in place of the header (the caller checked that it is the
    /// header's payload).
    fn into_full(self, execution_payload: ExecutionPayload<E>) -> BeaconBlockBody<E> {
        BeaconBlockBody {
            randao_reveal: self.randao_reveal,
            eth1_data: self.eth1_data,
            graffiti: self.graffiti,
            proposer_slashings: self.proposer_slashings,
            attester_slashings: self.attester_slashings,
            attestations: self.attestations,
            deposits: self.deposits,
            voluntary_exits: self.voluntary_exits,
            sync_aggregate: self.sync_aggregate,
            execution_payload,
            bls_to_execution_changes: self.bls_to_execution_changes,
            blob_kzg_commitments: self.blob_kzg_commitments,
            execution_requests: self.execution_requests,
        }
    }
}

impl<E: EthSpec> BlindedBeaconBlock<E> {
    /// The blinded form of a full block (same root).
    pub fn from_block(block: &BeaconBlock<E>) -> Self {
        Self {
            slot: block.slot,
            proposer_index: block.proposer_index,
            parent_root: block.parent_root,
            state_root: block.state_root,
            body: BlindedBeaconBlockBody::from_body_with(
                &block.body,
                execution_payload_header(&block.body.execution_payload),
                block.body.blob_kzg_commitments.clone(),
                block.body.execution_requests.clone(),
            ),
        }
    }
}

impl<E: EthSpec> SignedBlindedBeaconBlock<E> {
    /// The full signed block with `payload`, when it is the payload whose header the block
    /// commits to (the signature, over the common root, stays valid).
    pub fn unblind(
        self,
        payload: ExecutionPayload<E>,
    ) -> Result<SignedBeaconBlock<E>, UnblindError> {
        let header = &self.message.body.execution_payload_header;
        if execution_payload_header(&payload) != *header {
            return Err(UnblindError::PayloadMismatch {
                expected: header.block_hash,
                found: payload.block_hash,
            });
        }
        let SignedBlindedBeaconBlock { message, signature } = self;
        Ok(SignedBeaconBlock {
            message: BeaconBlock {
                slot: message.slot,
                proposer_index: message.proposer_index,
                parent_root: message.parent_root,
                state_root: message.state_root,
                body: message.body.into_full(payload),
            },
            signature,
        })
    }
}

#[cfg(test)]
mod tests {
    use arbitrary::{Arbitrary, Unstructured};
    use types::MinimalEthSpec;

    use super::*;

    type E = MinimalEthSpec;

    /// A random full signed block from `seed`, or `None` when the bytes ran out.
    fn random_block(seed: u64) -> Option<SignedBeaconBlock<E>> {
        let mut bytes = vec![0u8; 1 << 18];
        splitmix::SplitMix64::new(seed).fill_bytes(&mut bytes);
        SignedBeaconBlock::arbitrary(&mut Unstructured::new(&bytes)).ok()
    }

    fn blinded(block: &SignedBeaconBlock<E>) -> SignedBlindedBeaconBlock<E> {
        SignedBlindedBeaconBlock {
            message: BlindedBeaconBlock::from_block(&block.message),
            signature: block.signature,
        }
    }

    #[test]
    fn blinded_block_has_the_full_blocks_root_and_unblinds_to_it() {
        let mut checked = 0;
        for seed in 0..6 {
            let Some(block) = random_block(seed) else {
                continue;
            };
            let blinded = blinded(&block);
            assert_eq!(
                blinded.message.tree_hash_root(),
                block.message.tree_hash_root()
            );
            assert_eq!(
                blinded.message.body.tree_hash_root(),
                block.message.body.tree_hash_root()
            );
            let back = blinded
                .unblind(block.message.body.execution_payload.clone())
                .unwrap();
            assert_eq!(back, block);
            checked += 1;
        }
        assert!(checked > 0, "no seed built a block");
    }

    #[test]
    fn unblind_refuses_another_payload() {
        let block = (0..6).find_map(random_block).unwrap();
        let mut other = block.message.body.execution_payload.clone();
        other.gas_used = other.gas_used.wrapping_add(1);
        let err = blinded(&block).unblind(other).unwrap_err();
        assert!(matches!(err, UnblindError::PayloadMismatch { .. }), "{err}");
    }
}
