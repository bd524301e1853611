//! Range-sync import throughput from a loopback peer against the same blocks handed straight to
//! the chain: a chain of 4 epochs (32 blocks, minimal preset, 64 interop validators with full
//! attestations) with 6 blobs per block, every node a supernode (128 columns per block).
//!
//! - `range_sync/loopback_peer`: a fresh node at the anchor range-syncs the 32 blocks and their
//!   columns from a peer over TCP on 127.0.0.1 (Status, blocks and columns by range, the
//!   inclusion proofs, `engine_newPayload` to the mock execution client, the import with every
//!   signature and the columns' KZG proofs), timed from the node's start to its head being the
//!   peer's (node start-up included).
//! - `range_sync/direct_import`: a fresh chain at the anchor imports the same blocks with their
//!   columns through `BeaconChain::import_block`.
//!
//! The ratio direct / loopback is the share of the import throughput range sync keeps (the
//! issue's target: at least 0.8).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use beacon_chain::harness::{ChainStart, HarnessConfig};
use common::*;
use criterion::Criterion;
use types::DataColumnSidecar;

const BLOCKS: u64 = 32;
const BLOBS: u8 = 6;

fn main() {
    let spec = spec();
    let anchor = anchor(&spec);
    let mut chain: Vec<BlockAndColumns> = Vec::new();
    for slot in ANCHOR_SLOT + 1..=ANCHOR_SLOT + BLOCKS {
        let parent = chain.last().map_or(&anchor, |(b, _)| b);
        chain.push(next_block(&spec, parent, slot, BLOBS));
    }
    let current = ANCHOR_SLOT + BLOCKS;
    let head_root = chain.last().unwrap().0.block.canonical_root();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(Node::start(
        spec.clone(),
        NodeSpec {
            anchor: &anchor,
            blocks: &chain,
            current_slot: current,
            custody: None,
            static_peers: vec![],
        },
    ));
    let server_addr = server.tcp_addr();

    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(1));
    let mut group = c.benchmark_group("range_sync");
    group.throughput(criterion::Throughput::Elements(BLOCKS));
    group.bench_function("loopback_peer", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += runtime.block_on(async {
                    let started = Instant::now();
                    let node = Node::start(
                        spec.clone(),
                        NodeSpec {
                            anchor: &anchor,
                            blocks: &[],
                            current_slot: current,
                            custody: None,
                            static_peers: vec![server_addr.clone()],
                        },
                    )
                    .await;
                    node.wait_for_head(head_root).await;
                    let elapsed = started.elapsed();
                    node.stop().await;
                    elapsed
                });
            }
            total
        })
    });
    group.bench_function("direct_import", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // A chain of its own at the anchor, with no execution client.
                let fresh = runtime
                    .block_on(
                        HarnessConfig {
                            spec: (*spec).clone(),
                            genesis_time: GENESIS_TIME,
                            pool_threads: 2,
                            attach_execution_layer: false,
                            clock_slot: Some(current),
                            ms_into_slot: 500,
                            ..HarnessConfig::default()
                        }
                        .build_from::<E>(ChainStart::Anchor {
                            state: anchor.post.clone(),
                            block: anchor.block.clone(),
                        }),
                    )
                    .unwrap();
                let started = Instant::now();
                for (built, columns) in &chain {
                    let columns: Vec<DataColumnSidecar<E>> =
                        columns.iter().map(|c| (**c).clone()).collect();
                    fresh
                        .import_valid(Arc::new(built.block.clone()), &columns)
                        .unwrap();
                }
                total += started.elapsed();
                assert_eq!(fresh.chain.head().block_root, head_root);
            }
            total
        })
    });
    group.finish();
    runtime.block_on(server.stop());
    c.final_summary();
}
