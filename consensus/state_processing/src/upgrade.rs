//! Fork upgrades: Deneb → Electra ([`crate::electra::fork`]), Electra → Fulu
//! ([`crate::fulu::fork`]) and Fulu → Gloas ([`crate::gloas::fork`]), each beside the rest of
//! its fork.
//!
//! [spec]: electra/fork.md#upgrading-the-state (and the same section of fulu/fork.md)

pub use crate::electra::upgrade_to_electra;
pub use crate::fulu::upgrade_to_fulu;
pub use crate::gloas::fork::{
    upgrade_attestation_to_gloas, upgrade_attester_slashing_to_gloas,
    upgrade_indexed_attestation_to_gloas, upgrade_to_gloas,
};
