//! Block production and publication against the mock execution client over real HTTP with JWT:
//! a chain from an interop Fulu genesis whose execution genesis is the mock's, blocks produced
//! with the mock's blobs, signed with the interop keys, published and imported; their columns
//! broadcast and stored; attestations from the pool packed; bad RANDAO reveals, bad signatures,
//! wrong slots and bad state roots refused with typed errors at each broadcast level.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::{Arc, Mutex};

use beacon_chain::harness::{ChainHarness, HarnessConfig};
use beacon_chain::{
    BlockBroadcaster, BlockProducer, BroadcastValidation, ProducedBlock, ProducerConfig,
    ProductionError, PublishError, PublishOutcome, gossip::BlockGossipError,
};
use execution_layer::EngineApiClient;
use ssz_types::{BitList, BitVector};
use state_harness::{aggregate_interop_secret_key, interop_secret_key};
use state_processing::{
    CachedBeaconState, StateRef,
    common::{
        balance, compute_epoch_at_slot, get_block_root, get_block_root_at_slot, get_current_epoch,
        get_domain,
    },
    genesis::interop_genesis_block,
    per_block::{AlwaysValid, VerifySignatures},
    state_transition::state_transition,
};
use types::{
    Address, BLSSignature, BeaconBlock, ChainSpec, DataColumnSidecar, EthSpec, ForkName,
    MinimalEthSpec, Root, SignedBeaconBlock, Slot, ValidatorIndex,
    electra::{Attestation, AttestationData, Checkpoint},
    signing::{DOMAIN_BEACON_ATTESTER, DOMAIN_RANDAO, compute_signing_root},
};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const VALIDATORS: usize = 64;
const BLOBS: usize = 6;
const FEE_RECIPIENT: Address = Address::repeat_byte(0xfe);

/// What a broadcaster was handed, in order.
#[derive(Default)]
struct Recorder {
    blocks: Mutex<Vec<Arc<SignedBeaconBlock<E>>>>,
    columns: Mutex<Vec<Arc<DataColumnSidecar<E>>>>,
    order: Mutex<Vec<&'static str>>,
}

impl BlockBroadcaster<E> for Recorder {
    fn broadcast_block(&self, block: Arc<SignedBeaconBlock<E>>) {
        self.blocks.lock().unwrap().push(block);
        self.order.lock().unwrap().push("block");
    }

    fn broadcast_data_columns(&self, columns: Vec<Arc<DataColumnSidecar<E>>>) {
        self.columns.lock().unwrap().extend(columns);
        self.order.lock().unwrap().push("columns");
    }

    fn broadcast_execution_payload_envelope(
        &self,
        _: Arc<types::gloas::SignedExecutionPayloadEnvelope<E>>,
    ) {
        self.order.lock().unwrap().push("envelope");
    }
}

impl Recorder {
    fn counts(&self) -> (usize, usize) {
        (
            self.blocks.lock().unwrap().len(),
            self.columns.lock().unwrap().len(),
        )
    }
}

/// The crate's harness: a Fulu chain from an interop genesis on the mock execution client.
type Harness = ChainHarness<E>;

fn engine(h: &Harness) -> Arc<EngineApiClient> {
    h.engine().unwrap()
}

async fn harness() -> Harness {
    harness_with(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu)).await
}

async fn harness_with(spec: ChainSpec) -> Harness {
    HarnessConfig {
        spec,
        validators: VALIDATORS,
        genesis_time: GENESIS_TIME,
        blobs_per_payload: BLOBS,
        producer: ProducerConfig {
            default_fee_recipient: FEE_RECIPIENT,
            ..ProducerConfig::default()
        },
        ..HarnessConfig::default()
    }
    .build()
    .await
    .unwrap()
}

/// One second into `slot`, in milliseconds since the UNIX epoch.
fn time_ms(spec: &ChainSpec, slot: Slot) -> u64 {
    spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 1000
}

fn sig(s: bls::Signature) -> BLSSignature {
    BLSSignature::from(s.serialize())
}

/// The head state advanced to `slot`.
fn advanced(h: &Harness, slot: Slot) -> CachedBeaconState<E> {
    h.advanced_state(slot).unwrap()
}

/// The proposer of `slot` on the head, and its RANDAO reveal.
fn proposer_and_reveal(h: &Harness, slot: Slot) -> (ValidatorIndex, BLSSignature) {
    h.proposer_and_reveal(slot).unwrap()
}

