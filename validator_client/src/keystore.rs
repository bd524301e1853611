//! EIP-2335 BLS12-381 keystores: decryption with the scrypt or PBKDF2-SHA-256 key derivation,
//! the SHA-256 checksum and AES-128-CTR.
//!
//! [spec]: ERC-2335 (ethereum/ERCs ERCS/erc-2335.md)

use std::path::{Path, PathBuf};

use aes::cipher::{KeyIvInit, StreamCipher};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

/// The largest scrypt `n` accepted (2^20, 1 GiB at `r = 8`): a keystore must not be able to
/// make the client allocate without bound.
pub const MAX_SCRYPT_N: u64 = 1 << 20;

/// The largest PBKDF2 iteration count accepted.
pub const MAX_PBKDF2_C: u64 = 1 << 24;

/// Why a keystore could not be used; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum KeystoreError {
    /// The file or directory could not be read.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        message: String,
    },
    /// The JSON is not a keystore.
    #[error("{}: malformed keystore: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A function or parameter the standard does not define, or out of bounds.
    #[error("{}: unsupported keystore: {reason}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What is unsupported.
        reason: String,
    },
    /// The checksum does not match: the password is wrong.
    #[error("{}: wrong password (checksum mismatch)", path.display())]
    WrongPassword {
        /// The file.
        path: PathBuf,
    },
    /// The decrypted secret is not a BLS secret key, or not the keystore's `pubkey`'s.
    #[error("{}: {reason}", path.display())]
    BadSecret {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

#[derive(Debug, Deserialize)]
struct KeystoreJson {
    crypto: Crypto,
    #[serde(default)]
    pubkey: Option<String>,
    version: u64,
}

#[derive(Debug, Deserialize)]
struct Crypto {
    kdf: Module,
    checksum: Module,
    cipher: Module,
}

#[derive(Debug, Deserialize)]
struct Module {
    function: String,
    params: serde_json::Value,
    message: String,
}

#[derive(Debug, Deserialize)]
struct ScryptParams {
    dklen: u64,
    n: u64,
    r: u64,
    p: u64,
    salt: String,
}

#[derive(Debug, Deserialize)]
struct Pbkdf2Params {
    dklen: u64,
    c: u64,
    prf: String,
    salt: String,
}

#[derive(Debug, Deserialize)]
struct AesParams {
    iv: String,
}

/// An EIP-2335 keystore, parsed and checked for shape, not yet decrypted.
#[derive(Debug)]
pub struct Keystore {
    path: PathBuf,
    json: KeystoreJson,
}

/// The password as the standard hashes it: NFKD, with the C0 (`0x00`–`0x1F`), C1
/// (`0x80`–`0x9F`) and Delete (`0x7F`) control codes removed, UTF-8 encoded.
///
/// [spec]: ERC-2335 #password-requirements
pub fn normalize_password(password: &str) -> Vec<u8> {
    password
        .nfkd()
        .filter(|c| {
            let code = u32::from(*c);
            !(code <= 0x1f || code == 0x7f || (0x80..=0x9f).contains(&code))
        })
        .collect::<String>()
        .into_bytes()
}

impl Keystore {
    /// Parses the keystore JSON `text` read from `path` (used in errors).
    pub fn from_json_str(text: &str, path: impl Into<PathBuf>) -> Result<Self, KeystoreError> {
        let path = path.into();
        let json: KeystoreJson =
            serde_json::from_str(text).map_err(|e| KeystoreError::Malformed {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        if json.version != 4 {
            return Err(KeystoreError::Unsupported {
                path,
                reason: format!("version {} (expected 4)", json.version),
            });
        }
        Ok(Self { path, json })
    }

    /// Reads and parses the keystore file at `path`.
    pub fn from_file(path: &Path) -> Result<Self, KeystoreError> {
        let text = std::fs::read_to_string(path).map_err(|e| KeystoreError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Self::from_json_str(&text, path)
    }

    /// The file the keystore came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn malformed(&self, reason: impl Into<String>) -> KeystoreError {
        KeystoreError::Malformed {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    fn unsupported(&self, reason: impl Into<String>) -> KeystoreError {
        KeystoreError::Unsupported {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    fn hex(&self, field: &str, text: &str) -> Result<Vec<u8>, KeystoreError> {
        hex::decode(text.strip_prefix("0x").unwrap_or(text))
            .map_err(|e| self.malformed(format!("{field} is not hex: {e}")))
    }

    fn params<T: serde::de::DeserializeOwned>(&self, module: &Module) -> Result<T, KeystoreError> {
        serde_json::from_value(module.params.clone())
            .map_err(|e| self.malformed(format!("{} params: {e}", module.function)))
    }

    /// The decryption key: the KDF module's function over the normalized password.
    fn decryption_key(&self, password: &[u8]) -> Result<Vec<u8>, KeystoreError> {
        let kdf = &self.json.crypto.kdf;
        match kdf.function.as_str() {
            "scrypt" => {
                let p: ScryptParams = self.params(kdf)?;
                let salt = self.hex("kdf salt", &p.salt)?;
                let dklen = self.dklen(p.dklen)?;
                if !p.n.is_power_of_two() || p.n < 2 || p.n > MAX_SCRYPT_N {
                    return Err(self.unsupported(format!(
                        "scrypt n = {} (a power of two from 2 to {MAX_SCRYPT_N})",
                        p.n
                    )));
                }
                let r = u32::try_from(p.r).map_err(|_| self.unsupported("scrypt r too large"))?;
                let par = u32::try_from(p.p).map_err(|_| self.unsupported("scrypt p too large"))?;
                let params = scrypt::Params::new(p.n.trailing_zeros() as u8, r, par, dklen)
                    .map_err(|e| self.unsupported(format!("scrypt params: {e}")))?;
                let mut key = vec![0u8; dklen];
                scrypt::scrypt(password, &salt, &params, &mut key)
                    .map_err(|e| self.unsupported(format!("scrypt: {e}")))?;
                Ok(key)
            }
            "pbkdf2" => {
                let p: Pbkdf2Params = self.params(kdf)?;
                if p.prf != "hmac-sha256" {
                    return Err(self.unsupported(format!("pbkdf2 prf {:?}", p.prf)));
                }
                if p.c == 0 || p.c > MAX_PBKDF2_C {
                    return Err(
                        self.unsupported(format!("pbkdf2 c = {} (1 to {MAX_PBKDF2_C})", p.c))
                    );
                }
                let salt = self.hex("kdf salt", &p.salt)?;
                let mut key = vec![0u8; self.dklen(p.dklen)?];
                pbkdf2::pbkdf2_hmac::<Sha256>(password, &salt, p.c as u32, &mut key);
                Ok(key)
            }
            other => Err(self.unsupported(format!("kdf function {other:?}"))),
        }
    }

    fn dklen(&self, dklen: u64) -> Result<usize, KeystoreError> {
        // The checksum reads bytes 16..32 and the cipher 0..16.
        if !(32..=64).contains(&dklen) {
            return Err(self.unsupported(format!("dklen {dklen} (32 to 64)")));
        }
        Ok(dklen as usize)
    }

    /// Decrypts the secret with `password` (normalized here), checking the checksum first.
    pub fn decrypt(&self, password: &str) -> Result<bls::SecretKey, KeystoreError> {
        let crypto = &self.json.crypto;
        if crypto.checksum.function != "sha256" {
            return Err(
                self.unsupported(format!("checksum function {:?}", crypto.checksum.function))
            );
        }
        if crypto.cipher.function != "aes-128-ctr" {
            return Err(self.unsupported(format!("cipher function {:?}", crypto.cipher.function)));
        }
        let cipher_message = self.hex("cipher message", &crypto.cipher.message)?;
        let checksum_message = self.hex("checksum message", &crypto.checksum.message)?;
        let aes: AesParams = self.params(&crypto.cipher)?;
        let iv = self.hex("cipher iv", &aes.iv)?;
        if iv.len() != 16 {
            return Err(self.malformed(format!("cipher iv is {} bytes, not 16", iv.len())));
        }

        let key = self.decryption_key(&normalize_password(password))?;
        let mut pre_image = key[16..32].to_vec();
        pre_image.extend_from_slice(&cipher_message);
        if Sha256::digest(&pre_image).as_slice() != checksum_message.as_slice() {
            return Err(KeystoreError::WrongPassword {
                path: self.path.clone(),
            });
        }

        let mut secret = cipher_message;
        let mut cipher = ctr::Ctr128BE::<aes::Aes128>::new(key[..16].into(), iv.as_slice().into());
        cipher.apply_keystream(&mut secret);
        let secret_key =
            bls::SecretKey::from_bytes(&secret).map_err(|e| KeystoreError::BadSecret {
                path: self.path.clone(),
                reason: format!("the decrypted secret is not a BLS secret key: {e:?}"),
            })?;
        if let Some(pubkey) = &self.json.pubkey {
            let expected = self.hex("pubkey", pubkey)?;
            let actual = secret_key.public_key().compress();
            if actual.as_bytes().as_slice() != expected.as_slice() {
                return Err(KeystoreError::BadSecret {
                    path: self.path.clone(),
                    reason: "the decrypted secret is not the key of the keystore's pubkey".into(),
                });
            }
        }
        Ok(secret_key)
    }
}

/// Reads the password file: its text with trailing line breaks removed.
pub fn read_password_file(path: &Path) -> Result<String, KeystoreError> {
    let text = std::fs::read_to_string(path).map_err(|e| KeystoreError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(text.trim_end_matches(['\n', '\r']).to_string())
}

/// Decrypts every `*.json` keystore in `dir` (recursively, in path order) with the password
/// in `password_file`.
pub fn load_keystore_dir(
    dir: &Path,
    password_file: &Path,
) -> Result<Vec<bls::SecretKey>, KeystoreError> {
    let password = read_password_file(password_file)?;
    let mut files = Vec::new();
    collect_json_files(dir, &mut files)?;
    files.sort();
    files
        .iter()
        .map(|path| Keystore::from_file(path)?.decrypt(&password))
        .collect()
}

fn collect_json_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), KeystoreError> {
    let io = |e: std::io::Error| KeystoreError::Io {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            collect_json_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}
