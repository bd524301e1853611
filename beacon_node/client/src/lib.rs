//! The beacon node's assembly: the store, the chain, the execution-layer client, block
//! production, the Beacon API and the slot timers, built from one [`ClientConfig`]
//! (`../shared/ARCHITECTURE.md`, "Workspace layout": `beacon_node/client`).
//!
//! [`Client::start`] builds and starts everything; [`Client::shutdown`] stops the tasks and
//! waits for them, after which the database holds everything imported (every import commits
//! its own write transaction, so a kill at any point loses nothing committed either).

pub mod config;
pub mod metrics;
pub mod network;
pub mod timers;

use std::net::SocketAddr;
use std::sync::Arc;

use beacon_chain::execution::update_execution_head;
use beacon_chain::production::{BlockProducer, ProducerConfig};
use beacon_chain::{BeaconChain, ChainError, SlotClock, SystemTimeSlotClock};
use execution_layer::EngineApiClient;
use operation_pool::OperationPool;
use state_processing::CachedBeaconState;
use state_processing::genesis::interop_genesis_block_of;
use store::Store;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use types::EthSpec;

pub use beacon_processor::ProcessorPools;
pub use config::{Anchor, ClientConfig, ExecutionConfig, NetworkOptions};
pub use store::{DEFAULT_CACHE_SIZE_BYTES as DEFAULT_DB_CACHE_BYTES, StoreConfig};

