//! Every `operations` vector of minimal/fulu run through the block-processing functions directly:
//! decode `pre`, apply the operation, and compare the root with `post` (or expect an error when
//! there is no `post`).
//!
//! The official runner is `testing/ef_tests` (`operations`); this test exercises the same cases
//! from inside the crate, with every signature strategy that applies. It reads
//! `$ARBOR_SPEC_TESTS`  and is fails when the vectors are absent.

use std::path::{Path, PathBuf};

use ssz::Decode;
use state_processing::{
    CachedBeaconState,
    per_block::{self, AlwaysInvalid, AlwaysValid, VerifySignatures},
};
use tree_hash::TreeHash;
use types::{BeaconState, ChainSpec, ForkName, MinimalEthSpec, electra};

type E = MinimalEthSpec;

fn vectors_root() -> Option<PathBuf> {
    let root = std::env::var_os("ARBOR_SPEC_TESTS")
        .map(PathBuf::from)
        .expect("ARBOR_SPEC_TESTS must name the unpacked spec-test vectors (`make test` sets it)");
    let dir = root.join("tests/minimal/fulu/operations");
    if dir.is_dir() {
        Some(dir)
    } else {
        panic!(
            "missing vectors: no operations vectors at {}",
            dir.display()
        )
    }
}

fn read_ssz_snappy(path: &Path) -> Option<Vec<u8>> {
    let compressed = std::fs::read(path).ok()?;
    Some(
        snap::raw::Decoder::new()
            .decompress_vec(&compressed)
            .unwrap_or_else(|e| panic!("{}: bad snappy: {e}", path.display())),
    )
}

fn decode<T: Decode>(path: &Path) -> T {
    let bytes = read_ssz_snappy(path).unwrap_or_else(|| panic!("missing {}", path.display()));
    T::from_ssz_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
}

fn load_state(path: &Path) -> Option<BeaconState<E>> {
    let bytes = read_ssz_snappy(path)?;
    Some(
        BeaconState::from_ssz_bytes_by_fork(&bytes, ForkName::Fulu)
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display())),
    )
}

