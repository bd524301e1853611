//! The registry of runners: one per runner directory of the vectors.
//!
//! To cover a new runner directory, add a module here with a type implementing
//! [`Runner`](crate::Runner) and list it in [`all`].

mod bls;
mod epoch_processing;
mod fast_confirmation;
mod fork;
mod fork_choice;
mod fork_choice_gloas;
mod genesis;
mod gossip;
mod kzg;
mod light_client;
mod merkle_proof;
mod networking;
mod operations;
mod rewards;
mod sanity;
mod shuffling;
mod ssz_generic;
mod ssz_static;
mod state_case;
mod sync;
mod transition;

pub use shuffling::Shuffling;
pub use ssz_generic::SszGeneric;
pub use ssz_static::SszStatic;

use crate::case::Runner;

/// Every runner the harness knows; runner directories not named by one of these are reported as
/// "not covered yet".
pub fn all() -> Vec<Box<dyn Runner>> {
    vec![
        Box::new(SszStatic),
        Box::new(SszGeneric),
        Box::new(Shuffling),
        Box::new(bls::Bls),
        Box::new(kzg::Kzg),
        Box::new(networking::Networking),
        Box::new(merkle_proof::MerkleProof),
        Box::new(light_client::LightClient),
        Box::new(sanity::Sanity),
        Box::new(sanity::Finality),
        Box::new(sanity::Random),
        Box::new(operations::Operations),
        Box::new(epoch_processing::EpochProcessing),
        Box::new(fork::Fork),
        Box::new(fork_choice::ForkChoiceRunner),
        Box::new(sync::Sync),
        Box::new(fast_confirmation::FastConfirmation),
        Box::new(transition::Transition),
        Box::new(rewards::Rewards),
        Box::new(genesis::Genesis),
    ]
}
