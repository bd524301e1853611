//! Gloas payloads waiting for their data: a Gloas block is imported without waiting for
//! anything (it carries a bid, no payload and no blobs), and its payload becomes available
//! once its execution payload envelope and every custody column of the bid's commitments are
//! here. The gossip-verified envelope and the gossip-verified (KZG-checked) columns of a block
//! wait here, whichever comes first, until the other half arrives; then the pair leaves for
//! the envelope's import ([`crate::BeaconChain::import_available_payload`]).
//!
//! This is the Gloas counterpart of the data availability checker, which holds Fulu blocks
//! until their columns come: here the block is imported already and what waits is its payload.
//!
//! Bounded: at most `capacity` block roots wait; past that the one that arrived first is
//! evicted (its envelope and columns can come again by req/resp). Columns outside the node's
//! custody are not kept. Entries at or before the finalized slot are dropped.
//!
//! [spec]: gloas/fork-choice.md#new-on_execution_payload_envelope

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use types::{
    ColumnIndex, DataColumnSidecar, EthSpec, Root, Slot, gloas::SignedExecutionPayloadEnvelope,
};

/// How many block roots may wait by default: two epochs of minimal slots, a few mainnet slots'
/// worth of forks (an envelope comes within its block's slot).
pub const DEFAULT_PENDING_PAYLOADS: usize = 64;

/// A payload with its envelope and every custody column of its bid's commitments: ready for
/// the envelope's import.
#[derive(Debug, Clone)]
pub struct ReadyPayload<E: EthSpec> {
    /// The envelope's block.
    pub block_root: Root,
    /// The block's slot.
    pub slot: Slot,
    /// The gossip-verified envelope.
    pub envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
    /// The custody columns, gossip-verified (KZG included), ascending by index; empty for a bid
    /// without commitments.
    pub columns: Vec<Arc<DataColumnSidecar<E>>>,
}

/// What a payload still waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingPayloadParts {
    /// The envelope's block.
    pub block_root: Root,
    /// Whether the envelope is here.
    pub envelope_known: bool,
    /// Custody columns not yet here, ascending (all of them while the number of commitments is
    /// not known: no envelope and no column yet).
    pub missing_columns: Vec<ColumnIndex>,
}

/// A payload after one of its parts arrived.
#[derive(Debug, Clone)]
pub enum PayloadAvailability<E: EthSpec> {
    /// Everything is here: the pair leaves for import.
    Ready(Box<ReadyPayload<E>>),
    /// Still waiting.
    Missing(MissingPayloadParts),
}

/// The parts of one payload received so far.
#[derive(Debug)]
struct Parts<E: EthSpec> {
    slot: Slot,
    envelope: Option<Arc<SignedExecutionPayloadEnvelope<E>>>,
    /// The bid's number of commitments, once a part told it (the envelope's gossip check read
    /// the bid; a column has a cell per commitment).
    blobs: Option<usize>,
    columns: BTreeMap<ColumnIndex, Arc<DataColumnSidecar<E>>>,
}

/// The payloads of imported Gloas blocks waiting for their envelope or their columns.
#[derive(Debug)]
pub struct PendingPayloads<E: EthSpec> {
    pending: HashMap<Root, Parts<E>>,
    /// Roots in the order they first arrived, for eviction.
    arrival: VecDeque<Root>,
    capacity: usize,
    finalized_slot: Slot,
}

