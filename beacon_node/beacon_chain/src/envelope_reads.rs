//! What the req/resp server reads from the chain: the canonical chain's block roots in a slot
//! range (blocks by range, columns by range), and Gloas's execution payload envelopes by root and
//! by range (`ExecutionPayloadEnvelopesByRoot` / `ByRange` v1), from the store's envelope table
//! (the envelopes the chain imported, kept as received, `gloas_import`).
//!
//! **Which envelopes a range serves**: those of the canonical chain's blocks in the range whose
//! payload is in the canonical chain (FULL on the head's chain): a block's payload is when the
//! next canonical block's bid builds on it (its `parent_block_hash` is the payload's
//! `block_hash`), the head's when fork choice's head is its FULL node. Empty slots, EMPTY blocks,
//! and blocks before Gloas have none.
//!
//! **The serving window**: envelopes from `max(GLOAS_FORK_EPOCH, current_epoch -
//! compute_min_epochs_for_block_requests())` on (Gloas's window, 14,299 epochs on mainnet). A
//! range wholly before the Gloas fork holds no envelope: an empty answer. A range after the fork
//! but wholly before the window (or before the earliest block the node holds) is not served:
//! [`EnvelopeRequestError::Unavailable`], `ResourceUnavailable` on the wire, as for blocks. By
//! root, an envelope before the window is left out of the answer (the spec lets a server leave it
//! out or answer `ResourceUnavailable`).
//!
//! [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1,
//! gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use fork_choice::PayloadStatus;
use store::StoreError;
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{EthSpec, Hash32, Root, SignedBeaconBlock, Slot};

use crate::chain::BeaconChain;

