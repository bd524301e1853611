//! Gloas slots and epochs on states built here (no vectors needed): the interop genesis at
//! Gloas, the PTC window that epoch processing rotates against `compute_ptc` computed afresh,
//! the payload-availability bits `process_slot` clears, and `get_ptc`'s range.

use state_processing::{
    CachedBeaconState, Caches, CommitteeCache, Error, StateRef,
    genesis::{interop_genesis_block_of, interop_genesis_state},
    gloas::ptc::{compute_ptc, get_ptc},
    per_slot::process_slots,
};
use tree_hash::TreeHash;
use types::{BeaconState, ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock};

type E = MinimalEthSpec;

fn gloas_spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas)
}

fn gloas_genesis(n: usize) -> CachedBeaconState<E> {
    let state =
        interop_genesis_state::<E>(n, 1_600_000_000, Root::repeat_byte(0x42), &gloas_spec())
            .expect("interop genesis at Gloas");
    CachedBeaconState::new(state)
}

/// Every PTC `get_ptc` reads from the window for the current and next epoch is the one
/// `compute_ptc` draws from the state as it is.
fn assert_window_matches_compute_ptc(state: &CachedBeaconState<E>) {
    let view = StateRef::new(&state.state).expect("a view");
    let epoch = *view.slot / E::slots_per_epoch();
    let mut caches = Caches::default();
    for slot in epoch * E::slots_per_epoch()..(epoch + 2) * E::slots_per_epoch() {
        assert_eq!(
            get_ptc(&view, slot).expect("in the window"),
            compute_ptc(&view, &mut caches, slot).expect("computable"),
            "slot {slot} at state slot {}",
            view.slot
        );
    }
}

#[test]
fn gloas_genesis_follows_the_test_helper() {
    let cached = gloas_genesis(64);
    let BeaconState::Gloas(state) = &cached.state else {
        panic!("a Gloas genesis state, got {}", cached.state.fork_name());
    };
    let el_genesis = Root::repeat_byte(0x42);
    assert_eq!(state.latest_block_hash, el_genesis);
    assert_eq!(state.latest_execution_payload_bid.block_hash, Root::ZERO);
    assert_eq!(
        state.latest_execution_payload_bid.parent_block_hash,
        el_genesis
    );
    assert!(state.execution_payload_availability.iter().all(|bit| bit));
    assert!(
        state
            .ptc_window
            .iter()
            .take(8)
            .all(|ptc| ptc.iter().all(|&i| i == 0))
    );
    // The genesis block commits to the bid the header's body root commits to.
    let block = interop_genesis_block_of(&cached.state, Root::repeat_byte(1));
    let SignedBeaconBlock::Gloas(block) = block else {
        panic!("a Gloas genesis block");
    };
    assert_eq!(
        block.message.body.tree_hash_root(),
        state.latest_block_header.body_root
    );
    assert_window_matches_compute_ptc(&cached);
}

#[test]
fn epoch_processing_rotates_the_ptc_window() {
    let spec = gloas_spec();
    let mut cached = gloas_genesis(64);
    let mut previous_next_epoch: Option<Vec<Vec<u64>>> = None;
    for epoch in 1..=4u64 {
        process_slots(&mut cached, epoch * E::slots_per_epoch(), &spec).expect("slots");
        assert_window_matches_compute_ptc(&cached);
        let view = StateRef::new(&cached.state).expect("a view");
        let current: Vec<Vec<u64>> = (0..E::slots_per_epoch())
            .map(|i| get_ptc(&view, epoch * E::slots_per_epoch() + i).expect("current"))
            .collect();
        if let Some(expected) = &previous_next_epoch {
            assert_eq!(
                &current, expected,
                "the next epoch's PTCs became the current ones"
            );
        }
        previous_next_epoch = Some(
            (0..E::slots_per_epoch())
                .map(|i| get_ptc(&view, (epoch + 1) * E::slots_per_epoch() + i).expect("next"))
                .collect(),
        );
        // The previous epoch is readable; two back and two ahead are not.
        let slot = epoch * E::slots_per_epoch();
        assert!(get_ptc(&view, slot - 1).is_ok());
        assert!(matches!(
            get_ptc(&view, (epoch + 2) * E::slots_per_epoch()),
            Err(Error::EpochOutOfRange { .. })
        ));
        if epoch >= 2 {
            assert!(matches!(
                get_ptc(&view, slot - E::slots_per_epoch() - 1),
                Err(Error::EpochOutOfRange { .. })
            ));
        }
    }
}

/// Epoch processing keeps the shuffling it makes for the PTC window (two epochs ahead) as that
/// epoch's committees: when the state gets there, the cached committees (and their total
/// active balance) are those built afresh.
#[test]
fn committees_kept_by_epoch_processing_equal_fresh_ones() {
    let spec = gloas_spec();
    let mut cached = gloas_genesis(64);
    for epoch in 1..=4u64 {
        process_slots(&mut cached, epoch * E::slots_per_epoch() + 1, &spec).expect("slots");
        let view = StateRef::new(&cached.state).expect("a view");
        for e in [epoch - 1, epoch, epoch + 1] {
            let kept = cached.caches.committees(&view, e).expect("committees");
            let fresh = CommitteeCache::new(&view, e).expect("committees");
            assert_eq!(*kept, fresh, "epoch {e} at state epoch {epoch}");
        }
    }
}

#[test]
fn process_slot_clears_the_next_payload_availability_bit() {
    let spec = gloas_spec();
    let mut cached = gloas_genesis(64);
    process_slots(&mut cached, 5, &spec).expect("slots");
    let BeaconState::Gloas(state) = &cached.state else {
        panic!("still Gloas");
    };
    let bits = &state.execution_payload_availability;
    assert!(bits.get(0).expect("in range"), "slot 0 was never cleared");
    for slot in 1..=5 {
        assert!(!bits.get(slot).expect("in range"), "slot {slot}");
    }
    assert!(bits.get(6).expect("in range"));
}
