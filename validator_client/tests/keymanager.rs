//! The keymanager API over HTTP: the bearer token, listing, importing (with slashing
//! protection data), duplicates, deleting (with the exported history) and read-only keys.
#![allow(clippy::unwrap_used, reason = "a test; a failure is the test failing")]

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};
use slashing_protection::{NotSafe, SlashingDatabase};
use state_processing::genesis::interop_secret_key;
use types::{BLSPubkey, ChainSpec, ForkName, Root};
use validator_client::keymanager::{KEYMANAGER_DIR, KeymanagerConfig, serve};
use validator_client::signing::{SigningContext, ValidatorKey};
use validator_client::validator_store::{SignError, ValidatorStore};

const GVR: Root = Root::repeat_byte(0x42);
const PASSWORD: &str = "\u{1d531}\u{1d522}\u{1d530}\u{1d531}\u{1d52d}\u{1d51e}\u{1d530}\u{1d530}\u{1d534}\u{1d52c}\u{1d52f}\u{1d521}\u{1f511}";
const VECTOR_PUBKEY: &str = "0x9612d7a727c9d0a22e185a1c768478dfe919cada9266988cb32359c11f2b7b27f4ae4040902382ae2910c15e2b420d07";

struct Setup {
    _dir: tempfile::TempDir,
    datadir: std::path::PathBuf,
    store: Arc<ValidatorStore>,
    url: String,
    token: String,
    client: reqwest::Client,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().to_path_buf();
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    let db = SlashingDatabase::open_or_create(datadir.join("sp.redb"), GVR).unwrap();
    let readonly_key = ValidatorKey::new(interop_secret_key(0));
    let readonly = BTreeSet::from([readonly_key.pubkey()]);
    let store = Arc::new(
        ValidatorStore::new(
            vec![readonly_key],
            db,
            SigningContext::new(Arc::new(spec), GVR),
            true,
        )
        .unwrap(),
    );
    let config = KeymanagerConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        token_file: datadir.join("api-token.txt"),
    };
    let (addr, server) = serve(Arc::clone(&store), &config, &datadir, readonly)
        .await
        .unwrap();
    tokio::spawn(server);
    let token = std::fs::read_to_string(datadir.join("api-token.txt")).unwrap();
    assert_eq!(token.len(), 64, "32 random bytes in hex");
    Setup {
        _dir: dir,
        datadir,
        store,
        url: format!("http://{addr}/eth/v1/keystores"),
        token,
        client: reqwest::Client::new(),
    }
}

impl Setup {
    async fn send(&self, method: reqwest::Method, body: Option<Value>) -> (StatusCode, Value) {
        let mut request = self
            .client
            .request(method, &self.url)
            .header("Authorization", format!("Bearer {}", self.token));
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap())
    }
}

fn vector_keystore() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/eip2335_pbkdf2.json"),
    )
    .unwrap()
}

fn interchange_with_block(pubkey: &str, slot: u64) -> String {
    json!({
        "metadata": {
            "interchange_format_version": "5",
            "genesis_validators_root": GVR.to_string(),
        },
        "data": [{
            "pubkey": pubkey,
            "signed_blocks": [{"slot": slot.to_string()}],
            "signed_attestations": [],
        }],
    })
    .to_string()
}

#[tokio::test]
async fn requests_need_the_bearer_token() {
    let s = setup().await;
    let response = s.client.get(&s.url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = s
        .client
        .get(&s.url)
        .header("Authorization", "Bearer 00")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let (status, body) = s.send(reqwest::Method::GET, None).await;
    assert_eq!(status, StatusCode::OK);
    let keys = body["data"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["readonly"], json!(true));
}

#[tokio::test]
async fn import_then_delete_a_keystore_with_its_history() {
    let s = setup().await;
    let vector: BLSPubkey = VECTOR_PUBKEY.parse().unwrap();
    let (status, body) = s
        .send(
            reqwest::Method::POST,
            Some(json!({
                "keystores": [vector_keystore(), vector_keystore(), "{}"],
                "passwords": [PASSWORD, "wrong", PASSWORD],
                "slashing_protection": interchange_with_block(VECTOR_PUBKEY, 100),
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let statuses: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["imported", "error", "error"]);
    assert!(s.store.contains(&vector));
    assert!(
        s.datadir
            .join(KEYMANAGER_DIR)
            .join(format!("{vector}.json"))
            .exists()
    );
    // The imported history holds: slot 100 and below are refused.
    let db = s.store.slashing_protection();
    assert!(matches!(
        db.check_and_insert_block_proposal(&vector, 100, Root::repeat_byte(1)),
        Err(NotSafe::BlockSlotNotAboveWatermark { .. })
    ));
    // The same keystore again is a duplicate.
    let (_, body) = s
        .send(
            reqwest::Method::POST,
            Some(json!({"keystores": [vector_keystore()], "passwords": [PASSWORD]})),
        )
        .await;
    assert_eq!(body["data"][0]["status"], json!("duplicate"));

    let readonly = s
        .store
        .pubkeys()
        .into_iter()
        .find(|p| *p != vector)
        .unwrap();
    let unknown = BLSPubkey::repeat_byte(7);
    let (status, body) = s
        .send(
            reqwest::Method::DELETE,
            Some(
                json!({"pubkeys": [vector.to_string(), unknown.to_string(), readonly.to_string()]}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let statuses: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["deleted", "not_found", "error"]);
    // The key signs nothing more, and its history came back.
    assert!(!s.store.contains(&vector));
    let data = types::phase0::AttestationData {
        slot: 1,
        index: 0,
        beacon_block_root: Root::ZERO,
        source: types::phase0::Checkpoint {
            epoch: 0,
            root: Root::ZERO,
        },
        target: types::phase0::Checkpoint {
            epoch: 1,
            root: Root::ZERO,
        },
    };
    assert!(matches!(
        s.store.sign_attestation(&vector, 9, 0, data),
        Err(SignError::UnknownValidator(_))
    ));
    assert!(
        !s.datadir
            .join(KEYMANAGER_DIR)
            .join(format!("{vector}.json"))
            .exists()
    );
    let exported: Value =
        serde_json::from_str(body["slashing_protection"].as_str().unwrap()).unwrap();
    assert_eq!(exported["data"][0]["pubkey"], json!(VECTOR_PUBKEY));
    assert!(
        exported["data"][0]["signed_blocks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["slot"] == json!("100"))
    );
    // Deleted again: no longer active, its history still returned.
    let (_, body) = s
        .send(
            reqwest::Method::DELETE,
            Some(json!({"pubkeys": [vector.to_string()]})),
        )
        .await;
    assert_eq!(body["data"][0]["status"], json!("not_active"));
    assert!(
        body["slashing_protection"]
            .as_str()
            .unwrap()
            .contains(VECTOR_PUBKEY)
    );
}
