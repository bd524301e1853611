//! Building answers: JSON in the spec's envelopes, SSZ bytes, the version header, negotiation.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use beacon_api::{Encoding, negotiate};
use serde::Serialize;
use types::ForkName;

use std::sync::Arc;

use crate::error::HttpError;
use crate::workers::{ApiPriority, ApiWorkers, run_blocking};

/// Both encodings, JSON preferred on a tie.
pub(crate) const JSON_OR_SSZ: &[Encoding] = &[Encoding::Json, Encoding::Ssz];

/// The response encoding the request's `Accept` asks for among `offers` (406 when none).
pub(crate) fn accept(headers: &HeaderMap, offers: &[Encoding]) -> Result<Encoding, HttpError> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    Ok(negotiate(accept, offers)?)
}

/// 200 with `bytes` as JSON.
pub(crate) fn json_bytes(bytes: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, Encoding::Json.media_type())],
        bytes,
    )
        .into_response()
}

/// 200 with `value` as JSON (a value that does not serialize is a 500).
pub(crate) fn json<T: Serialize>(value: &T) -> Result<Response, HttpError> {
    serde_json::to_vec(value)
        .map(json_bytes)
        .map_err(|e| HttpError::internal(format!("cannot encode the response: {e}")))
}

/// 200 with shared `bytes` as SSZ (served without a copy).
pub(crate) fn ssz_shared(bytes: axum::body::Bytes) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, Encoding::Ssz.media_type())],
        bytes,
    )
        .into_response()
}

/// 200 with `bytes` as SSZ.
pub(crate) fn ssz_bytes(bytes: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, Encoding::Ssz.media_type())],
        bytes,
    )
        .into_response()
}

/// Adds `Eth-Consensus-Version: fork` to `response`.
pub(crate) fn with_version(mut response: Response, fork: ForkName) -> Response {
    response.headers_mut().insert(
        beacon_api::CONSENSUS_VERSION_HEADER,
        HeaderValue::from_static(fork.as_str()),
    );
    response
}

/// 200 with no body (the pool and subscription endpoints).
pub(crate) fn ok_empty() -> Response {
    StatusCode::OK.into_response()
}

/// Pieces of a streamed body ([`streamed`]) waiting to be sent: the writer waits beyond this,
/// so a slow client holds at most this many pieces of the answer in memory.
const STREAM_PIECES_QUEUED: usize = 4;
/// The size a streamed body's pieces are sent at.
const STREAM_PIECE: usize = 1 << 20;

/// 200 with a body that `write` produces on tokio's blocking pool while it is being sent, a
/// piece at a time: a whole state's SSZ (~135 MiB at 1,000,000 validators) or JSON (several
/// hundred MiB) is never built in memory, for however many clients at once. `len`, when known,
/// is sent as `Content-Length`. If `write` fails part way, the body ends in an error, so the
/// client sees a broken transfer, never a short answer that looks whole; a client that goes
/// away stops the writer at its next piece.
pub(crate) fn streamed(
    media_type: &'static str,
    len: Option<usize>,
    write: impl FnOnce(&mut PieceWriter) -> std::io::Result<()> + Send + 'static,
) -> Response {
    let (sender, receiver) = tokio::sync::mpsc::channel(STREAM_PIECES_QUEUED);
    tokio::task::spawn_blocking(move || {
        let mut out = PieceWriter {
            sender,
            piece: Vec::with_capacity(STREAM_PIECE),
        };
        if let Err(error) = write(&mut out).and_then(|()| out.send_piece()) {
            tracing::debug!(%error, "streamed answer ended early");
            // Ends the body in an error (nothing to do when the client went away).
            let _ = out.sender.blocking_send(Err(error));
        }
    });
    let pieces = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|piece| (piece, receiver))
    });
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, media_type)],
        axum::body::Body::from_stream(pieces),
    )
        .into_response();
    if let Some(len) = len {
        response
            .headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    response
}

