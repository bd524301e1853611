//! `light_client_finality_update` and `light_client_optimistic_update`, checked against the
//! node's light-client server: an update is forwarded only if it is newer than the last one
//! forwarded, arrives once the signature slot's sync messages were due, and is exactly the
//! update this node derived itself.
//!
//! The spec gives full nodes only IGNORE rules for these topics (its REJECT rules are for light
//! clients, which run `process_light_client_*_update`), so every error here is an IGNORE: a peer
//! whose view of the chain differs from ours is not penalised for it.
//!
//! [spec]: altair/light-client/p2p-interface.md#light_client_finality_update,
//! altair/light-client/p2p-interface.md#light_client_optimistic_update

use std::sync::Arc;

use light_client::fork::{
    upgrade_lc_finality_update_to_latest, upgrade_lc_optimistic_update_to_latest,
};
use light_client::{FinalityUpdate, OptimisticUpdate};
use types::{EthSpec, LightClientFinalityUpdate, LightClientOptimisticUpdate, Slot};

use super::Verdict;
use crate::chain::BeaconChain;
use crate::internal_error::InternalError;

/// `BASIS_POINTS`.
///
/// [spec]: phase0/validator.md#constants
pub const BASIS_POINTS: u64 = 10_000;

/// Why a light-client finality or optimistic update is not forwarded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LightClientGossipError {
    /// [IGNORE] A finality update with a later finalized header (or the same one signed by a
    /// supermajority) was forwarded already.
    #[error(
        "finalized slot {finalized_slot} (supermajority: {supermajority}) is not newer than the \
         forwarded one at {forwarded_slot} (supermajority: {forwarded_supermajority})"
    )]
    FinalityUpdateAlreadyForwarded {
        /// The update's `finalized_header.beacon.slot`.
        finalized_slot: Slot,
        /// Whether its sync aggregate has more than 2/3 participation.
        supermajority: bool,
        /// The forwarded update's finalized slot.
        forwarded_slot: Slot,
        /// Whether the forwarded update had a supermajority.
        forwarded_supermajority: bool,
    },
    /// [IGNORE] An optimistic update with an attested header at or after this one's was
    /// forwarded already.
    #[error("attested slot {attested_slot} is not after the forwarded one at {forwarded_slot}")]
    OptimisticUpdateAlreadyForwarded {
        /// The update's `attested_header.beacon.slot`.
        attested_slot: Slot,
        /// The forwarded update's attested slot.
        forwarded_slot: Slot,
    },
    /// [IGNORE] Received before `get_sync_message_due_ms` into the signature slot (less the
    /// clock disparity allowance): the signature slot's block may not have propagated yet.
    #[error("received at {current_time_ms} ms, before the update is due at {due_time_ms} ms")]
    ReceivedTooEarly {
        /// The update's `signature_slot`.
        signature_slot: Slot,
        /// When it is due: the slot's start plus `get_sync_message_due_ms`.
        due_time_ms: u64,
        /// When it was received.
        current_time_ms: u64,
    },
    /// [IGNORE] The node has no update of its own to compare with (the light-client server is
    /// off, or has derived none yet).
    #[error("no locally computed update")]
    NoLocalUpdate,
    /// [IGNORE] The update is not the one this node computed.
    #[error("the update does not match the locally computed one")]
    NotLocalUpdate,
    /// [IGNORE] The node's own update could not be read (a `ChainError` reading it, or a
    /// `LightClientError` bringing it to the latest format).
    #[error("internal: {0}")]
    Internal(#[source] InternalError),
}

impl LightClientGossipError {
    /// ACCEPT / IGNORE / REJECT: always IGNORE (see the module documentation).
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::FinalityUpdateAlreadyForwarded { .. }
            | Self::OptimisticUpdateAlreadyForwarded { .. }
            | Self::ReceivedTooEarly { .. }
            | Self::NoLocalUpdate
            | Self::NotLocalUpdate
            | Self::Internal(_) => Verdict::Ignore,
        }
    }
}

