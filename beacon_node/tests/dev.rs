//! `arbor dev` as a user runs it: a one-process Fulu devnet with blobs (mock execution client,
//! a beacon node, a validator client over the Beacon API on 127.0.0.1) finalizes, and a light
//! client follows it: bootstrapped from the node's finalized block, it runs the spec's sync
//! functions over the updates the Beacon API serves until its finalized header is the node's
//! finalized block header, past the block it was bootstrapped from; the bootstrap of that newly
//! finalized checkpoint block starts a light client too.
#![cfg(feature = "mock-el")]
#![allow(
    clippy::unwrap_used,
    reason = "a test: a failed request or decode is the test's failure"
)]

#[path = "common/devnet.rs"]
mod devnet;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use beacon_api::{BeaconNodeHttpClient, BlockId, Timeouts};
use light_client::fork::{
    upgrade_lc_bootstrap_to_latest, upgrade_lc_finality_update_to_latest,
    upgrade_lc_optimistic_update_to_latest, upgrade_lc_update_to_latest,
};
use light_client::sync_protocol::{
    compute_sync_committee_period_at_slot, is_next_sync_committee_known,
};
use light_client::{
    LightClientStore, initialize_light_client_store, process_light_client_finality_update,
    process_light_client_optimistic_update, process_light_client_update,
};
use types::phase0::BeaconBlockHeader;
use types::{ChainSpec, MinimalEthSpec, Root, Slot};

/// `arbor dev` runs the minimal preset.
type E = MinimalEthSpec;

/// A light client of the devnet's node, driven by the lines `arbor dev` prints: the start line
/// names the network directory (the chain's `config.yaml`), and each slot's status line is a
/// sync step.
struct LightClientFollower {
    runtime: tokio::runtime::Runtime,
    network_dir: Option<PathBuf>,
    client: Option<BeaconNodeHttpClient>,
    spec: Option<ChainSpec>,
    genesis_time: u64,
    genesis_validators_root: Root,
    store: Option<LightClientStore<E>>,
    /// The bootstrap's block header.
    bootstrap: Option<BeaconBlockHeader>,
    /// Sync committee periods of the updates processed by range.
    periods: BTreeSet<u64>,
    range_updates: u64,
    stale_range_updates: u64,
    finality_updates: u64,
    optimistic_updates: u64,
    /// The last node finalized header, past the bootstrap, that the store's finalized header
    /// was equal to.
    followed: Option<BeaconBlockHeader>,
    /// Updates the spec's functions refused.
    errors: Vec<String>,
}

impl LightClientFollower {
    fn new() -> Self {
        Self {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            network_dir: None,
            client: None,
            spec: None,
            genesis_time: 0,
            genesis_validators_root: Root::ZERO,
            store: None,
            bootstrap: None,
            periods: BTreeSet::new(),
            range_updates: 0,
            stale_range_updates: 0,
            finality_updates: 0,
            optimistic_updates: 0,
            followed: None,
            errors: Vec::new(),
        }
    }

    /// One line of `arbor dev`'s output.
    fn on_line(&mut self, port: Option<u16>, line: &str) {
        if self.network_dir.is_none()
            && let Some(dir) = line.split("; network directory ").nth(1)
        {
            self.network_dir = Some(PathBuf::from(dir.trim()));
        }
        if !line.starts_with("arbor dev: slot ") {
            return;
        }
        let (Some(port), Some(dir)) = (port, self.network_dir.clone()) else {
            return;
        };
        if self.client.is_none() {
            // The chain's parameters as any node joining it reads them.
            let yaml = std::fs::read_to_string(dir.join("config.yaml")).unwrap();
            let spec = ChainSpec::from_config_yaml(&yaml).unwrap();
            let client = BeaconNodeHttpClient::from_url_str(
                &format!("http://127.0.0.1:{port}"),
                Timeouts::from_slot_duration(Duration::from_secs(spec.seconds_per_slot)),
            )
            .unwrap();
            let genesis = self
                .runtime
                .block_on(client.get_beacon_genesis())
                .unwrap()
                .data;
            self.genesis_time = genesis.genesis_time;
            self.genesis_validators_root = genesis.genesis_validators_root;
            self.spec = Some(spec);
            self.client = Some(client);
        }
        if self.store.is_none() {
            self.bootstrap();
        } else {
            self.sync_step();
        }
    }

