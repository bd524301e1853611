//! `ssz_generic`: hands each case to [`crate::ssz_generic::run_case`].

use crate::case::{CaseContext, CaseResult, Runner};

/// Runs `general/*/ssz_generic/<handler>/<suite>/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SszGeneric;

impl Runner for SszGeneric {
    fn name(&self) -> &'static str {
        "ssz_generic"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        CaseResult::from_check(crate::ssz_generic::run_case(
            &case.handler,
            &case.suite,
            &case.path,
        ))
    }
}
