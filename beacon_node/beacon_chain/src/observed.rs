//! The "first one seen" caches behind the p2p spec's IGNORE rules: a gossip message that repeats
//! one already accepted (same proposer and slot, same attester and target epoch, …) is ignored
//! without verifying its signature again.
//!
//! Each cache keeps a bounded window (slots since finalization, or a few epochs) and refuses a
//! key outside it with a typed error, so a peer cannot grow one by sending far-future or
//! long-finalized keys. Callers observe a key only after the message passed the checks that
//! make it count (a valid signature), as the spec's "first valid … received" reads.
//!
//! [spec]: fulu/p2p-interface.md#global-topics

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hash;

use types::{Epoch, Root, Slot, ValidatorIndex};

/// A key the cache will not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObserveError {
    /// Older than the cache's window (finalized or pruned): the message is stale.
    #[error("{what} {value} is below the observed window, which starts at {lowest}")]
    TooOld {
        /// "slot" or "epoch".
        what: &'static str,
        /// The message's slot or epoch.
        value: u64,
        /// The lowest slot or epoch still held.
        lowest: u64,
    },
    /// Further ahead than the window reaches: the message is from the future.
    #[error("{what} {value} is beyond the observed window, which ends at {highest}")]
    TooFarAhead {
        /// "slot" or "epoch".
        what: &'static str,
        /// The message's slot or epoch.
        value: u64,
        /// The highest slot or epoch the cache accepts now.
        highest: u64,
    },
    /// A validator index beyond the cache's bound (the caller checks indices against the state
    /// first; this keeps the bitsets' memory bounded whatever happens).
    #[error("validator index {index} is beyond the observed caches' bound of {limit}")]
    IndexOutOfRange {
        /// The index.
        index: ValidatorIndex,
        /// The bound.
        limit: u64,
    },
}

/// The range of slots or epochs a cache holds: `[lowest, lowest + len)`. It only moves forward.
#[derive(Debug, Clone, Copy)]
struct Window {
    lowest: u64,
    len: u64,
    what: &'static str,
}

impl Window {
    fn new(len: u64, what: &'static str) -> Self {
        Self {
            lowest: 0,
            len: len.max(1),
            what,
        }
    }

    fn check(&self, value: u64) -> Result<(), ObserveError> {
        if value < self.lowest {
            return Err(ObserveError::TooOld {
                what: self.what,
                value,
                lowest: self.lowest,
            });
        }
        let highest = self.lowest.saturating_add(self.len - 1);
        if value > highest {
            return Err(ObserveError::TooFarAhead {
                what: self.what,
                value,
                highest,
            });
        }
        Ok(())
    }

    /// Moves the start to `lowest` unless that is behind it; returns the start.
    fn advance(&mut self, lowest: u64) -> u64 {
        self.lowest = lowest.max(self.lowest);
        self.lowest
    }
}

/// Validators seen once per epoch: attesters by target epoch (`beacon_attestation_{subnet}`:
/// "no other valid attestation … with an identical `attestation.data.target.epoch` and
/// participating validator index") and aggregators by target epoch
/// (`beacon_aggregate_and_proof`).
///
/// One bitset per epoch in `[lowest, lowest + epochs)`; 1,000,000 validators cost 125 KB per
/// epoch.
#[derive(Debug)]
pub struct ObservedValidators {
    epochs: BTreeMap<Epoch, Vec<u64>>,
    window: Window,
    max_index: u64,
}

impl ObservedValidators {
    /// A cache holding `window` epochs (at least 1) for indices below `max_index`.
    pub fn new(window: u64, max_index: u64) -> Self {
        Self {
            epochs: BTreeMap::new(),
            window: Window::new(window, "epoch"),
            max_index,
        }
    }

    fn check(&self, epoch: Epoch, index: ValidatorIndex) -> Result<(), ObserveError> {
        if index >= self.max_index {
            return Err(ObserveError::IndexOutOfRange {
                index,
                limit: self.max_index,
            });
        }
        self.window.check(epoch)
    }

