//! The EIP-3076 interchange test suite (`eth-clients/slashing-protection-interchange-tests`,
//! in `../shared/slashing-protection-interchange-tests/generated`), one test per case, judged
//! by `should_succeed` (the minimal strategy this database applies to imported data). A missing
//! directory or a case file without its test fails the run.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

use std::path::PathBuf;

use serde::Deserialize;
use slashing_protection::{Interchange, SlashingDatabase};
use types::{BLSPubkey, Root};

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/slashing-protection-interchange-tests/generated")
}

#[derive(Deserialize)]
struct TestCase {
    name: String,
    genesis_validators_root: String,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
struct Step {
    should_succeed: bool,
    contains_slashable_data: bool,
    interchange: serde_json::Value,
    blocks: Vec<BlockCheck>,
    attestations: Vec<AttestationCheck>,
}

#[derive(Deserialize)]
struct BlockCheck {
    pubkey: String,
    slot: String,
    signing_root: Option<String>,
    should_succeed: bool,
}

#[derive(Deserialize)]
struct AttestationCheck {
    pubkey: String,
    source_epoch: String,
    target_epoch: String,
    signing_root: Option<String>,
    should_succeed: bool,
}

fn bytes<const N: usize>(text: &str) -> types::FixedBytes<N> {
    let mut out = [0u8; N];
    hex::decode_to_slice(text.strip_prefix("0x").unwrap(), &mut out).unwrap();
    types::FixedBytes(out)
}

fn root(text: &Option<String>) -> Root {
    text.as_deref().map(bytes::<32>).unwrap_or(Root::ZERO)
}

/// What one case checked.
#[derive(Default, Debug)]
struct Counts {
    imports: usize,
    blocks: usize,
    attestations: usize,
}

/// Runs one case; panics naming the first step or check that went the wrong way.
fn run_case(file: &str) -> Counts {
    let path = suite_dir().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (is the shared test suite there?)", path.display()));
    let case: TestCase = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = SlashingDatabase::open_or_create(
        dir.path().join("sp.redb"),
        bytes::<32>(&case.genesis_validators_root),
    )
    .unwrap();
    let mut counts = Counts::default();
    // Every message signed or imported, for the export check at the end.
    let mut signed_blocks: Vec<(BLSPubkey, u64)> = Vec::new();
    let mut signed_attestations: Vec<(BLSPubkey, u64, u64)> = Vec::new();

    for (i, step) in case.steps.iter().enumerate() {
        let imported = Interchange::from_json_str(&step.interchange.to_string())
            .map_err(|e| e.to_string())
            .and_then(|interchange| {
                db.import_interchange(&interchange)
                    .map(|_| interchange)
                    .map_err(|e| e.to_string())
            });
        match (&imported, step.should_succeed) {
            (Ok(interchange), true) => {
                for data in &interchange.data {
                    signed_blocks.extend(data.signed_blocks.iter().map(|b| (data.pubkey, b.slot)));
                    signed_attestations.extend(
                        data.signed_attestations
                            .iter()
                            .map(|a| (data.pubkey, a.source_epoch, a.target_epoch)),
                    );
                }
            }
            // This database imports slashable data by folding it into watermarks, so it never
            // takes the suite's option of refusing such an interchange.
            (Err(e), true) => panic!(
                "{}: step {i}: import failed (contains_slashable_data {}): {e}",
                case.name, step.contains_slashable_data
            ),
            (Ok(_), false) => panic!("{}: step {i}: import should have failed", case.name),
            (Err(_), false) => {}
        }
        counts.imports += 1;

        for (j, check) in step.blocks.iter().enumerate() {
            let pubkey = bytes::<48>(&check.pubkey);
            let slot: u64 = check.slot.parse().unwrap();
            let result =
                db.check_and_insert_block_proposal(&pubkey, slot, root(&check.signing_root));
            assert_eq!(
                result.is_ok(),
                check.should_succeed,
                "{}: step {i}: block {j} at slot {slot}: {result:?}",
                case.name
            );
            if result.is_ok() {
                signed_blocks.push((pubkey, slot));
            }
            counts.blocks += 1;
        }
        for (j, check) in step.attestations.iter().enumerate() {
            let pubkey = bytes::<48>(&check.pubkey);
            let source: u64 = check.source_epoch.parse().unwrap();
            let target: u64 = check.target_epoch.parse().unwrap();
            let result =
                db.check_and_insert_attestation(&pubkey, source, target, root(&check.signing_root));
            assert_eq!(
                result.is_ok(),
                check.should_succeed,
                "{}: step {i}: attestation {j} {source}→{target}: {result:?}",
                case.name
            );
            if result.is_ok() {
                signed_attestations.push((pubkey, source, target));
            }
            counts.attestations += 1;
        }
    }

    // The export carries the protection over: a fresh database that imports it refuses every
    // message the first one signed or imported (with an unknown root, so no repeat counts).
    let exported = db.export_interchange(None).unwrap();
    let json = exported.to_json_string();
    let reread = Interchange::from_json_str(&json).unwrap();
    assert_eq!(reread, exported, "{}: export round trip", case.name);
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh = SlashingDatabase::open_or_create(
        fresh_dir.path().join("sp.redb"),
        db.genesis_validators_root(),
    )
    .unwrap();
    fresh.import_interchange(&reread).unwrap();
    for (pubkey, slot) in &signed_blocks {
        assert!(
            fresh
                .check_and_insert_block_proposal(pubkey, *slot, Root::ZERO)
                .is_err(),
            "{}: exported data lets {pubkey} sign again at slot {slot}",
            case.name
        );
    }
    for (pubkey, source, target) in &signed_attestations {
        if source > target {
            continue; // never signable anyway
        }
        assert!(
            fresh
                .check_and_insert_attestation(pubkey, *source, *target, Root::ZERO)
                .is_err(),
            "{}: exported data lets {pubkey} attest {source}→{target} again",
            case.name
        );
    }
    counts
}

macro_rules! interchange_cases {
    ($($name:ident),* $(,)?) => {
        const CASES: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                let counts = run_case(concat!(stringify!($name), ".json"));
                println!("{}: {counts:?}", stringify!($name));
            }
        )*
    };
}