/// Why the node could not start.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The builder relay's URL or settings are unusable.
    #[error("builder: {0}")]
    Builder(String),
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
    /// The chain (its head or the clock) is past a fork this node does not implement.
    #[error(
        "the chain is past the {fork:?} fork at epoch {fork_epoch} (head epoch {head_epoch}, clock epoch {clock_epoch}), and this version of Arbor does not implement {fork:?}"
    )]
    UnimplementedFork {
        /// The first scheduled fork Arbor does not run (Gloas).
        fork: types::ForkName,
        /// Its `*_FORK_EPOCH`.
        fork_epoch: types::Epoch,
        /// The head's epoch.
        head_epoch: types::Epoch,
        /// The clock's epoch.
        clock_epoch: types::Epoch,
    },
    /// The engine API client could not be built.
    #[error("execution client: {0}")]
    Execution(#[from] execution_layer::Error),
    /// The chain had an execution client attached already.
    #[error("execution client: {0}")]
    ExecutionAttached(#[from] beacon_chain::AlreadyAttached),
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
    /// The node key could not be read or written.
    #[error("node key {path}: {reason}")]
    NodeKey {
        /// The key file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The peer-to-peer service could not start.
    #[error("network: {0}")]
    Network(#[from] networking::NetworkError),
    /// The router could not start.
    #[error("router: {0}")]
    Router(#[from] router::RouterError),
    /// Custody or subnets could not be computed from the node id.
    #[error("custody: {0}")]
    Custody(String),
}

/// A running beacon node.
pub struct Client<E: EthSpec> {
    chain: Arc<BeaconChain<E>>,
    producer: Arc<BlockProducer<E>>,
    registry: prometheus::Registry,
    http_addr: Option<SocketAddr>,
    metrics_addr: Option<SocketAddr>,
    network: Option<networking::NetworkHandle<E>>,
    router: Option<router::RouterHandle<E>>,
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
    pub async fn start(mut config: ClientConfig<E>) -> Result<Self, ClientError> {
        let registry = prometheus::Registry::new();
        // The node key comes first: custody follows from the node id, and the chain's
        // availability checker needs the custody columns.
        let p2p_identity = match &config.network {
            Some(options) => Some(p2p_identity::<E>(&config, options)?),
            None => None,
        };
        if let Some(identity) = &p2p_identity {
            config.chain.custody_columns = identity.custody_columns.clone();
        }
        // The node's CPU threads, built first: the chain runs its data-parallel work on the
        // main pool, which the beacon processor then runs its work on. One thread budget.
        let pools = match &config.pools {
            Some(pools) => pools.clone(),
            None => beacon_processor::ProcessorPools::new(config.worker_threads.max(1), 1)
                .map_err(|e| ClientError::Pool(e.to_string()))?,
        };
        // Opened on the pool too: hashing a state fans out on the caller's rayon pool, and
        // from this (async) thread would start rayon's global pool.
        let main_pool = pools.main().clone();
        let chain = Arc::new(main_pool.install(|| open_chain(&config, main_pool.clone()))?);
        chain.register_metrics(&registry)?;
        let node_metrics = metrics::NodeMetrics::register(&registry)?;
        node_metrics.observe_head(&chain.head());
        tracing::info!(
            head_slot = chain.head().slot,
            head = %chain.head().block_root,
            finalized_epoch = chain.finalized_checkpoint().epoch,
            "chain ready"
        );
        if let Some((fork, epoch)) = chain.spec().first_unimplemented_fork()
            && !config.unreleased_forks
        {
            let version = chain.spec().fork_version(fork);
            let head_epoch = chain.head().slot / E::slots_per_epoch();
            let clock_epoch = chain.slot_at_ms(chain.now_ms()) / E::slots_per_epoch();
            if head_epoch >= epoch || clock_epoch >= epoch {
                return Err(ClientError::UnimplementedFork {
                    fork,
                    fork_epoch: epoch,
                    head_epoch,
                    clock_epoch,
                });
            }
            tracing::warn!(
                %fork,
                fork_epoch = epoch,
                fork_version = %version,
                "the network schedules a fork this node does not run: it will stop following \
                 the chain at that epoch (its slots are refused with an error naming the fork)"
            );
        }

        // The engine API's era (Osaka, Amsterdam) of each payload follows the chain's fork
        // schedule: the Amsterdam methods from the Gloas fork's time on.
        let engine = Arc::new(
            EngineApiClient::new(
                config.execution.url.clone(),
                config.execution.jwt_secret.clone(),
                config.execution.timeouts,
            )?
            .with_fork_schedule::<E>(chain.spec(), chain.genesis_time()),
        );
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

        // The chain sends newPayload and getBlobs for the blocks it imports itself.
        chain.attach_execution_layer(engine.clone(), tokio::runtime::Handle::current())?;

        let pool = Arc::new(OperationPool::new());
        let builder = match &config.builder {
            Some(relay) => Some(beacon_chain::production::BuilderOptions {
                client: Arc::new(
                    relay
                        .client()
                        .map_err(|e| ClientError::Builder(e.to_string()))?,
                ),
                submit: relay.submit,
            }),
            None => None,
        };
        let producer = Arc::new(BlockProducer::new(
            chain.clone(),
            pool.clone(),
            engine.clone(),
            ProducerConfig {
                default_fee_recipient: config.suggested_fee_recipient,
                default_graffiti: config.graffiti,
                builder,
                ..ProducerConfig::default()
            },
        ));
        producer.register_metrics(&registry)?;

        let (shutdown, shutdown_rx) = watch::channel(false);
        let mut tasks = Vec::new();

        let (network_api, network, router): (Arc<dyn http_api::NetworkApi<E>>, _, _) =
            match (config.network.clone(), p2p_identity) {
                (Some(options), Some(identity)) => {
                    let (p2p, handle, router) = start_p2p(
                        &config,
                        options,
                        identity,
                        &chain,
                        &pool,
                        &pools,
                        &registry,
                        &shutdown_rx,
                        node_metrics.peers.clone(),
                    )
                    .await?;
                    let clock_chain = chain.clone();
                    tasks.push(tokio::spawn(p2p.clone().maintain(
                        move || clock_chain.slot_at_ms(clock_chain.now_ms()),
                        shutdown_rx.clone(),
                    )));
                    (p2p, Some(handle), Some(router))
                }
                _ => (Arc::new(http_api::NoNetwork::default()), None, None),
            };
        // The CPU work the chain's asynchronous callers hand over (the API's, block
        // production's and publication's, the slot timers') on the processor's kinds: one
        // thread budget. A node without peers has no processor: tokio's blocking pool then.
        let workers: Option<Arc<dyn beacon_chain::workers::Workers>> = router
            .as_ref()
            .map(|router| Arc::new(ProcessorWorkers(router.processor().clone())) as _);
        if let Some(workers) = &workers
            && producer.set_workers(workers.clone()).is_err()
        {
            tracing::warn!("block production's workers were set already");
        }

        let http_addr = match config.http_listen {
            Some(addr) => {
                let (listener, bound) = bind(addr).await?;
                let ctx = http_api::ApiContext::new(
                    chain.clone(),
                    pool.clone(),
                    producer.clone(),
                    network_api.clone(),
                    registry.clone(),
                    http_api::ApiConfig {
                        listen: bound,
                        ..http_api::ApiConfig::default()
                    },
                )?;
                let ctx = Arc::new(ctx);
                if let Some(router) = &router {
                    router.set_gossip_sink(Arc::new(ApiGossipSink(ctx.clone())));
                }
                if let Some(workers) = &workers
                    && ctx.set_workers(workers.clone()).is_err()
                {
                    tracing::warn!("the API's workers were set already");
                }
                let router = http_api::router(ctx);
                tasks.push(spawn_server(
                    listener,
                    router,
                    shutdown_rx.clone(),
                    "Beacon API",
                ));
                tracing::info!(address = %bound, "Beacon API listening");
                Some(bound)
            }
            None => None,
        };

        let metrics_addr = match config.metrics_listen {
            Some(addr) => {
                let (listener, bound) = bind(addr).await?;
                let router = http_api::metrics_router(registry.clone());
                tasks.push(spawn_server(
                    listener,
                    router,
                    shutdown_rx.clone(),
                    "metrics server",
                ));
                tracing::info!(address = %bound, "metrics server listening");
                Some(bound)
            }
            None => None,
        };

        // The execution client learns the head the chain starts with.
        if let Err(e) = update_execution_head(&chain, &engine, None).await {
            tracing::warn!(error = %e, "forkchoiceUpdated at start-up failed");
        }
        tasks.push(tokio::spawn(timers::run_slot_timer(
            producer.clone(),
            workers.clone(),
            node_metrics.clone(),
            shutdown_rx.clone(),
        )));
        tasks.push(tokio::spawn(timers::follow_chain_events(
            producer.clone(),
            workers,
            node_metrics,
            shutdown_rx,
        )));

        Ok(Self {
            chain,
            producer,
            registry,
            http_addr,
            metrics_addr,
            network,
            router,
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

    /// The address the metrics server is bound to, if it runs.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// The peer-to-peer service's handle (`None` for a node without peers).
    pub fn network(&self) -> Option<&networking::NetworkHandle<E>> {
        self.network.as_ref()
    }

    /// Stops every task and waits for them.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
        if let Some(router) = self.router {
            router.join().await;
        }
        if let Some(network) = self.network {
            network.shutdown();
        }
        // The epoch snapshot an import deferred, stored whole before the process ends (a
        // restart would otherwise replay an epoch more to load the states after it).
        let chain = self.chain.clone();
        let _ = tokio::task::spawn_blocking(move || chain.flush_store_writes()).await;
        tracing::info!("beacon node stopped");
    }
}

/// The chain the datadir holds (checked against the anchor's genesis when one is given), or a
/// new one from the anchor, running its data-parallel work on `pool` (the processor's main
/// pool).
fn open_chain<E: EthSpec>(
    config: &ClientConfig<E>,
    pool: Arc<fork_choice::ThreadPool>,
) -> Result<BeaconChain<E>, ClientError> {
    let db_path = config.db_path();
    if let Some(parent) = db_path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ClientError::Datadir {
            path: parent.display().to_string(),
            source,
        })?;
    }
    // A database an earlier release wrote is migrated in place, as an operator upgrading the
    // node expects.
    let (store, migrated) =
        Store::<E>::open_migrating(&db_path, (*config.spec).clone(), config.store.clone())?;
    if let Some((from, to)) = migrated {
        tracing::info!(path = %db_path.display(), from, to, "database migrated to the current schema");
    }
    let store = Arc::new(store);
    let clock: Arc<dyn SlotClock> = Arc::new(SystemTimeSlotClock);
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
            // A Gloas genesis has a Gloas genesis block (its body carries the genesis bid).
            let block = interop_genesis_block_of::<E>(genesis, state_root);
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

/// Binds `addr` (port 0: any free one) and returns the listener with the address it got.
async fn bind(addr: SocketAddr) -> Result<(tokio::net::TcpListener, SocketAddr), ClientError> {
    let listener = http_api::bind(addr).await?;
    let bound = listener
        .local_addr()
        .map_err(|source| ClientError::Http { addr, source })?;
    Ok((listener, bound))
}

/// Serves `router` on `listener` until `shutdown` turns true.
fn spawn_server(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    mut shutdown: watch::Receiver<bool>,
    what: &'static str,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let stop = async move {
            let _ = shutdown.wait_for(|stop| *stop).await;
        };
        if let Err(e) = http_api::serve_router(listener, router, stop).await {
            tracing::error!(error = %e, "{what} stopped");
        }
    })
}

/// What the node's key decides: the key itself, its node id, custody and long-lived subnets.
struct P2pIdentity {
    keypair: networking::Keypair,
    node_id: types::subnets::NodeId,
    custody_group_count: u64,
    /// `None`: every column.
    custody_columns: Option<std::collections::BTreeSet<u64>>,
}

/// The node key from `<datadir>/beacon/network/key` (generated on first start), and what
/// follows from its node id.
fn p2p_identity<E: EthSpec>(
    config: &ClientConfig<E>,
    options: &NetworkOptions,
) -> Result<P2pIdentity, ClientError> {
    let path = config.datadir.join("beacon").join("network").join("key");
    let key_error = |reason: String| ClientError::NodeKey {
        path: path.display().to_string(),
        reason,
    };
    let keypair = match &options.config.keypair {
        Some(keypair) => keypair.clone(),
        None if path.exists() => {
            let bytes = std::fs::read(&path).map_err(|e| key_error(e.to_string()))?;
            networking::Keypair::from_protobuf_encoding(&bytes)
                .map_err(|e| key_error(e.to_string()))?
        }
        None => {
            let keypair = networking::Keypair::generate_secp256k1();
            let bytes = keypair
                .to_protobuf_encoding()
                .map_err(|e| key_error(e.to_string()))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| key_error(e.to_string()))?;
            }
            std::fs::write(&path, bytes).map_err(|e| key_error(e.to_string()))?;
            keypair
        }
    };
    let raw =
        networking::enr::node_id_of_keypair(&keypair).map_err(|e| key_error(e.to_string()))?;
    let node_id = types::subnets::node_id_from_raw(&raw);
    let spec = &config.spec;
    let custody_group_count = if options.supernode {
        spec.number_of_custody_groups
    } else {
        spec.custody_requirement
    };
    let custody_columns = if options.supernode {
        None
    } else {
        Some(
            types::subnets::get_custody_columns::<E>(spec, node_id, custody_group_count)
                .map_err(|e| ClientError::Custody(e.to_string()))?
                .into_iter()
                .collect(),
        )
    };
    Ok(P2pIdentity {
        keypair,
        node_id,
        custody_group_count,
        custody_columns,
    })
}

