//! `proposer_preferences` (Gloas): a proposer's signed fee recipient and gas limit target for
//! a slot it will propose in, which builders' bids must match.
//!
//! A message is checked against the proposer lookahead of its dependent block (the last block
//! before the epoch whose RANDAO seeds the proposal slot's shuffling): the slot not started and
//! its proposer already known, the dependent block seen, imported and a possible dependent
//! block for that epoch, the validator the lookahead's proposer of the slot, the signature.
//! The first valid preferences per `(dependent root, proposal slot)` are kept in the
//! [`ProposerPreferencesStore`], which the bid rules read (`execution_payload_bid`) and which
//! forgets a slot once it has started.
//!
//! The rules are those of the 1.7.0b4 vectors, which differ from the consensus-specs text of
//! the same time in two places: a proposal slot before the Gloas fork is IGNOREd, and the
//! dependent block may be at most `compute_shuffling_dependent_slot` (the genesis block for the
//! first two epochs, where the lookahead epoch's start is the genesis slot itself).
//!
//! [spec]: gloas/p2p-interface.md#new-proposer_preferences

use std::collections::{BTreeMap, HashMap};

use types::{
    EthSpec, Root, Slot, ValidatorIndex,
    gloas::{ProposerPreferences, SignedProposerPreferences},
    phase0::Checkpoint,
    signing,
};

use super::{Verdict, domain_at, head_pubkey, verify_one};
use crate::chain::BeaconChain;
use crate::internal_error::InternalError;

/// The most dependent roots whose preferences are kept for one proposal slot: each needs the
/// proposer's signature over a block that may be the slot's dependent block, so honest ones
/// are one per fork; past this a slot takes no more (IGNOREd, not forwarded).
pub const MAX_PREFERENCES_PER_SLOT: usize = 16;

/// Why gossip proposer preferences are not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProposerPreferencesGossipError {
    /// [IGNORE] The proposal slot is before the Gloas fork (no bid is made for it).
    #[error("proposal slot {slot} is before the Gloas fork epoch {fork_epoch}")]
    PreGloasSlot {
        /// `preferences.proposal_slot`.
        slot: Slot,
        /// `GLOAS_FORK_EPOCH`.
        fork_epoch: u64,
    },
    /// [IGNORE] The proposal slot has started (with the clock disparity).
    #[error("proposal slot {0} has already started")]
    SlotStarted(Slot),
    /// [IGNORE] The proposer of the slot is not known yet: the lookahead epoch has not started.
    #[error("the proposer of slot {0} is not known yet")]
    ProposerNotYetKnown(Slot),
    /// [IGNORE] The dependent block has not been seen (it may be queued until it is).
    #[error("dependent block {0} has not been seen")]
    UnknownDependentBlock(Root),
    /// [IGNORE] Preferences for this dependent root and slot were seen already.
    #[error("preferences for slot {slot} on dependent root {dependent_root} were seen already")]
    AlreadySeen {
        /// `preferences.dependent_root`.
        dependent_root: Root,
        /// `preferences.proposal_slot`.
        slot: Slot,
    },
    /// [IGNORE] The dependent block has no post-state: still being imported, or failed.
    #[error("dependent block {0} has no post-state")]
    DependentBlockNotImported(Root),
    /// [REJECT] The dependent block is after the shuffling's dependent slot: it cannot be the
    /// block the proposal slot's proposer was chosen from.
    #[error("dependent block at slot {block_slot}, after the dependent slot {dependent_slot}")]
    DependentBlockTooLate {
        /// The dependent block's slot.
        block_slot: Slot,
        /// `compute_shuffling_dependent_slot(proposal_epoch)`.
        dependent_slot: Slot,
    },
    /// [IGNORE] The dependent block is not a possible dependent block of the lookahead epoch on
    /// any branch (`is_valid_dependent_root`).
    #[error("block {0} is not a possible dependent block")]
    NotPossibleDependentRoot(Root),
    /// [REJECT] The validator is not the lookahead's proposer of the slot.
    #[error("validator {found} is not the proposer {expected} of slot {slot}")]
    WrongProposer {
        /// The proposal slot.
        slot: Slot,
        /// The lookahead's proposer.
        expected: ValidatorIndex,
        /// `preferences.validator_index`.
        found: ValidatorIndex,
    },
    /// [REJECT] The signature is invalid.
    #[error("invalid proposer preferences signature")]
    InvalidSignature,
    /// [IGNORE] The store holds [`MAX_PREFERENCES_PER_SLOT`] dependent roots for the slot.
    #[error("the preferences store is full for slot {0}")]
    StoreFull(Slot),
    /// [IGNORE] The node could not compute what a rule needs (the dependent block's state at
    /// the lookahead epoch): ours, not the sender's.
    #[error("internal: {0}")]
    Internal(#[source] InternalError),
}

