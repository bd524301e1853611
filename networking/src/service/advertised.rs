//! What the node advertises of itself: the ENR's `eth2` and `nfd` fields at an epoch, the
//! subnet bitfields of its MetaData and ENR, and the service's ENR update.

use ssz_types::BitVector;
use ssz_types::typenum::Unsigned;
use types::{Epoch, EthSpec, ForkDigest, ForkName};

use super::task::Service;
use crate::enr::{
    ATTNETS_ENR_KEY, CGC_ENR_KEY, ETH2_ENR_KEY, EnrForkId, NFD_ENR_KEY, SYNCNETS_ENR_KEY,
};
use crate::fork_context::{FAR_FUTURE_EPOCH, ForkContext};

pub(super) fn bits<N: Unsigned + Clone>(indices: &[u64]) -> BitVector<N> {
    let mut bits = BitVector::<N>::new();
    for index in indices {
        // Indices beyond the vector are ignored: the caller's subnet ids come from the spec's
        // subnet counts.
        let _ = bits.set(*index as usize, true);
    }
    bits
}

pub(super) fn fulu_scheduled(fork_context: &ForkContext) -> bool {
    fork_context.spec().fork_epoch(ForkName::Fulu).is_some()
}

/// `ENRForkID` at `epoch`.
///
/// [spec]: fulu/p2p-interface.md#eth2-field
pub fn enr_fork_id(fork_context: &ForkContext, epoch: Epoch) -> EnrForkId {
    let next = fork_context.next_boundary(epoch);
    EnrForkId {
        fork_digest: fork_context.digest_at_epoch(epoch),
        next_fork_version: fork_context.next_fork_version(epoch),
        next_fork_epoch: next.map(|b| b.epoch).unwrap_or(FAR_FUTURE_EPOCH),
    }
}

/// `nfd` at `epoch`: the next digest (regular or BPO fork), zero when none is scheduled.
///
/// [spec]: fulu/p2p-interface.md#next-fork-digest
pub fn next_fork_digest(fork_context: &ForkContext, epoch: Epoch) -> ForkDigest {
    fork_context
        .next_boundary(epoch)
        .map(|b| b.digest)
        .unwrap_or_default()
}

impl<E: EthSpec> Service<E> {
    pub(super) fn update_enr(&mut self) {
        let Some(discovery) = &self.discovery else {
            return;
        };
        let ctx = &self.fork_context;
        let fork_id = enr_fork_id(ctx, self.current_epoch);
        discovery.enr_insert(
            ETH2_ENR_KEY,
            &alloy_rlp::Bytes::from(ssz::Encode::as_ssz_bytes(&fork_id)),
        );
        discovery.enr_insert(
            ATTNETS_ENR_KEY,
            &alloy_rlp::Bytes::from(ssz::Encode::as_ssz_bytes(&self.metadata.attnets)),
        );
        discovery.enr_insert(
            SYNCNETS_ENR_KEY,
            &alloy_rlp::Bytes::from(ssz::Encode::as_ssz_bytes(&self.metadata.syncnets)),
        );
        if fulu_scheduled(ctx) {
            discovery.enr_insert(CGC_ENR_KEY, &self.metadata.custody_group_count);
            let nfd = next_fork_digest(ctx, self.current_epoch);
            discovery.enr_insert(NFD_ENR_KEY, &alloy_rlp::Bytes::from(nfd.to_vec()));
        }
    }
}