/// Starts the libp2p service and the router; returns the API's view of them.
#[allow(
    clippy::too_many_arguments,
    reason = "the node's parts, built by the caller, handed over once"
)]
async fn start_p2p<E: EthSpec>(
    config: &ClientConfig<E>,
    options: NetworkOptions,
    identity: P2pIdentity,
    chain: &Arc<BeaconChain<E>>,
    pool: &Arc<OperationPool<E>>,
    pools: &beacon_processor::ProcessorPools,
    registry: &prometheus::Registry,
    shutdown: &watch::Receiver<bool>,
    peers_gauge: prometheus::IntGauge,
) -> Result<
    (
        Arc<network::P2pNetwork<E>>,
        networking::NetworkHandle<E>,
        router::RouterHandle<E>,
    ),
    ClientError,
> {
    let spec = &config.spec;
    let current_epoch = chain.slot_at_ms(chain.now_ms()) / E::slots_per_epoch();
    let fork = spec.fork_name_at_epoch(current_epoch);
    // The long-lived attestation subnets of this period (they rotate every
    // `EPOCHS_PER_SUBNET_SUBSCRIPTION`; a node restarted later computes them afresh).
    let attnets =
        types::subnets::compute_subscribed_subnets::<E>(spec, identity.node_id, current_epoch)
            .map_err(|e| ClientError::Custody(e.to_string()))?;
    let genesis_backfill = options.genesis_backfill;
    let mut net = options.config;
    net.keypair = Some(identity.keypair);
    net.genesis_validators_root = chain.genesis_validators_root();
    net.current_epoch = current_epoch;
    net.custody_group_count = identity.custody_group_count;
    net.attnets = attnets.clone();
    let column_subnets: std::collections::BTreeSet<u64> = match &identity.custody_columns {
        None => (0..spec.data_column_sidecar_subnet_count).collect(),
        Some(columns) => columns
            .iter()
            .map(|c| c % spec.data_column_sidecar_subnet_count.max(1))
            .collect(),
    };
    let mut kinds: Vec<networking::GossipKind> = networking::GossipKind::global_kinds(fork);
    kinds.extend(
        column_subnets
            .iter()
            .map(|s| networking::GossipKind::DataColumnSidecar(*s)),
    );
    kinds.extend(
        attnets
            .iter()
            .map(|s| networking::GossipKind::Attestation(*s)),
    );
    net.gossip_kinds = kinds;
    let (handle, events) = networking::start::<E>(net, (**spec).clone()).await?;
    handle.register_metrics(registry)?;
    let router = router::spawn_router(
        chain.clone(),
        pool.clone(),
        handle.clone(),
        events,
        router::RouterConfig {
            custody_columns: identity.custody_columns.clone(),
            genesis_backfill,
            ..router::RouterConfig::default()
        },
        beacon_processor::BeaconProcessorConfig {
            pools: Some(pools.clone()),
            ..beacon_processor::BeaconProcessorConfig::default()
        },
        registry,
        shutdown.clone(),
    )?;
    tracing::info!(
        peer_id = %handle.local_peer_id(),
        enr = handle.local_enr().map(|e| e.to_base64()).unwrap_or_default(),
        custody_groups = identity.custody_group_count,
        "p2p started"
    );
    let p2p = Arc::new(network::P2pNetwork::new(
        handle.clone(),
        router.sync_state(),
        attnets,
        Vec::new(),
        identity.custody_group_count,
        spec.data_column_sidecar_subnet_count,
        peers_gauge,
    ));
    Ok((p2p, handle, router))
}

