//! Blocks waiting for their columns, and columns waiting for their blocks: a block is available
//! (ready for import) once every column the node custodies is here and verified. A supernode
//! (custody of every column) asks for reconstruction once it holds half of them.
//!
//! Bounded: at most `capacity` blocks are pending; past that the one that arrived first is
//! evicted (and reported, so its lookups can be dropped). Columns the node does not custody are
//! not kept.
//!
//! [spec]: fulu/das-core.md#custody-sampling

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use types::{ColumnIndex, EthSpec, ForkName, Root, SignedBeaconBlock, Slot, typenum::Unsigned};

use crate::data_column_verification::KzgVerifiedDataColumn;

/// A block with every column the node custodies, verified: ready for import.
#[derive(Debug, Clone)]
pub struct AvailableBlock<E: EthSpec> {
    /// The block's root.
    pub block_root: Root,
    /// The block.
    pub block: Arc<SignedBeaconBlock<E>>,
    /// The custody columns, by index (empty for a block without blobs).
    pub columns: Vec<KzgVerifiedDataColumn<E>>,
}

/// What is still missing for a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingComponents {
    /// The block's root.
    pub block_root: Root,
    /// Whether the block itself is here.
    pub block_known: bool,
    /// Custody columns not yet here, ascending.
    pub missing_columns: Vec<ColumnIndex>,
}

/// The state of a block after a component arrived.
#[derive(Debug, Clone)]
pub enum Availability<E: EthSpec> {
    /// Everything is here: the block leaves the checker for import.
    Available(Box<AvailableBlock<E>>),
    /// Still waiting.
    Missing(MissingComponents),
}

/// A component the checker cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AvailabilityError {
    /// A block of a fork whose data availability is not checked here (Gloas's blobs come with
    /// its payload envelope: issue 44).
    #[error("data availability of fork {0} blocks is not supported")]
    UnsupportedFork(ForkName),
    /// Blocks before Fulu carry blobs in blob sidecars, which this checker does not hold.
    #[error("a {fork} block with {blobs} blobs needs blob sidecars, not data columns")]
    BlobSidecarFork {
        /// The block's fork.
        fork: ForkName,
        /// Its blob commitments.
        blobs: usize,
    },
    /// The block is at or below the finalized slot the checker was pruned to.
    #[error("slot {slot} is not after the finalized slot {finalized_slot}")]
    Finalized {
        /// The component's slot.
        slot: Slot,
        /// The checker's finalized slot.
        finalized_slot: Slot,
    },
}

/// Components of one block.
#[derive(Debug)]
struct Pending<E: EthSpec> {
    slot: Slot,
    block: Option<Arc<SignedBeaconBlock<E>>>,
    columns: BTreeMap<ColumnIndex, KzgVerifiedDataColumn<E>>,
    reconstruction_requested: bool,
}

/// The data availability checker of one node.
#[derive(Debug)]
pub struct DataAvailabilityChecker<E: EthSpec> {
    custody_columns: BTreeSet<ColumnIndex>,
    pending: HashMap<Root, Pending<E>>,
    /// Roots in the order they first arrived, for eviction.
    arrival: VecDeque<Root>,
    capacity: usize,
    finalized_slot: Slot,
}

impl<E: EthSpec> DataAvailabilityChecker<E> {
    /// A checker for a node custodying `custody_columns` (the columns of its custody groups,
    /// `get_custody_groups` → `compute_columns_for_custody_group`), holding at most `capacity`
    /// pending blocks.
    pub fn new(custody_columns: BTreeSet<ColumnIndex>, capacity: usize) -> Self {
        Self {
            custody_columns,
            pending: HashMap::new(),
            arrival: VecDeque::new(),
            capacity: capacity.max(1),
            finalized_slot: 0,
        }
    }

    /// The columns the node custodies.
    pub fn custody_columns(&self) -> &BTreeSet<ColumnIndex> {
        &self.custody_columns
    }

    /// Whether the node custodies every column (a supernode: it reconstructs).
    pub fn is_supernode(&self) -> bool {
        self.custody_columns.len() == E::NumberOfColumns::to_usize()
    }

