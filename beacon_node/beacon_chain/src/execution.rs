//! The chain and the execution client around import and production: `engine_newPayloadV4` for a
//! block's payload (`verify_and_notify_new_payload`), the verdict handed to the state transition
//! as an [`ExecutionEngine`], and `engine_forkchoiceUpdatedV3` with the head, safe (justified)
//! and finalized block hashes of the chain's head snapshot.
//!
//! The engine is asked outside the (synchronous) import, never under the fork choice lock: the
//! import reads a verdict obtained before it ([`PayloadVerdict`]), or one still in flight
//! ([`BlockPayloadVerdict::Pending`]) that it waits for after the state transition and before
//! fork choice, so that `engine_newPayload` and the transition run at the same time.
//!
//! [spec]: deneb/beacon-chain.md#modified-verify_and_notify_new_payload,
//! bellatrix/fork-choice.md#notify_forkchoice_updated

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use execution_layer::{
    EngineApiClient, ForkchoiceState, ForkchoiceUpdated, PayloadAttributes,
    PayloadStatus as EnginePayloadStatus,
};
use state_processing::per_block::{EngineError, ExecutionEngine, kzg_commitment_to_versioned_hash};
use types::{
    EthSpec, ForkName, Hash32, Root, SignedBeaconBlock, VersionedHash,
    electra::{ExecutionPayload, ExecutionRequests, NewPayloadRequest},
};

use crate::chain::{BeaconChain, ExecutionStatus, HeadSnapshot, electra_message};

