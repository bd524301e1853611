//! The fast confirmation rule on a store fed as a node feeds it: at the start of each slot the
//! past slot's attestations arrive, `on_fast_confirmation` runs, then the slot's block. With
//! every committee voting, the head is confirmed one slot after it was proposed, across epoch
//! boundaries; a slot whose votes do not arrive leaves its block unconfirmed.

use std::sync::Arc;

use fork_choice::{
    Columns, Config, FastConfirmationStore, SpecStore, ThreadPoolBuilder,
    get_fast_confirmation_store,
};
use state_harness::{AttestationSpec, BlockContents, BuiltBlock, build_block};
use state_processing::{CachedBeaconState, genesis::interop_genesis_state, per_block::AlwaysValid};
use types::{ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, SignedBeaconBlock, Slot};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
/// The anchor's slot: the first of epoch 2.
const ANCHOR_SLOT: Slot = 16;

fn electra_block(block: &SignedBeaconBlock<E>) -> &types::electra::SignedBeaconBlock<E> {
    match block {
        SignedBeaconBlock::Electra(b) | SignedBeaconBlock::Fulu(b) => b,
        other @ (SignedBeaconBlock::Phase0(_)
        | SignedBeaconBlock::Altair(_)
        | SignedBeaconBlock::Bellatrix(_)
        | SignedBeaconBlock::Capella(_)
        | SignedBeaconBlock::Deneb(_)
        | SignedBeaconBlock::Gloas(_)) => {
            panic!("the harness builds Fulu blocks, not {}", other.fork_name())
        }
    }
}

struct Chain {
    spec: Arc<ChainSpec>,
    store: SpecStore<E>,
    fcr: FastConfirmationStore,
    /// The blocks after the anchor, each with the attestations of the slot before.
    blocks: Vec<BuiltBlock<E>>,
}

/// A store anchored at slot 16 and a chain of `slots` blocks after it, each carrying the votes
/// of every committee of the slot before.
fn chain(slots: u64) -> Chain {
    chain_with(slots, Config::default())
}

/// [`chain`] with the store's `config`.
fn chain_with(slots: u64, config: Config) -> Chain {
    let spec = Arc::new(ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu));
    let genesis = interop_genesis_state::<E>(64, GENESIS_TIME, Root::repeat_byte(0x42), &spec)
        .expect("interop genesis");
    let genesis = CachedBeaconState::new(genesis);
    let anchor = build_block(&genesis, ANCHOR_SLOT, &BlockContents::default(), &spec)
        .expect("block on genesis");
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool"),
    );
    let anchor_block = &electra_block(&anchor.block).message;
    let store = SpecStore::new(
        anchor.post.clone(),
        anchor_block,
        spec.clone(),
        config,
        pool,
    )
    .expect("anchor block commits to its state");
    let fcr = get_fast_confirmation_store(&store, anchor_block.body.execution_payload.block_hash);
    let mut blocks = Vec::new();
    let mut parent = anchor.post.clone();
    for slot in ANCHOR_SLOT + 1..=ANCHOR_SLOT + slots {
        let built = build_block(
            &parent,
            slot,
            &BlockContents {
                attestations: vec![AttestationSpec::whole_slot(slot - 1)],
                ..Default::default()
            },
            &spec,
        )
        .expect("attested block");
        parent = built.post.clone();
        blocks.push(built);
    }
    Chain {
        spec,
        store,
        fcr,
        blocks,
    }
}

impl Chain {
    /// The start of the slot of `blocks[i]`: tick, the votes of the slot before (when
    /// `votes_arrive`), then `on_fast_confirmation`.
    fn start_slot(&mut self, i: usize, votes_arrive: bool) {
        let block = electra_block(&self.blocks[i].block).clone();
        self.store.on_tick(
            self.spec
                .compute_time_at_slot(GENESIS_TIME, block.message.slot),
        );
        if votes_arrive {
            for attestation in block.message.body.attestations.iter() {
                self.store
                    .on_attestation(attestation, false)
                    .expect("a past slot's valid attestation");
            }
        }
        self.store
            .on_fast_confirmation(&mut self.fcr)
            .expect("the rule evaluates");
    }

    /// The slot's block, with its attestations.
    fn propose(&mut self, i: usize) -> Root {
        let root = self
            .store
            .on_block(&self.blocks[i].block, Columns::Retrieved(&[]), &AlwaysValid)
            .expect("valid block");
        let block = electra_block(&self.blocks[i].block).clone();
        for attestation in block.message.body.attestations.iter() {
            self.store
                .on_attestation(attestation, true)
                .expect("the block's valid attestation");
        }
        root
    }

