//! What Fulu defines new: the proposer lookahead (EIP-7917) and the upgrade of an Electra state.
//!
//! Fulu's modifications of shared functions stay in them, on the state's fork, marked
//! `[Modified in Fulu]`: `common::get_beacon_proposer_index` (read from the lookahead),
//! `per_block::process_execution_payload` (the blob schedule's limit),
//! `per_block::process_operations` and `per_block::process_deposit_request` (no eth1 deposits),
//! `per_epoch::process_pending_deposits` (no eth1 bridge) and `per_epoch::process_epoch` (which
//! ends with `process_proposer_lookahead`).
//!
//! [spec]: fulu/beacon-chain.md (and fulu/fork.md)

pub mod fork;
pub mod proposer_lookahead;

pub use fork::upgrade_to_fulu;
pub use proposer_lookahead::{
    compute_proposer_indices, get_beacon_proposer_indices, initialize_proposer_lookahead,
    process_proposer_lookahead,
};
