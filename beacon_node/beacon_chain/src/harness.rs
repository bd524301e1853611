//! One chain for tests and benchmarks (feature `test-utils`): an interop genesis whose
//! execution genesis is a [`MockExecutionLayer`]'s, a store in a temporary directory, a manual
//! clock, the chain with the mock attached as its execution client, and a block producer; plus
//! what a test needs to build valid blocks on it (the interop keys' RANDAO reveals and
//! proposer signatures).
//!
//! The chain may instead start from any anchor (a checkpoint, a synthetic mainnet-size state:
//! [`ChainStart::Anchor`]) or reopen a store a previous harness left at
//! [`HarnessConfig::store_path`] ([`ChainStart::Stored`]); an anchor that must continue the
//! mock's execution chain is made between starting the mock and building the chain
//! ([`HarnessConfig::start_execution_layer`], then [`HarnessBuilder::build`]).
//!
//! ```no_run
//! # async fn run() {
//! use beacon_chain::harness::HarnessConfig;
//! let h = HarnessConfig::default().build::<types::MinimalEthSpec>().await.expect("a harness");
//! let (produced, signed) = h.produce_signed(1).await.expect("a block");
//! # let _ = (produced, signed);
//! # }
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use execution_layer::{EngineApiClient, JwtSecret, Timeouts};
use mock_execution_layer::{MockConfig, MockExecutionLayer};
use operation_pool::OperationPool;
use rayon::ThreadPoolBuilder;
use state_processing::{
    CachedBeaconState,
    common::{compute_epoch_at_slot, get_beacon_proposer_index, get_current_epoch, get_domain},
    genesis::{interop_genesis_block, interop_genesis_block_of, interop_genesis_state},
    per_block::AlwaysValid,
    per_slot::process_slots,
};
use store::{Store, StoreConfig};
use tree_hash::TreeHash;
use types::{
    Address, BLSSignature, BeaconBlock, BeaconState, ChainSpec, DataColumnSidecar, EthSpec,
    ForkName, Root, SignedBeaconBlock, Slot, ValidatorIndex,
    signing::{DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO, compute_signing_root},
};

use crate::ExecutionStatus;
use crate::chain::{BeaconChain, ChainConfig, ChainError};
use crate::production::{BlockProducer, ProducedBlock, ProducerConfig, ProductionError};
use crate::slot_clock::ManualSlotClock;

/// What a harness is built with.
#[derive(Debug, Clone)]
pub struct HarnessConfig {
    /// The chain's configuration (default: the minimal preset with every fork through Fulu
    /// at genesis).
    pub spec: ChainSpec,
    /// Interop validators at genesis.
    pub validators: usize,
    /// Genesis time, seconds since the UNIX epoch: the interop genesis's and the mock's. An
    /// anchor's state carries its own; set the same here for the mock's payloads to agree.
    pub genesis_time: u64,
    /// Blobs the mock puts in each payload it builds.
    pub blobs_per_payload: usize,
    /// The mock's generator seed.
    pub seed: u64,
    /// The chain's options.
    pub chain: ChainConfig,
    /// The store's options.
    pub store: StoreConfig,
    /// The block producer's options.
    pub producer: ProducerConfig,
    /// Threads of the chain's pool.
    pub pool_threads: usize,
    /// Whether the chain gets the mock as its execution client (`engine_newPayload` for the
    /// blocks it imports); without it every payload imports not validated.
    pub attach_execution_layer: bool,
    /// The database's path. `None`: `db` in a temporary directory the harness owns and removes.
    /// A path the caller owns outlives the harness, for a later one to reopen
    /// ([`ChainStart::Stored`]).
    pub store_path: Option<PathBuf>,
    /// The slot the clock starts in, [`Self::ms_into_slot`] into it (`None`: the anchor's
    /// slot; for a stored chain, slot 0 of [`Self::genesis_time`]).
    pub clock_slot: Option<Slot>,
    /// How far into a slot the harness's times are ([`ChainHarness::time_ms`]), in
    /// milliseconds.
    pub ms_into_slot: u64,
    /// The timeouts of the engine API clients to the mock (the producer's, the chain's).
    pub engine_timeouts: Timeouts,
}

