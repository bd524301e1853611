//! The keymanager API's local keystores (`GET`, `POST`, `DELETE /eth/v1/keystores`), behind a
//! bearer token, on 127.0.0.1 by default.
//!
//! Imported keystores are kept under `<datadir>/keymanager/` (the keystore and its password,
//! one pair per key) and loaded again at start; keys from the command line are read-only.
//! A deletion first stops the key signing ([`ValidatorStore::remove_key`]) and then exports its
//! slashing protection history, which stays in the database.
//!
//! [spec]: ethereum/keymanager-APIs apis/local_keystores.yaml

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use slashing_protection::Interchange;
use tracing::{info, warn};
use types::BLSPubkey;

use crate::keystore::{Keystore, KeystoreError, read_password_file};
use crate::signing::ValidatorKey;
use crate::validator_store::ValidatorStore;

/// The keymanager API's default port.
pub const DEFAULT_KEYMANAGER_PORT: u16 = 5062;

/// The directory of imported keystores under the data directory.
pub const KEYMANAGER_DIR: &str = "keymanager";

/// The file of the API token under the data directory.
pub const TOKEN_FILE: &str = "api-token.txt";

/// Where the keymanager API listens and where its token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeymanagerConfig {
    /// The listening address (127.0.0.1 by default: the API hands out signing keys).
    pub listen: SocketAddr,
    /// The bearer token file; created with a random token if absent.
    pub token_file: PathBuf,
}

/// Why the keymanager API could not start.
#[derive(Debug, thiserror::Error)]
pub enum KeymanagerError {
    /// The token file or the keystore directory could not be read or written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        message: String,
    },
    /// The listening address could not be bound.
    #[error("cannot listen on {addr}: {message}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        message: String,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> KeymanagerError + '_ {
    move |e| KeymanagerError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Reads the API token, creating the file with 32 random bytes in hex if it does not exist.
pub fn load_or_create_token(path: &Path) -> Result<String, KeymanagerError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text.trim().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let token = hex::encode(rand::random::<[u8; 32]>());
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io_error(parent))?;
            }
            std::fs::write(path, &token).map_err(io_error(path))?;
            Ok(token)
        }
        Err(e) => Err(io_error(path)(e)),
    }
}

/// The keys imported earlier through the API: every `<pubkey>.json` under `dir` with its
/// `<pubkey>.password`.
pub fn load_imported_keys(dir: &Path) -> Result<Vec<ValidatorKey>, KeystoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(KeystoreError::Io {
                path: dir.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let password = read_password_file(&path.with_extension("password"))?;
            Ok(ValidatorKey::new(
                Keystore::from_file(path)?.decrypt(&password)?,
            ))
        })
        .collect()
}

struct Api {
    store: Arc<ValidatorStore>,
    token: String,
    dir: PathBuf,
    /// Keys that did not come through the API (the command line): listed, never deleted.
    readonly: BTreeSet<BLSPubkey>,
    /// One import or deletion at a time.
    lock: Mutex<()>,
}

/// Starts the API over `store`; returns the bound address and the server's future (run it
/// until shutdown). `readonly` are the keys loaded from the command line.
pub async fn serve(
    store: Arc<ValidatorStore>,
    config: &KeymanagerConfig,
    datadir: &Path,
    readonly: BTreeSet<BLSPubkey>,
) -> Result<
    (
        SocketAddr,
        impl std::future::Future<Output = ()> + Send + 'static,
    ),
    KeymanagerError,
> {
    let token = load_or_create_token(&config.token_file)?;
    let api = Arc::new(Api {
        store,
        token,
        dir: datadir.join(KEYMANAGER_DIR),
        readonly,
        lock: Mutex::new(()),
    });
    let app = Router::new()
        .route(
            "/eth/v1/keystores",
            get(list_keys).post(import_keystores).delete(delete_keys),
        )
        .with_state(api);
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| KeymanagerError::Bind {
            addr: config.listen,
            message: e.to_string(),
        })?;
    let addr = listener.local_addr().map_err(|e| KeymanagerError::Bind {
        addr: config.listen,
        message: e.to_string(),
    })?;
    info!(%addr, token_file = %config.token_file.display(), "keymanager API listening");
    Ok((addr, async move {
        if let Err(e) = axum::serve(listener, app).await {
            warn!(error = %e, "keymanager API stopped");
        }
    }))
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::json!({ "message": message }).to_string(),
    )
        .into_response()
}