    /// The light client's clock: the slot of the wall clock.
    fn current_slot(&self) -> Slot {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let seconds_per_slot = self.spec.as_ref().unwrap().seconds_per_slot;
        now.saturating_sub(self.genesis_time) / seconds_per_slot
    }

    /// The node's finalized block: its root and header.
    fn node_finalized(&self) -> (Root, BeaconBlockHeader) {
        let client = self.client.as_ref().unwrap();
        let data = self
            .runtime
            .block_on(client.get_beacon_headers_block_id(BlockId::Finalized))
            .unwrap()
            .data;
        (data.root, data.header.message)
    }

    /// `initialize_light_client_store` from the bootstrap of the node's finalized block, the
    /// root trusted as a light client's user would take it from a node they trust.
    fn bootstrap(&mut self) {
        let (root, header) = self.node_finalized();
        let client = self.client.as_ref().unwrap();
        let Some(bootstrap) = self
            .runtime
            .block_on(client.get_beacon_light_client_bootstrap::<E>(root))
            .unwrap()
        else {
            eprintln!("light client: no bootstrap yet for the finalized block {root}");
            return;
        };
        let bootstrap = upgrade_lc_bootstrap_to_latest(&bootstrap.data).unwrap();
        let spec = self.spec.as_ref().unwrap();
        let store = initialize_light_client_store(spec, root, &bootstrap).unwrap();
        assert_eq!(store.finalized_header.beacon, header);
        eprintln!(
            "light client: bootstrapped from the finalized block {root} at slot {} (period {})",
            header.slot,
            compute_sync_committee_period_at_slot::<E>(header.slot)
        );
        self.bootstrap = Some(header);
        self.store = Some(store);
    }

