//! Block production: `produce_block_v3` on the head, as the honest validator builds a block.
//!
//! The head state is advanced to the slot (or taken from the state [`BlockProducer::
//! prepare_payload_for_slot`] advanced late in the previous slot), the RANDAO reveal checked,
//! the operations packed from the pool for that state, the execution payload taken from
//! `engine_getPayloadV5` (its build started ahead by `engine_forkchoiceUpdatedV3` with payload
//! attributes for our prepared proposers, or now), the blobs bundle's commitments placed in the
//! body and its blobs and cell proofs returned beside the block **without re-verifying their
//! KZG** (the execution client built them; only their shape is checked), and the block run
//! through the state transition without signature checks to learn its state root and the
//! proposer's reward.
//!
//! The blobs of every block built here are remembered ([`BuiltBlobs`]), so that publication
//! can skip the KZG check of columns this node made.
//!
//! [spec]: phase0/validator.md#block-proposal, electra/validator.md#block-and-sidecar-proposal,
//! fulu/validator.md#block-and-sidecar-proposal

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use execution_layer::{EngineApiClient, ForkchoiceUpdated, PayloadAttributes};
use operation_pool::{BlockOperations, OpPoolError, OperationPool};
use parking_lot::{Condvar, Mutex, RwLock};
use ssz_types::VariableList;
use state_processing::{
    CachedBeaconState,
    common::{balance, get_beacon_proposer_index, get_current_epoch, get_randao_mix},
    per_block::{
        AlwaysValid, BlockProcessingError, VerifySignatures, get_expected_withdrawals,
        process_block, signature_sets::randao_reveal_signature_set,
    },
};
use tree_hash::TreeHash;
use types::{
    Address, BLSSignature, BeaconBlock, Blob, Bytes32, EthSpec, ForkName, Gwei, KZGCommitment,
    KZGProof, PayloadId, Root, Slot, U256, ValidatorIndex,
    electra::{BeaconBlockBody, ExecutionPayload, ExecutionRequests, Withdrawal},
};

use crate::chain::{BeaconChain, ChainError, HeadSnapshot};
use crate::execution::{ExecutionError, forkchoice_state_of};
use crate::workers::{WorkPriority, run_on_workers};

mod builder;
mod gloas;
pub use gloas::BuiltGloasPayload;
pub mod builder_metrics;
pub use builder::{
    BidRequestError, BlindedPublication, BlindedPublishError, BuilderOptions, BuilderOutcome,
    ProducedBlindedBlock, ProducedBlockV3,
};

/// The blobs of a block, in the order of its commitments (the `blobs` of the Fulu
/// `BlockContents`).
pub type Blobs<E> = VariableList<Blob<E>, <E as EthSpec>::MaxBlobCommitmentsPerBlock>;

/// A block's blob data as the Fulu `SignedBlockContents` carries it: the cell proofs and the
/// blobs.
pub type BlobData<E> = (Vec<KZGProof>, Blobs<E>);

/// Wei per gwei.
const WEI_PER_GWEI: u64 = 1_000_000_000;

/// Options of block production.
#[derive(Debug, Clone)]
pub struct ProducerConfig {
    /// The fee recipient of a proposer that sent no preparation.
    pub default_fee_recipient: Address,
    /// The graffiti of a block whose request names none.
    pub default_graffiti: Bytes32,
    /// How many blocks built here keep their blobs for publication (a node proposes at most
    /// one block a slot; a few cover a re-request and a slow validator client).
    pub built_blobs_cache: usize,
    /// The relay asked for headers (`None`: every block carries the local payload).
    pub builder: Option<BuilderOptions>,
    /// From Gloas on, the gas limit a proposer asks its execution client to build towards
    /// (`PayloadAttributesV4.targetGasLimit`): the parent bid's limit when it has one, this
    /// when it has none (the genesis bid's is 0).
    pub target_gas_limit: u64,
}

/// The target gas limit of a Gloas payload whose parent bid names none: mainnet's limit at
/// the time of writing (60M gas).
pub const DEFAULT_TARGET_GAS_LIMIT: u64 = 60_000_000;

impl Default for ProducerConfig {
    fn default() -> Self {
        Self {
            default_fee_recipient: Address::ZERO,
            default_graffiti: Bytes32::ZERO,
            built_blobs_cache: 4,
            builder: None,
            target_gas_limit: DEFAULT_TARGET_GAS_LIMIT,
        }
    }
}

