//! The Beacon API server (axum): the endpoints of ethereum/beacon-APIs over a [`beacon_chain`].
//!
//! - [`ApiContext`]: what the handlers read (the chain, the operation pool, the network, the
//!   metrics registry, the options) and the server's own caches.
//! - [`router`]: every endpoint as an [`axum::Router`], with the per-route latency metrics,
//!   request timeouts, body limits and CORS around it; [`serve`] / [`serve_on`] run it until a
//!   shutdown future resolves. [`metrics_router`] serves `/metrics` on its own port.
//! - [`NetworkApi`]: what the API asks of the p2p side (publishing, subnet subscriptions,
//!   peers, sync state); [`NoNetwork`] is a node without peers.
//!
//! Conventions: JSON and SSZ negotiated from `Accept` (q-values), SSZ bodies from
//! `Content-Type`, the spec's `{code, message}` error body (and `failures` for batches) with
//! 400 for malformed input, 404 for unknown states and blocks, never a panic on input.
//!
//! [spec]: ethereum/beacon-APIs, beacon-node-oapi.yaml

mod beacon;
mod blobs;
mod builder;
mod caches;
mod config_spec;
mod debug;
mod error;
mod events;
mod gloas;
mod gloas_production;
mod light_client;
mod metrics;
mod network;
mod node;
mod pool;
mod production;
mod query;
mod response;
mod rewards;
mod state_id;
mod status_page;
mod sync_messages;
mod validator;
mod workers;

use std::collections::HashMap;
use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use beacon_chain::{BeaconChain, BlockProducer};
use operation_pool::OperationPool;
use parking_lot::Mutex;
use tokio::net::TcpListener;
use types::{EthSpec, ValidatorIndex};

pub use beacon_chain::BlockBroadcaster;
pub use config_spec::config_spec;
pub use error::HttpError;
pub use metrics::ApiMetrics;
pub use network::{
    NetworkApi, NoNetwork, PeerDetails, PublishCounts, PublishedOperation, SubnetSubscription,
};
pub use workers::{ApiPriority, ApiWorkers, WorkersRefused};