    /// Records `index` for `epoch`; `true` if it had been recorded already.
    pub fn observe(&mut self, epoch: Epoch, index: ValidatorIndex) -> Result<bool, ObserveError> {
        self.check(epoch, index)?;
        let bits = self.epochs.entry(epoch).or_default();
        let (word, bit) = ((index / 64) as usize, index % 64);
        if bits.len() <= word {
            bits.resize(word + 1, 0);
        }
        let seen = bits[word] & (1 << bit) != 0;
        bits[word] |= 1 << bit;
        Ok(seen)
    }

    /// Whether `index` was recorded for `epoch`.
    pub fn is_known(&self, epoch: Epoch, index: ValidatorIndex) -> Result<bool, ObserveError> {
        self.check(epoch, index)?;
        Ok(self.epochs.get(&epoch).is_some_and(|bits| {
            bits.get((index / 64) as usize)
                .is_some_and(|w| w & (1 << (index % 64)) != 0)
        }))
    }

    /// Moves the window so that it ends one epoch after `current_epoch` (gossip accepts the
    /// current and previous target epochs, and the next within the clock disparity), dropping
    /// older epochs.
    pub fn prune(&mut self, current_epoch: Epoch) {
        let lowest = self
            .window
            .advance((current_epoch + 2).saturating_sub(self.window.len));
        self.epochs = self.epochs.split_off(&lowest);
    }

    /// Epochs with at least one observation.
    pub fn epochs_held(&self) -> usize {
        self.epochs.len()
    }
}

/// Keys seen once per slot, for slots after finalization and not too far ahead: column
/// sidecars by `(proposer_index, column index)` ("the first sidecar for the tuple
/// `(block_header.slot, block_header.proposer_index, sidecar.index)`"), sync committee
/// messages by `(validator_index, subcommittee_index)`, sync contributions by
/// `(aggregator_index, subcommittee_index)`.
#[derive(Debug)]
pub struct ObservedPerSlot<K> {
    slots: BTreeMap<Slot, HashSet<K>>,
    window: Window,
}

impl<K: Hash + Eq> ObservedPerSlot<K> {
    /// A cache that holds slots in `[lowest, lowest + window)`; the window moves with
    /// [`Self::prune`].
    pub fn new(window: u64) -> Self {
        Self {
            slots: BTreeMap::new(),
            window: Window::new(window, "slot"),
        }
    }

    /// Records `key` for `slot`; `true` if it had been recorded already.
    pub fn observe(&mut self, slot: Slot, key: K) -> Result<bool, ObserveError> {
        self.window.check(slot)?;
        Ok(!self.slots.entry(slot).or_default().insert(key))
    }

    /// Whether `key` was recorded for `slot`.
    pub fn is_known(&self, slot: Slot, key: &K) -> Result<bool, ObserveError> {
        self.window.check(slot)?;
        Ok(self.slots.get(&slot).is_some_and(|keys| keys.contains(key)))
    }

    /// Drops slots below `lowest` (the finalized slot for block-related keys, the current slot
    /// minus the propagation window for sync committee messages).
    pub fn prune(&mut self, lowest: Slot) {
        let lowest = self.window.advance(lowest);
        self.slots = self.slots.split_off(&lowest);
    }

    /// Keys held, over every slot.
    pub fn len(&self) -> usize {
        self.slots.values().map(HashSet::len).sum()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// What the proposer cache knew of a block's `(slot, proposer_index)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProposalObservation {
    /// The first block for the slot and proposer.
    New,
    /// This very block was seen before (IGNORE).
    Duplicate,
    /// Another block of the same proposer and slot was seen: an equivocation (IGNORE on
    /// gossip; the evidence for a proposer slashing).
    Equivocation,
}

/// Blocks seen per `(slot, proposer_index)`, with their roots: `beacon_block`'s "the block is
/// the first block with valid signature received for the proposer for the slot", telling a
/// re-sent block from an equivocating one.
#[derive(Debug)]
pub struct ObservedBlockProducers {
    proposals: ObservedPerSlot<(ValidatorIndex, Root)>,
    proposers: ObservedPerSlot<ValidatorIndex>,
}

impl ObservedBlockProducers {
    /// A cache holding `window` slots from the finalized slot on.
    pub fn new(window: u64) -> Self {
        Self {
            proposals: ObservedPerSlot::new(window),
            proposers: ObservedPerSlot::new(window),
        }
    }

