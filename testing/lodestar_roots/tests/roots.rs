//! Every Gloas container of the spec's `ssz_static` list, hashed by Arbor and by npm
//! `@lodestar/types` 1.50.0 (`js/roots.mjs`), in both presets: per type the zero value and
//! generated values (`arbitrary` over splitmix bytes, fitted with [`lodestar_roots::clamp`] into
//! what Lodestar's types hold), SSZ-encoded with Arbor's root. `roots.mjs` must find every type,
//! decode every case, re-encode it to the same bytes and get the same root, and the generated
//! values must reach into the progressive lists' later subtrees.
//!
//! The package is installed by `make lodestar-roots` (a prerequisite of `make test`) into
//! `target/lodestar-roots`, or `$ARBOR_LODESTAR_ROOTS`; without it the test fails (run
//! `make test`). The type list is checked against the type directories of the Gloas vectors
//! (`$ARBOR_GLOAS_VECTORS`, else `target/gloas-vectors`, from `make gloas-vectors`).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use arbitrary::{Arbitrary, Unstructured};
use lodestar_roots::{Checker, Pool, clamp, grow, progressive_chunks};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};
use splitmix::SplitMix64;
use ssz::Encode;
use tree_hash::TreeHash;
use types::{EthSpec, MainnetEthSpec, MinimalEthSpec};

/// The bytes behind one generated value: `len` splitmix bytes from `seed`, each with its low bit
/// forced to 1 with probability `odd_per_10k` / 10,000. `arbitrary` reads a collection's length
/// from the end of the bytes (so lengths grow with `len`), and a progressive bitlist bit by bit
/// while a byte from the front is odd (so its length grows with the bias).
#[derive(Debug, Clone, Copy)]
struct Plan {
    seed: u64,
    len: usize,
    odd_per_10k: u64,
}

/// `(len, odd_per_10k)` of the generated values of each type but the state, in turn.
const SHAPES: &[(usize, u64)] = &[
    (300, 0),
    (4_096, 0),
    (65_536, 0),
    (262_144, 0),
    (16_384, 9_700),
    (65_536, 9_990),
    (131_072, 9_999),
];

/// The same for `BeaconState` (its vectors take a share of the bytes first).
const STATE_SHAPES: &[(usize, u64)] = &[(65_536, 0), (1 << 20, 0), (4 << 20, 0), (1 << 20, 9_990)];

/// Candidates generated per type (the state: [`STATE_CANDIDATES`]): one of each shape is kept,
/// and of the rest those that take some progressive list further towards [`TARGET_CHUNKS`].
const CANDIDATES: u64 = 48;
const STATE_CANDIDATES: u64 = 8;

/// A progressive list must reach this many chunks in some generated value of its type (the
/// fourth subtree starts after 1 + 4 + 16 chunks), or its limit in Lodestar's type where that is
/// lower.
const TARGET_CHUNKS: u64 = 22;

/// Given the Gloas types of the spec's `ssz_static` list (`types::for_each_gloas_ssz_static_type`;
/// a `<E>` marks a preset-generic one), generates [`write_all`], which writes the cases of each.
macro_rules! gloas_types {
    ($($ty:ident $(<$e:ident>)?),* $(,)?) => {
        /// The type names.
        const GLOAS_TYPES: &[&str] = &[$(stringify!($ty)),*];

        /// Writes the cases of every type in preset `E`.
        fn write_all<E: EthSpec>(cases: &mut Cases) {
            $(cases.write_type::<types::gloas::$ty $(<$e>)?>(stringify!($ty));)*
        }
    };
}

types::for_each_gloas_ssz_static_type!(gloas_types);

