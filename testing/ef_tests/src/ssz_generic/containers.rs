//! `containers` handler: the test containers of consensus-specs
//! `tests/generators/ssz_generic/ssz_container.py`, cases named `<Container>_…`.

use std::path::Path;

use progressive_ssz::{ProgressiveBitList, ProgressiveList};
use ssz::{BitList, BitVector};
use ssz_derive::{Decode, Encode};
use ssz_types::{FixedVector, VariableList};
use tree_hash_derive::TreeHash;
use typenum::{Sum, U1, U2, U4, U5, U6, U8, U128, U256, U257, U1024};

use super::case::{Suite, check};
use super::yaml::container_to_yaml;

/// `SingleFieldTestStruct`.
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
pub(super) struct SingleFieldTestStruct {
    a: u8,
}
container_to_yaml!(SingleFieldTestStruct { "A" => a });

/// `SmallTestStruct`.
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
pub(super) struct SmallTestStruct {
    a: u16,
    b: u16,
}
container_to_yaml!(SmallTestStruct { "A" => a, "B" => b });

/// `FixedTestStruct`.
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
pub(super) struct FixedTestStruct {
    a: u8,
    b: u64,
    c: u32,
}
container_to_yaml!(FixedTestStruct { "A" => a, "B" => b, "C" => c });

/// `VarTestStruct`.
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
pub(super) struct VarTestStruct {
    a: u16,
    b: VariableList<u16, U1024>,
    c: u8,
}
container_to_yaml!(VarTestStruct { "A" => a, "B" => b, "C" => c });

/// `ComplexTestStruct`.
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
pub(super) struct ComplexTestStruct {
    a: u16,
    b: VariableList<u16, U128>,
    c: u8,
    d: VariableList<u8, U256>,
    e: VarTestStruct,
    f: FixedVector<FixedTestStruct, U4>,
    g: FixedVector<VarTestStruct, U2>,
}
container_to_yaml!(ComplexTestStruct {
    "A" => a, "B" => b, "C" => c, "D" => d as hex, "E" => e, "F" => f, "G" => g,
});

/// `ProgressiveTestStruct`: a classic container of progressive lists.
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
pub(super) struct ProgressiveTestStruct {
    a: ProgressiveList<u8>,
    b: ProgressiveList<u64>,
    c: ProgressiveList<SmallTestStruct>,
    d: ProgressiveList<ProgressiveList<VarTestStruct>>,
}
container_to_yaml!(ProgressiveTestStruct { "A" => a as hex, "B" => b, "C" => c, "D" => d });

/// `BitsStruct`.
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
pub(super) struct BitsStruct {
    a: BitList<U5>,
    b: BitVector<U2>,
    c: BitVector<U1>,
    d: BitList<U6>,
    e: BitVector<U8>,
}
container_to_yaml!(BitsStruct { "A" => a, "B" => b, "C" => c, "D" => d, "E" => e });

type U1280 = Sum<U1024, U256>;
type U1281 = Sum<U1024, U257>;

/// `ProgressiveBitsStruct`: bitfields either side of the progressive subtree boundaries.
#[derive(Debug, Clone, PartialEq, Encode, Decode, TreeHash)]
pub(super) struct ProgressiveBitsStruct {
    a: BitVector<U256>,
    b: BitList<U256>,
    c: ProgressiveBitList,
    d: BitVector<U257>,
    e: BitList<U257>,
    f: ProgressiveBitList,
    g: BitVector<U1280>,
    h: BitList<U1280>,
    i: ProgressiveBitList,
    j: BitVector<U1281>,
    k: BitList<U1281>,
    l: ProgressiveBitList,
}
container_to_yaml!(ProgressiveBitsStruct {
    "A" => a, "B" => b, "C" => c, "D" => d, "E" => e, "F" => f,
    "G" => g, "H" => h, "I" => i, "J" => j, "K" => k, "L" => l,
});

pub(super) fn run(case: &str, suite: Suite, dir: &Path) -> Result<(), String> {
    match case.split('_').next().unwrap_or_default() {
        "SingleFieldTestStruct" => check::<SingleFieldTestStruct>(suite, dir),
        "SmallTestStruct" => check::<SmallTestStruct>(suite, dir),
        "FixedTestStruct" => check::<FixedTestStruct>(suite, dir),
        "VarTestStruct" => check::<VarTestStruct>(suite, dir),
        "ComplexTestStruct" => check::<ComplexTestStruct>(suite, dir),
        "ProgressiveTestStruct" => check::<ProgressiveTestStruct>(suite, dir),
        "BitsStruct" => check::<BitsStruct>(suite, dir),
        "ProgressiveBitsStruct" => check::<ProgressiveBitsStruct>(suite, dir),
        other => Err(format!("unknown container {other:?}")),
    }
}
