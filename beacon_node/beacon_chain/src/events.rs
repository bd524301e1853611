//! The chain's event bus: what happened, for the Beacon API's server-sent events and for
//! anything else that follows the chain. Publishing never blocks import: a subscriber that
//! falls behind misses events (and is told so by the broadcast channel) instead of slowing the
//! chain.

use tokio::sync::broadcast;
use types::{Epoch, Root, Slot, ValidatorIndex};

/// Events kept for a slow subscriber before it starts missing them.
pub const EVENT_CAPACITY: usize = 1024;

/// One thing that happened to the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    },
    /// A new finalized checkpoint (`finalized_checkpoint`).
    FinalizedCheckpoint {
        /// Its block root.
        block: Root,
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
    },
    /// An aggregate passed gossip validation (`attestation`).
    Aggregate {
        /// The aggregator.
        aggregator_index: ValidatorIndex,
        /// The vote's slot.
        slot: Slot,
        /// The block voted for.
        beacon_block_root: Root,
    },
    /// A voluntary exit passed gossip validation (`voluntary_exit`).
    VoluntaryExit {
        /// The exiting validator.
        validator_index: ValidatorIndex,
        /// The exit's epoch.
        epoch: Epoch,
    },
    /// A proposer slashing passed gossip validation (`proposer_slashing`).
    ProposerSlashing {
        /// The slashed proposer.
        proposer_index: ValidatorIndex,
    },
    /// An attester slashing passed gossip validation (`attester_slashing`).
    AttesterSlashing {
        /// The validators it slashes (both attestations' intersection).
        indices: Vec<ValidatorIndex>,
    },
    /// A BLS-to-execution change passed gossip validation (`bls_to_execution_change`).
    BlsToExecutionChange {
        /// The validator.
        validator_index: ValidatorIndex,
    },
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
