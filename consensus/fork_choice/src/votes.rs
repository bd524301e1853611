//! Latest messages as one dense vector indexed by validator, and the weight changes (deltas)
//! they imply for the proto-array.
//!
//! Each entry remembers the node its weight currently sits on (`current`, with the balance
//! applied there) and the node of its latest message (`next`). Entries that change are queued,
//! so computing deltas after one slot of attestations touches only those validators; a change of
//! balances (a new justified checkpoint) revisits every entry once.
//!
//! [spec]: phase0/fork-choice.md#update_latest_messages

use types::{Epoch, ValidatorIndex};

use crate::error::Error;

/// No node: the validator has no latest message, or its block was pruned.
pub const NO_NODE: u32 = u32::MAX;

/// One validator's vote.
#[derive(Debug, Clone, Copy)]
struct Vote {
    /// The node whose weight holds `current_balance` of this validator's balance.
    current: u32,
    /// The node of the latest message.
    next: u32,
    /// The balance added to `current` when the weights were last updated.
    current_balance: u64,
    /// `latest_messages[i].epoch`.
    next_epoch: Epoch,
    /// Whether `latest_messages` has an entry for this validator.
    has_message: bool,
    /// Whether the validator is in `equivocating_indices`.
    equivocating: bool,
    /// Whether the entry is queued for the next delta computation.
    queued: bool,
}

impl Default for Vote {
    fn default() -> Self {
        Self {
            current: NO_NODE,
            next: NO_NODE,
            current_balance: 0,
            next_epoch: 0,
            has_message: false,
            equivocating: false,
            queued: false,
        }
    }
}

/// Every validator's latest message and the part of it already reflected in node weights.
#[derive(Debug, Clone, Default)]
pub struct VoteTracker {
    votes: Vec<Vote>,
    queue: Vec<u32>,
    all_queued: bool,
}

impl VoteTracker {
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

    fn enqueue(&mut self, index: ValidatorIndex) {
        let all = self.all_queued;
        if let Some(vote) = self.votes.get_mut(index as usize)
            && !vote.queued
            && !all
        {
            vote.queued = true;
            self.queue.push(index as u32);
        }
    }

    /// How many validators have an entry (those beyond have no message).
    pub fn len(&self) -> usize {
        self.votes.len()
    }

    /// Whether no validator has an entry.
    pub fn is_empty(&self) -> bool {
        self.votes.is_empty()
    }

    /// `latest_messages[index]`: the epoch and node of the validator's latest message, `None`
    /// when it has none (or its block was pruned: then `Some((epoch, None))`).
    pub fn latest_message(&self, index: ValidatorIndex) -> Option<(Epoch, Option<u32>)> {
        let vote = self.votes.get(usize::try_from(index).ok()?)?;
        vote.has_message
            .then_some((vote.next_epoch, (vote.next != NO_NODE).then_some(vote.next)))
    }

    /// Whether the validator is marked equivocating.
    pub fn is_equivocating(&self, index: ValidatorIndex) -> bool {
        self.votes
            .get(index as usize)
            .is_some_and(|vote| vote.equivocating)
    }

    /// The spec's update for one attesting index: a validator that is not equivocating takes
    /// the message when it has none or `target_epoch` is newer. Returns whether it was taken.
    ///
    /// [spec]: phase0/fork-choice.md#update_latest_messages
    pub fn process_attestation(
        &mut self,
        index: ValidatorIndex,
        node: u32,
        target_epoch: Epoch,
    ) -> Result<bool, Error> {
        let vote = self.entry(index)?;
        if vote.equivocating || (vote.has_message && target_epoch <= vote.next_epoch) {
            return Ok(false);
        }
        vote.has_message = true;
        vote.next_epoch = target_epoch;
        vote.next = node;
        self.enqueue(index);
        Ok(true)
    }

    /// Adds the validator to `equivocating_indices`: its weight leaves the tree at the next
    /// update and its messages are ignored from now on.
    pub fn set_equivocating(&mut self, index: ValidatorIndex) -> Result<(), Error> {
        let vote = self.entry(index)?;
        if !vote.equivocating {
            vote.equivocating = true;
            self.enqueue(index);
        }
        Ok(())
    }

    /// Every entry is revisited at the next update (balances changed).
    pub fn queue_all(&mut self) {
        self.all_queued = true;
    }

