//! Caches carried beside a state so that a block costs time in proportion to its contents, not to
//! the number of validators: committee shufflings, public keys, the total active balance.
//!
//! Every cache is derived from the state alone, so dropping one only costs time: it is rebuilt on
//! the next use. Clones of a state share the immutable parts through `Arc`s.

use std::sync::Arc;

use bls::{PublicKey, PublicKeyBytes};
use parking_lot::RwLock;
use rustc_hash::FxHashMap;
use types::{Epoch, EthSpec, Gwei, Root, Slot, ValidatorIndex};

use crate::{
    Error,
    common::{
        compute_epoch_at_slot, compute_start_slot_at_epoch,
        get_committee_count_per_slot_from_active_count, get_current_epoch, get_previous_epoch,
        get_seed, is_active_validator,
    },
    progressive_balances::ProgressiveBalances,
    view::StateRef,
};
use types::signing::DOMAIN_BEACON_ATTESTER;

/// The committees of one epoch: the active validators, their shuffling, and the sum of their
/// effective balances.
///
/// [spec]: phase0/beacon-chain.md#compute_committee
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitteeCache {
    epoch: Epoch,
    seed: Root,
    /// `get_active_validator_indices(state, epoch)`, ascending.
    active_indices: Vec<ValidatorIndex>,
    /// `active_indices` in the order `compute_committee` reads them:
    /// `shuffling[i] == active_indices[compute_shuffled_index(i, n, seed)]`.
    shuffling: Vec<ValidatorIndex>,
    committees_per_slot: u64,
    slots_per_epoch: u64,
    /// `get_total_active_balance` at `epoch` (at least one increment), as of when the cache
    /// was built.
    total_active_balance: Gwei,
}

impl CommitteeCache {
    /// Builds the committees of `epoch` from `state` (which must be able to see that epoch's
    /// seed: the previous, current or next epoch).
    pub fn new<E: EthSpec>(state: &StateRef<'_, E>, epoch: Epoch) -> Result<Self, Error> {
        let current = get_current_epoch(state);
        if epoch + 1 < current || epoch > current + 1 {
            return Err(Error::EpochOutOfRange { epoch, current });
        }
        let mut active_indices = Vec::with_capacity(state.validators.len());
        let mut total: Gwei = 0;
        for (index, validator) in state.validators.iter().enumerate() {
            if is_active_validator(validator, epoch) {
                active_indices.push(index as ValidatorIndex);
                total = total.saturating_add(validator.effective_balance);
            }
        }
        let seed = get_seed(state, epoch, DOMAIN_BEACON_ATTESTER);
        let shuffling = swap_or_not_shuffle::shuffle_list(
            active_indices.iter().map(|&i| i as usize).collect(),
            E::SHUFFLE_ROUND_COUNT,
            &seed.0,
            true,
        )
        .ok_or(Error::ArithmeticOverflow("shuffle_list"))?
        .into_iter()
        .map(|i| i as ValidatorIndex)
        .collect();
        Ok(Self {
            epoch,
            seed,
            committees_per_slot: get_committee_count_per_slot_from_active_count::<E>(
                active_indices.len(),
            ),
            active_indices,
            shuffling,
            slots_per_epoch: E::slots_per_epoch(),
            total_active_balance: total.max(E::EFFECTIVE_BALANCE_INCREMENT),
        })
    }

    /// The committees of `epoch` from its active validators (ascending), their shuffling
    /// (`compute_committee` order under `seed`, the epoch's attester seed) and their total
    /// effective balance, computed elsewhere: Gloas epoch processing shuffles the epoch two
    /// ahead for the PTC window, and hands the result on [`Caches::keep_committees`].
    pub(crate) fn from_shuffling<E: EthSpec>(
        epoch: Epoch,
        seed: Root,
        active_indices: Vec<ValidatorIndex>,
        shuffling: Vec<ValidatorIndex>,
        total_active_balance: Gwei,
    ) -> Self {
        Self {
            epoch,
            seed,
            committees_per_slot: get_committee_count_per_slot_from_active_count::<E>(
                active_indices.len(),
            ),
            active_indices,
            shuffling,
            slots_per_epoch: E::slots_per_epoch(),
            total_active_balance: total_active_balance.max(E::EFFECTIVE_BALANCE_INCREMENT),
        }
    }

    /// The epoch these committees belong to.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// The attester seed the shuffling was made with.
    pub fn seed(&self) -> Root {
        self.seed
    }

