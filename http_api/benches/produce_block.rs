//! produceBlockV3 (`GET /eth/v3/validator/blocks/{slot}`) over HTTP on 127.0.0.1 at 48 blobs,
//! in SSZ and in JSON: p50, p99 and max of each request, the response read in full, one request
//! at a time.
//!
//! The fixture is `beacon_chain`'s production bench's: a synthetic mainnet Fulu state of
//! 1,000,000 validators with interop keys (`ARBOR_BENCH_VALIDATORS` to change), made an anchor
//! that the mock execution client's chain continues; the mock (over HTTP with JWT) answers every
//! `engine_getPayloadV5` from its cache with a payload of 48 blobs built once ahead (as
//! `prepare_payload_for_slot` does late in the previous slot); a pool of every committee's
//! aggregate for the 8 slots before the block. Every request is a whole production for the
//! same slot (the next slot's proposer, a valid RANDAO reveal, checked): the state advanced
//! ahead, the pool packed, the payload fetched, the block's transition run, the response
//! encoded. The endpoints bench (placeholder keys, no EL) cannot check a reveal, hence a second
//! file.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use beacon_api::block_contents::BlockContents;
use beacon_chain::ProducerConfig;
use beacon_chain::harness::{ChainStart, HarnessConfig, anchor_of_state};
use execution_layer::Timeouts;
use http_api::{ApiConfig, NoNetwork};
use ssz_types::{BitList, BitVector};
use state_harness::{
    aggregate_interop_secret_key, interop_secret_key,
    keys::interop_pubkeys_cached,
    synthetic::{SyntheticParams, build_state},
};
use state_processing::{
    CachedBeaconState, CommitteeCache, StateRef,
    common::{
        compute_epoch_at_slot, get_beacon_proposer_index, get_block_root, get_block_root_at_slot,
        get_current_epoch, get_domain,
    },
    per_slot::process_slots,
};
use tree_hash::TreeHash;
use types::{
    Address, BLSSignature, BeaconState, BlobScheduleEntry, ChainSpec, EthSpec, ForkName,
    MainnetEthSpec,
    electra::{Attestation, AttestationData, Checkpoint},
    signing::{DOMAIN_BEACON_ATTESTER, DOMAIN_RANDAO, compute_signing_root},
};

#[path = "../tests/common/mod.rs"]
mod common;

type E = MainnetEthSpec;

const BLOBS: usize = 48;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// Every committee of `slot` attesting to the canonical block, as network aggregates (one
/// committee each), signed with the sum of the members' interop keys.
fn committee_aggregates(
    view: &StateRef<'_, E>,
    committees: &CommitteeCache,
    slot: u64,
) -> Vec<Attestation<E>> {
    let epoch = compute_epoch_at_slot::<E>(slot);
    let source = if epoch == get_current_epoch(view) {
        view.current_justified_checkpoint.clone()
    } else {
        view.previous_justified_checkpoint.clone()
    };
    let data = AttestationData {
        slot,
        index: 0,
        beacon_block_root: get_block_root_at_slot(view, slot).unwrap(),
        source,
        target: Checkpoint {
            epoch,
            root: get_block_root(view, epoch).unwrap(),
        },
    };
    let domain = get_domain(view, DOMAIN_BEACON_ATTESTER, Some(epoch));
    let signing_root = compute_signing_root(&data, domain);
    (0..committees.committees_per_slot())
        .map(|index| {
            let committee = committees.get_beacon_committee(slot, index).unwrap();
            let mut bits =
                BitList::<<E as EthSpec>::MaxValidatorsPerSlot>::with_capacity(committee.len())
                    .unwrap();
            for i in 0..committee.len() {
                bits.set(i, true).unwrap();
            }
            let mut committee_bits = BitVector::<<E as EthSpec>::MaxCommitteesPerSlot>::new();
            committee_bits.set(index as usize, true).unwrap();
            let key = aggregate_interop_secret_key(committee.iter().copied()).unwrap();
            Attestation {
                aggregation_bits: bits,
                data: data.clone(),
                signature: BLSSignature::from(key.sign(signing_root.as_slice()).serialize()),
                committee_bits,
            }
        })
        .collect()
}

struct Stats {
    name: String,
    samples: Vec<Duration>,
    /// Per sample, in request order: the server's production phases
    /// (`beacon_block_production_seconds{phase}`).
    phases: Vec<[Duration; PHASES.len()]>,
    bytes: usize,
}

/// The phases of `beacon_block_production_seconds`, in the order printed.
const PHASES: [&str; 6] = [
    "state",
    "pack",
    "payload",
    "transition",
    "state_root",
    "total",
];

