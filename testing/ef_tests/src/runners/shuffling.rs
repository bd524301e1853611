//! `shuffling`: `compute_shuffled_index` and the whole-list shuffle against `mapping.yaml`.
//!
//! [format]: consensus-specs tests/formats/shuffling/README.md

use serde::Deserialize;
use swap_or_not_shuffle::{compute_shuffled_index, shuffle_list};
use types::{EthSpec, MainnetEthSpec, MinimalEthSpec};

use crate::case::{CaseContext, CaseResult, Preset, Runner};
use crate::files::{decode_hex32, read_yaml};

/// Runs `<config>/<fork>/shuffling/core/shuffle/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shuffling;

/// `mapping.yaml`: `mapping[i] == compute_shuffled_index(i, count, seed)`.
#[derive(Debug, Deserialize)]
struct Mapping {
    seed: String,
    count: u64,
    mapping: Vec<u64>,
}

impl Runner for Shuffling {
    fn name(&self) -> &'static str {
        "shuffling"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        if (case.handler.as_str(), case.suite.as_str()) != ("core", "shuffle") {
            return CaseResult::NotRun(format!(
                "no shuffling handler for {}/{}",
                case.handler, case.suite
            ));
        }
        let rounds = match case.preset() {
            Ok(Preset::Minimal) => MinimalEthSpec::SHUFFLE_ROUND_COUNT,
            Ok(Preset::Mainnet) => MainnetEthSpec::SHUFFLE_ROUND_COUNT,
            Err(e) => return CaseResult::Failed(e),
        };
        CaseResult::from_check(check(case, rounds))
    }
}

fn check(case: &CaseContext, rounds: u8) -> Result<(), String> {
    let vector: Mapping = read_yaml(&case.file("mapping.yaml"))?;
    let seed = decode_hex32(&vector.seed)?;
    let count = usize::try_from(vector.count)
        .map_err(|_| format!("count {} does not fit a usize", vector.count))?;
    if vector.mapping.len() != count {
        return Err(format!(
            "mapping has {} entries for count {count}",
            vector.mapping.len()
        ));
    }
    let expected: Vec<usize> = vector
        .mapping
        .iter()
        .map(|&m| usize::try_from(m).map_err(|_| format!("mapping entry {m} does not fit a usize")))
        .collect::<Result<_, _>>()?;

    for (i, &want) in expected.iter().enumerate() {
        let got = compute_shuffled_index(i, count, &seed, rounds);
        if got != Some(want) {
            return Err(format!(
                "compute_shuffled_index({i}, {count}) = {got:?}, expected {want}"
            ));
        }
    }

    // The spec's order, applied to the identity list, is the mapping itself.
    let forwards = shuffle_list((0..count).collect(), rounds, &seed, true)
        .ok_or_else(|| format!("shuffle_list refused {count} indices"))?;
    if let Some(i) = first_difference(&forwards, &expected) {
        return Err(format!(
            "shuffle_list(forwards)[{i}] = {:?}, expected {:?}",
            forwards.get(i),
            expected.get(i)
        ));
    }

    // The other direction is the inverse permutation: output[mapping[i]] == i.
    let backwards = shuffle_list((0..count).collect(), rounds, &seed, false)
        .ok_or_else(|| format!("shuffle_list refused {count} indices"))?;
    for (i, &m) in expected.iter().enumerate() {
        if backwards.get(m) != Some(&i) {
            return Err(format!(
                "shuffle_list(backwards)[{m}] = {:?}, expected {i}",
                backwards.get(m)
            ));
        }
    }
    Ok(())
}

fn first_difference(a: &[usize], b: &[usize]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}
