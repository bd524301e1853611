//! The validator client: performs a validator's duties through the standard Beacon API only.
//!
//! [`run`] connects to one or more beacon nodes (in fallback order), reads the chain's genesis
//! and configuration from them, loads the keys (EIP-2335 keystores or the interop keys),
//! opens the slashing protection database, and then, slot by slot until shut down, proposes,
//! attests, aggregates, serves in the sync committee and (from Gloas) votes in the payload
//! timeliness committee as the honest validator spec says.
//!
//! [spec]: phase0/validator.md, altair/validator.md, electra/validator.md, gloas/validator.md

pub mod attestation_service;
pub mod beacon_nodes;
pub mod block_service;
pub mod chain_config;
pub mod config;
pub mod doppelganger;
pub mod duties;
pub mod keymanager;
pub mod keystore;
pub mod metrics;
mod preparation;
pub mod ptc_service;
pub mod signing;
pub mod sync_committee_service;
pub mod timing;
pub mod validator_store;

use std::collections::BTreeSet;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use beacon_api::events::HeadEvent;
use beacon_api::{BeaconEvent, BeaconNodeHttpClient, EventTopic, GenesisData, Timeouts};
use bls::interop_secret_key;
use parking_lot::{Mutex, RwLock};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tracing::{debug, error, info, warn};
use types::{Bytes32, ChainSpec, EthSpec, ExecutionAddress, Slot};

pub use config::{KeySource, ValidatorClientConfig, VcArgs};
pub use metrics::Metrics;
pub use timing::DutyKind;

use beacon_nodes::BeaconNodes;
use doppelganger::{Doppelganger, DoppelgangerStatus};
use duties::DutiesState;
use signing::{SigningContext, ValidatorKey};
use timing::{SlotClock, compute_epoch_at_slot, compute_start_slot_at_epoch};
use validator_store::ValidatorStore;

/// Why the validator client stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum VcError {
    /// The configuration is unusable.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A keystore could not be read or decrypted.
    #[error(transparent)]
    Keystore(#[from] keystore::KeystoreError),
    /// The slashing protection database could not be opened or written.
    #[error("slashing protection database {path}: {source}")]
    SlashingProtection {
        /// The database file.
        path: std::path::PathBuf,
        /// The error.
        #[source]
        source: slashing_protection::DbError,
    },
    /// The beacon node's chain configuration could not be read.
    #[error("the beacon node's config/spec is unreadable: {0}")]
    NodeSpec(#[from] types::ConfigError),
    /// The beacon node runs another chain than the client's.
    #[error(transparent)]
    SpecMismatch(#[from] chain_config::SpecMismatch),
    /// The genesis fork version the node reports is not its configuration's.
    #[error("the beacon node's genesis fork version {node} is not the configuration's {config}")]
    GenesisForkVersion {
        /// From `beacon/genesis`.
        node: types::Version,
        /// From the configuration.
        config: types::Version,
    },
    /// Every beacon node failed a request the client cannot do without.
    #[error(transparent)]
    BeaconNodes(#[from] beacon_nodes::AllFailed),
    /// Doppelganger protection saw the client's validators live elsewhere.
    #[error(
        "doppelganger protection: validators {indices:?} are live elsewhere in epoch {epoch}; nothing was signed"
    )]
    Doppelganger {
        /// The epoch they were seen in.
        epoch: types::Epoch,
        /// The live validators.
        indices: Vec<types::ValidatorIndex>,
    },
}

/// What every duty task shares.
pub(crate) struct Context<E: EthSpec> {
    pub(crate) nodes: BeaconNodes,
    pub(crate) store: Arc<ValidatorStore>,
    pub(crate) clock: SlotClock,
    pub(crate) spec: Arc<ChainSpec>,
    pub(crate) duties: RwLock<DutiesState>,
    pub(crate) head: watch::Sender<Option<HeadEvent>>,
    pub(crate) duties_stale: Notify,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) graffiti: Option<Bytes32>,
    pub(crate) fee_recipient: Option<ExecutionAddress>,
    pub(crate) builder_proposals: bool,
    pub(crate) gas_limit: u64,
    pub(crate) registrations: Mutex<Vec<beacon_api::SignedValidatorRegistrationV1>>,
    /// The devnet fault of [`ValidatorClientConfig::withhold_envelope_slots`].
    pub(crate) withhold_envelope_slots: std::collections::BTreeSet<Slot>,
    _preset: PhantomData<E>,
}