/// Each phase's sum of `beacon_block_production_seconds` so far.
fn phase_sums(registry: &prometheus::Registry) -> [f64; PHASES.len()] {
    let mut sums = [0.0; PHASES.len()];
    for family in registry.gather() {
        if family.name() != "beacon_block_production_seconds" {
            continue;
        }
        for metric in family.get_metric() {
            let phase = metric
                .get_label()
                .iter()
                .find(|l| l.name() == "phase")
                .map(|l| l.value().to_string());
            if let Some(i) = PHASES.iter().position(|p| Some(*p) == phase.as_deref()) {
                sums[i] = metric.get_histogram().get_sample_sum();
            }
        }
    }
    sums
}

impl Stats {
    /// The slowest samples with their positions and the server's phases, beside the median
    /// sample's: where a slow request's time went.
    fn print_tail(&self, count: usize) {
        let mut order: Vec<usize> = (0..self.samples.len()).collect();
        order.sort_by_key(|&i| self.samples[i]);
        let Some(&median) = order.get(order.len() / 2) else {
            return;
        };
        let row = |label: String, i: usize| {
            let phases: Vec<String> = PHASES
                .iter()
                .zip(&self.phases[i])
                .map(|(name, d)| format!("{name} {:.1?}", d))
                .collect();
            eprintln!(
                "  {label}: request {i}, {:.2?} at the client; server: {}",
                self.samples[i],
                phases.join(", ")
            );
        };
        eprintln!("{}: the median and the slowest requests", self.name);
        row("median".into(), median);
        for (rank, &i) in order.iter().rev().take(count).enumerate() {
            row(format!("slowest #{}", rank + 1), i);
        }
    }
}

impl Stats {
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

/// The server's own time to the response head for produceBlockV3 so far (sum in seconds, count),
/// from `http_api_request_duration_seconds{route}`.
fn server_time(registry: &prometheus::Registry) -> (f64, u64) {
    registry
        .gather()
        .iter()
        .filter(|family| family.name() == "http_api_request_duration_seconds")
        .flat_map(|family| family.get_metric())
        .filter(|metric| {
            metric
                .get_label()
                .iter()
                .any(|label| label.value() == "/eth/v3/validator/blocks/{slot}")
        })
        .map(|metric| {
            let histogram = metric.get_histogram();
            (histogram.get_sample_sum(), histogram.get_sample_count())
        })
        .fold((0.0, 0), |(s, c), (ds, dc)| (s + ds, c + dc))
}

async fn measure(
    client: &reqwest::Client,
    registry: &prometheus::Registry,
    name: &str,
    runs: usize,
    request: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
) -> Stats {
    let mut samples = Vec::with_capacity(runs);
    let mut phases = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let before = phase_sums(registry);
        let start = Instant::now();
        let response = request(client).send().await.unwrap();
        let status = response.status();
        let body = response.bytes().await.unwrap();
        samples.push(start.elapsed());
        let after = phase_sums(registry);
        let mut sample = [Duration::ZERO; PHASES.len()];
        for (i, phase) in sample.iter_mut().enumerate() {
            *phase = Duration::from_secs_f64((after[i] - before[i]).max(0.0));
        }
        phases.push(sample);
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
        phases,
        bytes,
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let n: usize = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let runs: usize = std::env::var("ARBOR_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let mut spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    spec.blob_schedule = vec![BlobScheduleEntry {
        epoch: 0,
        max_blobs_per_block: BLOBS as u64,
    }];

    // The synthetic state, made an anchor the mock's chain continues (as in beacon_chain's
    // production bench): its latest block header commits to an empty body and its latest
    // payload is the mock's genesis block.
    let start = Instant::now();
    let keys = interop_pubkeys_cached(n, &target_dir().join("state-harness-keys")).unwrap();
    let params = SyntheticParams {
        slot: 375_001 * 32,
        ..SyntheticParams::default()
    };
    let mut state = build_state::<E>(&keys, &params, &spec).unwrap();
    let slot = params.slot + 1;
    let dir = tempfile::tempdir_in(target_dir()).unwrap();
    let started = HarnessConfig {
        spec,
        genesis_time: state.genesis_time,
        blobs_per_payload: BLOBS,
        producer: ProducerConfig::default(),
        pool_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        attach_execution_layer: false,
        store_path: Some(dir.path().join("db")),
        // Half a second into the block's slot.
        clock_slot: Some(slot),
        ms_into_slot: 500,
        engine_timeouts: Timeouts {
            get_payload: Duration::from_secs(600),
            forkchoice_updated: Duration::from_secs(60),
            new_payload: Duration::from_secs(60),
            ..Timeouts::default()
        },
        ..HarnessConfig::default()
    }
    .start_execution_layer::<E>()
    .await
    .unwrap();
    state.latest_execution_payload_header.block_hash = started.mock().genesis_block_hash();
    state.latest_execution_payload_header.gas_limit = 60_000_000;
    let (anchor_state, anchor_block) = anchor_of_state(BeaconState::Fulu(state)).unwrap();
    eprintln!("{n} validators: anchor in {:.2?}", start.elapsed());

