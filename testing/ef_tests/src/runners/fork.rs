//! `fork`: the upgrade of a state into the case's fork (`upgrade_to_<fork>`).
//!
//! A case holds `meta.yaml` (`fork`: the fork upgraded into), `pre` (a state of the fork before)
//! and `post`.
//!
//! [format]: consensus-specs tests/formats/forks/README.md

use state_processing::CachedBeaconState;
use state_processing::common::compute_epoch_at_slot;
use state_processing::upgrade::upgrade_to_fulu;
use types::{BeaconState, EthSpec, ForkName};

use super::state_case::{
    Meta, chain_spec, check_known_files, compare_states, read_post, read_state, with_preset,
};
use crate::case::{CaseContext, CaseResult, Runner};

/// Runs `<config>/<fork>/fork/fork/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Fork;

impl Runner for Fork {
    fn name(&self) -> &'static str {
        "fork"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        if case.handler != "fork" {
            return CaseResult::NotRun(format!("no fork handler for {}", case.handler));
        }
        if case.fork != ForkName::Fulu {
            return CaseResult::NotRun(format!("no upgrade into {} is implemented", case.fork));
        }
        with_preset!(case, run(case))
    }
}

fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check::<E>(case))
}

fn check<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    check_known_files(case, &["pre.ssz_snappy", "post.ssz_snappy"])?;
    let meta = Meta::read(case)?;
    if meta.fork.as_deref() != Some("fulu") {
        return Err(format!(
            "meta.yaml names fork {:?}, expected fulu",
            meta.fork
        ));
    }
    let pre = match read_state::<E>(case, "pre", ForkName::Electra)? {
        BeaconState::Electra(pre) => pre,
        other => return Err(format!("pre decoded as {}", other.fork_name())),
    };
    // The upgrade runs at the first slot of FULU_FORK_EPOCH: schedule Fulu at the pre-state's epoch.
    let mut spec = chain_spec(case, ForkName::Electra)?;
    spec.fulu_fork_epoch = compute_epoch_at_slot::<E>(pre.slot);
    let post = read_post::<E>(case, ForkName::Fulu)?;

    match (upgrade_to_fulu(pre, &spec), post) {
        (Ok(upgraded), Some(post)) => compare_states(
            &mut CachedBeaconState::new(BeaconState::Fulu(upgraded)),
            &post,
        ),
        (Ok(_), None) => {
            Err("upgrade_to_fulu succeeded, but the case has no post state (it must fail)".into())
        }
        (Err(e), Some(_)) => Err(format!("upgrade_to_fulu failed on a valid case: {e}")),
        (Err(_), None) => Ok(()),
    }
}