    /// One sync step: the best updates of the periods from the store's to the clock's, then the
    /// latest finality and optimistic updates; then the store's finalized header against the
    /// node's.
    fn sync_step(&mut self) {
        let current_slot = self.current_slot();
        let client = self.client.as_ref().unwrap();
        let spec = self.spec.as_ref().unwrap();
        let store = self.store.as_mut().unwrap();
        let gvr = self.genesis_validators_root;

        let store_period =
            compute_sync_committee_period_at_slot::<E>(store.finalized_header.beacon.slot);
        let current_period = compute_sync_committee_period_at_slot::<E>(current_slot);
        let updates = self
            .runtime
            .block_on(client.get_beacon_light_client_updates::<E>(
                store_period,
                current_period - store_period + 1,
            ))
            .unwrap();
        for update in updates {
            let update = upgrade_lc_update_to_latest(&update.data).unwrap();
            // An update whose attested block the store has finalized past carries nothing new
            // once the next sync committee is known (the spec's validation refuses it).
            if update.attested_header.beacon.slot <= store.finalized_header.beacon.slot
                && is_next_sync_committee_known(store)
            {
                self.stale_range_updates += 1;
                continue;
            }
            let attested_slot = update.attested_header.beacon.slot;
            match process_light_client_update(spec, store, &update, current_slot, gvr) {
                Ok(()) => {
                    self.range_updates += 1;
                    self.periods
                        .insert(compute_sync_committee_period_at_slot::<E>(attested_slot));
                }
                Err(e) => self.errors.push(format!(
                    "update by range attested at slot {attested_slot}: {e:?}"
                )),
            }
        }

        if let Some(update) = self
            .runtime
            .block_on(client.get_beacon_light_client_finality_update::<E>())
            .unwrap()
        {
            let update = upgrade_lc_finality_update_to_latest(&update.data).unwrap();
            match process_light_client_finality_update(spec, store, &update, current_slot, gvr) {
                Ok(()) => self.finality_updates += 1,
                Err(e) => self.errors.push(format!(
                    "finality update attested at slot {}: {e:?}",
                    update.attested_header.beacon.slot
                )),
            }
        }
        if let Some(update) = self
            .runtime
            .block_on(client.get_beacon_light_client_optimistic_update::<E>())
            .unwrap()
        {
            let update = upgrade_lc_optimistic_update_to_latest(&update.data).unwrap();
            match process_light_client_optimistic_update(spec, store, &update, current_slot, gvr) {
                Ok(()) => self.optimistic_updates += 1,
                Err(e) => self.errors.push(format!(
                    "optimistic update attested at slot {}: {e:?}",
                    update.attested_header.beacon.slot
                )),
            }
        }

        let finalized = self.store.as_ref().unwrap().finalized_header.beacon.clone();
        let optimistic_slot = self.store.as_ref().unwrap().optimistic_header.beacon.slot;
        let (node_root, node_header) = self.node_finalized();
        let bootstrap_slot = self.bootstrap.as_ref().map_or(0, |h| h.slot);
        eprintln!(
            "light client at slot {current_slot}: finalized header slot {}, optimistic header \
             slot {optimistic_slot}; the node's finalized block {node_root} at slot {}",
            finalized.slot, node_header.slot
        );
        if finalized == node_header && node_header.slot > bootstrap_slot {
            if self.followed.is_none() {
                // The newly finalized checkpoint block's bootstrap starts a light client too.
                let bootstrap = self
                    .runtime
                    .block_on(client.get_beacon_light_client_bootstrap::<E>(node_root))
                    .unwrap()
                    .expect("a bootstrap of the newly finalized checkpoint block");
                let bootstrap = upgrade_lc_bootstrap_to_latest(&bootstrap.data).unwrap();
                let fresh = initialize_light_client_store(spec, node_root, &bootstrap).unwrap();
                assert_eq!(fresh.finalized_header.beacon, node_header);
            }
            self.followed = Some(node_header);
        }
    }
}

#[test]
fn a_devnet_with_blobs_finalizes_and_a_light_client_follows_it() {
    let mut follower = LightClientFollower::new();
    // The devnet justifies epochs 1 and 2 together at slot 24 and finalizes epoch 2 at slot 32,
    // straight from the genesis bootstrap's epoch 0, and `--until-finalized-epoch` stops it right
    // there: one epoch more keeps it running while the node is finalized at epoch 2, for the
    // light client to get there.
    devnet::devnet_finalizes_observed("arbor-dev-finalizes", 1, 3, &mut |port, line| {
        follower.on_line(port, line)
    });
    let bootstrap = follower
        .bootstrap
        .clone()
        .expect("the light client was bootstrapped from the node's finalized block");
    eprintln!(
        "light client: {} updates by range (periods {:?}, {} stale ones left out), {} finality \
         updates, {} optimistic updates processed",
        follower.range_updates,
        follower.periods,
        follower.stale_range_updates,
        follower.finality_updates,
        follower.optimistic_updates
    );
    assert!(
        follower.errors.is_empty(),
        "updates the light client refused: {:#?}",
        follower.errors
    );
    let followed = follower.followed.unwrap_or_else(|| {
        panic!(
            "the light client's finalized header never reached the node's finalized block past \
             the bootstrap at slot {}; store: {:?}",
            bootstrap.slot,
            follower.store.as_ref().map(|s| &s.finalized_header.beacon)
        )
    });
    eprintln!(
        "light client: followed the node from the finalized block at slot {} to the finalized \
         block at slot {}",
        bootstrap.slot, followed.slot
    );
}
