//! Block production and publication at 48 blobs on a synthetic mainnet state (1,000,000
//! validators by default; `ARBOR_BENCH_VALIDATORS` to change) against the mock execution client
//! over HTTP with JWT, its payload of 48 blobs built once ahead (as `prepare_payload_for_slot`
//! does late in the previous slot) and answered from its cache to every `engine_getPayloadV5`:
//!
//! - `produce_block_v3_48_blobs`: the whole of `produce_block_v3` (the state advanced ahead,
//!   as the slot timer does), with a pool of 8 slots of attestations (64 committees each);
//! - `columns_built_here_48_blobs`: publication's column sidecars for a block this node built
//!   (cells from the blobs, proofs as given, no KZG check);
//! - `columns_kzg_verified_48_blobs`: the same for a block built elsewhere (the cell proofs
//!   verified in one batch): what skipping the check saves;
//! - `get_data_column_sidecars_baseline_48_blobs`: the bare `get_data_column_sidecars` from
//!   cells and proofs computed beforehand.
//!
//! - `produce_block_v3_blinded_48_blobs`: `produce_block_v3_with_builder` when the mock
//!   relay's bid (its own 48-blob payload, built ahead) wins: getHeader and its checks beside
//!   the local payload, the blinded block's transition.
//!
//! One `publish_block` at the gossip level is timed once at the end (until the columns are
//! handed to the broadcaster, and to the import's end): a block imports only once. So is one
//! `publish_blinded_block` of the blinded block (submitBlindedBlock v1 through the mock relay,
//! the builder's blobs' cell proofs verified), on a second chain from the same anchor.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    reason = "bench setup: a failed step aborts the run"
)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use beacon_chain::harness::{ChainStart, HarnessConfig, anchor_of_state};
use beacon_chain::{
    BlindedPublication, BlockBroadcaster, BlockProducer, BroadcastValidation, BuilderOptions,
    ProducedBlockV3, ProducerConfig, data_column_sidecars::get_data_column_sidecars_from_block,
    execution::forkchoice_state_of, production::compute_cells_and_proofs,
};
use builder_client::mock_relay::MockRelay;
use builder_client::{
    BuilderHttpClient, BuilderTimeouts, SignedBlindedBeaconBlock, SignedValidatorRegistrationV1,
    SubmitVersion, ValidatorRegistrationV1, builder_domain,
};
use criterion::{Criterion, SamplingMode};
use execution_layer::{PayloadAttributes, Timeouts};
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
        get_current_epoch, get_domain, get_randao_mix,
    },
    per_block::get_expected_withdrawals,
    per_slot::process_slots,
};
use types::{
    Address, BLSPubkey, BLSSignature, BeaconBlock, BeaconState, BlobScheduleEntry, ChainSpec,
    DataColumnSidecar, EthSpec, ForkName, MainnetEthSpec, SignedBeaconBlock, U256,
    electra::{Attestation, AttestationData, Checkpoint},
    signing::{
        DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO, compute_signing_root,
    },
};

type E = MainnetEthSpec;

const BLOBS: usize = 48;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// Records when the columns were handed over.
#[derive(Default)]
struct Timed {
    columns_at: Mutex<Option<(Instant, usize)>>,
}

impl BlockBroadcaster<E> for Timed {
    fn broadcast_block(&self, _: Arc<SignedBeaconBlock<E>>) {}

    fn broadcast_data_columns(&self, columns: Vec<Arc<DataColumnSidecar<E>>>) {
        *self.columns_at.lock().unwrap() = Some((Instant::now(), columns.len()));
    }

    fn broadcast_execution_payload_envelope(
        &self,
        _: Arc<types::gloas::SignedExecutionPayloadEnvelope<E>>,
    ) {
    }
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

fn main() {
    let n: usize = std::env::var("ARBOR_BENCH_VALIDATORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    spec.blob_schedule = vec![BlobScheduleEntry {
        epoch: 0,
        max_blobs_per_block: BLOBS as u64,
    }];

