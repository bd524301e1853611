//! `light_client`: the proofs a light-client server serves (`single_merkle_proof`, run like
//! `merkle_proof`), a light client's store (`sync`), the ranking of updates (`update_ranking`)
//! and a full node's collection of light-client data from imported blocks
//! (`data_collection`), all through the `light_client` crate.
//!
//! - `sync`: `bootstrap` initializes a store (`initialize_light_client_store`), then each step
//!   processes an update (`process_light_client_update`), forces an update
//!   (`process_light_client_store_force_update`) or upgrades the store; after each the store's
//!   finalized and optimistic headers must match `checks`. Data of earlier forks is upgraded to
//!   the store's format first. The store is Electra's format, or Gloas's when `meta.yaml` or an
//!   `upgrade_store` step names Gloas's version (`upgrade_lc_store_to_gloas`); Gloas data is
//!   told by its digest under `GLOAS_FORK_VERSION`.
//! - `update_ranking`: `updates_<i>` are in descending precedence; no update may rank above one
//!   listed before it (`is_better_update`). Gloas's updates are ranked in Gloas's format, the
//!   others' in Electra's.
//! - `data_collection`: blocks from `initial_state` run through `state_transition`; each post-state
//!   feeds a `LightClientDataCollector`, and at each `new_head` its finalized checkpoint,
//!   bootstraps, best updates per period and latest finality and optimistic updates must equal
//!   the vector's (absent where the vector lists none). A Gloas case collects Gloas-format data
//!   (`GloasLightClientDataCollector`, from the `create_signed_genesis_block` anchor whose body
//!   carries the state's bid); the vector's data of any fork is upgraded to the collector's
//!   format to compare.
//!
//! Every file of a case is read (the harness's accessed-files check fails a case that leaves one
//! unread).
//!
//! [format]: consensus-specs tests/formats/light_client/README.md

use std::collections::HashMap;

use light_client::fork::{
    upgrade_lc_bootstrap_to_latest, upgrade_lc_finality_update_to_latest,
    upgrade_lc_optimistic_update_to_latest, upgrade_lc_update_to_latest,
};
use light_client::gloas::{
    upgrade_lc_bootstrap_to_gloas, upgrade_lc_bootstrap_to_gloas_format,
    upgrade_lc_finality_update_to_gloas_format, upgrade_lc_optimistic_update_to_gloas_format,
    upgrade_lc_store_to_gloas, upgrade_lc_update_to_gloas, upgrade_lc_update_to_gloas_format,
};
use light_client::sync_protocol::LightClientStore;
use light_client::{DataCollector, LcData, LcHeader, LcUpdate, LightClientError, Update};
use serde::Deserialize;
use serde_yaml::Value;
use state_processing::CachedBeaconState;
use state_processing::per_block::VerifySignatures;
use state_processing::state_transition::state_transition;
use tree_hash::TreeHash;
use types::chain_spec::{MAINNET_CONFIG_YAML, MINIMAL_CONFIG_YAML};
use types::{
    ChainSpec, EthSpec, ForkName, LightClientBootstrap, LightClientFinalityUpdate,
    LightClientOptimisticUpdate, LightClientUpdate, Root, SignedBeaconBlock, gloas,
};

use super::merkle_proof::{run_pending_fork_single_merkle_proof, run_single_merkle_proof};
use super::state_case::{EngineVerdict, read_state, with_preset};
use crate::case::{CaseContext, CaseResult, PendingFork, Preset, Runner};
use crate::files::{decode_hex, decode_hex32, read_ssz_snappy, read_text, read_yaml};

/// Runs `<config>/<fork>/light_client/<handler>/<suite>/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LightClient;

impl Runner for LightClient {
    fn name(&self) -> &'static str {
        "light_client"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        match case.handler.as_str() {
            "single_merkle_proof" => run_single_merkle_proof(case),
            "sync" => with_preset!(case, run_sync(case)),
            "update_ranking" => with_preset!(case, run_update_ranking(case)),
            "data_collection" => with_preset!(case, run_data_collection(case)),
            other => CaseResult::NotRun(format!("no light_client handler for {other}")),
        }
    }

    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        match case.handler.as_str() {
            "single_merkle_proof" => run_pending_fork_single_merkle_proof(case),
            // The state transition runs Gloas states: these go through the same code.
            "sync" | "update_ranking" | "data_collection" => self.run_case(&case.released()),
            other => CaseResult::NotRun(format!(
                "the light_client runner runs no {} {other} case yet",
                case.fork
            )),
        }
    }
}

