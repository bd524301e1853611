//! A test node: the network service plus a tiny "chain" that answers Status, BlocksByRange and
//! DataColumnSidecarsByRoot from fixed data and accepts every gossip message.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use networking::rate_limiter::Quota;
use networking::rpc::{Protocol, Request, Response, ResponseItem, StatusMessage};
use networking::{NetworkConfig, NetworkEvent, NetworkHandle, Validation};
use tokio::sync::mpsc;
use types::{ChainSpec, DataColumnSidecar, ForkName, MinimalEthSpec, Root, SignedBeaconBlock};

pub(crate) type E = MinimalEthSpec;

/// How long any single wait in a test may take before the test fails.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu)
}

pub(crate) const GENESIS_VALIDATORS_ROOT: Root = Root::repeat_byte(0x42);

/// [`spec`] with a Blob-Parameters-Only fork at epoch 5 (6 blobs, then 9): a second fork
/// digest within Fulu.
pub(crate) fn bpo_spec() -> ChainSpec {
    let mut spec = spec();
    spec.blob_schedule = vec![
        types::BlobScheduleEntry {
            epoch: 0,
            max_blobs_per_block: 6,
        },
        types::BlobScheduleEntry {
            epoch: 5,
            max_blobs_per_block: 9,
        },
    ];
    spec
}

/// A Fulu block at `slot`, with arbitrary-but-fixed content.
pub(crate) fn block(slot: u64) -> Arc<SignedBeaconBlock<E>> {
    let bytes = vec![slot as u8; 4096];
    let mut u = Unstructured::new(&bytes);
    let mut block =
        types::fulu::SignedBeaconBlock::<E>::arbitrary(&mut u).expect("arbitrary block");
    block.message.slot = slot;
    Arc::new(SignedBeaconBlock::Fulu(block))
}

/// A data column sidecar of column `index` for a block at `slot`.
pub(crate) fn column(slot: u64, index: u64) -> Arc<DataColumnSidecar<E>> {
    let bytes = vec![index as u8; 4096];
    let mut u = Unstructured::new(&bytes);
    let mut sidecar =
        types::fulu::DataColumnSidecar::<E>::arbitrary(&mut u).expect("arbitrary sidecar");
    sidecar.index = index;
    sidecar.signed_block_header.message.slot = slot;
    Arc::new(DataColumnSidecar::Fulu(sidecar))
}

pub(crate) fn status(spec: &ChainSpec, head_slot: u64) -> StatusMessage {
    StatusMessage {
        fork_digest: spec.compute_fork_digest(GENESIS_VALIDATORS_ROOT, 0),
        finalized_root: Root::ZERO,
        finalized_epoch: 0,
        head_root: Root::repeat_byte(head_slot as u8),
        head_slot,
        earliest_available_slot: 0,
    }
}

pub(crate) struct TestNode {
    pub handle: NetworkHandle<E>,
    /// Every event the node saw, after the chain answered what it could.
    pub events: mpsc::UnboundedReceiver<NetworkEvent<E>>,
    /// Events seen while waiting for something else, kept for later waits.
    backlog: Vec<NetworkEvent<E>>,
}

impl TestNode {
    /// Starts a node whose chain holds blocks at slots 1..=8 and columns 0..4 of each.
    pub(crate) async fn start(config: NetworkConfig) -> Self {
        let spec = spec();
        let (handle, mut network_events) = networking::start::<E>(config, spec.clone())
            .await
            .expect("network starts");
        let (tx, events) = mpsc::unbounded_channel();
        let chain_handle = handle.clone();
        tokio::spawn(async move {
            let blocks: Vec<_> = (1..=8).map(block).collect();
            while let Some(event) = network_events.recv().await {
                match &event {
                    NetworkEvent::RequestReceived {
                        request_id,
                        request,
                        ..
                    } => {
                        let response = match request {
                            Request::Status(_) => {
                                Response::success(vec![ResponseItem::Status(status(&spec, 8))])
                            }
                            Request::BlocksByRange(req) => Response::success(
                                blocks
                                    .iter()
                                    .filter(|b| {
                                        b.slot() >= req.start_slot
                                            && b.slot() < req.start_slot + req.count
                                    })
                                    .map(|b| ResponseItem::Block(b.clone()))
                                    .collect(),
                            ),
                            Request::DataColumnsByRoot(ids) => Response::success(
                                ids.iter()
                                    .flat_map(|id| {
                                        let slot = u64::from(id.block_root[0]);
                                        id.columns
                                            .iter()
                                            .filter(|c| **c < 4)
                                            .map(move |c| {
                                                ResponseItem::DataColumnSidecar(column(slot, *c))
                                            })
                                            .collect::<Vec<_>>()
                                    })
                                    .collect(),
                            ),
                            _ => Response::error(
                                networking::rpc::ResponseCode::RESOURCE_UNAVAILABLE,
                                "not in this test chain",
                            ),
                        };
                        chain_handle.send_response(*request_id, response);
                    }
                    NetworkEvent::GossipMessage {
                        source, message_id, ..
                    } => {
                        chain_handle.report_validation(
                            message_id.clone(),
                            *source,
                            Validation::Accept,
                        );
                    }
                    _ => {}
                }
                if tx.send(event).is_err() {
                    break;
                }
            }
        });
        Self {
            handle,
            events,
            backlog: Vec::new(),
        }
    }