/// A finality update that passed gossip validation, recorded as forwarded.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedLightClientFinalityUpdate<E: EthSpec>(pub Arc<LightClientFinalityUpdate<E>>);

/// An optimistic update that passed gossip validation, recorded as forwarded.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedLightClientOptimisticUpdate<E: EthSpec>(pub Arc<LightClientOptimisticUpdate<E>>);

/// What orders finality updates on gossip: the finalized header's slot, then whether the sync
/// aggregate has a supermajority (more than 2/3 of the committee).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinalityRank {
    /// `finalized_header.beacon.slot`.
    pub finalized_slot: Slot,
    /// `sum(sync_committee_bits) * 3 > len(sync_committee_bits) * 2`.
    pub supermajority: bool,
}

impl FinalityRank {
    /// Whether an update of this rank may be forwarded after one of rank `forwarded`: its
    /// finalized header is later, or at the same slot it has a supermajority the forwarded one
    /// lacked.
    pub fn is_newer_than(&self, forwarded: Option<&FinalityRank>) -> bool {
        forwarded.is_none_or(|f| {
            self.finalized_slot > f.finalized_slot
                || (self.finalized_slot == f.finalized_slot
                    && self.supermajority
                    && !f.supermajority)
        })
    }
}

/// The [`FinalityRank`] of a latest-format finality update.
pub fn finality_rank<E: EthSpec>(update: &FinalityUpdate<E>) -> FinalityRank {
    let bits = &update.sync_aggregate.sync_committee_bits;
    FinalityRank {
        finalized_slot: update.finalized_header.beacon.slot,
        supermajority: bits.num_set_bits() * 3 > bits.len() * 2,
    }
}

/// What orders optimistic updates on gossip: `attested_header.beacon.slot`.
pub fn optimistic_rank<E: EthSpec>(update: &OptimisticUpdate<E>) -> Slot {
    update.attested_header.beacon.slot
}

/// The [`FinalityRank`] of a finality update of any fork (`None` for one whose finality branch
/// does not fit the latest format).
pub fn light_client_finality_update_rank<E: EthSpec>(
    update: &LightClientFinalityUpdate<E>,
) -> Option<FinalityRank> {
    upgrade_lc_finality_update_to_latest(update)
        .ok()
        .map(|latest| finality_rank(&latest))
}

/// `attested_header.beacon.slot` of an optimistic update of any fork (`None` for one the
/// latest format does not take: Gloas's).
pub fn light_client_optimistic_update_rank<E: EthSpec>(
    update: &LightClientOptimisticUpdate<E>,
) -> Option<Slot> {
    upgrade_lc_optimistic_update_to_latest(update)
        .ok()
        .map(|latest| optimistic_rank(&latest))
}

/// The newest finality and optimistic updates forwarded on the network (accepted from gossip or
/// published by this node): the "previously forwarded" of the gossip rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardedLightClientUpdates {
    finality: Option<FinalityRank>,
    optimistic: Option<Slot>,
}

impl ForwardedLightClientUpdates {
    /// [IGNORE] unless a finality update of `rank` is newer than every one forwarded.
    pub fn check_finality(&self, rank: &FinalityRank) -> Result<(), LightClientGossipError> {
        match &self.finality {
            Some(f) if !rank.is_newer_than(Some(f)) => {
                Err(LightClientGossipError::FinalityUpdateAlreadyForwarded {
                    finalized_slot: rank.finalized_slot,
                    supermajority: rank.supermajority,
                    forwarded_slot: f.finalized_slot,
                    forwarded_supermajority: f.supermajority,
                })
            }
            _ => Ok(()),
        }
    }

