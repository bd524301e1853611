//! Differential test against a second implementation: Lodestar's own Fulu state transition
//! (`shared/oracles/lodestar`, installed into `target/lodestar-oracle` by `make oracle`).
//!
//! Both sides start from the oracle's interop genesis (Lodestar 1.46 leaves its
//! `proposer_lookahead` zero, so the same `genesis.ssz` must feed both; see the oracle's README)
//! and process the same signed blocks, built by `state_harness` with real interop signatures.
//! Arbor verifies signatures in one batch, the oracle one by one; every post-state root must be
//! equal, and a block one side rejects must be rejected by the other.
//!
//! The chain config is minimal with every fork at genesis, a zero `SHARD_COMMITTEE_PERIOD` and a
//! one-epoch `MIN_VALIDATOR_WITHDRAWABILITY_DELAY` (so exits and consolidations are allowed at
//! once and withdrawals come soon), and churn limits that leave room for consolidations.
//!
//! The oracle must be installed: this test fails, with how to install it, when it is not.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

use std::path::PathBuf;

use ssz::Encode;
use state_harness::{
    AttestationSpec, BlockContents, DepositRequestSpec, SyncParticipation, build_block,
    builder::sign_block,
    oracle::{Oracle, OracleOutcome},
};
use state_processing::{
    CachedBeaconState, StateRef,
    per_block::{AlwaysValid, VerifySignatures},
    per_slot::process_slots,
    state_transition::state_transition,
};
use types::{
    Address, BeaconState, ChainSpec, EthSpec, MinimalEthSpec, Root, SignedBeaconBlock, Slot,
    chain_spec::MINIMAL_CONFIG_YAML,
};

type E = MinimalEthSpec;

const VALIDATORS: usize = 64;
const GENESIS_TIME: u64 = 1_700_000_000;
const GWEI_PER_ETH: u64 = 1_000_000_000;

const CONFIG_OVERRIDES: &[(&str, &str)] = &[
    ("ALTAIR_FORK_EPOCH", "0"),
    ("BELLATRIX_FORK_EPOCH", "0"),
    ("CAPELLA_FORK_EPOCH", "0"),
    ("DENEB_FORK_EPOCH", "0"),
    ("ELECTRA_FORK_EPOCH", "0"),
    ("FULU_FORK_EPOCH", "0"),
    ("SHARD_COMMITTEE_PERIOD", "0"),
    ("MIN_VALIDATOR_WITHDRAWABILITY_DELAY", "1"),
    // A balance churn of 128 ETH of which 64 go to activations and exits leaves 64 ETH an
    // epoch for consolidations (the preset's values leave none with 64 validators).
    ("MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA", "128000000000"),
    ("MAX_PER_EPOCH_ACTIVATION_EXIT_CHURN_LIMIT", "64000000000"),
];

