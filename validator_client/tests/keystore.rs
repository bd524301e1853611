//! The EIP-2335 test vectors (ethereum/ERCs ERCS/erc-2335.md, "Test Cases"), and the errors a
//! wrong password or a malformed keystore give.

use std::path::PathBuf;

use validator_client::keystore::{Keystore, KeystoreError, load_keystore_dir, normalize_password};

/// The vectors' password: mathematical fraktur letters and a key emoji.
const PASSWORD: &str = "\u{1d531}\u{1d522}\u{1d530}\u{1d531}\u{1d52d}\u{1d51e}\u{1d530}\u{1d530}\u{1d534}\u{1d52c}\u{1d52f}\u{1d521}\u{1f511}";
const SECRET: &str = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn the_vectors_password_normalizes_to_its_published_encoding() {
    assert_eq!(
        hex::encode(normalize_password(PASSWORD)),
        "7465737470617373776f7264f09f9491"
    );
    // C0, C1 and Delete are stripped; space is kept.
    assert_eq!(
        normalize_password("a\u{0}b\u{1f}c\u{7f}d\u{80}e\u{9f} f"),
        b"abcde f"
    );
}

#[test]
fn scrypt_vector_decrypts() {
    let keystore = Keystore::from_file(&fixture("eip2335_scrypt.json")).expect("parses");
    let secret = keystore.decrypt(PASSWORD).expect("decrypts");
    assert_eq!(hex::encode(secret.to_bytes()), SECRET);
}

#[test]
fn pbkdf2_vector_decrypts() {
    let keystore = Keystore::from_file(&fixture("eip2335_pbkdf2.json")).expect("parses");
    let secret = keystore.decrypt(PASSWORD).expect("decrypts");
    assert_eq!(hex::encode(secret.to_bytes()), SECRET);
}

#[test]
fn a_wrong_password_names_the_file() {
    let path = fixture("eip2335_pbkdf2.json");
    let keystore = Keystore::from_file(&path).expect("parses");
    let err = keystore
        .decrypt("testpassword")
        .expect_err("wrong password");
    assert!(matches!(err, KeystoreError::WrongPassword { .. }), "{err}");
    assert!(err.to_string().contains("eip2335_pbkdf2.json"), "{err}");
}

#[test]
fn malformed_keystores_are_typed_errors_naming_the_file() {
    let valid = std::fs::read_to_string(fixture("eip2335_pbkdf2.json")).expect("fixture");
    let cases = [
        ("not json", "{".to_string()),
        (
            "version 3",
            valid.replace("\"version\": 4", "\"version\": 3"),
        ),
        ("unknown kdf", valid.replace("\"pbkdf2\"", "\"argon2\"")),
        (
            "bad hex",
            valid.replace("264daa3f303d7259501c93d997d84fe6", "zz"),
        ),
        ("huge c", valid.replace("262144", "99999999999")),
        (
            "short dklen",
            valid.replace("\"dklen\": 32", "\"dklen\": 16"),
        ),
        (
            "missing checksum",
            valid.replace("\"checksum\"", "\"checksun\""),
        ),
    ];
    for (what, text) in cases {
        let path = format!("/keys/{}.json", what.replace(' ', "_"));
        let err = Keystore::from_json_str(&text, &path)
            .and_then(|k| k.decrypt(PASSWORD))
            .expect_err(what);
        assert!(
            matches!(
                err,
                KeystoreError::Malformed { .. } | KeystoreError::Unsupported { .. }
            ),
            "{what}: {err}"
        );
        assert!(err.to_string().contains(&path), "{what}: {err}");
    }
}

#[test]
fn a_directory_of_keystores_loads_with_its_password_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let keys = dir.path().join("validators");
    std::fs::create_dir_all(keys.join("nested")).expect("mkdir");
    std::fs::copy(fixture("eip2335_pbkdf2.json"), keys.join("a.json")).expect("copy");
    std::fs::copy(fixture("eip2335_scrypt.json"), keys.join("nested/b.json")).expect("copy");
    std::fs::write(keys.join("README"), "not a keystore").expect("write");
    let password = dir.path().join("password.txt");
    std::fs::write(&password, format!("{PASSWORD}\n")).expect("write");
    let loaded = load_keystore_dir(&keys, &password).expect("loads");
    assert_eq!(loaded.len(), 2);
    assert!(loaded.iter().all(|k| hex::encode(k.to_bytes()) == SECRET));

    std::fs::write(&password, "wrong\n").expect("write");
    let err = load_keystore_dir(&keys, &password).expect_err("wrong password");
    assert!(err.to_string().contains("a.json"), "{err}");
    let err = load_keystore_dir(&dir.path().join("absent"), &password).expect_err("no dir");
    assert!(matches!(err, KeystoreError::Io { .. }), "{err}");
}