    /// Waits for the first event `pick` accepts, failing the test after [`TIMEOUT`].
    pub(crate) async fn wait_for<T>(
        &mut self,
        what: &str,
        mut pick: impl FnMut(&NetworkEvent<E>) -> Option<T>,
    ) -> T {
        if let Some(i) = self.backlog.iter().position(|e| pick(e).is_some()) {
            let event = self.backlog.remove(i);
            return pick(&event).expect("matched above");
        }
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(event)) => {
                    if let Some(found) = pick(&event) {
                        return found;
                    }
                    // Bounded: a test sees at most a few hundred events.
                    self.backlog.push(event);
                }
                Ok(None) => panic!("event stream ended while waiting for {what}"),
                Err(_) => panic!("timed out waiting for {what}"),
            }
        }
    }

    /// Sends `request` and waits for its response.
    pub(crate) async fn request(
        &mut self,
        peer: networking::PeerId,
        request: Request<E>,
    ) -> Response<E> {
        let id = self.handle.send_request(peer, request);
        self.wait_for("a response", |event| match event {
            NetworkEvent::ResponseReceived {
                request_id,
                response,
                ..
            } if *request_id == id => Some(Ok(response.clone())),
            NetworkEvent::RequestFailed {
                request_id, error, ..
            } if *request_id == id => Some(Err(error.to_string())),
            _ => None,
        })
        .await
        .unwrap_or_else(|e| panic!("request failed: {e}"))
    }
}

/// A loopback config. The MetaData quota is raised: every new connection also makes the service
/// send its own MetaData request, and a simultaneous dial can make two, so a test's explicit
/// MetaData request could exceed the default two per five seconds and be refused locally (which
/// is right on a real network; the limiter itself is unit-tested in `rate_limiter.rs`).
pub(crate) fn local_config() -> NetworkConfig {
    let mut config = NetworkConfig::local(GENESIS_VALIDATORS_ROOT);
    config.rate_limits = config
        .rate_limits
        .with_quota(Protocol::MetaDataV3, Quota::n_every(16, 5));
    config
}

/// The value of counter or gauge `name` with `label` (or no label) in `registry`.
pub(crate) fn metric(
    registry: &prometheus::Registry,
    name: &str,
    label: Option<(&str, &str)>,
) -> f64 {
    let families = registry.gather();
    let family = families
        .iter()
        .find(|f| f.name() == name)
        .unwrap_or_else(|| panic!("metric {name} is not registered"));
    let m = family
        .get_metric()
        .iter()
        .find(|m| match label {
            Some((key, value)) => m
                .get_label()
                .iter()
                .any(|l| l.name() == key && l.value() == value),
            None => true,
        })
        .unwrap_or_else(|| panic!("{name} has no child {label:?}"));
    if family.get_field_type() == prometheus::proto::MetricType::COUNTER {
        m.get_counter().get_value()
    } else {
        m.get_gauge().get_value()
    }
}

/// The next peer that connects to `node`.
pub(crate) async fn wait_connected(node: &mut TestNode) -> networking::PeerId {
    node.wait_for("a connection", |event| match event {
        NetworkEvent::PeerConnected { peer_id, .. } => Some(*peer_id),
        _ => None,
    })
    .await
}