/// The cases of one preset, written into `dir` as `<n>.ssz` and `cases.json`.
struct Cases {
    dir: PathBuf,
    preset: &'static str,
    schema: Value,
    cases: Vec<Value>,
    /// Per type, its progressive lists' paths and the chunks each must reach.
    targets: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Cases {
    fn write_type<T>(&mut self, name: &str)
    where
        T: for<'a> Arbitrary<'a> + Encode + TreeHash + Serialize + DeserializeOwned,
    {
        // The zero value: `arbitrary` out of no bytes (zero integers, zero bytes, empty lists,
        // vectors of zero values). roots.mjs checks it is Lodestar's `defaultValue()`.
        let zero = T::arbitrary(&mut Unstructured::new(&[]))
            .unwrap_or_else(|e| panic!("{name}: no zero value: {e}"));
        self.push(name, "zero", &zero, true);

        let schema = self.schema.get(name).cloned().unwrap_or(Value::Null);
        let (shapes, candidates) = if name == "BeaconState" {
            (STATE_SHAPES, STATE_CANDIDATES)
        } else {
            (SHAPES, CANDIDATES)
        };
        let mut paths = BTreeMap::new();
        progressive_paths(&schema, "", &mut paths);
        let mut best: BTreeMap<String, u64> = BTreeMap::new();
        let mut pool = Pool::default();
        let mut base = None;
        for seed in 0..candidates {
            let (len, odd_per_10k) = shapes[seed as usize % shapes.len()];
            let plan = Plan {
                seed,
                len,
                odd_per_10k,
            };
            let (value, json) = generate::<T>(name, &plan, &schema);
            let mut seen = BTreeMap::new();
            progressive_chunks(&json, &schema, "", &mut seen)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            pool.add(&json, &schema, "");
            let mut better = false;
            for (path, target) in &paths {
                let chunks = seen.get(path).map_or(0, |(c, _)| *c).min(*target);
                let had = best.entry(path.clone()).or_insert(0);
                if chunks > *had {
                    *had = chunks;
                    better = true;
                }
            }
            if (seed as usize) < shapes.len() || better {
                self.push(name, &format!("seed{seed}"), &value, false);
            }
            if seed == 0 {
                base = Some(json);
            }
            let done = paths
                .iter()
                .all(|(path, target)| best.get(path) == Some(target));
            if done && seed as usize + 1 >= shapes.len() {
                break;
            }
        }
        // One value with every progressive list lengthened to its target: elements of generated
        // values (the random search above rarely fills the later lists of a big container).
        if !paths.is_empty() {
            let mut json = base.expect("a first candidate");
            let mut rng = SplitMix64::new(0x6c6f_6465_7374_6172 ^ name.len() as u64);
            grow(&mut json, &schema, "", TARGET_CHUNKS, &pool, &mut || {
                rng.next_u64()
            })
            .unwrap_or_else(|e| panic!("{name}: lengthening lists: {e}"));
            clamp(&mut json, &schema)
                .unwrap_or_else(|e| panic!("{name}: fitting to Lodestar: {e}"));
            let grown: T = serde_json::from_value(json)
                .unwrap_or_else(|e| panic!("{name}: lengthened JSON back: {e}"));
            self.push(name, "grown", &grown, false);
        }
        self.targets.insert(name.to_string(), paths);
    }

    fn push<T: Encode + TreeHash>(&mut self, name: &str, label: &str, value: &T, zero: bool) {
        let file = format!("{}.ssz", self.cases.len());
        std::fs::write(self.dir.join(&file), value.as_ssz_bytes()).expect("writable case dir");
        self.cases.push(json!({
            "name": format!("{}/{name}/{label}", self.preset),
            "type": name,
            "file": file,
            "root": format!("0x{}", hex::encode(value.tree_hash_root().as_slice())),
            "zero": zero,
        }));
    }
}

/// The value `plan` generates, fitted into Lodestar's type through Arbor's JSON.
fn generate<T>(name: &str, plan: &Plan, schema: &Value) -> (T, Value)
where
    T: for<'a> Arbitrary<'a> + Serialize + DeserializeOwned,
{
    let mut rng = SplitMix64::new(plan.seed ^ splitmix::splitmix64(name.len() as u64));
    let mut bytes = vec![0u8; plan.len];
    rng.fill_bytes(&mut bytes);
    if plan.odd_per_10k > 0 {
        for byte in &mut bytes {
            if rng.next_u64() % 10_000 < plan.odd_per_10k {
                *byte |= 1;
            }
        }
    }
    let value = T::arbitrary(&mut Unstructured::new(&bytes))
        .unwrap_or_else(|e| panic!("{name}: arbitrary failed on {plan:?}: {e}"));
    let mut json = serde_json::to_value(&value).unwrap_or_else(|e| panic!("{name}: JSON: {e}"));
    clamp(&mut json, schema).unwrap_or_else(|e| panic!("{name}: fitting to Lodestar: {e}"));
    let value =
        serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{name}: JSON back: {e}"));
    (value, json)
}

/// Every progressive list of a type (by path, as [`progressive_chunks`] names them) with the
/// chunks it must reach: [`TARGET_CHUNKS`], or fewer where its limit in Lodestar's type says so.
fn progressive_paths(schema: &Value, path: &str, out: &mut BTreeMap<String, u64>) {
    let Some(node) = schema.as_object() else {
        return;
    };
    if let Some(fields) = node.get("c").and_then(Value::as_object) {
        for (key, sub) in fields {
            let sub_path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            progressive_paths(sub, &sub_path, out);
        }
        return;
    }
    if let Some(size) = node.get("p").and_then(Value::as_u64) {
        let limit_chunks = if let Some(l) = node.get("l") {
            l.as_u64().map(|l| (l * size).div_ceil(32))
        } else if let Some(b) = node.get("b") {
            b.as_u64().map(|b| b.div_ceil(256))
        } else {
            node.get("y")
                .and_then(Value::as_u64)
                .map(|y| y.div_ceil(32))
        };
        out.insert(
            path.to_string(),
            limit_chunks.map_or(TARGET_CHUNKS, |l| l.min(TARGET_CHUNKS)),
        );
    }
    if let Some(element) = node.get("e").or_else(|| node.get("v")) {
        progressive_paths(element, &format!("{path}[]"), out);
    }
}

/// The Gloas `ssz_static` vectors' directory (minimal preset).
fn vector_dir() -> PathBuf {
    let root = match std::env::var_os("ARBOR_GLOAS_VECTORS") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/gloas-vectors"),
    };
    let dir = root.join("tests/minimal/gloas/ssz_static");
    assert!(
        dir.is_dir(),
        "the Gloas vectors are not at {}; run `make test` (or `make gloas-vectors`), or set \
         ARBOR_GLOAS_VECTORS",
        dir.display()
    );
    dir
}

