//! A chain segment's import, shared by range sync and lookups: `engine_newPayload` for each
//! block beside the import (the chain's `verify_payloads_beside_import`), the segment's checks block by block (linked, the
//! custody columns present with their inclusion proofs), the chain's import of the blocks up
//! to the first that fails them, and the chain's error mapped to whose fault it is.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use beacon_chain::timeline::SeenVia;
use beacon_chain::{BlockPayloadVerdict, ChainError, InternalError, SegmentBlock, SegmentImport};
use beacon_processor::{Task, WorkKind};
use types::{DataColumnSidecar, EthSpec, Root, SignedBeaconBlock};

use crate::batch::Columns;
use crate::{Outcome, SyncContext, SyncError};

pub(crate) use beacon_chain::historical_blocks::blob_count;

/// The root of the block a column belongs to (its signed header's message).
fn block_root_of_column<E: EthSpec>(column: &DataColumnSidecar<E>) -> Root {
    column.block_root()
}

/// Imports `blocks` (oldest first) with `columns` as one segment on the processor's `kind`,
/// `engine_newPayload` for each running beside it; `outcome` turns the result into what the
/// task reports back (a dropped task reports [`SyncError::Dropped`]).
pub(crate) fn submit_segment<E: EthSpec>(
    ctx: &Arc<SyncContext<E>>,
    kind: WorkKind,
    blocks: Vec<Arc<SignedBeaconBlock<E>>>,
    columns: Columns<E>,
    outcome: impl Fn(Result<usize, SyncError>) -> Outcome + Send + Sync + 'static,
) {
    let blocks = Arc::new(blocks);
    let verdicts = ctx.chain.verify_payloads_beside_import(&blocks);
    let on_run = ctx.clone();
    let on_drop = ctx.clone();
    let outcome = Arc::new(outcome);
    let dropped = outcome.clone();
    let task = Task::new(kind, move |_| {
        let result = process_chain_segment(&on_run, &blocks, columns, &verdicts);
        on_run.send_outcome(outcome(result));
    })
    .on_drop(move |_| on_drop.send_outcome(dropped(Err(SyncError::Dropped))));
    ctx.submit(task);
}

/// Imports a downloaded segment in order: each block linked to the one before, with its
/// custody columns (inclusion proofs checked here, KZG proofs by the import), through the
/// chain's import with the engine's verdicts. Blocks imported already (by gossip meanwhile)
/// are skipped. Returns how many blocks were imported.
pub(crate) fn process_chain_segment<E: EthSpec>(
    ctx: &SyncContext<E>,
    blocks: &[Arc<SignedBeaconBlock<E>>],
    columns: Columns<E>,
    verdicts: &[BlockPayloadVerdict],
) -> Result<usize, SyncError> {
    let chain = &ctx.chain;
    let mut by_block: HashMap<Root, Columns<E>> = HashMap::new();
    for column in columns {
        by_block
            .entry(block_root_of_column(&column))
            .or_default()
            .push(column);
    }
    // The segment's checks block by block (linked, columns present with their inclusion
    // proofs); the blocks up to the first that fails them are imported as one segment, with
    // their signatures in one batch, and that failure is the answer.
    let mut segment: Vec<SegmentBlock<E>> = Vec::with_capacity(blocks.len());
    let mut segment_verdicts: Vec<&BlockPayloadVerdict> = Vec::with_capacity(blocks.len());
    let mut refused: Option<SyncError> = None;
    let mut previous: Option<Root> = None;
    for (block, status) in blocks.iter().zip(verdicts) {
        let root = block.canonical_root();
        let slot = block.slot();
        if let Some(expected) = previous
            && block.parent_root() != expected
        {
            refused = Some(SyncError::NotLinked {
                slot,
                parent: block.parent_root(),
                expected,
            });
            break;
        }
        previous = Some(root);
        if chain.is_block_imported(&root) {
            continue;
        }
        chain.record_block_seen(root, slot, SeenVia::Rpc);
        let columns = if blob_count(block) > 0 {
            match segment_columns(&ctx.custody, &mut by_block, root) {
                Ok(columns) => columns,
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        } else {
            Vec::new()
        };
        segment.push(SegmentBlock {
            block: block.clone(),
            columns,
        });
        segment_verdicts.push(status);
    }
    let mut imported = 0;
    let mut start = 0;
    loop {
        let SegmentImport {
            imported: done,
            failed,
            ..
        } = chain.import_chain_segment(&segment[start..], &segment_verdicts[start..]);
        imported += done.len();
        let Some((at, error)) = failed else {
            return match refused {
                Some(e) => Err(e),
                None => Ok(imported),
            };
        };
        let at = start + at;
        let slot = segment[at].block.slot();
        return match error {
            e @ ChainError::InvalidPayload(_) => Err(SyncError::InvalidBlock {
                slot,
                source: InternalError::new(e),
            }),
            ChainError::ForkChoice(e) => {
                use fork_choice::Error as F;
                match e {
                    // Finalized meanwhile (by other blocks): nothing to import; the blocks
                    // after it may still be new.
                    F::NotAfterFinalizedSlot { .. } => {
                        start = at + 1;
                        continue;
                    }
                    F::UnknownParent { parent, .. } => {
                        Err(SyncError::UnknownParent { slot, parent })
                    }
                    F::DataUnavailable { source, .. } => Err(SyncError::DataUnavailable {
                        slot,
                        source: InternalError::new(source),
                    }),
                    // Our store or states failed: not the peer's fault, and the same
                    // blocks may import on a retry.
                    other if other.fault() == fork_choice::Fault::Local => {
                        Err(SyncError::Internal(InternalError::new(other)))
                    }
                    other => Err(SyncError::InvalidBlock {
                        slot,
                        source: InternalError::new(other),
                    }),
                }
            }
            other => Err(SyncError::Internal(InternalError::new(other))),
        };
    }
}

/// The custody columns sent for the block `root` of a segment, each with a valid inclusion
/// proof, none missing.
fn segment_columns<E: EthSpec>(
    custody: &BTreeSet<u64>,
    by_block: &mut HashMap<Root, Columns<E>>,
    root: Root,
) -> Result<Vec<DataColumnSidecar<E>>, SyncError> {
    let sent = by_block.remove(&root).unwrap_or_default();
    let mut have = BTreeSet::new();
    for column in &sent {
        let c = match &**column {
            DataColumnSidecar::Fulu(c) => c,
            DataColumnSidecar::Gloas(_) => {
                return Err(SyncError::UnsupportedFork(column.fork_name()));
            }
        };
        if !beacon_chain::data_column_sidecars::verify_data_column_sidecar_inclusion_proof(column) {
            return Err(SyncError::BadInclusionProof {
                block_root: root,
                index: c.index,
            });
        }
        have.insert(c.index);
    }
    let missing = custody.difference(&have).count();
    if missing > 0 {
        return Err(SyncError::MissingColumns {
            block_root: root,
            missing,
        });
    }
    Ok(sent.iter().map(|c| (**c).clone()).collect())
}
