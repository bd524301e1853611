//! `beacon_api`'s typed responses against the Beacon API spec's own examples: for each operation
//! below, the 200 response's JSON example is built from the document (ethereum/beacon-APIs
//! v4.0.0 in `../shared/beacon-apis`, or `BEACON_APIS`): an `example` where the spec gives one,
//! else an object of its properties' examples (a boolean or integer without one: `true`, `1`;
//! an enum: its first value), `$ref`s followed across the YAML files. The
//! example must decode as the Rust type and encode back to the same JSON: a field the type
//! misses, names differently, quotes differently or cannot read fails here.
//!
//! The document is required: without it the test fails with a message, it never skips.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use beacon_api::{
    BlockHeaderData, CommitteeData, DepositContractData, DutiesResponse,
    ExecutionOptimisticFinalizedResponse, FinalityCheckpointsData, GenericResponse, GenesisData,
    IdentityData, LivenessResponseData, PeerCountData, RandaoData, RootData,
    SyncCommitteeByValidatorIndices, SyncDutiesResponse, SyncingData, ValidatorBalanceData,
    ValidatorData, VersionData,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn document_root() -> PathBuf {
    let dir = std::env::var_os("BEACON_APIS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/beacon-apis"),
        PathBuf::from,
    );
    assert!(
        dir.join("beacon-node-oapi.yaml").is_file(),
        "the Beacon API document (ethereum/beacon-APIs v4.0.0) is not at {}: set BEACON_APIS",
        dir.display()
    );
    dir
}

/// The YAML files read so far, as JSON values.
struct Document {
    files: HashMap<PathBuf, Value>,
}

impl Document {
    fn file(&mut self, path: &Path) -> Value {
        let path = path
            .canonicalize()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        self.files
            .entry(path.clone())
            .or_insert_with(|| {
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let yaml: serde_yaml::Value = serde_yaml::from_str(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                serde_json::to_value(yaml).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            })
            .clone()
    }

    /// The node a `$ref` (`file#/json/pointer`, relative to `base`'s directory) names, with the
    /// file it is in.
    fn resolve(&mut self, base: &Path, reference: &str) -> (PathBuf, Value) {
        let (file, pointer) = reference.split_once('#').unwrap_or((reference, ""));
        let path = if file.is_empty() {
            base.to_path_buf()
        } else {
            base.parent().expect("a file has a directory").join(file)
        };
        let value = self.file(&path);
        let node = value
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{reference} from {}: no such node", base.display()))
            .clone();
        (path, node)
    }

    /// The example of `schema` (read in `base`): its own `example`, else its object's
    /// properties' examples, its array's one item, the merge of `allOf`, the first of
    /// `anyOf`/`oneOf`.
    fn example(&mut self, base: &Path, schema: &Value) -> Value {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let (path, node) = self.resolve(base, reference);
            return self.example(&path, &node);
        }
        if let Some(example) = schema.get("example") {
            return example.clone();
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            let mut merged = serde_json::Map::new();
            for part in all {
                if let Value::Object(fields) = self.example(base, part) {
                    merged.extend(fields);
                }
            }
            return Value::Object(merged);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(first) = schema.get(key).and_then(|v| v.get(0)) {
                return self.example(base, first);
            }
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            return Value::Object(
                properties
                    .iter()
                    .map(|(name, property)| (name.clone(), self.example(base, property)))
                    .collect(),
            );
        }
        if let Some(items) = schema.get("items") {
            return Value::Array(vec![self.example(base, items)]);
        }
        // Scalars the spec gives no example for: a value of their type.
        if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
            return first.clone();
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("boolean") => return Value::Bool(true),
            Some("integer") => return Value::from(1),
            _ => {}
        }
        panic!("{}: a schema without an example: {schema}", base.display())
    }

    /// The example of the 200 JSON response of `method` in the operation file `api` (relative
    /// to `apis/`): the response's own example when it has one, else its schema's.
    fn response_example(&mut self, api: &str, method: &str) -> Value {
        let path = document_root().join("apis").join(api);
        let file = self.file(&path);
        let mut response = file
            .pointer(&format!("/{method}/responses/200"))
            .unwrap_or_else(|| panic!("{api}: no 200 response of {method}"))
            .clone();
        let mut base = path;
        while let Some(reference) = response.get("$ref").and_then(Value::as_str) {
            let (next, node) = self.resolve(&base, reference);
            base = next;
            response = node;
        }
        let content = response
            .pointer("/content/application~1json")
            .unwrap_or_else(|| panic!("{api}: no JSON content"))
            .clone();
        if let Some(example) = content.get("example") {
            return example.clone();
        }
        let schema = content
            .get("schema")
            .unwrap_or_else(|| panic!("{api}: no schema"));
        self.example(&base, schema)
    }
}