/// Runs the validator client until `shutdown` completes (or a fatal error): reads genesis and
/// the chain configuration from the beacon nodes (checked against `config.spec` when given),
/// then performs the duties slot by slot. On shutdown every duty task is stopped and the
/// slashing protection database is closed before this returns.
pub async fn run<E: EthSpec>(
    config: ValidatorClientConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), VcError> {
    let mut shutdown = std::pin::pin!(shutdown);
    let keymanager = config.keymanager.clone();
    let datadir = config.datadir.clone();
    let (ctx, readonly) = tokio::select! {
        started = start::<E>(config) => started?,
        () = &mut shutdown => {
            info!("validator client shut down before it started");
            return Ok(());
        }
    };
    let mut tasks = JoinSet::new();
    if let Some(km) = &keymanager {
        let (_, server) = keymanager::serve(Arc::clone(&ctx.store), km, &datadir, readonly)
            .await
            .map_err(|e| VcError::Config(format!("keymanager API: {e}")))?;
        tasks.spawn(server);
    }
    let result = tokio::select! {
        result = duty_loop(Arc::clone(&ctx), &mut tasks) => result,
        () = shutdown => Ok(()),
    };
    info!("validator client shutting down");
    tasks.shutdown().await;
    // A signer on a blocking thread outlives its aborted task by one signature and one fsync;
    // the database closes when the last of them lets the context go.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while Arc::strong_count(&ctx) > 1 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if Arc::strong_count(&ctx) > 1 {
        warn!("a signing task is still running at shutdown");
    }
    result
}

/// Loads the keys of `source`.
pub fn load_keys(source: &KeySource) -> Result<Vec<ValidatorKey>, VcError> {
    match source {
        KeySource::Interop { indices } => indices
            .clone()
            .map(|i| {
                usize::try_from(i)
                    .map(|i| ValidatorKey::new(interop_secret_key(i)))
                    .map_err(|_| VcError::Config(format!("interop index {i} is too large")))
            })
            .collect(),
        KeySource::Keystores { dir, password_file } => {
            Ok(keystore::load_keystore_dir(dir, password_file)?
                .into_iter()
                .map(ValidatorKey::new)
                .collect())
        }
    }
}

/// Everything before the first slot: keys, the chain, the slashing protection database.
/// Returns the context and the keys that came from the configuration (read-only to the
/// keymanager API).
async fn start<E: EthSpec>(
    config: ValidatorClientConfig,
) -> Result<(Arc<Context<E>>, BTreeSet<types::BLSPubkey>), VcError> {
    let mut keys = load_keys(&config.keys)?;
    let readonly: BTreeSet<types::BLSPubkey> = keys.iter().map(ValidatorKey::pubkey).collect();
    let imported =
        keymanager::load_imported_keys(&config.datadir.join(keymanager::KEYMANAGER_DIR))?;
    keys.extend(
        imported
            .into_iter()
            .filter(|k| !readonly.contains(&k.pubkey())),
    );
    info!(validators = keys.len(), "keys loaded");
    // Timeouts are set per request kind from the slot duration once the chain is known; the
    // first requests use the defaults.
    let bootstrap = build_nodes(&config.beacon_nodes, Timeouts::default())?;
    let (genesis, node_config) = wait_for_chain(&bootstrap).await?;
    let spec = match config.spec.clone() {
        Some(ours) => ours,
        None => chain_config::chain_spec_from_config_spec::<E>(&node_config)?,
    };
    chain_config::check_same_chain::<E>(&spec, &node_config)?;
    if genesis.genesis_fork_version != spec.genesis_fork_version {
        return Err(VcError::GenesisForkVersion {
            node: genesis.genesis_fork_version,
            config: spec.genesis_fork_version,
        });
    }
    let spec = Arc::new(spec);
    let nodes = build_nodes(
        &config.beacon_nodes,
        request_timeouts(Duration::from_millis(spec.slot_duration_ms)),
    )?;
    std::fs::create_dir_all(&config.datadir)
        .map_err(|e| VcError::Config(format!("cannot create {}: {e}", config.datadir.display())))?;
    let db_path = config.slashing_protection_path();
    let db_error = |source| VcError::SlashingProtection {
        path: db_path.clone(),
        source,
    };
    let slashing = slashing_protection::SlashingDatabase::open_or_create(
        &db_path,
        genesis.genesis_validators_root,
    )
    .map_err(db_error)?;
    let ctx_signing = SigningContext::new(Arc::clone(&spec), genesis.genesis_validators_root);
    let store = ValidatorStore::new(keys, slashing, ctx_signing, !config.doppelganger_protection)
        .map_err(db_error)?;
    let (head, _) = watch::channel(None);
    let ctx = Arc::new(Context::<E> {
        nodes,
        store: Arc::new(store),
        clock: SlotClock::new(genesis.genesis_time, spec.slot_duration_ms),
        spec,
        duties: RwLock::new(DutiesState::default()),
        head,
        duties_stale: Notify::new(),
        metrics: config
            .duty_metrics
            .clone()
            .unwrap_or_else(|| Arc::new(Metrics::new(config.metrics.as_ref()))),
        graffiti: config.graffiti,
        fee_recipient: config.fee_recipient,
        builder_proposals: config.builder_proposals,
        gas_limit: config.gas_limit,
        registrations: Mutex::new(Vec::new()),
        withhold_envelope_slots: config.withhold_envelope_slots.clone(),
        _preset: PhantomData,
    });
    info!(
        genesis_time = genesis.genesis_time,
        genesis_validators_root = %genesis.genesis_validators_root,
        beacon_nodes = ctx.nodes.len(),
        doppelganger_protection = config.doppelganger_protection,
        "validator client started"
    );
    Ok((ctx, readonly))
}

