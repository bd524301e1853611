//! `GET /eth/v1/events?topics=..`: server-sent events from the chain's event bus and from the
//! operations submitted here.
//!
//! Each client gets a forwarding task and a bounded buffer (`ApiConfig::sse_capacity`): the
//! task renders the events of the client's topics into the buffer and never waits; a client
//! whose buffer is full (or that fell behind the bus) is dropped and counted
//! (`http_api_sse_clients_dropped_total`), so a slow reader never slows the chain or the
//! other clients. The response head goes out at once, with a first comment line.
//!
//! [spec]: apis/eventstream/index.yaml

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use beacon_api::events::{
    BlockEvent, BlockGossipEvent, ChainReorgEvent, DataColumnSidecarEvent,
    ExecutionPayloadAvailableEvent, ExecutionPayloadEvent, ExecutionPayloadGossipEvent,
    FinalizedCheckpointEvent, HeadEvent, HeadPayloadStatus, HeadV2Event, VersionedHeadV2Event,
};
use beacon_api::{EventTopic, ForkVersionedResponse};
use beacon_chain::events::{ChainEvent, PreparedPayloadAttributes, PresetMessage};
use beacon_chain::gossip::light_client::{
    light_client_finality_update_rank, light_client_optimistic_update_rank,
};
use fork_choice::PayloadStatus;
use tokio::sync::{broadcast, mpsc};
use types::altair::SignedContributionAndProof;
use types::electra::{Attestation, AttesterSlashing};
use types::{EthSpec, LightClientFinalityUpdate, LightClientOptimisticUpdate, Root, Slot};

use crate::ApiContext;
use crate::error::HttpError;
use crate::query::Query;

fn render<T: serde::Serialize>(topic: EventTopic, data: &T) -> Option<(EventTopic, String)> {
    serde_json::to_string(data).ok().map(|json| (topic, json))
}

/// `payload_attributes`: `{version, data}` with the fork at the proposal slot, and
/// `PayloadAttributesV3` in the Beacon API's encoding (snake_case, quoted decimal integers).
///
/// [spec]: apis/eventstream/index.yaml (payload_attributes)
fn render_payload_attributes(p: &PreparedPayloadAttributes) -> Option<(EventTopic, String)> {
    render(
        EventTopic::PayloadAttributes,
        &serde_json::json!({
            "version": p.version.to_string(),
            "data": {
                "proposer_index": p.proposer_index.to_string(),
                "proposal_slot": p.proposal_slot.to_string(),
                "parent_block_number": p.parent_block_number.to_string(),
                "parent_block_root": p.parent_block_root,
                "parent_block_hash": p.parent_block_hash,
                "payload_attributes": {
                    "timestamp": p.timestamp.to_string(),
                    "prev_randao": p.prev_randao,
                    "suggested_fee_recipient": p.suggested_fee_recipient,
                    "withdrawals": p.withdrawals,
                    "parent_beacon_block_root": p.parent_beacon_block_root,
                },
            },
        }),
    )
}

/// A preset-typed message of a chain event, rendered as `T` (the node's preset's type).
fn render_preset<T: serde::Serialize + 'static>(
    topic: EventTopic,
    message: &PresetMessage,
) -> Option<(EventTopic, String)> {
    message.get::<T>().and_then(|m| render(topic, m))
}

/// `light_client_finality_update`: the update with its fork as `version`.
///
/// [spec]: apis/eventstream/index.yaml (light_client_finality_update)
fn render_light_client_finality_update<E: EthSpec>(
    update: &LightClientFinalityUpdate<E>,
) -> Option<(EventTopic, String)> {
    render(
        EventTopic::LightClientFinalityUpdate,
        &ForkVersionedResponse::new(update.fork_name(), update.clone()),
    )
}

/// `light_client_optimistic_update`: the update with its fork as `version`.
///
/// [spec]: apis/eventstream/index.yaml (light_client_optimistic_update)
fn render_light_client_optimistic_update<E: EthSpec>(
    update: &LightClientOptimisticUpdate<E>,
) -> Option<(EventTopic, String)> {
    render(
        EventTopic::LightClientOptimisticUpdate,
        &ForkVersionedResponse::new(update.fork_name(), update.clone()),
    )
}