interchange_cases!(
    duplicate_pubkey_not_slashable,
    duplicate_pubkey_slashable_attestation,
    duplicate_pubkey_slashable_block,
    multiple_interchanges_multiple_validators_repeat_idem,
    multiple_interchanges_overlapping_validators_merge_stale,
    multiple_interchanges_overlapping_validators_repeat_idem,
    multiple_interchanges_single_validator_fail_iff_imported,
    multiple_interchanges_single_validator_first_surrounds_second,
    multiple_interchanges_single_validator_multiple_blocks_out_of_order,
    multiple_interchanges_single_validator_second_surrounds_first,
    multiple_interchanges_single_validator_single_att_out_of_order,
    multiple_interchanges_single_validator_single_block_out_of_order,
    multiple_interchanges_single_validator_single_message_gap,
    multiple_validators_multiple_blocks_and_attestations,
    multiple_validators_same_slot_blocks,
    single_validator_genesis_attestation,
    single_validator_import_only,
    single_validator_multiple_block_attempts,
    single_validator_multiple_blocks_and_attestations,
    single_validator_out_of_order_attestations,
    single_validator_out_of_order_blocks,
    single_validator_resign_attestation,
    single_validator_resign_block,
    single_validator_single_attestation,
    single_validator_single_block,
    single_validator_single_block_and_attestation,
    single_validator_single_block_and_attestation_signing_root,
    single_validator_slashable_attestations_double_vote,
    single_validator_slashable_attestations_surrounded_by_existing,
    single_validator_slashable_attestations_surrounds_existing,
    single_validator_slashable_blocks,
    single_validator_slashable_blocks_no_root,
    single_validator_source_greater_than_target,
    single_validator_source_greater_than_target_sensible_iff_minified,
    single_validator_source_greater_than_target_surrounded,
    single_validator_source_greater_than_target_surrounding,
    single_validator_two_blocks_no_signing_root,
    wrong_genesis_validators_root,
);

/// Every case file of the suite has its test above, and the directory is there: a case
/// nobody ran is a failure.
#[test]
fn every_case_file_has_a_test() {
    let dir = suite_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "the interchange test suite is missing at {}: {e}",
            dir.display()
        )
    });
    let mut files: Vec<String> = entries
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".json"))
        .collect();
    files.sort();
    let mut expected: Vec<String> = CASES.iter().map(|c| format!("{c}.json")).collect();
    expected.sort();
    assert_eq!(files, expected);

    let mut total = Counts::default();
    for file in &files {
        let counts = run_case(file);
        total.imports += counts.imports;
        total.blocks += counts.blocks;
        total.attestations += counts.attestations;
    }
    println!(
        "interchange suite: {} cases, {} imports, {} block checks, {} attestation checks passed",
        files.len(),
        total.imports,
        total.blocks,
        total.attestations
    );
}