impl ProposerPreferencesGossipError {
    /// ACCEPT / IGNORE / REJECT.
    pub fn verdict(&self) -> Verdict {
        match self {
            Self::PreGloasSlot { .. }
            | Self::SlotStarted(_)
            | Self::ProposerNotYetKnown(_)
            | Self::UnknownDependentBlock(_)
            | Self::AlreadySeen { .. }
            | Self::DependentBlockNotImported(_)
            | Self::NotPossibleDependentRoot(_)
            | Self::StoreFull(_)
            | Self::Internal(_) => Verdict::Ignore,
            Self::DependentBlockTooLate { .. }
            | Self::WrongProposer { .. }
            | Self::InvalidSignature => Verdict::Reject,
        }
    }
}

/// Proposer preferences that passed gossip validation (and are kept in the store).
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedProposerPreferences(pub SignedProposerPreferences);

/// The spec's `seen.proposer_preferences`: the first valid preferences per `(dependent root,
/// proposal slot)`, by slot, at most [`MAX_PREFERENCES_PER_SLOT`] a slot; a slot is forgotten
/// once it has started ([`Self::prune`]).
#[derive(Debug, Default)]
pub struct ProposerPreferencesStore {
    by_slot: BTreeMap<Slot, HashMap<Root, ProposerPreferences>>,
}

impl ProposerPreferencesStore {
    /// The preferences kept for `(dependent_root, slot)`.
    pub fn get(&self, dependent_root: &Root, slot: Slot) -> Option<&ProposerPreferences> {
        self.by_slot.get(&slot)?.get(dependent_root)
    }

    /// Whether preferences are kept for `(dependent_root, slot)`.
    pub fn contains(&self, dependent_root: &Root, slot: Slot) -> bool {
        self.get(dependent_root, slot).is_some()
    }

    /// Keeps `preferences` unless some are kept for its key already (`Ok(false)`); the error
    /// when its slot is full.
    pub fn insert(
        &mut self,
        preferences: ProposerPreferences,
    ) -> Result<bool, ProposerPreferencesGossipError> {
        let slot = preferences.proposal_slot;
        let roots = self.by_slot.entry(slot).or_default();
        if roots.contains_key(&preferences.dependent_root) {
            return Ok(false);
        }
        if roots.len() >= MAX_PREFERENCES_PER_SLOT {
            return Err(ProposerPreferencesGossipError::StoreFull(slot));
        }
        roots.insert(preferences.dependent_root, preferences);
        Ok(true)
    }

    /// Forgets the slots before `current_slot` (their proposals have started: no bid is made
    /// for them any more).
    pub fn prune(&mut self, current_slot: Slot) {
        self.by_slot = self.by_slot.split_off(&current_slot);
    }

    /// The number of preferences kept.
    pub fn len(&self) -> usize {
        self.by_slot.values().map(HashMap::len).sum()
    }

    /// Whether none are kept.
    pub fn is_empty(&self) -> bool {
        self.by_slot.is_empty()
    }
}

/// `compute_shuffling_dependent_slot(epoch)`: the slot of the last block before the epoch whose
/// RANDAO mix seeds `epoch`'s shuffling (the genesis slot for the first epochs).
///
/// [spec]: phase0/fork-choice.md#compute_shuffling_dependent_slot
pub fn compute_shuffling_dependent_slot<E: EthSpec>(epoch: u64) -> Slot {
    match epoch.checked_sub(E::MIN_SEED_LOOKAHEAD) {
        Some(lookahead_epoch) if lookahead_epoch > 0 => lookahead_epoch * E::slots_per_epoch() - 1,
        Some(_) | None => 0,
    }
}

/// The rules on the proposal slot's timing: after the Gloas fork, not started (with the clock
/// disparity), and its proposer known (the lookahead epoch started, with the disparity).
/// `genesis_ms` is the genesis time in milliseconds.
pub fn check_proposal_timing<E: EthSpec>(
    spec: &types::ChainSpec,
    genesis_ms: u64,
    slot: Slot,
    current_time_ms: u64,
) -> Result<(), ProposerPreferencesGossipError> {
    let spe = E::slots_per_epoch();
    let time_at = |s: Slot| genesis_ms.saturating_add(s.saturating_mul(spec.slot_duration_ms));
    let disparity = spec.maximum_gossip_clock_disparity;
    let proposal_epoch = slot / spe;
    let fork_epoch = spec.gloas_fork_epoch;
    if proposal_epoch < fork_epoch {
        return Err(ProposerPreferencesGossipError::PreGloasSlot { slot, fork_epoch });
    }
    // `is_past_slot`.
    if current_time_ms > time_at(slot).saturating_add(disparity) {
        return Err(ProposerPreferencesGossipError::SlotStarted(slot));
    }
    // `is_future_slot(lookahead_epoch_start_slot)`.
    let lookahead_start = proposal_epoch.saturating_sub(E::MIN_SEED_LOOKAHEAD) * spe;
    if current_time_ms.saturating_add(disparity) < time_at(lookahead_start) {
        return Err(ProposerPreferencesGossipError::ProposerNotYetKnown(slot));
    }
    Ok(())
}

