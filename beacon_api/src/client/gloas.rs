//! The client's Gloas calls (ethereum/beacon-APIs after v5.0.0-alpha.2, #580, #624):
//! produceBlockV4 without the payload (the stateful flow: the node keeps the envelope and
//! blobs), the envelope of the block, its publication, a Gloas block's publication (the
//! signed block alone), and the payload timeliness committee's duties, data and votes.

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use ssz::{Decode, Encode};
use types::gloas::{
    ExecutionPayloadEnvelope, PayloadAttestationData, PayloadAttestationMessage,
    SignedExecutionPayloadEnvelope,
};
use types::{
    BLSSignature, Bytes32, Epoch, EthSpec, ForkName, Root, SignedBeaconBlock, Slot, ValidatorIndex,
};

use super::{BeaconNodeHttpClient, ClientError, Kind, Quoted};
use crate::envelope::{CONSENSUS_VERSION_HEADER, DutiesResponse, GenericResponse};
use crate::negotiation::{JSON_MEDIA_TYPE, SSZ_MEDIA_TYPE};
use crate::validator::BroadcastValidation;
use crate::validator::PtcDuty;

/// `Eth-Blob-Data-Included`.
const BLOB_DATA_INCLUDED_HEADER: &str = "Eth-Blob-Data-Included";

impl BeaconNodeHttpClient {
    /// `produceBlockV4` with `include_payload=false`, in SSZ: the Gloas block alone (the node
    /// keeps the envelope and blobs of a self-built payload for
    /// [`Self::get_validator_execution_payload_envelope_ssz`]).
    pub async fn get_validator_blocks_v4_ssz<E: EthSpec>(
        &self,
        slot: Slot,
        randao_reveal: &BLSSignature,
        graffiti: Option<&Bytes32>,
        skip_randao_verification: bool,
    ) -> Result<types::gloas::BeaconBlock<E>, ClientError> {
        let slot = slot.to_string();
        let mut url = self.url(&["eth", "v4", "validator", "blocks", &slot])?;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("randao_reveal", &randao_reveal.to_string());
            if let Some(graffiti) = graffiti {
                query.append_pair("graffiti", &graffiti.to_string());
            }
            if skip_randao_verification {
                query.append_key_only("skip_randao_verification");
            }
            query.append_pair("include_payload", "false");
        }
        let (_, bytes) = self.get_ssz(&url, Kind::Proposal).await?;
        types::gloas::BeaconBlock::<E>::from_ssz_bytes(&bytes).map_err(|e| Self::ssz_error(&url, e))
    }

    /// `publishBlockV2` of a Gloas block in SSZ: the signed block alone (its blobs come with
    /// the payload's envelope).
    pub async fn post_beacon_blocks_v2_gloas_ssz<E: EthSpec>(
        &self,
        block: &SignedBeaconBlock<E>,
        broadcast_validation: BroadcastValidation,
    ) -> Result<(), ClientError> {
        let url = self.publish_url(broadcast_validation)?;
        self.post_ssz(&url, block.as_ssz_bytes(), Kind::Proposal, ForkName::Gloas)
            .await
    }

    /// `getExecutionPayloadEnvelope`:
    /// `GET /eth/v1/validator/execution_payload_envelopes/{slot}/{beacon_block_root}` in SSZ.
    pub async fn get_validator_execution_payload_envelope_ssz<E: EthSpec>(
        &self,
        slot: Slot,
        beacon_block_root: Root,
    ) -> Result<ExecutionPayloadEnvelope<E>, ClientError> {
        let slot = slot.to_string();
        let root = beacon_block_root.to_string();
        let url = self.url(&[
            "eth",
            "v1",
            "validator",
            "execution_payload_envelopes",
            &slot,
            &root,
        ])?;
        let (_, bytes) = self.get_ssz(&url, Kind::Proposal).await?;
        ExecutionPayloadEnvelope::<E>::from_ssz_bytes(&bytes).map_err(|e| Self::ssz_error(&url, e))
    }

    /// `publishExecutionPayloadEnvelope`: `POST /eth/v1/beacon/execution_payload_envelopes`
    /// in SSZ, the signed envelope alone (`Eth-Blob-Data-Included: false`: the node that built
    /// the payload has its blobs).
    pub async fn post_beacon_execution_payload_envelope_ssz<E: EthSpec>(
        &self,
        envelope: &SignedExecutionPayloadEnvelope<E>,
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v1", "beacon", "execution_payload_envelopes"])?;
        let request = self
            .client
            .post(url.clone())
            .header(ACCEPT, JSON_MEDIA_TYPE)
            .header(CONTENT_TYPE, SSZ_MEDIA_TYPE)
            .header(CONSENSUS_VERSION_HEADER, ForkName::Gloas.as_str())
            .header(BLOB_DATA_INCLUDED_HEADER, "false")
            .timeout(self.timeout(Kind::Proposal))
            .body(envelope.as_ssz_bytes());
        self.send(&url, request).await.map(drop)
    }

    /// `publishAggregateAndProofsV2` at Gloas: the aggregates in Gloas's container, JSON.
    pub async fn post_validator_aggregate_and_proofs_v2_gloas<E: EthSpec>(
        &self,
        aggregates: &[types::gloas::SignedAggregateAndProof<E>],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v2", "validator", "aggregate_and_proofs"])?;
        let body = serde_json::to_vec(aggregates).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Attestation, Some(ForkName::Gloas))
            .await
    }

    /// `getPtcDuties`: `POST /eth/v1/validator/duties/ptc/{epoch}`: the slot of `epoch` at
    /// which each of `indices` sits in the payload timeliness committee (those without one
    /// left out).
    ///
    /// [spec]: apis/validator/duties/ptc.yaml
    pub async fn post_validator_duties_ptc(
        &self,
        epoch: Epoch,
        indices: &[ValidatorIndex],
    ) -> Result<DutiesResponse<Vec<PtcDuty>>, ClientError> {
        let epoch = epoch.to_string();
        let url = self.url(&["eth", "v1", "validator", "duties", "ptc", &epoch])?;
        self.post_json(url, &Quoted(indices), Kind::Duties).await
    }

    /// `producePayloadAttestationData`: `GET /eth/v1/validator/payload_attestation_data/{slot}`
    /// in JSON. A node that has seen no block of `slot` answers 404 ([`ClientError::status`]).
    ///
    /// [spec]: apis/validator/payload_attestation_data.yaml
    pub async fn get_validator_payload_attestation_data(
        &self,
        slot: Slot,
    ) -> Result<GenericResponse<PayloadAttestationData>, ClientError> {
        let slot = slot.to_string();
        let url = self.url(&["eth", "v1", "validator", "payload_attestation_data", &slot])?;
        self.get_json(url, Kind::Attestation).await
    }

    /// `submitPayloadAttestationMessages`: `POST /eth/v1/beacon/pool/payload_attestations`,
    /// the messages in JSON with `Eth-Consensus-Version: gloas`.
    ///
    /// [spec]: apis/beacon/pool/payload_attestations.yaml
    pub async fn post_beacon_pool_payload_attestations(
        &self,
        messages: &[PayloadAttestationMessage],
    ) -> Result<(), ClientError> {
        let url = self.url(&["eth", "v1", "beacon", "pool", "payload_attestations"])?;
        let body = serde_json::to_vec(messages).map_err(ClientError::Encode)?;
        self.post_json_no_content(url, body, Kind::Attestation, Some(ForkName::Gloas))
            .await
    }
}
