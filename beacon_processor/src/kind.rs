//! The kinds of work the processor schedules, and for each its priority, queue order, capacity,
//! batching and pool. The README's table is this module in prose; keep them in step.

use std::fmt;

/// Which end of a queue the next item is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueOrder {
    /// Oldest first: work whose order matters (sync segments, RPC requests, operations).
    Fifo,
    /// Newest first: work that loses value with age (attestations, columns of the current slot).
    Lifo,
}

/// How many queued items of a kind one worker takes at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batching {
    /// One item at a time.
    None,
    /// Up to this many items, when at least two are queued.
    UpTo(usize),
    /// Every queued item, when at least two are queued (data columns: one KZG batch across
    /// blocks).
    All,
}

/// The rayon pool a kind's work runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// `cores` threads: gossip, RPC, range sync, API and timers share it.
    Main,
    /// One thread: backfill, so historical sync never takes a core from the head.
    Backfill,
}

macro_rules! work_kinds {
    ($($(#[$doc:meta])* $kind:ident => $name:literal,)*) => {
        /// A kind of work. Variants are listed in priority order, highest first.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum WorkKind {
            $($(#[$doc])* $kind,)*
        }

        impl WorkKind {
            /// Every kind, highest priority first.
            pub const ALL: &'static [WorkKind] = &[$(WorkKind::$kind,)*];

            /// The kind's name as it appears in metric labels and logs.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(WorkKind::$kind => $name,)*
                }
            }
        }
    };
}

work_kinds! {
    /// A range-sync chain segment (blocks and their columns from peers, imported in order).
    ChainSegment => "chain_segment",
    /// A block from the `beacon_block` gossip topic.
    GossipBlock => "gossip_block",
    /// Beacon API requests on the proposal path: block production and publication.
    ApiRequestP0 => "api_request_p0",
    /// A `SignedExecutionPayloadEnvelope` from `execution_payload` (Gloas): the payload of a
    /// block imported already; with its custody columns it makes the block FULL.
    GossipExecutionPayload => "gossip_execution_payload",
    /// A block fetched by root for a lookup (unknown parent or unknown block).
    RpcBlock => "rpc_block",
    /// Advancing the head state to the next slot before it starts (slot timer).
    StateAdvance => "state_advance",
    /// Priming the next epoch's shuffling and proposer caches (slot timer).
    CachePriming => "cache_priming",
    /// A sidecar from a `data_column_sidecar_{subnet}` gossip topic.
    GossipDataColumn => "gossip_data_column",
    /// Data columns fetched by root for a lookup.
    RpcDataColumns => "rpc_data_columns",
    /// Reconstructing a block's missing columns from at least half of them.
    ColumnReconstruction => "column_reconstruction",
    /// A `SignedAggregateAndProof` from `beacon_aggregate_and_proof`.
    GossipAggregate => "gossip_aggregate",
    /// A `PayloadAttestationMessage` from `payload_attestation_message` (Gloas): a PTC
    /// member's vote on the slot's payload, which fork choice reads by the slot's end.
    GossipPayloadAttestation => "gossip_payload_attestation",
    /// A `SingleAttestation` from a `beacon_attestation_{subnet}` topic.
    GossipAttestation => "gossip_attestation",
    /// A `SignedContributionAndProof` from `sync_committee_contribution_and_proof`.
    GossipSyncContribution => "gossip_sync_contribution",
    /// A `SyncCommitteeMessage` from a `sync_committee_{subnet}` topic.
    GossipSyncCommitteeMessage => "gossip_sync_committee_message",
    /// A `SignedVoluntaryExit` from `voluntary_exit`.
    GossipVoluntaryExit => "gossip_voluntary_exit",
    /// A `ProposerSlashing` from `proposer_slashing`.
    GossipProposerSlashing => "gossip_proposer_slashing",
    /// An `AttesterSlashing` from `attester_slashing`.
    GossipAttesterSlashing => "gossip_attester_slashing",
    /// A `SignedBLSToExecutionChange` from `bls_to_execution_change`.
    GossipBlsToExecutionChange => "gossip_bls_to_execution_change",
    /// A `SignedExecutionPayloadBid` from `execution_payload_bid` (Gloas): a builder's bid
    /// for the next slots' proposers.
    GossipExecutionPayloadBid => "gossip_execution_payload_bid",
    /// A `SignedProposerPreferences` from `proposer_preferences` (Gloas): what an upcoming
    /// proposer accepts from builders (fee recipient, gas limit).
    GossipProposerPreferences => "gossip_proposer_preferences",
    /// A `LightClientFinalityUpdate` from `light_client_finality_update`.
    GossipLightClientFinalityUpdate => "gossip_light_client_finality_update",
    /// A `LightClientOptimisticUpdate` from `light_client_optimistic_update`.
    GossipLightClientOptimisticUpdate => "gossip_light_client_optimistic_update",
    /// Answering a peer's `Status` request.
    RpcStatus => "rpc_status",
    /// Serving `BeaconBlocksByRoot`.
    RpcBlocksByRootRequest => "rpc_blocks_by_root_request",
    /// Serving `DataColumnSidecarsByRoot`.
    RpcDataColumnsByRootRequest => "rpc_data_columns_by_root_request",
    /// Serving `BeaconBlocksByRange`.
    RpcBlocksByRangeRequest => "rpc_blocks_by_range_request",
    /// Serving `DataColumnSidecarsByRange`.
    RpcDataColumnsByRangeRequest => "rpc_data_columns_by_range_request",
    /// Serving the light-client protocols (bootstrap, updates by range, finality, optimistic).
    RpcLightClientRequest => "rpc_light_client_request",
    /// Every other Beacon API request.
    ApiRequestP1 => "api_request_p1",
    /// A backfill segment (historical blocks before the checkpoint, newest first).
    BackfillSegment => "backfill_segment",
}

/// The number of kinds.
pub const KIND_COUNT: usize = WorkKind::ALL.len();

impl WorkKind {
    /// The kind's position in [`WorkKind::ALL`]: its rank, 0 the highest priority.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The most items of this kind that may wait; past it the oldest is dropped.
    ///
    /// Sized for a burst well beyond a normal slot on mainnet, and by memory for the large items:
    /// a data column at 48 blobs is ~100 KiB, so 1,024 queued columns hold ~100 MiB at most.
    pub const fn capacity(self) -> usize {
        match self {
            // A few in flight per syncing chain; more would be stale by the time they run.
            WorkKind::ChainSegment | WorkKind::BackfillSegment => 64,
            // One block per slot plus equivocations and re-sends.
            WorkKind::GossipBlock | WorkKind::RpcBlock => 1024,
            // A proposal needs one production and one publication per local proposer and slot.
            WorkKind::ApiRequestP0 => 256,
            // One per block and builder; an envelope is up to a block's payload in size (MiBs
            // on mainnet), so a few slots' worth, not more.
            WorkKind::GossipExecutionPayload => 64,
            // One of each per slot; a short backlog means the node is far behind anyway.
            WorkKind::StateAdvance | WorkKind::CachePriming => 8,
            // 128 columns per block for a supernode; eight blocks' worth, ~100 MiB at 48 blobs.
            WorkKind::GossipDataColumn => 1024,
            // Each item is a lookup's response (up to 128 columns of one block).
            WorkKind::RpcDataColumns => 256,
            // One per block that a supernode could not fully receive.
            WorkKind::ColumnReconstruction => 16,
            // Mainnet: 64 committees × up to 16 aggregators per slot = 1,024 per slot.
            WorkKind::GossipAggregate => 4096,
            // Mainnet: a PTC of 512 members, one message each per slot; four slots' worth.
            WorkKind::GossipPayloadAttestation => 2048,
            // A node subscribed to all 64 subnets sees ~30,000 per slot at 1M validators; a node
            // with its 2 long-lived subnets sees ~1,000. Older ones are worth less (LIFO).
            WorkKind::GossipAttestation => 16384,
            WorkKind::GossipSyncContribution => 1024,
            // 512 members over 4 subnets, one message per member per slot.
            WorkKind::GossipSyncCommitteeMessage => 2048,
            WorkKind::GossipVoluntaryExit
            | WorkKind::GossipProposerSlashing
            | WorkKind::GossipAttesterSlashing => 4096,
            // The Capella opening saw floods of these; each is small.
            WorkKind::GossipBlsToExecutionChange => 16384,
            // Many builders may bid for each slot, each bid small (no payload inside).
            WorkKind::GossipExecutionPayloadBid => 1024,
            // One per proposer of the next two epochs' slots, and their re-sends.
            WorkKind::GossipProposerPreferences => 256,
            WorkKind::GossipLightClientFinalityUpdate
            | WorkKind::GossipLightClientOptimisticUpdate => 64,
            // Per-peer rate limits bound these; 1,024 covers every peer of a 200-peer node
            // asking at once several times over.
            WorkKind::RpcStatus
            | WorkKind::RpcBlocksByRootRequest
            | WorkKind::RpcDataColumnsByRootRequest
            | WorkKind::RpcBlocksByRangeRequest
            | WorkKind::RpcDataColumnsByRangeRequest => 1024,
            WorkKind::RpcLightClientRequest => 512,
            WorkKind::ApiRequestP1 => 1024,
        }
    }

    /// Which end of the queue the next item comes from.
    pub const fn order(self) -> QueueOrder {
        match self {
            WorkKind::GossipDataColumn
            | WorkKind::GossipAggregate
            | WorkKind::GossipPayloadAttestation
            | WorkKind::GossipAttestation
            | WorkKind::GossipSyncContribution
            | WorkKind::GossipSyncCommitteeMessage
            | WorkKind::GossipLightClientFinalityUpdate
            | WorkKind::GossipLightClientOptimisticUpdate
            | WorkKind::ColumnReconstruction
            | WorkKind::StateAdvance => QueueOrder::Lifo,
            _ => QueueOrder::Fifo,
        }
    }

    /// How many queued items one worker takes at once.
    pub const fn batching(self) -> Batching {
        match self {
            WorkKind::GossipAttestation
            | WorkKind::GossipAggregate
            | WorkKind::GossipPayloadAttestation => Batching::UpTo(64),
            WorkKind::GossipDataColumn => Batching::All,
            _ => Batching::None,
        }
    }

    /// Whether items of this kind are handed to a batch handler (see
    /// [`crate::BatchHandlers`]) rather than run as a [`crate::Task`].
    pub const fn is_batchable(self) -> bool {
        !matches!(self.batching(), Batching::None)
    }

    /// The pool the kind's work runs on.
    pub const fn pool(self) -> Pool {
        match self {
            WorkKind::BackfillSegment => Pool::Backfill,
            _ => Pool::Main,
        }
    }

    /// Kinds that hold up the chain itself: the fairness turn (see the README) never runs
    /// ahead of them.
    pub const fn is_critical(self) -> bool {
        matches!(
            self,
            WorkKind::ChainSegment
                | WorkKind::GossipBlock
                | WorkKind::ApiRequestP0
                | WorkKind::GossipExecutionPayload
                | WorkKind::RpcBlock
        )
    }
}

impl fmt::Display for WorkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_follow_the_priority_list() {
        for (i, kind) in WorkKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
    }

    #[test]
    fn every_kind_has_a_capacity_and_a_unique_name() {
        let mut names: Vec<_> = WorkKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KIND_COUNT);
        assert!(WorkKind::ALL.iter().all(|k| k.capacity() > 0));
    }

    #[test]
    fn the_priority_order_is_the_documented_one() {
        use WorkKind::*;
        let rank = |k: WorkKind| k.index();
        assert!(rank(ChainSegment) < rank(GossipBlock));
        assert!(rank(GossipBlock) < rank(ApiRequestP0));
        assert!(rank(ApiRequestP0) < rank(GossipExecutionPayload));
        assert!(rank(GossipExecutionPayload) < rank(GossipDataColumn));
        assert!(rank(GossipDataColumn) < rank(GossipAggregate));
        assert!(rank(GossipAggregate) < rank(GossipPayloadAttestation));
        assert!(rank(GossipPayloadAttestation) < rank(GossipAttestation));
        assert!(rank(GossipAttestation) < rank(GossipSyncCommitteeMessage));
        assert!(rank(GossipSyncCommitteeMessage) < rank(RpcStatus));
        assert!(rank(RpcDataColumnsByRangeRequest) < rank(ApiRequestP1));
        assert!(rank(ApiRequestP1) < rank(BackfillSegment));
    }
}
