//! Gloas payload gossip on a chain from a Gloas interop genesis: execution payload envelopes
//! (`verify_execution_payload_envelope_for_gossip`) and data column sidecars checked against
//! their block's bid (`verify_data_columns_for_gossip`, the batch form: a bad proof attributed
//! to its sidecar, two copies of one sidecar in a batch not both accepted); then their import
//! from gossip: the envelope and the custody columns held until both are here, whichever
//! comes first, then the block FULL and both stored.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::{
    ColumnsProcessed, ExecutionStatus, PayloadProcessed, Verdict,
    gossip::{DataColumnGossipError, EnvelopeGossipError},
    harness::{ChainHarness, HarnessConfig},
};
use fork_choice::PayloadStatus;
use mock_execution_layer::MockPayloadStatus;
use state_harness::{
    BlockContents, BuiltBlock,
    gloas::{GloasBlockContents, ParentPayload, build_gloas_block},
};
use types::{ChainSpec, DataColumnSidecar, ForkName, MinimalEthSpec, Root};

type E = MinimalEthSpec;

fn gloas_spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas)
}

async fn harness() -> ChainHarness<E> {
    harness_with_custody(None).await
}

/// The chain custodying `custody` (`None`: its configured default).
async fn harness_with_custody(custody: Option<&[u64]>) -> ChainHarness<E> {
    let mut config = HarnessConfig {
        spec: gloas_spec(),
        validators: 64,
        genesis_time: 1_600_000_000,
        ..HarnessConfig::default()
    };
    config.chain.custody_columns = custody.map(|c| c.iter().copied().collect());
    config.build().await.unwrap()
}

