//! Gloas import end to end on a chain from a Gloas interop genesis (every fork through Gloas at
//! genesis) with the mock execution client attached: blocks (no payload inside) and their
//! payload envelopes imported apart, the head's payload variant (FULL once the envelope is in,
//! EMPTY while it is not), the execution block hash the execution client is told, an envelope
//! the execution client calls INVALID (its block stays valid), an envelope of an unknown block,
//! a restart, and a chain anchored before Gloas that meets a Gloas block.
//!
//! The blocks are self-built (`state_harness::gloas`): their bids promise a synthetic block
//! hash, so the mock is told what to answer for each payload (`set_payload_status`). Bids carry
//! no blob commitments except in the availability test: the node custodies every column (the
//! default), and a bid without commitments has no columns to sample.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;

use beacon_chain::{
    ChainError, ColumnsUnavailable, EnvelopeError, ExecutionStatus, Fault,
    execution::forkchoice_state,
    harness::{ChainHarness, ChainStart, HarnessConfig},
};
use fork_choice::{GloasError, PayloadStatus};
use mock_execution_layer::MockPayloadStatus;
use state_harness::{
    AttestationSpec, BlockContents, BuiltBlock,
    gloas::{GloasBlockContents, ParentPayload, build_gloas_block},
};
use state_processing::CachedBeaconState;
use types::{
    ChainSpec, EthSpec, ForkName, Hash32, MinimalEthSpec, Root, Slot,
    gloas::SignedExecutionPayloadEnvelope,
};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;

fn gloas_spec() -> ChainSpec {
    ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas)
}

fn config(spec: ChainSpec) -> HarnessConfig {
    HarnessConfig {
        spec,
        validators: 64,
        genesis_time: GENESIS_TIME,
        ..HarnessConfig::default()
    }
}

async fn harness() -> ChainHarness<E> {
    config(gloas_spec()).build().await.unwrap()
}

/// A Gloas block at `slot` on `parent` (a post-state), building on the parent's payload or
/// beside it, with `contents`.
fn block_on(
    h: &ChainHarness<E>,
    parent: &CachedBeaconState<E>,
    slot: Slot,
    parent_payload: ParentPayload,
    contents: BlockContents,
) -> BuiltBlock<E> {
    build_gloas_block(
        parent,
        slot,
        &GloasBlockContents {
            base: contents,
            payload_attestations: 0,
            parent_payload,
        },
        &h.spec,
    )
    .unwrap()
}

/// [`block_on`] with `contents` whole (payload attestations included).
fn block_with(
    h: &ChainHarness<E>,
    parent: &CachedBeaconState<E>,
    slot: Slot,
    contents: &GloasBlockContents,
) -> BuiltBlock<E> {
    build_gloas_block(parent, slot, contents, &h.spec).unwrap()
}

/// Moves the clock to `slot` and imports `built` (as the chain's own import path takes it).
fn import(h: &ChainHarness<E>, built: &BuiltBlock<E>) -> Result<Root, ChainError> {
    h.set_slot(built.block.slot());
    h.chain.import_block(
        Arc::new(built.block.clone()),
        &[],
        &state_processing::per_block::AlwaysValid,
        ExecutionStatus::Valid,
    )
}

/// The bid of a built block.
fn bid(built: &BuiltBlock<E>) -> types::gloas::ExecutionPayloadBid {
    let types::SignedBeaconBlock::Gloas(block) = &built.block else {
        panic!("not a Gloas block");
    };
    block
        .message
        .body
        .signed_execution_payload_bid
        .message
        .clone()
}

/// The self-built envelope of `built`'s bid (`state_harness::gloas::self_built_envelope`).
fn envelope_of(h: &ChainHarness<E>, built: &BuiltBlock<E>) -> SignedExecutionPayloadEnvelope<E> {
    state_harness::gloas::self_built_envelope(built, &h.spec).unwrap()
}

/// Imports `built`'s envelope with the mock answering `status` for its payload.
async fn import_envelope(
    h: &ChainHarness<E>,
    built: &BuiltBlock<E>,
    status: MockPayloadStatus,
) -> Result<beacon_chain::EnvelopeImported<E>, EnvelopeError> {
    h.mock.set_payload_status(bid(built).block_hash, status);
    h.chain
        .import_execution_payload_envelope(Arc::new(envelope_of(h, built)), Vec::new())
        .await
}