    // The synthetic state, made an anchor the mock's chain continues: its latest block header
    // commits to an empty body (so the anchor block below is the block of that header) and its
    // latest payload is the mock's genesis block.
    let start = Instant::now();
    let keys = interop_pubkeys_cached(n, &target_dir().join("state-harness-keys")).unwrap();
    // The store takes an anchor at an epoch boundary.
    let params = SyntheticParams {
        slot: 375_001 * 32,
        ..SyntheticParams::default()
    };
    let mut state = build_state::<E>(&keys, &params, &spec).unwrap();
    let slot = params.slot + 1;
    let genesis_time = state.genesis_time;
    // The harness's options of both chains here: the clock half a second into the block's
    // slot, a pool with a thread per core, no execution client attached, the producer's
    // default options, the store in `store_dir`.
    let config = |store_dir: &tempfile::TempDir| HarnessConfig {
        spec: spec.clone(),
        genesis_time,
        blobs_per_payload: BLOBS,
        producer: ProducerConfig::default(),
        pool_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        attach_execution_layer: false,
        store_path: Some(store_dir.path().join("db")),
        clock_slot: Some(slot),
        ms_into_slot: 500,
        engine_timeouts: Timeouts {
            get_payload: Duration::from_secs(600),
            forkchoice_updated: Duration::from_secs(60),
            new_payload: Duration::from_secs(60),
            ..Timeouts::default()
        },
        ..HarnessConfig::default()
    };
    let dir = tempfile::tempdir_in(target_dir()).unwrap();
    let started = rt
        .block_on(config(&dir).start_execution_layer::<E>())
        .unwrap();
    state.latest_execution_payload_header.block_hash = started.mock().genesis_block_hash();
    // The mock's genesis gas limit, which the builder's bid is checked against.
    state.latest_execution_payload_header.gas_limit = 60_000_000;
    let (anchor_state, anchor_block) = anchor_of_state(BeaconState::Fulu(state)).unwrap();
    let second_anchor = (anchor_state.clone(), anchor_block.clone());
    eprintln!("{n} validators: anchor in {:.2?}", start.elapsed());

    let harness = started
        .build(ChainStart::Anchor {
            state: anchor_state.clone(),
            block: anchor_block,
        })
        .unwrap();
    let spec = harness.spec.clone();
    let (chain, producer, op_pool) = (
        harness.chain.clone(),
        harness.producer.clone(),
        harness.op_pool.clone(),
    );
    // More engine API clients to the mock (the relay's, other producers').
    let engine = || harness.engine().unwrap();

    // A full pool: every committee of the 8 slots before the block, as network aggregates.
    let start = Instant::now();
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
    eprintln!(
        "pool: {} aggregates in {:.2?}",
        op_pool.counts().aggregates,
        start.elapsed()
    );

    // The payload built once, ahead, for the slot's proposer.
    let proposer = {
        let (view, caches) = advanced.view_mut().unwrap();
        get_beacon_proposer_index(&view.as_ref(), caches).unwrap()
    };
    producer.prepare_beacon_proposer([(proposer, Address::repeat_byte(0xfe))]);
    // The proposer's RANDAO reveal, checked by every production as the API does.
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

    let start = Instant::now();
    rt.block_on(producer.prepare_payload_for_slot(slot))
        .unwrap()
        .unwrap();
    let first = rt
        .block_on(producer.produce_block_v3(slot, reveal, None, false, None))
        .unwrap();
    assert_eq!(first.blobs.len(), BLOBS);
    assert_eq!(
        match &first.block {
            BeaconBlock::Fulu(b) => b.body.attestations.len(),
            _ => 0,
        },
        8
    );
    eprintln!(
        "mock payload with {BLOBS} blobs built and first block produced in {:.2?}",
        start.elapsed()
    );