/// A Gloas block at slot 1 on genesis with `contents`, imported (the clock at its slot).
fn import_first_block(h: &ChainHarness<E>, contents: BlockContents) -> (BuiltBlock<E>, Root) {
    let genesis = h.chain.head();
    let built = build_gloas_block(
        &genesis.state,
        1,
        &GloasBlockContents {
            base: contents,
            payload_attestations: 0,
            parent_payload: ParentPayload::Empty,
        },
        &h.spec,
    )
    .unwrap();
    h.set_slot(1);
    let root = h
        .chain
        .import_block(
            Arc::new(built.block.clone()),
            &[],
            &state_processing::per_block::AlwaysValid,
            ExecutionStatus::Valid,
        )
        .unwrap();
    (built, root)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_envelope_is_accepted_once_and_a_forged_one_is_rejected() {
    let h = harness().await;
    let (built, root) = import_first_block(&h, BlockContents::default());
    let envelope = state_harness::gloas::self_built_envelope(&built, &h.spec).unwrap();
    let now = h.chain.now_ms();

    let mut forged = envelope.clone();
    forged.signature = types::BLSSignature::default();
    let err = h
        .chain
        .verify_execution_payload_envelope_for_gossip(Arc::new(forged), now)
        .unwrap_err();
    assert_eq!(err, EnvelopeGossipError::InvalidSignature);
    assert_eq!(err.verdict(), Verdict::Reject);

    let mut wrong_builder = envelope.clone();
    wrong_builder.message.builder_index = 0;
    let err = h
        .chain
        .verify_execution_payload_envelope_for_gossip(Arc::new(wrong_builder), now)
        .unwrap_err();
    assert!(
        matches!(err, EnvelopeGossipError::BuilderIndexMismatch { .. }),
        "{err}"
    );

    let verified = h
        .chain
        .verify_execution_payload_envelope_for_gossip(Arc::new(envelope.clone()), now)
        .unwrap();
    assert_eq!((verified.block_root, verified.slot), (root, 1));

    let err = h
        .chain
        .verify_execution_payload_envelope_for_gossip(Arc::new(envelope.clone()), now)
        .unwrap_err();
    assert!(
        matches!(err, EnvelopeGossipError::AlreadySeen { block_root, .. } if block_root == root),
        "{err}"
    );
    assert_eq!(err.verdict(), Verdict::Ignore);

    let mut unknown = envelope;
    unknown.message.beacon_block_root = Root::repeat_byte(7);
    let err = h
        .chain
        .verify_execution_payload_envelope_for_gossip(Arc::new(unknown), now)
        .unwrap_err();
    assert_eq!(err, EnvelopeGossipError::UnknownBlock(Root::repeat_byte(7)));
    assert_eq!(err.verdict(), Verdict::Ignore);
}

/// A blob whose field elements are all canonical.
fn blob(seed: u8) -> kzg::Blob {
    let mut bytes = vec![0u8; kzg::BYTES_PER_BLOB];
    for (i, fe) in bytes
        .chunks_exact_mut(kzg::BYTES_PER_FIELD_ELEMENT)
        .enumerate()
    {
        for (j, b) in fe.iter_mut().enumerate().skip(1) {
            *b = (i as u8).wrapping_mul(7) ^ (j as u8) ^ seed;
        }
    }
    *kzg::blob_from_bytes(&bytes).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_gloas_columns_is_checked_against_the_bid_each_sidecar_on_its_own() {
    let h = harness().await;
    let blob = blob(5);
    let commitment = kzg::blob_to_kzg_commitment(&blob).unwrap();
    let cells = kzg::compute_cells_and_kzg_proofs(&blob).unwrap();
    let (_, root) = import_first_block(
        &h,
        BlockContents {
            blob_kzg_commitments: vec![types::KZGCommitment::from(commitment.0)],
            ..Default::default()
        },
    );
    let column = |index: u64, proof_of: u64, slot: u64| {
        let sidecar = DataColumnSidecar::Gloas(types::gloas::DataColumnSidecar {
            index,
            column: vec![
                types::Cell::<E>::new(cells.cells[index as usize].to_bytes().to_vec()).unwrap(),
            ]
            .into(),
            kzg_proofs: vec![types::KZGProof::from(cells.proofs[proof_of as usize].0)].into(),
            slot,
            beacon_block_root: root,
        });
        // `DATA_COLUMN_SIDECAR_SUBNET_COUNT` is `NUMBER_OF_COLUMNS`: column i on subnet i.
        (Arc::new(sidecar), index)
    };
    let now = h.chain.now_ms();
    let results = h.chain.verify_data_columns_for_gossip(
        vec![
            column(0, 0, 1),
            column(0, 0, 1),
            column(5, 64, 1),
            column(64, 64, 1),
            column(9, 9, 0),
        ],
        now,
    );
    assert_eq!(results.len(), 5);
    assert_eq!(results[0].as_ref().unwrap().block_root, root);
    let verdicts: Vec<Option<Verdict>> = results
        .iter()
        .map(|r| r.as_ref().err().map(DataColumnGossipError::verdict))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            None,
            Some(Verdict::Ignore),
            Some(Verdict::Reject),
            None,
            Some(Verdict::Reject)
        ]
    );
    assert!(matches!(
        results[1],
        Err(DataColumnGossipError::AlreadySeenForBlock { index: 0, .. })
    ));
    assert!(matches!(
        results[2],
        Err(DataColumnGossipError::InvalidKzgProofs(_))
    ));
    assert!(matches!(
        results[4],
        Err(DataColumnGossipError::SlotMismatch {
            slot: 0,
            block_slot: 1
        })
    ));

    // A copy of an accepted sidecar later: IGNORE; the bad one's index is still free.
    let (sidecar, subnet) = column(64, 64, 1);
    let err = h
        .chain
        .verify_data_column_for_gossip(sidecar, subnet, now)
        .unwrap_err();
    assert_eq!(err.verdict(), Verdict::Ignore);
    let (sidecar, subnet) = column(5, 5, 1);
    h.chain
        .verify_data_column_for_gossip(sidecar, subnet, now)
        .unwrap();

    // On the wrong subnet: REJECT.
    let (sidecar, _) = column(7, 7, 1);
    let err = h
        .chain
        .verify_data_column_for_gossip(sidecar, 8, now)
        .unwrap_err();
    assert_eq!(
        err,
        DataColumnGossipError::WrongSubnet { index: 7, found: 8 }
    );
}