/// The preset's configuration with the case's `config.yaml` over it.
fn case_spec(case: &CaseContext) -> Result<ChainSpec, String> {
    let base = match case.preset()? {
        Preset::Minimal => MINIMAL_CONFIG_YAML,
        Preset::Mainnet => MAINNET_CONFIG_YAML,
    };
    let overrides = read_text(&case.file("config.yaml"))?;
    ChainSpec::from_config_yaml_with_overrides(base, &overrides)
        .map_err(|e| format!("config.yaml: {e}"))
}

/// The forks `types` knows, oldest first.
const FORKS: [ForkName; 7] = [
    ForkName::Phase0,
    ForkName::Altair,
    ForkName::Bellatrix,
    ForkName::Capella,
    ForkName::Deneb,
    ForkName::Electra,
    ForkName::Fulu,
];

/// The fork whose digest (under `spec` and `genesis_validators_root`) is `digest`: tried at
/// every fork's epoch and every blob schedule entry's (where Fulu's digest changes).
fn fork_of_digest(
    spec: &ChainSpec,
    genesis_validators_root: Root,
    digest: &str,
) -> Option<ForkName> {
    let digest = decode_hex(digest).ok()?;
    let epochs = FORKS
        .iter()
        .filter_map(|&fork| spec.fork_epoch(fork))
        .chain(spec.blob_schedule.iter().map(|entry| entry.epoch));
    for epoch in epochs {
        if spec
            .compute_fork_digest(genesis_validators_root, epoch)
            .as_slice()
            == digest.as_slice()
        {
            return Some(spec.fork_name_at_epoch(epoch));
        }
    }
    None
}

/// The fork whose version is `version`.
fn fork_of_version(spec: &ChainSpec, version: &str) -> Option<ForkName> {
    let version = decode_hex(version).ok()?;
    FORKS
        .into_iter()
        .find(|&fork| spec.fork_version(fork).as_slice() == version.as_slice())
}

/// `meta.yaml` of a `sync` case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SyncMeta {
    genesis_validators_root: String,
    trusted_block_root: String,
    bootstrap_fork_digest: String,
    store_fork_version: String,
}

/// The format of a `sync` case's data or store: a fork `types` runs, or Gloas (whose
/// light-client containers `types::gloas` has; the node does not run Gloas).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyncFork {
    Known(ForkName),
    Gloas,
}

/// The format of data whose digest is `digest`.
fn sync_fork_of_digest(spec: &ChainSpec, gvr: Root, digest: &str) -> Option<SyncFork> {
    if let Some(fork) = fork_of_digest(spec, gvr, digest) {
        return Some(match fork {
            ForkName::Gloas => SyncFork::Gloas,
            ForkName::Phase0
            | ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Deneb
            | ForkName::Electra
            | ForkName::Fulu => SyncFork::Known(fork),
        });
    }
    let bytes = decode_hex(digest).ok()?;
    let epoch = spec.fork_epoch(ForkName::Gloas)?;
    let gloas = spec.compute_fork_digest(gvr, epoch);
    (gloas.as_slice() == bytes.as_slice()).then_some(SyncFork::Gloas)
}

/// The format of a store whose fork version is `version`.
fn sync_fork_of_version(spec: &ChainSpec, version: &str) -> Option<SyncFork> {
    if let Some(fork) = fork_of_version(spec, version) {
        return Some(SyncFork::Known(fork));
    }
    let bytes = decode_hex(version).ok()?;
    (spec.gloas_fork_version.map(|v| v.to_vec()) == Some(bytes)).then_some(SyncFork::Gloas)
}

/// A light client's store in either format.
enum AnyStore<E: EthSpec> {
    Electra(LightClientStore<E>),
    Gloas(light_client::gloas::Store<E>),
}

fn run_sync<E: EthSpec>(case: &CaseContext) -> CaseResult {
    let prepared = (|| -> Result<_, String> {
        let spec = case_spec(case)?;
        let meta: SyncMeta = read_yaml(&case.file("meta.yaml"))?;
        let steps: Vec<Value> = read_yaml(&case.file("steps.yaml"))?;
        let gvr = Root::from(decode_hex32(&meta.genesis_validators_root)?);
        Ok((spec, meta, steps, gvr))
    })();
    let (spec, meta, steps, gvr) = match prepared {
        Ok(p) => p,
        Err(e) => return CaseResult::Failed(e),
    };
    CaseResult::from_check(check_sync::<E>(case, &spec, &meta, &steps, gvr))
}

