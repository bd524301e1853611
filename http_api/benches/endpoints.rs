//! Server latency of the validator-client endpoints over HTTP on 127.0.0.1 with a synthetic
//! mainnet Fulu state of 1,000,000 validators (`ARBOR_BENCH_VALIDATORS` to change; keys are
//! placeholders, nothing here verifies a signature): p50, p99 and max of each request, the
//! response fully read, one request at a time.
//!
//! A plain harness (not criterion): the issue asks for p99 and max beside the median, and the
//! large reads (every validator, the whole state) take seconds each.
//!
//! First, the server's memory for the debug state in SSZ and in JSON: how far the process's
//! resident memory rises while one is served and read a piece at a time.
//! `ARBOR_BENCH_ONLY_MEMORY=1` stops after that.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use beacon_chain::harness::{ChainStart, HarnessConfig, anchor_of_state};
use beacon_chain::{BeaconChain, ProducerConfig};
use http_api::{ApiConfig, NoNetwork};
use ssz::Encode;
use state_harness::synthetic::{SyntheticParams, build_state_with_placeholder_keys};
use state_processing::genesis::interop_genesis_block;
use types::{
    BeaconState, ChainSpec, EthSpec, ForkName, KZGCommitment, MainnetEthSpec, Root,
    SignedBeaconBlock, Transaction,
};

#[path = "../tests/common/mod.rs"]
mod common;

type E = MainnetEthSpec;

struct Stats {
    name: String,
    samples: Vec<Duration>,
    bytes: usize,
}

impl Stats {
    fn print_with_mean(&mut self) {
        self.samples.sort();
        let at = |q: f64| {
            let i = ((self.samples.len() as f64 - 1.0) * q).round() as usize;
            self.samples[i]
        };
        let mean = self.samples.iter().sum::<Duration>() / self.samples.len().max(1) as u32;
        println!(
            "| {} | {} | {:.2?} | {:.2?} | {:.2?} | {:.2?} | {} |",
            self.name,
            self.samples.len(),
            mean,
            at(0.5),
            at(0.99),
            self.samples.last().copied().unwrap_or_default(),
            self.bytes
        );
    }

    fn print(&mut self) {
        self.samples.sort();
        let at = |q: f64| {
            let i = ((self.samples.len() as f64 - 1.0) * q).round() as usize;
            self.samples[i]
        };
        println!(
            "| {} | {} | {:.2?} | {:.2?} | {:.2?} | {} |",
            self.name,
            self.samples.len(),
            at(0.5),
            at(0.99),
            self.samples.last().copied().unwrap_or_default(),
            self.bytes
        );
    }
}

async fn measure(
    client: &reqwest::Client,
    name: &str,
    runs: usize,
    request: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
) -> Stats {
    let mut samples = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let response = request(client).send().await.unwrap();
        let status = response.status();
        let body = response.bytes().await.unwrap();
        samples.push(start.elapsed());
        assert!(
            status.is_success(),
            "{name}: {status} {}",
            String::from_utf8_lossy(&body[..body.len().min(300)])
        );
        bytes = body.len();
    }
    Stats {
        name: name.to_string(),
        samples,
        bytes,
    }
}