/// The beacon processor as the node's CPU workers for the chain's asynchronous callers:
/// `api_request_p0`, `api_request_p1`, `state_advance` and `cache_priming` tasks.
struct ProcessorWorkers<E: EthSpec>(router::Processor<E>);

impl<E: EthSpec> http_api::ApiWorkers for ProcessorWorkers<E> {
    fn submit(
        &self,
        priority: http_api::ApiPriority,
        job: Box<dyn FnOnce() + Send + 'static>,
    ) -> Result<(), http_api::WorkersRefused> {
        let kind = match priority {
            http_api::ApiPriority::P0 => beacon_processor::WorkKind::ApiRequestP0,
            http_api::ApiPriority::P1 => beacon_processor::WorkKind::ApiRequestP1,
            http_api::ApiPriority::StateAdvance => beacon_processor::WorkKind::StateAdvance,
            http_api::ApiPriority::Caches => beacon_processor::WorkKind::CachePriming,
        };
        // A task dropped unrun (a full queue) drops `job`, which closes its answer channel.
        self.0
            .submit(beacon_processor::Task::new(kind, move |_| job()))
            .map_err(|_| http_api::WorkersRefused)
    }
}

/// The Beacon API's share of accepted gossip: sync committee messages go into the contributions
/// `sync_committee_contribution` serves (an aggregator needs the messages of every member on its
/// subnet, not only those posted to this node), and the senders of attestations, aggregates,
/// contributions and sync messages are recorded live for `liveness` (doppelganger checks ask
/// about validators running elsewhere).
struct ApiGossipSink<E: EthSpec>(Arc<http_api::ApiContext<E>>);

