//! `operations`: one block operation applied to a state through the operation's own function.
//!
//! A case holds `pre`, the operation (`<input>.ssz_snappy`, named per handler below), optionally
//! `meta.yaml` (`bls_setting`) and `post`; without `post` the operation must be rejected.
//! `execution_payload` cases add `execution.yaml` (`execution_valid`): the verdict the execution
//! engine gives, handed to `process_execution_payload` through the `ExecutionEngine` trait.
//!
//! An operation with a signature runs with each strategy that checks it (one by one and
//! batched, unless `bls_setting` turns signatures off): both must reach the case's verdict.
//!
//! [format]: consensus-specs tests/formats/operations/README.md

use serde::Deserialize;
use ssz::Decode;
use state_processing::per_block::{self, VerifySignatures};
use state_processing::{CachedBeaconState, Caches, StateMut};
use types::{ChainSpec, EthSpec, ForkName, electra, gloas, phase0};

use super::state_case::{
    EngineVerdict, Meta, chain_spec, check_known_files, check_outcome, read_post, read_ssz,
    read_state, with_preset,
};
use crate::case::{CaseContext, CaseResult, PendingFork, Runner};
use crate::files::read_yaml;

/// Runs `<config>/<fork>/operations/<handler>/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Operations;

impl Runner for Operations {
    fn name(&self) -> &'static str {
        "operations"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        with_preset!(case, run(case))
    }

    /// Gloas cases run through the same code: the state transition runs Gloas states.
    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        self.run_case(&case.released())
    }
}

/// `execution.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Execution {
    execution_valid: bool,
}

/// What one handler does to the state (its input already decoded), with the signature strategy
/// given; the error as text.
type Apply<'a, E> =
    Box<dyn Fn(&mut StateMut<'_, E>, &mut Caches, VerifySignatures) -> Result<(), String> + 'a>;

/// A handler's operation, ready to apply.
struct Operation<'a, E: EthSpec> {
    apply: Apply<'a, E>,
    /// Whether the operation has a signature the strategy decides about.
    signed: bool,
}

/// `Result<(), impl Display>` as `Result<(), String>`.
fn text<Err: std::fmt::Display>(result: Result<(), Err>) -> Result<(), String> {
    result.map_err(|e| e.to_string())
}

fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    let spec = match chain_spec(case, case.fork) {
        Ok(spec) => spec,
        Err(e) => return CaseResult::Failed(e),
    };
    let (meta, parent_slot) = match read_meta(case) {
        Ok(meta) => meta,
        Err(e) => return CaseResult::Failed(e),
    };
    let verify = match meta.verify_signatures(VerifySignatures::Individually) {
        Ok(verify) => verify,
        Err(e) => return CaseResult::Failed(e),
    };
    let operation = if case.fork == ForkName::Gloas {
        gloas_operation::<E>(case, &spec, parent_slot)
    } else {
        operation::<E>(case, &spec)
    };
    let operation = match operation {
        Ok(Some(operation)) => operation,
        Ok(None) => {
            return CaseResult::NotRun(format!("no operations handler for {}", case.handler));
        }
        Err(e) => return CaseResult::Failed(e),
    };
    let strategies = if operation.signed && verify.is_enabled() {
        vec![VerifySignatures::Individually, VerifySignatures::Batched]
    } else {
        vec![verify]
    };
    CaseResult::from_check(apply_and_compare(case, &operation.apply, &strategies))
}

fn apply_and_compare<E: EthSpec>(
    case: &CaseContext,
    apply: &Apply<'_, E>,
    strategies: &[VerifySignatures],
) -> Result<(), String> {
    let pre = read_state::<E>(case, "pre", case.fork)?;
    let post = read_post::<E>(case, case.fork)?;
    for &verify in strategies {
        let mut state = CachedBeaconState::new(pre.clone());
        let result = {
            let (mut view, caches) = state
                .view_mut()
                .map_err(|e| format!("pre state has no view: {e}"))?;
            apply(&mut view, caches, verify)
        };
        check_outcome(
            &format!("process_{}", case.handler),
            result,
            &mut state,
            post.as_ref(),
        )
        .map_err(|e| format!("with signatures {verify:?}: {e}"))?;
    }
    Ok(())
}

/// `meta.yaml` of an operations case: the state-transition keys, and Gloas's `parent_slot`
/// (the parent block's slot that `process_attestation` takes).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OperationsMeta {
    bls_setting: Option<u8>,
    parent_slot: Option<u64>,
}

/// The case's [`Meta`] and its `parent_slot` (Gloas attestations).
fn read_meta(case: &CaseContext) -> Result<(Meta, Option<u64>), String> {
    if case.fork != ForkName::Gloas {
        return Ok((Meta::read(case)?, None));
    }
    let path = case.file("meta.yaml");
    let meta: OperationsMeta = if path.exists() {
        read_yaml(&path)?
    } else {
        OperationsMeta::default()
    };
    Ok((
        Meta {
            bls_setting: meta.bls_setting,
            ..Meta::default()
        },
        meta.parent_slot,
    ))
}

