//! A chain segment's import, shared by range sync and lookups: `engine_newPayload` for each
//! block beside the import (the chain's `verify_payloads_beside_import`), the segment's checks block by block (linked, the
//! custody columns present with their inclusion proofs), the chain's import of the blocks up
//! to the first that fails them, and the chain's error mapped to whose fault it is. The
//! segment's Gloas blocks follow, one at a time, each followed by its payload envelope with
//! its custody columns (when the peer sent one), so that a child building on its parent's
//! payload finds it imported.
//!
//! [spec]: gloas/fork-choice.md#modified-on_block, gloas/fork-choice.md#new-on_execution_payload_envelope

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use beacon_chain::gloas_import::{ColumnsUnavailable, EnvelopeError};
use beacon_chain::timeline::SeenVia;
use beacon_chain::{
    BlockPayloadVerdict, ChainError, ExecutionStatus, InternalError, SegmentBlock, SegmentImport,
};
use beacon_processor::{Task, WorkKind};
use fork_choice::GloasError;
use types::{DataColumnSidecar, EthSpec, Root, SignedBeaconBlock, Slot};

use crate::batch::{Columns, Envelopes};
use crate::{Outcome, SyncContext, SyncError};

pub(crate) use beacon_chain::historical_blocks::blob_count;

/// The root of the block a column belongs to (its signed header's message).
fn block_root_of_column<E: EthSpec>(column: &DataColumnSidecar<E>) -> Root {
    column.block_root()
}

/// Imports `blocks` (oldest first) with `columns` and the Gloas blocks' `envelopes` as one
/// segment on the processor's `kind`, `engine_newPayload` for each pre-Gloas block running
/// beside it; `outcome` turns the result into what the task reports back (a dropped task
/// reports [`SyncError::Dropped`]).
pub(crate) fn submit_segment<E: EthSpec>(
    ctx: &Arc<SyncContext<E>>,
    kind: WorkKind,
    mut blocks: Vec<Arc<SignedBeaconBlock<E>>>,
    columns: Columns<E>,
    envelopes: Envelopes<E>,
    outcome: impl Fn(Result<usize, SyncError>) -> Outcome + Send + Sync + 'static,
) {
    // The blocks from the first Gloas one on carry no payload: no `engine_newPayload` for
    // them (their envelopes' payloads are sent when the envelopes are imported).
    let first_gloas = blocks
        .iter()
        .position(|b| b.signed_execution_payload_bid().is_some())
        .unwrap_or(blocks.len());
    let gloas_blocks = blocks.split_off(first_gloas);
    let blocks = Arc::new(blocks);
    let verdicts = ctx.chain.verify_payloads_beside_import(&blocks);
    let on_run = ctx.clone();
    let on_drop = ctx.clone();
    let outcome = Arc::new(outcome);
    let dropped = outcome.clone();
    let task = Task::new(kind, move |_| {
        let result = process_segment_across_gloas(
            &on_run,
            &blocks,
            &gloas_blocks,
            columns,
            envelopes,
            &verdicts,
        );
        on_run.send_outcome(outcome(result));
    })
    .on_drop(move |_| on_drop.send_outcome(dropped(Err(SyncError::Dropped))));
    ctx.submit(task);
}

/// The columns of a segment by the root of their block.
fn columns_by_block<E: EthSpec>(columns: Columns<E>) -> HashMap<Root, Columns<E>> {
    let mut by_block: HashMap<Root, Columns<E>> = HashMap::new();
    for column in columns {
        by_block
            .entry(block_root_of_column(&column))
            .or_default()
            .push(column);
    }
    by_block
}

