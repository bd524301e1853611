//! The API over `beacon_chain`'s harness: its chain, operation pool and block producer served
//! on 127.0.0.1:0 until the server is dropped. Shared by the tests and the benches.

#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "test helpers: each test binary uses some; a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::harness::ChainHarness;
use http_api::{ApiConfig, ApiContext, NoNetwork};
use types::EthSpec;

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