    /// Blocks (or column sets) waiting.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    fn check_slot(&self, slot: Slot) -> Result<(), AvailabilityError> {
        if slot <= self.finalized_slot && self.finalized_slot > 0 {
            return Err(AvailabilityError::Finalized {
                slot,
                finalized_slot: self.finalized_slot,
            });
        }
        Ok(())
    }

    /// The entry of `root`, made if new; the roots evicted to make room.
    fn entry(&mut self, root: Root, slot: Slot) -> (&mut Pending<E>, Vec<Root>) {
        let mut evicted = Vec::new();
        if !self.pending.contains_key(&root) {
            while self.pending.len() >= self.capacity {
                let Some(oldest) = self.arrival.pop_front() else {
                    break;
                };
                if self.pending.remove(&oldest).is_some() {
                    evicted.push(oldest);
                }
            }
            self.arrival.push_back(root);
        }
        let pending = self.pending.entry(root).or_insert_with(|| Pending {
            slot,
            block: None,
            columns: BTreeMap::new(),
            reconstruction_requested: false,
        });
        (pending, evicted)
    }

    /// Takes a gossip-, RPC- or API-verified block. A block without blobs is available at
    /// once. Returns the block's availability and the roots evicted to make room.
    pub fn put_block(
        &mut self,
        block_root: Root,
        block: Arc<SignedBeaconBlock<E>>,
    ) -> Result<(Availability<E>, Vec<Root>), AvailabilityError> {
        let slot = block.slot();
        self.check_slot(slot)?;
        let blobs = match &*block {
            SignedBeaconBlock::Fulu(b) => b.message.body.blob_kzg_commitments.len(),
            SignedBeaconBlock::Deneb(b) => b.message.body.blob_kzg_commitments.len(),
            SignedBeaconBlock::Electra(b) => b.message.body.blob_kzg_commitments.len(),
            SignedBeaconBlock::Phase0(_)
            | SignedBeaconBlock::Altair(_)
            | SignedBeaconBlock::Bellatrix(_)
            | SignedBeaconBlock::Capella(_) => 0,
            // Gloas's blobs come with the payload envelope, not the block (issue 44).
            SignedBeaconBlock::Gloas(_) => {
                return Err(AvailabilityError::UnsupportedFork(block.fork_name()));
            }
        };
        let fork = block.fork_name();
        if blobs > 0 && fork != ForkName::Fulu {
            return Err(AvailabilityError::BlobSidecarFork { fork, blobs });
        }
        if blobs == 0 {
            // Columns for a block without blobs cannot exist (a sidecar needs a commitment);
            // anything pending under its root goes.
            self.remove(&block_root);
            return Ok((
                Availability::Available(Box::new(AvailableBlock {
                    block_root,
                    block,
                    columns: Vec::new(),
                })),
                Vec::new(),
            ));
        }
        let (pending, evicted) = self.entry(block_root, slot);
        pending.block = Some(block);
        Ok((self.availability(block_root), evicted))
    }

    /// Takes verified columns (any blocks, any order). Columns outside the node's custody and
    /// repeats are not kept. Returns the availability of every block a kept column belongs to,
    /// and the roots evicted to make room.
    pub fn put_columns(
        &mut self,
        columns: Vec<KzgVerifiedDataColumn<E>>,
    ) -> Result<(Vec<Availability<E>>, Vec<Root>), AvailabilityError> {
        let mut touched = BTreeSet::new();
        let mut evicted = Vec::new();
        for column in columns {
            if !self.custody_columns.contains(&column.index()) {
                continue;
            }
            self.check_slot(column.slot())?;
            let root = column.block_root();
            let (pending, mut gone) = self.entry(root, column.slot());
            pending.columns.entry(column.index()).or_insert(column);
            touched.insert(root);
            evicted.append(&mut gone);
        }
        // A root touched early in the batch may have been evicted by a later column.
        let mut availability = Vec::with_capacity(touched.len());
        for root in touched {
            if self.pending.contains_key(&root) {
                availability.push(self.availability(root));
            }
        }
        Ok((availability, evicted))
    }

    /// The availability of a pending `root`; an available block leaves the checker.
    fn availability(&mut self, root: Root) -> Availability<E> {
        let pending = self
            .pending
            .get(&root)
            .expect("callers ask only for roots they have just found or made an entry for");
        let missing_columns: Vec<ColumnIndex> = self
            .custody_columns
            .iter()
            .copied()
            .filter(|i| !pending.columns.contains_key(i))
            .collect();
        match (&pending.block, missing_columns.is_empty()) {
            (Some(_), true) => {
                let pending = self.remove(&root).expect("the entry was read just above");
                Availability::Available(Box::new(AvailableBlock {
                    block_root: root,
                    block: pending.block.expect("matched as Some"),
                    columns: pending.columns.into_values().collect(),
                }))
            }
            (block, _) => Availability::Missing(MissingComponents {
                block_root: root,
                block_known: block.is_some(),
                missing_columns,
            }),
        }
    }

    /// For a supernode holding at least half the columns of `root` but not all: `true` once,
    /// so the caller schedules reconstruction (processor work) a single time.
    pub fn take_reconstruction_request(&mut self, root: &Root) -> bool {
        let supernode = self.is_supernode();
        let half = E::NumberOfColumns::to_usize() / 2;
        match self.pending.get_mut(root) {
            Some(p)
                if supernode
                    && !p.reconstruction_requested
                    && p.columns.len() >= half
                    && p.columns.len() < E::NumberOfColumns::to_usize() =>
            {
                p.reconstruction_requested = true;
                true
            }
            _ => false,
        }
    }

    /// The block held for `root`, if it arrived.
    pub fn block(&self, root: &Root) -> Option<Arc<SignedBeaconBlock<E>>> {
        self.pending.get(root).and_then(|p| p.block.clone())
    }

    /// The verified columns held for `root` (what reconstruction starts from).
    pub fn columns(&self, root: &Root) -> Vec<KzgVerifiedDataColumn<E>> {
        self.pending
            .get(root)
            .map(|p| p.columns.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Forgets whatever is held for `root` (its block was imported).
    pub(crate) fn discard(&mut self, root: &Root) {
        self.remove(root);
    }

    fn remove(&mut self, root: &Root) -> Option<Pending<E>> {
        let pending = self.pending.remove(root)?;
        self.arrival.retain(|r| r != root);
        Some(pending)
    }

    /// Drops everything at or below `finalized_slot`: such blocks are either imported or never
    /// will be.
    pub fn prune(&mut self, finalized_slot: Slot) {
        self.finalized_slot = self.finalized_slot.max(finalized_slot);
        let keep = self.finalized_slot;
        self.pending.retain(|_, p| p.slot > keep);
        let pending = &self.pending;
        self.arrival.retain(|r| pending.contains_key(r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_column_sidecars::get_data_column_sidecars_from_block;
    use crate::data_column_verification::verify_data_column_sidecars_standalone;
    use crate::test_utils::{block_with_blobs, minimal_spec, pool};
    use types::MinimalEthSpec as E;

    struct Fixture {
        root: Root,
        block: Arc<SignedBeaconBlock<E>>,
        columns: Vec<KzgVerifiedDataColumn<E>>,
    }

    fn fixture(blobs: u8, seed: u64) -> Fixture {
        let (block, cells) = block_with_blobs(blobs, seed);
        // A block without blobs has no sidecars (one with no commitments is invalid).
        let sidecars = if blobs == 0 {
            Vec::new()
        } else {
            get_data_column_sidecars_from_block(&block, &cells).expect("built")
        };
        let outcome = verify_data_column_sidecars_standalone(
            sidecars.into_iter().map(Arc::new).collect(),
            &minimal_spec(),
            &pool(),
        );
        assert!(outcome.failed.is_empty());
        Fixture {
            root: block.canonical_root(),
            block: Arc::new(block),
            columns: outcome.verified.into_iter().map(|(_, c)| c).collect(),
        }
    }

    fn custody(columns: impl IntoIterator<Item = u64>) -> BTreeSet<ColumnIndex> {
        columns.into_iter().collect()
    }

    fn available(a: &Availability<E>) -> Option<&AvailableBlock<E>> {
        match a {
            Availability::Available(b) => Some(b),
            Availability::Missing(_) => None,
        }
    }

    #[test]
    fn a_block_is_available_once_its_custody_columns_arrive_in_any_order() {
        let f = fixture(1, 1);
        let mut da = DataAvailabilityChecker::<E>::new(custody([3, 9, 100]), 8);
        // Columns first, out of order, with ones outside custody and a repeat.
        let (states, _) = da
            .put_columns(vec![
                f.columns[100].clone(),
                f.columns[4].clone(),
                f.columns[3].clone(),
                f.columns[3].clone(),
            ])
            .unwrap();
        assert_eq!(states.len(), 1);
        let Availability::Missing(missing) = &states[0] else {
            panic!("the block is not here yet")
        };
        assert!(!missing.block_known);
        assert_eq!(missing.missing_columns, [9]);

        let (state, _) = da.put_block(f.root, Arc::clone(&f.block)).unwrap();
        let Availability::Missing(missing) = &state else {
            panic!("column 9 is missing")
        };
        assert!(missing.block_known);
        assert_eq!(missing.missing_columns, [9]);

        let (states, _) = da.put_columns(vec![f.columns[9].clone()]).unwrap();
        let block = available(&states[0]).expect("available");
        assert_eq!(block.block_root, f.root);
        let indices: Vec<_> = block.columns.iter().map(|c| c.index()).collect();
        assert_eq!(indices, [3, 9, 100]);
        assert_eq!(da.pending_len(), 0, "an available block leaves the checker");
    }

    #[test]
    fn a_block_without_blobs_is_available_at_once() {
        let f = fixture(0, 2);
        let mut da = DataAvailabilityChecker::<E>::new(custody(0..8), 8);
        let (state, _) = da.put_block(f.root, Arc::clone(&f.block)).unwrap();
        assert!(available(&state).is_some_and(|b| b.columns.is_empty()));
    }

    #[test]
    fn columns_of_two_blocks_in_one_batch_go_to_their_own_block() {
        let (a, b) = (fixture(1, 3), fixture(2, 4));
        let mut da = DataAvailabilityChecker::<E>::new(custody([5]), 8);
        da.put_block(a.root, Arc::clone(&a.block)).unwrap();
        da.put_block(b.root, Arc::clone(&b.block)).unwrap();
        let (states, _) = da
            .put_columns(vec![b.columns[5].clone(), a.columns[5].clone()])
            .unwrap();
        let mut roots: Vec<_> = states
            .iter()
            .map(|s| available(s).expect("both available").block_root)
            .collect();
        roots.sort();
        let mut expected = vec![a.root, b.root];
        expected.sort();
        assert_eq!(roots, expected);
    }

    #[test]
    fn the_oldest_pending_block_is_evicted_past_capacity() {
        let blocks: Vec<_> = (0..3).map(|i| fixture(1, 10 + i)).collect();
        let mut da = DataAvailabilityChecker::<E>::new(custody([0]), 2);
        for f in &blocks[..2] {
            let (_, evicted) = da.put_block(f.root, Arc::clone(&f.block)).unwrap();
            assert!(evicted.is_empty());
        }
        let (_, evicted) = da
            .put_block(blocks[2].root, Arc::clone(&blocks[2].block))
            .unwrap();
        assert_eq!(evicted, [blocks[0].root]);
        assert_eq!(da.pending_len(), 2);
        // The evicted block's column now starts a fresh entry.
        let (states, evicted) = da.put_columns(vec![blocks[0].columns[0].clone()]).unwrap();
        assert_eq!(evicted, [blocks[1].root]);
        assert!(matches!(&states[0], Availability::Missing(m) if !m.block_known));
    }

    #[test]
    fn a_supernode_asks_for_reconstruction_once_at_half_the_columns() {
        let f = fixture(1, 20);
        let mut da = DataAvailabilityChecker::<E>::new(custody(0..128), 8);
        assert!(da.is_supernode());
        da.put_block(f.root, Arc::clone(&f.block)).unwrap();
        da.put_columns(f.columns[..63].to_vec()).unwrap();
        assert!(!da.take_reconstruction_request(&f.root));
        da.put_columns(f.columns[63..64].to_vec()).unwrap();
        assert!(da.take_reconstruction_request(&f.root));
        assert!(!da.take_reconstruction_request(&f.root), "asked once");
        assert_eq!(da.columns(&f.root).len(), 64);

        let mut node = DataAvailabilityChecker::<E>::new(custody(0..64), 8);
        node.put_block(f.root, Arc::clone(&f.block)).unwrap();
        node.put_columns(f.columns[..63].to_vec()).unwrap();
        assert!(
            !node.take_reconstruction_request(&f.root),
            "not a supernode"
        );
    }

    #[test]
    fn pruning_at_finality_drops_pending_blocks_and_refuses_old_ones() {
        let f = fixture(1, 30);
        let slot = f.block.slot();
        let mut da = DataAvailabilityChecker::<E>::new(custody([1]), 8);
        da.put_block(f.root, Arc::clone(&f.block)).unwrap();
        da.prune(slot.max(1));
        assert_eq!(da.pending_len(), 0);
        assert!(matches!(
            da.put_block(f.root, Arc::clone(&f.block)),
            Err(AvailabilityError::Finalized { .. })
        ));
    }
}
