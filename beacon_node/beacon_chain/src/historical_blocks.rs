//! Historical blocks: the finalized blocks before a checkpoint-sync anchor, imported below the
//! store's oldest block, newest batch first (backfill).
//!
//! The blocks are finalized, so no state transition runs: a batch is authenticated by its hash
//! chain (its newest block must be the parent the store expects, the stored oldest block's
//! `parent_root`, and each block the parent of the next), its proposer signatures in one batch
//! against the head state's registry (validators are never removed, so it holds every earlier
//! proposer), and its custody columns by their inclusion proofs and one batch of KZG proofs.
//! Blocks, columns and the store's oldest-block record are written in one store batch: a restart
//! resumes from the record.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use bls::{PublicKey, Signature, SignatureSet};
use store::{OldestBlock, StoreError};
use types::signing::{DOMAIN_BEACON_PROPOSER, compute_domain, compute_signing_root};
use types::{DataColumnSidecar, EthSpec, Root, SignedBeaconBlock, Slot};

use crate::BeaconChain;
use crate::data_column_verification::{DataColumnError, verify_data_column_sidecars_standalone};

/// One batch of historical blocks, ascending, with the custody columns of those with blobs.
#[derive(Debug, Clone)]
pub struct HistoricalBatch<E: EthSpec> {
    /// The blocks, ascending by slot; those at or after the oldest stored block are skipped
    /// (an overlapping retry).
    pub blocks: Vec<Arc<SignedBeaconBlock<E>>>,
    /// The custody columns of the blocks with blobs from `columns_from` on.
    pub columns: Vec<Arc<DataColumnSidecar<E>>>,
    /// The oldest block stored when the batch was asked for: its newest block must be this
    /// block's parent.
    pub oldest: OldestBlock,
    /// The batch's first slot (0: the batch must end at the genesis block).
    pub start: Slot,
    /// The first slot whose columns were fetched (`None`: no columns expected).
    pub columns_from: Option<Slot>,
}

/// Whose fault a [`HistoricalBlockError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoricalFault {
    /// The data: whoever served the batch sent blocks or columns that do not verify.
    Data,
    /// Ours (the store, the head state): the same batch may import on a retry.
    Local,
}

