//! `ssz_generic` runner: SSZ decoding, encoding and `hash_tree_root` of generic types, including
//! the progressive types of EIP-7916/EIP-7495 and the compatible unions of EIP-8016 (those from
//! the `progressive_ssz` crate; this module holds only the test types and the vector plumbing).
//!
//! The SSZ type of a case comes from its handler and the leading part of its name
//! (`vec_uint16_512_zero` is `Vector[uint16, 512]`), as the consensus-specs generator names them.
//!
//! [format]: consensus-specs `tests/formats/ssz_generic/README.md`

use std::path::Path;

mod basic_vector;
mod bitfields;
mod case;
mod compatible_unions;
mod containers;
mod progressive_containers;
mod progressive_lists;
mod uints;
mod yaml;

use case::Suite;

/// Runs one `ssz_generic` case: `handler` (e.g. `uints`), `suite` (`valid` or `invalid`), the
/// case directory. `Ok(())` when the case passes; a case whose type is unknown fails.
pub fn run_case(handler: &str, suite: &str, case_dir: &Path) -> Result<(), String> {
    let case = case_dir
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| format!("case directory {} has no UTF-8 name", case_dir.display()))?;
    let result = Suite::from_dir_name(suite).and_then(|suite| match handler {
        "uints" => uints::run_uints(case, suite, case_dir),
        "boolean" => uints::run_boolean(suite, case_dir),
        "basic_vector" => basic_vector::run(case, suite, case_dir),
        "bitlist" => bitfields::run_bitlist(case, suite, case_dir),
        "bitvector" => bitfields::run_bitvector(case, suite, case_dir),
        "containers" => containers::run(case, suite, case_dir),
        "basic_progressive_list" => {
            progressive_lists::run_basic_progressive_list(case, suite, case_dir)
        }
        "progressive_bitlist" => progressive_lists::run_progressive_bitlist(suite, case_dir),
        "progressive_containers" => progressive_containers::run(case, suite, case_dir),
        "compatible_unions" => compatible_unions::run(case, suite, case_dir),
        other => Err(format!("unknown ssz_generic handler {other:?}")),
    });
    result.map_err(|e| format!("ssz_generic/{handler}/{suite}/{case}: {e}"))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fs;
    use std::path::{Path, PathBuf};

    use super::run_case;

    fn sorted_subdirs(dir: &Path) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|entry| entry.expect("readable directory entry").path())
            .filter(|path| path.is_dir())
            .collect();
        dirs.sort();
        dirs
    }

    /// Runs every vector under `$ARBOR_SPEC_TESTS/tests/general/phase0/ssz_generic`; skipped
    /// when the variable is unset (the harness in `tests/spec_tests.rs` is the real run).
    #[test]
    fn all_ssz_generic_vectors_pass() {
        let Some(root) = std::env::var_os("ARBOR_SPEC_TESTS") else {
            eprintln!("ARBOR_SPEC_TESTS unset: skipping the ssz_generic vectors");
            return;
        };
        let runner_dir = Path::new(&root).join("tests/general/phase0/ssz_generic");
        let mut counts: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
        let mut failures = Vec::new();
        for handler_dir in sorted_subdirs(&runner_dir) {
            let handler = handler_dir
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            for suite_dir in sorted_subdirs(&handler_dir) {
                let suite = suite_dir
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                for case_dir in sorted_subdirs(&suite_dir) {
                    let entry = counts.entry((handler.clone(), suite.clone())).or_default();
                    match run_case(&handler, &suite, &case_dir) {
                        Ok(()) => entry.0 += 1,
                        Err(e) => {
                            entry.1 += 1;
                            failures.push(e);
                        }
                    }
                }
            }
        }
        for ((handler, suite), (passed, failed)) in &counts {
            eprintln!("{handler:>24} {suite:>8}: {passed:>4} passed {failed:>4} failed");
        }
        for failure in &failures {
            eprintln!("FAIL {failure}");
        }
        assert!(
            !counts.is_empty(),
            "no cases under {}",
            runner_dir.display()
        );
        assert!(
            failures.is_empty(),
            "{} ssz_generic cases failed",
            failures.len()
        );
    }
}