/// The example of `api`'s 200 answer decodes as `T` and encodes back to the same JSON.
fn round_trip<T: Serialize + DeserializeOwned>(doc: &mut Document, api: &str, method: &str) {
    let example = doc.response_example(api, method);
    let value: T = serde_json::from_value(example.clone())
        .unwrap_or_else(|e| panic!("{api}: the spec's example does not decode: {e}\n{example}"));
    let back = serde_json::to_value(&value).expect("encodes");
    assert_eq!(
        hex_lowercase(back),
        hex_lowercase(example),
        "{api}: the example does not encode back"
    );
}

/// `value` with every `0x` hex string in lower case: the spec's hex patterns take either case
/// (its address examples are EIP-55 checksummed; the node writes lower case).
fn hex_lowercase(value: Value) -> Value {
    match value {
        Value::String(s) if s.starts_with("0x") => Value::String(s.to_ascii_lowercase()),
        Value::Array(items) => Value::Array(items.into_iter().map(hex_lowercase).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, hex_lowercase(v)))
                .collect(),
        ),
        other => other,
    }
}

/// One row an operation: `method "file under apis/" => the Rust type of its 200 answer`.
macro_rules! round_trips {
    ($doc:expr; $($method:ident $api:literal => $ty:ty,)*) => {{
        let mut checked = 0;
        $(
            round_trip::<$ty>($doc, $api, stringify!($method));
            checked += 1;
        )*
        checked
    }};
}

#[test]
fn the_specs_response_examples_round_trip_through_the_typed_responses() {
    let mut doc = Document {
        files: HashMap::new(),
    };
    let checked = round_trips! { &mut doc;
        get "beacon/genesis.yaml" => GenericResponse<GenesisData>,
        get "beacon/states/root.yaml" => ExecutionOptimisticFinalizedResponse<RootData>,
        get "beacon/states/finality_checkpoints.yaml" => ExecutionOptimisticFinalizedResponse<FinalityCheckpointsData>,
        get "beacon/states/validator.yaml" => ExecutionOptimisticFinalizedResponse<ValidatorData>,
        get "beacon/states/validator_balances.yaml" => ExecutionOptimisticFinalizedResponse<Vec<ValidatorBalanceData>>,
        get "beacon/states/committee.yaml" => ExecutionOptimisticFinalizedResponse<Vec<CommitteeData>>,
        get "beacon/states/randao.yaml" => ExecutionOptimisticFinalizedResponse<RandaoData>,
        get "beacon/blocks/header.yaml" => ExecutionOptimisticFinalizedResponse<BlockHeaderData>,
        post "validator/duties/attester.yaml" => DutiesResponse<Vec<beacon_api::AttesterDuty>>,
        get "validator/duties/proposer.yaml" => DutiesResponse<Vec<beacon_api::ProposerDuty>>,
        post "validator/duties/sync.yaml" => SyncDutiesResponse,
        post "validator/liveness.yaml" => GenericResponse<Vec<LivenessResponseData>>,
        get "node/version.yaml" => GenericResponse<VersionData>,
        get "node/syncing.yaml" => GenericResponse<SyncingData>,
        get "node/peer_count.yaml" => GenericResponse<PeerCountData>,
        get "node/identity.yaml" => GenericResponse<IdentityData>,
        get "config/deposit_contract.yaml" => GenericResponse<DepositContractData>,
        get "beacon/states/fork.yaml" => ExecutionOptimisticFinalizedResponse<types::phase0::Fork>,
        get "beacon/states/sync_committees.yaml" => ExecutionOptimisticFinalizedResponse<SyncCommitteeByValidatorIndices>,
        get "config/fork_schedule.yaml" => GenericResponse<Vec<types::phase0::Fork>>,
        get "validator/attestation_data.yaml" => GenericResponse<types::phase0::AttestationData>,
    };
    assert_eq!(checked, 21);
}
