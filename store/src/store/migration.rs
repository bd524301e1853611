//! Finalization: the newly finalized chain moved from the hot database to the cold one, the cold
//! grid states written (snapshots and diffs), abandoned forks and expired sidecars and envelopes
//! pruned, and
//! the new split recorded ([`Store::migrate_to_finalized`]).

#[allow(
    clippy::wildcard_imports,
    reason = "the parent module's private items and imports"
)]
use super::*;

impl<E: EthSpec> Store<E> {
    /// Moves the chain up to the new finalized checkpoint from hot to cold, in one transaction:
    ///
    /// - the finalized blocks since the last split are copied to the cold tables, with their
    ///   canonical slots;
    /// - the finalized state roots are mapped to their slots, and the states on the cold grid
    ///   are written as snapshots or diffs;
    /// - hot blocks that do not descend from the finalized block (abandoned forks) are deleted
    ///   with their sidecars and envelopes, finalized ones from the hot tables, and hot states
    ///   before the checkpoint or off the finalized chain;
    /// - sidecars and envelopes past their retention windows (counted from the finalized epoch)
    ///   are deleted;
    /// - the split and the finalized checkpoint are recorded.
    ///
    /// The checkpoint state (at the first slot of `finalized.epoch`) must have been stored with
    /// [`StoreBatch::put_state`] as `finalized_state_root`.
    ///
    /// The grid states (reading whole states and computing diffs, seconds at mainnet scale) are
    /// prepared under a read transaction first, so block imports keep committing meanwhile;
    /// migrations themselves must not run concurrently (a moved split is an error).
    ///
    /// [spec]: phase0/fork-choice.md#on_block (finalization), phase0/beacon-chain.md#checkpoint
    pub fn migrate_to_finalized(
        &self,
        finalized: &Checkpoint,
        finalized_state_root: Root,
    ) -> Result<MigrationSummary, StoreError> {
        let mut summary = MigrationSummary::default();
        // The expensive part (reading the states, computing diffs) runs under a read
        // transaction, so imports can commit meanwhile; the write transaction only stores it.
        let Some(prepared) = self.prepare_cold_states(finalized, finalized_state_root)? else {
            return Ok(summary);
        };
        let new_slot = prepared.new_slot;

        let txn = self.begin_write()?;
        let split = read_split(&txn.open_table(META)?)?.ok_or(StoreError::NoAnchor)?;
        if split != prepared.split {
            return Err(invalid(
                "finalized checkpoint",
                "the split moved while the migration was prepared (concurrent migrations)",
            ));
        }

        // 1. The finalized chain since the split, newest first.
        let hot_block_summaries = read_all_block_summaries(&txn.open_table(HOT_BLOCK_SUMMARIES)?)?;
        let mut finalized_chain = Vec::new();
        let mut root = finalized.root;
        while root != split.block_root {
            let block = *hot_block_summaries
                .get(&root)
                .ok_or(StoreError::MissingBlock(root))?;
            if block.slot <= split.slot {
                return Err(invalid(
                    "finalized checkpoint",
                    format!(
                        "block {} does not descend from the split block",
                        finalized.root
                    ),
                ));
            }
            finalized_chain.push((root, block.slot));
            root = block.parent_root;
        }
        {
            let hot_blocks = txn.open_table(HOT_BLOCKS)?;
            let mut cold_blocks = txn.open_table(COLD_BLOCKS)?;
            let mut cold_roots = txn.open_table(COLD_BLOCK_ROOTS)?;
            for (root, slot) in &finalized_chain {
                let sealed = hot_blocks
                    .get(root.0)?
                    .ok_or(StoreError::MissingBlock(*root))?
                    .value()
                    .to_vec();
                cold_blocks.insert(root.0, sealed.as_slice())?;
                cold_roots.insert(*slot, root.0)?;
            }
        }
        summary.blocks_finalized = finalized_chain.len();

        // 2. Finalized state roots and the cold grid.
        {
            let mut cold_state_roots = txn.open_table(COLD_STATE_ROOTS)?;
            for (slot, root) in &prepared.state_roots {
                cold_state_roots.insert(root.0, *slot)?;
            }
            let mut cold = txn.open_table(COLD_STATES)?;
            for (slot, value) in &prepared.cold_states {
                cold.insert(*slot, value.as_slice())?;
            }
        }
        if let Some(slot) = prepared.last_snapshot {
            txn.open_table(META)?
                .insert(COLD_SNAPSHOT_KEY, slot.to_le_bytes().as_slice())?;
        }
        summary.cold_snapshots = prepared.snapshots;
        summary.cold_diffs = prepared.diffs;
        summary.cold_states_missing = prepared.missing;
        drop(prepared);

        let mut doomed_files = Vec::new();
        // 3. Prune: keep only hot blocks descending from the finalized block, and hot states on
        //    them from the checkpoint on.
        let finalized_set: HashSet<Root> = finalized_chain.iter().map(|(r, _)| *r).collect();
        let mut sorted: Vec<(Root, BlockSummary)> = hot_block_summaries.into_iter().collect();
        sorted.sort_by_key(|(_, s)| s.slot);
        let mut keep: HashSet<Root> = HashSet::from([finalized.root]);
        for (root, block) in &sorted {
            if keep.contains(&block.parent_root) && *root != split.block_root {
                keep.insert(*root);
            }
        }
        {
            let mut hot_blocks = txn.open_table(HOT_BLOCKS)?;
            let mut hot_summaries = txn.open_table(HOT_BLOCK_SUMMARIES)?;
            let mut columns = txn.open_table(DATA_COLUMNS)?;
            let mut blobs = txn.open_table(BLOB_SIDECARS)?;
            let mut sidecar_slots = txn.open_table(DATA_SIDECAR_SLOTS)?;
            let mut envelopes = txn.open_table(EXECUTION_PAYLOAD_ENVELOPES)?;
            let mut envelope_slots = txn.open_table(EXECUTION_PAYLOAD_ENVELOPE_SLOTS)?;
            for (root, block) in &sorted {
                if keep.contains(root) {
                    continue;
                }
                hot_blocks.remove(root.0)?;
                hot_summaries.remove(root.0)?;
                if !finalized_set.contains(root) && *root != split.block_root {
                    delete_sidecars(&mut columns, root)?;
                    delete_sidecars(&mut blobs, root)?;
                    sidecar_slots.remove(slot_root_key(block.slot, root))?;
                    // Stored at its block's slot (`StoreBatch::put_execution_payload_envelope`).
                    envelopes.remove(root.0)?;
                    envelope_slots.remove(slot_root_key(block.slot, root))?;
                    summary.blocks_pruned += 1;
                }
            }
        }
        {
            let mut states = txn.open_table(HOT_STATES)?;
            let mut pending = txn.open_table(PENDING_SNAPSHOTS)?;
            let mut summaries = txn.open_table(HOT_STATE_SUMMARIES)?;
            let mut doomed = HashSet::new();
            let mut kept = Vec::new();
            for entry in summaries.iter()? {
                let (key, value) = entry?;
                let root = Root::from(key.value());
                let s = decode_state_summary(value.value(), &root)?;
                if s.slot < new_slot || !keep.contains(&s.latest_block_root) {
                    doomed.insert(root);
                } else {
                    kept.push((root, s));
                }
            }
            for root in &doomed {
                summaries.remove(root.0)?;
                pending.remove(root.0)?;
                if states.remove(root.0)?.is_some() {
                    doomed_files.push(*root);
                }
            }
            // A kept state naming a pruned snapshot (one that named an older snapshot while
            // its own was pending) names the checkpoint state instead: every kept state
            // descends from it.
            for (root, s) in kept {
                if doomed.contains(&s.boundary_state_root) {
                    let record = Record::default()
                        .u64(s.slot)
                        .root(&s.latest_block_root)
                        .root(&finalized_state_root)
                        .into_bytes();
                    summaries.insert(root.0, record.as_slice())?;
                }
            }
            summary.states_pruned = doomed.len();
        }

        // 4. Sidecar and envelope retention, from the finalized epoch (never later than the
        //    current one).
        summary.sidecar_blocks_expired = self.prune_sidecars_in(&txn, finalized.epoch)?;
        summary.envelopes_expired = self.prune_envelopes_in(&txn, finalized.epoch)?;

        let mut meta = txn.open_table(META)?;
        write_split(
            &mut meta,
            &Split {
                slot: new_slot,
                state_root: finalized_state_root,
                block_root: finalized.root,
            },
        )?;
        write_finalized(&mut meta, finalized)?;
        drop(meta);
        txn.commit()?;
        // Only now that no committed reference names them, and under the write lock, each
        // checked once more: a batch that committed since may have stored one of these states
        // again (a late caller storing an old checkpoint state). One that cannot be deleted
        // stays an orphan until the next open.
        if !doomed_files.is_empty() {
            let txn = self.begin_write()?;
            {
                let states = txn.open_table(HOT_STATES)?;
                for root in &doomed_files {
                    if states.get(root.0)?.is_none() {
                        let _ = self.state_files.remove(root);
                    }
                }
            }
            txn.abort()?;
        }
        Ok(summary)
    }

