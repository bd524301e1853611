//! Reading vector files: snappy-compressed SSZ, YAML, text, hex.
//!
//! Every read is recorded for the case running on the thread ([`track_reads`]): the harness
//! fails a case that passed without reading every file of its directory (the accessed-files
//! check), so a runner cannot pass a case while ignoring part of it.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

thread_local! {
    /// The files read on this thread since [`track_reads`] began, while it runs.
    static READ: RefCell<Option<BTreeSet<PathBuf>>> = const { RefCell::new(None) };
}

/// Runs `f` and returns what it returned with the files read (through this module) meanwhile.
pub fn track_reads<T>(f: impl FnOnce() -> T) -> (T, BTreeSet<PathBuf>) {
    READ.with(|read| *read.borrow_mut() = Some(BTreeSet::new()));
    let out = f();
    let read = READ
        .with(|read| read.borrow_mut().take())
        .unwrap_or_default();
    (out, read)
}

/// Records that `path` was read, when reads are being tracked on this thread.
fn note_read(path: &Path) {
    READ.with(|read| {
        if let Some(set) = read.borrow_mut().as_mut() {
            set.insert(path.to_path_buf());
        }
    });
}

/// Reads a `.ssz_snappy` file: SSZ bytes compressed with snappy's *block* format (not framed).
pub fn read_ssz_snappy(path: &Path) -> Result<Vec<u8>, String> {
    let compressed = read_bytes(path)?;
    snap::raw::Decoder::new()
        .decompress_vec(&compressed)
        .map_err(|e| format!("{}: bad snappy block: {e}", path.display()))
}

/// Reads a YAML file into `T`.
pub fn read_yaml<T: DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = read_text(path)?;
    serde_yaml::from_str(&text).map_err(|e| format!("{}: bad YAML: {e}", path.display()))
}

/// Reads a UTF-8 text file.
pub fn read_text(path: &Path) -> Result<String, String> {
    note_read(path);
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Reads a file's bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    note_read(path);
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Decodes a `0x`-prefixed hex string.
pub fn decode_hex(s: &str) -> Result<Vec<u8>, String> {
    let digits = s
        .strip_prefix("0x")
        .ok_or_else(|| format!("hex string {s:?} lacks the 0x prefix"))?;
    hex::decode(digits).map_err(|e| format!("bad hex {s:?}: {e}"))
}

/// Decodes a `0x`-prefixed hex string of exactly 32 bytes (a root, a seed).
pub fn decode_hex32(s: &str) -> Result<[u8; 32], String> {
    let bytes = decode_hex(s)?;
    <[u8; 32]>::try_from(bytes.as_slice())
        .map_err(|_| format!("expected 32 bytes, got {} in {s:?}", bytes.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_hex_roots_and_rejects_bad_ones() {
        let root = format!("0x{}", "ab".repeat(32));
        assert_eq!(decode_hex32(&root), Ok([0xab; 32]));
        assert!(decode_hex32("0xabcd").is_err());
        assert!(decode_hex32(&"ab".repeat(32)).is_err());
        assert!(decode_hex("0xzz").is_err());
        assert_eq!(decode_hex("0x"), Ok(vec![]));
    }
}
