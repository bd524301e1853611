//! The Gloas `ssz_static` spec tests (minimal preset, consensus-specs 1.7.0b4): for every case of
//! every type directory, `serialized.ssz_snappy` decodes into Arbor's `types::gloas` type,
//! re-encodes to the same bytes, and hashes to `roots.yaml`'s `root`.
//!
//! The vectors come from `../shared/spec-tests/gloas/minimal-gloas.tar.xz`, which the spec-test
//! harness (`testing/ef_tests`) reads too. `make gloas-vectors` (a prerequisite of
//! `make test`) unpacks it into `target/gloas-vectors`; `$ARBOR_GLOAS_VECTORS` points elsewhere.
//! Missing vectors fail the test, and so does a type directory this file does not map to a type:
//! nothing is skipped.
//!
//! With the `serde` feature a second test reads each case's `value.yaml` (the spec's JSON
//! mapping, integers unquoted) into the same type, requires it to equal the SSZ value, and
//! round-trips the value through Arbor's JSON, which must hold no bare numbers (the Beacon API
//! quotes every integer).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

use ssz::{Decode, Encode};
use tree_hash::TreeHash;
use types::{MinimalEthSpec as E, Root, gloas};

/// The environment variable naming the unpacked Gloas vectors (the directory holding `tests/`).
const ROOT_ENV: &str = "ARBOR_GLOAS_VECTORS";

/// The unpacked vectors: `$ARBOR_GLOAS_VECTORS`, else where `make gloas-vectors` puts them.
fn vector_root() -> PathBuf {
    match std::env::var_os(ROOT_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/gloas-vectors"),
    }
}

/// `roots.yaml`.
#[derive(serde::Deserialize)]
struct Roots {
    root: String,
}

/// Checks one case directory as a `T`.
fn check_case<T>(case: &Path) -> Result<(), String>
where
    T: Encode + Decode + TreeHash + Debug,
{
    let compressed = std::fs::read(case.join("serialized.ssz_snappy"))
        .map_err(|e| format!("reading serialized.ssz_snappy: {e}"))?;
    let bytes = snap::raw::Decoder::new()
        .decompress_vec(&compressed)
        .map_err(|e| format!("snappy: {e}"))?;
    let value = T::from_ssz_bytes(&bytes).map_err(|e| format!("decoding: {e:?}"))?;
    if value.as_ssz_bytes() != bytes {
        return Err("re-encoding differs from serialized.ssz_snappy".into());
    }
    let roots: Roots = serde_yaml::from_str(
        &std::fs::read_to_string(case.join("roots.yaml"))
            .map_err(|e| format!("reading roots.yaml: {e}"))?,
    )
    .map_err(|e| format!("parsing roots.yaml: {e}"))?;
    let expected: Root = roots
        .root
        .parse()
        .map_err(|e| format!("roots.yaml root {:?}: {e}", roots.root))?;
    let actual = value.tree_hash_root();
    if actual != expected {
        return Err(format!("hash tree root {actual} != expected {expected}"));
    }
    Ok(())
}

/// A case checker for one type.
type Check = fn(&Path) -> Result<(), String>;

use types::for_each_gloas_ssz_static_type as for_each_gloas_type;

/// A map from type directory name to `check_case::<type>`.
macro_rules! ssz_checks {
    ($($name:ident $(<$e:ident>)?),* $(,)?) => {
        BTreeMap::from([
            $((stringify!($name), check_case::<gloas::$name $(<$e>)?> as Check),)*
        ])
    };
}

