//! Read-only answers for the Gloas duties that the Beacon API serves: the
//! `PayloadAttestationData` a payload timeliness committee (PTC) member signs for a slot, the
//! PTC fork choice keeps for a block (the committee whose votes on the block's payload it
//! counts), and the payload signal (`data.index`) of an attester's vote.
//!
//! **The block seen for a slot** is the canonical one (the head's ancestor at the slot) when
//! the head's chain has a block there, else the first block of the slot fork choice took.
//!
//! **`payload_present`**: the block's envelope imported (its FULL node exists) and its
//! payload's `engine_newPayload` answered (the timeline's `executed` stage, recorded by
//! `import_verified_envelope`) no later than `get_payload_due_ms()` into the slot. The chain
//! records when an envelope was imported, not when it was first seen: an envelope seen before
//! the deadline whose import ended after it reads as not present (a conservative vote).
//!
//! **`blob_data_available`**: the envelope imported, which requires the node's custody columns
//! of the bid's commitments verified (`verify_execution_payload_envelope`). Columns complete for
//! a block whose envelope has not come are not seen here.
//!
//! [spec]: gloas/validator.md#constructing-the-payloadattestationmessage

use ssz_types::typenum::Unsigned;
use types::{EthSpec, Root, Slot, ValidatorIndex, gloas::PayloadAttestationData};

use fork_choice::PayloadStatus;

use crate::chain::{BeaconChain, HeadSnapshot};

/// Basis points of a slot (`BASIS_POINTS`).
const BASIS_POINTS: u64 = 10_000;

/// Why no `PayloadAttestationData` is produced for a slot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadAttestationDataError {
    /// The chain's fork choice has not crossed into Gloas: there is no PTC to vote.
    #[error("the chain has not reached Gloas: no payload timeliness committee votes yet")]
    NotGloas,
    /// No block of the slot has been seen (the spec: do not submit a payload attestation).
    #[error("no block seen for slot {0}")]
    NoBlock(Slot),
}

impl PayloadAttestationDataError {
    /// Whose fault this is: nobody's (the chain is not there yet, or the slot has no block).
    pub fn fault(&self) -> Option<fork_choice::Fault> {
        match self {
            Self::NotGloas | Self::NoBlock(_) => None,
        }
    }
}

impl<E: EthSpec> BeaconChain<E> {
    /// The block of `slot` fork choice holds that a PTC member votes on: the canonical one,
    /// else the first one taken. `None` before Gloas or when no block of the slot is known.
    fn block_seen_at(&self, slot: Slot) -> Result<Root, PayloadAttestationDataError> {
        let head = self.head().block_root;
        let fc = self.fork_choice.lock();
        let store = &fc
            .gloas_chain()
            .ok_or(PayloadAttestationDataError::NotGloas)?
            .store;
        let at_slot = |root: &Root| store.block_info(root).is_some_and(|b| b.slot == slot);
        store
            .get_ancestor(&head, slot)
            .ok()
            .filter(at_slot)
            .or_else(|| store.block_roots().iter().copied().find(at_slot))
            .ok_or(PayloadAttestationDataError::NoBlock(slot))
    }

    /// `PayloadAttestationData` for `slot` as a PTC member of this node would sign it now: the
    /// block seen for the slot, whether its payload arrived by the payload deadline, whether its
    /// blob data is available (see the module's notes for what the chain can tell).
    ///
    /// [spec]: gloas/validator.md#constructing-the-payloadattestationmessage
    pub fn payload_attestation_data(
        &self,
        slot: Slot,
    ) -> Result<PayloadAttestationData, PayloadAttestationDataError> {
        let root = self.block_seen_at(slot)?;
        let verified = self.is_payload_verified(&root);
        let spec = self.spec();
        let due_ms = spec.payload_due_bps.saturating_mul(spec.slot_duration_ms) / BASIS_POINTS;
        let in_time = self
            .block_timeline(&root)
            .and_then(|t| t.executed)
            .is_some_and(|at| at <= i64::try_from(due_ms).unwrap_or(i64::MAX));
        Ok(PayloadAttestationData {
            beacon_block_root: root,
            slot,
            payload_present: verified && in_time,
            blob_data_available: verified,
        })
    }

    /// `data.index` of an attestation for `slot` whose vote is `beacon_block_root`, from Gloas
    /// on the payload status the vote supports, as this node's fork choice sees it: 0 for a
    /// block of `slot` itself (a same-slot vote always says 0); else 1 when
    /// [`Self::canonical_payload_status`] says FULL. 0 before Gloas, and for a block fork choice
    /// does not hold or the head's chain does not contain.
    ///
    /// [spec]: gloas/validator.md#attestation
    pub fn attestation_payload_index(&self, slot: Slot, beacon_block_root: Root) -> u64 {
        if !self.spec().fork_name_at_slot::<E>(slot).gloas_enabled() {
            return 0;
        }
        let block_slot = {
            let fc = self.fork_choice.lock();
            let Some(block) = fc
                .gloas_chain()
                .and_then(|g| g.store.block_info(&beacon_block_root))
            else {
                return 0;
            };
            block.slot
        };
        if block_slot == slot {
            return 0;
        }
        let status = self.canonical_payload_status(&self.head(), beacon_block_root, block_slot);
        u64::from(status == Some(PayloadStatus::Full))
    }

    /// The payload status of block `block_root` (at `block_slot`) on `head`'s chain: for the
    /// head itself, FULL when fork choice's head is its FULL node, else PENDING (its payload
    /// may still come, or the next block still build on it); for an ancestor, FULL when the
    /// head's chain built on its payload (the head state's `execution_payload_availability` at
    /// its slot, set by `process_parent_execution_payload` of its child), else EMPTY. `None`
    /// for a block the head's chain does not contain and one older than
    /// `SLOTS_PER_HISTORICAL_ROOT` slots. A block before Gloas answers as fork choice holds it
    /// (FULL from the crossing on): callers that show only Gloas payloads check the fork.
    ///
    /// [spec]: gloas/beacon-chain.md#modified-process_slot
    pub fn canonical_payload_status(
        &self,
        head: &HeadSnapshot<E>,
        block_root: Root,
        block_slot: Slot,
    ) -> Option<PayloadStatus> {
        if head.block_root == block_root {
            return Some(match head.payload_status {
                Some(PayloadStatus::Full) => PayloadStatus::Full,
                Some(PayloadStatus::Empty | PayloadStatus::Pending) | None => {
                    PayloadStatus::Pending
                }
            });
        }
        let n = E::SlotsPerHistoricalRoot::to_u64();
        if block_slot >= head.slot || head.slot - block_slot > n {
            return None;
        }
        let view = head.state.view().ok()?;
        let i = (block_slot % n) as usize;
        if view.block_roots.get(i) != Some(&block_root) {
            return None;
        }
        let built_on = view
            .gloas()
            .ok()
            .and_then(|g| g.execution_payload_availability.get(i).ok())
            .unwrap_or(false);
        Some(if built_on {
            PayloadStatus::Full
        } else {
            PayloadStatus::Empty
        })
    }

    /// The payload timeliness committee fork choice keeps for Gloas block `root` (`get_ptc` on
    /// its post-state for its slot), in committee order; `None` for a block it does not hold
    /// and before Gloas.
    pub fn block_ptc(&self, root: &Root) -> Option<Vec<ValidatorIndex>> {
        self.fork_choice
            .lock()
            .gloas_chain()
            .and_then(|g| g.store.ptc(root))
            .map(<[ValidatorIndex]>::to_vec)
    }
}
