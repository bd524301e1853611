//! The beacon node's assembly: the store, the chain, the execution-layer client, block
//! production, the Beacon API and the slot timers, built from one [`ClientConfig`]
//! (`../shared/ARCHITECTURE.md`, "Workspace layout": `beacon_node/client`).
//!
//! [`Client::start`] builds and starts everything; [`Client::shutdown`] stops the tasks and
//! waits for them, after which the database holds everything imported (every import commits
//! its own write transaction, so a kill at any point loses nothing committed either).

pub mod config;
pub mod timers;

use std::net::SocketAddr;
use std::sync::Arc;

use beacon_chain::execution::update_execution_head;
use beacon_chain::production::{BlockProducer, ProducerConfig};
use beacon_chain::{BeaconChain, ChainError, SlotClock, SystemTimeSlotClock};
use execution_layer::EngineApiClient;
use operation_pool::OperationPool;
use state_processing::CachedBeaconState;
use state_processing::genesis::interop_genesis_block;
use store::{Store, StoreConfig};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use types::EthSpec;

pub use config::{Anchor, ClientConfig, ExecutionConfig};

/// Why the node could not start.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The data directory could not be created.
    #[error("datadir {path}: {source}")]
    Datadir {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The database could not be opened.
    #[error("database: {0}")]
    Store(#[from] store::StoreError),
    /// The chain could not be built from the anchor or the database.
    #[error("chain: {0}")]
    Chain(#[from] ChainError),
    /// The datadir holds a different chain than the one asked for.
    #[error(
        "the datadir holds the chain with genesis validators root {found}, not {wanted}: use another --datadir or --purge-db"
    )]
    OtherChain {
        /// The root of the chain asked for.
        wanted: types::Root,
        /// The root of the chain in the database.
        found: types::Root,
    },
    /// The genesis state could not be hashed.
    #[error("genesis state: {0}")]
    Genesis(String),
    /// The engine API client could not be built.
    #[error("execution client: {0}")]
    Execution(#[from] execution_layer::Error),
    /// The CPU pool could not be started.
    #[error("worker pool: {0}")]
    Pool(String),
    /// The Beacon API could not bind its address.
    #[error("Beacon API on {addr}: {source}")]
    Http {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A metric could not be registered.
    #[error("metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    /// The Beacon API could not be set up.
    #[error("Beacon API: {0}")]
    Api(#[from] http_api::ApiError),
}

/// A running beacon node.
pub struct Client<E: EthSpec> {
    chain: Arc<BeaconChain<E>>,
    producer: Arc<BlockProducer<E>>,
    registry: prometheus::Registry,
    http_addr: Option<SocketAddr>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl<E: EthSpec> std::fmt::Debug for Client<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("chain", &self.chain)
            .field("http_addr", &self.http_addr)
            .finish_non_exhaustive()
    }
}

impl<E: EthSpec> Client<E> {
    /// Builds the node from `config` and starts its tasks on the current tokio runtime.
    pub async fn start(config: ClientConfig<E>) -> Result<Self, ClientError> {
        let registry = prometheus::Registry::new();
        let chain = Arc::new(open_chain(&config)?);
        chain.register_metrics(&registry)?;
        tracing::info!(
            head_slot = chain.head().slot,
            head = %chain.head().block_root,
            finalized_epoch = chain.finalized_checkpoint().epoch,
            "chain ready"
        );

        let engine = Arc::new(EngineApiClient::new(
            config.execution.url.clone(),
            config.execution.jwt_secret.clone(),
            config.execution.timeouts,
        )?);
        match engine.exchange_capabilities().await {
            Ok(capabilities) => tracing::info!(
                url = engine.url(),
                capabilities = capabilities.len(),
                "execution client reachable"
            ),
            // A node starts before its execution client as often as after: it keeps trying
            // with every forkchoiceUpdated and newPayload.
            Err(e) => {
                tracing::warn!(url = engine.url(), error = %e, "execution client not reachable yet")
            }
        }

        let pool = Arc::new(OperationPool::new());
        let producer = Arc::new(BlockProducer::new(
            chain.clone(),
            pool.clone(),
            engine.clone(),
            ProducerConfig {
                default_fee_recipient: config.suggested_fee_recipient,
                default_graffiti: config.graffiti,
                ..ProducerConfig::default()
            },
        ));

        let (shutdown, shutdown_rx) = watch::channel(false);
        let mut tasks = Vec::new();

        let http_addr = match config.http_listen {
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|source| ClientError::Http { addr, source })?;
                let bound = listener
                    .local_addr()
                    .map_err(|source| ClientError::Http { addr, source })?;
                let ctx = http_api::ApiContext::new(
                    chain.clone(),
                    pool.clone(),
                    producer.clone(),
                    Arc::new(http_api::NoNetwork::default()),
                    registry.clone(),
                    http_api::ApiConfig {
                        listen: bound,
                        ..http_api::ApiConfig::default()
                    },
                )?;
                let mut rx = shutdown_rx.clone();
                tasks.push(tokio::spawn(async move {
                    let stop = async move {
                        let _ = rx.wait_for(|stop| *stop).await;
                    };
                    if let Err(e) = http_api::serve_on(listener, Arc::new(ctx), stop).await {
                        tracing::error!(error = %e, "Beacon API stopped");
                    }
                }));
                tracing::info!(address = %bound, "Beacon API listening");
                Some(bound)
            }
            None => None,
        };

        if let Some(addr) = config.metrics_listen {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| ClientError::Http { addr, source })?;
            let bound = listener
                .local_addr()
                .map_err(|source| ClientError::Http { addr, source })?;
            tracing::info!(address = %bound, "metrics server listening");
            let mut rx = shutdown_rx.clone();
            let router = http_api::metrics_router(registry.clone());
            tasks.push(tokio::spawn(async move {
                let stop = async move {
                    let _ = rx.wait_for(|stop| *stop).await;
                };
                if let Err(e) = http_api::serve_router(listener, router, stop).await {
                    tracing::error!(error = %e, "metrics server stopped");
                }
            }));
        }

        // The execution client learns the head the chain starts with.
        if let Err(e) = update_execution_head(&chain, &engine, None).await {
            tracing::warn!(error = %e, "forkchoiceUpdated at start-up failed");
        }
        tasks.push(tokio::spawn(timers::run_slot_timer(
            producer.clone(),
            shutdown_rx.clone(),
        )));
        tasks.push(tokio::spawn(timers::follow_chain_events(
            producer.clone(),
            shutdown_rx,
        )));

        Ok(Self {
            chain,
            producer,
            registry,
            http_addr,
            shutdown,
            tasks,
        })
    }

    /// The chain.
    pub fn chain(&self) -> &Arc<BeaconChain<E>> {
        &self.chain
    }

    /// Block production (and the operation pool and engine client it holds).
    pub fn producer(&self) -> &Arc<BlockProducer<E>> {
        &self.producer
    }

    /// The metrics registry every part of the node registers in.
    pub fn registry(&self) -> &prometheus::Registry {
        &self.registry
    }

    /// The address the Beacon API is bound to (the port chosen when 0 was asked).
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http_addr
    }

    /// Stops every task and waits for them.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
        tracing::info!("beacon node stopped");
    }
}

