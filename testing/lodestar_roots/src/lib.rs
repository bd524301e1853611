//! Arbor's hash tree roots of every Gloas container checked by another implementation: npm
//! `@lodestar/types` 1.50.0 (on `@chainsafe/ssz` 1.8.1), which reproduces consensus-specs
//! 1.7.0b4's roots.
//!
//! `js/` is a pinned npm package (`package.json`, `package-lock.json`) with `roots.mjs`;
//! `js/install.sh` installs it into `target/lodestar-roots` (`make lodestar-roots`, a prerequisite
//! of `make test`, which passes `ARBOR_LODESTAR_ROOTS`). The test (`tests/roots.rs`) writes the
//! zero value and generated values of every type as SSZ with Arbor's root, and `roots.mjs`
//! decodes each with Lodestar's type, compares the roots and the re-encoding.
//!
//! A second test runs `roots.mjs --vectors` on the Gloas `ssz_static` vectors: Lodestar's types
//! give the spec's roots there, so agreeing with them says Arbor's roots are 1.7.0b4's.
//!
//! This library holds the test's plumbing: finding the installed package and running it
//! ([`Checker`]), lengthening lists to reach the later progressive subtrees ([`grow`]), and
//! fitting a generated value into what Lodestar's types can hold ([`clamp`]): Lodestar rejects
//! lists longer than the spec's per-block maxima when deserializing (the spec's progressive
//! lists have no SSZ limit; its state transition checks the maxima), and keeps most `uint64`
//! fields as JS numbers, exact below 2^53 only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The environment variable naming the installed package (the directory holding `roots.mjs`).
pub const DIR_ENV: &str = "ARBOR_LODESTAR_ROOTS";

/// The installed `roots.mjs` and its `node_modules`.
#[derive(Debug, Clone)]
pub struct Checker {
    dir: PathBuf,
}

/// What `roots.mjs <dir>` said.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Whether node exited 0 (no mismatch, every type found).
    pub success: bool,
    /// Cases checked (its summary line's `checked=`).
    pub checked: usize,
    /// Distinct types checked (`types=`).
    pub types: usize,
    /// Mismatches (`mismatches=`).
    pub mismatches: usize,
    /// With `--vectors`, the cases compared and equal (`matched=`).
    pub matched: Option<usize>,
    /// Its standard output and error.
    pub output: String,
}

impl Checker {
    /// The package installed at `$ARBOR_LODESTAR_ROOTS`, else at `<workspace>/target/lodestar-roots`.
    /// Fails, saying how to install it, when it is not there or node is missing.
    pub fn locate() -> Result<Self, String> {
        let dir = match std::env::var_os(DIR_ENV) {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/lodestar-roots"),
        };
        if !dir.join("roots.mjs").is_file() || !dir.join("node_modules/@lodestar/types").is_dir() {
            return Err(format!(
                "the Lodestar roots checker is not installed at {} (run `make test`, or \
                 `make lodestar-roots`, or testing/lodestar_roots/js/install.sh from the workspace \
                 root and set {DIR_ENV}; it needs node >= 20 and npm)",
                dir.display()
            ));
        }
        let node = Command::new("node").arg("--version").output();
        if !matches!(&node, Ok(out) if out.status.success()) {
            return Err(
                "`node` is not on PATH; the Lodestar roots checker needs node >= 20".into(),
            );
        }
        Ok(Self { dir })
    }