    /// [IGNORE] unless an optimistic update attested at `attested_slot` is newer than every one
    /// forwarded.
    pub fn check_optimistic(&self, attested_slot: Slot) -> Result<(), LightClientGossipError> {
        match self.optimistic {
            Some(forwarded) if attested_slot <= forwarded => {
                Err(LightClientGossipError::OptimisticUpdateAlreadyForwarded {
                    attested_slot,
                    forwarded_slot: forwarded,
                })
            }
            _ => Ok(()),
        }
    }

    /// Checks and records a finality update as forwarded, in one step (two copies racing on
    /// two workers are not both forwarded).
    pub fn forward_finality(&mut self, rank: FinalityRank) -> Result<(), LightClientGossipError> {
        self.check_finality(&rank)?;
        self.finality = Some(rank);
        Ok(())
    }

    /// Checks and records an optimistic update as forwarded, in one step.
    pub fn forward_optimistic(
        &mut self,
        attested_slot: Slot,
    ) -> Result<(), LightClientGossipError> {
        self.check_optimistic(attested_slot)?;
        self.optimistic = Some(attested_slot);
        Ok(())
    }
}

/// `get_slot_component_duration_ms(basis_points)`: that fraction of a slot, in milliseconds.
///
/// [spec]: phase0/validator.md#get_slot_component_duration_ms
pub fn get_slot_component_duration_ms(slot_duration_ms: u64, basis_points: u64) -> u64 {
    basis_points.saturating_mul(slot_duration_ms) / BASIS_POINTS
}

fn internal(e: impl std::error::Error + Send + Sync + 'static) -> LightClientGossipError {
    LightClientGossipError::Internal(InternalError::new(e))
}

impl<E: EthSpec> BeaconChain<E> {
    /// `get_sync_message_due_ms()`: how far into a slot its sync committee messages are due.
    ///
    /// [spec]: altair/validator.md#sync-committee
    pub fn get_sync_message_due_ms(&self) -> u64 {
        get_slot_component_duration_ms(
            self.spec().slot_duration_ms,
            self.spec().sync_message_due_bps,
        )
    }

    /// When a light-client update signed at `signature_slot` may be forwarded: the signature
    /// slot's start plus `get_sync_message_due_ms()`. A node publishes its own updates no
    /// earlier.
    pub fn light_client_update_due_ms(&self, signature_slot: Slot) -> u64 {
        self.compute_time_at_slot_ms(signature_slot)
            .saturating_add(self.get_sync_message_due_ms())
    }

    /// [IGNORE] unless `get_sync_message_due_ms()` (with the clock disparity allowance) has
    /// passed since the start of `signature_slot`.
    fn check_light_client_update_due(
        &self,
        signature_slot: Slot,
        current_time_ms: u64,
    ) -> Result<(), LightClientGossipError> {
        let due_time_ms = self.light_client_update_due_ms(signature_slot);
        if current_time_ms.saturating_add(self.spec().maximum_gossip_clock_disparity) < due_time_ms
        {
            return Err(LightClientGossipError::ReceivedTooEarly {
                signature_slot,
                due_time_ms,
                current_time_ms,
            });
        }
        Ok(())
    }

    /// The gossip rules of `light_client_finality_update`, in the spec's order; on success the
    /// update is recorded as forwarded.
    ///
    /// [spec]: altair/light-client/p2p-interface.md#light_client_finality_update
    pub fn validate_light_client_finality_update(
        &self,
        update: Arc<LightClientFinalityUpdate<E>>,
        current_time_ms: u64,
    ) -> Result<VerifiedLightClientFinalityUpdate<E>, LightClientGossipError> {
        // A container whose branch does not normalise is not ours either.
        let latest = upgrade_lc_finality_update_to_latest(&update)
            .map_err(|_| LightClientGossipError::NotLocalUpdate)?;
        let rank = finality_rank(&latest);
        // [IGNORE] The finalized header is newer than every one forwarded (or gained a
        // supermajority at the same slot).
        self.light_client_server
            .forwarded
            .lock()
            .check_finality(&rank)?;
        // [IGNORE] Received once the signature slot's sync messages were due.
        self.check_light_client_update_due(latest.signature_slot, current_time_ms)?;
        // [IGNORE] It matches the locally computed one exactly.
        let local = self
            .light_client_finality_update()
            .map_err(internal)?
            .ok_or(LightClientGossipError::NoLocalUpdate)?;
        if local != *update {
            return Err(LightClientGossipError::NotLocalUpdate);
        }
        self.light_client_server
            .forwarded
            .lock()
            .forward_finality(rank)?;
        Ok(VerifiedLightClientFinalityUpdate(update))
    }

