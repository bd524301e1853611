//! Fork digests of the chain's schedule: which digest is current at an epoch, which fork a
//! digest (gossip topic, req/resp context bytes) names, and the next scheduled digest.

use types::{ChainSpec, Epoch, EthSpec, ForkDigest, ForkName, Root, Slot, Version};

/// `FAR_FUTURE_EPOCH`: no fork scheduled.
pub const FAR_FUTURE_EPOCH: Epoch = u64::MAX;

/// One digest boundary: a regular fork or (from Fulu on) a Blob-Parameters-Only fork.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DigestBoundary {
    /// The first epoch at which `digest` applies.
    pub epoch: Epoch,
    /// The regular fork in force at `epoch`.
    pub fork: ForkName,
    /// `compute_fork_digest(genesis_validators_root, epoch)`.
    pub digest: ForkDigest,
}

/// Every digest boundary of a chain, computed once from the spec and the genesis validators root.
///
/// [spec]: fulu/beacon-chain.md#modified-compute_fork_digest
#[derive(Debug, Clone)]
pub struct ForkContext {
    spec: ChainSpec,
    genesis_validators_root: Root,
    boundaries: Vec<DigestBoundary>,
}

impl ForkContext {
    /// Computes the digest of every scheduled regular fork and BPO fork.
    pub fn new(spec: ChainSpec, genesis_validators_root: Root) -> Self {
        let mut epochs: Vec<Epoch> = ForkName::ALL
            .into_iter()
            .filter_map(|fork| spec.fork_epoch(fork))
            .collect();
        if let Some(fulu) = spec.fork_epoch(ForkName::Fulu) {
            epochs.extend(
                spec.blob_schedule
                    .iter()
                    .map(|entry| entry.epoch)
                    .filter(|epoch| *epoch >= fulu && *epoch != FAR_FUTURE_EPOCH),
            );
        }
        epochs.sort_unstable();
        epochs.dedup();
        let mut boundaries: Vec<DigestBoundary> = Vec::with_capacity(epochs.len());
        for epoch in epochs {
            let digest = spec.compute_fork_digest(genesis_validators_root, epoch);
            if boundaries.last().is_some_and(|b| b.digest == digest) {
                continue;
            }
            boundaries.push(DigestBoundary {
                epoch,
                fork: spec.fork_name_at_epoch(epoch),
                digest,
            });
        }
        Self {
            spec,
            genesis_validators_root,
            boundaries,
        }
    }

    /// The chain configuration.
    pub fn spec(&self) -> &ChainSpec {
        &self.spec
    }

    /// The genesis validators root the digests commit to.
    pub fn genesis_validators_root(&self) -> Root {
        self.genesis_validators_root
    }

    /// Every digest boundary, oldest first.
    pub fn boundaries(&self) -> &[DigestBoundary] {
        &self.boundaries
    }

    /// The boundary in force at `epoch`.
    pub fn boundary_at_epoch(&self, epoch: Epoch) -> DigestBoundary {
        self.boundaries
            .iter()
            .rev()
            .find(|b| b.epoch <= epoch)
            .copied()
            .unwrap_or(DigestBoundary {
                epoch: 0,
                fork: self.spec.fork_name_at_epoch(epoch),
                digest: self
                    .spec
                    .compute_fork_digest(self.genesis_validators_root, epoch),
            })
    }

    /// `compute_fork_digest(genesis_validators_root, epoch)`.
    pub fn digest_at_epoch(&self, epoch: Epoch) -> ForkDigest {
        self.boundary_at_epoch(epoch).digest
    }

    /// The digest of the epoch of `slot`: the context bytes of a req/resp chunk.
    pub fn digest_at_slot<E: EthSpec>(&self, slot: Slot) -> ForkDigest {
        self.digest_at_epoch(slot / E::SlotsPerEpoch::to_u64())
    }

    /// The regular fork a digest names, if it is one of this chain's digests.
    pub fn fork_of_digest(&self, digest: ForkDigest) -> Option<ForkName> {
        self.boundaries
            .iter()
            .find(|b| b.digest == digest)
            .map(|b| b.fork)
    }

    /// The epoch at which `digest` starts, if it is one of this chain's digests.
    pub fn epoch_of_digest(&self, digest: ForkDigest) -> Option<Epoch> {
        self.boundaries
            .iter()
            .find(|b| b.digest == digest)
            .map(|b| b.epoch)
    }

    /// The next boundary (regular or BPO fork) strictly after `epoch`.
    pub fn next_boundary(&self, epoch: Epoch) -> Option<DigestBoundary> {
        self.boundaries.iter().find(|b| b.epoch > epoch).copied()
    }

    /// The previous boundary: the one in force before the boundary in force at `epoch`.
    pub fn previous_boundary(&self, epoch: Epoch) -> Option<DigestBoundary> {
        let current = self.boundary_at_epoch(epoch);
        self.boundaries
            .iter()
            .rev()
            .find(|b| b.epoch < current.epoch)
            .copied()
    }

    /// The fork version of the next regular fork after `epoch`, or the current version when none is
    /// scheduled (`ENRForkID.next_fork_version`).
    ///
    /// [spec]: fulu/p2p-interface.md#eth2-field
    pub fn next_fork_version(&self, epoch: Epoch) -> Version {
        let current = self.spec.fork_name_at_epoch(epoch);
        current
            .next()
            .into_iter()
            .chain(current.next().and_then(ForkName::next))
            .find(|fork| {
                self.spec
                    .fork_epoch(*fork)
                    .is_some_and(|fork_epoch| fork_epoch > epoch)
            })
            .map(|fork| self.spec.fork_version(fork))
            .unwrap_or_else(|| self.spec.fork_version(current))
    }
}

use ssz_types::typenum::Unsigned;

#[cfg(test)]
mod tests {
    use super::*;

    fn fulu_spec_with_bpo() -> ChainSpec {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        spec.blob_schedule = vec![
            types::BlobScheduleEntry {
                epoch: 0,
                max_blobs_per_block: 9,
            },
            types::BlobScheduleEntry {
                epoch: 5,
                max_blobs_per_block: 12,
            },
        ];
        spec
    }

    #[test]
    fn bpo_forks_change_the_digest_within_fulu() {
        let ctx = ForkContext::new(fulu_spec_with_bpo(), Root::repeat_byte(7));
        let before = ctx.digest_at_epoch(4);
        let after = ctx.digest_at_epoch(5);
        assert_ne!(before, after);
        assert_eq!(ctx.fork_of_digest(before), Some(ForkName::Fulu));
        assert_eq!(ctx.fork_of_digest(after), Some(ForkName::Fulu));
        assert_eq!(ctx.next_boundary(0).map(|b| b.epoch), Some(5));
        assert_eq!(ctx.next_boundary(5), None);
        assert_eq!(ctx.previous_boundary(6).map(|b| b.digest), Some(before));
    }

    #[test]
    fn digests_match_compute_fork_digest() {
        let spec = ChainSpec::mainnet();
        let root = Root::repeat_byte(1);
        let ctx = ForkContext::new(spec.clone(), root);
        for b in ctx.boundaries() {
            assert_eq!(b.digest, spec.compute_fork_digest(root, b.epoch));
        }
        assert_eq!(
            ctx.fork_of_digest(ForkDigest::from([0xde, 0xad, 0xbe, 0xef])),
            None
        );
    }
}
