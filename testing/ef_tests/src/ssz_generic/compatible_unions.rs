//! `compatible_unions` handler: the EIP-8016 test unions of consensus-specs
//! `ssz_compatible_union.py`, cases named `<Union>_…`.

use std::path::Path;

use progressive_ssz::compatible_union;
use serde_yaml::{Mapping, Value};

use super::case::{Suite, check};
use super::progressive_containers::{
    ProgressiveSingleFieldContainerTestStruct, ProgressiveSingleListContainerTestStruct,
    ProgressiveVarTestStruct,
};
use super::yaml::ToYaml;

compatible_union! {
    /// `CompatibleUnionA`.
    #[derive(Debug, Clone, PartialEq)]
    enum CompatibleUnionA {
        1 => A(ProgressiveSingleFieldContainerTestStruct),
    }
}

compatible_union! {
    /// `CompatibleUnionBC`.
    #[derive(Debug, Clone, PartialEq)]
    enum CompatibleUnionBC {
        2 => B(ProgressiveSingleListContainerTestStruct),
        3 => C(ProgressiveVarTestStruct),
    }
}

compatible_union! {
    /// `CompatibleUnionABCA`: the same type under two selectors.
    #[derive(Debug, Clone, PartialEq)]
    enum CompatibleUnionABCA {
        1 => A(ProgressiveSingleFieldContainerTestStruct),
        2 => B(ProgressiveSingleListContainerTestStruct),
        3 => C(ProgressiveVarTestStruct),
        4 => A2(ProgressiveSingleFieldContainerTestStruct),
    }
}

/// Implements [`ToYaml`] for a union as `{selector: <n>, data: <value>}`.
macro_rules! union_to_yaml {
    ($name:ident { $($variant:ident),+ $(,)? }) => {
        impl ToYaml for $name {
            fn to_yaml(&self) -> Value {
                let data = match self {
                    $(Self::$variant(data) => data.to_yaml(),)+
                };
                let mut map = Mapping::new();
                map.insert("selector".into(), u64::from(self.selector()).into());
                map.insert("data".into(), data);
                Value::Mapping(map)
            }
        }
    };
}
union_to_yaml!(CompatibleUnionA { A });
union_to_yaml!(CompatibleUnionBC { B, C });
union_to_yaml!(CompatibleUnionABCA { A, B, C, A2 });

pub(super) fn run(case: &str, suite: Suite, dir: &Path) -> Result<(), String> {
    match case.split('_').next().unwrap_or_default() {
        "CompatibleUnionA" => check::<CompatibleUnionA>(suite, dir),
        "CompatibleUnionBC" => check::<CompatibleUnionBC>(suite, dir),
        "CompatibleUnionABCA" => check::<CompatibleUnionABCA>(suite, dir),
        other => Err(format!("unknown compatible union {other:?}")),
    }
}