fn json<T: Serialize>(value: &T) -> Response {
    match serde_json::to_string(value) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// The refusal of a request without the bearer token (401) or with a wrong one (403).
fn unauthorized(api: &Api, headers: &HeaderMap) -> Option<Response> {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return Some(error(StatusCode::UNAUTHORIZED, "missing bearer token"));
    };
    let Some(token) = value.strip_prefix("Bearer ") else {
        return Some(error(StatusCode::UNAUTHORIZED, "not a bearer token"));
    };
    // Compared in full whatever the first difference, so the time says nothing of the token.
    let matches = token.len() == api.token.len()
        && token
            .bytes()
            .zip(api.token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    (!matches).then(|| error(StatusCode::FORBIDDEN, "invalid bearer token"))
}

#[derive(Serialize)]
struct KeyEntry {
    validating_pubkey: BLSPubkey,
    derivation_path: String,
    readonly: bool,
}

#[derive(Serialize)]
struct Data<T> {
    data: T,
}

async fn list_keys(State(api): State<Arc<Api>>, headers: HeaderMap) -> Response {
    if let Some(refusal) = unauthorized(&api, &headers) {
        return refusal;
    }
    let keys: Vec<KeyEntry> = api
        .store
        .pubkeys()
        .into_iter()
        .map(|pubkey| KeyEntry {
            validating_pubkey: pubkey,
            derivation_path: String::new(),
            readonly: api.readonly.contains(&pubkey),
        })
        .collect();
    json(&Data { data: keys })
}

#[derive(Deserialize)]
struct ImportRequest {
    keystores: Vec<String>,
    passwords: Vec<String>,
    #[serde(default)]
    slashing_protection: Option<String>,
}

#[derive(Serialize)]
struct Status {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl Status {
    fn ok(status: &'static str) -> Self {
        Self {
            status,
            message: None,
        }
    }

    fn error(message: impl Into<String>) -> Self {
        Self {
            status: "error",
            message: Some(message.into()),
        }
    }
}

async fn import_keystores(
    State(api): State<Arc<Api>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refusal) = unauthorized(&api, &headers) {
        return refusal;
    }
    let request: ImportRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("invalid request: {e}")),
    };
    if request.keystores.len() != request.passwords.len() {
        return error(
            StatusCode::BAD_REQUEST,
            "keystores and passwords differ in number",
        );
    }
    let interchange = match request
        .slashing_protection
        .as_deref()
        .map(Interchange::from_json_str)
    {
        None => None,
        Some(Ok(i)) => Some(i),
        Some(Err(e)) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("invalid slashing_protection: {e}"),
            );
        }
    };
    // Decrypting is scrypt or PBKDF2 work: off the async threads.
    let task_api = Arc::clone(&api);
    let result = tokio::task::spawn_blocking(move || {
        let _guard = task_api.lock.lock();
        import_blocking(&task_api, request, interchange)
    })
    .await;
    match result {
        Ok(statuses) => json(&Data { data: statuses }),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn import_blocking(
    api: &Api,
    request: ImportRequest,
    interchange: Option<Interchange>,
) -> Vec<Status> {
    let mut statuses = Vec::with_capacity(request.keystores.len());
    let mut decrypted = Vec::new();
    for (i, (text, password)) in request.keystores.iter().zip(&request.passwords).enumerate() {
        let key = Keystore::from_json_str(text, format!("keystores[{i}]"))
            .and_then(|k| k.decrypt(password))
            .map(ValidatorKey::new);
        match key {
            Ok(key) if api.store.contains(&key.pubkey()) => statuses.push(Status::ok("duplicate")),
            Ok(key) => {
                statuses.push(Status::ok("imported"));
                decrypted.push((statuses.len() - 1, key, text, password));
            }
            Err(e) => statuses.push(Status::error(e.to_string())),
        }
    }
    // The history of the new keys goes in before any of them may sign.
    if let Some(mut interchange) = interchange {
        let new: BTreeSet<BLSPubkey> = decrypted.iter().map(|(_, k, _, _)| k.pubkey()).collect();
        interchange.data.retain(|d| new.contains(&d.pubkey));
        if let Err(e) = api
            .store
            .slashing_protection()
            .import_interchange(&interchange)
        {
            let message = format!("slashing protection import failed: {e}");
            for (index, ..) in &decrypted {
                statuses[*index] = Status::error(message.clone());
            }
            return statuses;
        }
    }
    for (index, key, text, password) in decrypted {
        let pubkey = key.pubkey();
        let stored = persist(&api.dir, &pubkey, text, password)
            .map_err(|e| e.to_string())
            .and_then(|()| api.store.add_key(key).map_err(|e| e.to_string()));
        match stored {
            Ok(_) => info!(%pubkey, "keystore imported"),
            Err(message) => statuses[index] = Status::error(message),
        }
    }
    statuses
}

fn key_file(dir: &Path, pubkey: &BLSPubkey) -> PathBuf {
    dir.join(format!("{pubkey}.json"))
}

/// Writes the keystore and its password (password first: a keystore without one is not
/// loaded at start).
fn persist(dir: &Path, pubkey: &BLSPubkey, keystore: &str, password: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let file = key_file(dir, pubkey);
    std::fs::write(file.with_extension("password"), password)?;
    std::fs::write(&file, keystore)
}

#[derive(Deserialize)]
struct DeleteRequest {
    pubkeys: Vec<String>,
}

#[derive(Serialize)]
struct DeleteResponse {
    data: Vec<Status>,
    slashing_protection: String,
}

async fn delete_keys(State(api): State<Arc<Api>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(refusal) = unauthorized(&api, &headers) {
        return refusal;
    }
    let request: DeleteRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("invalid request: {e}")),
    };
    let mut pubkeys = Vec::with_capacity(request.pubkeys.len());
    for text in &request.pubkeys {
        match text.parse::<BLSPubkey>() {
            Ok(p) => pubkeys.push(p),
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    &format!("invalid pubkey {text:?}: {e}"),
                );
            }
        }
    }
    let task_api = Arc::clone(&api);
    let result = tokio::task::spawn_blocking(move || {
        let _guard = task_api.lock.lock();
        delete_blocking(&task_api, &pubkeys)
    })
    .await;
    match result {
        Ok(Ok(response)) => json(&response),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn delete_blocking(api: &Api, pubkeys: &[BLSPubkey]) -> Result<DeleteResponse, String> {
    let db = api.store.slashing_protection();
    let mut statuses = Vec::with_capacity(pubkeys.len());
    let mut exported = Vec::new();
    for pubkey in pubkeys {
        if api.readonly.contains(pubkey) {
            statuses.push(Status::error(
                "a read-only key (loaded from the command line)",
            ));
            continue;
        }
        if api.store.remove_key(pubkey) {
            let file = key_file(&api.dir, pubkey);
            for path in [file.clone(), file.with_extension("password")] {
                if let Err(e) = std::fs::remove_file(&path)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    warn!(path = %path.display(), error = %e, "could not remove a deleted key's file");
                }
            }
            info!(%pubkey, "key deleted");
            statuses.push(Status::ok("deleted"));
            exported.push(*pubkey);
        } else if db.is_registered(pubkey).map_err(|e| e.to_string())? {
            statuses.push(Status::ok("not_active"));
            exported.push(*pubkey);
        } else {
            statuses.push(Status::ok("not_found"));
        }
    }
    let interchange = db
        .export_interchange(Some(&exported))
        .map_err(|e| e.to_string())?;
    Ok(DeleteResponse {
        data: statuses,
        slashing_protection: interchange.to_json_string(),
    })
}
