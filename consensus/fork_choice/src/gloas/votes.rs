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

/// No node (no message, or not counted).
const NO_NODE: u32 = u32::MAX;
/// A latest message whose block was pruned: it keeps its slot and counts nowhere.
const PRUNED: u32 = u32::MAX - 1;

/// One validator's latest message as fork choice counts it, in one dense entry (what the
/// deltas visit per vote lies in one cache line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Vote {
    /// The latest message's slot (meaningless while `next` is [`NO_NODE`]).
    slot: Slot,
    /// The node the latest message supports.
    next: u32,
    /// The node the vote is counted on now.
    current: u32,
    /// The balance it is counted with now.
    current_balance: Gwei,
    /// Queued to be counted again.
    queued: bool,
}

impl Default for Vote {
    fn default() -> Self {
        Self {
            slot: 0,
            next: NO_NODE,
            current: NO_NODE,
            current_balance: 0,
            queued: false,
        }
    }
}

/// Every validator's latest message and the node and balance it is counted with.
#[derive(Debug, Clone, Default)]
pub struct GloasVotes {
    votes: Vec<Vote>,
    /// Validators whose vote changed since the last [`Self::compute_deltas`].
    queue: Vec<u32>,
    /// Every vote must be counted again (new balances).
    all_queued: bool,
}

impl GloasVotes {
    fn entry(&mut self, index: ValidatorIndex) -> Result<&mut Vote, Error> {
        let i = usize::try_from(index).map_err(|_| Error::ValidatorIndexTooLarge(index))?;
        if i >= u32::MAX as usize {
            return Err(Error::ValidatorIndexTooLarge(index));
        }
        if i >= self.votes.len() {
            self.votes.resize(i + 1, Vote::default());
        }
        Ok(&mut self.votes[i])
    }

    /// Queues validator `index`'s vote to be counted again (an equivocation).
    pub fn mark(&mut self, index: ValidatorIndex) -> Result<(), Error> {
        let all = self.all_queued;
        let vote = self.entry(index)?;
        if !vote.queued && !all {
            vote.queued = true;
            self.queue.push(index as u32);
        }
        Ok(())
    }

    /// Queues every vote to be counted again (the justified balances changed).
    pub fn queue_all(&mut self) {
        self.all_queued = true;
    }

    /// The slot of validator `index`'s latest message and the node it supports.
    pub fn latest(&self, index: ValidatorIndex) -> Option<(Slot, usize)> {
        self.votes
            .get(index as usize)
            .filter(|vote| vote.next != NO_NODE && vote.next != PRUNED)
            .map(|vote| (vote.slot, vote.next as usize))
    }

    /// The part of `update_latest_messages` for one validator: `message` replaces its latest
    /// message when it is of a later slot (or the first).
    pub fn process_attestation(
        &mut self,
        index: ValidatorIndex,
        message: &LatestMessage,
    ) -> Result<(), Error> {
        let all = self.all_queued;
        let vote = self.entry(index)?;
        if vote.next == NO_NODE || message.slot > vote.slot {
            vote.slot = message.slot;
            vote.next = u32::try_from(message.supported_node())
                .ok()
                .filter(|&node| node < PRUNED)
                .ok_or(Error::VoteNodeOutOfRange(u32::MAX))?;
            if !vote.queued && !all {
                vote.queued = true;
                self.queue.push(index as u32);
            }
        }
        Ok(())
    }