/// The sorted entries of a directory that are directories themselves.
fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable directory entry").path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Runs `types`' check on every case of every type directory; fails on any failure, any
/// unmapped directory and any mapped type without vectors.
fn run_all(what: &str, types: &BTreeMap<&'static str, Check>) {
    let root = vector_root();
    let dir = root.join("tests/minimal/gloas/ssz_static");
    assert!(
        dir.is_dir(),
        "the Gloas vectors are missing: {} is not a directory. Run `make gloas-vectors` \
         (it unpacks ../shared/spec-tests/gloas/minimal-gloas.tar.xz into target/gloas-vectors) \
         or set {ROOT_ENV} to the directory holding `tests/`",
        dir.display()
    );

    let mut failures = Vec::new();
    let mut unmapped = Vec::new();
    let mut seen = Vec::new();
    let (mut passed, mut failed) = (0usize, 0usize);
    for type_dir in subdirectories(&dir) {
        let name = type_dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("type directory names are UTF-8")
            .to_owned();
        let Some(check) = types.get(name.as_str()) else {
            unmapped.push(name);
            continue;
        };
        seen.push(name.clone());
        let (mut type_passed, mut type_failed) = (0usize, 0usize);
        for suite in subdirectories(&type_dir) {
            for case in subdirectories(&suite) {
                match check(&case) {
                    Ok(()) => type_passed += 1,
                    Err(e) => {
                        type_failed += 1;
                        failures.push(format!(
                            "{}: {e}",
                            case.strip_prefix(&dir).unwrap_or(&case).display()
                        ));
                    }
                }
            }
        }
        println!("{name}: {type_passed} passed, {type_failed} failed");
        passed += type_passed;
        failed += type_failed;
    }
    let missing: Vec<&str> = types
        .keys()
        .copied()
        .filter(|name| !seen.iter().any(|s| s == name))
        .collect();
    println!(
        "minimal/gloas/ssz_static ({what}): {passed} passed, {failed} failed, {} types, {} unmapped type \
         directories, {} mapped types without vectors",
        seen.len(),
        unmapped.len(),
        missing.len()
    );
    for failure in &failures {
        println!("FAILED {failure}");
    }
    assert!(
        unmapped.is_empty(),
        "type directories with no Arbor type: {unmapped:?}"
    );
    assert!(
        missing.is_empty(),
        "types mapped here without a vector directory: {missing:?}"
    );
    assert!(passed > 0, "no ssz_static case ran");
    assert_eq!(
        failed, 0,
        "{failed} ssz_static cases failed {what} (listed above)"
    );
}

#[test]
fn minimal_gloas_ssz_static() {
    run_all("SSZ and root", &for_each_gloas_type!(ssz_checks));
}

/// Every `BeaconState` case through the state's tree-backed progressive lists: written in pieces
/// (`ssz_write`) it is the vector's bytes; a clone written in every kind of list (sets, pushes,
/// pops, `pop_front`) hashes incrementally to the root of its own encoding decoded afresh, while
/// the original keeps its root; and the clone's extra memory is only what it wrote.
#[test]
fn minimal_gloas_states_write_in_pieces_and_rehash_incrementally() {
    let dir = vector_root().join("tests/minimal/gloas/ssz_static/BeaconState");
    let mut cases = 0;
    for suite in subdirectories(&dir) {
        for case in subdirectories(&suite) {
            let compressed = std::fs::read(case.join("serialized.ssz_snappy")).unwrap();
            let bytes = snap::raw::Decoder::new()
                .decompress_vec(&compressed)
                .unwrap();
            let state = gloas::BeaconState::<E>::from_ssz_bytes(&bytes).unwrap();
            let mut written = Vec::new();
            state.ssz_write(&mut written).unwrap();
            assert_eq!(written, bytes, "{}: ssz_write", case.display());
            let root = state.tree_hash_root();

            let mut post = state.clone();
            // Random vectors: every list has its own length, values anywhere in range.
            if let Some(last) = post.validators.len().checked_sub(1) {
                post.validators
                    .update(last / 2, |v| v.effective_balance ^= 1)
                    .unwrap();
            }
            if let Some(last) = post.balances.len().checked_sub(1) {
                post.balances.update(last, |b| b ^ 7).unwrap();
            }
            if !post.current_epoch_participation.is_empty() {
                post.current_epoch_participation.set(0, 0b111).unwrap();
            }
            post.balances.push(32);
            post.previous_epoch_participation.push(1);
            post.current_epoch_participation.push(2);
            post.inactivity_scores.push(3);
            if let Some(v) = post.validators.get(0).cloned() {
                post.validators.push(v);
            }
            if let Some(b) = post.builders.get(0).cloned() {
                post.builders.push(b);
            }
            post.builder_pending_withdrawals.pop();
            post.payload_expected_withdrawals.pop();
            post.pending_deposits
                .pop_front(post.pending_deposits.len().min(1))
                .unwrap();
            post.pending_partial_withdrawals.pop();
            if let Some(c) = post.pending_consolidations.get(0).cloned() {
                post.pending_consolidations.push(c);
            }
            let post_bytes = post.as_ssz_bytes();
            let fresh = gloas::BeaconState::<E>::from_ssz_bytes(&post_bytes).unwrap();
            assert_eq!(
                post.tree_hash_root(),
                fresh.tree_hash_root(),
                "{}: incremental root",
                case.display()
            );
            let mut written = Vec::new();
            post.ssz_write(&mut written).unwrap();
            assert_eq!(
                written,
                post_bytes,
                "{}: ssz_write after writes",
                case.display()
            );
            assert_eq!(
                state.tree_hash_root(),
                root,
                "{}: a clone's writes leaked",
                case.display()
            );

            let sizes = types::memory::gloas_differential_sizes([&state, &post]);
            let whole = types::memory::gloas_differential_sizes([&fresh])[0];
            assert!(
                sizes[0] > 0 && sizes[1] < whole,
                "{}: {sizes:?} vs {whole}",
                case.display()
            );
            cases += 1;
        }
    }
    println!("minimal/gloas/ssz_static/BeaconState: {cases} states written and re-hashed");
    assert!(cases > 0, "no BeaconState case ran");
}

