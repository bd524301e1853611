//! Proposing: at the slot's start, the RANDAO reveal, produceBlockV3 in SSZ, slashing
//! protection, the signature, and publishBlockV2 in SSZ with `broadcast_validation=gossip`;
//! a blinded block (builder proposals on, the node chose a builder's bid) is signed the same
//! way and published with publishBlindedBlockV2.
//!
//! [spec]: phase0/validator.md#block-proposal

use std::sync::Arc;
use std::time::Instant;

use beacon_api::{
    BlindedBeaconBlock, BroadcastValidation, ProducedBlock, ProposerDuty, SignedBlockContents,
};
use tracing::{info, warn};
use types::{EthSpec, ForkName, Slot};

use crate::Context;
use crate::duties::update_proposers;
use crate::timing::{DutyKind, compute_epoch_at_slot};
use crate::validator_store::SignError;

/// Why a proposal failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProposalError {
    /// Signing was refused (slashing protection, doppelganger protection).
    #[error(transparent)]
    Sign(#[from] SignError),
    /// The beacon nodes failed.
    #[error(transparent)]
    BeaconNodes(#[from] crate::beacon_nodes::AllFailed),
    /// The node returned a blinded block without builder proposals on, or one that does not
    /// decode.
    #[error("unusable blinded block: {0}")]
    Blinded(String),
    /// The node returned a block for another slot or proposer.
    #[error("the beacon node returned a block for slot {slot} by {proposer}, not ours")]
    WrongBlock {
        /// The block's slot.
        slot: Slot,
        /// The block's proposer.
        proposer: u64,
    },
    /// The blobs did not fit the block.
    #[error(transparent)]
    Contents(#[from] beacon_api::block_contents::ContentsError),
    /// The signing task died.
    #[error("signing task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// The proposals of `slot`, if any of the client's validators proposes.
pub(crate) async fn propose<E: EthSpec>(ctx: Arc<Context<E>>, slot: Slot) {
    // The genesis block is not proposed.
    if slot == 0 {
        return;
    }
    let epoch = compute_epoch_at_slot::<E>(slot);
    let known = ctx.duties.read().has_proposers(epoch);
    if !known {
        update_proposers(&ctx, epoch).await;
    }
    let duties = ctx.duties.read().proposers_at::<E>(slot);
    for duty in duties {
        match propose_one(&ctx, slot, &duty).await {
            Ok(()) => ctx.metrics.performed(DutyKind::Proposal, 1),
            Err(e) => {
                warn!(slot, validator = duty.validator_index, error = %e, "proposal failed");
                ctx.metrics.missed_duties(DutyKind::Proposal, 1);
            }
        }
    }
}

async fn propose_one<E: EthSpec>(
    ctx: &Arc<Context<E>>,
    slot: Slot,
    duty: &ProposerDuty,
) -> Result<(), ProposalError> {
    let started = Instant::now();
    let randao_reveal = ctx.store.randao_reveal::<E>(&duty.pubkey, slot)?;
    let graffiti = ctx.graffiti;
    if ctx.spec.fork_name_at_slot::<E>(slot) == ForkName::Gloas {
        return propose_gloas(ctx, slot, duty, randao_reveal, started).await;
    }
    // 0 asks the node for its local payload; with builder proposals the node compares as is.
    let builder_boost_factor = (!ctx.builder_proposals).then_some(0);
    let (metadata, produced) = ctx
        .nodes
        .first_success("block", |c| async move {
            c.get_validator_blocks_v3::<E>(
                slot,
                &randao_reveal,
                graffiti.as_ref(),
                builder_boost_factor,
                false,
            )
            .await
        })
        .await?;
    let contents = match produced {
        ProducedBlock::Full(contents) => contents,
        ProducedBlock::Blinded(bytes) => {
            return propose_blinded(ctx, slot, duty, metadata.consensus_version, &bytes, started)
                .await;
        }
    };
    let (block, blobs) = contents.into_block_and_blobs();
    if block.slot() != slot || block.proposer_index() != duty.validator_index {
        return Err(ProposalError::WrongBlock {
            slot: block.slot(),
            proposer: block.proposer_index(),
        });
    }
    let signer = Arc::clone(ctx);
    let pubkey = duty.pubkey;
    let signing_started = Instant::now();
    let signed =
        tokio::task::spawn_blocking(move || signer.store.sign_block(&pubkey, block)).await??;
    ctx.metrics
        .observe_signing(DutyKind::Proposal, signing_started.elapsed());
    let blob_count = blobs.as_ref().map_or(0, |(_, b)| b.len());
    let block_root = signed.canonical_root();
    let contents = SignedBlockContents::new(signed, blobs)?;
    let contents = &contents;
    let publish_started = Instant::now();
    ctx.nodes
        .first_success("publish block", |c| async move {
            c.post_beacon_blocks_v2_ssz(contents, BroadcastValidation::Gossip)
                .await
        })
        .await?;
    ctx.metrics
        .observe_submission(DutyKind::Proposal, publish_started.elapsed());
    info!(
        slot,
        validator = duty.validator_index,
        %block_root,
        fork = %metadata.consensus_version,
        blobs = blob_count,
        took_ms = started.elapsed().as_millis() as u64,
        "published block"
    );
    Ok(())
}

/// A Gloas proposal (the stateful flow: one node produces and publishes): produceBlockV4
/// without the payload, the block signed (slashing protection as before) and published, then
/// the node's envelope of its payload, signed by the proposer as its builder and published (the
/// node attaches the columns of the blobs it built).
///
/// [spec]: gloas/validator.md#block-and-sidecar-proposal
async fn propose_gloas<E: EthSpec>(
    ctx: &Arc<Context<E>>,
    slot: Slot,
    duty: &ProposerDuty,
    randao_reveal: types::BLSSignature,
    started: Instant,
) -> Result<(), ProposalError> {
    let graffiti = ctx.graffiti;
    let randao_reveal = &randao_reveal;
    let block = ctx
        .nodes
        .first_success("block", |c| async move {
            c.get_validator_blocks_v4_ssz::<E>(slot, randao_reveal, graffiti.as_ref(), false)
                .await
        })
        .await?;
    if block.slot != slot || block.proposer_index != duty.validator_index {
        return Err(ProposalError::WrongBlock {
            slot: block.slot,
            proposer: block.proposer_index,
        });
    }
    let signer = Arc::clone(ctx);
    let pubkey = duty.pubkey;
    let signing_started = Instant::now();
    let signed = tokio::task::spawn_blocking(move || {
        signer
            .store
            .sign_block(&pubkey, types::BeaconBlock::Gloas(block))
    })
    .await??;
    ctx.metrics
        .observe_signing(DutyKind::Proposal, signing_started.elapsed());
    let block_root = signed.canonical_root();
    let signed = &signed;
    let publish_started = Instant::now();
    // The envelope and its columns come from the node that built the payload: the block is
    // published there too (the first node that answers).
    let ((), node) = ctx
        .nodes
        .first_success_on("publish block", |c| async move {
            c.post_beacon_blocks_v2_gloas_ssz(signed, BroadcastValidation::Gossip)
                .await
        })
        .await?;
    ctx.metrics
        .observe_submission(DutyKind::Proposal, publish_started.elapsed());
    if ctx.withhold_envelope_slots.contains(&slot) {
        warn!(
            slot,
            validator = duty.validator_index,
            %block_root,
            "published block; payload envelope withheld (devnet fault)"
        );
        return Ok(());
    }
    let envelope = ctx
        .nodes
        .on_client(&node, "envelope", |c| async move {
            c.get_validator_execution_payload_envelope_ssz::<E>(slot, block_root)
                .await
        })
        .await?;
    let signer = Arc::clone(ctx);
    let signed_envelope = tokio::task::spawn_blocking(move || {
        signer
            .store
            .sign_execution_payload_envelope(&pubkey, envelope)
    })
    .await??;
    let signed_envelope = &signed_envelope;
    ctx.nodes
        .on_client(&node, "publish envelope", |c| async move {
            c.post_beacon_execution_payload_envelope_ssz(signed_envelope)
                .await
        })
        .await?;
    info!(
        slot,
        validator = duty.validator_index,
        %block_root,
        fork = %ForkName::Gloas,
        took_ms = started.elapsed().as_millis() as u64,
        "published block and payload envelope"
    );
    Ok(())
}

/// Signs and publishes a blinded block the node produced (`bytes`: its SSZ, or the JSON of the
/// answer's `data`).
async fn propose_blinded<E: EthSpec>(
    ctx: &Arc<Context<E>>,
    slot: Slot,
    duty: &ProposerDuty,
    fork: types::ForkName,
    bytes: &[u8],
    started: Instant,
) -> Result<(), ProposalError> {
    if !ctx.builder_proposals {
        return Err(ProposalError::Blinded(
            "builder proposals are off and the node returned a blinded block".into(),
        ));
    }
    let block = decode_blinded::<E>(bytes).map_err(ProposalError::Blinded)?;
    if block.slot != slot || block.proposer_index != duty.validator_index {
        return Err(ProposalError::WrongBlock {
            slot: block.slot,
            proposer: block.proposer_index,
        });
    }
    let signer = Arc::clone(ctx);
    let pubkey = duty.pubkey;
    let signing_started = Instant::now();
    let signed =
        tokio::task::spawn_blocking(move || signer.store.sign_blinded_block(&pubkey, block))
            .await??;
    ctx.metrics
        .observe_signing(DutyKind::Proposal, signing_started.elapsed());
    let block_root = tree_hash::TreeHash::tree_hash_root(&signed.message);
    let ssz = ssz::Encode::as_ssz_bytes(&signed);
    let ssz = &ssz;
    let publish_started = Instant::now();
    ctx.nodes
        .first_success("publish blinded block", |c| async move {
            c.post_beacon_blinded_blocks_v2_ssz(fork, ssz.clone(), BroadcastValidation::Gossip)
                .await
        })
        .await?;
    ctx.metrics
        .observe_submission(DutyKind::Proposal, publish_started.elapsed());
    info!(
        slot,
        validator = duty.validator_index,
        %block_root,
        %fork,
        took_ms = started.elapsed().as_millis() as u64,
        "published blinded block"
    );
    Ok(())
}

/// A `BlindedBeaconBlock` from JSON (tried first: SSZ bytes are never a JSON document) or SSZ.
fn decode_blinded<E: EthSpec>(bytes: &[u8]) -> Result<BlindedBeaconBlock<E>, String> {
    if let Ok(block) = serde_json::from_slice(bytes) {
        return Ok(block);
    }
    <BlindedBeaconBlock<E> as ssz::Decode>::from_ssz_bytes(bytes)
        .map_err(|e| format!("neither JSON nor SSZ of a blinded block: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use types::MinimalEthSpec;

    #[test]
    fn blinded_blocks_decode_from_json_and_from_ssz() {
        let bytes = vec![7u8; 8192];
        let block = types::electra::BeaconBlock::<MinimalEthSpec>::arbitrary(
            &mut Unstructured::new(&bytes),
        )
        .unwrap();
        let blinded = BlindedBeaconBlock::from_block(&block);
        let json = serde_json::to_vec(&blinded).unwrap();
        assert_eq!(decode_blinded::<MinimalEthSpec>(&json).unwrap(), blinded);
        let ssz = ssz::Encode::as_ssz_bytes(&blinded);
        assert_eq!(decode_blinded::<MinimalEthSpec>(&ssz).unwrap(), blinded);
        assert!(decode_blinded::<MinimalEthSpec>(&ssz[..ssz.len() - 1]).is_err());
    }
}
