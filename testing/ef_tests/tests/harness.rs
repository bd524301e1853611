//! Tests of the harness itself, over small fake vector trees in a temporary directory (never the
//! real vectors).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use ef_tests::{
    AllowedGap, CaseContext, CaseResult, Counts, HarnessError, Options, Report, Runner, run,
    run_roots, runners,
};
use ssz::Encode;
use tree_hash::TreeHash;
use types::phase0::Checkpoint;

/// A real minimal-preset vector (`shuffle_0x23bc…_10`).
const SHUFFLING_MAPPING: &str =
    "seed: '0x23bcd11624a07465b1c2fc1a0fe52996daae4bf87b0fb6bed45926096c644843'
count: 10
mapping: [6, 9, 2, 7, 8, 3, 0, 1, 4, 5]
";

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let path = std::env::temp_dir().join(format!(
            "ef_tests-harness-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(path.join("tests")).expect("create temp dir");
        TempDir(path)
    }

    /// Creates `tests/<rel>/` and writes the files into it.
    fn case(&self, rel: &str, files: &[(&str, &[u8])]) -> &Self {
        let dir = self.0.join("tests").join(rel);
        std::fs::create_dir_all(&dir).expect("create case dir");
        for (name, contents) in files {
            std::fs::write(dir.join(name), contents).expect("write case file");
        }
        self
    }

    fn run(&self) -> Report {
        self.run_with(&Options::default())
    }

    fn run_with(&self, options: &Options) -> Report {
        run(&self.0, &runners::all(), options).expect("fake tree is runnable")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn checkpoint(epoch: u64) -> Checkpoint {
    Checkpoint {
        epoch,
        root: [epoch as u8; 32].into(),
    }
}

/// `serialized.ssz_snappy` of `value`.
fn ssz_snappy<T: Encode>(value: &T) -> Vec<u8> {
    snap::raw::Encoder::new()
        .compress_vec(&value.as_ssz_bytes())
        .expect("compress")
}

/// `roots.yaml` with `root`.
fn roots_yaml(root: &[u8]) -> Vec<u8> {
    format!("root: '0x{}'\n", hex::encode(root)).into_bytes()
}

/// `value.yaml` of a `Checkpoint`, as the vectors write it.
fn checkpoint_yaml(value: &Checkpoint) -> Vec<u8> {
    format!("epoch: {}\nroot: '{}'\n", value.epoch, value.root).into_bytes()
}

/// Files of an `ssz_static` case for a `Checkpoint`, with its true root or a wrong one.
fn checkpoint_case(epoch: u64, right_root: bool) -> [(&'static str, Vec<u8>); 3] {
    let value = checkpoint(epoch);
    let mut root = value.tree_hash_root().0;
    if !right_root {
        root[0] ^= 1;
    }
    [
        ("serialized.ssz_snappy", ssz_snappy(&value)),
        ("roots.yaml", roots_yaml(&root)),
        ("value.yaml", checkpoint_yaml(&value)),
    ]
}

#[test]
fn an_ssz_static_value_yaml_that_differs_from_the_decoded_value_fails() {
    let tmp = TempDir::new();
    let good = checkpoint_case(1, true);
    let mut other = checkpoint_case(2, true);
    other[2].1 = checkpoint_yaml(&checkpoint(3));
    tmp.case(
        "minimal/fulu/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    )
    .case(
        "minimal/fulu/ssz_static/Checkpoint/ssz_one/case_1",
        &as_files(&other),
    );
    let report = tmp.run();
    assert_eq!(report.groups["minimal/fulu/ssz_static"], counts(1, 1, 0));
    assert_eq!(
        report.failed[0].case,
        "minimal/fulu/ssz_static/Checkpoint/ssz_one/case_1"
    );
    assert!(report.failed[0].message.contains("value.yaml differs"));
}

/// Files of an `ssz_static` case for a Fulu `BeaconState` (four interop validators, minimal
/// preset), with `value.yaml` written from `value` (the state itself, or another one).
fn state_case(
    state: &types::fulu::BeaconState<types::MinimalEthSpec>,
    value: &types::fulu::BeaconState<types::MinimalEthSpec>,
) -> [(&'static str, Vec<u8>); 3] {
    [
        ("serialized.ssz_snappy", ssz_snappy(state)),
        ("roots.yaml", roots_yaml(&state.tree_hash_root().0)),
        (
            "value.yaml",
            serde_yaml::to_string(value)
                .expect("a state writes as YAML")
                .into_bytes(),
        ),
    ]
}

#[test]
fn a_beacon_state_value_yaml_is_read_and_compared() {
    let spec = types::ChainSpec::minimal().with_forks_at_genesis_through(types::ForkName::Fulu);
    let state = match state_processing::genesis::interop_genesis_state::<types::MinimalEthSpec>(
        4,
        0,
        types::Root::ZERO,
        &spec,
    )
    .expect("interop genesis")
    {
        types::BeaconState::Fulu(state) => state,
        other @ (types::BeaconState::Phase0(_)
        | types::BeaconState::Altair(_)
        | types::BeaconState::Bellatrix(_)
        | types::BeaconState::Capella(_)
        | types::BeaconState::Deneb(_)
        | types::BeaconState::Electra(_)
        | types::BeaconState::Gloas(_)) => panic!("a {} genesis state", other.fork_name()),
    };
    let mut other = state.clone();
    other.genesis_time += 1;
    let good = state_case(&state, &state);
    let differs = state_case(&state, &other);
    let tmp = TempDir::new();
    tmp.case(
        "minimal/fulu/ssz_static/BeaconState/ssz_one/case_0",
        &as_files(&good),
    )
    .case(
        "minimal/fulu/ssz_static/BeaconState/ssz_one/case_1",
        &as_files(&differs),
    );
    let report = tmp.run();
    assert_eq!(report.groups["minimal/fulu/ssz_static"], counts(1, 1, 0));
    assert_eq!(
        report.failed[0].case,
        "minimal/fulu/ssz_static/BeaconState/ssz_one/case_1"
    );
    assert!(report.failed[0].message.contains("value.yaml differs"));
}

fn as_files<'a>(files: &'a [(&'static str, Vec<u8>)]) -> Vec<(&'static str, &'a [u8])> {
    files.iter().map(|(n, c)| (*n, c.as_slice())).collect()
}

fn counts(passed: usize, failed: usize, skipped: usize) -> Counts {
    Counts {
        passed,
        failed,
        skipped,
    }
}

#[test]
fn wrong_root_is_reported_as_one_failure() {
    let tmp = TempDir::new();
    let good = checkpoint_case(3, true);
    let bad = checkpoint_case(4, false);
    tmp.case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_random/case_0",
        &as_files(&good),
    )
    .case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_random/case_1",
        &as_files(&bad),
    );

    let report = tmp.run();
    assert_eq!(report.groups["minimal/phase0/ssz_static"], counts(1, 1, 0));
    assert_eq!(report.failed.len(), 1);
    assert_eq!(
        report.failed[0].case,
        "minimal/phase0/ssz_static/Checkpoint/ssz_random/case_1"
    );
    assert!(report.failed[0].message.contains("hash_tree_root"));
    assert!(!report.is_success());
    let text = report.render();
    assert!(text.contains("\nminimal/phase0/ssz_static: 1 passed, 1 failed, 0 skipped\n"));
    assert!(text.ends_with("spec tests: 1 passed, 1 failed, 0 skipped\n"));
}

#[test]
fn same_case_passes_in_every_fork_and_preset() {
    let tmp = TempDir::new();
    let good = checkpoint_case(9, true);
    for config in ["minimal", "mainnet"] {
        for fork in types::ForkName::ALL {
            tmp.case(
                &format!("{config}/{fork}/ssz_static/Checkpoint/ssz_zero/case_0"),
                &as_files(&good),
            );
        }
    }
    let report = tmp.run();
    assert!(report.is_success(), "{}", report.render());
    // Every fork of both presets: Gloas too (its ssz_static runs as a pending fork).
    assert_eq!(
        report.totals(),
        counts(2 * types::ForkName::ALL.len(), 0, 0)
    );
}

#[test]
fn unknown_type_is_unvisited_and_fails_the_run() {
    let tmp = TempDir::new();
    let good = checkpoint_case(1, true);
    tmp.case(
        "minimal/fulu/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    )
    .case(
        "minimal/fulu/ssz_static/NoSuchType/ssz_one/case_0",
        &as_files(&good),
    )
    // Removed in Altair, so unknown to the fulu module.
    .case(
        "minimal/fulu/ssz_static/PendingAttestation/ssz_one/case_0",
        &as_files(&good),
    );

    let report = tmp.run();
    assert_eq!(report.groups["minimal/fulu/ssz_static"], counts(1, 2, 0));
    assert!(report.failed.is_empty());
    let unvisited: Vec<&str> = report.unvisited.iter().map(|n| n.case.as_str()).collect();
    assert_eq!(
        unvisited,
        [
            "minimal/fulu/ssz_static/NoSuchType/ssz_one/case_0",
            "minimal/fulu/ssz_static/PendingAttestation/ssz_one/case_0",
        ]
    );
    assert!(!report.is_success());
    let text = report.render();
    assert!(text.contains("unvisited (2)"), "{text}");
    assert!(text.ends_with("spec tests: 1 passed, 2 failed, 0 skipped\n"));
}

#[test]
fn stray_file_under_a_covered_runner_is_unvisited() {
    let tmp = TempDir::new();
    let good = checkpoint_case(1, true);
    tmp.case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    )
    .case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one",
        &[("case_1", b"x")],
    );
    let report = tmp.run();
    assert_eq!(report.unvisited.len(), 1);
    assert_eq!(
        report.unvisited[0].case,
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/case_1"
    );
    assert!(!report.is_success());
}

#[test]
fn unknown_fork_fails_its_cases() {
    let tmp = TempDir::new();
    let good = checkpoint_case(2, true);
    tmp.case(
        "minimal/notafork/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    );
    let report = tmp.run();
    assert_eq!(
        report.groups["minimal/notafork/ssz_static"],
        counts(0, 1, 0)
    );
    assert!(report.failed[0].message.contains("unknown fork name"));
    assert!(!report.is_success());
}

#[test]
fn bad_vector_files_fail_without_panicking() {
    let tmp = TempDir::new();
    let good = checkpoint_case(5, true);
    let roots = &good[1].1;
    tmp.case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/bad_snappy",
        &[
            ("serialized.ssz_snappy", b"\xff\xff\xff\xff\xff"),
            ("roots.yaml", roots),
        ],
    )
    .case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/short_bytes",
        &[
            ("serialized.ssz_snappy", &ssz_snappy(&7u64)),
            ("roots.yaml", roots),
        ],
    )
    .case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/bad_yaml",
        &[
            ("serialized.ssz_snappy", &good[0].1),
            ("roots.yaml", b"root: ["),
        ],
    )
    .case("minimal/phase0/ssz_static/Checkpoint/ssz_one/empty", &[]);
    let report = tmp.run();
    assert_eq!(report.groups["minimal/phase0/ssz_static"], counts(0, 4, 0));
}

/// A tree with a good Checkpoint case and two cases of a runner nobody implements.
fn tree_with_an_uncovered_runner() -> TempDir {
    let tmp = TempDir::new();
    let good = checkpoint_case(1, true);
    tmp.case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    )
    .case(
        "minimal/phase0/future_runner/basic/pyspec_tests/case_1",
        &[("steps.yaml", b"[]\n")],
    )
    .case(
        "minimal/phase0/future_runner/basic/pyspec_tests/case_2",
        &[("steps.yaml", b"[]\n")],
    );
    tmp
}