fn str_of<'a>(value: &'a Value, key: &str) -> Result<&'a str, String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{key}` is not a string in {value:?}"))
}

fn u64_of(value: &Value, key: &str) -> Result<u64, String> {
    value
        .get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("`{key}` is not an integer in {value:?}"))
}

fn root_of(value: &Value, key: &str) -> Result<Root, String> {
    decode_hex32(str_of(value, key)?).map(Root::from)
}

/// Reads `<name>.ssz_snappy` as `fork`'s container.
fn read_by_fork<T>(
    case: &CaseContext,
    name: &str,
    fork: ForkName,
    decode: impl FnOnce(&[u8], ForkName) -> Result<T, ssz::DecodeError>,
) -> Result<T, String> {
    let file = format!("{name}.ssz_snappy");
    let bytes = read_ssz_snappy(&case.file(&file))?;
    decode(&bytes, fork).map_err(|e| format!("cannot decode {file} as {fork}: {e:?}"))
}

/// Compares a store header with a check's `{slot, beacon_root, execution_root}`.
fn check_header<E: EthSpec, H: LcHeader<E>>(
    spec: &ChainSpec,
    which: &str,
    header: &H,
    expected: &Value,
) -> Result<(), String> {
    let slot = u64_of(expected, "slot")?;
    let beacon_root = root_of(expected, "beacon_root")?;
    let beacon = header.beacon();
    if beacon.slot != slot || beacon.tree_hash_root() != beacon_root {
        return Err(format!(
            "{which}: slot {} root {}, expected slot {slot} root {beacon_root}",
            beacon.slot,
            beacon.tree_hash_root()
        ));
    }
    if expected.get("execution_root").is_some() {
        let want = root_of(expected, "execution_root")?;
        let got = header.execution_root(spec);
        if got != want {
            return Err(format!("{which}: execution root {got}, expected {want}"));
        }
    }
    Ok(())
}

fn check_store<E: EthSpec, U: LcUpdate<E>>(
    spec: &ChainSpec,
    store: &LightClientStore<E, U>,
    step: &Value,
    index: usize,
) -> Result<(), String> {
    let checks = step
        .get("checks")
        .ok_or_else(|| format!("step {index}: no checks"))?;
    if let Some(expected) = checks.get("finalized_header") {
        check_header(spec, "finalized_header", &store.finalized_header, expected)
            .map_err(|e| format!("step {index}: {e}"))?;
    }
    if let Some(expected) = checks.get("optimistic_header") {
        check_header(
            spec,
            "optimistic_header",
            &store.optimistic_header,
            expected,
        )
        .map_err(|e| format!("step {index}: {e}"))?;
    }
    Ok(())
}

impl<E: EthSpec> AnyStore<E> {
    fn check(&self, spec: &ChainSpec, step: &Value, index: usize) -> Result<(), String> {
        match self {
            AnyStore::Electra(store) => check_store(spec, store, step, index),
            AnyStore::Gloas(store) => check_store(spec, store, step, index),
        }
    }
}

/// A `bootstrap` or `update` of a `sync` case: in Electra's format (data of any fork before
/// Gloas, upgraded) or in Gloas's.
enum SyncData<T, G> {
    Electra(T),
    Gloas(G),
}

/// Reads a `bootstrap` or `update` of the case, of format `fork`: a known fork's through
/// `known` (which upgrades it to Electra's format), Gloas's as `G`.
fn read_sync_data<T, G: ssz::Decode>(
    case: &CaseContext,
    name: &str,
    fork: SyncFork,
    known: impl FnOnce(&[u8], ForkName) -> Result<T, String>,
) -> Result<SyncData<T, G>, String> {
    let file = format!("{name}.ssz_snappy");
    let bytes = read_ssz_snappy(&case.file(&file))?;
    match fork {
        SyncFork::Known(fork) => known(&bytes, fork).map(SyncData::Electra),
        SyncFork::Gloas => G::from_ssz_bytes(&bytes)
            .map(SyncData::Gloas)
            .map_err(|e| format!("cannot decode {file} as gloas: {e:?}")),
    }
}

