//! A synthetic Fulu chain on the minimal preset, deterministic in the slot, and a replayer
//! that only moves the slot and the latest block header (the state transition is not part of
//! this crate).

#![allow(dead_code)]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use ssz_types::{FixedVector, VariableList};
use store::{ReplayError, StateReplayer};
use types::phase0::{BeaconBlockHeader, SignedBeaconBlockHeader};
use types::{
    BeaconState, ChainSpec, DataColumnSidecar, EthSpec, ForkName, MinimalEthSpec, Root,
    SignedBeaconBlock, Slot, fulu,
};

pub(crate) type E = MinimalEthSpec;
pub(crate) const SPE: u64 = 8;
pub(crate) const NUMBER_OF_COLUMNS: u64 = 128;

/// Deterministic pseudo-random bytes.
pub(crate) fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

/// A value of `T` generated from seeded random bytes.
pub(crate) fn arbitrary<T: for<'a> Arbitrary<'a>>(len: usize, seed: u64) -> T {
    let bytes = noise(len, seed);
    T::arbitrary(&mut Unstructured::new(&bytes)).expect("arbitrary accepts any bytes")
}

/// A root that names the synthetic thing `(kind, slot, branch)`.
pub(crate) fn synthetic_root(kind: u8, slot: Slot, branch: u64) -> Root {
    let mut b = [0u8; 32];
    b[0] = kind;
    b[8..16].copy_from_slice(&slot.to_le_bytes());
    b[16..24].copy_from_slice(&branch.to_le_bytes());
    Root::from(b)
}

/// The spec: minimal preset, every fork up to Fulu at genesis.
pub(crate) fn fulu_spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu)
}

/// The spec: minimal preset, fork `i` of `ForkName::ALL` at epoch `i`.
pub(crate) fn staggered_spec() -> ChainSpec {
    let mut spec = ChainSpec::minimal();
    spec.altair_fork_epoch = 1;
    spec.bellatrix_fork_epoch = 2;
    spec.capella_fork_epoch = 3;
    spec.deneb_fork_epoch = 4;
    spec.electra_fork_epoch = 5;
    spec.fulu_fork_epoch = 6;
    spec.gloas_fork_epoch = 7;
    spec
}

fn base_state() -> &'static fulu::BeaconState<E> {
    static BASE: OnceLock<fulu::BeaconState<E>> = OnceLock::new();
    BASE.get_or_init(|| arbitrary(16 * 1024, 7))
}

fn base_block() -> &'static fulu::SignedBeaconBlock<E> {
    static BASE: OnceLock<fulu::SignedBeaconBlock<E>> = OnceLock::new();
    BASE.get_or_init(|| arbitrary(4 * 1024, 8))
}

/// The synthetic chain: one block per slot on the canonical branch (0), fork blocks on other
/// branches; every root is a function of `(slot, branch)`.
pub(crate) struct Chain;

impl Chain {
    /// Post-state root of the block at `slot` on `branch`.
    pub(crate) fn state_root(slot: Slot, branch: u64) -> Root {
        synthetic_root(1, slot, branch)
    }

    /// The block at `slot` on `branch`, whose parent is the canonical block at `slot - 1`.
    pub(crate) fn block(slot: Slot, branch: u64) -> SignedBeaconBlock<E> {
        let mut block = base_block().clone();
        block.message.slot = slot;
        block.message.proposer_index = slot % 64;
        block.message.parent_root = if slot == 0 {
            Root::ZERO
        } else {
            Self::block_root(slot - 1, 0)
        };
        block.message.state_root = Self::state_root(slot, branch);
        block.message.body.graffiti = synthetic_root(3, slot, branch);
        SignedBeaconBlock::Fulu(block)
    }

    pub(crate) fn block_root(slot: Slot, branch: u64) -> Root {
        Self::block(slot, branch).canonical_root()
    }

    /// The post-state of the block at `slot` on `branch`.
    pub(crate) fn state(slot: Slot, branch: u64) -> BeaconState<E> {
        let mut state = base_state().clone();
        state.slot = slot;
        let block = Self::block(slot, branch);
        let mut header = block.signed_block_header().message;
        header.state_root = Root::ZERO;
        state.latest_block_header = header;
        let history = <<E as EthSpec>::SlotsPerHistoricalRoot as typenum::Unsigned>::to_u64();
        for s in slot.saturating_sub(history)..slot {
            *state
                .state_roots
                .get_mut((s % history) as usize)
                .expect("in range") = Self::state_root(s, 0);
        }
        state.state_roots.apply_updates().expect("valid indices");
        // Something that changes from slot to slot besides the roots.
        state.eth1_deposit_index = slot * 3;
        BeaconState::Fulu(state)
    }

    /// `count` data columns of the block at `slot` on `branch`, each with `blobs` cells.
    pub(crate) fn columns(slot: Slot, branch: u64, blobs: usize) -> Vec<DataColumnSidecar<E>> {
        let block = Self::block(slot, branch);
        let header = block.signed_block_header();
        (0..NUMBER_OF_COLUMNS)
            .map(|index| column(index, &header, blobs, slot ^ branch))
            .collect()
    }
}

