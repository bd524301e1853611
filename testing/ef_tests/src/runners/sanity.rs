//! `sanity`: whole blocks through `state_transition` (`blocks`) and empty slots through
//! `process_slots` (`slots`).
//!
//! - `blocks`: `pre`, `blocks_<i>` (`meta.yaml` `blocks_count`, `bls_setting`), `post`; without
//!   `post` one of the blocks must be rejected. Every case runs with each signature strategy
//!   (batched, one by one, and for valid cases none), and a rejected block must leave the state
//!   exactly as it was. Then once more as a node imports: each block on its pre-state advanced
//!   ahead to the block's slot (`process_slots` first, then `state_transition_from_advanced`).
//! - `slots`: `pre`, `slots.yaml` (how many slots to advance), `post`; the fused
//!   `process_epoch` must also equal the epoch steps run one by one on `pre`.
//!
//! `finality` and `random` vectors have the format of `sanity/blocks` and run the same way.
//!
//! [format]: consensus-specs tests/formats/sanity/README.md,
//! consensus-specs tests/formats/finality/README.md, consensus-specs tests/formats/random/README.md

use state_processing::CachedBeaconState;
use state_processing::per_block::VerifySignatures;
use state_processing::per_slot::process_slots;
use state_processing::state_transition::{state_transition, state_transition_from_advanced};
use types::{ChainSpec, EthSpec, SignedBeaconBlock};

use super::epoch_processing::check_fused_equals_steps;
use super::state_case::{
    EngineVerdict, Meta, chain_spec, check_known_files, check_outcome, read_post, read_state,
    with_preset,
};
use crate::case::{CaseContext, CaseResult, PendingFork, Runner};
use crate::files::{read_ssz_snappy, read_yaml};

/// Runs `<config>/<fork>/sanity/{blocks,slots}/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sanity;

impl Runner for Sanity {
    fn name(&self) -> &'static str {
        "sanity"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        match case.handler.as_str() {
            "blocks" => with_preset!(case, run_blocks(case)),
            "slots" => with_preset!(case, run_slots(case)),
            other => CaseResult::NotRun(format!("no sanity handler for {other}")),
        }
    }

    /// Gloas cases run through the same code: the state transition runs Gloas states.
    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        self.run_case(&case.released())
    }
}

/// Runs `<config>/<fork>/finality/finality/pyspec_tests/<case>/` (blocks, as `sanity/blocks`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Finality;

impl Runner for Finality {
    fn name(&self) -> &'static str {
        "finality"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        match case.handler.as_str() {
            "finality" => with_preset!(case, run_blocks(case)),
            other => CaseResult::NotRun(format!("no finality handler for {other}")),
        }
    }
}

/// Runs `<config>/<fork>/random/random/pyspec_tests/<case>/` (blocks, as `sanity/blocks`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Random;

impl Runner for Random {
    fn name(&self) -> &'static str {
        "random"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        match case.handler.as_str() {
            "random" => with_preset!(case, run_blocks(case)),
            other => CaseResult::NotRun(format!("no random handler for {other}")),
        }
    }
}

fn run_blocks<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check_blocks::<E>(case))
}

fn run_slots<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check_slots::<E>(case))
}

/// Applies `blocks_<i>` in order; a case without `post` passes when one of them is rejected,
/// and the rejected block must leave the state as it was (`state_transition` works on a clone).
///
/// Where signatures are checked, the case runs with the batched and the one-by-one strategy
/// (both must reach the same verdict), and a valid case also without signature checks (it must
/// still reach `post`; an invalid case may be invalid only by a signature).
pub(crate) fn check_blocks<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    check_known_files(case, &["pre.ssz_snappy", "post.ssz_snappy", "blocks_*"])?;
    let meta = Meta::read(case)?;
    let spec = chain_spec(case, case.fork)?;
    let count = meta.blocks_count.ok_or("meta.yaml has no blocks_count")?;
    let pre = read_state::<E>(case, "pre", case.fork)?;
    let post = read_post::<E>(case, case.fork)?;
    let blocks = (0..count)
        .map(|i| {
            let file = format!("blocks_{i}.ssz_snappy");
            let bytes = read_ssz_snappy(&case.file(&file))?;
            SignedBeaconBlock::<E>::from_ssz_bytes_by_fork(&bytes, case.fork)
                .map_err(|e| format!("cannot decode {file}: {e:?}"))
        })
        .collect::<Result<Vec<_>, _>>()?;

    // The node's own strategy (batched, unless the case turns signatures off) for the pass on
    // advanced pre-states.
    let advanced_verify = meta.verify_signatures(VerifySignatures::Batched)?;
    let strategies = match advanced_verify {
        VerifySignatures::None => vec![VerifySignatures::None],
        _ if post.is_some() => vec![
            VerifySignatures::Batched,
            VerifySignatures::Individually,
            VerifySignatures::None,
        ],
        _ => vec![VerifySignatures::Batched, VerifySignatures::Individually],
    };
    let passes = strategies
        .into_iter()
        .map(|verify| (verify, PreState::AsTheSpec))
        .chain([(advanced_verify, PreState::Advanced)]);
    for (verify, pre_state) in passes {
        let mut state = CachedBeaconState::new(pre.clone());
        apply_blocks(&mut state, &blocks, verify, pre_state, &spec)
            .and_then(|result| {
                check_outcome(
                    &format!("state_transition of {count} blocks"),
                    result,
                    &mut state,
                    post.as_ref(),
                )
            })
            .map_err(|e| format!("with signatures {verify:?}, pre-state {pre_state:?}: {e}"))?;
    }
    Ok(())
}

