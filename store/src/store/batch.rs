//! A batch of writes committed together or not at all ([`StoreBatch`]): blocks, sidecars, states
//! (an epoch's snapshot whole or deferred), fork choice, light-client data.

#[allow(
    clippy::wildcard_imports,
    reason = "the parent module's private items and imports"
)]
use super::*;

impl<E: EthSpec> StoreBatch<'_, E> {
    /// Stores an unfinalized block, SSZ-encoding it. Prefer [`Self::put_block_ssz`] with the
    /// bytes as received.
    pub fn put_block(
        &mut self,
        block_root: Root,
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), StoreError> {
        let expected = self.store.spec.fork_name_at_slot::<E>(block.slot());
        if block.fork_name() != expected {
            return Err(invalid(
                "block",
                format!(
                    "a {} block at slot {} where the chain is at {expected}",
                    block.fork_name(),
                    block.slot()
                ),
            ));
        }
        self.insert_block(block_root, &block.as_ssz_bytes(), block)
    }

    /// Stores an unfinalized block from its SSZ bytes as received (checked by decoding with the
    /// fork of its slot), so it can be served without re-encoding.
    pub fn put_block_ssz(&mut self, block_root: Root, bytes: &[u8]) -> Result<(), StoreError> {
        let block = SignedBeaconBlock::<E>::from_ssz_bytes(bytes, &self.store.spec)
            .map_err(|e| invalid("block SSZ", format!("{e:?}")))?;
        self.insert_block(block_root, bytes, &block)
    }

    pub(super) fn insert_block(
        &mut self,
        block_root: Root,
        bytes: &[u8],
        block: &SignedBeaconBlock<E>,
    ) -> Result<(), StoreError> {
        self.txn
            .open_table(HOT_BLOCKS)?
            .insert(block_root.0, seal(bytes, block.fork_name()).as_slice())?;
        let summary = Record::default()
            .u64(block.slot())
            .root(&block.parent_root())
            .into_bytes();
        self.txn
            .open_table(HOT_BLOCK_SUMMARIES)?
            .insert(block_root.0, summary.as_slice())?;
        Ok(())
    }

    /// Stores a hot state: whole at an epoch boundary (or when its boundary snapshot is not
    /// stored), otherwise as a summary naming its latest block and its boundary snapshot.
    /// Returns whether it was stored whole.
    pub fn put_state(
        &mut self,
        state_root: Root,
        state: &BeaconState<E>,
    ) -> Result<bool, StoreError> {
        Ok(self.store_state(state_root, state, false, None)? == StoredAs::Whole)
    }

    /// [`Self::put_state`], except that a state that would be stored whole (its epoch's
    /// snapshot) is recorded as a pending snapshot: a summary naming the nearest snapshot
    /// before it on its chain, so it loads by replaying the blocks since, until
    /// [`Self::write_pending_snapshot`] stores it whole. This keeps the ~135 MiB write of a
    /// mainnet state out of the batch of the block that reached the epoch boundary.
    pub fn put_state_deferring_snapshot(
        &mut self,
        state_root: Root,
        state: &BeaconState<E>,
    ) -> Result<StoredAs, StoreError> {
        self.store_state(state_root, state, true, None)
    }

    /// Stores `state` whole, as a pending snapshot (`defer`) or as a summary; `prewritten` is
    /// the reference of its file when that was written before the batch began.
    pub(super) fn store_state(
        &mut self,
        state_root: Root,
        state: &BeaconState<E>,
        defer: bool,
        prewritten: Option<FileRef>,
    ) -> Result<StoredAs, StoreError> {
        let slot = *state.slot();
        let boundary_slot = slot - slot % E::slots_per_epoch();
        let mut states = self.txn.open_table(HOT_STATES)?;
        let mut pending = self.txn.open_table(PENDING_SNAPSHOTS)?;
        let mut summaries = self.txn.open_table(HOT_STATE_SUMMARIES)?;
        // A snapshot: stored whole, or pending.
        let is_snapshot = |root: &Root| -> Result<bool, StoreError> {
            Ok(states.get(root.0)?.is_some() || pending.get(root.0)?.is_some())
        };
        let root_at = |slot: Slot| -> Root {
            let index = (slot % slots_per_historical_root::<E>()) as usize;
            *state
                .state_roots()
                .get(index)
                .expect("state_roots has SLOTS_PER_HISTORICAL_ROOT entries")
        };
        // The nearest snapshot on this state's chain in the slots `from..slot`, newest first,
        // through its own `state_roots`: a snapshot, or the one a stored state's summary names
        // (a summary at or after `named_from`).
        let nearest_snapshot = |from: Slot, named_from: Slot| -> Result<Option<Root>, StoreError> {
            for earlier in (from..slot).rev() {
                let root = root_at(earlier);
                if is_snapshot(&root)? {
                    return Ok(Some(root));
                }
                if let Some(summary) = read_state_summary(&summaries, &root)?
                    && summary.slot >= named_from
                    && is_snapshot(&summary.boundary_state_root)?
                {
                    return Ok(Some(summary.boundary_state_root));
                }
            }
            Ok(None)
        };
        // The epoch's snapshot: the state at its first slot, or (that slot empty) the first
        // state of the epoch stored whole on this state's chain; the state itself when there
        // is none.
        let epoch_snapshot = nearest_snapshot(boundary_slot, boundary_slot)?;

        let (boundary_state_root, stored) = match epoch_snapshot {
            Some(snapshot) => (snapshot, StoredAs::Summary),
            // Stored whole already (same root, same bytes): kept.
            None if states.get(state_root.0)?.is_some() => (state_root, StoredAs::Whole),
            None => {
                // Deferred: the nearest snapshot before it on its chain (the state before it
                // that is stored, or the snapshot that one names).
                let previous = if defer {
                    nearest_snapshot(slot.saturating_sub(slots_per_historical_root::<E>()), 0)?
                } else {
                    None
                };
                match previous {
                    Some(previous) => {
                        pending.insert(state_root.0, slot)?;
                        (previous, StoredAs::PendingSnapshot)
                    }
                    None => {
                        // A file beside the database, written and synced before this batch's
                        // transaction references it.
                        let reference = match prewritten {
                            Some(reference) => reference,
                            None => self.store.write_state_file(state_root, state)?,
                        };
                        self.new_state_files.roots.push(state_root);
                        states.insert(state_root.0, reference.to_bytes().as_slice())?;
                        (state_root, StoredAs::Whole)
                    }
                }
            }
        };
        // The latest block header's state root is filled in at the next slot; until then the
        // block root is the header's root with this state's root in it.
        let mut header = state.latest_block_header().clone();
        if header.state_root == Root::ZERO {
            header.state_root = state_root;
        }
        let record = Record::default()
            .u64(slot)
            .root(&header.tree_hash_root())
            .root(&boundary_state_root)
            .into_bytes();
        summaries.insert(state_root.0, record.as_slice())?;
        if stored != StoredAs::PendingSnapshot {
            pending.remove(state_root.0)?;
        }
        Ok(stored)
    }

    /// Stores a data column sidecar, SSZ-encoding it.
    pub fn put_data_column(
        &mut self,
        block_root: Root,
        column: &DataColumnSidecar<E>,
    ) -> Result<(), StoreError> {
        let slot = column.slot();
        self.insert_sidecar(
            DATA_COLUMNS,
            block_root,
            column.index(),
            slot,
            &column.as_ssz_bytes(),
            column.fork_name(),
        )
    }

    /// Stores a data column sidecar from its SSZ bytes as received (checked by decoding).
    pub fn put_data_column_ssz(
        &mut self,
        block_root: Root,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        let (column, fork) = decode_by_slot::<_, E>(
            bytes,
            &self.store.spec,
            DataColumnSidecar::<E>::FORKS,
            |b, f| DataColumnSidecar::<E>::from_ssz_bytes_by_fork(b, f).map(|c| (c.slot(), c)),
        )
        .ok_or_else(|| invalid("data column SSZ", "does not decode at the fork of its slot"))?;
        let slot = column.slot();
        self.insert_sidecar(DATA_COLUMNS, block_root, column.index(), slot, bytes, fork)
    }

    /// Stores a blob sidecar, SSZ-encoding it.
    pub fn put_blob_sidecar(
        &mut self,
        block_root: Root,
        blob: &BlobSidecar<E>,
    ) -> Result<(), StoreError> {
        let (index, slot) = blob_index_and_slot(blob);
        self.insert_sidecar(
            BLOB_SIDECARS,
            block_root,
            index,
            slot,
            &blob.as_ssz_bytes(),
            blob.fork_name(),
        )
    }

    /// Stores a blob sidecar from its SSZ bytes as received (checked by decoding).
    pub fn put_blob_sidecar_ssz(
        &mut self,
        block_root: Root,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        let (blob, fork) =
            decode_by_slot::<_, E>(bytes, &self.store.spec, BlobSidecar::<E>::FORKS, |b, f| {
                BlobSidecar::<E>::from_ssz_bytes_by_fork(b, f)
                    .map(|s| (blob_index_and_slot(&s).1, s))
            })
            .ok_or_else(|| {
                invalid(
                    "blob sidecar SSZ",
                    "does not decode at the fork of its slot",
                )
            })?;
        let (index, slot) = blob_index_and_slot(&blob);
        self.insert_sidecar(BLOB_SIDECARS, block_root, index, slot, bytes, fork)
    }

    pub(super) fn insert_sidecar(
        &mut self,
        table: redb::TableDefinition<'_, [u8; 40], &[u8]>,
        block_root: Root,
        index: u64,
        slot: Slot,
        bytes: &[u8],
        fork: ForkName,
    ) -> Result<(), StoreError> {
        let expected = self.store.spec.fork_name_at_slot::<E>(slot);
        if fork != expected {
            return Err(invalid(
                "sidecar",
                format!("a {fork} sidecar at slot {slot} where the chain is at {expected}"),
            ));
        }
        self.txn.open_table(table)?.insert(
            sidecar_key(&block_root, index),
            seal(bytes, fork).as_slice(),
        )?;
        self.txn
            .open_table(DATA_SIDECAR_SLOTS)?
            .insert(slot_root_key(slot, &block_root), ())?;
        Ok(())
    }

    /// Records the head.
    pub fn set_head(&mut self, head: Head) -> Result<(), StoreError> {
        let record = Record::default()
            .root(&head.block_root)
            .root(&head.state_root)
            .u64(head.slot)
            .into_bytes();
        self.txn
            .open_table(META)?
            .insert(HEAD_KEY, record.as_slice())?;
        Ok(())
    }

    /// Records the persisted fork choice (replacing the last one), with a CRC-32 after it.
    pub fn put_fork_choice(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        let mut value = Vec::with_capacity(bytes.len() + 4);
        value.extend_from_slice(bytes);
        value.extend_from_slice(&crc32fast::hash(bytes).to_le_bytes());
        self.txn
            .open_table(META)?
            .insert(FORK_CHOICE_KEY, value.as_slice())?;
        Ok(())
    }

    /// Writes the light-client server's `bytes` under `key` (in the `light_client/` key space of
    /// `meta`); `None` deletes the key.
    pub fn put_light_client_data(
        &mut self,
        key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let key = format!("{LIGHT_CLIENT_PREFIX}{key}");
        let mut meta = self.txn.open_table(META)?;
        match bytes {
            Some(bytes) => {
                meta.insert(key.as_str(), bytes)?;
            }
            None => {
                meta.remove(key.as_str())?;
            }
        }
        Ok(())
    }

    /// Commits every write of the batch atomically.
    pub fn commit(self) -> Result<(), StoreError> {
        let Self {
            txn,
            mut new_state_files,
            ..
        } = self;
        let result = txn.commit();
        // The files stay whatever the result: a commit that failed may still have reached the
        // disk, and a file without a committed reference is removed at the next open.
        new_state_files.roots.clear();
        new_state_files.cold_roots.clear();
        result?;
        Ok(())
    }
}