/// The subdirectories of `dir`, by name.
fn subdirs(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("readable vector dir"))
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The type directories of the Gloas `ssz_static` vectors.
fn vector_types() -> BTreeSet<String> {
    subdirs(&vector_dir())
}

/// Lodestar's types (and roots.mjs's own three) give the spec's roots on the Gloas vectors:
/// what makes agreeing with them evidence that Arbor's roots are 1.7.0b4's.
#[test]
fn lodestar_reproduces_the_gloas_vectors() {
    let checker = Checker::locate().unwrap_or_else(|e| panic!("{e}"));
    let dir = vector_dir();
    let cases: usize = vector_types()
        .iter()
        .map(|ty| {
            let suites = subdirs(&dir.join(ty));
            suites
                .iter()
                .map(|suite| subdirs(&dir.join(ty).join(suite)).len())
                .sum::<usize>()
        })
        .sum();
    let outcome = checker
        .vectors(&dir, "minimal")
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{}", outcome.output.trim_end());
    assert!(
        outcome.success && outcome.mismatches == 0,
        "Lodestar disagrees with the spec's roots:\n{}",
        outcome.output
    );
    assert_eq!(
        outcome.checked, cases,
        "roots.mjs read a different number of vector cases"
    );
    assert_eq!(outcome.types, GLOAS_TYPES.len());
    // Every zero case at least (one a type); the random ones hold uint64s above 2^53.
    assert!(
        outcome.matched.unwrap_or(0) >= GLOAS_TYPES.len(),
        "too few vectors compared"
    );
}

