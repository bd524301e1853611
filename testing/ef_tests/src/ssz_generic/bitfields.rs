//! `bitlist` (`bitlist_<limit>_…`) and `bitvector` (`bitvec_<size>_…`) handlers.

use std::path::Path;

use ssz::{BitList, BitVector};
use typenum::{U1, U2, U3, U4, U5, U6, U7, U8, U9, U15, U16, U17, U31, U32, U33, U511, U512, U513};

use super::case::{Suite, check};

/// Runs the case as `$bitfield<N>` for the `N` named by `$size`.
macro_rules! bitfield_of_size {
    ($bitfield:ident, $size:expr, $suite:expr, $dir:expr, [$($n:literal => $ty:ty),+ $(,)?]) => {
        match $size {
            $($n => check::<$bitfield<$ty>>($suite, $dir),)+
            other => Err(format!("no {} size {other} in this runner", stringify!($bitfield))),
        }
    };
}

/// The number after `prefix` in `case` (`bitlist_512_random_1` → `512`).
fn size_after<'a>(case: &'a str, prefix: &str) -> Result<&'a str, String> {
    case.strip_prefix(prefix)
        .and_then(|rest| rest.split('_').next())
        .ok_or_else(|| format!("case name {case:?} is not {prefix}<size>_…"))
}

pub(super) fn run_bitlist(case: &str, suite: Suite, dir: &Path) -> Result<(), String> {
    bitfield_of_size!(
        BitList,
        size_after(case, "bitlist_")?,
        suite,
        dir,
        [
            "1" => U1, "2" => U2, "3" => U3, "4" => U4, "5" => U5, "6" => U6, "7" => U7,
            "8" => U8, "9" => U9, "15" => U15, "16" => U16, "17" => U17, "31" => U31,
            "32" => U32, "33" => U33, "511" => U511, "512" => U512, "513" => U513,
        ]
    )
}

pub(super) fn run_bitvector(case: &str, suite: Suite, dir: &Path) -> Result<(), String> {
    bitfield_of_size!(
        BitVector,
        size_after(case, "bitvec_")?,
        suite,
        dir,
        [
            // `bitvec_0` is invalid input for `Bitvector[1]`: the generator's stand-in, as
            // zero-length bitvectors are not valid types.
            "0" => U1,
            "1" => U1, "2" => U2, "3" => U3, "4" => U4, "5" => U5, "6" => U6, "7" => U7,
            "8" => U8, "9" => U9, "15" => U15, "16" => U16, "17" => U17, "31" => U31,
            "32" => U32, "33" => U33, "511" => U511, "512" => U512, "513" => U513,
        ]
    )
}
