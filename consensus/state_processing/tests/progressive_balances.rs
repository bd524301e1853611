//! The target balances kept block by block (`progressive_balances`) against the spec's
//! definition computed afresh, along a chain of blocks with partial and late attestations,
//! proposer and attester slashings (of validators that had attested and of ones that had not),
//! across epoch boundaries; and the pulled-up justification they give against the spec
//! function's.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use state_harness::{AttestationSpec, BlockContents, build_block};
use state_processing::{
    CachedBeaconState,
    genesis::interop_genesis_state,
    per_epoch::{
        process_justification_and_finalization, process_justification_and_finalization_progressive,
    },
    progressive_balances::ProgressiveBalances,
};
use types::{ChainSpec, EthSpec, ForkName, MinimalEthSpec, Root, Slot};

type E = MinimalEthSpec;

/// The pulled-up checkpoints of `state` by the spec's walk and by the kept balances.
fn pulled_up_both_ways(state: &CachedBeaconState<E>, spec: &ChainSpec) -> (String, String) {
    let mut by_walk = state.clone();
    {
        let (mut view, _) = by_walk.view_mut().unwrap();
        process_justification_and_finalization(&mut view, spec).unwrap();
    }
    let mut progressive = state.clone();
    process_justification_and_finalization_progressive(&mut progressive).unwrap();
    let show = |s: &CachedBeaconState<E>| {
        let v = s.view().unwrap();
        format!(
            "{:?} {:?} {:?} {:?}",
            v.justification_bits,
            v.previous_justified_checkpoint,
            v.current_justified_checkpoint,
            v.finalized_checkpoint
        )
    };
    (show(&by_walk), show(&progressive))
}

#[test]
fn kept_balances_match_the_spec_sums_through_attestations_slashings_and_epochs() {
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    let genesis =
        interop_genesis_state::<E>(64, 1_600_000_000, Root::repeat_byte(0x42), &spec).unwrap();
    let mut state = CachedBeaconState::new(genesis);
    let spe = E::slots_per_epoch();
    let mut kept_checks = 0;
    let mut slashed_so_far = Vec::new();
    let mut skipped = 0;
    for slot in 1..=(6 * spe) {
        let mut contents = BlockContents::default();
        // Attest to the last slot with half of each committee, and (every third slot) to an
        // older slot of this or the previous epoch with everyone: flags set late, some again.
        let previous: Slot = slot - 1;
        contents.attestations.push(AttestationSpec {
            participants_per_committee: Some(1),
            ..AttestationSpec::whole_slot(previous)
        });
        if slot % 3 == 0 && slot >= 3 {
            contents
                .attestations
                .push(AttestationSpec::whole_slot(slot - 3));
        }
        if slot > 2 && slot % 3 == 1 {
            contents
                .attestations
                .push(AttestationSpec::whole_slot(slot - 2));
        }
        // Slashings in epochs 1, 2 and 4: validators with and without target flags.
        if slot == spe + 3 {
            contents.proposer_slashings.push(5);
            slashed_so_far.push(5);
        }
        if slot == 2 * spe + 5 {
            contents.attester_slashings.push(vec![7, 11, 13]);
            slashed_so_far.extend([7, 11, 13]);
        }
        if slot == 4 * spe + 1 {
            contents.attester_slashings.push(vec![20]);
            slashed_so_far.push(20);
        }
        let built = match build_block(&state, slot, &contents, &spec) {
            Ok(built) => built,
            // A slashed validator's slot stays empty (and the slashing waits for the next).
            Err(e) if format!("{e:?}").contains("ProposerSlashed") => {
                skipped += 1;
                continue;
            }
            Err(e) => panic!("slot {slot}: {e:?}"),
        };
        state = built.post;

        // The kept sums were maintained by the blocks and epochs (not built now) once the first
        // epoch transition handed them over.
        let kept = state.progressive_balances().unwrap().clone();
        let fresh = ProgressiveBalances::build(&state.view().unwrap()).unwrap();
        assert_eq!(kept, fresh, "slot {slot}");
        if slot >= spe {
            kept_checks += 1;
        }
        let (by_walk, progressive) = pulled_up_both_ways(&state, &spec);
        assert_eq!(by_walk, progressive, "slot {slot}");
    }
    assert!(kept_checks + skipped >= 5 * spe as usize);
    assert!(skipped < 4, "{skipped} empty slots");
    // The slashings landed (the sums would not have had anything to subtract otherwise).
    let view = state.view().unwrap();
    for index in slashed_so_far {
        assert!(view.validators.get(index as usize).unwrap().slashed);
    }
    // And justification moved: the comparison was not between two untouched states.
    assert!(view.current_justified_checkpoint.epoch >= 3);
}
