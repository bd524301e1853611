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

/// Where each validator sits in an epoch's committees: one entry per validator index
/// (`None` for one not active in the epoch), so attester duties cost one lookup per validator
/// asked about instead of a pass over every committee.
#[derive(Debug)]
pub(crate) struct DutyIndex {
    /// Committees per slot.
    pub(crate) committees_per_slot: u64,
    /// By validator index: (slot, committee index, position in it, committee length).
    entries: Vec<Option<(u64, u32, u32, u32)>>,
}

impl DutyIndex {
    fn build<E: EthSpec>(
        committees: &CommitteeCache,
        validators: usize,
    ) -> Result<Self, state_processing::Error> {
        let spe = E::slots_per_epoch();
        let epoch = committees.epoch();
        let per_slot = committees.committees_per_slot();
        let mut entries = vec![None; validators];
        for slot in epoch * spe..(epoch + 1) * spe {
            for index in 0..per_slot {
                let members = committees.get_beacon_committee(slot, index)?;
                for (position, validator) in members.iter().enumerate() {
                    if let Some(entry) = entries.get_mut(*validator as usize) {
                        *entry = Some((slot, index as u32, position as u32, members.len() as u32));
                    }
                }
            }
        }
        Ok(Self {
            committees_per_slot: per_slot,
            entries,
        })
    }

    /// (slot, committee index, position, committee length) of `validator`.
    pub(crate) fn get(&self, validator: ValidatorIndex) -> Option<(u64, u64, u64, u64)> {
        self.entries
            .get(usize::try_from(validator).ok()?)
            .copied()
            .flatten()
            .map(|(slot, index, position, len)| {
                (slot, u64::from(index), u64::from(position), u64::from(len))
            })
    }
}

/// The server's caches.
#[derive(Default)]
pub(crate) struct ApiCaches {
    committees: Mutex<VecDeque<Arc<CommitteeCache>>>,
    duty_indices: Mutex<VecDeque<(types::Epoch, Root, Arc<DutyIndex>)>>,
    sync_members: Mutex<Option<(Root, Arc<[ValidatorIndex]>)>>,
    /// Only its public-key index is used: `validator_index` checks each answer against the
    /// state asked about, so one index serves every state of the chain.
    key_index: Mutex<Option<Caches>>,
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

    /// The duty index of `epoch`'s committees in `state`.
    pub(crate) fn duty_index<E: EthSpec>(
        &self,
        state: &StateRef<'_, E>,
        caches: &Caches,
        epoch: types::Epoch,
    ) -> Result<Arc<DutyIndex>, state_processing::Error> {
        let committees = self.committees(state, caches, epoch)?;
        let seed = committees.seed();
        if let Some((_, _, found)) = self
            .duty_indices
            .lock()
            .iter()
            .find(|(e, s, _)| *e == epoch && *s == seed)
        {
            return Ok(found.clone());
        }
        let built = Arc::new(DutyIndex::build::<E>(&committees, state.validators.len())?);
        let mut kept = self.duty_indices.lock();
        if kept.len() >= 3 {
            kept.pop_front();
        }
        kept.push_back((epoch, seed, built.clone()));
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
