//! `epoch_processing`: one step of `process_epoch`, applied to the state just before it.
//!
//! A case holds `pre` (the state after the steps before this one) and `post` (absent: the step
//! must fail). Newer vectors add `pre_epoch` (the state before the whole epoch transition) and
//! `post_epoch` (after it): where present, the whole `process_epoch` is checked too.
//!
//! On every `pre` the fused `process_epoch` (one registry walk) must also equal the steps run one
//! by one in the spec's order ([`check_fused_equals_steps`]; `sanity/slots` and `rewards` check
//! their pre-states the same way).
//!
//! [format]: consensus-specs tests/formats/epoch_processing/README.md

use state_processing::per_block::VerifySignatures;
use state_processing::per_epoch::{self, EpochProcessingError};
use state_processing::{CachedBeaconState, Caches, StateMut};
use types::{BeaconState, ChainSpec, EthSpec};

use super::state_case::{
    Meta, chain_spec, check_known_files, check_outcome, read_post, read_state, with_preset,
};
use crate::case::{CaseContext, CaseResult, PendingFork, Runner};

/// Runs `<config>/<fork>/epoch_processing/<handler>/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct EpochProcessing;

impl Runner for EpochProcessing {
    fn name(&self) -> &'static str {
        "epoch_processing"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        with_preset!(case, run(case))
    }

    /// Gloas cases run through the same code: the state transition runs Gloas states.
    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        self.run_case(&case.released())
    }
}

/// An epoch-processing step.
type Step<E> =
    fn(&mut StateMut<'_, E>, &mut Caches, &ChainSpec) -> Result<(), EpochProcessingError>;

/// The step a handler directory names (`process_<handler>`), if this fork has it.
fn step<E: EthSpec>(handler: &str) -> Option<Step<E>> {
    let step: Step<E> = match handler {
        "justification_and_finalization" => {
            |s, _, spec| per_epoch::process_justification_and_finalization(s, spec)
        }
        "inactivity_updates" => |s, _, spec| per_epoch::process_inactivity_updates(s, spec),
        "rewards_and_penalties" => |s, _, spec| per_epoch::process_rewards_and_penalties(s, spec),
        "registry_updates" => |s, _, spec| per_epoch::process_registry_updates(s, spec),
        "slashings" => |s, _, spec| per_epoch::process_slashings(s, spec),
        "eth1_data_reset" => |s, _, _| per_epoch::process_eth1_data_reset(s),
        "pending_deposits" => per_epoch::process_pending_deposits,
        "pending_consolidations" => |s, _, _| per_epoch::process_pending_consolidations(s),
        "effective_balance_updates" => per_epoch::process_effective_balance_updates,
        "slashings_reset" => |s, _, _| per_epoch::process_slashings_reset(s),
        "randao_mixes_reset" => |s, _, _| per_epoch::process_randao_mixes_reset(s),
        "historical_summaries_update" => {
            |s, _, _| per_epoch::process_historical_summaries_update(s)
        }
        "participation_flag_updates" => |s, _, _| per_epoch::process_participation_flag_updates(s),
        "sync_committee_updates" => |s, c, _| per_epoch::process_sync_committee_updates(s, c),
        "proposer_lookahead" => |s, _, _| per_epoch::process_proposer_lookahead(s),
        // [New in Gloas]
        "builder_pending_payments" => |s, c, _| per_epoch::process_builder_pending_payments(s, c),
        "ptc_window" => |s, _, _| per_epoch::process_ptc_window(s),
        // `process_pending_deposits` under Gloas's activation churn (EIP-8061).
        "pending_deposits_churn" => per_epoch::process_pending_deposits,
        _ => return None,
    };
    Some(step)
}

/// Every step of `process_epoch`, in the spec's order; `builder_pending_payments` and
/// `ptc_window` run on Gloas states only, `proposer_lookahead` from Fulu on.
const ALL_STEPS: [&str; 17] = [
    "justification_and_finalization",
    "inactivity_updates",
    "rewards_and_penalties",
    "registry_updates",
    "slashings",
    "eth1_data_reset",
    "pending_deposits",
    "pending_consolidations",
    "builder_pending_payments",
    "effective_balance_updates",
    "slashings_reset",
    "randao_mixes_reset",
    "historical_summaries_update",
    "participation_flag_updates",
    "sync_committee_updates",
    "proposer_lookahead",
    "ptc_window",
];

/// Checks that the fused `process_epoch` on `pre` equals the steps of [`ALL_STEPS`] run one by
/// one (`proposer_lookahead` only where the state has one, the Gloas steps only on a Gloas
/// state, as `process_epoch` does): the same post-state root, or both failing.
pub(super) fn check_fused_equals_steps<E: EthSpec>(
    pre: &BeaconState<E>,
    spec: &ChainSpec,
) -> Result<(), String> {
    let mut fused = CachedBeaconState::new(pre.clone());
    let fused_result = apply(&mut fused, |view, caches| {
        per_epoch::process_epoch(view, caches, spec)
    });
    let mut stepwise = CachedBeaconState::new(pre.clone());
    let view = stepwise
        .view()
        .map_err(|e| format!("pre state has no view: {e}"))?;
    let (has_lookahead, is_gloas) = (view.proposer_lookahead.is_some(), view.gloas.is_some());
    let stepwise_result = ALL_STEPS
        .into_iter()
        .filter(|&name| name != "proposer_lookahead" || has_lookahead)
        .filter(|&name| !matches!(name, "builder_pending_payments" | "ptc_window") || is_gloas)
        .try_for_each(|name| {
            let step = step::<E>(name).expect("ALL_STEPS names known steps");
            apply(&mut stepwise, |view, caches| step(view, caches, spec))
                .map_err(|e| format!("process_{name}: {e}"))
        });
    match (fused_result, stepwise_result) {
        (Ok(()), Ok(())) => {
            let hash = |state: &mut CachedBeaconState<E>| {
                state
                    .hash_tree_root()
                    .map_err(|e| format!("cannot hash the post state: {e}"))
            };
            let (fused_root, stepwise_root) = (hash(&mut fused)?, hash(&mut stepwise)?);
            if fused_root == stepwise_root {
                Ok(())
            } else {
                Err(format!(
                    "fused process_epoch gives root {fused_root}, the steps one by one \
                     {stepwise_root}"
                ))
            }
        }
        (Err(_), Err(_)) => Ok(()),
        (fused, stepwise) => Err(format!(
            "fused process_epoch: {fused:?}, the steps one by one: {stepwise:?}"
        )),
    }
}

fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    let Some(step) = step::<E>(&case.handler) else {
        return CaseResult::NotRun(format!("no epoch_processing handler for {}", case.handler));
    };
    CaseResult::from_check(check(case, step))
}

