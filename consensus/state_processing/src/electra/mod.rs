//! What Electra defines new: the execution-layer requests (EIP-6110, EIP-7002, EIP-7251), the
//! pending deposit and consolidation queues of epoch processing, and the upgrade of a Deneb
//! state.
//!
//! Electra's modifications of the functions the forks share are made in them, in the crate's
//! shared processing ([`crate::per_block`], [`crate::per_epoch`], [`crate::common`]), marked
//! `[Modified in Electra]`; their Deneb forms are in [`crate::deneb`].
//!
//! [spec]: electra/beacon-chain.md (and electra/fork.md)

pub mod execution_requests;
pub mod fork;
pub mod pending_deposits;

pub use execution_requests::{
    is_valid_switch_to_compounding_request, process_consolidation_request, process_deposit_request,
    process_withdrawal_request,
};
pub use fork::upgrade_to_electra;
pub use pending_deposits::{
    apply_pending_deposit, process_pending_consolidations, process_pending_deposits,
};
