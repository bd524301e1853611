//! Property tests: the ids and the JSON conventions round-trip for any value, the header
//! parsers never panic on any input, and negotiation picks the higher-weighted encoding.

use beacon_api::negotiation::{Encoding, negotiate, parse_accept, request_encoding};
use beacon_api::{BlockId, GeneralStatus, StateId, ValidatorId, ValidatorStatus};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use types::phase0::Validator;
use types::{B256, BLSPubkey};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Conventions {
    #[serde(with = "beacon_api::json::quoted_u64")]
    n: u64,
    #[serde(with = "beacon_api::json::quoted_u64_vec")]
    list: Vec<u64>,
    #[serde(with = "beacon_api::json::hex_bytes")]
    bytes: Vec<u8>,
    #[serde(default, with = "beacon_api::json::quoted_u64_option")]
    maybe: Option<u64>,
}

proptest! {
    #[test]
    fn conventions_round_trip(n: u64, list: Vec<u64>, bytes: Vec<u8>, maybe: Option<u64>) {
        let value = Conventions { n, list, bytes, maybe };
        let json = serde_json::to_string(&value).expect("encodes");
        prop_assert_eq!(serde_json::from_str::<Conventions>(&json).expect("decodes"), value);
    }

    #[test]
    fn ids_round_trip_through_their_text(slot: u64, root: [u8; 32], key in proptest::collection::vec(any::<u8>(), 48)) {
        let root = B256::from(root);
        for id in [StateId::Slot(slot), StateId::Root(root), StateId::Head, StateId::Justified] {
            prop_assert_eq!(id.to_string().parse::<StateId>(), Ok(id));
        }
        for id in [BlockId::Slot(slot), BlockId::Root(root), BlockId::Genesis] {
            prop_assert_eq!(id.to_string().parse::<BlockId>(), Ok(id));
        }
        let key = BLSPubkey::from_slice(&key);
        for id in [ValidatorId::Index(slot), ValidatorId::PublicKey(key)] {
            prop_assert_eq!(id.to_string().parse::<ValidatorId>(), Ok(id));
        }
    }

    #[test]
    fn parsers_never_panic(s in ".*") {
        let _ = s.parse::<StateId>();
        let _ = s.parse::<BlockId>();
        let _ = s.parse::<ValidatorId>();
        let _ = parse_accept(&s);
        let _ = negotiate(Some(&s), &[Encoding::Json, Encoding::Ssz]);
        let _ = request_encoding(Some(&s));
    }

    #[test]
    fn negotiation_prefers_the_higher_weight(json_q in 0u16..=1000, ssz_q in 0u16..=1000) {
        let q = |v: u16| format!("{}.{:03}", v / 1000, v % 1000);
        let header = format!("application/json;q={}, application/octet-stream;q={}", q(json_q), q(ssz_q));
        let chosen = negotiate(Some(&header), &[Encoding::Json, Encoding::Ssz]);
        match (json_q, ssz_q) {
            (0, 0) => prop_assert!(chosen.is_err()),
            (j, s) if s > j => prop_assert_eq!(chosen, Ok(Encoding::Ssz)),
            _ => prop_assert_eq!(chosen, Ok(Encoding::Json)),
        }
    }

    /// The status is active exactly when the spec's `is_active_validator` holds, and slashed
    /// statuses only for slashed validators.
    #[test]
    fn status_agrees_with_is_active_validator(
        eligibility: u64, activation: u64, exit: u64, withdrawable: u64, slashed: bool,
        effective_balance in prop_oneof![Just(0u64), any::<u64>()], epoch: u64,
    ) {
        let validator = Validator {
            pubkey: BLSPubkey::ZERO,
            withdrawal_credentials: B256::ZERO,
            effective_balance,
            slashed,
            activation_eligibility_epoch: eligibility,
            activation_epoch: activation,
            exit_epoch: exit,
            withdrawable_epoch: withdrawable,
        };
        let status = ValidatorStatus::from_validator(&validator, epoch);
        let is_active_validator = activation <= epoch && epoch < exit;
        prop_assert_eq!(status.general() == GeneralStatus::Active, is_active_validator);
        if matches!(status, ValidatorStatus::ActiveSlashed | ValidatorStatus::ExitedSlashed) {
            prop_assert!(slashed);
        }
        let name = serde_json::to_string(&status).expect("encodes");
        prop_assert_eq!(serde_json::from_str::<ValidatorStatus>(&name).expect("decodes"), status);
    }
}
