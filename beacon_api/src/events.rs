//! `GET /eth/v1/events`: the event topics, their data, and a parser of the `text/event-stream`
//! format they arrive in.
//!
//! [spec]: apis/eventstream/index.yaml; the stream format is the WHATWG HTML standard's
//! "server-sent events" (`event:` and `data:` fields, a blank line ends an event, lines starting
//! with `:` are comments).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use types::altair::SignedContributionAndProof;
use types::capella::SignedBLSToExecutionChange;
use types::electra::SingleAttestation;
use types::gloas::{PayloadAttestationMessage, SignedExecutionPayloadBid};
use types::phase0::{ProposerSlashing, SignedVoluntaryExit};
use types::{
    ColumnIndex, Epoch, EthSpec, ForkName, Hash32, LightClientFinalityUpdate,
    LightClientOptimisticUpdate, Root, Slot,
};

use crate::envelope::ForkVersionedResponse;

macro_rules! topics {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)+) => {
        /// An event topic of the Fulu release (Gloas-only topics left out).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum EventTopic {
            $($(#[$doc])* $variant,)+
        }

        impl EventTopic {
            /// Every topic.
            pub const ALL: &'static [EventTopic] = &[$(Self::$variant),+];

            /// The spec's name, as in the `topics` query and the `event:` field.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)+
                }
            }
        }
    };
}

topics! {
    /// The head changed (deprecated by `head_v2`).
    Head = "head",
    /// The head changed, or its block's payload status did (Gloas).
    HeadV2 = "head_v2",
    /// A block was imported.
    Block = "block",
    /// A block passed gossip validation.
    BlockGossip = "block_gossip",
    /// An attestation was received (its shape is the fork's `Attestation`).
    Attestation = "attestation",
    /// A `SingleAttestation` was received (Electra and later).
    SingleAttestation = "single_attestation",
    /// A voluntary exit was received.
    VoluntaryExit = "voluntary_exit",
    /// A BLS-to-execution change was received.
    BlsToExecutionChange = "bls_to_execution_change",
    /// A proposer slashing was received.
    ProposerSlashing = "proposer_slashing",
    /// An attester slashing was received (its shape is the fork's `AttesterSlashing`).
    AttesterSlashing = "attester_slashing",
    /// The finalized checkpoint changed.
    FinalizedCheckpoint = "finalized_checkpoint",
    /// The head moved to another branch.
    ChainReorg = "chain_reorg",
    /// A sync committee contribution was received.
    ContributionAndProof = "contribution_and_proof",
    /// A new light-client finality update.
    LightClientFinalityUpdate = "light_client_finality_update",
    /// A new light-client optimistic update.
    LightClientOptimisticUpdate = "light_client_optimistic_update",
    /// Payload attributes for the next proposal were computed.
    PayloadAttributes = "payload_attributes",
    /// A blob sidecar passed gossip validation. A topic of Deneb and Electra chains: the spec
    /// still lists it for Fulu, so a client subscribing to it (with others) is served, but a Fulu
    /// chain gossips data columns, not blob sidecars, and this node sends no such event.
    BlobSidecar = "blob_sidecar",
    /// A data column sidecar passed gossip validation.
    DataColumnSidecar = "data_column_sidecar",
    /// A block was fast-confirmed.
    FastConfirmation = "fast_confirmation",
    /// Gloas: an execution payload envelope was imported (its block FULL in fork choice).
    ExecutionPayload = "execution_payload",
    /// Gloas: an execution payload envelope passed gossip validation.
    ExecutionPayloadGossip = "execution_payload_gossip",
    /// Gloas: a block's execution payload and blob data were verified available.
    ExecutionPayloadAvailable = "execution_payload_available",
    /// Gloas: an execution payload bid passed gossip validation.
    ExecutionPayloadBid = "execution_payload_bid",
    /// Gloas: a payload attestation message passed gossip validation.
    PayloadAttestationMessage = "payload_attestation_message",
}

/// A topic name the spec does not define (the Fulu release's topics and `head_v2`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown event topic {0:?}")]
pub struct UnknownTopic(pub String);

impl FromStr for EventTopic {
    type Err = UnknownTopic;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownTopic(s.to_string()))
    }
}

impl fmt::Display for EventTopic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `head` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadEvent {
    /// The new head's slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The new head block's root.
    pub block: Root,
    /// The new head state's root.
    pub state: Root,
    /// True if the head's slot is the first of an epoch.
    pub epoch_transition: bool,
    /// The dependent root of the previous epoch's attester duties.
    pub previous_duty_dependent_root: Root,
    /// The dependent root of the current epoch's attester duties.
    pub current_duty_dependent_root: Root,
    /// True if the head is optimistic.
    pub execution_optimistic: bool,
}

