//! What the server keeps between requests so that a request over the head costs no shuffling
//! and no registry scan: committees by (epoch, seed), sync committee members by committee root,
//! and the public-key index (built once, extended as the registry grows).

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;
use state_processing::common::get_seed;
use state_processing::{Caches, CommitteeCache, StateRef};
use tree_hash::TreeHash;
use types::{EthSpec, Root, ValidatorIndex};

/// Committee caches kept (previous, current and next epoch of one or two branches).
const COMMITTEES_KEPT: usize = 6;

/// The server's caches.
#[derive(Default)]
pub(crate) struct ApiCaches {
    committees: Mutex<VecDeque<Arc<CommitteeCache>>>,
    sync_members: Mutex<Option<(Root, Arc<[ValidatorIndex]>)>>,
    /// Only its public-key index is used: `validator_index` checks each answer against the
    /// state asked about, so one index serves every state of the chain.
    key_index: Mutex<Option<Caches>>,
    /// The attestation source of an epoch after the head's: (head block, epoch, checkpoint),
    /// from the head state advanced through the boundary once.
    pub(crate) advanced_source: Mutex<Option<(Root, types::Epoch, types::phase0::Checkpoint)>>,
}

impl std::fmt::Debug for ApiCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiCaches")
            .field("committees", &self.committees.lock().len())
            .finish_non_exhaustive()
    }
}

impl ApiCaches {
    /// The committees of `epoch` (the state's previous, current or next) for `state`.
    pub(crate) fn committees<E: EthSpec>(
        &self,
        state: &StateRef<'_, E>,
        caches: &Caches,
        epoch: types::Epoch,
    ) -> Result<Arc<CommitteeCache>, state_processing::Error> {
        let seed = get_seed(state, epoch, types::signing::DOMAIN_BEACON_ATTESTER);
        if let Some(found) = self
            .committees
            .lock()
            .iter()
            .find(|c| c.epoch() == epoch && c.seed() == seed)
        {
            return Ok(found.clone());
        }
        let built = caches.clone().committees(state, epoch)?;
        let mut kept = self.committees.lock();
        if kept.len() >= COMMITTEES_KEPT {
            kept.pop_front();
        }
        kept.push_back(built.clone());
        Ok(built)
    }

    /// The validator indices of `committee`'s members (keys looked up once per committee).
    pub(crate) fn sync_members<E: EthSpec>(
        &self,
        state: &StateRef<'_, E>,
        caches: &Caches,
        committee: &types::altair::SyncCommittee<E>,
    ) -> Option<Arc<[ValidatorIndex]>> {
        let root = committee.tree_hash_root();
        if let Some((r, members)) = self.sync_members.lock().as_ref()
            && *r == root
        {
            return Some(members.clone());
        }
        let members: Arc<[ValidatorIndex]> = committee
            .pubkeys
            .iter()
            .map(|key| self.validator_index(state, caches, key))
            .collect::<Option<Vec<_>>>()?
            .into();
        *self.sync_members.lock() = Some((root, members.clone()));
        Some(members)
    }

    /// The index of the validator of `state` with public key `key`.
    pub(crate) fn validator_index<E: EthSpec>(
        &self,
        state: &StateRef<'_, E>,
        caches: &Caches,
        key: &types::BLSPubkey,
    ) -> Option<ValidatorIndex> {
        let mut index = self.key_index.lock();
        let index = index.get_or_insert_with(|| Caches::with_pubkeys(caches.pubkey_cache()));
        index.validator_index(state, &state_processing::common::misc::pubkey_bytes(key))
    }
}
