//! One chain for tests and benchmarks (feature `test-utils`): an interop genesis whose
//! execution genesis is a [`MockExecutionLayer`]'s, a store in a temporary directory, a manual
//! clock, the chain with the mock attached as its execution client, and a block producer; plus
//! what a test needs to build valid blocks on it (the interop keys' RANDAO reveals and
//! proposer signatures).
//!
//! ```no_run
//! # async fn run() {
//! use beacon_chain::harness::HarnessConfig;
//! let h = HarnessConfig::default().build::<types::MinimalEthSpec>().await.expect("a harness");
//! let (produced, signed) = h.produce_signed(1).await.expect("a block");
//! # let _ = (produced, signed);
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use execution_layer::{EngineApiClient, JwtSecret, Timeouts};
use mock_execution_layer::{MockConfig, MockExecutionLayer};
use operation_pool::OperationPool;
use rayon::ThreadPoolBuilder;
use state_processing::{
    CachedBeaconState,
    common::{compute_epoch_at_slot, get_beacon_proposer_index, get_current_epoch, get_domain},
    genesis::{interop_genesis_block, interop_genesis_state},
    per_slot::process_slots,
};
use store::{Store, StoreConfig};
use types::{
    Address, BLSSignature, BeaconBlock, ChainSpec, EthSpec, ForkName, SignedBeaconBlock, Slot,
    ValidatorIndex,
    signing::{DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO, compute_signing_root},
};

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
    /// Genesis time, seconds since the UNIX epoch.
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
        }
    }
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
    /// The execution client.
    pub mock: MockExecutionLayer<E>,
    /// The mock's JWT secret.
    pub jwt: JwtSecret,
    /// Genesis time, seconds since the UNIX epoch.
    pub genesis_time: u64,
    _dir: tempfile::TempDir,
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

impl HarnessConfig {
    /// Starts the mock execution client (on a tokio runtime, at 127.0.0.1 on a free port) and
    /// builds the chain on an interop genesis.
    pub async fn build<E: EthSpec>(self) -> Result<ChainHarness<E>, HarnessError> {
        let spec = Arc::new(self.spec);
        let jwt = JwtSecret::random();
        let mock = MockExecutionLayer::<E>::start(
            MockConfig {
                jwt_secret: jwt.clone(),
                spec: (*spec).clone(),
                genesis_time: self.genesis_time,
                seed: self.seed,
                chain_id: 1337,
            },
            std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        )
        .await
        .map_err(HarnessError::Mock)?;
        mock.set_blobs_per_payload(self.blobs_per_payload);
        let genesis = interop_genesis_state::<E>(
            self.validators,
            self.genesis_time,
            mock.genesis_block_hash(),
            &spec,
        )?;
        let mut genesis = CachedBeaconState::new(genesis);
        let genesis_block = interop_genesis_block::<E>(genesis.hash_tree_root()?);
        let dir = tempfile::tempdir().map_err(HarnessError::TempDir)?;
        let store = Store::<E>::open(&dir.path().join("db"), (*spec).clone(), self.store)?;
        let start_ms = spec.compute_time_at_slot(self.genesis_time, 0) * 1000 + 1000;
        let clock = Arc::new(ManualSlotClock::new(start_ms));
        let pool = Arc::new(
            ThreadPoolBuilder::new()
                .num_threads(self.pool_threads)
                .build()?,
        );
        let chain = Arc::new(BeaconChain::from_anchor(
            Arc::new(store),
            genesis,
            genesis_block,
            spec.clone(),
            clock.clone(),
            pool,
            self.chain,
        )?);
        let engine = Arc::new(EngineApiClient::new(
            mock.url(),
            jwt.clone(),
            test_timeouts(),
        )?);
        if self.attach_execution_layer {
            // A fresh chain has none: this cannot fail.
            let _ = chain.attach_execution_layer(engine.clone(), tokio::runtime::Handle::current());
        }
        let producer = Arc::new(BlockProducer::new(
            chain.clone(),
            Arc::new(OperationPool::new()),
            engine,
            self.producer,
        ));
        Ok(ChainHarness {
            spec,
            clock,
            chain,
            producer,
            mock,
            jwt,
            genesis_time: self.genesis_time,
            _dir: dir,
        })
    }
}

impl<E: EthSpec> ChainHarness<E> {
    /// One second into `slot`, in milliseconds since the UNIX epoch.
    pub fn time_ms(&self, slot: Slot) -> u64 {
        self.spec.compute_time_at_slot(self.genesis_time, slot) * 1000 + 1000
    }

    /// Moves the clock one second into `slot`.
    pub fn set_slot(&self, slot: Slot) {
        self.clock.set_ms(self.time_ms(slot));
    }

    /// Another engine API client to the mock (with the harness's timeouts).
    pub fn engine(&self) -> Result<Arc<EngineApiClient>, HarnessError> {
        Ok(Arc::new(EngineApiClient::new(
            self.mock.url(),
            self.jwt.clone(),
            test_timeouts(),
        )?))
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