impl<E: EthSpec> router::GossipSink<E> for ApiGossipSink<E> {
    fn accepted(&self, message: router::AcceptedGossip<'_, E>) {
        use router::AcceptedGossip;
        let epoch_of = |slot: types::Slot| slot / E::slots_per_epoch();
        match message {
            AcceptedGossip::SyncCommitteeMessage { message, subnet } => {
                // Records the validator live as well. An error is a message whose sync
                // committee the head state does not know any more (a late one at a period
                // boundary): it was verified and published; only its aggregation is lost.
                if let Err(e) = self.0.insert_sync_message(message, subnet) {
                    tracing::debug!(slot = message.slot, error = %e, "sync committee message not aggregated");
                }
            }
            AcceptedGossip::SingleAttestation(attestation) => self
                .0
                .record_live(attestation.data.target.epoch, [attestation.attester_index]),
            AcceptedGossip::Aggregate(aggregate) => self.0.record_live(
                aggregate.message.aggregate.data.target.epoch,
                [aggregate.message.aggregator_index],
            ),
            AcceptedGossip::SyncContribution(contribution) => self.0.record_live(
                epoch_of(contribution.message.contribution.slot),
                [contribution.message.aggregator_index],
            ),
            AcceptedGossip::VoluntaryExit(_)
            | AcceptedGossip::ProposerSlashing(_)
            | AcceptedGossip::AttesterSlashing(_)
            | AcceptedGossip::BlsToExecutionChange(_) => {}
        }
    }
}