fn check<E: EthSpec>(case: &CaseContext, step: Step<E>) -> Result<(), String> {
    // Some Gloas cases restate the preset's config, with every fork at genesis, in
    // `config.yaml` (as some Gloas operations cases do).
    let mut known = vec![
        "pre.ssz_snappy",
        "post.ssz_snappy",
        "pre_epoch.ssz_snappy",
        "post_epoch.ssz_snappy",
    ];
    if case.fork == types::ForkName::Gloas {
        known.push("config.yaml");
    }
    check_known_files(case, &known)?;
    // Pending deposits' signatures are checked whatever the setting (an invalid one only
    // skips the deposit), so a case whose signatures are not real (setting 2) cannot pass.
    let meta = Meta::read(case)?;
    if meta.verify_signatures(VerifySignatures::Individually)? == VerifySignatures::None {
        return Err(
            "meta.yaml: bls_setting 2 (signatures not real), but epoch processing \
                    always checks deposit signatures"
                .into(),
        );
    }
    let spec = chain_spec(case, case.fork)?;
    let pre = read_state::<E>(case, "pre", case.fork)?;
    let mut state = CachedBeaconState::new(pre.clone());
    let post = read_post::<E>(case, case.fork)?;
    let result = apply(&mut state, |view, caches| step(view, caches, &spec));
    check_outcome(
        &format!("process_{}", case.handler),
        result,
        &mut state,
        post.as_ref(),
    )?;
    check_fused_equals_steps(&pre, &spec)?;

    if case.file("pre_epoch.ssz_snappy").exists() {
        let mut state = CachedBeaconState::new(read_state::<E>(case, "pre_epoch", case.fork)?);
        let post_epoch = if case.file("post_epoch.ssz_snappy").exists() {
            Some(read_state::<E>(case, "post_epoch", case.fork)?)
        } else {
            None
        };
        let result = apply(&mut state, |view, caches| {
            per_epoch::process_epoch(view, caches, &spec)
        });
        check_outcome(
            "process_epoch (pre_epoch → post_epoch)",
            result,
            &mut state,
            post_epoch.as_ref(),
        )?;
    }
    Ok(())
}

fn apply<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    f: impl FnOnce(&mut StateMut<'_, E>, &mut Caches) -> Result<(), EpochProcessingError>,
) -> Result<(), String> {
    let (mut view, caches) = state
        .view_mut()
        .map_err(|e| format!("pre state has no view: {e}"))?;
    f(&mut view, caches).map_err(|e| e.to_string())
}
