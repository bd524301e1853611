//! How much memory beacon states take, counting what states share once.
//!
//! A state's lists are persistent trees (milhouse's, and [`packed_list::PackedList`]'s pages):
//! a copy shares every node it did not write, so a node's post-states cost far less together
//! than one state each. [`differential_sizes`] walks states in order with one
//! record of what it counted and gives each the bytes it adds to the ones before it: the first state
//! counts whole, a block's post-state after its parent's only the nodes the block wrote.
//!
//! Counted: the tree nodes and leaves of every list and vector (for the validators, each
//! `Validator`), the packed lists' pages and cached upper levels, and the state's own struct
//! with its two sync committees. Not counted: allocator overhead, and the derived caches a
//! `CachedBeaconState` carries beside the state (committees, public keys), which states of
//! the same epoch share.
//!
//! Only the forks whose states a node holds in memory (Electra and later: the state transition
//! runs those) are walked; a state of an earlier fork counts its struct alone.

use std::collections::HashSet;

use milhouse::mem::MemorySize;
use rustc_hash::FxBuildHasher;

use crate::{BeaconState, EthSpec, electra, fulu, gloas};

// Values without heap allocations of their own: their size is `size_of`.
milhouse::impl_memory_size_for_basic_type!(crate::phase0::Validator);
milhouse::impl_memory_size_for_basic_type!(crate::phase0::Eth1Data);
milhouse::impl_memory_size_for_basic_type!(crate::capella::HistoricalSummary);
milhouse::impl_memory_size_for_basic_type!(crate::electra::PendingDeposit);
milhouse::impl_memory_size_for_basic_type!(crate::electra::PendingPartialWithdrawal);
milhouse::impl_memory_size_for_basic_type!(crate::electra::PendingConsolidation);
milhouse::impl_memory_size_for_basic_type!(crate::gloas::BuilderPendingPayment);

/// `MemorySize` for a fork's state (Electra or later): its lists as subtrees (the ones every
/// such fork has, then the fork's own), its struct and the heap of its two sync committees'
/// key vectors as its own size.
macro_rules! state_memory_size {
    ($state:ty, [$($own:ident),* $(,)?]) => {
        impl<E: EthSpec> MemorySize for $state {
            fn self_pointer(&self) -> usize {
                std::ptr::from_ref(self) as usize
            }

            fn subtrees(&self) -> Vec<&dyn MemorySize> {
                vec![
                    &self.block_roots,
                    &self.state_roots,
                    &self.historical_roots,
                    &self.eth1_data_votes,
                    &self.validators,
                    &self.balances,
                    &self.randao_mixes,
                    &self.slashings,
                    &self.previous_epoch_participation,
                    &self.current_epoch_participation,
                    &self.inactivity_scores,
                    &self.historical_summaries,
                    &self.pending_deposits,
                    &self.pending_partial_withdrawals,
                    &self.pending_consolidations,
                    $(&self.$own,)*
                ]
            }

            fn intrinsic_size(&self) -> usize {
                let committees = (self.current_sync_committee.pubkeys.len()
                    + self.next_sync_committee.pubkeys.len())
                    * std::mem::size_of::<crate::BLSPubkey>();
                std::mem::size_of::<Self>() + committees
            }
        }
    };
}

state_memory_size!(electra::BeaconState<E>, []);
state_memory_size!(fulu::BeaconState<E>, [proposer_lookahead]);

impl<E: EthSpec> MemorySize for BeaconState<E> {
    fn self_pointer(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn subtrees(&self) -> Vec<&dyn MemorySize> {
        match self {
            Self::Electra(state) => vec![state],
            Self::Fulu(state) => vec![state],
            Self::Gloas(state) => vec![state],
            Self::Phase0(_)
            | Self::Altair(_)
            | Self::Bellatrix(_)
            | Self::Capella(_)
            | Self::Deneb(_) => Vec::new(),
        }
    }

    fn intrinsic_size(&self) -> usize {
        match self {
            // The variant's struct is counted by its own `intrinsic_size`.
            Self::Electra(_) | Self::Fulu(_) | Self::Gloas(_) => 0,
            Self::Phase0(_)
            | Self::Altair(_)
            | Self::Bellatrix(_)
            | Self::Capella(_)
            | Self::Deneb(_) => std::mem::size_of::<Self>(),
        }
    }
}

// The Gloas state's progressive lists are `progressive_tree` lists: their pages and branches
// are counted once however many states share them, as milhouse's nodes are.
state_memory_size!(
    gloas::BeaconState<E>,
    [
        proposer_lookahead,
        builders,
        builder_pending_withdrawals,
        payload_expected_withdrawals,
        builder_pending_payments,
        ptc_window,
    ]
);

/// [`differential_sizes`] for bare Gloas states: the bytes each adds to the ones before it.
pub fn gloas_differential_sizes<'a, E: EthSpec>(
    states: impl IntoIterator<Item = &'a gloas::BeaconState<E>>,
) -> Vec<usize> {
    let mut counted = Counted::default();
    states
        .into_iter()
        .map(|state| counted.differential_size(state))
        .collect()
}

/// The bytes each of `states` adds to the ones before it (see the module's documentation):
/// the first counts whole, a later one only what it does not share with the earlier ones.
/// The same numbers as milhouse's `MemoryTracker::track_item(state).differential_size`, with
/// less memory while it runs (see [`Counted`]).
pub fn differential_sizes<'a, E: EthSpec>(
    states: impl IntoIterator<Item = &'a BeaconState<E>>,
) -> Vec<usize> {
    let mut counted = Counted::default();
    states
        .into_iter()
        .map(|state| counted.differential_size(state))
        .collect()
}

/// The nodes counted so far, by address. milhouse's `MemoryTracker` keeps a map from every
/// node to its subtree's total size (16 bytes an entry, SipHash) that [`differential_sizes`]
/// never reads: at 1,000,000 validators (some 3 million nodes: the registry's tree, its
/// leaves and their `Validator`s) it took ~170 MiB while the node measured its states once an
/// epoch, the largest part of the node's peak. A set of addresses takes half of that.
#[derive(Default)]
struct Counted(HashSet<usize, FxBuildHasher>);

impl Counted {
    /// `item`'s bytes not counted yet. As in `MemoryTracker::track_item`, an item is marked
    /// counted after its subtrees, so a subtree at its parent's address (an `Arc`'s value, a
    /// state's variant) is still walked.
    fn differential_size(&mut self, item: &dyn MemorySize) -> usize {
        let pointer = item.self_pointer();
        if self.0.contains(&pointer) {
            return 0;
        }
        let mut size = item.intrinsic_size();
        for subtree in item.subtrees() {
            size += self.differential_size(subtree);
        }
        self.0.insert(pointer);
        size
    }
}