fn check_sync<E: EthSpec>(
    case: &CaseContext,
    spec: &ChainSpec,
    meta: &SyncMeta,
    steps: &[Value],
    gvr: Root,
) -> Result<(), String> {
    let bootstrap_fork =
        sync_fork_of_digest(spec, gvr, &meta.bootstrap_fork_digest).ok_or_else(|| {
            format!(
                "unknown bootstrap_fork_digest {}",
                meta.bootstrap_fork_digest
            )
        })?;
    let store_fork = sync_fork_of_version(spec, &meta.store_fork_version)
        .ok_or_else(|| format!("unknown store_fork_version {}", meta.store_fork_version))?;
    let bootstrap = read_sync_data::<_, gloas::LightClientBootstrap<E>>(
        case,
        "bootstrap",
        bootstrap_fork,
        |b, f| {
            let bootstrap = LightClientBootstrap::<E>::from_ssz_bytes_by_fork(b, f)
                .map_err(|e| format!("cannot decode bootstrap as {f}: {e:?}"))?;
            upgrade_lc_bootstrap_to_latest(&bootstrap).map_err(|e| e.to_string())
        },
    )?;
    let trusted = Root::from(decode_hex32(&meta.trusted_block_root)?);
    let initialize =
        |e: light_client::LightClientError| format!("initialize_light_client_store: {e}");
    let mut store = match (store_fork, bootstrap) {
        (SyncFork::Known(_), SyncData::Electra(electra)) => AnyStore::Electra(
            light_client::initialize_light_client_store(spec, trusted, &electra)
                .map_err(initialize)?,
        ),
        (SyncFork::Gloas, bootstrap) => {
            let bootstrap = match bootstrap {
                SyncData::Electra(electra) => {
                    upgrade_lc_bootstrap_to_gloas(spec, &electra).map_err(|e| e.to_string())?
                }
                SyncData::Gloas(gloas) => gloas,
            };
            AnyStore::Gloas(
                light_client::initialize_light_client_store(spec, trusted, &bootstrap)
                    .map_err(initialize)?,
            )
        }
        (SyncFork::Known(fork), SyncData::Gloas(_)) => {
            return Err(format!("a Gloas bootstrap for a store of {fork}"));
        }
    };

    for (index, step) in steps.iter().enumerate() {
        if let Some(s) = step.get("process_update") {
            let digest = str_of(s, "update_fork_digest")?;
            let fork = sync_fork_of_digest(spec, gvr, digest)
                .ok_or_else(|| format!("step {index}: unknown update_fork_digest {digest}"))?;
            let update = read_sync_data::<_, gloas::LightClientUpdate<E>>(
                case,
                str_of(s, "update")?,
                fork,
                |b, f| {
                    let update = LightClientUpdate::<E>::from_ssz_bytes_by_fork(b, f)
                        .map_err(|e| format!("cannot decode update as {f}: {e:?}"))?;
                    upgrade_lc_update_to_latest(&update).map_err(|e| e.to_string())
                },
            )?;
            let current_slot = u64_of(s, "current_slot")?;
            let processed = match (&mut store, update) {
                (AnyStore::Electra(store), SyncData::Electra(update)) => {
                    light_client::process_light_client_update(
                        spec,
                        store,
                        &update,
                        current_slot,
                        gvr,
                    )
                }
                (AnyStore::Gloas(store), update) => {
                    let update = match update {
                        SyncData::Electra(electra) => {
                            upgrade_lc_update_to_gloas(spec, &electra).map_err(|e| e.to_string())?
                        }
                        SyncData::Gloas(gloas) => gloas,
                    };
                    light_client::process_light_client_update(
                        spec,
                        store,
                        &update,
                        current_slot,
                        gvr,
                    )
                }
                (AnyStore::Electra(_), SyncData::Gloas(_)) => {
                    return Err(format!(
                        "step {index}: a Gloas update for a store not upgraded to Gloas"
                    ));
                }
            };
            processed.map_err(|e| format!("step {index}: process_light_client_update: {e}"))?;
            store.check(spec, s, index)?;
        } else if let Some(s) = step.get("force_update") {
            let current_slot = u64_of(s, "current_slot")?;
            match &mut store {
                AnyStore::Electra(store) => {
                    light_client::process_light_client_store_force_update(store, current_slot)
                }
                AnyStore::Gloas(store) => {
                    light_client::process_light_client_store_force_update(store, current_slot)
                }
            }
            .map_err(|e| format!("step {index}: process_light_client_store_force_update: {e}"))?;
            store.check(spec, s, index)?;
        } else if let Some(s) = step.get("upgrade_store") {
            let version = str_of(s, "store_fork_version")?;
            let target = sync_fork_of_version(spec, version)
                .ok_or_else(|| format!("step {index}: unknown store_fork_version {version}"))?;
            // Electra's format serves every fork before Gloas: only an upgrade to Gloas changes
            // the store.
            store = match (store, target) {
                (AnyStore::Electra(electra), SyncFork::Gloas) => AnyStore::Gloas(
                    upgrade_lc_store_to_gloas(spec, &electra)
                        .map_err(|e| format!("step {index}: upgrade_lc_store_to_gloas: {e}"))?,
                ),
                (AnyStore::Gloas(_), SyncFork::Known(fork)) => {
                    return Err(format!(
                        "step {index}: a Gloas store cannot go back to {fork}"
                    ));
                }
                (store, _) => store,
            };
            store.check(spec, s, index)?;
        } else {
            return Err(format!("step {index}: unknown step {step:?}"));
        }
    }
    Ok(())
}