fn head_variant(h: &ChainHarness<E>) -> (Root, Option<PayloadStatus>) {
    let head = h.chain.head();
    (head.block_root, head.payload_status)
}

fn head_block_hash(h: &ChainHarness<E>) -> Hash32 {
    forkchoice_state(&h.chain).unwrap().head_block_hash
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_with_their_envelopes_make_a_full_head_whose_payload_hash_the_execution_client_is_told()
 {
    let h = harness().await;
    let genesis = h.chain.head();
    assert_eq!(genesis.payload_status, Some(PayloadStatus::Empty));

    // Slot 1: the genesis payload is not known, so the first block builds beside it.
    let b1 = block_on(
        &h,
        &genesis.state,
        1,
        ParentPayload::Empty,
        Default::default(),
    );
    let r1 = import(&h, &b1).unwrap();
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Empty)));
    // An EMPTY head: the execution head is what its block built on.
    assert_eq!(head_block_hash(&h), bid(&b1).parent_block_hash);

    let imported = import_envelope(&h, &b1, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(imported.status, ExecutionStatus::Valid);
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Full)));
    assert!(!h.chain.head().execution_optimistic);
    assert_eq!(head_block_hash(&h), bid(&b1).block_hash);

    // Slot 2 builds on the payload of slot 1 (its bid's parent hash is slot 1's bid's hash).
    let b2 = block_on(&h, &b1.post, 2, ParentPayload::Full, Default::default());
    assert_eq!(bid(&b2).parent_block_hash, bid(&b1).block_hash);
    let r2 = import(&h, &b2).unwrap();
    assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Empty)));
    assert_eq!(head_block_hash(&h), bid(&b1).block_hash);

    // SYNCING imports the payload optimistically: FULL, optimistic.
    let imported = import_envelope(&h, &b2, MockPayloadStatus::Syncing)
        .await
        .unwrap();
    assert_eq!(imported.status, ExecutionStatus::NotValidated);
    assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Full)));
    assert!(h.chain.head().execution_optimistic);
    assert_eq!(head_block_hash(&h), bid(&b2).block_hash);

    // The next slot: the previous slot's payload decision falls to the tiebreaker, which
    // extends a verified payload; a block on it imports.
    let b3 = block_on(&h, &b2.post, 3, ParentPayload::Full, Default::default());
    let r3 = import(&h, &b3).unwrap();
    import_envelope(&h, &b3, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (r3, Some(PayloadStatus::Full)));
    assert_eq!(head_block_hash(&h), bid(&b3).block_hash);
    // The safe and finalized hashes resolve through the bids too (the genesis anchor's: the
    // execution genesis it built on).
    let state = forkchoice_state(&h.chain).unwrap();
    assert_eq!(state.finalized_block_hash, h.mock.genesis_block_hash());
    // The debug dump lists the blocks with their payload hashes.
    let dump = h.chain.fork_choice_dump();
    let node = dump.nodes.iter().find(|n| n.block_root == r3).unwrap();
    assert_eq!(node.execution_block_hash, bid(&b3).block_hash);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_whose_envelope_never_arrives_stays_empty_and_the_next_block_builds_on_empty() {
    let h = harness().await;
    let genesis = h.chain.head();
    let b1 = block_on(
        &h,
        &genesis.state,
        1,
        ParentPayload::Empty,
        Default::default(),
    );
    let r1 = import(&h, &b1).unwrap();

    // A block that claims slot 1's payload, which never came: refused, and not recorded as
    // failed (the envelope could still come).
    let on_full = block_on(&h, &b1.post, 2, ParentPayload::Full, Default::default());
    let err = import(&h, &on_full).unwrap_err();
    assert!(
        matches!(
            err,
            ChainError::GloasForkChoice(GloasError::ParentPayloadNotVerified { parent, .. })
                if parent == r1
        ),
        "{err}"
    );
    assert_eq!(
        h.chain.unimported_block(&on_full.block.canonical_root()),
        None
    );

    // The proposer of slot 2 builds on slot 1's EMPTY variant instead.
    let b2 = block_on(&h, &b1.post, 2, ParentPayload::Empty, Default::default());
    assert_eq!(bid(&b2).parent_block_hash, bid(&b1).parent_block_hash);
    let r2 = import(&h, &b2).unwrap();
    assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Empty)));
    // The execution head stays the execution genesis: no payload arrived.
    assert_eq!(head_block_hash(&h), h.mock.genesis_block_hash());
    assert_eq!(head_block_hash(&h), bid(&b1).parent_block_hash);

    // Slot 1's envelope arriving late makes its FULL node, but the chain has moved on: the
    // head stays on slot 2's block, which built on slot 1 EMPTY.
    import_envelope(&h, &b1, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Empty)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_envelope_the_execution_client_calls_invalid_leaves_its_block_valid_and_empty() {
    let h = harness().await;
    let genesis = h.chain.head();
    let b1 = block_on(
        &h,
        &genesis.state,
        1,
        ParentPayload::Empty,
        Default::default(),
    );
    let r1 = import(&h, &b1).unwrap();

    let err = import_envelope(
        &h,
        &b1,
        MockPayloadStatus::Invalid {
            latest_valid_hash: Some(bid(&b1).parent_block_hash),
        },
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, EnvelopeError::InvalidPayload(root) if root == r1),
        "{err}"
    );
    assert_eq!(err.fault(), Some(Fault::Message));

    // The block is untouched: imported, not failed, the head on its EMPTY node.
    assert!(h.chain.is_block_imported(&r1));
    assert_eq!(h.chain.unimported_block(&r1), None);
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Empty)));
    assert_eq!(h.chain.payload_status(&r1), ExecutionStatus::NotValidated);

    // A child on its EMPTY variant imports; a valid envelope for it still may come and count.
    let b2 = block_on(&h, &b1.post, 2, ParentPayload::Empty, Default::default());
    let r2 = import(&h, &b2).unwrap();
    assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Empty)));
    let imported = import_envelope(&h, &b2, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(imported.block_root, r2);
    assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Full)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envelopes_of_unknown_blocks_bad_signatures_and_missing_columns_are_refused_typed() {
    let h = harness().await;
    let genesis = h.chain.head();
    let b1 = block_on(
        &h,
        &genesis.state,
        1,
        ParentPayload::Empty,
        Default::default(),
    );

    // Its block not imported (yet): nobody's fault, the envelope may import later.
    let err = import_envelope(&h, &b1, MockPayloadStatus::Valid)
        .await
        .unwrap_err();
    assert!(
        matches!(err, EnvelopeError::UnknownBlock(root) if root == b1.block.canonical_root()),
        "{err}"
    );
    assert_eq!(err.fault(), None);

    let r1 = import(&h, &b1).unwrap();
    // A signature by someone else: the sender's fault; the block stays EMPTY.
    // (the proposer's signature over another message: the payload changed after signing).
    let mut forged = envelope_of(&h, &b1);
    forged.message.payload.gas_used = 1;
    let err = h
        .chain
        .import_execution_payload_envelope(Arc::new(forged), Vec::new())
        .await
        .unwrap_err();
    assert!(matches!(err, EnvelopeError::Invalid { .. }), "{err}");
    assert_eq!(err.fault(), Some(Fault::Message));
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Empty)));

    // A bid with a blob commitment: the node custodies every column, none were given.
    let mut point = [0u8; 48];
    point[0] = 0xc0;
    let commitment = types::KZGCommitment::from(point);
    let contents = BlockContents {
        blob_kzg_commitments: vec![commitment],
        ..Default::default()
    };
    let b2 = block_on(&h, &b1.post, 2, ParentPayload::Empty, contents);
    let r2 = import(&h, &b2).unwrap();
    let err = import_envelope(&h, &b2, MockPayloadStatus::Valid)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            EnvelopeError::DataUnavailable {
                source: ColumnsUnavailable::Missing(missing),
                ..
            } if missing.len() == <<E as EthSpec>::NumberOfColumns as types::typenum::Unsigned>::USIZE
        ),
        "{err}"
    );
    assert_eq!(err.fault(), None);
    assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Empty)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_restores_the_head_and_its_payload_variant() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let stored_config = || HarnessConfig {
        store_path: Some(path.clone()),
        clock_slot: Some(3),
        ..config(gloas_spec())
    };
    let (r2, b2, r3) = {
        let h = stored_config().build().await.unwrap();
        let genesis = h.chain.head();
        let b1 = block_on(
            &h,
            &genesis.state,
            1,
            ParentPayload::Empty,
            Default::default(),
        );
        import(&h, &b1).unwrap();
        import_envelope(&h, &b1, MockPayloadStatus::Valid)
            .await
            .unwrap();
        let b2 = block_on(&h, &b1.post, 2, ParentPayload::Full, Default::default());
        let r2 = import(&h, &b2).unwrap();
        import_envelope(&h, &b2, MockPayloadStatus::Valid)
            .await
            .unwrap();
        assert_eq!(head_variant(&h), (r2, Some(PayloadStatus::Full)));
        // Slot 3's block, whose envelope does not come before the restart.
        let b3 = block_on(&h, &b2.post, 3, ParentPayload::Full, Default::default());
        let r3 = import(&h, &b3).unwrap();
        assert_eq!(head_variant(&h), (r3, Some(PayloadStatus::Empty)));
        h.chain.flush_store_writes();
        (r2, b2, r3)
    };

    let h = stored_config()
        .build_from(ChainStart::Stored)
        .await
        .unwrap();
    // No fork choice record since genesis (fork choice is not persisted after an envelope):
    // the three blocks imported again, the two stored envelopes applied after theirs.
    let reopened = h.chain.reopened().unwrap();
    assert_eq!((reopened.replayed, reopened.payloads_restored), (3, 2));
    assert_eq!(head_variant(&h), (r3, Some(PayloadStatus::Empty)));

    // Slot 3's envelope, arriving after the restart, makes its FULL node the head.
    let b3 = block_on(&h, &b2.post, 3, ParentPayload::Full, Default::default());
    assert_eq!(b3.block.canonical_root(), r3);
    import_envelope(&h, &b3, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (r3, Some(PayloadStatus::Full)));
    // A block on that payload imports.
    let b4 = block_on(&h, &b3.post, 4, ParentPayload::Full, Default::default());
    let r4 = import(&h, &b4).unwrap();
    import_envelope(&h, &b4, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (r4, Some(PayloadStatus::Full)));
    let hash = head_block_hash(&h);
    assert_eq!(hash, bid(&b4).block_hash);
    drop(h);

    // Restart again: the FULL head comes back from its stored envelope (fork choice is not
    // persisted after an envelope), and the execution client is told the same payload.
    let h = stored_config()
        .build_from(ChainStart::Stored)
        .await
        .unwrap();
    assert!(h.chain.reopened().unwrap().payloads_restored >= 1);
    assert_eq!(head_variant(&h), (r4, Some(PayloadStatus::Full)));
    assert_eq!(head_block_hash(&h), hash);
    // Not validated again until the execution client says so, as before Gloas.
    assert!(h.chain.head().execution_optimistic);
    let _ = r2;
}