    /// Deletes data columns older than `MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS` and blob
    /// sidecars older than `MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS` before `current_epoch`;
    /// returns how many blocks lost sidecars.
    ///
    /// [spec]: fulu/p2p-interface.md#datacolumnsidecarsbyrange-v1
    pub fn prune_data_sidecars(&self, current_epoch: Epoch) -> Result<usize, StoreError> {
        let txn = self.begin_write()?;
        let n = self.prune_sidecars_in(&txn, current_epoch)?;
        txn.commit()?;
        Ok(n)
    }

    pub(super) fn prune_sidecars_in(
        &self,
        txn: &WriteTransaction,
        current_epoch: Epoch,
    ) -> Result<usize, StoreError> {
        let spe = E::slots_per_epoch();
        let column_cutoff = current_epoch
            .saturating_sub(self.spec.min_epochs_for_data_column_sidecars_requests)
            .saturating_mul(spe);
        let blob_cutoff = current_epoch
            .saturating_sub(self.spec.min_epochs_for_blob_sidecars_requests)
            .saturating_mul(spe);
        let end = column_cutoff.max(blob_cutoff);
        let mut index = txn.open_table(DATA_SIDECAR_SLOTS)?;
        let expired: Vec<(Slot, Root)> = index
            .range(..slot_root_key(end, &Root::ZERO))?
            .map(|e| e.map(|(k, _)| codec::split_slot_root_key(&k.value())))
            .collect::<Result<_, _>>()?;
        let mut columns = txn.open_table(DATA_COLUMNS)?;
        let mut blobs = txn.open_table(BLOB_SIDECARS)?;
        for (slot, root) in &expired {
            if *slot < column_cutoff {
                delete_sidecars(&mut columns, root)?;
            }
            if *slot < blob_cutoff {
                delete_sidecars(&mut blobs, root)?;
            }
            if *slot < column_cutoff.min(blob_cutoff) {
                index.remove(slot_root_key(*slot, root))?;
            }
        }
        Ok(expired.len())
    }