impl<E: EthSpec> PendingPayloads<E> {
    /// Room for `capacity` block roots (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            pending: HashMap::new(),
            arrival: VecDeque::new(),
            capacity: capacity.max(1),
            finalized_slot: 0,
        }
    }

    /// Block roots waiting.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Whether `root`'s envelope is here, waiting for columns.
    pub fn has_envelope(&self, root: &Root) -> bool {
        self.pending
            .get(root)
            .is_some_and(|parts| parts.envelope.is_some())
    }

    /// The entry of `root`, made if new; the roots evicted to make room.
    fn entry(&mut self, root: Root, slot: Slot) -> (&mut Parts<E>, Vec<Root>) {
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
        let parts = self.pending.entry(root).or_insert_with(|| Parts {
            slot,
            envelope: None,
            blobs: None,
            columns: BTreeMap::new(),
        });
        (parts, evicted)
    }

    /// Takes the gossip-verified envelope of block `root` (at `slot`, its bid committing to
    /// `blobs` blobs). A second envelope for the same root replaces nothing: the first stays.
    /// Returns the payload's availability (under `custody`) and the roots evicted to make room;
    /// `None` for a block at or before the finalized slot.
    pub fn put_envelope(
        &mut self,
        root: Root,
        slot: Slot,
        blobs: usize,
        envelope: Arc<SignedExecutionPayloadEnvelope<E>>,
        custody: &BTreeSet<ColumnIndex>,
    ) -> Option<(PayloadAvailability<E>, Vec<Root>)> {
        if self.is_finalized(slot) {
            return None;
        }
        let (parts, evicted) = self.entry(root, slot);
        parts.envelope.get_or_insert(envelope);
        parts.blobs = Some(blobs);
        Some((self.availability(root, custody), evicted))
    }

    /// Takes gossip-verified columns of block `root` (at `slot`); those outside `custody` and
    /// repeats are not kept. Returns the payload's availability and the roots evicted; `None`
    /// when nothing was kept (no custody column, or a finalized slot).
    pub fn put_columns(
        &mut self,
        root: Root,
        slot: Slot,
        columns: Vec<Arc<DataColumnSidecar<E>>>,
        custody: &BTreeSet<ColumnIndex>,
    ) -> Option<(PayloadAvailability<E>, Vec<Root>)> {
        let kept: Vec<_> = columns
            .into_iter()
            .filter(|c| custody.contains(&c.index()))
            .collect();
        if kept.is_empty() || self.is_finalized(slot) {
            return None;
        }
        let (parts, evicted) = self.entry(root, slot);
        for column in kept {
            if parts.blobs.is_none() {
                parts.blobs = Some(column_cells(&column));
            }
            parts.columns.entry(column.index()).or_insert(column);
        }
        Some((self.availability(root, custody), evicted))
    }

    /// The payload's availability; a ready one leaves.
    fn availability(
        &mut self,
        root: Root,
        custody: &BTreeSet<ColumnIndex>,
    ) -> PayloadAvailability<E> {
        let parts = self
            .pending
            .get(&root)
            .expect("callers ask only for roots they have just made an entry for");
        // No commitment, no column to wait for.
        let missing_columns: Vec<ColumnIndex> = match parts.blobs {
            Some(0) => Vec::new(),
            Some(_) | None => custody
                .iter()
                .copied()
                .filter(|i| !parts.columns.contains_key(i))
                .collect(),
        };
        if parts.envelope.is_some() && missing_columns.is_empty() {
            let parts = self.remove(&root).expect("the entry was read just above");
            let envelope = parts.envelope.expect("checked above");
            let columns = match parts.blobs {
                Some(0) => Vec::new(),
                Some(_) | None => parts.columns.into_values().collect(),
            };
            return PayloadAvailability::Ready(Box::new(ReadyPayload {
                block_root: root,
                slot: parts.slot,
                envelope,
                columns,
            }));
        }
        PayloadAvailability::Missing(MissingPayloadParts {
            block_root: root,
            envelope_known: parts.envelope.is_some(),
            missing_columns,
        })
    }

    /// Drops what waits for `root` (its payload was imported another way, or its block went).
    pub fn remove(&mut self, root: &Root) -> Option<ReadyOrNot<E>> {
        let parts = self.pending.remove(root)?;
        self.arrival.retain(|r| r != root);
        Some(ReadyOrNot {
            slot: parts.slot,
            envelope: parts.envelope,
            blobs: parts.blobs,
            columns: parts.columns,
        })
    }

    /// Drops every entry at or before `finalized_slot` (their blocks are finalized, or
    /// abandoned by finality).
    pub fn prune(&mut self, finalized_slot: Slot) {
        self.finalized_slot = self.finalized_slot.max(finalized_slot);
        let cut = self.finalized_slot;
        self.pending.retain(|_, parts| parts.slot > cut);
        let pending = &self.pending;
        self.arrival.retain(|root| pending.contains_key(root));
    }

    fn is_finalized(&self, slot: Slot) -> bool {
        self.finalized_slot > 0 && slot <= self.finalized_slot
    }
}

/// What was removed for a root: the parts held, whether complete or not.
#[derive(Debug)]
pub struct ReadyOrNot<E: EthSpec> {
    /// The block's slot.
    pub slot: Slot,
    /// The envelope, if it came.
    pub envelope: Option<Arc<SignedExecutionPayloadEnvelope<E>>>,
    /// The bid's number of commitments, if known.
    pub blobs: Option<usize>,
    /// The custody columns held.
    pub columns: BTreeMap<ColumnIndex, Arc<DataColumnSidecar<E>>>,
}

