//! `fork`: the upgrade of a state into the case's fork (`upgrade_to_<fork>`).
//!
//! A case holds `meta.yaml` (`fork`: the fork upgraded into), `pre` (a state of the fork before)
//! and `post`.
//!
//! [format]: consensus-specs tests/formats/forks/README.md

use state_processing::CachedBeaconState;
use state_processing::common::compute_epoch_at_slot;
use state_processing::upgrade::{upgrade_to_electra, upgrade_to_fulu, upgrade_to_gloas};
use types::{BeaconState, EthSpec, ForkName};

use super::state_case::{
    Meta, chain_spec, check_known_files, compare_states, read_post, read_state, with_preset,
};
use crate::case::{CaseContext, CaseResult, PendingFork, Runner};

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
        if !matches!(
            case.fork,
            ForkName::Electra | ForkName::Fulu | ForkName::Gloas
        ) {
            return CaseResult::NotRun(format!("no upgrade into {} is implemented", case.fork));
        }
        with_preset!(case, run(case))
    }

    /// Gloas cases run through the same code: the state transition runs Gloas states.
    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        self.run_case(&case.released())
    }
}

fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check::<E>(case))
}

fn check<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    check_known_files(case, &["pre.ssz_snappy", "post.ssz_snappy"])?;
    let meta = Meta::read(case)?;
    let fork = case.fork;
    if meta.fork.as_deref() != Some(fork.to_string().as_str()) {
        return Err(format!(
            "meta.yaml names fork {:?}, expected {fork}",
            meta.fork
        ));
    }
    let pre_fork = fork
        .previous()
        .ok_or_else(|| format!("{fork} has no fork before it"))?;
    let pre = read_state::<E>(case, "pre", pre_fork)?;
    // The upgrade runs at the first slot of the fork epoch: schedule the fork at the pre-state's
    // epoch.
    let mut spec = chain_spec(case, pre_fork)?;
    let epoch = compute_epoch_at_slot::<E>(*pre.slot());
    let post = read_post::<E>(case, fork)?;
    let upgraded = match pre {
        BeaconState::Deneb(pre) if fork == ForkName::Electra => {
            spec.electra_fork_epoch = epoch;
            upgrade_to_electra(pre, &spec).map(BeaconState::Electra)
        }
        BeaconState::Electra(pre) if fork == ForkName::Fulu => {
            spec.fulu_fork_epoch = epoch;
            upgrade_to_fulu(pre, &spec).map(BeaconState::Fulu)
        }
        BeaconState::Fulu(pre) if fork == ForkName::Gloas => {
            spec.gloas_fork_epoch = epoch;
            upgrade_to_gloas(pre, &spec).map(BeaconState::Gloas)
        }
        // Every fork named: a pre-state that no upgrade above takes.
        other @ (BeaconState::Phase0(_)
        | BeaconState::Altair(_)
        | BeaconState::Bellatrix(_)
        | BeaconState::Capella(_)
        | BeaconState::Deneb(_)
        | BeaconState::Electra(_)
        | BeaconState::Fulu(_)
        | BeaconState::Gloas(_)) => return Err(format!("pre decoded as {}", other.fork_name())),
    };

    match (upgraded, post) {
        (Ok(upgraded), Some(post)) => compare_states(&mut CachedBeaconState::new(upgraded), &post),
        (Ok(_), None) => Err(format!(
            "upgrade_to_{fork} succeeded, but the case has no post state (it must fail)"
        )),
        (Err(e), Some(_)) => Err(format!("upgrade_to_{fork} failed on a valid case: {e}")),
        (Err(_), None) => Ok(()),
    }
}
