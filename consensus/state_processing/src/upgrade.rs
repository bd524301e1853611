//! Fork upgrades: Deneb → Electra and Electra → Fulu.
//!
//! [spec]: electra/fork.md#upgrading-the-state (and the same section of fulu/fork.md)

mod electra;
mod fulu;

pub use electra::upgrade_to_electra;
pub use fulu::upgrade_to_fulu;