/// The `serde` half: `value.yaml` against the SSZ value, and Arbor's JSON round trip.
#[cfg(feature = "serde")]
mod json {
    use super::*;
    use serde::Serialize;
    use serde::de::DeserializeOwned;

    /// The path of the first bare JSON number in `value`, if any.
    fn bare_number(value: &serde_json::Value, path: &str) -> Option<String> {
        match value {
            serde_json::Value::Number(_) => Some(path.to_owned()),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| bare_number(item, &format!("{path}[{i}]"))),
            serde_json::Value::Object(fields) => fields
                .iter()
                .find_map(|(key, item)| bare_number(item, &format!("{path}.{key}"))),
            _ => None,
        }
    }

    /// Checks one case's `value.yaml` and JSON round trip as a `T`.
    pub(super) fn check_json_case<T>(case: &Path) -> Result<(), String>
    where
        T: Encode + Decode + Serialize + DeserializeOwned + PartialEq + Debug,
    {
        let compressed = std::fs::read(case.join("serialized.ssz_snappy"))
            .map_err(|e| format!("reading serialized.ssz_snappy: {e}"))?;
        let bytes = snap::raw::Decoder::new()
            .decompress_vec(&compressed)
            .map_err(|e| format!("snappy: {e}"))?;
        let value = T::from_ssz_bytes(&bytes).map_err(|e| format!("decoding: {e:?}"))?;

        let yaml = std::fs::read_to_string(case.join("value.yaml"))
            .map_err(|e| format!("reading value.yaml: {e}"))?;
        let from_yaml: T =
            serde_yaml::from_str(&yaml).map_err(|e| format!("reading value.yaml: {e}"))?;
        if from_yaml != value {
            return Err("value.yaml differs from serialized.ssz_snappy".into());
        }

        let json = serde_json::to_value(&value).map_err(|e| format!("to JSON: {e}"))?;
        if let Some(path) = bare_number(&json, "$") {
            return Err(format!("bare JSON number at {path}"));
        }
        let back: T = serde_json::from_value(json).map_err(|e| format!("from JSON: {e}"))?;
        if back != value {
            return Err("JSON round trip changed the value".into());
        }
        Ok(())
    }

    /// A map from type directory name to `check_json_case::<type>`.
    macro_rules! json_checks {
        ($($name:ident $(<$e:ident>)?),* $(,)?) => {
            BTreeMap::from([
                $((stringify!($name), check_json_case::<gloas::$name $(<$e>)?> as Check),)*
            ])
        };
    }

    #[test]
    fn minimal_gloas_ssz_static_json() {
        run_all("value.yaml and JSON", &for_each_gloas_type!(json_checks));
    }
}
