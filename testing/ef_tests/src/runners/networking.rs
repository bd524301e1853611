//! `networking`: the Fulu custody functions against `meta.yaml`, and the gossip validation
//! handlers against the beacon chain ([`gossip`]).
//!
//! - `get_custody_groups`: `node_id` (a `uint256` in decimal), `custody_group_count`, `result`.
//! - `compute_columns_for_custody_group`: `custody_group`, `result`.
//! - `gossip_*`: a state, blocks and messages with the expected ACCEPT / IGNORE / REJECT.
//!
//! A missing `result` would mean the call must fail; every case of the current vectors has one.
//!
//! [format]: consensus-specs tests/formats/networking/README.md

use networking::subnets::{compute_columns_for_custody_group, get_custody_groups};
use serde::Deserialize;
use types::{ChainSpec, EthSpec, MainnetEthSpec, MinimalEthSpec, U256};

use crate::case::{CaseContext, CaseResult, PendingFork, Preset, Runner};
use crate::files::read_yaml;
use crate::runners::gossip;

/// Runs `<config>/fulu/networking/<handler>/pyspec_tests/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Networking;

impl Runner for Networking {
    fn name(&self) -> &'static str {
        "networking"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        let handler = case.handler.as_str();
        let preset = match case.preset() {
            Ok(preset) => preset,
            Err(e) => return CaseResult::Failed(e),
        };
        if handler.starts_with("gossip_") {
            return match preset {
                Preset::Minimal => gossip::run::<MinimalEthSpec>(case),
                Preset::Mainnet => gossip::run::<MainnetEthSpec>(case),
            };
        }
        let result = match (handler, preset) {
            ("get_custody_groups", Preset::Minimal) => {
                check_get_custody_groups(case, &ChainSpec::minimal())
            }
            ("get_custody_groups", Preset::Mainnet) => {
                check_get_custody_groups(case, &ChainSpec::mainnet())
            }
            ("compute_columns_for_custody_group", Preset::Minimal) => {
                check_compute_columns::<MinimalEthSpec>(case, &ChainSpec::minimal())
            }
            ("compute_columns_for_custody_group", Preset::Mainnet) => {
                check_compute_columns::<MainnetEthSpec>(case, &ChainSpec::mainnet())
            }
            _ => {
                return CaseResult::NotRun(format!("no networking handler for {handler}"));
            }
        };
        CaseResult::from_check(result)
    }

    /// Gloas: the custody functions (unchanged) and the gossip topics whose Gloas validation the
    /// chain has ([`GLOAS_GOSSIP_HANDLERS`]); the others are not run (the allow list names them).
    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        let handler = case.handler.as_str();
        if handler.starts_with("gossip_") && !GLOAS_GOSSIP_HANDLERS.contains(&handler) {
            return CaseResult::NotRun(format!(
                "the chain has no Gloas gossip validation of {handler} yet"
            ));
        }
        self.run_case(&case.released())
    }
}

/// The Gloas gossip handlers run: topics whose validation did not change in Gloas, and the
/// Gloas ones the chain validates (blocks with their bid, attester slashings in their Gloas container, attestations and aggregates with
/// their payload-status index, PTC votes, execution payload envelopes, data column sidecars
/// checked against the bid's commitments).
pub(crate) const GLOAS_GOSSIP_HANDLERS: &[&str] = &[
    "gossip_beacon_attestation",
    "gossip_beacon_aggregate_and_proof",
    "gossip_data_column_sidecar",
    "gossip_execution_payload_envelope",
    "gossip_payload_attestation_message",
    "gossip_voluntary_exit",
    "gossip_proposer_slashing",
    "gossip_bls_to_execution_change",
    "gossip_sync_committee_message",
    "gossip_sync_committee_contribution_and_proof",
    "gossip_beacon_block",
    "gossip_attester_slashing",
    "gossip_proposer_preferences",
    "gossip_execution_payload_bid",
    "gossip_partial_data_column_sidecar",
];

/// `meta.yaml` of `get_custody_groups`. The node id can exceed every integer serde knows (as a
/// YAML value it would come back as a rounded float), so it is read as the scalar's text.
#[derive(Debug, Deserialize)]
struct CustodyGroupsMeta {
    node_id: String,
    custody_group_count: u64,
    result: Option<Vec<u64>>,
}

/// `meta.yaml` of `compute_columns_for_custody_group`.
#[derive(Debug, Deserialize)]
struct ColumnsMeta {
    custody_group: u64,
    result: Option<Vec<u64>>,
}

fn check_get_custody_groups(case: &CaseContext, spec: &ChainSpec) -> Result<(), String> {
    let meta: CustodyGroupsMeta = read_yaml(&case.file("meta.yaml"))?;
    let node_id = parse_uint256(&meta.node_id)?;
    let got = get_custody_groups(spec, node_id, meta.custody_group_count);
    compare(
        &format!(
            "get_custody_groups({node_id}, {})",
            meta.custody_group_count
        ),
        got.map_err(|e| e.to_string()),
        meta.result,
    )
}

fn check_compute_columns<E: EthSpec>(case: &CaseContext, spec: &ChainSpec) -> Result<(), String> {
    let meta: ColumnsMeta = read_yaml(&case.file("meta.yaml"))?;
    let got = compute_columns_for_custody_group::<E>(spec, meta.custody_group);
    compare(
        &format!("compute_columns_for_custody_group({})", meta.custody_group),
        got.map_err(|e| e.to_string()),
        meta.result,
    )
}

fn compare(
    call: &str,
    got: Result<Vec<u64>, String>,
    expected: Option<Vec<u64>>,
) -> Result<(), String> {
    match (got, expected) {
        (Ok(got), Some(expected)) if got == expected => Ok(()),
        (Ok(got), Some(expected)) => Err(format!("{call} = {got:?}, expected {expected:?}")),
        (Ok(got), None) => Err(format!("{call} = {got:?}, expected an error")),
        (Err(e), Some(expected)) => Err(format!("{call} failed ({e}), expected {expected:?}")),
        (Err(_), None) => Ok(()),
    }
}

/// A `uint256` written in decimal.
fn parse_uint256(text: &str) -> Result<U256, String> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("node_id {text:?} is not a decimal uint256"));
    }
    U256::from_str_radix(text, 10).map_err(|e| format!("node_id {text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_uint256_node_ids_from_yaml_text() {
        let max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
        let meta: CustodyGroupsMeta = serde_yaml::from_str(&format!(
            "node_id: \n  {max}\ncustody_group_count: 4\nresult: [1, 47, 87, 102]\n"
        ))
        .unwrap();
        assert_eq!(parse_uint256(&meta.node_id), Ok(U256::MAX));
        let small: CustodyGroupsMeta =
            serde_yaml::from_str("node_id: 0\ncustody_group_count: 0\nresult: []\n").unwrap();
        assert_eq!(parse_uint256(&small.node_id), Ok(U256::ZERO));
        assert!(parse_uint256("1.5").is_err());
        assert!(parse_uint256("-1").is_err());
        assert!(parse_uint256("").is_err());
        assert!(parse_uint256(&format!("{max}0")).is_err());
    }

    #[test]
    fn compare_reports_mismatches_and_expected_errors() {
        assert!(compare("f", Ok(vec![1]), Some(vec![1])).is_ok());
        assert!(compare("f", Ok(vec![1]), Some(vec![2])).is_err());
        assert!(compare("f", Ok(vec![1]), None).is_err());
        assert!(compare("f", Err("bad".into()), None).is_ok());
        assert!(compare("f", Err("bad".into()), Some(vec![])).is_err());
    }
}
