//! The full node's derivation against the light client's checks on a real chain (interop
//! genesis, minimal preset, Fulu at genesis, blocks with full sync aggregates): a bootstrap from
//! `create_light_client_bootstrap` starts a store, updates from `create_light_client_update`
//! advance it, the collector derives the same finality update from the same blocks, and data
//! that does not belong together is refused with the error that says why.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use light_client::sync_protocol::{empty_header, get_lc_execution_root};
use light_client::{
    LightClientDataCollector, LightClientError, create_light_client_bootstrap,
    create_light_client_finality_update, create_light_client_update, initialize_light_client_store,
    is_finality_update, is_sync_committee_update, is_valid_light_client_header,
    process_light_client_update,
};
use state_harness::{AttestationSpec, BlockContents, BuiltBlock, build_block};
use state_processing::CachedBeaconState;
use state_processing::genesis::{interop_genesis_block, interop_genesis_state};
use tree_hash::TreeHash;
use types::{ChainSpec, ForkName, MinimalEthSpec, Root};

type E = MinimalEthSpec;

struct Chain {
    spec: ChainSpec,
    genesis: BuiltBlock<E>,
    blocks: Vec<BuiltBlock<E>>,
}

fn chain(count: u64) -> Chain {
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    let state =
        interop_genesis_state::<E>(64, 1_600_000_000, Root::repeat_byte(0x42), &spec).unwrap();
    let mut post = CachedBeaconState::new(state);
    let state_root = post.hash_tree_root().unwrap();
    let genesis = BuiltBlock {
        block: interop_genesis_block::<E>(state_root),
        post,
        state_root,
    };
    let mut blocks: Vec<BuiltBlock<E>> = Vec::new();
    for slot in 1..=count {
        let parent = blocks.last().unwrap_or(&genesis);
        let contents = BlockContents {
            attestations: vec![AttestationSpec::whole_slot(slot - 1)],
            ..BlockContents::default()
        };
        blocks.push(build_block(&parent.post, slot, &contents, &spec).unwrap());
    }
    Chain {
        spec,
        genesis,
        blocks,
    }
}

/// The update in which block 2 signs block 1, with the next sync committee and (genesis)
/// finality.
fn first_update(c: &Chain) -> light_client::Update<E> {
    let (attested, signing) = (&c.blocks[0], &c.blocks[1]);
    create_light_client_update(
        &c.spec,
        &signing.post.state,
        &signing.block,
        &attested.post.state,
        &attested.block,
        Some(&c.genesis.block),
    )
    .unwrap()
}

#[test]
fn derived_bootstrap_and_updates_pass_the_light_clients_checks() {
    let c = chain(3);
    let genesis_root = c.genesis.block.canonical_root();
    let gvr = *c.genesis.post.state.genesis_validators_root();

    let bootstrap =
        create_light_client_bootstrap(&c.spec, &c.genesis.post.state, &c.genesis.block).unwrap();
    assert!(is_valid_light_client_header(&c.spec, &bootstrap.header));
    assert_ne!(
        get_lc_execution_root(&c.spec, &bootstrap.header),
        Root::ZERO
    );
    let mut store = initialize_light_client_store(&c.spec, genesis_root, &bootstrap).unwrap();

    // Block 2 signs block 1, with the next sync committee and (genesis) finality.
    let attested = &c.blocks[0];
    let update = first_update(&c);
    assert!(is_sync_committee_update(&update));
    assert!(is_finality_update(&update));
    assert_eq!(update.finalized_header, empty_header());
    assert_eq!(
        update.attested_header.beacon.tree_hash_root(),
        attested.block.canonical_root()
    );
    process_light_client_update(&c.spec, &mut store, &update, 2, gvr).unwrap();
    assert_eq!(store.optimistic_header, update.attested_header);
    assert_eq!(store.next_sync_committee, update.next_sync_committee);

    // The collector derives the same latest finality update from the same blocks.
    let mut collector =
        LightClientDataCollector::new(c.spec.clone(), &c.genesis.post.state, &c.genesis.block)
            .unwrap();
    for built in &c.blocks[..2] {
        collector
            .process_new_block(&built.post.state, &built.block)
            .unwrap();
    }
    collector
        .process_new_head(c.blocks[1].block.canonical_root())
        .unwrap();
    assert_eq!(
        collector.finality_update(),
        Some(&create_light_client_finality_update(&update))
    );
    // The best update of the period: the one attesting genesis (as participating, older
    // attested data ranks first).
    let first = create_light_client_update(
        &c.spec,
        &c.blocks[0].post.state,
        &c.blocks[0].block,
        &c.genesis.post.state,
        &c.genesis.block,
        Some(&c.genesis.block),
    )
    .unwrap();
    assert!(light_client::is_better_update(&first, &update));
    assert_eq!(collector.best_update(0), Some(&first));
    assert_eq!(collector.bootstrap(&genesis_root), Some(&bootstrap));

    // An update from the future is refused, and so is one whose header was changed.
    let before = store.clone();
    assert!(matches!(
        process_light_client_update(&c.spec, &mut store, &update, 1, gvr),
        Err(LightClientError::SlotsOutOfOrder { current: 1, .. })
    ));
    let mut forged = update.clone();
    forged.attested_header.beacon.proposer_index += 1;
    assert!(matches!(
        process_light_client_update(&c.spec, &mut store, &forged, 3, gvr),
        Err(LightClientError::InvalidHeader { .. } | LightClientError::InvalidSignature)
    ));
    assert_eq!(store, before, "a refused update leaves the store as it was");
}

