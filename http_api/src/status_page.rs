//! Arbor's own endpoints for operators: the status page at `/`, what it reads beyond the
//! standard API (`/arbor/v1/status`), and the block timeline as JSON
//! (`/arbor/v1/blocks/{block_id}/timeline`).
//!
//! The page is one self-contained HTML file (inline script and style, no external assets): it
//! reads the standard endpoints (syncing, finality checkpoints, identity, peers, version) and
//! [`get_status`] (which adds the peers by client and by custody group count, from
//! [`crate::NetworkApi::peer_details`]), and refreshes on the event stream's `head`, `block` and
//! `finalized_checkpoint` events.
//!
//! Timelines are the chain's ([`beacon_chain::timeline`]): kept for the last
//! [`TIMELINE_SLOTS`] slots, in milliseconds from the start of the block's slot; from Gloas
//! they include the block's payload envelope (first seen, imported).
//!
//! **Gloas blocks** (EIP-7732) also carry, in [`get_status`], their payload status and their
//! PTC participation; blocks before Gloas carry neither (the fields are absent):
//! - `payload_status`: [`BeaconChain::canonical_payload_status`] on the head the page lists:
//!   `FULL` or `EMPTY` as the head's chain decided (a later block built on the payload or
//!   beside it), `PENDING` for the head block when fork choice's head is not its FULL node.
//! - `ptc_participation`: the PTC positions whose votes on the block were **packed into its
//!   canonical child's `payload_attestations`** (the votes the chain counted on-chain, the same
//!   on every node; the votes only this node saw on gossip are not counted), of `PTC_SIZE`,
//!   and how many of them said the payload was present. `null` while the block has no child
//!   (the head). A child in a later slot than the next one packs none: `0` votes.
//!
//! [`BeaconChain::canonical_payload_status`]: beacon_chain::BeaconChain::canonical_payload_status

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use beacon_api::{BlockId, GenericResponse};
use beacon_chain::HeadSnapshot;
use beacon_chain::timeline::{AvailableVia, BlockTimeline, SeenVia, TIMELINE_SLOTS};
use fork_choice::PayloadStatus;
use serde::Serialize;
use ssz_types::typenum::Unsigned;
use types::{EthSpec, Root, SignedBeaconBlock, Slot, ValidatorIndex};

use crate::ApiContext;
use crate::blobs::commitments_of;
use crate::error::HttpError;
use crate::network::PeerDetails;
use crate::query::{PathParams, parse_path};
use crate::response::{blocking, json};
use crate::state_id::block_at;

type Ctx<E> = State<Arc<ApiContext<E>>>;

/// The status page (inline script and style).
const STATUS_PAGE: &str = include_str!("status_page.html");

/// Blocks listed by [`get_status`], back from the head.
pub(crate) const STATUS_BLOCKS: usize = 16;

/// One stage of a timeline: when, in milliseconds from the start of the block's slot
/// (negative: early, within the clock disparity), and how where the chain records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StageJson {
    delay_ms: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    via: Option<&'static str>,
}

/// A block's timeline as served: seen → gossip verified → available → executed → imported →
/// head, then (Gloas) its envelope seen → imported, each `null` until it happened. For a
/// Gloas block `executed` is its envelope's payload's `engine_newPayload`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct TimelineJson {
    block_root: Root,
    #[serde(with = "beacon_api::json::quoted_u64")]
    slot: Slot,
    seen: Option<StageJson>,
    gossip_verified: Option<StageJson>,
    available: Option<StageJson>,
    executed: Option<StageJson>,
    imported: Option<StageJson>,
    head: Option<StageJson>,
    envelope_seen: Option<StageJson>,
    envelope_imported: Option<StageJson>,
}

fn seen_via(via: SeenVia) -> &'static str {
    match via {
        SeenVia::Gossip => "gossip",
        SeenVia::Rpc => "rpc",
        SeenVia::Api => "api",
    }
}