    /// Records the block `root` by `proposer` at `slot`.
    pub fn observe(
        &mut self,
        slot: Slot,
        proposer: ValidatorIndex,
        root: Root,
    ) -> Result<ProposalObservation, ObserveError> {
        if self.proposals.observe(slot, (proposer, root))? {
            return Ok(ProposalObservation::Duplicate);
        }
        Ok(if self.proposers.observe(slot, proposer)? {
            ProposalObservation::Equivocation
        } else {
            ProposalObservation::New
        })
    }

    /// Whether any block by `proposer` at `slot` was recorded.
    pub fn proposer_has_been_observed(
        &self,
        slot: Slot,
        proposer: ValidatorIndex,
    ) -> Result<bool, ObserveError> {
        self.proposers.is_known(slot, &proposer)
    }

    /// Drops slots below `finalized_slot`.
    pub fn prune(&mut self, finalized_slot: Slot) {
        self.proposals.prune(finalized_slot);
        self.proposers.prune(finalized_slot);
    }
}

/// Aggregation bits seen per message, for the rule that an aggregate (or sync contribution) is
/// ignored when "a valid … whose `aggregation_bits` is a non-strict superset has already been
/// seen". Keyed by `(slot, hash_tree_root(data))` (for contributions: the root of
/// `(slot, beacon_block_root, subcommittee_index)`); bits are the SSZ bytes of the bitlist,
/// compared only with bits of the same length.
#[derive(Debug)]
pub struct ObservedAggregateBits {
    slots: BTreeMap<Slot, HashMap<Root, Vec<Vec<u8>>>>,
    window: Window,
    /// Bitfields kept per message: past it the oldest goes (a superset is then missed and the
    /// aggregate verified again, never wrongly ignored).
    per_message: usize,
}

impl ObservedAggregateBits {
    /// A cache holding `window` slots, at most `per_message` bitfields per message root.
    pub fn new(window: u64, per_message: usize) -> Self {
        Self {
            slots: BTreeMap::new(),
            window: Window::new(window, "slot"),
            per_message: per_message.max(1),
        }
    }

    /// Whether bits that are a superset of `bits` (or equal to them) were seen for `root`.
    pub fn is_known_subset(
        &self,
        slot: Slot,
        root: &Root,
        bits: &[u8],
    ) -> Result<bool, ObserveError> {
        self.window.check(slot)?;
        Ok(self
            .slots
            .get(&slot)
            .and_then(|roots| roots.get(root))
            .is_some_and(|seen| seen.iter().any(|s| is_superset(s, bits))))
    }

    /// Records `bits` for `root`; `true` if a superset was known already (nothing recorded).
    /// Recorded bits replace those they are a superset of.
    pub fn observe(&mut self, slot: Slot, root: Root, bits: &[u8]) -> Result<bool, ObserveError> {
        self.window.check(slot)?;
        let seen = self.slots.entry(slot).or_default().entry(root).or_default();
        if seen.iter().any(|s| is_superset(s, bits)) {
            return Ok(true);
        }
        seen.retain(|s| !is_superset(bits, s));
        if seen.len() >= self.per_message {
            seen.remove(0);
        }
        seen.push(bits.to_vec());
        Ok(false)
    }

    /// Drops slots below `lowest`.
    pub fn prune(&mut self, lowest: Slot) {
        let lowest = self.window.advance(lowest);
        self.slots = self.slots.split_off(&lowest);
    }
}

/// Whether `big` has every bit of `small` (same length; bitfields of different lengths are
/// never comparable).
fn is_superset(big: &[u8], small: &[u8]) -> bool {
    big.len() == small.len() && big.iter().zip(small).all(|(b, s)| b & s == *s)
}

/// Operations seen once per validator, kept until the chain no longer needs them (a validator
/// exits or is slashed once): `voluntary_exit` ("the first valid voluntary exit received for
/// the validator"), `proposer_slashing` (first for the proposer), `attester_slashing` ("at
/// least one index … has not yet been seen in any prior attester_slashing"),
/// `bls_to_execution_change` (first for the validator).
#[derive(Debug, Default)]
pub struct ObservedOperations {
    exits: HashSet<ValidatorIndex>,
    proposer_slashings: HashSet<ValidatorIndex>,
    attester_slashings: HashSet<ValidatorIndex>,
    bls_to_execution_changes: HashSet<ValidatorIndex>,
}

impl ObservedOperations {
    /// Records an exit of `index`; `true` if one was seen before.
    pub fn observe_exit(&mut self, index: ValidatorIndex) -> bool {
        !self.exits.insert(index)
    }

