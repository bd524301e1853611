//! What happens to an attestation or aggregate once it passed validation (gossip or the Beacon
//! API), in one place: its vote goes to fork choice (queued until its slot has passed) and the
//! attestation into the operation pool, placed by the committees of its target epoch; a Gloas
//! payload attestation message's vote likewise, placed in the pool by its block's payload
//! timeliness committee. The router and the API each verify, report their verdicts and publish;
//! then they call this.

use std::collections::HashMap;
use std::sync::Arc;

use operation_pool::OperationPool;
use state_processing::CommitteeCache;
use types::{Epoch, EthSpec, Root, ValidatorIndex};

use crate::chain::{BeaconChain, ChainError};
use crate::gossip::{
    ForkChoiceVote, PayloadVotesApplied, VerifiedAggregate, VerifiedPayloadAttestationMessage,
    VerifiedSingleAttestation,
};

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
    /// (`data.index` the payload status they support), the aggregates into `pool`
    /// ([`OperationPool::insert_gloas_attestation`]).
    pub fn accept_gloas_aggregates<'a>(
        &self,
        pool: &OperationPool<E>,
        verified: impl IntoIterator<
            Item = &'a VerifiedAggregate<E, types::gloas::SignedAggregateAndProof<E>>,
        >,
    ) -> Accepted {
        let mut committees = CommitteesByEpoch::default();
        let mut accepted = Accepted::default();
        let mut votes = Vec::new();
        for aggregate in verified {
            votes.push(aggregate.fork_choice_vote());
            let attestation = &aggregate.signed_aggregate.message.aggregate;
            let pooled = committees
                .of(self, attestation.data.target.epoch)
                .map(|c| pool.insert_gloas_attestation(attestation, &c));
            accepted.count_pooled(pooled, "aggregate");
        }
        accepted.apply(self, votes);
        accepted
    }

    /// Accepts verified Gloas payload attestation messages: their votes into fork choice
    /// ([`Self::apply_payload_attestation_messages`], the head recomputed), then each message
    /// into `pool`, placed by the payload timeliness committee fork choice keeps for its block
    /// (a block fork choice no longer holds: not pooled).
    pub fn accept_payload_attestation_messages(
        &self,
        pool: &OperationPool<E>,
        verified: &[VerifiedPayloadAttestationMessage],
    ) -> Result<PayloadVotesAccepted, ChainError> {
        let votes = self.apply_payload_attestation_messages(verified)?;
        let mut accepted = PayloadVotesAccepted {
            votes,
            ..Default::default()
        };
        let mut committees: HashMap<Root, Option<Vec<ValidatorIndex>>> = HashMap::new();
        for v in verified {
            let root = v.message.data.beacon_block_root;
            let ptc = committees
                .entry(root)
                .or_insert_with(|| self.block_ptc(&root));
            let Some(ptc) = ptc else {
                tracing::debug!(block = %root, "payload attestation of a block fork choice no longer holds: not pooled");
                accepted.not_pooled += 1;
                continue;
            };
            match pool.insert_payload_attestation_message(&v.message, ptc) {
                Ok(_) => accepted.pooled += 1,
                Err(error) => {
                    tracing::debug!(%error, validator = v.message.validator_index, "payload attestation not pooled");
                    accepted.not_pooled += 1;
                }
            }
        }
        Ok(accepted)
    }
}

/// What [`BeaconChain::accept_payload_attestation_messages`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PayloadVotesAccepted {
    /// What fork choice did with the votes.
    pub votes: PayloadVotesApplied,
    /// Messages the operation pool took (or held already).
    pub pooled: usize,
    /// Messages the pool did not take (their block's committee unknown, or refused: logged).
    pub not_pooled: usize,
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