impl Default for HarnessConfig {
    fn default() -> Self {
        Self {
            spec: ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu),
            validators: 64,
            genesis_time: 1_600_000_000,
            blobs_per_payload: 0,
            seed: 7,
            chain: ChainConfig::default(),
            store: StoreConfig::default(),
            producer: ProducerConfig {
                default_fee_recipient: Address::repeat_byte(0xfe),
                ..ProducerConfig::default()
            },
            pool_threads: 2,
            attach_execution_layer: true,
            store_path: None,
            clock_slot: None,
            ms_into_slot: 1000,
            engine_timeouts: test_timeouts(),
        }
    }
}

/// Where a harness's chain starts.
#[derive(Debug)]
pub enum ChainStart<E: EthSpec> {
    /// An interop genesis of [`HarnessConfig::validators`] at [`HarnessConfig::genesis_time`]
    /// whose execution genesis is the mock's ([`HarnessConfig::build`]).
    InteropGenesis,
    /// An anchor (`BeaconChain::from_anchor`): a state and the block whose post-state it is
    /// (a checkpoint, a block built on an interop genesis, a synthetic state).
    Anchor {
        /// The anchor's state.
        state: CachedBeaconState<E>,
        /// The anchor's block.
        block: SignedBeaconBlock<E>,
    },
    /// The chain in the store at [`HarnessConfig::store_path`] (`BeaconChain::open`), as a
    /// restarted node finds it.
    Stored,
}

