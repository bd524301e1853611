//! Blocks with blobs through the availability checker: a gossip block waits for its custody
//! columns, the columns (verified as one KZG batch) make it available and it is imported
//! without verifying them again; a column with a bad proof is attributed to its position in
//! the batch while the valid ones from another sender still make the block available.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::collections::BTreeSet;
use std::sync::Arc;

use beacon_chain::{
    BeaconChain, BlockProcessed, ChainConfig, ChainError, ExecutionBlobsError, ExecutionStatus,
    ManualSlotClock, ReconstructionError, Verdict,
    data_column_sidecars::get_data_column_sidecars_from_block, gossip::DataColumnGossipError,
    timeline::AvailableVia,
};
use fork_choice::ThreadPoolBuilder;
use state_harness::{BlockContents, BuiltBlock, build_block};
use state_processing::{CachedBeaconState, genesis::interop_genesis_state, per_block::AlwaysValid};
use store::{Store, StoreConfig};
use types::{
    ChainSpec, DataColumnSidecar, ForkName, KZGCommitment, KZGProof, MinimalEthSpec, Root,
    SignedBeaconBlock, Slot,
};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const ANCHOR_SLOT: Slot = 16;

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

struct Setup {
    spec: Arc<ChainSpec>,
    clock: Arc<ManualSlotClock>,
    chain: BeaconChain<E>,
    anchor: BuiltBlock<E>,
    _dir: tempfile::TempDir,
}

fn setup(custody: Option<BTreeSet<u64>>) -> Setup {
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
    let genesis =
        interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec).unwrap();
    let anchor = build_block(
        &CachedBeaconState::new(genesis),
        ANCHOR_SLOT,
        &BlockContents::default(),
        &spec,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::<E>::open(
        &dir.path().join("db"),
        (*spec).clone(),
        StoreConfig::default(),
    )
    .unwrap();
    let clock = Arc::new(ManualSlotClock::new(0));
    let chain = BeaconChain::from_anchor(
        Arc::new(store),
        anchor.post.clone(),
        anchor.block.clone(),
        spec.clone(),
        clock.clone(),
        Arc::new(ThreadPoolBuilder::new().num_threads(2).build().unwrap()),
        ChainConfig {
            custody_columns: custody,
            ..ChainConfig::default()
        },
    )
    .unwrap();
    Setup {
        spec,
        clock,
        chain,
        anchor,
        _dir: dir,
    }
}

/// A block at `slot` on the anchor with `n` blobs, and its 128 column sidecars.
fn block_with_blobs(
    s: &Setup,
    slot: Slot,
    n: u8,
) -> (BuiltBlock<E>, Vec<Arc<DataColumnSidecar<E>>>) {
    let blobs: Vec<kzg::Blob> = (0..n).map(blob).collect();
    let commitments = blobs
        .iter()
        .map(|b| KZGCommitment::from(kzg::blob_to_kzg_commitment(b).unwrap().0))
        .collect();
    let contents = BlockContents {
        blob_kzg_commitments: commitments,
        ..BlockContents::default()
    };
    let built = build_block(&s.anchor.post, slot, &contents, &s.spec).unwrap();
    let cells: Vec<kzg::CellsAndProofs> = blobs
        .iter()
        .map(|b| kzg::compute_cells_and_kzg_proofs(b).unwrap())
        .collect();
    let sidecars = get_data_column_sidecars_from_block(&built.block, &cells)
        .unwrap()
        .into_iter()
        .map(Arc::new)
        .collect();
    (built, sidecars)
}

fn now(s: &Setup, slot: Slot) -> u64 {
    let t = s.spec.compute_time_at_slot(GENESIS_TIME, slot) * 1000 + 500;
    s.clock.set_ms(t);
    t
}

#[test]
fn a_block_waits_for_its_columns_and_imports_when_they_arrive() {
    let s = setup(None);
    let slot = ANCHOR_SLOT + 1;
    let (built, sidecars) = block_with_blobs(&s, slot, 2);
    let t = now(&s, slot);
    let root = built.block.canonical_root();
    let outcome = gossip_block(&s, &built.block, t);
    let BlockProcessed::Pending(missing) = outcome else {
        panic!("a block with blobs waits for its columns: {outcome:?}");
    };
    assert_eq!(missing.missing_columns.len(), 128);
    assert_ne!(s.chain.head().block_root, root);

    // Half the columns: still pending.
    let with_subnets = |cols: &[Arc<DataColumnSidecar<E>>]| {
        cols.iter().map(|c| (c.clone(), column_index(c))).collect()
    };
    let outcome = gossip_columns(&s, with_subnets(&sidecars[..64]), t);
    assert!(matches!(&outcome[..], [BlockProcessed::Pending(m)] if m.missing_columns.len() == 64));
    assert_eq!(s.chain.pending_columns(&root).len(), 64);

    // The rest: imported.
    let outcome = gossip_columns(&s, with_subnets(&sidecars[64..]), t);
    assert_eq!(outcome, vec![BlockProcessed::Imported(root)]);
    assert_eq!(s.chain.head().block_root, root);
    assert_eq!(
        s.chain.store().data_column_indices(&root).unwrap().len(),
        128
    );
    let timeline = s.chain.block_timeline(&root).unwrap();
    assert!(timeline.gossip_verified.is_some());
    assert_eq!(
        timeline.available.map(|(_, via)| via),
        Some(AvailableVia::Columns)
    );
    assert!(timeline.imported.is_some() && timeline.head.is_some());
}

