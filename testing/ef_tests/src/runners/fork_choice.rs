//! `fork_choice`: a store built from `anchor_state`/`anchor_block`, then the steps of
//! `steps.yaml` in order — ticks, blocks (with their attestations and attester slashings, and
//! Fulu data columns or Deneb/Electra blobs and proofs), attestations, attester slashings — with `checks` against the store.
//!
//! Every handler (`get_head`, `on_block`, `ex_ante`, `reorg`, `withholding`,
//! `get_proposer_head`, `deposit_with_reorg`, …) has this one format.
//!
//! [format]: consensus-specs tests/formats/fork_choice/README.md

use std::sync::{Arc, OnceLock};

use fork_choice::{Columns, Config, SpecStore, ThreadPool, ThreadPoolBuilder};
use serde_yaml::{Mapping, Value};
use ssz_types::VariableList;
use state_processing::CachedBeaconState;
use state_processing::per_block::VerifySignatures;
use types::{
    BeaconBlock, Blob, DataColumnSidecar, EthSpec, KZGCommitment, KZGProof, Root,
    SignedBeaconBlock,
    electra::{Attestation, AttesterSlashing},
    phase0::Checkpoint,
};

use super::state_case::{EngineVerdict, chain_spec, read_state, with_preset};
use crate::case::{CaseContext, CaseResult, PendingFork, Runner};
use crate::files::{decode_hex, decode_hex32, read_ssz_snappy, read_yaml};

/// Runs `<config>/<fork>/fork_choice/<handler>/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ForkChoiceRunner;

impl Runner for ForkChoiceRunner {
    fn name(&self) -> &'static str {
        "fork_choice"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        with_preset!(case, run(case))
    }

    /// Gloas cases run on the Gloas store ([`super::fork_choice_gloas`]).
    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        self.run_case(&case.released())
    }
}

fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check::<E>(case))
}

/// One pool for every case's KZG batches, and the availability checks `on_block` runs beside
/// its transition: 8 MiB stacks, as the KZG library's blob checks need more than the default
/// 2 MiB in an unoptimised build.
pub(crate) fn kzg_pool() -> Result<Arc<ThreadPool>, String> {
    static POOL: OnceLock<Result<Arc<ThreadPool>, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        ThreadPoolBuilder::new()
            .num_threads(2)
            .stack_size(8 << 20)
            .build()
            .map(Arc::new)
            .map_err(|e| format!("cannot build the KZG pool: {e}"))
    })
    .clone()
}

pub(crate) fn read<T>(
    case: &CaseContext,
    name: &str,
    decode: impl FnOnce(&[u8]) -> Result<T, ssz::DecodeError>,
) -> Result<T, String> {
    let file = format!("{name}.ssz_snappy");
    let bytes = read_ssz_snappy(&case.file(&file))?;
    decode(&bytes).map_err(|e| format!("cannot decode {file}: {e:?}"))
}

fn str_field<'a>(step: &'a Mapping, key: &str) -> Result<&'a str, String> {
    step.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("step {step:?}: `{key}` is not a string"))
}

pub(crate) fn u64_value(value: &Value, what: &str) -> Result<u64, String> {
    value
        .as_u64()
        .ok_or_else(|| format!("`{what}` is not an integer: {value:?}"))
}

pub(crate) fn root_value(value: &Value, what: &str) -> Result<Root, String> {
    let s = value
        .as_str()
        .ok_or_else(|| format!("`{what}` is not a string: {value:?}"))?;
    decode_hex32(s).map(Root::from)
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
    result: Result<T, fork_choice::Error>,
) -> Result<(), String> {
    match (valid, result) {
        (true, Ok(_)) | (false, Err(_)) => Ok(()),
        (true, Err(e)) => Err(format!("{what} was rejected but is valid: {e}")),
        (false, Ok(_)) => Err(format!("{what} was accepted but is invalid")),
    }
}

/// `meta.yaml` of a fork-choice case (only some have one).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ForkChoiceMeta {
    /// Prose about the case; nothing to check.
    #[serde(rename = "description")]
    _description: Option<String>,
    /// The BLS setting: 2 (signatures not real) cannot pass, as blocks' signatures are checked.
    bls_setting: Option<u8>,
}

