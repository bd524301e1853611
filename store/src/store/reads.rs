//! Reads: blocks, sidecars, light-client data and records by key, and states (hot: the epoch
//! snapshot and the blocks since, replayed; cold: the nearest grid state and the canonical blocks
//! since).

#[allow(
    clippy::wildcard_imports,
    reason = "the parent module's private items and imports"
)]
use super::*;

impl<E: EthSpec> Store<E> {
    /// The schema version recorded in the database.
    pub fn schema_version(&self) -> Result<u64, StoreError> {
        let txn = self.read_txn()?;
        schema::read_schema_version(&txn.open_table(META)?)?.ok_or(StoreError::MissingSchemaVersion)
    }

    /// The head last recorded with [`StoreBatch::set_head`] or [`Self::record_head`] (a crash
    /// may lose one recorded with the latter since the last synced commit).
    pub fn head(&self) -> Result<Option<Head>, StoreError> {
        let txn = self.read_txn()?;
        let meta = txn.open_table(META)?;
        let Some(v) = meta.get(HEAD_KEY)? else {
            return Ok(None);
        };
        let mut r = RecordReader::new(v.value(), 72, "meta", HEAD_KEY.into())?;
        Ok(Some(Head {
            block_root: r.root()?,
            state_root: r.root()?,
            slot: r.u64()?,
        }))
    }

