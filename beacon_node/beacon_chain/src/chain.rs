//! [`BeaconChain`]: the one owner of fork choice, the store's writes, the head and the caches
//! the gossip rules read.
//!
//! Locks: fork choice, the observed caches and the block bookkeeping each sit behind their own
//! mutex, held only for reads and writes of that structure, never across a signature check, a
//! state transition or a store write of another structure. Readers of the head take the
//! published [`HeadSnapshot`] (an `Arc` swapped under a short write lock).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use fork_choice::{AnchorBlock, Columns, Fault, ForkChoice, ThreadPool};
use light_client::LightClientError;
use parking_lot::{Mutex, RwLock};

use crate::tracked_mutex::TrackedMutex;
use state_processing::{
    CachedBeaconState,
    per_block::{
        AlwaysValid, BlockProcessingError, BlockSignatureVerifier, EngineError, ExecutionEngine,
        SegmentSignatureVerifier, VerifySignatures,
    },
    per_slot::{SlotProcessingError, process_slots},
};
use store::{Head as StoreHead, Store, StoredAs};
use types::{
    ChainSpec, ColumnIndex, Epoch, EthSpec, ForkName, Root, SignedBeaconBlock, Slot,
    electra::BeaconBlock, phase0::Checkpoint, typenum::Unsigned,
};

use crate::block_import::{ExecutionBlobsError, ReconstructionError};
use crate::block_verification::{BlockProcessor, Imports, ProcessedBlock};
use crate::chain_fork_choice::ChainForkChoice;
use crate::data_availability_checker::{AvailabilityError, DataAvailabilityChecker};
use crate::events::{ChainEvent, EventBus};
use crate::execution::{
    BlockPayloadVerdict, PayloadStatusSource, PayloadVerdictSender, PayloadVerdicts,
};
use crate::gossip::attestation::ForkChoiceVote;
use crate::gossip::execution_payload_bid::ExecutionPayloadBidCaches;
use crate::gossip::operations::VerifiedAttesterSlashing;
use crate::gossip::proposer_preferences::ProposerPreferencesStore;
use crate::light_client_server::LightClientServer;
use crate::observed::{
    ObservedAggregateBits, ObservedBlockProducers, ObservedOperations, ObservedPerSlot,
    ObservedValidators,
};
use crate::pending_payloads::PendingPayloads;
use crate::slot_clock::SlotClock;
use crate::state_advance::ImportMetrics;
use crate::state_cache::{StateCache, StateCacheConfig};
use crate::store_writer::{StoreWriter, StoreWritesHeld};
use crate::timeline::{Stage, Timelines};

/// Options of the chain.
#[derive(Debug, Clone)]
pub struct ChainConfig {
    /// Options of fork choice.
    pub fork_choice: fork_choice::Config,
    /// The bounds of the states in memory.
    pub state_cache: StateCacheConfig,
    /// Epochs the per-epoch observed caches hold (attesters, aggregators).
    pub observed_epochs: u64,
    /// Slots the per-slot observed caches hold ahead of their lowest slot.
    pub observed_slots: u64,
    /// The bound on validator indices the observed bitsets accept.
    pub max_validator_index: u64,
    /// The columns the node custodies (its custody groups' columns); `None`: every column
    /// (a supernode).
    pub custody_columns: Option<BTreeSet<ColumnIndex>>,
    /// Blocks the availability checker holds while their columns arrive.
    pub pending_blocks: usize,
    /// Turns off the light-client server (on by default).
    pub disable_light_client_server: bool,
    /// How long an import waits, after its state transition, for an `engine_newPayload`
    /// verdict still in flight before it goes on optimistically (the verdict is applied when
    /// it comes). Bounds how long a slow or hung execution client holds a processor worker.
    pub payload_verdict_wait: std::time::Duration,
}

impl ChainConfig {
    /// The custody columns, every column when none were given.
    fn custody_columns<E: EthSpec>(&self) -> BTreeSet<ColumnIndex> {
        self.custody_columns
            .clone()
            .unwrap_or_else(|| (0..E::NumberOfColumns::to_u64()).collect())
    }
}

impl Default for ChainConfig {
    fn default() -> Self {
        Self {
            fork_choice: fork_choice::Config::default(),
            state_cache: StateCacheConfig::default(),
            observed_epochs: 4,
            observed_slots: 1 << 20,
            max_validator_index: 1 << 24,
            custody_columns: None,
            pending_blocks: 64,
            disable_light_client_server: false,
            payload_verdict_wait: DEFAULT_PAYLOAD_VERDICT_WAIT,
        }
    }
}

/// [`ChainConfig::payload_verdict_wait`] by default: far above a healthy execution client's
/// time for a mainnet payload (tens to hundreds of milliseconds), early enough in the slot for
/// the verdict to land before attestations are due.
pub const DEFAULT_PAYLOAD_VERDICT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Why the chain could not do what it was asked (not a gossip verdict: those are per topic).
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// A block, column or state of a fork the chain does not process (Gloas: issues 42 to 45).
    #[error("fork {0} is not supported by this version of Arbor")]
    UnsupportedFork(ForkName),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] store::StoreError),
    /// Fork choice refused or failed.
    #[error("fork choice: {0}")]
    ForkChoice(#[from] fork_choice::Error),
    /// The Gloas fork choice refused or failed.
    #[error("fork choice: {0}")]
    GloasForkChoice(#[from] fork_choice::GloasError),
    /// A Gloas block reached the Gloas store's import on a chain whose fork choice was not
    /// carried into Gloas (the first Gloas block's import carries it: a bug if seen).
    #[error(
        "block {block_root} is a Gloas block and this chain's fork choice was not carried into \
         Gloas"
    )]
    CrossesGloasFork {
        /// The Gloas block.
        block_root: Root,
    },
    /// A block of a fork before Gloas given to a chain anchored in Gloas (it cannot descend
    /// from the anchor).
    #[error("block {block_root} is a {fork} block and this chain runs the Gloas fork choice")]
    PreGloasBlock {
        /// The block.
        block_root: Root,
        /// Its fork.
        fork: ForkName,
    },
    /// A state helper failed: hashing a state, reading its fields, recording it as finalized.
    #[error("state: {0}")]
    State(#[source] state_processing::Error),
    /// Advancing a state through empty slots (an anchor to its epoch boundary, a head or
    /// parent state to the next block's slot) failed.
    #[error("advancing a state to slot {slot}: {source}")]
    SlotProcessing {
        /// The slot the state was advanced to.
        slot: Slot,
        /// The failure.
        #[source]
        source: SlotProcessingError,
    },
    /// Filling the caches of an advanced state (committees, balances) failed.
    #[error("filling the caches of an advanced state: {0}")]
    StateCaches(#[source] state_processing::Error),
    /// The head state cannot be advanced to a slot that is not after the head's.
    #[error("slot {slot} is not after the head's slot {head_slot}")]
    NotAfterHead {
        /// The slot asked for.
        slot: Slot,
        /// The head block's slot.
        head_slot: Slot,
    },
    /// A block's state cannot be advanced back to a slot before its own.
    #[error("cannot advance the state of block {block_root} at slot {state_slot} to slot {slot}")]
    StatePastSlot {
        /// The block whose state it is.
        block_root: Root,
        /// The state's slot.
        state_slot: Slot,
        /// The earlier slot asked for.
        slot: Slot,
    },
    /// The anchor block and state do not belong together.
    #[error("anchor: {0}")]
    Anchor(#[source] AnchorError),
    /// A block or state that reopening the chain needs is not in the store.
    #[error("{what} {root} is missing from the store")]
    NotInStore {
        /// What is missing.
        what: StoredItem,
        /// Its root.
        root: Root,
    },
    /// The availability checker refused a component.
    #[error("availability: {0}")]
    Availability(#[source] AvailabilityError),
    /// A pending block's missing columns could not be reconstructed.
    #[error("reconstruction of the columns of {block_root}: {source}")]
    Reconstruction {
        /// The block.
        block_root: Root,
        /// The failure.
        #[source]
        source: ReconstructionError,
    },
    /// The execution client's blobs of a pending block could not be turned into its columns.
    #[error("the execution client's blobs of {block_root}: {source}")]
    ExecutionBlobs {
        /// The block.
        block_root: Root,
        /// The failure.
        #[source]
        source: ExecutionBlobsError,
    },
    /// A published block waits in the availability checker for its columns and the
    /// publication gave none.
    #[error("block {block_root} waits for its columns and none were given")]
    NoColumnsGiven {
        /// The block.
        block_root: Root,
    },
    /// The blocking task of a publication's import ended without an answer (cancelled at
    /// shutdown).
    #[error("the import task ended: {0}")]
    ImportTask(#[source] tokio::task::JoinError),
    /// Light-client data could not be derived or put in the format of its fork.
    #[error("light-client data: {0}")]
    LightClient(#[source] LightClientError),
    /// A stored light-client bootstrap's sync committee period has no stored sync committee.
    #[error(
        "the stored light-client bootstrap of {block_root} has no sync committee of period {period}"
    )]
    MissingSyncCommittee {
        /// The bootstrap's block.
        block_root: Root,
        /// The sync committee period of the bootstrap's header.
        period: u64,
    },
    /// The store holds no chain to reopen.
    #[error("the store has no head: start from a genesis or checkpoint state")]
    EmptyStore,
    /// The execution client found the block's payload invalid (its answer came while the
    /// state transition ran).
    #[error("the execution client found the payload of block {0} invalid")]
    InvalidPayload(Root),
    /// A chain segment handed in that cannot be imported as given.
    #[error("chain segment: {0}")]
    Segment(#[source] SegmentError),
    /// A Gloas payload (envelope and columns) completed by columns failed its import.
    #[error("payload: {0}")]
    Envelope(#[source] Box<crate::gloas_import::EnvelopeError>),
}

impl ChainError {
    /// Whose fault this error is: the block, column or message the chain was given
    /// ([`Fault::Message`]: a peer that sent it is to blame), or the node's own store, states,
    /// execution client or bookkeeping ([`Fault::Local`]: no peer is, and the same input may
    /// import on a retry). Gossip, req/resp and sync read this, not the variants.
    pub fn fault(&self) -> Fault {
        match self {
            ChainError::ForkChoice(e) => e.fault(),
            ChainError::GloasForkChoice(e) => e.fault(),
            // Nobody's fault (its block or columns not here yet) is no peer's.
            ChainError::Envelope(e) => e.fault().unwrap_or(Fault::Local),
            // The execution client's verdict on the payload the block carries.
            ChainError::InvalidPayload(_)
            // A block of a fork whose blobs come as sidecars, or one already finalized.
            | ChainError::Availability(AvailabilityError::BlobSidecarFork { .. })
            // A publication that gave a block with blobs and no columns.
            | ChainError::NoColumnsGiven { .. } => Fault::Message,
            ChainError::Availability(AvailabilityError::Finalized { .. })
            | ChainError::Availability(AvailabilityError::UnsupportedFork(_))
            // A fork this node does not run: not the peer's fault.
            | ChainError::UnsupportedFork(_)
            | ChainError::CrossesGloasFork { .. }
            | ChainError::PreGloasBlock { .. }
            | ChainError::Store(_)
            | ChainError::State(_)
            | ChainError::SlotProcessing { .. }
            | ChainError::StateCaches(_)
            | ChainError::NotAfterHead { .. }
            | ChainError::StatePastSlot { .. }
            | ChainError::Anchor(_)
            | ChainError::NotInStore { .. }
            | ChainError::Reconstruction { .. }
            | ChainError::ExecutionBlobs { .. }
            | ChainError::ImportTask(_)
            | ChainError::LightClient(_)
            | ChainError::MissingSyncCommittee { .. }
            | ChainError::EmptyStore
            | ChainError::Segment(_) => Fault::Local,
        }
    }
}

/// Why an anchor block and state cannot start a chain ([`BeaconChain::from_anchor`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnchorError {
    /// The anchor block is of a fork before Electra, which the chain does not start from.
    #[error("the anchor block is a {0} block, before Electra")]
    BeforeElectra(ForkName),
    /// The anchor state is at a slot before its block's.
    #[error(
        "the anchor state is at slot {state_slot}, before its block {block_root} at slot {block_slot}"
    )]
    StateBeforeBlock {
        /// The anchor state's slot.
        state_slot: Slot,
        /// The anchor block's root.
        block_root: Root,
        /// The anchor block's slot.
        block_slot: Slot,
    },
    /// The anchor state is at its block's slot but is not the state the block names.
    #[error(
        "block {block_root} names state {block_state_root} but the state's root is {state_root}"
    )]
    StateRootMismatch {
        /// The anchor block's root.
        block_root: Root,
        /// The state root the block names.
        block_state_root: Root,
        /// The anchor state's root.
        state_root: Root,
    },
    /// The anchor state is after its block's slot but its latest block header is another
    /// block: it is not the block's post-state advanced through empty slots.
    #[error(
        "the anchor state at slot {state_slot} does not descend from block {block_root} \
         (its latest block header is another block)"
    )]
    NotDescendant {
        /// The anchor state's slot.
        state_slot: Slot,
        /// The anchor block's root.
        block_root: Root,
    },
}

