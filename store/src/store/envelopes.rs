//! Gloas's signed execution payload envelopes, by the root of the beacon block they fulfil
//! (since schema 5), with an index by slot for range requests and pruning.
//!
//! An envelope is written in the batch of its block or in a later one, never before: a batch
//! refuses an envelope whose block it does not hold. Whatever refers to an envelope (fork
//! choice's FULL node of its block) is recorded after the batch that stores it commits, so a
//! crash leaves no reference to an envelope that is not stored. Envelopes are served for
//! `compute_min_epochs_for_block_requests()` epochs as Gloas defines it
//! ([`ChainSpec::compute_min_epochs_for_block_requests_gloas`]) and pruned after; those of
//! abandoned forks go with their blocks at finalization.
//!
//! [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyrange-v1,
//! gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1

use redb::{ReadableTable, WriteTransaction};
use ssz::{Decode, Encode};
use types::gloas::SignedExecutionPayloadEnvelope;
use types::{Epoch, EthSpec, ForkName, Root, SignedBeaconBlock, Slot};

use super::{Store, StoreBatch, invalid, key_str, read_block_summary};
use crate::StoreError;
use crate::codec::{seal, slot_root_key, split_slot_root_key, unseal};
use crate::schema::{
    COLD_BLOCKS, EXECUTION_PAYLOAD_ENVELOPE_SLOTS, EXECUTION_PAYLOAD_ENVELOPES, HOT_BLOCK_SUMMARIES,
};

/// The table name in errors.
const TABLE: &str = "execution_payload_envelopes";

/// Whether blocks of `fork` have their payload delivered in an envelope (EIP-7732).
pub(crate) fn has_execution_payload_envelopes(fork: ForkName) -> bool {
    match fork {
        ForkName::Phase0
        | ForkName::Altair
        | ForkName::Bellatrix
        | ForkName::Capella
        | ForkName::Deneb
        | ForkName::Electra
        | ForkName::Fulu => false,
        ForkName::Gloas => true,
    }
}

/// Decodes a stored envelope and checks it is the one its key names.
fn decode_envelope<E: EthSpec>(
    bytes: &[u8],
    block_root: &Root,
) -> Result<SignedExecutionPayloadEnvelope<E>, StoreError> {
    let corrupt = |reason: String| StoreError::CorruptValue {
        table: TABLE,
        key: key_str(block_root),
        reason,
    };
    let envelope = SignedExecutionPayloadEnvelope::<E>::from_ssz_bytes(bytes)
        .map_err(|e| corrupt(format!("{e:?}")))?;
    if envelope.message.beacon_block_root != *block_root {
        return Err(corrupt(format!(
            "the envelope of block {} stored under another block's root",
            envelope.message.beacon_block_root
        )));
    }
    Ok(envelope)
}

impl<E: EthSpec> StoreBatch<'_, E> {
    /// Stores a signed execution payload envelope, SSZ-encoding it. Prefer
    /// [`Self::put_execution_payload_envelope_ssz`] with the bytes as received.
    ///
    /// Its block (`message.beacon_block_root`) must be stored, in this batch or before, at a
    /// Gloas slot equal to the payload's `slot_number`.
    pub fn put_execution_payload_envelope(
        &mut self,
        envelope: &SignedExecutionPayloadEnvelope<E>,
    ) -> Result<(), StoreError> {
        self.insert_envelope(&envelope.as_ssz_bytes(), envelope)
    }

    /// Stores a signed execution payload envelope from its SSZ bytes as received (checked by
    /// decoding), so it can be served without re-encoding. The same conditions as
    /// [`Self::put_execution_payload_envelope`] apply.
    pub fn put_execution_payload_envelope_ssz(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        let envelope = SignedExecutionPayloadEnvelope::<E>::from_ssz_bytes(bytes)
            .map_err(|e| invalid("execution payload envelope SSZ", format!("{e:?}")))?;
        self.insert_envelope(bytes, &envelope)
    }

    fn insert_envelope(
        &mut self,
        bytes: &[u8],
        envelope: &SignedExecutionPayloadEnvelope<E>,
    ) -> Result<(), StoreError> {
        let block_root = envelope.message.beacon_block_root;
        let slot = self.stored_block_slot(&block_root)?.ok_or_else(|| {
            invalid(
                "execution payload envelope",
                format!(
                    "its block {} is not stored: store the block first, or in the same batch",
                    key_str(&block_root)
                ),
            )
        })?;
        let slot_number = envelope.message.payload.slot_number;
        if slot_number != slot {
            return Err(invalid(
                "execution payload envelope",
                format!(
                    "its payload's slot_number {slot_number} is not the slot {slot} of its block {}",
                    key_str(&block_root)
                ),
            ));
        }
        let fork = self.store.spec.fork_name_at_slot::<E>(slot);
        if !has_execution_payload_envelopes(fork) {
            return Err(invalid(
                "execution payload envelope",
                format!("its block is at slot {slot}, a {fork} slot: envelopes begin with Gloas"),
            ));
        }
        self.txn
            .open_table(EXECUTION_PAYLOAD_ENVELOPES)?
            .insert(block_root.0, seal(bytes, fork).as_slice())?;
        self.txn
            .open_table(EXECUTION_PAYLOAD_ENVELOPE_SLOTS)?
            .insert(slot_root_key(slot, &block_root), ())?;
        Ok(())
    }

    /// Deletes the envelope of `block_root`; returns whether there was one.
    pub fn delete_execution_payload_envelope(
        &mut self,
        block_root: Root,
    ) -> Result<bool, StoreError> {
        let removed = self
            .txn
            .open_table(EXECUTION_PAYLOAD_ENVELOPES)?
            .remove(block_root.0)?
            .map(|v| v.value().to_vec());
        let Some(sealed) = removed else {
            return Ok(false);
        };
        // The index key's slot is the payload's `slot_number`, which equalled the block's slot
        // when the envelope was stored.
        let (bytes, _) = unseal(sealed, TABLE, || key_str(&block_root))?;
        let envelope = decode_envelope::<E>(&bytes, &block_root)?;
        self.txn
            .open_table(EXECUTION_PAYLOAD_ENVELOPE_SLOTS)?
            .remove(slot_root_key(
                envelope.message.payload.slot_number,
                &block_root,
            ))?;
        Ok(true)
    }

    /// The slot of a block stored in this batch or before: hot (its summary) or cold (read
    /// from its SSZ).
    fn stored_block_slot(&self, block_root: &Root) -> Result<Option<Slot>, StoreError> {
        let hot = read_block_summary(&self.txn.open_table(HOT_BLOCK_SUMMARIES)?, block_root)?;
        if let Some(summary) = hot {
            return Ok(Some(summary.slot));
        }
        let cold = self
            .txn
            .open_table(COLD_BLOCKS)?
            .get(block_root.0)?
            .map(|v| v.value().to_vec());
        cold.map(|sealed| {
            let (bytes, _) = unseal(sealed, "cold_blocks", || key_str(block_root))?;
            SignedBeaconBlock::<E>::slot_from_ssz_bytes(&bytes).map_err(|e| {
                StoreError::CorruptValue {
                    table: "cold_blocks",
                    key: key_str(block_root),
                    reason: format!("{e:?}"),
                }
            })
        })
        .transpose()
    }
}