    // A producer with the mock relay, whose payload for the slot (paying another fee
    // recipient, 48 blobs) is built ahead, and a bid worth more than the local payload.
    let start = Instant::now();
    let relay = rt
        .block_on(MockRelay::<E>::start(
            (*spec).clone(),
            bls::SecretKey::random(),
            engine(),
        ))
        .unwrap();
    let builder_options = BuilderOptions {
        client: Arc::new(
            BuilderHttpClient::new(&relay.url_with_pubkey(), BuilderTimeouts::default()).unwrap(),
        ),
        submit: SubmitVersion::V1,
    };
    let with_builder = Arc::new(BlockProducer::new(
        chain.clone(),
        op_pool.clone(),
        engine(),
        ProducerConfig {
            builder: Some(builder_options.clone()),
            ..ProducerConfig::default()
        },
    ));
    with_builder.prepare_beacon_proposer([(proposer, Address::repeat_byte(0xfe))]);
    rt.block_on(with_builder.prepare_payload_for_slot(slot))
        .unwrap()
        .unwrap();
    let registration = {
        let key = interop_secret_key(proposer as usize);
        let message = ValidatorRegistrationV1 {
            fee_recipient: Address::repeat_byte(0xb1),
            gas_limit: 60_000_000,
            timestamp: genesis_time,
            pubkey: BLSPubkey::from(key.public_key().compress().0),
        };
        let root = compute_signing_root(&message, builder_domain(&spec));
        SignedValidatorRegistrationV1 {
            message,
            signature: BLSSignature::from(key.sign(root.as_slice()).serialize()),
        }
    };
    assert_eq!(
        rt.block_on(with_builder.register_validators(&[registration]))
            .unwrap(),
        1
    );
    {
        let head = chain.head();
        let view = advanced.view().unwrap();
        let attributes = PayloadAttributes {
            timestamp: spec.compute_time_at_slot(genesis_time, slot),
            prev_randao: get_randao_mix(&view, get_current_epoch(&view)),
            suggested_fee_recipient: Address::repeat_byte(0xb1),
            withdrawals: get_expected_withdrawals(&view)
                .unwrap()
                .withdrawals
                .iter()
                .map(Into::into)
                .collect(),
            parent_beacon_block_root: head.block_root,
        };
        rt.block_on(relay.prepare_payload(
            slot,
            forkchoice_state_of(&chain, &head).unwrap(),
            &attributes,
        ))
        .unwrap();
    }
    relay.set_bid_value(Some(U256::from(10u64).pow(U256::from(18u64))));
    let produce_blinded = || match rt
        .block_on(with_builder.produce_block_v3_with_builder(slot, reveal, None, false, None))
        .unwrap()
    {
        ProducedBlockV3::Blinded(blinded) => blinded,
        ProducedBlockV3::Full { outcome, .. } => panic!("the local block: {outcome:?}"),
    };
    // Published at the end (the head moves when the local block is published).
    let blinded = produce_blinded();
    assert_eq!(blinded.block.body.blob_kzg_commitments.len(), BLOBS);
    eprintln!(
        "relay payload with {BLOBS} blobs built and first blinded block produced in {:.2?}",
        start.elapsed()
    );

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("production");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(1));

    group.bench_function("produce_block_v3_48_blobs", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(producer.produce_block_v3(slot, reveal, None, false, None))
                    .unwrap(),
            )
        })
    });

    group.bench_function("produce_block_v3_blinded_48_blobs", |b| {
        b.iter(|| black_box(produce_blinded()))
    });

    // The last block produced, signed by its proposer.
    let produced = rt
        .block_on(producer.produce_block_v3(slot, reveal, None, false, None))
        .unwrap();
    eprintln!("produce_block_v3 phases: {:?}", produced.timings);
    let BeaconBlock::Fulu(message) = produced.block.clone() else {
        unreachable!("a Fulu slot")
    };
    let domain = {
        let view = advanced.view().unwrap();
        get_domain(&view, DOMAIN_BEACON_PROPOSER, None)
    };
    let signature = BLSSignature::from(
        interop_secret_key(message.proposer_index as usize)
            .sign(compute_signing_root(&message, domain).as_slice())
            .serialize(),
    );
    let signed = Arc::new(SignedBeaconBlock::Fulu(types::electra::SignedBeaconBlock {
        message,
        signature,
    }));
    let blob_data = (produced.kzg_proofs.clone(), produced.blobs.clone());

    group.bench_function("columns_built_here_48_blobs", |b| {
        b.iter(|| {
            let (columns, verified) = producer
                .data_column_sidecars_for_publication(&signed, Some(blob_data.clone()))
                .unwrap();
            assert!(!verified);
            black_box(columns)
        })
    });
    let elsewhere = Arc::new(BlockProducer::new(
        chain.clone(),
        op_pool.clone(),
        engine(),
        ProducerConfig::default(),
    ));
    group.bench_function("columns_kzg_verified_48_blobs", |b| {
        b.iter(|| {
            let (columns, verified) = elsewhere
                .data_column_sidecars_for_publication(&signed, Some(blob_data.clone()))
                .unwrap();
            assert!(verified);
            black_box(columns)
        })
    });
    let cells: Vec<kzg::CellsAndProofs> = produced
        .blobs
        .iter()
        .zip(produced.kzg_proofs.chunks_exact(kzg::CELLS_PER_EXT_BLOB))
        .map(|(blob, proofs)| kzg::CellsAndProofs {
            cells: kzg::compute_cells(&kzg::blob_from_bytes(blob).unwrap()).unwrap(),
            proofs: Box::new(std::array::from_fn(|i| kzg::KzgProof(proofs[i].0))),
        })
        .collect();
    group.bench_function("cells_for_48_blobs", |b| {
        b.iter(|| {
            black_box(
                chain
                    .pool()
                    .install(|| {
                        compute_cells_and_proofs::<E>(&produced.blobs, &produced.kzg_proofs)
                    })
                    .unwrap(),
            )
        })
    });
    group.bench_function("get_data_column_sidecars_baseline_48_blobs", |b| {
        b.iter(|| black_box(get_data_column_sidecars_from_block(&signed, &cells).unwrap()))
    });
    group.finish();

    let broadcaster = Timed::default();
    let start = Instant::now();
    let published = rt
        .block_on(producer.publish_block(
            signed,
            Some(blob_data),
            BroadcastValidation::Gossip,
            &broadcaster,
        ))
        .unwrap();
    let total = start.elapsed();
    let (at, count) = broadcaster.columns_at.lock().unwrap().unwrap();
    eprintln!(
        "publish_block (gossip, one run): {count} columns handed to networking after {:.2?}, \
         imported ({:?}) after {total:.2?}",
        at - start,
        published.outcome
    );

    // The blinded block published on a second chain from the same anchor (the first has a
    // block at the slot now): submitBlindedBlock v1 reveals the builder's payload and blobs,
    // whose cell proofs are verified (they are not this node's), then the columns go out.
    let (anchor_state, anchor_block) = second_anchor;
    let dir2 = tempfile::tempdir_in(target_dir()).unwrap();
    let second = rt
        .block_on(config(&dir2).build_from(ChainStart::Anchor {
            state: anchor_state,
            block: anchor_block,
        }))
        .unwrap();
    let chain2 = second.chain.clone();
    let publisher = Arc::new(BlockProducer::new(
        chain2.clone(),
        op_pool.clone(),
        engine(),
        ProducerConfig {
            builder: Some(builder_options),
            ..ProducerConfig::default()
        },
    ));
    let signed_blinded = SignedBlindedBeaconBlock {
        signature: BLSSignature::from(
            interop_secret_key(blinded.proposer_index as usize)
                .sign(compute_signing_root(&blinded.block, domain).as_slice())
                .serialize(),
        ),
        message: blinded.block,
    };
    let broadcaster = Timed::default();
    let start = Instant::now();
    let published = rt
        .block_on(publisher.publish_blinded_block(
            signed_blinded,
            ForkName::Fulu,
            BroadcastValidation::Gossip,
            &broadcaster,
        ))
        .unwrap();
    let total = start.elapsed();
    let (at, count) = broadcaster.columns_at.lock().unwrap().unwrap();
    let BlindedPublication::Published(published) = published else {
        unreachable!("v1: unblinded and published here")
    };
    eprintln!(
        "publish_blinded_block (v1 through the mock relay, gossip, one run): {count} columns \
         handed to networking after {:.2?}, imported ({:?}, KZG verified: {}) after {total:.2?}",
        at - start,
        published.outcome,
        published.kzg_verified
    );
    assert_eq!(chain2.head().block_root, blinded.block_root);
    // Of which the submitBlindedBlock call (the relay's reveal, decoded), from the metric.
    let registry = prometheus::Registry::new();
    beacon_chain::production::builder_metrics::register(&registry).unwrap();
    let submit = registry
        .gather()
        .into_iter()
        .find(|f| f.name() == "beacon_builder_submit_blinded_seconds")
        .unwrap();
    let submit = submit.get_metric()[0].get_histogram();
    eprintln!(
        "  of which submitBlindedBlock v1: {:.2?} ({} call)",
        Duration::from_secs_f64(submit.get_sample_sum()),
        submit.get_sample_count()
    );
    drop(relay);
    drop(second);
    drop(harness);
}
