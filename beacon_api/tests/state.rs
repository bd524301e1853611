//! The state's JSON (`getStateV2` in JSON) in the spec's conventions: a synthetic Fulu state
//! (mainnet preset, 64 validators) round-trips through JSON to the same value and SSZ.

use beacon_api::ForkVersionedResponse;
use serde_json::Value;
use state_harness::synthetic::{SyntheticParams, build_state_with_placeholder_keys};
use types::{BeaconState, ChainSpec, ForkName, MainnetEthSpec};

type E = MainnetEthSpec;

fn state() -> types::fulu::BeaconState<E> {
    build_state_with_placeholder_keys::<E>(
        64,
        &SyntheticParams::default(),
        &ChainSpec::mainnet().with_forks_at_genesis_through(ForkName::Fulu),
    )
    .expect("the synthetic state builds")
}

#[test]
fn fulu_state_round_trips_through_json() {
    let inner = &state();
    let json = serde_json::to_value(inner).expect("encodes");
    // Spot checks of the conventions on the persistent lists.
    assert_eq!(json["balances"].as_array().map(Vec::len), Some(64));
    assert!(json["balances"][0].is_string(), "balances are quoted");
    assert!(
        json["previous_epoch_participation"][0].is_string(),
        "participation flags are quoted"
    );
    assert!(json["slashings"][0].is_string(), "slashings are quoted");
    assert!(
        json["proposer_lookahead"][0].is_string(),
        "the lookahead is quoted"
    );
    assert!(
        json["block_roots"][0]
            .as_str()
            .is_some_and(|r| r.starts_with("0x") && r.len() == 66)
    );
    assert_eq!(json["validators"].as_array().map(Vec::len), Some(64));

    let decoded: types::fulu::BeaconState<E> =
        serde_json::from_value(json.clone()).expect("decodes");
    assert_eq!(&decoded, inner);
    assert_eq!(
        ssz::Encode::as_ssz_bytes(&decoded),
        ssz::Encode::as_ssz_bytes(inner)
    );

    let state = BeaconState::Fulu(inner.clone());
    let response = ForkVersionedResponse::new(ForkName::Fulu, state.clone());
    let text = serde_json::to_string(&response).expect("encodes");
    let reread: ForkVersionedResponse<BeaconState<E>> =
        serde_json::from_str(&text).expect("decodes");
    assert_eq!(reread.data, state);
}

#[test]
fn state_json_with_wrong_lengths_is_refused() {
    let inner = state();
    let json = serde_json::to_value(&inner).expect("encodes");
    for (field, bad) in [
        ("block_roots", Value::from(Vec::<String>::new())),
        ("proposer_lookahead", Value::from(vec!["1"])),
        ("balances", Value::from(vec!["-1"])),
        ("previous_epoch_participation", Value::from(vec!["256"])),
    ] {
        let mut broken = json.clone();
        broken[field] = bad;
        assert!(
            serde_json::from_value::<types::fulu::BeaconState<E>>(broken).is_err(),
            "{field}"
        );
    }
}