#[test]
fn type_list_is_the_spec_ssz_static_list() {
    let listed: BTreeSet<String> = GLOAS_TYPES.iter().map(|s| s.to_string()).collect();
    assert_eq!(listed.len(), GLOAS_TYPES.len(), "a type is listed twice");
    let vectors = vector_types();
    assert_eq!(
        listed,
        vectors,
        "the list here differs from the Gloas ssz_static type directories \
         (only here: {:?}; only in the vectors: {:?})",
        listed.difference(&vectors).collect::<Vec<_>>(),
        vectors.difference(&listed).collect::<Vec<_>>()
    );
}

/// Writes and checks one preset's cases; returns the number checked.
fn check_preset<E: EthSpec>(checker: &Checker, preset: &'static str) -> usize {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lodestar-roots-{preset}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("writable target dir");
    let schema = checker
        .schema(preset, GLOAS_TYPES)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut cases = Cases {
        dir: dir.clone(),
        preset,
        schema,
        cases: Vec::new(),
        targets: BTreeMap::new(),
    };
    write_all::<E>(&mut cases);
    let written = cases.cases.len();
    let cases_targets = cases.targets;
    let manifest = json!({"preset": preset, "fork": "gloas", "cases": cases.cases});
    std::fs::write(dir.join("cases.json"), manifest.to_string()).expect("writable case dir");

    let outcome = checker.check(&dir).unwrap_or_else(|e| panic!("{e}"));
    println!("{}", outcome.output.trim_end());
    assert!(
        outcome.success && outcome.mismatches == 0,
        "Lodestar disagrees with Arbor ({preset}; cases in {}):\n{}",
        dir.display(),
        outcome.output
    );
    assert_eq!(
        outcome.checked, written,
        "{preset}: roots.mjs checked a different number of cases"
    );
    assert_eq!(
        outcome.types,
        GLOAS_TYPES.len(),
        "{preset}: roots.mjs checked a different number of types"
    );

    check_coverage(&dir, preset, &cases_targets);
    written
}

/// Every progressive list (and bitlist, byte list) of every type reached its target (see
/// [`progressive_paths`]) in some case, as Lodestar decoded them (`coverage.json`).
fn check_coverage(dir: &Path, preset: &str, targets: &BTreeMap<String, BTreeMap<String, u64>>) {
    let text =
        std::fs::read_to_string(dir.join("coverage.json")).expect("roots.mjs wrote coverage.json");
    let coverage: BTreeMap<String, BTreeMap<String, Value>> =
        serde_json::from_str(&text).expect("coverage.json");
    let mut short = Vec::new();
    let mut lists = 0;
    for (ty, paths) in targets {
        for (path, target) in paths {
            lists += 1;
            let seen = coverage.get(ty).and_then(|paths| paths.get(path));
            let max = seen.and_then(|s| s["maxChunks"].as_u64()).unwrap_or(0);
            if max < *target {
                let items = seen.map_or(Value::from(0), |s| s["max"].clone());
                short.push(format!(
                    "{ty}.{path}: {max} chunks ({items} items) < {target}"
                ));
            }
        }
    }
    println!(
        "{preset}: {} of {lists} progressive lists (type, path) reached {TARGET_CHUNKS} chunks or \
         their limit in Lodestar's type",
        lists - short.len()
    );
    assert!(
        short.is_empty(),
        "{preset}: progressive lists the generated values left short:\n{}",
        short.join("\n")
    );
}

#[test]
fn lodestar_hashes_every_gloas_type_as_arbor_does() {
    let checker = Checker::locate().unwrap_or_else(|e| panic!("{e}"));
    let minimal = check_preset::<MinimalEthSpec>(&checker, "minimal");
    let mainnet = check_preset::<MainnetEthSpec>(&checker, "mainnet");
    println!(
        "{} Gloas types, {} cases (minimal {minimal}, mainnet {mainnet}): every root and encoding agrees with Lodestar",
        GLOAS_TYPES.len(),
        minimal + mainnet
    );
}