/// Why a block could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum ProductionError {
    /// A block is built on the head: its slot must be after the head's.
    #[error("slot {slot} is not after the head's slot {head_slot}")]
    SlotNotAfterHead {
        /// The slot asked for.
        slot: Slot,
        /// The head's slot.
        head_slot: Slot,
    },
    /// The spec forbids proposing on a head whose payload is not validated.
    ///
    /// [spec]: sync/optimistic.md#block-production
    #[error("the head {0} is optimistic (its payload is not validated): no block on it")]
    OptimisticHead(Root),
    /// This producer builds Electra-layout blocks (Electra and Fulu) only.
    #[error("slot {slot} is in {fork}: blocks are produced for Electra and Fulu only")]
    UnsupportedFork {
        /// The slot.
        slot: Slot,
        /// Its fork.
        fork: ForkName,
    },
    /// Advancing the head state to the slot failed.
    #[error("advancing the head state to slot {slot}: {source}")]
    Slots {
        /// The slot.
        slot: Slot,
        /// What failed (boxed: a `ChainError` is large).
        #[source]
        source: Box<ChainError>,
    },
    /// A state helper failed.
    #[error("state: {0}")]
    State(#[from] state_processing::Error),
    /// The RANDAO reveal is not the proposer's signature of the epoch.
    #[error("invalid RANDAO reveal for proposer {proposer} at slot {slot}")]
    InvalidRandaoReveal {
        /// The slot's proposer.
        proposer: ValidatorIndex,
        /// The slot.
        slot: Slot,
    },
    /// The execution client could not be asked or gave no usable answer.
    #[error("execution: {0}")]
    Execution(#[from] ExecutionError),
    /// `engine_forkchoiceUpdatedV3` with attributes returned no payload id (the engine is
    /// syncing or refused the head).
    #[error("the execution client started no payload build (head status {0:?})")]
    NoPayloadId(execution_layer::PayloadStatus),
    /// The payload is not the one asked for (a field differs from the attributes or the
    /// parent).
    #[error("the execution payload is not the one asked for: {0}")]
    PayloadMismatch(PayloadFieldMismatch),
    /// The blobs bundle has more blobs than the slot's epoch allows.
    #[error("{count} blobs in the bundle, the epoch allows {max}")]
    TooManyBlobs {
        /// Blobs in the bundle.
        count: usize,
        /// `get_blob_parameters(epoch).max_blobs_per_block`.
        max: u64,
    },
    /// The blobs bundle's lists do not fit together: not one commitment and
    /// `CELLS_PER_EXT_BLOB` cell proofs per blob, or more blobs than a block holds
    /// (`execution_layer::verify_blobs_bundle_shape`).
    #[error(
        "blobs bundle: {blobs} blobs, {commitments} commitments and {proofs} cell proofs do not \
         fit together"
    )]
    BlobsBundle {
        /// Blobs in the bundle.
        blobs: usize,
        /// Commitments in the bundle.
        commitments: usize,
        /// Cell proofs in the bundle.
        proofs: usize,
    },
    /// The operation pool could not pack for the state.
    #[error("operation pool: {0}")]
    OperationPool(#[from] OpPoolError),
    /// The node's workers gave no answer for a part of the production (the packing, the
    /// state's advance, the transition): refused (queue full), dropped (stopping), or
    /// panicked.
    #[error("production's work on the node's workers: {0}")]
    Workers(#[source] crate::workers::WorkersUnavailable),
    /// A list of the body is longer than the block allows.
    #[error("{what}: {count} exceed the block's limit")]
    TooMany {
        /// The list.
        what: &'static str,
        /// Its length.
        count: usize,
    },
    /// The state transition refused the block built (a packed operation or the payload is not
    /// valid on the state).
    #[error("the block built fails the state transition: {0}")]
    BlockProcessing(#[source] BlockProcessingError),
    /// A Gloas block builds on its parent's payload (FULL) and the parent's envelope is not in
    /// the store.
    #[error("the envelope of the parent block {0} is not stored: no block on its payload")]
    NoParentEnvelope(Root),
    /// The parent payload's execution requests could not be applied to the state (the
    /// withdrawals of a Gloas block on a FULL parent are computed after them).
    #[error("applying the parent payload's requests: {0}")]
    ParentPayload(#[source] state_processing::per_block::ParentExecutionPayloadInvalid),
}

/// A block built by [`BlockProducer::produce_block_v3`], with what the v3 response carries.
#[derive(Debug, Clone)]
pub struct ProducedBlock<E: EthSpec> {
    /// The unsigned block (its state root set).
    pub block: BeaconBlock<E>,
    /// The cell proofs of the blobs (`CELLS_PER_EXT_BLOB` per blob, blob-major), as the
    /// execution client gave them.
    pub kzg_proofs: Vec<KZGProof>,
    /// The blobs, in the order of the block's commitments.
    pub blobs: Blobs<E>,
    /// Wei the fee recipient receives (the execution client's block value).
    pub execution_payload_value: U256,
    /// Wei the proposer earns from the block's consensus content (its balance change in the
    /// state transition, withdrawals added back).
    pub consensus_block_value: U256,
    /// The fork of the block.
    pub fork: ForkName,
    /// The block's slot.
    pub slot: Slot,
    /// The block's proposer.
    pub proposer_index: ValidatorIndex,
    /// The block's root (`hash_tree_root(block)`: the root the proposer signs).
    pub block_root: Root,
    /// The post-state root.
    pub state_root: Root,
    /// The payload's build id at the execution client.
    pub payload_id: PayloadId,
    /// The execution client suggests this payload over a builder's.
    pub should_override_builder: bool,
    /// Where the time went.
    pub timings: ProductionTimings,
}

/// The phases of one `produce_block_v3`, for metrics and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProductionTimings {
    /// The head state advanced to the slot (zero when the slot timer advanced it ahead), the
    /// proposer and the RANDAO reveal checked, the payload attributes computed.
    pub state: Duration,
    /// The operations packed from the pool.
    pub pack: Duration,
    /// `engine_forkchoiceUpdatedV3` (when no build was prepared) and `engine_getPayloadV5`,
    /// decoding included, from the request to the answer (overlapping the packing).
    pub payload: Duration,
    /// The block through `process_block`.
    pub transition: Duration,
    /// The post-state's root.
    pub state_root: Duration,
    /// The whole call.
    pub total: Duration,
}

/// The blobs of a block built here, kept for its publication, with their cells (computed once,
/// in the background after production, so publication finds them ready).
#[derive(Debug)]
pub struct BuiltBlobs<E: EthSpec> {
    /// The block's commitments.
    pub commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
    /// The cell proofs the execution client gave.
    pub kzg_proofs: Vec<KZGProof>,
    /// The blobs the execution client gave.
    pub blobs: Blobs<E>,
    cells: Mutex<CellsState>,
    cells_ready: Condvar,
}

/// Where the cells of built blobs are.
#[derive(Debug)]
enum CellsState {
    /// Nobody has started.
    NotStarted,
    /// Someone computes them.
    Computing,
    /// Computed.
    Done(Result<Arc<Vec<kzg::CellsAndProofs>>, CellsError>),
}

/// A blob whose cells could not be computed (not canonical field elements).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("blob {index}: {source}")]
pub struct CellsError {
    /// The blob's position.
    pub index: usize,
    /// Why.
    #[source]
    pub source: kzg::Error,
}

impl<E: EthSpec> BuiltBlobs<E> {
    fn new(
        commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
        kzg_proofs: Vec<KZGProof>,
        blobs: Blobs<E>,
    ) -> Self {
        Self {
            commitments,
            kzg_proofs,
            blobs,
            cells: Mutex::new(CellsState::NotStarted),
            cells_ready: Condvar::new(),
        }
    }

    /// Computes the cells on `pool` unless someone has started; never waits (for the background
    /// job on the pool: a pool thread that waited for a computation needing the pool's threads
    /// could deadlock).
    fn precompute(&self, pool: &rayon::ThreadPool) {
        {
            let mut state = self.cells.lock();
            if !matches!(*state, CellsState::NotStarted) {
                return;
            }
            *state = CellsState::Computing;
        }
        // A failure is kept and reported to publication.
        let _ = self.finish(pool);
    }

    fn finish(
        &self,
        pool: &rayon::ThreadPool,
    ) -> Result<Arc<Vec<kzg::CellsAndProofs>>, CellsError> {
        let result = pool
            .install(|| compute_cells_and_proofs::<E>(&self.blobs, &self.kzg_proofs))
            .map(Arc::new);
        *self.cells.lock() = CellsState::Done(result.clone());
        self.cells_ready.notify_all();
        result
    }

    /// The blobs' cells with the execution client's proofs: computed once (on `pool`), by the
    /// background job production starts or by the first caller; a caller that comes while they
    /// are computed waits for them. Must not be called from a thread of `pool`.
    pub fn cells_and_proofs(
        &self,
        pool: &rayon::ThreadPool,
    ) -> Result<Arc<Vec<kzg::CellsAndProofs>>, CellsError> {
        let mut state = self.cells.lock();
        loop {
            match &*state {
                CellsState::Done(result) => return result.clone(),
                CellsState::Computing => self.cells_ready.wait(&mut state),
                CellsState::NotStarted => {
                    *state = CellsState::Computing;
                    drop(state);
                    return self.finish(pool);
                }
            }
        }
    }
}

/// Each blob's cells (`compute_cells`: no proof is computed) beside its `CELLS_PER_EXT_BLOB`
/// proofs as given, in parallel over the blobs on the current rayon pool. The caller checked
/// that there are `CELLS_PER_EXT_BLOB` proofs per blob.
pub fn compute_cells_and_proofs<E: EthSpec>(
    blobs: &Blobs<E>,
    proofs: &[KZGProof],
) -> Result<Vec<kzg::CellsAndProofs>, CellsError> {
    use rayon::prelude::*;
    blobs
        .par_iter()
        .zip(proofs.par_chunks_exact(kzg::CELLS_PER_EXT_BLOB))
        .enumerate()
        .map(|(index, (blob, proofs))| {
            let invalid = |source: kzg::Error| CellsError { index, source };
            let blob = kzg::blob_from_bytes(blob).map_err(invalid)?;
            let cells = kzg::compute_cells(&blob).map_err(invalid)?;
            let proofs = Box::new(std::array::from_fn(|i| kzg::KzgProof(proofs[i].0)));
            Ok(kzg::CellsAndProofs { cells, proofs })
        })
        .collect()
}

/// A payload build started ahead of its slot.
#[derive(Debug, Clone, Copy)]
struct PreparedPayload {
    payload_id: PayloadId,
    fee_recipient: Address,
}

/// Produces blocks on the chain's head with the node's pool and execution client, and
/// publishes blocks ([`crate::publication`]).
pub struct BlockProducer<E: EthSpec> {
    chain: Arc<BeaconChain<E>>,
    pool: Arc<OperationPool<E>>,
    engine: Arc<EngineApiClient>,
    config: ProducerConfig,
    /// `prepare_beacon_proposer`: validator index → fee recipient.
    preparations: RwLock<HashMap<ValidatorIndex, Address>>,
    /// Payload builds started ahead, by (slot, parent block root).
    payload_ids: Mutex<HashMap<(Slot, Root), PreparedPayload>>,
    /// The blobs of the latest blocks built here, by block root, oldest first.
    built: Mutex<VecDeque<(Root, Arc<BuiltBlobs<E>>)>>,
    /// The payloads of the latest Gloas blocks built here, by block root, oldest first: their
    /// envelopes follow the signed blocks.
    gloas_payloads: Mutex<VecDeque<(Root, Arc<BuiltGloasPayload<E>>)>>,
    /// `register_validator`: each validator's latest registration, by public key.
    builder_registrations:
        RwLock<HashMap<types::BLSPubkey, builder_client::ValidatorRegistrationV1>>,
    /// `beacon_block_production_seconds{phase}`.
    phase_seconds: prometheus::HistogramVec,
    /// The node's CPU workers production's CPU work runs on (the processor's `api_request_p0`
    /// kind, set by the client); tokio's blocking pool until they are set.
    workers: std::sync::OnceLock<Arc<dyn crate::workers::Workers>>,
}

/// The phases of [`ProductionTimings`] as `beacon_block_production_seconds`' `phase` label.
const PRODUCTION_PHASES: [&str; 6] = [
    "state",
    "pack",
    "payload",
    "transition",
    "state_root",
    "total",
];

impl<E: EthSpec> std::fmt::Debug for BlockProducer<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockProducer")
            .field("chain", &self.chain)
            .field("preparations", &self.preparations.read().len())
            .finish_non_exhaustive()
    }
}

