//! `sync/optimistic`: the optimistic sync spec's steps (the fork choice format plus
//! `block_hash` / `payload_status` steps that say what the execution client answers for a
//! payload), run through [`BeaconChain`]'s import: a VALID payload imports as valid, SYNCING or
//! ACCEPTED as optimistic, INVALID (or INVALID_BLOCK_HASH) refuses the block and invalidates its
//! ancestors back to the latest valid hash, which takes them out of head selection.
//!
//! [format]: consensus-specs tests/formats/sync/README.md

use std::collections::HashMap;
use std::sync::Arc;

use beacon_chain::{BeaconChain, ChainConfig, ExecutionStatus, ManualSlotClock};
use serde_yaml::{Mapping, Value};
use state_processing::{
    CachedBeaconState,
    per_block::{AlwaysValid, EngineError, ExecutionEngine},
};
use store::{Store, StoreConfig};
use types::{
    BeaconBlock, EthSpec, MainnetEthSpec, MinimalEthSpec, Root, SignedBeaconBlock,
    electra::NewPayloadRequest, phase0::Checkpoint,
};

use crate::case::{CaseContext, CaseResult, Preset, Runner};
use crate::files::{decode_hex32, read_yaml};
use crate::runners::fork_choice::{kzg_pool, read};
use crate::runners::state_case::{chain_spec, read_state};

/// Runs `<config>/<fork>/sync/optimistic/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sync;

impl Runner for Sync {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        if case.handler != "optimistic" {
            return CaseResult::NotRun(format!("no sync handler for {}", case.handler));
        }
        CaseResult::from_check(match case.preset() {
            Ok(Preset::Minimal) => check::<MinimalEthSpec>(case),
            Ok(Preset::Mainnet) => check::<MainnetEthSpec>(case),
            Err(e) => Err(e),
        })
    }
}

/// An execution client that finds every payload invalid.
struct AlwaysInvalid;

impl<E: EthSpec> ExecutionEngine<E> for AlwaysInvalid {
    fn verify_and_notify_new_payload(&self, _: &NewPayloadRequest<E>) -> Result<bool, EngineError> {
        Ok(false)
    }
}

fn root(value: &Value, what: &str) -> Result<Root, String> {
    let s = value
        .as_str()
        .ok_or_else(|| format!("`{what}` is not a string: {value:?}"))?;
    decode_hex32(s).map(Root::from)
}

fn int(value: &Value, what: &str) -> Result<u64, String> {
    value
        .as_u64()
        .ok_or_else(|| format!("`{what}` is not an integer: {value:?}"))
}

fn checkpoint(value: &Value, what: &str) -> Result<Checkpoint, String> {
    Ok(Checkpoint {
        epoch: int(value.get("epoch").ok_or("no epoch")?, what)?,
        root: root(value.get("root").ok_or("no root")?, what)?,
    })
}

/// What the execution client answers for a payload.
#[derive(Debug, Clone)]
enum Answer {
    Valid,
    Syncing,
    Invalid(Option<Root>),
}

