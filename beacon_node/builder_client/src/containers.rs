//! The builder API's containers for the Electra layout (Electra and Fulu): bids and the blobs
//! bundle a relay reveals.
//!
//! The Beacon API's containers the builder API shares are `beacon_api`'s, re-exported here:
//! `ValidatorRegistrationV1` and `SignedValidatorRegistrationV1` (`beacon_api::validator`,
//! carried on `register_validator` too), and the blinded blocks with their blinding and
//! unblinding (`beacon_api::blinded`), which a validator client signs without this crate.
//!
//! [spec]: ethereum/builder-specs specs/electra/builder.md, specs/fulu/builder.md

use serde::{Deserialize, Serialize};
use ssz_derive::{Decode, Encode};
use ssz_types::VariableList;
use tree_hash_derive::TreeHash;
use types::electra::{ExecutionPayload, ExecutionPayloadHeader, ExecutionRequests};
use types::{BLSPubkey, BLSSignature, Blob, EthSpec, KZGCommitment, KZGProof, U256};

pub use beacon_api::blinded::{
    BlindedBeaconBlock, BlindedBeaconBlockBody, SignedBlindedBeaconBlock, UnblindError,
    execution_payload_header,
};
pub use beacon_api::{SignedValidatorRegistrationV1, ValidatorRegistrationV1};

/// `BuilderBid` [Modified in Electra]: a builder's offer of a payload (as its header), the
/// payload's blob commitments and execution requests, what it pays the proposer, and who bids.
///
/// [spec]: specs/electra/builder.md#builderbid
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec")]
pub struct BuilderBid<E: EthSpec> {
    /// The offered payload, blinded.
    pub header: ExecutionPayloadHeader<E>,
    /// The commitments of the payload's blobs.
    pub blob_kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    /// The payload's deposit, withdrawal and consolidation requests.
    pub execution_requests: ExecutionRequests<E>,
    /// Wei the proposer's fee recipient receives.
    #[serde(with = "serde_utils::quoted_u256")]
    pub value: U256,
    /// The builder's public key (the signer of the bid).
    pub pubkey: BLSPubkey,
}

/// `SignedBuilderBid`: a bid with the builder's signature in `DOMAIN_APPLICATION_BUILDER`.
///
/// [spec]: specs/bellatrix/builder.md#signedbuilderbid
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec")]
pub struct SignedBuilderBid<E: EthSpec> {
    /// The bid.
    pub message: BuilderBid<E>,
    /// `bls.Sign(builder_key, compute_signing_root(message, builder_domain))`.
    pub signature: BLSSignature,
}

/// `BlobsBundle` [Modified in Fulu:EIP7594]: the blobs a relay reveals with the payload, their
/// commitments and proofs (one per blob in Electra, `CELLS_PER_EXT_BLOB` per blob from Fulu).
///
/// The proofs are a plain list: their SSZ limit is never hashed, and their count is checked
/// against the fork's rule ([`ExecutionPayloadAndBlobsBundle::check_blobs`]).
///
/// [spec]: specs/fulu/builder.md#blobsbundle
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec")]
pub struct BlobsBundle<E: EthSpec> {
    /// One commitment per blob.
    pub commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    /// The proofs.
    pub proofs: Vec<KZGProof>,
    /// The blobs, in the order of their commitments.
    #[serde(with = "ssz_types::serde_utils::list_of_hex_fixed_vec")]
    pub blobs: VariableList<Blob<E>, E::MaxBlobCommitmentsPerBlock>,
}

/// `ExecutionPayloadAndBlobsBundle`: what `submitBlindedBlock` (v1) reveals.
///
/// [spec]: specs/fulu/builder.md#executionpayloadandblobsbundle
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[serde(bound = "E: EthSpec")]
pub struct ExecutionPayloadAndBlobsBundle<E: EthSpec> {
    /// The full payload.
    pub execution_payload: ExecutionPayload<E>,
    /// Its blobs.
    pub blobs_bundle: BlobsBundle<E>,
}

