//! Round trips of every stored type at every fork it exists in: blocks, states, blob sidecars
//! and data columns, written both as values and as SSZ bytes, read back both as the exact bytes
//! and decoded with the fork of their slot.
//!
//! The chain configuration puts fork `i` at epoch `i` (Gloas included: the store keeps Gloas
//! blocks and states though the node does not process them), so a value's slot alone selects
//! its fork.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use common::{E, SPE, SlotReplayer, arbitrary, staggered_spec, synthetic_root};
use ssz::Encode;
use store::{Store, StoreConfig};
use types::{BeaconState, BlobSidecar, DataColumnSidecar, ForkName, SignedBeaconBlock, Slot};

/// A slot inside `fork`'s first epoch under [`staggered_spec`] (`offset < SPE`).
fn slot_in(fork: ForkName, offset: u64) -> Slot {
    fork as u64 * SPE + offset
}

fn open(dir: &tempfile::TempDir) -> Store<E> {
    Store::open(
        &dir.path().join("db"),
        staggered_spec(),
        StoreConfig::default(),
    )
    .unwrap()
}

macro_rules! arbitrary_by_fork {
    ($enum:ident, $fork:expr, $len:expr, $seed:expr, { $($variant:ident => $module:ident),+ $(,)? }) => {
        match $fork {
            $(ForkName::$variant => $enum::$variant(arbitrary::<types::$module::$enum<E>>($len, $seed)),)+
            #[allow(unreachable_patterns)]
            other => panic!("{} does not exist at {other}", stringify!($enum)),
        }
    };
}

fn block_at(fork: ForkName, slot: Slot, seed: u64) -> SignedBeaconBlock<E> {
    let mut block = arbitrary_by_fork!(SignedBeaconBlock, fork, 6 * 1024, seed, {
        Phase0 => phase0, Altair => altair, Bellatrix => bellatrix, Capella => capella,
        Deneb => deneb, Electra => electra, Fulu => fulu, Gloas => gloas,
    });
    match &mut block {
        SignedBeaconBlock::Phase0(b) => b.message.slot = slot,
        SignedBeaconBlock::Altair(b) => b.message.slot = slot,
        SignedBeaconBlock::Bellatrix(b) => b.message.slot = slot,
        SignedBeaconBlock::Capella(b) => b.message.slot = slot,
        SignedBeaconBlock::Deneb(b) => b.message.slot = slot,
        SignedBeaconBlock::Electra(b) => b.message.slot = slot,
        SignedBeaconBlock::Fulu(b) => b.message.slot = slot,
        SignedBeaconBlock::Gloas(b) => b.message.slot = slot,
    }
    block
}

fn state_at(fork: ForkName, slot: Slot, seed: u64) -> BeaconState<E> {
    let mut state = arbitrary_by_fork!(BeaconState, fork, 24 * 1024, seed, {
        Phase0 => phase0, Altair => altair, Bellatrix => bellatrix, Capella => capella,
        Deneb => deneb, Electra => electra, Fulu => fulu, Gloas => gloas,
    });
    *state.slot_mut() = slot;
    state
}

#[test]
fn blocks_of_every_fork_round_trip_as_bytes_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    for fork in ForkName::ALL {
        for (i, as_bytes) in [false, true].into_iter().enumerate() {
            let block = block_at(
                fork,
                slot_in(fork, 1 + i as u64),
                fork as u64 * 10 + i as u64,
            );
            let root = block.canonical_root();
            let bytes = block.as_ssz_bytes();
            let mut batch = store.begin_batch().unwrap();
            if as_bytes {
                batch.put_block_ssz(root, &bytes).unwrap();
            } else {
                batch.put_block(root, &block).unwrap();
            }
            batch.commit().unwrap();

            assert_eq!(
                store.get_block_ssz(&root).unwrap().as_deref(),
                Some(&bytes[..])
            );
            let loaded = store.get_block(&root).unwrap().expect("stored");
            assert_eq!(loaded.fork_name(), fork);
            assert_eq!(loaded, block, "{fork} block (stored as bytes: {as_bytes})");
        }
    }
}

#[test]
fn a_block_at_the_wrong_fork_for_its_slot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    // A Deneb block at a Fulu slot: the value is refused, and its bytes do not decode there.
    let block = block_at(ForkName::Deneb, slot_in(ForkName::Fulu, 2), 99);
    let root = block.canonical_root();
    let mut batch = store.begin_batch().unwrap();
    assert!(batch.put_block(root, &block).is_err());
    assert!(batch.put_block_ssz(root, &block.as_ssz_bytes()).is_err());
    drop(batch);
    assert_eq!(store.get_block(&root).unwrap(), None);
}

#[test]
fn states_of_every_fork_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    for fork in ForkName::ALL {
        // An epoch-boundary state is stored whole.
        let state = state_at(fork, slot_in(fork, 0), 100 + fork as u64);
        let root = synthetic_root(9, *state.slot(), 0);
        store.put_state(root, &state).unwrap();
        let loaded = store
            .get_state(&root, &mut SlotReplayer::default())
            .unwrap()
            .expect("stored");
        assert_eq!(loaded.fork_name(), fork);
        common::assert_same_state(&loaded, &state);
    }
}

