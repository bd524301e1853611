//! The state transition as the spec has it at Deneb, where Electra later modifies it.
//!
//! A node of this crate starts at Electra or later, so a Deneb state is only ever processed to
//! carry it to the Electra fork (the `fork` and `transition` vectors start from Deneb states and
//! run Deneb blocks). What the forks share is written once, in [`crate::common`],
//! [`crate::per_block`] and [`crate::per_epoch`], against the field views of [`crate::view`];
//! this module holds the functions whose Deneb form differs from Electra's, under the spec's
//! names, so each can be read against the spec section it cites:
//!
//! - [`helpers`]: `compute_proposer_index` and the sync-committee draw (one random byte per
//!   candidate, `MAX_EFFECTIVE_BALANCE`), `get_validator_churn_limit`,
//!   `get_validator_activation_churn_limit`, `initiate_validator_exit` (the exit queue by
//!   validator count), `get_validator_from_deposit`, and the Capella withdrawal predicates;
//! - [`per_block`]: `process_block` over a Deneb block, `process_execution_payload` (Deneb's
//!   blob limit, no execution requests), `process_operations` (eth1 deposits only),
//!   `process_attestation` (one committee per attestation, `data.index`),
//!   `process_attester_slashing`, `apply_deposit`;
//! - [`per_epoch`]: `process_epoch` (no pending deposits or consolidations),
//!   `process_registry_updates` (the activation queue and its churn), `process_slashings`
//!   (Bellatrix's penalty), `process_effective_balance_updates` (`MAX_EFFECTIVE_BALANCE`).
//!
//! The shared helpers that Electra modifies (`get_beacon_proposer_index`,
//! `initiate_validator_exit`, `slash_validator`, `add_validator_to_registry`,
//! `get_expected_withdrawals`, `process_voluntary_exit`, `get_next_sync_committee_indices`)
//! call the Deneb form here for a Deneb state.
//!
//! [spec]: deneb/beacon-chain.md (and the phase0, altair, bellatrix and capella sections it
//! keeps)

pub mod helpers;
pub mod per_block;
pub mod per_epoch;

pub use helpers::{
    compute_proposer_index, get_next_sync_committee_indices, get_validator_activation_churn_limit,
    get_validator_churn_limit, get_validator_from_deposit, initiate_validator_exit,
    is_eligible_for_activation_queue, is_fully_withdrawable_validator,
    is_partially_withdrawable_validator,
};
pub use per_block::{
    apply_deposit, process_attestation, process_attester_slashing, process_block,
    process_execution_payload, process_operations,
};
pub use per_epoch::{
    process_effective_balance_updates, process_epoch, process_registry_updates, process_slashings,
};
