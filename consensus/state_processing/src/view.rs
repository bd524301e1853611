//! Field-level views of a Deneb, Electra or Fulu `BeaconState`.
//!
//! The three states share every field but the nine Electra adds (EIP-6110, EIP-7002, EIP-7251)
//! and Fulu's `proposer_lookahead`. The helpers the forks share are written once, against these
//! views: [`StateMut`] borrows every field mutably (so a function may walk `validators` while it
//! writes `balances`), [`StateRef`] borrows them shared. Fields that only some forks have are
//! `Option`s; [`electra_field`] reads one where the spec function is Electra's.

use milhouse::{List, Vector};
use packed_list::PackedList;
use ssz_types::{BitVector, typenum::U4};
use types::{
    BeaconState, EthSpec, ForkName, Gwei, ParticipationFlags, Root,
    electra::{
        BeaconBlockHeader, Checkpoint, Eth1Data, ExecutionPayloadHeader, Fork, HistoricalSummary,
        PendingConsolidation, PendingDeposit, PendingPartialWithdrawal, SyncCommittee,
    },
    phase0::ValidatorRegistry,
};

use crate::Error;

macro_rules! state_views {
    (
        base { $($field:ident : $ty:ty,)* }
        electra { $($efield:ident : $ety:ty,)* }
    ) => {
        /// Every field of a Deneb, Electra or Fulu state, borrowed mutably.
        pub struct StateMut<'a, E: EthSpec> {
            /// The fork of the state behind the view.
            pub fork_name: ForkName,
            $(#[doc = concat!("`", stringify!($field), "`.")] pub $field: &'a mut $ty,)*
            $(
                #[doc = concat!("`", stringify!($efield), "` [New in Electra]; `None` before Electra.")]
                pub $efield: Option<&'a mut $ety>,
            )*
            /// `proposer_lookahead` [New in Fulu:EIP7917]; `None` before Fulu.
            pub proposer_lookahead: Option<&'a mut Vector<u64, E::ProposerLookaheadSlots>>,
        }

        /// Every field of a Deneb, Electra or Fulu state, borrowed shared.
        #[derive(Clone, Copy)]
        pub struct StateRef<'a, E: EthSpec> {
            /// The fork of the state behind the view.
            pub fork_name: ForkName,
            $(#[doc = concat!("`", stringify!($field), "`.")] pub $field: &'a $ty,)*
            $(
                #[doc = concat!("`", stringify!($efield), "` [New in Electra]; `None` before Electra.")]
                pub $efield: Option<&'a $ety>,
            )*
            /// `proposer_lookahead` [New in Fulu:EIP7917]; `None` before Fulu.
            pub proposer_lookahead: Option<&'a Vector<u64, E::ProposerLookaheadSlots>>,
        }

        impl<'a, E: EthSpec> StateMut<'a, E> {
            /// A mutable view of `state`; states before Deneb have no view.
            pub fn new(state: &'a mut BeaconState<E>) -> Result<Self, Error> {
                match state {
                    BeaconState::Deneb(s) => Ok(Self {
                        fork_name: ForkName::Deneb,
                        $($field: &mut s.$field,)*
                        $($efield: None,)*
                        proposer_lookahead: None,
                    }),
                    BeaconState::Electra(s) => Ok(Self {
                        fork_name: ForkName::Electra,
                        $($field: &mut s.$field,)*
                        $($efield: Some(&mut s.$efield),)*
                        proposer_lookahead: None,
                    }),
                    BeaconState::Fulu(s) => Ok(Self {
                        fork_name: ForkName::Fulu,
                        $($field: &mut s.$field,)*
                        $($efield: Some(&mut s.$efield),)*
                        proposer_lookahead: Some(&mut s.proposer_lookahead),
                    }),
                    other @ (BeaconState::Phase0(_)
                    | BeaconState::Altair(_)
                    | BeaconState::Bellatrix(_)
                    | BeaconState::Capella(_)
                    | BeaconState::Gloas(_)) => Err(Error::UnsupportedFork(other.fork_name())),
                }
            }

            /// A shared view of the same fields, for the read-only helpers.
            pub fn as_ref(&self) -> StateRef<'_, E> {
                StateRef {
                    fork_name: self.fork_name,
                    $($field: &*self.$field,)*
                    $($efield: self.$efield.as_deref(),)*
                    proposer_lookahead: self.proposer_lookahead.as_deref(),
                }
            }
        }

        impl<'a, E: EthSpec> StateRef<'a, E> {
            /// A shared view of `state`; states before Deneb have no view.
            pub fn new(state: &'a BeaconState<E>) -> Result<Self, Error> {
                match state {
                    BeaconState::Deneb(s) => Ok(Self {
                        fork_name: ForkName::Deneb,
                        $($field: &s.$field,)*
                        $($efield: None,)*
                        proposer_lookahead: None,
                    }),
                    BeaconState::Electra(s) => Ok(Self {
                        fork_name: ForkName::Electra,
                        $($field: &s.$field,)*
                        $($efield: Some(&s.$efield),)*
                        proposer_lookahead: None,
                    }),
                    BeaconState::Fulu(s) => Ok(Self {
                        fork_name: ForkName::Fulu,
                        $($field: &s.$field,)*
                        $($efield: Some(&s.$efield),)*
                        proposer_lookahead: Some(&s.proposer_lookahead),
                    }),
                    other @ (BeaconState::Phase0(_)
                    | BeaconState::Altair(_)
                    | BeaconState::Bellatrix(_)
                    | BeaconState::Capella(_)
                    | BeaconState::Gloas(_)) => Err(Error::UnsupportedFork(other.fork_name())),
                }
            }
        }
    };
}