/// Signs `block` with the key of `signer`.
fn sign_as(h: &Harness, block: &BeaconBlock<E>, signer: ValidatorIndex) -> SignedBeaconBlock<E> {
    h.sign_block(block, signer).unwrap()
}

fn sign(h: &Harness, produced: &ProducedBlock<E>) -> SignedBeaconBlock<E> {
    sign_as(h, &produced.block, produced.proposer_index)
}

/// Moves the clock to `slot` and produces a block there with a valid reveal.
async fn produce(h: &Harness, slot: Slot) -> ProducedBlock<E> {
    h.produce(slot, None).await.unwrap()
}

async fn publish(
    h: &Harness,
    produced: &ProducedBlock<E>,
    signed: SignedBeaconBlock<E>,
    level: BroadcastValidation,
    recorder: &Recorder,
) -> Result<beacon_chain::PublishedBlock<E>, PublishError> {
    h.producer
        .publish_block(
            Arc::new(signed),
            Some((produced.kzg_proofs.clone(), produced.blobs.clone())),
            level,
            recorder,
        )
        .await
}

/// Every committee of `slot` attesting, as network aggregates (one committee each) into the
/// pool, attesting to the head (the block of `slot`).
fn attest_into_pool(h: &Harness, slot: Slot) -> usize {
    let mut state = advanced(h, slot + 1);
    let epoch = compute_epoch_at_slot::<E>(slot);
    let committees = {
        let CachedBeaconState { state, caches } = &mut state;
        let view = StateRef::new(state).unwrap();
        caches.committees(&view, epoch).unwrap()
    };
    let view = state.view().unwrap();
    let source = if epoch == get_current_epoch(&view) {
        view.current_justified_checkpoint.clone()
    } else {
        view.previous_justified_checkpoint.clone()
    };
    let data = AttestationData {
        slot,
        index: 0,
        beacon_block_root: get_block_root_at_slot(&view, slot).unwrap(),
        source,
        target: Checkpoint {
            epoch,
            root: get_block_root(&view, epoch).unwrap(),
        },
    };
    let domain = get_domain(&view, DOMAIN_BEACON_ATTESTER, Some(epoch));
    let signing_root = compute_signing_root(&data, domain);
    let mut inserted = 0;
    for index in 0..committees.committees_per_slot() {
        let committee = committees
            .get_beacon_committee(slot, index)
            .unwrap()
            .to_vec();
        let mut bits =
            BitList::<<E as EthSpec>::MaxValidatorsPerSlot>::with_capacity(committee.len())
                .unwrap();
        for i in 0..committee.len() {
            bits.set(i, true).unwrap();
        }
        let mut committee_bits = BitVector::<<E as EthSpec>::MaxCommitteesPerSlot>::new();
        committee_bits.set(index as usize, true).unwrap();
        let signature = sig(aggregate_interop_secret_key(committee.iter().copied())
            .unwrap()
            .sign(signing_root.as_slice()));
        let attestation = Attestation {
            aggregation_bits: bits,
            data: data.clone(),
            signature,
            committee_bits,
        };
        h.producer
            .pool()
            .insert_attestation(&attestation, &committees)
            .unwrap();
        inserted += 1;
    }
    inserted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_produced_block_with_blobs_is_published_imported_and_its_columns_broadcast() {
    let h = harness().await;
    let chain = h.producer.chain().clone();
    let parent_state = chain.head().state.clone();
    let produced = produce(&h, 1).await;
    assert_eq!(produced.fork, ForkName::Fulu);
    assert_eq!(produced.blobs.len(), BLOBS);
    assert_eq!(produced.kzg_proofs.len(), BLOBS * kzg::CELLS_PER_EXT_BLOB);
    let BeaconBlock::Fulu(message) = &produced.block else {
        panic!("a Fulu block")
    };
    assert_eq!(message.body.blob_kzg_commitments.len(), BLOBS);
    assert_eq!(message.body.execution_payload.fee_recipient, FEE_RECIPIENT);
    assert_eq!(message.parent_root, chain.head().block_root);
    // The mock prices 21,000 gas per blob transaction at 1 gwei.
    assert!(produced.execution_payload_value > types::U256::ZERO);

    let signed = sign(&h, &produced);
    // The state root is what a full transition (signatures checked one by one) computes.
    let mut replay = parent_state;
    state_transition(
        &mut replay,
        &signed,
        VerifySignatures::Individually,
        true,
        &AlwaysValid,
        &h.spec,
    )
    .unwrap();
    assert_eq!(replay.hash_tree_root().unwrap(), produced.state_root);

    let recorder = Recorder::default();
    let published = publish(
        &h,
        &produced,
        signed.clone(),
        BroadcastValidation::Gossip,
        &recorder,
    )
    .await
    .unwrap();
    assert_eq!(published.outcome, PublishOutcome::Imported);
    assert!(
        !published.kzg_verified,
        "blobs built here are not re-verified"
    );
    assert_eq!(published.block_root, produced.block_root);
    assert_eq!(
        published.payload_status,
        Some(beacon_chain::ExecutionStatus::Valid)
    );
    assert_eq!(published.execution_head_error, None);
    assert_eq!(recorder.counts(), (1, 128));
    assert_eq!(*recorder.order.lock().unwrap(), ["block", "columns"]);
    let head = chain.head();
    assert_eq!(head.block_root, produced.block_root);
    assert_eq!(head.state_root, produced.state_root);
    assert!(!head.execution_optimistic);
    assert_eq!(
        chain
            .store()
            .data_column_indices(&produced.block_root)
            .unwrap(),
        (0..128).collect::<Vec<u64>>()
    );
    // The columns verify as gossip would check them, and carry the block's header.
    let columns: Vec<_> = recorder.columns.lock().unwrap().clone();
    let outcome = beacon_chain::data_column_verification::verify_data_column_sidecars_standalone(
        columns,
        &h.spec,
        chain.pool(),
    );
    assert!(outcome.failed.is_empty());
    assert_eq!(outcome.verified.len(), 128);
    // The execution client follows the new head.
    assert_eq!(
        h.mock.head_block_hash(),
        message.body.execution_payload.block_hash
    );

    // Publishing it again: already imported, nothing broadcast again.
    let again = publish(
        &h,
        &produced,
        signed,
        BroadcastValidation::Consensus,
        &recorder,
    )
    .await
    .unwrap();
    assert_eq!(again.outcome, PublishOutcome::AlreadyImported);
    assert_eq!(recorder.counts(), (1, 128));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consecutive_blocks_pack_the_pools_attestations_and_use_prepared_payloads() {
    let h = harness().await;
    let chain = h.producer.chain().clone();
    h.producer
        .prepare_beacon_proposer((0..VALIDATORS as u64).map(|i| (i, Address::repeat_byte(0x0a))));
    let recorder = Recorder::default();
    for slot in 1..=4 {
        h.clock.set_ms(time_ms(&h.spec, slot) - 2000);
        let prepared = h.producer.prepare_payload_for_slot(slot).await.unwrap();
        assert!(prepared.is_some(), "every validator is prepared");
        let produced = produce(&h, slot).await;
        assert_eq!(
            produced.payload_id,
            prepared.unwrap(),
            "the prepared build is used"
        );
        let BeaconBlock::Fulu(message) = &produced.block else {
            panic!("a Fulu block")
        };
        assert_eq!(
            message.body.execution_payload.fee_recipient,
            Address::repeat_byte(0x0a)
        );
        if slot > 1 {
            // Every committee of the previous slot attested: all packed, the proposer paid.
            assert!(!message.body.attestations.is_empty());
            let attesters: usize = message
                .body
                .attestations
                .iter()
                .map(|a| a.aggregation_bits.num_set_bits())
                .sum();
            assert_eq!(attesters, VALIDATORS / E::slots_per_epoch() as usize);
        }
        let signed = sign(&h, &produced);
        // The consensus block value is the proposer's balance change in a replay of the block
        // (its withdrawals added back), in wei.
        let before = balance(&advanced(&h, slot).view().unwrap(), produced.proposer_index).unwrap();
        let mut post = h.producer.chain().head().state.clone();
        state_transition(
            &mut post,
            &signed,
            VerifySignatures::Individually,
            true,
            &AlwaysValid,
            &h.spec,
        )
        .unwrap();
        let after = balance(&post.view().unwrap(), produced.proposer_index).unwrap();
        let withdrawn: u64 = message
            .body
            .execution_payload
            .withdrawals
            .iter()
            .filter(|w| w.validator_index == produced.proposer_index)
            .map(|w| w.amount)
            .sum();
        let expected = (after + withdrawn).saturating_sub(before);
        assert_eq!(
            produced.consensus_block_value,
            types::U256::from(expected) * types::U256::from(1_000_000_000u64)
        );
        if slot > 1 {
            assert!(expected > 0, "attestations reward the proposer");
        }
        let published = publish(
            &h,
            &produced,
            signed,
            BroadcastValidation::ConsensusAndEquivocation,
            &recorder,
        )
        .await
        .unwrap();
        assert_eq!(published.outcome, PublishOutcome::Imported);
        assert_eq!(chain.head().block_root, produced.block_root);
        assert!(attest_into_pool(&h, slot) > 0);
    }
    assert_eq!(recorder.counts(), (4, 4 * 128));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_randao_reveal_or_slot_fails_production_typed() {
    let h = harness().await;
    h.clock.set_ms(time_ms(&h.spec, 1));
    let (proposer, _) = proposer_and_reveal(&h, 1);
    let (_, other_epoch_reveal) = proposer_and_reveal(&h, 8);
    let wrong_key = {
        let state = advanced(&h, 1);
        let view = state.view().unwrap();
        let root = compute_signing_root(&0u64, get_domain(&view, DOMAIN_RANDAO, None));
        sig(interop_secret_key(proposer as usize + 1).sign(root.as_slice()))
    };
    for reveal in [wrong_key, other_epoch_reveal, BLSSignature::ZERO] {
        let err = h
            .producer
            .produce_block_v3(1, reveal, None, false, None)
            .await
            .unwrap_err();
        assert!(
            matches!(err, ProductionError::InvalidRandaoReveal { proposer: p, slot: 1 } if p == proposer),
            "{err}"
        );
    }
    // Skipping the check (the API's flag) builds the block.
    let produced = h
        .producer
        .produce_block_v3(1, BLSSignature::ZERO, None, true, None)
        .await
        .unwrap();
    assert_eq!(produced.proposer_index, proposer);
    let err = h
        .producer
        .produce_block_v3(0, BLSSignature::ZERO, None, true, None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ProductionError::SlotNotAfterHead {
                slot: 0,
                head_slot: 0
            }
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_is_refused_typed_at_every_broadcast_level() {
    let h = harness().await;
    let chain = h.producer.chain().clone();
    let produced = produce(&h, 1).await;
    let recorder = Recorder::default();
    let levels = [
        BroadcastValidation::Gossip,
        BroadcastValidation::Consensus,
        BroadcastValidation::ConsensusAndEquivocation,
    ];

    // Signed by another validator.
    let forged = sign_as(&h, &produced.block, produced.proposer_index + 1);
    for level in levels {
        let err = publish(&h, &produced, forged.clone(), level, &recorder)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                PublishError::Gossip(BlockGossipError::InvalidSignature)
            ),
            "{level:?}: {err}"
        );
    }

    // A slot in the future of the clock (re-signed: the signature is not what fails).
    let mut future = produced.block.clone();
    let BeaconBlock::Fulu(m) = &mut future else {
        panic!("a Fulu block")
    };
    m.slot = 5;
    let future = sign_as(&h, &future, produced.proposer_index);
    for level in levels {
        let err = publish(&h, &produced, future.clone(), level, &recorder)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                PublishError::Gossip(BlockGossipError::FutureSlot { slot: 5 })
            ),
            "{level:?}: {err}"
        );
    }

    // Blobs that do not fit: too few proofs, and a corrupted proof (cell proofs verified since
    // they are not the ones built here).
    let signed = sign(&h, &produced);
    let short = h
        .producer
        .publish_block(
            Arc::new(signed.clone()),
            Some((produced.kzg_proofs[1..].to_vec(), produced.blobs.clone())),
            BroadcastValidation::Consensus,
            &recorder,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(short, PublishError::ProofCountMismatch { .. }),
        "{short}"
    );
    let fewer = beacon_chain::Blobs::<E>::new(produced.blobs[1..].to_vec()).unwrap();
    let fewer_proofs = produced.kzg_proofs[kzg::CELLS_PER_EXT_BLOB..].to_vec();
    let err = h
        .producer
        .publish_block(
            Arc::new(signed.clone()),
            Some((fewer_proofs, fewer)),
            BroadcastValidation::Consensus,
            &recorder,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, PublishError::BlobCountMismatch { commitments: BLOBS, blobs } if blobs == BLOBS - 1),
        "{err}"
    );
    let missing = h
        .producer
        .publish_block(
            Arc::new(signed.clone()),
            None,
            BroadcastValidation::Consensus,
            &recorder,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(missing, PublishError::MissingBlobs { commitments: BLOBS }),
        "{missing}"
    );
    assert_eq!(recorder.counts(), (0, 0), "nothing broadcast so far");

    // A wrong state root with a valid signature passes gossip: at the gossip level it is
    // broadcast and then refused by the import (the API's 202); at the consensus levels it is
    // refused before broadcast. (Each level needs a fresh block: gossip marks the proposer.)
    let mut bad_root = produced.block.clone();
    let BeaconBlock::Fulu(m) = &mut bad_root else {
        panic!("a Fulu block")
    };
    m.state_root = Root::repeat_byte(0x77);
    let bad_root = sign_as(&h, &bad_root, produced.proposer_index);
    let published = publish(
        &h,
        &produced,
        bad_root.clone(),
        BroadcastValidation::Gossip,
        &recorder,
    )
    .await
    .unwrap();
    assert!(
        matches!(published.outcome, PublishOutcome::BroadcastNotImported(_)),
        "{:?}",
        published.outcome
    );
    assert_eq!(recorder.counts(), (1, 128));
    assert_eq!(chain.head().slot, 0);
    // Published again: it failed before.
    let err = publish(
        &h,
        &produced,
        bad_root,
        BroadcastValidation::Consensus,
        &recorder,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, PublishError::KnownInvalid(_)), "{err}");

    // The good block of the same proposer and slot is an equivocation now.
    let err = publish(
        &h,
        &produced,
        signed.clone(),
        BroadcastValidation::ConsensusAndEquivocation,
        &recorder,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, PublishError::Equivocation { slot: 1, .. }),
        "{err}"
    );
    // A copy with a bad signature is refused before the transition (and marks nothing).
    for level in [BroadcastValidation::Gossip, BroadcastValidation::Consensus] {
        let err = publish(&h, &produced, forged.clone(), level, &recorder)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                PublishError::Gossip(BlockGossipError::InvalidSignature)
            ),
            "{level:?}: {err}"
        );
    }
    // At the consensus level it is held to the full transition instead, and imported.
    let published = publish(
        &h,
        &produced,
        signed,
        BroadcastValidation::Consensus,
        &recorder,
    )
    .await
    .unwrap();
    assert_eq!(published.outcome, PublishOutcome::Imported);
    assert_eq!(chain.head().block_root, produced.block_root);
    assert_eq!(recorder.counts(), (2, 256));

    // A block of the next slot with a bad state root at the consensus level: not broadcast.
    let next = produce(&h, 2).await;
    let mut bad = next.block.clone();
    let BeaconBlock::Fulu(m) = &mut bad else {
        panic!("a Fulu block")
    };
    m.state_root = Root::repeat_byte(0x78);
    let bad = sign_as(&h, &bad, next.proposer_index);
    let err = publish(&h, &next, bad, BroadcastValidation::Consensus, &recorder)
        .await
        .unwrap_err();
    assert!(matches!(err, PublishError::Import(_)), "{err}");
    assert_eq!(recorder.counts(), (2, 256), "refused before broadcast");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_built_elsewhere_has_its_cell_proofs_verified() {
    let h = harness().await;
    let produced = produce(&h, 1).await;
    let signed = Arc::new(sign(&h, &produced));
    // A second producer on the same chain did not build this block.
    let other = Arc::new(BlockProducer::new(
        h.producer.chain().clone(),
        h.producer.pool().clone(),
        engine(&h),
        ProducerConfig::default(),
    ));
    let recorder = Recorder::default();
    let mut proofs = produced.kzg_proofs.clone();
    proofs.swap(0, kzg::CELLS_PER_EXT_BLOB);
    let err = other
        .publish_block(
            signed.clone(),
            Some((proofs, produced.blobs.clone())),
            BroadcastValidation::Gossip,
            &recorder,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, PublishError::InvalidColumns(columns) if columns == &[0]),
        "{err}"
    );
    assert_eq!(recorder.counts(), (0, 0));
    // Gossip validation marked the proposer: the good copy is held to the transition.
    let published = other
        .publish_block(
            signed,
            Some((produced.kzg_proofs.clone(), produced.blobs.clone())),
            BroadcastValidation::Gossip,
            &recorder,
        )
        .await
        .unwrap();
    assert!(published.kzg_verified);
    assert_eq!(published.outcome, PublishOutcome::Imported);
    assert_eq!(recorder.counts(), (1, 128));
}