/// The files a case may hold besides the operation: the states and (for `execution_payload`)
/// `execution.yaml`. (A case's `config.yaml`, which some Gloas cases carry, is read as its chain
/// config by `chain_spec`.)
fn known_files(case: &CaseContext, mut expected: Vec<&str>) -> Result<(), String> {
    expected.extend(["pre.ssz_snappy", "post.ssz_snappy"]);
    if case.handler == "execution_payload" {
        expected.push("execution.yaml");
    }
    check_known_files(case, &expected)
}

/// Reads the operation, `<name>.ssz_snappy`, as `T`, after checking that the case holds no file
/// besides the states, the operation and those [`known_files`] allows.
fn input<T: Decode>(case: &CaseContext, name: &str) -> Result<T, String> {
    let file = format!("{name}.ssz_snappy");
    known_files(case, vec![file.as_str()])?;
    read_ssz(case, name)
}

/// An operation whose signature `VerifySignatures` decides about.
fn signed<'a, E: EthSpec>(
    apply: impl Fn(&mut StateMut<'_, E>, &mut Caches, VerifySignatures) -> Result<(), String> + 'a,
) -> Operation<'a, E> {
    Operation {
        apply: Box::new(apply),
        signed: true,
    }
}

/// An operation without a signature the strategy decides about (a deposit's is checked
/// whatever it is).
fn unsigned<'a, E: EthSpec>(
    apply: impl Fn(&mut StateMut<'_, E>, &mut Caches) -> Result<(), String> + 'a,
) -> Operation<'a, E> {
    Operation {
        apply: Box::new(move |s, c, _| apply(s, c)),
        signed: false,
    }
}

/// The handler's operation, read from the case and ready to apply; `None` for an unknown handler.
fn operation<'a, E: EthSpec>(
    case: &CaseContext,
    spec: &'a ChainSpec,
) -> Result<Option<Operation<'a, E>>, String> {
    let operation = match case.handler.as_str() {
        "attestation" => {
            let op: electra::Attestation<E> = input(case, "attestation")?;
            signed(move |s, c, v| text(per_block::process_attestation(s, c, &op, v)))
        }
        "attester_slashing" => {
            let op: electra::AttesterSlashing<E> = input(case, "attester_slashing")?;
            signed(move |s, c, v| text(per_block::process_attester_slashing(s, c, &op, v, spec)))
        }
        "block_header" => {
            let block: electra::BeaconBlock<E> = input(case, "block")?;
            unsigned(move |s, c| text(per_block::process_block_header(s, c, &block)))
        }
        "bls_to_execution_change" => {
            let op: electra::SignedBLSToExecutionChange = input(case, "address_change")?;
            signed(move |s, _, v| text(per_block::process_bls_to_execution_change(s, &op, v, spec)))
        }
        "consolidation_request" => {
            let op: electra::ConsolidationRequest = input(case, "consolidation_request")?;
            unsigned(move |s, c| text(per_block::process_consolidation_request(s, c, &op, spec)))
        }
        "deposit" => {
            let op: phase0::Deposit = input(case, "deposit")?;
            unsigned(move |s, c| text(per_block::process_deposit(s, c, &op, spec)))
        }
        "deposit_request" => {
            let op: electra::DepositRequest = input(case, "deposit_request")?;
            unsigned(move |s, _| text(per_block::process_deposit_request(s, &op)))
        }
        "execution_payload" => {
            let body: electra::BeaconBlockBody<E> = input(case, "body")?;
            let execution: Execution = read_yaml(&case.file("execution.yaml"))?;
            let engine = EngineVerdict(execution.execution_valid);
            unsigned(move |s, _| {
                text(per_block::process_execution_payload(
                    s, &body, &engine, spec,
                ))
            })
        }
        "proposer_slashing" => {
            let op: electra::ProposerSlashing = input(case, "proposer_slashing")?;
            signed(move |s, c, v| text(per_block::process_proposer_slashing(s, c, &op, v, spec)))
        }
        "sync_aggregate" => {
            let op: electra::SyncAggregate<E> = input(case, "sync_aggregate")?;
            signed(move |s, c, v| text(per_block::process_sync_aggregate(s, c, &op, v)))
        }
        "voluntary_exit" => {
            let op: electra::SignedVoluntaryExit = input(case, "voluntary_exit")?;
            signed(move |s, c, v| text(per_block::process_voluntary_exit(s, c, &op, v, spec)))
        }
        "withdrawal_request" => {
            let op: electra::WithdrawalRequest = input(case, "withdrawal_request")?;
            unsigned(move |s, c| text(per_block::process_withdrawal_request(s, c, &op, spec)))
        }
        "withdrawals" => {
            let payload: electra::ExecutionPayload<E> = input(case, "execution_payload")?;
            unsigned(move |s, _| text(per_block::process_withdrawals(s, &payload)))
        }
        _ => return Ok(None),
    };
    Ok(Some(operation))
}