    /// Each validator's latest message: its slot and the node it supports (`None`: its block
    /// was pruned), by validator index.
    pub fn messages(&self) -> impl Iterator<Item = (ValidatorIndex, Slot, Option<u32>)> + '_ {
        self.votes
            .iter()
            .enumerate()
            .filter_map(|(i, vote)| match vote.next {
                NO_NODE => None,
                PRUNED => Some((i as ValidatorIndex, vote.slot, None)),
                node => Some((i as ValidatorIndex, vote.slot, Some(node))),
            })
    }

    /// Puts back a persisted latest message ([`Self::messages`]), counted at the next
    /// [`Self::compute_deltas`] (after [`Self::queue_all`]).
    pub fn restore_message(
        &mut self,
        index: ValidatorIndex,
        slot: Slot,
        node: Option<u32>,
    ) -> Result<(), Error> {
        let next = match node {
            Some(node) if node >= PRUNED => return Err(Error::VoteNodeOutOfRange(node)),
            Some(node) => node,
            None => PRUNED,
        };
        let vote = self.entry(index)?;
        vote.slot = slot;
        vote.next = next;
        Ok(())
    }

    /// Moves every vote to the node indices of a pruned tree (`remap`, from
    /// [`crate::gloas::NodeTree::prune`]). A latest message whose node was dropped stays a
    /// message of its slot (a later vote still replaces it only by a later slot) and counts
    /// nowhere; a balance counted on a dropped node is gone with it.
    pub fn remap(&mut self, remap: &[Option<usize>]) {
        let moved = |node: u32| -> Option<u32> {
            remap
                .get(node as usize)
                .copied()
                .flatten()
                .and_then(|index| u32::try_from(index).ok())
        };
        for vote in &mut self.votes {
            if vote.next != NO_NODE && vote.next != PRUNED {
                vote.next = moved(vote.next).unwrap_or(PRUNED);
            }
            if vote.current != NO_NODE {
                match moved(vote.current) {
                    Some(current) => vote.current = current,
                    None => {
                        vote.current = NO_NODE;
                        vote.current_balance = 0;
                    }
                }
            }
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
        let check_equivocating = !equivocating.is_empty();
        let mut visit = |i: usize, vote: &mut Vote| -> Result<(), Error> {
            vote.queued = false;
            let counted = vote.next != NO_NODE
                && vote.next != PRUNED
                && !(check_equivocating && equivocating.contains(&(i as u64)));
            let (node, balance) = if counted {
                (vote.next, balances.get(i).copied().unwrap_or(0))
            } else {
                (NO_NODE, 0)
            };
            if vote.current == node && vote.current_balance == balance {
                return Ok(());
            }
            if vote.current != NO_NODE {
                let d = deltas
                    .get_mut(vote.current as usize)
                    .ok_or(Error::VoteNodeOutOfRange(vote.current))?;
                *d = d
                    .checked_sub_unsigned(vote.current_balance)
                    .ok_or(Error::DeltaOverflow)?;
            }
            if node != NO_NODE {
                let d = deltas
                    .get_mut(node as usize)
                    .ok_or(Error::VoteNodeOutOfRange(node))?;
                *d = d
                    .checked_add_unsigned(balance)
                    .ok_or(Error::DeltaOverflow)?;
            }
            vote.current = node;
            vote.current_balance = balance;
            Ok(())
        };
        if self.all_queued {
            for (i, vote) in self.votes.iter_mut().enumerate() {
                visit(i, vote)?;
            }
        } else {
            for &i in &self.queue {
                visit(i as usize, &mut self.votes[i as usize])?;
            }
        }
        self.queue.clear();
        self.all_queued = false;
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
        votes
            .process_attestation(1, &message(1, 1, false))
            .expect("index fits");
        assert_eq!(
            votes.compute_deltas(6, &balances, &none).expect("in range"),
            vec![0, 0, 0, 10, 0, 0]
        );
        // A later slot with the payload: FULL (node 5).
        votes
            .process_attestation(1, &message(2, 1, true))
            .expect("index fits");
        assert_eq!(
            votes.compute_deltas(6, &balances, &none).expect("in range"),
            vec![0, 0, 0, -10, 0, 10]
        );
        // An earlier or equal slot changes nothing.
        votes
            .process_attestation(1, &message(2, 1, false))
            .expect("index fits");
        assert_eq!(
            votes.compute_deltas(6, &balances, &none).expect("in range"),
            vec![0; 6]
        );
        // Equivocating: the vote leaves.
        votes.mark(1).expect("index fits");
        let equivocating: FxHashSet<ValidatorIndex> = [1].into_iter().collect();
        assert_eq!(
            votes
                .compute_deltas(6, &balances, &equivocating)
                .expect("in range"),
            vec![0, 0, 0, 0, 0, -10]
        );
        assert_eq!(votes.latest(1), Some((2, 5)));
    }
}
