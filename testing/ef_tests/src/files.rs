//! Reading vector files: snappy-compressed SSZ, YAML, hex.

use std::path::Path;

use serde::de::DeserializeOwned;

/// Reads a `.ssz_snappy` file: SSZ bytes compressed with snappy's *block* format (not framed).
pub fn read_ssz_snappy(path: &Path) -> Result<Vec<u8>, String> {
    let compressed = read_bytes(path)?;
    snap::raw::Decoder::new()
        .decompress_vec(&compressed)
        .map_err(|e| format!("{}: bad snappy block: {e}", path.display()))
}

/// Reads a YAML file into `T`.
pub fn read_yaml<T: DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_yaml::from_str(&text).map_err(|e| format!("{}: bad YAML: {e}", path.display()))
}

/// Reads a file's bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
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