/// Imports a downloaded segment whose `pre_gloas` blocks come before its `gloas` blocks (either
/// part may be empty): the first as [`process_chain_segment`] does, the second as
/// [`process_gloas_segment`] does, linked to the first. Returns how many blocks were imported.
pub(crate) fn process_segment_across_gloas<E: EthSpec>(
    ctx: &SyncContext<E>,
    pre_gloas: &[Arc<SignedBeaconBlock<E>>],
    gloas: &[Arc<SignedBeaconBlock<E>>],
    columns: Columns<E>,
    envelopes: Envelopes<E>,
    verdicts: &[BlockPayloadVerdict],
) -> Result<usize, SyncError> {
    let mut by_block = columns_by_block(columns);
    let imported = process_chain_segment(ctx, pre_gloas, &mut by_block, verdicts)?;
    if gloas.is_empty() {
        return Ok(imported);
    }
    let previous = pre_gloas.last().map(|b| b.canonical_root());
    let imported_gloas = process_gloas_segment(ctx, gloas, previous, &mut by_block, envelopes)?;
    Ok(imported + imported_gloas)
}

/// Imports a downloaded segment of pre-Gloas blocks in order: each block linked to the one
/// before, with its custody columns from `by_block` (inclusion proofs checked here, KZG proofs
/// by the import), through the chain's import with the engine's verdicts. Blocks imported
/// already (by gossip meanwhile) are skipped. Returns how many blocks were imported.
fn process_chain_segment<E: EthSpec>(
    ctx: &SyncContext<E>,
    blocks: &[Arc<SignedBeaconBlock<E>>],
    by_block: &mut HashMap<Root, Columns<E>>,
    verdicts: &[BlockPayloadVerdict],
) -> Result<usize, SyncError> {
    let chain = &ctx.chain;
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
            match segment_columns(&ctx.custody, by_block, root) {
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
        match import_failure(slot, error) {
            // Finalized meanwhile (by other blocks): nothing to import; the blocks after it
            // may still be new.
            None => {
                start = at + 1;
                continue;
            }
            Some(e) => return Err(e),
        }
    }
}

/// What a block's failed import (at `slot`) means for the batch: `None` for a block finalized
/// meanwhile (nothing to import, the blocks after it may still be new), else the error with
/// whose fault it is.
fn import_failure(slot: Slot, error: ChainError) -> Option<SyncError> {
    use fork_choice::Error as F;
    let store_error = |e: F| match e {
        F::NotAfterFinalizedSlot { .. } => None,
        F::UnknownParent { parent, .. } => Some(SyncError::UnknownParent { slot, parent }),
        F::DataUnavailable { source, .. } => Some(SyncError::DataUnavailable {
            slot,
            source: InternalError::new(source),
        }),
        // Our store or states failed: not the peer's fault, and the same blocks may import
        // on a retry.
        other if other.fault() == fork_choice::Fault::Local => {
            Some(SyncError::Internal(InternalError::new(other)))
        }
        other => Some(SyncError::InvalidBlock {
            slot,
            source: InternalError::new(other),
        }),
    };
    match error {
        e @ ChainError::InvalidPayload(_) => Some(SyncError::InvalidBlock {
            slot,
            source: InternalError::new(e),
        }),
        ChainError::ForkChoice(e) => store_error(e),
        ChainError::GloasForkChoice(GloasError::Store(e)) => store_error(e),
        // The batch's blocks before it were imported with their envelopes, and the download
        // checked that none the batch's own blocks build on is missing: the missing payload is
        // of a parent imported before this batch.
        ChainError::GloasForkChoice(GloasError::ParentPayloadNotVerified { parent, .. }) => {
            Some(SyncError::ParentPayloadUnknown { slot, parent })
        }
        ChainError::GloasForkChoice(e) if e.fault() == fork_choice::Fault::Local => {
            Some(SyncError::Internal(InternalError::new(e)))
        }
        ChainError::GloasForkChoice(e) => Some(SyncError::InvalidBlock {
            slot,
            source: InternalError::new(e),
        }),
        other => Some(SyncError::Internal(InternalError::new(other))),
    }
}