impl<E: EthSpec> Store<E> {
    /// The SSZ bytes of the signed execution payload envelope of a block, as received.
    ///
    /// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1
    pub fn get_execution_payload_envelope_ssz(
        &self,
        block_root: &Root,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.read_txn()?;
        let value = txn
            .open_table(EXECUTION_PAYLOAD_ENVELOPES)?
            .get(block_root.0)?
            .map(|v| v.value().to_vec());
        Ok(value
            .map(|v| unseal(v, TABLE, || key_str(block_root)))
            .transpose()?
            .map(|(bytes, _)| bytes))
    }

    /// The signed execution payload envelope of a block, decoded.
    pub fn get_execution_payload_envelope(
        &self,
        block_root: &Root,
    ) -> Result<Option<SignedExecutionPayloadEnvelope<E>>, StoreError> {
        self.get_execution_payload_envelope_ssz(block_root)?
            .map(|bytes| decode_envelope(&bytes, block_root))
            .transpose()
    }

    /// Whether the envelope of a block is stored.
    pub fn has_execution_payload_envelope(&self, block_root: &Root) -> Result<bool, StoreError> {
        let txn = self.read_txn()?;
        Ok(txn
            .open_table(EXECUTION_PAYLOAD_ENVELOPES)?
            .get(block_root.0)?
            .is_some())
    }

    /// The blocks in the slots `[start, end)` whose envelope is stored, as `(slot, block root)`
    /// in slot order (forks included: a range server keeps the canonical ones).
    pub fn execution_payload_envelope_roots(
        &self,
        start: Slot,
        end: Slot,
    ) -> Result<Vec<(Slot, Root)>, StoreError> {
        if start >= end {
            return Ok(Vec::new());
        }
        let txn = self.read_txn()?;
        let index = txn.open_table(EXECUTION_PAYLOAD_ENVELOPE_SLOTS)?;
        let roots = index
            .range(slot_root_key(start, &Root::ZERO)..slot_root_key(end, &Root::ZERO))?
            .map(|e| e.map(|(k, _)| split_slot_root_key(&k.value())))
            .collect::<Result<_, _>>()?;
        Ok(roots)
    }

    /// Deletes the envelopes older than the serving window before `current_epoch` (Gloas's
    /// `compute_min_epochs_for_block_requests()`); returns how many went.
    ///
    /// [spec]: gloas/p2p-interface.md#executionpayloadenvelopesbyroot-v1
    pub fn prune_execution_payload_envelopes(
        &self,
        current_epoch: Epoch,
    ) -> Result<usize, StoreError> {
        let txn = self.begin_write()?;
        let n = self.prune_envelopes_in(&txn, current_epoch)?;
        txn.commit()?;
        Ok(n)
    }

    pub(super) fn prune_envelopes_in(
        &self,
        txn: &WriteTransaction,
        current_epoch: Epoch,
    ) -> Result<usize, StoreError> {
        let cutoff = current_epoch
            .saturating_sub(self.spec.compute_min_epochs_for_block_requests_gloas())
            .saturating_mul(E::slots_per_epoch());
        let mut index = txn.open_table(EXECUTION_PAYLOAD_ENVELOPE_SLOTS)?;
        let expired: Vec<(Slot, Root)> = index
            .range(..slot_root_key(cutoff, &Root::ZERO))?
            .map(|e| e.map(|(k, _)| split_slot_root_key(&k.value())))
            .collect::<Result<_, _>>()?;
        let mut envelopes = txn.open_table(EXECUTION_PAYLOAD_ENVELOPES)?;
        for (slot, root) in &expired {
            envelopes.remove(root.0)?;
            index.remove(slot_root_key(*slot, root))?;
        }
        Ok(expired.len())
    }
}
