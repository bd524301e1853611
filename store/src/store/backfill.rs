//! The oldest block the store holds, and the finalized blocks backfill writes before it.
//!
//! A node that starts from a checkpoint holds its anchor block and what comes after; backfill
//! fetches the blocks before the anchor, newest first, each batch linked by its parent roots to
//! the oldest block stored so far. [`OldestBlock`] names that block: its slot is the
//! `earliest_available_slot` of the node's Status, and its parent root is the block the next
//! batch must end with. It is written in the same transaction as the blocks it covers, so a
//! crash leaves the record and the blocks in agreement and backfill resumes from it.
//!
//! [spec]: fulu/p2p-interface.md#status-v2, phase0/p2p-interface.md#beaconblocksbyrange

use redb::{ReadableDatabase, ReadableTable, WriteTransaction};
use types::{EthSpec, Root, SignedBeaconBlock, Slot};

use super::{Store, StoreBatch, invalid, key_str, read_block_sealed};
use crate::StoreError;
use crate::codec::{Record, RecordReader, seal};
use crate::schema::{COLD_BLOCK_ROOTS, COLD_BLOCKS, META, OLDEST_BLOCK_KEY};

/// The oldest block of the unbroken canonical chain the store holds back from its anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OldestBlock {
    /// Its slot: the store serves every canonical block from this slot on.
    pub slot: Slot,
    /// Its root.
    pub root: Root,
    /// Its parent's root: the newest block backfill fetches next (zero for the genesis block).
    pub parent_root: Root,
}

impl OldestBlock {
    /// Whether it is the genesis block: nothing is left to backfill.
    pub fn is_genesis(&self) -> bool {
        self.slot == 0
    }

    fn to_record(self) -> Vec<u8> {
        Record::default()
            .u64(self.slot)
            .root(&self.root)
            .root(&self.parent_root)
            .into_bytes()
    }

    fn from_record(bytes: &[u8]) -> Result<Self, StoreError> {
        let mut r = RecordReader::new(bytes, 72, "meta", OLDEST_BLOCK_KEY.into())?;
        Ok(Self {
            slot: r.u64()?,
            root: r.root()?,
            parent_root: r.root()?,
        })
    }
}

/// Records `oldest` in `txn`.
pub(super) fn write_oldest_block(
    txn: &WriteTransaction,
    oldest: &OldestBlock,
) -> Result<(), StoreError> {
    txn.open_table(META)?
        .insert(OLDEST_BLOCK_KEY, oldest.to_record().as_slice())?;
    Ok(())
}

impl<E: EthSpec> Store<E> {
    /// The oldest block the store holds on the canonical chain (`None` before an anchor).
    ///
    /// A database written before the record existed has none: its oldest block is then the
    /// first of the cold slot index (the anchor, or genesis), read once here.
    pub fn oldest_block(&self) -> Result<Option<OldestBlock>, StoreError> {
        let txn = self.db.begin_read()?;
        if let Some(value) = txn.open_table(META)?.get(OLDEST_BLOCK_KEY)? {
            return OldestBlock::from_record(value.value()).map(Some);
        }
        let first = txn
            .open_table(COLD_BLOCK_ROOTS)?
            .first()?
            .map(|(slot, root)| (slot.value(), Root::from(root.value())));
        let Some((slot, root)) = first else {
            return Ok(None);
        };
        let (bytes, fork, table) =
            read_block_sealed(&txn, &root)?.ok_or(StoreError::MissingBlock(root))?;
        let block = self.decode_block(&bytes, fork, table, &root)?;
        Ok(Some(OldestBlock {
            slot,
            root,
            parent_root: block.parent_root(),
        }))
    }
}

impl<E: EthSpec> StoreBatch<'_, E> {
    /// Stores a finalized block from before the oldest one (backfill): in the cold tables, as
    /// the canonical block of its slot. The caller has checked that it is the parent of the
    /// block after it; [`Self::set_oldest_block`] then moves the record in the same batch.
    pub fn put_backfilled_block(
        &mut self,
        block_root: Root,
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), StoreError> {
        let slot = block.slot();
        let expected = self.store.spec.fork_name_at_slot::<E>(slot);
        if block.fork_name() != expected {
            return Err(invalid(
                "backfilled block",
                format!(
                    "a {} block at slot {slot} where the chain is at {expected}",
                    block.fork_name()
                ),
            ));
        }
        let oldest = self.read_oldest_block()?;
        if let Some(oldest) = oldest
            && slot >= oldest.slot
        {
            return Err(invalid(
                "backfilled block",
                format!(
                    "block {block_root} at slot {slot} is not before the oldest block (slot {})",
                    oldest.slot
                ),
            ));
        }
        let sealed = seal(&ssz::Encode::as_ssz_bytes(block), block.fork_name());
        self.txn
            .open_table(COLD_BLOCKS)?
            .insert(block_root.0, sealed.as_slice())?;
        self.txn
            .open_table(COLD_BLOCK_ROOTS)?
            .insert(slot, block_root.0)?;
        Ok(())
    }

    /// Records `oldest` as the oldest block held: it must be the canonical block of its slot
    /// (stored in this batch or before) and not after the one recorded.
    pub fn set_oldest_block(&mut self, oldest: OldestBlock) -> Result<(), StoreError> {
        let stored = self
            .txn
            .open_table(COLD_BLOCK_ROOTS)?
            .get(oldest.slot)?
            .map(|v| Root::from(v.value()));
        if stored != Some(oldest.root) {
            return Err(invalid(
                "oldest block",
                format!(
                    "{} is not the stored block of slot {}",
                    key_str(&oldest.root),
                    oldest.slot
                ),
            ));
        }
        if let Some(current) = self.read_oldest_block()?
            && oldest.slot > current.slot
        {
            return Err(invalid(
                "oldest block",
                format!(
                    "slot {} is after the recorded oldest block's slot {}",
                    oldest.slot, current.slot
                ),
            ));
        }
        write_oldest_block(&self.txn, &oldest)
    }

    fn read_oldest_block(&self) -> Result<Option<OldestBlock>, StoreError> {
        self.txn
            .open_table(META)?
            .get(OLDEST_BLOCK_KEY)?
            .map(|v| OldestBlock::from_record(v.value()))
            .transpose()
    }
}