/// What [`ChainError::NotInStore`] found missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredItem {
    /// The state at the store's split (the finalized checkpoint's).
    SplitState,
    /// The block at the store's split.
    SplitBlock,
    /// An unfinalized block the store's index of hot blocks names.
    HotBlock,
    /// The head block fork choice chose.
    HeadBlock,
    /// A block fork choice has, whose post-state is being loaded.
    ForkChoiceBlock,
    /// The post-state of a block fork choice has.
    BlockState,
}

impl std::fmt::Display for StoredItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::SplitState => "split state",
            Self::SplitBlock => "split block",
            Self::HotBlock => "hot block",
            Self::HeadBlock => "head block",
            Self::ForkChoiceBlock => "fork-choice block",
            Self::BlockState => "block post-state",
        })
    }
}

/// Why a chain segment cannot be imported as given ([`BeaconChain::import_chain_segment`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    /// One payload verdict is needed per block.
    #[error("{blocks} blocks with {verdicts} payload verdicts")]
    VerdictCount {
        /// Blocks in the segment.
        blocks: usize,
        /// Payload verdicts given.
        verdicts: usize,
    },
    /// A block whose transition or signatures failed went through the import of a failed
    /// block as imported (a bug: its failure is lost).
    #[error("block {block_root} at slot {slot} failed and was imported")]
    FailedBlockImported {
        /// The block.
        block_root: Root,
        /// Its slot.
        slot: Slot,
    },
}

/// The execution status of a block's payload, as the gossip rules and optimistic sync read
/// it: fork choice keeps it on its nodes ([`fork_choice::ExecutionStatus`]); a block that
/// failed before fork choice took it keeps it in its [`UnimportedBlock::Failed`] record.
pub use fork_choice::ExecutionStatus;

/// A block the node has seen but holds no post-state for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnimportedBlock {
    /// It failed validation or the state transition: its descendants are rejected.
    Failed {
        /// Its slot.
        slot: Slot,
        /// What the execution client said of its payload (invalidated when that is why it
        /// failed).
        payload: ExecutionStatus,
    },
    /// It is queued for import (waiting for its columns or a worker).
    Pending {
        /// Its slot.
        slot: Slot,
    },
}

/// A block of a chain segment with the custody columns verified with it
/// ([`BeaconChain::import_chain_segment`]).
#[derive(Debug, Clone)]
pub struct SegmentBlock<E: EthSpec> {
    /// The block.
    pub block: Arc<SignedBeaconBlock<E>>,
    /// Its custody columns (empty for a block without blobs).
    pub columns: Vec<types::DataColumnSidecar<E>>,
}

/// What [`BeaconChain::import_chain_segment`] did.
#[derive(Debug)]
pub struct SegmentImport {
    /// The roots of the blocks imported (or already known), in chain order: the segment's
    /// first `imported.len()` blocks.
    pub imported: Vec<Root>,
    /// The position in the segment of the block that failed, and why; the blocks after it
    /// were not tried.
    pub failed: Option<(usize, ChainError)>,
    /// How many batches the blocks' signatures were verified in (each batch every block whose
    /// transition ended while the batch before was verified).
    pub signature_batches: usize,
}

/// The signature sets of a segment's blocks as `receiver` hands them over (each with its
/// block's position in the segment), verified in batches: every block's sets waiting when the
/// batch before is done. The number of batches, or the first block in chain order with a bad
/// signature, its error, and the batches verified; `stop` is set on failure.
fn verify_segment_signatures(
    receiver: &std::sync::mpsc::Receiver<(usize, BlockSignatureVerifier)>,
    stop: &AtomicBool,
) -> Result<usize, (usize, BlockProcessingError, usize)> {
    let mut batches = 0;
    while let Ok((first, sets)) = receiver.recv() {
        let mut positions = vec![first];
        let mut batch = SegmentSignatureVerifier::new();
        batch.push_block(sets);
        while let Ok((at, sets)) = receiver.try_recv() {
            positions.push(at);
            batch.push_block(sets);
        }
        batches += 1;
        if let Err((i, error)) = batch.verify() {
            stop.store(true, Ordering::Relaxed);
            return Err((positions[i], error, batches));
        }
    }
    Ok(batches)
}

/// The head as readers see it: cheap to clone, consistent (block, state and checkpoints of one
/// moment).
#[derive(Debug, Clone)]
pub struct HeadSnapshot<E: EthSpec> {
    /// The head block's root.
    pub block_root: Root,
    /// The head block's slot.
    pub slot: Slot,
    /// The head block's post-state (its caches shared with the chain's).
    pub state: CachedBeaconState<E>,
    /// The post-state's root.
    pub state_root: Root,
    /// Fork choice's justified checkpoint.
    pub justified_checkpoint: Checkpoint,
    /// Fork choice's finalized checkpoint.
    pub finalized_checkpoint: Checkpoint,
    /// Whether the head's payload is not yet validated by the execution client (for Gloas:
    /// the payload the head node stands on, its own for a FULL head).
    pub execution_optimistic: bool,
    /// Gloas: whether the head is its block with its payload (FULL) or without (EMPTY); `None`
    /// before Gloas.
    pub payload_status: Option<fork_choice::PayloadStatus>,
}

/// The p2p spec's `Seen`: the "first one seen" caches of every gossip topic.
///
/// [spec]: fulu/p2p-interface.md#modified-seen
#[derive(Debug)]
pub(crate) struct Observed<E: EthSpec> {
    /// `proposer_slots`.
    pub(crate) block_producers: ObservedBlockProducers,
    /// `aggregator_epochs`.
    pub(crate) aggregators: ObservedValidators,
    /// `aggregate_data_roots`, keyed by the data's slot and the root of (data root, committee).
    pub(crate) aggregate_bits: ObservedAggregateBits,
    /// `attestation_validator_epochs`.
    pub(crate) attesters: ObservedValidators,
    /// Exits, slashings and BLS changes.
    pub(crate) operations: ObservedOperations,
    /// `sync_contribution_aggregator_slots`: (aggregator, subcommittee) per slot.
    pub(crate) sync_aggregators: ObservedPerSlot<(u64, u64)>,
    /// `sync_contribution_data`, keyed by slot and the root of (block root, subcommittee).
    pub(crate) sync_contribution_bits: ObservedAggregateBits,
    /// `sync_message_validator_slots`: (validator, subnet) per slot.
    pub(crate) sync_messages: ObservedPerSlot<(u64, u64)>,
    /// `data_column_sidecar_tuples`: (proposer, column index) per slot.
    pub(crate) data_columns: ObservedPerSlot<(u64, u64)>,
    /// `blob_sidecar_tuples` (before Fulu): (proposer, blob index) per slot.
    pub(crate) blob_sidecars: ObservedPerSlot<(u64, u64)>,
    /// `partial_data_column_headers`, by block root, with the header's slot for pruning.
    pub(crate) partial_headers: HashMap<Root, types::fulu::PartialDataColumnHeader<E>>,
    /// Roots of signed block headers whose proposer signature verified (a block's 128 column
    /// sidecars share one header: its signature is checked once).
    pub(crate) verified_headers: ObservedPerSlot<Root>,
    /// `payload_attestation_validators` (Gloas): the PTC members whose payload attestation
    /// message was accepted, per slot (at most a PTC per slot: a key is recorded only after
    /// its signature verified).
    pub(crate) payload_attesters: ObservedPerSlot<types::ValidatorIndex>,
    /// `execution_payload_envelopes` (Gloas): `(block root, builder index)` of the envelopes
    /// accepted, per block slot (recorded only after the signature verified).
    pub(crate) execution_payload_envelopes: ObservedPerSlot<(Root, types::gloas::BuilderIndex)>,
    /// `data_column_sidecar_tuples` (Gloas): `(block root, column index)` of the sidecars
    /// accepted, per block slot.
    pub(crate) gloas_data_columns: ObservedPerSlot<(Root, u64)>,
}

impl<E: EthSpec> Observed<E> {
    fn new(config: &ChainConfig) -> Self {
        Self {
            block_producers: ObservedBlockProducers::new(config.observed_slots),
            aggregators: ObservedValidators::new(
                config.observed_epochs,
                config.max_validator_index,
            ),
            aggregate_bits: ObservedAggregateBits::new(config.observed_slots, 16),
            attesters: ObservedValidators::new(config.observed_epochs, config.max_validator_index),
            operations: ObservedOperations::default(),
            sync_aggregators: ObservedPerSlot::new(config.observed_slots),
            sync_contribution_bits: ObservedAggregateBits::new(config.observed_slots, 16),
            sync_messages: ObservedPerSlot::new(config.observed_slots),
            data_columns: ObservedPerSlot::new(config.observed_slots),
            blob_sidecars: ObservedPerSlot::new(config.observed_slots),
            partial_headers: HashMap::new(),
            verified_headers: ObservedPerSlot::new(config.observed_slots),
            payload_attesters: ObservedPerSlot::new(config.observed_slots),
            execution_payload_envelopes: ObservedPerSlot::new(config.observed_slots),
            gloas_data_columns: ObservedPerSlot::new(config.observed_slots),
        }
    }

    /// Moves every window to the current slot and the finalized slot.
    fn prune(&mut self, current_slot: Slot, finalized_slot: Slot) {
        let epoch = current_slot / E::slots_per_epoch();
        self.aggregators.prune(epoch);
        self.attesters.prune(epoch);
        // Attestations are gossiped for two epochs; sync messages for the current slot.
        let attestation_floor = current_slot.saturating_sub(2 * E::slots_per_epoch());
        self.aggregate_bits.prune(attestation_floor);
        let sync_floor = current_slot.saturating_sub(1);
        self.sync_aggregators.prune(sync_floor);
        self.sync_contribution_bits.prune(sync_floor);
        self.sync_messages.prune(sync_floor);
        // Payload attestation messages are gossiped for their slot only.
        self.payload_attesters.prune(sync_floor);
        self.block_producers.prune(finalized_slot);
        self.data_columns.prune(finalized_slot);
        self.blob_sidecars.prune(finalized_slot);
        self.execution_payload_envelopes.prune(finalized_slot);
        self.gloas_data_columns.prune(finalized_slot);
        self.verified_headers.prune(finalized_slot);
        self.partial_headers
            .retain(|_, h| h.signed_block_header.message.slot > finalized_slot);
    }
}

/// How long a thread waits for the fork-choice lock before it logs who holds it (and keeps
/// waiting): far beyond any legitimate hold (a block's import takes it for milliseconds).
const FORK_CHOICE_STALL: std::time::Duration = std::time::Duration::from_secs(12);

