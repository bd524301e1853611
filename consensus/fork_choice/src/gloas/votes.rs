//! The Gloas latest messages (`LatestMessage(slot, root, payload_present)`) and the node
//! deltas they imply: each vote is counted on the node `get_supported_node` names, and only the
//! votes that changed since the last count are visited.

use rustc_hash::FxHashSet;
use types::{Gwei, Root, Slot, ValidatorIndex};

use crate::error::Error;

/// `LatestMessage(slot, root, payload_present)`, with where its block's nodes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatestMessage {
    /// `message.slot`: the attestation's slot.
    pub slot: Slot,
    /// `message.root`: the attested block.
    pub root: Root,
    /// `message.payload_present`: `data.index == 1`.
    pub payload_present: bool,
    /// The slot of block `root`.
    pub block_slot: Slot,
    /// The index of block `root`'s PENDING node; its EMPTY and FULL nodes follow it.
    pub pending: u32,
}

impl LatestMessage {
    /// `get_supported_node(store, message)`: FULL or EMPTY (by `payload_present`) for a vote
    /// of a later slot than its block, else PENDING; as a node index.
    ///
    /// [spec]: gloas/fork-choice.md#modified-get_supported_node
    pub fn supported_node(&self) -> usize {
        let pending = self.pending as usize;
        if self.block_slot < self.slot {
            pending + 1 + usize::from(self.payload_present)
        } else {
            pending
        }
    }
}

/// Every validator's latest message and the node and balance it is counted with.
#[derive(Debug, Clone, Default)]
pub struct GloasVotes {
    latest: Vec<Option<LatestMessage>>,
    applied: Vec<Option<(u32, Gwei)>>,
    /// Validators whose vote changed since the last [`Self::compute_deltas`].
    dirty: Vec<ValidatorIndex>,
    is_dirty: Vec<bool>,
    /// Every vote must be counted again (new balances).
    all_dirty: bool,
}

impl GloasVotes {
    fn grow(&mut self, index: usize) {
        if self.latest.len() <= index {
            self.latest.resize(index + 1, None);
            self.applied.resize(index + 1, None);
            self.is_dirty.resize(index + 1, false);
        }
    }

    /// Queues validator `index`'s vote to be counted again (an equivocation).
    pub fn mark(&mut self, index: ValidatorIndex) {
        let i = index as usize;
        self.grow(i);
        if !self.is_dirty[i] {
            self.is_dirty[i] = true;
            self.dirty.push(index);
        }
    }

    /// Queues every vote to be counted again (the justified balances changed).
    pub fn queue_all(&mut self) {
        self.all_dirty = true;
    }

    /// The latest message of validator `index`.
    pub fn latest(&self, index: ValidatorIndex) -> Option<&LatestMessage> {
        self.latest.get(index as usize).and_then(Option::as_ref)
    }

    /// The part of `update_latest_messages` for one validator: `message` replaces its latest
    /// message when it is of a later slot (or the first).
    pub fn process_attestation(&mut self, index: ValidatorIndex, message: LatestMessage) {
        let i = index as usize;
        self.grow(i);
        let newer = match &self.latest[i] {
            None => true,
            Some(latest) => message.slot > latest.slot,
        };
        if newer {
            self.latest[i] = Some(message);
            self.mark(index);
        }
    }

    /// The delta of each of `node_count` nodes from the votes that changed (all of them after
    /// [`Self::queue_all`]): the equivocating validators' votes leave, the others count with
    /// `balances`. The votes are then counted as they are now.
    pub fn compute_deltas(
        &mut self,
        node_count: usize,
        balances: &[Gwei],
        equivocating: &FxHashSet<ValidatorIndex>,
    ) -> Result<Vec<i64>, Error> {
        let mut deltas = vec![0i64; node_count];
        let dirty: Vec<ValidatorIndex> = if self.all_dirty {
            (0..self.latest.len() as u64).collect()
        } else {
            std::mem::take(&mut self.dirty)
        };
        let check_equivocating = !equivocating.is_empty();
        for &index in &dirty {
            let i = index as usize;
            let new = match self.latest[i] {
                Some(message) if !(check_equivocating && equivocating.contains(&index)) => {
                    let node = message.supported_node();
                    if node >= node_count {
                        return Err(Error::VoteNodeOutOfRange(node as u32));
                    }
                    Some((node as u32, balances.get(i).copied().unwrap_or(0)))
                }
                Some(_) | None => None,
            };
            let old = self.applied[i];
            if old == new {
                continue;
            }
            if let Some((node, balance)) = old {
                let delta = &mut deltas[node as usize];
                *delta = delta
                    .checked_sub_unsigned(balance)
                    .ok_or(Error::DeltaOverflow)?;
            }
            if let Some((node, balance)) = new {
                let delta = &mut deltas[node as usize];
                *delta = delta
                    .checked_add_unsigned(balance)
                    .ok_or(Error::DeltaOverflow)?;
            }
            self.applied[i] = new;
        }
        for &index in &dirty {
            self.is_dirty[index as usize] = false;
        }
        self.dirty.clear();
        self.all_dirty = false;
        Ok(deltas)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(slot: Slot, block_slot: Slot, payload_present: bool) -> LatestMessage {
        LatestMessage {
            slot,
            root: Root::from([1; 32]),
            payload_present,
            block_slot,
            pending: 3,
        }
    }

    #[test]
    fn a_vote_moves_only_to_a_later_slot_and_leaves_when_equivocating() {
        let mut votes = GloasVotes::default();
        let balances = [0, 10];
        let none = FxHashSet::default();
        // Same slot as its block: PENDING (node 3).
        votes.process_attestation(1, message(1, 1, false));
        assert_eq!(
            votes.compute_deltas(6, &balances, &none).expect("in range"),
            vec![0, 0, 0, 10, 0, 0]
        );
        // A later slot with the payload: FULL (node 5).
        votes.process_attestation(1, message(2, 1, true));
        assert_eq!(
            votes.compute_deltas(6, &balances, &none).expect("in range"),
            vec![0, 0, 0, -10, 0, 10]
        );
        // An earlier or equal slot changes nothing.
        votes.process_attestation(1, message(2, 1, false));
        assert_eq!(
            votes.compute_deltas(6, &balances, &none).expect("in range"),
            vec![0; 6]
        );
        // Equivocating: the vote leaves.
        votes.mark(1);
        let equivocating: FxHashSet<ValidatorIndex> = [1].into_iter().collect();
        assert_eq!(
            votes
                .compute_deltas(6, &balances, &equivocating)
                .expect("in range"),
            vec![0, 0, 0, 0, 0, -10]
        );
        assert_eq!(votes.latest(1).map(|m| m.slot), Some(2));
    }
}
