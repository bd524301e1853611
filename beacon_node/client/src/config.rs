//! What the node is built from: one [`ClientConfig`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use beacon_chain::ChainConfig;
use execution_layer::{JwtSecret, Timeouts};
use types::{Address, BeaconState, Bytes32, ChainSpec, EthSpec, SignedBeaconBlock};

/// Where the chain starts.
#[derive(Debug, Clone)]
pub enum Anchor<E: EthSpec> {
    /// A genesis state (an interop devnet's, or a network's `genesis.ssz`). A datadir that
    /// already holds this chain is reopened; one holding another chain is an error.
    Genesis(Box<BeaconState<E>>),
    /// A finalized block and its post-state (checkpoint sync), for an empty datadir.
    Checkpoint {
        /// The block's post-state.
        state: Box<BeaconState<E>>,
        /// The finalized block.
        block: Box<SignedBeaconBlock<E>>,
    },
    /// Whatever chain the datadir holds (an error when it holds none).
    Resume,
}

/// The execution client the node drives over the engine API.
#[derive(Debug, Clone)]
pub struct ExecutionConfig {
    /// `http://host:port` of its authenticated engine API.
    pub url: String,
    /// The JWT secret shared with it.
    pub jwt_secret: JwtSecret,
    /// Per-method timeouts.
    pub timeouts: Timeouts,
}

/// The node's peer-to-peer side.
#[derive(Debug, Clone)]
pub struct NetworkOptions {
    /// Listen addresses, ports, boot nodes, limits. The client fills in what follows from the
    /// chain and the node's key: the genesis validators root, the current epoch, the node key
    /// (kept in `<datadir>/beacon/network/key`), the custody group count, the long-lived
    /// attestation subnets and the topics.
    pub config: networking::NetworkConfig,
    /// Custody and serve every column (else `CUSTODY_REQUIREMENT` groups from the node id).
    pub supernode: bool,
    /// After a checkpoint sync, backfill blocks to genesis rather than only the spec's
    /// `MIN_EPOCHS_FOR_BLOCK_REQUESTS` window.
    pub genesis_backfill: bool,
}

/// Everything the node is assembled from.
#[derive(Debug, Clone)]
pub struct ClientConfig<E: EthSpec> {
    /// The data directory: the database lives in `<datadir>/beacon/db`.
    pub datadir: PathBuf,
    /// The chain's configuration.
    pub spec: Arc<ChainSpec>,
    /// Where the chain starts.
    pub anchor: Anchor<E>,
    /// The execution client.
    pub execution: ExecutionConfig,
    /// The peer-to-peer side; `None`: a node without peers (a single-node devnet).
    pub network: Option<NetworkOptions>,
    /// The Beacon API's listen address; `None` serves no API.
    pub http_listen: Option<SocketAddr>,
    /// The Prometheus metrics server's listen address (`GET /metrics`); `None` serves none
    /// (the Beacon API serves `/metrics` too).
    pub metrics_listen: Option<SocketAddr>,
    /// The fee recipient of blocks whose proposer registered none.
    pub suggested_fee_recipient: Address,
    /// The graffiti of blocks whose request named none.
    pub graffiti: Bytes32,
    /// Options of the chain (custody, caches).
    pub chain: ChainConfig,
    /// The node's CPU threads: the beacon processor's main pool, which runs every work kind but
    /// backfill and the chain's data-parallel work (transitions' parallel sections, KZG and
    /// BLS batches, column building). The backfill pool has one thread more, idle but while
    /// backfilling. At least 1.
    pub worker_threads: usize,
    /// Pools to run on instead of building them from `worker_threads`: `arbor dev` gives every
    /// node of the process the same pools, one thread budget for them all.
    pub pools: Option<beacon_processor::ProcessorPools>,
    /// A builder relay (builder-specs) for blinded proposals, when one is configured: bids are
    /// asked for alongside the local payload, which any builder failure falls back to.
    pub builder: Option<builder_client::BuilderConfig>,
    /// Options of the database (its page cache among them).
    pub store: store::StoreConfig,
    /// Whether the node runs forks after [`types::ForkName::LATEST_IMPLEMENTED`] that its spec
    /// schedules (Gloas today): `arbor dev --gloas-epoch` does, for a devnet of its own. Off,
    /// a node refuses to start on a chain past such a fork and warns before it.
    pub unreleased_forks: bool,
}

impl<E: EthSpec> ClientConfig<E> {
    /// The database's path.
    pub fn db_path(&self) -> PathBuf {
        self.datadir.join("beacon").join("db")
    }
}