/// The writer a [`streamed`] body's producer writes to: it gathers the bytes into pieces of
/// [`STREAM_PIECE`] and hands each to the response, waiting while [`STREAM_PIECES_QUEUED`]
/// are not sent yet.
pub(crate) struct PieceWriter {
    sender: tokio::sync::mpsc::Sender<std::io::Result<axum::body::Bytes>>,
    piece: Vec<u8>,
}

impl PieceWriter {
    fn send_piece(&mut self) -> std::io::Result<()> {
        if self.piece.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.piece, Vec::with_capacity(STREAM_PIECE));
        self.sender.blocking_send(Ok(piece.into())).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away")
        })
    }
}

impl std::io::Write for PieceWriter {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.piece.extend_from_slice(buf);
        if self.piece.len() >= STREAM_PIECE {
            self.send_piece()?;
        }
        Ok(buf.len())
    }

    /// Every write takes the whole buffer: no loop. The JSON encoder writes a state's hundreds
    /// of megabytes in tokens of a few bytes each, so this is on its hot path.
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.write(buf).map(drop)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `f` (state reads, duties over the registry, signature checks) on the node's CPU
/// workers at the API's normal priority ([`ApiPriority::P1`]; tokio's blocking pool without
/// workers), so the runtime's workers keep serving other requests meanwhile.
pub(crate) async fn blocking<T: Send + 'static>(
    workers: Option<Arc<dyn ApiWorkers>>,
    f: impl FnOnce() -> Result<T, HttpError> + Send + 'static,
) -> Result<T, HttpError> {
    run_blocking(workers, ApiPriority::P1, f).await
}

/// [`blocking`] for a validator client's duty on the clock (attestation data, duties,
/// publication of its messages): [`ApiPriority::P0`].
pub(crate) async fn blocking_duty<T: Send + 'static>(
    workers: Option<Arc<dyn ApiWorkers>>,
    f: impl FnOnce() -> Result<T, HttpError> + Send + 'static,
) -> Result<T, HttpError> {
    run_blocking(workers, ApiPriority::P0, f).await
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Write};
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_streamed_body_is_what_the_writer_wrote_with_its_length() {
        let expected: Vec<u8> = (0..3 * STREAM_PIECE + 17).map(|i| i as u8).collect();
        let body = expected.clone();
        let response = streamed("application/octet-stream", Some(body.len()), move |out| {
            for chunk in body.chunks(1000) {
                out.write_all(chunk)?;
            }
            Ok(())
        });
        assert_eq!(
            response.headers()[header::CONTENT_LENGTH],
            expected.len().to_string().as_str()
        );
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the whole body");
        assert!(bytes.as_ref() == expected.as_slice());
    }

    #[tokio::test]
    async fn a_writer_that_fails_part_way_ends_the_body_in_an_error() {
        let response = streamed("application/json", None, |out| {
            out.write_all(&vec![b'x'; STREAM_PIECE + 1])?;
            Err(std::io::Error::other("encoding failed"))
        });
        let result = axum::body::to_bytes(response.into_body(), usize::MAX).await;
        assert!(result.is_err(), "a broken body, not a short one");
    }

    #[tokio::test]
    async fn a_client_that_goes_away_stops_the_writer() {
        let (done, finished) = std::sync::mpsc::channel();
        let response = streamed("application/octet-stream", None, move |out| {
            let piece = vec![0; STREAM_PIECE];
            let mut written = 0;
            let mut result = Ok(());
            while written < 1000 {
                if let Err(error) = out.write_all(&piece) {
                    result = Err(error);
                    break;
                }
                written += 1;
            }
            let _ = done.send((
                written,
                result.as_ref().map_err(std::io::Error::kind).copied(),
            ));
            result
        });
        drop(response);
        let (written, result) = finished
            .recv_timeout(Duration::from_secs(60))
            .expect("the writer stops");
        assert_eq!(result, Err(ErrorKind::BrokenPipe));
        assert!(written < 1000, "{written} pieces written");
    }
}