/// A Gloas block at slot 1 with one blob, imported; its column sidecars (cells and proofs of
/// the blob) by index, and its self-built envelope, the mock told its payload is VALID.
struct BlockWithPayload {
    root: Root,
    envelope: Arc<types::gloas::SignedExecutionPayloadEnvelope<E>>,
    cells: kzg::CellsAndProofs,
}

impl BlockWithPayload {
    fn column(&self, index: u64) -> (Arc<DataColumnSidecar<E>>, u64) {
        let sidecar = DataColumnSidecar::Gloas(types::gloas::DataColumnSidecar {
            index,
            column: vec![
                types::Cell::<E>::new(self.cells.cells[index as usize].to_bytes().to_vec())
                    .unwrap(),
            ]
            .into(),
            kzg_proofs: vec![types::KZGProof::from(self.cells.proofs[index as usize].0)].into(),
            slot: 1,
            beacon_block_root: self.root,
        });
        (Arc::new(sidecar), index)
    }
}

fn block_with_one_blob(h: &ChainHarness<E>) -> BlockWithPayload {
    let blob = blob(9);
    let commitment = kzg::blob_to_kzg_commitment(&blob).unwrap();
    let cells = kzg::compute_cells_and_kzg_proofs(&blob).unwrap();
    let (built, root) = import_first_block(
        h,
        BlockContents {
            blob_kzg_commitments: vec![types::KZGCommitment::from(commitment.0)],
            ..Default::default()
        },
    );
    let envelope = state_harness::gloas::self_built_envelope(&built, &h.spec).unwrap();
    h.mock.set_payload_status(
        envelope.message.payload.block_hash,
        MockPayloadStatus::Valid,
    );
    BlockWithPayload {
        root,
        envelope: Arc::new(envelope),
        cells,
    }
}

/// The columns through gossip validation and into the chain.
fn gossip_columns(
    h: &ChainHarness<E>,
    b: &BlockWithPayload,
    indices: &[u64],
) -> PayloadProcessed<E> {
    let inputs = indices.iter().map(|&i| b.column(i)).collect();
    let verified: Vec<_> = h
        .chain
        .verify_data_columns_for_gossip(inputs, h.chain.now_ms())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    match h
        .chain
        .import_gossip_data_columns(&b.root, verified)
        .unwrap()
    {
        ColumnsProcessed::Payload(processed) => processed,
        ColumnsProcessed::Blocks(blocks) => panic!("Gloas columns went to blocks: {blocks:?}"),
    }
}

fn gossip_envelope(h: &ChainHarness<E>, b: &BlockWithPayload) -> PayloadProcessed<E> {
    let verified = h
        .chain
        .verify_execution_payload_envelope_for_gossip(b.envelope.clone(), h.chain.now_ms())
        .unwrap();
    assert_eq!(verified.blobs, 1);
    h.chain
        .process_gossip_execution_payload_envelope(verified)
        .unwrap()
}

fn head_status(h: &ChainHarness<E>) -> (Root, Option<PayloadStatus>) {
    let head = h.chain.head();
    (head.block_root, head.payload_status)
}