/// A Gloas block and state (progressive containers) are kept and read back by the fork of
/// their slot, though the node does not process Gloas: a spec with `GLOAS_FORK_EPOCH` set.
#[test]
fn a_gloas_block_and_state_round_trip_by_the_fork_of_their_slot() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let slot = slot_in(ForkName::Gloas, 2);
    assert_eq!(
        staggered_spec().fork_name_at_slot::<E>(slot),
        ForkName::Gloas
    );

    let block = block_at(ForkName::Gloas, slot, 4242);
    let root = block.canonical_root();
    let mut batch = store.begin_batch().unwrap();
    batch.put_block_ssz(root, &block.as_ssz_bytes()).unwrap();
    batch.commit().unwrap();
    let loaded = store.get_block(&root).unwrap().expect("stored");
    assert!(matches!(loaded, SignedBeaconBlock::Gloas(_)));
    assert_eq!(loaded, block);

    let state = state_at(ForkName::Gloas, slot_in(ForkName::Gloas, 0), 4243);
    let state_root = synthetic_root(11, *state.slot(), 0);
    store.put_state(state_root, &state).unwrap();
    let loaded = store
        .get_state(&state_root, &mut SlotReplayer::default())
        .unwrap()
        .expect("stored");
    assert!(matches!(loaded, BeaconState::Gloas(_)));
    assert_eq!(loaded, state);
}

#[test]
fn the_persisted_fork_choice_is_replaced_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    assert_eq!(store.fork_choice().unwrap(), None);
    for bytes in [vec![1u8, 2, 3], vec![7u8; 1000]] {
        let mut batch = store.begin_batch().unwrap();
        batch.put_fork_choice(&bytes).unwrap();
        batch.commit().unwrap();
        assert_eq!(store.fork_choice().unwrap(), Some(bytes));
    }
    drop(store);
    assert_eq!(open(&dir).fork_choice().unwrap(), Some(vec![7u8; 1000]));
}

#[test]
fn blob_sidecars_of_deneb_and_electra_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    for (fork, as_bytes) in [
        (ForkName::Deneb, false),
        (ForkName::Deneb, true),
        (ForkName::Electra, false),
        (ForkName::Electra, true),
    ] {
        let mut blob = arbitrary_by_fork!(BlobSidecar, fork, 8 * 1024, fork as u64 + as_bytes as u64, {
            Deneb => deneb, Electra => electra,
        });
        let root = synthetic_root(4, fork as u64, as_bytes as u64);
        let index = 3;
        match &mut blob {
            BlobSidecar::Deneb(b) => {
                b.index = index;
                b.signed_block_header.message.slot = slot_in(fork, 5);
            }
            BlobSidecar::Electra(b) => {
                b.index = index;
                b.signed_block_header.message.slot = slot_in(fork, 5);
            }
        }
        let bytes = blob.as_ssz_bytes();
        let mut batch = store.begin_batch().unwrap();
        if as_bytes {
            batch.put_blob_sidecar_ssz(root, &bytes).unwrap();
        } else {
            batch.put_blob_sidecar(root, &blob).unwrap();
        }
        batch.commit().unwrap();
        assert_eq!(
            store.get_blob_sidecar_ssz(&root, index).unwrap().as_deref(),
            Some(&bytes[..])
        );
        let loaded = store
            .get_blob_sidecar(&root, index)
            .unwrap()
            .expect("stored");
        assert_eq!(loaded.fork_name(), fork);
        assert_eq!(loaded, blob);
        assert_eq!(store.blob_sidecar_indices(&root).unwrap(), vec![index]);
    }
}

#[test]
fn data_columns_round_trip_as_bytes_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let block = common::Chain::block(slot_in(ForkName::Fulu, 3), 0);
    let header = block.signed_block_header();
    let root = block.canonical_root();
    let columns: Vec<DataColumnSidecar<E>> = (0..8)
        .map(|i| common::column(i * 16, &header, 3, 42))
        .collect();
    let mut batch = store.begin_batch().unwrap();
    for (i, c) in columns.iter().enumerate() {
        if i % 2 == 0 {
            batch.put_data_column(root, c).unwrap();
        } else {
            batch.put_data_column_ssz(root, &c.as_ssz_bytes()).unwrap();
        }
    }
    batch.commit().unwrap();
    for c in &columns {
        let index = c.index();
        assert_eq!(
            store.get_data_column_ssz(&root, index).unwrap(),
            Some(c.as_ssz_bytes())
        );
        let loaded = store
            .get_data_column(&root, index)
            .unwrap()
            .expect("stored");
        assert_eq!(loaded.fork_name(), ForkName::Fulu);
        assert_eq!(&loaded, c);
    }
    assert_eq!(
        store.data_column_indices(&root).unwrap(),
        (0..8).map(|i| i * 16).collect::<Vec<_>>()
    );
    assert_eq!(store.get_data_column(&root, 1).unwrap(), None);
}

#[test]
fn a_data_column_before_fulu_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let mut header = common::Chain::block(0, 0).signed_block_header();
    header.message.slot = slot_in(ForkName::Electra, 1);
    let c = common::column(0, &header, 1, 1);
    let root = synthetic_root(5, 0, 0);
    let mut batch = store.begin_batch().unwrap();
    assert!(batch.put_data_column_ssz(root, &c.as_ssz_bytes()).is_err());
    assert!(batch.put_data_column(root, &c).is_err());
}