/// Imports the Gloas blocks of a downloaded segment in order, the first linked to `previous`
/// (when the segment had blocks before them) and each to the one before: each block (no
/// payload, no data: its own import), then its envelope, when the peer sent one and the
/// payload is not imported yet, with the block's custody columns from `by_block` (checked
/// against the bid's commitments by the import), then the next block. A block imported
/// already (by gossip meanwhile) is skipped, its envelope still imported. Returns how many
/// blocks were imported.
///
/// [spec]: gloas/fork-choice.md#modified-on_block, gloas/fork-choice.md#new-on_execution_payload_envelope
pub(crate) fn process_gloas_segment<E: EthSpec>(
    ctx: &SyncContext<E>,
    blocks: &[Arc<SignedBeaconBlock<E>>],
    mut previous: Option<Root>,
    by_block: &mut HashMap<Root, Columns<E>>,
    envelopes: Envelopes<E>,
) -> Result<usize, SyncError> {
    let chain = &ctx.chain;
    let mut envelopes: HashMap<Root, _> = envelopes
        .into_iter()
        .map(|e| (e.message.beacon_block_root, e))
        .collect();
    // A Gloas block's payload is executed with its envelope: the block has no verdict to
    // wait for.
    let no_payload = BlockPayloadVerdict::Known(ExecutionStatus::NotValidated);
    let mut imported = 0;
    for block in blocks {
        let root = block.canonical_root();
        let slot = block.slot();
        if let Some(expected) = previous
            && block.parent_root() != expected
        {
            return Err(SyncError::NotLinked {
                slot,
                parent: block.parent_root(),
                expected,
            });
        }
        previous = Some(root);
        if !chain.is_block_imported(&root) {
            chain.record_block_seen(root, slot, SeenVia::Rpc);
            let SegmentImport {
                imported: done,
                failed,
                ..
            } = chain.import_chain_segment(
                &[SegmentBlock {
                    block: block.clone(),
                    columns: Vec::new(),
                }],
                &[&no_payload],
            );
            if let Some((_, error)) = failed {
                match import_failure(slot, error) {
                    None => continue,
                    Some(e) => return Err(e),
                }
            }
            imported += done.len();
        }
        let Some(envelope) = envelopes.remove(&root) else {
            continue;
        };
        if chain.is_payload_verified(&root) {
            continue;
        }
        let columns: Vec<DataColumnSidecar<E>> = by_block
            .remove(&root)
            .unwrap_or_default()
            .iter()
            .map(|c| (**c).clone())
            .collect();
        chain
            .import_rpc_execution_payload_envelope(envelope, &columns)
            .map_err(|e| envelope_failure(slot, root, e))?;
    }
    Ok(imported)
}

/// What an envelope's failed import (of the block `block_root` at `slot`) means for the
/// batch: missing custody columns as for a block's, a bad envelope or bad columns the peer's
/// fault, our own failures nobody's.
pub(crate) fn envelope_failure(slot: Slot, block_root: Root, error: EnvelopeError) -> SyncError {
    if let EnvelopeError::DataUnavailable {
        source: ColumnsUnavailable::Missing(missing),
        ..
    } = &error
    {
        return SyncError::MissingColumns {
            block_root,
            missing: missing.len(),
        };
    }
    match error.fault() {
        Some(fork_choice::Fault::Message) => match error {
            EnvelopeError::DataUnavailable { .. } => SyncError::DataUnavailable {
                slot,
                source: InternalError::new(error),
            },
            other => SyncError::InvalidEnvelope {
                slot,
                source: InternalError::new(other),
            },
        },
        Some(fork_choice::Fault::Local) | None => SyncError::Internal(InternalError::new(error)),
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
            // A Gloas sidecar names a Gloas block's root: none for a pre-Gloas block.
            DataColumnSidecar::Gloas(c) => {
                return Err(SyncError::UnexpectedColumn {
                    slot: c.slot,
                    index: c.index,
                });
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
