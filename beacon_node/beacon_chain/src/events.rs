//! The chain's event bus: what happened, for the Beacon API's server-sent events and for
//! anything else that follows the chain. Publishing never blocks import: a subscriber that
//! falls behind misses events (and is told so by the broadcast channel) instead of slowing the
//! chain.

use std::any::Any;
use std::sync::Arc;

use tokio::sync::broadcast;
use types::capella::{SignedBLSToExecutionChange, Withdrawal};
use types::electra::SingleAttestation;
use types::gloas::{PayloadAttestationMessage, SignedExecutionPayloadBid};
use types::phase0::{ProposerSlashing, SignedVoluntaryExit};
use types::{Address, Epoch, ForkName, Hash32, Root, Slot, ValidatorIndex};

/// Events kept for a slow subscriber before it starts missing them.
pub const EVENT_CAPACITY: usize = 1024;

/// One thing that happened to the chain.
#[derive(Debug, Clone, PartialEq)]
pub enum ChainEvent {
    /// A block passed gossip validation (`block_gossip`).
    BlockGossip {
        /// Its slot.
        slot: Slot,
        /// Its root.
        block: Root,
    },
    /// A block was imported (`block`).
    Block {
        /// Its slot.
        slot: Slot,
        /// Its root.
        block: Root,
        /// Imported before the execution client validated its payload.
        execution_optimistic: bool,
    },
    /// The head changed (`head`).
    Head {
        /// The new head's slot.
        slot: Slot,
        /// The new head's root.
        block: Root,
        /// Its post-state root.
        state: Root,
        /// Whether the head's epoch differs from the previous head's.
        epoch_transition: bool,
        /// Imported before the execution client validated its payload.
        execution_optimistic: bool,
    },
    /// The head changed, or the head block's payload status did (`head_v2`): a Gloas head is a
    /// block and its payload variant, and the same block becomes head again, FULL, when its
    /// payload arrives. Published after [`ChainEvent::Head`] for a new head block.
    HeadV2 {
        /// The head block's slot.
        slot: Slot,
        /// The head block's root.
        block: Root,
        /// Its post-state root.
        state: Root,
        /// The head's payload variant (`None` before Gloas: the payload is in the block).
        payload_status: Option<fork_choice::PayloadStatus>,
        /// Whether the head's epoch differs from the previous head's.
        epoch_transition: bool,
        /// Imported before the execution client validated its payload.
        execution_optimistic: bool,
    },
    /// The head moved to a block that does not descend from the previous head (`chain_reorg`).
    ChainReorg {
        /// The new head's slot.
        slot: Slot,
        /// How many blocks of the old chain were left behind.
        depth: u64,
        /// The old head.
        old_head_block: Root,
        /// The new head.
        new_head_block: Root,
        /// The old head's state root.
        old_head_state: Root,
        /// The new head's state root.
        new_head_state: Root,
    },
    /// A new finalized checkpoint (`finalized_checkpoint`).
    FinalizedCheckpoint {
        /// Its block root.
        block: Root,
        /// That block's state root.
        state: Root,
        /// Its epoch.
        epoch: Epoch,
    },
    /// A single attestation passed gossip validation (`single_attestation`).
    SingleAttestation {
        /// The attester.
        attester_index: ValidatorIndex,
        /// The vote's slot.
        slot: Slot,
        /// The block voted for.
        beacon_block_root: Root,
        /// The attestation as received.
        attestation: Arc<SingleAttestation>,
    },
    /// An aggregate passed gossip validation (`attestation`).
    Aggregate {
        /// The aggregator.
        aggregator_index: ValidatorIndex,
        /// The vote's slot.
        slot: Slot,
        /// The block voted for.
        beacon_block_root: Root,
        /// The aggregate's `types::electra::Attestation<E>`, or from Gloas on
        /// `types::gloas::Attestation<E>`.
        attestation: PresetMessage,
    },
    /// A voluntary exit passed gossip validation (`voluntary_exit`).
    VoluntaryExit {
        /// The exiting validator.
        validator_index: ValidatorIndex,
        /// The exit's epoch.
        epoch: Epoch,
        /// The signed exit as received.
        exit: Arc<SignedVoluntaryExit>,
    },
    /// A proposer slashing passed gossip validation (`proposer_slashing`).
    ProposerSlashing {
        /// The slashed proposer.
        proposer_index: ValidatorIndex,
        /// The slashing as received.
        slashing: Arc<ProposerSlashing>,
    },
    /// An attester slashing passed gossip validation (`attester_slashing`).
    AttesterSlashing {
        /// The validators it slashes (both attestations' intersection).
        indices: Vec<ValidatorIndex>,
        /// The slashing's `types::electra::AttesterSlashing<E>`, or from Gloas on
        /// `types::gloas::AttesterSlashing`.
        slashing: PresetMessage,
    },
    /// A BLS-to-execution change passed gossip validation (`bls_to_execution_change`).
    BlsToExecutionChange {
        /// The validator.
        validator_index: ValidatorIndex,
        /// The signed change as received.
        change: Arc<SignedBLSToExecutionChange>,
    },
    /// A sync committee contribution passed gossip validation (`contribution_and_proof`).
    ContributionAndProof {
        /// The aggregator.
        aggregator_index: ValidatorIndex,
        /// The contribution's slot.
        slot: Slot,
        /// The `types::altair::SignedContributionAndProof<E>`.
        contribution: PresetMessage,
    },
    /// The node asked the execution client to build a payload for a proposer
    /// (`engine_forkchoiceUpdated` with attributes): `payload_attributes`.
    PayloadAttributes(Arc<PreparedPayloadAttributes>),
    /// The light-client server has a new `LightClientFinalityUpdate`
    /// (`light_client_finality_update`): its finalized header advanced, or at the same slot it
    /// gained a supermajority of the sync committee. Read it with
    /// `BeaconChain::light_client_finality_update`.
    ///
    /// [spec]: altair/light-client/full-node.md#create_light_client_finality_update
    LightClientFinalityUpdate {
        /// `attested_header.beacon.slot`.
        attested_slot: Slot,
        /// `finalized_header.beacon.slot`.
        finalized_slot: Slot,
        /// `signature_slot`.
        signature_slot: Slot,
    },
    /// The light-client server has a new `LightClientOptimisticUpdate`
    /// (`light_client_optimistic_update`): its attested header advanced. Read it with
    /// `BeaconChain::light_client_optimistic_update`.
    ///
    /// [spec]: altair/light-client/full-node.md#create_light_client_optimistic_update
    LightClientOptimisticUpdate {
        /// `attested_header.beacon.slot`.
        attested_slot: Slot,
        /// `signature_slot`.
        signature_slot: Slot,
    },
    /// A data column sidecar passed gossip validation (`data_column_sidecar`).
    DataColumnSidecar {
        /// Its block root.
        block_root: Root,
        /// Its slot.
        slot: Slot,
        /// Its column index.
        index: u64,
    },
    /// Gloas: a `SignedExecutionPayloadEnvelope` passed the `execution_payload` topic's rules,
    /// from gossip or the API (`execution_payload_gossip`).
    ExecutionPayloadGossip(EnvelopeSummary),
    /// Gloas: the execution payload and blob data of a block were verified available, ready
    /// for payload attestation (`execution_payload_available`). Published just before
    /// [`ChainEvent::ExecutionPayload`], when the envelope is imported with its custody
    /// columns.
    ExecutionPayloadAvailable {
        /// The block's slot.
        slot: Slot,
        /// The block's root.
        block_root: Root,
    },
    /// Gloas: an envelope was imported by `on_execution_payload_envelope` and stored: its block
    /// is FULL in fork choice (`execution_payload`).
    ExecutionPayload {
        /// What the envelope says.
        envelope: EnvelopeSummary,
        /// Imported before the execution client validated its payload.
        execution_optimistic: bool,
    },
    /// Gloas: a `SignedExecutionPayloadBid` passed the `execution_payload_bid` topic's rules
    /// (`execution_payload_bid`).
    ExecutionPayloadBid(Arc<SignedExecutionPayloadBid>),
    /// Gloas: a `PayloadAttestationMessage` passed the `payload_attestation_message` topic's
    /// rules (`payload_attestation_message`).
    PayloadAttestationMessage(Arc<PayloadAttestationMessage>),
}