fn run_update_ranking<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check_update_ranking::<E>(case))
}

fn run_data_collection<E: EthSpec>(case: &CaseContext) -> CaseResult {
    // Gloas's data is collected in its own format; every earlier fork's in Electra's.
    if case.fork == ForkName::Gloas {
        CaseResult::from_check(check_data_collection::<E, gloas::LightClientUpdate<E>>(
            case,
        ))
    } else {
        CaseResult::from_check(check_data_collection::<E, Update<E>>(case))
    }
}

/// A format a collector collects in, and the vector's data (of any fork) read into it.
trait CollectedFormat<E: EthSpec>: LcData<E> {
    fn bootstrap(
        spec: &ChainSpec,
        value: &LightClientBootstrap<E>,
    ) -> Result<Self::Bootstrap, LightClientError>;
    fn update(spec: &ChainSpec, value: &LightClientUpdate<E>) -> Result<Self, LightClientError>;
    fn finality_update(
        spec: &ChainSpec,
        value: &LightClientFinalityUpdate<E>,
    ) -> Result<Self::FinalityUpdate, LightClientError>;
    fn optimistic_update(
        spec: &ChainSpec,
        value: &LightClientOptimisticUpdate<E>,
    ) -> Result<Self::OptimisticUpdate, LightClientError>;
}

impl<E: EthSpec> CollectedFormat<E> for Update<E> {
    fn bootstrap(
        _: &ChainSpec,
        value: &LightClientBootstrap<E>,
    ) -> Result<Self::Bootstrap, LightClientError> {
        upgrade_lc_bootstrap_to_latest(value)
    }
    fn update(_: &ChainSpec, value: &LightClientUpdate<E>) -> Result<Self, LightClientError> {
        upgrade_lc_update_to_latest(value)
    }
    fn finality_update(
        _: &ChainSpec,
        value: &LightClientFinalityUpdate<E>,
    ) -> Result<Self::FinalityUpdate, LightClientError> {
        upgrade_lc_finality_update_to_latest(value)
    }
    fn optimistic_update(
        _: &ChainSpec,
        value: &LightClientOptimisticUpdate<E>,
    ) -> Result<Self::OptimisticUpdate, LightClientError> {
        upgrade_lc_optimistic_update_to_latest(value)
    }
}

impl<E: EthSpec> CollectedFormat<E> for gloas::LightClientUpdate<E> {
    fn bootstrap(
        spec: &ChainSpec,
        value: &LightClientBootstrap<E>,
    ) -> Result<Self::Bootstrap, LightClientError> {
        upgrade_lc_bootstrap_to_gloas_format(spec, value)
    }
    fn update(spec: &ChainSpec, value: &LightClientUpdate<E>) -> Result<Self, LightClientError> {
        upgrade_lc_update_to_gloas_format(spec, value)
    }
    fn finality_update(
        spec: &ChainSpec,
        value: &LightClientFinalityUpdate<E>,
    ) -> Result<Self::FinalityUpdate, LightClientError> {
        upgrade_lc_finality_update_to_gloas_format(spec, value)
    }
    fn optimistic_update(
        spec: &ChainSpec,
        value: &LightClientOptimisticUpdate<E>,
    ) -> Result<Self::OptimisticUpdate, LightClientError> {
        upgrade_lc_optimistic_update_to_gloas_format(spec, value)
    }
}

