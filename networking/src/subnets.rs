//! Subnet mathematics of the consensus p2p spec, which lives in [`types::subnets`] so the chain's
//! gossip validation reads the same functions without knowing libp2p.

pub use types::subnets::*;