/// The fields of an execution payload envelope the `execution_payload` and
/// `execution_payload_gossip` events carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvelopeSummary {
    /// The block's (and the payload's) slot.
    pub slot: Slot,
    /// The envelope's builder (`BUILDER_INDEX_SELF_BUILD` for a proposer's own payload).
    pub builder_index: u64,
    /// The payload's block hash.
    pub block_hash: Hash32,
    /// The envelope's block.
    pub block_root: Root,
}

/// A gossip-verified message whose type depends on the preset (`Attestation<E>`,
/// `AttesterSlashing<E>`, `SignedContributionAndProof<E>`), shared without a copy: the bus is
/// not generic over the preset, so a reader that knows it takes the message back with
/// [`PresetMessage::get`]. Nothing is serialized on the publishing path.
#[derive(Clone)]
pub struct PresetMessage(Arc<dyn Any + Send + Sync>);

impl PresetMessage {
    /// Wraps `message`.
    pub fn new<T: Any + Send + Sync>(message: T) -> Self {
        Self(Arc::new(message))
    }

    /// The message, when it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl std::fmt::Debug for PresetMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PresetMessage(..)")
    }
}

/// The same shared message (not a structural comparison: the type is erased).
impl PartialEq for PresetMessage {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for PresetMessage {}

/// What `payload_attributes` announces: a payload build the node started for `proposer_index`
/// at `proposal_slot` on `parent_block_root`.
///
/// [spec]: beacon-APIs apis/eventstream/index.yaml (payload_attributes)
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedPayloadAttributes {
    /// The fork at `proposal_slot` (the event's `version`).
    pub version: ForkName,
    /// The proposer at `proposal_slot` on the parent's chain.
    pub proposer_index: ValidatorIndex,
    /// The slot the payload is for.
    pub proposal_slot: Slot,
    /// The parent beacon block's payload's block number.
    pub parent_block_number: u64,
    /// The parent beacon block.
    pub parent_block_root: Root,
    /// The parent beacon block's payload's block hash.
    pub parent_block_hash: Hash32,
    /// `PayloadAttributesV3.timestamp`.
    pub timestamp: u64,
    /// `PayloadAttributesV3.prevRandao`.
    pub prev_randao: Hash32,
    /// `PayloadAttributesV3.suggestedFeeRecipient`.
    pub suggested_fee_recipient: Address,
    /// `PayloadAttributesV3.withdrawals`.
    pub withdrawals: Vec<Withdrawal>,
    /// `PayloadAttributesV3.parentBeaconBlockRoot`.
    pub parent_beacon_block_root: Root,
}

/// The bus: publishers call [`EventBus::publish`], readers [`EventBus::subscribe`].
#[derive(Debug)]
pub struct EventBus {
    sender: broadcast::Sender<ChainEvent>,
}

impl Default for EventBus {
    fn default() -> Self {
        let (sender, _) = broadcast::channel(EVENT_CAPACITY);
        Self { sender }
    }
}

impl EventBus {
    /// Publishes `event` to every current subscriber (none is fine).
    pub fn publish(&self, event: ChainEvent) {
        // `send` fails only when nobody listens, which is not an error for a bus.
        let _ = self.sender.send(event);
    }

    /// A receiver of every event published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ChainEvent> {
        self.sender.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_message_gives_back_its_type_only_and_equals_its_clones_only() {
        let message = PresetMessage::new(7u64);
        assert_eq!(message.get::<u64>(), Some(&7));
        assert_eq!(message.get::<u32>(), None);
        assert_eq!(message, message.clone());
        assert_ne!(message, PresetMessage::new(7u64));
    }

    #[tokio::test]
    async fn a_subscriber_receives_the_shared_message_published() {
        let bus = EventBus::default();
        let mut rx = bus.subscribe();
        let exit = Arc::new(SignedVoluntaryExit {
            message: types::phase0::VoluntaryExit {
                epoch: 3,
                validator_index: 9,
            },
            signature: types::BLSSignature::ZERO,
        });
        bus.publish(ChainEvent::VoluntaryExit {
            validator_index: 9,
            epoch: 3,
            exit: exit.clone(),
        });
        let Ok(ChainEvent::VoluntaryExit { exit: received, .. }) = rx.recv().await else {
            panic!("the exit event");
        };
        assert!(Arc::ptr_eq(&received, &exit), "shared, not copied");
    }
}