impl<E: EthSpec> ExecutionPayloadAndBlobsBundle<E> {
    /// Checks the bundle against the block's commitments: the same commitments, one blob per
    /// commitment, `proofs_per_blob` proofs per blob (1 in Electra, `CELLS_PER_EXT_BLOB` from
    /// Fulu).
    pub fn check_blobs(
        &self,
        commitments: &[KZGCommitment],
        proofs_per_blob: usize,
    ) -> Result<(), UnblindError> {
        let bundle = &self.blobs_bundle;
        if bundle.blobs.len() != commitments.len() {
            return Err(UnblindError::BlobCountMismatch {
                commitments: commitments.len(),
                blobs: bundle.blobs.len(),
            });
        }
        if bundle.commitments[..] != *commitments {
            return Err(UnblindError::CommitmentsMismatch);
        }
        let expected = bundle.blobs.len().saturating_mul(proofs_per_blob);
        if bundle.proofs.len() != expected {
            return Err(UnblindError::ProofCountMismatch {
                blobs: bundle.blobs.len(),
                proofs: bundle.proofs.len(),
                expected,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use arbitrary::{Arbitrary, Unstructured};
    use ssz::{Decode, Encode};
    use types::MinimalEthSpec;
    use types::electra::SignedBeaconBlock;

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
    fn blinded_block_and_bid_round_trip_in_json_and_ssz() {
        let block = (0..6).find_map(random_block).unwrap();
        let blinded = blinded(&block);
        let json = serde_json::to_string(&blinded).unwrap();
        assert!(json.contains("\"execution_payload_header\""));
        let back: SignedBlindedBeaconBlock<E> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, blinded);
        let ssz = blinded.as_ssz_bytes();
        assert_eq!(
            SignedBlindedBeaconBlock::<E>::from_ssz_bytes(&ssz).unwrap(),
            blinded
        );

        let bid = SignedBuilderBid::<E> {
            message: BuilderBid {
                header: blinded.message.body.execution_payload_header.clone(),
                blob_kzg_commitments: blinded.message.body.blob_kzg_commitments.clone(),
                execution_requests: blinded.message.body.execution_requests.clone(),
                value: U256::from(123_456_789u64),
                pubkey: BLSPubkey::repeat_byte(7),
            },
            signature: BLSSignature::repeat_byte(9),
        };
        let json = serde_json::to_string(&bid).unwrap();
        // The spec's conventions: a quoted decimal value.
        assert!(json.contains("\"value\":\"123456789\""), "{json}");
        let back: SignedBuilderBid<E> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, bid);
        assert_eq!(
            SignedBuilderBid::<E>::from_ssz_bytes(&bid.as_ssz_bytes()).unwrap(),
            bid
        );
    }

    #[test]
    fn check_blobs_refuses_fewer_blobs_other_commitments_and_proof_counts() {
        let block = (0..6).find_map(random_block).unwrap();
        let commitments = vec![KZGCommitment::repeat_byte(1), KZGCommitment::repeat_byte(2)];
        let blob = Blob::<E>::default();
        let revealed = |commitments: Vec<KZGCommitment>, blobs: usize, proofs: usize| {
            ExecutionPayloadAndBlobsBundle::<E> {
                execution_payload: block.message.body.execution_payload.clone(),
                blobs_bundle: BlobsBundle {
                    commitments: VariableList::new(commitments).unwrap(),
                    proofs: vec![KZGProof::ZERO; proofs],
                    blobs: VariableList::new(vec![blob.clone(); blobs]).unwrap(),
                },
            }
        };
        let cells = 4;
        revealed(commitments.clone(), 2, 2 * cells)
            .check_blobs(&commitments, cells)
            .unwrap();
        assert_eq!(
            revealed(commitments[..1].to_vec(), 1, cells).check_blobs(&commitments, cells),
            Err(UnblindError::BlobCountMismatch {
                commitments: 2,
                blobs: 1
            })
        );
        let swapped = vec![commitments[1], commitments[0]];
        assert_eq!(
            revealed(swapped, 2, 2 * cells).check_blobs(&commitments, cells),
            Err(UnblindError::CommitmentsMismatch)
        );
        assert_eq!(
            revealed(commitments.clone(), 2, 2).check_blobs(&commitments, cells),
            Err(UnblindError::ProofCountMismatch {
                blobs: 2,
                proofs: 2,
                expected: 2 * cells
            })
        );
    }
}
