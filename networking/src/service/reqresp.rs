//! Req/resp bookkeeping in the service: our requests (held to our own quotas, then handed to a
//! stream task) and what the stream tasks report back: inbound requests (answered here or
//! handed to the application), malformed ones, and the results of ours, with their blame.

use std::time::Instant;

use libp2p::PeerId;
use types::EthSpec;

use super::streams::{Internal, run_outbound};
use super::task::Service;
use super::{InboundRequestId, NetworkEvent, OutboundRequestId, RpcError};
use crate::peer_manager::{DisconnectReason, PeerAction};
use crate::rpc::codec::RpcCodecError;
use crate::rpc::{Protocol, Request, Response, ResponseCode, ResponseItem};

impl<E: EthSpec> Service<E> {
    pub(super) fn send_request(
        &mut self,
        peer_id: PeerId,
        request_id: Option<OutboundRequestId>,
        request: Request<E>,
        now: Instant,
    ) {
        let cost = request.max_response_chunks(self.fork_context.spec());
        let label = protocol_label(request.protocol());
        if let Err(e) = self
            .outbound_limiter
            .allows(&peer_id, request.protocol(), cost, now)
        {
            self.metrics
                .requests_held_back
                .with_label_values(&[label])
                .inc();
            if let Some(request_id) = request_id {
                self.emit(NetworkEvent::RequestFailed {
                    peer_id,
                    request_id,
                    error: e.into(),
                });
            }
            return;
        }
        self.metrics.requests_sent.with_label_values(&[label]).inc();
        let control = self.control.clone();
        let fork_context = self.fork_context.clone();
        let internal = self.internal_tx.clone();
        tokio::spawn(async move {
            let result = run_outbound(control, peer_id, request, fork_context).await;
            let _ = internal
                .send(Internal::OutboundDone {
                    peer_id,
                    request_id,
                    result,
                })
                .await;
        });
    }

    pub(super) fn on_internal(&mut self, message: Internal<E>) {
        let now = Instant::now();
        match message {
            Internal::InboundRequest {
                peer_id,
                request,
                respond,
            } => {
                if self.peer_manager.is_banned(&peer_id, now) {
                    return;
                }
                let protocol = request.protocol();
                let cost = request.max_response_chunks(self.fork_context.spec());
                if let Err(e) = self.inbound_limiter.allows(&peer_id, protocol, cost, now) {
                    self.metrics
                        .requests_rate_limited
                        .with_label_values(&[protocol_label(protocol)])
                        .inc();
                    let _ =
                        respond.send(Response::error(ResponseCode::RATE_LIMITED, e.to_string()));
                    self.report(&peer_id, PeerAction::MidTolerance, now);
                    return;
                }
                match request {
                    Request::Ping(seq) => {
                        let _ = respond.send(Response::success(vec![ResponseItem::Pong(
                            self.metadata.seq_number,
                        )]));
                        let known = self
                            .peer_manager
                            .peer(&peer_id)
                            .and_then(|p| p.metadata.as_ref())
                            .map(|m| m.seq_number);
                        if known.is_none_or(|known| seq > known) {
                            self.send_request(peer_id, None, Request::MetaData, now);
                        }
                    }
                    Request::MetaData => {
                        let _ = respond.send(Response::success(vec![ResponseItem::MetaData(
                            self.metadata.clone(),
                        )]));
                    }
                    Request::Goodbye(reason) => {
                        drop(respond);
                        self.emit(NetworkEvent::Goodbye { peer_id, reason });
                        self.disconnect(peer_id, DisconnectReason::GoodbyeReceived(reason));
                    }
                    request => {
                        let request_id = InboundRequestId(self.next_inbound_id);
                        self.next_inbound_id += 1;
                        self.pending_inbound.insert(request_id, respond);
                        // Drop answers the stream task already gave up on.
                        self.pending_inbound.retain(|_, tx| !tx.is_closed());
                        self.emit(NetworkEvent::RequestReceived {
                            peer_id,
                            request_id,
                            request,
                        });
                    }
                }
            }
            Internal::InboundError {
                peer_id,
                protocol,
                error,
            } => {
                tracing::debug!(%peer_id, %protocol, %error, "invalid inbound request");
                self.report(&peer_id, PeerAction::LowTolerance, now);
            }
            Internal::OutboundDone {
                peer_id,
                request_id,
                result,
            } => {
                match &result {
                    // A stream reset or a connection closed mid-response is not malformed data
                    // and carries no fault we can tell apart from a disconnect (every request in
                    // flight fails with it when the peer leaves, and a peer is never penalised
                    // for leaving): not penalised.
                    Err(RpcError::Codec(RpcCodecError::Io(error))) => {
                        tracing::debug!(%peer_id, %error, "request failed on the stream");
                    }
                    // A timeout of a peer still connected: its fault, lightly.
                    Err(RpcError::Timeout) => {
                        if self.swarm.is_connected(&peer_id) {
                            self.report(&peer_id, PeerAction::HighTolerance, now)
                        }
                    }
                    // A response we could not decode: the request ends at the first bad chunk,
                    // so this is one penalty per request, never one per chunk.
                    Err(RpcError::Codec(_)) => self.report(&peer_id, PeerAction::LowTolerance, now),
                    Ok(response) => {
                        if let Some(ResponseItem::MetaData(metadata)) = response.items.first()
                            && let Some(info) = self.peer_manager.peer_mut(&peer_id)
                        {
                            info.metadata = Some(metadata.clone());
                            self.peer_table_changed();
                            if request_id.is_none() {
                                self.emit(NetworkEvent::PeerMetaData {
                                    peer_id,
                                    metadata: metadata.clone(),
                                });
                            }
                        }
                    }
                    Err(_) => {}
                }
                if let Some(request_id) = request_id {
                    self.emit(match result {
                        Ok(response) => NetworkEvent::ResponseReceived {
                            peer_id,
                            request_id,
                            response,
                        },
                        Err(error) => NetworkEvent::RequestFailed {
                            peer_id,
                            request_id,
                            error,
                        },
                    });
                }
            }
        }
    }
}

/// A protocol's metric label: its message name and version (`status/2`).
fn protocol_label(protocol: Protocol) -> &'static str {
    let id = protocol.protocol_id();
    id.strip_prefix("/eth2/beacon_chain/req/")
        .and_then(|rest| rest.strip_suffix("/ssz_snappy"))
        .unwrap_or(id)
}
