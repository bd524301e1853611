//! `rewards`: the per-flag attestation deltas and the inactivity penalty deltas of a state.
//!
//! A case holds `pre` and `source_deltas`, `target_deltas`, `head_deltas`,
//! `inactivity_penalty_deltas`: each a `Deltas { rewards, penalties }` container of two `u64`
//! lists, one entry per validator. The fused `process_epoch` must also equal the epoch steps run
//! one by one on `pre`.
//!
//! [format]: consensus-specs tests/formats/rewards/README.md

use ssz_derive::Decode;
use state_processing::CachedBeaconState;
use state_processing::per_epoch::{get_flag_index_deltas, get_inactivity_penalty_deltas};
use types::EthSpec;

use super::epoch_processing::check_fused_equals_steps;
use super::state_case::{chain_spec, check_known_files, read_ssz, read_state, with_preset};
use crate::case::{CaseContext, CaseResult, PendingFork, Runner};

/// `TIMELY_SOURCE_FLAG_INDEX`, `TIMELY_TARGET_FLAG_INDEX`, `TIMELY_HEAD_FLAG_INDEX` with their
/// files.
const FLAG_DELTAS: [(usize, &str); 3] = [
    (0, "source_deltas"),
    (1, "target_deltas"),
    (2, "head_deltas"),
];

/// Runs `<config>/<fork>/rewards/<handler>/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Rewards;

impl Runner for Rewards {
    fn name(&self) -> &'static str {
        "rewards"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        match case.handler.as_str() {
            "basic" | "leak" | "random" | "inactivity_scores" => with_preset!(case, run(case)),
            other => CaseResult::NotRun(format!("no rewards handler for {other}")),
        }
    }

    /// Gloas cases run through the same code: the state transition runs Gloas states.
    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        self.run_case(&case.released())
    }
}

/// `Deltas`: the test format's container (its lists are SSZ-encoded like any list).
#[derive(Debug, PartialEq, Decode)]
struct Deltas {
    rewards: Vec<u64>,
    penalties: Vec<u64>,
}

fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check::<E>(case))
}

fn check<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    check_known_files(
        case,
        &[
            "pre.ssz_snappy",
            "source_deltas.ssz_snappy",
            "target_deltas.ssz_snappy",
            "head_deltas.ssz_snappy",
            "inactivity_penalty_deltas.ssz_snappy",
        ],
    )?;
    let spec = chain_spec(case, case.fork)?;
    let pre = read_state::<E>(case, "pre", case.fork)?;
    check_fused_equals_steps(&pre, &spec)?;
    let state = CachedBeaconState::new(pre);
    let view = state
        .view()
        .map_err(|e| format!("pre state has no view: {e}"))?;
    for (flag, name) in FLAG_DELTAS {
        let got = get_flag_index_deltas(&view, flag, &spec)
            .map_err(|e| format!("get_flag_index_deltas({flag}) failed: {e}"))?;
        compare(name, got, read_ssz(case, name)?)?;
    }
    let got = get_inactivity_penalty_deltas(&view, &spec)
        .map_err(|e| format!("get_inactivity_penalty_deltas failed: {e}"))?;
    compare(
        "inactivity_penalty_deltas",
        got,
        read_ssz(case, "inactivity_penalty_deltas")?,
    )
}

fn compare(
    name: &str,
    (rewards, penalties): (Vec<u64>, Vec<u64>),
    want: Deltas,
) -> Result<(), String> {
    for (what, got, want) in [
        ("rewards", &rewards, &want.rewards),
        ("penalties", &penalties, &want.penalties),
    ] {
        if got.len() != want.len() {
            return Err(format!(
                "{name}.{what}: {} entries, expected {}",
                got.len(),
                want.len()
            ));
        }
        if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
            return Err(format!(
                "{name}.{what}[{i}] = {}, expected {} ({} entries differ)",
                got[i],
                want[i],
                got.iter().zip(want).filter(|(a, b)| a != b).count()
            ));
        }
    }
    Ok(())
}