/// The minimal config with every fork at genesis, as a complete `config.yaml` (the oracle
/// needs one, and YAML forbids repeating a key).
fn fulu_at_genesis_config_yaml() -> String {
    let forks = [
        "ALTAIR_FORK_EPOCH",
        "BELLATRIX_FORK_EPOCH",
        "CAPELLA_FORK_EPOCH",
        "DENEB_FORK_EPOCH",
        "ELECTRA_FORK_EPOCH",
        "FULU_FORK_EPOCH",
    ];
    let lines: Vec<String> = types::chain_spec::MINIMAL_CONFIG_YAML
        .lines()
        .map(
            |line| match forks.iter().find(|k| line.starts_with(&format!("{k}:"))) {
                Some(key) => format!("{key}: 0"),
                None => line.to_string(),
            },
        )
        .collect();
    lines.join("\n") + "\n"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produced_blocks_pass_the_lodestar_oracle_with_the_same_state_roots() {
    let yaml = fulu_at_genesis_config_yaml();
    let spec = ChainSpec::from_config_yaml(&yaml).unwrap();
    assert_eq!(spec.fork_name_at_slot::<E>(0), ForkName::Fulu);
    let h = harness_with(spec).await;
    let chain = h.producer.chain().clone();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, &yaml).unwrap();
    let genesis = dir.path().join("genesis.ssz");
    let mut state = chain.head().state.clone();
    state.apply_updates().unwrap();
    std::fs::write(&genesis, ssz::Encode::as_ssz_bytes(&state.state)).unwrap();

    let recorder = Recorder::default();
    let mut blocks = Vec::new();
    let mut roots = Vec::new();
    for slot in 1..=4 {
        let produced = produce(&h, slot).await;
        let signed = sign(&h, &produced);
        let path = dir.path().join(format!("block-{slot}.ssz"));
        std::fs::write(&path, ssz::Encode::as_ssz_bytes(&signed)).unwrap();
        let published = publish(
            &h,
            &produced,
            signed,
            BroadcastValidation::Gossip,
            &recorder,
        )
        .await
        .unwrap();
        assert_eq!(published.outcome, PublishOutcome::Imported);
        blocks.push(path);
        roots.push(chain.head().state_root);
        attest_into_pool(&h, slot);
    }

    let oracle = state_harness::oracle::Oracle::locate("minimal")
        .unwrap_or_else(|e| panic!("{e}"))
        .with_config(&config);
    match oracle.run(&genesis, &blocks, None, true, 1, None).unwrap() {
        state_harness::oracle::OracleOutcome::Accepted { steps, .. } => {
            let oracle_roots: Vec<Root> = steps.iter().map(|s| s.post_state_root).collect();
            assert_eq!(oracle_roots, roots, "Lodestar's post-state roots");
        }
        rejected => panic!("Lodestar rejected a produced block: {rejected:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_execution_clients_verdict_decides_import_and_production() {
    let h = harness().await;
    let chain = h.producer.chain().clone();
    let produced = produce(&h, 1).await;
    let BeaconBlock::Fulu(message) = &produced.block else {
        panic!("a Fulu block")
    };
    let hash = message.body.execution_payload.block_hash;
    let signed = sign(&h, &produced);
    let recorder = Recorder::default();

    // INVALID: broadcast at the gossip level but not imported (the API's 202); refused before
    // broadcast at the consensus level.
    h.mock.set_payload_status(
        hash,
        mock_execution_layer::MockPayloadStatus::Invalid {
            latest_valid_hash: Some(h.mock.genesis_block_hash()),
        },
    );
    assert_eq!(
        beacon_chain::notify_new_payload(h.producer.engine(), &signed)
            .await
            .unwrap(),
        beacon_chain::ExecutionStatus::Invalidated
    );
    let published = publish(
        &h,
        &produced,
        signed.clone(),
        BroadcastValidation::Gossip,
        &recorder,
    )
    .await
    .unwrap();
    assert!(
        matches!(&published.outcome, PublishOutcome::BroadcastNotImported(why) if why.to_string().contains("invalid")),
        "{:?}",
        published.outcome
    );
    assert_eq!(recorder.counts(), (1, 128));
    // The block is remembered as failed.
    let err = publish(
        &h,
        &produced,
        signed.clone(),
        BroadcastValidation::Consensus,
        &recorder,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, PublishError::KnownInvalid(root) if root == produced.block_root),
        "{err}"
    );
    // Another block with the same payload (other graffiti), at the consensus level: refused
    // before broadcast.
    let (_, reveal) = proposer_and_reveal(&h, 1);
    let other = h
        .producer
        .produce_block_v3(1, reveal, Some(Root::repeat_byte(1)), false, None)
        .await
        .unwrap();
    assert_ne!(other.block_root, produced.block_root);
    let other_signed = sign(&h, &other);
    let err = publish(
        &h,
        &other,
        other_signed,
        BroadcastValidation::Consensus,
        &recorder,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, PublishError::PayloadInvalid(root) if root == other.block_root),
        "{err}"
    );
    assert_eq!(recorder.counts(), (1, 128));
    assert_eq!(chain.head().slot, 0);

    // SYNCING: imported optimistically; no block is produced on an optimistic head.
    let (_, reveal) = proposer_and_reveal(&h, 1);
    let produced = h
        .producer
        .produce_block_v3(1, reveal, Some(Root::repeat_byte(2)), false, None)
        .await
        .unwrap();
    let signed = sign(&h, &produced);
    h.mock
        .set_payload_status(hash, mock_execution_layer::MockPayloadStatus::Syncing);
    let published = publish(
        &h,
        &produced,
        signed,
        BroadcastValidation::Consensus,
        &recorder,
    )
    .await
    .unwrap();
    assert_eq!(published.outcome, PublishOutcome::Imported);
    assert_eq!(
        published.payload_status,
        Some(beacon_chain::ExecutionStatus::NotValidated)
    );
    let head = chain.head();
    assert_eq!(head.block_root, produced.block_root);
    assert!(head.execution_optimistic);
    h.clock.set_ms(time_ms(&h.spec, 2));
    let err = h
        .producer
        .produce_block_v3(2, BLSSignature::ZERO, None, true, None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProductionError::OptimisticHead(root) if root == produced.block_root),
        "{err}"
    );

    // The engine away: a typed execution error, no panic.
    h.mock.clear_payload_status(&hash);
    h.mock.go_offline().await;
    let err = beacon_chain::update_execution_head(&chain, h.producer.engine(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, beacon_chain::ExecutionError::Engine(_)),
        "{err}"
    );
}

