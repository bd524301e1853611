//! The `sanity/blocks` vectors of minimal and mainnet Fulu through `state_transition`, with each
//! signature strategy: a valid case must reach `post`, an invalid case must be refused — and a
//! refused block must leave the caller's state exactly as it was.
//!
//! The official runner is `testing/ef_tests` (`sanity`). Reads `$ARBOR_SPEC_TESTS` and
//! fails when the vectors are absent.

use std::path::{Path, PathBuf};

use state_processing::{
    CachedBeaconState,
    per_block::{AlwaysValid, VerifySignatures},
    state_transition::state_transition,
};
use tree_hash::TreeHash;
use types::{
    BeaconState, ChainSpec, EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec, SignedBeaconBlock,
};

fn read_ssz_snappy(path: &Path) -> Option<Vec<u8>> {
    let compressed = std::fs::read(path).ok()?;
    Some(
        snap::raw::Decoder::new()
            .decompress_vec(&compressed)
            .unwrap_or_else(|e| panic!("{}: bad snappy: {e}", path.display())),
    )
}

fn load_state<E: EthSpec>(path: &Path) -> Option<BeaconState<E>> {
    let bytes = read_ssz_snappy(path)?;
    Some(
        BeaconState::from_ssz_bytes_by_fork(&bytes, ForkName::Fulu)
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display())),
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

fn run_preset<E: EthSpec>(preset: &str, spec: &ChainSpec) -> Option<(usize, Vec<String>)> {
    let root = std::env::var_os("ARBOR_SPEC_TESTS")
        .map(PathBuf::from)
        .expect("ARBOR_SPEC_TESTS must name the unpacked spec-test vectors (`make test` sets it)");
    let dir = root.join(format!("tests/{preset}/fulu/sanity/blocks/pyspec_tests"));
    if !dir.is_dir() {
        panic!("missing vectors: no sanity vectors at {}", dir.display());
    }
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    let mut passed = 0;
    let mut failures = Vec::new();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let pre: BeaconState<E> = load_state(&case.join("pre.ssz_snappy")).expect("pre-state");
        let post: Option<BeaconState<E>> = load_state(&case.join("post.ssz_snappy"));
        let count = meta_value(&case, "blocks_count").expect("blocks_count");
        let blocks: Vec<SignedBeaconBlock<E>> = (0..count)
            .map(|i| {
                let path = case.join(format!("blocks_{i}.ssz_snappy"));
                let bytes = read_ssz_snappy(&path).expect("block file");
                SignedBeaconBlock::from_ssz_bytes_by_fork(&bytes, ForkName::Fulu)
                    .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
            })
            .collect();
        // Without signature checks, an invalid case may be invalid only by a signature.
        let strategies: &[VerifySignatures] = if post.is_some() {
            &[
                VerifySignatures::Individually,
                VerifySignatures::Batched,
                VerifySignatures::None,
            ]
        } else {
            &[VerifySignatures::Individually, VerifySignatures::Batched]
        };
        for &verify in strategies {
            let id = format!("{preset}/{name} ({verify:?})");
            let mut state = CachedBeaconState::new(pre.clone());
            let mut refused = None;
            for (i, block) in blocks.iter().enumerate() {
                let before = state.hash_tree_root().unwrap();
                match state_transition(&mut state, block, verify, true, &AlwaysValid, spec) {
                    Ok(()) => {}
                    Err(e) => {
                        let after = state.hash_tree_root().unwrap();
                        if after != before {
                            failures.push(format!("{id}: refused block {i} changed the state"));
                        }
                        refused = Some((i, e.to_string()));
                        break;
                    }
                }
            }
            match (&post, refused) {
                (Some(post), None) => {
                    if state.hash_tree_root().unwrap() == post.tree_hash_root() {
                        passed += 1;
                    } else {
                        failures.push(format!("{id}: post-state root differs"));
                    }
                }
                (Some(_), Some((i, e))) => failures.push(format!("{id}: block {i} refused: {e}")),
                (None, None) => failures.push(format!("{id}: every block accepted")),
                (None, Some(_)) => passed += 1,
            }
        }
    }
    Some((passed, failures))
}

#[test]
fn minimal_fulu_sanity_blocks() {
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    let Some((passed, failures)) = run_preset::<MinimalEthSpec>("minimal", &spec) else {
        return;
    };
    eprintln!(
        "minimal sanity/blocks: {passed} passed, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

#[test]
fn mainnet_fulu_sanity_blocks() {
    let spec = ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu);
    let Some((passed, failures)) = run_preset::<MainnetEthSpec>("mainnet", &spec) else {
        return;
    };
    eprintln!(
        "mainnet sanity/blocks: {passed} passed, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