/// Why a harness could not be built or a block made on it.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The mock execution client did not start.
    #[error("mock execution client: {0}")]
    Mock(#[source] std::io::Error),
    /// The engine API client could not be built.
    #[error("engine API client: {0}")]
    Engine(#[from] execution_layer::Error),
    /// The interop genesis state could not be made.
    #[error("genesis: {0}")]
    Genesis(#[from] state_processing::genesis::GenesisError),
    /// A state could not be hashed, or a state helper failed.
    #[error("state: {0}")]
    State(#[from] state_processing::Error),
    /// A state could not be advanced.
    #[error("advancing a state: {0}")]
    SlotProcessing(#[from] state_processing::per_slot::SlotProcessingError),
    /// The temporary directory or the store could not be made.
    #[error("store: {0}")]
    Store(#[from] store::StoreError),
    /// The temporary directory could not be made.
    #[error("temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// The chain refused its anchor.
    #[error("chain: {0}")]
    Chain(#[from] ChainError),
    /// Production failed.
    #[error("production: {0}")]
    Production(#[from] ProductionError),
    /// A thread pool could not be built.
    #[error("thread pool: {0}")]
    Pool(#[from] rayon::ThreadPoolBuildError),
    /// [`ChainStart::Stored`] without a [`HarnessConfig::store_path`] to open.
    #[error("a stored chain needs a store path")]
    NoStorePath,
    /// A block of a fork before Electra (the harness signs Electra-layout blocks).
    #[error("a {0} block: the harness signs Electra and Fulu blocks")]
    UnsupportedFork(ForkName),
}

/// A chain on a mock execution client, a manual clock and a temporary store.
pub struct ChainHarness<E: EthSpec> {
    /// The chain's configuration.
    pub spec: Arc<ChainSpec>,
    /// The chain's clock (starts one second into slot 0).
    pub clock: Arc<ManualSlotClock>,
    /// The chain.
    pub chain: Arc<BeaconChain<E>>,
    /// Block production on the chain, with its own pool and engine client.
    pub producer: Arc<BlockProducer<E>>,
    /// The producer's operation pool (an API serving the chain shares it).
    pub op_pool: Arc<OperationPool<E>>,
    /// The execution client.
    pub mock: MockExecutionLayer<E>,
    /// The mock's JWT secret.
    pub jwt: JwtSecret,
    /// Genesis time, seconds since the UNIX epoch.
    pub genesis_time: u64,
    ms_into_slot: u64,
    engine_timeouts: Timeouts,
    /// The temporary directory of the store, when the harness owns it.
    _dir: Option<tempfile::TempDir>,
}

impl<E: EthSpec> std::fmt::Debug for ChainHarness<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainHarness")
            .field("chain", &self.chain)
            .finish_non_exhaustive()
    }
}

/// Engine timeouts for a shared test machine: the mock computes cell proofs for its blobs.
fn test_timeouts() -> Timeouts {
    Timeouts {
        get_payload: Duration::from_secs(120),
        new_payload: Duration::from_secs(60),
        forkchoice_updated: Duration::from_secs(60),
        ..Timeouts::default()
    }
}

/// The mock execution client started and the chain not yet built: the time to make an anchor
/// that continues the mock's execution chain ([`Self::mock`]'s genesis block hash).
pub struct HarnessBuilder<E: EthSpec> {
    config: HarnessConfig,
    mock: MockExecutionLayer<E>,
    jwt: JwtSecret,
}

impl<E: EthSpec> std::fmt::Debug for HarnessBuilder<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HarnessBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl HarnessConfig {
    /// Starts the mock execution client (on a tokio runtime, at 127.0.0.1 on a free port) and
    /// builds the chain on an interop genesis.
    pub async fn build<E: EthSpec>(self) -> Result<ChainHarness<E>, HarnessError> {
        self.build_from(ChainStart::InteropGenesis).await
    }

    /// Starts the mock execution client and builds the chain from `start`.
    pub async fn build_from<E: EthSpec>(
        self,
        start: ChainStart<E>,
    ) -> Result<ChainHarness<E>, HarnessError> {
        self.start_execution_layer().await?.build(start)
    }

    /// Starts the mock execution client (on a tokio runtime, at 127.0.0.1 on a free port) with
    /// this configuration's spec, genesis time, seed and blobs per payload.
    pub async fn start_execution_layer<E: EthSpec>(
        self,
    ) -> Result<HarnessBuilder<E>, HarnessError> {
        let jwt = JwtSecret::random();
        let mock = MockExecutionLayer::<E>::start(
            MockConfig {
                jwt_secret: jwt.clone(),
                spec: self.spec.clone(),
                genesis_time: self.genesis_time,
                seed: self.seed,
                chain_id: 1337,
            },
            std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        )
        .await
        .map_err(HarnessError::Mock)?;
        mock.set_blobs_per_payload(self.blobs_per_payload);
        Ok(HarnessBuilder {
            config: self,
            mock,
            jwt,
        })
    }
}

impl<E: EthSpec> HarnessBuilder<E> {
    /// The started execution client.
    pub fn mock(&self) -> &MockExecutionLayer<E> {
        &self.mock
    }

    /// The configuration the chain will be built with.
    pub fn config(&self) -> &HarnessConfig {
        &self.config
    }

    /// The configuration, for options that need the running mock (a producer whose builder is
    /// a relay over the mock). The mock's own options are fixed by now.
    pub fn config_mut(&mut self) -> &mut HarnessConfig {
        &mut self.config
    }

    /// An engine API client to the mock (with [`HarnessConfig::engine_timeouts`]).
    pub fn engine(&self) -> Result<Arc<EngineApiClient>, HarnessError> {
        Ok(Arc::new(
            EngineApiClient::new(
                self.mock.url(),
                self.jwt.clone(),
                self.config.engine_timeouts,
            )?
            .with_fork_schedule::<E>(&self.config.spec, self.config.genesis_time),
        ))
    }

    /// Builds the chain from `start` with its store, clock, pool and block producer. Called on
    /// a tokio runtime (the execution client is attached to the current one).
    pub fn build(self, start: ChainStart<E>) -> Result<ChainHarness<E>, HarnessError> {
        let HarnessBuilder { config, mock, jwt } = self;
        let spec = Arc::new(config.spec);
        let (dir, store_path) = match config.store_path {
            Some(path) => (None, path),
            None => {
                let dir = tempfile::tempdir().map_err(HarnessError::TempDir)?;
                let path = dir.path().join("db");
                (Some(dir), path)
            }
        };
        // The clock's start: the anchor's genesis and slot (the configured genesis for a
        // stored chain), unless a slot is given.
        let (genesis_time, anchor_slot) = match &start {
            ChainStart::InteropGenesis => (config.genesis_time, 0),
            ChainStart::Anchor { state, block } => (*state.state.genesis_time(), block.slot()),
            ChainStart::Stored => (config.genesis_time, 0),
        };
        let slot = config.clock_slot.unwrap_or(anchor_slot);
        let clock = Arc::new(ManualSlotClock::new(
            spec.compute_time_at_slot(genesis_time, slot) * 1000 + config.ms_into_slot,
        ));
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .num_threads(config.pool_threads)
                .build()?,
        );
        let open_store = || Store::<E>::open(&store_path, (*spec).clone(), config.store.clone());
        let chain = match start {
            ChainStart::InteropGenesis => {
                let (state, block) = interop_genesis::<E>(
                    config.validators,
                    config.genesis_time,
                    mock.genesis_block_hash(),
                    &spec,
                )?;
                BeaconChain::from_anchor(
                    Arc::new(open_store()?),
                    state,
                    block,
                    spec.clone(),
                    clock.clone(),
                    pool,
                    config.chain,
                )?
            }
            ChainStart::Anchor { state, block } => BeaconChain::from_anchor(
                Arc::new(open_store()?),
                state,
                block,
                spec.clone(),
                clock.clone(),
                pool,
                config.chain,
            )?,
            ChainStart::Stored => {
                if dir.is_some() {
                    return Err(HarnessError::NoStorePath);
                }
                BeaconChain::open(
                    Arc::new(open_store()?),
                    spec.clone(),
                    clock.clone(),
                    pool,
                    config.chain,
                )?
            }
        };
        let chain = Arc::new(chain);
        // The engine methods of each payload's era (Amsterdam's from the Gloas fork on).
        let engine = Arc::new(
            EngineApiClient::new(mock.url(), jwt.clone(), config.engine_timeouts)?
                .with_fork_schedule::<E>(&spec, chain.genesis_time()),
        );
        if config.attach_execution_layer {
            // A fresh chain has none: this cannot fail.
            let _ = chain.attach_execution_layer(engine.clone(), tokio::runtime::Handle::current());
        }
        let op_pool = Arc::new(OperationPool::new());
        let producer = Arc::new(BlockProducer::new(
            chain.clone(),
            op_pool.clone(),
            engine,
            config.producer,
        ));
        Ok(ChainHarness {
            genesis_time: chain.genesis_time(),
            spec,
            clock,
            chain,
            producer,
            op_pool,
            mock,
            jwt,
            ms_into_slot: config.ms_into_slot,
            engine_timeouts: config.engine_timeouts,
            _dir: dir,
        })
    }
}

/// The interop genesis of `validators` validators at `genesis_time` on the execution block
/// `eth1_block_hash`: its state (root computed) and block, an anchor for
/// [`ChainStart::Anchor`] or for blocks built ahead of any chain. A spec that schedules Gloas
/// at genesis gives a Gloas genesis (its block carrying the genesis bid).
pub fn interop_genesis<E: EthSpec>(
    validators: usize,
    genesis_time: u64,
    eth1_block_hash: Root,
    spec: &ChainSpec,
) -> Result<(CachedBeaconState<E>, SignedBeaconBlock<E>), HarnessError> {
    let state = interop_genesis_state::<E>(validators, genesis_time, eth1_block_hash, spec)?;
    let mut state = CachedBeaconState::new(state);
    let state_root = state.hash_tree_root()?;
    let block = interop_genesis_block_of::<E>(&state.state, state_root);
    Ok((state, block))
}

/// `state` (a Fulu state, such as a synthetic mainnet-size one) made an anchor for
/// [`ChainStart::Anchor`]: an empty-bodied block at the state's slot with the proposer and
/// parent of the state's latest header, that header rewritten to be the block's (so that the
/// state is the block's post-state), and the state's root in the block.
pub fn anchor_of_state<E: EthSpec>(
    mut state: BeaconState<E>,
) -> Result<(CachedBeaconState<E>, SignedBeaconBlock<E>), HarnessError> {
    let mut block = interop_genesis_block::<E>(Root::ZERO);
    let SignedBeaconBlock::Fulu(inner) = &mut block else {
        return Err(HarnessError::UnsupportedFork(block.fork_name()));
    };
    if state.fork_name() != ForkName::Fulu {
        return Err(HarnessError::UnsupportedFork(state.fork_name()));
    }
    let header = state.latest_block_header().clone();
    inner.message.slot = *state.slot();
    inner.message.parent_root = header.parent_root;
    inner.message.proposer_index = header.proposer_index;
    *state.latest_block_header_mut() = types::phase0::BeaconBlockHeader {
        slot: inner.message.slot,
        proposer_index: inner.message.proposer_index,
        parent_root: inner.message.parent_root,
        state_root: Root::ZERO,
        body_root: inner.message.body.tree_hash_root(),
    };
    let mut state = CachedBeaconState::new(state);
    inner.message.state_root = state.hash_tree_root()?;
    Ok((state, block))
}

impl<E: EthSpec> ChainHarness<E> {
    /// [`HarnessConfig::ms_into_slot`] (one second by default) into `slot`, in milliseconds
    /// since the UNIX epoch.
    pub fn time_ms(&self, slot: Slot) -> u64 {
        self.spec.compute_time_at_slot(self.genesis_time, slot) * 1000 + self.ms_into_slot
    }

    /// Moves the clock to [`Self::time_ms`] of `slot`.
    pub fn set_slot(&self, slot: Slot) {
        self.clock.set_ms(self.time_ms(slot));
    }

    /// Another engine API client to the mock (with the harness's timeouts).
    pub fn engine(&self) -> Result<Arc<EngineApiClient>, HarnessError> {
        Ok(Arc::new(
            EngineApiClient::new(self.mock.url(), self.jwt.clone(), self.engine_timeouts)?
                .with_fork_schedule::<E>(&self.spec, self.genesis_time),
        ))
    }

    /// Imports `block` with `columns` as one whose payload the execution client found valid
    /// (no `engine_newPayload`): blocks built ahead with arbitrary payloads, a node's history.
    pub fn import_valid(
        &self,
        block: Arc<SignedBeaconBlock<E>>,
        columns: &[DataColumnSidecar<E>],
    ) -> Result<Root, HarnessError> {
        Ok(self
            .chain
            .import_block(block, columns, &AlwaysValid, ExecutionStatus::Valid)?)
    }

    /// The head state advanced to `slot` (a copy).
    pub fn advanced_state(&self, slot: Slot) -> Result<CachedBeaconState<E>, HarnessError> {
        let mut state = self.chain.head().state.clone();
        if slot > *state.state.slot() {
            process_slots(&mut state, slot, &self.spec)?;
        }
        Ok(state)
    }

    /// The proposer of `slot` on the head, and its RANDAO reveal.
    pub fn proposer_and_reveal(
        &self,
        slot: Slot,
    ) -> Result<(ValidatorIndex, BLSSignature), HarnessError> {
        let mut state = self.advanced_state(slot)?;
        let (view, caches) = state.view_mut()?;
        let view = view.as_ref();
        let proposer = get_beacon_proposer_index(&view, caches)?;
        let epoch = get_current_epoch(&view);
        let root = compute_signing_root(&epoch, get_domain(&view, DOMAIN_RANDAO, None));
        Ok((proposer, sign_with(proposer, root.as_slice())))
    }

    /// `block` signed with the interop key of `signer`.
    pub fn sign_block(
        &self,
        block: &BeaconBlock<E>,
        signer: ValidatorIndex,
    ) -> Result<SignedBeaconBlock<E>, HarnessError> {
        let (BeaconBlock::Fulu(message) | BeaconBlock::Electra(message)) = block else {
            return Err(HarnessError::UnsupportedFork(block.fork_name()));
        };
        let state = self.chain.head().state.clone();
        let view = state.view()?;
        let domain = get_domain(
            &view,
            DOMAIN_BEACON_PROPOSER,
            Some(compute_epoch_at_slot::<E>(message.slot)),
        );
        let root = compute_signing_root(message, domain);
        let signed = types::electra::SignedBeaconBlock {
            message: message.clone(),
            signature: sign_with(signer, root.as_slice()),
        };
        Ok(match block {
            BeaconBlock::Electra(_) => SignedBeaconBlock::Electra(signed),
            BeaconBlock::Fulu(_) => SignedBeaconBlock::Fulu(signed),
            other @ (BeaconBlock::Phase0(_)
            | BeaconBlock::Altair(_)
            | BeaconBlock::Bellatrix(_)
            | BeaconBlock::Capella(_)
            | BeaconBlock::Deneb(_)
            | BeaconBlock::Gloas(_)) => {
                return Err(HarnessError::UnsupportedFork(other.fork_name()));
            }
        })
    }

    /// Moves the clock to `slot` and produces a block there on the head (`graffiti` if given),
    /// with a valid reveal.
    pub async fn produce(
        &self,
        slot: Slot,
        graffiti: Option<types::Root>,
    ) -> Result<ProducedBlock<E>, HarnessError> {
        self.set_slot(slot);
        let (_, reveal) = self.proposer_and_reveal(slot)?;
        Ok(self
            .producer
            .produce_block_v3(slot, reveal, graffiti, false, None)
            .await?)
    }

    /// [`Self::produce`] and the block signed by its proposer.
    pub async fn produce_signed(
        &self,
        slot: Slot,
    ) -> Result<(ProducedBlock<E>, SignedBeaconBlock<E>), HarnessError> {
        let produced = self.produce(slot, None).await?;
        let signed = self.sign_block(&produced.block, produced.proposer_index)?;
        Ok((produced, signed))
    }
}

/// `message` signed with validator `index`'s interop key.
fn sign_with(index: ValidatorIndex, message: &[u8]) -> BLSSignature {
    let signature = bls::interop_secret_key(index as usize).sign(message);
    BLSSignature::from(signature.serialize())
}
