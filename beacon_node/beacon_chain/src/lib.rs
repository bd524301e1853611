//! The beacon chain: everything the node verifies, imports and serves goes through here
//! (`../shared/ARCHITECTURE.md`, "Data flow").
//!
//! - [`chain`]: [`BeaconChain`], the owner of fork choice, the store's writes, the head snapshot
//!   and the observed caches; block import. The fork choice is its anchor's fork's
//!   (`chain_fork_choice`: the pre-Gloas store, or the Gloas store for a Gloas anchor; a
//!   pre-Gloas store is carried into a Gloas one at the chain's first Gloas block).
//! - [`gloas_import`]: a Gloas block's import (no payload inside) and its payload envelope's,
//!   on a path of its own (`engine_newPayloadV5`, the custody columns of the bid's
//!   commitments); an envelope that fails never invalidates its block.
//! - [`gossip`]: the p2p spec's validation of every Fulu gossip topic, with typed
//!   IGNORE / REJECT errors and batch forms for attestations, aggregates and columns.
//! - [`observed`]: the caches behind the "first one seen" rules.
//! - [`data_column_sidecars`], [`data_column_verification`], [`data_availability_checker`]:
//!   sidecar construction and inclusion proofs, KZG batches, availability of blocks.
//! - [`events`], [`slot_clock`]: the event bus and the clock.
//! - [`api_states`], [`stored_blobs`]: the states and blocks the Beacon API reads (by slot, by
//!   root, for duties), a stored block replayed for its rewards, blobs from stored columns.
//! - [`state_advance`]: the head state advanced ahead of the next slot, the pre-state of the
//!   slot's block and of production.
//! - [`timeline`], [`batch_metrics`]: block timelines and delays; KZG and BLS batch timings.
//! - [`light_client_server`]: light-client bootstraps and updates derived from imported blocks.
//! - [`production`], [`publication`], [`execution`]: block production (`produceBlockV3`) and
//!   publication (`publishBlockV2`), and the execution client around import.
//! - [`attestation_acceptance`]: a verified attestation's vote into fork choice and the
//!   attestation into the operation pool, for gossip and the API alike.
//! - `harness` (feature `test-utils`): one chain on a mock execution client for the tests and
//!   benches of this and other crates.

pub mod api_states;
pub mod attestation_acceptance;
pub mod batch_metrics;
pub mod block_import;
mod block_verification;
pub mod chain;
mod chain_fork_choice;
pub mod data_availability_checker;
pub mod data_column_sidecars;
pub mod data_column_verification;
pub mod envelope_reads;
pub mod events;
pub mod execution;
pub mod fork_choice_dump;
pub mod gloas_duties;
pub mod gloas_import;
pub mod gloas_publication;
pub mod gossip;
#[cfg(feature = "test-utils")]
pub mod harness;
pub mod historical_blocks;
pub mod internal_error;
pub mod light_client_server;
pub mod observed;
pub mod pending_payloads;
pub mod production;
pub mod publication;
pub mod slot_clock;
pub mod state_advance;
mod state_cache;
pub mod store_writer;
pub mod stored_blobs;
pub mod timeline;
pub mod tracked_mutex;
pub mod workers;

pub use api_states::{
    BlockReplay, BlockTreeLeaf, QueriedBlock, QueriedState, StateQueryError, latest_block_root_of,
};
pub use block_import::{
    BlockProcessed, ColumnsProcessed, ExecutionBlobsError, ReconstructionError,
};
pub use chain::{
    AnchorError, BeaconChain, ChainConfig, ChainError, DEFAULT_PAYLOAD_VERDICT_WAIT,
    ExecutionStatus, HeadSnapshot, Reopened, SegmentBlock, SegmentError, SegmentImport, StoredItem,
    UnimportedBlock,
};
pub use chain_fork_choice::ChainHead;
/// Whose fault an error is ([`ChainError::fault`], [`fork_choice::Error::fault`]).
pub use envelope_reads::EnvelopeRequestError;
pub use execution::{
    AlreadyAttached, BlockPayloadVerdict, ExecutionBlob, ExecutionError, ExecutionLayer,
    PayloadStatusSource, PayloadVerdict, PayloadVerdictSender, PendingPayloadVerdict,
    notify_new_payload, update_execution_head,
};
pub use fork_choice::Fault;
pub use fork_choice_dump::{ForkChoiceDump, ForkChoiceNode, PayloadValidity};
pub use gloas_duties::PayloadAttestationDataError;
pub use gloas_import::{
    ColumnsUnavailable, EnvelopeError, EnvelopeImported, PayloadProcessed, VerifiedEnvelope,
};
pub use gossip::Verdict;
pub use internal_error::InternalError;
pub use light_client_server::{
    LightClientServer, LightClientServerError, MAX_REQUEST_LIGHT_CLIENT_UPDATES,
};
pub use pending_payloads::MissingPayloadParts;
pub use production::{
    BlindedPublication, BlindedPublishError, BuilderOptions, BuilderOutcome, ProducedBlindedBlock,
    ProducedBlockV3,
};
pub use production::{
    BlobData, Blobs, BlockProducer, PayloadFieldMismatch, ProducedBlock, ProducerConfig,
    ProductionError, ProductionTimings,
};
pub use publication::{
    BlockBroadcaster, BroadcastValidation, PublishError, PublishOutcome, PublishedBlock,
};
pub use slot_clock::{ManualSlotClock, SlotClock, SystemTimeSlotClock};
pub use state_advance::{ImportPreStates, ImportStoreWrites, StateLoads, StateMemoryBound};
pub use state_cache::{DEFAULT_MAX_STATES_BYTES, StateCacheConfig};
pub use stored_blobs::StoredBlobsError;

#[cfg(test)]
mod test_utils;