#[test]
fn data_that_does_not_belong_together_is_refused() {
    let c = chain(3);
    // A state that is not the block's post-state.
    assert!(matches!(
        create_light_client_bootstrap(&c.spec, &c.blocks[1].post.state, &c.blocks[0].block),
        Err(LightClientError::StateNotOfBlock { .. })
    ));
    // An attested block that is not the signing block's parent.
    let (a, s) = (&c.blocks[0], &c.blocks[2]);
    assert!(matches!(
        create_light_client_update(
            &c.spec,
            &s.post.state,
            &s.block,
            &a.post.state,
            &a.block,
            None
        ),
        Err(LightClientError::NotParent { .. })
    ));
    // A finalized block that is not the attested state's finalized checkpoint.
    let (a, s) = (&c.blocks[1], &c.blocks[2]);
    assert!(matches!(
        create_light_client_update(
            &c.spec,
            &s.post.state,
            &s.block,
            &a.post.state,
            &a.block,
            Some(&c.blocks[0].block)
        ),
        Err(LightClientError::FinalizedRootMismatch { .. })
    ));
    // A bootstrap for another root than the trusted one.
    let bootstrap =
        create_light_client_bootstrap(&c.spec, &c.blocks[0].post.state, &c.blocks[0].block)
            .unwrap();
    assert!(matches!(
        initialize_light_client_store(&c.spec, Root::repeat_byte(1), &bootstrap),
        Err(LightClientError::UntrustedBootstrap { .. })
    ));
    let mut tampered = bootstrap.clone();
    tampered.current_sync_committee_branch[0] = Root::repeat_byte(1);
    assert!(matches!(
        initialize_light_client_store(&c.spec, c.blocks[0].block.canonical_root(), &tampered),
        Err(LightClientError::InvalidBranch {
            which: "current_sync_committee"
        })
    ));
}

#[test]
fn a_gloas_format_store_follows_the_chain_from_upgraded_data_as_the_electra_one_does() {
    use light_client::LcHeader;
    use light_client::gloas::{
        upgrade_lc_bootstrap_to_gloas, upgrade_lc_header_to_gloas, upgrade_lc_store_to_gloas,
        upgrade_lc_update_to_gloas,
    };

    let c = chain(3);
    let genesis_root = c.genesis.block.canonical_root();
    let gvr = *c.genesis.post.state.genesis_validators_root();
    let bootstrap =
        create_light_client_bootstrap(&c.spec, &c.genesis.post.state, &c.genesis.block).unwrap();
    let attested = &c.blocks[0];
    let update = first_update(&c);
    assert_ne!(update.attested_header.execution.block_hash, Root::ZERO);

    // The upgraded header proves the same block hash against the same body root, and its
    // branch still yields the Deneb execution payload header's root.
    let header = upgrade_lc_header_to_gloas(&c.spec, &update.attested_header).unwrap();
    assert_eq!(header.beacon, update.attested_header.beacon);
    assert_eq!(
        header.execution_block_hash,
        update.attested_header.execution.block_hash
    );
    assert!(LcHeader::<E>::is_valid(&header, &c.spec));
    assert_eq!(
        LcHeader::<E>::execution_root(&header, &c.spec),
        get_lc_execution_root(&c.spec, &update.attested_header)
    );
    let mut forged = header.clone();
    forged.execution_block_hash = Root::repeat_byte(7);
    assert!(!LcHeader::<E>::is_valid(&forged, &c.spec));
    let mut forged = header.clone();
    forged.execution_branch[0] = Root::repeat_byte(7);
    assert!(
        !LcHeader::<E>::is_valid(&forged, &c.spec),
        "a normalized branch's padding must stay zero"
    );

    // A store initialized from the upgraded bootstrap is the upgraded store, before and after
    // the same update; both formats end on the same headers.
    let mut electra = initialize_light_client_store(&c.spec, genesis_root, &bootstrap).unwrap();
    let gloas_bootstrap = upgrade_lc_bootstrap_to_gloas(&c.spec, &bootstrap).unwrap();
    let mut gloas = initialize_light_client_store(&c.spec, genesis_root, &gloas_bootstrap).unwrap();
    assert_eq!(gloas, upgrade_lc_store_to_gloas(&c.spec, &electra).unwrap());
    process_light_client_update(&c.spec, &mut electra, &update, 2, gvr).unwrap();
    let gloas_update = upgrade_lc_update_to_gloas(&c.spec, &update).unwrap();
    process_light_client_update(&c.spec, &mut gloas, &gloas_update, 2, gvr).unwrap();
    assert_eq!(gloas, upgrade_lc_store_to_gloas(&c.spec, &electra).unwrap());
    assert_eq!(
        gloas.optimistic_header.beacon.tree_hash_root(),
        attested.block.canonical_root()
    );

    // The Gloas store refuses what the Electra one refuses.
    let before = gloas.clone();
    let mut forged = gloas_update.clone();
    forged.attested_header.beacon.proposer_index += 1;
    assert!(matches!(
        process_light_client_update(&c.spec, &mut gloas, &forged, 3, gvr),
        Err(LightClientError::InvalidHeader { .. } | LightClientError::InvalidSignature)
    ));
    assert_eq!(gloas, before);
}