/// Options of the API server.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Where the server listens (`--http-address`, `--http-port`); 127.0.0.1:5052 by default.
    pub listen: SocketAddr,
    /// `--http-allow-origin`: the CORS origin answered in `Access-Control-Allow-Origin`
    /// (`*` for any); `None`: no CORS headers.
    pub allow_origin: Option<String>,
    /// Events buffered per SSE client before it is dropped as too slow.
    pub sse_capacity: usize,
    /// `GET /eth/v1/node/version`: `<client>/<version>/<os>`.
    pub version_string: String,
    /// Time a request may take to produce its response head before it gets a 503.
    pub request_timeout: Duration,
    /// The largest request body taken (a block with its blobs in JSON is the largest).
    pub body_limit: usize,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 5052)),
            allow_origin: None,
            sse_capacity: 256,
            version_string: format!(
                "Arbor/v{}/{}-{}",
                env!("CARGO_PKG_VERSION"),
                std::env::consts::ARCH,
                std::env::consts::OS
            ),
            request_timeout: Duration::from_secs(30),
            body_limit: 64 << 20,
        }
    }
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The listen address could not be bound.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The server failed while running.
    #[error("server: {0}")]
    Serve(#[source] std::io::Error),
    /// A metric could not be registered (a name taken twice in the registry).
    #[error("metrics: {0}")]
    Metrics(#[from] prometheus::Error),
}

/// What every handler reads: the node's parts and the server's own state.
pub struct ApiContext<E: EthSpec> {
    /// The chain.
    pub chain: Arc<BeaconChain<E>>,
    /// The operation pool the node produces blocks from.
    pub pool: Arc<OperationPool<E>>,
    /// Block production and publication.
    pub producer: Arc<BlockProducer<E>>,
    /// The p2p side.
    pub network: Arc<dyn NetworkApi<E>>,
    /// The registry `/metrics` serves (the API's own metrics are registered in it).
    pub metrics_registry: prometheus::Registry,
    /// The options.
    pub config: ApiConfig,
    /// The API's metrics.
    pub metrics: ApiMetrics,
    /// Validator registrations from `register_validator`, by public key (also forwarded to the
    /// relay when one is configured).
    pub(crate) registrations:
        Mutex<HashMap<types::BLSPubkey, beacon_api::SignedValidatorRegistrationV1>>,
    /// Validators seen live through the API (attestations, sync messages, blocks), by epoch.
    pub(crate) liveness: Mutex<std::collections::BTreeMap<types::Epoch, Vec<ValidatorIndex>>>,
    /// The head block's SSZ and JSON, made once per head.
    pub(crate) head_block: Mutex<Option<beacon::CachedBlock>>,
    /// Verified sync committee messages, aggregated for `sync_committee_contribution`.
    pub(crate) sync_messages: sync_messages::SyncMessages,
    /// Verified payload attestation messages, aggregated for the pool's `GET`.
    /// Committees, sync committee members and the key index, kept between requests.
    pub(crate) caches: caches::ApiCaches,
    /// The node's CPU workers, once set ([`Self::set_workers`]).
    workers: std::sync::OnceLock<Arc<dyn ApiWorkers>>,
}

impl<E: EthSpec> std::fmt::Debug for ApiContext<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiContext")
            .field("chain", &self.chain)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<E: EthSpec> ApiContext<E> {
    /// The context of a server over `chain`, registering the API's metrics in
    /// `metrics_registry`.
    pub fn new(
        chain: Arc<BeaconChain<E>>,
        pool: Arc<OperationPool<E>>,
        producer: Arc<BlockProducer<E>>,
        network: Arc<dyn NetworkApi<E>>,
        metrics_registry: prometheus::Registry,
        config: ApiConfig,
    ) -> Result<Self, ApiError> {
        let metrics = ApiMetrics::register(&metrics_registry)?;
        Ok(Self {
            chain,
            pool,
            producer,
            network,
            metrics_registry,
            config,
            metrics,
            registrations: Mutex::new(HashMap::new()),
            liveness: Mutex::new(std::collections::BTreeMap::new()),
            head_block: Mutex::new(None),
            sync_messages: sync_messages::SyncMessages::default(),
            caches: caches::ApiCaches::default(),
            workers: std::sync::OnceLock::new(),
        })
    }

    /// Runs the API's CPU work on `workers` (the beacon processor's API kinds) from now on;
    /// until then, and without them, it runs on tokio's blocking pool. Once: a second call
    /// is refused.
    pub fn set_workers(&self, workers: Arc<dyn ApiWorkers>) -> Result<(), Arc<dyn ApiWorkers>> {
        self.workers.set(workers)
    }

    /// The node's CPU workers, when set.
    pub(crate) fn workers(&self) -> Option<Arc<dyn ApiWorkers>> {
        self.workers.get().cloned()
    }

    /// Adds a gossip-verified sync committee message (of `subnet`) to the contributions
    /// `sync_committee_contribution` serves, and records its validator live.
    pub fn insert_sync_message(
        &self,
        message: &types::altair::SyncCommitteeMessage,
        subnet: u64,
    ) -> Result<(), HttpError> {
        pool::record_sync_message(self, message, Some(subnet)).map(|_| ())
    }

    /// Records validators seen live at `epoch` (for `liveness`: a gossip attestation, aggregate
    /// or contribution of theirs), keeping the last few epochs.
    pub fn record_live(&self, epoch: types::Epoch, indices: impl IntoIterator<Item = u64>) {
        let mut live = self.liveness.lock();
        live.entry(epoch).or_default().extend(indices);
        while live.len() > 4 {
            live.pop_first();
        }
    }
}

/// Every endpoint over `ctx`, with metrics, timeouts, the body limit and CORS.
pub fn router<E: EthSpec>(ctx: Arc<ApiContext<E>>) -> Router {
    let api = Router::new()
        // beacon
        .route("/eth/v1/beacon/genesis", get(beacon::get_genesis::<E>))
        .route(
            "/eth/v1/beacon/states/{state_id}/root",
            get(beacon::get_state_root::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/fork",
            get(beacon::get_state_fork::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/finality_checkpoints",
            get(beacon::get_finality_checkpoints::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/validators",
            get(beacon::get_validators::<E>).post(beacon::post_validators::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/validators/{validator_id}",
            get(beacon::get_validator::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/validator_balances",
            get(beacon::get_validator_balances::<E>).post(beacon::post_validator_balances::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/validator_identities",
            post(beacon::post_validator_identities::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/committees",
            get(beacon::get_committees::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/sync_committees",
            get(beacon::get_sync_committees::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/randao",
            get(beacon::get_randao::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/pending_deposits",
            get(beacon::get_pending_deposits::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/pending_partial_withdrawals",
            get(beacon::get_pending_partial_withdrawals::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/pending_consolidations",
            get(beacon::get_pending_consolidations::<E>),
        )
        .route(
            "/eth/v1/beacon/states/{state_id}/proposer_lookahead",
            get(beacon::get_proposer_lookahead::<E>),
        )
        .route("/eth/v1/beacon/headers", get(beacon::get_headers::<E>))
        .route(
            "/eth/v1/beacon/headers/{block_id}",
            get(beacon::get_header::<E>),
        )
        .route(
            "/eth/v2/beacon/blocks",
            post(production::post_block_v2::<E>),
        )
        .route(
            "/eth/v1/beacon/blinded_blocks",
            post(builder::post_blinded_block_v1::<E>),
        )
        .route(
            "/eth/v1/beacon/blinded_blocks/{block_id}",
            get(builder::get_blinded_block::<E>),
        )
        .route(
            "/eth/v2/beacon/blinded_blocks",
            post(builder::post_blinded_block_v2::<E>),
        )
        .route(
            "/eth/v2/beacon/blocks/{block_id}",
            get(beacon::get_block_v2::<E>),
        )
        .route(
            "/eth/v1/beacon/blocks/{block_id}/root",
            get(beacon::get_block_root::<E>),
        )
        .route(
            "/eth/v2/beacon/blocks/{block_id}/attestations",
            get(beacon::get_block_attestations_v2::<E>),
        )
        .route(
            "/eth/v1/beacon/blobs/{block_id}",
            get(blobs::get_blobs::<E>),
        )
        .route(
            "/eth/v1/beacon/blob_sidecars/{block_id}",
            get(blobs::get_blob_sidecars::<E>),
        )
        .route(
            "/eth/v1/beacon/execution_payload_envelopes/{block_id}",
            get(gloas::get_execution_payload_envelope::<E>),
        )
        .route(
            "/eth/v1/debug/beacon/data_column_sidecars/{block_id}",
            get(beacon::get_data_column_sidecars::<E>),
        )
        .route(
            "/eth/v2/debug/beacon/states/{state_id}",
            get(beacon::get_debug_state_v2::<E>),
        )
        .route(
            "/eth/v2/debug/beacon/heads",
            get(beacon::get_debug_heads::<E>),
        )
        .route(
            "/eth/v1/debug/fork_choice",
            get(debug::get_fork_choice::<E>),
        )
        // pool
        .route(
            "/eth/v2/beacon/pool/attestations",
            post(pool::post_attestations_v2::<E>).get(pool::get_attestations_v2::<E>),
        )
        .route(
            "/eth/v1/beacon/pool/payload_attestations",
            post(gloas::post_payload_attestations::<E>).get(gloas::get_payload_attestations::<E>),
        )
        .route(
            "/eth/v1/beacon/pool/sync_committees",
            post(pool::post_sync_committees::<E>),
        )
        .route(
            "/eth/v1/beacon/pool/voluntary_exits",
            post(pool::post_voluntary_exit::<E>).get(pool::get_voluntary_exits::<E>),
        )
        .route(
            "/eth/v1/beacon/pool/proposer_slashings",
            post(pool::post_proposer_slashing::<E>).get(pool::get_proposer_slashings::<E>),
        )
        .route(
            "/eth/v2/beacon/pool/attester_slashings",
            post(pool::post_attester_slashing_v2::<E>).get(pool::get_attester_slashings_v2::<E>),
        )
        .route(
            "/eth/v1/beacon/pool/bls_to_execution_changes",
            post(pool::post_bls_to_execution_changes::<E>)
                .get(pool::get_bls_to_execution_changes::<E>),
        )
        // rewards
        .route(
            "/eth/v1/beacon/rewards/attestations/{epoch}",
            post(rewards::post_attestation_rewards::<E>),
        )
        .route(
            "/eth/v1/beacon/rewards/blocks/{block_id}",
            get(rewards::get_block_rewards::<E>),
        )
        .route(
            "/eth/v1/beacon/rewards/sync_committee/{block_id}",
            post(rewards::post_sync_committee_rewards::<E>),
        )
        // light client
        .route(
            "/eth/v1/beacon/light_client/bootstrap/{block_root}",
            get(light_client::get_light_client_bootstrap::<E>),
        )
        .route(
            "/eth/v1/beacon/light_client/updates",
            get(light_client::get_light_client_updates::<E>),
        )
        .route(
            "/eth/v1/beacon/light_client/finality_update",
            get(light_client::get_light_client_finality_update::<E>),
        )
        .route(
            "/eth/v1/beacon/light_client/optimistic_update",
            get(light_client::get_light_client_optimistic_update::<E>),
        )
        // config
        .route("/eth/v1/config/spec", get(node::get_spec::<E>))
        .route(
            "/eth/v1/config/fork_schedule",
            get(node::get_fork_schedule::<E>),
        )
        .route(
            "/eth/v1/config/deposit_contract",
            get(node::get_deposit_contract::<E>),
        )
        // node
        .route("/eth/v1/node/version", get(node::get_version::<E>))
        .route("/eth/v2/node/version", get(gloas::get_version_v2::<E>))
        .route("/eth/v1/node/syncing", get(node::get_syncing::<E>))
        .route("/eth/v1/node/health", get(node::get_health::<E>))
        .route("/eth/v1/node/identity", get(node::get_identity::<E>))
        .route("/eth/v1/node/peers", get(node::get_peers::<E>))
        .route("/eth/v1/node/peers/{peer_id}", get(node::get_peer::<E>))
        .route("/eth/v1/node/peer_count", get(node::get_peer_count::<E>))
        // validator
        .route(
            "/eth/v1/validator/duties/attester/{epoch}",
            post(validator::post_attester_duties::<E>),
        )
        .route(
            "/eth/v1/validator/duties/proposer/{epoch}",
            get(validator::get_proposer_duties::<E>),
        )
        .route(
            "/eth/v2/validator/duties/proposer/{epoch}",
            get(validator::get_proposer_duties_v2::<E>),
        )
        .route(
            "/eth/v1/validator/duties/ptc/{epoch}",
            post(gloas::post_ptc_duties::<E>),
        )
        .route(
            "/eth/v1/validator/payload_attestation_data/{slot}",
            get(gloas::get_payload_attestation_data::<E>),
        )
        .route(
            "/eth/v1/validator/duties/sync/{epoch}",
            post(validator::post_sync_duties::<E>),
        )
        .route(
            "/eth/v3/validator/blocks/{slot}",
            get(production::get_block_v3::<E>),
        )
        .route(
            "/eth/v4/validator/blocks/{slot}",
            get(gloas_production::get_block_v4::<E>),
        )
        .route(
            "/eth/v1/validator/execution_payload_envelopes/{slot}/{beacon_block_root}",
            get(gloas_production::get_execution_payload_envelope::<E>),
        )
        .route(
            "/eth/v1/beacon/execution_payload_envelopes",
            post(gloas_production::post_execution_payload_envelope::<E>),
        )
        .route(
            "/eth/v1/beacon/execution_payload_bids",
            post(gloas::post_execution_payload_bid::<E>),
        )
        .route(
            "/eth/v1/validator/attestation_data",
            get(validator::get_attestation_data::<E>),
        )
        .route(
            "/eth/v2/validator/aggregate_attestation",
            get(validator::get_aggregate_attestation_v2::<E>),
        )
        .route(
            "/eth/v2/validator/aggregate_and_proofs",
            post(pool::post_aggregate_and_proofs_v2::<E>),
        )
        .route(
            "/eth/v1/validator/sync_committee_contribution",
            get(validator::get_sync_committee_contribution::<E>),
        )
        .route(
            "/eth/v1/validator/contribution_and_proofs",
            post(pool::post_contribution_and_proofs::<E>),
        )
        .route(
            "/eth/v1/validator/beacon_committee_subscriptions",
            post(validator::post_beacon_committee_subscriptions::<E>),
        )
        .route(
            "/eth/v1/validator/sync_committee_subscriptions",
            post(validator::post_sync_committee_subscriptions::<E>),
        )
        .route(
            "/eth/v1/validator/prepare_beacon_proposer",
            post(validator::post_prepare_beacon_proposer::<E>),
        )
        .route(
            "/eth/v1/validator/register_validator",
            post(builder::post_register_validator::<E>),
        )
        .route(
            "/eth/v1/validator/beacon_committee_selections",
            post(validator::post_selections),
        )
        .route(
            "/eth/v1/validator/sync_committee_selections",
            post(validator::post_selections),
        )
        .route(
            "/eth/v1/validator/liveness/{epoch}",
            post(validator::post_liveness::<E>),
        )
        // events and metrics
        .route("/eth/v1/events", get(events::get_events::<E>))
        .route("/metrics", get(metrics::get_metrics::<E>))
        // Arbor's own: the status page and what it reads
        .route("/", get(status_page::get_status_page))
        .route("/arbor/v1/status", get(status_page::get_status::<E>))
        .route(
            "/arbor/v1/blocks/{block_id}/timeline",
            get(status_page::get_block_timeline::<E>),
        )
        .fallback(error::not_found_route);
    api.layer(axum::middleware::from_fn_with_state(
        ctx.clone(),
        metrics::track::<E>,
    ))
    .layer(DefaultBodyLimit::max(ctx.config.body_limit))
    .with_state(ctx)
}

/// A router serving only `GET /metrics` (the text of `registry`), for the metrics port.
pub fn metrics_router(registry: prometheus::Registry) -> Router {
    Router::new()
        .route("/metrics", get(metrics::get_registry))
        .with_state(registry)
}

/// Binds `addr` (port 0 picks a free one; read it back with `local_addr`).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ApiError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ApiError::Bind { addr, source })
}

/// How long the requests in flight may take to finish once shutdown is asked. An event stream
/// (`GET /eth/v1/events`, which a validator client keeps open) never finishes: without a bound,
/// a node with a validator client attached did not stop on SIGTERM until it was killed.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` resolves; the requests in flight then have
/// [`SHUTDOWN_GRACE`] to finish, and those still open are dropped with the runtime.
pub async fn serve_router(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ApiError> {
    serve_with_grace(listener, router, shutdown, SHUTDOWN_GRACE).await
}

async fn serve_with_grace(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> Result<(), ApiError> {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let server = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        })
        .into_future();
    tokio::pin!(server);
    tokio::pin!(shutdown);
    tokio::select! {
        result = &mut server => return result.map_err(ApiError::Serve),
        () = &mut shutdown => {}
    }
    let _ = stop.send(true);
    match tokio::time::timeout(grace, server).await {
        Ok(result) => result.map_err(ApiError::Serve),
        Err(_) => {
            tracing::info!(
                ?grace,
                "requests still open at shutdown (event streams) are dropped"
            );
            Ok(())
        }
    }
}

/// Serves the API of `ctx` on `listener` until `shutdown` resolves.
pub async fn serve_on<E: EthSpec>(
    listener: TcpListener,
    ctx: Arc<ApiContext<E>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ApiError> {
    serve_router(listener, router(ctx), shutdown).await
}

/// Binds `ctx.config.listen` and serves the API until `shutdown` resolves.
pub async fn serve<E: EthSpec>(
    ctx: Arc<ApiContext<E>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ApiError> {
    let listener = bind(ctx.config.listen).await?;
    tracing::info!(address = %ctx.config.listen, "Beacon API listening");
    serve_on(listener, ctx, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A response that never ends (as an event stream) does not hold the server past its grace
    /// once shutdown is asked; a server without open requests stops at once.
    #[tokio::test]
    async fn shutdown_does_not_wait_for_a_response_that_never_ends() {
        let router = Router::new().route(
            "/stream",
            get(|| async {
                axum::body::Body::from_stream(futures::stream::pending::<
                    Result<axum::body::Bytes, std::io::Error>,
                >())
            }),
        );
        let listener = bind("127.0.0.1:0".parse().expect("address"))
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let (shutdown, on_shutdown) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve_with_grace(
            listener,
            router,
            async move {
                let _ = on_shutdown.await;
            },
            Duration::from_millis(200),
        ));
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(b"GET /stream HTTP/1.1\r\nhost: localhost\r\n\r\n")
            .await
            .expect("request");
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.expect("response head");
        assert_eq!(&head, b"HTTP/1.1 200");
        let _ = shutdown.send(());
        // Bounded so that a hang fails the test (without the grace it never returns).
        tokio::time::timeout(Duration::from_secs(60), server)
            .await
            .expect("the server stopped despite the open stream")
            .expect("task")
            .expect("serve");
        drop(stream);
    }
}