fn check<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    let meta_path = case.file("meta.yaml");
    if meta_path.is_file() {
        let meta: ForkChoiceMeta = read_yaml(&meta_path)?;
        if !matches!(meta.bls_setting, None | Some(0) | Some(1)) {
            return Err(format!(
                "meta.yaml: bls_setting {:?} is not one fork choice can run",
                meta.bls_setting
            ));
        }
    }
    if case.fork.gloas_enabled() {
        return super::fork_choice_gloas::check::<E>(case);
    }
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
            verify_signatures: VerifySignatures::Batched,
            prune_threshold: usize::MAX,
        },
        kzg_pool()?,
    )
    .map_err(|e| format!("get_forkchoice_store: {e}"))?;

    let steps: Vec<Mapping> = read_yaml(&case.file("steps.yaml"))?;
    for (i, step) in steps.iter().enumerate() {
        run_step(case, &mut store, step).map_err(|e| format!("step {i}: {e}"))?;
    }
    Ok(())
}

pub(crate) fn run_step<E: EthSpec>(
    case: &CaseContext,
    store: &mut SpecStore<E>,
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
        let sidecars = match step.get("columns") {
            None => None,
            Some(list) => {
                let names = list
                    .as_sequence()
                    .ok_or_else(|| format!("`columns` is not a list: {list:?}"))?;
                let mut sidecars = Vec::with_capacity(names.len());
                for name in names {
                    let name = name
                        .as_str()
                        .ok_or_else(|| format!("column name is not a string: {name:?}"))?;
                    sidecars.push(read(case, name, |b| {
                        DataColumnSidecar::<E>::from_ssz_bytes_by_fork(b, case.fork)
                    })?);
                }
                Some(sidecars)
            }
        };
        // Before Fulu: `blobs` (a `List[Blob, MAX_BLOB_COMMITMENTS_PER_BLOCK]`) and `proofs`
        // are what `retrieve_blobs_and_proofs` returns, empty lists when absent.
        let blobs_and_proofs = if case.fork.fulu_enabled() {
            None
        } else {
            let blobs = match step.get("blobs") {
                None => Vec::new(),
                Some(name) => {
                    let name = name
                        .as_str()
                        .ok_or_else(|| format!("`blobs` is not a string: {name:?}"))?;
                    read(case, name, |b| {
                        <VariableList<Blob<E>, E::MaxBlobCommitmentsPerBlock> as ssz::Decode>::from_ssz_bytes(b)
                    })?
                    .to_vec()
                }
            };
            let proofs = match step.get("proofs") {
                None => Vec::new(),
                Some(list) => list
                    .as_sequence()
                    .ok_or_else(|| format!("`proofs` is not a list: {list:?}"))?
                    .iter()
                    .map(|proof| {
                        let hex = proof
                            .as_str()
                            .ok_or_else(|| format!("proof is not a string: {proof:?}"))?;
                        let bytes = decode_hex(hex)?;
                        <[u8; 48]>::try_from(bytes.as_slice())
                            .map(KZGProof::from)
                            .map_err(|_| format!("proof {hex} is not 48 bytes"))
                    })
                    .collect::<Result<Vec<_>, String>>()?,
            };
            let commitments: &[KZGCommitment] = match &block {
                SignedBeaconBlock::Deneb(b) => &b.message.body.blob_kzg_commitments,
                SignedBeaconBlock::Electra(b) => &b.message.body.blob_kzg_commitments,
                other @ (SignedBeaconBlock::Phase0(_)
                | SignedBeaconBlock::Altair(_)
                | SignedBeaconBlock::Bellatrix(_)
                | SignedBeaconBlock::Capella(_)
                | SignedBeaconBlock::Fulu(_)
                | SignedBeaconBlock::Gloas(_)) => {
                    return Err(format!(
                        "block of fork {} has no blobs to retrieve",
                        other.fork_name()
                    ));
                }
            };
            Some((blobs, proofs, commitments))
        };
        // No `columns`: the spec's default `retrieve_column_sidecars` (nothing to sample); an
        // empty list: the test's retrieval fails (the columns were not received).
        let columns = match (&blobs_and_proofs, &sidecars) {
            (Some((blobs, proofs, commitments)), _) => Columns::Blobs {
                blobs,
                proofs,
                commitments,
            },
            (None, None) => Columns::Retrieved(&[]),
            (None, Some(s)) if s.is_empty() => Columns::Missing,
            (None, Some(s)) => Columns::Retrieved(s),
        };
        let result = store.on_block(&block, columns, &EngineVerdict(true));
        let accepted = result.is_ok();
        outcome(&format!("block {name}"), valid, result)?;
        if accepted {
            // An on_block step implies receiving the block's attestations and slashings.
            let (attestations, slashings) = match &block {
                SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => (
                    &b.message.body.attestations,
                    &b.message.body.attester_slashings,
                ),
                other @ (SignedBeaconBlock::Phase0(_)
                | SignedBeaconBlock::Altair(_)
                | SignedBeaconBlock::Bellatrix(_)
                | SignedBeaconBlock::Capella(_)
                | SignedBeaconBlock::Deneb(_)
                | SignedBeaconBlock::Gloas(_)) => {
                    return Err(format!(
                        "block of fork {} is not supported",
                        other.fork_name()
                    ));
                }
            };
            for (i, attestation) in attestations.iter().enumerate() {
                store
                    .on_attestation(attestation, true)
                    .map_err(|e| format!("block {name}: attestation {i}: {e}"))?;
            }
            for (i, slashing) in slashings.iter().enumerate() {
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
        let slashing: AttesterSlashing<E> = read(case, name, <_ as ssz::Decode>::from_ssz_bytes)?;
        return outcome(
            &format!("attester slashing {name}"),
            valid,
            store.on_attester_slashing(&slashing),
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

pub(crate) fn checkpoint(value: &Value, what: &str) -> Result<Checkpoint, String> {
    let epoch = value
        .get("epoch")
        .ok_or_else(|| format!("`{what}` has no epoch"))?;
    let root = value
        .get("root")
        .ok_or_else(|| format!("`{what}` has no root"))?;
    Ok(Checkpoint {
        epoch: u64_value(epoch, what)?,
        root: root_value(root, what)?,
    })
}

pub(crate) fn expect_eq<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: T,
    want: T,
) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, expected {want:?}"))
    }
}

pub(crate) fn run_checks<E: EthSpec>(
    store: &mut SpecStore<E>,
    checks: &Mapping,
) -> Result<(), String> {
    for (name, want) in checks {
        let name = name
            .as_str()
            .ok_or_else(|| format!("check name is not a string: {name:?}"))?;
        match name {
            "time" => expect_eq(name, store.time(), u64_value(want, name)?)?,
            "genesis_time" => expect_eq(name, store.genesis_time(), u64_value(want, name)?)?,
            "head" => {
                let head = store.get_head().map_err(|e| format!("get_head: {e}"))?;
                let slot = want.get("slot").ok_or("`head` has no slot")?;
                let root = want.get("root").ok_or("`head` has no root")?;
                expect_eq(
                    "head",
                    (head.slot, head.root),
                    (
                        u64_value(slot, "head slot")?,
                        root_value(root, "head root")?,
                    ),
                )?;
            }
            "justified_checkpoint" => expect_eq(
                name,
                store.justified_checkpoint().clone(),
                checkpoint(want, name)?,
            )?,
            "finalized_checkpoint" => expect_eq(
                name,
                store.finalized_checkpoint().clone(),
                checkpoint(want, name)?,
            )?,
            "proposer_boost_root" => {
                expect_eq(name, store.proposer_boost_root(), root_value(want, name)?)?
            }
            "get_proposer_head" => {
                let head = store.get_head().map_err(|e| format!("get_head: {e}"))?;
                let slot = store.get_current_slot();
                let got = store
                    .get_proposer_head(&head.root, slot)
                    .map_err(|e| format!("get_proposer_head: {e}"))?;
                expect_eq(name, got, root_value(want, name)?)?;
            }
            "should_override_forkchoice_update" => {
                let connected = want
                    .get("validator_is_connected")
                    .and_then(Value::as_bool)
                    .ok_or("`validator_is_connected` is not a boolean")?;
                let result = want
                    .get("result")
                    .and_then(Value::as_bool)
                    .ok_or("`result` is not a boolean")?;
                let head = store.get_head().map_err(|e| format!("get_head: {e}"))?;
                let got = store
                    .should_override_forkchoice_update(&head.root, |_| connected)
                    .map_err(|e| format!("should_override_forkchoice_update: {e}"))?;
                expect_eq(name, got, result)?;
            }
            other => return Err(format!("unknown check `{other}`")),
        }
    }
    Ok(())
}
