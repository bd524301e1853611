//! `fork_choice` from Gloas on: the store is [`GloasSpecStore`] (the state-free
//! `GloasForkChoice` fed by the spec's state-holding handlers), and `steps.yaml` adds
//! execution payload envelopes (`execution_payload`), payload attestation messages
//! (`payload_attestation_message`) and checks of the head's payload status, the PTC votes and
//! the viable leaves' weights.
//!
//! [format]: consensus-specs tests/formats/fork_choice/README.md

use std::sync::Arc;

use fork_choice::gloas::{GloasSpecStore, WeighedNode};
use serde_yaml::{Mapping, Value};
use state_processing::CachedBeaconState;
use state_processing::per_block::VerifySignatures;
use types::{
    BeaconBlock, EthSpec, SignedBeaconBlock,
    gloas::{
        Attestation, AttesterSlashing, PayloadAttestationMessage, SignedExecutionPayloadEnvelope,
    },
};

use super::fork_choice::{checkpoint, expect_eq, read, root_value, u64_value};
use super::state_case::{EngineVerdict, chain_spec, read_state};
use crate::case::CaseContext;

fn str_field<'a>(step: &'a Mapping, key: &str) -> Result<&'a str, String> {
    step.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("step {step:?}: `{key}` is not a string"))
}

/// `valid` of a step, `true` when absent.
fn expect_valid(step: &Mapping) -> Result<bool, String> {
    match step.get("valid") {
        None => Ok(true),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| format!("`valid` is not a boolean: {v:?}")),
    }
}

/// Compares a step's outcome with its `valid` flag.
fn outcome<T>(
    what: &str,
    valid: bool,
    result: Result<T, fork_choice::GloasError>,
) -> Result<(), String> {
    match (valid, result) {
        (true, Ok(_)) | (false, Err(_)) => Ok(()),
        (true, Err(e)) => Err(format!("{what} was rejected but is valid: {e}")),
        (false, Ok(_)) => Err(format!("{what} was accepted but is invalid")),
    }
}

/// Runs a Gloas fork-choice case (its `meta.yaml` already checked).
pub(crate) fn check<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    let spec = Arc::new(chain_spec(case, case.fork)?);
    let anchor_state = read_state::<E>(case, "anchor_state", case.fork)?;
    let anchor_block = read(case, "anchor_block", |b| {
        BeaconBlock::<E>::from_ssz_bytes_by_fork(b, case.fork)
    })?;
    let anchor_block = match anchor_block {
        BeaconBlock::Gloas(b) => b,
        other @ (BeaconBlock::Phase0(_)
        | BeaconBlock::Altair(_)
        | BeaconBlock::Bellatrix(_)
        | BeaconBlock::Capella(_)
        | BeaconBlock::Deneb(_)
        | BeaconBlock::Electra(_)
        | BeaconBlock::Fulu(_)) => {
            return Err(format!(
                "anchor block of fork {} is not a Gloas block",
                other.fork_name()
            ));
        }
    };
    let mut store = GloasSpecStore::new(
        CachedBeaconState::new(anchor_state),
        &anchor_block,
        spec,
        VerifySignatures::Batched,
    )
    .map_err(|e| format!("get_forkchoice_store: {e}"))?;
    let steps: Vec<Mapping> = crate::files::read_yaml(&case.file("steps.yaml"))?;
    for (i, step) in steps.iter().enumerate() {
        run_step(case, &mut store, step).map_err(|e| format!("step {i}: {e}"))?;
    }
    Ok(())
}

fn run_step<E: EthSpec>(
    case: &CaseContext,
    store: &mut GloasSpecStore<E>,
    step: &Mapping,
) -> Result<(), String> {
    let valid = expect_valid(step)?;
    if let Some(tick) = step.get("tick") {
        store.on_tick(u64_value(tick, "tick")?);
        return Ok(());
    }
    if step.contains_key("block") {
        let name = str_field(step, "block")?;
        let block = read(case, name, |b| {
            SignedBeaconBlock::<E>::from_ssz_bytes_by_fork(b, case.fork)
        })?;
        let result = store.on_block(&block, &EngineVerdict(true));
        let accepted = result.is_ok();
        outcome(&format!("block {name}"), valid, result)?;
        if accepted {
            // An on_block step implies receiving the block's attestations and slashings.
            let SignedBeaconBlock::Gloas(block) = &block else {
                return Err(format!("block {name} is not a Gloas block"));
            };
            for (i, attestation) in block.message.body.attestations.iter().enumerate() {
                store
                    .on_attestation(attestation, true)
                    .map_err(|e| format!("block {name}: attestation {i}: {e}"))?;
            }
            for (i, slashing) in block.message.body.attester_slashings.iter().enumerate() {
                store
                    .on_attester_slashing(slashing)
                    .map_err(|e| format!("block {name}: attester slashing {i}: {e}"))?;
            }
        }
        return Ok(());
    }
    if step.contains_key("attestation") {
        let name = str_field(step, "attestation")?;
        let attestation: Attestation<E> = read(case, name, <_ as ssz::Decode>::from_ssz_bytes)?;
        return outcome(
            &format!("attestation {name}"),
            valid,
            store.on_attestation(&attestation, false),
        );
    }
    if step.contains_key("attester_slashing") {
        let name = str_field(step, "attester_slashing")?;
        let slashing: AttesterSlashing = read(case, name, <_ as ssz::Decode>::from_ssz_bytes)?;
        return outcome(
            &format!("attester slashing {name}"),
            valid,
            store.on_attester_slashing(&slashing),
        );
    }
    if step.contains_key("execution_payload") {
        let name = str_field(step, "execution_payload")?;
        let envelope: SignedExecutionPayloadEnvelope<E> =
            read(case, name, <_ as ssz::Decode>::from_ssz_bytes)?;
        // The spec's default `retrieve_column_sidecars_and_kzg_commitments`: no columns to
        // sample, so the data is available; the engine finds every payload valid.
        return outcome(
            &format!("execution payload envelope {name}"),
            valid,
            store.on_execution_payload_envelope(&envelope, Ok(()), |_| Ok(true)),
        );
    }
    if step.contains_key("payload_attestation_message") {
        let name = str_field(step, "payload_attestation_message")?;
        let message: PayloadAttestationMessage =
            read(case, name, <_ as ssz::Decode>::from_ssz_bytes)?;
        return outcome(
            &format!("payload attestation message {name}"),
            valid,
            store.on_payload_attestation_message(&message, false),
        );
    }
    if let Some(checks) = step.get("checks") {
        let checks = checks
            .as_mapping()
            .ok_or_else(|| format!("`checks` is not a mapping: {checks:?}"))?;
        return run_checks(store, checks);
    }
    Err(format!("unknown step {step:?}"))
}