impl<E: EthSpec> BlockProducer<E> {
    /// A producer on `chain` with `pool` and the execution client `engine`.
    pub fn new(
        chain: Arc<BeaconChain<E>>,
        pool: Arc<OperationPool<E>>,
        engine: Arc<EngineApiClient>,
        config: ProducerConfig,
    ) -> Self {
        Self {
            chain,
            pool,
            engine,
            config,
            preparations: RwLock::new(HashMap::new()),
            payload_ids: Mutex::new(HashMap::new()),
            built: Mutex::new(VecDeque::new()),
            gloas_payloads: Mutex::new(VecDeque::new()),
            builder_registrations: RwLock::new(HashMap::new()),
            phase_seconds: production_histogram(),
            workers: std::sync::OnceLock::new(),
        }
    }

    /// From now on production's CPU work (the head state's advance, the packing, the
    /// transition and the state root) runs on `workers` at [`WorkPriority::P0`], a validator's
    /// duty on the clock. Set once; a second call hands `workers` back.
    pub fn set_workers(
        &self,
        workers: Arc<dyn crate::workers::Workers>,
    ) -> Result<(), Arc<dyn crate::workers::Workers>> {
        self.workers.set(workers)
    }

    /// The node's workers, once set ([`Self::set_workers`]).
    pub(crate) fn workers(&self) -> Option<Arc<dyn crate::workers::Workers>> {
        self.workers.get().cloned()
    }