    /// `get_active_validator_indices(state, epoch)`, ascending.
    pub fn active_indices(&self) -> &[ValidatorIndex] {
        &self.active_indices
    }

    /// The active validators in shuffled order.
    pub fn shuffling(&self) -> &[ValidatorIndex] {
        &self.shuffling
    }

    /// `get_committee_count_per_slot(state, epoch)`.
    pub fn committees_per_slot(&self) -> u64 {
        self.committees_per_slot
    }

    /// `get_total_active_balance(state)` for this epoch, as of when the cache was built.
    pub fn total_active_balance(&self) -> Gwei {
        self.total_active_balance
    }

    /// `get_beacon_committee(state, slot, index)`.
    ///
    /// [spec]: phase0/beacon-chain.md#get_beacon_committee
    pub fn get_beacon_committee(&self, slot: Slot, index: u64) -> Result<&[ValidatorIndex], Error> {
        if slot / self.slots_per_epoch != self.epoch {
            return Err(Error::EpochOutOfRange {
                epoch: slot / self.slots_per_epoch,
                current: self.epoch,
            });
        }
        if index >= self.committees_per_slot {
            return Err(Error::CommitteeIndexOutOfRange {
                index,
                count: self.committees_per_slot,
            });
        }
        let count = self.committees_per_slot * self.slots_per_epoch;
        let i = (slot % self.slots_per_epoch) * self.committees_per_slot + index;
        let n = self.shuffling.len() as u64;
        // `compute_committee`: the `i`-th of `count` equal slices. `n * (i + 1)` cannot overflow:
        // `n` is at most 2^40 and `count` at most 64 * 32.
        let start = (n * i / count) as usize;
        let end = (n * (i + 1) / count) as usize;
        Ok(&self.shuffling[start..end])
    }

    /// Every committee of `slot`, in committee-index order.
    pub fn get_beacon_committees_at_slot(
        &self,
        slot: Slot,
    ) -> Result<Vec<&[ValidatorIndex]>, Error> {
        (0..self.committees_per_slot)
            .map(|index| self.get_beacon_committee(slot, index))
            .collect()
    }
}

/// Public keys of the registry, shared by every state of one chain: compressed key → index, and
/// index → decompressed key.
///
/// A validator's public key never changes, but two forks of the chain may add different
/// validators at the same index, or the same key at different indices. So the map keeps every
/// index a key was ever seen at (entries are never removed), and every answer is checked against
/// the state asked about: the key at that index in *its* registry. A key is absent from a state
/// exactly when none of its recorded indices holds it there, because every validator of a state
/// was recorded when the state was indexed ([`Caches::index_pubkeys`]) or when it was appended
/// ([`Caches::push_validator`]). No lookup ever scans the registry.
///
/// The one exception to checking against the state is the finalized prefix of the registry
/// ([`Caches::set_finalized`]): the registry only appends, so every state of the chain that has
/// index `i` below the finalized state's length holds the finalized key there, and those
/// entries answer without reading the state (a read from a million-leaf tree per attester was
/// most of a block's signature gathering).
#[derive(Debug, Default)]
pub struct PubkeyCache {
    /// The first index each key was seen at.
    by_key: FxHashMap<PublicKeyBytes, ValidatorIndex>,
    /// Further indices of keys seen at more than one (other forks of the chain): rare.
    more_indices: FxHashMap<PublicKeyBytes, Vec<ValidatorIndex>>,
    /// Keys by index, as some state of the chain holds them; below `finalized_len`, every entry
    /// is present and holds the finalized state's bytes (decompressed on first use).
    by_index: Vec<Option<IndexedKey>>,
    /// The length of the latest finalized registry recorded (0 until one is).
    finalized_len: usize,
}

/// A validator's key in [`PubkeyCache::by_index`]: its bytes, and the key decompressed (absent
/// only for a finalized entry not asked about yet).
#[derive(Debug, Clone, Copy)]
struct IndexedKey {
    bytes: PublicKeyBytes,
    key: Option<PublicKey>,
}

impl PubkeyCache {
    /// Records that some state of the chain has `key` at `index`.
    fn record(&mut self, key: PublicKeyBytes, index: ValidatorIndex) {
        match self.by_key.entry(key) {
            std::collections::hash_map::Entry::Vacant(entry) => {
                entry.insert(index);
            }
            std::collections::hash_map::Entry::Occupied(entry) => {
                if *entry.get() != index {
                    let more = self.more_indices.entry(key).or_default();
                    if !more.contains(&index) {
                        more.push(index);
                    }
                }
            }
        }
    }