fn allowing(path: &'static str) -> Options {
    Options {
        allowed: vec![AllowedGap {
            path,
            reason: "a test's accepted gap",
        }],
        ..Options::default()
    }
}

#[test]
fn an_uncovered_runner_on_the_allow_list_is_listed_but_does_not_fail() {
    let tmp = tree_with_an_uncovered_runner();
    let report = tmp.run_with(&allowing("minimal/phase0/future_runner"));
    assert!(report.is_success(), "{}", report.render());
    assert_eq!(report.not_covered["minimal/phase0/future_runner"].cases, 2);
    assert!(!report.groups.contains_key("minimal/phase0/future_runner"));
    let text = report.render();
    assert!(
        text.contains("  minimal/phase0/future_runner (2 cases): a test's accepted gap\n"),
        "{text}"
    );
}

#[test]
fn a_pending_fork_case_runs_through_its_runners_pending_fork_table() {
    let tmp = TempDir::new();
    let good = checkpoint_case(3, true);
    let bad = checkpoint_case(4, false);
    tmp.case(
        "minimal/gloas/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    )
    .case(
        "minimal/gloas/ssz_static/Checkpoint/ssz_one/case_1",
        &as_files(&bad),
    )
    .case(
        "minimal/gloas/ssz_static/HistoricalBatch/ssz_one/case_0",
        &as_files(&good),
    );
    let report = tmp.run();
    // HistoricalBatch is not a Gloas container: unvisited.
    assert_eq!(report.groups["minimal/gloas/ssz_static"], counts(1, 2, 0));
    assert_eq!(report.failed.len(), 1);
    assert!(report.failed[0].case.ends_with("case_1"));
    assert_eq!(report.unvisited.len(), 1);
    assert!(report.unvisited[0].message.contains("types::gloas"));
}

#[test]
fn a_pending_fork_handler_its_runner_lacks_fails_unless_the_allow_list_names_it() {
    // A Gloas gossip handler the networking runner does not know (every one the vectors have
    // is run now: this one stands for a topic a later release adds).
    let tmp = TempDir::new();
    tmp.case(
        "minimal/gloas/networking/gossip_future_topic/pyspec_tests/a",
        &[("meta.yaml", b"")],
    );
    let report = tmp.run_with(&Options {
        allowed: Vec::new(),
        ..Options::default()
    });
    assert!(!report.is_success());
    assert_eq!(report.groups["minimal/gloas/networking"], counts(0, 1, 0));
    assert!(
        report.unvisited[0]
            .message
            .contains("no Gloas gossip validation of gossip_future_topic"),
        "{}",
        report.unvisited[0].message
    );

    // An allow list that names it: listed with its reason, not a failure.
    let report = tmp.run_with(&Options {
        allowed: vec![ef_tests::allow_list::AllowedGap {
            path: "minimal/gloas/networking/gossip_future_topic",
            reason: "a topic of a later release: a later issue",
        }],
        ..Options::default()
    });
    assert!(report.is_success(), "{}", report.render());
    let gap = &report.not_covered["minimal/gloas/networking/gossip_future_topic"];
    assert_eq!(gap.cases, 1);
    assert!(gap.reason.contains("later issue"), "{}", gap.reason);
}

#[test]
fn a_pending_fork_case_of_the_state_transition_runs_through_the_released_runner() {
    // Gloas state-transition cases run (issue 42): a broken one fails, whatever the allow list.
    let tmp = TempDir::new();
    tmp.case(
        "minimal/gloas/operations/attestation/pyspec_tests/a",
        &[("pre.ssz_snappy", b"")],
    );
    let report = tmp.run();
    assert!(!report.is_success());
    assert_eq!(report.failed.len(), 1, "{}", report.render());
    assert!(report.unvisited.is_empty(), "{}", report.render());
    assert!(report.not_covered.is_empty(), "{}", report.render());
}

#[test]
fn two_roots_run_as_one_but_may_not_share_a_fork() {
    let main = TempDir::new();
    let gloas = TempDir::new();
    let good = checkpoint_case(5, true);
    main.case(
        "minimal/fulu/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    );
    gloas.case(
        "minimal/gloas/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    );
    let roots = [main.0.clone(), gloas.0.clone()];
    let report = run_roots(&roots, &runners::all(), &Options::default()).expect("runs");
    assert!(report.is_success(), "{}", report.render());
    assert_eq!(report.groups["minimal/fulu/ssz_static"], counts(1, 0, 0));
    assert_eq!(report.groups["minimal/gloas/ssz_static"], counts(1, 0, 0));
    assert_eq!(report.tests_dirs.len(), 2);

    gloas.case(
        "minimal/fulu/ssz_static/Checkpoint/ssz_one/case_1",
        &as_files(&good),
    );
    let err = run_roots(&roots, &runners::all(), &Options::default()).expect_err("shared fork");
    assert!(matches!(err, HarnessError::ForkInTwoRoots { ref fork, .. } if fork == "minimal/fulu"));
}

#[test]
fn an_uncovered_runner_off_the_allow_list_fails_the_run() {
    let tmp = tree_with_an_uncovered_runner();
    // No entry of the default list names this runner directory.
    let report = tmp.run();
    assert!(!report.is_success());
    assert_eq!(
        report.groups["minimal/phase0/future_runner"],
        counts(0, 2, 0)
    );
    assert!(report.not_covered.is_empty());
    assert_eq!(report.unvisited.len(), 2);
    assert!(report.unvisited[0].message.contains("allow list"));
    assert!(
        report
            .render()
            .contains("spec tests: 1 passed, 2 failed, 0 skipped")
    );
}

#[test]
fn a_case_that_passes_without_reading_a_file_fails_the_run() {
    let tmp = TempDir::new();
    let manifest = "preset: minimal\nfork: phase0\nrunner: shuffling\nhandler: core\n\
                    suite: shuffle\ncase: shuffle_extra\n";
    tmp.case(
        "minimal/phase0/shuffling/core/shuffle/shuffle_10",
        &[("mapping.yaml", SHUFFLING_MAPPING.as_bytes())],
    )
    .case(
        "minimal/phase0/shuffling/core/shuffle/shuffle_extra",
        &[
            ("mapping.yaml", SHUFFLING_MAPPING.as_bytes()),
            ("manifest.yaml", manifest.as_bytes()),
            ("extra.yaml", b"count: 11\n"),
        ],
    );
    // A file in a subdirectory of the case counts too.
    let nested = tmp
        .0
        .join("tests/minimal/phase0/shuffling/core/shuffle/shuffle_10/more");
    std::fs::create_dir_all(&nested).expect("create nested dir");
    std::fs::write(nested.join("notes.yaml"), b"x: 1\n").expect("write nested file");

    let report = tmp.run();
    assert!(!report.is_success());
    assert_eq!(report.groups["minimal/phase0/shuffling"], counts(0, 2, 0));
    let messages: Vec<(&str, &str)> = report
        .failed
        .iter()
        .map(|n| (n.case.as_str(), n.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        [
            (
                "minimal/phase0/shuffling/core/shuffle/shuffle_10",
                "passed without reading 1 of its files: more/notes.yaml"
            ),
            (
                "minimal/phase0/shuffling/core/shuffle/shuffle_extra",
                // The manifest is read (and checked) by the harness; the mapping by the runner.
                "passed without reading 1 of its files: extra.yaml"
            ),
        ]
    );
}

#[test]
fn an_unread_file_on_the_allow_list_is_counted_but_does_not_fail() {
    let tmp = TempDir::new();
    tmp.case(
        "minimal/phase0/shuffling/core/shuffle/shuffle_10",
        &[
            ("mapping.yaml", SHUFFLING_MAPPING.as_bytes()),
            ("extra.yaml", b"count: 11\n"),
        ],
    );
    let report = tmp.run_with(&allowing("*/*/shuffling/*/*/*/extra.yaml"));
    assert!(report.is_success(), "{}", report.render());
    assert_eq!(report.groups["minimal/phase0/shuffling"], counts(1, 0, 0));
    assert!(
        report
            .render()
            .contains("unread, on the allow list: */*/shuffling/*/*/*/extra.yaml (1 files)\n")
    );
}

#[test]
fn a_manifest_naming_another_case_fails_it() {
    let tmp = TempDir::new();
    let manifest = "preset: minimal\nfork: phase0\nrunner: shuffling\nhandler: core\n\
                    suite: shuffle\ncase: shuffle_11\n";
    tmp.case(
        "minimal/phase0/shuffling/core/shuffle/shuffle_10",
        &[
            ("mapping.yaml", SHUFFLING_MAPPING.as_bytes()),
            ("manifest.yaml", manifest.as_bytes()),
        ],
    );
    let report = tmp.run();
    assert_eq!(report.groups["minimal/phase0/shuffling"], counts(0, 1, 0));
    assert!(
        report.failed[0]
            .message
            .contains("manifest.yaml names case \"shuffle_11\""),
        "{}",
        report.failed[0].message
    );
}

#[test]
fn shuffling_vector_passes_and_a_wrong_mapping_fails() {
    let tmp = TempDir::new();
    let wrong = SHUFFLING_MAPPING.replace("[6, 9,", "[9, 6,");
    tmp.case(
        "minimal/phase0/shuffling/core/shuffle/shuffle_10",
        &[("mapping.yaml", SHUFFLING_MAPPING.as_bytes())],
    )
    .case(
        "minimal/phase0/shuffling/core/shuffle/shuffle_wrong",
        &[("mapping.yaml", wrong.as_bytes())],
    );
    let report = tmp.run();
    assert_eq!(report.groups["minimal/phase0/shuffling"], counts(1, 1, 0));
    assert_eq!(
        report.failed[0].case,
        "minimal/phase0/shuffling/core/shuffle/shuffle_wrong"
    );
}

#[test]
fn missing_root_is_an_error() {
    let tmp = TempDir::new();
    let missing = tmp.0.join("does-not-exist");
    let err = run(&missing, &runners::all(), &Options::default()).expect_err("no root");
    assert!(matches!(err, HarnessError::RootMissing(p) if p == missing));
}

#[test]
fn root_without_tests_dir_is_an_error() {
    let tmp = TempDir::new();
    let root = tmp.0.join("tests");
    let err = run(&root, &runners::all(), &Options::default()).expect_err("no tests/");
    assert!(matches!(err, HarnessError::TestsDirMissing(_)));
}

#[test]
fn tree_without_cases_is_an_error() {
    let tmp = TempDir::new();
    std::fs::create_dir_all(tmp.0.join("tests/minimal/phase0/ssz_static")).expect("mkdir");
    let err = run(&tmp.0, &runners::all(), &Options::default()).expect_err("no cases");
    assert!(matches!(err, HarnessError::NoCases(_)));
}

/// A runner that panics on `boom` cases and skips `later` ones.
struct Awkward;

impl Runner for Awkward {
    fn name(&self) -> &'static str {
        "awkward"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        match case.case.as_str() {
            "boom" => panic!("boom at {}", case.id()),
            "later" => CaseResult::Skipped("needs the BLS backend".to_string()),
            _ => CaseResult::Passed,
        }
    }
}

#[test]
fn a_panicking_case_fails_alone_and_skips_show_their_reason() {
    let tmp = TempDir::new();
    for case in ["boom", "fine", "later", "later2"] {
        tmp.case(&format!("general/phase0/awkward/h/s/{case}"), &[]);
    }
    let runners: Vec<Box<dyn Runner>> = vec![Box::new(Awkward)];
    let report = run(&tmp.0, &runners, &allowing("general/phase0/awkward/h")).expect("runs");
    // `later2` is not skipped by name: only exact `later`.
    assert_eq!(report.groups["general/phase0/awkward"], counts(2, 1, 1));
    assert!(report.failed[0].message.contains("panicked: boom"));
    let text = report.render();
    assert!(
        text.contains("general/phase0/awkward/h (1 case): needs the BLS backend"),
        "{text}"
    );
}

#[test]
fn a_skip_off_the_allow_list_fails() {
    let tmp = TempDir::new();
    for case in ["fine", "later"] {
        tmp.case(&format!("general/phase0/awkward/h/s/{case}"), &[]);
    }
    let runners: Vec<Box<dyn Runner>> = vec![Box::new(Awkward)];
    let report = run(&tmp.0, &runners, &allowing("general/phase0/awkward/other")).expect("runs");
    assert_eq!(report.groups["general/phase0/awkward"], counts(1, 1, 0));
    assert!(!report.is_success());
    assert!(
        report.failed[0]
            .message
            .contains("not name it: needs the BLS backend"),
        "{}",
        report.failed[0].message
    );
}

#[test]
fn filters_select_and_skip_cases() {
    let tmp = TempDir::new();
    let good = checkpoint_case(1, true);
    let bad = checkpoint_case(2, false);
    tmp.case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    )
    .case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/case_1",
        &as_files(&bad),
    );
    let only_good = Options::from_args(["--nocapture", "case_0"].map(String::from));
    let report = run(&tmp.0, &runners::all(), &only_good).expect("runs");
    assert!(report.is_success());
    assert_eq!(report.totals(), counts(1, 0, 0));

    let skip_bad = Options::from_args(["--skip", "case_1", "--test-threads=1"].map(String::from));
    assert_eq!(skip_bad.threads, Some(1));
    let report = run(&tmp.0, &runners::all(), &skip_bad).expect("runs");
    assert_eq!(report.totals(), counts(1, 0, 0));
    assert_eq!(report.threads, 1);
}

#[test]
fn options_ignore_flags_and_read_thread_counts() {
    let options = Options::from_args(
        [
            "--nocapture",
            "--test-threads",
            "3",
            "--quiet",
            "ssz_static",
        ]
        .map(String::from),
    );
    assert_eq!(
        options,
        Options {
            filters: vec!["ssz_static".to_string()],
            skip: vec![],
            threads: Some(3),
            allowed: ef_tests::ALLOW_LIST.to_vec(),
        }
    );
}

#[test]
fn hidden_entries_are_ignored() {
    let tmp = TempDir::new();
    let good = checkpoint_case(1, true);
    tmp.case(
        "minimal/phase0/ssz_static/Checkpoint/ssz_one/case_0",
        &as_files(&good),
    )
    .case("minimal/phase0/ssz_static/Checkpoint/ssz_one/.hidden", &[]);
    std::fs::write(tmp.0.join("tests/README.md"), b"not a case").expect("write");
    let report = tmp.run();
    assert!(report.is_success(), "{}", report.render());
    assert_eq!(report.totals(), counts(1, 0, 0));
}

#[test]
fn state_transition_runners_fail_bad_cases_and_leave_unknown_handlers_unvisited() {
    let tmp = TempDir::new();
    tmp.case(
        "minimal/fulu/operations/attestation/pyspec_tests/empty",
        &[],
    )
    .case(
        "minimal/fulu/sanity/blocks/pyspec_tests/garbage_pre",
        &[
            ("meta.yaml", b"{blocks_count: 0}\n"),
            ("pre.ssz_snappy", &ssz_snappy(&7u64)),
        ],
    )
    .case(
        "minimal/fulu/epoch_processing/no_such_step/pyspec_tests/case_0",
        &[],
    )
    .case(
        "minimal/fulu/operations/no_such_operation/pyspec_tests/case_0",
        &[],
    );
    let report = tmp.run();
    let failed: Vec<&str> = report.failed.iter().map(|n| n.case.as_str()).collect();
    assert_eq!(
        failed,
        [
            "minimal/fulu/operations/attestation/pyspec_tests/empty",
            "minimal/fulu/sanity/blocks/pyspec_tests/garbage_pre",
        ]
    );
    assert!(
        report
            .failed
            .iter()
            .all(|n| !n.message.contains("panicked"))
    );
    let unvisited: Vec<&str> = report.unvisited.iter().map(|n| n.case.as_str()).collect();
    assert_eq!(
        unvisited,
        [
            "minimal/fulu/epoch_processing/no_such_step/pyspec_tests/case_0",
            "minimal/fulu/operations/no_such_operation/pyspec_tests/case_0",
        ]
    );
}