/// The payload hash of a Fulu block.
fn fulu_payload_hash(built: &BuiltBlock<E>) -> Hash32 {
    let types::SignedBeaconBlock::Fulu(block) = &built.block else {
        panic!("not a Fulu block");
    };
    block.message.body.execution_payload.block_hash
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_anchored_before_gloas_carries_its_fork_choice_into_gloas_at_its_first_gloas_block()
{
    // Fulu at genesis, Gloas from epoch 1.
    let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    spec.gloas_fork_epoch = 1;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let stored_config = || HarnessConfig {
        store_path: Some(path.clone()),
        clock_slot: Some(9),
        ..config(spec.clone())
    };
    let h = stored_config().build().await.unwrap();
    assert_eq!(h.chain.head().payload_status, None);
    let votes_for = |slot: Slot| BlockContents {
        attestations: if slot > 1 {
            vec![AttestationSpec::whole_slot(slot - 1)]
        } else {
            Vec::new()
        },
        ..Default::default()
    };
    // Fulu blocks at slots 1 to 7, their payloads valid.
    let mut parent = h.chain.head().state.clone();
    let mut fulu = Vec::new();
    for slot in 1..8 {
        let built = state_harness::build_block(&parent, slot, &votes_for(slot), &h.spec).unwrap();
        h.set_slot(slot);
        h.import_valid(Arc::new(built.block.clone()), &[]).unwrap();
        parent = built.post.clone();
        fulu.push(built);
    }
    let last_fulu = fulu.last().unwrap();
    assert_eq!(h.chain.head().block_root, last_fulu.block.canonical_root());
    assert_eq!(h.chain.head().payload_status, None);

    // The first Gloas block builds on the last Fulu payload, which the carried store holds as
    // verified: fork choice goes over to Gloas with it.
    let g8 = block_with(
        &h,
        &parent,
        8,
        &GloasBlockContents {
            base: votes_for(8),
            payload_attestations: 0,
            parent_payload: ParentPayload::Full,
        },
    );
    assert_eq!(bid(&g8).parent_block_hash, fulu_payload_hash(last_fulu));
    let r8 = import(&h, &g8).unwrap();
    assert_eq!(head_variant(&h), (r8, Some(PayloadStatus::Empty)));
    assert_eq!(head_block_hash(&h), fulu_payload_hash(last_fulu));
    // The Fulu payloads were valid: the head's is not optimistic.
    assert!(!h.chain.head().execution_optimistic);
    // The carried blocks keep their payload hashes (the debug dump shows them).
    let dump = h.chain.fork_choice_dump();
    let node = dump
        .nodes
        .iter()
        .find(|n| n.block_root == last_fulu.block.canonical_root())
        .unwrap();
    assert_eq!(node.execution_block_hash, fulu_payload_hash(last_fulu));

    import_envelope(&h, &g8, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (r8, Some(PayloadStatus::Full)));
    assert_eq!(head_block_hash(&h), bid(&g8).block_hash);

    // A late Fulu block (a fork at slot 7) has no place in the Gloas store.
    let late = state_harness::build_block(
        &fulu[5].post,
        7,
        &BlockContents {
            graffiti: Root::repeat_byte(9),
            ..Default::default()
        },
        &h.spec,
    )
    .unwrap();
    let err = h
        .chain
        .import_block(
            Arc::new(late.block.clone()),
            &[],
            &state_processing::per_block::AlwaysValid,
            ExecutionStatus::Valid,
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            ChainError::PreGloasBlock {
                fork: ForkName::Fulu,
                ..
            }
        ),
        "{err}"
    );

    let g9 = block_with(
        &h,
        &g8.post,
        9,
        &GloasBlockContents {
            base: votes_for(9),
            payload_attestations: 2,
            parent_payload: ParentPayload::Full,
        },
    );
    let r9 = import(&h, &g9).unwrap();
    assert_eq!(head_variant(&h), (r9, Some(PayloadStatus::Empty)));
    h.chain.flush_store_writes();
    drop(h);

    // A restart: the store anchored at the Fulu genesis, its fork choice persisted as the Gloas
    // store it was carried into.
    let h = stored_config()
        .build_from(ChainStart::Stored)
        .await
        .unwrap();
    let reopened = h.chain.reopened().unwrap();
    // Restored up to g8 (persisted with its envelope), g9 imported again on top.
    assert_eq!((reopened.restored, reopened.replayed), (9, 1));
    assert_eq!(head_variant(&h), (r9, Some(PayloadStatus::Empty)));
    import_envelope(&h, &g9, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (r9, Some(PayloadStatus::Full)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gloas_chain_with_its_votes_and_payload_votes_finalizes_and_reopens_at_its_head() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let epochs = 5;
    let last = epochs * <E as EthSpec>::slots_per_epoch();
    let stored_config = || HarnessConfig {
        store_path: Some(path.clone()),
        clock_slot: Some(last),
        ..config(gloas_spec())
    };
    let h = stored_config().build().await.unwrap();
    let mut blocks = std::collections::HashMap::new();
    let mut parent = h.chain.head().state.clone();
    for slot in 1..=last {
        // Every committee of the slot before votes for its block; two payload attestations
        // of its PTC (one present, one not) ride along; each block builds on the payload
        // before it (the first beside the genesis payload, which is not known).
        let contents = GloasBlockContents {
            base: BlockContents {
                attestations: if slot > 1 {
                    vec![AttestationSpec::whole_slot(slot - 1)]
                } else {
                    Vec::new()
                },
                ..Default::default()
            },
            payload_attestations: if slot > 1 { 2 } else { 0 },
            parent_payload: if slot > 1 {
                ParentPayload::Full
            } else {
                ParentPayload::Empty
            },
        };
        let built = block_with(&h, &parent, slot, &contents);
        let root = import(&h, &built).unwrap();
        import_envelope(&h, &built, MockPayloadStatus::Valid)
            .await
            .unwrap();
        assert_eq!(
            head_variant(&h),
            (root, Some(PayloadStatus::Full)),
            "slot {slot}"
        );
        parent = built.post.clone();
        blocks.insert(root, built);
    }
    let head = h.chain.head();
    assert!(
        head.finalized_checkpoint.epoch >= 2,
        "finalized {:?}",
        head.finalized_checkpoint
    );
    // The finalized hash the execution client is told: the payload the finalized block
    // built on (`finalized_block_bid.parent_block_hash`).
    let finalized = &blocks[&head.finalized_checkpoint.root];
    let state = forkchoice_state(&h.chain).unwrap();
    assert_eq!(state.finalized_block_hash, bid(finalized).parent_block_hash);
    assert_eq!(
        state.head_block_hash,
        bid(&blocks[&head.block_root]).block_hash
    );
    h.chain.flush_store_writes();
    let (head_root, finalized_checkpoint) = (head.block_root, head.finalized_checkpoint.clone());
    drop(head);
    drop(h);

    let h = stored_config()
        .build_from(ChainStart::Stored)
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (head_root, Some(PayloadStatus::Full)));
    assert_eq!(h.chain.head().finalized_checkpoint, finalized_checkpoint);
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
async fn the_custody_columns_of_the_bids_commitments_make_the_payload_available() {
    let custody: std::collections::BTreeSet<u64> = [0, 5, 64].into_iter().collect();
    let mut config = config(gloas_spec());
    config.chain.custody_columns = Some(custody.clone());
    let h = config.build::<E>().await.unwrap();
    let blob = blob(3);
    let commitment = kzg::blob_to_kzg_commitment(&blob).unwrap();
    let cells = kzg::compute_cells_and_kzg_proofs(&blob).unwrap();
    let contents = BlockContents {
        blob_kzg_commitments: vec![types::KZGCommitment::from(commitment.0)],
        ..Default::default()
    };
    let genesis = h.chain.head();
    let b1 = block_on(&h, &genesis.state, 1, ParentPayload::Empty, contents);
    let r1 = import(&h, &b1).unwrap();
    let column = |index: u64, proof_of: u64| {
        types::DataColumnSidecar::Gloas(types::gloas::DataColumnSidecar {
            index,
            column: vec![
                types::Cell::<E>::new(cells.cells[index as usize].to_bytes().to_vec()).unwrap(),
            ]
            .into(),
            kzg_proofs: vec![types::KZGProof::from(cells.proofs[proof_of as usize].0)].into(),
            slot: 1,
            beacon_block_root: r1,
        })
    };
    let envelope = Arc::new(envelope_of(&h, &b1));
    h.mock
        .set_payload_status(bid(&b1).block_hash, MockPayloadStatus::Valid);

    // One custody column short: not available yet, nobody's fault.
    let err = h
        .chain
        .import_execution_payload_envelope(envelope.clone(), vec![column(0, 0), column(5, 5)])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EnvelopeError::DataUnavailable { source: ColumnsUnavailable::Missing(m), .. } if m == &vec![64]),
        "{err}"
    );
    assert_eq!(err.fault(), None);

    // A cell whose proof is another column's: the sender's fault.
    let err = h
        .chain
        .import_execution_payload_envelope(
            envelope.clone(),
            vec![column(0, 0), column(5, 64), column(64, 64)],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            EnvelopeError::DataUnavailable {
                source: ColumnsUnavailable::Kzg { index: 5, .. },
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.fault(), Some(Fault::Message));
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Empty)));

    // Every custody column, proved against the bid's commitment (extra columns ignored).
    let imported = h
        .chain
        .import_execution_payload_envelope(
            envelope,
            vec![column(64, 64), column(1, 1), column(0, 0), column(5, 5)],
        )
        .await
        .unwrap();
    assert_eq!(imported.block_root, r1);
    assert_eq!(head_variant(&h), (r1, Some(PayloadStatus::Full)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_anchored_at_a_gloas_checkpoint_block_takes_its_envelope_and_builds_on_it() {
    // A Gloas chain of 8 blocks built apart; the block at slot 8 (an epoch's first) anchors
    // the node's chain, its payload not known to it.
    let spec = gloas_spec();
    let (genesis, _) = beacon_chain::harness::interop_genesis::<E>(
        64,
        GENESIS_TIME,
        mock_execution_layer::genesis_block_hash::<E>(GENESIS_TIME),
        &spec,
    )
    .unwrap();
    let mut parent = genesis;
    let mut anchor = None;
    for slot in 1..=8 {
        let contents = GloasBlockContents {
            parent_payload: if slot > 1 {
                ParentPayload::Full
            } else {
                ParentPayload::Empty
            },
            ..Default::default()
        };
        let built = build_gloas_block(&parent, slot, &contents, &spec).unwrap();
        parent = built.post.clone();
        anchor = Some(built);
    }
    let anchor = anchor.unwrap();
    let h = config(spec)
        .build_from(ChainStart::Anchor {
            state: anchor.post.clone(),
            block: anchor.block.clone(),
        })
        .await
        .unwrap();
    let anchor_root = anchor.block.canonical_root();
    assert_eq!(head_variant(&h), (anchor_root, Some(PayloadStatus::Empty)));

    // A block on the anchor's payload waits for its envelope.
    let on_full = block_on(&h, &anchor.post, 9, ParentPayload::Full, Default::default());
    let err = import(&h, &on_full).unwrap_err();
    assert!(
        matches!(
            err,
            ChainError::GloasForkChoice(GloasError::ParentPayloadNotVerified { .. })
        ),
        "{err}"
    );
    import_envelope(&h, &anchor, MockPayloadStatus::Valid)
        .await
        .unwrap();
    assert_eq!(head_variant(&h), (anchor_root, Some(PayloadStatus::Full)));
    let root = import(&h, &on_full).unwrap();
    assert_eq!(head_variant(&h), (root, Some(PayloadStatus::Empty)));
    assert_eq!(head_block_hash(&h), bid(&anchor).block_hash);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imported_envelopes_are_stored_and_a_reopened_chain_applies_them_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let stored_config = || HarnessConfig {
        store_path: Some(path.clone()),
        clock_slot: Some(5),
        ..config(gloas_spec())
    };
    let (roots, last) = {
        let h = stored_config().build().await.unwrap();
        let mut parent = h.chain.head().state.clone();
        let mut roots = Vec::new();
        let mut last = None;
        for slot in 1..=4 {
            let parent_payload = if slot == 1 {
                ParentPayload::Empty
            } else {
                ParentPayload::Full
            };
            let built = block_on(&h, &parent, slot, parent_payload, Default::default());
            let root = import(&h, &built).unwrap();
            import_envelope(&h, &built, MockPayloadStatus::Valid)
                .await
                .unwrap();
            // Stored as received once the import answered, before any flush.
            let stored = h
                .chain
                .store()
                .get_execution_payload_envelope(&root)
                .unwrap();
            assert_eq!(stored, Some(envelope_of(&h, &built)), "slot {slot}");
            parent = built.post.clone();
            roots.push(root);
            last = Some(built);
        }
        assert_eq!(head_variant(&h), (roots[3], Some(PayloadStatus::Full)));
        (roots, last.unwrap())
    };

    let h = stored_config()
        .build_from(ChainStart::Stored)
        .await
        .unwrap();
    // No fork choice record after genesis (no epoch snapshot yet): the four blocks are
    // imported again and each one's envelope applied after it.
    let reopened = h.chain.reopened().unwrap();
    assert_eq!((reopened.replayed, reopened.payloads_restored), (4, 4));
    assert_eq!(head_variant(&h), (roots[3], Some(PayloadStatus::Full)));
    assert!(roots.iter().all(|root| h.chain.is_payload_verified(root)));
    assert_eq!(head_block_hash(&h), bid(&last).block_hash);
    // Not validated until the execution client says so.
    assert!(h.chain.head().execution_optimistic);
    assert_eq!(
        h.chain.payload_status(&roots[3]),
        ExecutionStatus::NotValidated
    );
    // A block on the head's payload imports.
    let next = block_on(&h, &last.post, 5, ParentPayload::Full, Default::default());
    let root = import(&h, &next).unwrap();
    assert_eq!(head_variant(&h), (root, Some(PayloadStatus::Empty)));
}

/// The environment variable that makes [`gloas_envelope_crash_child`] run, naming its
/// directory.
const CRASH_CHILD_ENV: &str = "ARBOR_GLOAS_ENVELOPE_CRASH_CHILD";

/// Kills of the child in [`envelopes_acknowledged_before_a_kill_survive_it`].
const CRASH_KILLS: usize = 8;

/// The crash test's chain in `dir`: a new Gloas genesis the first time, reopened afterwards.
async fn crash_chain(dir: &std::path::Path) -> ChainHarness<E> {
    let db = dir.join("db");
    let config = HarnessConfig {
        store_path: Some(db.clone()),
        ..config(gloas_spec())
    };
    if db.exists() {
        config.build_from(ChainStart::Stored).await.unwrap()
    } else {
        config.build().await.unwrap()
    }
}

/// The child of the crash test: imports a block and its envelope per slot, on the head's
/// payload when the head is FULL, and says which envelopes were acknowledged, until killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gloas_envelope_crash_child() {
    let Some(dir) = std::env::var_os(CRASH_CHILD_ENV) else {
        return;
    };
    let h = crash_chain(std::path::Path::new(&dir)).await;
    eprintln!("opened at slot {}", h.chain.head().slot);
    loop {
        let head = h.chain.head();
        let parent_payload = if head.payload_status == Some(PayloadStatus::Full) {
            ParentPayload::Full
        } else {
            ParentPayload::Empty
        };
        let built = block_on(
            &h,
            &head.state,
            head.slot + 1,
            parent_payload,
            Default::default(),
        );
        let root = import(&h, &built).unwrap();
        import_envelope(&h, &built, MockPayloadStatus::Valid)
            .await
            .unwrap();
        eprintln!("acknowledged {} {root}", built.block.slot());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envelopes_acknowledged_before_a_kill_survive_it() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::str::FromStr;
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = splitmix::SplitMix64::new(0x0e1e_7e10);
    let mut acknowledged: Vec<(Slot, Root)> = Vec::new();
    for kill in 0..CRASH_KILLS {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "gloas_envelope_crash_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CRASH_CHILD_ENV, dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (lines, progress) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let parse = |line: &str| -> Option<(Slot, Root)> {
            let mut words = line.strip_prefix("acknowledged ")?.split(' ');
            let slot = words.next()?.parse().ok()?;
            let root = Root::from_str(words.next()?).ok()?;
            Some((slot, root))
        };
        // Killed after the start and 0 to 3 acknowledgements, while importing the next.
        let wanted = rng.next_u64() % 4;
        let (mut opened, mut seen) = (false, 0);
        while !opened || seen < wanted {
            let line = progress
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|e| panic!("kill {kill}: no progress from the child: {e}"));
            opened |= line.starts_with("opened");
            if let Some(ack) = parse(&line) {
                acknowledged.push(ack);
                seen += 1;
            }
        }
        // SIGKILL.
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        acknowledged.extend(progress.try_iter().filter_map(|line| parse(&line)));

        // Reopened as a restarting node: every acknowledged envelope is stored and its block
        // FULL in fork choice; the head is at or past the last acknowledged block.
        let h = crash_chain(dir.path()).await;
        for (slot, root) in &acknowledged {
            assert!(
                h.chain
                    .store()
                    .has_execution_payload_envelope(root)
                    .unwrap(),
                "kill {kill}: the envelope of slot {slot} was lost"
            );
            assert!(
                h.chain.is_payload_verified(root),
                "kill {kill}: slot {slot} is not FULL after the reopen"
            );
        }
        if let Some((slot, root)) = acknowledged.last() {
            let head = h.chain.head();
            assert!(head.slot >= *slot, "kill {kill}: head behind slot {slot}");
            if head.block_root == *root {
                assert_eq!(
                    head.payload_status,
                    Some(PayloadStatus::Full),
                    "kill {kill}"
                );
            }
        }
    }
    assert!(
        acknowledged.len() >= CRASH_KILLS,
        "only {} envelopes acknowledged over {CRASH_KILLS} kills",
        acknowledged.len()
    );
}
