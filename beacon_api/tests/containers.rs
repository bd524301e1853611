//! Round trips of the consensus containers and the API's fork-versioned envelopes against
//! hand-written fixtures in the spec's JSON shape (minimal preset): JSON → value → JSON gives
//! the fixture back, and the value survives SSZ.

use beacon_api::ForkVersionedJson;
use beacon_api::envelope::{from_json_by_fork, to_json};
use beacon_api::{
    BlockContents, ForkVersionedResponse, GenericResponse, ProduceBlockV3Metadata,
    SignedBlockContents,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use ssz::{Decode, Encode};
use types::altair::{SignedContributionAndProof, SyncCommitteeContribution, SyncCommitteeMessage};
use types::electra::{SignedAggregateAndProof, SingleAttestation};
use types::phase0::{AttestationData, Validator};
use types::{Attestation, ForkName, MinimalEthSpec, SignedBeaconBlock, U256};

type E = MinimalEthSpec;

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Decodes the fixture as `T`, checks that it encodes back to the same JSON, and returns it.
fn json_round_trip<T: Serialize + DeserializeOwned>(name: &str) -> T {
    let json = fixture(name);
    let value: T = serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        serde_json::to_value(&value).expect("encodes"),
        json,
        "{name}"
    );
    value
}

fn ssz_round_trip<T: Encode + Decode + PartialEq + std::fmt::Debug>(value: &T) {
    let bytes = value.as_ssz_bytes();
    assert_eq!(
        &T::from_ssz_bytes(&bytes).expect("decodes its own encoding"),
        value
    );
}

#[test]
fn attestation_data_round_trips() {
    let response: GenericResponse<AttestationData> = json_round_trip("attestation_data.json");
    assert_eq!((response.data.slot, response.data.target.epoch), (65, 8));
    ssz_round_trip(&response.data);
}

#[test]
fn single_attestations_round_trip() {
    let items: Vec<SingleAttestation> = json_round_trip("single_attestations.json");
    assert_eq!(
        (items[0].committee_index, items[0].attester_index),
        (3, 1024)
    );
    ssz_round_trip(&items[0]);
}

#[test]
fn aggregate_attestation_v2_is_read_by_its_version() {
    let response: ForkVersionedResponse<Attestation<E>> =
        json_round_trip("aggregate_attestation.json");
    assert_eq!(response.version, ForkName::Fulu);
    let Attestation::Fulu(attestation) = &response.data else {
        panic!(
            "a fulu response decodes as a Fulu attestation, got {:?}",
            response.data.fork_name()
        );
    };
    // 0x0d: bits 0 and 2 set in a list of length 3 (the top set bit is the length marker).
    assert_eq!(attestation.aggregation_bits.len(), 3);
    assert!(attestation.aggregation_bits.get(0).expect("in range"));
    assert!(!attestation.aggregation_bits.get(1).expect("in range"));
    assert!(attestation.committee_bits.get(1).expect("in range"));
    ssz_round_trip(attestation);

    // The version decides the variant: the same JSON labelled phase0 decodes as a phase0
    // attestation (`committee_bits` is not a phase0 field, and unknown fields are ignored).
    let mut relabelled = fixture("aggregate_attestation.json");
    relabelled["version"] = Value::from("phase0");
    let phase0: ForkVersionedResponse<Attestation<E>> =
        serde_json::from_value(relabelled).expect("phase0 attestation fields are all present");
    assert_eq!(phase0.data.fork_name(), ForkName::Phase0);

    let mut unknown = fixture("aggregate_attestation.json");
    unknown["version"] = Value::from("heze");
    assert!(serde_json::from_value::<ForkVersionedResponse<Attestation<E>>>(unknown).is_err());
}