/// How each block's pre-state is given to the transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PreState {
    /// The previous block's post-state (`state_transition` runs the slots).
    AsTheSpec,
    /// The previous post-state advanced to the block's slot first, when the block is after
    /// it, as a node's slot timer does (`state_transition_from_advanced`); a block not after
    /// it goes through `state_transition`, which must refuse it.
    Advanced,
}

/// One block through the transition `pre_state` asks for.
fn transition<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    block: &SignedBeaconBlock<E>,
    verify: VerifySignatures,
    pre_state: PreState,
    spec: &ChainSpec,
) -> Result<(), String> {
    let engine = EngineVerdict(true);
    if pre_state == PreState::Advanced && block.slot() > *state.state.slot() {
        // The advance is not the block's: a refused block still leaves `state` as it was.
        let mut advanced = state.clone();
        process_slots(&mut advanced, block.slot(), spec).map_err(|e| format!("{e:?}"))?;
        advanced
            .hash_tree_root()
            .map_err(|e| format!("cannot hash the advanced state: {e}"))?;
        state_transition_from_advanced(&mut advanced, block, verify, true, &engine, spec)
            .map_err(|e| e.to_string())?;
        *state = advanced;
        return Ok(());
    }
    state_transition(state, block, verify, true, &engine, spec).map_err(|e| e.to_string())
}

/// Runs the blocks through the transition until one is rejected. The outer `Err` is a
/// failed check (a rejected block changed the state); the inner result is the verdict.
fn apply_blocks<E: EthSpec>(
    state: &mut CachedBeaconState<E>,
    blocks: &[SignedBeaconBlock<E>],
    verify: VerifySignatures,
    pre_state: PreState,
    spec: &ChainSpec,
) -> Result<Result<(), String>, String> {
    let root = |state: &mut CachedBeaconState<E>| {
        state
            .hash_tree_root()
            .map_err(|e| format!("cannot hash the state: {e}"))
    };
    for (i, block) in blocks.iter().enumerate() {
        let before = root(state)?;
        if let Err(e) = transition(state, block, verify, pre_state, spec) {
            let after = root(state)?;
            if after != before {
                return Err(format!(
                    "block {i} (slot {}) was rejected ({e}) but changed the state: root {before} \
                     before, {after} after",
                    block.slot()
                ));
            }
            return Ok(Err(format!("block {i} (slot {}): {e}", block.slot())));
        }
    }
    Ok(Ok(()))
}

fn check_slots<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    check_known_files(case, &["pre.ssz_snappy", "post.ssz_snappy", "slots.yaml"])?;
    let spec = chain_spec(case, case.fork)?;
    let slots: u64 = read_yaml(&case.file("slots.yaml"))?;
    let pre = read_state::<E>(case, "pre", case.fork)?;
    let mut state = CachedBeaconState::new(pre.clone());
    let post = read_post::<E>(case, case.fork)?;
    let target = (*state.state.slot())
        .checked_add(slots)
        .ok_or("slot overflow")?;
    let result = process_slots(&mut state, target, &spec);
    check_outcome(
        &format!("process_slots by {slots}"),
        result,
        &mut state,
        post.as_ref(),
    )?;
    check_fused_equals_steps(&pre, &spec)
}
