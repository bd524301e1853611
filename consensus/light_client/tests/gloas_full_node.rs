//! Gloas-format light-client data from a real chain across the Fulu -> Gloas fork (interop
//! genesis, minimal preset, Gloas at epoch 1, blocks with full sync aggregates): Gloas headers
//! prove the bid's parent block hash against their body roots, a Gloas state's branches prove
//! against its root, and a Gloas-format store started from the collector's genesis bootstrap
//! accepts the collector's best update and its latest finality update, signed in Gloas.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use light_client::full_node::StateView;
use light_client::gloas::{self, block_to_light_client_header};
use light_client::sync_protocol::{
    CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS, FINALIZED_ROOT_GINDEX_GLOAS,
    NEXT_SYNC_COMMITTEE_GINDEX_GLOAS, is_valid_normalized_merkle_branch,
};
use light_client::{
    GloasLightClientDataCollector, LcHeader, initialize_light_client_store,
    process_light_client_finality_update, process_light_client_update,
};
use state_harness::{
    AttestationSpec, BlockContents, BuiltBlock, GloasBlockContents, ParentPayload, build_block,
    build_gloas_block,
};
use state_processing::CachedBeaconState;
use state_processing::genesis::{interop_genesis_block, interop_genesis_state};
use tree_hash::TreeHash;
use types::merkle_proof::compute_merkle_proof;
use types::{ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock};

type E = MinimalEthSpec;

/// Fulu at genesis, Gloas from epoch 1.
fn spec() -> ChainSpec {
    let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    spec.gloas_fork_version = Some(types::Version::from([7, 0, 0, 1]));
    spec.gloas_fork_epoch = 1;
    spec
}

#[test]
fn gloas_data_proves_against_gloas_blocks_and_states_and_syncs_a_gloas_store() {
    let spec = spec();
    let state =
        interop_genesis_state::<E>(64, 1_600_000_000, Root::repeat_byte(0x42), &spec).unwrap();
    let mut post = CachedBeaconState::new(state);
    let state_root = post.hash_tree_root().unwrap();
    let genesis = BuiltBlock {
        block: interop_genesis_block::<E>(state_root),
        post,
        state_root,
    };
    let mut collector =
        GloasLightClientDataCollector::new(spec.clone(), &genesis.post.state, &genesis.block)
            .unwrap();

    let gloas_start = E::slots_per_epoch();
    let mut blocks: Vec<BuiltBlock<E>> = Vec::new();
    for slot in 1..=gloas_start + 3 {
        let parent = blocks.last().unwrap_or(&genesis);
        let base = BlockContents {
            attestations: vec![AttestationSpec::whole_slot(slot - 1)],
            ..BlockContents::default()
        };
        let built = if slot < gloas_start {
            build_block(&parent.post, slot, &base, &spec).unwrap()
        } else {
            let contents = GloasBlockContents {
                base,
                payload_attestations: 0,
                parent_payload: ParentPayload::Empty,
            };
            build_gloas_block(&parent.post, slot, &contents, &spec).unwrap()
        };
        collector
            .process_new_block(&built.post.state, &built.block)
            .unwrap();
        blocks.push(built);
    }
    let head = blocks.last().unwrap();
    collector
        .process_new_head(head.block.canonical_root())
        .unwrap();

    // A Gloas block's header: the bid's parent block hash, proven at its Gloas index.
    let SignedBeaconBlock::Gloas(gloas_block) = &head.block else {
        panic!("a Gloas block at the head");
    };
    let header = block_to_light_client_header(&spec, &head.block).unwrap();
    assert_eq!(
        header.beacon.body_root,
        gloas_block.message.body.tree_hash_root()
    );
    assert_eq!(header.beacon.tree_hash_root(), head.block.canonical_root());
    assert_eq!(
        header.execution_block_hash,
        gloas_block
            .message
            .body
            .signed_execution_payload_bid
            .message
            .parent_block_hash
    );
    assert!(LcHeader::<E>::is_valid(&header, &spec));

    // A Gloas state's tree hashes to its root, and its branches prove its fields.
    let state = &head.post.state;
    let view = StateView::new(state).unwrap();
    assert_eq!(
        compute_merkle_proof(&*view.tree, 1).unwrap().0,
        state.tree_hash_root()
    );
    for (gindex, leaf) in [
        (
            CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS,
            view.current_sync_committee.tree_hash_root(),
        ),
        (
            NEXT_SYNC_COMMITTEE_GINDEX_GLOAS,
            view.next_sync_committee.tree_hash_root(),
        ),
        (FINALIZED_ROOT_GINDEX_GLOAS, view.finalized_checkpoint.root),
    ] {
        let (got, branch) = compute_merkle_proof(&*view.tree, gindex).unwrap();
        assert_eq!(got, leaf, "gindex {gindex}");
        assert!(is_valid_normalized_merkle_branch(
            leaf,
            &branch,
            gindex,
            state.tree_hash_root()
        ));
    }

    // The genesis bootstrap (a Fulu block's header in Gloas's format) starts a Gloas store,
    // which the best update of period 0 (the earliest: signed in Fulu) and the latest finality
    // update (signed in Gloas) advance.
    let genesis_root = genesis.block.canonical_root();
    let bootstrap = collector.bootstrap(&genesis_root).unwrap();
    let mut store = initialize_light_client_store(&spec, genesis_root, bootstrap).unwrap();
    let gvr = *state.genesis_validators_root();
    let update = collector.best_update(0).unwrap().clone();
    process_light_client_update(&spec, &mut store, &update, head.block.slot(), gvr).unwrap();
    assert_eq!(store.optimistic_header, update.attested_header);

    let finality = collector.finality_update().unwrap();
    assert_eq!(finality.signature_slot, head.block.slot());
    assert!(finality.signature_slot >= gloas_start);
    assert_eq!(
        finality.attested_header.beacon.tree_hash_root(),
        head.block.parent_root()
    );
    process_light_client_finality_update(&spec, &mut store, finality, head.block.slot(), gvr)
        .unwrap();
    assert_eq!(store.optimistic_header, finality.attested_header);
    let optimistic = collector.optimistic_update().unwrap();
    assert_eq!(optimistic.attested_header, finality.attested_header);

    // The full node's functions derive the same data from the blocks and states.
    assert_eq!(
        &gloas::create_light_client_bootstrap(&spec, &genesis.post.state, &genesis.block).unwrap(),
        bootstrap
    );
    let parent = &blocks[blocks.len() - 2];
    let derived = gloas::create_light_client_update(
        &spec,
        &head.post.state,
        &head.block,
        &parent.post.state,
        &parent.block,
        Some(&genesis.block),
    )
    .unwrap();
    assert_eq!(
        &gloas::create_light_client_finality_update(&derived),
        finality
    );
    assert_eq!(
        gloas::create_light_client_optimistic_update(&derived),
        optimistic
    );
    // Electra's format takes no Gloas block.
    assert!(matches!(
        light_client::create_light_client_bootstrap(&spec, &head.post.state, &head.block),
        Err(light_client::LightClientError::UnsupportedFork(
            ForkName::Gloas
        ))
    ));
}