/// The chain the datadir holds (checked against the anchor's genesis when one is given), or a
/// new one from the anchor.
fn open_chain<E: EthSpec>(config: &ClientConfig<E>) -> Result<BeaconChain<E>, ClientError> {
    let db_path = config.db_path();
    if let Some(parent) = db_path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ClientError::Datadir {
            path: parent.display().to_string(),
            source,
        })?;
    }
    let store = Arc::new(Store::<E>::open(
        &db_path,
        (*config.spec).clone(),
        StoreConfig::default(),
    )?);
    let clock: Arc<dyn SlotClock> = Arc::new(SystemTimeSlotClock);
    let threads = config.worker_threads.max(1);
    let pool = Arc::new(
        fork_choice::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("chain-worker-{i}"))
            .build()
            .map_err(|e| ClientError::Pool(e.to_string()))?,
    );
    let holds_chain = store.head()?.is_some();
    match (&config.anchor, holds_chain) {
        (_, true) => {
            let chain = BeaconChain::open(
                store,
                config.spec.clone(),
                clock,
                pool,
                config.chain.clone(),
            )?;
            let wanted = match &config.anchor {
                Anchor::Genesis(genesis) => Some(*genesis.genesis_validators_root()),
                Anchor::Checkpoint { state, .. } => Some(*state.genesis_validators_root()),
                Anchor::Resume => None,
            };
            if let Some(wanted) = wanted {
                let found = chain.genesis_validators_root();
                if wanted != found {
                    return Err(ClientError::OtherChain { wanted, found });
                }
            }
            Ok(chain)
        }
        (Anchor::Genesis(genesis), false) => {
            let mut state = CachedBeaconState::new((**genesis).clone());
            let state_root = state
                .hash_tree_root()
                .map_err(|e| ClientError::Genesis(e.to_string()))?;
            let block = interop_genesis_block::<E>(state_root);
            Ok(BeaconChain::from_anchor(
                store,
                state,
                block,
                config.spec.clone(),
                clock,
                pool,
                config.chain.clone(),
            )?)
        }
        (Anchor::Checkpoint { state, block }, false) => Ok(BeaconChain::from_anchor(
            store,
            CachedBeaconState::new((**state).clone()),
            (**block).clone(),
            config.spec.clone(),
            clock,
            pool,
            config.chain.clone(),
        )?),
        (Anchor::Resume, false) => Err(ChainError::EmptyStore.into()),
    }
}