    /// Records a proposer slashing of `index`; `true` if one was seen before.
    pub fn observe_proposer_slashing(&mut self, index: ValidatorIndex) -> bool {
        !self.proposer_slashings.insert(index)
    }

    /// Records an attester slashing of the intersection `indices`; `true` if every one of them
    /// had been seen in earlier attester slashings (the new one slashes nobody new).
    pub fn observe_attester_slashing(&mut self, indices: &[ValidatorIndex]) -> bool {
        let mut all_seen = true;
        for &index in indices {
            all_seen &= !self.attester_slashings.insert(index);
        }
        all_seen
    }

    /// Records a BLS-to-execution change for `index`; `true` if one was seen before.
    pub fn observe_bls_to_execution_change(&mut self, index: ValidatorIndex) -> bool {
        !self.bls_to_execution_changes.insert(index)
    }

    /// Whether an exit of `index` was recorded.
    pub fn is_exit_known(&self, index: ValidatorIndex) -> bool {
        self.exits.contains(&index)
    }

    /// Whether a proposer slashing of `index` was recorded.
    pub fn is_proposer_slashing_known(&self, index: ValidatorIndex) -> bool {
        self.proposer_slashings.contains(&index)
    }

    /// Whether some index of `indices` is in no recorded attester slashing.
    pub fn has_new_attester_slashing_index(&self, indices: &[ValidatorIndex]) -> bool {
        indices.iter().any(|i| !self.attester_slashings.contains(i))
    }