/// The beacon chain.
pub struct BeaconChain<E: EthSpec> {
    spec: Arc<ChainSpec>,
    genesis_time: u64,
    genesis_validators_root: Root,
    clock: Arc<dyn SlotClock>,
    store: Arc<Store<E>>,
    pub(crate) fork_choice: TrackedMutex<ChainForkChoice<E>>,
    /// The states in memory: block post-states, checkpoint and advanced states (see
    /// [`crate::state_cache`]). Fork choice holds none.
    pub(crate) state_cache: StateCache<E>,
    head: RwLock<Arc<HeadSnapshot<E>>>,
    pub(crate) observed: Mutex<Observed<E>>,
    pub(crate) unimported: Mutex<HashMap<Root, UnimportedBlock>>,
    /// Gloas: the first valid proposer preferences per dependent root and proposal slot, which
    /// bids are checked against (`seen.proposer_preferences`).
    pub(crate) proposer_preferences: Mutex<ProposerPreferencesStore>,
    /// Gloas: the bids seen (one per builder and parent, the best value per parent) and the
    /// execution payloads seen on gossip, which the bid rules read.
    pub(crate) bid_caches: Mutex<ExecutionPayloadBidCaches>,
    /// The execution client and its verdicts in flight ([`PayloadVerdicts`]).
    pub(crate) payload_verdicts: PayloadVerdicts,
    events: EventBus,
    pool: Arc<ThreadPool>,
    /// The sync committee's member keys and their validator indices (one committee a period).
    pub(crate) sync_committee_cache: Mutex<Option<SyncCommitteeMembers>>,
    /// Blocks waiting for their custody columns.
    pub(crate) da_checker: Mutex<DataAvailabilityChecker<E>>,
    /// Gloas payloads (envelopes and custody columns from gossip) waiting for their other
    /// parts; their blocks are imported already.
    pub(crate) pending_payloads: Mutex<PendingPayloads<E>>,
    /// Recent blocks' timelines.
    pub(crate) timelines: Mutex<Timelines>,
    /// Gossip votes waiting for their slot to pass before fork choice counts them.
    queued_votes: Mutex<Vec<QueuedVote>>,
    /// Light-client data derived from imported blocks.
    pub(crate) light_client_server: LightClientServer<E>,
    /// How `open` rebuilt fork choice (`None` for a chain built from an anchor).
    reopened: Option<Reopened>,
    /// Which pre-state imports started from; how long the head state's advances and the
    /// imports' store batches took.
    pub(crate) import_metrics: ImportMetrics,
    /// Writes the epoch snapshots imports deferred and runs the store's finalization
    /// migrations, off the import path (see [`crate::store_writer`]).
    store_writer: StoreWriter<E>,
    /// What the API's state queries keep between requests (see [`crate::api_states`]).
    pub(crate) api_state_caches: crate::api_states::ApiStateCaches,
}

/// How [`BeaconChain::open`] rebuilt fork choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reopened {
    /// Blocks put back from the persisted fork choice, without their state transition.
    pub restored: usize,
    /// Blocks imported again (their state transition run) on top.
    pub replayed: usize,
    /// Gloas payloads made FULL again from the envelopes the store kept (those the restored
    /// fork choice did not already hold as verified).
    pub payloads_restored: usize,
    /// Whether the store's split lagged fork choice's finalized checkpoint (the node stopped
    /// before the store writer migrated), so the migration was queued again.
    pub migration_queued: bool,
}

/// A vote waiting for its slot.
type QueuedVote = ForkChoiceVote;

/// What fork choice did with one vote.
enum VoteOutcome {
    Applied,
    /// For the current slot (or later): it counts once the slot has passed.
    Future,
    Refused,
}

/// One verified vote into `fc`, gossip's (`is_from_block = false`).
fn apply_vote<E: EthSpec>(fc: &mut ChainForkChoice<E>, vote: &ForkChoiceVote) -> VoteOutcome {
    match fc {
        ChainForkChoice::Fulu(fc) => {
            match fc.on_verified_attestation(&vote.data, &vote.attesting_indices) {
                Ok(()) => VoteOutcome::Applied,
                Err(fork_choice::Error::FutureAttestation { .. }) => VoteOutcome::Future,
                Err(_) => VoteOutcome::Refused,
            }
        }
        ChainForkChoice::Gloas(g) => {
            match g
                .store
                .on_indexed_attestation(&vote.data, &vote.attesting_indices, false)
            {
                Ok(()) => VoteOutcome::Applied,
                Err(fork_choice::GloasError::Store(fork_choice::Error::FutureAttestation {
                    ..
                })) => VoteOutcome::Future,
                Err(_) => VoteOutcome::Refused,
            }
        }
    }
}

/// Votes held for the next slot at most (a slot's worth of attestations at 2,000,000 validators,
/// as aggregates and singles, is far below this).
const MAX_QUEUED_VOTES: usize = 1 << 18;

/// A sync committee's member keys and validator indices, in committee order.
pub(crate) type SyncCommitteeMembers = (Arc<[types::BLSPubkey]>, Arc<[types::ValidatorIndex]>);

impl<E: EthSpec> std::fmt::Debug for BeaconChain<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head = self.head();
        f.debug_struct("BeaconChain")
            .field("head", &head.block_root)
            .field("slot", &head.slot)
            .finish_non_exhaustive()
    }
}

/// Checks that `state` is `block`'s post-state, or that state advanced through empty slots: its
/// latest block header (with the state root that the next slot fills in) is the block.
fn check_anchor_state<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    block_root: Root,
    block: &SignedBeaconBlock<E>,
) -> Result<(), ChainError> {
    let block = AnchorFields {
        slot: block.slot(),
        state_root: block.state_root(),
    };
    let state_slot = *state.state.slot();
    if state_slot < block.slot {
        return Err(ChainError::Anchor(AnchorError::StateBeforeBlock {
            state_slot,
            block_root,
            block_slot: block.slot,
        }));
    }
    let state_root = state.hash_tree_root().map_err(ChainError::State)?;
    if state_slot == block.slot {
        if block.state_root != state_root {
            return Err(ChainError::Anchor(AnchorError::StateRootMismatch {
                block_root,
                block_state_root: block.state_root,
                state_root,
            }));
        }
        return Ok(());
    }
    let header = state.state.latest_block_header();
    if header.state_root != block.state_root
        || tree_hash::TreeHash::tree_hash_root(header) != block_root
    {
        return Err(ChainError::Anchor(AnchorError::NotDescendant {
            state_slot,
            block_root,
        }));
    }
    Ok(())
}

/// The fork choice of a chain anchored at `block` (root `block_root`) with `state` (the
/// checkpoint state): the Gloas store for a Gloas anchor, the pre-Gloas one for an Electra or
/// Fulu anchor.
fn anchor_fork_choice<E: EthSpec>(
    state: &CachedBeaconState<E>,
    block_root: Root,
    block: &SignedBeaconBlock<E>,
    spec: &Arc<ChainSpec>,
    config: &fork_choice::Config,
) -> Result<ChainForkChoice<E>, ChainError> {
    if let SignedBeaconBlock::Gloas(gloas) = block {
        let mut store =
            crate::gloas_import::gloas_anchor_store(state, block_root, &gloas.message, spec)?;
        store.set_prune_threshold(config.prune_threshold);
        return Ok(ChainForkChoice::gloas(store, config.verify_signatures));
    }
    let message = electra_message(block)
        .map_err(|fork| ChainError::Anchor(AnchorError::BeforeElectra(fork)))?;
    Ok(ChainForkChoice::Fulu(ForkChoice::new(
        state,
        AnchorBlock {
            root: block_root,
            slot: message.slot,
            proposer_index: message.proposer_index,
            parent_root: message.parent_root,
        },
        spec.clone(),
        config.clone(),
    )?))
}

/// Puts the fork choice persisted as `bytes` back: onto the pre-Gloas store anchored at the
/// split (the blocks `is_stored` names), or, for a Gloas chain, as the whole Gloas store
/// (refused when it holds an unfinalized block the store does not: the blocks are stored before
/// fork choice takes them, so such bytes are not this store's). Returns the blocks restored.
fn restore_persisted<E: EthSpec>(
    fork_choice: &mut ChainForkChoice<E>,
    bytes: &[u8],
    is_stored: impl Fn(&Root) -> bool,
    split_slot: Slot,
    spec: &Arc<ChainSpec>,
    config: &fork_choice::Config,
    now: u64,
) -> Result<usize, ChainError> {
    if let ChainForkChoice::Fulu(fc) = fork_choice {
        let fulu = match fc.restore_persisted(bytes, &is_stored) {
            Ok(restored) => {
                tracing::info!(
                    blocks = restored.blocks.len(),
                    latest_messages = restored.latest_messages,
                    "fork choice restored from the store"
                );
                return Ok(restored.blocks.len());
            }
            Err(e) => e,
        };
        // A chain anchored before Gloas whose fork choice was carried into Gloas persisted
        // the Gloas store: it goes on with that.
        if fork_choice::GloasForkChoice::<E>::from_persisted_bytes(bytes, spec.clone()).is_err() {
            return Err(fulu.into());
        }
        tracing::info!("the persisted fork choice was carried into Gloas");
        let verify_signatures = fc.verify_signatures();
        *fork_choice = ChainForkChoice::gloas(
            fork_choice::GloasForkChoice::from_persisted_bytes(bytes, spec.clone())?,
            verify_signatures,
        );
    }
    let ChainForkChoice::Gloas(gloas) = fork_choice else {
        return Ok(0);
    };
    let mut store = fork_choice::GloasForkChoice::from_persisted_bytes(bytes, spec.clone())?;
    for root in store.block_roots() {
        let after_split = store
            .block_info(root)
            .is_some_and(|info| info.slot > split_slot);
        if after_split && !is_stored(root) {
            return Err(ChainError::NotInStore {
                what: StoredItem::ForkChoiceBlock,
                root: *root,
            });
        }
    }
    store.set_prune_threshold(config.prune_threshold);
    store.on_tick(now);
    let blocks = store.block_count();
    tracing::info!(blocks, "Gloas fork choice restored from the store");
    gloas.store = store;
    Ok(blocks)
}

/// Applies the stored envelope of `root` to the reopened Gloas fork choice
/// (`on_verified_execution_payload`: its FULL node back), its verdict not validated until the
/// execution client says otherwise. Returns whether that changed anything: not for a chain
/// still before Gloas, a block fork choice does not hold (left out of the replay), or a payload
/// already verified in the restored fork choice.
fn restore_stored_payload<E: EthSpec>(
    fork_choice: &TrackedMutex<ChainForkChoice<E>>,
    root: Root,
) -> Result<bool, ChainError> {
    let mut fc = fork_choice.lock();
    let Some(gloas) = fc.gloas_mut() else {
        return Ok(false);
    };
    if !gloas.store.contains_block(&root) || gloas.store.is_payload_verified(&root) {
        return Ok(false);
    }
    gloas.store.on_verified_execution_payload(root, Ok(()))?;
    gloas
        .payload_statuses
        .entry(root)
        .or_insert(ExecutionStatus::NotValidated);
    Ok(true)
}

/// The fields of an anchor block [`check_anchor_state`] reads.
struct AnchorFields {
    slot: Slot,
    state_root: Root,
}

