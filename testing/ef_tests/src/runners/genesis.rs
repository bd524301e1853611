//! `genesis`: the genesis state from deposits (`initialization`) and the genesis validity
//! predicate (`validity`).
//!
//! - `initialization`: `eth1.yaml` (`eth1_block_hash`, `eth1_timestamp`), `meta.yaml`
//!   (`deposits_count`), `deposits_<i>`, and the expected `state`.
//! - `validity`: `genesis` (a state) and `is_valid.yaml` (a bool).
//!
//! [format]: consensus-specs tests/formats/genesis/README.md

use serde::Deserialize;
use state_processing::genesis::{initialize_beacon_state_from_eth1, is_valid_genesis_state};
use tree_hash::TreeHash;
use types::{EthSpec, ForkName, Root, phase0};

use super::state_case::{Meta, chain_spec, check_known_files, read_ssz, read_state, with_preset};
use crate::case::{CaseContext, CaseResult, Runner};
use crate::files::{decode_hex32, read_yaml};

/// Runs `<config>/<fork>/genesis/{initialization,validity}/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Genesis;

impl Runner for Genesis {
    fn name(&self) -> &'static str {
        "genesis"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        if case.fork != ForkName::Phase0 {
            return CaseResult::NotRun(format!(
                "genesis is implemented for phase0 vectors, not {}",
                case.fork
            ));
        }
        match case.handler.as_str() {
            "initialization" => with_preset!(case, run_initialization(case)),
            "validity" => with_preset!(case, run_validity(case)),
            other => CaseResult::NotRun(format!("no genesis handler for {other}")),
        }
    }
}

/// `eth1.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Eth1 {
    eth1_block_hash: String,
    eth1_timestamp: u64,
}

fn run_initialization<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check_initialization::<E>(case))
}

fn run_validity<E: EthSpec>(case: &CaseContext) -> CaseResult {
    CaseResult::from_check(check_validity::<E>(case))
}

fn check_initialization<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    check_known_files(case, &["eth1.yaml", "state.ssz_snappy", "deposits_*"])?;
    let spec = chain_spec(case, case.fork)?;
    let meta = Meta::read(case)?;
    if meta.execution_payload_header == Some(true) {
        return Err("execution_payload_header genesis needs a post-Bellatrix genesis".to_string());
    }
    let eth1: Eth1 = read_yaml(&case.file("eth1.yaml"))?;
    let eth1_block_hash = Root::from(decode_hex32(&eth1.eth1_block_hash)?);
    let count = meta
        .deposits_count
        .ok_or("meta.yaml has no deposits_count")?;
    let deposits = (0..count)
        .map(|i| read_ssz::<phase0::Deposit>(case, &format!("deposits_{i}")))
        .collect::<Result<Vec<_>, _>>()?;
    let want = read_state::<E>(case, "state", case.fork)?;

    let got = initialize_beacon_state_from_eth1::<E>(
        eth1_block_hash,
        eth1.eth1_timestamp,
        &deposits,
        &spec,
    )
    .map_err(|e| format!("initialize_beacon_state_from_eth1 failed: {e}"))?;
    if got.fork_name() != want.fork_name() {
        return Err(format!(
            "genesis state is a {} state, expected {}",
            got.fork_name(),
            want.fork_name()
        ));
    }
    let (got_root, want_root) = (got.tree_hash_root(), want.tree_hash_root());
    if got_root != want_root {
        return Err(format!(
            "genesis state root {got_root} != expected {want_root}; {}",
            phase0_diffs(&got, &want)
        ));
    }
    Ok(())
}

/// The differing top-level fields of two phase0 states (names only, plus small values).
fn phase0_diffs<E: EthSpec>(got: &types::BeaconState<E>, want: &types::BeaconState<E>) -> String {
    let (types::BeaconState::Phase0(g), types::BeaconState::Phase0(w)) = (got, want) else {
        return "not phase0 states".to_string();
    };
    let mut out = Vec::new();
    macro_rules! fields {
        ($($f:ident),*) => {$(
            if g.$f.tree_hash_root() != w.$f.tree_hash_root() {
                out.push(stringify!($f));
            }
        )*};
    }
    fields!(
        genesis_time,
        genesis_validators_root,
        slot,
        fork,
        latest_block_header,
        block_roots,
        state_roots,
        historical_roots,
        eth1_data,
        eth1_data_votes,
        eth1_deposit_index,
        validators,
        balances,
        randao_mixes,
        slashings,
        previous_epoch_attestations,
        current_epoch_attestations,
        justification_bits,
        previous_justified_checkpoint,
        current_justified_checkpoint,
        finalized_checkpoint
    );
    let mut text = format!("differing fields: {}", out.join(", "));
    if g.genesis_time != w.genesis_time {
        text.push_str(&format!(
            " (genesis_time {} vs {})",
            g.genesis_time, w.genesis_time
        ));
    }
    if g.validators.len() != w.validators.len() {
        text.push_str(&format!(
            " (validators {} vs {})",
            g.validators.len(),
            w.validators.len()
        ));
    }
    text
}

fn check_validity<E: EthSpec>(case: &CaseContext) -> Result<(), String> {
    check_known_files(case, &["genesis.ssz_snappy", "is_valid.yaml"])?;
    let spec = chain_spec(case, case.fork)?;
    let state = read_state::<E>(case, "genesis", case.fork)?;
    let want: bool = read_yaml(&case.file("is_valid.yaml"))?;
    let got = is_valid_genesis_state(&state, &spec);
    if got != want {
        return Err(format!("is_valid_genesis_state = {got}, expected {want}"));
    }
    Ok(())
}