impl<E: EthSpec> BeaconChain<E> {
    /// `validate_proposer_preferences_gossip(seen, store, signed_proposer_preferences,
    /// current_time_ms)`: the rules in the spec's order (see the module); on success the
    /// preferences are kept for the bids of their slot.
    ///
    /// [spec]: gloas/p2p-interface.md#new-proposer_preferences
    pub fn verify_proposer_preferences_for_gossip(
        &self,
        signed: SignedProposerPreferences,
        current_time_ms: u64,
    ) -> Result<VerifiedProposerPreferences, ProposerPreferencesGossipError> {
        // The previous slot's are kept: a bid for it is still current within the clock
        // disparity at the start of the next.
        let current_slot = self.slot_at_ms(current_time_ms);
        self.proposer_preferences
            .lock()
            .prune(current_slot.saturating_sub(1));
        let preferences = &signed.message;
        let slot = preferences.proposal_slot;
        let dependent_root = preferences.dependent_root;
        let spe = E::slots_per_epoch();
        let proposal_epoch = slot / spe;
        let lookahead_epoch = proposal_epoch.saturating_sub(E::MIN_SEED_LOOKAHEAD);
        let lookahead_start = lookahead_epoch * spe;
        check_proposal_timing::<E>(
            self.spec(),
            self.compute_time_at_slot_ms(0),
            slot,
            current_time_ms,
        )?;
        if !self.is_block_known(&dependent_root) {
            return Err(ProposerPreferencesGossipError::UnknownDependentBlock(
                dependent_root,
            ));
        }
        if self
            .proposer_preferences
            .lock()
            .contains(&dependent_root, slot)
        {
            return Err(ProposerPreferencesGossipError::AlreadySeen {
                dependent_root,
                slot,
            });
        }
        // A block seen but not in fork choice (pending or failed) has no post-state.
        // (Read before fork choice's lock: no other lock is taken under it here.)
        let unimported = self.unimported_block(&dependent_root).is_some();
        let (block_slot, has_late_child) = {
            let fc = self.fork_choice.lock();
            let block_slot = if unimported {
                None
            } else {
                fc.block_slot(&dependent_root)
            };
            let Some(block_slot) = block_slot else {
                return Err(ProposerPreferencesGossipError::DependentBlockNotImported(
                    dependent_root,
                ));
            };
            (
                block_slot,
                fc.has_child_from(&dependent_root, lookahead_start),
            )
        };
        let dependent_slot = compute_shuffling_dependent_slot::<E>(proposal_epoch);
        if block_slot > dependent_slot {
            return Err(ProposerPreferencesGossipError::DependentBlockTooLate {
                block_slot,
                dependent_slot,
            });
        }
        // `is_valid_dependent_root`: on some branch it is (a child at or after the lookahead
        // epoch's start) or could become (the head) the last block before that epoch.
        if !has_late_child && self.head().block_root != dependent_root {
            return Err(ProposerPreferencesGossipError::NotPossibleDependentRoot(
                dependent_root,
            ));
        }
        let lookahead_state = self
            .checkpoint_state_outside_lock(&Checkpoint {
                epoch: lookahead_epoch,
                root: dependent_root,
            })
            .map_err(|e| ProposerPreferencesGossipError::Internal(InternalError::new(e)))?;
        let expected = {
            let view = lookahead_state
                .view()
                .map_err(|e| ProposerPreferencesGossipError::Internal(InternalError::new(e)))?;
            let index = usize::try_from(slot - lookahead_start).unwrap_or(usize::MAX);
            view.proposer_lookahead
                .and_then(|lookahead| lookahead.get(index).copied())
                .ok_or_else(|| {
                    ProposerPreferencesGossipError::Internal(InternalError::new(
                        state_processing::Error::MissingField {
                            field: "proposer_lookahead",
                            fork: view.fork_name,
                        },
                    ))
                })?
        };
        if preferences.validator_index != expected {
            return Err(ProposerPreferencesGossipError::WrongProposer {
                slot,
                expected,
                found: preferences.validator_index,
            });
        }
        let key = head_pubkey(&lookahead_state, expected)
            .ok_or(ProposerPreferencesGossipError::InvalidSignature)?;
        let domain = domain_at(
            self.spec(),
            self.genesis_validators_root(),
            signing::DOMAIN_PROPOSER_PREFERENCES,
            proposal_epoch,
        );
        if !verify_one(
            &key,
            signing::compute_signing_root(preferences, domain),
            &signed.signature,
        ) {
            return Err(ProposerPreferencesGossipError::InvalidSignature);
        }
        // A concurrent copy that got here first wins.
        if !self
            .proposer_preferences
            .lock()
            .insert(preferences.clone())?
        {
            return Err(ProposerPreferencesGossipError::AlreadySeen {
                dependent_root,
                slot,
            });
        }
        Ok(VerifiedProposerPreferences(signed))
    }