#[test]
fn pool_submissions_round_trip() {
    let aggregates: Vec<SignedAggregateAndProof<E>> =
        json_round_trip("signed_aggregate_and_proofs.json");
    assert_eq!(aggregates[0].message.aggregator_index, 12);
    ssz_round_trip(&aggregates[0]);

    let messages: Vec<SyncCommitteeMessage> = json_round_trip("sync_committee_messages.json");
    ssz_round_trip(&messages[0]);

    let contribution: GenericResponse<SyncCommitteeContribution<E>> =
        json_round_trip("sync_committee_contribution.json");
    assert_eq!(contribution.data.aggregation_bits.num_set_bits(), 2);
    ssz_round_trip(&contribution.data);

    let signed: Vec<SignedContributionAndProof<E>> =
        json_round_trip("signed_contribution_and_proofs.json");
    ssz_round_trip(&signed[0]);
}

#[test]
fn validator_round_trips() {
    let validator: Validator = json_round_trip("validator.json");
    assert_eq!(validator.exit_epoch, u64::MAX);
    ssz_round_trip(&validator);
}

#[test]
fn fulu_signed_block_round_trips_in_json_and_ssz() {
    let response: ForkVersionedResponse<SignedBeaconBlock<E>> =
        json_round_trip("fulu_signed_block.json");
    assert_eq!(
        (response.execution_optimistic, response.finalized),
        (Some(false), Some(true))
    );
    let SignedBeaconBlock::Fulu(block) = &response.data else {
        panic!("expected a Fulu block");
    };
    let payload = &block.message.body.execution_payload;
    assert_eq!(payload.base_fee_per_gas, U256::MAX);
    assert_eq!(payload.transactions.len(), 2);
    assert_eq!(payload.extra_data.to_vec(), b"Arb");
    assert_eq!(block.message.body.execution_requests.deposits[0].index, 8);
    ssz_round_trip(block);

    // The block's SSZ decodes by fork to the value its JSON decoded to.
    let bytes = response.data.as_ssz_bytes();
    let from_ssz =
        SignedBeaconBlock::<E>::from_ssz_bytes_by_fork(&bytes, ForkName::Fulu).expect("decodes");
    assert_eq!(from_ssz, response.data);

    // The bare JSON (a publish body) reads by the fork from the header.
    let data = to_json(&response.data).expect("encodes");
    let reread: SignedBeaconBlock<E> = from_json_by_fork(&data, ForkName::Fulu).expect("decodes");
    assert_eq!(reread, response.data);
    // A container read at a fork in which it does not exist is an error, not a guess.
    assert!(from_json_by_fork::<types::DataColumnSidecar<E>>(&data, ForkName::Electra).is_err());
}

#[test]
fn malformed_block_json_is_an_error() {
    let json = fixture("fulu_signed_block.json");
    for (pointer, bad) in [
        ("/data/message/slot", Value::from("-1")),
        (
            "/data/message/body/sync_aggregate/sync_committee_bits",
            Value::from("0xffff"),
        ),
        (
            "/data/message/body/execution_payload/logs_bloom",
            Value::from("0x00"),
        ),
        (
            "/data/message/body/execution_payload/base_fee_per_gas",
            Value::from("0x10"),
        ),
        ("/data/signature", Value::from("0x1234")),
    ] {
        let mut broken = json.clone();
        *broken
            .pointer_mut(pointer)
            .expect("pointer exists in the fixture") = bad;
        assert!(
            serde_json::from_value::<ForkVersionedResponse<SignedBeaconBlock<E>>>(broken).is_err(),
            "{pointer}"
        );
    }
}