/// The process's resident memory in MiB (`VmRSS`).
fn resident_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// How far the process's resident memory rose above where it stood while `request` was
/// answered and its body read and dropped a piece at a time (sampled every 2 ms): the
/// server's memory for one request, since the client keeps nothing. Returns the rise in MiB
/// and the body's length.
async fn resident_rise(
    client: &reqwest::Client,
    request: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
) -> (f64, usize) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let before = resident_mib();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut most = resident_mib();
            while !done.load(Ordering::Relaxed) {
                most = most.max(resident_mib());
                std::thread::sleep(Duration::from_millis(2));
            }
            most
        })
    };
    let mut response = request(client).send().await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let mut bytes = 0;
    while let Some(piece) = response.chunk().await.unwrap() {
        bytes += piece.len();
    }
    done.store(true, Ordering::Relaxed);
    (sampler.join().unwrap() - before, bytes)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let n: u64 = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let spec = Arc::new(ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu));
    let spe = E::slots_per_epoch();
    let params = SyntheticParams {
        slot: 375_000 * spe,
        ..SyntheticParams::default()
    };
    let start = Instant::now();
    let state =
        BeaconState::Fulu(build_state_with_placeholder_keys::<E>(n, &params, &spec).unwrap());
    let (state, block) = anchor_of_state(state).unwrap();
    eprintln!(
        "{n} validators: state and anchor in {:.2?}",
        start.elapsed()
    );

    let start = Instant::now();
    // No block production here: the mock execution client is never called.
    let harness = HarnessConfig {
        spec: (*spec).clone(),
        genesis_time: *state.state.genesis_time(),
        producer: ProducerConfig::default(),
        attach_execution_layer: false,
        pool_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        ..HarnessConfig::default()
    }
    .build_from::<E>(ChainStart::Anchor { state, block })
    .await
    .unwrap();
    let chain = harness.chain.clone();
    let server = common::serve(
        &harness,
        Arc::new(NoNetwork::new()),
        prometheus::Registry::new(),
        ApiConfig {
            request_timeout: Duration::from_secs(600),
            body_limit: 256 << 20,
            ..ApiConfig::default()
        },
    )
    .await;
    // The API's CPU work on a beacon processor's API kinds, as the node runs it.
    if server
        .ctx
        .set_workers(Arc::new(common::ProcessorWorkers::new()))
        .is_err()
    {
        panic!("the server's workers are set once");
    }
    let base = server.base.clone();
    eprintln!("chain and server in {:.2?}", start.elapsed());

    let client = reqwest::Client::new();
    let epoch = params.slot / spe;
    let url = |path: &str| format!("{base}{path}");

    // The server's memory for one debug-state request, measured first, before the other
    // requests' freed memory could hide it. Three of each: the first may grow the allocator's
    // pools, the later ones reuse them.
    for (what, accept) in [
        ("SSZ", "application/octet-stream"),
        ("JSON", "application/json"),
    ] {
        let mut rises = Vec::new();
        let mut length = 0;
        for _ in 0..3 {
            let (rise, bytes) = resident_rise(&client, |c| {
                c.get(url("/eth/v2/debug/beacon/states/head"))
                    .header("accept", accept)
            })
            .await;
            rises.push(format!("{rise:.0}"));
            length = bytes;
        }
        println!(
            "GET v2/debug/beacon/states/head ({what}, {:.0} MB): resident memory rose by {} MiB while it was served",
            length as f64 / 1e6,
            rises.join(", ")
        );
    }
    if std::env::var("ARBOR_BENCH_ONLY_MEMORY").is_ok_and(|v| v == "1") {
        return;
    }
    blob_sidecars_of_48_blobs(&chain, &client, &base, params.slot - 2).await;
    if std::env::var("ARBOR_BENCH_ONLY_BLOB_SIDECARS").is_ok_and(|v| v == "1") {
        return;
    }
    let all: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let all_body = serde_json::to_vec(&all).unwrap();
    let some: Vec<String> = (0..n)
        .step_by((n / 1000).max(1) as usize)
        .map(|i| i.to_string())
        .collect();
    let some_body = serde_json::to_vec(&some).unwrap();
    let keys: Vec<String> = (0..n)
        .step_by((n / 1000).max(1) as usize)
        .map(|i| {
            chain
                .head()
                .state
                .state
                .validators()
                .expect("a state before Gloas")
                .get(i as usize)
                .unwrap()
                .pubkey
                .to_string()
        })
        .collect();
    let keys_body = serde_json::to_vec(&serde_json::json!({ "ids": keys })).unwrap();
    let ids_query = some[..100.min(some.len())].join(",");

    // Warm-up: committees of the epoch and the public-key index built once.
    measure(&client, "warm-up", 1, |c| {
        c.post(url(&format!("/eth/v1/validator/duties/attester/{epoch}")))
            .header("content-type", "application/json")
            .body(some_body.clone())
    })
    .await;
    measure(&client, "warm-up", 1, |c| {
        c.post(url("/eth/v1/beacon/states/head/validators"))
            .header("content-type", "application/json")
            .body(keys_body.clone())
    })
    .await;

    println!("\n{n} validators, sequential requests on 127.0.0.1 (response read in full)\n");
    println!("| endpoint | runs | p50 | p99 | max | bytes |");
    println!("|---|---|---|---|---|---|");
    let mut rows = vec![
        measure(&client, "POST duties/attester, all validators", 10, |c| {
            c.post(url(&format!("/eth/v1/validator/duties/attester/{epoch}")))
                .header("content-type", "application/json")
                .body(all_body.clone())
        })
        .await,
        measure(&client, "POST duties/attester, 1000 validators", 100, |c| {
            c.post(url(&format!("/eth/v1/validator/duties/attester/{epoch}")))
                .header("content-type", "application/json")
                .body(some_body.clone())
        })
        .await,
        measure(&client, "GET duties/proposer", 100, |c| {
            c.get(url(&format!("/eth/v1/validator/duties/proposer/{epoch}")))
        })
        .await,
        measure(&client, "POST duties/sync, 1000 validators", 100, |c| {
            c.post(url(&format!("/eth/v1/validator/duties/sync/{epoch}")))
                .header("content-type", "application/json")
                .body(some_body.clone())
        })
        .await,
        measure(&client, "GET attestation_data", 200, |c| {
            c.get(url(&format!(
                "/eth/v1/validator/attestation_data?slot={}&committee_index=0",
                params.slot
            )))
        })
        .await,
        measure(&client, "GET states/head/validators?id=(100)", 100, |c| {
            c.get(url(&format!(
                "/eth/v1/beacon/states/head/validators?id={ids_query}"
            )))
        })
        .await,
        measure(&client, "POST states/head/validators, 1000 keys", 50, |c| {
            c.post(url("/eth/v1/beacon/states/head/validators"))
                .header("content-type", "application/json")
                .body(keys_body.clone())
        })
        .await,
        measure(&client, "GET node/syncing", 200, |c| {
            c.get(url("/eth/v1/node/syncing"))
        })
        .await,
        measure(&client, "GET v2/beacon/blocks/head (JSON)", 200, |c| {
            c.get(url("/eth/v2/beacon/blocks/head"))
        })
        .await,
        measure(&client, "GET v2/beacon/blocks/head (SSZ)", 200, |c| {
            c.get(url("/eth/v2/beacon/blocks/head"))
                .header("accept", "application/octet-stream")
        })
        .await,
        measure(&client, "GET states/head/validators, all (JSON)", 3, |c| {
            c.get(url("/eth/v1/beacon/states/head/validators"))
        })
        .await,
        measure(
            &client,
            "GET v2/debug/beacon/states/head (SSZ), written while sent",
            5,
            |c| {
                c.get(url("/eth/v2/debug/beacon/states/head"))
                    .header("accept", "application/octet-stream")
            },
        )
        .await,
        measure(&client, "GET v2/debug/beacon/states/head (JSON)", 2, |c| {
            c.get(url("/eth/v2/debug/beacon/states/head"))
        })
        .await,
    ];
    for row in &mut rows {
        row.print();
    }

    // Pre-serialized against decoded-and-re-encoded, side by side: a block with 48 blob
    // commitments and a payload of 248 transactions (about 150 KB), and the debug state. Over
    // HTTP the server hands out bytes (the block's as stored, the state's as kept after its
    // first encoding); in-process, the work of one request each way.
    let block_root = {
        let mut block = interop_genesis_block::<E>(Root::ZERO);
        let SignedBeaconBlock::Fulu(inner) = &mut block else {
            unreachable!("interop_genesis_block is a Fulu block")
        };
        inner.message.slot = params.slot - 1;
        let body = &mut inner.message.body;
        body.blob_kzg_commitments = vec![KZGCommitment::from([0xc0; 48]); 48]
            .try_into()
            .unwrap();
        let transactions: Vec<Transaction<E>> = (0..248)
            .map(|i| {
                vec![i as u8; if i < 48 { 300 } else { 700 }]
                    .try_into()
                    .unwrap()
            })
            .collect();
        body.execution_payload.transactions = transactions.try_into().unwrap();
        let root = block.canonical_root();
        chain.store().put_block(root, &block).unwrap();
        root
    };
    let store = chain.store().clone();
    let state_bytes = {
        let head = chain.head();
        head.state.state.as_ssz_bytes()
    };
    let block_path = format!("/eth/v2/beacon/blocks/{block_root}");
    let mut side_by_side = vec![
        measure(
            &client,
            "block, 48 blobs (SSZ): served over HTTP",
            200,
            |c| {
                c.get(url(&block_path))
                    .header("accept", "application/octet-stream")
            },
        )
        .await,
        in_process(
            "block, 48 blobs: pre-serialized (the store's bytes)",
            200,
            || store.get_block_ssz(&block_root).unwrap().unwrap().len(),
        ),
        in_process(
            "block, 48 blobs: decoded and re-encoded (store, decode, encode)",
            200,
            || {
                let block = store.get_block(&block_root).unwrap().unwrap();
                block.as_ssz_bytes().len()
            },
        ),
        measure(
            &client,
            "debug state (SSZ): served over HTTP, written while sent",
            10,
            |c| {
                c.get(url("/eth/v2/debug/beacon/states/head"))
                    .header("accept", "application/octet-stream")
            },
        )
        .await,
        in_process(
            "debug state: pre-serialized (a copy of bytes kept)",
            10,
            || state_bytes.clone().len(),
        ),
        in_process("debug state: re-encoded whole (as_ssz_bytes)", 10, || {
            chain.head().state.state.as_ssz_bytes().len()
        }),
        in_process("debug state: encoded in pieces (ssz_write)", 10, || {
            let mut counter = ByteCounter(0);
            chain.head().state.state.ssz_write(&mut counter).unwrap();
            counter.0
        }),
    ];
    println!("\nPre-serialized against decoded and re-encoded\n");
    println!("| what | runs | mean | median | p99 | max | bytes |");
    println!("|---|---|---|---|---|---|---|");
    for row in &mut side_by_side {
        row.print_with_mean();
    }
}