/// `bls_setting` of the case's `meta.yaml`: 0 (either), 1 (required), 2 (ignored).
fn bls_setting(case: &Path) -> u8 {
    std::fs::read_to_string(case.join("meta.yaml"))
        .ok()
        .and_then(|s| {
            s.split("bls_setting:")
                .nth(1)
                .and_then(|rest| rest.trim().trim_end_matches('}').trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Applies the case's operation with `verify`; `Err` carries the error's text.
fn apply(
    handler: &str,
    case: &Path,
    state: &mut CachedBeaconState<E>,
    verify: VerifySignatures,
    spec: &ChainSpec,
) -> Result<(), String> {
    let (mut view, caches) = state.view_mut().map_err(|e| e.to_string())?;
    let s = &mut view;
    let r: Result<(), String> = match handler {
        "attestation" => {
            let op: electra::Attestation<E> = decode(&case.join("attestation.ssz_snappy"));
            per_block::process_attestation(s, caches, &op, verify, spec).map_err(|e| e.to_string())
        }
        "attester_slashing" => {
            let op: electra::AttesterSlashing<E> =
                decode(&case.join("attester_slashing.ssz_snappy"));
            per_block::process_attester_slashing(s, caches, &op, verify, spec)
                .map_err(|e| e.to_string())
        }
        "block_header" => {
            let op: electra::BeaconBlock<E> = decode(&case.join("block.ssz_snappy"));
            per_block::process_block_header(s, caches, &op, spec).map_err(|e| e.to_string())
        }
        "bls_to_execution_change" => {
            let op: electra::SignedBLSToExecutionChange =
                decode(&case.join("address_change.ssz_snappy"));
            per_block::process_bls_to_execution_change(s, &op, verify, spec)
                .map_err(|e| e.to_string())
        }
        "consolidation_request" => {
            let op: electra::ConsolidationRequest =
                decode(&case.join("consolidation_request.ssz_snappy"));
            per_block::process_consolidation_request(s, caches, &op, spec)
                .map_err(|e| e.to_string())
        }
        "deposit_request" => {
            let op: electra::DepositRequest = decode(&case.join("deposit_request.ssz_snappy"));
            per_block::process_deposit_request(s, &op).map_err(|e| e.to_string())
        }
        "execution_payload" => {
            let body: electra::BeaconBlockBody<E> = decode(&case.join("body.ssz_snappy"));
            let yaml = std::fs::read_to_string(case.join("execution.yaml")).unwrap_or_default();
            if yaml.contains("execution_valid: false") {
                per_block::process_execution_payload(s, &body, &AlwaysInvalid, spec)
            } else {
                per_block::process_execution_payload(s, &body, &AlwaysValid, spec)
            }
            .map_err(|e| e.to_string())
        }
        "proposer_slashing" => {
            let op: electra::ProposerSlashing = decode(&case.join("proposer_slashing.ssz_snappy"));
            per_block::process_proposer_slashing(s, caches, &op, verify, spec)
                .map_err(|e| e.to_string())
        }
        "sync_aggregate" => {
            let op: electra::SyncAggregate<E> = decode(&case.join("sync_aggregate.ssz_snappy"));
            per_block::process_sync_aggregate(s, caches, &op, verify, spec)
                .map_err(|e| e.to_string())
        }
        "voluntary_exit" => {
            let op: electra::SignedVoluntaryExit = decode(&case.join("voluntary_exit.ssz_snappy"));
            per_block::process_voluntary_exit(s, caches, &op, verify, spec)
                .map_err(|e| e.to_string())
        }
        "withdrawal_request" => {
            let op: electra::WithdrawalRequest =
                decode(&case.join("withdrawal_request.ssz_snappy"));
            per_block::process_withdrawal_request(s, caches, &op, spec).map_err(|e| e.to_string())
        }
        "withdrawals" => {
            let op: electra::ExecutionPayload<E> =
                decode(&case.join("execution_payload.ssz_snappy"));
            per_block::process_withdrawals(s, &op).map_err(|e| e.to_string())
        }
        other => panic!("unknown operations handler {other}"),
    };
    r
}

#[test]
fn every_fulu_operations_vector_passes() {
    let Some(dir) = vectors_root() else { return };
    let spec = ChainSpec::minimal();
    let mut failures = Vec::new();
    let mut passed = 0;
    let mut handlers: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    handlers.sort_by_key(|e| e.file_name());
    for handler in handlers {
        let name = handler.file_name().to_string_lossy().into_owned();
        let mut cases: Vec<_> = std::fs::read_dir(handler.path().join("pyspec_tests"))
            .unwrap()
            .flatten()
            .collect();
        cases.sort_by_key(|e| e.file_name());
        for case in cases {
            let case = case.path();
            let pre = load_state(&case.join("pre.ssz_snappy")).expect("every case has a pre-state");
            let post = load_state(&case.join("post.ssz_snappy"));
            let strategies: &[VerifySignatures] = if bls_setting(&case) == 2 {
                &[VerifySignatures::None]
            } else {
                &[VerifySignatures::Individually, VerifySignatures::Batched]
            };
            for &verify in strategies {
                let mut state = CachedBeaconState::new(pre.clone());
                let result = apply(&name, &case, &mut state, verify, &spec);
                let id = format!(
                    "{name}/{} ({verify:?})",
                    case.file_name().unwrap().to_string_lossy()
                );
                match (&post, result) {
                    (Some(post), Ok(())) => {
                        let root = state.hash_tree_root().unwrap();
                        if root != post.tree_hash_root() {
                            failures.push(format!("{id}: post-state root differs"));
                        } else {
                            passed += 1;
                        }
                    }
                    (Some(_), Err(e)) => failures.push(format!("{id}: unexpected error: {e}")),
                    (None, Ok(())) => failures.push(format!("{id}: accepted an invalid operation")),
                    (None, Err(_)) => passed += 1,
                }
            }
        }
    }
    eprintln!(
        "operations vectors: {passed} passed, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
