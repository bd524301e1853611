//! The light-client server: light-client data derived from imported blocks, kept as fork choice
//! moves the head and finality, persisted so that it is served after a restart.
//!
//! Each imported block's post-state goes to a [`LightClientDataCollector`]; each new head
//! commits the canonical branch's best `LightClientUpdate` per sync committee period (ranked
//! with `is_better_update`), the latest finality and optimistic updates and the bootstraps of
//! newly finalized epoch boundary blocks. What changed is written to the store's light-client key
//! space in the same step, so the accessors below answer from memory, and after a restart from
//! the store, for what the collector no longer holds. As finality advances, the stored bootstraps
//! of blocks before the serving window (`MIN_EPOCHS_FOR_BLOCK_REQUESTS` epochs before the
//! finalized one) are deleted, with the sync committees of periods no kept bootstrap is in.
//!
//! On by default; `ChainConfig::disable_light_client_server` turns it off.
//!
//! [spec]: altair/light-client/full-node.md, altair/light-client/p2p-interface.md

use parking_lot::Mutex;
use ssz::{Decode, Encode};
use store::Store;
use types::{
    BeaconState, ChainSpec, Epoch, EthSpec, LightClientBootstrap, LightClientFinalityUpdate,
    LightClientOptimisticUpdate, LightClientUpdate, Root, SignedBeaconBlock, Slot,
};

use light_client::full_node::{
    create_light_client_bootstrap, into_forked_bootstrap, into_forked_finality_update,
    into_forked_optimistic_update, into_forked_update, light_client_fork_at_slot,
};
use light_client::sync_protocol::{compute_sync_committee_period_at_slot, is_better_update};
use light_client::{
    Bootstrap, FinalityUpdate, Header, LightClientDataCollector, LightClientError,
    OptimisticUpdate, Update,
};

use crate::events::{ChainEvent, EventBus};
use crate::gossip::light_client::{
    FinalityRank, ForwardedLightClientUpdates, finality_rank, optimistic_rank,
};
use crate::internal_error::InternalError;
use crate::{BeaconChain, ChainError};

/// `MAX_REQUEST_LIGHT_CLIENT_UPDATES`: the most updates one by-range request returns.
///
/// [spec]: altair/light-client/p2p-interface.md#configuration
pub const MAX_REQUEST_LIGHT_CLIENT_UPDATES: u64 = 128;

/// Store keys of the light-client key space.
fn update_key(period: u64) -> String {
    format!("update/{period:020}")
}
fn bootstrap_key(root: &Root) -> String {
    format!("bootstrap/{root}")
}
fn sync_committee_key(period: u64) -> String {
    format!("sync_committee/{period:020}")
}
/// The root of the stored bootstrap of the block at `slot`: the index the pruning walks
/// (bootstraps are keyed by root).
fn bootstrap_slot_key(slot: Slot) -> String {
    format!("bootstrap_slot/{slot:020}")
}
/// The first slot whose stored bootstraps are kept (SSZ `uint64`): the earlier ones are pruned.
const BOOTSTRAPS_KEPT_FROM_KEY: &str = "bootstraps_kept_from";

/// The first slot of the bootstraps kept once `finalized_epoch` is finalized: the
/// `MIN_EPOCHS_FOR_BLOCK_REQUESTS` epochs before it. Full nodes should serve the bootstraps of
/// the finalized epoch boundary blocks of the epochs from `current_epoch -
/// MIN_EPOCHS_FOR_BLOCK_REQUESTS` on; the finalized epoch is at most the current one, so this
/// window holds that one.
///
/// [spec]: altair/light-client/p2p-interface.md#getlightclientbootstrap
fn bootstrap_window_start<E: EthSpec>(spec: &ChainSpec, finalized_epoch: Epoch) -> Slot {
    finalized_epoch.saturating_sub(spec.min_epochs_for_block_requests) * E::slots_per_epoch()
}

