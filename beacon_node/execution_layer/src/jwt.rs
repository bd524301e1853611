//! Engine API authentication: HS256 JWTs over a 32-byte shared secret kept as hex in a file.
//!
//! Tokens carry only `iat`; the server accepts an `iat` within ±60 s of its clock. The client
//! makes a fresh token per request, so clock skew is the only way to fail the window.
//!
//! [spec]: https://github.com/ethereum/execution-apis/blob/main/src/engine/authentication.md

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The window either side of the server's clock in which an `iat` is accepted.
pub const IAT_WINDOW_SECS: u64 = 60;

/// Why a secret or a token was rejected.
#[derive(Debug, thiserror::Error)]
pub enum JwtError {
    /// The secret file could not be read or written.
    #[error("JWT secret file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The secret is not 32 bytes of hex.
    #[error("JWT secret is not 32 bytes of hex: {0}")]
    BadSecret(String),
    /// No `Authorization: Bearer …` header.
    #[error("missing bearer token")]
    MissingToken,
    /// Not three base64url parts, or undecodable header or claims.
    #[error("malformed token: {0}")]
    Malformed(&'static str),
    /// The algorithm is not HS256.
    #[error("unsupported algorithm (only HS256)")]
    UnsupportedAlgorithm,
    /// The signature does not match the secret.
    #[error("signature does not match")]
    BadSignature,
    /// `iat` outside the window.
    #[error("iat {iat} is more than {IAT_WINDOW_SECS}s from now ({now})")]
    StaleIat {
        /// The token's `iat`.
        iat: u64,
        /// The server's clock.
        now: u64,
    },
}

/// A 32-byte HS256 secret shared by the consensus and execution clients.
#[derive(Clone, PartialEq, Eq)]
pub struct JwtSecret([u8; 32]);

impl std::fmt::Debug for JwtSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JwtSecret(..)")
    }
}