/// A gossip block handed to the chain is checked by the chain's own execution client
/// (`engine_newPayload` beside the import): no caller fetches or hands back a verdict. An
/// INVALID answer fails the import and the block is remembered as failed; a VALID one imports
/// it with a validated payload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chain_asks_its_own_execution_client_for_a_gossip_blocks_verdict() {
    let h = harness().await;
    // Blocks without blobs: available at once, so the import reaches the verdict.
    h.mock.set_blobs_per_payload(0);
    let chain = h.producer.chain().clone();
    // The harness attached the mock: once only.
    assert!(
        chain
            .attach_execution_layer(engine(&h), tokio::runtime::Handle::current())
            .is_err(),
        "attached once only"
    );
    let import = |signed: SignedBeaconBlock<E>| {
        let chain = chain.clone();
        // The import blocks its thread while it waits for the verdict: off the runtime.
        tokio::task::spawn_blocking(move || {
            let verified = chain
                .verify_block_for_gossip(Arc::new(signed), chain.now_ms())
                .unwrap();
            chain.import_gossip_block(verified)
        })
    };

    let invalid = produce(&h, 1).await;
    let BeaconBlock::Fulu(message) = &invalid.block else {
        panic!("a Fulu block")
    };
    h.mock.set_payload_status(
        message.body.execution_payload.block_hash,
        mock_execution_layer::MockPayloadStatus::Invalid {
            latest_valid_hash: Some(h.mock.genesis_block_hash()),
        },
    );
    let err = import(sign(&h, &invalid)).await.unwrap().unwrap_err();
    assert!(
        matches!(err, beacon_chain::ChainError::InvalidPayload(root) if root == invalid.block_root),
        "{err}"
    );
    assert_eq!(err.fault(), beacon_chain::Fault::Message);
    assert_eq!(
        chain.payload_status(&invalid.block_root),
        beacon_chain::ExecutionStatus::Invalidated
    );
    assert_eq!(chain.head().slot, 0);

    // The next slot's (gossip takes one block per proposer and slot), on genesis again.
    let valid = produce(&h, 2).await;
    let outcome = import(sign(&h, &valid)).await.unwrap().unwrap();
    assert_eq!(
        outcome,
        beacon_chain::BlockProcessed::Imported(valid.block_root)
    );
    assert_eq!(
        chain.payload_status(&valid.block_root),
        beacon_chain::ExecutionStatus::Valid
    );
    let head = chain.head();
    assert_eq!(head.block_root, valid.block_root);
    assert!(!head.execution_optimistic);
}

