//! The state transition as the store's [`StateReplayer`]: blocks read back from the database were
//! verified when they were imported, so they are replayed without signature, state-root or
//! execution-payload checks.

use state_processing::per_block::{AlwaysValid, VerifySignatures};
use state_processing::per_slot::process_slots;
use state_processing::state_transition::state_transition;
use state_processing::{CachedBeaconState, Caches};
use types::phase0::BeaconBlockHeader;
use types::{BeaconState, ChainSpec, EthSpec, SignedBeaconBlock, Slot};

use crate::{ReplayError, StateReplayer};

/// Replays blocks with `state_processing` (Electra and later states).
///
/// The caches of the state it last produced are kept, so replaying a run of blocks builds the
/// committees once per epoch rather than once per block; a state that is not the one it last
/// produced gets fresh caches sharing only the public-key cache.
#[derive(Debug)]
pub struct StateTransitionReplayer<'a> {
    spec: &'a ChainSpec,
    /// The slot and latest block header of the last state produced, with its caches.
    last: Option<(Slot, BeaconBlockHeader, Caches)>,
}

impl<'a> StateTransitionReplayer<'a> {
    /// A replayer for the chain `spec` describes.
    pub fn new(spec: &'a ChainSpec) -> Self {
        Self { spec, last: None }
    }

    /// `state` with the caches kept from the last call when it is the state that call produced
    /// (one slot and latest block header are one position in the chain, so one state).
    fn cached<E: EthSpec>(&mut self, state: &BeaconState<E>) -> CachedBeaconState<E> {
        match self.last.take() {
            Some((slot, header, caches))
                if slot == *state.slot() && header == *state.latest_block_header() =>
            {
                CachedBeaconState {
                    state: state.clone(),
                    caches,
                }
            }
            Some((_, _, caches)) => CachedBeaconState::with_caches_of(state.clone(), &caches),
            None => CachedBeaconState::new(state.clone()),
        }
    }

    /// Writes the replayed state back, its pending writes folded into its trees (so the caller
    /// may hash or encode it), and keeps its caches.
    fn commit<E: EthSpec>(
        &mut self,
        state: &mut BeaconState<E>,
        mut cached: CachedBeaconState<E>,
    ) -> Result<(), ReplayError> {
        cached.apply_updates()?;
        self.last = Some((
            *cached.state.slot(),
            cached.state.latest_block_header().clone(),
            cached.caches,
        ));
        *state = cached.state;
        Ok(())
    }
}

impl<E: EthSpec> StateReplayer<E> for StateTransitionReplayer<'_> {
    fn apply_block(
        &mut self,
        state: &mut BeaconState<E>,
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), ReplayError> {
        let mut cached = self.cached(state);
        state_transition(
            &mut cached,
            block,
            VerifySignatures::None,
            false,
            &AlwaysValid,
            self.spec,
        )?;
        self.commit(state, cached)
    }

    fn advance_to_slot(
        &mut self,
        state: &mut BeaconState<E>,
        slot: Slot,
    ) -> Result<(), ReplayError> {
        if *state.slot() >= slot {
            return Ok(());
        }
        let mut cached = self.cached(state);
        process_slots(&mut cached, slot, self.spec)?;
        self.commit(state, cached)
    }
}

#[cfg(test)]
mod tests {
    use state_harness::{BlockContents, build_block};
    use state_processing::genesis::interop_genesis_state;
    use types::{ForkName, MinimalEthSpec, Root};

    use super::*;
    use crate::{Store, StoreConfig};

    type E = MinimalEthSpec;