/// A head's payload status in `head_v2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeadPayloadStatus {
    /// The head block without its payload (Gloas: the envelope has not been imported).
    Empty,
    /// The head block with its payload (before Gloas, always).
    Full,
}

/// `head_v2` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadV2Event {
    /// The head block's slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The head block's root.
    pub block: Root,
    /// The head state's root.
    pub state: Root,
    /// Whether the head is the block's EMPTY or FULL variant.
    pub payload_status: HeadPayloadStatus,
    /// True if the head's epoch differs from the previous head's.
    pub epoch_transition: bool,
    /// `get_block_root_at_slot(state, compute_start_slot_at_epoch(epoch - 1) - 1)`.
    pub current_epoch_dependent_root: Root,
    /// `get_block_root_at_slot(state, compute_start_slot_at_epoch(epoch) - 1)`.
    pub next_epoch_dependent_root: Root,
    /// True if the head is optimistic.
    pub execution_optimistic: bool,
}

/// `head_v2`: `{version, data}`, the version the head block's fork.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionedHeadV2Event {
    /// The head block's fork.
    #[serde(with = "crate::json::fork_name")]
    pub version: ForkName,
    /// The event.
    pub data: HeadV2Event,
}

/// `block` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockEvent {
    /// The block's slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The block's root.
    pub block: Root,
    /// True if the block is optimistic.
    pub execution_optimistic: bool,
}

/// `block_gossip` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockGossipEvent {
    /// The block's slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The block's root.
    pub block: Root,
}

/// `finalized_checkpoint` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalizedCheckpointEvent {
    /// The finalized block's root.
    pub block: Root,
    /// The finalized state's root.
    pub state: Root,
    /// The finalized epoch.
    #[serde(with = "crate::json::quoted_u64")]
    pub epoch: Epoch,
    /// True if the finalized block is optimistic.
    pub execution_optimistic: bool,
}

/// `chain_reorg` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainReorgEvent {
    /// The slot of the new head.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// How many slots back the branches meet.
    #[serde(with = "crate::json::quoted_u64")]
    pub depth: u64,
    /// The old head block.
    pub old_head_block: Root,
    /// The new head block.
    pub new_head_block: Root,
    /// The old head state.
    pub old_head_state: Root,
    /// The new head state.
    pub new_head_state: Root,
    /// The epoch of the new head.
    #[serde(with = "crate::json::quoted_u64")]
    pub epoch: Epoch,
    /// True if the new head is optimistic.
    pub execution_optimistic: bool,
}

/// `data_column_sidecar` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataColumnSidecarEvent {
    /// The root of the column's block.
    pub block_root: Root,
    /// The column's index.
    #[serde(with = "crate::json::quoted_u64")]
    pub index: ColumnIndex,
    /// The block's slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
}

/// `execution_payload_gossip` data (Gloas).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionPayloadGossipEvent {
    /// The payload's (and its block's) slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The envelope's builder.
    #[serde(with = "crate::json::quoted_u64")]
    pub builder_index: u64,
    /// The payload's block hash.
    pub block_hash: Hash32,
    /// The envelope's beacon block.
    pub block_root: Root,
}

/// `execution_payload` data (Gloas): the gossip event's fields and whether the payload was
/// imported before the execution client validated it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionPayloadEvent {
    /// The payload's (and its block's) slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The envelope's builder.
    #[serde(with = "crate::json::quoted_u64")]
    pub builder_index: u64,
    /// The payload's block hash.
    pub block_hash: Hash32,
    /// The envelope's beacon block.
    pub block_root: Root,
    /// True if the payload is optimistic.
    pub execution_optimistic: bool,
}

/// `execution_payload_available` data (Gloas).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionPayloadAvailableEvent {
    /// The block's slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The block's root.
    pub block_root: Root,
}

/// `fast_confirmation` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FastConfirmationEvent {
    /// The confirmed block's root.
    pub block: Root,
    /// The confirmed block's slot.
    #[serde(with = "crate::json::quoted_u64")]
    pub slot: Slot,
    /// The slot at which it was confirmed.
    #[serde(with = "crate::json::quoted_u64")]
    pub current_slot: Slot,
}

