//! The client against the mock relay over real HTTP, the relay building its payloads with the
//! mock execution client: registrations, bids in SSZ and JSON, 204, error statuses, a slow
//! relay, bad bids, and the reveal (v1) and publication (v2) of a signed blinded block.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use builder_client::mock_relay::{MockRelay, RelayBehaviour};
use builder_client::{
    BidError, BidExpectations, BlindedBeaconBlock, BuilderError, BuilderHttpClient,
    BuilderTimeouts, SignedBlindedBeaconBlock, SignedBuilderBid, SignedValidatorRegistrationV1,
    UnblindError, ValidatorRegistrationV1, builder_domain, verify_builder_bid, withdrawals_root,
};
use execution_layer::{EngineApiClient, ForkchoiceState, JwtSecret, PayloadAttributes, Timeouts};
use mock_execution_layer::{MockConfig, MockExecutionLayer};
use types::{
    Address, BLSPubkey, BLSSignature, ChainSpec, ForkName, Hash32, MinimalEthSpec, Root, Slot,
    U256, electra::SignedBeaconBlock, signing,
};

type E = MinimalEthSpec;

const GENESIS_TIME: u64 = 1_600_000_000;
const BLOBS: usize = 2;
const FEE_RECIPIENT: Address = Address::repeat_byte(0xbb);

struct Setup {
    spec: ChainSpec,
    _el: MockExecutionLayer<E>,
    relay: MockRelay<E>,
    parent_hash: Hash32,
    proposer: bls::SecretKey,
    attributes: PayloadAttributes,
}

