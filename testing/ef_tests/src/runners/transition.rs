//! `transition`: blocks across a fork boundary through `state_transition`, with the upgrade made
//! by `process_slots` at the fork epoch.
//!
//! A case holds `meta.yaml` (`post_fork`, `fork_epoch`, `blocks_count`, `fork_block`: the index
//! of the last block built before the fork, absent when none is, and `bls_setting`), `pre` (a
//! state of the fork before), `blocks_<i>` and `post`.
//!
//! [format]: consensus-specs tests/formats/transition/README.md

use state_processing::CachedBeaconState;
use state_processing::per_block::VerifySignatures;
use state_processing::state_transition::state_transition;
use types::{EthSpec, ForkName, SignedBeaconBlock};

use super::state_case::{
    EngineVerdict, Meta, chain_spec, check_known_files, compare_states, read_state,
    read_state_by_slot, with_preset,
};
use crate::case::{CaseContext, CaseResult, PendingFork, Runner};
use crate::files::read_ssz_snappy;

/// Runs `<config>/<fork>/transition/core/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Transition;

impl Runner for Transition {
    fn name(&self) -> &'static str {
        "transition"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        if case.handler != "core" {
            return CaseResult::NotRun(format!("no transition handler for {}", case.handler));
        }
        if !matches!(
            case.fork,
            ForkName::Electra | ForkName::Fulu | ForkName::Gloas
        ) {
            return CaseResult::NotRun(format!("no transition into {} is implemented", case.fork));
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
    check_known_files(case, &["pre.ssz_snappy", "post.ssz_snappy", "blocks_*"])?;
    let meta = Meta::read(case)?;
    let post_fork = case.fork;
    if meta.post_fork.as_deref() != Some(post_fork.to_string().as_str()) {
        return Err(format!(
            "meta.yaml names post_fork {:?}, expected {post_fork}",
            meta.post_fork
        ));
    }
    let pre_fork = post_fork
        .previous()
        .ok_or_else(|| format!("{post_fork} has no fork before it"))?;
    let fork_epoch = meta.fork_epoch.ok_or("meta.yaml has no fork_epoch")?;
    let count = meta.blocks_count.ok_or("meta.yaml has no blocks_count")?;
    let verify = meta.verify_signatures(VerifySignatures::Batched)?;
    let mut spec = chain_spec(case, pre_fork)?;
    match post_fork {
        ForkName::Electra => spec.electra_fork_epoch = fork_epoch,
        ForkName::Fulu => spec.fulu_fork_epoch = fork_epoch,
        ForkName::Gloas => spec.gloas_fork_epoch = fork_epoch,
        ForkName::Phase0
        | ForkName::Altair
        | ForkName::Bellatrix
        | ForkName::Capella
        | ForkName::Deneb => return Err(format!("no transition runner into {post_fork}")),
    }

    let pre = read_state::<E>(case, "pre", pre_fork)?;
    // A case without `post` must be refused: by one of its blocks.
    let valid = case.file("post.ssz_snappy").exists();
    let mut state = CachedBeaconState::new(pre);
    for i in 0..count {
        let file = format!("blocks_{i}.ssz_snappy");
        let bytes = read_ssz_snappy(&case.file(&file))?;
        let block = SignedBeaconBlock::<E>::from_ssz_bytes(&bytes, &spec)
            .map_err(|e| format!("cannot decode {file}: {e:?}"))?;
        // The slot decides the block's fork; `fork_block` says the same thing in another way.
        let expected = if meta.fork_block.is_some_and(|last| i <= last) {
            pre_fork
        } else {
            post_fork
        };
        if block.fork_name() != expected {
            return Err(format!(
                "{file} at slot {} is a {} block, but meta.yaml fork_block {:?} makes it {expected}",
                block.slot(),
                block.fork_name(),
                meta.fork_block
            ));
        }
        let result = state_transition(
            &mut state,
            &block,
            verify,
            true,
            &EngineVerdict(true),
            &spec,
        );
        match result {
            Ok(()) => {}
            // The refusal an invalid case expects; the blocks after it are not applied.
            Err(_) if !valid => return Ok(()),
            Err(e) => {
                return Err(format!(
                    "block {i} (slot {}, {}): {e}",
                    block.slot(),
                    block.fork_name()
                ));
            }
        }
    }
    if !valid {
        return Err(format!(
            "every one of the {count} blocks applied, but the case has no post state (one must \
             be refused)"
        ));
    }
    let post = read_state_by_slot::<E>(case, "post", &spec)?;
    compare_states(&mut state, &post)
}
