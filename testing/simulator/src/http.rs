//! A minimal HTTP/1.0 client for the Beacon API on 127.0.0.1: one request a connection, bounded
//! by a timeout, no library needed for JSON requests this small.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Why a request got no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Connecting, writing or reading failed (the node is down or slow).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The answer was not HTTP.
    #[error("not an HTTP answer")]
    Malformed,
    /// A status other than 200.
    #[error("status {status}: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The body, for the log.
        body: String,
    },
    /// The body was not the JSON expected.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
}

fn request(port: u16, head: &str, body: &[u8]) -> Result<serde_json::Value, HttpError> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n").ok_or(HttpError::Malformed)?;
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or(HttpError::Malformed)?;
    if status != 200 {
        return Err(HttpError::Status {
            status,
            body: body.chars().take(300).collect(),
        });
    }
    Ok(serde_json::from_str(body)?)
}

/// `GET path` as JSON.
pub fn get(port: u16, path: &str) -> Result<serde_json::Value, HttpError> {
    request(
        port,
        &format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n"),
        &[],
    )
}

/// `POST path` with a JSON body, the answer as JSON.
pub fn post(
    port: u16,
    path: &str,
    body: &serde_json::Value,
) -> Result<serde_json::Value, HttpError> {
    let body = body.to_string();
    request(
        port,
        &format!(
            "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        ),
        body.as_bytes(),
    )
}

/// `POST path` with a JSON body and a bearer token (the engine API's JWT), the answer as JSON.
pub fn post_authorized(
    port: u16,
    path: &str,
    body: &serde_json::Value,
    token: &str,
) -> Result<serde_json::Value, HttpError> {
    let body = body.to_string();
    request(
        port,
        &format!(
            "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        ),
        body.as_bytes(),
    )
}

/// A quoted or plain integer of a JSON answer (`"12"` or `12`).
pub fn as_u64(value: &serde_json::Value) -> Option<u64> {
    match value {
        serde_json::Value::String(s) => s.parse().ok(),
        serde_json::Value::Number(n) => n.as_u64(),
        _ => None,
    }
}