fn available_via(via: AvailableVia) -> &'static str {
    match via {
        AvailableVia::NoBlobs => "no_blobs",
        AvailableVia::Columns => "columns",
        AvailableVia::GetBlobs => "get_blobs",
        AvailableVia::Reconstruction => "reconstruction",
    }
}

impl TimelineJson {
    fn new(block_root: Root, t: &BlockTimeline) -> Self {
        let at = |ms: Option<i64>| {
            ms.map(|delay_ms| StageJson {
                delay_ms,
                via: None,
            })
        };
        Self {
            block_root,
            slot: t.slot,
            seen: t.seen.map(|(delay_ms, via)| StageJson {
                delay_ms,
                via: Some(seen_via(via)),
            }),
            envelope_seen: t.envelope_seen.map(|(delay_ms, via)| StageJson {
                delay_ms,
                via: Some(seen_via(via)),
            }),
            envelope_imported: at(t.envelope_imported),
            gossip_verified: at(t.gossip_verified),
            available: t.available.map(|(delay_ms, via)| StageJson {
                delay_ms,
                via: Some(available_via(via)),
            }),
            executed: at(t.executed),
            imported: at(t.imported),
            head: at(t.head),
        }
    }
}

/// The timeline of the block `id` names; 404 for an unknown block and for one whose timeline
/// is no longer kept.
fn timeline_of<E: EthSpec>(ctx: &ApiContext<E>, id: BlockId) -> Result<TimelineJson, HttpError> {
    // A root is looked up as given: a block seen but not imported yet has a timeline too.
    let root = match id {
        BlockId::Root(root) => root,
        other => block_at(ctx, other)?.root,
    };
    let timeline = ctx.chain.block_timeline(&root).ok_or_else(|| {
        HttpError::not_found(format!(
            "no timeline for block {id}: unknown, or older than the last {TIMELINE_SLOTS} slots"
        ))
    })?;
    Ok(TimelineJson::new(root, &timeline))
}

/// `GET /arbor/v1/blocks/{block_id}/timeline`.
pub(crate) async fn get_block_timeline<E: EthSpec>(
    State(ctx): Ctx<E>,
    path: PathParams,
) -> Result<Response, HttpError> {
    let id: BlockId = parse_path("block id", path.at(0)?)?;
    let data = blocking(ctx.workers(), move || timeline_of(&ctx, id)).await?;
    json(&GenericResponse { data })
}

/// A recent canonical block as the status page lists it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StatusBlock {
    #[serde(with = "beacon_api::json::quoted_u64")]
    slot: Slot,
    block_root: Root,
    #[serde(with = "beacon_api::json::quoted_u64")]
    proposer_index: ValidatorIndex,
    /// `len(blob_kzg_commitments)`.
    blob_count: usize,
    /// Data columns the node stores for it.
    columns_stored: usize,
    /// Their indices.
    column_indices: Vec<u64>,
    /// `NUMBER_OF_COLUMNS`.
    columns_total: u64,
    /// `None` once older than the timelines kept (or for a block the node did not import
    /// itself, such as the anchor).
    timeline: Option<TimelineJson>,
    /// Gloas blocks only: absent before Gloas.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    gloas: Option<GloasSlotStatus>,
}

/// What the status page shows of a Gloas block's payload (see the module's notes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct GloasSlotStatus {
    /// `FULL`, `EMPTY` or `PENDING`; `null` when the head's chain cannot tell (a block older
    /// than `SLOTS_PER_HISTORICAL_ROOT`).
    payload_status: Option<&'static str>,
    /// `null` while the block has no canonical child.
    ptc_participation: Option<PtcParticipation>,
}

/// The PTC votes on a block packed into its canonical child's `payload_attestations`.
///
/// [spec]: gloas/beacon-chain.md#new-process_payload_attestation
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct PtcParticipation {
    /// PTC positions with a vote (distinct positions, over all aggregates).
    votes: usize,
    /// Of them, those whose vote said `payload_present`.
    payload_present: usize,
    /// `PTC_SIZE`.
    committee_size: usize,
}

fn payload_status_name(status: PayloadStatus) -> &'static str {
    match status {
        PayloadStatus::Full => "FULL",
        PayloadStatus::Empty => "EMPTY",
        PayloadStatus::Pending => "PENDING",
    }
}

