//! The API over `beacon_chain`'s harness: its chain, operation pool and block producer served
//! on 127.0.0.1:0 until the server is dropped. Shared by the tests and the benches.

#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "test helpers: each test binary uses some; a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::harness::ChainHarness;
use http_api::{ApiConfig, ApiContext, ApiPriority, ApiWorkers, NoNetwork, WorkersRefused};
use types::EthSpec;

/// The API's CPU work on a beacon processor's API kinds (`api_request_p0`/`p1`, and the timers'
/// kinds), as the node's client hands it over: the same queues, dispatch and pool threads, so
/// a bench pays what the node pays per request. A server without workers would run the work on
/// tokio's blocking pool, where its parallel sections run one piece after the other.
pub(crate) struct ProcessorWorkers(pub(crate) beacon_processor::BeaconProcessor<NoBatches>);

impl ProcessorWorkers {
    /// A processor of the machine's size, with its own pools.
    pub(crate) fn new() -> Self {
        Self(
            beacon_processor::BeaconProcessor::new(
                beacon_processor::BeaconProcessorConfig::default(),
                NoBatches,
            )
            .unwrap(),
        )
    }
}

impl ApiWorkers for ProcessorWorkers {
    fn submit(
        &self,
        priority: ApiPriority,
        job: Box<dyn FnOnce() + Send + 'static>,
    ) -> Result<(), WorkersRefused> {
        use beacon_processor::WorkKind;
        let kind = match priority {
            ApiPriority::P0 => WorkKind::ApiRequestP0,
            ApiPriority::P1 => WorkKind::ApiRequestP1,
            ApiPriority::StateAdvance => WorkKind::StateAdvance,
            ApiPriority::Caches => WorkKind::CachePriming,
        };
        self.0
            .submit(beacon_processor::Task::new(kind, move |_| job()))
            .map_err(|_| WorkersRefused)
    }
}

/// A processor that is handed no batchable gossip: the API only queues tasks.
pub(crate) struct NoBatches;

impl beacon_processor::BatchHandlers for NoBatches {
    type Attestation = ();
    type Aggregate = ();
    type DataColumn = ();
    type PayloadAttestation = ();

    fn process_gossip_attestations(&self, _: Vec<()>, _: &beacon_processor::WorkerContext<'_>) {}

    fn process_gossip_aggregates(&self, _: Vec<()>, _: &beacon_processor::WorkerContext<'_>) {}

    fn process_gossip_data_columns(&self, _: Vec<()>, _: &beacon_processor::WorkerContext<'_>) {}
    fn process_gossip_payload_attestations(
        &self,
        _: Vec<()>,
        _: &beacon_processor::WorkerContext<'_>,
    ) {
    }

    fn dropped(&self, _: beacon_processor::BatchItem<Self>, _: beacon_processor::DropReason) {}
}

/// A served API: its base URL and context; the server stops when this is dropped.
pub(crate) struct Server<E: EthSpec> {
    /// `http://127.0.0.1:{port}`.
    pub(crate) base: String,
    /// What the handlers serve.
    pub(crate) ctx: Arc<ApiContext<E>>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

/// Serves the harness's chain, pool and producer with `network` as the p2p side and `registry`
/// for the metrics.
pub(crate) async fn serve<E: EthSpec>(
    harness: &ChainHarness<E>,
    network: Arc<NoNetwork>,
    registry: prometheus::Registry,
    config: ApiConfig,
) -> Server<E> {
    let ctx = Arc::new(
        ApiContext::new(
            harness.chain.clone(),
            harness.op_pool.clone(),
            harness.producer.clone(),
            network,
            registry,
            config,
        )
        .unwrap(),
    );
    let listener = http_api::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(http_api::serve_on(listener, ctx.clone(), async move {
        let _ = stop.await;
    }));
    Server {
        base: format!("http://{addr}"),
        ctx,
        _shutdown: shutdown,
    }
}