    /// The entry of finalized index `i`; `None` at or past the finalized length.
    fn finalized_entry(&self, i: usize) -> Option<IndexedKey> {
        if i < self.finalized_len {
            self.by_index.get(i).copied().flatten()
        } else {
            None
        }
    }

    /// Every index `key` was recorded at.
    fn indices(&self, key: &PublicKeyBytes) -> impl Iterator<Item = ValidatorIndex> + '_ {
        self.by_key
            .get(key)
            .copied()
            .into_iter()
            .chain(self.more_indices.get(key).into_iter().flatten().copied())
    }
}

/// The caches carried beside one state. Cloning is cheap (`Arc`s).
#[derive(Debug, Clone, Default)]
pub struct Caches {
    /// Committees of the previous, current and next epoch (any order; looked up by epoch).
    committees: [Option<Arc<CommitteeCache>>; 3],
    /// Shared with every state of the chain.
    pubkeys: Arc<RwLock<PubkeyCache>>,
    /// How many of this state's validators are known to be in `pubkeys.by_key`.
    pubkeys_indexed: usize,
    /// Effective balances by validator index, for the epoch they were read in (sp-block).
    effective_balances: Option<Arc<EffectiveBalances>>,
    /// The validator indices of a sync committee's members, with the member keys they were
    /// looked up for (sp-block).
    sync_committee_indices: Option<SyncCommitteeIndices>,
    /// The target balances of the previous and current epoch, kept block by block.
    progressive_balances: Option<ProgressiveBalances>,
}

/// A sync committee's member keys and their validator indices.
type SyncCommitteeIndices = (Arc<[types::BLSPubkey]>, Arc<[ValidatorIndex]>);

impl Caches {
    /// Empty caches sharing `pubkeys` with other states of the same chain.
    pub fn with_pubkeys(pubkeys: Arc<RwLock<PubkeyCache>>) -> Self {
        Self {
            pubkeys,
            ..Self::default()
        }
    }

    /// The shared public-key cache, for building the caches of another state of the same chain.
    pub fn pubkey_cache(&self) -> Arc<RwLock<PubkeyCache>> {
        self.pubkeys.clone()
    }

    /// Forgets every committee cache (after a change to the registry that committees depend on,
    /// which only epoch processing makes).
    pub fn clear_committees(&mut self) {
        self.committees = Default::default();
    }