#[test]
fn a_payload_verdict_answers_the_state_transition() {
    use state_processing::per_block::ExecutionEngine;
    let request = beacon_chain::execution::new_payload_request::<E>(&SignedBeaconBlock::Fulu({
        let SignedBeaconBlock::Fulu(b) = interop_genesis_block::<E>(Root::ZERO) else {
            unreachable!("the interop genesis block is Fulu")
        };
        b
    }))
    .unwrap();
    for (status, valid) in [
        (beacon_chain::ExecutionStatus::Valid, true),
        (beacon_chain::ExecutionStatus::NotValidated, true),
        (beacon_chain::ExecutionStatus::Invalidated, false),
    ] {
        let verdict = beacon_chain::PayloadVerdict(status);
        assert_eq!(
            ExecutionEngine::<E>::verify_and_notify_new_payload(&verdict, &request),
            Ok(valid)
        );
    }
}

/// The store takes a block before fork choice does: a store that fails during the import
/// leaves the block out of fork choice (no block fork choice has but the store lacks, which
/// nothing would fetch again), the failure is ours (no penalty for whoever sent it), the
/// block is not recorded as failed, and it imports once the store writes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_failing_during_an_import_leaves_the_block_out_of_fork_choice_and_free_to_import() {
    let h = harness().await;
    h.mock.set_blobs_per_payload(0);
    let chain = h.producer.chain().clone();
    let produced = produce(&h, 1).await;
    let block = Arc::new(sign(&h, &produced));
    let import = |block: Arc<SignedBeaconBlock<E>>| {
        let chain = chain.clone();
        tokio::task::spawn_blocking(move || {
            chain.import_block(
                block,
                &[],
                &AlwaysValid,
                beacon_chain::ExecutionStatus::Valid,
            )
        })
    };

    chain.store().refuse_writes(true);
    let err = import(block.clone()).await.unwrap().unwrap_err();
    assert_eq!(err.fault(), beacon_chain::Fault::Local, "{err}");
    assert!(
        !chain.is_block_known(&produced.block_root),
        "fork choice took (or recorded as failed) a block the store did not take"
    );
    assert!(
        chain
            .store()
            .get_block(&produced.block_root)
            .unwrap()
            .is_none()
    );
    assert_eq!(chain.head().slot, 0);

    chain.store().refuse_writes(false);
    let root = import(block).await.unwrap().unwrap();
    assert_eq!(root, produced.block_root);
    assert!(chain.is_block_imported(&root));
    assert!(chain.store().get_block(&root).unwrap().is_some());
    assert_eq!(chain.head().block_root, root);
}

