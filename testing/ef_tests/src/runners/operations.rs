//! `operations`: one block operation applied to a state through the operation's own function.
//!
//! A case holds `pre`, the operation (`<input>.ssz_snappy`, named per handler below), optionally
//! `meta.yaml` (`bls_setting`) and `post`; without `post` the operation must be rejected.
//! `execution_payload` cases add `execution.yaml` (`execution_valid`): the verdict the execution
//! engine gives, handed to `process_execution_payload` through the `ExecutionEngine` trait.
//!
//! [format]: consensus-specs tests/formats/operations/README.md

use serde::Deserialize;
use ssz::Decode;
use state_processing::per_block::{self, VerifySignatures};
use state_processing::{CachedBeaconState, Caches, StateMut};
use types::{ChainSpec, EthSpec, electra, phase0};

use super::state_case::{
    EngineVerdict, Meta, chain_spec, check_known_files, check_outcome, read_post, read_ssz,
    read_state, with_preset,
};
use crate::case::{CaseContext, CaseResult, Runner};
use crate::files::read_yaml;

/// Runs `<config>/<fork>/operations/<handler>/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Operations;

impl Runner for Operations {
    fn name(&self) -> &'static str {
        "operations"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        with_preset!(case, run(case))
    }
}

/// `execution.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Execution {
    execution_valid: bool,
}

/// What one handler does to the state (its input already decoded); the error as text.
type Apply<'a, E> = Box<dyn FnOnce(&mut StateMut<'_, E>, &mut Caches) -> Result<(), String> + 'a>;

/// `Result<(), impl Display>` as `Result<(), String>`.
fn text<Err: std::fmt::Display>(result: Result<(), Err>) -> Result<(), String> {
    result.map_err(|e| e.to_string())
}

fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    let spec = match chain_spec(case, case.fork) {
        Ok(spec) => spec,
        Err(e) => return CaseResult::Failed(e),
    };
    let meta = match Meta::read(case) {
        Ok(meta) => meta,
        Err(e) => return CaseResult::Failed(e),
    };
    // Operations check each signature on its own; blocks (sanity) use the batch.
    let verify = match meta.verify_signatures(VerifySignatures::Individually) {
        Ok(verify) => verify,
        Err(e) => return CaseResult::Failed(e),
    };
    let apply = match operation::<E>(case, verify, &spec) {
        Ok(Some(apply)) => apply,
        Ok(None) => {
            return CaseResult::NotRun(format!("no operations handler for {}", case.handler));
        }
        Err(e) => return CaseResult::Failed(e),
    };
    CaseResult::from_check(apply_and_compare(case, apply))
}

fn apply_and_compare<E: EthSpec>(case: &CaseContext, apply: Apply<'_, E>) -> Result<(), String> {
    let mut state = CachedBeaconState::new(read_state::<E>(case, "pre", case.fork)?);
    let post = read_post::<E>(case, case.fork)?;
    let result = {
        let (mut view, caches) = state
            .view_mut()
            .map_err(|e| format!("pre state has no view: {e}"))?;
        apply(&mut view, caches)
    };
    check_outcome(
        &format!("process_{}", case.handler),
        result,
        &mut state,
        post.as_ref(),
    )
}

/// Reads the operation, `<name>.ssz_snappy`, as `T`, after checking that the case holds no file
/// besides the states, the operation and (for `execution_payload`) `execution.yaml`.
fn input<T: Decode>(case: &CaseContext, name: &str) -> Result<T, String> {
    let file = format!("{name}.ssz_snappy");
    let mut expected = vec!["pre.ssz_snappy", "post.ssz_snappy", file.as_str()];
    if case.handler == "execution_payload" {
        expected.push("execution.yaml");
    }
    check_known_files(case, &expected)?;
    read_ssz(case, name)
}

/// The handler's operation, read from the case and ready to apply; `None` for an unknown handler.
fn operation<'a, E: EthSpec>(
    case: &CaseContext,
    verify: VerifySignatures,
    spec: &'a ChainSpec,
) -> Result<Option<Apply<'a, E>>, String> {
    let apply: Apply<'a, E> = match case.handler.as_str() {
        "attestation" => {
            let op: electra::Attestation<E> = input(case, "attestation")?;
            Box::new(move |s, c| text(per_block::process_attestation(s, c, &op, verify, spec)))
        }
        "attester_slashing" => {
            let op: electra::AttesterSlashing<E> = input(case, "attester_slashing")?;
            Box::new(move |s, c| {
                text(per_block::process_attester_slashing(
                    s, c, &op, verify, spec,
                ))
            })
        }
        "block_header" => {
            let block: electra::BeaconBlock<E> = input(case, "block")?;
            Box::new(move |s, c| text(per_block::process_block_header(s, c, &block, spec)))
        }
        "bls_to_execution_change" => {
            let op: electra::SignedBLSToExecutionChange = input(case, "address_change")?;
            Box::new(move |s, _| {
                text(per_block::process_bls_to_execution_change(
                    s, &op, verify, spec,
                ))
            })
        }
        "consolidation_request" => {
            let op: electra::ConsolidationRequest = input(case, "consolidation_request")?;
            Box::new(move |s, c| text(per_block::process_consolidation_request(s, c, &op, spec)))
        }
        "deposit" => {
            let op: phase0::Deposit = input(case, "deposit")?;
            Box::new(move |s, c| text(per_block::process_deposit(s, c, &op, spec)))
        }
        "deposit_request" => {
            let op: electra::DepositRequest = input(case, "deposit_request")?;
            Box::new(move |s, _| text(per_block::process_deposit_request(s, &op)))
        }
        "execution_payload" => {
            let body: electra::BeaconBlockBody<E> = input(case, "body")?;
            let execution: Execution = read_yaml(&case.file("execution.yaml"))?;
            let engine = EngineVerdict(execution.execution_valid);
            Box::new(move |s, _| {
                text(per_block::process_execution_payload(
                    s, &body, &engine, spec,
                ))
            })
        }
        "proposer_slashing" => {
            let op: electra::ProposerSlashing = input(case, "proposer_slashing")?;
            Box::new(move |s, c| {
                text(per_block::process_proposer_slashing(
                    s, c, &op, verify, spec,
                ))
            })
        }
        "sync_aggregate" => {
            let op: electra::SyncAggregate<E> = input(case, "sync_aggregate")?;
            Box::new(move |s, c| text(per_block::process_sync_aggregate(s, c, &op, verify, spec)))
        }
        "voluntary_exit" => {
            let op: electra::SignedVoluntaryExit = input(case, "voluntary_exit")?;
            Box::new(move |s, c| text(per_block::process_voluntary_exit(s, c, &op, verify, spec)))
        }
        "withdrawal_request" => {
            let op: electra::WithdrawalRequest = input(case, "withdrawal_request")?;
            Box::new(move |s, c| text(per_block::process_withdrawal_request(s, c, &op, spec)))
        }
        "withdrawals" => {
            let payload: electra::ExecutionPayload<E> = input(case, "execution_payload")?;
            Box::new(move |s, _| text(per_block::process_withdrawals(s, &payload)))
        }
        _ => return Ok(None),
    };
    Ok(Some(apply))
}