/// Why an `ExecutionPayloadEnvelopesByRange` request is not answered with envelopes.
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeRequestError {
    /// A range of no slot (`count` 0).
    #[error("count must be > 0")]
    ZeroCount,
    /// The whole range is before the first slot whose envelopes the node serves.
    #[error("envelopes before slot {earliest} are not served")]
    Unavailable {
        /// The first slot whose envelopes the node serves.
        earliest: Slot,
    },
    /// The store failed.
    #[error("reading envelopes: {0}")]
    Store(#[from] StoreError),
}

impl EnvelopeRequestError {
    /// Whose fault this is: the requester's ([`fork_choice::Fault::Message`]: a malformed
    /// request), ours ([`fork_choice::Fault::Local`]: the store), or nobody's (`None`: the node
    /// does not hold that range).
    pub fn fault(&self) -> Option<fork_choice::Fault> {
        match self {
            Self::ZeroCount => Some(fork_choice::Fault::Message),
            Self::Unavailable { .. } => None,
            Self::Store(_) => Some(fork_choice::Fault::Local),
        }
    }
}

/// The canonical blocks of a slot range and what follows them.
struct CanonicalRange {
    /// `(slot, root)` of the canonical blocks in the range, in slot order.
    blocks: Vec<(Slot, Root)>,
    /// The first canonical block after the range; `None` when the range reaches the head.
    successor: Option<Root>,
}

impl<E: EthSpec> BeaconChain<E> {
    /// The canonical chain's block roots in `[start, end)` in slot order: finalized slots from
    /// the store's slot index, the rest by walking the head's ancestry among the store's hot
    /// blocks.
    pub fn canonical_block_roots(
        &self,
        start: Slot,
        end: Slot,
    ) -> Result<Vec<(Slot, Root)>, StoreError> {
        let head = self.head().block_root;
        Ok(self.canonical_walk(start, end, head)?.blocks)
    }

    /// [`Self::canonical_block_roots`] of `[start, end)` on the chain of `head`, with the first
    /// canonical block at or after `end`.
    fn canonical_walk(
        &self,
        start: Slot,
        end: Slot,
        head: Root,
    ) -> Result<CanonicalRange, StoreError> {
        let store = self.store();
        let split_slot = store.split()?.map_or(0, |split| split.slot);
        let mut roots = Vec::new();
        for slot in start..end.min(split_slot.saturating_add(1)) {
            if let Some(root) = store.block_root_at_slot(slot)? {
                roots.push((slot, root));
            }
        }
        // The first finalized block after the range, when the range ends before the split.
        let mut successor = None;
        for slot in end..=split_slot {
            if let Some(root) = store.block_root_at_slot(slot)? {
                successor = Some(root);
                break;
            }
        }
        if successor.is_none() || end > split_slot.saturating_add(1) {
            let hot: HashMap<Root, (Slot, Root)> = store
                .hot_blocks()?
                .into_iter()
                .map(|(slot, root, parent)| (root, (slot, parent)))
                .collect();
            let mut descending = Vec::new();
            let mut lowest_after = None;
            let mut root = head;
            while let Some(&(slot, parent)) = hot.get(&root) {
                if slot <= split_slot || slot < start {
                    break;
                }
                if slot < end {
                    descending.push((slot, root));
                } else {
                    lowest_after = Some(root);
                }
                root = parent;
            }
            roots.extend(descending.into_iter().rev());
            successor = successor.or(lowest_after);
        }
        Ok(CanonicalRange {
            blocks: roots,
            successor,
        })
    }

    /// The first slot whose envelopes the node serves:
    /// `max(GLOAS_FORK_EPOCH, current_epoch - compute_min_epochs_for_block_requests())`'s first
    /// slot, Gloas's window (`ChainSpec::compute_min_epochs_for_block_requests_gloas`).
    ///
    /// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1
    pub fn envelope_serving_start_slot(&self) -> Slot {
        let slots_per_epoch = E::slots_per_epoch();
        let current_epoch = self.slot_at_ms(self.now_ms()) / slots_per_epoch;
        let window_start =
            current_epoch.saturating_sub(self.spec().compute_min_epochs_for_block_requests_gloas());
        window_start
            .max(self.spec().gloas_fork_epoch)
            .saturating_mul(slots_per_epoch)
    }

    /// `ExecutionPayloadEnvelopesByRoot`: the envelopes the store holds of the blocks `roots`,
    /// in request order (at most `MAX_REQUEST_PAYLOADS`), unknown ones and those before the
    /// serving window ([`Self::envelope_serving_start_slot`]) left out.
    ///
    /// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1
    pub fn execution_payload_envelopes_by_root(
        &self,
        roots: &[Root],
    ) -> Result<Vec<Arc<SignedExecutionPayloadEnvelope<E>>>, StoreError> {
        let earliest = self.envelope_serving_start_slot();
        let max = usize::try_from(self.spec().max_request_payloads).unwrap_or(usize::MAX);
        let mut envelopes = Vec::new();
        for root in roots.iter().take(max) {
            if let Some(envelope) = self.store().get_execution_payload_envelope(root)?
                && envelope.message.payload.slot_number >= earliest
            {
                envelopes.push(Arc::new(envelope));
            }
        }
        Ok(envelopes)
    }

    /// `ExecutionPayloadEnvelopesByRange`: the envelopes of the canonical chain's payloads in
    /// `[start_slot, start_slot + count)` (`count` capped at `MAX_REQUEST_BLOCKS_DENEB` and
    /// `MAX_REQUEST_PAYLOADS`), in slot order, from the first slot served on: the serving window
    /// ([`Self::envelope_serving_start_slot`]) or `earliest_available_slot` (the earliest block
    /// the node holds), whichever is later. A range wholly before the Gloas fork has none; one
    /// wholly before the first slot served is [`EnvelopeRequestError::Unavailable`].
    ///
    /// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1
    pub fn execution_payload_envelopes_by_range(
        &self,
        start_slot: Slot,
        count: u64,
        earliest_available_slot: Slot,
    ) -> Result<Vec<Arc<SignedExecutionPayloadEnvelope<E>>>, EnvelopeRequestError> {
        if count == 0 {
            return Err(EnvelopeRequestError::ZeroCount);
        }
        let spec = self.spec();
        let count = count
            .min(spec.max_request_blocks_deneb)
            .min(spec.max_request_payloads);
        let end = start_slot.saturating_add(count);
        let gloas_start = spec.gloas_fork_epoch.saturating_mul(E::slots_per_epoch());
        if end <= gloas_start {
            return Ok(Vec::new());
        }
        let earliest = self
            .envelope_serving_start_slot()
            .max(earliest_available_slot);
        if end <= earliest {
            return Err(EnvelopeRequestError::Unavailable { earliest });
        }
        let start = start_slot.max(earliest);
        let store = self.store();
        let stored: HashSet<Root> = store
            .execution_payload_envelope_roots(start, end)?
            .into_iter()
            .map(|(_, root)| root)
            .collect();
        if stored.is_empty() {
            return Ok(Vec::new());
        }
        let head = self.head();
        let CanonicalRange { blocks, successor } =
            self.canonical_walk(start, end, head.block_root)?;
        let mut envelopes = Vec::new();
        for (i, (_, root)) in blocks.iter().enumerate() {
            if !stored.contains(root) {
                continue;
            }
            let Some(envelope) = store.get_execution_payload_envelope(root)? else {
                continue;
            };
            let canonical = match blocks.get(i + 1).map(|(_, next)| *next).or(successor) {
                Some(next) => {
                    store
                        .get_block(&next)?
                        .as_ref()
                        .and_then(bid_parent_block_hash)
                        == Some(envelope.message.payload.block_hash)
                }
                // The last block of the range is the head: its payload is canonical when the
                // head is its FULL node.
                None => {
                    *root == head.block_root && head.payload_status == Some(PayloadStatus::Full)
                }
            };
            if canonical {
                envelopes.push(Arc::new(envelope));
            }
        }
        Ok(envelopes)
    }
}

/// The execution block hash a block's bid builds on (Gloas on; `None` before).
fn bid_parent_block_hash<E: EthSpec>(block: &SignedBeaconBlock<E>) -> Option<Hash32> {
    match block {
        SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Electra(_)
        | SignedBeaconBlock::Fulu(_) => None,
        SignedBeaconBlock::Gloas(block) => Some(
            block
                .message
                .body
                .signed_execution_payload_bid
                .message
                .parent_block_hash,
        ),
    }
}