/// What [`RecordingWorkers`] were handed.
#[derive(Default)]
struct Recorded {
    seen: Mutex<Vec<beacon_chain::workers::WorkPriority>>,
    threads: Mutex<Vec<std::thread::ThreadId>>,
}

/// Records the work handed to it and runs each job on a thread of its own.
struct RecordingWorkers(Arc<Recorded>);

impl beacon_chain::workers::Workers for RecordingWorkers {
    fn submit(
        &self,
        priority: beacon_chain::workers::WorkPriority,
        job: Box<dyn FnOnce() + Send + 'static>,
    ) -> Result<(), beacon_chain::workers::WorkersRefused> {
        self.0.seen.lock().unwrap().push(priority);
        let recorded = self.0.clone();
        std::thread::spawn(move || {
            recorded
                .threads
                .lock()
                .unwrap()
                .push(std::thread::current().id());
            job();
        });
        Ok(())
    }
}

/// Block production's CPU work (the head state's advance, the packing, the transition and the
/// state root) runs on the node's workers at the duties' priority once they are set, not on
/// the async worker that awaits the execution client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_productions_cpu_work_runs_on_the_nodes_workers() {
    let h = harness().await;
    h.mock.set_blobs_per_payload(0);
    let workers = Arc::new(Recorded::default());
    assert!(
        h.producer
            .set_workers(Arc::new(RecordingWorkers(workers.clone())))
            .is_ok()
    );
    assert!(
        h.producer
            .set_workers(Arc::new(RecordingWorkers(workers.clone())))
            .is_err(),
        "set once only"
    );
    let produced = produce(&h, 1).await;
    assert_eq!(produced.slot, 1);
    // The template, the packing and the block: three jobs, each at P0.
    assert_eq!(
        *workers.seen.lock().unwrap(),
        vec![beacon_chain::workers::WorkPriority::P0; 3]
    );
    assert_eq!(workers.threads.lock().unwrap().len(), 3);
    // The block is whole: it imports.
    let chain = h.producer.chain().clone();
    let block = Arc::new(sign(&h, &produced));
    let root = tokio::task::spawn_blocking(move || {
        chain.import_block(
            block,
            &[],
            &AlwaysValid,
            beacon_chain::ExecutionStatus::Valid,
        )
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(root, produced.block_root);
}