/// The cells of a column: one per blob commitment.
fn column_cells<E: EthSpec>(column: &DataColumnSidecar<E>) -> usize {
    match column {
        DataColumnSidecar::Fulu(c) => c.column.len(),
        DataColumnSidecar::Gloas(c) => c.column.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec;

    type E = MinimalEthSpec;

    fn envelope(root: Root) -> Arc<SignedExecutionPayloadEnvelope<E>> {
        let payload = types::gloas::ExecutionPayload::<E> {
            parent_hash: Default::default(),
            fee_recipient: Default::default(),
            state_root: Default::default(),
            receipts_root: Default::default(),
            logs_bloom: Default::default(),
            prev_randao: Default::default(),
            block_number: 0,
            gas_limit: 0,
            gas_used: 0,
            timestamp: 0,
            extra_data: Default::default(),
            base_fee_per_gas: Default::default(),
            block_hash: Default::default(),
            transactions: Default::default(),
            withdrawals: Default::default(),
            blob_gas_used: 0,
            excess_blob_gas: 0,
            block_access_list: Default::default(),
            slot_number: 0,
        };
        Arc::new(SignedExecutionPayloadEnvelope {
            message: types::gloas::ExecutionPayloadEnvelope {
                payload,
                execution_requests: Default::default(),
                builder_index: 0,
                beacon_block_root: root,
                parent_beacon_block_root: Root::ZERO,
            },
            signature: Default::default(),
        })
    }

    fn column(root: Root, index: u64, slot: Slot, cells: usize) -> Arc<DataColumnSidecar<E>> {
        let cell = types::Cell::<E>::new(vec![0; types::Cell::<E>::default().len()]).unwrap();
        Arc::new(DataColumnSidecar::Gloas(types::gloas::DataColumnSidecar {
            index,
            column: vec![cell; cells].into(),
            kzg_proofs: vec![types::KZGProof::default(); cells].into(),
            slot,
            beacon_block_root: root,
        }))
    }

    fn custody() -> BTreeSet<ColumnIndex> {
        [1, 3].into_iter().collect()
    }

    fn ready(availability: Option<(PayloadAvailability<E>, Vec<Root>)>) -> ReadyPayload<E> {
        match availability.expect("kept").0 {
            PayloadAvailability::Ready(ready) => *ready,
            PayloadAvailability::Missing(missing) => panic!("still missing {missing:?}"),
        }
    }

    fn missing(availability: Option<(PayloadAvailability<E>, Vec<Root>)>) -> MissingPayloadParts {
        match availability.expect("kept").0 {
            PayloadAvailability::Missing(missing) => missing,
            PayloadAvailability::Ready(_) => panic!("ready too early"),
        }
    }

    #[test]
    fn an_envelope_without_commitments_is_ready_at_once() {
        let mut pending = PendingPayloads::<E>::new(4);
        let root = Root::repeat_byte(1);
        let ready = ready(pending.put_envelope(root, 5, 0, envelope(root), &custody()));
        assert!(ready.columns.is_empty());
        assert!(pending.is_empty());
    }

    #[test]
    fn the_envelope_waits_for_every_custody_column_in_either_order() {
        let root = Root::repeat_byte(2);
        // Envelope first.
        let mut pending = PendingPayloads::<E>::new(4);
        let m = missing(pending.put_envelope(root, 5, 2, envelope(root), &custody()));
        assert!(m.envelope_known);
        assert_eq!(m.missing_columns, vec![1, 3]);
        // A column outside the custody is not kept.
        assert!(
            pending
                .put_columns(root, 5, vec![column(root, 2, 5, 2)], &custody())
                .is_none()
        );
        let m = missing(pending.put_columns(root, 5, vec![column(root, 3, 5, 2)], &custody()));
        assert_eq!(m.missing_columns, vec![1]);
        let r = ready(pending.put_columns(root, 5, vec![column(root, 1, 5, 2)], &custody()));
        assert_eq!(
            r.columns.iter().map(|c| c.index()).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert!(pending.is_empty());

        // Columns first.
        let mut pending = PendingPayloads::<E>::new(4);
        let m = missing(pending.put_columns(
            root,
            5,
            vec![column(root, 1, 5, 2), column(root, 3, 5, 2)],
            &custody(),
        ));
        assert!(!m.envelope_known);
        assert!(m.missing_columns.is_empty());
        let r = ready(pending.put_envelope(root, 5, 2, envelope(root), &custody()));
        assert_eq!(r.columns.len(), 2);
    }

    #[test]
    fn the_oldest_root_is_evicted_past_capacity_and_finality_prunes() {
        let mut pending = PendingPayloads::<E>::new(2);
        let (a, b, c) = (
            Root::repeat_byte(1),
            Root::repeat_byte(2),
            Root::repeat_byte(3),
        );
        let custody = custody();
        let (_, evicted) = pending
            .put_envelope(a, 1, 1, envelope(a), &custody)
            .unwrap();
        assert!(evicted.is_empty());
        pending
            .put_envelope(b, 2, 1, envelope(b), &custody)
            .unwrap();
        let (_, evicted) = pending
            .put_envelope(c, 3, 1, envelope(c), &custody)
            .unwrap();
        assert_eq!(evicted, vec![a]);
        assert!(!pending.has_envelope(&a) && pending.has_envelope(&c));

        pending.prune(2);
        assert_eq!(pending.len(), 1);
        assert!(pending.has_envelope(&c));
        // At or before the finalized slot: not taken.
        assert!(
            pending
                .put_envelope(a, 2, 1, envelope(a), &custody)
                .is_none()
        );
    }
}