/// One event, decoded by its topic.
#[derive(Debug, Clone, PartialEq)]
pub enum BeaconEvent<E: EthSpec> {
    /// `head`.
    Head(HeadEvent),
    /// `head_v2`.
    HeadV2(VersionedHeadV2Event),
    /// `block`.
    Block(BlockEvent),
    /// `block_gossip`.
    BlockGossip(BlockGossipEvent),
    /// `single_attestation`.
    SingleAttestation(SingleAttestation),
    /// `voluntary_exit`.
    VoluntaryExit(SignedVoluntaryExit),
    /// `bls_to_execution_change`.
    BlsToExecutionChange(SignedBLSToExecutionChange),
    /// `proposer_slashing`.
    ProposerSlashing(ProposerSlashing),
    /// `finalized_checkpoint`.
    FinalizedCheckpoint(FinalizedCheckpointEvent),
    /// `chain_reorg`.
    ChainReorg(ChainReorgEvent),
    /// `contribution_and_proof`.
    ContributionAndProof(SignedContributionAndProof<E>),
    /// `light_client_finality_update` (versioned).
    LightClientFinalityUpdate(ForkVersionedResponse<LightClientFinalityUpdate<E>>),
    /// `light_client_optimistic_update` (versioned).
    LightClientOptimisticUpdate(ForkVersionedResponse<LightClientOptimisticUpdate<E>>),
    /// `data_column_sidecar`.
    DataColumnSidecar(DataColumnSidecarEvent),
    /// `fast_confirmation`.
    FastConfirmation(FastConfirmationEvent),
    /// `execution_payload` (Gloas).
    ExecutionPayload(ExecutionPayloadEvent),
    /// `execution_payload_gossip` (Gloas).
    ExecutionPayloadGossip(ExecutionPayloadGossipEvent),
    /// `execution_payload_available` (Gloas).
    ExecutionPayloadAvailable(ExecutionPayloadAvailableEvent),
    /// `execution_payload_bid` (Gloas, versioned).
    ExecutionPayloadBid(ForkVersionedResponse<SignedExecutionPayloadBid>),
    /// `payload_attestation_message` (Gloas, versioned).
    PayloadAttestationMessage(ForkVersionedResponse<PayloadAttestationMessage>),
    /// `attestation`, `attester_slashing` and `payload_attributes`: their JSON, whose shape
    /// depends on a fork the event does not name (or, for payload attributes, on the execution
    /// API's version), left to the consumer.
    Raw(EventTopic, serde_json::Value),
}