    /// The finalized checkpoint of the latest migration (or the anchor).
    pub fn finalized_checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        let txn = self.read_txn()?;
        let meta = txn.open_table(META)?;
        let Some(v) = meta.get(FINALIZED_KEY)? else {
            return Ok(None);
        };
        let mut r = RecordReader::new(v.value(), 40, "meta", FINALIZED_KEY.into())?;
        Ok(Some(Checkpoint {
            epoch: r.u64()?,
            root: r.root()?,
        }))
    }

    /// The hot/cold boundary.
    pub fn split(&self) -> Result<Option<Split>, StoreError> {
        let txn = self.read_txn()?;
        read_split(&txn.open_table(META)?)
    }

    /// The fork choice last recorded with [`StoreBatch::put_fork_choice`], its checksum
    /// checked.
    pub fn fork_choice(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.read_txn()?;
        let meta = txn.open_table(META)?;
        let Some(value) = meta.get(FORK_CHOICE_KEY)? else {
            return Ok(None);
        };
        let value = value.value();
        let corrupt = |reason: String| StoreError::CorruptValue {
            table: "meta",
            key: FORK_CHOICE_KEY.into(),
            reason,
        };
        let Some(len) = value.len().checked_sub(4) else {
            return Err(corrupt(format!("{} bytes", value.len())));
        };
        let stored = u32::from_le_bytes(value[len..].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&value[..len]);
        if stored != computed {
            return Err(corrupt(format!(
                "checksum {computed:08x} does not match the stored {stored:08x}"
            )));
        }
        Ok(Some(value[..len].to_vec()))
    }

    /// The light-client server's value under `key` (in the `light_client/` key space of `meta`),
    /// as it wrote it.
    pub fn get_light_client_data(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.read_txn()?;
        let meta = txn.open_table(META)?;
        let key = format!("{LIGHT_CLIENT_PREFIX}{key}");
        Ok(meta.get(key.as_str())?.map(|v| v.value().to_vec()))
    }

    /// The SSZ bytes of a block, exactly as they were stored.
    ///
    /// [spec]: phase0/p2p-interface.md#beaconblocksbyroot
    pub fn get_block_ssz(&self, block_root: &Root) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.read_txn()?;
        Ok(read_block_sealed(&txn, block_root)?.map(|(bytes, _, _)| bytes))
    }

    /// A block, decoded with the fork of its slot.
    pub fn get_block(&self, block_root: &Root) -> Result<Option<SignedBeaconBlock<E>>, StoreError> {
        let txn = self.read_txn()?;
        read_block_sealed(&txn, block_root)?
            .map(|(bytes, fork, table)| self.decode_block(&bytes, fork, table, block_root))
            .transpose()
    }

    /// The canonical block root of a finalized slot, `None` for an empty slot or one not yet
    /// finalized.
    pub fn block_root_at_slot(&self, slot: Slot) -> Result<Option<Root>, StoreError> {
        let txn = self.read_txn()?;
        Ok(txn
            .open_table(COLD_BLOCK_ROOTS)?
            .get(slot)?
            .map(|v| Root::from(v.value())))
    }

    /// The SSZ bytes of a data column sidecar, as received.
    pub fn get_data_column_ssz(
        &self,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .read_sidecar(DATA_COLUMNS, "data_columns", block_root, index)?
            .map(|(bytes, _)| bytes))
    }

    /// A data column sidecar, decoded with its stored fork.
    ///
    /// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyroot-v1
    pub fn get_data_column(
        &self,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<DataColumnSidecar<E>>, StoreError> {
        self.read_sidecar(DATA_COLUMNS, "data_columns", block_root, index)?
            .map(|(bytes, fork)| {
                DataColumnSidecar::from_ssz_bytes_by_fork(&bytes, fork).map_err(|e| {
                    StoreError::CorruptValue {
                        table: "data_columns",
                        key: format!("{}/{index}", key_str(block_root)),
                        reason: format!("{e:?}"),
                    }
                })
            })
            .transpose()
    }

    /// The indices of the data columns stored for a block.
    pub fn data_column_indices(&self, block_root: &Root) -> Result<Vec<u64>, StoreError> {
        self.sidecar_indices(DATA_COLUMNS, block_root)
    }

    /// The SSZ bytes of a blob sidecar, as received.
    pub fn get_blob_sidecar_ssz(
        &self,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .read_sidecar(BLOB_SIDECARS, "blob_sidecars", block_root, index)?
            .map(|(bytes, _)| bytes))
    }

    /// A blob sidecar, decoded with its stored fork.
    ///
    /// [spec]: deneb/p2p-interface.md#blobsidecarsbyroot-v1
    pub fn get_blob_sidecar(
        &self,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<BlobSidecar<E>>, StoreError> {
        self.read_sidecar(BLOB_SIDECARS, "blob_sidecars", block_root, index)?
            .map(|(bytes, fork)| {
                BlobSidecar::from_ssz_bytes_by_fork(&bytes, fork).map_err(|e| {
                    StoreError::CorruptValue {
                        table: "blob_sidecars",
                        key: format!("{}/{index}", key_str(block_root)),
                        reason: format!("{e:?}"),
                    }
                })
            })
            .transpose()
    }

    /// The indices of the blob sidecars stored for a block.
    pub fn blob_sidecar_indices(&self, block_root: &Root) -> Result<Vec<u64>, StoreError> {
        self.sidecar_indices(BLOB_SIDECARS, block_root)
    }

    /// Every unfinalized block the store holds, as `(slot, block root, parent root)` sorted by
    /// slot then root: what a restarting node imports again into fork choice on top of the
    /// split.
    pub fn hot_blocks(&self) -> Result<Vec<(Slot, Root, Root)>, StoreError> {
        let txn = self.read_txn()?;
        let summaries = read_all_block_summaries(&txn.open_table(HOT_BLOCK_SUMMARIES)?)?;
        let mut blocks: Vec<(Slot, Root, Root)> = summaries
            .into_iter()
            .map(|(root, s)| (s.slot, root, s.parent_root))
            .collect();
        blocks.sort_unstable();
        Ok(blocks)
    }

    /// A state by its root: hot (its epoch-boundary snapshot plus replayed blocks) or cold (the
    /// nearest grid state plus replayed canonical blocks).
    pub fn get_state(
        &self,
        state_root: &Root,
        replayer: &mut impl StateReplayer<E>,
    ) -> Result<Option<BeaconState<E>>, StoreError> {
        let txn = self.read_txn()?;
        if let Some(summary) =
            read_state_summary(&txn.open_table(HOT_STATE_SUMMARIES)?, state_root)?
        {
            return self
                .load_hot_state(&txn, state_root, summary, replayer)
                .map(Some);
        }
        let slot = txn
            .open_table(COLD_STATE_ROOTS)?
            .get(state_root.0)?
            .map(|v| v.value());
        match slot {
            Some(slot) => self.load_cold_state(&txn, slot, replayer).map(Some),
            None => Ok(None),
        }
    }

    /// The canonical finalized state at `slot` (at or before the split).
    pub fn get_cold_state_by_slot(
        &self,
        slot: Slot,
        replayer: &mut impl StateReplayer<E>,
    ) -> Result<Option<BeaconState<E>>, StoreError> {
        let txn = self.read_txn()?;
        match read_split(&txn.open_table(META)?)? {
            Some(split) if slot <= split.slot => {
                self.load_cold_state(&txn, slot, replayer).map(Some)
            }
            _ => Ok(None),
        }
    }

    pub(super) fn read_sidecar(
        &self,
        table: redb::TableDefinition<'_, [u8; 40], &[u8]>,
        name: &'static str,
        block_root: &Root,
        index: u64,
    ) -> Result<Option<(Vec<u8>, ForkName)>, StoreError> {
        let txn = self.read_txn()?;
        let value = txn
            .open_table(table)?
            .get(sidecar_key(block_root, index))?
            .map(|v| v.value().to_vec());
        value
            .map(|v| unseal(v, name, || format!("{}/{index}", key_str(block_root))))
            .transpose()
    }

    pub(super) fn sidecar_indices(
        &self,
        table: redb::TableDefinition<'_, [u8; 40], &[u8]>,
        block_root: &Root,
    ) -> Result<Vec<u64>, StoreError> {
        let txn = self.read_txn()?;
        let table = txn.open_table(table)?;
        let indices = table
            .range(sidecar_key(block_root, 0)..=sidecar_key(block_root, u64::MAX))?
            .map(|e| {
                e.map(|(k, _)| u64::from_be_bytes(k.value()[32..].try_into().expect("8 bytes")))
            })
            .collect::<Result<_, _>>()?;
        Ok(indices)
    }

    pub(super) fn decode_block(
        &self,
        bytes: &[u8],
        stored: ForkName,
        table: &'static str,
        root: &Root,
    ) -> Result<SignedBeaconBlock<E>, StoreError> {
        let block = SignedBeaconBlock::from_ssz_bytes(bytes, &self.spec).map_err(|e| {
            StoreError::CorruptValue {
                table,
                key: key_str(root),
                reason: format!("{e:?}"),
            }
        })?;
        if block.fork_name() != stored {
            return Err(StoreError::WrongFork {
                table,
                key: key_str(root),
                stored,
                expected: block.fork_name(),
            });
        }
        Ok(block)
    }

    pub(super) fn decode_state(
        &self,
        bytes: &[u8],
        stored: ForkName,
        table: &'static str,
        key: String,
    ) -> Result<BeaconState<E>, StoreError> {
        let state = BeaconState::from_ssz_bytes(bytes, &self.spec).map_err(|e| {
            StoreError::CorruptValue {
                table,
                key: key.clone(),
                reason: format!("{e:?}"),
            }
        })?;
        if state.fork_name() != stored {
            return Err(StoreError::WrongFork {
                table,
                key,
                stored,
                expected: state.fork_name(),
            });
        }
        Ok(state)
    }

    /// The hot snapshot `root`, unsealed, from its file; `None` when `table` (of the caller's
    /// read transaction) has no reference to it.
    pub(super) fn read_hot_snapshot(
        &self,
        table: &impl ReadableTable<[u8; 32], &'static [u8]>,
        root: &Root,
    ) -> Result<Option<(Vec<u8>, ForkName)>, StoreError> {
        let Some(reference) = table.get(root.0)? else {
            return Ok(None);
        };
        let reference = FileRef::from_bytes(reference.value(), "hot_states", root)?;
        if let Some(sealed) = self.state_files.read(root, reference)? {
            return unseal(sealed, "hot_states", || key_str(root)).map(Some);
        }
        // A migration that committed after the caller's transaction began may have pruned the
        // state and deleted its file: then it is gone, as a later read would find. A file
        // missing while its reference is still committed was lost.
        let still_referenced = self
            .db
            .begin_read()?
            .open_table(HOT_STATES)?
            .get(root.0)?
            .is_some();
        if still_referenced {
            Err(StoreError::MissingStateFile {
                root: *root,
                path: self.state_files.path(root),
            })
        } else {
            Ok(None)
        }
    }

    /// The SSZ of the cold state at `slot` when its unsealed `cold_states` value stores it
    /// whole (inline, or in its file); `None` when the value is a diff.
    pub(super) fn read_cold_snapshot(
        &self,
        value: &[u8],
        slot: Slot,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        match value.first() {
            Some(&COLD_FULL) => Ok(Some(value[1..].to_vec())),
            Some(&COLD_FILE) => {
                let (root, reference) = cold_file_reference(value, slot)?;
                let sealed = self.cold_files.read(&root, reference)?.ok_or_else(|| {
                    StoreError::MissingStateFile {
                        root,
                        path: self.cold_files.path(&root),
                    }
                })?;
                let (ssz_bytes, _) = unseal(sealed, "cold_states", || slot.to_string())?;
                Ok(Some(ssz_bytes))
            }
            Some(&COLD_DIFF) => Ok(None),
            other => Err(StoreError::CorruptValue {
                table: "cold_states",
                key: slot.to_string(),
                reason: format!("unknown state encoding {other:?}"),
            }),
        }
    }

    pub(super) fn load_hot_state(
        &self,
        txn: &ReadTransaction,
        state_root: &Root,
        summary: StateSummary,
        replayer: &mut impl StateReplayer<E>,
    ) -> Result<BeaconState<E>, StoreError> {
        // The snapshot named, or, while that one is pending, the one its summary names.
        let states = txn.open_table(HOT_STATES)?;
        let pending = txn.open_table(PENDING_SNAPSHOTS)?;
        let state_summaries = txn.open_table(HOT_STATE_SUMMARIES)?;
        let mut boundary = summary.boundary_state_root;
        for hops in 0.. {
            if pending.get(boundary.0)?.is_none() {
                break;
            }
            let named = read_state_summary(&state_summaries, &boundary)?
                .ok_or(StoreError::MissingState(boundary))?
                .boundary_state_root;
            // Each pending snapshot names an older one; a cycle is a damaged table.
            if named == boundary || hops > slots_per_historical_root::<E>() {
                return Err(StoreError::CorruptValue {
                    table: "hot_state_summaries",
                    key: key_str(&boundary),
                    reason: "a pending snapshot that names no older snapshot".into(),
                });
            }
            boundary = named;
        }
        let (bytes, fork) = self
            .read_hot_snapshot(&states, &boundary)?
            .ok_or(StoreError::MissingState(boundary))?;
        let mut state = self.decode_state(&bytes, fork, "hot_states", key_str(&boundary))?;
        drop(bytes);
        if boundary == *state_root {
            return Ok(state);
        }

        // The blocks after the snapshot, found by walking back from the state's latest block.
        let summaries = txn.open_table(HOT_BLOCK_SUMMARIES)?;
        let mut chain = Vec::new();
        let mut root = summary.latest_block_root;
        loop {
            let block =
                read_block_summary(&summaries, &root)?.ok_or(StoreError::MissingBlock(root))?;
            if block.slot <= *state.slot() {
                break;
            }
            chain.push(root);
            root = block.parent_root;
        }
        let blocks = txn.open_table(HOT_BLOCKS)?;
        for root in chain.iter().rev() {
            let value = blocks
                .get(root.0)?
                .map(|v| v.value().to_vec())
                .ok_or(StoreError::MissingBlock(*root))?;
            let (bytes, fork) = unseal(value, "hot_blocks", || key_str(root))?;
            let block = self.decode_block(&bytes, fork, "hot_blocks", root)?;
            replayer
                .apply_block(&mut state, &block)
                .map_err(StoreError::Replay)?;
        }
        replayer
            .advance_to_slot(&mut state, summary.slot)
            .map_err(StoreError::Replay)?;
        Ok(state)
    }

    pub(super) fn load_cold_state(
        &self,
        txn: &ReadTransaction,
        slot: Slot,
        replayer: &mut impl StateReplayer<E>,
    ) -> Result<BeaconState<E>, StoreError> {
        let cold = txn.open_table(COLD_STATES)?;
        let (grid_slot, value) = cold
            .range(..=slot)?
            .next_back()
            .transpose()?
            .map(|(k, v)| (k.value(), v.value().to_vec()))
            .ok_or(StoreError::MissingColdState(slot))?;
        let (value, fork) = unseal(value, "cold_states", || grid_slot.to_string())?;
        let whole = self.read_cold_snapshot(&value, grid_slot)?;
        let ssz_bytes = match (whole, value.first()) {
            (Some(ssz_bytes), _) => ssz_bytes,
            (None, Some(&COLD_DIFF)) => {
                let base_slot = peek_u64(&value, 1).ok_or_else(|| StoreError::CorruptValue {
                    table: "cold_states",
                    key: grid_slot.to_string(),
                    reason: "diff without a base slot".into(),
                })?;
                let base = cold
                    .get(base_slot)?
                    .map(|v| v.value().to_vec())
                    .ok_or(StoreError::MissingColdState(base_slot))?;
                let (base, _) = unseal(base, "cold_states", || base_slot.to_string())?;
                let base = self.read_cold_snapshot(&base, base_slot)?.ok_or_else(|| {
                    StoreError::CorruptValue {
                        table: "cold_states",
                        key: base_slot.to_string(),
                        reason: "the base of a diff is not a snapshot".into(),
                    }
                })?;
                state_diff::apply_diff(&base, &value[9..]).map_err(|source| StoreError::Diff {
                    table: "cold_states",
                    slot: grid_slot,
                    source,
                })?
            }
            (None, other) => {
                return Err(StoreError::CorruptValue {
                    table: "cold_states",
                    key: grid_slot.to_string(),
                    reason: format!("unknown state encoding {other:?}"),
                });
            }
        };
        drop(value);
        let mut state =
            self.decode_state(&ssz_bytes, fork, "cold_states", grid_slot.to_string())?;
        drop(ssz_bytes);

        let roots = txn.open_table(COLD_BLOCK_ROOTS)?;
        let blocks = txn.open_table(COLD_BLOCKS)?;
        for entry in roots.range(grid_slot + 1..=slot)? {
            let (_, root) = entry?;
            let root = Root::from(root.value());
            let value = blocks
                .get(root.0)?
                .map(|v| v.value().to_vec())
                .ok_or(StoreError::MissingBlock(root))?;
            let (bytes, fork) = unseal(value, "cold_blocks", || key_str(&root))?;
            let block = self.decode_block(&bytes, fork, "cold_blocks", &root)?;
            replayer
                .apply_block(&mut state, &block)
                .map_err(StoreError::Replay)?;
        }
        replayer
            .advance_to_slot(&mut state, slot)
            .map_err(StoreError::Replay)?;
        Ok(state)
    }
}