    /// Whether a BLS-to-execution change of `index` was recorded.
    pub fn is_bls_to_execution_change_known(&self, index: ValidatorIndex) -> bool {
        self.bls_to_execution_changes.contains(&index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attester_is_seen_once_per_epoch() {
        let mut c = ObservedValidators::new(3, 1 << 20);
        assert_eq!(c.observe(0, 5), Ok(false));
        assert_eq!(c.observe(0, 5), Ok(true));
        assert_eq!(c.observe(1, 5), Ok(false));
        assert_eq!(c.is_known(0, 6), Ok(false));
        assert_eq!(c.is_known(1, 5), Ok(true));
    }

    #[test]
    fn the_epoch_window_refuses_old_and_future_epochs_and_prunes() {
        let mut c = ObservedValidators::new(3, 1 << 20);
        c.prune(10);
        // Holds 9 (previous), 10 (current), 11 (next, within the clock disparity).
        assert!(matches!(
            c.observe(8, 1),
            Err(ObserveError::TooOld { lowest: 9, .. })
        ));
        assert!(matches!(
            c.observe(12, 1),
            Err(ObserveError::TooFarAhead { highest: 11, .. })
        ));
        for epoch in 9..=11 {
            assert_eq!(c.observe(epoch, 1), Ok(false));
        }
        c.prune(11);
        assert_eq!(c.epochs_held(), 2);
        assert_eq!(c.observe(12, 1), Ok(false));
    }

    #[test]
    fn an_index_beyond_the_bound_is_refused_not_allocated() {
        let mut c = ObservedValidators::new(3, 1_000);
        assert_eq!(
            c.observe(0, 1_000),
            Err(ObserveError::IndexOutOfRange {
                index: 1_000,
                limit: 1_000
            })
        );
        assert_eq!(c.epochs_held(), 0);
    }

    #[test]
    fn per_slot_keys_are_seen_once_and_pruned_at_finalization() {
        let mut c: ObservedPerSlot<(u64, u64)> = ObservedPerSlot::new(64);
        assert_eq!(c.observe(3, (7, 12)), Ok(false));
        assert_eq!(c.observe(3, (7, 12)), Ok(true));
        assert_eq!(c.observe(3, (7, 13)), Ok(false));
        assert_eq!(c.observe(4, (7, 12)), Ok(false));
        c.prune(4);
        assert_eq!(c.len(), 1);
        assert!(matches!(
            c.observe(3, (1, 1)),
            Err(ObserveError::TooOld { .. })
        ));
        assert!(matches!(
            c.observe(68, (1, 1)),
            Err(ObserveError::TooFarAhead { .. })
        ));
        // Pruning never moves the window back.
        c.prune(0);
        assert!(c.observe(3, (1, 1)).is_err());
    }

    #[test]
    fn a_second_block_of_a_proposer_is_an_equivocation_and_a_resend_a_duplicate() {
        let mut c = ObservedBlockProducers::new(64);
        let (a, b) = (Root::repeat_byte(1), Root::repeat_byte(2));
        assert_eq!(c.observe(10, 3, a), Ok(ProposalObservation::New));
        assert_eq!(c.observe(10, 3, a), Ok(ProposalObservation::Duplicate));
        assert_eq!(c.observe(10, 3, b), Ok(ProposalObservation::Equivocation));
        assert_eq!(c.observe(10, 4, b), Ok(ProposalObservation::New));
        assert_eq!(c.proposer_has_been_observed(10, 3), Ok(true));
        assert_eq!(c.proposer_has_been_observed(11, 3), Ok(false));
    }

    #[test]
    fn aggregate_bits_that_are_a_subset_of_seen_ones_are_known() {
        let mut c = ObservedAggregateBits::new(64, 16);
        let root = Root::repeat_byte(9);
        assert_eq!(c.observe(5, root, &[0b0000_0110, 0b1]), Ok(false));
        assert_eq!(c.is_known_subset(5, &root, &[0b0000_0010, 0b1]), Ok(true));
        assert_eq!(c.is_known_subset(5, &root, &[0b0000_0110, 0b1]), Ok(true));
        assert_eq!(c.is_known_subset(5, &root, &[0b0000_1000, 0b1]), Ok(false));
        // A different length is never comparable; another root or slot knows nothing.
        assert_eq!(c.is_known_subset(5, &root, &[0b0000_0010]), Ok(false));
        assert_eq!(
            c.is_known_subset(5, &Root::ZERO, &[0b0000_0010, 0b1]),
            Ok(false)
        );
        assert_eq!(c.is_known_subset(6, &root, &[0b0000_0010, 0b1]), Ok(false));
        // A superset replaces what it covers.
        assert_eq!(c.observe(5, root, &[0b0000_1110, 0b1]), Ok(false));
        assert_eq!(c.observe(5, root, &[0b0000_1000, 0b1]), Ok(true));
        assert_eq!(c.slots[&5][&root].len(), 1);
    }

    #[test]
    fn aggregate_bits_per_message_are_bounded() {
        let mut c = ObservedAggregateBits::new(64, 2);
        let root = Root::repeat_byte(9);
        for bit in 0..4u8 {
            assert_eq!(c.observe(5, root, &[1 << bit, 0b1]), Ok(false));
        }
        assert_eq!(c.slots[&5][&root].len(), 2);
        // The oldest went: it is verified again rather than wrongly ignored.
        assert_eq!(c.is_known_subset(5, &root, &[0b1, 0b1]), Ok(false));
        assert_eq!(c.is_known_subset(5, &root, &[0b1000, 0b1]), Ok(true));
    }

    #[test]
    fn an_attester_slashing_counts_while_it_slashes_someone_new() {
        let mut ops = ObservedOperations::default();
        assert!(!ops.observe_attester_slashing(&[1, 2]));
        assert!(ops.observe_attester_slashing(&[2, 1]));
        assert!(!ops.observe_attester_slashing(&[2, 3]));
        assert!(!ops.observe_exit(1));
        assert!(ops.observe_exit(1));
        assert!(!ops.observe_proposer_slashing(1));
        assert!(ops.observe_proposer_slashing(1));
        assert!(!ops.observe_bls_to_execution_change(4));
        assert!(ops.observe_bls_to_execution_change(4));
    }
}
