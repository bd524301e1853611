//! `GET /eth/v1/beacon/blobs/{block_id}` (getBlobs): a Fulu block's blobs from its stored data
//! columns, and `GET /eth/v1/beacon/blob_sidecars/{block_id}`: for blocks before Fulu their
//! stored sidecars, for Fulu blocks sidecars made from the columns (blob, KZG proof computed,
//! inclusion proof built).
//!
//! A blob is the first half of its row of the extended matrix: the cells of columns
//! `0..NUMBER_OF_COLUMNS / 2` concatenated (cells are evaluations in bit-reversed order, whose
//! first half is the blob's own domain). A node holding every one of those columns reads the
//! blobs directly; one holding at least half of all columns recovers each row first.
//!
//! [spec]: apis/beacon/blobs/blobs.yaml, fulu/das-core.md#recover_matrix

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use beacon_api::{Encoding, ExecutionOptimisticFinalizedResponse, ForkVersionedResponse};
use rayon::prelude::*;
use ssz::Encode;
use ssz_types::FixedVector;
use ssz_types::typenum::Unsigned;
use tree_hash::TreeHash;
use types::{Bytes32, EthSpec, KZGCommitment, KZGProof, Root, SignedBeaconBlock};

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
        _ => Vec::new(),
    }
}

/// The blobs `wanted` (positions among the block's commitments) of block `root` from its
/// stored columns.
fn blobs_from_columns<E: EthSpec>(
    ctx: &ApiContext<E>,
    root: &Root,
    wanted: &[usize],
) -> Result<Vec<Vec<u8>>, HttpError> {
    let store = ctx.chain.store();
    let columns = E::NumberOfColumns::to_u64();
    let half = columns / 2;
    let indices = store.data_column_indices(root)?;
    let systematic = (0..half).all(|i| indices.contains(&i));
    if !systematic && (indices.len() as u64) < half {
        return Err(HttpError::not_found(format!(
            "block {root}: {} of {columns} columns stored, the blobs need half",
            indices.len()
        )));
    }
    let read: Vec<u64> = if systematic {
        (0..half).collect()
    } else {
        indices.iter().copied().take(half as usize).collect()
    };
    let mut sidecars = Vec::with_capacity(read.len());
    for i in &read {
        let column = store
            .get_data_column(root, *i)?
            .ok_or_else(|| HttpError::internal(format!("column {i} of {root} vanished")))?;
        let types::DataColumnSidecar::Fulu(column) = column;
        sidecars.push(column);
    }
    let mut blobs = Vec::with_capacity(wanted.len());
    for &row in wanted {
        let cells: Vec<&[u8]> = sidecars
            .iter()
            .map(|c| {
                c.column
                    .get(row)
                    .map(|cell| cell.as_ref())
                    .ok_or_else(|| HttpError::internal(format!("column without row {row}")))
            })
            .collect::<Result<_, _>>()?;
        let blob = if systematic {
            cells.concat()
        } else {
            let cells: Vec<kzg::Cell> = cells
                .iter()
                .map(|c| kzg::cell_from_bytes(c))
                .collect::<Result<_, _>>()
                .map_err(|e| HttpError::internal(format!("stored cell: {e:?}")))?;
            let recovered = kzg::recover_cells_and_kzg_proofs(&read, &cells)
                .map_err(|e| HttpError::internal(format!("recovering row {row}: {e:?}")))?;
            recovered.cells[..half as usize]
                .iter()
                .flat_map(|c| c.to_bytes())
                .collect()
        };
        blobs.push(blob);
    }
    Ok(blobs)
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
    blocking(move || {
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
            blobs_from_columns(&ctx, &at.root, &wanted)?
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

/// The blob sidecars `wanted` (positions among the commitments) of a Fulu block, made from its
/// stored columns as the spec's `BlobSidecar` is made: the blob from its cells
/// ([`blobs_from_columns`]), its KZG proof computed (`compute_blob_kzg_proof`), the block's
/// signed header, and the commitment's inclusion proof against the body root (the branch of
/// element `index` in the commitments list, the list's length, then the list's branch in the
/// body).
///
/// [spec]: deneb/validator.md#sidecar
fn blob_sidecars_from_columns<E: EthSpec>(
    ctx: &ApiContext<E>,
    root: &Root,
    block: &SignedBeaconBlock<E>,
    wanted: &[usize],
) -> Result<Vec<types::electra::BlobSidecar<E>>, HttpError> {
    let SignedBeaconBlock::Fulu(fulu_block) = block else {
        return Err(HttpError::internal(format!(
            "block {root} is not a Fulu block"
        )));
    };
    let body = &fulu_block.message.body;
    let commitments = &body.blob_kzg_commitments;
    let body_branch =
        beacon_chain::data_column_sidecars::compute_kzg_commitments_inclusion_proof(body)
            .map_err(|e| HttpError::internal(format!("block {root}: {e:?}")))?;
    let signed_block_header = block.signed_block_header();
    let tree = CommitmentsTree::new::<E>(commitments);
    let blobs = blobs_from_columns(ctx, root, wanted)?;
    // A blob's KZG proof is the costly part (an MSM over the blob: ~60 ms each here): the blobs
    // are proven in parallel on the chain's data-parallel pool, where KZG work runs.
    ctx.chain.pool().install(|| {
        wanted
            .par_iter()
            .zip(blobs.into_par_iter())
            .map(|(&index, bytes)| {
                let commitment = commitments
                    .get(index)
                    .ok_or_else(|| HttpError::internal(format!("no commitment {index}")))?;
                let blob = kzg::blob_from_bytes(&bytes)
                    .map_err(|e| HttpError::internal(format!("blob {index} of {root}: {e:?}")))?;
                let proof = kzg::compute_blob_kzg_proof(&blob, &kzg::KzgCommitment(commitment.0))
                    .map_err(|e| {
                    HttpError::internal(format!("KZG proof of blob {index}: {e}"))
                })?;
                let mut branch = tree.branch(index);
                branch.extend(body_branch.iter().copied());
                Ok(types::electra::BlobSidecar {
                    index: index as u64,
                    blob: FixedVector::new(bytes)
                        .map_err(|_| HttpError::internal("a blob of BYTES_PER_BLOB bytes"))?,
                    kzg_commitment: *commitment,
                    kzg_proof: KZGProof::from(proof.0),
                    signed_block_header: signed_block_header.clone(),
                    kzg_commitment_inclusion_proof: FixedVector::new(branch).map_err(|_| {
                        HttpError::internal(
                            "an inclusion proof of KZG_COMMITMENT_INCLUSION_PROOF_DEPTH",
                        )
                    })?,
                })
            })
            .collect()
    })
}

/// The Merkle tree of a block's commitments list below its length mix-in, built once for all
/// of the block's sidecars: each level's nodes as far as the list reaches, the zero subtrees
/// past its end left implicit (`types::merkle_proof::compute_merkle_proof` walks containers and
/// would pad the list to all `MAX_BLOB_COMMITMENTS_PER_BLOCK` leaves).
struct CommitmentsTree {
    /// `levels[0]`: the commitments' roots; each next level their parents.
    levels: Vec<Vec<[u8; 32]>>,
    /// The root of an all-zero subtree at each level.
    zeros: Vec<[u8; 32]>,
    len: usize,
}

impl CommitmentsTree {
    fn new<E: EthSpec>(commitments: &[KZGCommitment]) -> Self {
        let depth = E::MaxBlobCommitmentsPerBlock::to_usize()
            .next_power_of_two()
            .trailing_zeros() as usize;
        let mut levels = vec![
            commitments
                .iter()
                .map(|c| c.tree_hash_root().0)
                .collect::<Vec<_>>(),
        ];
        let mut zeros = vec![[0u8; 32]];
        for d in 0..depth {
            let zero = zeros[d];
            let above = levels[d]
                .chunks(2)
                .map(|pair| ethereum_hashing::hash32_concat(&pair[0], pair.get(1).unwrap_or(&zero)))
                .collect();
            levels.push(above);
            zeros.push(ethereum_hashing::hash32_concat(&zero, &zero));
        }
        Self {
            levels,
            zeros,
            len: commitments.len(),
        }
    }

    /// The branch of element `index` up to the list's root (its sibling at each level below
    /// the root), then the length the root mixes in.
    fn branch(&self, index: usize) -> Vec<Bytes32> {
        let depth = self.zeros.len() - 1;
        let mut branch: Vec<Bytes32> = (0..depth)
            .map(|d| {
                let sibling = (index >> d) ^ 1;
                Bytes32::from(
                    self.levels[d]
                        .get(sibling)
                        .copied()
                        .unwrap_or(self.zeros[d]),
                )
            })
            .collect();
        let mut length = [0u8; 32];
        length[..8].copy_from_slice(&(self.len as u64).to_le_bytes());
        branch.push(Bytes32::from(length));
        branch
    }
}

/// `GET /eth/v1/beacon/blob_sidecars/{block_id}?indices=..`: the stored sidecars of a block
/// before Fulu; for a Fulu block (which carries columns), the sidecars made from its stored or
/// recovered columns ([`blob_sidecars_from_columns`]). Deprecated in the spec, still called by
/// rollup derivation pipelines and explorers.
pub(crate) async fn get_blob_sidecars<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
    query: Query,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let id: beacon_api::BlockId = parse_path("block id", path.at(0)?)?;
    let encoding = accept(&headers, JSON_OR_SSZ)?;
    let indices: Vec<u64> = query.list("indices")?;
    blocking(move || {
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
                blob_sidecars_from_columns(&ctx, &at.root, &block, &wanted)?
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