    /// Runs `f` on the producer on the node's workers (tokio's blocking pool before they are
    /// set): CPU work of a production, off the async worker that awaits the execution client.
    pub(crate) async fn on_workers<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Self) -> Result<T, ProductionError> + Send + 'static,
    ) -> Result<T, ProductionError> {
        let this = Arc::clone(self);
        run_on_workers(self.workers.get().cloned(), WorkPriority::P0, move || {
            f(&this)
        })
        .await
        .map_err(ProductionError::Workers)?
    }

    /// Registers `beacon_block_production_seconds{phase}`: each local block production's
    /// phases (`state`, `pack`, `payload`, `transition`, `state_root`) and its `total`.
    pub fn register_metrics(&self, registry: &prometheus::Registry) -> prometheus::Result<()> {
        registry.register(Box::new(self.phase_seconds.clone()))
    }

    fn observe(&self, timings: &ProductionTimings) {
        let values = [
            timings.state,
            timings.pack,
            timings.payload,
            timings.transition,
            timings.state_root,
            timings.total,
        ];
        for (phase, value) in PRODUCTION_PHASES.iter().zip(values) {
            self.phase_seconds
                .with_label_values(&[phase])
                .observe(value.as_secs_f64());
        }
    }

    /// The chain.
    pub fn chain(&self) -> &Arc<BeaconChain<E>> {
        &self.chain
    }

    /// The operation pool.
    pub fn pool(&self) -> &Arc<OperationPool<E>> {
        &self.pool
    }

    /// The execution client.
    pub fn engine(&self) -> &Arc<EngineApiClient> {
        &self.engine
    }

    /// The options.
    pub fn config(&self) -> &ProducerConfig {
        &self.config
    }

    /// `prepare_beacon_proposer`: the fee recipients of validators this node may propose for.
    /// A later preparation of a validator replaces its earlier one.
    pub fn prepare_beacon_proposer(
        &self,
        preparations: impl IntoIterator<Item = (ValidatorIndex, Address)>,
    ) {
        self.preparations.write().extend(preparations);
    }

    /// The fee recipient of `proposer`: its preparation, else the default.
    pub fn fee_recipient(&self, proposer: ValidatorIndex) -> Address {
        self.preparations
            .read()
            .get(&proposer)
            .copied()
            .unwrap_or(self.config.default_fee_recipient)
    }

    /// Whether `proposer` sent a preparation.
    pub fn is_prepared(&self, proposer: ValidatorIndex) -> bool {
        self.preparations.read().contains_key(&proposer)
    }

    /// The blobs of a block built here, by its root.
    pub fn built_blobs(&self, block_root: &Root) -> Option<Arc<BuiltBlobs<E>>> {
        self.built
            .lock()
            .iter()
            .find(|(root, _)| root == block_root)
            .map(|(_, b)| b.clone())
    }

    /// The head state advanced to `slot`: the chain's, advanced by the slot timer ahead of the
    /// slot (or now, and kept for the slot's block and the next production).
    fn advanced_state(
        &self,
        head_root: Root,
        head_state: &CachedBeaconState<E>,
        slot: Slot,
    ) -> Result<CachedBeaconState<E>, ProductionError> {
        self.chain
            .advanced_state(head_root, head_state, slot)
            .map_err(|e| ProductionError::Slots {
                slot,
                source: Box::new(e),
            })
    }

    /// The payload attributes for a block at `slot` on `state` (advanced to `slot`) whose parent
    /// is `parent_root`: the slot's time, the current epoch's RANDAO mix, the fee recipient,
    /// the state's expected withdrawals and the parent root.
    ///
    /// [spec]: bellatrix/validator.md#executionpayload, capella/validator.md#modified-prepare_execution_payload
    fn payload_attributes(
        &self,
        state: &CachedBeaconState<E>,
        slot: Slot,
        parent_root: Root,
        fee_recipient: Address,
    ) -> Result<(PayloadAttributes, Vec<Withdrawal>), ProductionError> {
        let view = state.view()?;
        let epoch = get_current_epoch(&view);
        let withdrawals = get_expected_withdrawals(&view)?.withdrawals;
        let attributes = PayloadAttributes {
            timestamp: self
                .chain
                .spec()
                .compute_time_at_slot(self.chain.genesis_time(), slot),
            prev_randao: get_randao_mix(&view, epoch),
            suggested_fee_recipient: fee_recipient,
            withdrawals: withdrawals.iter().map(Into::into).collect(),
            parent_beacon_block_root: parent_root,
        };
        Ok((attributes, withdrawals))
    }

    /// Starts a payload build at the execution client on `head`: `engine_forkchoiceUpdatedV3`
    /// with the head's forkchoice state and the attributes.
    async fn start_payload_build(
        &self,
        head: &HeadSnapshot<E>,
        attributes: &PayloadAttributes,
    ) -> Result<PayloadId, ProductionError> {
        let state = forkchoice_state_of(&self.chain, head)?;
        let ForkchoiceUpdated {
            payload_status,
            payload_id,
        } = self
            .engine
            .forkchoice_updated_v3(state, Some(attributes))
            .await
            .map_err(ExecutionError::from)?;
        payload_id.ok_or(ProductionError::NoPayloadId(payload_status))
    }

    /// Publishes `payload_attributes` for a build started on `head` for `proposer` at `slot`;
    /// the parent payload is the head state's latest execution payload header.
    ///
    /// [spec]: beacon-APIs apis/eventstream/index.yaml (payload_attributes)
    fn publish_payload_attributes(
        &self,
        version: ForkName,
        proposer_index: ValidatorIndex,
        slot: Slot,
        head: &HeadSnapshot<E>,
        attributes: &PayloadAttributes,
        withdrawals: Vec<Withdrawal>,
    ) -> Result<(), ProductionError> {
        let parent_payload = head.state.view()?.payload_header()?;
        self.chain
            .events()
            .publish(crate::events::ChainEvent::PayloadAttributes(Arc::new(
                crate::events::PreparedPayloadAttributes {
                    version,
                    proposer_index,
                    proposal_slot: slot,
                    parent_block_number: parent_payload.block_number,
                    parent_block_root: head.block_root,
                    parent_block_hash: parent_payload.block_hash,
                    timestamp: attributes.timestamp,
                    prev_randao: attributes.prev_randao,
                    suggested_fee_recipient: attributes.suggested_fee_recipient,
                    withdrawals,
                    parent_beacon_block_root: attributes.parent_beacon_block_root,
                },
            )));
        Ok(())
    }

    /// Called by the node's slot timer late in slot `slot - 1`: advances the head state to
    /// `slot` (kept for the proposal) and, when the slot's proposer is one of the prepared
    /// validators, starts its payload build now (`engine_forkchoiceUpdatedV3` with attributes)
    /// and keeps the payload id. `None` when no prepared validator proposes at `slot`.
    ///
    /// [spec]: bellatrix/validator.md#block-proposal (preparing the payload ahead)
    pub async fn prepare_payload_for_slot(
        &self,
        slot: Slot,
    ) -> Result<Option<PayloadId>, ProductionError> {
        let head = self.chain.head();
        if slot <= head.slot {
            return Err(ProductionError::SlotNotAfterHead {
                slot,
                head_slot: head.slot,
            });
        }
        if self.chain.spec().fork_name_at_slot::<E>(slot) == ForkName::Gloas {
            // A Gloas payload is built on the head's payload variant, which is known only at
            // the proposal (`production::gloas`): nothing is started ahead.
            return Ok(None);
        }
        self.check_fork(slot)?;
        let mut state = self.advanced_state(head.block_root, &head.state, slot)?;
        let proposer = {
            let (view, caches) = state.view_mut()?;
            get_beacon_proposer_index(&view.as_ref(), caches)?
        };
        if !self.is_prepared(proposer) {
            return Ok(None);
        }
        let fee_recipient = self.fee_recipient(proposer);
        let (attributes, withdrawals) =
            self.payload_attributes(&state, slot, head.block_root, fee_recipient)?;
        let payload_id = self.start_payload_build(&head, &attributes).await?;
        self.publish_payload_attributes(
            self.chain.spec().fork_name_at_slot::<E>(slot),
            proposer,
            slot,
            &head,
            &attributes,
            withdrawals,
        )?;
        let mut ids = self.payload_ids.lock();
        ids.retain(|(s, _), _| *s >= slot);
        ids.insert(
            (slot, head.block_root),
            PreparedPayload {
                payload_id,
                fee_recipient,
            },
        );
        Ok(Some(payload_id))
    }

    fn check_fork(&self, slot: Slot) -> Result<ForkName, ProductionError> {
        let fork = self.chain.spec().fork_name_at_slot::<E>(slot);
        match fork {
            ForkName::Electra | ForkName::Fulu => Ok(fork),
            // Gloas blocks carry a bid (block production at Gloas: issue 45).
            ForkName::Phase0
            | ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Deneb
            | ForkName::Gloas => Err(ProductionError::UnsupportedFork { slot, fork }),
        }
    }

    /// `produceBlockV3`: a block at `slot` on the head with a local payload. The RANDAO reveal
    /// is checked unless `skip_randao_verification` (the API's flag, for a reveal of the point
    /// at infinity); `graffiti` defaults to the configured one. `builder_boost_factor` is
    /// accepted for the API's sake: with no builder configured the local payload is always
    /// chosen, whatever the factor.
    ///
    /// [spec]: phase0/validator.md#block-proposal, fulu/validator.md#block-and-sidecar-proposal
    pub async fn produce_block_v3(
        self: &Arc<Self>,
        slot: Slot,
        randao_reveal: BLSSignature,
        graffiti: Option<Bytes32>,
        skip_randao_verification: bool,
        builder_boost_factor: Option<u64>,
    ) -> Result<ProducedBlock<E>, ProductionError> {
        // No builder: the local payload wins at any boost factor.
        let _ = builder_boost_factor;
        let (template, state) = self
            .on_workers(move |producer| {
                producer.block_template(slot, randao_reveal, graffiti, skip_randao_verification)
            })
            .await?;
        // The operations are packed while the execution client's payload is fetched and
        // decoded.
        let (payload, packed) = tokio::join!(self.local_payload(&template), self.pack(state));
        let (state, operations, pack_time) = packed?;
        let mut timings = template.timings;
        timings.pack = pack_time;
        self.local_block_on_workers(template, state, operations, payload?, timings)
            .await
    }

    /// [`Self::local_block`] (the transition and the state root) on the node's workers.
    async fn local_block_on_workers(
        self: &Arc<Self>,
        template: BlockTemplate<E>,
        state: CachedBeaconState<E>,
        operations: BlockOperations<E>,
        local: LocalPayload<E>,
        timings: ProductionTimings,
    ) -> Result<ProducedBlock<E>, ProductionError> {
        self.on_workers(move |producer| {
            producer.local_block(template, state, operations, local, timings)
        })
        .await
    }

    /// What a block at `slot` takes from the head before its payload and operations: the
    /// head state advanced to the slot (returned beside), the proposer, the RANDAO reveal
    /// checked, the payload attributes.
    fn block_template(
        &self,
        slot: Slot,
        randao_reveal: BLSSignature,
        graffiti: Option<Bytes32>,
        skip_randao_verification: bool,
    ) -> Result<(BlockTemplate<E>, CachedBeaconState<E>), ProductionError> {
        let fork = self.check_fork(slot)?;
        self.block_template_for(
            slot,
            fork,
            randao_reveal,
            graffiti,
            skip_randao_verification,
        )
    }

    /// [`Self::block_template`] for a slot of `fork`. At Gloas the attributes' withdrawals and
    /// the parent hash are left empty: they depend on the parent payload's variant
    /// (`production::gloas`).
    fn block_template_for(
        &self,
        slot: Slot,
        fork: ForkName,
        randao_reveal: BLSSignature,
        graffiti: Option<Bytes32>,
        skip_randao_verification: bool,
    ) -> Result<(BlockTemplate<E>, CachedBeaconState<E>), ProductionError> {
        let started = Instant::now();
        let head = self.chain.head();
        if slot <= head.slot {
            return Err(ProductionError::SlotNotAfterHead {
                slot,
                head_slot: head.slot,
            });
        }
        if head.execution_optimistic {
            return Err(ProductionError::OptimisticHead(head.block_root));
        }
        let parent_root = head.block_root;
        let mut state = self.advanced_state(parent_root, &head.state, slot)?;

        let (proposer_index, epoch, eth1_data) = {
            let (view, caches) = state.view_mut()?;
            let view = view.as_ref();
            let proposer = get_beacon_proposer_index(&view, caches)?;
            if !skip_randao_verification {
                let valid = randao_reveal_signature_set(&view, caches, proposer, &randao_reveal)
                    .is_ok_and(|set| set.verify());
                if !valid {
                    return Err(ProductionError::InvalidRandaoReveal { proposer, slot });
                }
            }
            // From Electra on (deposits arrive as execution requests) the vote is the state's
            // eth1 data; Fulu removed eth1 voting.
            (proposer, get_current_epoch(&view), view.eth1_data.clone())
        };

        let fee_recipient = self.fee_recipient(proposer_index);
        let (attributes, expected_withdrawals, parent_hash) = if fork == ForkName::Gloas {
            let view = state.view()?;
            let attributes = PayloadAttributes {
                timestamp: self
                    .chain
                    .spec()
                    .compute_time_at_slot(self.chain.genesis_time(), slot),
                prev_randao: get_randao_mix(&view, epoch),
                suggested_fee_recipient: fee_recipient,
                withdrawals: Vec::new(),
                parent_beacon_block_root: parent_root,
            };
            (attributes, Vec::new(), types::Hash32::ZERO)
        } else {
            let (attributes, expected_withdrawals) =
                self.payload_attributes(&state, slot, parent_root, fee_recipient)?;
            let parent_hash = state.view()?.payload_header()?.block_hash;
            (attributes, expected_withdrawals, parent_hash)
        };
        let template = BlockTemplate {
            head,
            fork,
            slot,
            proposer_index,
            epoch,
            eth1_data,
            randao_reveal,
            graffiti: graffiti.unwrap_or(self.config.default_graffiti),
            fee_recipient,
            attributes,
            expected_withdrawals,
            parent_hash,
            started,
            timings: ProductionTimings {
                state: started.elapsed(),
                ..ProductionTimings::default()
            },
        };
        Ok((template, state))
    }

    /// The operations packed from the pool for `state`, and how long that took. The packing
    /// runs on the node's workers, so the execution client's answer (about 13 MB of JSON at 48
    /// blobs) is read and decoded meanwhile, not after it; the state comes back beside.
    async fn pack(
        self: &Arc<Self>,
        mut state: CachedBeaconState<E>,
    ) -> Result<(CachedBeaconState<E>, BlockOperations<E>, Duration), ProductionError> {
        self.on_workers(move |producer| {
            let started = Instant::now();
            let operations = producer
                .pool
                .get_block_operations(&mut state, producer.chain.spec())?;
            Ok((state, operations, started.elapsed()))
        })
        .await
    }

    /// The local execution client's payload for the template: the build started ahead (or
    /// now, `engine_forkchoiceUpdatedV3`), `engine_getPayloadV5`, and the payload's fields
    /// and blobs bundle checked against what the attributes and the slot fix.
    async fn local_payload(
        &self,
        template: &BlockTemplate<E>,
    ) -> Result<LocalPayload<E>, ProductionError> {
        let started = Instant::now();
        let prepared = self
            .payload_ids
            .lock()
            .get(&(template.slot, template.head.block_root))
            .copied();
        let payload_id = match prepared {
            Some(p) if p.fee_recipient == template.fee_recipient => p.payload_id,
            _ => {
                let id = self
                    .start_payload_build(&template.head, &template.attributes)
                    .await?;
                self.publish_payload_attributes(
                    template.fork,
                    template.proposer_index,
                    template.slot,
                    &template.head,
                    &template.attributes,
                    template.expected_withdrawals.clone(),
                )?;
                id
            }
        };
        let response = self
            .engine
            .get_payload_v5::<E>(payload_id)
            .await
            .map_err(ExecutionError::from)?;
        let elapsed = started.elapsed();

        let payload = &response.execution_payload;
        let attributes = &template.attributes;
        check_field(
            template.parent_hash,
            payload.parent_hash,
            |expected, found| PayloadFieldMismatch::ParentHash { expected, found },
        )?;
        check_field(
            attributes.timestamp,
            payload.timestamp,
            |expected, found| PayloadFieldMismatch::Timestamp { expected, found },
        )?;
        check_field(
            attributes.prev_randao,
            payload.prev_randao,
            |expected, found| PayloadFieldMismatch::PrevRandao { expected, found },
        )?;
        let expected_withdrawals = &template.expected_withdrawals;
        if payload.withdrawals.len() != expected_withdrawals.len()
            || payload
                .withdrawals
                .iter()
                .zip(expected_withdrawals)
                .any(|(a, b)| a != b)
        {
            return Err(ProductionError::PayloadMismatch(
                PayloadFieldMismatch::Withdrawals {
                    expected: expected_withdrawals.len(),
                    found: payload.withdrawals.len(),
                },
            ));
        }
        let max = self
            .chain
            .spec()
            .get_blob_parameters(template.epoch)
            .max_blobs_per_block;
        let count = response.blobs_bundle.commitments.len();
        if count as u64 > max {
            return Err(ProductionError::TooManyBlobs { count, max });
        }
        let bundle = &response.blobs_bundle;
        execution_layer::verify_blobs_bundle_shape::<E>(bundle).map_err(|_| {
            ProductionError::BlobsBundle {
                blobs: bundle.blobs.len(),
                commitments: bundle.commitments.len(),
                proofs: bundle.proofs.len(),
            }
        })?;
        Ok(LocalPayload {
            response,
            payload_id,
            elapsed,
        })
    }

    /// The template's body with `operations` and the given payload, commitments and requests.
    fn block_body(
        template: &BlockTemplate<E>,
        operations: BlockOperations<E>,
        execution_payload: ExecutionPayload<E>,
        blob_kzg_commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock>,
        execution_requests: ExecutionRequests<E>,
    ) -> Result<BeaconBlockBody<E>, ProductionError> {
        Ok(BeaconBlockBody {
            randao_reveal: template.randao_reveal,
            eth1_data: template.eth1_data.clone(),
            graffiti: template.graffiti,
            proposer_slashings: list(
                "proposer slashings",
                operations.operations.proposer_slashings,
            )?,
            attester_slashings: list(
                "attester slashings",
                operations.operations.attester_slashings,
            )?,
            attestations: list("attestations", operations.attestations)?,
            // Fulu removed eth1 deposits; from Electra on they arrive as execution requests.
            deposits: VariableList::empty(),
            voluntary_exits: list("voluntary exits", operations.operations.voluntary_exits)?,
            sync_aggregate: operations.sync_aggregate,
            execution_payload,
            bls_to_execution_changes: list(
                "BLS-to-execution changes",
                operations.operations.bls_to_execution_changes,
            )?,
            blob_kzg_commitments,
            execution_requests,
        })
    }

    /// Runs `message` through `process_block` on `state` (the template's advanced state)
    /// without signature checks and with the payload's verdict valid (the reveal was checked,
    /// the operations were verified on their way into the pool, the payload is the execution
    /// client's or stands in for a verified bid's); `before_root` then edits the post-state
    /// (the blinded path's two fields). Returns the proposer's reward in gwei (its balance
    /// change, withdrawals added back) and the state's time.
    fn transition(
        &self,
        state: &mut CachedBeaconState<E>,
        message: &types::electra::BeaconBlock<E>,
        before_root: impl FnOnce(&mut state_processing::StateMut<'_, E>),
    ) -> Result<Gwei, ProductionError> {
        let proposer = message.proposer_index;
        let withdrawn: Gwei = message
            .body
            .execution_payload
            .withdrawals
            .iter()
            .filter(|w| w.validator_index == proposer)
            .map(|w| w.amount)
            .sum();
        let before = balance(&state.view()?, proposer)?;
        {
            let (mut view, caches) = state.view_mut()?;
            process_block(
                &mut view,
                caches,
                message,
                VerifySignatures::None,
                &AlwaysValid,
                self.chain.spec(),
            )
            .map_err(ProductionError::BlockProcessing)?;
            before_root(&mut view);
        }
        let after = balance(&state.view()?, proposer)?;
        Ok(after.saturating_add(withdrawn).saturating_sub(before))
    }

    /// The local block: the template with `operations` and the execution client's payload,
    /// its state root from the transition; its blobs remembered for publication.
    fn local_block(
        &self,
        template: BlockTemplate<E>,
        mut state: CachedBeaconState<E>,
        operations: BlockOperations<E>,
        local: LocalPayload<E>,
        mut timings: ProductionTimings,
    ) -> Result<ProducedBlock<E>, ProductionError> {
        let LocalPayload {
            response,
            payload_id,
            elapsed,
        } = local;
        timings.payload = elapsed;
        let bundle = response.blobs_bundle;
        let commitments: VariableList<KZGCommitment, E::MaxBlobCommitmentsPerBlock> =
            list("blob KZG commitments", bundle.commitments)?;
        let blobs: Blobs<E> = list("blobs", bundle.blobs)?;
        let body = Self::block_body(
            &template,
            operations,
            response.execution_payload,
            commitments.clone(),
            response.execution_requests,
        )?;
        let mut message = types::electra::BeaconBlock {
            slot: template.slot,
            proposer_index: template.proposer_index,
            parent_root: template.head.block_root,
            state_root: Root::ZERO,
            body,
        };

        let transition_started = Instant::now();
        let reward = self.transition(&mut state, &message, |_| {})?;
        timings.transition = transition_started.elapsed();
        let root_started = Instant::now();
        let state_root = state.hash_tree_root()?;
        timings.state_root = root_started.elapsed();
        message.state_root = state_root;
        let block_root = message.tree_hash_root();

        // The same block produced again (a validator client's retry) keeps the entry and the
        // cells already computed or computing.
        let known = self.built_blobs(&block_root);
        if known.is_none() {
            let built = Arc::new(BuiltBlobs::new(
                commitments,
                bundle.proofs.clone(),
                blobs.clone(),
            ));
            {
                let mut cache = self.built.lock();
                cache.push_back((block_root, built.clone()));
                while cache.len() > self.config.built_blobs_cache.max(1) {
                    cache.pop_front();
                }
            }
            if !built.blobs.is_empty() {
                // The cells publication needs, while the validator client signs (a failure is
                // found again, and reported, by publication).
                let pool = self.chain.pool().clone();
                self.chain.pool().spawn(move || built.precompute(&pool));
            }
        }

        let block = match template.fork {
            ForkName::Electra => BeaconBlock::Electra(message),
            ForkName::Fulu => BeaconBlock::Fulu(message),
            fork @ (ForkName::Phase0
            | ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Deneb
            | ForkName::Gloas) => {
                return Err(ProductionError::UnsupportedFork {
                    slot: template.slot,
                    fork,
                });
            }
        };
        let produced = ProducedBlock {
            block,
            kzg_proofs: bundle.proofs,
            blobs,
            execution_payload_value: response.block_value,
            consensus_block_value: U256::from(reward) * U256::from(WEI_PER_GWEI),
            fork: template.fork,
            slot: template.slot,
            proposer_index: template.proposer_index,
            block_root,
            state_root,
            payload_id,
            should_override_builder: response.should_override_builder,
            timings: ProductionTimings {
                total: template.started.elapsed(),
                ..timings
            },
        };
        self.observe(&produced.timings);
        Ok(produced)
    }
}