/// A `votes` list of `payload_timeliness_vote` / `payload_data_availability_vote`.
fn ptc_votes(want: &Value, what: &str) -> Result<(types::Root, Vec<Option<bool>>), String> {
    let root = root_value(
        want.get("block_root")
            .ok_or_else(|| format!("`{what}` has no block_root"))?,
        what,
    )?;
    let votes = want
        .get("votes")
        .and_then(Value::as_sequence)
        .ok_or_else(|| format!("`{what}` has no votes list"))?
        .iter()
        .map(|v| match v {
            Value::Null => Ok(None),
            Value::Bool(b) => Ok(Some(*b)),
            other => Err(format!("`{what}`: vote {other:?} is not a boolean or null")),
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((root, votes))
}

fn run_checks<E: EthSpec>(store: &mut GloasSpecStore<E>, checks: &Mapping) -> Result<(), String> {
    for (name, want) in checks {
        let name = name
            .as_str()
            .ok_or_else(|| format!("check name is not a string: {name:?}"))?;
        match name {
            "time" => expect_eq(name, store.store().time(), u64_value(want, name)?)?,
            "genesis_time" => {
                expect_eq(name, store.store().genesis_time(), u64_value(want, name)?)?
            }
            "head" => {
                let head = store.get_head().map_err(|e| format!("get_head: {e}"))?;
                let slot = want.get("slot").ok_or("`head` has no slot")?;
                let root = want.get("root").ok_or("`head` has no root")?;
                let status = want
                    .get("payload_status")
                    .ok_or("`head` has no payload_status")?;
                expect_eq(
                    "head",
                    (head.slot, head.root, u64::from(head.payload_status.as_u8())),
                    (
                        u64_value(slot, "head slot")?,
                        root_value(root, "head root")?,
                        u64_value(status, "head payload_status")?,
                    ),
                )?;
            }
            "justified_checkpoint" => expect_eq(
                name,
                store.store().justified_checkpoint().clone(),
                checkpoint(want, name)?,
            )?,
            "finalized_checkpoint" => expect_eq(
                name,
                store.store().finalized_checkpoint().clone(),
                checkpoint(want, name)?,
            )?,
            "proposer_boost_root" => expect_eq(
                name,
                store.store().proposer_boost_root(),
                root_value(want, name)?,
            )?,
            "payload_timeliness_vote" => {
                let (root, votes) = ptc_votes(want, name)?;
                let got = store
                    .store()
                    .payload_timeliness_vote(&root)
                    .ok_or_else(|| format!("{name}: block {root:?} is unknown"))?;
                expect_eq(name, got, votes.as_slice())?;
            }
            "payload_data_availability_vote" => {
                let (root, votes) = ptc_votes(want, name)?;
                let got = store
                    .store()
                    .payload_data_availability_vote(&root)
                    .ok_or_else(|| format!("{name}: block {root:?} is unknown"))?;
                expect_eq(name, got, votes.as_slice())?;
            }
            "viable_for_head_roots_and_weights" => {
                let mut got = store
                    .viable_for_head_nodes()
                    .map_err(|e| format!("viable_for_head_roots_and_weights: {e}"))?;
                let mut expected = want
                    .as_sequence()
                    .ok_or_else(|| format!("`{name}` is not a list"))?
                    .iter()
                    .map(|leaf| {
                        let root = root_value(leaf.get("root").ok_or("leaf has no root")?, name)?;
                        let weight =
                            u64_value(leaf.get("weight").ok_or("leaf has no weight")?, name)?;
                        let status = u64_value(
                            leaf.get("payload_status")
                                .ok_or("leaf has no payload_status")?,
                            name,
                        )?;
                        Ok((root, status, weight))
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                let mut got: Vec<_> = got
                    .drain(..)
                    .map(
                        |WeighedNode {
                             root,
                             payload_status,
                             weight,
                         }| {
                            (root, u64::from(payload_status.as_u8()), weight)
                        },
                    )
                    .collect();
                got.sort();
                expected.sort();
                expect_eq(name, got, expected)?;
            }
            other => return Err(format!("unknown check `{other}`")),
        }
    }
    Ok(())
}