impl<E: EthSpec> BeaconChain<E> {
    /// A chain starting at `anchor_block` (a genesis or a checkpoint), recorded in the empty
    /// `store`. `anchor_state` is the block's post-state, or that state advanced through empty
    /// slots: a finalized checkpoint whose epoch starts with missed slots names an earlier
    /// block. A state that is not at an epoch boundary is advanced to the next one here, since
    /// the store and fork choice anchor at the checkpoint state (the epoch's first slot). The
    /// state's caches (committees, public keys) become the chain's: a caller that warmed them
    /// spares the first blocks the work.
    pub fn from_anchor(
        store: Arc<Store<E>>,
        anchor_state: CachedBeaconState<E>,
        anchor_block: SignedBeaconBlock<E>,
        spec: Arc<ChainSpec>,
        clock: Arc<dyn SlotClock>,
        pool: Arc<ThreadPool>,
        config: ChainConfig,
    ) -> Result<Self, ChainError> {
        let mut anchor = anchor_state;
        let block_root = anchor_block.canonical_root();
        let anchor_slot = anchor_block.slot();
        if !anchor_block.fork_name().electra_enabled() {
            return Err(ChainError::Anchor(AnchorError::BeforeElectra(
                anchor_block.fork_name(),
            )));
        }
        check_anchor_state(&mut anchor, block_root, &anchor_block)?;
        // The light-client server derives the anchor's bootstrap from the block's post-state;
        // an advanced state still gives it the anchor's finalized ancestry.
        let post_state = (*anchor.state.slot() == anchor_slot).then(|| anchor.state.clone());
        let spe = E::slots_per_epoch();
        let state_slot = *anchor.state.slot();
        if !state_slot.is_multiple_of(spe) {
            let boundary = state_slot.div_ceil(spe) * spe;
            process_slots(&mut anchor, boundary, &spec).map_err(|source| {
                ChainError::SlotProcessing {
                    slot: boundary,
                    source,
                }
            })?;
        }
        let state_root = anchor.hash_tree_root().map_err(ChainError::State)?;
        anchor.set_finalized().map_err(ChainError::State)?;
        store.init_anchor(state_root, &anchor.state, block_root, &anchor_block)?;
        let light_client_server = LightClientServer::new(
            !config.disable_light_client_server,
            &spec,
            &store,
            post_state.as_ref().unwrap_or(&anchor.state),
            &anchor_block,
        );
        let fork_choice = anchor_fork_choice(
            &anchor,
            block_root,
            &anchor_block,
            &spec,
            &config.fork_choice,
        )?;
        let import_metrics = ImportMetrics::new(config.state_cache.max_block_states);
        let state_cache = StateCache::new(
            config.state_cache,
            block_root,
            anchor_slot,
            fork_choice.finalized_checkpoint().epoch,
            anchor.clone(),
        );
        let genesis_time = *anchor.state.genesis_time();
        let genesis_validators_root = *anchor.state.genesis_validators_root();
        let head = HeadSnapshot {
            block_root,
            slot: anchor_block.slot(),
            // The block's post-state root, as `open` gives it (`head_state_root`).
            state_root: anchor_block.state_root(),
            justified_checkpoint: fork_choice.justified_checkpoint().clone(),
            finalized_checkpoint: fork_choice.finalized_checkpoint().clone(),
            state: anchor,
            execution_optimistic: false,
            // The anchor's payload is not known to the Gloas store (`store.payloads` starts
            // empty): its EMPTY node is the head.
            payload_status: fork_choice
                .is_gloas()
                .then_some(fork_choice::PayloadStatus::Empty),
        };
        let store_writer = StoreWriter::new(
            store.clone(),
            spec.clone(),
            import_metrics.clone(),
            pool.clone(),
        );
        Ok(Self {
            spec,
            genesis_time,
            genesis_validators_root,
            clock,
            store,
            fork_choice: TrackedMutex::new("fork choice", FORK_CHOICE_STALL, fork_choice),
            state_cache,
            head: RwLock::new(Arc::new(head)),
            observed: Mutex::new(Observed::new(&config)),
            unimported: Mutex::new(HashMap::new()),
            proposer_preferences: Mutex::new(ProposerPreferencesStore::default()),
            bid_caches: Mutex::new(ExecutionPayloadBidCaches::default()),
            payload_verdicts: PayloadVerdicts::new(config.payload_verdict_wait),
            events: EventBus::default(),
            pool,
            sync_committee_cache: Mutex::new(None),
            da_checker: Mutex::new(DataAvailabilityChecker::new(
                config.custody_columns::<E>(),
                config.pending_blocks,
            )),
            pending_payloads: Mutex::new(PendingPayloads::new(config.pending_blocks)),
            timelines: Mutex::new(Timelines::default()),
            queued_votes: Mutex::new(Vec::new()),
            light_client_server,
            reopened: None,
            import_metrics,
            store_writer,
            api_state_caches: Default::default(),
        })
    }

    /// Reopens the chain recorded in `store`: fork choice anchored at the store's finalized
    /// checkpoint (its split state and block), the block tree, checkpoints and latest messages
    /// persisted with the last whole state put back on it (their post-states are loaded from
    /// the store when needed), then the unfinalized blocks imported after that imported again
    /// in slot order, without re-checking what was checked when they were first imported
    /// (signatures, data availability, the execution payload). So a restart runs the state
    /// transition of at most the blocks since the last whole state (an epoch's), however far
    /// finality lags. A store without a persisted fork choice (or with one that cannot be
    /// read, which is logged) replays every unfinalized block. Blocks that do not descend
    /// from the checkpoint (forks abandoned before the last shutdown) are left out. Payloads
    /// count as not yet validated until the execution client says otherwise; invalidated
    /// ones stay invalidated.
    pub fn open(
        store: Arc<Store<E>>,
        spec: Arc<ChainSpec>,
        clock: Arc<dyn SlotClock>,
        pool: Arc<ThreadPool>,
        config: ChainConfig,
    ) -> Result<Self, ChainError> {
        let split = store.split()?.ok_or(ChainError::EmptyStore)?;
        let mut replayer = store::StateTransitionReplayer::new(&spec);
        let state =
            store
                .get_state(&split.state_root, &mut replayer)?
                .ok_or(ChainError::NotInStore {
                    what: StoredItem::SplitState,
                    root: split.state_root,
                })?;
        let anchor_block = store
            .get_block(&split.block_root)?
            .ok_or(ChainError::NotInStore {
                what: StoredItem::SplitBlock,
                root: split.block_root,
            })?;
        let light_client_server = LightClientServer::new(
            !config.disable_light_client_server,
            &spec,
            &store,
            &state,
            &anchor_block,
        );
        let state = CachedBeaconState::new(state);
        state.set_finalized().map_err(ChainError::State)?;
        let genesis = *state.state.genesis_time();
        // The clock is past every stored block on a running node; a clock that is not (a
        // node restarted with a wrong clock, a test) must not make stored blocks "future".
        let hot_blocks = store.hot_blocks()?;
        let latest = hot_blocks.last().map_or(0, |(slot, _, _)| *slot);
        let now = (clock.now_ms() / 1000).max(spec.compute_time_at_slot(genesis, latest));
        let import_metrics = ImportMetrics::new(config.state_cache.max_block_states);
        let anchor_epoch = *state.state.slot() / E::slots_per_epoch();
        let state_cache = StateCache::new(
            config.state_cache,
            split.block_root,
            anchor_block.slot(),
            anchor_epoch,
            state.clone(),
        );
        let anchored = || -> Result<ChainForkChoice<E>, ChainError> {
            let mut fork_choice = match &anchor_block {
                // The Gloas store anchors at the block and the split state as they are.
                SignedBeaconBlock::Gloas(_) => anchor_fork_choice(
                    &state,
                    split.block_root,
                    &anchor_block,
                    &spec,
                    &config.fork_choice,
                )?,
                SignedBeaconBlock::Phase0(_)
                | SignedBeaconBlock::Altair(_)
                | SignedBeaconBlock::Bellatrix(_)
                | SignedBeaconBlock::Capella(_)
                | SignedBeaconBlock::Deneb(_)
                | SignedBeaconBlock::Electra(_)
                | SignedBeaconBlock::Fulu(_) => ChainForkChoice::Fulu(ForkChoice::new(
                    &state,
                    AnchorBlock {
                        root: split.block_root,
                        slot: anchor_block.slot(),
                        proposer_index: anchor_block.proposer_index(),
                        parent_root: anchor_block.parent_root(),
                    },
                    spec.clone(),
                    config.fork_choice.clone(),
                )?),
            };
            fork_choice.on_tick(now);
            Ok(fork_choice)
        };
        let mut fork_choice = anchored()?;
        let stored: HashSet<Root> = hot_blocks.iter().map(|(_, root, _)| *root).collect();
        let persisted = store.fork_choice().map_err(ChainError::from);
        let restored = match persisted.and_then(|bytes| match bytes {
            Some(bytes) => restore_persisted(
                &mut fork_choice,
                &bytes,
                |root| stored.contains(root) || *root == split.block_root,
                split.slot,
                &spec,
                &config.fork_choice,
                now,
            ),
            None => Ok(0),
        }) {
            Ok(blocks) => blocks,
            Err(e) => {
                tracing::warn!(error = %e, "the persisted fork choice cannot be used: replaying every unfinalized block");
                fork_choice = anchored()?;
                0
            }
        };
        state_cache.pin(fork_choice.pins());
        // Fork choice behind its lock from here on, as the running chain holds it: the imports
        // below load the states they need without it.
        let fork_choice = TrackedMutex::new("fork choice", FORK_CHOICE_STALL, fork_choice);
        let imports = Imports {
            fork_choice: &fork_choice,
            state_cache: &state_cache,
            store: &store,
            spec: &spec,
            caches: state.caches.clone(),
            metrics: &import_metrics,
        };
        // Checked when first imported: signatures, data availability, the execution payload.
        let processor = BlockProcessor {
            spec: spec.clone(),
            verify_signatures: VerifySignatures::None,
            kzg_pool: pool.clone(),
        };
        let mut replayed = 0usize;
        // The Gloas blocks whose envelope the store kept: their FULL nodes come back, each
        // right after its block (in slot order, before any child that builds on it).
        let envelopes: HashSet<Root> = store
            .execution_payload_envelope_roots(split.slot, latest.saturating_add(1))?
            .into_iter()
            .map(|(_, root)| root)
            .collect();
        let mut payloads_restored = 0usize;
        if envelopes.contains(&split.block_root) {
            payloads_restored +=
                usize::from(restore_stored_payload(&fork_choice, split.block_root)?);
        }
        for (slot, root, parent) in hot_blocks {
            // A child of a block restored as invalidated stays out, as its import would.
            let skip = {
                let fc = fork_choice.lock();
                // A pre-Gloas block not carried into the Gloas store (a fork it abandoned)
                // is not imported into it.
                let pre_gloas = spec.fork_name_at_slot::<E>(slot) < ForkName::Gloas;
                slot <= split.slot
                    || (fc.is_gloas() && pre_gloas)
                    || fc.contains_block(&root)
                    || !fc.contains_block(&parent)
                    || fc.is_invalidated(&parent)
            };
            if !skip {
                let block = store.get_block(&root)?.ok_or(ChainError::NotInStore {
                    what: StoredItem::HotBlock,
                    root,
                })?;
                // The store takes a block before fork choice does: one fork choice then
                // refused (its parent invalidated, finality moved past it) is stored but was
                // never imported, and is not now.
                match import_stored_block(&imports, &processor, &block) {
                    Ok(Some(post_state)) => {
                        light_client_server.on_block(&post_state.state, &block);
                        replayed += 1;
                    }
                    Ok(None) => {}
                    Err(e) if e.fault() == fork_choice::Fault::Message => {
                        tracing::warn!(block_root = %root, slot, error = %e, "a stored block fork choice refuses is not imported again");
                    }
                    Err(e) => return Err(e),
                }
            }
            // The block restored or imported again (or left out: then nothing to apply).
            if slot > split.slot && envelopes.contains(&root) {
                payloads_restored += usize::from(restore_stored_payload(&fork_choice, root)?);
            }
        }
        if payloads_restored > 0 {
            tracing::info!(
                payloads = payloads_restored,
                "FULL payloads restored from the stored envelopes"
            );
        }
        tracing::info!(
            blocks = replayed,
            "blocks imported again since the persisted fork choice"
        );

        imports.supply_justified_balances(&[]);
        let head = fork_choice.lock().get_head()?;
        // A head restored without its transition (nothing imported after the persisted fork
        // choice): the light-client server gets it with the state loaded for the head anyway,
        // so that the next block's updates attest to it.
        let head_in_memory = state_cache.block_state(&head.root).is_some();
        let mut head_state = imports.block_state(&head.root)?;
        let execution_optimistic = match (&*fork_choice.lock(), head.payload_status) {
            (ChainForkChoice::Gloas(g), Some(status)) => g.head_optimistic(&head.root, status),
            _ => head.root != split.block_root,
        };
        if head.root != split.block_root && !head_in_memory {
            let block = store.get_block(&head.root)?.ok_or(ChainError::NotInStore {
                what: StoredItem::HeadBlock,
                root: head.root,
            })?;
            light_client_server.on_block(&head_state.state, &block);
        }
        // Nobody can subscribe to the chain's events before it exists: none to publish to.
        light_client_server.on_head(&store, &EventBus::default(), head.root);
        let state_root = head_state_root(&mut head_state)?;
        // A head state loaded from the store (the head restored without its transition) stays
        // in the cache with the tree hashes just computed: the next block's import starts on
        // it instead of loading and hashing it again.
        state_cache.insert_block_state(head.root, head.slot, head_state.clone());
        let genesis_time = *head_state.state.genesis_time();
        let genesis_validators_root = *head_state.state.genesis_validators_root();
        let (justified_checkpoint, finalized) = {
            let fc = fork_choice.lock();
            (
                fc.justified_checkpoint().clone(),
                fc.finalized_checkpoint().clone(),
            )
        };
        let snapshot = HeadSnapshot {
            block_root: head.root,
            slot: head.slot,
            state: head_state,
            state_root,
            justified_checkpoint,
            finalized_checkpoint: finalized.clone(),
            execution_optimistic,
            payload_status: head.payload_status,
        };
        let store_writer = StoreWriter::new(
            store.clone(),
            spec.clone(),
            import_metrics.clone(),
            pool.clone(),
        );
        // Epoch snapshots the node stopped before writing: written now, in the background.
        for (root, slot) in store.pending_snapshots()? {
            tracing::info!(state_root = %root, slot, "epoch snapshot still pending; writing it");
            store_writer.materialize(root);
        }
        // A finalization whose migration the node stopped before running (its fork choice
        // persisted or its blocks replayed past the split): queued again.
        let migration_queued = finalized.epoch * E::slots_per_epoch() > split.slot;
        if migration_queued {
            tracing::info!(
                epoch = finalized.epoch,
                split_slot = split.slot,
                "finalization migration still to run; queuing it"
            );
            let state = imports.checkpoint_state(&finalized)?;
            store_writer.finalize(finalized, state)?;
        }
        drop(imports);
        Ok(Self {
            spec,
            genesis_time,
            genesis_validators_root,
            clock,
            store,
            fork_choice,
            state_cache,
            head: RwLock::new(Arc::new(snapshot)),
            observed: Mutex::new(Observed::new(&config)),
            unimported: Mutex::new(HashMap::new()),
            proposer_preferences: Mutex::new(ProposerPreferencesStore::default()),
            bid_caches: Mutex::new(ExecutionPayloadBidCaches::default()),
            payload_verdicts: PayloadVerdicts::new(config.payload_verdict_wait),
            events: EventBus::default(),
            pool,
            sync_committee_cache: Mutex::new(None),
            da_checker: Mutex::new(DataAvailabilityChecker::new(
                config.custody_columns::<E>(),
                config.pending_blocks,
            )),
            pending_payloads: Mutex::new(PendingPayloads::new(config.pending_blocks)),
            timelines: Mutex::new(Timelines::default()),
            queued_votes: Mutex::new(Vec::new()),
            light_client_server,
            reopened: Some(Reopened {
                restored,
                replayed,
                payloads_restored,
                migration_queued,
            }),
            import_metrics,
            store_writer,
            api_state_caches: Default::default(),
        })
    }