/// `beacon_block_production_seconds{phase}`, from 1 ms to 4 s.
fn production_histogram() -> prometheus::HistogramVec {
    const BUCKETS: [f64; 12] = [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0,
    ];
    let vec = prometheus::HistogramVec::new(
        prometheus::HistogramOpts::new(
            "beacon_block_production_seconds",
            "Local block production (produceBlockV3) by phase: the head state advanced to the \
             slot, the operations packed, the execution payload fetched, the block's \
             transition, the post-state root, and the total",
        )
        .buckets(BUCKETS.to_vec()),
        &["phase"],
    )
    .expect("a valid histogram name, help, label and buckets");
    // Every phase's series exists from the start: a dashboard sees zeros, not gaps.
    for phase in PRODUCTION_PHASES {
        vec.with_label_values(&[phase]);
    }
    vec
}

/// What a block takes from the head before its payload and operations
/// ([`BlockProducer::block_template`]).
#[derive(Debug, Clone)]
struct BlockTemplate<E: EthSpec> {
    head: Arc<HeadSnapshot<E>>,
    fork: ForkName,
    slot: Slot,
    proposer_index: ValidatorIndex,
    epoch: types::Epoch,
    eth1_data: types::phase0::Eth1Data,
    randao_reveal: BLSSignature,
    graffiti: Bytes32,
    fee_recipient: Address,
    attributes: PayloadAttributes,
    expected_withdrawals: Vec<Withdrawal>,
    /// The parent payload's block hash (the state's latest execution payload header's).
    parent_hash: types::Hash32,
    started: Instant,
    timings: ProductionTimings,
}

