//! What happens to an attestation or aggregate once it passed validation (gossip or the Beacon
//! API), in one place: its vote goes to fork choice (queued until its slot has passed) and the
//! attestation into the operation pool, placed by the committees of its target epoch. The
//! router and the API each verify, report their verdicts and publish; then they call this.

use std::collections::HashMap;
use std::sync::Arc;

use operation_pool::OperationPool;
use state_processing::CommitteeCache;
use types::{Epoch, EthSpec};

use crate::chain::BeaconChain;
use crate::gossip::{ForkChoiceVote, VerifiedAggregate, VerifiedSingleAttestation};

/// What [`BeaconChain::accept_single_attestations`] and [`BeaconChain::accept_aggregates`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accepted {
    /// Attestations the operation pool took (or held already).
    pub pooled: usize,
    /// Attestations the pool did not take: no committees for their target epoch from the head
    /// state, or the pool refused them (logged).
    pub not_pooled: usize,
    /// Votes fork choice counted now.
    pub votes_applied: usize,
    /// Votes of the current slot, held until it has passed.
    pub votes_queued: usize,
    /// Votes fork choice refused (their block pruned, a target it does not know).
    pub votes_refused: usize,
}

impl<E: EthSpec> BeaconChain<E> {
    /// Accepts verified single attestations: their votes into fork choice, the attestations
    /// into `pool`.
    pub fn accept_single_attestations<'a>(
        &self,
        pool: &OperationPool<E>,
        verified: impl IntoIterator<Item = &'a VerifiedSingleAttestation>,
    ) -> Accepted {
        let mut committees = CommitteesByEpoch::default();
        let mut accepted = Accepted::default();
        let mut votes = Vec::new();
        for attestation in verified {
            votes.push(attestation.fork_choice_vote());
            let attestation = &attestation.attestation;
            let pooled = committees
                .of(self, attestation.data.target.epoch)
                .map(|c| pool.insert_single_attestation(attestation, &c));
            accepted.count_pooled(pooled, "attestation");
        }
        accepted.apply(self, votes);
        accepted
    }

    /// Accepts verified aggregates: their votes into fork choice, the aggregates into `pool`.
    pub fn accept_aggregates<'a>(
        &self,
        pool: &OperationPool<E>,
        verified: impl IntoIterator<Item = &'a VerifiedAggregate<E>>,
    ) -> Accepted {
        let mut committees = CommitteesByEpoch::default();
        let mut accepted = Accepted::default();
        let mut votes = Vec::new();
        for aggregate in verified {
            votes.push(aggregate.fork_choice_vote());
            let attestation = &aggregate.signed_aggregate.message.aggregate;
            let pooled = committees
                .of(self, attestation.data.target.epoch)
                .map(|c| pool.insert_attestation(attestation, &c));
            accepted.count_pooled(pooled, "aggregate");
        }
        accepted.apply(self, votes);
        accepted
    }

    /// Accepts verified aggregates in Gloas's container: their votes into fork choice
    /// (`data.index` the payload status they support). The operation pool holds Electra's
    /// containers only, so they are counted as not pooled.
    pub fn accept_gloas_aggregates<'a>(
        &self,
        verified: impl IntoIterator<
            Item = &'a VerifiedAggregate<E, types::gloas::SignedAggregateAndProof<E>>,
        >,
    ) -> Accepted {
        let mut accepted = Accepted::default();
        let votes: Vec<_> = verified
            .into_iter()
            .map(VerifiedAggregate::fork_choice_vote)
            .collect();
        accepted.not_pooled = votes.len();
        accepted.apply(self, votes);
        accepted
    }
}

impl Accepted {
    fn count_pooled<T>(
        &mut self,
        outcome: Option<Result<T, operation_pool::OpPoolError>>,
        what: &'static str,
    ) {
        match outcome {
            Some(Ok(_)) => self.pooled += 1,
            Some(Err(e)) => {
                tracing::debug!(error = %e, what, "not pooled");
                self.not_pooled += 1;
            }
            None => {
                tracing::debug!(what, "no committees for the target epoch: not pooled");
                self.not_pooled += 1;
            }
        }
    }

    fn apply<E: EthSpec>(&mut self, chain: &BeaconChain<E>, votes: Vec<ForkChoiceVote>) {
        if votes.is_empty() {
            return;
        }
        let (applied, queued, refused) = chain.apply_votes_to_fork_choice(votes);
        self.votes_applied = applied;
        self.votes_queued = queued;
        self.votes_refused = refused;
    }
}

/// The committees of each target epoch from the head state (the pool places an attester in
/// its aggregate by its committee position), computed once per call.
#[derive(Default)]
struct CommitteesByEpoch(HashMap<Epoch, Option<Arc<CommitteeCache>>>);

impl CommitteesByEpoch {
    fn of<E: EthSpec>(
        &mut self,
        chain: &BeaconChain<E>,
        epoch: Epoch,
    ) -> Option<Arc<CommitteeCache>> {
        self.0
            .entry(epoch)
            .or_insert_with(|| {
                let mut state = chain.head().state.clone();
                let (view, caches) = state.view_mut().ok()?;
                caches.committees(&view.as_ref(), epoch).ok()
            })
            .clone()
    }
}