fn check<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    let spec = Arc::new(chain_spec(case, case.fork)?);
    let anchor_state = read_state::<E>(case, "anchor_state", case.fork)?;
    let anchor_block = read(case, "anchor_block", |b| {
        BeaconBlock::<E>::from_ssz_bytes_by_fork(b, case.fork)
    })?;
    let anchor_block = match anchor_block {
        BeaconBlock::Electra(message) => {
            SignedBeaconBlock::Electra(types::electra::SignedBeaconBlock {
                message,
                signature: Default::default(),
            })
        }
        BeaconBlock::Fulu(message) => SignedBeaconBlock::Fulu(types::fulu::SignedBeaconBlock {
            message,
            signature: Default::default(),
        }),
        other @ (BeaconBlock::Phase0(_)
        | BeaconBlock::Altair(_)
        | BeaconBlock::Bellatrix(_)
        | BeaconBlock::Capella(_)
        | BeaconBlock::Deneb(_)
        | BeaconBlock::Gloas(_)) => return Err(format!("a {} anchor block", other.fork_name())),
    };
    let genesis_ms = anchor_state.genesis_time().saturating_mul(1000);
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let store = Store::<E>::open(
        &dir.path().join("db"),
        (*spec).clone(),
        StoreConfig::default(),
    )
    .map_err(|e| format!("store: {e}"))?;
    let clock = Arc::new(ManualSlotClock::new(genesis_ms));
    let chain = BeaconChain::from_anchor(
        Arc::new(store),
        CachedBeaconState::new(anchor_state),
        anchor_block,
        spec.clone(),
        clock.clone(),
        kzg_pool()?,
        ChainConfig::default(),
    )
    .map_err(|e| format!("anchor: {e}"))?;

    let mut answers: HashMap<Root, Answer> = HashMap::new();
    let steps: Vec<Mapping> = read_yaml(&case.file("steps.yaml"))?;
    for (i, step) in steps.iter().enumerate() {
        let at = |e: String| format!("step {i}: {e}");
        if let Some(tick) = step.get("tick") {
            clock.set_ms(int(tick, "tick").map_err(at)?.saturating_mul(1000));
            chain.on_tick();
        } else if let Some(hash) = step.get("block_hash") {
            let hash = root(hash, "block_hash").map_err(at)?;
            let status = step
                .get("payload_status")
                .ok_or_else(|| at("no payload_status".into()))?;
            let lvh = match status.get("latest_valid_hash") {
                None | Some(Value::Null) => None,
                Some(v) => Some(root(v, "latest_valid_hash").map_err(at)?),
            };
            let answer = match status.get("status").and_then(Value::as_str) {
                Some("VALID") => Answer::Valid,
                Some("SYNCING" | "ACCEPTED") => Answer::Syncing,
                Some("INVALID" | "INVALID_BLOCK_HASH") => Answer::Invalid(lvh),
                other => return Err(at(format!("unknown payload status {other:?}"))),
            };
            answers.insert(hash, answer);
        } else if let Some(name) = step.get("block").and_then(Value::as_str) {
            let valid = step.get("valid").and_then(Value::as_bool).unwrap_or(true);
            let block = read(case, name, |b| {
                SignedBeaconBlock::<E>::from_ssz_bytes_by_fork(b, case.fork)
            })?;
            let (hash, parent) = match &block {
                SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => (
                    b.message.body.execution_payload.block_hash,
                    b.message.parent_root,
                ),
                other @ (SignedBeaconBlock::Phase0(_)
                | SignedBeaconBlock::Altair(_)
                | SignedBeaconBlock::Bellatrix(_)
                | SignedBeaconBlock::Capella(_)
                | SignedBeaconBlock::Deneb(_)
                | SignedBeaconBlock::Gloas(_)) => {
                    return Err(at(format!("a {} block", other.fork_name())));
                }
            };
            let answer = answers
                .get(&hash)
                .cloned()
                .ok_or_else(|| at(format!("no payload status for {hash}")))?;
            let block = Arc::new(block);
            let result = match &answer {
                Answer::Valid => {
                    chain.import_block(block, &[], &AlwaysValid, ExecutionStatus::Valid)
                }
                Answer::Syncing => {
                    chain.import_block(block, &[], &AlwaysValid, ExecutionStatus::NotValidated)
                }
                Answer::Invalid(lvh) => {
                    let result = chain.import_block(
                        block,
                        &[],
                        &AlwaysInvalid,
                        ExecutionStatus::Invalidated,
                    );
                    chain
                        .invalidate_payloads(&parent, *lvh)
                        .map_err(|e| at(format!("invalidation: {e}")))?;
                    result
                }
            };
            match (valid, result) {
                (true, Err(e)) => return Err(at(format!("block {name} refused: {e}"))),
                (false, Ok(_)) => return Err(at(format!("block {name} accepted but invalid"))),
                _ => {}
            }
        } else if let Some(Value::Mapping(checks)) = step.get("checks") {
            for (key, want) in checks {
                let key = key.as_str().unwrap_or_default();
                let head = chain.head();
                let ok = match key {
                    "head" => {
                        let slot = int(want.get("slot").ok_or("no slot")?, "slot")?;
                        let r = root(want.get("root").ok_or("no root")?, "root")?;
                        (head.slot, head.block_root) == (slot, r)
                    }
                    "time" => chain.fork_choice_time() == int(want, key)?,
                    "justified_checkpoint" => head.justified_checkpoint == checkpoint(want, key)?,
                    "finalized_checkpoint" => head.finalized_checkpoint == checkpoint(want, key)?,
                    "proposer_boost_root" => chain.proposer_boost_root() == root(want, key)?,
                    other => return Err(at(format!("unknown check `{other}`"))),
                };
                if !ok {
                    return Err(at(format!(
                        "check {key} failed: want {want:?}, head slot {} root {}",
                        head.slot, head.block_root
                    )));
                }
            }
        } else {
            return Err(at(format!("unknown step {step:?}")));
        }
    }
    Ok(())
}
