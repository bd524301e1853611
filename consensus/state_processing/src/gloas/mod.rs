//! Gloas (EIP-7732 ePBS, EIP-7688 progressive containers, EIP-8061 churn, EIP-8045 proposer
//! selection, EIP-8282 builder requests): what the fork defines new beside the shared processing,
//! laid out as `specs/gloas/beacon-chain.md` and `fork.md` lay it out.
//!
//! - [`builders`]: the builder registry's predicates, accessors and mutators;
//! - [`per_block`]: the block in the spec's order (the parent's execution payload, withdrawals,
//!   the bid, payload attestations, builder requests);
//! - [`envelope`]: the pure `verify_execution_payload_envelope` fork choice and gossip call;
//! - [`ptc`]: the payload timeliness committee and the balance-weighted selection;
//! - [`per_epoch`]: builder pending payments and the PTC window;
//! - [`fork`]: `upgrade_to_gloas` and the upgrades of pre-fork operations.
//!
//! Functions the spec modifies rather than adds stay where the shared processing has them, with
//! the Gloas branch marked `[Modified in Gloas]`.

pub mod builders;
pub mod envelope;
pub mod fork;
pub mod per_block;
pub mod per_epoch;
pub mod ptc;