/// One data column sidecar with `blobs` cells of seeded bytes.
pub(crate) fn column(
    index: u64,
    header: &SignedBeaconBlockHeader,
    blobs: usize,
    seed: u64,
) -> DataColumnSidecar<E> {
    let cell_len = <<E as EthSpec>::BytesPerCell as typenum::Unsigned>::to_usize();
    // Distinct per (seed, index, blob), cheap to build: the crash test writes 128 per slot.
    let cells = (0..blobs)
        .map(|b| {
            let mut cell = vec![(seed as u8) ^ (index as u8); cell_len];
            cell[..8].copy_from_slice(&(seed ^ (index << 20) ^ b as u64).to_le_bytes());
            FixedVector::new(cell).expect("cell length")
        })
        .collect();
    DataColumnSidecar::Fulu(fulu::DataColumnSidecar {
        index,
        column: VariableList::new(cells).expect("at most the blob limit"),
        kzg_commitments: VariableList::new(vec![[0xc0; 48].into(); blobs]).expect("limit"),
        kzg_proofs: VariableList::new(vec![[0xc1; 48].into(); blobs]).expect("limit"),
        signed_block_header: header.clone(),
        kzg_commitments_inclusion_proof: FixedVector::from_elem(Root::repeat_byte(0x1c)),
    })
}

/// A replayer that only advances the slot and records the blocks it was given (standing in
/// for the state transition, which this crate does not own).
#[derive(Default)]
pub(crate) struct SlotReplayer {
    pub applied: Vec<Root>,
}

impl StateReplayer<E> for SlotReplayer {
    fn apply_block(
        &mut self,
        state: &mut BeaconState<E>,
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), ReplayError> {
        if block.slot() <= *state.slot() {
            return Err(format!("block at {} on a state at {}", block.slot(), state.slot()).into());
        }
        *state.slot_mut() = block.slot();
        let mut header: BeaconBlockHeader = block.signed_block_header().message;
        header.state_root = Root::ZERO;
        *state.latest_block_header_mut() = header;
        self.applied.push(block.canonical_root());
        Ok(())
    }

    fn advance_to_slot(
        &mut self,
        state: &mut BeaconState<E>,
        slot: Slot,
    ) -> Result<(), ReplayError> {
        if slot < *state.slot() {
            return Err(format!("cannot go back from {} to {slot}", state.slot()).into());
        }
        *state.slot_mut() = slot;
        Ok(())
    }
}

/// The header a block would put in a state, for comparisons.
pub(crate) fn header_of(block: &SignedBeaconBlock<E>) -> BeaconBlockHeader {
    let mut h = block.signed_block_header().message;
    h.state_root = Root::ZERO;
    h
}

/// Asserts two states are the same fork and the same SSZ bytes (milhouse's `PartialEq` also
/// compares tree shapes and pending updates, and its `Debug` output is huge).
#[track_caller]
pub(crate) fn assert_same_state(a: &BeaconState<E>, b: &BeaconState<E>) {
    use ssz::Encode;
    assert_eq!(a.fork_name(), b.fork_name());
    assert!(
        a.as_ssz_bytes() == b.as_ssz_bytes(),
        "states differ: slot {} vs {}",
        a.slot(),
        b.slot()
    );
}

/// The roots of the hot snapshot files on disk, sorted, checked to be exactly those the
/// database references (no partial write left, no orphan, no reference without its file).
pub(crate) fn snapshot_files(store: &store::Store<E>) -> Vec<Root> {
    let mut on_disk = files_in(store.state_files_dir());
    let mut referenced = store.hot_snapshot_roots().expect("readable");
    on_disk.sort();
    referenced.sort();
    assert_eq!(on_disk, referenced);
    on_disk
}

/// The roots of the cold snapshot files on disk, sorted, checked to be exactly those the
/// database's cold snapshots reference (no orphan, no reference without its file).
pub(crate) fn cold_snapshot_files(store: &store::Store<E>) -> Vec<Root> {
    let mut on_disk = files_in(store.cold_files_dir());
    let mut referenced: Vec<Root> = store
        .cold_snapshots()
        .expect("readable")
        .into_iter()
        .filter_map(|(_, root)| root)
        .collect();
    on_disk.sort();
    referenced.sort();
    assert_eq!(on_disk, referenced);
    on_disk
}

/// The state roots the files of a snapshot directory are named by; anything else in it (a
/// `.tmp` left behind) fails the check.
fn files_in(dir: &std::path::Path) -> Vec<Root> {
    std::fs::read_dir(dir)
        .expect("the snapshot files directory")
        .map(|e| {
            let name = e
                .expect("a directory entry")
                .file_name()
                .into_string()
                .expect("a UTF-8 name");
            let hex = name.strip_suffix(".ssz").expect("only snapshot files");
            hex.parse().expect("a state root")
        })
        .collect()
}
