//! `BeaconState::ssz_write`: the state's SSZ written in pieces is `as_ssz_bytes`, for every
//! fork and both presets, and no piece holds more than a bounded part of it. (The `ssz_static`
//! spec runner checks the same against the vectors of the forks they cover.)

#![cfg(feature = "arbitrary")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::io::{self, Write};

use arbitrary::Unstructured;
use common::*;
use ssz::Encode;
use types::{BeaconState, EthSpec, MainnetEthSpec, MinimalEthSpec};

/// A writer that keeps what it is given and the size of its largest piece, and fails once it
/// has been given `fail_after` bytes.
#[derive(Default)]
struct Recorder {
    bytes: Vec<u8>,
    largest_piece: usize,
    fail_after: Option<usize>,
}

impl Write for Recorder {
    fn write(&mut self, piece: &[u8]) -> io::Result<usize> {
        if self
            .fail_after
            .is_some_and(|limit| self.bytes.len() + piece.len() > limit)
        {
            return Err(io::Error::other("disk full"));
        }
        self.largest_piece = self.largest_piece.max(piece.len());
        self.bytes.extend_from_slice(piece);
        Ok(piece.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// States of every fork from `cases` random seeds.
fn random_states<E: EthSpec>(cases: u64) -> Vec<BeaconState<E>> {
    let mut states = Vec::new();
    for seed in 0..cases {
        let bytes = random_bytes(1 << 16, seed);
        let u = || Unstructured::new(&bytes);
        states.extend(
            [
                phase0_state::<E>(&mut u()).map(BeaconState::Phase0),
                altair_state::<E>(&mut u()).map(BeaconState::Altair),
                bellatrix_state::<E>(&mut u()).map(BeaconState::Bellatrix),
                capella_state::<E>(&mut u()).map(BeaconState::Capella),
                deneb_state::<E>(&mut u()).map(BeaconState::Deneb),
                electra_state::<E>(&mut u()).map(BeaconState::Electra),
                fulu_state::<E>(&mut u()).map(BeaconState::Fulu),
            ]
            .into_iter()
            .map(|state| state.expect("random bytes make a state")),
        );
    }
    states
}

fn check_written_in_pieces<E: EthSpec>(state: &BeaconState<E>) -> Recorder {
    let mut out = Recorder::default();
    state.ssz_write(&mut out).unwrap();
    assert!(
        out.bytes == state.as_ssz_bytes(),
        "{} state: {} bytes written in pieces, {} encoded whole",
        state.fork_name(),
        out.bytes.len(),
        state.ssz_bytes_len()
    );
    out
}

#[test]
fn every_forks_state_written_in_pieces_is_its_ssz() {
    let mut forks = std::collections::BTreeSet::new();
    for state in random_states::<MinimalEthSpec>(12) {
        check_written_in_pieces(&state);
        forks.insert(state.fork_name());
    }
    for state in random_states::<MainnetEthSpec>(3) {
        check_written_in_pieces(&state);
    }
    assert_eq!(forks.len(), 7, "{forks:?}");
}

/// A registry of 20,000 validators (2.4 MB of SSZ) reaches the writer in pieces of at most
/// twice the 64 KiB buffer: never whole.
#[test]
fn a_large_registry_reaches_the_writer_in_small_pieces() {
    let bytes = random_bytes(1 << 16, 7);
    let mut state =
        BeaconState::Fulu(fulu_state::<MinimalEthSpec>(&mut Unstructured::new(&bytes)).unwrap());
    let BeaconState::Fulu(inner) = &mut state else {
        unreachable!()
    };
    for i in 0..20_000u64 {
        inner.validators.push(validator(i)).unwrap();
        inner.balances.push(i).unwrap();
        inner.inactivity_scores.push(i).unwrap();
    }
    let out = check_written_in_pieces(&state);
    assert!(out.bytes.len() > 2_400_000, "{}", out.bytes.len());
    assert!(
        out.largest_piece <= 128 * 1024,
        "a piece of {} bytes",
        out.largest_piece
    );

    // A writer that fails part way (a full disk) gets its error back.
    let mut failing = Recorder {
        fail_after: Some(1_000_000),
        ..Recorder::default()
    };
    let error = state.ssz_write(&mut failing).unwrap_err();
    assert_eq!(error.to_string(), "disk full");
}