    /// The committees of `epoch`, built on first use. `epoch` must be the state's previous,
    /// current or next epoch.
    pub fn committees<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        epoch: Epoch,
    ) -> Result<Arc<CommitteeCache>, Error> {
        let seed = get_seed(state, epoch, DOMAIN_BEACON_ATTESTER);
        if let Some(cache) = self
            .committees
            .iter()
            .flatten()
            .find(|c| c.epoch == epoch && c.seed == seed)
        {
            return Ok(cache.clone());
        }
        let cache = Arc::new(CommitteeCache::new(state, epoch)?);
        // Replace the slot of an epoch this state can no longer ask about, or the oldest.
        let current = get_current_epoch(state);
        let previous = get_previous_epoch(state);
        let slot = self
            .committees
            .iter()
            .position(|c| match c {
                None => true,
                Some(c) => c.epoch < previous || c.epoch > current + 1 || c.epoch == epoch,
            })
            .unwrap_or_else(|| {
                self.committees
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, c)| c.as_ref().map_or(0, |c| c.epoch))
                    .map_or(0, |(i, _)| i)
            });
        self.committees[slot] = Some(cache.clone());
        Ok(cache)
    }

    /// Keeps `cache`, the committees of an epoch beyond the state's next one (Gloas epoch
    /// processing's, two ahead), in place of a cached epoch before `oldest_needed`, which the
    /// state is about to leave behind; kept nowhere when every slot holds a needed epoch. The
    /// cache is found by epoch and seed, as every other.
    pub(crate) fn keep_committees(&mut self, cache: Arc<CommitteeCache>, oldest_needed: Epoch) {
        let slot = self
            .committees
            .iter()
            .position(|c| c.as_ref().is_some_and(|c| c.epoch == cache.epoch))
            .or_else(|| self.committees.iter().position(Option::is_none))
            .or_else(|| {
                self.committees
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| c.as_ref().map(|c| (i, c.epoch)))
                    .filter(|&(_, epoch)| epoch < oldest_needed)
                    .min_by_key(|&(_, epoch)| epoch)
                    .map(|(i, _)| i)
            });
        if let Some(slot) = slot {
            self.committees[slot] = Some(cache);
        }
    }

    /// Records `total` as the total active balance of `epoch`'s cached committees, if any.
    ///
    /// Epoch processing calls this after `process_effective_balance_updates`: the shuffling of
    /// an epoch does not depend on effective balances, but the total does.
    pub fn update_total_active_balance(&mut self, epoch: Epoch, total: Gwei) {
        for cache in self.committees.iter_mut().flatten() {
            if cache.epoch == epoch && cache.total_active_balance != total {
                Arc::make_mut(cache).total_active_balance = total;
            }
        }
    }

    /// The committees of the epoch of `slot`.
    pub fn committees_at_slot<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        slot: Slot,
    ) -> Result<Arc<CommitteeCache>, Error> {
        self.committees(state, compute_epoch_at_slot::<E>(slot))
    }

    /// `get_total_active_balance(state)`: the current epoch's total effective balance of active
    /// validators (at least one increment).
    ///
    /// Effective balances only change in epoch processing, which recomputes this where the spec
    /// reads it after `process_effective_balance_updates`.
    ///
    /// [spec]: phase0/beacon-chain.md#get_total_active_balance
    pub fn get_total_active_balance<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
    ) -> Result<Gwei, Error> {
        let epoch = get_current_epoch(state);
        Ok(self.committees(state, epoch)?.total_active_balance())
    }

    /// Makes sure every validator of `state` is in the key → index map. Costs time only for
    /// validators added since the last call.
    pub fn index_pubkeys<E: EthSpec>(&mut self, state: &StateRef<'_, E>) {
        let len = state.validators.len();
        if self.pubkeys_indexed >= len {
            self.pubkeys_indexed = self.pubkeys_indexed.min(len);
            return;
        }
        let mut cache = self.pubkeys.write();
        for (index, validator) in state
            .validators
            .iter_from(self.pubkeys_indexed)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = (self.pubkeys_indexed + index) as ValidatorIndex;
            cache.record(PublicKeyBytes(validator.pubkey.0), index);
        }
        self.pubkeys_indexed = len;
    }

    /// Records that `state` just appended the validator at `index` with `pubkey`
    /// (`add_validator_to_registry`).
    pub fn push_validator(&mut self, index: ValidatorIndex, pubkey: &PublicKeyBytes) {
        self.pubkeys.write().record(*pubkey, index);
        if self.pubkeys_indexed as u64 == index {
            self.pubkeys_indexed += 1;
        }
    }

    /// The index of the validator of `state` whose key is `pubkey`, if any.
    pub fn validator_index<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
        pubkey: &PublicKeyBytes,
    ) -> Option<ValidatorIndex> {
        self.index_pubkeys(state);
        let cache = self.pubkeys.read();
        cache.indices(pubkey).find(|&index| {
            state
                .validators
                .get(index as usize)
                .is_some_and(|v| v.pubkey.0 == pubkey.0)
        })
    }

    /// Records `state` as a finalized state of the chain: the keys of its registry become the
    /// ones every state of the chain holds at those indices (see [`PubkeyCache`]), answered
    /// without reading the state asked about. Reads only the validators added since the last
    /// finalized state recorded; an older or shorter state changes nothing. The caller vouches
    /// that `state` is finalized (the anchor a node starts from, or a new finalized
    /// checkpoint's state): a state of a fork that can still be abandoned would poison the
    /// cache.
    pub fn set_finalized<E: EthSpec>(&self, state: &StateRef<'_, E>) {
        let len = state.validators.len();
        let mut cache = self.pubkeys.write();
        let from = cache.finalized_len;
        if len <= from {
            return;
        }
        if cache.by_index.len() < len {
            cache.by_index.resize(len, None);
        }
        for (offset, validator) in state
            .validators
            .iter_from(from)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let bytes = PublicKeyBytes(validator.pubkey.0);
            let entry = &mut cache.by_index[from + offset];
            // A key another fork put at this index is replaced by the finalized one.
            if !entry.is_some_and(|e| e.bytes == bytes) {
                *entry = Some(IndexedKey { bytes, key: None });
            }
        }
        cache.finalized_len = len;
    }

    /// The decompressed public key of validator `index` of `state`.
    pub fn pubkey<E: EthSpec>(
        &self,
        state: &StateRef<'_, E>,
        index: ValidatorIndex,
    ) -> Result<PublicKey, Error> {
        let i = index as usize;
        let len = state.validators.len();
        if i >= len {
            return Err(Error::UnknownValidator { index, len });
        }
        // The bytes to decompress when the cache has no key for them: the finalized ones, or
        // else this state's (a cached key counts only if the state holds its bytes).
        let bytes = {
            let cache = self.pubkeys.read();
            match cache.finalized_entry(i) {
                Some(IndexedKey { key: Some(key), .. }) => return Ok(key),
                Some(IndexedKey { bytes, key: None }) => bytes,
                None => {
                    let validator = state
                        .validators
                        .get(i)
                        .ok_or(Error::UnknownValidator { index, len })?;
                    let bytes = PublicKeyBytes(validator.pubkey.0);
                    if let Some(Some(IndexedKey {
                        bytes: cached,
                        key: Some(key),
                    })) = cache.by_index.get(i)
                        && *cached == bytes
                    {
                        return Ok(*key);
                    }
                    bytes
                }
            }
        };
        let key = bytes
            .decompress()
            .map_err(|_| Error::InvalidPubkey(index))?;
        let mut cache = self.pubkeys.write();
        if cache.by_index.len() <= i {
            cache.by_index.resize(i + 1, None);
        }
        match &mut cache.by_index[i] {
            entry @ None => {
                *entry = Some(IndexedKey {
                    bytes,
                    key: Some(key),
                })
            }
            Some(entry) if entry.bytes == bytes && entry.key.is_none() => entry.key = Some(key),
            // Another fork's key at this index: answered, not cached.
            Some(_) => {}
        }
        Ok(key)
    }

    /// The decompressed public keys of validators `indices` of `state`, in that order: what
    /// [`Self::pubkey`] gives for each, with the shared cache's lock taken once for the run of
    /// keys it holds (an aggregate attestation's thousands of attesters).
    pub fn pubkeys<E: EthSpec>(
        &self,
        state: &StateRef<'_, E>,
        indices: &[ValidatorIndex],
    ) -> Result<Vec<PublicKey>, Error> {
        let len = state.validators.len();
        let mut keys = Vec::with_capacity(indices.len());
        let mut guard = None;
        for &index in indices {
            let cache = guard.get_or_insert_with(|| self.pubkeys.read());
            if (index as usize) < len
                && let Some(IndexedKey { key: Some(key), .. }) =
                    cache.finalized_entry(index as usize)
            {
                keys.push(key);
                continue;
            }
            // The lock is let go: the full path may decompress and write.
            guard = None;
            keys.push(self.pubkey(state, index)?);
        }
        Ok(keys)
    }

    /// Decompresses every key of `state` not yet in the cache, in parallel on `pool` (a node
    /// does this once at start-up so that the first blocks are not slow).
    pub fn decompress_all<E: EthSpec>(
        &self,
        state: &StateRef<'_, E>,
        pool: &rayon::ThreadPool,
    ) -> Result<(), Error> {
        use rayon::prelude::*;
        let missing: Vec<(usize, PublicKeyBytes)> = {
            let cache = self.pubkeys.read();
            state
                .validators
                .iter()
                .enumerate()
                .filter(|(i, v)| {
                    !matches!(cache.by_index.get(*i), Some(Some(IndexedKey { bytes, key: Some(_) })) if bytes.0 == v.pubkey.0)
                })
                .map(|(i, v)| (i, PublicKeyBytes(v.pubkey.0)))
                .collect()
        };
        let keys: Vec<(usize, PublicKeyBytes, Result<PublicKey, Error>)> = pool.install(|| {
            missing
                .into_par_iter()
                .map(|(i, b)| {
                    (
                        i,
                        b,
                        b.decompress().map_err(|_| Error::InvalidPubkey(i as u64)),
                    )
                })
                .collect()
        });
        let mut cache = self.pubkeys.write();
        let finalized_len = cache.finalized_len;
        for (i, bytes, key) in keys {
            let key = key?;
            if cache.by_index.len() <= i {
                cache.by_index.resize(i + 1, None);
            }
            // A finalized entry keeps the finalized key: `state` may be of another fork.
            match &mut cache.by_index[i] {
                Some(entry) if i < finalized_len => {
                    if entry.bytes == bytes {
                        entry.key = Some(key);
                    }
                }
                entry => {
                    *entry = Some(IndexedKey {
                        bytes,
                        key: Some(key),
                    })
                }
            }
        }
        Ok(())
    }
}

