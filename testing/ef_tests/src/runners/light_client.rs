//! `light_client`: the state/block-only handler `single_merkle_proof` (the proofs a light-client
//! server serves: `execution` of a `BeaconBlockBody`, `current_sync_committee`,
//! `next_sync_committee` and `finalized_checkpoint.root` of a `BeaconState`) runs like
//! `merkle_proof`. The other handlers exercise a light client's store or a full node's
//! light-client data collection, neither of which exists yet: they are skipped, with the reason.
//!
//! [format]: consensus-specs tests/formats/light_client/README.md

use super::merkle_proof::run_single_merkle_proof;
use crate::case::{CaseContext, CaseResult, Runner};

/// Why `data_collection` is skipped.
pub(crate) const DATA_COLLECTION_SKIP_REASON: &str = "light-client data collection imports blocks into \
     fork choice (new_block / new_head steps) and serves bootstraps and updates from the chain; \
     the beacon chain's import path does not exist yet";

/// Why `sync` is skipped.
pub(crate) const SYNC_SKIP_REASON: &str = "light-client sync drives a LightClientStore \
     (initialize_light_client_store, process_light_client_update, force updates, store upgrades \
     across forks, two cases into Gloas, which types does not have); no light-client crate exists \
     yet";

/// Why `update_ranking` is skipped.
pub(crate) const UPDATE_RANKING_SKIP_REASON: &str = "update ranking checks the light-client store's \
     is_better_update; no light-client crate exists yet to hold it";

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
            "data_collection" => CaseResult::Skipped(DATA_COLLECTION_SKIP_REASON.to_string()),
            "sync" => CaseResult::Skipped(SYNC_SKIP_REASON.to_string()),
            "update_ranking" => CaseResult::Skipped(UPDATE_RANKING_SKIP_REASON.to_string()),
            other => CaseResult::NotRun(format!("no light_client handler for {other}")),
        }
    }
}