/// The PTC votes on block `root` of `slot` that `child` packed: the union of the aggregation
/// bits of its payload attestations whose data names `root` and `slot` (a child before Gloas
/// packs none).
fn ptc_participation<E: EthSpec>(
    root: Root,
    slot: Slot,
    child: &SignedBeaconBlock<E>,
) -> PtcParticipation {
    let size = E::PtcSize::to_usize();
    let mut voted = std::collections::BTreeSet::new();
    let mut present = std::collections::BTreeSet::new();
    let attestations = match child {
        SignedBeaconBlock::Gloas(b) => b.message.body.payload_attestations.iter(),
        SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Electra(_)
        | SignedBeaconBlock::Fulu(_) => {
            return PtcParticipation {
                votes: 0,
                payload_present: 0,
                committee_size: size,
            };
        }
    };
    for attestation in attestations {
        if attestation.data.beacon_block_root != root || attestation.data.slot != slot {
            continue;
        }
        let positions = attestation.aggregation_bits.iter().enumerate();
        for (position, _) in positions.filter(|(_, bit)| *bit) {
            voted.insert(position);
            if attestation.data.payload_present {
                present.insert(position);
            }
        }
    }
    PtcParticipation {
        votes: voted.len(),
        payload_present: present.len(),
        committee_size: size,
    }
}

/// A queue of the beacon processor.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct QueueDepth {
    kind: String,
    length: i64,
    dropped_total: u64,
}

/// A worker pool of the beacon processor.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BusyWorkers {
    pool: String,
    busy: i64,
}

/// The connected peers running one client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ClientPeers {
    client: String,
    count: usize,
}

/// The connected peers custodying one number of custody groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CustodyPeers {
    /// `null`: not known yet (neither MetaData nor ENR seen).
    custody_group_count: Option<u64>,
    count: usize,
}

/// A connected peer's client and custody, beside its `node/peers` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct PeerClient {
    peer_id: String,
    client: String,
    agent_version: Option<String>,
    custody_group_count: Option<u64>,
}

/// The peers grouped by client (most peers first, then by name) and by custody group count
/// (ascending, unknown last).
fn group_peers(peers: &[PeerDetails]) -> (Vec<ClientPeers>, Vec<CustodyPeers>) {
    let mut clients = std::collections::BTreeMap::<&str, usize>::new();
    let mut custody = std::collections::BTreeMap::<(bool, u64), usize>::new();
    for peer in peers {
        *clients.entry(peer.client.as_str()).or_default() += 1;
        let key = peer
            .custody_group_count
            .map_or((true, 0), |cgc| (false, cgc));
        *custody.entry(key).or_default() += 1;
    }
    let mut by_client: Vec<ClientPeers> = clients
        .into_iter()
        .map(|(client, count)| ClientPeers {
            client: client.to_string(),
            count,
        })
        .collect();
    by_client.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.client.cmp(&b.client)));
    let by_custody = custody
        .into_iter()
        .map(|((unknown, cgc), count)| CustodyPeers {
            custody_group_count: (!unknown).then_some(cgc),
            count,
        })
        .collect();
    (by_client, by_custody)
}

/// What the status page needs beyond the standard endpoints.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StatusData {
    /// The wall clock's slot.
    #[serde(with = "beacon_api::json::quoted_u64")]
    clock_slot: Slot,
    #[serde(with = "beacon_api::json::quoted_u64")]
    head_slot: Slot,
    head_root: Root,
    /// The last [`STATUS_BLOCKS`] canonical blocks, newest first.
    blocks: Vec<StatusBlock>,
    /// `beacon_processor_queue_length` by kind (empty for a node without a processor: no p2p).
    processor_queues: Vec<QueueDepth>,
    /// `beacon_processor_busy_workers` by pool.
    processor_workers: Vec<BusyWorkers>,
    /// The connected peers by client.
    peers_by_client: Vec<ClientPeers>,
    /// The connected peers by custody group count.
    peers_by_custody: Vec<CustodyPeers>,
    /// Each connected peer's client and custody.
    peer_clients: Vec<PeerClient>,
}