async fn setup() -> Setup {
    let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
    let jwt = JwtSecret::random();
    let el = MockExecutionLayer::<E>::start(
        MockConfig {
            jwt_secret: jwt.clone(),
            spec: spec.clone(),
            genesis_time: GENESIS_TIME,
            seed: 3,
            chain_id: 1337,
        },
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    el.set_blobs_per_payload(BLOBS);
    let timeouts = Timeouts {
        get_payload: Duration::from_secs(120),
        ..Timeouts::default()
    };
    let engine = Arc::new(EngineApiClient::new(el.url(), jwt, timeouts).unwrap());
    let relay = MockRelay::start(spec.clone(), bls::SecretKey::random(), engine)
        .await
        .unwrap();
    let parent_hash = el.genesis_block_hash();
    let attributes = PayloadAttributes {
        timestamp: spec.compute_time_at_slot(GENESIS_TIME, Slot::from(1u64)),
        prev_randao: Root::repeat_byte(0x42),
        suggested_fee_recipient: FEE_RECIPIENT,
        withdrawals: vec![],
        parent_beacon_block_root: Root::repeat_byte(0x17),
    };
    relay
        .prepare_payload(
            Slot::from(1u64),
            ForkchoiceState {
                head_block_hash: parent_hash,
                safe_block_hash: Hash32::ZERO,
                finalized_block_hash: Hash32::ZERO,
            },
            &attributes,
        )
        .await
        .unwrap();
    Setup {
        spec,
        _el: el,
        relay,
        parent_hash,
        proposer: bls::SecretKey::random(),
        attributes,
    }
}

fn pubkey_of(key: &bls::SecretKey) -> BLSPubkey {
    BLSPubkey::from(key.public_key().compress().0)
}

fn registration(s: &Setup) -> SignedValidatorRegistrationV1 {
    let message = ValidatorRegistrationV1 {
        fee_recipient: FEE_RECIPIENT,
        gas_limit: 60_000_000,
        timestamp: GENESIS_TIME,
        pubkey: pubkey_of(&s.proposer),
    };
    let root = signing::compute_signing_root(&message, builder_domain(&s.spec));
    SignedValidatorRegistrationV1 {
        message,
        signature: BLSSignature::from(s.proposer.sign(root.as_slice()).serialize()),
    }
}

fn client(s: &Setup, timeouts: BuilderTimeouts) -> BuilderHttpClient {
    BuilderHttpClient::new(&s.relay.url_with_pubkey(), timeouts).unwrap()
}

fn expectations(s: &Setup) -> BidExpectations {
    BidExpectations {
        parent_hash: s.parent_hash,
        timestamp: s.attributes.timestamp,
        prev_randao: s.attributes.prev_randao,
        withdrawals_root: withdrawals_root::<E>(&[]).unwrap(),
        parent_gas_limit: 60_000_000,
        registered_gas_limit: Some(60_000_000),
        max_blobs: s
            .spec
            .get_blob_parameters(types::Epoch::from(0u64))
            .max_blobs_per_block,
        builder_pubkey: Some(s.relay.pubkey()),
    }
}

async fn header(
    s: &Setup,
    client: &BuilderHttpClient,
) -> Result<Option<SignedBuilderBid<E>>, BuilderError> {
    client
        .get_header::<E>(
            ForkName::Fulu,
            Slot::from(1u64),
            s.parent_hash,
            pubkey_of(&s.proposer),
        )
        .await
}

/// A signed blinded block committing to `bid` (the rest of the body random).
fn blinded_block_for(bid: &SignedBuilderBid<E>) -> SignedBlindedBeaconBlock<E> {
    let mut bytes = vec![0u8; 1 << 18];
    splitmix::SplitMix64::new(1).fill_bytes(&mut bytes);
    let block = SignedBeaconBlock::<E>::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
    let mut message = BlindedBeaconBlock::from_block(&block.message);
    message.slot = Slot::from(1u64);
    message.body.execution_payload_header = bid.message.header.clone();
    message.body.blob_kzg_commitments = bid.message.blob_kzg_commitments.clone();
    message.body.execution_requests = bid.message.execution_requests.clone();
    SignedBlindedBeaconBlock {
        message,
        signature: block.signature,
    }
}

#[tokio::test]
async fn registrations_reach_the_relay_in_ssz_and_in_json() {
    let s = setup().await;
    let registration = registration(&s);
    client(&s, BuilderTimeouts::default())
        .register_validator(std::slice::from_ref(&registration))
        .await
        .unwrap();
    assert_eq!(
        s.relay.registrations().get(&registration.message.pubkey),
        Some(&registration)
    );
    let mut second = registration.clone();
    second.message.pubkey = BLSPubkey::repeat_byte(1);
    client(&s, BuilderTimeouts::default())
        .json_only()
        .register_validator(std::slice::from_ref(&second))
        .await
        .unwrap();
    assert_eq!(s.relay.registrations().len(), 2);
    client(&s, BuilderTimeouts::default())
        .status()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_registered_proposer_gets_a_bid_that_verifies_in_ssz_and_in_json() {
    let s = setup().await;
    let c = client(&s, BuilderTimeouts::default());
    // Before the registration the relay has no bid for the key.
    assert!(header(&s, &c).await.unwrap().is_none());
    c.register_validator(&[registration(&s)]).await.unwrap();
    s.relay.set_bid_value(Some(U256::from(5u64)));
    for c in [c.clone(), c.json_only()] {
        let bid = header(&s, &c).await.unwrap().expect("a bid");
        assert_eq!(bid.message.blob_kzg_commitments.len(), BLOBS);
        assert_eq!(bid.message.value, U256::from(5u64));
        assert_eq!(bid.message.header.fee_recipient, FEE_RECIPIENT);
        verify_builder_bid(bid, &expectations(&s), builder_domain(&s.spec)).unwrap();
    }
    assert_eq!(
        s.relay.header_requests(),
        vec![(Slot::from(1u64), s.parent_hash, pubkey_of(&s.proposer)); 3]
    );
}

#[tokio::test]
async fn no_bid_errors_and_slow_relays_come_back_typed() {
    let s = setup().await;
    let c = client(&s, BuilderTimeouts::default());
    c.register_validator(&[registration(&s)]).await.unwrap();

    s.relay.set_behaviour(RelayBehaviour::NoBid);
    assert!(header(&s, &c).await.unwrap().is_none());

    s.relay.set_behaviour(RelayBehaviour::Error(500));
    match header(&s, &c).await {
        Err(BuilderError::Status {
            status, message, ..
        }) => {
            assert_eq!(status.as_u16(), 500);
            assert_eq!(message, "the relay failed");
        }
        other => panic!("{other:?}"),
    }

    s.relay
        .set_behaviour(RelayBehaviour::Delay(Duration::from_secs(30)));
    let impatient = client(
        &s,
        BuilderTimeouts {
            get_header: Duration::from_millis(200),
            ..BuilderTimeouts::default()
        },
    );
    let err = header(&s, &impatient).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");

    // A header for a slot the relay has no payload for.
    s.relay.set_behaviour(RelayBehaviour::Honest);
    let none = c
        .get_header::<E>(
            ForkName::Fulu,
            Slot::from(2u64),
            s.parent_hash,
            pubkey_of(&s.proposer),
        )
        .await
        .unwrap();
    assert!(none.is_none());
    // Before Electra the client refuses.
    assert!(matches!(
        c.get_header::<E>(
            ForkName::Deneb,
            Slot::from(1u64),
            s.parent_hash,
            pubkey_of(&s.proposer)
        )
        .await,
        Err(BuilderError::UnsupportedFork(ForkName::Deneb))
    ));
}

#[tokio::test]
async fn bad_signatures_and_wrong_parents_fail_verification() {
    let s = setup().await;
    let c = client(&s, BuilderTimeouts::default());
    c.register_validator(&[registration(&s)]).await.unwrap();
    let domain = builder_domain(&s.spec);

    s.relay.set_behaviour(RelayBehaviour::BadSignature);
    let bid = header(&s, &c).await.unwrap().unwrap();
    assert_eq!(
        verify_builder_bid(bid, &expectations(&s), domain),
        Err(BidError::InvalidSignature(s.relay.pubkey()))
    );

    s.relay.set_behaviour(RelayBehaviour::WrongParent);
    let bid = header(&s, &c).await.unwrap().unwrap();
    assert!(matches!(
        verify_builder_bid(bid, &expectations(&s), domain),
        Err(BidError::Mismatch {
            field: "parent hash",
            ..
        })
    ));
}

#[tokio::test]
async fn v1_reveals_the_payload_and_v2_has_the_relay_publish() {
    let s = setup().await;
    let c = client(&s, BuilderTimeouts::default());
    c.register_validator(&[registration(&s)]).await.unwrap();
    let bid = header(&s, &c).await.unwrap().unwrap();
    let blinded = blinded_block_for(&bid);

    for c in [c.clone(), c.clone().json_only()] {
        let revealed = c
            .submit_blinded_block_v1(ForkName::Fulu, &blinded)
            .await
            .unwrap();
        revealed
            .check_blobs(
                &blinded.message.body.blob_kzg_commitments,
                <<E as types::EthSpec>::CellsPerExtBlob as types::typenum::Unsigned>::to_usize(),
            )
            .unwrap();
        let full = blinded.clone().unblind(revealed.execution_payload).unwrap();
        assert_eq!(
            tree_hash::TreeHash::tree_hash_root(&full.message),
            tree_hash::TreeHash::tree_hash_root(&blinded.message)
        );
    }

    c.submit_blinded_block_v2(ForkName::Fulu, &blinded)
        .await
        .unwrap();
    let published = s.relay.published_blocks();
    assert_eq!(published.len(), 1);
    assert_eq!(
        published[0].message.body.execution_payload.block_hash,
        bid.message.header.block_hash
    );
    let versions: Vec<u8> = s.relay.submitted_blocks().iter().map(|(v, _)| *v).collect();
    assert_eq!(versions, vec![1, 1, 2]);

    // A block committing to a payload the relay never offered is refused.
    let mut unknown = blinded.clone();
    unknown.message.body.execution_payload_header.block_hash = Hash32::repeat_byte(9);
    assert!(matches!(
        c.submit_blinded_block_v1(ForkName::Fulu, &unknown).await,
        Err(BuilderError::Status { status, .. }) if status.as_u16() == 400
    ));
}

#[tokio::test]
async fn a_reveal_with_fewer_blobs_than_committed_is_caught() {
    let s = setup().await;
    let c = client(&s, BuilderTimeouts::default());
    c.register_validator(&[registration(&s)]).await.unwrap();
    let bid = header(&s, &c).await.unwrap().unwrap();
    let blinded = blinded_block_for(&bid);
    s.relay.set_behaviour(RelayBehaviour::WithholdBlob);
    let revealed = c
        .submit_blinded_block_v1(ForkName::Fulu, &blinded)
        .await
        .unwrap();
    assert_eq!(
        revealed.check_blobs(&blinded.message.body.blob_kzg_commitments, 128),
        Err(UnblindError::BlobCountMismatch {
            commitments: BLOBS,
            blobs: BLOBS - 1
        })
    );
}

#[tokio::test]
async fn a_relay_without_ssz_bodies_gets_json() {
    let s = setup().await;
    s.relay.set_behaviour(RelayBehaviour::JsonOnly);
    let c = client(&s, BuilderTimeouts::default());
    c.register_validator(&[registration(&s)]).await.unwrap();
    assert_eq!(s.relay.registrations().len(), 1);
    let bid = header(&s, &c).await.unwrap().unwrap();
    let blinded = blinded_block_for(&bid);
    let revealed = c
        .submit_blinded_block_v1(ForkName::Fulu, &blinded)
        .await
        .unwrap();
    assert_eq!(
        revealed.execution_payload.block_hash,
        bid.message.header.block_hash
    );
    c.submit_blinded_block_v2(ForkName::Fulu, &blinded)
        .await
        .unwrap();
    // Each submission reached the relay once, in JSON (the SSZ attempts were refused first).
    assert_eq!(s.relay.submitted_blocks().len(), 2);
    assert_eq!(s.relay.published_blocks().len(), 1);
}