/// The topic a chain event is published under.
fn chain_topic(event: &ChainEvent) -> Option<EventTopic> {
    Some(match event {
        ChainEvent::BlockGossip { .. } => EventTopic::BlockGossip,
        ChainEvent::Block { .. } => EventTopic::Block,
        ChainEvent::Head { .. } => EventTopic::Head,
        ChainEvent::HeadV2 { .. } => EventTopic::HeadV2,
        ChainEvent::ChainReorg { .. } => EventTopic::ChainReorg,
        ChainEvent::FinalizedCheckpoint { .. } => EventTopic::FinalizedCheckpoint,
        ChainEvent::DataColumnSidecar { .. } => EventTopic::DataColumnSidecar,
        ChainEvent::LightClientFinalityUpdate { .. } => EventTopic::LightClientFinalityUpdate,
        ChainEvent::LightClientOptimisticUpdate { .. } => EventTopic::LightClientOptimisticUpdate,
        ChainEvent::SingleAttestation { .. } => EventTopic::SingleAttestation,
        ChainEvent::Aggregate { .. } => EventTopic::Attestation,
        ChainEvent::VoluntaryExit { .. } => EventTopic::VoluntaryExit,
        ChainEvent::ProposerSlashing { .. } => EventTopic::ProposerSlashing,
        ChainEvent::AttesterSlashing { .. } => EventTopic::AttesterSlashing,
        ChainEvent::BlsToExecutionChange { .. } => EventTopic::BlsToExecutionChange,
        ChainEvent::ContributionAndProof { .. } => EventTopic::ContributionAndProof,
        ChainEvent::PayloadAttributes(_) => EventTopic::PayloadAttributes,
        ChainEvent::ExecutionPayloadGossip(_) => EventTopic::ExecutionPayloadGossip,
        ChainEvent::ExecutionPayloadAvailable { .. } => EventTopic::ExecutionPayloadAvailable,
        ChainEvent::ExecutionPayload { .. } => EventTopic::ExecutionPayload,
        ChainEvent::ExecutionPayloadBid(_) => EventTopic::ExecutionPayloadBid,
        ChainEvent::PayloadAttestationMessage(_) => EventTopic::PayloadAttestationMessage,
    })
}

/// `get_block_root_at_slot(head_state, slot)`, the head itself at or after its slot.
fn head_block_root_at<E: EthSpec>(head: &beacon_chain::HeadSnapshot<E>, slot: Slot) -> Root {
    if slot >= head.slot {
        return head.block_root;
    }
    let n = <E::SlotsPerHistoricalRoot as ssz_types::typenum::Unsigned>::to_u64();
    head.state
        .state
        .block_roots()
        .get((slot % n) as usize)
        .copied()
        .unwrap_or(head.block_root)
}

