//! `basic_vector` handler: `Vector[<basic type>, N]`, cases named `vec_<type>_<N>_…`.

use std::path::Path;

use alloy_primitives::{U128, U256};
use ssz_types::FixedVector;
use typenum::{U1, U2, U3, U4, U5, U8, U16, U31, U512, U513};

use super::case::{Suite, check};

/// Dispatches on the element type name, then on the length (see [`vector_of_length`]).
macro_rules! vector_of_type {
    ($elem:expr, $len:expr, $suite:expr, $dir:expr, $lengths:tt, [$($name:literal => $ty:ty),+ $(,)?]) => {
        match $elem {
            $($name => vector_of_length!($ty, $len, $suite, $dir, $lengths),)+
            other => Err(format!("unknown vector element type {other:?}")),
        }
    };
}

/// Runs the case as `FixedVector<$ty, N>` for the `N` matching the length in the name.
macro_rules! vector_of_length {
    ($ty:ty, $len:expr, $suite:expr, $dir:expr, [$($n:literal => $size:ty),+ $(,)?]) => {
        match $len {
            $($n => check::<FixedVector<$ty, $size>>($suite, $dir),)+
            other => Err(format!("no vector length {other} in this runner")),
        }
    };
}

pub(super) fn run(case: &str, suite: Suite, dir: &Path) -> Result<(), String> {
    let mut parts = case.strip_prefix("vec_").unwrap_or_default().split('_');
    let (Some(elem), Some(len)) = (parts.next(), parts.next()) else {
        return Err(format!("case name {case:?} is not vec_<type>_<length>_…"));
    };
    vector_of_type!(
        elem,
        len,
        suite,
        dir,
        [
            // `vec_<type>_0` is invalid input for `Vector[<type>, 1]`: the generator's stand-in,
            // as zero-length vectors are not valid types.
            "0" => U1,
            "1" => U1,
            "2" => U2,
            "3" => U3,
            "4" => U4,
            "5" => U5,
            "8" => U8,
            "16" => U16,
            "31" => U31,
            "512" => U512,
            "513" => U513,
        ],
        [
            "bool" => bool,
            "uint8" => u8,
            "uint16" => u16,
            "uint32" => u32,
            "uint64" => u64,
            "uint128" => U128,
            "uint256" => U256,
        ]
    )
}
