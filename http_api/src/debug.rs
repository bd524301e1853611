//! `GET /eth/v1/debug/fork_choice`: the fork-choice store's checkpoints and its blocks, from
//! [`beacon_chain::BeaconChain::fork_choice_dump`].

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use types::{EthSpec, Root, phase0::Checkpoint};

use crate::ApiContext;
use crate::error::HttpError;
use crate::response::{blocking, json};

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// One entry of `fork_choice_nodes`.
#[derive(Debug, Serialize)]
struct ForkChoiceNodeJson {
    #[serde(with = "beacon_api::json::quoted_u64")]
    slot: u64,
    block_root: Root,
    parent_root: Root,
    #[serde(with = "beacon_api::json::quoted_u64")]
    justified_epoch: u64,
    #[serde(with = "beacon_api::json::quoted_u64")]
    finalized_epoch: u64,
    #[serde(with = "beacon_api::json::quoted_u64")]
    weight: u64,
    validity: &'static str,
    execution_block_hash: Root,
    extra_data: NodeExtraData,
}

/// The node's `extra_data` (free-form in the spec): what else the store keeps of the block.
#[derive(Debug, Serialize)]
struct NodeExtraData {
    #[serde(with = "beacon_api::json::quoted_u64")]
    proposer_index: u64,
    unrealized_justified_checkpoint: Checkpoint,
    timely: bool,
}

/// The store's `extra_data` (free-form in the spec).
#[derive(Debug, Serialize)]
struct StoreExtraData {
    unrealized_justified_checkpoint: Checkpoint,
    unrealized_finalized_checkpoint: Checkpoint,
    proposer_boost_root: Root,
    head_root: Root,
}

/// The response: no `data` envelope, as the spec has it.
#[derive(Debug, Serialize)]
struct ForkChoiceJson {
    justified_checkpoint: Checkpoint,
    finalized_checkpoint: Checkpoint,
    fork_choice_nodes: Vec<ForkChoiceNodeJson>,
    extra_data: StoreExtraData,
}

/// `GET /eth/v1/debug/fork_choice`: the store's justified and finalized checkpoints and every
/// block it holds (the proto-array: parents before children) with its weight, its post-state's
/// justified and finalized epochs, and its payload's validity and block hash.
pub(crate) async fn get_fork_choice<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    blocking(ctx.workers(), move || {
        let dump = ctx.chain.fork_choice_dump();
        let head_root = ctx.chain.head().block_root;
        let nodes = dump
            .nodes
            .into_iter()
            .map(|n| ForkChoiceNodeJson {
                slot: n.slot,
                block_root: n.block_root,
                parent_root: n.parent_root,
                justified_epoch: n.justified_epoch,
                finalized_epoch: n.finalized_epoch,
                weight: n.weight,
                validity: n.validity.as_str(),
                execution_block_hash: n.execution_block_hash,
                extra_data: NodeExtraData {
                    proposer_index: n.proposer_index,
                    unrealized_justified_checkpoint: n.unrealized_justified,
                    timely: n.timely,
                },
            })
            .collect();
        json(&ForkChoiceJson {
            justified_checkpoint: dump.justified_checkpoint,
            finalized_checkpoint: dump.finalized_checkpoint,
            fork_choice_nodes: nodes,
            extra_data: StoreExtraData {
                unrealized_justified_checkpoint: dump.unrealized_justified_checkpoint,
                unrealized_finalized_checkpoint: dump.unrealized_finalized_checkpoint,
                proposer_boost_root: dump.proposer_boost_root,
                head_root,
            },
        })
    })
    .await
}
