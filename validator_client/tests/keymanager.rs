//! The keymanager API over HTTP: the bearer token, listing, importing (with slashing
//! protection data), duplicates, deleting (with the exported history) and read-only keys; and
//! through `run`, an imported key loaded again after a restart.
#![allow(clippy::unwrap_used, reason = "a test; a failure is the test failing")]

mod common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use bls::interop_secret_key;
use reqwest::StatusCode;
use serde_json::{Value, json};
use slashing_protection::{NotSafe, SlashingDatabase};
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

/// A free port on 127.0.0.1 (bound and released; another process could take it in between,
/// which would fail the test, not pass it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn list_over_http(
    client: &reqwest::Client,
    url: &str,
    token_file: &std::path::Path,
) -> Value {
    // The server starts once the client has read the chain; wait for it (bounded).
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Ok(token) = std::fs::read_to_string(token_file)
            && let Ok(response) = client
                .get(url)
                .header("Authorization", format!("Bearer {}", token.trim()))
                .send()
                .await
        {
            return serde_json::from_str(&response.text().await.unwrap()).unwrap();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the keymanager API did not come up"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_serves_the_api_and_reloads_imported_keys_after_a_restart() {
    let genesis_time = validator_client::timing::SlotClock::now().as_secs() + 1;
    let (addr, _published) =
        common::start_node(genesis_time, 2, common::Duties::EpochZero, false).await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("api-token.txt");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/eth/v1/keystores");
    let config = validator_client::ValidatorClientConfig {
        beacon_nodes: vec![format!("http://{addr}")],
        keys: validator_client::KeySource::Interop { indices: 0..2 },
        datadir: dir.path().to_path_buf(),
        spec: Some(common::spec()),
        keymanager: Some(KeymanagerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], port)),
            token_file: token_file.clone(),
        }),
        ..validator_client::ValidatorClientConfig::default()
    };
    let client = reqwest::Client::new();

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let vc = tokio::spawn(validator_client::run::<common::E>(
        config.clone(),
        async move {
            let _ = stopped.await;
        },
    ));
    let listed = list_over_http(&client, &url, &token_file).await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 2);
    let token = std::fs::read_to_string(&token_file).unwrap();
    let response = client
        .post(&url)
        .header("Authorization", format!("Bearer {}", token.trim()))
        .header("Content-Type", "application/json")
        .body(json!({"keystores": [vector_keystore()], "passwords": [PASSWORD]}).to_string())
        .send()
        .await
        .unwrap();
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["data"][0]["status"], json!("imported"));
    stop.send(()).unwrap();
    vc.await.unwrap().unwrap();

    // After a restart the imported key is back, and not read-only; the interop keys are.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let vc = tokio::spawn(validator_client::run::<common::E>(config, async move {
        let _ = stopped.await;
    }));
    let listed = list_over_http(&client, &url, &token_file).await;
    let keys = listed["data"].as_array().unwrap();
    assert_eq!(keys.len(), 3);
    let vector = keys
        .iter()
        .find(|k| k["validating_pubkey"] == json!(VECTOR_PUBKEY))
        .expect("the imported key is loaded at start");
    assert_eq!(vector["readonly"], json!(false));
    assert_eq!(
        keys.iter().filter(|k| k["readonly"] == json!(true)).count(),
        2
    );
    stop.send(()).unwrap();
    vc.await.unwrap().unwrap();
}