    /// The preferences kept for the proposal at `slot` on the shuffling of `dependent_root`.
    pub fn proposer_preferences(
        &self,
        dependent_root: &Root,
        slot: Slot,
    ) -> Option<ProposerPreferences> {
        self.proposer_preferences
            .lock()
            .get(dependent_root, slot)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec;

    fn preferences(slot: Slot, root: u8) -> ProposerPreferences {
        ProposerPreferences {
            dependent_root: Root::repeat_byte(root),
            proposal_slot: slot,
            validator_index: 1,
            fee_recipient: Default::default(),
            target_gas_limit: 30_000_000,
        }
    }

    #[test]
    fn the_store_keeps_the_first_per_key_bounds_a_slot_and_forgets_started_slots() {
        let mut store = ProposerPreferencesStore::default();
        assert_eq!(store.insert(preferences(10, 1)), Ok(true));
        let mut second = preferences(10, 1);
        second.target_gas_limit = 1;
        assert_eq!(store.insert(second), Ok(false));
        assert_eq!(
            store
                .get(&Root::repeat_byte(1), 10)
                .map(|p| p.target_gas_limit),
            Some(30_000_000)
        );
        for root in 2..=MAX_PREFERENCES_PER_SLOT as u8 {
            assert_eq!(store.insert(preferences(10, root)), Ok(true));
        }
        let full = store.insert(preferences(10, 200)).unwrap_err();
        assert_eq!(full, ProposerPreferencesGossipError::StoreFull(10));
        assert_eq!(full.verdict(), Verdict::Ignore);
        assert_eq!(store.insert(preferences(11, 1)), Ok(true));
        store.prune(11);
        assert!(!store.contains(&Root::repeat_byte(1), 10));
        assert!(store.contains(&Root::repeat_byte(1), 11));
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn a_slot_before_the_fork_started_or_beyond_the_lookahead_is_ignored() {
        let mut spec = types::ChainSpec::minimal();
        spec.gloas_fork_epoch = 1;
        let spe = MinimalEthSpec::slots_per_epoch();
        let ms = spec.slot_duration_ms;
        let disparity = spec.maximum_gossip_clock_disparity;
        let check = |slot, now| check_proposal_timing::<MinimalEthSpec>(&spec, 0, slot, now);
        assert_eq!(
            check(spe - 1, 0),
            Err(ProposerPreferencesGossipError::PreGloasSlot {
                slot: spe - 1,
                fork_epoch: 1
            })
        );
        assert_eq!(check(spe, 0), Ok(()));
        assert_eq!(check(spe, spe * ms + disparity), Ok(()));
        assert_eq!(
            check(spe, spe * ms + disparity + 1),
            Err(ProposerPreferencesGossipError::SlotStarted(spe))
        );
        // Epoch 3's proposers are known from epoch 2 on (minus the disparity).
        assert_eq!(
            check(3 * spe, 2 * spe * ms - disparity - 1),
            Err(ProposerPreferencesGossipError::ProposerNotYetKnown(3 * spe))
        );
        assert_eq!(check(3 * spe, 2 * spe * ms - disparity), Ok(()));
        for e in [
            ProposerPreferencesGossipError::PreGloasSlot {
                slot: 0,
                fork_epoch: 1,
            },
            ProposerPreferencesGossipError::SlotStarted(0),
            ProposerPreferencesGossipError::ProposerNotYetKnown(0),
        ] {
            assert_eq!(e.verdict(), Verdict::Ignore);
        }
    }

    #[test]
    fn the_dependent_slot_is_genesis_for_the_first_epochs_then_before_the_lookahead_epoch() {
        let spe = MinimalEthSpec::slots_per_epoch();
        assert_eq!(compute_shuffling_dependent_slot::<MinimalEthSpec>(0), 0);
        assert_eq!(compute_shuffling_dependent_slot::<MinimalEthSpec>(1), 0);
        assert_eq!(
            compute_shuffling_dependent_slot::<MinimalEthSpec>(2),
            spe - 1
        );
        assert_eq!(
            compute_shuffling_dependent_slot::<MinimalEthSpec>(5),
            4 * spe - 1
        );
    }
}