    /// The directory of the installed package.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `roots.mjs --schema`: per type, what Lodestar's type can hold (see [`clamp`]).
    pub fn schema(&self, preset: &str, types: &[&str]) -> Result<Value, String> {
        let out = Command::new("node")
            .arg(self.dir.join("roots.mjs"))
            .arg("--schema")
            .arg(preset)
            .args(types)
            .output()
            .map_err(|e| format!("cannot run node: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "roots.mjs --schema failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("roots.mjs --schema output: {e}"))
    }

    /// `roots.mjs <cases>`: checks the cases written there.
    pub fn check(&self, cases: &Path) -> Result<Outcome, String> {
        self.run(&[cases.as_os_str()])
    }

    /// `roots.mjs --vectors <ssz_static> <preset>`: Lodestar's types against the spec tests'
    /// roots (`matched` counts the cases compared; a case with a `uint64` Lodestar cannot hold
    /// exactly is not compared).
    pub fn vectors(&self, ssz_static: &Path, preset: &str) -> Result<Outcome, String> {
        self.run(&[
            "--vectors".as_ref(),
            ssz_static.as_os_str(),
            preset.as_ref(),
        ])
    }

    fn run(&self, args: &[&std::ffi::OsStr]) -> Result<Outcome, String> {
        let out = Command::new("node")
            .arg(self.dir.join("roots.mjs"))
            .args(args)
            .output()
            .map_err(|e| format!("cannot run node: {e}"))?;
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        let summary = output
            .lines()
            .find(|line| line.starts_with("lodestar-roots: "))
            .ok_or_else(|| format!("roots.mjs printed no summary ({}):\n{output}", out.status))?;
        let field = |key: &str| -> Option<usize> {
            summary
                .split_whitespace()
                .find_map(|word| word.strip_prefix(key))
                .and_then(|n| n.parse().ok())
        };
        let need = |key: &str| field(key).ok_or_else(|| format!("no `{key}` in `{summary}`"));
        Ok(Outcome {
            success: out.status.success(),
            checked: need("checked=")?,
            types: need("types=")?,
            mismatches: need("mismatches=")?,
            matched: field("matched="),
            output,
        })
    }
}

/// The largest integer a JS number holds exactly.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Fits `value` (Arbor's JSON of a container) into Lodestar's type, described by `schema`
/// (a node of `roots.mjs --schema`'s output, `null` for nothing to do):
/// `{"c": {key: node}}` a container, `{"l": limit|null, "e": node|null}` a list,
/// `{"v": node}` a vector, `{"b": bits|null}` a bitlist, `{"y": bytes|null}` a byte list (a
/// progressive one also has `"p"`: its element size in bytes, 32 for containers, and a list its
/// zero element `"z"`), `{"n": clip_infinity}` a `uint64` Lodestar holds as a JS number
/// (`null` limit: none). Lists are cut to their limit;
/// such a `uint64` above 2^53 - 1 keeps its low 53 bits (`u64::MAX` stays where Lodestar reads
/// it as infinity). Fails where the JSON does not have the schema's shape.
pub fn clamp(value: &mut Value, schema: &Value) -> Result<(), String> {
    if schema.is_null() {
        return Ok(());
    }
    let node = schema
        .as_object()
        .ok_or_else(|| format!("schema node is not an object: {schema}"))?;
    if let Some(fields) = node.get("c") {
        let fields = fields.as_object().ok_or("schema `c` is not an object")?;
        if !value.is_object() {
            return Err(format!("expected a JSON object, found {}", brief(value)));
        }
        let object = value.as_object_mut().ok_or("not an object")?;
        for (key, sub) in fields {
            let field = object
                .get_mut(key)
                .ok_or_else(|| format!("Arbor's JSON has no field `{key}`"))?;
            clamp(field, sub).map_err(|e| format!("{key}: {e}"))?;
        }
    } else if node.contains_key("l") || node.contains_key("v") {
        if !value.is_array() {
            return Err(format!("expected a JSON array, found {}", brief(value)));
        }
        let items = value.as_array_mut().ok_or("not an array")?;
        if let Some(limit) = node.get("l").and_then(Value::as_u64) {
            items.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        let element = node
            .get("e")
            .or_else(|| node.get("v"))
            .unwrap_or(&Value::Null);
        for (i, item) in items.iter_mut().enumerate() {
            clamp(item, element).map_err(|e| format!("[{i}]: {e}"))?;
        }
    } else if let Some(limit) = node.get("b") {
        if let Some(limit) = limit.as_u64() {
            let bytes = hex_bytes(value)?;
            let cut = cut_bitlist(&bytes, limit).ok_or("not an SSZ bitlist (no delimiter bit)")?;
            *value = Value::String(format!("0x{}", hex_string(&cut)));
        }
    } else if let Some(limit) = node.get("y") {
        if let Some(limit) = limit.as_u64() {
            let mut bytes = hex_bytes(value)?;
            bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
            *value = Value::String(format!("0x{}", hex_string(&bytes)));
        }
    } else if let Some(clip) = node.get("n") {
        let clip_infinity = clip.as_bool().unwrap_or(false);
        let n = match &*value {
            Value::String(text) => text.parse::<u64>().ok(),
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
        .ok_or_else(|| format!("expected a uint64, found {}", brief(value)))?;
        if n > MAX_SAFE_INTEGER && !(clip_infinity && n == u64::MAX) {
            let safe = (n & MAX_SAFE_INTEGER).to_string();
            *value = match value {
                Value::Number(_) => Value::Number((n & MAX_SAFE_INTEGER).into()),
                _ => Value::String(safe),
            };
        }
    } else {
        return Err(format!("unknown schema node {schema}"));
    }
    Ok(())
}

/// The 32-byte chunks of every progressive list in `value` (Arbor's JSON of a container, after
/// [`clamp`]), by path (`field.field[]…`), with the most chunks the schema's limit allows
/// (`None`: no limit), into `out`, keeping the largest seen per path.
pub fn progressive_chunks(
    value: &Value,
    schema: &Value,
    path: &str,
    out: &mut BTreeMap<String, (u64, Option<u64>)>,
) -> Result<(), String> {
    let Some(node) = schema.as_object() else {
        return Ok(());
    };
    let mut note = |chunks: u64, limit_chunks: Option<u64>| {
        let seen = out.entry(path.to_string()).or_insert((0, limit_chunks));
        seen.0 = seen.0.max(chunks);
    };
    let limit = |key: &str| node.get(key).and_then(Value::as_u64);
    let progressive = node.get("p").and_then(Value::as_u64);
    if let Some(fields) = node.get("c").and_then(Value::as_object) {
        for (key, sub) in fields {
            let field = value
                .get(key)
                .ok_or_else(|| format!("Arbor's JSON has no field `{key}`"))?;
            let sub_path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            progressive_chunks(field, sub, &sub_path, out)?;
        }
    } else if node.contains_key("l") || node.contains_key("v") {
        let items = value.as_array().ok_or("expected a JSON array")?;
        if let Some(size) = progressive {
            let chunks = |n: u64| (n * size).div_ceil(32);
            note(chunks(items.len() as u64), limit("l").map(chunks));
        }
        let element = node
            .get("e")
            .or_else(|| node.get("v"))
            .unwrap_or(&Value::Null);
        for item in items {
            progressive_chunks(item, element, &format!("{path}[]"), out)?;
        }
    } else if node.contains_key("b") && progressive.is_some() {
        let bytes = hex_bytes(value)?;
        let last = *bytes.last().ok_or("empty bitlist")?;
        let bits = (bytes.len() as u64 - 1) * 8 + u64::from(7 - last.leading_zeros() as u8);
        note(bits.div_ceil(256), limit("b").map(|l| l.div_ceil(256)));
    } else if node.contains_key("y") && progressive.is_some() {
        let bytes = hex_bytes(value)?;
        note(
            (bytes.len() as u64).div_ceil(32),
            limit("y").map(|l| l.div_ceil(32)),
        );
    }
    Ok(())
}

/// Elements of progressive lists seen in generated values, by path (as
/// [`progressive_chunks`] names them), for [`grow`] to lengthen lists with.
#[derive(Debug, Default)]
pub struct Pool {
    elements: BTreeMap<String, Vec<Value>>,
}

/// Elements kept per path.
const POOL_PER_PATH: usize = 64;

impl Pool {
    /// Adds the elements of every progressive list in `value` (Arbor's JSON, `schema` as in
    /// [`clamp`]), up to a few dozen per path.
    pub fn add(&mut self, value: &Value, schema: &Value, path: &str) {
        let Some(node) = schema.as_object() else {
            return;
        };
        if let Some(fields) = node.get("c").and_then(Value::as_object) {
            for (key, sub) in fields {
                if let Some(field) = value.get(key) {
                    self.add(field, sub, &join(path, key));
                }
            }
        } else if let (Some(items), Some(element)) =
            (value.as_array(), node.get("e").or_else(|| node.get("v")))
        {
            if node.contains_key("p") {
                let pool = self.elements.entry(path.to_string()).or_default();
                for item in items.iter().take(POOL_PER_PATH.saturating_sub(pool.len())) {
                    pool.push(item.clone());
                }
            }
            for item in items {
                self.add(item, element, &format!("{path}[]"));
            }
        }
    }
}

/// Lengthens every progressive list in `value` (Arbor's JSON, `schema` as in [`clamp`]) to
/// `target` chunks, or its limit where that is lower: a list of containers with elements from
/// `pool` (else its own, else the schema's zero element), a list of basic values with copies of
/// its own or zeros, a bitlist or byte list with bits and bytes from `random`.
pub fn grow(
    value: &mut Value,
    schema: &Value,
    path: &str,
    target: u64,
    pool: &Pool,
    random: &mut dyn FnMut() -> u64,
) -> Result<(), String> {
    let Some(node) = schema.as_object() else {
        return Ok(());
    };
    let limit = |key: &str| node.get(key).and_then(Value::as_u64);
    let progressive = node.get("p").and_then(Value::as_u64);
    if let Some(fields) = node.get("c").and_then(Value::as_object) {
        for (key, sub) in fields {
            let field = value
                .get_mut(key)
                .ok_or_else(|| format!("Arbor's JSON has no field `{key}`"))?;
            grow(field, sub, &join(path, key), target, pool, random)?;
        }
    } else if node.contains_key("l") || node.contains_key("v") {
        let items = value.as_array_mut().ok_or("expected a JSON array")?;
        if let Some(size) = progressive {
            // Elements in `target` chunks: 32 / size per chunk.
            let want = (target * 32)
                .div_ceil(size)
                .min(limit("l").unwrap_or(u64::MAX));
            let want = usize::try_from(want).map_err(|e| e.to_string())?;
            let from_pool = pool.elements.get(path).filter(|p| !p.is_empty());
            let own = items.clone();
            while items.len() < want {
                let pick = |from: &[Value], r: u64| from[(r % from.len() as u64) as usize].clone();
                let next = match (from_pool, own.is_empty()) {
                    (Some(p), _) => pick(p, random()),
                    (None, false) => pick(&own, random()),
                    (None, true) => node
                        .get("z")
                        .cloned()
                        .ok_or("no zero element in the schema")?,
                };
                items.push(next);
            }
        }
        let element = node
            .get("e")
            .or_else(|| node.get("v"))
            .unwrap_or(&Value::Null);
        for item in items.iter_mut() {
            grow(item, element, &format!("{path}[]"), target, pool, random)?;
        }
    } else if node.contains_key("b") && progressive.is_some() {
        let bytes = hex_bytes(value)?;
        let last = *bytes.last().ok_or("empty bitlist")?;
        let have = (bytes.len() as u64 - 1) * 8 + u64::from(7 - last.leading_zeros() as u8);
        // Into the last of `target` chunks of 256 bits.
        let want = (target * 256)
            .saturating_sub(100)
            .min(limit("b").unwrap_or(u64::MAX));
        if have < want {
            let bit = |i: u64| bytes[(i / 8) as usize] >> (i % 8) & 1 == 1;
            let mut out = vec![0u8; (want / 8 + 1) as usize];
            for i in 0..want {
                if if i < have { bit(i) } else { random() & 1 == 1 } {
                    out[(i / 8) as usize] |= 1 << (i % 8);
                }
            }
            out[(want / 8) as usize] |= 1 << (want % 8);
            *value = Value::String(format!("0x{}", hex_string(&out)));
        }
    } else if node.contains_key("y") && progressive.is_some() {
        let mut bytes = hex_bytes(value)?;
        let want = (target * 32)
            .saturating_sub(5)
            .min(limit("y").unwrap_or(u64::MAX));
        while (bytes.len() as u64) < want {
            bytes.push(random() as u8);
        }
        *value = Value::String(format!("0x{}", hex_string(&bytes)));
    }
    Ok(())
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The SSZ bytes of a bitlist (delimiter bit after the last bit) holding only its first `limit`
/// bits; `None` when `bytes` has no delimiter.
pub fn cut_bitlist(bytes: &[u8], limit: u64) -> Option<Vec<u8>> {
    let last = *bytes.last()?;
    if last == 0 {
        return None;
    }
    let len = (bytes.len() as u64 - 1) * 8 + u64::from(7 - last.leading_zeros() as u8);
    if len <= limit {
        return Some(bytes.to_vec());
    }
    let bit = |i: u64| bytes[(i / 8) as usize] >> (i % 8) & 1 == 1;
    let mut out = vec![0u8; (limit / 8 + 1) as usize];
    for i in (0..limit).filter(|&i| bit(i)) {
        out[(i / 8) as usize] |= 1 << (i % 8);
    }
    out[(limit / 8) as usize] |= 1 << (limit % 8);
    Some(out)
}

fn hex_bytes(value: &Value) -> Result<Vec<u8>, String> {
    let text = value
        .as_str()
        .and_then(|t| t.strip_prefix("0x"))
        .ok_or_else(|| format!("expected 0x-hex, found {}", brief(value)))?;
    if !text.len().is_multiple_of(2) {
        return Err("odd-length hex".into());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|e| format!("bad hex: {e}")))
        .collect()
}

fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn cuts_lists_and_bitlists_and_narrows_numbers() {
        let schema = json!({"c": {
            "items": {"l": 2, "e": {"c": {"slot": {"n": false}}}},
            "bits": {"b": 3},
            "epoch": {"n": true},
            "max": {"n": true},
            "data": {"y": 1},
            "roots": {"v": {"n": false}},
        }});
        let mut value = json!({
            "items": [{"slot": "18446744073709551615"}, {"slot": "5"}, {"slot": "6"}],
            // bits 1,0,1,1,1 then the delimiter
            "bits": "0x3d",
            "epoch": "9007199254740993",
            "max": "18446744073709551615",
            "data": "0xaabb",
            "roots": ["1", "9007199254740992"],
            "other": "untouched",
        });
        clamp(&mut value, &schema).expect("same shape");
        assert_eq!(
            value,
            json!({
                "items": [{"slot": "9007199254740991"}, {"slot": "5"}],
                // bits 1,0,1 then the delimiter
                "bits": "0x0d",
                "epoch": "1",
                "max": "18446744073709551615",
                "data": "0xaa",
                "roots": ["1", "0"],
                "other": "untouched",
            })
        );
    }

    #[test]
    fn bitlist_within_its_limit_is_unchanged() {
        assert_eq!(cut_bitlist(&[0x01], 0), Some(vec![0x01]));
        assert_eq!(cut_bitlist(&[0xff, 0x01], 8), Some(vec![0xff, 0x01]));
        assert_eq!(cut_bitlist(&[0xff, 0x01], 4), Some(vec![0x1f]));
        assert_eq!(cut_bitlist(&[0xff, 0x00], 4), None);
    }

    #[test]
    fn grows_lists_to_the_target_within_limits() {
        let zero = json!({"slot": "0"});
        let schema = json!({"c": {
            "items": {"l": null, "e": null, "p": 32, "z": zero},
            "few": {"l": 3, "e": null, "p": 32, "z": zero},
            "indices": {"l": null, "e": {"n": false}, "p": 8, "z": "0"},
            "bits": {"b": null, "p": 1},
            "bytes": {"y": null, "p": 1},
        }});
        let mut value = json!({
            "items": [], "few": [{"slot": "4"}], "indices": ["7"], "bits": "0x01", "bytes": "0x",
        });
        let mut pool = Pool::default();
        pool.add(&json!({"items": [{"slot": "9"}], "few": [], "indices": [], "bits": "0x01", "bytes": "0x"}), &schema, "");
        let mut n = 0u64;
        grow(&mut value, &schema, "", 22, &pool, &mut || {
            n += 1;
            n
        })
        .expect("same shape");
        let mut chunks = BTreeMap::new();
        progressive_chunks(&value, &schema, "", &mut chunks).expect("same shape");
        assert_eq!(value["items"].as_array().map(Vec::len), Some(22));
        assert_eq!(value["items"][0], json!({"slot": "9"}));
        assert_eq!(value["few"].as_array().map(Vec::len), Some(3));
        assert_eq!(value["few"][1], json!({"slot": "4"}));
        assert_eq!(value["indices"].as_array().map(Vec::len), Some(88));
        assert_eq!(chunks["items"], (22, None));
        assert_eq!(chunks["few"], (3, Some(3)));
        assert_eq!(chunks["indices"], (22, None));
        assert_eq!(chunks["bits"], (22, None));
        assert_eq!(chunks["bytes"], (22, None));
    }

    #[test]
    fn missing_field_is_an_error() {
        let schema = json!({"c": {"slot": {"n": false}}});
        assert!(clamp(&mut json!({"epoch": "1"}), &schema).is_err());
    }
}