/// Renders a chain event, reading what its summary lacks (dependent roots, state roots) from
/// the head or the store.
fn render_chain<E: EthSpec>(
    ctx: &ApiContext<E>,
    event: &ChainEvent,
) -> Option<(EventTopic, String)> {
    let spe = E::slots_per_epoch();
    match event {
        ChainEvent::BlockGossip { slot, block } => render(
            EventTopic::BlockGossip,
            &BlockGossipEvent {
                slot: *slot,
                block: *block,
            },
        ),
        ChainEvent::Block {
            slot,
            block,
            execution_optimistic,
        } => render(
            EventTopic::Block,
            &BlockEvent {
                slot: *slot,
                block: *block,
                execution_optimistic: *execution_optimistic,
            },
        ),
        ChainEvent::Head {
            slot,
            block,
            state,
            epoch_transition,
            execution_optimistic,
        } => {
            let head = ctx.chain.head();
            // The bus publishes after the snapshot is swapped: the head is this one unless a
            // newer one came since, whose own event follows.
            let (previous, current) = if head.block_root == *block {
                let epoch = slot / spe;
                (
                    head_block_root_at(&head, (epoch.saturating_sub(1) * spe).saturating_sub(1)),
                    head_block_root_at(&head, (epoch * spe).saturating_sub(1)),
                )
            } else {
                (*block, *block)
            };
            render(
                EventTopic::Head,
                &HeadEvent {
                    slot: *slot,
                    block: *block,
                    state: *state,
                    epoch_transition: *epoch_transition,
                    previous_duty_dependent_root: previous,
                    current_duty_dependent_root: current,
                    execution_optimistic: *execution_optimistic,
                },
            )
        }
        ChainEvent::HeadV2 {
            slot,
            block,
            state,
            payload_status,
            epoch_transition,
            execution_optimistic,
        } => {
            let head = ctx.chain.head();
            // As for `head`: the dependent roots from the head state while it is this head.
            let (current, next) = if head.block_root == *block {
                let epoch = slot / spe;
                (
                    head_block_root_at(&head, (epoch.saturating_sub(1) * spe).saturating_sub(1)),
                    head_block_root_at(&head, (epoch * spe).saturating_sub(1)),
                )
            } else {
                (*block, *block)
            };
            let payload_status = match payload_status {
                Some(PayloadStatus::Empty | PayloadStatus::Pending) => HeadPayloadStatus::Empty,
                Some(PayloadStatus::Full) | None => HeadPayloadStatus::Full,
            };
            render(
                EventTopic::HeadV2,
                &VersionedHeadV2Event {
                    version: ctx.chain.spec().fork_name_at_slot::<E>(*slot),
                    data: HeadV2Event {
                        slot: *slot,
                        block: *block,
                        state: *state,
                        payload_status,
                        epoch_transition: *epoch_transition,
                        current_epoch_dependent_root: current,
                        next_epoch_dependent_root: next,
                        execution_optimistic: *execution_optimistic,
                    },
                },
            )
        }
        ChainEvent::ChainReorg {
            slot,
            depth,
            old_head_block,
            new_head_block,
            old_head_state,
            new_head_state,
        } => {
            let head = ctx.chain.head();
            render(
                EventTopic::ChainReorg,
                &ChainReorgEvent {
                    slot: *slot,
                    depth: *depth,
                    old_head_block: *old_head_block,
                    new_head_block: *new_head_block,
                    old_head_state: *old_head_state,
                    new_head_state: *new_head_state,
                    epoch: slot / spe,
                    execution_optimistic: head.block_root == *new_head_block
                        && head.execution_optimistic,
                },
            )
        }
        ChainEvent::FinalizedCheckpoint {
            block,
            state,
            epoch,
        } => {
            let state = *state;
            render(
                EventTopic::FinalizedCheckpoint,
                &FinalizedCheckpointEvent {
                    block: *block,
                    state,
                    epoch: *epoch,
                    execution_optimistic: false,
                },
            )
        }
        // The server's latest update, if it still has the finalized (attested) header the event
        // announced (a later block may have re-signed it since); one that advanced further has
        // its own event, which follows. `{version, data}` as the beacon-APIs events name it.
        ChainEvent::LightClientFinalityUpdate { finalized_slot, .. } => ctx
            .chain
            .light_client_finality_update()
            .ok()
            .flatten()
            .filter(|u| {
                light_client_finality_update_rank(u).map(|r| r.finalized_slot)
                    == Some(*finalized_slot)
            })
            .and_then(|u| render_light_client_finality_update(&u)),
        ChainEvent::LightClientOptimisticUpdate { attested_slot, .. } => ctx
            .chain
            .light_client_optimistic_update()
            .ok()
            .flatten()
            .filter(|u| light_client_optimistic_update_rank(u) == Some(*attested_slot))
            .and_then(|u| render_light_client_optimistic_update(&u)),
        ChainEvent::DataColumnSidecar {
            block_root,
            slot,
            index,
        } => render(
            EventTopic::DataColumnSidecar,
            &DataColumnSidecarEvent {
                block_root: *block_root,
                index: *index,
                slot: *slot,
            },
        ),
        // The messages as verified: the spec's objects, without a `version`.
        ChainEvent::SingleAttestation { attestation, .. } => {
            render(EventTopic::SingleAttestation, attestation.as_ref())
        }
        // The fork's container: Electra's, or from Gloas on Gloas's.
        ChainEvent::Aggregate { attestation, .. } => {
            render_preset::<Attestation<E>>(EventTopic::Attestation, attestation).or_else(|| {
                render_preset::<types::gloas::Attestation<E>>(EventTopic::Attestation, attestation)
            })
        }
        ChainEvent::VoluntaryExit { exit, .. } => render(EventTopic::VoluntaryExit, exit.as_ref()),
        ChainEvent::ProposerSlashing { slashing, .. } => {
            render(EventTopic::ProposerSlashing, slashing.as_ref())
        }
        ChainEvent::AttesterSlashing { slashing, .. } => render_preset::<AttesterSlashing<E>>(
            EventTopic::AttesterSlashing,
            slashing,
        )
        .or_else(|| {
            render_preset::<types::gloas::AttesterSlashing>(EventTopic::AttesterSlashing, slashing)
        }),
        ChainEvent::ExecutionPayloadGossip(e) => render(
            EventTopic::ExecutionPayloadGossip,
            &ExecutionPayloadGossipEvent {
                slot: e.slot,
                builder_index: e.builder_index,
                block_hash: e.block_hash,
                block_root: e.block_root,
            },
        ),
        ChainEvent::ExecutionPayloadAvailable { slot, block_root } => render(
            EventTopic::ExecutionPayloadAvailable,
            &ExecutionPayloadAvailableEvent {
                slot: *slot,
                block_root: *block_root,
            },
        ),
        ChainEvent::ExecutionPayload {
            envelope: e,
            execution_optimistic,
        } => render(
            EventTopic::ExecutionPayload,
            &ExecutionPayloadEvent {
                slot: e.slot,
                builder_index: e.builder_index,
                block_hash: e.block_hash,
                block_root: e.block_root,
                execution_optimistic: *execution_optimistic,
            },
        ),
        // `{version, data}`, the version the fork of the message's slot.
        ChainEvent::ExecutionPayloadBid(bid) => render(
            EventTopic::ExecutionPayloadBid,
            &ForkVersionedResponse::new(
                ctx.chain.spec().fork_name_at_slot::<E>(bid.message.slot),
                (**bid).clone(),
            ),
        ),
        ChainEvent::PayloadAttestationMessage(message) => render(
            EventTopic::PayloadAttestationMessage,
            &ForkVersionedResponse::new(
                ctx.chain.spec().fork_name_at_slot::<E>(message.data.slot),
                (**message).clone(),
            ),
        ),
        ChainEvent::BlsToExecutionChange { change, .. } => {
            render(EventTopic::BlsToExecutionChange, change.as_ref())
        }
        ChainEvent::ContributionAndProof { contribution, .. } => {
            render_preset::<SignedContributionAndProof<E>>(
                EventTopic::ContributionAndProof,
                contribution,
            )
        }
        ChainEvent::PayloadAttributes(p) => render_payload_attributes(p),
    }
}

