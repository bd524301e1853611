//! `progressive_containers` handler: the EIP-7495 test containers of consensus-specs
//! `ssz_progressive_container.py`, cases named `<Container>_…`.

use std::path::Path;

use progressive_ssz::{ProgressiveBitList, ProgressiveList, progressive_container};
use serde::{Deserialize, Serialize};
use ssz_types::VariableList;
use typenum::{U10, U123};

use super::case::{Suite, check};
use super::containers::{SmallTestStruct, VarTestStruct};
use super::yaml::container_to_yaml;

progressive_container! {
    active_fields: [1],
    /// `ProgressiveSingleFieldContainerTestStruct` (serde: an option of the compatible unions).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub(super) struct ProgressiveSingleFieldContainerTestStruct {
        a: u8,
    }
}
container_to_yaml!(ProgressiveSingleFieldContainerTestStruct { "A" => a });

progressive_container! {
    active_fields: [0, 0, 0, 0, 1],
    /// `ProgressiveSingleListContainerTestStruct` (serde: an option of the compatible unions).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub(super) struct ProgressiveSingleListContainerTestStruct {
        c: ProgressiveBitList,
    }
}
container_to_yaml!(ProgressiveSingleListContainerTestStruct { "C" => c });

progressive_container! {
    active_fields: [1, 0, 1, 0, 1],
    /// `ProgressiveVarTestStruct` (serde: an option of the compatible unions).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub(super) struct ProgressiveVarTestStruct {
        a: u8,
        b: VariableList<u16, U123>,
        c: ProgressiveBitList,
    }
}
container_to_yaml!(ProgressiveVarTestStruct { "A" => a, "B" => b, "C" => c });

progressive_container! {
    active_fields: [1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1],
    /// `ProgressiveComplexTestStruct`.
    #[derive(Debug, Clone, PartialEq)]
    pub(super) struct ProgressiveComplexTestStruct {
        a: u8,
        b: VariableList<u16, U123>,
        c: ProgressiveBitList,
        d: ProgressiveList<u64>,
        e: ProgressiveList<SmallTestStruct>,
        f: ProgressiveList<ProgressiveList<VarTestStruct>>,
        g: VariableList<ProgressiveSingleFieldContainerTestStruct, U10>,
        h: ProgressiveList<ProgressiveVarTestStruct>,
    }
}
container_to_yaml!(ProgressiveComplexTestStruct {
    "A" => a, "B" => b, "C" => c, "D" => d, "E" => e, "F" => f, "G" => g, "H" => h,
});

pub(super) fn run(case: &str, suite: Suite, dir: &Path) -> Result<(), String> {
    match case.split('_').next().unwrap_or_default() {
        "ProgressiveSingleFieldContainerTestStruct" => {
            check::<ProgressiveSingleFieldContainerTestStruct>(suite, dir)
        }
        "ProgressiveSingleListContainerTestStruct" => {
            check::<ProgressiveSingleListContainerTestStruct>(suite, dir)
        }
        "ProgressiveVarTestStruct" => check::<ProgressiveVarTestStruct>(suite, dir),
        "ProgressiveComplexTestStruct" => check::<ProgressiveComplexTestStruct>(suite, dir),
        other => Err(format!("unknown progressive container {other:?}")),
    }
}
