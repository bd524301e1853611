//! The Beacon API (ethereum/beacon-APIs): request and response types in the spec's JSON and
//! SSZ encodings, content negotiation, and a typed async client.
//!
//! The consensus containers are `types`' own, serialized through its opt-in `serde` feature;
//! this crate adds the API's envelopes, its own types (duties, statuses, subscriptions, …) and
//! the fork-versioned reading of fork-generic values.

pub mod api_error;
pub mod beacon;
pub mod blinded;
pub mod block_contents;
pub mod client;
pub mod envelope;
pub mod events;
pub mod json;
pub mod negotiation;
pub mod node;
pub mod validator;

pub use api_error::{ApiErrorBody, ErrorMessage, IndexedError, IndexedErrorMessage};
pub use beacon::{
    BlockHeaderData, BlockId, CommitteeData, FinalityCheckpointsData, GeneralStatus, GenesisData,
    IdError, QuotedIndices, RandaoData, RootData, StateId, SyncCommitteeByValidatorIndices,
    ValidatorBalanceData, ValidatorData, ValidatorId, ValidatorStatus, ValidatorStatusFilter,
    ValidatorsRequestBody,
};
pub use blinded::{
    BlindedBeaconBlock, BlindedBeaconBlockBody, SignedBlindedBeaconBlock, UnblindError,
    execution_payload_header,
};
pub use block_contents::{BlockContents, SignedBlockContents};
pub use client::{
    BeaconNodeHttpClient, BodyLimits, ClientError, EventStream, ProducedBlock, Timeouts,
    client_builder, error_chain,
};
pub use envelope::{
    CONSENSUS_BLOCK_VALUE_HEADER, CONSENSUS_VERSION_HEADER, DutiesResponse,
    EXECUTION_PAYLOAD_BLINDED_HEADER, EXECUTION_PAYLOAD_VALUE_HEADER,
    ExecutionOptimisticFinalizedResponse, ExecutionOptimisticResponse, ForkVersionedJson,
    ForkVersionedResponse, GenericResponse,
};
pub use events::{BeaconEvent, EventTopic};
pub use negotiation::{Encoding, NegotiationError, negotiate, request_encoding};
pub use node::{
    ConfigSpec, DepositContractData, ForkSchedule, IdentityData, MetaData, NodeHealth,
    PeerCountData, PeerData, PeerDirection, PeerState, SyncingData, VersionData,
};
pub use validator::{
    AttesterDuty, BeaconCommitteeSelection, BeaconCommitteeSubscription, BroadcastValidation,
    LivenessResponseData, ProduceBlockV3Metadata, ProposerDuty, ProposerPreparationData, PtcDuty,
    SignedValidatorRegistrationV1, SyncCommitteeSelection, SyncCommitteeSubscription,
    SyncDutiesResponse, SyncDuty, ValidatorRegistrationV1,
};