/// Why a forwarder stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The client went away.
    Closed,
    /// The client fell behind.
    Slow,
}

fn offer(tx: &mpsc::Sender<Event>, topic: EventTopic, json: String) -> Result<(), Stop> {
    tx.try_send(Event::default().event(topic.as_str()).data(json))
        .map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => Stop::Slow,
            mpsc::error::TrySendError::Closed(_) => Stop::Closed,
        })
}

/// Forwards the events of `topics` to `tx` until the client leaves or falls behind;
/// `render_chain` renders a chain event (on `workers`, the processor's `api_request_p0`, whose
/// events drive validator clients' duties; tokio's blocking pool without workers: it may read
/// the store).
async fn forward<R>(
    workers: Option<Arc<dyn crate::workers::ApiWorkers>>,
    metrics: crate::metrics::ApiMetrics,
    topics: Vec<EventTopic>,
    tx: mpsc::Sender<Event>,
    mut chain_rx: broadcast::Receiver<ChainEvent>,
    render_chain: R,
) -> Stop
where
    R: Fn(&ChainEvent) -> Option<(EventTopic, String)> + Clone + Send + Sync + 'static,
{
    metrics.sse_clients.inc();
    let stop = loop {
        let rendered = tokio::select! {
            event = chain_rx.recv() => match event {
                Ok(event) => {
                    if !chain_topic(&event).is_some_and(|t| topics.contains(&t)) {
                        continue;
                    }
                    let render = render_chain.clone();
                    beacon_chain::workers::run_on_workers(
                        workers.clone(),
                        crate::workers::ApiPriority::P0,
                        move || render(&event),
                    )
                    .await
                    .unwrap_or_default()
                }
                Err(broadcast::error::RecvError::Lagged(_)) => break Stop::Slow,
                Err(broadcast::error::RecvError::Closed) => break Stop::Closed,
            },
            () = tx.closed() => break Stop::Closed,
        };
        if let Some((topic, json)) = rendered {
            if let Err(stop) = offer(&tx, topic, json) {
                break stop;
            }
            metrics
                .sse_events
                .with_label_values(&[topic.as_str()])
                .inc();
        }
    };
    if stop == Stop::Slow {
        metrics.sse_dropped.inc();
        tracing::debug!("event stream client dropped: it fell behind its buffer");
    }
    metrics.sse_clients.dec();
    stop
}