    let start = Instant::now();
    let harness = started
        .build(ChainStart::Anchor {
            state: anchor_state.clone(),
            block: anchor_block,
        })
        .unwrap();
    let (spec, chain, producer, op_pool) = (
        harness.spec.clone(),
        harness.chain.clone(),
        harness.producer.clone(),
        harness.op_pool.clone(),
    );

    // A full pool: every committee of the 8 slots before the block, as network aggregates.
    let mut advanced = anchor_state.clone();
    process_slots(&mut advanced, slot, &spec).unwrap();
    for s in slot - 8..slot {
        let committees = {
            let CachedBeaconState { state, caches } = &mut advanced;
            let view = StateRef::new(state).unwrap();
            caches
                .committees(&view, compute_epoch_at_slot::<E>(s))
                .unwrap()
        };
        let view = advanced.view().unwrap();
        for attestation in committee_aggregates(&view, &committees, s) {
            op_pool
                .insert_attestation(&attestation, &committees)
                .unwrap();
        }
    }

    // The payload built once, ahead, for the slot's proposer, and its RANDAO reveal.
    let proposer = {
        let (view, caches) = advanced.view_mut().unwrap();
        get_beacon_proposer_index(&view.as_ref(), caches).unwrap()
    };
    producer.prepare_beacon_proposer([(proposer, Address::repeat_byte(0xfe))]);
    let reveal = {
        let view = advanced.view().unwrap();
        let epoch = compute_epoch_at_slot::<E>(slot);
        let root = compute_signing_root(&epoch, get_domain(&view, DOMAIN_RANDAO, None));
        BLSSignature::from(
            interop_secret_key(proposer as usize)
                .sign(root.as_slice())
                .serialize(),
        )
    };
    producer
        .prepare_payload_for_slot(slot)
        .await
        .unwrap()
        .unwrap();

    let registry = prometheus::Registry::new();
    producer.register_metrics(&registry).unwrap();
    let api = common::serve(
        &harness,
        Arc::new(NoNetwork::new()),
        registry.clone(),
        ApiConfig {
            request_timeout: Duration::from_secs(600),
            body_limit: 256 << 20,
            ..ApiConfig::default()
        },
    )
    .await;
    let base = api.base.clone();
    eprintln!(
        "chain, pool ({} aggregates), payload and server in {:.2?}",
        op_pool.counts().aggregates,
        start.elapsed()
    );

    let client = reqwest::Client::new();
    let url = format!("{base}/eth/v3/validator/blocks/{slot}?randao_reveal={reveal}");
    // Warm-up: the first production (the state advanced ahead, the payload fetched once).
    let warm = measure(&client, &registry, "warm-up", 1, |c| {
        c.get(&url).header("accept", "application/octet-stream")
    })
    .await;
    eprintln!("first production over HTTP: {:.2?}", warm.samples[0]);
    // The first production of a block starts its blobs' cells in the background (for its
    // publication, while the validator client signs); every request here produces the same
    // block again, which finds them. Wait for them, so that the samples do not share the cores
    // with a computation that belongs to the first production.
    let body = client
        .get(&url)
        .header("accept", "application/octet-stream")
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let block_root = BlockContents::<E>::from_ssz_bytes_by_fork(&body, ForkName::Fulu)
        .unwrap()
        .into_block_and_blobs()
        .0
        .tree_hash_root();
    let built = producer
        .built_blobs(&block_root)
        .expect("the block's blobs are kept for its publication");
    let cells_wait = Instant::now();
    let pool = chain.pool().clone();
    tokio::task::spawn_blocking(move || built.cells_and_proofs(&pool).map(|_| ()))
        .await
        .unwrap()
        .unwrap();
    eprintln!(
        "the first production's background cells were ready {:.2?} later",
        cells_wait.elapsed()
    );

    println!(
        "\n{n} validators, {BLOBS} blobs, sequential requests on 127.0.0.1 (response read in full)\n"
    );
    println!("| endpoint | runs | p50 | p99 | max | bytes |");
    println!("|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    let mut server = Vec::new();
    for (encoding, accept) in [
        ("SSZ", "application/octet-stream"),
        ("JSON", "application/json"),
    ] {
        let before = server_time(&registry);
        rows.push(
            measure(
                &client,
                &registry,
                &format!("GET v3/validator/blocks/{{slot}} ({encoding}), {BLOBS} blobs"),
                runs,
                |c| c.get(&url).header("accept", accept),
            )
            .await,
        );
        let after = server_time(&registry);
        server.push((
            encoding,
            (after.0 - before.0) / (after.1 - before.1).max(1) as f64,
        ));
    }
    for row in &rows {
        row.print_tail(5);
    }
    for row in &mut rows {
        row.print();
    }
    println!();
    for (encoding, mean) in server {
        println!(
            "{encoding}: server time to the response head (http_api_request_duration_seconds), \
             mean {:.2?}",
            Duration::from_secs_f64(mean)
        );
    }
    drop(api);
    drop(harness);
}