fn assert_imported_and_stored(
    h: &ChainHarness<E>,
    b: &BlockWithPayload,
    processed: PayloadProcessed<E>,
) {
    let PayloadProcessed::Imported(imported) = processed else {
        panic!("not imported: {processed:?}");
    };
    assert_eq!(imported.block_root, b.root);
    // The execution client was asked (`engine_newPayloadV5`) and its VALID recorded.
    assert_eq!(imported.status, ExecutionStatus::Valid);
    assert_eq!(head_status(h), (b.root, Some(PayloadStatus::Full)));
    let stored = h
        .chain
        .store()
        .get_execution_payload_envelope(&b.root)
        .unwrap();
    assert_eq!(stored.as_ref(), Some(&*b.envelope));
    assert_eq!(
        h.chain.store().data_column_indices(&b.root).unwrap(),
        vec![0, 5, 64]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gossip_envelope_waits_for_the_custody_columns_then_makes_its_block_full() {
    let h = harness_with_custody(Some(&[0, 5, 64])).await;
    let b = block_with_one_blob(&h);

    let PayloadProcessed::Pending(missing) = gossip_envelope(&h, &b) else {
        panic!("imported without its columns");
    };
    assert!(missing.envelope_known);
    assert_eq!(missing.missing_columns, vec![0, 5, 64]);
    assert_eq!(head_status(&h), (b.root, Some(PayloadStatus::Empty)));

    // A column outside the custody is not held; two of three leave it waiting.
    let PayloadProcessed::Pending(missing) = gossip_columns(&h, &b, &[3, 0, 64]) else {
        panic!("imported one column short");
    };
    assert_eq!(missing.missing_columns, vec![5]);
    assert_eq!(head_status(&h), (b.root, Some(PayloadStatus::Empty)));

    let processed = gossip_columns(&h, &b, &[5]);
    assert_imported_and_stored(&h, &b, processed);

    // A column that comes after the payload's import is not held again.
    assert!(matches!(
        gossip_columns(&h, &b, &[7]),
        PayloadProcessed::AlreadyImported(root) if root == b.root
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gossip_columns_before_their_envelope_are_held_until_it_comes() {
    let h = harness_with_custody(Some(&[0, 5, 64])).await;
    let b = block_with_one_blob(&h);

    let PayloadProcessed::Pending(missing) = gossip_columns(&h, &b, &[0, 5, 64]) else {
        panic!("imported without the envelope");
    };
    assert!(!missing.envelope_known);
    assert!(missing.missing_columns.is_empty());
    assert_eq!(head_status(&h), (b.root, Some(PayloadStatus::Empty)));

    let processed = gossip_envelope(&h, &b);
    assert_imported_and_stored(&h, &b, processed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gossip_envelope_whose_bid_has_no_blobs_is_imported_at_once() {
    let h = harness_with_custody(Some(&[0, 5, 64])).await;
    let (built, root) = import_first_block(&h, BlockContents::default());
    let envelope = Arc::new(state_harness::gloas::self_built_envelope(&built, &h.spec).unwrap());
    h.mock.set_payload_status(
        envelope.message.payload.block_hash,
        MockPayloadStatus::Valid,
    );
    let verified = h
        .chain
        .verify_execution_payload_envelope_for_gossip(envelope, h.chain.now_ms())
        .unwrap();
    assert_eq!(verified.blobs, 0);
    let processed = h
        .chain
        .process_gossip_execution_payload_envelope(verified)
        .unwrap();
    assert!(
        matches!(&processed, PayloadProcessed::Imported(i) if i.block_root == root),
        "{processed:?}"
    );
    assert_eq!(head_status(&h), (root, Some(PayloadStatus::Full)));
    assert!(
        h.chain
            .store()
            .data_column_indices(&root)
            .unwrap()
            .is_empty()
    );
}

/// `getBlobs` reads a Gloas block's blobs from the columns that came with its envelope: from
/// the first half of the columns as they are, and recovered from the second half alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gloas_blocks_blobs_are_read_or_recovered_from_its_stored_columns() {
    for custody in [(0..64).collect::<Vec<u64>>(), (64..128).collect()] {
        let h = harness_with_custody(Some(&custody)).await;
        let b = block_with_one_blob(&h);
        assert!(matches!(
            gossip_envelope(&h, &b),
            PayloadProcessed::Pending(_)
        ));
        let processed = gossip_columns(&h, &b, &custody);
        assert!(
            matches!(processed, PayloadProcessed::Imported(_)),
            "{processed:?}"
        );
        let blobs = h.chain.blobs_from_columns(&b.root, &[0]).unwrap();
        assert_eq!(blobs.len(), 1);
        // The same commitment: the same blob.
        let got = kzg::blob_from_bytes(&blobs[0]).unwrap();
        assert_eq!(
            kzg::blob_to_kzg_commitment(&got).unwrap().0,
            kzg::blob_to_kzg_commitment(&blob(9)).unwrap().0,
            "columns {}..: not the block's blob",
            custody[0]
        );
    }
}