#[test]
fn produce_block_v3_json_round_trips_with_metadata() {
    let json = fixture("fulu_block_contents.json");
    let metadata: ProduceBlockV3Metadata =
        serde_json::from_value(json.clone()).expect("metadata decodes");
    assert_eq!(metadata.execution_payload_value, U256::from(12_345));
    let contents = BlockContents::<E>::deserialize_by_fork(json["data"].clone(), ForkName::Fulu)
        .expect("contents decode");
    assert_eq!(
        serde_json::from_slice::<Value>(&to_json(&contents).expect("encodes")).expect("json"),
        json["data"]
    );
    assert_eq!(
        BlockContents::<E>::from_ssz_bytes_by_fork(&contents.as_ssz_bytes(), ForkName::Fulu),
        Ok(contents.clone())
    );

    // Sign it (any signature) and rebuild the publish body from the parts.
    let (block, blobs) = contents.into_block_and_blobs();
    let types::BeaconBlock::Fulu(message) = block else {
        panic!("expected a Fulu block")
    };
    let signed = SignedBeaconBlock::Fulu(types::fulu::SignedBeaconBlock {
        message,
        signature: Default::default(),
    });
    let publish = SignedBlockContents::new(signed.clone(), blobs).expect("parts fit");
    assert_eq!(publish.fork_name(), ForkName::Fulu);
    let bytes = publish.as_ssz_bytes();
    assert_eq!(
        SignedBlockContents::<E>::from_ssz_bytes_by_fork(&bytes, ForkName::Fulu),
        Ok(publish)
    );
    assert!(
        SignedBlockContents::new(signed, None).is_err(),
        "a Fulu block needs its blob data"
    );
}

#[test]
fn blob_proof_counts_are_checked() {
    let json = fixture("fulu_block_contents.json");
    let mut data = json["data"].clone();
    // One blob needs CELLS_PER_EXT_BLOB (128) cell proofs at Fulu; one proof is too few.
    data["blobs"] = Value::from(vec![format!("0x{}", "00".repeat(131_072))]);
    data["kzg_proofs"] = Value::from(vec![format!("0x{}", "c0".repeat(48))]);
    let err = BlockContents::<E>::deserialize_by_fork(data.clone(), ForkName::Fulu)
        .expect_err("1 proof for 1 blob at Fulu");
    assert!(err.to_string().contains("expected 128"), "{err}");
    data["kzg_proofs"] = Value::from(vec![format!("0x{}", "c0".repeat(48)); 128]);
    let contents = BlockContents::<E>::deserialize_by_fork(data, ForkName::Fulu)
        .expect("128 proofs for 1 blob");
    assert_eq!(
        BlockContents::<E>::from_ssz_bytes_by_fork(&contents.as_ssz_bytes(), ForkName::Fulu),
        Ok(contents)
    );
}

/// The blobs' SSZ is written slice by slice rather than by `ssz_types`' byte-at-a-time path: the
/// bytes must be the generic encoding's, and a blob section that is not whole blobs an error.
#[test]
fn blobs_encode_as_the_generic_ssz_does_and_partial_blobs_are_errors() {
    let json = fixture("fulu_block_contents.json");
    let mut data = json["data"].clone();
    data["blobs"] = Value::from(
        (1..=3u8)
            .map(|i| format!("0x{}", format!("{i:02x}").repeat(131_072)))
            .collect::<Vec<_>>(),
    );
    data["kzg_proofs"] = Value::from(vec![format!("0x{}", "c0".repeat(48)); 3 * 128]);
    let contents =
        BlockContents::<E>::deserialize_by_fork(data, ForkName::Fulu).expect("3 blobs, 384 proofs");
    let BlockContents::Fulu(fulu) = &contents else {
        panic!("Fulu contents")
    };
    let mut reference = Vec::new();
    let mut encoder = ssz::SszEncoder::container(&mut reference, 3 * ssz::BYTES_PER_LENGTH_OFFSET);
    encoder.append(&fulu.block);
    encoder.append(&fulu.kzg_proofs);
    encoder.append(&fulu.blobs);
    encoder.finalize();
    assert_eq!(contents.as_ssz_bytes(), reference);
    assert_eq!(
        BlockContents::<E>::from_ssz_bytes_by_fork(&reference, ForkName::Fulu),
        Ok(contents.clone())
    );
    for cut in [1, 131_071] {
        let short = &reference[..reference.len() - cut];
        assert!(
            BlockContents::<E>::from_ssz_bytes_by_fork(short, ForkName::Fulu).is_err(),
            "{cut} bytes short"
        );
    }
}