/// Why a historical batch was not imported.
#[derive(Debug, thiserror::Error)]
pub enum HistoricalBlockError {
    /// A block that is not the parent the chain expects there. Data.
    #[error("block at slot {slot} has root {root}, the chain expects {expected}")]
    NotChained {
        /// The block's slot.
        slot: Slot,
        /// Its root.
        root: Root,
        /// The root the next block names as its parent.
        expected: Root,
        /// Whether it is the batch's newest block (which may fail through a gap left by the
        /// batch after it).
        newest: bool,
    },
    /// A batch down to genesis whose oldest block is not the genesis block. Data.
    #[error("the batch from slot 0 ends at slot {slot}, not at the genesis block")]
    MissingGenesis {
        /// The slot of its oldest block.
        slot: Slot,
    },
    /// A block names a proposer the registry does not hold (or whose key does not decompress).
    /// Data.
    #[error("block at slot {slot}: proposer {proposer} has no usable key")]
    UnknownProposer {
        /// The block's slot.
        slot: Slot,
        /// The proposer index it names.
        proposer: u64,
        /// What the registry lookup said.
        #[source]
        source: state_processing::Error,
    },
    /// A block's signature is not a valid BLS signature encoding. Data.
    #[error("block at slot {slot}: malformed signature")]
    MalformedSignature {
        /// The block's slot.
        slot: Slot,
    },
    /// The batch's proposer signatures fail as one batch. Data.
    #[error("proposer signatures of {count} blocks from slot {from_slot} fail")]
    BadSignatures {
        /// How many signatures the batch held.
        count: usize,
        /// The batch's first slot.
        from_slot: Slot,
    },
    /// A block with blobs in the column window without all of our custody columns. Data of a
    /// peer that custodies every column; of others, maybe not (they serve what they custody).
    #[error("block {block_root}: {missing} custody columns missing")]
    MissingColumns {
        /// The block.
        block_root: Root,
        /// How many custody columns were not sent.
        missing: usize,
    },
    /// A column of a block outside the batch or the window, or sent twice. Data.
    #[error("column {index} of block {block_root} was not asked for")]
    UnexpectedColumn {
        /// The block the column names.
        block_root: Root,
        /// Its index.
        index: u64,
    },
    /// A column's inclusion proof or KZG proofs fail. Data.
    #[error("column {index} of block {block_root} invalid")]
    BadColumn {
        /// The block.
        block_root: Root,
        /// The column index.
        index: u64,
        /// What failed.
        #[source]
        source: DataColumnError,
    },
    /// The head state could not be read for the registry. Ours.
    #[error("the head state cannot be read")]
    HeadState(#[source] state_processing::Error),
    /// The store could not be written. Ours.
    #[error("the store failed")]
    Store(#[source] StoreError),
}

impl HistoricalBlockError {
    /// Whose fault this error is ([`HistoricalFault`]); `MissingColumns` counts as the data's
    /// (the caller knows whether the peer was to hold every column).
    pub fn fault(&self) -> HistoricalFault {
        match self {
            Self::HeadState(_) | Self::Store(_) => HistoricalFault::Local,
            Self::NotChained { .. }
            | Self::MissingGenesis { .. }
            | Self::UnknownProposer { .. }
            | Self::MalformedSignature { .. }
            | Self::BadSignatures { .. }
            | Self::MissingColumns { .. }
            | Self::UnexpectedColumn { .. }
            | Self::BadColumn { .. } => HistoricalFault::Data,
        }
    }
}

impl<E: EthSpec> BeaconChain<E> {
    /// Imports a batch of historical blocks below the store's oldest block: checks its hash
    /// chain, its proposer signatures and its custody columns (`custody`), then writes the
    /// blocks, the columns and the new oldest block in one store batch. Returns how many blocks
    /// were stored and the oldest block after the batch. CPU work runs on `pool`.
    pub fn import_historical_block_batch(
        &self,
        batch: HistoricalBatch<E>,
        custody: &BTreeSet<u64>,
        pool: &bls::ThreadPool,
    ) -> Result<(usize, OldestBlock), HistoricalBlockError> {
        let HistoricalBatch {
            blocks,
            columns,
            oldest,
            start,
            columns_from,
        } = batch;
        // Blocks at or after the oldest stored one are held already (an overlapping retry).
        let blocks: Vec<_> = blocks
            .into_iter()
            .filter(|b| b.slot() < oldest.slot)
            .collect();
        let roots = verify_hash_chain(&blocks, &oldest)?;
        let new_oldest = match blocks.first().zip(roots.first()) {
            Some((block, root)) => OldestBlock {
                slot: block.slot(),
                root: *root,
                parent_root: block.parent_root(),
            },
            None => oldest,
        };
        // Slot 0 always holds the genesis block: a batch from slot 0 that chains must end there.
        if start == 0 && !new_oldest.is_genesis() {
            return Err(HistoricalBlockError::MissingGenesis {
                slot: new_oldest.slot,
            });
        }
        self.verify_proposer_signatures(&blocks, &roots, pool)?;
        let columns =
            self.verify_custody_columns(&blocks, &roots, columns, columns_from, custody, pool)?;

        let mut batch = self
            .store()
            .begin_batch()
            .map_err(HistoricalBlockError::Store)?;
        for (block, root) in blocks.iter().zip(&roots).rev() {
            batch
                .put_backfilled_block(*root, block)
                .map_err(HistoricalBlockError::Store)?;
        }
        for (root, column) in &columns {
            batch
                .put_data_column(*root, column)
                .map_err(HistoricalBlockError::Store)?;
        }
        if new_oldest != oldest {
            batch
                .set_oldest_block(new_oldest)
                .map_err(HistoricalBlockError::Store)?;
        }
        batch.commit().map_err(HistoricalBlockError::Store)?;
        Ok((blocks.len(), new_oldest))
    }

    /// The proposer signatures of `blocks` (but the genesis block's, which has none) in one
    /// batch, with the keys of the head state's registry and the domain of each block's epoch.
    ///
    /// [spec]: phase0/beacon-chain.md#beacon-chain-state-transition-function (`verify_block_signature`)
    fn verify_proposer_signatures(
        &self,
        blocks: &[Arc<SignedBeaconBlock<E>>],
        roots: &[Root],
        pool: &bls::ThreadPool,
    ) -> Result<(), HistoricalBlockError> {
        let spec = self.spec();
        let genesis_validators_root = self.genesis_validators_root();
        let head = self.head();
        let view = head.state.view().map_err(HistoricalBlockError::HeadState)?;
        let mut sets = Vec::with_capacity(blocks.len());
        for (block, root) in blocks.iter().zip(roots) {
            if block.slot() == 0 {
                continue;
            }
            let proposer = block.proposer_index();
            let key: PublicKey = head
                .state
                .caches
                .pubkey(&view, proposer)
                .map_err(|source| HistoricalBlockError::UnknownProposer {
                    slot: block.slot(),
                    proposer,
                    source,
                })?;
            let signature = Signature::deserialize(block.signature().as_slice())
                .map_err(|_| HistoricalBlockError::MalformedSignature { slot: block.slot() })?;
            let epoch = block.slot() / E::slots_per_epoch();
            let domain = compute_domain(
                DOMAIN_BEACON_PROPOSER,
                spec.compute_fork_version(epoch),
                genesis_validators_root,
            );
            let message = compute_signing_root(root, domain);
            sets.push(SignatureSet::new(signature, vec![key], message.0));
        }
        if sets.is_empty() || bls::verify_signature_sets(&sets, pool) {
            Ok(())
        } else {
            Err(HistoricalBlockError::BadSignatures {
                count: sets.len(),
                from_slot: blocks.first().map_or(0, |b| b.slot()),
            })
        }
    }

    /// The custody columns of the blocks with blobs from `columns_from` on: every custody
    /// column present, none of another block, inclusion and KZG proofs verified in one batch.
    /// Returns the columns to store with their block roots.
    fn verify_custody_columns(
        &self,
        blocks: &[Arc<SignedBeaconBlock<E>>],
        roots: &[Root],
        columns: Vec<Arc<DataColumnSidecar<E>>>,
        columns_from: Option<Slot>,
        custody: &BTreeSet<u64>,
        pool: &bls::ThreadPool,
    ) -> Result<Vec<(Root, DataColumnSidecar<E>)>, HistoricalBlockError> {
        let wanted: HashSet<Root> = blocks
            .iter()
            .zip(roots)
            .filter(|(b, _)| columns_from.is_some_and(|from| b.slot() >= from) && blob_count(b) > 0)
            .map(|(_, root)| *root)
            .collect();
        let mut have: HashMap<Root, BTreeSet<u64>> = HashMap::new();
        let mut kept = Vec::with_capacity(columns.len());
        for column in columns {
            let (block_root, index) = (column.block_root(), column.index());
            if !wanted.contains(&block_root) || !have.entry(block_root).or_default().insert(index) {
                return Err(HistoricalBlockError::UnexpectedColumn { block_root, index });
            }
            kept.push(column);
        }
        for root in &wanted {
            let missing = have
                .get(root)
                .map_or(custody.len(), |got| custody.difference(got).count());
            if missing > 0 {
                return Err(HistoricalBlockError::MissingColumns {
                    block_root: *root,
                    missing,
                });
            }
        }
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        let outcome = verify_data_column_sidecars_standalone(kept.clone(), self.spec(), pool);
        if let Some((position, error)) = outcome.failed.into_iter().next() {
            return Err(HistoricalBlockError::BadColumn {
                block_root: kept[position].block_root(),
                index: kept[position].index(),
                source: error,
            });
        }
        Ok(outcome
            .verified
            .into_iter()
            .map(|(_, column)| (column.block_root(), (**column.sidecar()).clone()))
            .collect())
    }
}

/// The roots of `blocks` (ascending), checked to chain down from `oldest`: the newest block is
/// `oldest`'s parent and each block the parent of the next.
fn verify_hash_chain<E: EthSpec>(
    blocks: &[Arc<SignedBeaconBlock<E>>],
    oldest: &OldestBlock,
) -> Result<Vec<Root>, HistoricalBlockError> {
    let mut roots = vec![Root::ZERO; blocks.len()];
    let mut expected = oldest.parent_root;
    for (i, block) in blocks.iter().enumerate().rev() {
        let root = block.canonical_root();
        if root != expected {
            return Err(HistoricalBlockError::NotChained {
                slot: block.slot(),
                root,
                expected,
                newest: i + 1 == blocks.len(),
            });
        }
        roots[i] = root;
        expected = block.parent_root();
    }
    Ok(roots)
}

/// How many blobs a block commits to, counted for the columns to fetch and check: 0 for blocks
/// before Fulu (they have no columns, Electra's and Deneb's blobs being sidecars); a Gloas
/// block's bid's commitments (its columns are then refused as `UnsupportedFork` when verified).
pub fn blob_count<E: EthSpec>(block: &SignedBeaconBlock<E>) -> usize {
    if !block.fork_name().fulu_enabled() {
        return 0;
    }
    block.committed_blob_kzg_commitments().map_or(0, <[_]>::len)
}
