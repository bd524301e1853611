//! Gloas payload gossip on a chain from a Gloas interop genesis: execution payload envelopes
//! (`verify_execution_payload_envelope_for_gossip`) and data column sidecars checked against
//! their block's bid (`verify_data_columns_for_gossip`, the batch form: a bad proof attributed
//! to its sidecar, two copies of one sidecar in a batch not both accepted).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::{
    ExecutionStatus, Verdict,
    gossip::{DataColumnGossipError, EnvelopeGossipError},
    harness::{ChainHarness, HarnessConfig},
};
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
    HarnessConfig {
        spec: gloas_spec(),
        validators: 64,
        genesis_time: 1_600_000_000,
        ..HarnessConfig::default()
    }
    .build()
    .await
    .unwrap()
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