    /// The gossip rules of `light_client_optimistic_update`, in the spec's order; on success the
    /// update is recorded as forwarded.
    ///
    /// [spec]: altair/light-client/p2p-interface.md#light_client_optimistic_update
    pub fn validate_light_client_optimistic_update(
        &self,
        update: Arc<LightClientOptimisticUpdate<E>>,
        current_time_ms: u64,
    ) -> Result<VerifiedLightClientOptimisticUpdate<E>, LightClientGossipError> {
        // An update the latest format does not take (Gloas's) is not ours either.
        let latest = upgrade_lc_optimistic_update_to_latest(&update)
            .map_err(|_| LightClientGossipError::NotLocalUpdate)?;
        let attested_slot = optimistic_rank(&latest);
        // [IGNORE] The attested header is after every one forwarded.
        self.light_client_server
            .forwarded
            .lock()
            .check_optimistic(attested_slot)?;
        // [IGNORE] Received once the signature slot's sync messages were due.
        self.check_light_client_update_due(latest.signature_slot, current_time_ms)?;
        // [IGNORE] It matches the locally computed one exactly.
        let local = self
            .light_client_optimistic_update()
            .map_err(internal)?
            .ok_or(LightClientGossipError::NoLocalUpdate)?;
        if local != *update {
            return Err(LightClientGossipError::NotLocalUpdate);
        }
        self.light_client_server
            .forwarded
            .lock()
            .forward_optimistic(attested_slot)?;
        Ok(VerifiedLightClientOptimisticUpdate(update))
    }

    /// Records the node's own finality update as forwarded before it is published; an error
    /// when one as new was forwarded already (then it is not published).
    pub fn forward_own_light_client_finality_update(
        &self,
        update: &LightClientFinalityUpdate<E>,
    ) -> Result<(), LightClientGossipError> {
        let latest = upgrade_lc_finality_update_to_latest(update).map_err(internal)?;
        self.light_client_server
            .forwarded
            .lock()
            .forward_finality(finality_rank(&latest))
    }

    /// Records the node's own optimistic update as forwarded before it is published; an error
    /// when one as new was forwarded already.
    pub fn forward_own_light_client_optimistic_update(
        &self,
        update: &LightClientOptimisticUpdate<E>,
    ) -> Result<(), LightClientGossipError> {
        let latest = upgrade_lc_optimistic_update_to_latest(update).map_err(internal)?;
        self.light_client_server
            .forwarded
            .lock()
            .forward_optimistic(optimistic_rank(&latest))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use state_harness::{AttestationSpec, BlockContents, build_block};
    use state_processing::CachedBeaconState;
    use state_processing::genesis::{interop_genesis_block, interop_genesis_state};
    use state_processing::per_block::AlwaysValid;
    use store::{Store, StoreConfig};
    use types::{ChainSpec, ForkName, MinimalEthSpec, Root};

    use super::*;
    use crate::{ChainConfig, ExecutionStatus, ManualSlotClock};

    type E = MinimalEthSpec;

    const GENESIS_TIME: u64 = 1_600_000_000;

    /// A chain from an interop genesis with `blocks` blocks of full sync participation (the
    /// light-client server on unless `disabled`), and its temporary directory.
    fn chain(blocks: Slot, disabled: bool) -> (BeaconChain<E>, tempfile::TempDir) {
        let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
        let genesis =
            interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec).unwrap();
        let mut genesis = CachedBeaconState::new(genesis);
        let block = interop_genesis_block::<E>(genesis.hash_tree_root().unwrap());
        let dir = tempfile::tempdir().unwrap();
        let store = Store::<E>::open(
            &dir.path().join("db"),
            (*spec).clone(),
            StoreConfig::default(),
        )
        .unwrap();
        let clock = Arc::new(ManualSlotClock::new(GENESIS_TIME * 1000));
        let threads = Arc::new(
            fork_choice::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap(),
        );
        let chain = BeaconChain::from_anchor(
            Arc::new(store),
            genesis.clone(),
            block,
            spec.clone(),
            clock.clone(),
            threads,
            ChainConfig {
                disable_light_client_server: disabled,
                ..ChainConfig::default()
            },
        )
        .unwrap();
        let mut parent = genesis;
        for slot in 1..=blocks {
            let contents = BlockContents {
                attestations: vec![AttestationSpec::whole_slot(slot - 1)],
                ..BlockContents::default()
            };
            let built = build_block(&parent, slot, &contents, &spec).unwrap();
            clock.set_ms(chain.compute_time_at_slot_ms(slot) + 500);
            chain
                .import_block(
                    Arc::new(built.block),
                    &[],
                    &AlwaysValid,
                    ExecutionStatus::Valid,
                )
                .unwrap();
            parent = built.post;
        }
        (chain, dir)
    }

