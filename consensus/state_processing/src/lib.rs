//! The consensus state transition for Electra and Fulu, and for Deneb states on their way to the
//! Electra fork: slots, blocks, epochs, the upgrades into Electra and Fulu, genesis, and the
//! caches carried with a state.
//!
//! Layout follows the spec: [`common`] holds the helper functions (in the spec's groups:
//! math, predicates, misc, accessors, mutators), [`per_slot`], [`per_block`] and [`per_epoch`]
//! the three processing stages, [`upgrade`] the fork upgrades, [`genesis`] the genesis state.
//! Processing is written once against the field views of [`view`], which Deneb, Electra and Fulu
//! states provide (Electra's new fields as `Option`s). Where a later fork modifies a function,
//! the change is made in that function, on the state's fork, and marked `[New in …]` /
//! `[Modified in …]`: Fulu's proposer lookahead (`per_epoch::process_proposer_lookahead`, read
//! by `common::get_beacon_proposer_index`), its blob limit in
//! `per_block::process_execution_payload` and its removal of eth1 deposits. What Deneb has in a
//! form Electra modified lives in [`deneb`], by the spec's names, and the shared function calls
//! it for a Deneb state; what a fork defines new beside the shared processing lives in its
//! module: [`electra`] (the execution requests, the pending deposit and consolidation queues,
//! `upgrade_to_electra`), [`fulu`] (the proposer lookahead, `upgrade_to_fulu`).
//!
//! A state travels with its caches as a [`CachedBeaconState`].

pub mod caches;
pub mod common;
pub mod deneb;
pub mod electra;
pub mod error;
pub mod fulu;
pub mod genesis;
pub mod gloas;
pub mod parallel;
pub mod per_block;
pub mod per_epoch;
pub mod per_slot;
pub mod progressive_balances;
pub mod state_transition;
pub mod upgrade;
pub mod view;

pub use caches::{Caches, CommitteeCache, EffectiveBalances, PubkeyCache};
pub use error::Error;
pub use view::{StateMut, StateRef};

use tree_hash::TreeHash;
use types::{BeaconState, EthSpec, Root};

/// A state with its caches. Cloning is cheap: the state's trees and the caches are shared until
/// written.
#[derive(Debug, Clone)]
pub struct CachedBeaconState<E: EthSpec> {
    /// The state.
    pub state: BeaconState<E>,
    /// Caches derived from `state`.
    pub caches: Caches,
}

impl<E: EthSpec> CachedBeaconState<E> {
    /// `state` with empty caches (built on first use).
    pub fn new(state: BeaconState<E>) -> Self {
        Self {
            state,
            caches: Caches::default(),
        }
    }

    /// `state` with empty caches sharing the public-key cache of another state of its chain.
    pub fn with_caches_of(state: BeaconState<E>, other: &Caches) -> Self {
        Self {
            state,
            caches: Caches::with_pubkeys(other.pubkey_cache()),
        }
    }

    /// Mutable views of the state's fields and the caches, side by side.
    pub fn view_mut(&mut self) -> Result<(StateMut<'_, E>, &mut Caches), Error> {
        Ok((StateMut::new(&mut self.state)?, &mut self.caches))
    }

    /// A shared view of the state's fields.
    pub fn view(&self) -> Result<StateRef<'_, E>, Error> {
        StateRef::new(&self.state)
    }

    /// Records this state, which the caller vouches is finalized (a node's anchor, a new
    /// finalized checkpoint's state), in the public-key cache it shares with the chain's other
    /// states: see [`Caches::set_finalized`].
    pub fn set_finalized(&self) -> Result<(), Error> {
        self.caches.set_finalized(&self.view()?);
        Ok(())
    }

    /// The target balances of the state's previous and current epoch
    /// ([`progressive_balances`]), built here with one walk when the caches hold none for its
    /// epoch, so that copies made afterwards share them.
    pub fn progressive_balances(
        &mut self,
    ) -> Result<&progressive_balances::ProgressiveBalances, Error> {
        let view = StateRef::new(&self.state)?;
        self.caches.progressive_balances(&view)
    }

    /// `hash_tree_root(state)`, after folding pending writes into the trees.
    pub fn hash_tree_root(&mut self) -> Result<Root, Error> {
        self.apply_updates()?;
        Ok(self.state.tree_hash_root())
    }

    /// Folds pending writes into the state's trees (needed before hashing or encoding).
    pub fn apply_updates(&mut self) -> Result<(), Error> {
        match StateMut::new(&mut self.state) {
            Ok(mut view) => view.apply_updates(),
            // Earlier forks are only ever decoded, never written, here.
            Err(Error::UnsupportedFork(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
