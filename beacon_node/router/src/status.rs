//! The Status handshake: our Status from the chain's head and finalized checkpoint, and whether
//! a peer's Status belongs to our network and chain.
//!
//! [spec]: fulu/p2p-interface.md#status-v2, phase0/p2p-interface.md#status

use networking::rpc::StatusMessage;
use types::{Epoch, EthSpec, ForkDigest, Root, Slot};

use crate::Router;

/// Why a peer is on another network or chain (it is sent Goodbye(irrelevant network)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrrelevantPeer {
    /// Its fork digest is not ours.
    #[error("fork digest {theirs:?}, ours is {ours:?}")]
    ForkDigest {
        /// Our current fork digest.
        ours: ForkDigest,
        /// The peer's.
        theirs: ForkDigest,
    },
    /// Its finalized checkpoint is not the block our chain holds at that epoch.
    #[error("finalized {theirs} at epoch {epoch}, our chain has {ours} there")]
    FinalizedConflict {
        /// The peer's finalized epoch.
        epoch: Epoch,
        /// Our block at that checkpoint.
        ours: Root,
        /// The peer's finalized root.
        theirs: Root,
    },
}

/// The wall-clock epoch of the chain's clock.
pub(crate) fn current_epoch<E: EthSpec>(router: &Router<E>) -> Epoch {
    router.chain.slot_at_ms(router.chain.now_ms()) / E::slots_per_epoch()
}

/// Our Status: the current fork digest, the finalized checkpoint (root zero at the genesis
/// epoch, as the spec says), the head, the earliest slot we serve.
pub fn local_status<E: EthSpec>(router: &Router<E>) -> StatusMessage {
    let head = router.chain.head();
    let finalized = &head.finalized_checkpoint;
    StatusMessage {
        fork_digest: router
            .network
            .fork_context()
            .digest_at_epoch(current_epoch(router)),
        finalized_root: if finalized.epoch == 0 {
            Root::ZERO
        } else {
            finalized.root
        },
        finalized_epoch: finalized.epoch,
        head_root: head.block_root,
        head_slot: head.slot,
        earliest_available_slot: router.earliest_available_slot(),
    }
}

/// The block our chain holds at the start of `epoch` (the latest block at or before its first
/// slot), among finalized slots; `None` when the store holds none there (before our anchor).
fn finalized_block_at_epoch<E: EthSpec>(
    router: &Router<E>,
    epoch: Epoch,
) -> Result<Option<Root>, store::StoreError> {
    let store = router.chain.store();
    let start: Slot = epoch.saturating_mul(E::slots_per_epoch());
    // Empty slots have no root: look back over up to four epochs of empty slots, then give up
    // (a bounded read; a longer gap says nothing against the peer).
    let floor = start.saturating_sub(4 * E::slots_per_epoch());
    let mut slot = start;
    loop {
        if let Some(root) = store.block_root_at_slot(slot)? {
            return Ok(Some(root));
        }
        if slot <= floor || slot == 0 {
            return Ok(None);
        }
        slot -= 1;
    }
}

/// Whether a peer's Status is of our network and chain: the same fork digest, and a finalized
/// checkpoint that, when at or before ours, is the block our chain has at that epoch.
pub fn check_peer_status<E: EthSpec>(
    router: &Router<E>,
    status: &StatusMessage,
) -> Result<(), IrrelevantPeer> {
    let ours = local_status(router);
    if status.fork_digest != ours.fork_digest {
        return Err(IrrelevantPeer::ForkDigest {
            ours: ours.fork_digest,
            theirs: status.fork_digest,
        });
    }
    // The genesis epoch's checkpoint is the zero root for everyone; a later one than ours
    // cannot be checked yet (range sync will find out).
    if status.finalized_epoch == 0 || status.finalized_epoch > ours.finalized_epoch {
        return Ok(());
    }
    let expected = if status.finalized_epoch == ours.finalized_epoch {
        Some(ours.finalized_root)
    } else {
        match finalized_block_at_epoch(router, status.finalized_epoch) {
            Ok(root) => root,
            Err(e) => {
                // A store that cannot be read says nothing against the peer.
                tracing::warn!(error = %e, "cannot read the finalized chain for a status check");
                None
            }
        }
    };
    match expected {
        Some(root) if root != status.finalized_root => Err(IrrelevantPeer::FinalizedConflict {
            epoch: status.finalized_epoch,
            ours: root,
            theirs: status.finalized_root,
        }),
        _ => Ok(()),
    }
}