    /// The weight change of every node (`node_count` of them) from the queued entries, with
    /// `balances[i]` the weight of validator `i` now (0 beyond the end). Nothing is changed
    /// until [`VoteTracker::commit`].
    pub fn compute_deltas(&self, node_count: usize, balances: &[u64]) -> Result<Vec<i64>, Error> {
        let mut deltas = vec![0i64; node_count];
        let mut visit = |i: usize, vote: &Vote| -> Result<(), Error> {
            let balance = if vote.equivocating {
                0
            } else {
                balances.get(i).copied().unwrap_or(0)
            };
            if vote.current == vote.next && vote.current_balance == balance {
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
            if vote.next != NO_NODE && balance != 0 {
                let d = deltas
                    .get_mut(vote.next as usize)
                    .ok_or(Error::VoteNodeOutOfRange(vote.next))?;
                *d = d
                    .checked_add_unsigned(balance)
                    .ok_or(Error::DeltaOverflow)?;
            }
            Ok(())
        };
        if self.all_queued {
            for (i, vote) in self.votes.iter().enumerate() {
                visit(i, vote)?;
            }
        } else {
            for &i in &self.queue {
                visit(i as usize, &self.votes[i as usize])?;
            }
        }
        Ok(deltas)
    }

    /// Records the queued entries as applied with `balances` (after the deltas of
    /// [`VoteTracker::compute_deltas`] went into the tree) and empties the queue.
    pub fn commit(&mut self, balances: &[u64]) {
        let apply = |i: usize, vote: &mut Vote| {
            let balance = if vote.equivocating || vote.next == NO_NODE {
                0
            } else {
                balances.get(i).copied().unwrap_or(0)
            };
            vote.current = vote.next;
            vote.current_balance = balance;
            vote.queued = false;
        };
        if self.all_queued {
            for (i, vote) in self.votes.iter_mut().enumerate() {
                apply(i, vote);
            }
        } else {
            for &i in &self.queue {
                apply(i as usize, &mut self.votes[i as usize]);
            }
        }
        self.queue.clear();
        self.all_queued = false;
    }

    /// Renumbers the nodes after pruning (`remap[old] = new`); votes on dropped nodes point to
    /// no node (their weight left the tree with the node).
    pub fn remap(&mut self, remap: &[Option<usize>]) {
        let map = |node: u32| -> u32 {
            if node == NO_NODE {
                return NO_NODE;
            }
            remap
                .get(node as usize)
                .copied()
                .flatten()
                .map_or(NO_NODE, |n| n as u32)
        };
        for vote in &mut self.votes {
            vote.next = map(vote.next);
            let current = map(vote.current);
            if current == NO_NODE {
                vote.current_balance = 0;
            }
            vote.current = current;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_vote_leaves_its_old_node_and_joins_the_new_one() {
        let mut votes = VoteTracker::default();
        let balances = [10, 20];
        assert!(votes.process_attestation(0, 1, 1).expect("small index"));
        assert!(votes.process_attestation(1, 1, 1).expect("small index"));
        assert_eq!(
            votes.compute_deltas(3, &balances).expect("in range"),
            vec![0, 30, 0]
        );
        votes.commit(&balances);
        assert!(votes.process_attestation(0, 2, 2).expect("small index"));
        // Not newer: ignored.
        assert!(!votes.process_attestation(1, 2, 1).expect("small index"));
        assert_eq!(
            votes.compute_deltas(3, &balances).expect("in range"),
            vec![0, -10, 10]
        );
    }

    #[test]
    fn an_equivocating_validator_loses_its_weight_and_later_votes() {
        let mut votes = VoteTracker::default();
        let balances = [10];
        votes.process_attestation(0, 1, 1).expect("small index");
        votes.commit(&balances);
        votes.set_equivocating(0).expect("small index");
        assert_eq!(
            votes.compute_deltas(2, &balances).expect("in range"),
            vec![0, -10]
        );
        votes.commit(&balances);
        assert!(!votes.process_attestation(0, 0, 5).expect("small index"));
        assert_eq!(
            votes.compute_deltas(2, &balances).expect("in range"),
            vec![0, 0]
        );
    }

    #[test]
    fn new_balances_move_every_vote_by_the_difference() {
        let mut votes = VoteTracker::default();
        votes.process_attestation(0, 0, 1).expect("small index");
        votes.process_attestation(1, 1, 1).expect("small index");
        votes.commit(&[10, 10]);
        votes.queue_all();
        assert_eq!(
            votes.compute_deltas(2, &[15, 0]).expect("in range"),
            vec![5, -10]
        );
    }
}
