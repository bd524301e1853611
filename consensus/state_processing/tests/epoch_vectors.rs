//! The minimal/fulu `epoch_processing`, `rewards`, `sanity/slots` and `fork` vectors and the
//! minimal/phase0 `genesis` vectors, run through the epoch, slot, upgrade and genesis functions
//! directly, plus a check that the fused `process_epoch` equals the steps run one by one.
//!
//! The official runners live in `testing/ef_tests`; this test exercises the same cases from
//! inside the crate. It reads `$ARBOR_SPEC_TESTS` and
//! fails when the vectors are absent.

use std::path::{Path, PathBuf};

use ssz::Decode;
use state_processing::{
    CachedBeaconState, Caches, StateMut,
    genesis::{initialize_beacon_state_from_eth1, is_valid_genesis_state},
    per_epoch::{self, EpochProcessingError},
    per_slot::process_slots,
    upgrade::upgrade_to_fulu,
};
use tree_hash::TreeHash;
use types::{BeaconState, ChainSpec, ForkName, MinimalEthSpec, Root, electra, phase0};

type E = MinimalEthSpec;

fn vectors(sub: &str) -> Option<PathBuf> {
    let root = std::env::var_os("ARBOR_SPEC_TESTS")
        .map(PathBuf::from)
        .expect("ARBOR_SPEC_TESTS must name the unpacked spec-test vectors (`make test` sets it)");
    let dir = root.join("tests/minimal").join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        panic!("missing vectors: no vectors at {}", dir.display())
    }
}

fn cases(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

fn read_ssz_snappy(path: &Path) -> Option<Vec<u8>> {
    let compressed = std::fs::read(path).ok()?;
    Some(
        snap::raw::Decoder::new()
            .decompress_vec(&compressed)
            .unwrap_or_else(|e| panic!("{}: bad snappy: {e}", path.display())),
    )
}

fn load_state(path: &Path, fork: ForkName) -> Option<BeaconState<E>> {
    let bytes = read_ssz_snappy(path)?;
    Some(
        BeaconState::from_ssz_bytes_by_fork(&bytes, fork)
            .unwrap_or_else(|e| panic!("{}: {e:?}", path.display())),
    )
}

fn root_of(state: &mut BeaconState<E>) -> Root {
    let mut cached = CachedBeaconState::new(state.clone());
    cached.hash_tree_root().expect("hashable state")
}

fn fulu_spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu)
}