/// `meta.yaml` of an `update_ranking` case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RankingMeta {
    updates_count: usize,
}

fn check_update_ranking<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    let meta: RankingMeta = read_yaml(&case.file("meta.yaml"))?;
    let names = (0..meta.updates_count).map(|i| format!("updates_{i}"));
    if case.fork == ForkName::Gloas {
        // Gloas's updates are ranked in their own format.
        let updates = names
            .map(|name| {
                read_by_fork(case, &name, case.fork, |b, _| {
                    <gloas::LightClientUpdate<E> as ssz::Decode>::from_ssz_bytes(b)
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        return check_ranked::<E, _>(&updates);
    }
    let updates = names
        .map(|name| {
            let update = read_by_fork(case, &name, case.fork, |b, f| {
                LightClientUpdate::<E>::from_ssz_bytes_by_fork(b, f)
            })?;
            upgrade_lc_update_to_latest(&update).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<Update<E>>, String>>()?;
    check_ranked::<E, _>(&updates)
}

/// `updates` are in descending precedence: no update ranks above one listed before it.
fn check_ranked<E: EthSpec, U: LcUpdate<E>>(updates: &[U]) -> Result<(), String> {
    for (i, better) in updates.iter().enumerate() {
        for (j, worse) in updates.iter().enumerate().skip(i + 1) {
            if light_client::is_better_update(worse, better) {
                return Err(format!(
                    "is_better_update ranks updates_{j} above updates_{i}, listed before it"
                ));
            }
        }
    }
    Ok(())
}

/// A `{fork_digest, data}` reference to a file of the case.
fn data_ref(value: &Value) -> Result<(&str, &str), String> {
    Ok((str_of(value, "fork_digest")?, str_of(value, "data")?))
}

/// Compares what the collector serves (`got`) with the vector's object in `expected`, if any.
fn compare<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: Option<T>,
    expected: Option<Result<T, String>>,
) -> Result<(), String> {
    match (got, expected) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(format!("{what}: served one, the vector has none")),
        (None, Some(_)) => Err(format!("{what}: served none, the vector has one")),
        (Some(got), Some(want)) => {
            let want = want?;
            if got == want {
                Ok(())
            } else {
                Err(format!("{what}: served {got:?}, expected {want:?}"))
            }
        }
    }
}

fn check_data_collection<E: EthSpec, U: CollectedFormat<E>>(
    case: &CaseContext,
) -> Result<(), String> {
    let spec = case_spec(case)?;
    let steps: Vec<Value> = read_yaml(&case.file("steps.yaml"))?;
    let state = read_state::<E>(case, "initial_state", case.fork)?;
    let gvr = *state.genesis_validators_root();
    let mut anchor_state = CachedBeaconState::new(state);
    let state_root = anchor_state
        .hash_tree_root()
        .map_err(|e| format!("initial_state root: {e}"))?;
    // `create_signed_genesis_block`: the empty-bodied block the initial state commits to (from
    // Gloas, carrying the state's bid).
    let anchor_block = match state_processing::genesis::interop_genesis_block_of::<E>(
        &anchor_state.state,
        state_root,
    ) {
        SignedBeaconBlock::Fulu(block) if case.fork == ForkName::Electra => {
            SignedBeaconBlock::Electra(block)
        }
        block @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Electra(_)
        | SignedBeaconBlock::Fulu(_)
        | SignedBeaconBlock::Gloas(_)) => block,
    };
    let mut collector =
        DataCollector::<E, U>::new(spec.clone(), &anchor_state.state, &anchor_block)
            .map_err(|e| format!("collector from initial_state: {e}"))?;
    let mut states: HashMap<Root, CachedBeaconState<E>> = HashMap::new();
    states.insert(anchor_block.canonical_root(), anchor_state);

    let fork_of = |digest: &str| {
        fork_of_digest(&spec, gvr, digest).ok_or_else(|| format!("unknown fork digest {digest}"))
    };
    for (index, step) in steps.iter().enumerate() {
        if let Some(s) = step.get("new_block") {
            let (digest, name) = data_ref(s)?;
            let block = read_by_fork(case, name, fork_of(digest)?, |b, f| {
                SignedBeaconBlock::<E>::from_ssz_bytes_by_fork(b, f)
            })?;
            let mut state = states.get(&block.parent_root()).cloned().ok_or_else(|| {
                format!("step {index}: no state for parent {}", block.parent_root())
            })?;
            state_transition(
                &mut state,
                &block,
                VerifySignatures::Batched,
                true,
                &EngineVerdict(true),
                &spec,
            )
            .map_err(|e| format!("step {index}: state_transition of {name}: {e}"))?;
            collector
                .process_new_block(&state.state, &block)
                .map_err(|e| format!("step {index}: process_new_block: {e}"))?;
            states.insert(block.canonical_root(), state);
        } else if let Some(s) = step.get("new_head") {
            let head = root_of(s, "head_block_root")?;
            collector
                .process_new_head(head)
                .map_err(|e| format!("step {index}: process_new_head: {e}"))?;
            let checks = s
                .get("checks")
                .ok_or_else(|| format!("step {index}: no checks"))?;
            check_new_head(case, &spec, &collector, checks, &fork_of)
                .map_err(|e| format!("step {index} (head {head}): {e}"))?;
        } else {
            return Err(format!("step {index}: unknown step {step:?}"));
        }
    }
    Ok(())
}

fn check_new_head<E: EthSpec, U: CollectedFormat<E>>(
    case: &CaseContext,
    spec: &ChainSpec,
    collector: &DataCollector<E, U>,
    checks: &Value,
    fork_of: &dyn Fn(&str) -> Result<ForkName, String>,
) -> Result<(), String> {
    let finalized = checks
        .get("latest_finalized_checkpoint")
        .ok_or("no latest_finalized_checkpoint")?;
    let (epoch, bid) = collector.latest_finalized();
    let (want_epoch, want_root) = (u64_of(finalized, "epoch")?, root_of(finalized, "root")?);
    if (epoch, bid.root) != (want_epoch, want_root) {
        return Err(format!(
            "latest finalized checkpoint {epoch}/{}, expected {want_epoch}/{want_root}",
            bid.root
        ));
    }

    let bootstraps = checks
        .get("bootstraps")
        .and_then(Value::as_sequence)
        .ok_or("no bootstraps list")?;
    for entry in bootstraps {
        let root = root_of(entry, "block_root")?;
        let expected = entry.get("bootstrap").map(|b| {
            let (digest, name) = data_ref(b)?;
            let value = read_by_fork(case, name, fork_of(digest)?, |b, f| {
                LightClientBootstrap::<E>::from_ssz_bytes_by_fork(b, f)
            })?;
            U::bootstrap(spec, &value).map_err(|e| e.to_string())
        });
        compare(
            &format!("bootstrap of {root}"),
            collector.bootstrap(&root).cloned(),
            expected,
        )?;
    }

    let best_updates = checks
        .get("best_updates")
        .and_then(Value::as_sequence)
        .ok_or("no best_updates list")?;
    for entry in best_updates {
        let period = u64_of(entry, "period")?;
        let expected = entry.get("update").map(|u| {
            let (digest, name) = data_ref(u)?;
            let value = read_by_fork(case, name, fork_of(digest)?, |b, f| {
                LightClientUpdate::<E>::from_ssz_bytes_by_fork(b, f)
            })?;
            U::update(spec, &value).map_err(|e| e.to_string())
        });
        compare(
            &format!("best update of period {period}"),
            collector.best_update(period).cloned(),
            expected,
        )?;
    }

    let expected = checks.get("latest_finality_update").map(|u| {
        let (digest, name) = data_ref(u)?;
        let value = read_by_fork(case, name, fork_of(digest)?, |b, f| {
            LightClientFinalityUpdate::<E>::from_ssz_bytes_by_fork(b, f)
        })?;
        U::finality_update(spec, &value).map_err(|e| e.to_string())
    });
    compare(
        "latest finality update",
        collector.finality_update().cloned(),
        expected,
    )?;

    let expected = checks.get("latest_optimistic_update").map(|u| {
        let (digest, name) = data_ref(u)?;
        let value = read_by_fork(case, name, fork_of(digest)?, |b, f| {
            LightClientOptimisticUpdate::<E>::from_ssz_bytes_by_fork(b, f)
        })?;
        U::optimistic_update(spec, &value).map_err(|e| e.to_string())
    });
    compare(
        "latest optimistic update",
        collector.optimistic_update(),
        expected,
    )
}
