//! `fast_confirmation`: the fork-choice format (anchor state and block, then ticks, blocks,
//! attestations, attester slashings and checks) with a fast confirmation store beside the
//! fork-choice store.
//!
//! The format has no `on_fast_confirmation` step: the generator calls it at the start of a slot,
//! once that slot's past attestations are applied, and yields checks of the FCR store right after
//! each call. So a `checks` step naming an FCR field is where the runner calls
//! `on_fast_confirmation` (at most once per slot, as the spec requires), then compares the FCR
//! fields; the other checks (`head`, `time`, …) are the fork-choice runner's. Every handler
//! (`basic`, `current_epoch`, `empty_slots`, `ffg`, `is_one_confirmed`, …) has this one format.
//!
//! [format]: consensus-specs tests/formats/fast_confirmation/README.md

use std::sync::Arc;

use fork_choice::{Config, FastConfirmationStore, SpecStore, get_fast_confirmation_store};
use serde_yaml::{Mapping, Value};
use state_processing::CachedBeaconState;
use state_processing::per_block::VerifySignatures;
use types::{BeaconBlock, EthSpec, Slot};

use super::fork_choice::{checkpoint, expect_eq, kzg_pool, read, root_value, run_checks, run_step};
use super::state_case::{chain_spec, read_state, with_preset};
use crate::case::{CaseContext, CaseResult, Runner};
use crate::files::read_yaml;

/// Runs `<config>/<fork>/fast_confirmation/<handler>/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FastConfirmation;

impl Runner for FastConfirmation {
    fn name(&self) -> &'static str {
        "fast_confirmation"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        with_preset!(case, run(case))
    }
}

fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check::<E>(case))
}

/// The checks of the FCR store (the rest of a `checks` step is the fork-choice store's).
const FCR_CHECKS: [&str; 7] = [
    "previous_epoch_observed_justified_checkpoint",
    "current_epoch_observed_justified_checkpoint",
    "previous_epoch_greatest_unrealized_checkpoint",
    "previous_slot_head",
    "current_slot_head",
    "confirmed_root",
    "safe_execution_block_hash",
];

/// `meta.yaml` of a fast confirmation case.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    /// Prose about the case; nothing to check.
    #[serde(rename = "description")]
    _description: Option<String>,
    /// 0 or 1 (or absent): signatures are real and checked; 2: they are not real (the
    /// generator's `never_bls`) and are not checked.
    bls_setting: Option<u8>,
}

fn check<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    let meta_path = case.file("meta.yaml");
    let verify_signatures = if meta_path.is_file() {
        let meta: Meta = read_yaml(&meta_path)?;
        match meta.bls_setting {
            None | Some(0) | Some(1) => VerifySignatures::Batched,
            Some(2) => VerifySignatures::None,
            Some(other) => return Err(format!("meta.yaml: unknown bls_setting {other}")),
        }
    } else {
        VerifySignatures::Batched
    };
    let spec = Arc::new(chain_spec(case, case.fork)?);
    let anchor_state = read_state::<E>(case, "anchor_state", case.fork)?;
    let anchor_block = read(case, "anchor_block", |b| {
        BeaconBlock::<E>::from_ssz_bytes_by_fork(b, case.fork)
    })?;
    let anchor_block = match anchor_block {
        BeaconBlock::Electra(b) | BeaconBlock::Fulu(b) => b,
        other @ (BeaconBlock::Phase0(_)
        | BeaconBlock::Altair(_)
        | BeaconBlock::Bellatrix(_)
        | BeaconBlock::Capella(_)
        | BeaconBlock::Deneb(_)
        | BeaconBlock::Gloas(_)) => {
            return Err(format!(
                "anchor block of fork {} is not supported",
                other.fork_name()
            ));
        }
    };
    let mut store = SpecStore::new(
        CachedBeaconState::new(anchor_state),
        &anchor_block,
        spec,
        Config {
            verify_signatures,
            prune_threshold: usize::MAX,
        },
        kzg_pool()?,
    )
    .map_err(|e| format!("get_forkchoice_store: {e}"))?;
    let mut fcr_store =
        get_fast_confirmation_store(&store, anchor_block.body.execution_payload.block_hash);

    let steps: Vec<Mapping> = read_yaml(&case.file("steps.yaml"))?;
    let mut last_run: Option<Slot> = None;
    let mut runs = 0usize;
    for (i, step) in steps.iter().enumerate() {
        let result = match step.get("checks").and_then(Value::as_mapping) {
            Some(checks) if FCR_CHECKS.iter().any(|k| checks.contains_key(*k)) => {
                runs += 1;
                fast_confirmation_checks(&mut store, &mut fcr_store, checks, &mut last_run)
            }
            _ => run_step(case, &mut store, step),
        };
        result.map_err(|e| format!("step {i}: {e}"))?;
    }
    if runs == 0 {
        return Err("no step checks the fast confirmation store".to_string());
    }
    Ok(())
}

