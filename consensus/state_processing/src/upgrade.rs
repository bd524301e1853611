//! Fork upgrades: Deneb → Electra ([`crate::electra::fork`]) and Electra → Fulu
//! ([`crate::fulu::fork`]), each beside the rest of its fork.
//!
//! [spec]: electra/fork.md#upgrading-the-state (and the same section of fulu/fork.md)

pub use crate::electra::upgrade_to_electra;
pub use crate::fulu::upgrade_to_fulu;