/// The label `name`'s value of a sample.
fn label<'a>(metric: &'a prometheus::proto::Metric, name: &str) -> &'a str {
    metric
        .get_label()
        .iter()
        .find(|l| l.name() == name)
        .map_or("", |l| l.value())
}

/// The processor's queue depths and busy workers, from the registry the node's parts register
/// in.
fn processor_metrics(registry: &prometheus::Registry) -> (Vec<QueueDepth>, Vec<BusyWorkers>) {
    let families = registry.gather();
    let family = |name: &str| families.iter().find(|f| f.name() == name);
    let dropped = |kind: &str| -> u64 {
        family("beacon_processor_work_events_dropped_total")
            .and_then(|f| f.get_metric().iter().find(|m| label(m, "kind") == kind))
            .map_or(0, |m| m.get_counter().get_value() as u64)
    };
    let queues = family("beacon_processor_queue_length")
        .map(|f| {
            f.get_metric()
                .iter()
                .map(|m| {
                    let kind = label(m, "kind");
                    QueueDepth {
                        kind: kind.to_string(),
                        length: m.get_gauge().get_value() as i64,
                        dropped_total: dropped(kind),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let workers = family("beacon_processor_busy_workers")
        .map(|f| {
            f.get_metric()
                .iter()
                .map(|m| BusyWorkers {
                    pool: label(m, "pool").to_string(),
                    busy: m.get_gauge().get_value() as i64,
                })
                .collect()
        })
        .unwrap_or_default();
    (queues, workers)
}

/// The last [`STATUS_BLOCKS`] canonical blocks, from the head back through parent roots.
fn recent_blocks<E: EthSpec>(
    ctx: &ApiContext<E>,
    head: &HeadSnapshot<E>,
) -> Result<Vec<StatusBlock>, HttpError> {
    let store = ctx.chain.store();
    let mut blocks = Vec::with_capacity(STATUS_BLOCKS);
    let mut root = head.block_root;
    // The canonical child of the block at hand (the one listed before it).
    let mut child: Option<SignedBeaconBlock<E>> = None;
    while blocks.len() < STATUS_BLOCKS {
        let Some(block) = store.get_block(&root)? else {
            break;
        };
        let slot = block.slot();
        let gloas = ctx
            .chain
            .spec()
            .fork_name_at_slot::<E>(slot)
            .gloas_enabled()
            .then(|| GloasSlotStatus {
                payload_status: ctx
                    .chain
                    .canonical_payload_status(head, root, slot)
                    .map(payload_status_name),
                ptc_participation: child
                    .as_ref()
                    .map(|child| ptc_participation(root, slot, child)),
            });
        let column_indices = store.data_column_indices(&root)?;
        blocks.push(StatusBlock {
            slot,
            block_root: root,
            proposer_index: block.proposer_index(),
            blob_count: commitments_of(&block).len(),
            columns_stored: column_indices.len(),
            column_indices,
            columns_total: E::NumberOfColumns::to_u64(),
            timeline: ctx
                .chain
                .block_timeline(&root)
                .map(|t| TimelineJson::new(root, &t)),
            gloas,
        });
        if slot == 0 {
            break;
        }
        root = block.parent_root();
        child = Some(block);
    }
    Ok(blocks)
}

fn status<E: EthSpec>(ctx: &ApiContext<E>) -> Result<StatusData, HttpError> {
    let head = ctx.chain.head();
    let (processor_queues, processor_workers) = processor_metrics(&ctx.metrics_registry);
    let details = ctx.network.peer_details();
    let (peers_by_client, peers_by_custody) = group_peers(&details);
    let peer_clients = details
        .into_iter()
        .map(|p| PeerClient {
            peer_id: p.peer_id,
            client: p.client,
            agent_version: p.agent_version,
            custody_group_count: p.custody_group_count,
        })
        .collect();
    Ok(StatusData {
        clock_slot: ctx.chain.slot_at_ms(ctx.chain.now_ms()),
        head_slot: head.slot,
        head_root: head.block_root,
        blocks: recent_blocks(ctx, &head)?,
        processor_queues,
        processor_workers,
        peers_by_client,
        peers_by_custody,
        peer_clients,
    })
}

/// `GET /arbor/v1/status`: the clock, the last blocks with their blob counts, stored columns,
/// timelines and (Gloas) payload status and PTC participation, the beacon processor's queues,
/// and the peers by client and custody.
pub(crate) async fn get_status<E: EthSpec>(State(ctx): Ctx<E>) -> Result<Response, HttpError> {
    let data = blocking(ctx.workers(), move || status(&ctx)).await?;
    json(&GenericResponse { data })
}

/// `GET /`: the status page.
pub(crate) async fn get_status_page() -> Response {
    ([(header::CACHE_CONTROL, "no-cache")], Html(STATUS_PAGE)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_serializes_each_stage_or_null() {
        let t = BlockTimeline {
            slot: 7,
            seen: Some((-12, SeenVia::Gossip)),
            gossip_verified: Some(40),
            available: Some((310, AvailableVia::Reconstruction)),
            executed: None,
            imported: None,
            head: None,
            envelope_seen: Some((1_900, SeenVia::Rpc)),
            envelope_imported: None,
        };
        let json = serde_json::to_value(TimelineJson::new(Root::repeat_byte(1), &t)).unwrap();
        assert_eq!(json["slot"], "7");
        assert_eq!(
            json["seen"],
            serde_json::json!({"delay_ms": -12, "via": "gossip"})
        );
        assert_eq!(json["gossip_verified"], serde_json::json!({"delay_ms": 40}));
        assert_eq!(json["available"]["via"], "reconstruction");
        assert!(json["executed"].is_null() && json["head"].is_null());
        assert_eq!(
            json["envelope_seen"],
            serde_json::json!({"delay_ms": 1_900, "via": "rpc"})
        );
        assert!(json["envelope_imported"].is_null());
        assert_eq!(
            json["block_root"],
            format!("0x{}", "01".repeat(32)).as_str()
        );
    }

    #[test]
    fn peers_are_grouped_by_client_and_custody() {
        let peer = |id: &str, client: &str, cgc: Option<u64>| PeerDetails {
            peer_id: id.into(),
            agent_version: None,
            client: client.into(),
            custody_group_count: cgc,
        };
        let peers = [
            peer("a", "Teku", Some(4)),
            peer("b", "Lighthouse", Some(128)),
            peer("c", "Teku", Some(4)),
            peer("d", "Unknown", None),
            peer("e", "Arbor", Some(8)),
        ];
        let (by_client, by_custody) = group_peers(&peers);
        let clients: Vec<(&str, usize)> = by_client
            .iter()
            .map(|c| (c.client.as_str(), c.count))
            .collect();
        assert_eq!(
            clients,
            vec![("Teku", 2), ("Arbor", 1), ("Lighthouse", 1), ("Unknown", 1)]
        );
        let custody: Vec<(Option<u64>, usize)> = by_custody
            .iter()
            .map(|c| (c.custody_group_count, c.count))
            .collect();
        assert_eq!(
            custody,
            vec![(Some(4), 2), (Some(8), 1), (Some(128), 1), (None, 1)]
        );
        assert_eq!(group_peers(&[]), (vec![], vec![]));
    }

    #[test]
    fn the_page_is_self_contained() {
        // No external script, style, image or font: the page works on a node without internet.
        for needle in ["src=\"http", "href=\"http", "url(http", "@import", "<link "] {
            assert!(!STATUS_PAGE.contains(needle), "{needle} in the page");
        }
        for endpoint in [
            "/arbor/v1/status",
            "/arbor/v1/blocks/",
            "/eth/v1/events?topics=head,block,finalized_checkpoint",
            "/eth/v1/node/syncing",
            "/eth/v1/node/peers",
        ] {
            assert!(STATUS_PAGE.contains(endpoint), "{endpoint} not read");
        }
    }
}