    /// Reads what a migration to `finalized` writes to the cold tables: the finalized state
    /// roots since the split and the grid states, as snapshots or diffs. `None` if the split is
    /// already there.
    pub(super) fn prepare_cold_states(
        &self,
        finalized: &Checkpoint,
        finalized_state_root: Root,
    ) -> Result<Option<PreparedColdStates>, StoreError> {
        let history = slots_per_historical_root::<E>();
        let new_slot = finalized.epoch * E::slots_per_epoch();
        let txn = self.read_txn()?;
        let split = read_split(&txn.open_table(META)?)?.ok_or(StoreError::NoAnchor)?;
        if new_slot < split.slot {
            return Err(StoreError::FinalizationReverted {
                new: new_slot,
                split: split.slot,
            });
        }
        if new_slot == split.slot {
            return Ok(None);
        }
        if new_slot - split.slot > history {
            return Err(StoreError::MigrationGapTooLarge {
                from: split.slot,
                to: new_slot,
            });
        }

        // The checkpoint state's `state_roots` name every finalized state root since the split.
        let hot_states = txn.open_table(HOT_STATES)?;
        let read_hot = |root: &Root| self.read_hot_snapshot(&hot_states, root);
        let (finalized_state, _) = read_hot(&finalized_state_root)?
            .ok_or(StoreError::MissingFinalizedState(finalized_state_root))?;
        if peek_u64(&finalized_state, 40) != Some(new_slot) {
            return Err(invalid(
                "finalized state",
                format!("state {finalized_state_root} is not at the checkpoint slot {new_slot}"),
            ));
        }
        let state_roots_at = STATE_ROOTS_OFFSET_BEFORE_BLOCK_ROOTS + 32 * history as usize;
        let state_roots = (split.slot + 1..=new_slot)
            .map(|slot| {
                if slot == new_slot {
                    return Ok((slot, finalized_state_root));
                }
                let at = state_roots_at + 32 * (slot % history) as usize;
                finalized_state
                    .get(at..at + 32)
                    .map(|r| (slot, Root::from_slice(r)))
                    .ok_or_else(|| StoreError::CorruptValue {
                        table: "hot_states",
                        key: key_str(&finalized_state_root),
                        reason: "too short for its state_roots".into(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        drop(finalized_state);

        // The latest cold snapshot's SSZ, as the base of diffs.
        let cold = txn.open_table(COLD_STATES)?;
        let mut base: Option<(Slot, Vec<u8>)> = None;
        let base_slot = txn
            .open_table(META)?
            .get(COLD_SNAPSHOT_KEY)?
            .and_then(|v| peek_u64(v.value(), 0));
        if let Some(slot) = base_slot
            && let Some(value) = cold.get(slot)?.map(|v| v.value().to_vec())
        {
            let (value, _) = unseal(value, "cold_states", || slot.to_string())?;
            base = self
                .read_cold_snapshot(&value, slot)?
                .map(|ssz| (slot, ssz));
        }

        let mut prepared = PreparedColdStates {
            split,
            new_slot,
            state_roots,
            cold_states: Vec::new(),
            last_snapshot: None,
            snapshots: 0,
            diffs: 0,
            missing: 0,
        };
        let grid = if self.config.cold_diff_interval == 0 {
            self.config.cold_snapshot_interval
        } else {
            self.config.cold_diff_interval
        };
        let first_grid = (split.slot / grid + 1) * grid;
        for slot in (first_grid..=new_slot).step_by(grid as usize) {
            let (_, root) = prepared.state_roots[(slot - split.slot - 1) as usize];
            let Some((ssz_bytes, fork)) = read_hot(&root)? else {
                prepared.missing += 1;
                continue;
            };
            if !slot.is_multiple_of(self.config.cold_snapshot_interval)
                && let Some((base_slot, base_ssz)) = &base
            {
                let diff = state_diff::compute_diff(base_ssz, &ssz_bytes);
                // A diff that saves little is not worth the dependency on its base.
                if diff.len() < ssz_bytes.len() / 2 {
                    let mut value = Vec::with_capacity(9 + diff.len());
                    value.push(COLD_DIFF);
                    value.extend_from_slice(&base_slot.to_le_bytes());
                    value.extend_from_slice(&diff);
                    prepared.cold_states.push((slot, seal(&value, fork)));
                    prepared.diffs += 1;
                    continue;
                }
            }
            // Its file is written now, before the migration's transaction references it; a
            // migration that does not commit leaves an orphan, removed at the next open.
            let sealed = codec::seal_owned(ssz_bytes, fork);
            let value =
                self.write_cold_snapshot(&root, fork, |files| files.write(&root, &sealed))?;
            prepared.cold_states.push((slot, value));
            prepared.snapshots += 1;
            prepared.last_snapshot = Some(slot);
            base = Some((slot, codec::unseal_owned(sealed)));
        }
        Ok(Some(prepared))
    }

    /// Writes the snapshot of the state `root` to its cold file with `write` (durably, before
    /// the transaction that references it commits) and returns the `cold_states` value that
    /// references it.
    pub(super) fn write_cold_snapshot(
        &self,
        root: &Root,
        fork: ForkName,
        write: impl FnOnce(&StateFiles) -> Result<FileRef, StoreError>,
    ) -> Result<Vec<u8>, StoreError> {
        let reference = write(&self.cold_files)?;
        let mut value = Vec::with_capacity(1 + 32 + FileRef::LEN);
        value.push(COLD_FILE);
        value.extend_from_slice(root.as_slice());
        value.extend_from_slice(&reference.to_bytes());
        Ok(seal(&value, fork))
    }
}