/// The least time a block's production or publication is given. A node answers
/// publishBlockV2 after its execution client answered `engine_newPayload`, which the engine
/// API allows 8 s; a client that gives up sooner drops the connection, and a node may drop the
/// import with it (seen on a 2 s-slot devnet: the block never imported). A block published late
/// in a short slot is still better than none.
pub const MIN_PROPOSAL_TIMEOUT: Duration = Duration::from_secs(12);

/// The request timeouts for a slot duration: a fraction of the slot per duty kind, with
/// block production and publication given at least [`MIN_PROPOSAL_TIMEOUT`].
pub fn request_timeouts(slot: Duration) -> Timeouts {
    let mut timeouts = Timeouts::from_slot_duration(slot);
    timeouts.proposal = timeouts.proposal.max(MIN_PROPOSAL_TIMEOUT);
    timeouts
}

fn build_nodes(urls: &[String], timeouts: Timeouts) -> Result<BeaconNodes, VcError> {
    if urls.is_empty() {
        return Err(VcError::Config("no beacon node given".into()));
    }
    let clients = urls
        .iter()
        .map(|url| {
            BeaconNodeHttpClient::from_url_str(url, timeouts)
                .map_err(|e| VcError::Config(format!("beacon node {url}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(BeaconNodes::new(clients))
}

/// Waits until a beacon node serves genesis and its configuration (a node may start after the
/// client, or before its genesis state exists).
async fn wait_for_chain(
    nodes: &BeaconNodes,
) -> Result<(GenesisData, beacon_api::ConfigSpec), VcError> {
    let mut delay = Duration::from_millis(250);
    loop {
        let genesis = nodes
            .first_success("genesis", |c| async move { c.get_beacon_genesis().await })
            .await;
        match genesis {
            Ok(genesis) => {
                match nodes
                    .first_success("config/spec", |c| async move { c.get_config_spec().await })
                    .await
                {
                    Ok(config) => return Ok((genesis.data, config.data)),
                    Err(e) => info!(error = %e, "waiting for a beacon node's config/spec"),
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
            Err(e) => {
                info!(error = %e, "waiting for a beacon node with a genesis");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// Waits until `kind` is due in `slot`, or until the head is a block of `slot` (or later),
/// whichever comes first.
pub(crate) async fn wait_for_head_or_due<E: EthSpec>(ctx: &Context<E>, slot: Slot, kind: DutyKind) {
    let due = ctx.clock.due_time::<E>(slot, kind, &ctx.spec);
    let mut head = ctx.head.subscribe();
    let head_reached = async {
        loop {
            if head
                .borrow_and_update()
                .as_ref()
                .is_some_and(|h| h.slot >= slot)
            {
                return;
            }
            if head.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = tokio::time::sleep(SlotClock::until(SlotClock::now(), due)) => {}
        () = head_reached => {}
    }
}

/// Follows the head events of the preferred node: they wake the attesters early and tell when
/// attester duties must be refetched. Reconnects (to the then-preferred node) when the stream
/// ends or stays silent for two epochs.
async fn follow_head<E: EthSpec>(ctx: Arc<Context<E>>) {
    let silence = ctx.clock.slot_duration() * (2 * E::slots_per_epoch()) as u32;
    loop {
        let Some(client) = ctx.nodes.preferred() else {
            return;
        };
        match client.get_events(&[EventTopic::Head]).await {
            Ok(mut stream) => loop {
                match tokio::time::timeout(silence, stream.next_event::<E>()).await {
                    Ok(Some(Ok(BeaconEvent::Head(head)))) => {
                        let stale = ctx.duties.write().mark_stale_from_head::<E>(&head);
                        if !stale.is_empty() {
                            ctx.duties_stale.notify_one();
                        }
                        ctx.head.send_replace(Some(head));
                    }
                    Ok(Some(Ok(_))) => {}
                    Ok(Some(Err(e))) => {
                        debug!(error = %e, "head event stream error");
                        if matches!(e, beacon_api::ClientError::Transport { .. }) {
                            break;
                        }
                    }
                    Ok(None) | Err(_) => break,
                }
            },
            Err(e) => {
                debug!(node = %client.base_url(), error = %e, "cannot open the head event stream")
            }
        }
        tokio::time::sleep(ctx.clock.slot_duration() / 4).await;
    }
}

/// Refetches attester duties whenever head events mark them stale.
async fn refetch_stale_duties<E: EthSpec>(ctx: Arc<Context<E>>) {
    loop {
        ctx.duties_stale.notified().await;
        duties::refetch_stale(&ctx).await;
    }
}

/// The per-epoch doppelganger check; returns an error when the keys are live elsewhere.
async fn doppelganger_check<E: EthSpec>(
    ctx: &Context<E>,
    state: &mut Doppelganger,
    current_epoch: types::Epoch,
) -> Result<(), VcError> {
    let epochs = match state.status(current_epoch) {
        DoppelgangerStatus::Clear => return Ok(()),
        DoppelgangerStatus::Check(epochs) => epochs,
    };
    let indices = ctx.store.indices();
    if indices.is_empty() {
        return Ok(());
    }
    let indices = &indices;
    for epoch in epochs {
        let answers = ctx
            .nodes
            .first_success("liveness", |c| async move {
                c.post_validator_liveness(epoch, indices).await
            })
            .await;
        match answers {
            Ok(answers) => {
                let live = state.record(epoch, &answers.data);
                if !live.is_empty() {
                    return Err(VcError::Doppelganger {
                        epoch,
                        indices: live,
                    });
                }
            }
            // Not an error yet: the epoch is asked for again at the next epoch's start.
            Err(e) => warn!(epoch, error = %e, "liveness check failed"),
        }
    }
    if state.status(current_epoch) == DoppelgangerStatus::Clear {
        info!("doppelganger protection: no other client seen, signing starts");
        ctx.store.enable_signing();
        ctx.metrics.set_doppelganger_clear();
    }
    Ok(())
}

/// Counts the duties of slots the loop skipped as missed.
fn count_skipped_duties<E: EthSpec>(ctx: &Context<E>, slots: std::ops::Range<Slot>) {
    if !ctx.store.signing_enabled() {
        return;
    }
    let duties = ctx.duties.read();
    for slot in slots {
        let proposals = duties.proposers_at::<E>(slot).len() as u64;
        let attestations = duties.attesters_at::<E>(slot).len() as u64;
        let sync = duties.sync_at::<E>(slot).len() as u64;
        let ptc = duties.ptc_at::<E>(slot).len() as u64;
        ctx.metrics.missed_duties(DutyKind::Proposal, proposals);
        ctx.metrics
            .missed_duties(DutyKind::Attestation, attestations);
        if ctx.spec.fork_name_at_slot::<E>(slot).altair_enabled() {
            ctx.metrics
                .missed_duties(DutyKind::SyncCommitteeMessage, sync);
        }
        if ptc_service::has_ptc(&ctx.spec, compute_epoch_at_slot::<E>(slot)) {
            ctx.metrics.missed_duties(DutyKind::PtcVote, ptc);
        }
    }
}

/// The slot loop: at each slot's start the proposal, attestation, aggregation, sync committee
/// and PTC tasks of the slot start, and the duty lookups run.
async fn duty_loop<E: EthSpec>(
    ctx: Arc<Context<E>>,
    tasks: &mut JoinSet<()>,
) -> Result<(), VcError> {
    tasks.spawn(follow_head(Arc::clone(&ctx)));
    tasks.spawn(refetch_stale_duties(Arc::clone(&ctx)));

    // Before genesis, wait for it (looking duties up for epoch 0 shortly before).
    let now = SlotClock::now();
    // The duties are looked up before the first slot's tasks start, so that a client started
    // (or restarted) in the middle of a slot still performs that slot's duties.
    let mut slot = match ctx.clock.slot_at(now) {
        Some(slot) => {
            duties::poll(&ctx, slot).await;
            slot
        }
        None => {
            let genesis = ctx.clock.start_of(0);
            info!(
                seconds = SlotClock::until(now, genesis).as_secs(),
                "waiting for genesis"
            );
            let lead = ctx.clock.slot_duration();
            tokio::time::sleep(SlotClock::until(now, genesis.saturating_sub(lead))).await;
            duties::poll(&ctx, 0).await;
            0
        }
    };
    preparation::prepare_proposers(&ctx).await;
    let mut doppelganger = Doppelganger::new(compute_epoch_at_slot::<E>(slot));
    let mut last_epoch_prepared = Some(compute_epoch_at_slot::<E>(slot));
    loop {
        tokio::time::sleep(SlotClock::until(SlotClock::now(), ctx.clock.start_of(slot))).await;
        let epoch = compute_epoch_at_slot::<E>(slot);
        if ctx.store.signing_enabled() {
            tasks.spawn(block_service::propose(Arc::clone(&ctx), slot));
            tasks.spawn(attestation_service::attest_and_aggregate(
                Arc::clone(&ctx),
                slot,
            ));
            tasks.spawn(sync_committee_service::sync_committee_duties(
                Arc::clone(&ctx),
                slot,
            ));
            tasks.spawn(ptc_service::ptc_duties(Arc::clone(&ctx), slot));
        }
        // The lookups (and, once an epoch, the proposer preparation) run at the aggregation
        // point of the slot, away from its block: at an epoch's first slot they ask for the
        // next epoch, which can keep a node busy just when it imports the slot's block. The
        // duties they fetch are for later slots (the current ones were fetched an epoch ahead).
        let prepare = last_epoch_prepared != Some(epoch);
        last_epoch_prepared = Some(epoch);
        let housekeeping = Arc::clone(&ctx);
        tasks.spawn(async move {
            let at =
                housekeeping
                    .clock
                    .due_time::<E>(slot, DutyKind::Aggregate, &housekeeping.spec);
            tokio::time::sleep(SlotClock::until(SlotClock::now(), at)).await;
            duties::poll(&housekeeping, slot).await;
            if prepare {
                preparation::prepare_proposers(&housekeeping).await;
            }
        });
        if !ctx.store.signing_enabled() && slot == compute_start_slot_at_epoch::<E>(epoch) {
            doppelganger_check(&ctx, &mut doppelganger, epoch).await?;
        }
        if slot == compute_start_slot_at_epoch::<E>(epoch) {
            // In a task: a node that hangs must not hold up the next slot.
            let health = Arc::clone(&ctx);
            tasks.spawn(async move {
                health.nodes.check_health().await;
            });
        }
        // Reap finished tasks; a panicked one is logged, the client goes on.
        while let Some(done) = tasks.try_join_next() {
            if let Err(e) = done
                && e.is_panic()
            {
                error!(error = %e, "a duty task panicked");
            }
        }
        // Never run a slot twice; skip slots the loop fell behind on.
        let current = ctx.clock.slot_at(SlotClock::now()).unwrap_or(slot);
        if current > slot + 1 {
            warn!(
                from = slot + 1,
                to = current,
                "the slot loop fell behind; skipping slots"
            );
            count_skipped_duties(&ctx, slot + 1..current);
        }
        slot = current.max(slot + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposals_get_at_least_the_minimum_timeout() {
        let short = request_timeouts(Duration::from_secs(2));
        assert_eq!(short.proposal, MIN_PROPOSAL_TIMEOUT);
        assert_eq!(short.attestation, Duration::from_secs(2) / 3);
        let long = request_timeouts(Duration::from_secs(24));
        assert_eq!(long.proposal, Duration::from_secs(24));
    }
}
