//! The registry of runners: one per runner directory of the vectors.
//!
//! To cover a new runner directory, add a module here with a type implementing
//! [`Runner`](crate::Runner) and list it in [`all`].

mod bls;
mod kzg;
mod shuffling;
mod ssz_generic;
mod ssz_static;

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
    ]
}
