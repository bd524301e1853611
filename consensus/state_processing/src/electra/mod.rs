//! What Electra's `fork.md` defines: the upgrade of a Deneb state.
//!
//! Electra's block and epoch processing is the crate's shared processing ([`crate::per_block`],
//! [`crate::per_epoch`], [`crate::common`]), written in its Electra form (the functions carry
//! `[New in Electra]` / `[Modified in Electra]`); its Deneb forms are in [`crate::deneb`].
//!
//! [spec]: electra/fork.md

pub mod fork;

pub use fork::upgrade_to_electra;