/// The first slot of `epoch`, re-exported for cache users.
pub fn epoch_start_slot<E: EthSpec>(epoch: Epoch) -> Slot {
    compute_start_slot_at_epoch::<E>(epoch)
}

// ---------------------------------------------------------------------------------------------
// Effective balances (added by sp-block for attestation rewards)

/// Every validator's effective balance, read in one walk of the registry during `epoch`.
///
/// Effective balances change only in epoch processing (`process_effective_balance_updates`), so
/// the snapshot holds for every state of the same chain while it stays in `epoch`; a state that
/// moves to a later epoch gets a new one. Validators appended after the walk (eth1 deposits,
/// with a zero effective balance) are not in it: callers read those from the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveBalances {
    epoch: Epoch,
    balances: Vec<Gwei>,
}

impl EffectiveBalances {
    /// The epoch the snapshot was taken in.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// The effective balance of validator `index`, if it was in the registry at the walk.
    #[inline]
    pub fn get(&self, index: ValidatorIndex) -> Option<Gwei> {
        self.balances.get(index as usize).copied()
    }
}

impl Caches {
    /// The effective balances of `state`'s validators as of its current epoch, read once per
    /// epoch (a random read of the registry tree costs far more than one of a flat array, and a
    /// block's attestations read tens of thousands).
    pub fn effective_balances<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
    ) -> Arc<EffectiveBalances> {
        let epoch = get_current_epoch(state);
        if let Some(cached) = &self.effective_balances
            && cached.epoch == epoch
        {
            return cached.clone();
        }
        let snapshot = Arc::new(EffectiveBalances {
            epoch,
            balances: state
                .validators
                .iter()
                .map(|v| v.effective_balance)
                .collect(),
        });
        self.effective_balances = Some(snapshot.clone());
        snapshot
    }

    /// The validator indices of the sync committee whose member keys are `members` (in
    /// order), if they were recorded with [`Self::set_sync_committee_indices`]. A validator's
    /// index never changes along a chain, so they hold until the committee changes (once per
    /// sync committee period).
    pub fn sync_committee_indices(
        &self,
        members: &[types::BLSPubkey],
    ) -> Option<Arc<[ValidatorIndex]>> {
        match &self.sync_committee_indices {
            Some((keys, indices)) if **keys == *members => Some(indices.clone()),
            _ => None,
        }
    }

    /// Records the validator indices of the sync committee whose member keys are `members`.
    pub fn set_sync_committee_indices(
        &mut self,
        members: &[types::BLSPubkey],
        indices: Arc<[ValidatorIndex]>,
    ) {
        self.sync_committee_indices = Some((members.into(), indices));
    }

    /// The target balances of `state`'s previous and current epoch, built with one walk when
    /// none are held for its current epoch.
    pub fn progressive_balances<E: EthSpec>(
        &mut self,
        state: &StateRef<'_, E>,
    ) -> Result<&ProgressiveBalances, Error> {
        let epoch = get_current_epoch(state);
        match &self.progressive_balances {
            Some(p) if p.epoch() == epoch => {}
            _ => self.progressive_balances = Some(ProgressiveBalances::build(state)?),
        }
        Ok(self
            .progressive_balances
            .as_ref()
            .expect("held for the epoch or set just above"))
    }

    /// Takes the target balances out for an update in `epoch` (a block's attestations or
    /// slashings); `None` when none are held for it (stale ones are dropped: they would be
    /// rebuilt anyway).
    pub(crate) fn take_progressive_balances(
        &mut self,
        epoch: Epoch,
    ) -> Option<ProgressiveBalances> {
        self.progressive_balances
            .take()
            .filter(|p| p.epoch() == epoch)
    }

    /// Puts target balances (back) in place.
    pub(crate) fn set_progressive_balances(&mut self, balances: ProgressiveBalances) {
        self.progressive_balances = Some(balances);
    }

    /// Installs the effective balances of every validator for `epoch`, read by a walk made
    /// anyway (epoch processing, after `process_effective_balance_updates`, for the epoch the
    /// state enters), so that the first block of the epoch does not walk the registry again.
    pub fn set_effective_balances(&mut self, epoch: Epoch, balances: Vec<Gwei>) {
        self.effective_balances = Some(Arc::new(EffectiveBalances { epoch, balances }));
    }
}