/// The execution client's checked answer for a block ([`BlockProducer::local_payload`]).
#[derive(Debug)]
struct LocalPayload<E: EthSpec> {
    response: execution_layer::GetPayloadResponse<E>,
    payload_id: PayloadId,
    /// From the request (`forkchoiceUpdated` when no build was prepared) to the answer.
    elapsed: Duration,
}

/// The field of a built payload that differs from what the attributes or the parent fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PayloadFieldMismatch {
    /// `parent_hash` is not the head's block hash.
    #[error("parent_hash is {found}, expected {expected}")]
    ParentHash {
        /// The head's execution block hash.
        expected: types::Hash32,
        /// The payload's.
        found: types::Hash32,
    },
    /// `timestamp` is not the slot's.
    #[error("timestamp is {found}, expected {expected}")]
    Timestamp {
        /// The slot's time.
        expected: u64,
        /// The payload's.
        found: u64,
    },
    /// `prev_randao` is not the state's RANDAO mix.
    #[error("prev_randao is {found}, expected {expected}")]
    PrevRandao {
        /// The state's mix.
        expected: types::Bytes32,
        /// The payload's.
        found: types::Bytes32,
    },
    /// `withdrawals` are not the state's expected withdrawals.
    #[error("{found} withdrawals differ from the {expected} expected")]
    Withdrawals {
        /// How many the state expects.
        expected: usize,
        /// How many the payload carries.
        found: usize,
    },
    /// `slot_number` (Amsterdam) is not the block's slot.
    #[error("slot_number is {found}, expected {expected}")]
    SlotNumber {
        /// The block's slot.
        expected: u64,
        /// The payload's.
        found: u64,
    },
}

/// `Ok` when `expected == found`, else the mismatch `mismatch` makes of them.
fn check_field<T: PartialEq>(
    expected: T,
    found: T,
    mismatch: impl FnOnce(T, T) -> PayloadFieldMismatch,
) -> Result<(), ProductionError> {
    if expected == found {
        return Ok(());
    }
    Err(ProductionError::PayloadMismatch(mismatch(expected, found)))
}

/// A body list from a vector, or a typed error when it is longer than the block allows.
fn list<T, N: ssz_types::typenum::Unsigned>(
    what: &'static str,
    items: Vec<T>,
) -> Result<VariableList<T, N>, ProductionError> {
    let count = items.len();
    VariableList::new(items).map_err(|_| ProductionError::TooMany { what, count })
}