state_views! {
    base {
        genesis_time: u64,
        genesis_validators_root: Root,
        slot: u64,
        fork: Fork,
        latest_block_header: BeaconBlockHeader,
        block_roots: Vector<Root, E::SlotsPerHistoricalRoot>,
        state_roots: Vector<Root, E::SlotsPerHistoricalRoot>,
        historical_roots: List<Root, E::HistoricalRootsLimit>,
        eth1_data: Eth1Data,
        eth1_data_votes: List<Eth1Data, E::SlotsPerEth1VotingPeriod>,
        eth1_deposit_index: u64,
        validators: ValidatorRegistry<E>,
        balances: PackedList<Gwei, E::ValidatorRegistryLimit>,
        randao_mixes: Vector<Root, E::EpochsPerHistoricalVector>,
        slashings: Vector<Gwei, E::EpochsPerSlashingsVector>,
        previous_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
        current_epoch_participation: PackedList<ParticipationFlags, E::ValidatorRegistryLimit>,
        justification_bits: BitVector<U4>,
        previous_justified_checkpoint: Checkpoint,
        current_justified_checkpoint: Checkpoint,
        finalized_checkpoint: Checkpoint,
        inactivity_scores: PackedList<u64, E::ValidatorRegistryLimit>,
        current_sync_committee: SyncCommittee<E>,
        next_sync_committee: SyncCommittee<E>,
        latest_execution_payload_header: ExecutionPayloadHeader<E>,
        next_withdrawal_index: u64,
        next_withdrawal_validator_index: u64,
        historical_summaries: List<HistoricalSummary, E::HistoricalRootsLimit>,
    }
    electra {
        deposit_requests_start_index: u64,
        deposit_balance_to_consume: Gwei,
        exit_balance_to_consume: Gwei,
        earliest_exit_epoch: u64,
        consolidation_balance_to_consume: Gwei,
        earliest_consolidation_epoch: u64,
        pending_deposits: List<PendingDeposit, E::PendingDepositsLimit>,
        pending_partial_withdrawals: List<PendingPartialWithdrawal, E::PendingPartialWithdrawalsLimit>,
        pending_consolidations: List<PendingConsolidation, E::PendingConsolidationsLimit>,
    }
}

/// An Electra field of a view (`pending_deposits`, `earliest_exit_epoch`, …), or the error that
/// the state's fork (before Electra) has no such field: the spec functions that touch these run
/// only from Electra on.
#[inline]
pub fn electra_field<T>(field: Option<T>, name: &'static str, fork: ForkName) -> Result<T, Error> {
    field.ok_or(Error::MissingField { field: name, fork })
}

impl<E: EthSpec> StateMut<'_, E> {
    /// Folds the pending writes of every milhouse field into its tree; required before hashing.
    pub fn apply_updates(&mut self) -> Result<(), Error> {
        self.block_roots.apply_updates()?;
        self.state_roots.apply_updates()?;
        self.historical_roots.apply_updates()?;
        self.eth1_data_votes.apply_updates()?;
        self.validators.apply_updates()?;
        self.randao_mixes.apply_updates()?;
        self.slashings.apply_updates()?;
        self.historical_summaries.apply_updates()?;
        if let Some(list) = self.pending_deposits.as_mut() {
            list.apply_updates()?;
        }
        if let Some(list) = self.pending_partial_withdrawals.as_mut() {
            list.apply_updates()?;
        }
        if let Some(list) = self.pending_consolidations.as_mut() {
            list.apply_updates()?;
        }
        if let Some(lookahead) = self.proposer_lookahead.as_mut() {
            lookahead.apply_updates()?;
        }
        Ok(())
    }
}