    /// How [`Self::open`] rebuilt fork choice; `None` for a chain built from an anchor.
    pub fn reopened(&self) -> Option<Reopened> {
        self.reopened
    }

    /// The chain's spec.
    pub fn spec(&self) -> &ChainSpec {
        &self.spec
    }

    /// The genesis time (seconds since the UNIX epoch).
    pub fn genesis_time(&self) -> u64 {
        self.genesis_time
    }

    /// `genesis_validators_root`.
    pub fn genesis_validators_root(&self) -> Root {
        self.genesis_validators_root
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store<E>> {
        &self.store
    }

    /// The event bus.
    pub fn events(&self) -> &EventBus {
        &self.events
    }

    /// The pool data-parallel verification (KZG, BLS batches) runs on.
    pub fn pool(&self) -> &Arc<ThreadPool> {
        &self.pool
    }

    /// The current head.
    pub fn head(&self) -> Arc<HeadSnapshot<E>> {
        self.head.read().clone()
    }

    /// Whether the head block is more than an epoch behind the wall clock at `now_ms` (a node
    /// that is syncing, or one that missed an epoch of blocks). Its head state then cannot
    /// judge what is new since: a validator it does not have yet, a committee of a later
    /// period. The router IGNOREs instead of REJECTing what such a state refuses
    /// ([`crate::Verdict::Reject`] would have honest peers penalised, and a syncing node ban
    /// them).
    pub fn head_is_behind(&self, now_ms: u64) -> bool {
        self.head().slot + E::slots_per_epoch() < self.slot_at_ms(now_ms)
    }

    /// The clock's time in milliseconds since the UNIX epoch.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// The slot at time `now_ms` (the genesis slot before genesis).
    pub fn slot_at_ms(&self, now_ms: u64) -> Slot {
        now_ms.saturating_sub(self.genesis_time.saturating_mul(1000)) / self.spec.slot_duration_ms
    }

    /// `compute_time_at_slot_ms`.
    ///
    /// [spec]: phase0/p2p-interface.md#compute_time_at_slot_ms
    pub fn compute_time_at_slot_ms(&self, slot: Slot) -> u64 {
        self.genesis_time
            .saturating_mul(1000)
            .saturating_add(slot.saturating_mul(self.spec.slot_duration_ms))
    }

    /// `is_future_slot(store, slot, current_time_ms)`.
    ///
    /// [spec]: phase0/p2p-interface.md#is_future_slot
    pub fn is_future_slot(&self, slot: Slot, current_time_ms: u64) -> bool {
        current_time_ms.saturating_add(self.spec.maximum_gossip_clock_disparity)
            < self.compute_time_at_slot_ms(slot)
    }

    /// `is_within_slot_range(store, slot, slot_range, current_time_ms)`.
    ///
    /// [spec]: phase0/p2p-interface.md#is_within_slot_range
    pub fn is_within_slot_range(&self, slot: Slot, slot_range: u64, current_time_ms: u64) -> bool {
        let disparity = self.spec.maximum_gossip_clock_disparity;
        let start = self.compute_time_at_slot_ms(slot);
        if current_time_ms.saturating_add(disparity) < start {
            return false;
        }
        let end = self.compute_time_at_slot_ms(slot.saturating_add(slot_range).saturating_add(1));
        end.saturating_add(disparity) >= current_time_ms
    }

    /// `is_current_or_previous_epoch(store, epoch, current_time_ms)`: `epoch` is within the
    /// clock disparity of the current or the previous epoch.
    ///
    /// [spec]: deneb/p2p-interface.md#new-is_current_or_previous_epoch
    pub fn is_current_or_previous_epoch(&self, epoch: Epoch, current_time_ms: u64) -> bool {
        // `is_within_epoch(epoch) or is_within_epoch(epoch + 1)`: two adjacent ranges, each
        // widened by the disparity at both ends, are one range over both epochs.
        let spe = E::slots_per_epoch();
        self.is_within_slot_range(epoch.saturating_mul(spe), 2 * spe - 1, current_time_ms)
    }

    /// The finalized checkpoint.
    pub fn finalized_checkpoint(&self) -> Checkpoint {
        self.fork_choice.lock().finalized_checkpoint().clone()
    }

    /// Replaces fork choice's finalized checkpoint (a store started from a chosen checkpoint,
    /// as the spec's gossip vectors do).
    pub fn set_finalized_checkpoint(&self, checkpoint: Checkpoint) {
        self.fork_choice.lock().set_finalized_checkpoint(checkpoint);
    }

    /// Whether the block `root` was seen (imported, failed or pending): the spec's
    /// `root in store.blocks`.
    pub fn is_block_known(&self, root: &Root) -> bool {
        self.fork_choice.lock().contains_block(root) || self.unimported.lock().contains_key(root)
    }

    /// Whether the block `root` is imported (in fork choice with its post-state), not merely
    /// seen.
    pub fn is_block_imported(&self, root: &Root) -> bool {
        self.fork_choice.lock().contains_block(root) && !self.unimported.lock().contains_key(root)
    }

    /// Records a block seen without a post-state (failed or pending).
    pub fn record_unimported_block(&self, root: Root, block: UnimportedBlock) {
        self.unimported.lock().insert(root, block);
    }

    /// The block `root` if it was seen but not imported.
    pub fn unimported_block(&self, root: &Root) -> Option<UnimportedBlock> {
        self.unimported.lock().get(root).copied()
    }

    /// `engine_newPayload` of block `root` (at `slot`) is being sent: until the returned
    /// sender answers, imports of the block run their state transition and then wait for the
    /// answer ([`Self::payload_verdict`]). A verdict is forgotten once its block is imported,
    /// or with the block's slot on finalization.
    pub fn expect_payload_verdict(&self, root: Root, slot: Slot) -> PayloadVerdictSender {
        self.payload_verdicts.expect(root, slot)
    }

    /// The verdict on block `root`'s payload for its import: the one in flight
    /// ([`Self::expect_payload_verdict`]), else the recorded status ([`Self::payload_status`]).
    pub fn payload_verdict(&self, root: &Root) -> BlockPayloadVerdict {
        if let Some(pending) = self.payload_verdicts.in_flight(root) {
            return BlockPayloadVerdict::Pending(pending);
        }
        BlockPayloadVerdict::Known(self.payload_status(root))
    }

    /// The execution client's answer on block `root`'s payload (child of `parent_root`), given
    /// to the chain after the import it was asked for may have gone on without it: an import
    /// that waited longer than [`ChainConfig::payload_verdict_wait`] took the block
    /// optimistically. VALID then validates it and its ancestors; INVALID invalidates it, and
    /// its ancestors back to `latest_valid_hash`. For a block the import refused as invalid,
    /// a `latest_valid_hash` invalidates its optimistic ancestors back to it.
    ///
    /// [spec]: sync/optimistic.md#how-to-optimistically-import-blocks
    pub fn on_payload_verdict(
        &self,
        root: Root,
        parent_root: Root,
        status: ExecutionStatus,
        latest_valid_hash: Option<Root>,
    ) -> Result<(), ChainError> {
        let imported = self.fork_choice.lock().contains_block(&root);
        let current = self.payload_status(&root);
        match status {
            ExecutionStatus::Valid if imported && current == ExecutionStatus::NotValidated => {
                self.on_valid_execution_block(root);
            }
            ExecutionStatus::Invalidated if imported && current != ExecutionStatus::Invalidated => {
                self.invalidate_payloads(&root, latest_valid_hash)?;
            }
            ExecutionStatus::Invalidated
                if !imported
                    && latest_valid_hash.is_some()
                    && self.payload_status(&parent_root) == ExecutionStatus::NotValidated
                    && self.fork_choice.lock().contains_block(&parent_root) =>
            {
                self.invalidate_payloads(&parent_root, latest_valid_hash)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Records the execution status of block `root`'s payload as given (no ancestor or
    /// descendant follows it: the spec tests label each block): on its fork-choice node, or in
    /// the record of a block that failed. Nothing is recorded for a block that is neither
    /// (pending, or unknown): its status is the verdict its import will read.
    pub fn set_payload_status(&self, root: Root, status: ExecutionStatus) {
        if self.fork_choice.lock().set_execution_status(&root, status) {
            return;
        }
        if let Some(UnimportedBlock::Failed { payload, .. }) = self.unimported.lock().get_mut(&root)
        {
            *payload = status;
        }
    }

    /// The execution client called the payload of block `root` VALID (a `forkchoiceUpdated`
    /// of it as the head): it and every ancestor fork choice holds are valid, since a payload
    /// is valid only on a valid chain; a head snapshot of one of them stops being optimistic.
    /// After a restart the stored blocks come back not validated; this is what validates them
    /// again, before any new block arrives (an optimistic head could not propose one).
    ///
    /// [spec]: sync/optimistic.md#helpers (`latest_valid_ancestor`: a VALID payload's ancestors are valid)
    pub fn on_valid_execution_block(&self, root: Root) {
        let ancestry = self.fork_choice.lock().on_valid_payload(&root);
        let head = self.head();
        if head.execution_optimistic && ancestry.contains(&head.block_root) {
            let mut current = self.head.write();
            if current.block_root == head.block_root {
                let mut snapshot = (**current).clone();
                snapshot.execution_optimistic = false;
                *current = Arc::new(snapshot);
            }
        }
    }

    /// The execution status of block `root`'s payload; `NotValidated` when none was recorded.
    pub fn payload_status(&self, root: &Root) -> ExecutionStatus {
        if let Some(status) = self.fork_choice.lock().execution_status(root) {
            return status;
        }
        match self.unimported.lock().get(root) {
            Some(UnimportedBlock::Failed { payload, .. }) => *payload,
            _ => ExecutionStatus::NotValidated,
        }
    }

    /// Records a partial data column header validated for block `root` (one derived from a
    /// block or sidecar the node validated), so partial messages carrying only cells can be
    /// checked against it.
    pub fn record_partial_data_column_header(
        &self,
        root: Root,
        header: types::fulu::PartialDataColumnHeader<E>,
    ) {
        self.observed.lock().partial_headers.insert(root, header);
    }

    /// Advances fork choice's clock to the chain clock (the slot timer calls this; imports do
    /// it too), then applies the votes that were waiting for their slot to pass.
    pub fn on_tick(&self) {
        let mut fc = self.fork_choice.lock();
        fc.on_tick(self.now_ms() / 1000);
        self.apply_queued_votes(&mut fc);
    }

    /// Votes of gossip- or API-verified attestations into fork choice, whichever fork its store
    /// is: before Gloas `on_attestation` on the proto-array, from Gloas on the Gloas store's
    /// (`data.index` is the payload status the vote supports: 1 its block's FULL node, 0 its
    /// EMPTY one). A vote for the current slot waits until the slot has passed (fork choice
    /// counts an attestation only from the next slot on); one fork choice refuses for any other
    /// reason (its block pruned, a target it does not know) is dropped and counted in the
    /// result. Returns `(applied, queued, refused)`.
    ///
    /// [spec]: phase0/fork-choice.md#on_attestation, gloas/fork-choice.md#modified-validate_on_attestation
    pub fn apply_votes_to_fork_choice(
        &self,
        votes: impl IntoIterator<Item = ForkChoiceVote>,
    ) -> (usize, usize, usize) {
        let mut fc = self.fork_choice.lock();
        fc.on_tick(self.now_ms() / 1000);
        let (mut applied, mut queued, mut refused) = (0, 0, 0);
        let mut queue = self.queued_votes.lock();
        for vote in votes {
            match apply_vote(&mut fc, &vote) {
                VoteOutcome::Applied => applied += 1,
                VoteOutcome::Future => {
                    if queue.len() < MAX_QUEUED_VOTES {
                        queue.push(vote);
                        queued += 1;
                    } else {
                        refused += 1;
                    }
                }
                VoteOutcome::Refused => refused += 1,
            }
        }
        (applied, queued, refused)
    }

    /// The queued votes whose slot has passed, into fork choice (whichever fork its store is:
    /// a vote queued before the chain crossed into Gloas goes to the Gloas store).
    fn apply_queued_votes(&self, fc: &mut ChainForkChoice<E>) {
        let current = fc.current_slot();
        let mut queue = self.queued_votes.lock();
        let (due, waiting): (Vec<_>, Vec<_>) =
            queue.drain(..).partition(|vote| vote.data.slot < current);
        *queue = waiting;
        for vote in due {
            let _ = apply_vote(fc, &vote);
        }
    }

    /// A verified attester slashing (gossip or the API) as the chain takes it: the validators in
    /// both attestations are equivocating, their votes leave fork choice (`on_attester_slashing`),
    /// and the head is recomputed, since their weight may have carried it. Pooling it for blocks
    /// and publishing it stay with the caller.
    pub fn on_attester_slashing<S>(
        &self,
        verified: &VerifiedAttesterSlashing<S>,
    ) -> Result<Arc<HeadSnapshot<E>>, ChainError> {
        self.fork_choice
            .lock()
            .on_verified_attester_slashing(&verified.slashable_indices)?;
        self.recompute_head()
    }

    /// Fork choice's `store.time` (seconds).
    pub fn fork_choice_time(&self) -> u64 {
        self.fork_choice.lock().time()
    }

    /// Fork choice's `proposer_boost_root`.
    pub fn proposer_boost_root(&self) -> Root {
        self.fork_choice.lock().proposer_boost_root()
    }

    /// The execution client answered INVALID for a payload: for an imported block's payload
    /// `from` is that block, for a block being imported it is the block's parent. `from` and
    /// its ancestors back to `latest_valid_hash` (and all their descendants) are invalidated:
    /// their statuses become `Invalidated`, they leave head selection, and the head is
    /// recomputed.
    ///
    /// [spec]: sync/optimistic.md#how-to-optimistically-import-blocks
    pub fn invalidate_payloads(
        &self,
        from: &Root,
        latest_valid_hash: Option<Root>,
    ) -> Result<Arc<HeadSnapshot<E>>, ChainError> {
        if let Some(fc) = self.fork_choice.lock().fulu_mut() {
            fc.invalidate_payloads(from, latest_valid_hash);
        }
        self.recompute_head()
    }

    /// Moves the observed caches' windows to the clock's slot and the finalized slot.
    pub(crate) fn prune_observed(&self, current_slot: Slot) {
        let finalized_slot = self.finalized_checkpoint().epoch * E::slots_per_epoch();
        self.observed.lock().prune(current_slot, finalized_slot);
    }

    /// Imports `block` with the sidecars `columns` that fork choice's availability hook is to
    /// verify (`is_data_available`: their KZG proofs as one batch): `on_block` on the parent's
    /// cached state, one store batch with the block, its columns and its post-state, then the
    /// head. Returns the block root. `engine` gives the execution client's verdict on the
    /// payload. Blocks whose columns the availability checker verified go through
    /// [`Self::import_available_block`] instead, which does not verify them again.
    pub fn import_block(
        &self,
        block: Arc<SignedBeaconBlock<E>>,
        columns: &[types::DataColumnSidecar<E>],
        engine: &impl ExecutionEngine<E>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<Root, ChainError> {
        let block_root = block.canonical_root();
        self.import(
            block,
            block_root,
            columns,
            columns.iter().collect(),
            engine,
            payload_status,
        )
    }

    /// The import pipeline for `block` of root `block_root` (computed once, upstream):
    /// `fork_choice_columns` go to fork choice's availability hook (empty when availability was
    /// established already), `stored_columns` to the store.
    pub(crate) fn import(
        &self,
        block: Arc<SignedBeaconBlock<E>>,
        block_root: Root,
        fork_choice_columns: &[types::DataColumnSidecar<E>],
        stored_columns: Vec<&types::DataColumnSidecar<E>>,
        engine: &impl ExecutionEngine<E>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<Root, ChainError> {
        // A Gloas block has no payload and no data inside: its own path.
        if matches!(&*block, SignedBeaconBlock::Gloas(_)) {
            return self.import_gloas_block(block, block_root);
        }
        let slot = block.slot();
        let now = self.now_ms();
        // A verdict in flight is recorded when the execution client answers, not when the
        // transition passes over the payload.
        let timed = TimedEngine {
            inner: engine,
            chain: self,
            block_root,
            slot,
            record: !payload_status.is_pending(),
        };
        // The spec's `on_block` in three steps, the costly middle one (the availability check
        // and the state transition) without fork choice's lock, so that gossip validation and
        // the API keep reading fork choice meanwhile: fork choice checks the block
        // (`check_block`), the pre-state comes from the state cache, and fork choice takes the
        // result (`insert_block`).
        let processor = {
            let mut fc = self.fork_choice.lock();
            fc.on_tick(now / 1000);
            self.apply_queued_votes(&mut fc);
            self.block_processor(&fc)
        };
        let prepared = self.imports().prepare(&block);
        if let Ok(Some(prepared)) = &prepared {
            self.import_metrics
                .observe_import(prepared.pre_state_advanced);
        }
        let processed = match prepared {
            Ok(Some(prepared)) => processor
                .process(
                    prepared,
                    &block,
                    Columns::Retrieved(fork_choice_columns),
                    &timed,
                )
                .map(Some)
                .map_err(ChainError::from),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        self.complete_import(block, block_root, processed, stored_columns, payload_status)
    }

    /// The rest of the import once the block is processed (its availability check and state
    /// transition passed, signatures verified) or failed: the execution client's verdict, fork
    /// choice's `insert_block` and the block's votes, the store batch, the events and
    /// the head.
    fn complete_import(
        &self,
        block: Arc<SignedBeaconBlock<E>>,
        block_root: Root,
        processed: Result<Option<ProcessedBlock<E>>, ChainError>,
        stored_columns: Vec<&types::DataColumnSidecar<E>>,
        payload_status: impl PayloadStatusSource + Copy,
    ) -> Result<Root, ChainError> {
        let slot = block.slot();
        // `engine_newPayload` ran beside the transition: its verdict, before fork choice.
        // (A failed transition returns its own error below and does not wait for a verdict
        // still in flight; one known invalid is what failed it.)
        let payload_status = match processed {
            Err(_) if payload_status.is_pending() => ExecutionStatus::NotValidated,
            _ => payload_status.payload_status(self.payload_verdicts.wait()),
        };
        if payload_status == ExecutionStatus::Invalidated {
            self.payload_verdicts.forget(&block_root);
            self.record_unimported_block(
                block_root,
                UnimportedBlock::Failed {
                    slot,
                    payload: payload_status,
                },
            );
            return Err(ChainError::InvalidPayload(block_root));
        }
        // The block goes to the store before fork choice takes it: a block fork choice has is
        // always stored, so a store that fails here leaves nothing behind but the failure of
        // our own (the block is not recorded as failed and imports on a later try). A block
        // stored whose insertion fork choice then refuses stays in the hot database until the
        // finalization migration deletes it with its abandoned fork (`Store::migrate_to_finalized`);
        // a restart does not import it again (`open` passes over what fork choice refuses).
        let processed = match processed {
            Ok(None) => {
                // Fork choice has the block already (imported on another path meanwhile), and
                // so does the store: only a verdict that came since is news.
                if payload_status == ExecutionStatus::Valid {
                    self.fork_choice.lock().on_valid_payload(&block_root);
                }
                self.unimported.lock().remove(&block_root);
                self.payload_verdicts.forget(&block_root);
                return Ok(block_root);
            }
            Ok(Some(processed)) => Ok(processed),
            Err(e) => Err(e),
        };
        let stored = match &processed {
            Ok(processed) => Some(self.store_imported_block(
                block_root,
                &block,
                &stored_columns,
                &processed.post_state,
            )?),
            Err(_) => None,
        };
        // A verdict that came after the wait may have been applied already
        // (`on_payload_verdict`, once the block was in fork choice): not validated does not
        // overwrite it. A payload is VALID only on a valid chain: ancestors imported while the
        // execution client was syncing are valid now too.
        let on_valid = |fc: &mut ForkChoice<E>| {
            if payload_status == ExecutionStatus::Valid {
                fc.on_valid_payload(&block_root);
            }
        };
        let post_state = match processed
            .and_then(|processed| insert_with_body(&self.imports(), processed, &block, on_valid))
        {
            Ok(state) => state,
            Err(e) => {
                // Failed for good only when the block is at fault: a failure of our own store
                // or states leaves it free to import on a later try.
                if e.fault() == fork_choice::Fault::Message
                    && !matches!(
                        e,
                        ChainError::ForkChoice(
                            fork_choice::Error::UnknownParent { .. }
                                | fork_choice::Error::FutureBlock { .. }
                        )
                    )
                {
                    self.record_unimported_block(
                        block_root,
                        UnimportedBlock::Failed {
                            slot,
                            payload: payload_status,
                        },
                    );
                }
                return Err(e);
            }
        };
        self.unimported.lock().remove(&block_root);
        self.payload_verdicts.forget(&block_root);
        // With each whole state, fork choice as it is now, the block in it: a restart rebuilds
        // the tree from it and replays only the blocks imported since (see `open`). An epoch's
        // snapshot is deferred: the store writer stores the whole state, off the import path.
        match stored {
            Some(StoredAs::Whole) => {
                let fork_choice = self.fork_choice.lock().to_persisted_bytes();
                if let Err(e) = self.store.begin_batch().and_then(|mut batch| {
                    batch.put_fork_choice(&fork_choice)?;
                    batch.commit()
                }) {
                    // The block and its state are stored: a restart replays them on the fork
                    // choice persisted before.
                    tracing::error!(%block_root, error = %e, "fork choice not persisted beside the block's state");
                }
            }
            Some(StoredAs::PendingSnapshot) => {
                let fork_choice = self.fork_choice.lock().to_persisted_bytes();
                self.store_writer
                    .write(block.state_root(), post_state.state.clone(), fork_choice);
            }
            Some(StoredAs::Summary) | None => {}
        }
        self.record_stage(block_root, slot, Stage::Imported);
        self.light_client_server.on_block(&post_state.state, &block);

        self.events.publish(ChainEvent::Block {
            slot,
            block: block_root,
            execution_optimistic: payload_status == ExecutionStatus::NotValidated,
        });
        self.recompute_head()?;
        Ok(block_root)
    }

    /// What an import reads and writes beside the transition: fork choice, the state cache,
    /// the store it loads from.
    pub(crate) fn imports(&self) -> Imports<'_, E> {
        Imports {
            fork_choice: &self.fork_choice,
            state_cache: &self.state_cache,
            store: &self.store,
            spec: &self.spec,
            // The chain's public keys, shared with the head state's caches.
            caches: self.head().state.caches.clone(),
            metrics: &self.import_metrics,
        }
    }

    /// What a block's availability check and state transition need, as fork choice `fc` is
    /// configured (how signatures are checked).
    fn block_processor(&self, fc: &ChainForkChoice<E>) -> BlockProcessor {
        BlockProcessor {
            spec: self.spec.clone(),
            verify_signatures: fc.verify_signatures(),
            kzg_pool: self.pool.clone(),
        }
    }

    /// The post-state of block `root`: the state cache's copy when it holds one, else loaded
    /// from the store (its epoch snapshot and the blocks since, replayed) **without any lock**
    /// and then kept in the cache, whose next reader finds it in memory.
    pub(crate) fn block_state_outside_lock(
        &self,
        root: &Root,
    ) -> Result<CachedBeaconState<E>, ChainError> {
        self.imports().block_state(root)
    }

    /// `store.checkpoint_states[target]` (`store_target_checkpoint_state`): the state cache's
    /// copy when it holds one, else computed **without any lock** (the target block's
    /// post-state, loaded when the cache let go of it, advanced to the epoch's first slot) and
    /// kept there.
    pub(crate) fn checkpoint_state_outside_lock(
        &self,
        target: &Checkpoint,
    ) -> Result<CachedBeaconState<E>, ChainError> {
        self.imports().checkpoint_state(target)
    }

    /// One store batch with a processed block, its columns and its post-state (an epoch's
    /// snapshot deferred: the batch stores a summary naming the snapshot before it), before
    /// fork choice takes the block. Returns how the state was stored.
    pub(crate) fn store_imported_block(
        &self,
        block_root: Root,
        block: &SignedBeaconBlock<E>,
        columns: &[&types::DataColumnSidecar<E>],
        post_state: &CachedBeaconState<E>,
    ) -> Result<StoredAs, ChainError> {
        let store_write = std::time::Instant::now();
        let mut batch = self.store.begin_batch()?;
        batch.put_block(block_root, block)?;
        for column in columns {
            batch.put_data_column(block_root, column)?;
        }
        let stored = batch.put_state_deferring_snapshot(block.state_root(), &post_state.state)?;
        batch.commit()?;
        self.import_metrics
            .observe_store_write(stored, store_write.elapsed().as_secs_f64());
        Ok(stored)
    }

    /// Imports a chain segment (range sync: blocks in chain order, each child of the one before,
    /// the first on a block fork choice knows) with the signatures of all its blocks verified
    /// as one batch: each block's availability check (its `columns`' KZG as one batch beside
    /// the transition) and state transition run on its parent's post-state with the
    /// signature sets gathered, not checked; the whole segment's sets are then verified in one
    /// multi-pairing on the signature pool, and the blocks are inserted, stored and made head
    /// one by one in chain order. `verdicts[i]` is block `i`'s execution engine and payload
    /// verdict.
    ///
    /// Blocks fork choice knows already are passed over. The first block that fails (its
    /// availability, its transition, a signature of its own, or its insertion) ends the
    /// segment: the blocks before it are imported, the error is returned with its position.
    /// A bad signature is attributed to the first block in chain order that holds one.
    pub fn import_chain_segment<V>(
        &self,
        blocks: &[SegmentBlock<E>],
        verdicts: &[&V],
    ) -> SegmentImport
    where
        V: ExecutionEngine<E> + PayloadStatusSource,
    {
        let mut out = SegmentImport {
            imported: Vec::with_capacity(blocks.len()),
            failed: None,
            signature_batches: 0,
        };
        if blocks.len() != verdicts.len() {
            out.failed = Some((
                0,
                ChainError::Segment(SegmentError::VerdictCount {
                    blocks: blocks.len(),
                    verdicts: verdicts.len(),
                }),
            ));
            return out;
        }
        // Gloas blocks carry no payload or data to batch: each goes its own path in order.
        if blocks
            .iter()
            .any(|b| matches!(&*b.block, SignedBeaconBlock::Gloas(_)))
        {
            for (at, segment_block) in blocks.iter().enumerate() {
                let block_root = segment_block.block.canonical_root();
                let imported = if matches!(&*segment_block.block, SignedBeaconBlock::Gloas(_)) {
                    self.import_gloas_block(segment_block.block.clone(), block_root)
                } else {
                    self.import(
                        segment_block.block.clone(),
                        block_root,
                        &segment_block.columns,
                        segment_block.columns.iter().collect(),
                        verdicts[at],
                        verdicts[at],
                    )
                };
                match imported {
                    Ok(root) => out.imported.push(root),
                    Err(e) => {
                        out.failed = Some((at, e));
                        return out;
                    }
                }
            }
            return out;
        }
        let now = self.now_ms();
        let processor = {
            let mut fc = self.fork_choice.lock();
            fc.on_tick(now / 1000);
            self.apply_queued_votes(&mut fc);
            self.block_processor(&fc)
        };
        let imports = self.imports();
        // Processed blocks wait here, in order, until the segment's signatures are verified.
        // `None` is a block fork choice has already (nothing to insert).
        let mut processed: Vec<Option<ProcessedBlock<E>>> = Vec::with_capacity(blocks.len());
        let mut failed: Option<(usize, ChainError)> = None;
        // Each block's sets go to a verifier thread as its transition ends; it verifies, in
        // one batch, every block's sets that came while it verified the batch before (all of
        // them when it falls behind), beside the transitions of the blocks after. A bad
        // signature stops the transitions.
        let (sender, receiver) = std::sync::mpsc::channel();
        let receiver = parking_lot::Mutex::new(receiver);
        let stop = AtomicBool::new(false);
        let verified = std::thread::scope(|scope| {
            // Not on a pool's worker (the node's processor): its waits for the thread would
            // hold a thread of the pool the batch must run on; the batch then comes after.
            let verifier = rayon::current_thread_index()
                .is_none()
                .then(|| std::thread::Builder::new().name("segment-signatures".into()))
                .and_then(|thread| {
                    thread
                        .spawn_scoped(scope, || verify_segment_signatures(&receiver.lock(), &stop))
                        .ok()
                });
            for (at, (segment_block, verdict)) in blocks.iter().zip(verdicts).enumerate() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let block = &segment_block.block;
                let parent = processed
                    .iter()
                    .rev()
                    .flatten()
                    .next()
                    .filter(|p| p.summary.root == block.parent_root());
                let prepared = match parent {
                    Some(parent) => imports.prepare_child(parent, block),
                    None => imports.prepare(block),
                };
                let prepared = match prepared {
                    Ok(Some(prepared)) => prepared,
                    Ok(None) => {
                        processed.push(None);
                        continue;
                    }
                    Err(e) => {
                        failed = Some((at, e));
                        break;
                    }
                };
                self.import_metrics
                    .observe_import(prepared.pre_state_advanced);
                let timed = TimedEngine {
                    inner: *verdict,
                    chain: self,
                    block_root: prepared.block_root,
                    slot: block.slot(),
                    record: !verdict.is_pending(),
                };
                match processor.process_gathering_signatures(
                    prepared,
                    block,
                    Columns::Retrieved(&segment_block.columns),
                    &timed,
                ) {
                    Ok((block_processed, sets)) => {
                        // The receiver lives until the end of the scope: the send holds.
                        let _ = sender.send((processed.len(), sets));
                        processed.push(Some(block_processed));
                    }
                    Err(e) => {
                        failed = Some((at, e.into()));
                        break;
                    }
                }
            }
            drop(sender);
            match verifier {
                Some(verifier) => verifier
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                // No thread to be had: every block's sets in one batch, now.
                None => verify_segment_signatures(&receiver.lock(), &stop),
            }
        });
        out.signature_batches = match verified {
            Ok(batches) => batches,
            Err((at, source, batches)) => {
                processed.truncate(at);
                let block_root = blocks[at].block.canonical_root();
                failed = Some((
                    at,
                    fork_choice::Error::InvalidBlock {
                        block: block_root,
                        source,
                    }
                    .into(),
                ));
                batches
            }
        };
        for (at, block_processed) in processed.into_iter().enumerate() {
            let segment_block = &blocks[at];
            let block_root = match &block_processed {
                Some(p) => p.summary.root,
                None => segment_block.block.canonical_root(),
            };
            match self.complete_import(
                segment_block.block.clone(),
                block_root,
                Ok(block_processed),
                segment_block.columns.iter().collect(),
                verdicts[at],
            ) {
                Ok(root) => out.imported.push(root),
                Err(e) => {
                    out.failed = Some((at, e));
                    return out;
                }
            }
        }
        if let Some((at, e)) = failed {
            // The failed block goes the way of a failed import (its verdict, its record).
            let block = &blocks[at].block;
            let block_root = block.canonical_root();
            let slot = block.slot();
            out.failed = Some((
                at,
                match self.complete_import(
                    block.clone(),
                    block_root,
                    Err(e),
                    Vec::new(),
                    verdicts[at],
                ) {
                    Err(e) => e,
                    Ok(_) => {
                        ChainError::Segment(SegmentError::FailedBlockImported { block_root, slot })
                    }
                },
            ));
        }
        out
    }

    /// Milliseconds from the start of `slot` to now (negative before it).
    pub(crate) fn ms_into_slot(&self, slot: Slot) -> i64 {
        let start = self.compute_time_at_slot_ms(slot) as i128;
        (self.now_ms() as i128 - start).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Records a stage of `root`'s timeline at the current time.
    pub(crate) fn record_stage(&self, root: Root, slot: Slot, stage: Stage) {
        let at = self.ms_into_slot(slot);
        self.timelines.lock().stage(root, slot, at, stage);
    }

    /// Runs fork choice's `get_head`, publishes the new head (and a reorg when the new head
    /// does not descend from the old one) and records it in the store.
    pub fn recompute_head(&self) -> Result<Arc<HeadSnapshot<E>>, ChainError> {
        let old = self.head();
        // The balances of a checkpoint that became justified as the clock moved on, should
        // fork choice lack them.
        self.imports().supply_justified_balances(&[]);
        let (head, justified, finalized, old_is_ancestor, pins, gloas_optimistic) = {
            let mut fc = self.fork_choice.lock();
            let head = fc.get_head()?;
            let old_is_ancestor = fc
                .get_ancestor(&head.root, old.slot)
                .is_ok_and(|a| a == old.block_root);
            let gloas_optimistic = match (&*fc, head.payload_status) {
                (ChainForkChoice::Gloas(g), Some(status)) => {
                    Some(g.head_optimistic(&head.root, status))
                }
                _ => None,
            };
            (
                head,
                fc.justified_checkpoint().clone(),
                fc.finalized_checkpoint().clone(),
                old_is_ancestor,
                fc.pins(),
                gloas_optimistic,
            )
        };
        self.state_cache.pin(pins);
        let same_head = head.root == old.block_root;
        let execution_optimistic = match gloas_optimistic {
            Some(optimistic) => optimistic,
            None => self.payload_status(&head.root) == ExecutionStatus::NotValidated,
        };
        if same_head
            && head.payload_status == old.payload_status
            && gloas_optimistic.is_none_or(|optimistic| optimistic == old.execution_optimistic)
            && justified == old.justified_checkpoint
            && finalized == old.finalized_checkpoint
        {
            return Ok(old);
        }
        // A head whose post-state the cache let go of (a re-org to an old fork): loaded
        // without any lock.
        let mut state = self.block_state_outside_lock(&head.root)?;
        let state_root = head_state_root(&mut state)?;
        let snapshot = Arc::new(HeadSnapshot {
            block_root: head.root,
            slot: head.slot,
            state,
            state_root,
            justified_checkpoint: justified,
            finalized_checkpoint: finalized.clone(),
            execution_optimistic,
            payload_status: head.payload_status,
        });
        // Not synced: the next import's batch makes it durable (`Store::record_head`).
        self.store.record_head(StoreHead {
            block_root: head.root,
            state_root,
            slot: head.slot,
        })?;
        *self.head.write() = snapshot.clone();
        self.light_client_server
            .on_head(&self.store, &self.events, head.root);

        let spe = E::slots_per_epoch();
        if !same_head {
            self.record_stage(head.root, head.slot, Stage::Head);
            if !old_is_ancestor {
                self.events.publish(ChainEvent::ChainReorg {
                    slot: head.slot,
                    depth: self.reorg_depth(&old, head.root, head.slot),
                    old_head_block: old.block_root,
                    new_head_block: head.root,
                    old_head_state: old.state_root,
                    new_head_state: state_root,
                });
            }
            self.events.publish(ChainEvent::Head {
                slot: head.slot,
                block: head.root,
                state: state_root,
                epoch_transition: head.slot / spe != old.slot / spe,
                execution_optimistic,
            });
        }
        // `head_v2`: again for the same block when its payload variant changes (EMPTY to FULL
        // as its envelope arrives).
        if !same_head || head.payload_status != old.payload_status {
            self.events.publish(ChainEvent::HeadV2 {
                slot: head.slot,
                block: head.root,
                state: state_root,
                payload_status: head.payload_status,
                epoch_transition: head.slot / spe != old.slot / spe,
                execution_optimistic,
            });
        }
        if finalized.epoch > old.finalized_checkpoint.epoch {
            // The finalized block is stored (imported, or the anchor).
            match self.store.get_block(&finalized.root) {
                Ok(Some(block)) => self.events.publish(ChainEvent::FinalizedCheckpoint {
                    block: finalized.root,
                    state: block.state_root(),
                    epoch: finalized.epoch,
                }),
                Ok(None) => tracing::error!(
                    block_root = %finalized.root,
                    "the finalized block is not in the store: no finalized_checkpoint event"
                ),
                Err(e) => tracing::error!(
                    block_root = %finalized.root,
                    error = %e,
                    "the finalized block is unreadable: no finalized_checkpoint event"
                ),
            }
            self.on_finalized(&finalized)?;
        }
        Ok(snapshot)
    }

    /// The store writer (deferred epoch snapshots, finalization migrations).
    pub(crate) fn store_writer(&self) -> &StoreWriter<E> {
        &self.store_writer
    }

    /// Waits until the store writer has done every write queued so far: the epoch snapshots
    /// imports deferred and the finalization migrations (tests, benchmarks and shutdown;
    /// dropping the chain waits too).
    pub fn flush_store_writes(&self) {
        self.store_writer.flush();
    }

    /// Keeps the store writer waiting until the returned value is dropped (for a minute at
    /// most): the epoch snapshots and finalization migrations queued meanwhile wait, as behind
    /// a slow disk (tests of what the chain serves while its writes lag).
    pub fn hold_store_writes(&self) -> StoreWritesHeld {
        self.store_writer.hold()
    }

    /// Slots from the old head back to the newest block it shares with the new head (the
    /// `depth` of `chain_reorg`); the old head's slot minus the finalized slot when the old
    /// branch was pruned already.
    fn reorg_depth(&self, old: &HeadSnapshot<E>, new_root: Root, new_slot: Slot) -> u64 {
        let fc = self.fork_choice.lock();
        let mut slot = old.slot.min(new_slot);
        loop {
            match (
                fc.get_ancestor(&old.block_root, slot),
                fc.get_ancestor(&new_root, slot),
            ) {
                (Ok(a), Ok(b)) if a == b => return old.slot - slot,
                (Ok(_), Ok(_)) if slot > 0 => slot -= 1,
                _ => {
                    let finalized = fc.finalized_checkpoint().epoch * E::slots_per_epoch();
                    return old.slot.saturating_sub(finalized);
                }
            }
        }
    }

    /// What a new finalized checkpoint lets go, in one place. At once, in memory: the
    /// checkpoint state's registry becomes the keys every live state shares (signature checks
    /// stop reading them from the states), the observed caches drop what is now final, the
    /// data availability checker and the timelines what is at or before the checkpoint, the
    /// unimported-block bookkeeping and payload statuses the blocks that are gone. Queued for
    /// the store writer, off the import that finalized (a migration takes seconds at mainnet
    /// scale): the checkpoint state stored whole and the store's migration, which moves the
    /// finalized chain to the cold database and deletes abandoned forks (see
    /// [`crate::store_writer`]). Fork choice prunes its own tree as blocks arrive.
    pub(crate) fn on_finalized(&self, finalized: &Checkpoint) -> Result<(), ChainError> {
        let finalized_slot = finalized.epoch * E::slots_per_epoch();
        let state = self.checkpoint_state_outside_lock(finalized)?;
        self.store_writer.finalize(finalized.clone(), state)?;
        let in_fork_choice: HashSet<Root> = {
            let mut fc = self.fork_choice.lock();
            if let Some(gloas) = fc.gloas_mut() {
                let store = &gloas.store;
                gloas
                    .payload_statuses
                    .retain(|root, _| store.contains_block(root));
            }
            fc.block_roots().into_iter().collect()
        };
        self.state_cache
            .prune(finalized, |root| in_fork_choice.contains(root));
        let current_slot = self.slot_at_ms(self.now_ms());
        self.prune_observed(current_slot);
        self.da_checker.lock().prune(finalized_slot);
        self.pending_payloads.lock().prune(finalized_slot);
        self.timelines.lock().prune(current_slot);
        self.unimported.lock().retain(|_, b| match b {
            UnimportedBlock::Failed { slot, .. } | UnimportedBlock::Pending { slot } => {
                *slot > finalized_slot
            }
        });
        self.payload_verdicts.prune(finalized_slot);
        Ok(())
    }
}

/// The root of a head block's post-state: the state's header carries it once a slot was
/// processed on top (a checkpoint state advanced past its block); a block's own post-state has
/// it zero, and then the state is hashed (its tree hashes are cached from the transition).
fn head_state_root<E: EthSpec>(state: &mut CachedBeaconState<E>) -> Result<Root, ChainError> {
    let root = state.state.latest_block_header().state_root;
    if root != Root::ZERO {
        return Ok(root);
    }
    state.hash_tree_root().map_err(ChainError::State)
}

/// The execution engine of an import, recording when it answered in the block's timeline.
struct TimedEngine<'a, E: EthSpec, X> {
    inner: &'a X,
    chain: &'a BeaconChain<E>,
    block_root: Root,
    slot: Slot,
    /// Whether the engine's answer is the execution client's (not one still in flight).
    record: bool,
}

impl<E: EthSpec, X: ExecutionEngine<E>> TimedEngine<'_, E, X> {
    fn record_executed(&self) {
        if self.record {
            self.chain
                .record_stage(self.block_root, self.slot, Stage::Executed);
        }
    }
}

impl<E: EthSpec, X: ExecutionEngine<E>> ExecutionEngine<E> for TimedEngine<'_, E, X> {
    fn verify_and_notify_new_payload(
        &self,
        request: &types::electra::NewPayloadRequest<E>,
    ) -> Result<bool, EngineError> {
        let verdict = self.inner.verify_and_notify_new_payload(request);
        self.record_executed();
        verdict
    }

    fn verify_new_payload_parts(
        &self,
        payload: &types::electra::ExecutionPayload<E>,
        versioned_hashes: Vec<types::VersionedHash>,
        parent_beacon_block_root: Root,
        execution_requests: &types::electra::ExecutionRequests<E>,
    ) -> Result<bool, EngineError> {
        let verdict = self.inner.verify_new_payload_parts(
            payload,
            versioned_hashes,
            parent_beacon_block_root,
            execution_requests,
        );
        self.record_executed();
        verdict
    }
}

/// A processed block into fork choice with its attestations (`on_attestation(is_from_block=
/// True)`, their attesting indices computed without fork choice's lock) and attester slashings;
/// `under_lock` runs with the block in. Returns the block's post-state, now in the state
/// cache. The votes were valid in the state transition; one fork choice cannot use (a vote for
/// a block it pruned) is skipped, as the spec's store would drop it.
fn insert_with_body<E: EthSpec>(
    imports: &Imports<'_, E>,
    processed: ProcessedBlock<E>,
    block: &SignedBeaconBlock<E>,
    under_lock: impl FnOnce(&mut ForkChoice<E>),
) -> Result<CachedBeaconState<E>, ChainError> {
    // Never skip a block's votes: a block of another layout is an error naming its fork.
    let message = electra_message(block).map_err(fork_choice::Error::UnsupportedFork)?;
    let votes = imports.block_votes(message);
    imports.insert(&processed, &votes, under_lock)?;
    imports.apply_block_slashings(message);
    Ok(processed.post_state)
}

/// The spec's `on_block` (and the block's votes) for a stored block imported again when the
/// chain reopens: checked when first imported, so with no signature, availability or payload
/// check. Returns the post-state; `None` for a block fork choice has already.
fn import_stored_block<E: EthSpec>(
    imports: &Imports<'_, E>,
    processor: &BlockProcessor,
    block: &SignedBeaconBlock<E>,
) -> Result<Option<CachedBeaconState<E>>, ChainError> {
    if matches!(block, SignedBeaconBlock::Gloas(_)) {
        return imports.import_stored_gloas_block(block, &processor.kzg_pool);
    }
    let Some(prepared) = imports.prepare(block)? else {
        return Ok(None);
    };
    let processed = processor.process(prepared, block, Columns::Retrieved(&[]), &AlwaysValid)?;
    insert_with_body(imports, processed, block, |_| {}).map(Some)
}

/// The Electra-layout message of a block (Electra and Fulu share it), or the fork of a block
/// whose layout the chain does not process (before Electra, or Gloas: issues 42 to 45).
pub(crate) fn electra_message<E: EthSpec>(
    block: &SignedBeaconBlock<E>,
) -> Result<&BeaconBlock<E>, ForkName> {
    match block {
        SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => Ok(&b.message),
        other @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Gloas(_)) => Err(other.fork_name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_store_and_states_are_our_fault_and_an_invalid_payload_is_the_blocks() {
        let ours = [
            ChainError::Store(store::StoreError::MissingSchemaVersion),
            ChainError::NotInStore {
                what: StoredItem::SplitState,
                root: Root::ZERO,
            },
            ChainError::EmptyStore,
            ChainError::ForkChoice(fork_choice::Error::MissingBlockState(Root::ZERO)),
        ];
        for e in ours {
            assert_eq!(e.fault(), Fault::Local, "{e}");
        }
        let theirs = [
            ChainError::InvalidPayload(Root::ZERO),
            ChainError::NoColumnsGiven {
                block_root: Root::ZERO,
            },
            ChainError::ForkChoice(fork_choice::Error::FutureBlock {
                block_slot: 9,
                current_slot: 1,
            }),
        ];
        for e in theirs {
            assert_eq!(e.fault(), Fault::Message, "{e}");
        }
    }
}