/// `GET /eth/v1/events?topics=head,block,..`.
pub(crate) async fn get_events<E: EthSpec>(
    State(ctx): State<Arc<ApiContext<E>>>,
    query: Query,
) -> Result<Response, HttpError> {
    let topics: Vec<EventTopic> = query.list("topics")?;
    if topics.is_empty() {
        return Err(HttpError::bad_request("no topics asked for"));
    }
    let (tx, rx) = mpsc::channel(ctx.config.sse_capacity.max(1));
    // Subscribed before answering: no event after the response is missed.
    let chain_rx = ctx.chain.events().subscribe();
    let render_ctx = ctx.clone();
    tokio::spawn(forward(
        ctx.workers(),
        ctx.metrics.clone(),
        topics,
        tx,
        chain_rx,
        move |event: &ChainEvent| render_chain(&render_ctx, event),
    ));
    let first =
        futures::stream::once(async { Ok::<_, Infallible>(Event::default().comment("ok")) });
    let events = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|event| (Ok::<_, Infallible>(event), rx))
    });
    use futures::StreamExt;
    Ok(Sse::new(first.chain(events))
        .keep_alive(KeepAlive::default())
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec;
    use types::phase0::SignedVoluntaryExit;

    fn block_event(slot: Slot) -> ChainEvent {
        ChainEvent::Block {
            slot,
            block: Root::repeat_byte(slot as u8),
            execution_optimistic: false,
        }
    }

    fn render_block(event: &ChainEvent) -> Option<(EventTopic, String)> {
        match event {
            ChainEvent::Block { slot, .. } => Some((EventTopic::Block, slot.to_string())),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_is_dropped_and_counted_and_the_bus_never_waits() {
        let metrics = crate::metrics::ApiMetrics::register(&prometheus::Registry::new()).unwrap();
        let (chain_tx, chain_rx) = broadcast::channel(16);
        // A buffer of one event that nobody drains.
        let (tx, _rx) = mpsc::channel(1);
        for slot in 1..=3 {
            chain_tx.send(block_event(slot)).unwrap();
        }
        let stop = forward(
            None,
            metrics.clone(),
            vec![EventTopic::Block],
            tx,
            chain_rx,
            render_block,
        )
        .await;
        assert_eq!(stop, Stop::Slow);
        assert_eq!(metrics.sse_dropped.get(), 1);
        assert_eq!(metrics.sse_clients.get(), 0);
        assert_eq!(
            metrics.sse_events.with_label_values(&["block"]).get(),
            1,
            "the first event filled the buffer"
        );
    }

    #[tokio::test]
    async fn a_client_that_leaves_ends_its_forwarder_without_counting_a_drop() {
        let metrics = crate::metrics::ApiMetrics::register(&prometheus::Registry::new()).unwrap();
        let (chain_tx, chain_rx) = broadcast::channel(16);
        let (tx, rx) = mpsc::channel(8);
        drop(rx);
        chain_tx.send(block_event(1)).unwrap();
        let stop = forward(
            None,
            metrics.clone(),
            vec![EventTopic::Block, EventTopic::Head],
            tx,
            chain_rx,
            render_block,
        )
        .await;
        assert_eq!(stop, Stop::Closed);
        assert_eq!(metrics.sse_dropped.get(), 0);
    }

    fn exit() -> SignedVoluntaryExit {
        SignedVoluntaryExit {
            message: types::phase0::VoluntaryExit {
                epoch: 1,
                validator_index: 2,
            },
            signature: types::BLSSignature::ZERO,
        }
    }

    fn render_block_or_exit(event: &ChainEvent) -> Option<(EventTopic, String)> {
        match event {
            ChainEvent::VoluntaryExit { exit, .. } => {
                render(EventTopic::VoluntaryExit, exit.as_ref())
            }
            _ => render_block(event),
        }
    }

    #[tokio::test]
    async fn only_the_topics_asked_for_are_sent() {
        let metrics = crate::metrics::ApiMetrics::register(&prometheus::Registry::new()).unwrap();
        let (chain_tx, chain_rx) = broadcast::channel(16);
        let (tx, mut rx) = mpsc::channel(8);
        chain_tx.send(block_event(1)).unwrap();
        chain_tx
            .send(ChainEvent::VoluntaryExit {
                validator_index: 2,
                epoch: 1,
                exit: Arc::new(exit()),
            })
            .unwrap();
        let task = tokio::spawn(forward(
            None,
            metrics.clone(),
            vec![EventTopic::VoluntaryExit],
            tx,
            chain_rx,
            render_block_or_exit,
        ));
        let first = rx.recv().await.expect("the exit is forwarded");
        let text = format!("{first:?}");
        assert!(text.contains("voluntary_exit"), "{text}");
        assert!(text.contains(r#"\"validator_index\":\"2\""#), "{text}");
        drop(rx);
        assert_eq!(task.await.unwrap(), Stop::Closed);
        drop(chain_tx);
        assert_eq!(metrics.sse_events.with_label_values(&["block"]).get(), 0);
    }

    #[test]
    fn every_operation_topic_has_its_chain_event() {
        let exit_event = ChainEvent::VoluntaryExit {
            validator_index: 2,
            epoch: 1,
            exit: Arc::new(exit()),
        };
        assert_eq!(chain_topic(&exit_event), Some(EventTopic::VoluntaryExit));
        let aggregate = ChainEvent::Aggregate {
            aggregator_index: 1,
            slot: 1,
            beacon_block_root: Root::ZERO,
            attestation: PresetMessage::new(exit()),
        };
        assert_eq!(chain_topic(&aggregate), Some(EventTopic::Attestation));
    }

    #[test]
    fn a_preset_message_of_another_type_renders_nothing() {
        let message = PresetMessage::new(exit());
        assert!(
            render_preset::<Attestation<MinimalEthSpec>>(EventTopic::Attestation, &message)
                .is_none()
        );
        let (topic, json) =
            render_preset::<SignedVoluntaryExit>(EventTopic::VoluntaryExit, &message).unwrap();
        assert_eq!(topic, EventTopic::VoluntaryExit);
        assert_eq!(json, serde_json::to_string(&exit()).unwrap());
    }

    #[test]
    fn payload_attributes_have_the_specs_shape() {
        let withdrawal = types::capella::Withdrawal {
            index: 5,
            validator_index: 10,
            address: types::Address::repeat_byte(0x11),
            amount: 15640,
        };
        let p = PreparedPayloadAttributes {
            version: types::ForkName::Fulu,
            proposer_index: 123,
            proposal_slot: 10,
            parent_block_number: 7,
            parent_block_root: Root::repeat_byte(1),
            parent_block_hash: Root::repeat_byte(2),
            timestamp: 123456,
            prev_randao: Root::repeat_byte(3),
            suggested_fee_recipient: types::Address::repeat_byte(4),
            withdrawals: vec![withdrawal],
            parent_beacon_block_root: Root::repeat_byte(1),
        };
        let (topic, json) = render_payload_attributes(&p).unwrap();
        assert_eq!(topic, EventTopic::PayloadAttributes);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let hex = |b: u8| format!("0x{}", format!("{b:02x}").repeat(32));
        let addr = |b: u8| format!("0x{}", format!("{b:02x}").repeat(20));
        assert_eq!(
            v,
            serde_json::json!({
                "version": "fulu",
                "data": {
                    "proposer_index": "123",
                    "proposal_slot": "10",
                    "parent_block_number": "7",
                    "parent_block_root": hex(1),
                    "parent_block_hash": hex(2),
                    "payload_attributes": {
                        "timestamp": "123456",
                        "prev_randao": hex(3),
                        "suggested_fee_recipient": addr(4),
                        "withdrawals": [{
                            "index": "5",
                            "validator_index": "10",
                            "address": addr(0x11),
                            "amount": "15640",
                        }],
                        "parent_beacon_block_root": hex(1),
                    },
                },
            })
        );
    }
}