    fn head(&mut self) -> Root {
        self.store.get_head().expect("head").root
    }

    fn payload_hash(&self, i: usize) -> Root {
        electra_block(&self.blocks[i].block)
            .message
            .body
            .execution_payload
            .block_hash
    }
}

#[test]
fn full_participation_confirms_the_head_every_slot_across_epochs() {
    let spe = <E as EthSpec>::slots_per_epoch();
    let mut c = chain(3 * spe);
    let anchor = c.head();
    let mut confirmed_heads = 0;
    for i in 0..c.blocks.len() {
        c.start_slot(i, true);
        let head = c.head();
        let slot = ANCHOR_SLOT + 1 + i as u64;
        assert_eq!(c.fcr.current_slot_head, head);
        // Nothing voted in epoch 1: until the votes of the anchor's epoch justify it (in the
        // head's unrealized justification), only the anchor, the finalized block, is confirmed.
        let unrealized = c
            .store
            .proto_array()
            .get(&head)
            .expect("head held")
            .unrealized_justified
            .epoch;
        if unrealized + 1 >= c.store.get_current_store_epoch() {
            assert_eq!(
                c.fcr.confirmed_root, head,
                "slot {slot}: the head is confirmed"
            );
            confirmed_heads += 1;
        } else {
            assert_eq!(slot / spe, 2, "slot {slot}: only the anchor epoch waits");
            assert_eq!(c.fcr.confirmed_root, anchor, "slot {slot}");
        }
        let expected_hash = if c.fcr.confirmed_root == anchor {
            anchor_payload_hash(&c)
        } else {
            c.payload_hash(i - 1)
        };
        assert_eq!(
            c.fcr
                .get_safe_execution_block_hash(&c.store)
                .expect("confirmed block held"),
            expected_hash
        );
        c.propose(i);
    }
    assert!(
        confirmed_heads >= 2 * spe,
        "{confirmed_heads} slots confirmed their head"
    );
    // The observed justified checkpoints moved on with the chain.
    assert!(c.fcr.current_epoch_observed_justified_checkpoint.epoch > 2);
}

/// The anchor's payload: the parent payload of the first block.
fn anchor_payload_hash(c: &Chain) -> Root {
    electra_block(&c.blocks[0].block)
        .message
        .body
        .execution_payload
        .parent_hash
}

#[test]
fn a_slot_whose_votes_are_late_leaves_its_block_unconfirmed() {
    let spe = <E as EthSpec>::slots_per_epoch() as usize;
    // Late votes in the middle of epoch 3 (slot 28), once the chain is justified.
    let late = 2 * spe - 5;
    let mut c = chain(late as u64 + 2);
    for i in 0..late {
        c.start_slot(i, true);
        c.propose(i);
    }
    let before = c.blocks[late - 2].block.canonical_root();
    let head = c.blocks[late - 1].block.canonical_root();
    c.start_slot(late, false);
    assert_eq!(c.head(), head);
    assert_eq!(c.fcr.current_slot_head, head);
    assert_eq!(c.fcr.previous_slot_head, before);
    assert_eq!(
        c.fcr.confirmed_root, before,
        "the head without its votes is not confirmed"
    );
    // The late votes arrive in the next block; once that block's slot has voted too, the
    // head is confirmed again.
    let next = c.propose(late);
    c.start_slot(late + 1, true);
    assert_eq!(c.head(), next);
    assert_eq!(c.fcr.confirmed_root, next);
}

#[test]
fn pruning_below_the_finalized_block_leaves_the_rule_running() {
    let spe = <E as EthSpec>::slots_per_epoch();
    let mut c = chain_with(
        5 * spe,
        Config {
            prune_threshold: 1,
            ..Config::default()
        },
    );
    let mut pruned = false;
    for i in 0..c.blocks.len() {
        c.start_slot(i, true);
        pruned |= !c.store.contains_block(&c.blocks[0].block.canonical_root());
        c.propose(i);
    }
    assert!(pruned, "finality pruned the first blocks");
    assert!(c.store.finalized_checkpoint().epoch >= 4);
    // Confirmed at the start of the last slot: the block before the last one.
    let n = c.blocks.len();
    assert_eq!(c.fcr.confirmed_root, c.blocks[n - 2].block.canonical_root());
}