/// Gossip-validates `block` at `t` and hands it to the availability checker.
fn gossip_block(s: &Setup, block: &SignedBeaconBlock<E>, t: u64) -> BlockProcessed {
    let verified = s
        .chain
        .verify_block_for_gossip(Arc::new(block.clone()), t)
        .unwrap();
    s.chain
        .process_gossip_block(verified, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap()
}

/// Gossip-validates `columns` (each with its subnet) at `t`, every one expected valid, and hands
/// them to the availability checker.
fn gossip_columns(
    s: &Setup,
    columns: Vec<(Arc<DataColumnSidecar<E>>, u64)>,
    t: u64,
) -> Vec<BlockProcessed> {
    let verified = s
        .chain
        .verify_data_columns_for_gossip(columns, t)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    s.chain
        .process_gossip_data_columns(verified, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap()
}

fn column_index(c: &DataColumnSidecar<E>) -> u64 {
    let DataColumnSidecar::Fulu(c) = c else {
        panic!("the tests make Fulu sidecars");
    };
    c.index
}

#[test]
fn a_bad_column_is_attributed_and_the_good_copies_make_the_block_available() {
    // A node custodying eight columns.
    let custody: BTreeSet<u64> = (0..8).map(|i| i * 16).collect();
    let s = setup(Some(custody.clone()));
    let slot = ANCHOR_SLOT + 1;
    let (built, sidecars) = block_with_blobs(&s, slot, 3);
    let t = now(&s, slot);
    let root = built.block.canonical_root();
    gossip_block(&s, &built.block, t);

    // Peer A sends the custody columns, one of them (position 3) with a wrong proof.
    let mut from_a: Vec<(Arc<DataColumnSidecar<E>>, u64)> = custody
        .iter()
        .map(|&i| (sidecars[i as usize].clone(), i))
        .collect();
    let mut bad = (*from_a[3].0).clone();
    let DataColumnSidecar::Fulu(inner) = &mut bad else {
        panic!("the tests make Fulu sidecars");
    };
    let other = inner.kzg_proofs[1];
    inner.kzg_proofs[0] = KZGProof::from(other.0);
    from_a[3].0 = Arc::new(bad);
    let results = s.chain.verify_data_columns_for_gossip(from_a, t);
    for (position, result) in results.iter().enumerate() {
        if position == 3 {
            let err = result.as_ref().unwrap_err();
            assert!(
                matches!(err, DataColumnGossipError::InvalidKzgProofs(_)),
                "{err}"
            );
            assert_eq!(err.verdict(), Verdict::Reject);
        } else {
            assert!(result.is_ok(), "position {position}: {result:?}");
        }
    }
    let good: Vec<_> = results.into_iter().filter_map(Result::ok).collect();
    let outcome = s
        .chain
        .process_gossip_data_columns(good, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap();
    assert!(matches!(&outcome[..], [BlockProcessed::Pending(m)] if m.missing_columns == vec![48]));

    // Peer B sends the genuine column 48: the block becomes available and is imported.
    let from_b = vec![(sidecars[48].clone(), 48)];
    let outcome = gossip_columns(&s, from_b, t);
    assert_eq!(outcome, vec![BlockProcessed::Imported(root)]);
    assert_eq!(s.chain.head().block_root, root);
}

#[test]
fn a_supernode_with_half_the_columns_reconstructs_and_publishes_the_rest() {
    let s = setup(None);
    let slot = ANCHOR_SLOT + 1;
    let (built, sidecars) = block_with_blobs(&s, slot, 2);
    let t = now(&s, slot);
    let root = built.block.canonical_root();
    gossip_block(&s, &built.block, t);
    // The odd columns arrive.
    let odd: Vec<_> = sidecars
        .iter()
        .filter(|c| column_index(c) % 2 == 1)
        .map(|c| (c.clone(), column_index(c)))
        .collect();
    gossip_columns(&s, odd, t);
    assert!(s.chain.take_reconstruction_request(&root));
    assert!(!s.chain.take_reconstruction_request(&root), "asked once");
    // Column 0 passes gossip validation while the reconstruction waits (it is still on its
    // way to the availability checker): it is not published again.
    let column_0 = s
        .chain
        .verify_data_column_for_gossip(sidecars[0].clone(), 0, t);
    assert!(column_0.is_ok(), "{column_0:?}");

    let beacon_chain::block_import::Reconstructed { published, outcome } = s
        .chain
        .reconstruct_data_columns(&root, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap();
    assert_eq!(outcome, vec![BlockProcessed::Imported(root)]);
    assert_eq!(published.len(), 63, "the even columns but column 0");
    for column in &published {
        let i = column_index(column) as usize;
        assert_eq!(i % 2, 0);
        assert_ne!(i, 0);
        assert_eq!(**column, *sidecars[i], "column {i} is the original");
    }
    // A peer's copy of a published column is a repeat: IGNOREd.
    let repeat = s
        .chain
        .verify_data_column_for_gossip(sidecars[2].clone(), 2, t)
        .unwrap_err();
    assert_eq!(
        repeat.verdict(),
        beacon_chain::Verdict::Ignore,
        "{repeat:?}"
    );
    assert_eq!(s.chain.head().block_root, root);
    let timeline = s.chain.block_timeline(&root).unwrap();
    assert_eq!(
        timeline.available.map(|(_, via)| via),
        Some(AvailableVia::Reconstruction)
    );
}

/// The rest of the columns arrive while the reconstruction waits in its queue: the block is
/// imported by them, and the reconstruction then finds nothing to do (no error, nothing to
/// publish).
#[test]
fn a_reconstruction_after_the_last_column_arrived_does_nothing() {
    let s = setup(None);
    let slot = ANCHOR_SLOT + 1;
    let (built, sidecars) = block_with_blobs(&s, slot, 2);
    let t = now(&s, slot);
    let root = built.block.canonical_root();
    gossip_block(&s, &built.block, t);
    let (odd, even): (Vec<_>, Vec<_>) = sidecars
        .iter()
        .map(|c| (c.clone(), column_index(c)))
        .partition(|(_, i)| i % 2 == 1);
    gossip_columns(&s, odd, t);
    assert!(s.chain.take_reconstruction_request(&root));
    gossip_columns(&s, even, t);
    assert_eq!(s.chain.head().block_root, root);

    let beacon_chain::block_import::Reconstructed { published, outcome } = s
        .chain
        .reconstruct_data_columns(&root, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap();
    assert!(published.is_empty());
    assert_eq!(outcome, vec![BlockProcessed::Imported(root)]);
    // An unknown block is still an error: no columns held to reconstruct from.
    let unknown = Root::repeat_byte(7);
    let err = s
        .chain
        .reconstruct_data_columns(&unknown, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap_err();
    assert!(
        matches!(
            err,
            ChainError::Reconstruction {
                block_root,
                source: ReconstructionError::TooFewColumns { held: 0, needed: 64 },
            } if block_root == unknown
        ),
        "{err:?}"
    );
}

#[test]
fn the_execution_clients_blobs_fill_in_when_no_column_comes() {
    let s = setup(None);
    let slot = ANCHOR_SLOT + 1;
    let n = 2;
    let (built, sidecars) = block_with_blobs(&s, slot, n);
    let t = now(&s, slot);
    let root = built.block.canonical_root();
    gossip_block(&s, &built.block, t);
    // What `engine_getBlobsV2` returns: each blob with its 128 cell proofs.
    let from_el: Vec<beacon_chain::ExecutionBlob> = (0..n)
        .map(|i| {
            let b = blob(i);
            let proofs = kzg::compute_cells_and_kzg_proofs(&b)
                .unwrap()
                .proofs
                .to_vec();
            (Box::new(b), proofs)
        })
        .collect();
    // A short proof list is refused with a typed error, the block still pending.
    let mut short = from_el.clone();
    short[1].1.pop();
    let err = s
        .chain
        .process_execution_blobs(&root, &short, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap_err();
    assert!(
        matches!(
            err,
            ChainError::ExecutionBlobs {
                block_root,
                source: ExecutionBlobsError::CellProofCount {
                    proofs: 127,
                    expected: 128
                },
            } if block_root == root
        ),
        "{err:?}"
    );
    let made = s
        .chain
        .process_execution_blobs(&root, &from_el, &AlwaysValid, ExecutionStatus::Valid)
        .unwrap();
    assert_eq!(made.outcome, vec![BlockProcessed::Imported(root)]);
    assert_eq!(made.published.len(), 128);
    for column in &made.published {
        let i = column_index(column) as usize;
        assert_eq!(**column, *sidecars[i], "column {i} is the proposer's");
    }
    assert_eq!(s.chain.head().block_root, root);
    let timeline = s.chain.block_timeline(&root).unwrap();
    assert_eq!(
        timeline.available.map(|(_, via)| via),
        Some(AvailableVia::GetBlobs)
    );
}