type Step = fn(&mut StateMut<'_, E>, &mut Caches, &ChainSpec) -> Result<(), EpochProcessingError>;

fn step_by_handler(handler: &str) -> Step {
    match handler {
        "justification_and_finalization" => per_epoch::process_justification_and_finalization,
        "inactivity_updates" => per_epoch::process_inactivity_updates,
        "rewards_and_penalties" => per_epoch::process_rewards_and_penalties,
        "registry_updates" => per_epoch::process_registry_updates,
        "slashings" => per_epoch::process_slashings,
        "eth1_data_reset" => per_epoch::process_eth1_data_reset,
        "pending_deposits" => per_epoch::process_pending_deposits,
        "pending_consolidations" => per_epoch::process_pending_consolidations,
        "effective_balance_updates" => per_epoch::process_effective_balance_updates,
        "slashings_reset" => per_epoch::process_slashings_reset,
        "randao_mixes_reset" => per_epoch::process_randao_mixes_reset,
        "historical_summaries_update" => per_epoch::process_historical_summaries_update,
        "participation_flag_updates" => per_epoch::process_participation_flag_updates,
        "sync_committee_updates" => per_epoch::process_sync_committee_updates,
        "proposer_lookahead" => per_epoch::process_proposer_lookahead,
        other => panic!("unknown epoch_processing handler {other}"),
    }
}

/// Every step of `process_epoch`, in the spec's order.
const ALL_STEPS: [&str; 15] = [
    "justification_and_finalization",
    "inactivity_updates",
    "rewards_and_penalties",
    "registry_updates",
    "slashings",
    "eth1_data_reset",
    "pending_deposits",
    "pending_consolidations",
    "effective_balance_updates",
    "slashings_reset",
    "randao_mixes_reset",
    "historical_summaries_update",
    "participation_flag_updates",
    "sync_committee_updates",
    "proposer_lookahead",
];

#[test]
fn epoch_processing_vectors() {
    let Some(dir) = vectors("fulu/epoch_processing") else {
        return;
    };
    let spec = fulu_spec();
    let mut failures = Vec::new();
    let mut passed = 0;
    for handler_dir in cases(&dir) {
        let handler = handler_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let step = step_by_handler(&handler);
        for case in cases(&handler_dir.join("pyspec_tests")) {
            let mut state = load_state(&case.join("pre.ssz_snappy"), ForkName::Fulu).unwrap();
            let expected = load_state(&case.join("post.ssz_snappy"), ForkName::Fulu);
            let mut cached = CachedBeaconState::new(state.clone());
            let result = {
                let (mut view, caches) = cached.view_mut().unwrap();
                step(&mut view, caches, &spec)
            };
            let outcome = match (result, expected) {
                (Ok(()), Some(mut post)) => {
                    let got = cached.hash_tree_root().unwrap();
                    if got == root_of(&mut post) {
                        Ok(())
                    } else {
                        Err("post-state root differs".to_string())
                    }
                }
                (Ok(()), None) => Err("expected an error".into()),
                (Err(e), Some(_)) => Err(format!("unexpected error: {e}")),
                (Err(_), None) => Ok(()),
            };
            match outcome {
                Ok(()) => passed += 1,
                Err(e) => failures.push(format!("{handler}/{}: {e}", case.display())),
            }
            let _ = &mut state;
        }
    }
    eprintln!(
        "epoch_processing: {passed} passed, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `process_epoch` (one registry walk) must equal the fifteen steps run one by one, on every
/// epoch-processing and slots pre-state.
#[test]
fn fused_process_epoch_equals_the_steps_in_order() {
    let Some(dir) = vectors("fulu") else {
        return;
    };
    let spec = fulu_spec();
    let mut pre_states = Vec::new();
    for sub in ["epoch_processing", "sanity/slots", "rewards"] {
        let base = dir.join(sub);
        if !base.is_dir() {
            continue;
        }
        let handler_dirs = if sub == "sanity/slots" {
            vec![base.clone()]
        } else {
            cases(&base)
        };
        for handler_dir in handler_dirs {
            for case in cases(&handler_dir.join("pyspec_tests")) {
                if let Some(state) = load_state(&case.join("pre.ssz_snappy"), ForkName::Fulu) {
                    pre_states.push((case, state));
                }
            }
        }
    }
    assert!(!pre_states.is_empty());
    let mut compared = 0;
    for (case, state) in pre_states {
        let mut fused = CachedBeaconState::new(state.clone());
        let fused_result = {
            let (mut view, caches) = fused.view_mut().unwrap();
            per_epoch::process_epoch(&mut view, caches, &spec)
        };
        let mut stepwise = CachedBeaconState::new(state);
        let stepwise_result = (|| {
            for name in ALL_STEPS {
                let (mut view, caches) = stepwise.view_mut().unwrap();
                step_by_handler(name)(&mut view, caches, &spec)?;
            }
            Ok::<(), EpochProcessingError>(())
        })();
        match (fused_result, stepwise_result) {
            (Ok(()), Ok(())) => {
                assert_eq!(
                    fused.hash_tree_root().unwrap(),
                    stepwise.hash_tree_root().unwrap(),
                    "{}",
                    case.display()
                );
                compared += 1;
            }
            (Err(_), Err(_)) => {}
            (a, b) => panic!("{}: fused {a:?}, stepwise {b:?}", case.display()),
        }
    }
    eprintln!("fused process_epoch equals the steps on {compared} states");
}

/// Decodes the SSZ of `Deltas { rewards: List[Gwei, N], penalties: List[Gwei, N] }`.
fn decode_deltas(bytes: &[u8]) -> (Vec<u64>, Vec<u64>) {
    let offset = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()) as usize;
    let (a, b) = (offset(0), offset(4));
    let words = |s: &[u8]| -> Vec<u64> {
        s.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    (words(&bytes[a..b]), words(&bytes[b..]))
}

#[test]
fn rewards_vectors() {
    let Some(dir) = vectors("fulu/rewards") else {
        return;
    };
    let spec = fulu_spec();
    let mut checked = 0;
    for suite in cases(&dir) {
        for case in cases(&suite.join("pyspec_tests")) {
            let state = load_state(&case.join("pre.ssz_snappy"), ForkName::Fulu).unwrap();
            let view = state_processing::StateRef::new(&state).unwrap();
            let mut caches = Caches::default();
            for (file, flag) in [
                ("source_deltas", Some(0)),
                ("target_deltas", Some(1)),
                ("head_deltas", Some(2)),
                ("inactivity_penalty_deltas", None),
            ] {
                let expected = decode_deltas(
                    &read_ssz_snappy(&case.join(format!("{file}.ssz_snappy"))).unwrap(),
                );
                let got = match flag {
                    Some(flag) => per_epoch::get_flag_index_deltas(&view, &mut caches, flag, &spec),
                    None => per_epoch::get_inactivity_penalty_deltas(&view, &mut caches, &spec),
                }
                .unwrap();
                assert_eq!(got, expected, "{}/{file}", case.display());
                checked += 1;
            }
        }
    }
    eprintln!("rewards: {checked} delta sets checked");
    assert!(checked > 0);
}

#[test]
fn sanity_slots_vectors() {
    let Some(dir) = vectors("fulu/sanity/slots/pyspec_tests") else {
        return;
    };
    let spec = fulu_spec();
    for case in cases(&dir) {
        let state = load_state(&case.join("pre.ssz_snappy"), ForkName::Fulu).unwrap();
        let slots: u64 = yaml_scalar(&case.join("slots.yaml")).parse().unwrap();
        let mut post = load_state(&case.join("post.ssz_snappy"), ForkName::Fulu).unwrap();
        let mut cached = CachedBeaconState::new(state);
        let target = *cached.state.slot() + slots;
        process_slots(&mut cached, target, &spec)
            .unwrap_or_else(|e| panic!("{}: {e}", case.display()));
        assert_eq!(
            cached.hash_tree_root().unwrap(),
            root_of(&mut post),
            "{}",
            case.display()
        );
    }
}

#[test]
fn fork_vectors() {
    let Some(dir) = vectors("fulu/fork/fork/pyspec_tests") else {
        return;
    };
    let spec = fulu_spec();
    for case in cases(&dir) {
        let bytes = read_ssz_snappy(&case.join("pre.ssz_snappy")).unwrap();
        let pre = electra::BeaconState::<E>::from_ssz_bytes(&bytes).unwrap();
        let mut post = load_state(&case.join("post.ssz_snappy"), ForkName::Fulu).unwrap();
        let got = upgrade_to_fulu(pre, &spec).unwrap();
        assert_eq!(
            root_of(&mut BeaconState::Fulu(got)),
            root_of(&mut post),
            "{}",
            case.display()
        );
    }
}

/// A YAML document holding one scalar (`1\n...\n`).
fn yaml_scalar(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().next().unwrap_or_default().trim().to_string()
}

fn yaml_value(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(key)?
                .strip_prefix(':')
                .map(|v| v.trim().trim_matches('\'').to_string())
        })
        .unwrap_or_else(|| panic!("no {key} in {text}"))
}

#[test]
fn genesis_initialization_vectors() {
    let Some(dir) = vectors("phase0/genesis/initialization/pyspec_tests") else {
        return;
    };
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Phase0);
    for case in cases(&dir) {
        let eth1 = std::fs::read_to_string(case.join("eth1.yaml")).unwrap();
        let meta = std::fs::read_to_string(case.join("meta.yaml")).unwrap();
        let hash_hex = yaml_value(&eth1, "eth1_block_hash");
        let timestamp: u64 = yaml_value(&eth1, "eth1_timestamp").parse().unwrap();
        let count: usize = meta
            .trim()
            .trim_matches(|c| c == '{' || c == '}')
            .split(',')
            .find_map(|kv| {
                kv.trim()
                    .strip_prefix("deposits_count:")
                    .map(|v| v.trim().parse().unwrap())
            })
            .unwrap();
        let deposits: Vec<phase0::Deposit> = (0..count)
            .map(|i| {
                let bytes =
                    read_ssz_snappy(&case.join(format!("deposits_{i}.ssz_snappy"))).unwrap();
                phase0::Deposit::from_ssz_bytes(&bytes).unwrap()
            })
            .collect();
        let hash_bytes: Vec<u8> = (0..32)
            .map(|i| u8::from_str_radix(&hash_hex[2 + 2 * i..4 + 2 * i], 16).unwrap())
            .collect();
        let mut state = initialize_beacon_state_from_eth1::<E>(
            Root::from_slice(&hash_bytes),
            timestamp,
            &deposits,
            &spec,
        )
        .unwrap();
        let mut expected = load_state(&case.join("state.ssz_snappy"), ForkName::Phase0).unwrap();
        assert_eq!(
            state.tree_hash_root(),
            expected.tree_hash_root(),
            "{}",
            case.display()
        );
        let _ = (&mut state, &mut expected);
    }
}

#[test]
fn genesis_validity_vectors() {
    let Some(dir) = vectors("phase0/genesis/validity/pyspec_tests") else {
        return;
    };
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Phase0);
    for case in cases(&dir) {
        let state = load_state(&case.join("genesis.ssz_snappy"), ForkName::Phase0).unwrap();
        let expected: bool = yaml_scalar(&case.join("is_valid.yaml")).parse().unwrap();
        assert_eq!(
            is_valid_genesis_state(&state, &spec),
            expected,
            "{}",
            case.display()
        );
    }
}