/// An event that could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The `event:` field names no known topic.
    #[error(transparent)]
    UnknownTopic(#[from] UnknownTopic),
    /// The data is not the topic's JSON.
    #[error("invalid {topic} event data: {source}")]
    Data {
        /// The topic.
        topic: EventTopic,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
}

impl<E: EthSpec> BeaconEvent<E> {
    /// Decodes the `data` of an event whose `event:` field was `event`.
    pub fn decode(event: &str, data: &str) -> Result<Self, EventError> {
        let topic: EventTopic = event.parse()?;
        let err = |source| EventError::Data { topic, source };
        let json = |data: &str| -> Result<serde_json::Value, EventError> {
            serde_json::from_str(data).map_err(err)
        };
        Ok(match topic {
            EventTopic::Head => Self::Head(serde_json::from_str(data).map_err(err)?),
            EventTopic::HeadV2 => Self::HeadV2(serde_json::from_str(data).map_err(err)?),
            EventTopic::Block => Self::Block(serde_json::from_str(data).map_err(err)?),
            EventTopic::BlockGossip => Self::BlockGossip(serde_json::from_str(data).map_err(err)?),
            EventTopic::SingleAttestation => {
                Self::SingleAttestation(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::VoluntaryExit => {
                Self::VoluntaryExit(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::BlsToExecutionChange => {
                Self::BlsToExecutionChange(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::ProposerSlashing => {
                Self::ProposerSlashing(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::FinalizedCheckpoint => {
                Self::FinalizedCheckpoint(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::ChainReorg => Self::ChainReorg(serde_json::from_str(data).map_err(err)?),
            EventTopic::ContributionAndProof => {
                Self::ContributionAndProof(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::LightClientFinalityUpdate => {
                Self::LightClientFinalityUpdate(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::LightClientOptimisticUpdate => {
                Self::LightClientOptimisticUpdate(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::DataColumnSidecar => {
                Self::DataColumnSidecar(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::FastConfirmation => {
                Self::FastConfirmation(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::ExecutionPayload => {
                Self::ExecutionPayload(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::ExecutionPayloadGossip => {
                Self::ExecutionPayloadGossip(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::ExecutionPayloadAvailable => {
                Self::ExecutionPayloadAvailable(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::ExecutionPayloadBid => {
                Self::ExecutionPayloadBid(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::PayloadAttestationMessage => {
                Self::PayloadAttestationMessage(serde_json::from_str(data).map_err(err)?)
            }
            EventTopic::Attestation
            | EventTopic::AttesterSlashing
            | EventTopic::PayloadAttributes
            | EventTopic::BlobSidecar => Self::Raw(topic, json(data)?),
        })
    }
}

/// One event as the stream framed it: its `event:` name (`message` if none) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The `event:` field.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// An event larger than the parser accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("server-sent event exceeds {0} bytes")]
pub struct EventTooLarge(pub usize);

/// An incremental `text/event-stream` parser: feed it bytes as they arrive, take the frames.
#[derive(Debug)]
pub struct SseParser {
    pending: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    max_event_bytes: usize,
    last_was_cr: bool,
}

impl SseParser {
    /// A parser that refuses an event (or a line) over `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            pending: Vec::new(),
            event: String::new(),
            data: String::new(),
            has_data: false,
            max_event_bytes,
            last_was_cr: false,
        }
    }

    /// Feeds bytes; returns the events they completed, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseFrame>, EventTooLarge> {
        let mut frames = Vec::new();
        for &b in bytes {
            // Lines end with CRLF, LF or CR; a LF right after a CR ends nothing more.
            if b == b'\n' && self.last_was_cr {
                self.last_was_cr = false;
                continue;
            }
            self.last_was_cr = b == b'\r';
            if b == b'\n' || b == b'\r' {
                let line = std::mem::take(&mut self.pending);
                if let Some(frame) = self.line(&String::from_utf8_lossy(&line))? {
                    frames.push(frame);
                }
            } else {
                if self.pending.len() + self.data.len() >= self.max_event_bytes {
                    return Err(EventTooLarge(self.max_event_bytes));
                }
                self.pending.push(b);
            }
        }
        Ok(frames)
    }

    fn line(&mut self, line: &str) -> Result<Option<SseFrame>, EventTooLarge> {
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let data = std::mem::take(&mut self.data);
            let had_data = std::mem::replace(&mut self.has_data, false);
            return Ok(had_data.then(|| SseFrame {
                event: if event.is_empty() {
                    "message".into()
                } else {
                    event
                },
                data,
            }));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
                if self.data.len() > self.max_event_bytes {
                    return Err(EventTooLarge(self.max_event_bytes));
                }
            }
            // `id` and `retry` matter to reconnecting browsers, not here; others are ignored.
            _ => {}
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec;

    const HEAD: &str = r#"{"slot":"10","block":"0x9a2fefd2fdb57f74993c7780ea5b9030d2897b615b89f808011ca5aebed54eaf","state":"0x600e852a08c1200654ddf11025f1ceacb3c2e74bdd5c630cde0838b2591b69f9","epoch_transition":false,"previous_duty_dependent_root":"0x5e0043f107cb57913498fbf2f99ff55e730bf1e151f02f221e977c91a90a0e91","current_duty_dependent_root":"0x5e0043f107cb57913498fbf2f99ff55e730bf1e151f02f221e977c91a90a0e91","execution_optimistic":false}"#;

    #[test]
    fn topics_round_trip_their_names() {
        for &topic in EventTopic::ALL {
            assert_eq!(topic.as_str().parse(), Ok(topic));
        }
        assert_eq!("head_v2".parse(), Ok(EventTopic::HeadV2));
        assert!("head_v3".parse::<EventTopic>().is_err());
    }

    /// The spec's `head_v2` example (apis/eventstream/index.yaml of v5.0.0-alpha.2) decodes,
    /// and encodes back to the same JSON.
    #[test]
    fn head_v2_decodes_the_spec_example() {
        let data = r#"{"version": "gloas", "data":{"slot":"10", "block":"0x9a2fefd2fdb57f74993c7780ea5b9030d2897b615b89f808011ca5aebed54eaf", "state":"0x600e852a08c1200654ddf11025f1ceacb3c2e74bdd5c630cde0838b2591b69f9", "payload_status": "empty", "epoch_transition":false, "current_epoch_dependent_root":"0x5e0043f107cb57913498fbf2f99ff55e730bf1e151f02f221e977c91a90a0e91", "next_epoch_dependent_root":"0x5e0043f107cb57913498fbf2f99ff55e730bf1e151f02f221e977c91a90a0e91", "execution_optimistic": false}}"#;
        let BeaconEvent::<MinimalEthSpec>::HeadV2(event) =
            BeaconEvent::decode("head_v2", data).expect("decodes")
        else {
            panic!("not head_v2");
        };
        assert_eq!(event.version, ForkName::Gloas);
        assert_eq!(event.data.slot, 10);
        assert_eq!(event.data.payload_status, HeadPayloadStatus::Empty);
        let spec: serde_json::Value = serde_json::from_str(data).expect("JSON");
        assert_eq!(serde_json::to_value(&event).expect("encodes"), spec);
    }

    #[test]
    fn parser_frames_events_split_anywhere() {
        let stream = format!(
            ": keep-alive\n\nevent: head\ndata: {HEAD}\n\nevent:block\r\ndata:{{\"slot\":\"3\",\r\ndata: \"block\":\"0x9a2fefd2fdb57f74993c7780ea5b9030d2897b615b89f808011ca5aebed54eaf\",\"execution_optimistic\":true}}\r\n\r\n"
        );
        for split in [1, 2, 7, 64, stream.len()] {
            let mut parser = SseParser::new(1 << 20);
            let mut frames = Vec::new();
            for chunk in stream.as_bytes().chunks(split) {
                frames.extend(parser.feed(chunk).expect("within limits"));
            }
            assert_eq!(frames.len(), 2, "split {split}");
            assert_eq!(
                frames[0],
                SseFrame {
                    event: "head".into(),
                    data: HEAD.into()
                }
            );
            let event = BeaconEvent::<MinimalEthSpec>::decode(&frames[1].event, &frames[1].data)
                .expect("block event");
            let BeaconEvent::Block(block) = event else {
                panic!("expected a block event")
            };
            assert_eq!(block.slot, 3);
            assert!(block.execution_optimistic);
        }
    }

    #[test]
    fn events_decode_by_topic_and_refuse_bad_data() {
        let event = BeaconEvent::<MinimalEthSpec>::decode("head", HEAD).expect("head");
        let BeaconEvent::Head(head) = event else {
            panic!("expected head")
        };
        assert_eq!(serde_json::to_string(&head).expect("encodes"), HEAD);
        let reorg = r#"{"slot":"200","depth":"50","old_head_block":"0x9a2fefd2fdb57f74993c7780ea5b9030d2897b615b89f808011ca5aebed54eaf","new_head_block":"0x76262e91970d375a19bfe8a867288d7b9cde43c8635f598d93d39d041706fc76","old_head_state":"0x9a2fefd2fdb57f74993c7780ea5b9030d2897b615b89f808011ca5aebed54eaf","new_head_state":"0x600e852a08c1200654ddf11025f1ceacb3c2e74bdd5c630cde0838b2591b69f9","epoch":"2","execution_optimistic":false}"#;
        assert!(matches!(
            BeaconEvent::<MinimalEthSpec>::decode("chain_reorg", reorg),
            Ok(BeaconEvent::ChainReorg(ChainReorgEvent { depth: 50, .. }))
        ));
        let column = r#"{"block_root":"0xcf8e0d4e9587369b2301d0790347320302cc0943d5a1884560367e8208d920f2","index":"1","slot":"1"}"#;
        assert!(matches!(
            BeaconEvent::<MinimalEthSpec>::decode("data_column_sidecar", column),
            Ok(BeaconEvent::DataColumnSidecar(_))
        ));
        assert!(matches!(
            BeaconEvent::<MinimalEthSpec>::decode("attestation", "{}"),
            Ok(BeaconEvent::Raw(EventTopic::Attestation, _))
        ));
        assert!(matches!(
            BeaconEvent::<MinimalEthSpec>::decode("head", "{}"),
            Err(EventError::Data {
                topic: EventTopic::Head,
                ..
            })
        ));
        assert!(matches!(
            BeaconEvent::<MinimalEthSpec>::decode("nonsense", "{}"),
            Err(EventError::UnknownTopic(_))
        ));
    }

    #[test]
    fn oversized_events_are_refused() {
        let mut parser = SseParser::new(16);
        assert_eq!(parser.feed(b"data: 0123456789\n"), Ok(vec![]));
        assert_eq!(parser.feed(b"data: 0123456789\n"), Err(EventTooLarge(16)));
        let mut parser = SseParser::new(16);
        assert_eq!(parser.feed(&[b'x'; 17]), Err(EventTooLarge(16)));
    }
}
