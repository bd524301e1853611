//! The consensus specs' light-client protocol (`altair/light-client/` and its later forks):
//! what a full node derives from blocks and states, and the light client's sync functions.
//!
//! - [`sync_protocol`]: the light client's store and its update functions
//!   (`altair/light-client/sync-protocol.md` with the Capella, Deneb and Electra changes).
//! - [`fork`]: upgrading light-client data of earlier forks to Electra's format
//!   (`*/light-client/fork.md`).
//! - [`gloas`]: Gloas's header and branches, and the upgrade of data and stores to them
//!   (`gloas/light-client/`).
//! - [`format`]: the data formats a store may hold (Electra's, Gloas's), over which the sync
//!   protocol is written once.
//! - [`full_node`]: deriving bootstraps and updates from blocks and states
//!   (`altair/light-client/full-node.md` with the Capella and Deneb changes).
//! - [`data_collection`]: a full node's collection of the best and latest light-client data from
//!   imported blocks as fork choice moves the head and finality, in Electra's format or Gloas's.
//!
//! A store holds Electra's format (which Fulu keeps: what this node serves) until it is upgraded
//! to Gloas's; data of earlier forks goes through [`fork`] (and [`gloas`]) first, as the spec's
//! upgrade functions describe.

pub mod data_collection;
mod error;
pub mod fork;
pub mod format;
pub mod full_node;
pub mod gloas;
pub mod sync_protocol;

pub use data_collection::{
    BlockId, DataCollector, GloasLightClientDataCollector, LightClientDataCollector,
};
pub use error::LightClientError;
pub use format::{LcBootstrap, LcData, LcHeader, LcUpdate};
pub use full_node::{
    block_to_light_client_header, create_light_client_bootstrap,
    create_light_client_finality_update, create_light_client_optimistic_update,
    create_light_client_update,
};
pub use sync_protocol::{
    LightClientStore, initialize_light_client_store, is_better_update, is_finality_update,
    is_sync_committee_update, is_valid_light_client_header, process_light_client_finality_update,
    process_light_client_optimistic_update, process_light_client_store_force_update,
    process_light_client_update, validate_light_client_update,
};

/// `LightClientHeader` in Electra's format (Deneb's, kept by Electra and Fulu): the store's
/// default, and what the node derives and serves.
pub type Header<E> = types::electra::LightClientHeader<E>;
/// `LightClientBootstrap` in the latest format.
pub type Bootstrap<E> = types::electra::LightClientBootstrap<E>;
/// `LightClientUpdate` in the latest format.
pub type Update<E> = types::electra::LightClientUpdate<E>;
/// `LightClientFinalityUpdate` in the latest format.
pub type FinalityUpdate<E> = types::electra::LightClientFinalityUpdate<E>;
/// `LightClientOptimisticUpdate` in the latest format.
pub type OptimisticUpdate<E> = types::electra::LightClientOptimisticUpdate<E>;