    fn rank(finalized_slot: Slot, supermajority: bool) -> FinalityRank {
        FinalityRank {
            finalized_slot,
            supermajority,
        }
    }

    #[test]
    fn finality_updates_are_forwarded_only_when_later_or_newly_signed_by_a_supermajority() {
        let mut forwarded = ForwardedLightClientUpdates::default();
        forwarded.forward_finality(rank(8, false)).unwrap();
        // The same finalized header without a supermajority, or an older one: IGNORE.
        for older in [rank(8, false), rank(7, true)] {
            let e = forwarded.forward_finality(older).unwrap_err();
            assert!(
                matches!(
                    e,
                    LightClientGossipError::FinalityUpdateAlreadyForwarded { .. }
                ),
                "{e}"
            );
            assert_eq!(e.verdict(), Verdict::Ignore);
        }
        // The same header gaining a supermajority is forwarded, once.
        forwarded.forward_finality(rank(8, true)).unwrap();
        assert!(forwarded.forward_finality(rank(8, true)).is_err());
        // A later finalized header, with or without a supermajority.
        forwarded.forward_finality(rank(16, false)).unwrap();
    }

    #[test]
    fn optimistic_updates_are_forwarded_only_when_attested_later() {
        let mut forwarded = ForwardedLightClientUpdates::default();
        forwarded.forward_optimistic(5).unwrap();
        for not_later in [5, 4] {
            assert_eq!(
                forwarded.forward_optimistic(not_later),
                Err(LightClientGossipError::OptimisticUpdateAlreadyForwarded {
                    attested_slot: not_later,
                    forwarded_slot: 5,
                })
            );
        }
        forwarded.forward_optimistic(6).unwrap();
    }

    #[test]
    fn sync_messages_are_due_a_third_into_the_slot() {
        let (chain, _dir) = chain(0, false);
        // 3333 basis points of a 6-second slot.
        assert_eq!(chain.get_sync_message_due_ms(), 1999);
        assert_eq!(
            chain.light_client_update_due_ms(2),
            chain.compute_time_at_slot_ms(2) + 1999
        );
    }