/// The deprecated `blob_sidecars` of a Fulu block with 48 blobs, made from its 128 stored
/// columns (blob from its cells, KZG proof computed, inclusion proof built), against `blobs` of
/// the same block (the same blobs without proofs) in the same run: time per request and the
/// server's resident memory while one is answered.
async fn blob_sidecars_of_48_blobs(
    chain: &BeaconChain<E>,
    client: &reqwest::Client,
    base: &str,
    slot: u64,
) {
    const BLOBS: usize = 48;
    let start = Instant::now();
    let blobs: Vec<kzg::Blob> = (0..BLOBS)
        .map(|b| {
            let mut bytes = vec![0u8; kzg::BYTES_PER_BLOB];
            for (i, fe) in bytes
                .chunks_exact_mut(kzg::BYTES_PER_FIELD_ELEMENT)
                .enumerate()
            {
                // Canonical field elements: the top byte of each stays zero.
                for (j, byte) in fe.iter_mut().enumerate().skip(1) {
                    *byte = (i as u8).wrapping_mul(7) ^ (j as u8) ^ (b as u8);
                }
            }
            *kzg::blob_from_bytes(&bytes).unwrap()
        })
        .collect();
    let mut block = interop_genesis_block::<E>(Root::ZERO);
    let SignedBeaconBlock::Fulu(inner) = &mut block else {
        unreachable!("interop_genesis_block is a Fulu block")
    };
    inner.message.slot = slot;
    inner.message.body.blob_kzg_commitments = blobs
        .iter()
        .map(|b| KZGCommitment::from(kzg::blob_to_kzg_commitment(b).unwrap().0))
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let cells: Vec<kzg::CellsAndProofs> = blobs
        .iter()
        .map(|b| kzg::compute_cells_and_kzg_proofs(b).unwrap())
        .collect();
    let columns =
        beacon_chain::data_column_sidecars::get_data_column_sidecars_from_block(&block, &cells)
            .unwrap();
    let root = block.canonical_root();
    let store = chain.store();
    let mut batch = store.begin_batch().unwrap();
    batch.put_block(root, &block).unwrap();
    for column in &columns {
        batch.put_data_column(root, column).unwrap();
    }
    batch.commit().unwrap();
    eprintln!(
        "a block of {BLOBS} blobs and its 128 columns stored in {:.2?}",
        start.elapsed()
    );
    let url = |path: &str| format!("{base}{path}");
    let sidecars = format!("/eth/v1/beacon/blob_sidecars/{root}");
    let blobs_path = format!("/eth/v1/beacon/blobs/{root}");
    println!("\nOne Fulu block with {BLOBS} blobs, its 128 columns stored (sequential requests)\n");
    for (what, accept) in [
        ("SSZ", "application/octet-stream"),
        ("JSON", "application/json"),
    ] {
        let mut rises = Vec::new();
        for _ in 0..3 {
            let (rise, _) =
                resident_rise(client, |c| c.get(url(&sidecars)).header("accept", accept)).await;
            rises.push(format!("{rise:.0}"));
        }
        println!(
            "GET blob_sidecars ({what}): resident memory rose by {} MiB while it was served",
            rises.join(", ")
        );
    }
    println!("\n| endpoint | runs | p50 | p99 | max | bytes |");
    println!("|---|---|---|---|---|---|");
    let mut rows = vec![
        measure(
            client,
            "GET blobs (SSZ): the baseline, blobs from cells",
            10,
            |c| {
                c.get(url(&blobs_path))
                    .header("accept", "application/octet-stream")
            },
        )
        .await,
        measure(client, "GET blob_sidecars (SSZ)", 10, |c| {
            c.get(url(&sidecars))
                .header("accept", "application/octet-stream")
        })
        .await,
        measure(client, "GET blob_sidecars (JSON)", 10, |c| {
            c.get(url(&sidecars)).header("accept", "application/json")
        })
        .await,
        measure(client, "GET blob_sidecars?indices=0 (SSZ)", 10, |c| {
            c.get(url(&format!("{sidecars}?indices=0")))
                .header("accept", "application/octet-stream")
        })
        .await,
    ];
    for row in &mut rows {
        row.print();
    }
}

/// A writer that only counts what it is given.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Times `work` `runs` times in this process (no HTTP).
fn in_process(name: &str, runs: usize, mut work: impl FnMut() -> usize) -> Stats {
    let mut samples = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let start = Instant::now();
        bytes = std::hint::black_box(work());
        samples.push(start.elapsed());
    }
    Stats {
        name: name.to_string(),
        samples,
        bytes,
    }
}