/// Deletes the stored bootstraps of the blocks before `keep_from`, walking the slot index from
/// where the last pruning stopped, and the sync committees of the periods no kept bootstrap is
/// in; then records `keep_from`. Without a record (a store written before the index) there is
/// nothing indexed to walk: only the record is written.
fn prune_bootstraps<E: EthSpec>(
    store: &Store<E>,
    batch: &mut store::StoreBatch<'_, E>,
    keep_from: Slot,
) -> Result<(), LightClientServerError> {
    let kept_from = decode_record(
        store.get_light_client_data(BOOTSTRAPS_KEPT_FROM_KEY)?,
        BOOTSTRAPS_KEPT_FROM_KEY,
    )?
    .unwrap_or(keep_from);
    if keep_from < kept_from {
        return Ok(());
    }
    for slot in kept_from..keep_from {
        let key = bootstrap_slot_key(slot);
        if let Some(root) = store.get_light_client_data(&key)? {
            let root = Root::try_from(root.as_slice()).map_err(|_| {
                corrupt_record(&key, format!("{} bytes, not a 32-byte root", root.len()))
            })?;
            batch.put_light_client_data(&bootstrap_key(&root), None)?;
            batch.put_light_client_data(&key, None)?;
        }
    }
    let first_kept_period = compute_sync_committee_period_at_slot::<E>(keep_from);
    for period in compute_sync_committee_period_at_slot::<E>(kept_from)..first_kept_period {
        batch.put_light_client_data(&sync_committee_key(period), None)?;
    }
    batch.put_light_client_data(BOOTSTRAPS_KEPT_FROM_KEY, Some(&keep_from.as_ssz_bytes()))?;
    Ok(())
}

/// The store's [`store::StoreError::CorruptValue`] for the light-client record under `key` (in
/// the `light_client/` key space of `meta`).
fn corrupt_record(key: &str, reason: String) -> store::StoreError {
    store::StoreError::CorruptValue {
        table: "meta",
        key: format!("{}{key}", store::schema::LIGHT_CLIENT_PREFIX),
        reason,
    }
}

/// The SSZ value of the light-client record under `key`, as [`Store::get_light_client_data`]
/// read it; bytes that do not decode are a corrupt record.
fn decode_record<T: Decode>(
    bytes: Option<Vec<u8>>,
    key: &str,
) -> Result<Option<T>, store::StoreError> {
    bytes
        .map(|b| T::from_ssz_bytes(&b).map_err(|e| corrupt_record(key, format!("{e:?}"))))
        .transpose()
}

/// Bytes of the current sync committee branch in a stored bootstrap record.
const BRANCH_BYTES: usize = 32 * 6;

/// A bootstrap as stored: its branch, then its header; the sync committee is stored once per
/// period (the bulk of a bootstrap, shared by every bootstrap of the period).
fn bootstrap_record<E: EthSpec>(bootstrap: &Bootstrap<E>) -> Vec<u8> {
    let mut bytes = bootstrap.current_sync_committee_branch.as_ssz_bytes();
    bytes.extend(bootstrap.header.as_ssz_bytes());
    bytes
}

/// Writes `bootstrap` of block `root`: its record, and its period's sync committee.
fn put_bootstrap<E: EthSpec>(
    batch: &mut store::StoreBatch<'_, E>,
    root: &Root,
    bootstrap: &Bootstrap<E>,
) -> Result<(), store::StoreError> {
    let slot = bootstrap.header.beacon.slot;
    let period = compute_sync_committee_period_at_slot::<E>(slot);
    batch.put_light_client_data(
        &sync_committee_key(period),
        Some(&bootstrap.current_sync_committee.as_ssz_bytes()),
    )?;
    batch.put_light_client_data(&bootstrap_slot_key(slot), Some(root.as_slice()))?;
    batch.put_light_client_data(&bootstrap_key(root), Some(&bootstrap_record(bootstrap)))
}

/// The bootstrap of a stored record and its period's sync committee.
fn from_bootstrap_record<E: EthSpec>(
    record: &[u8],
    committee: &[u8],
) -> Result<Bootstrap<E>, ssz::DecodeError> {
    let (branch, header) =
        record
            .split_at_checked(BRANCH_BYTES)
            .ok_or(ssz::DecodeError::InvalidByteLength {
                len: record.len(),
                expected: BRANCH_BYTES,
            })?;
    Ok(Bootstrap {
        header: Decode::from_ssz_bytes(header)?,
        current_sync_committee: Decode::from_ssz_bytes(committee)?,
        current_sync_committee_branch: Decode::from_ssz_bytes(branch)?,
    })
}
const FINALITY_UPDATE_KEY: &str = "finality_update";
const OPTIMISTIC_UPDATE_KEY: &str = "optimistic_update";