/// `on_fast_confirmation`, then the checks of a step that follows it.
fn fast_confirmation_checks<E: EthSpec>(
    store: &mut SpecStore<E>,
    fcr_store: &mut FastConfirmationStore,
    checks: &Mapping,
    last_run: &mut Option<Slot>,
) -> Result<(), String> {
    let slot = store.get_current_slot();
    if *last_run == Some(slot) {
        return Err(format!(
            "a second fast confirmation check in slot {slot}: on_fast_confirmation runs once a slot"
        ));
    }
    *last_run = Some(slot);
    store
        .on_fast_confirmation(fcr_store)
        .map_err(|e| format!("on_fast_confirmation: {e}"))?;

    let mut store_checks = Mapping::new();
    for (name, want) in checks {
        let key = name
            .as_str()
            .ok_or_else(|| format!("check name is not a string: {name:?}"))?;
        match key {
            "previous_epoch_observed_justified_checkpoint" => expect_eq(
                key,
                fcr_store
                    .previous_epoch_observed_justified_checkpoint
                    .clone(),
                checkpoint(want, key)?,
            )?,
            "current_epoch_observed_justified_checkpoint" => expect_eq(
                key,
                fcr_store
                    .current_epoch_observed_justified_checkpoint
                    .clone(),
                checkpoint(want, key)?,
            )?,
            "previous_epoch_greatest_unrealized_checkpoint" => expect_eq(
                key,
                fcr_store
                    .previous_epoch_greatest_unrealized_checkpoint
                    .clone(),
                checkpoint(want, key)?,
            )?,
            "previous_slot_head" => {
                expect_eq(key, fcr_store.previous_slot_head, root_value(want, key)?)?
            }
            "current_slot_head" => {
                expect_eq(key, fcr_store.current_slot_head, root_value(want, key)?)?
            }
            "confirmed_root" => expect_eq(key, fcr_store.confirmed_root, root_value(want, key)?)?,
            "safe_execution_block_hash" => {
                let got = fcr_store
                    .get_safe_execution_block_hash(store)
                    .map_err(|e| format!("get_safe_execution_block_hash: {e}"))?;
                expect_eq(key, got, root_value(want, key)?)?
            }
            _ => {
                store_checks.insert(name.clone(), want.clone());
            }
        }
    }
    run_checks(store, &store_checks)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use types::ForkName;

    use super::*;

    const CASE: &str =
        "tests/minimal/fulu/fast_confirmation/basic/pyspec_tests/fast_confirm_an_epoch";

    /// A copy of the vector case in a temporary directory, `steps.yaml` rewritten by `edit`.
    fn tampered(
        source: &Path,
        edit: impl Fn(String) -> String,
    ) -> (tempfile::TempDir, CaseContext) {
        let dir = tempfile::tempdir().expect("temporary directory");
        for entry in std::fs::read_dir(source).expect("case directory") {
            let path = entry.expect("entry").path();
            let name = path.file_name().expect("file name");
            std::fs::copy(&path, dir.path().join(name)).expect("copy");
        }
        let steps = dir.path().join("steps.yaml");
        let text = std::fs::read_to_string(&steps).expect("steps.yaml");
        std::fs::write(&steps, edit(text)).expect("write steps.yaml");
        let case = CaseContext {
            config: "minimal".to_string(),
            fork: ForkName::Fulu,
            runner: "fast_confirmation".to_string(),
            handler: "basic".to_string(),
            suite: "pyspec_tests".to_string(),
            case: "fast_confirm_an_epoch".to_string(),
            path: dir.path().to_path_buf(),
        };
        (dir, case)
    }

    /// The runner passes the vector as it is and fails it with a wrong confirmed root or with
    /// a second confirmation check in one slot. Skipped when `ARBOR_SPEC_TESTS` is unset (the
    /// harness in `tests/spec_tests.rs` is the real run).
    #[test]
    fn a_wrong_confirmed_root_or_a_second_run_in_a_slot_fails() {
        let Some(root) = std::env::var_os("ARBOR_SPEC_TESTS") else {
            eprintln!("ARBOR_SPEC_TESTS unset: skipping the fast confirmation runner test");
            return;
        };
        let source = Path::new(&root).join(CASE);
        let (_dir, case) = tampered(&source, |t| t);
        assert_eq!(FastConfirmation.run_case(&case), CaseResult::Passed);

        // The last confirmed root is the head of slot 8; claim the anchor instead.
        let (_dir, case) = tampered(&source, |t| {
            let last = t
                .rfind("confirmed_root: '")
                .expect("a confirmed_root check");
            let start = last + "confirmed_root: '".len();
            let end = start + t[start..].find('\'').expect("quoted root");
            // The first check's confirmed root is the anchor.
            let first = t.find("confirmed_root: '").expect("a first confirmed_root")
                + "confirmed_root: '".len();
            let anchor = t[first..first + 66].to_string();
            format!("{}{}{}", &t[..start], anchor, &t[end..])
        });
        match FastConfirmation.run_case(&case) {
            CaseResult::Failed(message) => assert!(message.contains("confirmed_root"), "{message}"),
            other => panic!("a wrong confirmed root gave {other:?}"),
        }

        // The first FCR check twice in its slot.
        let (_dir, case) = tampered(&source, |t| {
            let first = t.find("- checks:").expect("a checks step");
            let next = first + 1 + t[first + 1..].find("\n- ").expect("a following step");
            format!(
                "{}{}{}",
                &t[..next + 1],
                &t[first..next + 1],
                &t[next + 1..]
            )
        });
        match FastConfirmation.run_case(&case) {
            CaseResult::Failed(message) => assert!(message.contains("once a slot"), "{message}"),
            other => panic!("two runs in one slot gave {other:?}"),
        }
    }
}