/// Why the execution client could not be asked, or gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum ExecutionError {
    /// The engine API call failed (transport, timeout, JSON-RPC error, malformed answer).
    #[error("engine API: {0}")]
    Engine(#[from] execution_layer::Error),
    /// A block of a fork whose payloads this client does not send (before Electra).
    #[error("a {0} block: engine_newPayloadV4 takes Electra and later payloads")]
    UnsupportedFork(ForkName),
    /// More versioned hashes than a request holds (a block with more commitments than
    /// `MAX_BLOB_COMMITMENTS_PER_BLOCK` cannot decode, so this is an invariant failure).
    #[error("{0} versioned hashes do not fit a NewPayloadRequest")]
    TooManyVersionedHashes(usize),
    /// A state the forkchoice state is read from is not held by fork choice.
    #[error("no state for block {0} in fork choice")]
    MissingState(Root),
    /// A state helper failed.
    #[error("state: {0}")]
    State(#[from] state_processing::Error),
    /// The execution client gave a blob that is not one (`engine_getBlobsV2`).
    #[error("a malformed blob from the execution client: {0}")]
    MalformedBlob(#[source] kzg::Error),
    /// No execution client is attached to the chain ([`BeaconChain::attach_execution_layer`]).
    #[error("no execution client is attached")]
    NotAttached,
}

/// The execution client as the chain talks to it: the engine API client, and the runtime its
/// calls run on (the chain's own work is synchronous, on the processor's pools).
#[derive(Debug, Clone)]
pub struct ExecutionLayer {
    /// The engine API client.
    pub engine: Arc<EngineApiClient>,
    /// The runtime the engine calls are spawned on.
    pub runtime: tokio::runtime::Handle,
}

/// The execution client's verdicts on the payloads of blocks being imported: the client
/// itself once attached, the `engine_newPayload` calls in flight by block root (with the
/// block's slot, for pruning), and how long an import waits for one after its state
/// transition. A component of [`BeaconChain`] with its own lock.
#[derive(Debug)]
pub struct PayloadVerdicts {
    execution_layer: std::sync::OnceLock<ExecutionLayer>,
    pending: parking_lot::Mutex<
        std::collections::HashMap<Root, (types::Slot, Arc<PendingPayloadVerdict>)>,
    >,
    wait: Duration,
}

impl PayloadVerdicts {
    /// No execution client yet, nothing in flight; imports wait at most `wait` for a verdict.
    pub fn new(wait: Duration) -> Self {
        Self {
            execution_layer: std::sync::OnceLock::new(),
            pending: parking_lot::Mutex::new(std::collections::HashMap::new()),
            wait,
        }
    }

    /// How long an import waits for a verdict in flight after its state transition.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// The execution client, when attached.
    pub fn execution_layer(&self) -> Option<&ExecutionLayer> {
        self.execution_layer.get()
    }

    fn attach(&self, execution: ExecutionLayer) -> Result<(), AlreadyAttached> {
        self.execution_layer
            .set(execution)
            .map_err(|_| AlreadyAttached)
    }

    /// A verdict for block `root` (at `slot`) is now in flight; returns its sender.
    pub fn expect(&self, root: Root, slot: types::Slot) -> PayloadVerdictSender {
        let (sender, pending) = PendingPayloadVerdict::channel();
        self.pending.lock().insert(root, (slot, pending));
        sender
    }

    /// The verdict in flight for block `root`.
    pub fn in_flight(&self, root: &Root) -> Option<Arc<PendingPayloadVerdict>> {
        self.pending
            .lock()
            .get(root)
            .map(|(_, pending)| pending.clone())
    }

    /// Forgets the verdict in flight for block `root` (its import is over).
    pub fn forget(&self, root: &Root) {
        self.pending.lock().remove(root);
    }

    /// Forgets the verdicts of blocks at or below `finalized_slot`.
    pub fn prune(&self, finalized_slot: types::Slot) {
        self.pending
            .lock()
            .retain(|_, (slot, _)| *slot > finalized_slot);
    }
}

/// [`BeaconChain::attach_execution_layer`] was called a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an execution client is attached to the chain already")]
pub struct AlreadyAttached;

/// A blob and its cell proofs from the execution client (`engine_getBlobsV2`). Boxed: a blob
/// is 128 KiB, too much to move around a runtime worker's stack.
pub type ExecutionBlob = (Box<kzg::Blob>, Vec<kzg::KzgProof>);

/// The spec's `NewPayloadRequest` of a block: its payload, the versioned hashes of its blob
/// commitments, its parent root and its execution requests.
///
/// [spec]: electra/beacon-chain.md#modified-newpayloadrequest
pub fn new_payload_request<E: EthSpec>(
    block: &SignedBeaconBlock<E>,
) -> Result<NewPayloadRequest<E>, ExecutionError> {
    let message = electra_message(block).map_err(ExecutionError::UnsupportedFork)?;
    let body = &message.body;
    let hashes: Vec<VersionedHash> = body
        .blob_kzg_commitments
        .iter()
        .map(kzg_commitment_to_versioned_hash)
        .collect();
    let count = hashes.len();
    Ok(NewPayloadRequest {
        execution_payload: body.execution_payload.clone(),
        versioned_hashes: ssz_types::VariableList::new(hashes)
            .map_err(|_| ExecutionError::TooManyVersionedHashes(count))?,
        parent_beacon_block_root: message.parent_root,
        execution_requests: body.execution_requests.clone(),
    })
}

/// The chain's reading of an engine status: `VALID` is valid, `INVALID` and
/// `INVALID_BLOCK_HASH` invalidate, `SYNCING` and `ACCEPTED` leave the payload not validated
/// (optimistic import).
///
/// [spec]: sync/optimistic.md#how-to-optimistically-import-blocks
pub fn payload_status_of(status: &EnginePayloadStatus) -> ExecutionStatus {
    match status {
        EnginePayloadStatus::Valid => ExecutionStatus::Valid,
        EnginePayloadStatus::Invalid { .. } | EnginePayloadStatus::InvalidBlockHash { .. } => {
            ExecutionStatus::Invalidated
        }
        EnginePayloadStatus::Syncing | EnginePayloadStatus::Accepted => {
            ExecutionStatus::NotValidated
        }
    }
}

/// `verify_and_notify_new_payload` over the engine API: `engine_newPayloadV4` with the block's
/// payload, the versioned hashes of its blob commitments, its parent root and its execution
/// requests; the engine's full answer (with `latest_valid_hash` for an invalid payload).
pub async fn notify_new_payload_status<E: EthSpec>(
    engine: &EngineApiClient,
    block: &SignedBeaconBlock<E>,
) -> Result<EnginePayloadStatus, ExecutionError> {
    let request = new_payload_request(block)?;
    Ok(engine.new_payload_v4(&request).await?)
}

/// [`notify_new_payload_status`] read as the chain's [`ExecutionStatus`] ([`payload_status_of`]).
pub async fn notify_new_payload<E: EthSpec>(
    engine: &EngineApiClient,
    block: &SignedBeaconBlock<E>,
) -> Result<ExecutionStatus, ExecutionError> {
    notify_new_payload_status(engine, block)
        .await
        .map(|s| payload_status_of(&s))
}

impl<E: EthSpec> BeaconChain<E> {
    /// `engine_newPayload` for block `root`'s payload while its import runs (the import
    /// registered `sender` with [`BeaconChain::expect_payload_verdict`]): the verdict goes to
    /// the import waiting for it, then to the chain for an import that went on without it,
    /// optimistically ([`BeaconChain::on_payload_verdict`], with the latest valid hash of an
    /// INVALID). An engine that cannot be asked leaves the payload not validated (optimistic
    /// import); its error is returned beside that.
    pub async fn notify_new_payload_beside_import(
        &self,
        engine: &EngineApiClient,
        root: Root,
        block: &SignedBeaconBlock<E>,
        sender: PayloadVerdictSender,
    ) -> Result<ExecutionStatus, ExecutionError> {
        let answer = notify_new_payload_status(engine, block).await;
        let (status, latest_valid_hash) = match &answer {
            Ok(answer) => {
                let latest_valid_hash = match answer {
                    EnginePayloadStatus::Invalid {
                        latest_valid_hash, ..
                    } => *latest_valid_hash,
                    _ => None,
                };
                (payload_status_of(answer), latest_valid_hash)
            }
            Err(e) => {
                tracing::warn!(slot = block.slot(), error = %e, "newPayload failed: importing optimistically");
                (ExecutionStatus::NotValidated, None)
            }
        };
        self.record_block_executed(root, block.slot());
        if status == ExecutionStatus::Invalidated {
            tracing::warn!(block_root = %root, slot = block.slot(), "the execution client found the payload invalid");
        }
        sender.send(status);
        if let Err(e) =
            self.on_payload_verdict(root, block.parent_root(), status, latest_valid_hash)
        {
            tracing::warn!(block_root = %root, error = %e, "the payload verdict not applied");
        }
        answer.map(|_| status)
    }
}

impl<E: EthSpec> BeaconChain<E> {
    /// Gives the chain its execution client: from then on the chain sends `engine_newPayload`
    /// for the blocks it is given to import ([`Self::verify_payload_beside_import`]) and asks
    /// for blobs ([`Self::blobs_from_execution_layer`]). Once; a chain without one imports
    /// every payload optimistically (tests, tools).
    pub fn attach_execution_layer(
        &self,
        engine: Arc<EngineApiClient>,
        runtime: tokio::runtime::Handle,
    ) -> Result<(), AlreadyAttached> {
        self.payload_verdicts
            .attach(ExecutionLayer { engine, runtime })
    }

    /// The attached execution client.
    pub fn execution_layer(&self) -> Option<&ExecutionLayer> {
        self.payload_verdicts.execution_layer()
    }

    /// Sends `engine_newPayload` for `block` (root `root`), which is about to be imported, on
    /// the execution client's runtime: the import runs its state transition meanwhile and waits
    /// for the verdict before fork choice ([`Self::payload_verdict`]). Without an execution
    /// client nothing is sent and the payload imports not validated.
    pub fn verify_payload_beside_import(
        self: &Arc<Self>,
        root: Root,
        block: Arc<SignedBeaconBlock<E>>,
    ) {
        let Some(execution) = self.payload_verdicts.execution_layer() else {
            return;
        };
        // A Gloas block carries no payload: its envelope's is sent on its own path.
        if matches!(&*block, SignedBeaconBlock::Gloas(_)) {
            return;
        }
        let sender = self.expect_payload_verdict(root, block.slot());
        let chain = self.clone();
        let engine = execution.engine.clone();
        execution.runtime.spawn(async move {
            // A failure is logged there and leaves the payload not validated.
            let _ = chain
                .notify_new_payload_beside_import(&engine, root, &block, sender)
                .await;
        });
    }

    /// [`Self::verify_payload_beside_import`] for a segment of blocks about to be imported in
    /// order: `engine_newPayload` for each block not imported yet, oldest first, one after
    /// the other on the runtime. Returns each block's verdict (in flight, or known for a block
    /// imported already or with no execution client), for the segment's import.
    pub fn verify_payloads_beside_import(
        self: &Arc<Self>,
        blocks: &Arc<Vec<Arc<SignedBeaconBlock<E>>>>,
    ) -> Vec<BlockPayloadVerdict> {
        let execution = self.payload_verdicts.execution_layer();
        let mut verdicts = Vec::with_capacity(blocks.len());
        let mut senders = Vec::with_capacity(blocks.len());
        for (index, block) in blocks.iter().enumerate() {
            let root = block.canonical_root();
            if self.is_block_imported(&root) {
                verdicts.push(BlockPayloadVerdict::Known(ExecutionStatus::Valid));
            } else if execution.is_none() {
                verdicts.push(BlockPayloadVerdict::Known(ExecutionStatus::NotValidated));
            } else {
                let (sender, pending) = PendingPayloadVerdict::channel();
                senders.push((index, root, sender));
                verdicts.push(BlockPayloadVerdict::Pending(pending));
            }
        }
        if let Some(execution) = execution
            && !senders.is_empty()
        {
            let chain = self.clone();
            let engine = execution.engine.clone();
            let blocks = blocks.clone();
            execution.runtime.spawn(async move {
                for (index, root, sender) in senders {
                    let _ = chain
                        .notify_new_payload_beside_import(&engine, root, &blocks[index], sender)
                        .await;
                }
            });
        }
        verdicts
    }

    /// The blobs of `block`'s commitments from the execution client's pool
    /// (`engine_getBlobsV2`): `None` when it lacks any of them or the block has none.
    ///
    /// [spec]: fulu/p2p-interface.md#distributed-blob-publishing-using-blobs-retrieved-from-local-execution-layer-client
    pub async fn blobs_from_execution_layer(
        &self,
        block: &SignedBeaconBlock<E>,
    ) -> Result<Option<Vec<ExecutionBlob>>, ExecutionError> {
        let execution = self
            .payload_verdicts
            .execution_layer()
            .ok_or(ExecutionError::NotAttached)?;
        let hashes: Vec<VersionedHash> = match block {
            SignedBeaconBlock::Fulu(inner) => inner
                .message
                .body
                .blob_kzg_commitments
                .iter()
                .map(kzg_commitment_to_versioned_hash)
                .collect(),
            SignedBeaconBlock::Phase0(_)
            | SignedBeaconBlock::Altair(_)
            | SignedBeaconBlock::Bellatrix(_)
            | SignedBeaconBlock::Capella(_)
            | SignedBeaconBlock::Deneb(_)
            | SignedBeaconBlock::Electra(_) => return Ok(None),
            SignedBeaconBlock::Gloas(_) => {
                return Err(ExecutionError::UnsupportedFork(block.fork_name()));
            }
        };
        if hashes.is_empty() {
            return Ok(None);
        }
        let Some(items) = execution.engine.get_blobs_v2::<E>(&hashes).await? else {
            return Ok(None);
        };
        decode_execution_blobs(&items).map(Some)
    }
}

/// The execution client's blobs and cell proofs as KZG values, each blob boxed: a blob is
/// 128 KiB, and tuples of them moved through an iterator chain inside a future overflowed a
/// runtime worker's stack in an unoptimised build.
fn decode_execution_blobs<E: EthSpec>(
    items: &[execution_layer::BlobAndProof<E>],
) -> Result<Vec<ExecutionBlob>, ExecutionError> {
    let mut blobs = Vec::with_capacity(items.len());
    for item in items {
        let blob = kzg::blob_from_bytes(&item.blob[..]).map_err(ExecutionError::MalformedBlob)?;
        let proofs = item.proofs.iter().map(|p| kzg::KzgProof(p.0)).collect();
        blobs.push((blob, proofs));
    }
    Ok(blobs)
}

/// The execution client's verdict, obtained before the import, as the state transition's
/// [`ExecutionEngine`]: a valid or not-yet-validated payload passes (optimistic import), an
/// invalidated one fails `process_execution_payload`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadVerdict(pub ExecutionStatus);

impl PayloadVerdict {
    fn is_acceptable(self) -> bool {
        self.0 != ExecutionStatus::Invalidated
    }
}

impl<E: EthSpec> ExecutionEngine<E> for PayloadVerdict {
    fn verify_and_notify_new_payload(&self, _: &NewPayloadRequest<E>) -> Result<bool, EngineError> {
        Ok(self.is_acceptable())
    }

    fn verify_new_payload_parts(
        &self,
        _: &ExecutionPayload<E>,
        _: Vec<VersionedHash>,
        _: Root,
        _: &ExecutionRequests<E>,
    ) -> Result<bool, EngineError> {
        Ok(self.is_acceptable())
    }
}

/// Where an import reads the verdict on a block's payload: after the state transition and
/// before fork choice, so that a verdict still in flight ([`PendingPayloadVerdict`]) is waited
/// for only as long as the execution client is slower than the transition.
pub trait PayloadStatusSource {
    /// The verdict, waiting at most `wait` for it when the execution client has not answered
    /// yet; past that the payload counts as not validated (the block imports optimistically,
    /// and the answer is applied when it comes: [`BeaconChain::on_payload_verdict`]).
    fn payload_status(&self, wait: Duration) -> ExecutionStatus;

    /// Whether the verdict is still in flight (the state transition then only knows whether
    /// it has come back invalid already).
    fn is_pending(&self) -> bool {
        false
    }
}

impl PayloadStatusSource for ExecutionStatus {
    fn payload_status(&self, _: Duration) -> ExecutionStatus {
        *self
    }
}

impl<T: PayloadStatusSource + ?Sized> PayloadStatusSource for &T {
    fn payload_status(&self, wait: Duration) -> ExecutionStatus {
        (**self).payload_status(wait)
    }

    fn is_pending(&self) -> bool {
        (**self).is_pending()
    }
}

/// `engine_newPayload` of one block in flight: the import runs the state transition meanwhile
/// and waits here before fork choice ([`PayloadStatusSource`]). Set once through its
/// [`PayloadVerdictSender`].
#[derive(Debug, Default)]
pub struct PendingPayloadVerdict {
    status: Mutex<Option<ExecutionStatus>>,
    answered: Condvar,
    /// Imports waiting for the answer now.
    waiting: AtomicUsize,
}

impl PendingPayloadVerdict {
    /// A verdict in flight and the handle that gives it.
    pub fn channel() -> (PayloadVerdictSender, Arc<Self>) {
        let pending = Arc::new(Self::default());
        (PayloadVerdictSender(pending.clone()), pending)
    }

    /// The answer, when it came.
    pub fn get(&self) -> Option<ExecutionStatus> {
        *self.status.lock()
    }

    /// The answer, waiting at most `limit` for it.
    pub fn wait(&self, limit: Duration) -> Option<ExecutionStatus> {
        let deadline = Instant::now() + limit;
        let mut status = self.status.lock();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        while status.is_none() {
            if self.answered.wait_until(&mut status, deadline).timed_out() {
                break;
            }
        }
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        *status
    }

    /// How many imports wait for the answer now (their state transitions are done).
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    fn set(&self, status: ExecutionStatus) {
        let mut current = self.status.lock();
        if current.is_none() {
            *current = Some(status);
            self.answered.notify_all();
        }
    }
}

/// Gives a [`PendingPayloadVerdict`] its answer. Dropped without one (the task asking the
/// execution client was cancelled), it answers not validated: the block imports optimistically,
/// as when the execution client cannot be asked, and no import waits for ever.
#[derive(Debug)]
pub struct PayloadVerdictSender(Arc<PendingPayloadVerdict>);

impl PayloadVerdictSender {
    /// The execution client's verdict.
    pub fn send(self, status: ExecutionStatus) {
        self.0.set(status);
    }
}

impl Drop for PayloadVerdictSender {
    fn drop(&mut self) {
        self.0.set(ExecutionStatus::NotValidated);
    }
}

/// A block's payload verdict for its import: known, or still in flight.
#[derive(Debug, Clone)]
pub enum BlockPayloadVerdict {
    /// The execution client answered (or the block was never sent to it).
    Known(ExecutionStatus),
    /// `engine_newPayload` is in flight.
    Pending(Arc<PendingPayloadVerdict>),
}

impl BlockPayloadVerdict {
    /// The answer when known, without waiting.
    pub fn get(&self) -> Option<ExecutionStatus> {
        match self {
            Self::Known(status) => Some(*status),
            Self::Pending(pending) => pending.get(),
        }
    }
}

impl PayloadStatusSource for BlockPayloadVerdict {
    fn payload_status(&self, wait: Duration) -> ExecutionStatus {
        match self {
            Self::Known(status) => *status,
            Self::Pending(pending) => pending.wait(wait).unwrap_or(ExecutionStatus::NotValidated),
        }
    }

    fn is_pending(&self) -> bool {
        self.get().is_none()
    }
}

/// The state transition passes a payload unless its verdict is known to be invalid; one in
/// flight is applied after the transition, before fork choice.
impl<E: EthSpec> ExecutionEngine<E> for BlockPayloadVerdict {
    fn verify_and_notify_new_payload(&self, _: &NewPayloadRequest<E>) -> Result<bool, EngineError> {
        Ok(self.get() != Some(ExecutionStatus::Invalidated))
    }

    fn verify_new_payload_parts(
        &self,
        _: &ExecutionPayload<E>,
        _: Vec<VersionedHash>,
        _: Root,
        _: &ExecutionRequests<E>,
    ) -> Result<bool, EngineError> {
        Ok(self.get() != Some(ExecutionStatus::Invalidated))
    }
}

/// The block hash of the latest execution payload in the post-state of `root` (the block's own
/// payload; for the anchor, the execution block the chain starts from).
fn payload_block_hash<E: EthSpec>(
    chain: &BeaconChain<E>,
    root: &Root,
) -> Result<Option<Hash32>, ExecutionError> {
    if let Some(hash) = chain.fork_choice.lock().checkpoint_execution_hash(root) {
        return Ok(Some(hash));
    }
    // The anchor has no payload of its own in fork choice: its state's latest header (for
    // Gloas, the payload its block built on: `state.latest_block_hash`).
    match chain.state_cache.block_state(root) {
        Some(state) => {
            let view = state.view()?;
            match view.gloas() {
                Ok(gloas) => Ok(Some(*gloas.latest_block_hash)),
                Err(_) => Ok(Some(view.payload_header()?.block_hash)),
            }
        }
        None => Ok(None),
    }
}

/// The execution block hash of the head node `head`: its payload's before Gloas; for Gloas
/// the bid's `block_hash` of a FULL head, the hash its block built on
/// (`state.latest_block_hash`, the bid's `parent_block_hash`) of an EMPTY one.
///
/// [spec]: gloas/validator.md#modified-prepare_execution_payload
pub fn head_execution_block_hash<E: EthSpec>(
    head: &HeadSnapshot<E>,
) -> Result<Hash32, ExecutionError> {
    let view = head.state.view()?;
    let Ok(gloas) = view.gloas() else {
        return Ok(view.payload_header()?.block_hash);
    };
    Ok(match head.payload_status {
        Some(fork_choice::PayloadStatus::Full) => gloas.latest_execution_payload_bid.block_hash,
        Some(fork_choice::PayloadStatus::Empty | fork_choice::PayloadStatus::Pending) | None => {
            *gloas.latest_block_hash
        }
    })
}

/// The spec's `ForkchoiceStateV1` of the chain's current head snapshot
/// ([`forkchoice_state_of`]).
pub fn forkchoice_state<E: EthSpec>(
    chain: &BeaconChain<E>,
) -> Result<ForkchoiceState, ExecutionError> {
    forkchoice_state_of(chain, &chain.head())
}

/// The spec's `ForkchoiceStateV1` of `head`: the head's payload hash, the justified block's as
/// safe, the finalized block's as finalized (zero for a checkpoint whose block fork choice no
/// longer holds, as the engine API allows before there is one).
///
/// [spec]: bellatrix/fork-choice.md#safe-block, fork_choice/safe-block.md#get_safe_execution_block_hash
pub fn forkchoice_state_of<E: EthSpec>(
    chain: &BeaconChain<E>,
    head: &HeadSnapshot<E>,
) -> Result<ForkchoiceState, ExecutionError> {
    let head_block_hash = head_execution_block_hash(head)?;
    let safe_block_hash =
        payload_block_hash(chain, &head.justified_checkpoint.root)?.unwrap_or(Hash32::ZERO);
    let finalized_block_hash =
        payload_block_hash(chain, &head.finalized_checkpoint.root)?.unwrap_or(Hash32::ZERO);
    Ok(ForkchoiceState {
        head_block_hash,
        safe_block_hash,
        finalized_block_hash,
    })
}

/// `notify_forkchoice_updated`: `engine_forkchoiceUpdatedV3` with [`forkchoice_state`] of the
/// chain's current head and, when given, the attributes of a payload to build on it.
///
/// [spec]: bellatrix/fork-choice.md#notify_forkchoice_updated
pub async fn update_execution_head<E: EthSpec>(
    chain: &BeaconChain<E>,
    engine: &EngineApiClient,
    attributes: Option<PayloadAttributes>,
) -> Result<ForkchoiceUpdated, ExecutionError> {
    let head = chain.head();
    let state = forkchoice_state_of(chain, &head)?;
    let updated = engine
        .forkchoice_updated_v3(state, attributes.as_ref())
        .await?;
    if matches!(updated.payload_status, EnginePayloadStatus::Valid) {
        chain.on_valid_execution_block(head.block_root);
    }
    Ok(updated)
}