/// A Gloas handler's operation (the Gloas types, the Gloas functions where the spec modifies
/// them), read from the case and ready to apply; `None` for an unknown handler.
fn gloas_operation<'a, E: EthSpec>(
    case: &CaseContext,
    spec: &'a ChainSpec,
    parent_slot: Option<u64>,
) -> Result<Option<Operation<'a, E>>, String> {
    use state_processing::gloas::per_block as gloas_block;
    let operation = match case.handler.as_str() {
        "attestation" => {
            let op: gloas::Attestation<E> = input(case, "attestation")?;
            let parent_slot =
                parent_slot.ok_or("meta.yaml has no parent_slot for a Gloas attestation")?;
            signed(move |s, c, v| text(gloas_block::process_attestation(s, c, &op, parent_slot, v)))
        }
        "attester_slashing" => {
            let op: gloas::AttesterSlashing = input(case, "attester_slashing")?;
            signed(move |s, c, v| text(gloas_block::process_attester_slashing(s, c, &op, v, spec)))
        }
        "block_header" => {
            let block: gloas::BeaconBlock<E> = input(case, "block")?;
            unsigned(move |s, c| text(gloas_block::process_block_header(s, c, &block)))
        }
        "bls_to_execution_change" => {
            let op: gloas::SignedBLSToExecutionChange = input(case, "address_change")?;
            signed(move |s, _, v| text(per_block::process_bls_to_execution_change(s, &op, v, spec)))
        }
        "builder_deposit_request" => {
            let op: gloas::BuilderDepositRequest = input(case, "builder_deposit_request")?;
            unsigned(move |s, _| text(gloas_block::process_builder_deposit_request(s, &op, spec)))
        }
        "builder_exit_request" => {
            let op: gloas::BuilderExitRequest = input(case, "builder_exit_request")?;
            unsigned(move |s, _| text(gloas_block::process_builder_exit_request(s, &op, spec)))
        }
        "consolidation_request" => {
            let op: gloas::ConsolidationRequest = input(case, "consolidation_request")?;
            unsigned(move |s, c| text(per_block::process_consolidation_request(s, c, &op, spec)))
        }
        "deposit_request" => {
            let op: gloas::DepositRequest = input(case, "deposit_request")?;
            unsigned(move |s, _| text(per_block::process_deposit_request(s, &op)))
        }
        "execution_payload_bid" => {
            let op: gloas::SignedExecutionPayloadBid = input(case, "execution_payload_bid")?;
            signed(move |s, c, v| {
                text(gloas_block::process_execution_payload_bid(s, c, &op, v, spec).map(|_| ()))
            })
        }
        "parent_execution_payload" => {
            let block: gloas::BeaconBlock<E> = input(case, "block")?;
            unsigned(move |s, c| {
                text(gloas_block::process_parent_execution_payload(
                    s, c, &block, spec,
                ))
            })
        }
        "payload_attestation" => {
            let op: gloas::PayloadAttestation<E> = input(case, "payload_attestation")?;
            signed(move |s, c, v| text(gloas_block::process_payload_attestation(s, c, &op, v)))
        }
        "proposer_slashing" => {
            let op: gloas::ProposerSlashing = input(case, "proposer_slashing")?;
            signed(move |s, c, v| text(per_block::process_proposer_slashing(s, c, &op, v, spec)))
        }
        "sync_aggregate" => {
            let op: gloas::SyncAggregate<E> = input(case, "sync_aggregate")?;
            signed(move |s, c, v| text(per_block::process_sync_aggregate(s, c, &op, v)))
        }
        "voluntary_exit" | "voluntary_exit_churn" => {
            let op: gloas::SignedVoluntaryExit = input(case, "voluntary_exit")?;
            signed(move |s, c, v| text(per_block::process_voluntary_exit(s, c, &op, v, spec)))
        }
        "withdrawal_request" => {
            let op: gloas::WithdrawalRequest = input(case, "withdrawal_request")?;
            unsigned(move |s, c| text(per_block::process_withdrawal_request(s, c, &op, spec)))
        }
        "withdrawals" => {
            // Gloas's `process_withdrawals(state)` takes no payload.
            known_files(case, vec![])?;
            unsigned(move |s, _| text(gloas_block::process_withdrawals(s)))
        }
        _ => return Ok(None),
    };
    Ok(Some(operation))
}