/// Why the server could not take a block or a head.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LightClientServerError {
    /// The collector refused the block or head.
    #[error("light-client data: {0}")]
    Collect(#[from] LightClientError),
    /// The store failed to read or write the data, or a record read back does not decode:
    /// always a [`store::StoreError`] ([`InternalError::downcast_ref`] gives it back), shared
    /// so that the error stays `Clone` for [`LightClientServer::last_error`].
    #[error("light-client data store: {0}")]
    Store(#[source] InternalError),
}

impl From<store::StoreError> for LightClientServerError {
    fn from(e: store::StoreError) -> Self {
        Self::Store(InternalError::new(e))
    }
}

/// The server's state: the collector, or why there is none.
#[derive(Debug)]
enum Collector<E: EthSpec> {
    /// Collecting.
    Running(Box<LightClientDataCollector<E>>),
    /// Turned off by configuration.
    Disabled,
    /// The anchor gives no starting point (a fork before Electra, an advanced anchor state): only
    /// persisted data is served.
    Unavailable(LightClientError),
}

/// The light-client server of a [`BeaconChain`]: see the module documentation.
#[derive(Debug)]
pub struct LightClientServer<E: EthSpec> {
    collector: Mutex<Collector<E>>,
    /// The last error collecting data from a block or a head (the block is then left out).
    last_error: Mutex<Option<LightClientServerError>>,
    /// The newest finality and optimistic updates forwarded on gossip (published or accepted),
    /// which the gossip rules compare against.
    pub(crate) forwarded: Mutex<ForwardedLightClientUpdates>,
    /// Held while a bootstrap is derived from a stored state (one at a time).
    derivation: Mutex<()>,
}

impl<E: EthSpec> LightClientServer<E> {
    /// A server starting at the chain's anchor (a block and its post-state, or the checkpoint
    /// state advanced from it), or a disabled one. The best update of the anchor's period that
    /// `store` holds from an earlier run is where the anchor's branches start.
    pub(crate) fn new(
        enabled: bool,
        spec: &ChainSpec,
        store: &Store<E>,
        anchor_state: &BeaconState<E>,
        anchor_block: &SignedBeaconBlock<E>,
    ) -> Self {
        let mut last_error = Mutex::new(None);
        let collector = if !enabled {
            Collector::Disabled
        } else {
            match LightClientDataCollector::new(spec.clone(), anchor_state, anchor_block) {
                Ok(mut collector) => {
                    // The finalized blocks between the anchor state's finalized checkpoint and
                    // the anchor, which the first updates after a restart prove finality of.
                    let first = anchor_state.finalized_checkpoint().epoch * E::slots_per_epoch();
                    let ancestors: Vec<_> = (first..anchor_block.slot())
                        .filter_map(|slot| store.block_root_at_slot(slot).ok().flatten())
                        .filter_map(|root| store.get_block(&root).ok().flatten())
                        .collect();
                    if let Err(e) = collector.add_finalized_ancestors(&ancestors) {
                        *last_error.get_mut() = Some(e.into());
                    }
                    // The anchor's own bootstrap, kept for after a restart (later ones are
                    // written as finality reaches them); a new store's bootstrap pruning starts
                    // at the anchor, before which it stores none.
                    let root = anchor_block.canonical_root();
                    let written = store.begin_batch().and_then(|mut batch| {
                        if let Some(bootstrap) = collector.bootstrap(&root) {
                            put_bootstrap(&mut batch, &root, bootstrap)?;
                        }
                        if store
                            .get_light_client_data(BOOTSTRAPS_KEPT_FROM_KEY)?
                            .is_none()
                        {
                            batch.put_light_client_data(
                                BOOTSTRAPS_KEPT_FROM_KEY,
                                Some(&anchor_block.slot().as_ssz_bytes()),
                            )?;
                        }
                        batch.commit()
                    });
                    if let Err(e) = written {
                        *last_error.get_mut() = Some(e.into());
                    }
                    let period = compute_sync_committee_period_at_slot::<E>(anchor_block.slot());
                    let key = update_key(period);
                    // An unreadable record only loses the head start; the data is derived again.
                    if let Ok(Some(update)) = store
                        .get_light_client_data(&key)
                        .and_then(|bytes| decode_record::<Update<E>>(bytes, &key))
                    {
                        collector.set_anchor_best_update(update);
                    }
                    Collector::Running(Box::new(collector))
                }
                Err(e) => Collector::Unavailable(e),
            }
        };
        Self {
            collector: Mutex::new(collector),
            last_error,
            forwarded: Mutex::new(ForwardedLightClientUpdates::default()),
            derivation: Mutex::new(()),
        }
    }

    /// Whether the server collects data from imported blocks.
    pub fn is_running(&self) -> bool {
        matches!(*self.collector.lock(), Collector::Running(_))
    }

    /// Why the server does not collect (`None` while it does or when disabled), or the last
    /// block or head it could not take.
    pub fn last_error(&self) -> Option<LightClientServerError> {
        if let Collector::Unavailable(e) = &*self.collector.lock() {
            return Some(e.clone().into());
        }
        self.last_error.lock().clone()
    }

    /// An imported block and its post-state.
    pub(crate) fn on_block(&self, state: &BeaconState<E>, block: &SignedBeaconBlock<E>) {
        if let Collector::Running(collector) = &mut *self.collector.lock()
            && let Err(e) = collector.process_new_block(state, block)
        {
            *self.last_error.lock() = Some(e.into());
        }
    }

    /// Fork choice chose `head_root`: commits the new best and latest data and persists what
    /// changed, then publishes a [`ChainEvent::LightClientFinalityUpdate`] when the finalized
    /// header advanced (or gained a supermajority at the same slot) and a
    /// [`ChainEvent::LightClientOptimisticUpdate`] when the attested header advanced: the
    /// conditions under which the full-node spec broadcasts them. A failure is kept for
    /// [`Self::last_error`]: the head moves on regardless, and the next head writes the periods
    /// and latest updates again.
    ///
    /// [spec]: altair/light-client/full-node.md#deriving-light-client-data
    pub(crate) fn on_head(&self, store: &Store<E>, events: &EventBus, head_root: Root) {
        match self.commit_head(store, head_root) {
            Ok(new) => new.into_iter().for_each(|event| events.publish(event)),
            Err(e) => *self.last_error.lock() = Some(e),
        }
    }

    fn commit_head(
        &self,
        store: &Store<E>,
        head_root: Root,
    ) -> Result<Vec<ChainEvent>, LightClientServerError> {
        let mut guard = self.collector.lock();
        let Collector::Running(collector) = &mut *guard else {
            return Ok(Vec::new());
        };
        let old_finality: Option<FinalityRank> = collector.finality_update().map(finality_rank);
        let old_optimistic = collector.optimistic_update().map(|u| optimistic_rank(&u));
        let change = collector.process_new_head(head_root)?;
        let mut batch = store.begin_batch()?;
        for period in &change.periods {
            let key = update_key(*period);
            let best = collector.best_update(*period);
            // After a restart the collector has not seen the blocks before the last whole
            // state (`BeaconChain::open` restores fork choice without them): a better update
            // derived from them earlier stays, and so does one where the collector has none.
            let stored = decode_record::<Update<E>>(store.get_light_client_data(&key)?, &key)?;
            if let Some(stored) = &stored
                && best.is_none_or(|best| is_better_update(stored, best))
            {
                continue;
            }
            let bytes = best.map(Encode::as_ssz_bytes);
            batch.put_light_client_data(&key, bytes.as_deref())?;
        }
        for root in &change.bootstraps {
            if let Some(bootstrap) = collector.bootstrap(root) {
                put_bootstrap(&mut batch, root, bootstrap)?;
            }
        }
        let finality = collector.finality_update().map(Encode::as_ssz_bytes);
        batch.put_light_client_data(FINALITY_UPDATE_KEY, finality.as_deref())?;
        let optimistic_update = collector.optimistic_update();
        let optimistic = optimistic_update.as_ref().map(Encode::as_ssz_bytes);
        batch.put_light_client_data(OPTIMISTIC_UPDATE_KEY, optimistic.as_deref())?;
        if change.finalized {
            let (finalized_epoch, finalized_block) = collector.latest_finalized();
            // The finalized block's own bootstrap stays whatever the window (its slot may lie
            // before its epoch, after skipped slots).
            let keep_from = bootstrap_window_start::<E>(collector.spec(), finalized_epoch)
                .min(finalized_block.slot);
            prune_bootstraps(store, &mut batch, keep_from)?;
        }
        batch.commit()?;
        // Persisted: older bootstraps are served from the store from now on.
        if change.finalized {
            collector.prune_bootstraps_before(collector.latest_finalized().1.slot);
        }
        let mut new = Vec::new();
        if let Some(update) = collector.finality_update()
            && finality_rank(update).is_newer_than(old_finality.as_ref())
        {
            new.push(ChainEvent::LightClientFinalityUpdate {
                attested_slot: update.attested_header.beacon.slot,
                finalized_slot: update.finalized_header.beacon.slot,
                signature_slot: update.signature_slot,
            });
        }
        if let Some(update) = optimistic_update
            && old_optimistic.is_none_or(|old| optimistic_rank(&update) > old)
        {
            new.push(ChainEvent::LightClientOptimisticUpdate {
                attested_slot: update.attested_header.beacon.slot,
                signature_slot: update.signature_slot,
            });
        }
        Ok(new)
    }

    /// The collector's value, if it runs and has one.
    fn read_collector<T>(
        &self,
        f: impl FnOnce(&LightClientDataCollector<E>) -> Option<T>,
    ) -> Option<T> {
        match &*self.collector.lock() {
            Collector::Running(collector) => f(collector),
            _ => None,
        }
    }
}

/// The light-client library's answer (a value in the format of its fork, a derived
/// bootstrap) as the chain's.
fn forked<T>(result: Result<T, LightClientError>) -> Result<T, ChainError> {
    result.map_err(ChainError::LightClient)
}

impl<E: EthSpec> BeaconChain<E> {
    /// The chain's light-client server.
    pub fn light_client_server(&self) -> &LightClientServer<E> {
        &self.light_client_server
    }

    /// The `LightClientBootstrap` of `block_root`, for a finalized epoch boundary block (or the
    /// anchor); `None` when none is held.
    ///
    /// [spec]: altair/light-client/p2p-interface.md#getlightclientbootstrap
    pub fn light_client_bootstrap(
        &self,
        block_root: &Root,
    ) -> Result<Option<LightClientBootstrap<E>>, ChainError> {
        let bootstrap: Option<Bootstrap<E>> = match self
            .light_client_server
            .read_collector(|c| c.bootstrap(block_root).cloned())
        {
            Some(b) => Some(b),
            None => match self.stored_bootstrap(block_root)? {
                Some(b) => Some(b),
                None => self.derived_bootstrap(block_root)?,
            },
        };
        bootstrap
            .map(|b| {
                let fork = light_client_fork_at_slot::<E>(self.spec(), b.header.beacon.slot);
                forked(into_forked_bootstrap(fork, b))
            })
            .transpose()
    }

    /// The bootstrap of a finalized epoch boundary block in the serving window that neither the
    /// collector nor the store holds, derived from the block's post-state in the store, and
    /// stored. After a restart the collector has not seen the blocks before the last whole state
    /// fork choice was restored from, so those of them finalized since got no bootstrap when
    /// finality reached them. Loading a state can take seconds on mainnet: one derivation runs
    /// at a time, and a request that comes meanwhile is answered `None`.
    ///
    /// Served: a canonical finalized block at an epoch's first slot, or the finalized checkpoint's
    /// block, from `MIN_EPOCHS_FOR_BLOCK_REQUESTS` epochs before the finalized one (the spec's
    /// window; the pruned ones stay unserved).
    fn derived_bootstrap(&self, block_root: &Root) -> Result<Option<Bootstrap<E>>, ChainError> {
        if !self.light_client_server.is_running() {
            return Ok(None);
        }
        let Some(_only_one) = self.light_client_server.derivation.try_lock() else {
            return Ok(None);
        };
        let store = self.store();
        let Some(block) = store.get_block(block_root)? else {
            return Ok(None);
        };
        let slot = block.slot();
        let finalized = self.head().finalized_checkpoint.clone();
        let spec = self.spec();
        let boundary = slot % E::slots_per_epoch() == 0 || *block_root == finalized.root;
        if !boundary
            || slot < bootstrap_window_start::<E>(spec, finalized.epoch)
            || store.block_root_at_slot(slot)? != Some(*block_root)
        {
            return Ok(None);
        }
        let mut replayer = store::StateTransitionReplayer::new(spec);
        let Some(state) = store.get_state(&block.state_root(), &mut replayer)? else {
            return Ok(None);
        };
        let bootstrap = match create_light_client_bootstrap(spec, &state, &block) {
            Ok(bootstrap) => bootstrap,
            // A block before Electra: no bootstrap in the format served.
            Err(LightClientError::UnsupportedFork(_)) => return Ok(None),
            Err(e) => return forked(Err(e)),
        };
        let mut batch = store.begin_batch()?;
        put_bootstrap(&mut batch, block_root, &bootstrap)?;
        batch.commit()?;
        Ok(Some(bootstrap))
    }

    /// A bootstrap from the store: its record and its period's sync committee.
    fn stored_bootstrap(&self, block_root: &Root) -> Result<Option<Bootstrap<E>>, ChainError> {
        let key = bootstrap_key(block_root);
        let Some(record) = self.store().get_light_client_data(&key)? else {
            return Ok(None);
        };
        // Bytes that do not decode are a corrupt record, as for the server's own reads.
        let bad = |e: ssz::DecodeError| ChainError::Store(corrupt_record(&key, format!("{e:?}")));
        // The header's slot (its first field after the branch) names the committee's period.
        let header: Header<E> =
            Decode::from_ssz_bytes(record.get(BRANCH_BYTES..).unwrap_or(&[])).map_err(bad)?;
        let period = compute_sync_committee_period_at_slot::<E>(header.beacon.slot);
        let committee_key = sync_committee_key(period);
        let Some(committee) = self.store().get_light_client_data(&committee_key)? else {
            return Err(ChainError::MissingSyncCommittee {
                block_root: *block_root,
                period,
            });
        };
        from_bootstrap_record(&record, &committee)
            .map(Some)
            .map_err(bad)
    }

    /// The best `LightClientUpdate` of each sync committee period in `[start_period,
    /// start_period + count)`, at most `MAX_REQUEST_LIGHT_CLIENT_UPDATES`: from the earliest
    /// period in the range that has one, for consecutive periods up to the first without one.
    ///
    /// [spec]: altair/light-client/p2p-interface.md#lightclientupdatesbyrange
    pub fn light_client_updates_by_range(
        &self,
        start_period: u64,
        count: u64,
    ) -> Result<Vec<LightClientUpdate<E>>, ChainError> {
        let mut updates = Vec::new();
        let end = start_period.saturating_add(count.min(MAX_REQUEST_LIGHT_CLIENT_UPDATES));
        for period in start_period..end {
            // The collector's, unless the store holds a better one (derived before a restart
            // from blocks the collector has not seen).
            let key = update_key(period);
            let stored: Option<Update<E>> =
                decode_record(self.store().get_light_client_data(&key)?, &key)?;
            let update = match (
                self.light_client_server
                    .read_collector(|c| c.best_update(period).cloned()),
                stored,
            ) {
                (Some(memory), Some(stored)) if is_better_update(&stored, &memory) => Some(stored),
                (Some(memory), _) => Some(memory),
                (None, stored) => stored,
            };
            match update {
                Some(update) => {
                    let fork = light_client_fork_at_slot::<E>(
                        self.spec(),
                        update.attested_header.beacon.slot,
                    );
                    updates.push(forked(into_forked_update(fork, update))?);
                }
                // Results are consecutive: a gap after the first one ends them.
                None if !updates.is_empty() => break,
                None => {}
            }
        }
        Ok(updates)
    }

    /// The latest `LightClientFinalityUpdate`.
    ///
    /// [spec]: altair/light-client/p2p-interface.md#getlightclientfinalityupdate
    pub fn light_client_finality_update(
        &self,
    ) -> Result<Option<LightClientFinalityUpdate<E>>, ChainError> {
        let update: Option<FinalityUpdate<E>> = match self
            .light_client_server
            .read_collector(|c| c.finality_update().cloned())
        {
            Some(u) => Some(u),
            None => decode_record(
                self.store().get_light_client_data(FINALITY_UPDATE_KEY)?,
                FINALITY_UPDATE_KEY,
            )?,
        };
        update
            .map(|u| {
                let fork =
                    light_client_fork_at_slot::<E>(self.spec(), u.attested_header.beacon.slot);
                forked(into_forked_finality_update(fork, u))
            })
            .transpose()
    }

    /// The latest `LightClientOptimisticUpdate`.
    ///
    /// [spec]: altair/light-client/p2p-interface.md#getlightclientoptimisticupdate
    pub fn light_client_optimistic_update(
        &self,
    ) -> Result<Option<LightClientOptimisticUpdate<E>>, ChainError> {
        let update: Option<OptimisticUpdate<E>> = match self
            .light_client_server
            .read_collector(|c| c.optimistic_update())
        {
            Some(u) => Some(u),
            None => decode_record(
                self.store().get_light_client_data(OPTIMISTIC_UPDATE_KEY)?,
                OPTIMISTIC_UPDATE_KEY,
            )?,
        };
        update
            .map(|u| {
                let fork =
                    light_client_fork_at_slot::<E>(self.spec(), u.attested_header.beacon.slot);
                forked(into_forked_optimistic_update(fork, u))
            })
            .transpose()
    }
}
