//! Field-level views of a Deneb, Electra, Fulu or Gloas `BeaconState`.
//!
//! The states share every field but the nine Electra adds (EIP-6110, EIP-7002, EIP-7251), Fulu's
//! `proposer_lookahead`, and what Gloas removes (`latest_execution_payload_header`) and adds
//! (EIP-7732's builders, bids and payments: [`GloasMut`]). Gloas also turns the registry and the
//! pending queues into progressive lists (EIP-7688); the view holds each such list as one enum
//! over both shapes ([`lists`]). The helpers the forks share are written once, against these
//! views: [`StateMut`] borrows every field mutably (so a function may walk `validators` while it
//! writes `balances`), [`StateRef`] borrows them shared. Fields that only some forks have are
//! `Option`s; [`electra_field`] reads one where the spec function is Electra's,
//! [`StateMut::gloas_mut`] the Gloas ones.

mod lists;

pub use lists::{EitherIter, PackedListMut, PackedListRef, PackedValues, TreeListMut, TreeListRef};

use milhouse::{List, Vector};
use ssz_types::{BitVector, typenum::U4};
use types::{
    BeaconState, EthSpec, ForkName, Gwei, ParticipationFlags, Root,
    electra::{
        BeaconBlockHeader, Checkpoint, Eth1Data, ExecutionPayloadHeader, Fork, HistoricalSummary,
        PendingConsolidation, PendingDeposit, PendingPartialWithdrawal, SyncCommittee,
    },
    gloas::{
        Builder, BuilderPendingPayment, BuilderPendingWithdrawal, ExecutionPayloadBid,
        ProgressiveTreeList,
    },
    phase0::Validator,
};

use crate::Error;

/// The registry (`validators`), shared.
pub type ValidatorsRef<'a, E> =
    TreeListRef<'a, Validator, <E as EthSpec>::ValidatorRegistryLimit, RegistryUpdates>;
/// The registry (`validators`), mutable.
pub type ValidatorsMut<'a, E> =
    TreeListMut<'a, Validator, <E as EthSpec>::ValidatorRegistryLimit, RegistryUpdates>;
/// The pending-write map of the registry's milhouse list (see `phase0::ValidatorRegistry`).
pub type RegistryUpdates =
    milhouse::update_map::MaxMap<std::collections::BTreeMap<usize, Validator>>;
/// A list of basic values parallel to the registry, shared.
pub type RegistryValuesRef<'a, T, E> = PackedListRef<'a, T, <E as EthSpec>::ValidatorRegistryLimit>;
/// A list of basic values parallel to the registry, mutable.
pub type RegistryValuesMut<'a, T, E> = PackedListMut<'a, T, <E as EthSpec>::ValidatorRegistryLimit>;

/// `ptc_window`'s type.
pub type PtcWindow<E> =
    Vector<Vector<u64, <E as EthSpec>::PtcSize>, <E as EthSpec>::PtcWindowSlots>;

