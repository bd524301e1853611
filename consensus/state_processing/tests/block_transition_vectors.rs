//! The minimal/fulu `transition` vectors through `state_transition` with batched signatures:
//! Electra blocks before `FULU_FORK_EPOCH`, the upgrade in `process_slots`, Fulu blocks after.
//!
//! The official runner is `testing/ef_tests` (`transition`). Reads `$ARBOR_SPEC_TESTS` and
//! fails when the vectors are absent.

use std::path::{Path, PathBuf};

use state_processing::{
    CachedBeaconState,
    per_block::{AlwaysValid, VerifySignatures},
    state_transition::state_transition,
};
use tree_hash::TreeHash;
use types::{BeaconState, ChainSpec, ForkName, MinimalEthSpec, SignedBeaconBlock};

type E = MinimalEthSpec;

fn read_ssz_snappy(path: &Path) -> Option<Vec<u8>> {
    let compressed = std::fs::read(path).ok()?;
    Some(
        snap::raw::Decoder::new()
            .decompress_vec(&compressed)
            .unwrap(),
    )
}

fn meta_value(case: &Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(case.join("meta.yaml")).ok()?;
    let rest = text.split(&format!("{key}:")).nth(1)?;
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn minimal_fulu_transition() {
    let root = std::env::var_os("ARBOR_SPEC_TESTS")
        .map(PathBuf::from)
        .expect("ARBOR_SPEC_TESTS must name the unpacked spec-test vectors (`make test` sets it)");
    let dir = root.join("tests/minimal/fulu/transition/core/pyspec_tests");
    if !dir.is_dir() {
        panic!(
            "missing vectors: no transition vectors at {}",
            dir.display()
        );
    }
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let fork_epoch = meta_value(case, "fork_epoch").expect("fork_epoch");
        let count = meta_value(case, "blocks_count").expect("blocks_count");
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Electra);
        spec.fulu_fork_epoch = fork_epoch;
        let pre = BeaconState::<E>::from_ssz_bytes_by_fork(
            &read_ssz_snappy(&case.join("pre.ssz_snappy")).unwrap(),
            ForkName::Electra,
        )
        .unwrap();
        let post = BeaconState::<E>::from_ssz_bytes_by_fork(
            &read_ssz_snappy(&case.join("post.ssz_snappy")).expect("transition cases are valid"),
            ForkName::Fulu,
        )
        .unwrap();
        let mut state = CachedBeaconState::new(pre);
        let mut error = None;
        for i in 0..count {
            let bytes = read_ssz_snappy(&case.join(format!("blocks_{i}.ssz_snappy"))).unwrap();
            let block = SignedBeaconBlock::<E>::from_ssz_bytes(&bytes, &spec).unwrap();
            if let Err(e) = state_transition(
                &mut state,
                &block,
                VerifySignatures::Batched,
                true,
                &AlwaysValid,
                &spec,
            ) {
                error = Some(format!("{name}: block {i}: {e}"));
                break;
            }
        }
        match error {
            Some(e) => failures.push(e),
            None if state.hash_tree_root().unwrap() != post.tree_hash_root() => {
                failures.push(format!("{name}: post-state root differs"))
            }
            None => {}
        }
    }
    eprintln!(
        "transition: {} cases, {} failed",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