    #[test]
    fn the_local_optimistic_update_is_accepted_once_it_is_due_and_only_once() {
        let (chain, _dir) = chain(4, false);
        let local = Arc::new(chain.light_client_optimistic_update().unwrap().unwrap());
        let due = chain.light_client_update_due_ms(local.signature_slot());
        let disparity = chain.spec().maximum_gossip_clock_disparity;
        // Early, even with the clock disparity allowance: IGNORE.
        let e = chain
            .validate_light_client_optimistic_update(local.clone(), due - disparity - 1)
            .unwrap_err();
        assert!(
            matches!(e, LightClientGossipError::ReceivedTooEarly { .. }),
            "{e}"
        );
        // Another update (a different signature): not ours.
        let mut other = (*local).clone();
        match &mut other {
            types::LightClientOptimisticUpdate::Fulu(u) => {
                u.sync_aggregate.sync_committee_bits.set(0, false).unwrap();
            }
            fork @ (types::LightClientOptimisticUpdate::Altair(_)
            | types::LightClientOptimisticUpdate::Bellatrix(_)
            | types::LightClientOptimisticUpdate::Capella(_)
            | types::LightClientOptimisticUpdate::Deneb(_)
            | types::LightClientOptimisticUpdate::Electra(_)
            | types::LightClientOptimisticUpdate::Gloas(_)) => {
                panic!("a Fulu chain's update is Fulu: {fork:?}")
            }
        }
        assert_eq!(
            chain.validate_light_client_optimistic_update(Arc::new(other), due),
            Err(LightClientGossipError::NotLocalUpdate)
        );
        // Within the disparity allowance: accepted, and recorded as forwarded.
        let verified = chain
            .validate_light_client_optimistic_update(local.clone(), due - disparity)
            .unwrap();
        assert_eq!(verified.0, local);
        assert!(matches!(
            chain.validate_light_client_optimistic_update(local, due),
            Err(LightClientGossipError::OptimisticUpdateAlreadyForwarded { .. })
        ));
    }

    #[test]
    fn the_local_finality_update_is_accepted_once_and_our_own_is_then_not_published() {
        let (chain, _dir) = chain(4, false);
        let local = Arc::new(chain.light_client_finality_update().unwrap().unwrap());
        let due = chain.light_client_update_due_ms(local.signature_slot());
        assert!(matches!(
            chain.validate_light_client_finality_update(local.clone(), due - 1_000),
            Err(LightClientGossipError::ReceivedTooEarly { .. })
        ));
        let mut other = (*local).clone();
        match &mut other {
            types::LightClientFinalityUpdate::Fulu(u) => {
                u.finality_branch[1] = Root::repeat_byte(0x11)
            }
            fork @ (types::LightClientFinalityUpdate::Altair(_)
            | types::LightClientFinalityUpdate::Bellatrix(_)
            | types::LightClientFinalityUpdate::Capella(_)
            | types::LightClientFinalityUpdate::Deneb(_)
            | types::LightClientFinalityUpdate::Electra(_)
            | types::LightClientFinalityUpdate::Gloas(_)) => {
                panic!("a Fulu chain's update is Fulu: {fork:?}")
            }
        }
        assert_eq!(
            chain.validate_light_client_finality_update(Arc::new(other), due),
            Err(LightClientGossipError::NotLocalUpdate)
        );
        chain
            .validate_light_client_finality_update(local.clone(), due)
            .unwrap();
        // Forwarded from a peer: the node does not publish the same one again.
        assert!(matches!(
            chain.forward_own_light_client_finality_update(&local),
            Err(LightClientGossipError::FinalityUpdateAlreadyForwarded { .. })
        ));
    }

    #[test]
    fn a_node_without_a_server_has_no_local_update_to_accept() {
        let (with, _dir) = chain(3, false);
        let update = Arc::new(with.light_client_optimistic_update().unwrap().unwrap());
        let finality = Arc::new(with.light_client_finality_update().unwrap().unwrap());
        let (without, _dir2) = chain(3, true);
        let due = without.light_client_update_due_ms(update.signature_slot());
        assert_eq!(
            without.validate_light_client_optimistic_update(update, due),
            Err(LightClientGossipError::NoLocalUpdate)
        );
        assert_eq!(
            without.validate_light_client_finality_update(finality, due),
            Err(LightClientGossipError::NoLocalUpdate)
        );
    }
}