macro_rules! state_views {
    (
        base { $($field:ident : $ty:ty,)* }
        electra { $($efield:ident : $ety:ty,)* }
        gloas { $($gfield:ident : $gty:ty,)* }
    ) => {
        /// The fields Gloas adds (EIP-7732), borrowed mutably.
        pub struct GloasMut<'a, E: EthSpec> {
            $(#[doc = concat!("`", stringify!($gfield), "` [New in Gloas].")] pub $gfield: &'a mut $gty,)*
            /// `builders` [New in Gloas].
            pub builders: &'a mut ProgressiveTreeList<Builder>,
            /// `builder_pending_withdrawals` [New in Gloas].
            pub builder_pending_withdrawals: &'a mut ProgressiveTreeList<BuilderPendingWithdrawal>,
            /// `payload_expected_withdrawals` [New in Gloas].
            pub payload_expected_withdrawals: &'a mut ProgressiveTreeList<types::capella::Withdrawal>,
            _spec: std::marker::PhantomData<E>,
        }

        /// The fields Gloas adds (EIP-7732), borrowed shared.
        pub struct GloasRef<'a, E: EthSpec> {
            $(#[doc = concat!("`", stringify!($gfield), "` [New in Gloas].")] pub $gfield: &'a $gty,)*
            /// `builders` [New in Gloas].
            pub builders: &'a ProgressiveTreeList<Builder>,
            /// `builder_pending_withdrawals` [New in Gloas].
            pub builder_pending_withdrawals: &'a ProgressiveTreeList<BuilderPendingWithdrawal>,
            /// `payload_expected_withdrawals` [New in Gloas].
            pub payload_expected_withdrawals: &'a ProgressiveTreeList<types::capella::Withdrawal>,
            _spec: std::marker::PhantomData<E>,
        }

        impl<E: EthSpec> Clone for GloasRef<'_, E> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<E: EthSpec> Copy for GloasRef<'_, E> {}

        impl<E: EthSpec> GloasMut<'_, E> {
            /// A shared view of the same fields.
            pub fn as_ref(&self) -> GloasRef<'_, E> {
                GloasRef {
                    $($gfield: &*self.$gfield,)*
                    builders: &*self.builders,
                    builder_pending_withdrawals: &*self.builder_pending_withdrawals,
                    payload_expected_withdrawals: &*self.payload_expected_withdrawals,
                    _spec: std::marker::PhantomData,
                }
            }
        }

        /// Every field of a Deneb, Electra, Fulu or Gloas state, borrowed mutably.
        pub struct StateMut<'a, E: EthSpec> {
            /// The fork of the state behind the view.
            pub fork_name: ForkName,
            $(#[doc = concat!("`", stringify!($field), "`.")] pub $field: &'a mut $ty,)*
            /// `validators` (progressive from Gloas on).
            pub validators: ValidatorsMut<'a, E>,
            /// `balances` (progressive from Gloas on).
            pub balances: RegistryValuesMut<'a, Gwei, E>,
            /// `previous_epoch_participation` (progressive from Gloas on).
            pub previous_epoch_participation: RegistryValuesMut<'a, ParticipationFlags, E>,
            /// `current_epoch_participation` (progressive from Gloas on).
            pub current_epoch_participation: RegistryValuesMut<'a, ParticipationFlags, E>,
            /// `inactivity_scores` (progressive from Gloas on).
            pub inactivity_scores: RegistryValuesMut<'a, u64, E>,
            /// `latest_execution_payload_header`; `None` from Gloas on (removed by EIP-7732).
            pub latest_execution_payload_header: Option<&'a mut ExecutionPayloadHeader<E>>,
            $(
                #[doc = concat!("`", stringify!($efield), "` [New in Electra]; `None` before Electra.")]
                pub $efield: Option<&'a mut $ety>,
            )*
            /// `pending_deposits` [New in Electra]; `None` before Electra.
            pub pending_deposits: Option<TreeListMut<'a, PendingDeposit, E::PendingDepositsLimit>>,
            /// `pending_partial_withdrawals` [New in Electra]; `None` before Electra.
            pub pending_partial_withdrawals:
                Option<TreeListMut<'a, PendingPartialWithdrawal, E::PendingPartialWithdrawalsLimit>>,
            /// `pending_consolidations` [New in Electra]; `None` before Electra.
            pub pending_consolidations:
                Option<TreeListMut<'a, PendingConsolidation, E::PendingConsolidationsLimit>>,
            /// `proposer_lookahead` [New in Fulu:EIP7917]; `None` before Fulu.
            pub proposer_lookahead: Option<&'a mut Vector<u64, E::ProposerLookaheadSlots>>,
            /// The fields new in Gloas; `None` before Gloas.
            pub gloas: Option<GloasMut<'a, E>>,
        }

        /// Every field of a Deneb, Electra, Fulu or Gloas state, borrowed shared.
        #[derive(Clone, Copy)]
        pub struct StateRef<'a, E: EthSpec> {
            /// The fork of the state behind the view.
            pub fork_name: ForkName,
            $(#[doc = concat!("`", stringify!($field), "`.")] pub $field: &'a $ty,)*
            /// `validators` (progressive from Gloas on).
            pub validators: ValidatorsRef<'a, E>,
            /// `balances` (progressive from Gloas on).
            pub balances: RegistryValuesRef<'a, Gwei, E>,
            /// `previous_epoch_participation` (progressive from Gloas on).
            pub previous_epoch_participation: RegistryValuesRef<'a, ParticipationFlags, E>,
            /// `current_epoch_participation` (progressive from Gloas on).
            pub current_epoch_participation: RegistryValuesRef<'a, ParticipationFlags, E>,
            /// `inactivity_scores` (progressive from Gloas on).
            pub inactivity_scores: RegistryValuesRef<'a, u64, E>,
            /// `latest_execution_payload_header`; `None` from Gloas on (removed by EIP-7732).
            pub latest_execution_payload_header: Option<&'a ExecutionPayloadHeader<E>>,
            $(
                #[doc = concat!("`", stringify!($efield), "` [New in Electra]; `None` before Electra.")]
                pub $efield: Option<&'a $ety>,
            )*
            /// `pending_deposits` [New in Electra]; `None` before Electra.
            pub pending_deposits: Option<TreeListRef<'a, PendingDeposit, E::PendingDepositsLimit>>,
            /// `pending_partial_withdrawals` [New in Electra]; `None` before Electra.
            pub pending_partial_withdrawals:
                Option<TreeListRef<'a, PendingPartialWithdrawal, E::PendingPartialWithdrawalsLimit>>,
            /// `pending_consolidations` [New in Electra]; `None` before Electra.
            pub pending_consolidations:
                Option<TreeListRef<'a, PendingConsolidation, E::PendingConsolidationsLimit>>,
            /// `proposer_lookahead` [New in Fulu:EIP7917]; `None` before Fulu.
            pub proposer_lookahead: Option<&'a Vector<u64, E::ProposerLookaheadSlots>>,
            /// The fields new in Gloas; `None` before Gloas.
            pub gloas: Option<GloasRef<'a, E>>,
        }

        impl<'a, E: EthSpec> StateMut<'a, E> {
            /// A mutable view of `state`; states before Deneb have no view.
            pub fn new(state: &'a mut BeaconState<E>) -> Result<Self, Error> {
                match state {
                    BeaconState::Deneb(s) => Ok(Self {
                        fork_name: ForkName::Deneb,
                        $($field: &mut s.$field,)*
                        validators: TreeListMut::Fixed(&mut s.validators),
                        balances: PackedListMut::Fixed(&mut s.balances),
                        previous_epoch_participation: PackedListMut::Fixed(&mut s.previous_epoch_participation),
                        current_epoch_participation: PackedListMut::Fixed(&mut s.current_epoch_participation),
                        inactivity_scores: PackedListMut::Fixed(&mut s.inactivity_scores),
                        latest_execution_payload_header: Some(&mut s.latest_execution_payload_header),
                        $($efield: None,)*
                        pending_deposits: None,
                        pending_partial_withdrawals: None,
                        pending_consolidations: None,
                        proposer_lookahead: None,
                        gloas: None,
                    }),
                    BeaconState::Electra(s) => Ok(Self {
                        fork_name: ForkName::Electra,
                        $($field: &mut s.$field,)*
                        validators: TreeListMut::Fixed(&mut s.validators),
                        balances: PackedListMut::Fixed(&mut s.balances),
                        previous_epoch_participation: PackedListMut::Fixed(&mut s.previous_epoch_participation),
                        current_epoch_participation: PackedListMut::Fixed(&mut s.current_epoch_participation),
                        inactivity_scores: PackedListMut::Fixed(&mut s.inactivity_scores),
                        latest_execution_payload_header: Some(&mut s.latest_execution_payload_header),
                        $($efield: Some(&mut s.$efield),)*
                        pending_deposits: Some(TreeListMut::Fixed(&mut s.pending_deposits)),
                        pending_partial_withdrawals: Some(TreeListMut::Fixed(&mut s.pending_partial_withdrawals)),
                        pending_consolidations: Some(TreeListMut::Fixed(&mut s.pending_consolidations)),
                        proposer_lookahead: None,
                        gloas: None,
                    }),
                    BeaconState::Fulu(s) => Ok(Self {
                        fork_name: ForkName::Fulu,
                        $($field: &mut s.$field,)*
                        validators: TreeListMut::Fixed(&mut s.validators),
                        balances: PackedListMut::Fixed(&mut s.balances),
                        previous_epoch_participation: PackedListMut::Fixed(&mut s.previous_epoch_participation),
                        current_epoch_participation: PackedListMut::Fixed(&mut s.current_epoch_participation),
                        inactivity_scores: PackedListMut::Fixed(&mut s.inactivity_scores),
                        latest_execution_payload_header: Some(&mut s.latest_execution_payload_header),
                        $($efield: Some(&mut s.$efield),)*
                        pending_deposits: Some(TreeListMut::Fixed(&mut s.pending_deposits)),
                        pending_partial_withdrawals: Some(TreeListMut::Fixed(&mut s.pending_partial_withdrawals)),
                        pending_consolidations: Some(TreeListMut::Fixed(&mut s.pending_consolidations)),
                        proposer_lookahead: Some(&mut s.proposer_lookahead),
                        gloas: None,
                    }),
                    BeaconState::Gloas(s) => Ok(Self {
                        fork_name: ForkName::Gloas,
                        $($field: &mut s.$field,)*
                        validators: TreeListMut::Progressive(&mut s.validators),
                        balances: PackedListMut::Progressive(&mut s.balances),
                        previous_epoch_participation: PackedListMut::Progressive(&mut s.previous_epoch_participation),
                        current_epoch_participation: PackedListMut::Progressive(&mut s.current_epoch_participation),
                        inactivity_scores: PackedListMut::Progressive(&mut s.inactivity_scores),
                        latest_execution_payload_header: None,
                        $($efield: Some(&mut s.$efield),)*
                        pending_deposits: Some(TreeListMut::Progressive(&mut s.pending_deposits)),
                        pending_partial_withdrawals: Some(TreeListMut::Progressive(&mut s.pending_partial_withdrawals)),
                        pending_consolidations: Some(TreeListMut::Progressive(&mut s.pending_consolidations)),
                        proposer_lookahead: Some(&mut s.proposer_lookahead),
                        gloas: Some(GloasMut {
                            $($gfield: &mut s.$gfield,)*
                            builders: &mut s.builders,
                            builder_pending_withdrawals: &mut s.builder_pending_withdrawals,
                            payload_expected_withdrawals: &mut s.payload_expected_withdrawals,
                            _spec: std::marker::PhantomData,
                        }),
                    }),
                    other @ (BeaconState::Phase0(_)
                    | BeaconState::Altair(_)
                    | BeaconState::Bellatrix(_)
                    | BeaconState::Capella(_)) => Err(Error::UnsupportedFork(other.fork_name())),
                }
            }

            /// A shared view of the same fields, for the read-only helpers.
            pub fn as_ref(&self) -> StateRef<'_, E> {
                StateRef {
                    fork_name: self.fork_name,
                    $($field: &*self.$field,)*
                    validators: self.validators.as_ref(),
                    balances: self.balances.as_ref(),
                    previous_epoch_participation: self.previous_epoch_participation.as_ref(),
                    current_epoch_participation: self.current_epoch_participation.as_ref(),
                    inactivity_scores: self.inactivity_scores.as_ref(),
                    latest_execution_payload_header: self.latest_execution_payload_header.as_deref(),
                    $($efield: self.$efield.as_deref(),)*
                    pending_deposits: self.pending_deposits.as_ref().map(TreeListMut::as_ref),
                    pending_partial_withdrawals: self.pending_partial_withdrawals.as_ref().map(TreeListMut::as_ref),
                    pending_consolidations: self.pending_consolidations.as_ref().map(TreeListMut::as_ref),
                    proposer_lookahead: self.proposer_lookahead.as_deref(),
                    gloas: self.gloas.as_ref().map(GloasMut::as_ref),
                }
            }

            /// The Gloas fields, or the error that the state's fork (before Gloas) has none: the
            /// spec functions that touch them run only from Gloas on.
            pub fn gloas_mut(&mut self) -> Result<&mut GloasMut<'a, E>, Error> {
                let fork = self.fork_name;
                self.gloas.as_mut().ok_or(Error::MissingField { field: "gloas fields", fork })
            }
        }

        impl<'a, E: EthSpec> StateRef<'a, E> {
            /// A shared view of `state`; states before Deneb have no view.
            pub fn new(state: &'a BeaconState<E>) -> Result<Self, Error> {
                match state {
                    BeaconState::Deneb(s) => Ok(Self {
                        fork_name: ForkName::Deneb,
                        $($field: &s.$field,)*
                        validators: TreeListRef::Fixed(&s.validators),
                        balances: PackedListRef::Fixed(&s.balances),
                        previous_epoch_participation: PackedListRef::Fixed(&s.previous_epoch_participation),
                        current_epoch_participation: PackedListRef::Fixed(&s.current_epoch_participation),
                        inactivity_scores: PackedListRef::Fixed(&s.inactivity_scores),
                        latest_execution_payload_header: Some(&s.latest_execution_payload_header),
                        $($efield: None,)*
                        pending_deposits: None,
                        pending_partial_withdrawals: None,
                        pending_consolidations: None,
                        proposer_lookahead: None,
                        gloas: None,
                    }),
                    BeaconState::Electra(s) => Ok(Self {
                        fork_name: ForkName::Electra,
                        $($field: &s.$field,)*
                        validators: TreeListRef::Fixed(&s.validators),
                        balances: PackedListRef::Fixed(&s.balances),
                        previous_epoch_participation: PackedListRef::Fixed(&s.previous_epoch_participation),
                        current_epoch_participation: PackedListRef::Fixed(&s.current_epoch_participation),
                        inactivity_scores: PackedListRef::Fixed(&s.inactivity_scores),
                        latest_execution_payload_header: Some(&s.latest_execution_payload_header),
                        $($efield: Some(&s.$efield),)*
                        pending_deposits: Some(TreeListRef::Fixed(&s.pending_deposits)),
                        pending_partial_withdrawals: Some(TreeListRef::Fixed(&s.pending_partial_withdrawals)),
                        pending_consolidations: Some(TreeListRef::Fixed(&s.pending_consolidations)),
                        proposer_lookahead: None,
                        gloas: None,
                    }),
                    BeaconState::Fulu(s) => Ok(Self {
                        fork_name: ForkName::Fulu,
                        $($field: &s.$field,)*
                        validators: TreeListRef::Fixed(&s.validators),
                        balances: PackedListRef::Fixed(&s.balances),
                        previous_epoch_participation: PackedListRef::Fixed(&s.previous_epoch_participation),
                        current_epoch_participation: PackedListRef::Fixed(&s.current_epoch_participation),
                        inactivity_scores: PackedListRef::Fixed(&s.inactivity_scores),
                        latest_execution_payload_header: Some(&s.latest_execution_payload_header),
                        $($efield: Some(&s.$efield),)*
                        pending_deposits: Some(TreeListRef::Fixed(&s.pending_deposits)),
                        pending_partial_withdrawals: Some(TreeListRef::Fixed(&s.pending_partial_withdrawals)),
                        pending_consolidations: Some(TreeListRef::Fixed(&s.pending_consolidations)),
                        proposer_lookahead: Some(&s.proposer_lookahead),
                        gloas: None,
                    }),
                    BeaconState::Gloas(s) => Ok(Self {
                        fork_name: ForkName::Gloas,
                        $($field: &s.$field,)*
                        validators: TreeListRef::Progressive(&s.validators),
                        balances: PackedListRef::Progressive(&s.balances),
                        previous_epoch_participation: PackedListRef::Progressive(&s.previous_epoch_participation),
                        current_epoch_participation: PackedListRef::Progressive(&s.current_epoch_participation),
                        inactivity_scores: PackedListRef::Progressive(&s.inactivity_scores),
                        latest_execution_payload_header: None,
                        $($efield: Some(&s.$efield),)*
                        pending_deposits: Some(TreeListRef::Progressive(&s.pending_deposits)),
                        pending_partial_withdrawals: Some(TreeListRef::Progressive(&s.pending_partial_withdrawals)),
                        pending_consolidations: Some(TreeListRef::Progressive(&s.pending_consolidations)),
                        proposer_lookahead: Some(&s.proposer_lookahead),
                        gloas: Some(GloasRef {
                            $($gfield: &s.$gfield,)*
                            builders: &s.builders,
                            builder_pending_withdrawals: &s.builder_pending_withdrawals,
                            payload_expected_withdrawals: &s.payload_expected_withdrawals,
                            _spec: std::marker::PhantomData,
                        }),
                    }),
                    other @ (BeaconState::Phase0(_)
                    | BeaconState::Altair(_)
                    | BeaconState::Bellatrix(_)
                    | BeaconState::Capella(_)) => Err(Error::UnsupportedFork(other.fork_name())),
                }
            }

            /// `latest_execution_payload_header`, which every fork before Gloas has, or the
            /// error that the state is a Gloas one (EIP-7732 removed it: a Gloas state holds the
            /// latest block's bid and `latest_block_hash` instead).
            pub fn payload_header(&self) -> Result<&'a ExecutionPayloadHeader<E>, Error> {
                self.latest_execution_payload_header.ok_or(Error::MissingField {
                    field: "latest_execution_payload_header",
                    fork: self.fork_name,
                })
            }

            /// The Gloas fields, or the error that the state's fork (before Gloas) has none.
            pub fn gloas(&self) -> Result<GloasRef<'a, E>, Error> {
                self.gloas.ok_or(Error::MissingField { field: "gloas fields", fork: self.fork_name })
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
        randao_mixes: Vector<Root, E::EpochsPerHistoricalVector>,
        slashings: Vector<Gwei, E::EpochsPerSlashingsVector>,
        justification_bits: BitVector<U4>,
        previous_justified_checkpoint: Checkpoint,
        current_justified_checkpoint: Checkpoint,
        finalized_checkpoint: Checkpoint,
        current_sync_committee: SyncCommittee<E>,
        next_sync_committee: SyncCommittee<E>,
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
    }
    gloas {
        latest_block_hash: types::Hash256,
        next_withdrawal_builder_index: u64,
        execution_payload_availability: BitVector<E::SlotsPerHistoricalRoot>,
        builder_pending_payments: Vector<BuilderPendingPayment, E::BuilderPendingPaymentsLength>,
        latest_execution_payload_bid: ExecutionPayloadBid,
        ptc_window: PtcWindow<E>,
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
        if let Some(gloas) = self.gloas.as_mut() {
            gloas.builder_pending_payments.apply_updates()?;
            gloas.ptc_window.apply_updates()?;
        }
        Ok(())
    }
}
