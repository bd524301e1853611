//! `types::memory::differential_sizes` gives the numbers milhouse's `MemoryTracker` gives, for
//! states that share most of their trees as a node's post-states do.

#![cfg(feature = "arbitrary")]

mod common;

use arbitrary::Unstructured;
use common::*;
use milhouse::mem::MemoryTracker;
use types::{BeaconState, MinimalEthSpec};

#[test]
fn differential_sizes_are_the_memory_trackers() {
    let bytes = random_bytes(1 << 16, 11);
    let mut first = fulu_state::<MinimalEthSpec>(&mut Unstructured::new(&bytes)).unwrap();
    for i in 0..5_000u64 {
        first.validators.push(validator(i)).unwrap();
        first.balances.push(i).unwrap();
    }
    first.validators.apply_updates().unwrap();
    // Later states: copies that wrote a few validators and balances each, and one unrelated.
    let mut states = vec![BeaconState::Fulu(first.clone())];
    let mut state = first;
    for step in 1..6u64 {
        state = state.clone();
        for i in (0..5_000).step_by(997 * step as usize % 5_000 + 1).take(4) {
            state.validators.get_mut(i).unwrap().effective_balance = step;
            state.balances.set(i, step).unwrap();
        }
        state.validators.apply_updates().unwrap();
        states.push(BeaconState::Fulu(state.clone()));
    }
    let other = random_bytes(1 << 16, 12);
    states.push(BeaconState::Fulu(
        fulu_state::<MinimalEthSpec>(&mut Unstructured::new(&other)).unwrap(),
    ));

    let mut tracker = MemoryTracker::default();
    let expected: Vec<usize> = states
        .iter()
        .map(|state| tracker.track_item(state).differential_size)
        .collect();
    let sizes = types::memory::differential_sizes(&states);
    assert_eq!(sizes, expected);
    // The copies add far less than the first state: the measure saw what they share.
    assert!(sizes[1..6].iter().all(|&s| s * 4 < sizes[0]), "{sizes:?}");
}
