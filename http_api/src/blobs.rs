//! `GET /eth/v1/beacon/blobs/{block_id}` (getBlobs): a Fulu block's blobs from its stored data
//! columns, and `GET /eth/v1/beacon/blob_sidecars/{block_id}`: for blocks before Fulu their
//! stored sidecars, for Fulu blocks sidecars made from the columns (blob, KZG proof computed,
//! inclusion proof built).
//!
//! The chain makes the blobs and sidecars (`beacon_chain::stored_blobs`); this module maps the
//! requests to its calls.
//!
//! [spec]: apis/beacon/blobs/blobs.yaml, fulu/das-core.md#recover_matrix

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use beacon_api::{Encoding, ExecutionOptimisticFinalizedResponse, ForkVersionedResponse};
use ssz::Encode;
use types::{EthSpec, KZGCommitment, Root, SignedBeaconBlock};

use crate::ApiContext;
use crate::error::HttpError;
use crate::query::{PathParams, Query, parse_path};
use crate::response::{JSON_OR_SSZ, accept, blocking, json, ssz_bytes, with_version};
use crate::state_id::{block_at, read_block};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// `kzg_to_versioned_hash(commitment)`: `0x01 ++ sha256(commitment)[1:]`.
///
/// [spec]: deneb/beacon-chain.md#kzg_to_versioned_hash
fn kzg_to_versioned_hash(commitment: &KZGCommitment) -> Root {
    let mut hash = ethereum_hashing::hash_fixed(commitment.as_slice());
    hash[0] = 0x01;
    Root::from(hash)
}

pub(crate) fn commitments_of<E: EthSpec>(block: &SignedBeaconBlock<E>) -> Vec<KZGCommitment> {
    match block {
        SignedBeaconBlock::Fulu(b) | SignedBeaconBlock::Electra(b) => {
            b.message.body.blob_kzg_commitments.to_vec()
        }
        SignedBeaconBlock::Deneb(b) => b.message.body.blob_kzg_commitments.to_vec(),
        // A Gloas block commits to its blobs through the bid.
        SignedBeaconBlock::Gloas(b) => b
            .message
            .body
            .signed_execution_payload_bid
            .message
            .blob_kzg_commitments
            .to_vec(),
        SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_) => Vec::new(),
    }
}

/// `GET /eth/v1/beacon/blobs/{block_id}?versioned_hashes=..`.
pub(crate) async fn get_blobs<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let id: beacon_api::BlockId = parse_path("block id", path.at(0)?)?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let hashes: Vec<Root> = query.list("versioned_hashes")?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let block = read_block(&ctx, &at.root)?;
        if !block.fork_name().fulu_enabled() {
            return Err(HttpError::bad_request(format!(
                "block {} is a {} block: its blobs are served by blob_sidecars",
                at.root,
                block.fork_name()
            )));
        }
        let wanted: Vec<usize> = commitments_of(&block)
            .iter()
            .enumerate()
            .filter(|(_, c)| hashes.is_empty() || hashes.contains(&kzg_to_versioned_hash(c)))
            .map(|(i, _)| i)
            .collect();
        let blobs = if wanted.is_empty() {
            Vec::new()
        } else {
            ctx.chain.blobs_from_columns(&at.root, &wanted)?
        };
        let fork = block.fork_name();
        let response = match encoding {
            // `List[Blob, ...]` of fixed-size blobs: their bytes one after the other.
            Encoding::Ssz => ssz_bytes(blobs.concat()),
            Encoding::Json => {
                let data: Vec<String> =
                    blobs.iter().map(|b| crate::config_spec::hex0x(b)).collect();
                json(&ExecutionOptimisticFinalizedResponse {
                    execution_optimistic: at.execution_optimistic,
                    finalized: at.finalized,
                    data,
                })?
            }
        };
        Ok(with_version(response, fork))
    })
    .await
}

/// `GET /eth/v1/beacon/blob_sidecars/{block_id}?indices=..`: the stored sidecars of a block
/// before Fulu; for a Fulu block (which carries columns), the sidecars made from its stored or
/// recovered columns (`BeaconChain::blob_sidecars_from_columns`). Deprecated in the spec, still
/// called by rollup derivation pipelines and explorers.
pub(crate) async fn get_blob_sidecars<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let id: beacon_api::BlockId = parse_path("block id", path.at(0)?)?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let indices: Vec<u64> = query.list("indices")?;
    blocking(ctx.workers(), move || {
        let at = block_at(&ctx, id)?;
        let block = read_block(&ctx, &at.root)?;
        let fork = block.fork_name();
        if fork.fulu_enabled() {
            let wanted: Vec<usize> = (0..commitments_of(&block).len())
                .filter(|i| indices.is_empty() || indices.contains(&(*i as u64)))
                .collect();
            let sidecars = if wanted.is_empty() {
                Vec::new()
            } else {
                ctx.chain
                    .blob_sidecars_from_columns(&at.root, &block, &wanted)?
            };
            let response = match encoding {
                // Blob sidecars are fixed-size: the list is their bytes in a row.
                Encoding::Ssz => {
                    ssz_bytes(sidecars.iter().flat_map(|s| s.as_ssz_bytes()).collect())
                }
                Encoding::Json => json(&serde_json::json!({
                    "version": fork.as_str(),
                    "execution_optimistic": at.execution_optimistic,
                    "finalized": at.finalized,
                    "data": sidecars,
                }))?,
            };
            return Ok(with_version(response, fork));
        }
        let store = ctx.chain.store();
        let stored: Vec<u64> = store
            .blob_sidecar_indices(&at.root)?
            .into_iter()
            .filter(|i| indices.is_empty() || indices.contains(i))
            .collect();
        let response = match encoding {
            Encoding::Ssz => {
                let mut items = Vec::with_capacity(stored.len());
                for i in stored {
                    if let Some(bytes) = store.get_blob_sidecar_ssz(&at.root, i)? {
                        items.push(bytes);
                    }
                }
                // Blob sidecars are fixed-size: the list is their bytes in a row.
                ssz_bytes(items.concat())
            }
            Encoding::Json => {
                let mut items = Vec::with_capacity(stored.len());
                for i in stored {
                    if let Some(sidecar) = store.get_blob_sidecar(&at.root, i)? {
                        items.push(sidecar);
                    }
                }
                json(&ForkVersionedResponse {
                    version: fork,
                    execution_optimistic: Some(at.execution_optimistic),
                    finalized: Some(at.finalized),
                    data: items,
                })?
            }
        };
        Ok(with_version(response, fork))
    })
    .await
}
