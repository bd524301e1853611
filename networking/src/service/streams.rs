//! The req/resp stream tasks: one per inbound stream (read the request, hand it to the service,
//! write the answer) and one per outbound request (open, write, read within the spec's
//! timeouts), and the messages they send the service task.

use std::sync::Arc;
use std::time::Duration;

use libp2p::{PeerId, StreamProtocol};
use tokio::sync::{mpsc, oneshot};
use types::EthSpec;

use super::{OutboundRequestId, RpcError};
use crate::fork_context::ForkContext;
use crate::rpc::codec::{
    RpcCodecError, encode_error_chunk, encode_request, read_request, read_response_chunk,
    write_and_close, write_response,
};
use crate::rpc::{Protocol, Request, Response, ResponseCode};

/// Messages from the spawned stream tasks to the service loop.
pub(super) enum Internal<E: EthSpec> {
    InboundRequest {
        peer_id: PeerId,
        request: Request<E>,
        respond: oneshot::Sender<Response<E>>,
    },
    InboundError {
        peer_id: PeerId,
        protocol: Protocol,
        error: RpcCodecError,
    },
    OutboundDone {
        peer_id: PeerId,
        request_id: Option<OutboundRequestId>,
        result: Result<Response<E>, RpcError>,
    },
}

/// Reads a request, hands it to the service, waits for the answer and writes it.
pub(super) async fn handle_inbound_stream<E: EthSpec>(
    peer_id: PeerId,
    protocol: Protocol,
    mut stream: libp2p::Stream,
    internal: mpsc::Sender<Internal<E>>,
    fork_context: Arc<ForkContext>,
) {
    let spec = fork_context.spec();
    let resp_timeout = Duration::from_secs(spec.resp_timeout.max(1));
    let read = tokio::time::timeout(
        resp_timeout,
        read_request::<E, _>(&mut stream, protocol, spec),
    )
    .await;
    let request = match read {
        Ok(Ok(request)) => request,
        // The stream failed under the request (the connection closed, most often as the peer
        // left): not malformed input, and no answer can reach the peer.
        Ok(Err(RpcCodecError::Io(error))) => {
            tracing::debug!(%peer_id, %protocol, %error, "inbound request stream failed");
            return;
        }
        Ok(Err(error)) => {
            let message = error.to_string();
            let _ = write_and_close(
                &mut stream,
                &encode_error_chunk(ResponseCode::INVALID_REQUEST, &message),
            )
            .await;
            let _ = internal
                .send(Internal::InboundError {
                    peer_id,
                    protocol,
                    error,
                })
                .await;
            return;
        }
        Err(_) => return,
    };
    let (respond, answer) = oneshot::channel();
    if internal
        .send(Internal::InboundRequest {
            peer_id,
            request,
            respond,
        })
        .await
        .is_err()
    {
        return;
    }
    let response = match tokio::time::timeout(resp_timeout, answer).await {
        Ok(Ok(response)) => response,
        // The application dropped or did not answer in time.
        _ => Response::error(ResponseCode::SERVER_ERROR, "no response"),
    };
    // Chunk by chunk, each flushed on its own (see `write_chunk`), within the response timeout
    // so that a peer that stops reading does not hold the stream's task.
    match tokio::time::timeout(
        resp_timeout,
        write_response(&mut stream, protocol, &response, &fork_context),
    )
    .await
    {
        Ok(Ok(())) => {}
        Ok(Err(RpcCodecError::WrongItem(protocol))) => {
            tracing::warn!(%peer_id, %protocol, "a response item of the wrong kind was answered with SERVER_ERROR");
        }
        Ok(Err(error)) => tracing::debug!(%peer_id, %protocol, %error, "writing a response failed"),
        Err(_) => tracing::debug!(%peer_id, %protocol, "writing a response timed out"),
    }
}

/// Attempts at opening an outbound stream when the transport loses the request.
const OPEN_STREAM_ATTEMPTS: u64 = 3;

/// Opens a stream, writes the request and reads the response within the spec's timeouts.
pub(super) async fn run_outbound<E: EthSpec>(
    mut control: libp2p_stream::Control,
    peer_id: PeerId,
    request: Request<E>,
    fork_context: Arc<ForkContext>,
) -> Result<Response<E>, RpcError> {
    let spec = fork_context.spec();
    let ttfb = Duration::from_secs(spec.ttfb_timeout.max(1));
    let resp_timeout = Duration::from_secs(spec.resp_timeout.max(1));
    let protocol = request.protocol();
    // A stream request can be lost when the connection it was queued on closes (a duplicate
    // connection from a simultaneous dial, say); it is retried on the remaining connection.
    let mut attempt = 0;
    let mut stream = loop {
        attempt += 1;
        let opened = tokio::time::timeout(
            resp_timeout,
            control.open_stream(peer_id, StreamProtocol::new(protocol.protocol_id())),
        )
        .await
        .map_err(|_| RpcError::Timeout)?;
        match opened {
            Ok(stream) => break stream,
            Err(libp2p_stream::OpenStreamError::Io(e)) if attempt < OPEN_STREAM_ATTEMPTS => {
                tracing::debug!(%peer_id, error = %e, attempt, "stream open failed; retrying");
                tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
            }
            Err(e) => return Err(RpcError::OpenStream(e.to_string())),
        }
    };
    tokio::time::timeout(
        resp_timeout,
        write_and_close(&mut stream, &encode_request(&request)),
    )
    .await
    .map_err(|_| RpcError::Timeout)??;
    let max = request.max_response_chunks(spec);
    let mut response = Response::success(Vec::new());
    let mut first = true;
    loop {
        let limit = if first { ttfb } else { resp_timeout };
        first = false;
        let chunk = tokio::time::timeout(
            limit,
            read_response_chunk::<E, _>(&mut stream, protocol, &fork_context),
        )
        .await
        .map_err(|_| RpcError::Timeout)??;
        match chunk {
            None => break,
            Some(Ok(item)) => {
                if response.items.len() as u64 >= max {
                    return Err(RpcCodecError::TooManyChunks { max }.into());
                }
                response.items.push(item);
            }
            Some(Err(error)) => {
                response.error = Some(error);
                break;
            }
        }
    }
    Ok(response)
}