/// The minimal config with [`CONFIG_OVERRIDES`] written in place (the oracle needs a complete
/// `config.yaml`, and YAML forbids repeating a key).
fn config_yaml() -> String {
    let mut lines: Vec<String> = MINIMAL_CONFIG_YAML.lines().map(str::to_string).collect();
    for (key, value) in CONFIG_OVERRIDES {
        let line = lines
            .iter_mut()
            .find(|l| l.starts_with(&format!("{key}:")))
            .unwrap_or_else(|| panic!("minimal.yaml has {key}"));
        *line = format!("{key}: {value}");
    }
    lines.join("\n") + "\n"
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("arbor-oracle-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Self(dir)
    }
    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Env {
    spec: ChainSpec,
    oracle: Oracle,
    scratch: Scratch,
    genesis: CachedBeaconState<E>,
    files: std::cell::Cell<usize>,
}

impl Env {
    /// Writes the config, has the oracle build its interop genesis, and loads it.
    fn new(name: &str) -> Self {
        let scratch = Scratch::new(name);
        let yaml = config_yaml();
        let config_path = scratch.path("config.yaml");
        std::fs::write(&config_path, &yaml).expect("write config.yaml");
        let spec = ChainSpec::from_config_yaml(&yaml).expect("the patched minimal config parses");
        let oracle = Oracle::locate("minimal")
            .unwrap_or_else(|e| panic!("{e}"))
            .with_config(&config_path);
        let genesis_path = scratch.path("genesis.ssz");
        let oracle_root = oracle
            .genesis(VALIDATORS, GENESIS_TIME, &genesis_path)
            .unwrap_or_else(|e| panic!("{e}"));
        let bytes = std::fs::read(&genesis_path).expect("read genesis.ssz");
        let state = BeaconState::<E>::from_ssz_bytes(&bytes, &spec).expect("decode genesis.ssz");
        let mut genesis = CachedBeaconState::new(state);
        assert_eq!(
            genesis.hash_tree_root().unwrap(),
            oracle_root,
            "Arbor's root of the oracle's genesis.ssz differs from the oracle's"
        );
        // The oracle's interop keys are ours.
        let view = genesis.view().unwrap();
        for i in [0, VALIDATORS - 1] {
            assert_eq!(
                view.validators.get(i).unwrap().pubkey.0,
                state_harness::interop_pubkey(i).0,
                "interop key {i}"
            );
        }
        Self {
            spec,
            oracle,
            scratch,
            genesis,
            files: std::cell::Cell::new(0),
        }
    }

    fn write(&self, what: &str, bytes: Vec<u8>) -> PathBuf {
        let n = self.files.get();
        self.files.set(n + 1);
        let path = self.scratch.path(&format!("{n:04}-{what}.ssz"));
        std::fs::write(&path, bytes).expect("write an SSZ file");
        path
    }

    fn write_state(&self, state: &CachedBeaconState<E>) -> PathBuf {
        let mut state = state.clone();
        state.apply_updates().unwrap();
        self.write("state", state.state.as_ssz_bytes())
    }

    /// Builds blocks at `slots` on `pre`, each with `contents(slot)`.
    fn chain(
        &self,
        pre: &CachedBeaconState<E>,
        slots: impl IntoIterator<Item = Slot>,
        mut contents: impl FnMut(Slot) -> BlockContents,
    ) -> (Vec<SignedBeaconBlock<E>>, CachedBeaconState<E>) {
        let mut state = pre.clone();
        let mut blocks = Vec::new();
        for slot in slots {
            let built = build_block(&state, slot, &contents(slot), &self.spec)
                .unwrap_or_else(|e| panic!("building the block at slot {slot}: {e}"));
            blocks.push(built.block);
            state = built.post;
        }
        (blocks, state)
    }

    /// Runs `blocks` (then empty slots up to `slots`) through Arbor and the oracle from `pre` and
    /// requires the same post-state root after every step. Returns Arbor's post-state.
    fn compare(
        &self,
        label: &str,
        pre: &CachedBeaconState<E>,
        blocks: &[SignedBeaconBlock<E>],
        slots: Option<Slot>,
    ) -> CachedBeaconState<E> {
        let pre_path = self.write_state(pre);
        let block_paths: Vec<PathBuf> = blocks
            .iter()
            .map(|b| self.write(&format!("block-{}", b.slot()), b.as_ssz_bytes()))
            .collect();

        let mut state = pre.clone();
        let mut arbor_roots = Vec::new();
        for (i, block) in blocks.iter().enumerate() {
            state_transition(
                &mut state,
                block,
                VerifySignatures::Batched,
                true,
                &AlwaysValid,
                &self.spec,
            )
            .unwrap_or_else(|e| {
                panic!(
                    "{label}: Arbor rejected block {i} (slot {}) that the harness built: {e:?}",
                    block.slot()
                )
            });
            arbor_roots.push(state.hash_tree_root().unwrap());
        }
        if let Some(slot) = slots {
            process_slots(&mut state, slot, &self.spec)
                .unwrap_or_else(|e| panic!("{label}: Arbor's process_slots to {slot}: {e:?}"));
            arbor_roots.push(state.hash_tree_root().unwrap());
        }

        match self
            .oracle
            .run(&pre_path, &block_paths, slots, true, 1, None)
            .unwrap_or_else(|e| panic!("{label}: {e}"))
        {
            OracleOutcome::Rejected {
                error,
                stage,
                input,
            } => panic!(
                "{label}: Arbor accepted every step but the oracle rejected {input:?} at {stage}: {error}"
            ),
            OracleOutcome::Accepted { steps, .. } => {
                assert_eq!(steps.len(), arbor_roots.len(), "{label}: number of steps");
                for (i, (step, arbor)) in steps.iter().zip(&arbor_roots).enumerate() {
                    assert_eq!(
                        step.post_state_root, *arbor,
                        "{label}: post-state root after step {i} ({}, slot {}) differs: oracle \
                         {}, Arbor {arbor}",
                        step.input, step.slot, step.post_state_root
                    );
                }
            }
        }
        state
    }

    /// Both sides must reject `block` on `pre`, and Arbor must leave its state as it was.
    fn assert_both_reject(
        &self,
        label: &str,
        pre: &CachedBeaconState<E>,
        block: &SignedBeaconBlock<E>,
    ) {
        let pre_path = self.write_state(pre);
        let block_path = self.write("bad-block", block.as_ssz_bytes());
        let mut state = pre.clone();
        let before = state.hash_tree_root().unwrap();
        let arbor = state_transition(
            &mut state,
            block,
            VerifySignatures::Batched,
            true,
            &AlwaysValid,
            &self.spec,
        );
        assert!(arbor.is_err(), "{label}: Arbor accepted the block");
        assert_eq!(
            state.hash_tree_root().unwrap(),
            before,
            "{label}: Arbor's state changed on a rejected block"
        );
        match self
            .oracle
            .run(&pre_path, &[block_path], None, true, 1, None)
        {
            Ok(OracleOutcome::Rejected { .. }) => {}
            Ok(OracleOutcome::Accepted { .. }) => panic!(
                "{label}: the oracle accepted a block Arbor rejects ({:?})",
                arbor.err()
            ),
            Err(e) => panic!("{label}: {e}"),
        }
    }
}

fn epoch_start(epoch: u64) -> Slot {
    epoch * E::slots_per_epoch()
}

/// Attestations for the slot before `slot` (all committees), and for the slot before that
/// again, cut in two (late votes: a smaller reward, a different flag path).
fn attestations_for(slot: Slot) -> Vec<AttestationSpec> {
    let mut specs = Vec::new();
    if slot >= 1 {
        specs.push(AttestationSpec::whole_slot(slot - 1));
    }
    if slot >= 3 {
        specs.extend(AttestationSpec::slot_in_parts(slot - 3, 2));
    }
    specs
}

fn full(slot: Slot) -> BlockContents {
    BlockContents {
        attestations: attestations_for(slot),
        sync_aggregate: SyncParticipation::Full,
        ..BlockContents::default()
    }
}

fn finalized_epoch(state: &CachedBeaconState<E>) -> u64 {
    StateRef::new(&state.state)
        .unwrap()
        .finalized_checkpoint
        .epoch
}

#[test]
fn empty_blocks_across_epoch_boundaries() {
    let env = Env::new("empty");
    // Skipped slots, the last slot of an epoch, the first of the next, three boundaries.
    let slots = [1, 2, 3, 5, 7, 8, 9, 15, 17, 23, 24, 25, 31, 33];
    let (blocks, _) = env.chain(&env.genesis, slots, |_| BlockContents {
        sync_aggregate: SyncParticipation::Empty,
        ..BlockContents::default()
    });
    env.compare("empty blocks", &env.genesis, &blocks, None);
}

#[test]
fn blocks_full_of_attestations() {
    let env = Env::new("attestations");
    // Five epochs of full blocks: justification and finality, rewards, sync rewards.
    let (blocks, post) = env.chain(&env.genesis, 1..=epoch_start(5), full);
    assert!(finalized_epoch(&post) >= 2, "the chain finalizes");
    let post = env.compare("full attestations", &env.genesis, &blocks, None);
    assert!(finalized_epoch(&post) >= 2);

    // Partial participation in the sync aggregate and attestations from some members only.
    let slot = epoch_start(5) + 1;
    let (blocks, _) = env.chain(&post, [slot], |slot| BlockContents {
        attestations: vec![AttestationSpec {
            participants_per_committee: Some(2),
            ..AttestationSpec::whole_slot(slot - 1)
        }],
        sync_aggregate: SyncParticipation::AllButEveryNth(3),
        ..BlockContents::default()
    });
    env.compare("partial participation", &post, &blocks, None);
}

#[test]
fn block_with_deposits_exits_withdrawals_and_consolidations() {
    let env = Env::new("operations");
    let address = |i: u64| Address::repeat_byte(0x10 + i as u8);

    // Slot 1: validators 0..16 move to execution credentials (withdrawals follow as their
    // balances rise above 32 ETH), then two epochs of full blocks.
    let (blocks, _) = env.chain(&env.genesis, 1..=epoch_start(2), |slot| {
        let mut contents = full(slot);
        if slot == 1 {
            contents.bls_to_execution_changes = (0..16).map(|i| (i, address(i))).collect();
        }
        contents
    });
    let state = env.compare("BLS-to-execution changes", &env.genesis, &blocks, None);

    // One block with every kind of operation.
    let ops_slot = epoch_start(2) + 1;
    let (ops_block, after_ops) = env.chain(&state, [ops_slot], |slot| BlockContents {
        voluntary_exits: vec![20, 21],
        proposer_slashings: vec![30],
        attester_slashings: vec![vec![31, 32]],
        deposit_requests: vec![
            DepositRequestSpec::new_validator(64, 32 * GWEI_PER_ETH, address(64), false),
            DepositRequestSpec::new_validator(65, 40 * GWEI_PER_ETH, address(65), true),
            // A top-up of an existing validator.
            DepositRequestSpec::new_validator(3, 5 * GWEI_PER_ETH, address(3), false),
            // A bad signature: accepted in the block, dropped at epoch processing.
            DepositRequestSpec {
                valid_signature: false,
                ..DepositRequestSpec::new_validator(66, 32 * GWEI_PER_ETH, address(66), false)
            },
        ],
        withdrawal_requests: vec![
            // A full exit requested from the execution layer.
            (1, 0),
        ],
        // Switch 5 and 2 to compounding credentials (4 is consolidated into 5 in the next block).
        consolidation_requests: vec![(5, 5), (2, 2)],
        ..full(slot)
    });
    let state = env.compare("operations block", &state, &ops_block, None);
    {
        let view = StateRef::new(&state.state).unwrap();
        // Four deposit requests, and the excess over 32 ETH of the two validators switched to
        // compounding (`queue_excess_active_balance`).
        assert_eq!(
            view.pending_deposits.map(|l| l.len()),
            Some(6),
            "six pending deposits"
        );
        assert!(
            view.validators.get(20).unwrap().exit_epoch != u64::MAX,
            "validator 20 exits"
        );
        assert!(
            view.validators.get(30).unwrap().slashed,
            "validator 30 slashed"
        );
        assert!(
            view.validators.get(31).unwrap().slashed,
            "validator 31 slashed"
        );
        assert_eq!(
            view.validators.get(5).unwrap().withdrawal_credentials[0],
            0x02
        );
        assert_eq!(
            view.validators.get(2).unwrap().withdrawal_credentials[0],
            0x02
        );
    }
    let _ = after_ops;

    // A consolidation of 4 into 5 and a partial withdrawal request from the now-compounding
    // validator 2 (its balance is above 32 ETH from rewards), then four more epochs of full
    // blocks: the deposits are applied once finalized, the consolidation and exits go through,
    // withdrawals are paid.
    let (blocks, post) = env.chain(&state, ops_slot + 1..=epoch_start(7), |slot| {
        let mut contents = full(slot);
        if slot == ops_slot + 1 {
            contents.withdrawal_requests = vec![(2, GWEI_PER_ETH / 10)];
            contents.consolidation_requests = vec![(4, 5)];
        }
        contents
    });

    let withdrawals: usize = blocks
        .iter()
        .map(|b| {
            let SignedBeaconBlock::Fulu(b) = b else {
                panic!("the oracle's blocks are Fulu blocks, not {}", b.fork_name());
            };
            b.message.body.execution_payload.withdrawals.len()
        })
        .sum();
    assert!(withdrawals > 0, "the payloads carry withdrawals");
    let post_view = StateRef::new(&post.state).unwrap();
    assert!(
        post_view.validators.len() > VALIDATORS,
        "a deposit created a validator"
    );
    assert!(
        post_view.validators.get(4).unwrap().exit_epoch != u64::MAX,
        "the consolidation of 4 into 5 exits 4"
    );
    let post = env.compare("after the operations", &state, &blocks, None);
    let _ = post;
}

/// Arbor's own interop genesis (its proposer lookahead filled in, unlike Lodestar 1.46's) as the
/// pre-state: the proposers of epochs 0 and 1 come from the lookahead, not validator 0.
#[test]
fn full_blocks_from_arbor_interop_genesis() {
    let env = Env::new("arbor-genesis");
    let state = state_processing::genesis::interop_genesis_state::<E>(
        VALIDATORS,
        GENESIS_TIME,
        Root::repeat_byte(0x0b),
        &env.spec,
    )
    .expect("Arbor's interop genesis");
    let genesis = CachedBeaconState::new(state);
    let lookahead = StateRef::new(&genesis.state)
        .unwrap()
        .proposer_lookahead
        .expect("a Fulu state")
        .iter()
        .copied()
        .collect::<Vec<_>>();
    assert!(lookahead.iter().any(|&i| i != 0), "a filled-in lookahead");
    let (blocks, _) = env.chain(&genesis, 1..=epoch_start(3), full);
    env.compare("from Arbor's genesis", &genesis, &blocks, None);
}

#[test]
fn two_epochs_of_process_slots() {
    let env = Env::new("slots");
    // From genesis, across two epoch boundaries.
    env.compare(
        "slots from genesis",
        &env.genesis,
        &[],
        Some(epoch_start(2)),
    );
    // From a state with participation to reward, after a few full blocks, for two epochs.
    let (_, state) = env.chain(&env.genesis, 1..=10, full);
    env.compare("slots after blocks", &state, &[], Some(10 + epoch_start(2)));
}

#[test]
fn both_reject_invalid_blocks() {
    let env = Env::new("invalid");
    let (blocks, _) = env.chain(&env.genesis, [1], full);
    let good = &blocks[0];
    let view = StateRef::new(&env.genesis.state).unwrap();
    // Changes one field and signs the block again, so that only that field is wrong.
    let mutate = |f: &dyn Fn(&mut types::electra::BeaconBlock<E>)| {
        let SignedBeaconBlock::Fulu(signed) = good else {
            panic!("a Fulu block, got {:?}", good.fork_name())
        };
        let mut message = signed.message.clone();
        f(&mut message);
        sign_block(message, &view, &env.spec)
    };
    env.assert_both_reject(
        "wrong state root",
        &env.genesis,
        &mutate(&|b| b.state_root = Root::repeat_byte(1)),
    );
    let mut bad_signature = good.clone();
    if let SignedBeaconBlock::Fulu(b) = &mut bad_signature {
        b.signature = good_signature_of_other_message();
    }
    env.assert_both_reject("bad proposer signature", &env.genesis, &bad_signature);
    env.assert_both_reject(
        "wrong proposer",
        &env.genesis,
        &mutate(&|b| b.proposer_index += 1),
    );
    env.assert_both_reject(
        "payload timestamp",
        &env.genesis,
        &mutate(&|b| b.body.execution_payload.timestamp += 1),
    );
    env.assert_both_reject(
        "payload parent hash",
        &env.genesis,
        &mutate(&|b| b.body.execution_payload.parent_hash = Root::repeat_byte(7)),
    );
    env.assert_both_reject(
        "attestation signature",
        &env.genesis,
        &mutate(&|b| b.body.attestations[0].signature = good_signature_of_other_message()),
    );
    env.assert_both_reject(
        "randao reveal",
        &env.genesis,
        &mutate(&|b| b.body.randao_reveal = good_signature_of_other_message()),
    );
}

/// A valid signature (a point in G2) over an unrelated message.
fn good_signature_of_other_message() -> types::BLSSignature {
    types::BLSSignature::from(
        state_harness::interop_secret_key(0)
            .sign(b"an unrelated message")
            .serialize(),
    )
}

#[test]
fn config_overrides_apply() {
    let spec = ChainSpec::from_config_yaml(&config_yaml()).unwrap();
    assert_eq!(spec.fulu_fork_epoch, 0);
    assert_eq!(spec.shard_committee_period, 0);
    assert_eq!(spec.min_validator_withdrawability_delay, 1);
}
