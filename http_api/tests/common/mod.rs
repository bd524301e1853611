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

/// The API's CPU work on a rayon pool (the harness's chain pool), as the node runs it on the
/// beacon processor's pool: its parallel sections then use that pool, where tokio's blocking
/// pool (a server without workers) would run them one piece after the other. Every priority
/// alike: there is no other work to queue behind.
pub(crate) struct PoolWorkers(pub(crate) Arc<rayon::ThreadPool>);

impl ApiWorkers for PoolWorkers {
    fn submit(
        &self,
        _priority: ApiPriority,
        job: Box<dyn FnOnce() + Send + 'static>,
    ) -> Result<(), WorkersRefused> {
        self.0.spawn(job);
        Ok(())
    }
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