    #[test]
    fn hot_states_replayed_with_the_state_transition_have_their_stored_roots() {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        let genesis = interop_genesis_state::<E>(64, 1_600_000_000, Root::repeat_byte(0x42), &spec)
            .expect("interop genesis");
        let spe = E::slots_per_epoch();

        // Blocks at every slot of the first epoch and two more, then an empty slot.
        let mut state = CachedBeaconState::new(genesis);
        let mut blocks = Vec::new();
        let mut boundary = None;
        for slot in 1..=spe + 2 {
            let built =
                build_block(&state, slot, &BlockContents::default(), &spec).expect("valid block");
            if slot == spe {
                boundary = Some((built.state_root, built.post.state.clone()));
            }
            blocks.push(built.block);
            state = built.post;
        }
        let after_blocks = (state.hash_tree_root().expect("root"), state.state.clone());
        process_slots(&mut state, spe + 3, &spec).expect("empty slot");
        let after_empty_slot = (state.hash_tree_root().expect("root"), state.state.clone());

        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::<E>::open(&dir.path().join("db"), spec.clone(), StoreConfig::default())
            .expect("store opens");
        let (boundary_root, boundary_state) = boundary.expect("the epoch boundary was built");
        store
            .put_state(boundary_root, &boundary_state)
            .expect("boundary state stored");
        for block in &blocks[spe as usize - 1..] {
            store
                .put_block(block.canonical_root(), block)
                .expect("block stored");
        }
        for (root, state) in [&after_blocks, &after_empty_slot] {
            store.put_state(*root, state).expect("state stored");
        }

        let mut replayer = StateTransitionReplayer::new(&spec);
        for (root, expected) in [after_blocks, after_empty_slot] {
            let replayed = store
                .get_state(&root, &mut replayer)
                .expect("replay succeeds")
                .expect("state known");
            let mut replayed = CachedBeaconState::new(replayed);
            assert_eq!(replayed.hash_tree_root().expect("root"), root);
            assert_eq!(*replayed.state.slot(), *expected.slot());
        }
    }

    #[test]
    fn states_naming_pending_snapshots_replay_across_epochs_to_their_roots() {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        let genesis = interop_genesis_state::<E>(64, 1_600_000_000, Root::repeat_byte(0x42), &spec)
            .expect("interop genesis");
        let spe = E::slots_per_epoch();
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::<E>::open(&dir.path().join("db"), spec.clone(), StoreConfig::default())
            .expect("store opens");
        // Block 1 and its state, stored whole: where replays start.
        let built = build_block(
            &CachedBeaconState::new(genesis),
            1,
            &BlockContents::default(),
            &spec,
        )
        .expect("valid block");
        store
            .put_block(built.block.canonical_root(), &built.block)
            .expect("block stored");
        store
            .put_state(built.state_root, &built.post.state)
            .expect("stored whole");
        let mut state = built.post;

        // Two epochs of blocks after it, every epoch snapshot deferred and never written.
        let mut stored = Vec::new();
        for slot in 2..=2 * spe + 2 {
            let built =
                build_block(&state, slot, &BlockContents::default(), &spec).expect("valid block");
            let mut batch = store.begin_batch().expect("batch");
            batch
                .put_block(built.block.canonical_root(), &built.block)
                .expect("block stored");
            let how = batch
                .put_state_deferring_snapshot(built.state_root, &built.post.state)
                .expect("state stored");
            batch.commit().expect("committed");
            stored.push((slot, built.state_root, how));
            state = built.post;
        }
        let pending: Vec<Slot> = stored
            .iter()
            .filter(|(_, _, how)| *how == crate::StoredAs::PendingSnapshot)
            .map(|(slot, _, _)| *slot)
            .collect();
        assert_eq!(pending, [spe, 2 * spe]);

        // Each loads through the pending snapshots from genesis, with the real transition
        // (two epoch transitions for the last ones), to its own root.
        let mut replayer = StateTransitionReplayer::new(&spec);
        for (slot, root, _) in stored.iter().filter(|(s, _, _)| s % spe <= 1) {
            let replayed = store
                .get_state(root, &mut replayer)
                .expect("replay succeeds")
                .expect("state known");
            let mut replayed = CachedBeaconState::new(replayed);
            assert_eq!(
                replayed.hash_tree_root().expect("root"),
                *root,
                "slot {slot}"
            );
        }
    }

    #[test]
    fn advancing_to_the_state_slot_is_a_no_op() {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        let genesis = interop_genesis_state::<E>(16, 0, Root::ZERO, &spec).expect("genesis");
        let mut state = genesis.clone();
        StateTransitionReplayer::new(&spec)
            .advance_to_slot(&mut state, 0)
            .expect("no-op");
        assert_eq!(state.slot(), genesis.slot());
    }
}