impl JwtSecret {
    /// A secret from its 32 bytes.
    pub const fn new(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A fresh random secret from the thread-local CSPRNG (seeded by the OS).
    pub fn random() -> Self {
        Self(rand::random())
    }

    /// Parses 64 hex digits, with or without `0x`, surrounding whitespace ignored.
    pub fn from_hex(text: &str) -> Result<Self, JwtError> {
        let text = text.trim();
        let digits = text.strip_prefix("0x").unwrap_or(text);
        let mut out = [0u8; 32];
        alloy_primitives::hex::decode_to_slice(digits, &mut out)
            .map_err(|e| JwtError::BadSecret(e.to_string()))?;
        Ok(Self(out))
    }

    /// The secret as 64 lowercase hex digits (no prefix), as other clients write it.
    pub fn to_hex(&self) -> String {
        alloy_primitives::hex::encode(self.0)
    }

    /// Reads the secret from `path`; when the file does not exist, generates one and writes it
    /// there (as other clients do).
    pub fn load_or_generate(path: &Path) -> Result<Self, JwtError> {
        let io = |source| JwtError::Io {
            path: path.display().to_string(),
            source,
        };
        match std::fs::read_to_string(path) {
            Ok(text) => Self::from_hex(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let secret = Self::random();
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(io)?;
                }
                std::fs::write(path, secret.to_hex()).map_err(io)?;
                Ok(secret)
            }
            Err(e) => Err(io(e)),
        }
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    /// A token with `iat` = `iat`.
    pub fn token_at(&self, iat: u64) -> String {
        // {"alg":"HS256","typ":"JWT"}
        let header = base64url_encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let claims = base64url_encode(format!(r#"{{"iat":{iat}}}"#).as_bytes());
        let signing_input = format!("{header}.{claims}");
        let mut mac = self.mac();
        mac.update(signing_input.as_bytes());
        let signature = base64url_encode(&mac.finalize().into_bytes());
        format!("{signing_input}.{signature}")
    }

    /// A token issued now.
    pub fn token(&self) -> String {
        self.token_at(unix_now())
    }

    /// Checks a token: HS256, signed with this secret, `iat` within ±60 s of `now`.
    pub fn validate_at(&self, token: &str, now: u64) -> Result<(), JwtError> {
        let mut parts = token.split('.');
        let (Some(header), Some(claims), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwtError::Malformed("not three dot-separated parts"));
        };
        let header_json =
            base64url_decode(header).ok_or(JwtError::Malformed("header is not base64url"))?;
        let header: serde_json::Value = serde_json::from_slice(&header_json)
            .map_err(|_| JwtError::Malformed("header is not JSON"))?;
        if header.get("alg").and_then(|a| a.as_str()) != Some("HS256") {
            return Err(JwtError::UnsupportedAlgorithm);
        }
        let signature =
            base64url_decode(signature).ok_or(JwtError::Malformed("signature is not base64url"))?;
        let mut mac = self.mac();
        let (signing_input, _) = token
            .rsplit_once('.')
            .ok_or(JwtError::Malformed("no signature"))?;
        mac.update(signing_input.as_bytes());
        mac.verify_slice(&signature)
            .map_err(|_| JwtError::BadSignature)?;
        let claims_json =
            base64url_decode(claims).ok_or(JwtError::Malformed("claims are not base64url"))?;
        let claims: serde_json::Value = serde_json::from_slice(&claims_json)
            .map_err(|_| JwtError::Malformed("claims are not JSON"))?;
        let iat = claims
            .get("iat")
            .and_then(|i| i.as_u64())
            .ok_or(JwtError::Malformed("no integer iat claim"))?;
        if iat.abs_diff(now) > IAT_WINDOW_SECS {
            return Err(JwtError::StaleIat { iat, now });
        }
        Ok(())
    }

    /// [`Self::validate_at`] against the system clock.
    pub fn validate(&self, token: &str) -> Result<(), JwtError> {
        self.validate_at(token, unix_now())
    }

    /// Checks an `Authorization` header value (`Bearer <token>`).
    pub fn validate_authorization(&self, header: Option<&str>) -> Result<(), JwtError> {
        let token = header
            .and_then(|h| h.strip_prefix("Bearer "))
            .ok_or(JwtError::MissingToken)?;
        self.validate(token.trim())
    }
}

/// Seconds since the Unix epoch by the system clock.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64url without padding (RFC 7515 §2).
fn base64url_encode(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(char::from(BASE64URL[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// Decodes base64url without padding; `None` on any other character or an impossible length.
fn base64url_decode(input: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        } as u32)
    };
    if input.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    for chunk in input.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips() {
        for len in 0..20 {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let encoded = base64url_encode(&data);
            assert!(!encoded.contains('='));
            assert_eq!(base64url_decode(&encoded), Some(data));
        }
        assert_eq!(base64url_encode(b"{\"iat\":1}"), "eyJpYXQiOjF9");
        assert_eq!(base64url_decode("a"), None);
        assert_eq!(base64url_decode("ab+/"), None);
    }

    #[test]
    fn accepts_fresh_tokens_and_rejects_stale_forged_or_foreign_ones() {
        let secret = JwtSecret::new([7; 32]);
        let now = 1_700_000_000;
        assert!(secret.validate_at(&secret.token_at(now), now).is_ok());
        assert!(secret.validate_at(&secret.token_at(now - 60), now).is_ok());
        assert!(secret.validate_at(&secret.token_at(now + 60), now).is_ok());
        assert!(matches!(
            secret.validate_at(&secret.token_at(now - 61), now),
            Err(JwtError::StaleIat { .. })
        ));
        assert!(matches!(
            secret.validate_at(&secret.token_at(now + 61), now),
            Err(JwtError::StaleIat { .. })
        ));
        let other = JwtSecret::new([8; 32]);
        assert!(matches!(
            secret.validate_at(&other.token_at(now), now),
            Err(JwtError::BadSignature)
        ));
        let token = secret.token_at(now);
        let forged = token.replacen("eyJpYXQiOj", "eyJpYXQiOk", 1);
        assert!(secret.validate_at(&forged, now).is_err());
        assert!(matches!(
            secret.validate_at("a.b", now),
            Err(JwtError::Malformed(_))
        ));
        assert!(matches!(
            secret.validate_authorization(None),
            Err(JwtError::MissingToken)
        ));
    }

    #[test]
    fn token_matches_an_independent_hs256_vector() {
        // HMAC-SHA256 over "header.claims" with key 0x07*32, computed with Python's hmac module.
        let secret = JwtSecret::new([7; 32]);
        let token = secret.token_at(1_700_000_000);
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts[0], "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9");
        assert_eq!(parts[1], "eyJpYXQiOjE3MDAwMDAwMDB9");
        assert_eq!(parts[2], EXPECTED_SIGNATURE);
    }

    const EXPECTED_SIGNATURE: &str = "q7vdxvYJozZ6UoScEnMgFSivYb-nzMGBXN-k-GD5t_8";

    #[test]
    fn secret_file_is_generated_when_absent_and_read_back() {
        let dir = std::env::temp_dir().join(format!("arbor-jwt-test-{}", std::process::id()));
        let path = dir.join("jwt.hex");
        let _ = std::fs::remove_file(&path);
        let generated = JwtSecret::load_or_generate(&path).expect("generated");
        let text = std::fs::read_to_string(&path).expect("written");
        assert_eq!(text.len(), 64);
        assert_eq!(JwtSecret::load_or_generate(&path).expect("read"), generated);
        std::fs::write(&path, format!("0x{}\n", "ab".repeat(32))).expect("write");
        assert_eq!(
            JwtSecret::load_or_generate(&path).expect("read"),
            JwtSecret::new([0xab; 32])
        );
        std::fs::write(&path, "0x1234").expect("write");
        assert!(matches!(
            JwtSecret::load_or_generate(&path),
            Err(JwtError::BadSecret(_))
        ));
        std::fs::remove_dir_all(&dir).ok();
    }
}
