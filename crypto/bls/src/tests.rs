//! Bad input and batch verification.

use super::*;

fn pool(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a small pool builds")
}

fn signed_set(i: usize) -> SignatureSet {
    let sk = SecretKey::random();
    let message = [i as u8; 32];
    SignatureSet::new(sk.sign(&message), vec![sk.public_key()], message)
}

/// `0x80` then zeros: the compression flag without the infinity flag, x = 0.
fn g1_x_zero() -> [u8; 48] {
    let mut bytes = [0u8; 48];
    bytes[0] = 0x80;
    bytes
}

/// The BLS12-381 base field modulus p, big-endian.
const P: [u8; 48] = [
    0x1a, 0x01, 0x11, 0xea, 0x39, 0x7f, 0xe6, 0x9a, 0x4b, 0x1b, 0xa7, 0xb6, 0x43, 0x4b, 0xac, 0xd7,
    0x64, 0x77, 0x4b, 0x84, 0xf3, 0x85, 0x12, 0xbf, 0x67, 0x30, 0xd2, 0xa0, 0xf6, 0xb0, 0xf6, 0x24,
    0x1e, 0xab, 0xff, 0xfe, 0xb1, 0x53, 0xff, 0xff, 0xb9, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xaa, 0xab,
];

#[test]
fn sign_and_verify_round_trip() {
    let sk = SecretKey::random();
    let pk = sk.public_key();
    let sig = sk.sign(b"message");
    assert!(verify(&pk, b"message", &sig));
    assert!(!verify(&pk, b"other", &sig));
    let decoded = Signature::deserialize(&sig.serialize()).expect("own signature decodes");
    assert_eq!(decoded, sig);
    assert_eq!(pk.compress().decompress(), Ok(pk));
    assert_eq!(
        SecretKey::from_bytes(&sk.to_bytes()).map(|k| k.public_key()),
        Ok(pk)
    );
}

#[test]
fn rejects_secret_keys_of_zero_wrong_length_or_at_least_r() {
    assert_eq!(
        SecretKey::from_bytes(&[0; 32]).err(),
        Some(Error::ZeroSecretKey)
    );
    assert_eq!(
        SecretKey::from_bytes(&[0xff; 32]).err(),
        Some(Error::SecretKeyOutOfRange)
    );
    assert!(matches!(
        SecretKey::from_bytes(&[1; 31]),
        Err(Error::WrongLength { got: 31, .. })
    ));
}

#[test]
fn rejects_public_keys_of_wrong_length() {
    for len in [0, 47, 49, 96] {
        assert!(matches!(
            PublicKeyBytes::try_from(vec![0xa0; len].as_slice()),
            Err(Error::WrongLength { expected: 48, got, .. }) if got == len
        ));
    }
}

#[test]
fn rejects_infinity_public_key() {
    assert_eq!(
        PublicKeyBytes::INFINITY.decompress(),
        Err(Error::InfinityPublicKey)
    );
    assert!(!key_validate(&PublicKeyBytes::INFINITY));
}

#[test]
fn rejects_public_key_without_compression_flag_or_with_bad_infinity() {
    let pk = SecretKey::random().public_key().compress();
    let mut uncompressed_flag = pk.0;
    uncompressed_flag[0] &= 0x7f;
    assert_eq!(
        PublicKeyBytes(uncompressed_flag).decompress(),
        Err(Error::BadEncoding(PointKind::PublicKey))
    );
    // Infinity flag with a non-zero body.
    let mut bad_infinity = PublicKeyBytes::INFINITY.0;
    bad_infinity[47] = 1;
    assert_eq!(
        PublicKeyBytes(bad_infinity).decompress(),
        Err(Error::BadEncoding(PointKind::PublicKey))
    );
}

#[test]
fn rejects_non_canonical_public_key_coordinate() {
    // x = p is not a canonical field element.
    let mut bytes = P;
    bytes[0] |= 0x80;
    assert_eq!(
        PublicKeyBytes(bytes).decompress(),
        Err(Error::BadEncoding(PointKind::PublicKey))
    );
}

#[test]
fn rejects_public_key_not_on_curve_or_not_in_subgroup() {
    // Among small x, some have no y on the curve and the rest give points outside the subgroup
    // (its points are a vanishing fraction of the curve's).
    let mut saw_not_on_curve = false;
    let mut saw_not_in_subgroup = false;
    for x in 0u8..=50 {
        let mut bytes = g1_x_zero();
        bytes[47] = x;
        match PublicKeyBytes(bytes).decompress() {
            Err(Error::NotOnCurve(PointKind::PublicKey)) => saw_not_on_curve = true,
            Err(Error::NotInSubgroup(PointKind::PublicKey)) => saw_not_in_subgroup = true,
            other => panic!("x = {x}: unexpected {other:?}"),
        }
    }
    assert!(saw_not_on_curve && saw_not_in_subgroup);
}

#[test]
fn rejects_signatures_of_wrong_length_bad_encoding_or_outside_subgroup() {
    for len in [0, 48, 95, 97] {
        assert!(matches!(
            Signature::deserialize(&vec![0xa0; len]),
            Err(Error::WrongLength { expected: 96, got, .. }) if got == len
        ));
    }
    let sig = SecretKey::random().sign(b"m").serialize();
    let mut no_flag = sig;
    no_flag[0] &= 0x7f;
    assert_eq!(
        Signature::deserialize(&no_flag),
        Err(Error::BadEncoding(PointKind::Signature))
    );
    let mut saw_not_on_curve = false;
    let mut saw_not_in_subgroup = false;
    for x in 0u8..=50 {
        let mut bytes = [0u8; 96];
        bytes[0] = 0x80;
        bytes[95] = x;
        match Signature::deserialize(&bytes) {
            Err(Error::NotOnCurve(PointKind::Signature)) => saw_not_on_curve = true,
            Err(Error::NotInSubgroup(PointKind::Signature)) => saw_not_in_subgroup = true,
            other => panic!("x = {x}: unexpected {other:?}"),
        }
    }
    assert!(saw_not_on_curve && saw_not_in_subgroup);
}

#[test]
fn infinity_signature_decodes_but_verifies_only_in_eth_fast_aggregate_verify() {
    let infinity = Signature::deserialize(&Signature::INFINITY_BYTES).expect("valid encoding");
    assert!(infinity.is_infinity());
    let pk = SecretKey::random().public_key();
    assert!(!verify(&pk, b"m", &infinity));
    assert!(!fast_aggregate_verify(&[], b"m", &infinity));
    assert!(!fast_aggregate_verify(&[pk], b"m", &infinity));
    assert!(eth_fast_aggregate_verify(&[], b"m", &infinity));
    assert!(!eth_fast_aggregate_verify(&[pk], b"m", &infinity));
    assert!(!aggregate_verify(&[], &[], &infinity));
}

#[test]
fn empty_inputs_are_typed_errors_or_false() {
    assert!(matches!(aggregate(&[]), Err(Error::EmptyInput(_))));
    assert!(matches!(
        eth_aggregate_pubkeys(&[]),
        Err(Error::EmptyInput(_))
    ));
    assert!(matches!(
        AggregatePublicKey::aggregate(&[]),
        Err(Error::EmptyInput(_))
    ));
    let sig = SecretKey::random().sign(b"m");
    assert!(!fast_aggregate_verify(&[], b"m", &sig));
    assert!(!eth_fast_aggregate_verify(&[], b"m", &sig));
    assert!(!verify_signature_sets(&[], &pool(1)));
    assert_eq!(verify_signature_sets_attributed(&[], &pool(1)), Err(vec![]));
}

#[test]
fn aggregates_verify() {
    let keys: Vec<SecretKey> = (0..8).map(|_| SecretKey::random()).collect();
    let pks: Vec<PublicKey> = keys.iter().map(SecretKey::public_key).collect();
    let same: Vec<Signature> = keys.iter().map(|k| k.sign(b"same")).collect();
    let agg = aggregate(&same).expect("non-empty").to_signature();
    assert!(fast_aggregate_verify(&pks, b"same", &agg));
    assert!(!fast_aggregate_verify(&pks[1..], b"same", &agg));

    let messages: Vec<Vec<u8>> = (0..8u8).map(|i| vec![i; 5]).collect();
    let distinct: Vec<Signature> = keys.iter().zip(&messages).map(|(k, m)| k.sign(m)).collect();
    let agg = aggregate(&distinct).expect("non-empty").to_signature();
    let refs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
    assert!(aggregate_verify(&pks, &refs, &agg));
    assert!(!aggregate_verify(&pks, &refs[1..], &agg));
}

#[test]
fn keys_that_cancel_sum_to_infinity_and_never_verify() {
    // sk and r - sk have opposite public keys.
    let one = {
        let mut b = [0u8; 32];
        b[31] = 1;
        SecretKey::from_bytes(&b).expect("1 is valid")
    };
    let r_minus_one = {
        let r = [
            0x73, 0xed, 0xa7, 0x53, 0x29, 0x9d, 0x7d, 0x48, 0x33, 0x39, 0xd8, 0x08, 0x09, 0xa1,
            0xd8, 0x05, 0x53, 0xbd, 0xa4, 0x02, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0xff, 0xff, 0xff,
            0x00, 0x00, 0x00, 0x01,
        ];
        SecretKey::from_bytes(&r).expect_err("r itself is out of range");
        let mut b = r;
        b[31] = 0x00;
        SecretKey::from_bytes(&b).expect("r - 1 is valid")
    };
    let pks = [one.public_key(), r_minus_one.public_key()];
    let sum = AggregatePublicKey::aggregate(&pks).expect("non-empty");
    assert!(sum.is_infinity());
    assert_eq!(sum.to_public_key(), Err(Error::InfinityPublicKey));
    assert_eq!(eth_aggregate_pubkeys(&pks), Ok(PublicKeyBytes::INFINITY));
    assert!(!fast_aggregate_verify(&pks, b"m", &Signature::infinity()));
}

#[test]
fn batch_of_good_sets_is_ok_on_one_and_two_threads() {
    let sets: Vec<SignatureSet> = (0..64).map(signed_set).collect();
    for threads in [1, 2] {
        let pool = pool(threads);
        assert!(verify_signature_sets(&sets, &pool));
        assert_eq!(verify_signature_sets_attributed(&sets, &pool), Ok(()));
    }
}

#[test]
fn batch_finds_one_bad_set_among_64_by_index() {
    let mut sets: Vec<SignatureSet> = (0..64).map(signed_set).collect();
    sets[37].message[0] ^= 1;
    let pool = pool(2);
    assert!(!verify_signature_sets(&sets, &pool));
    assert_eq!(
        verify_signature_sets_attributed(&sets, &pool),
        Err(vec![37])
    );
}

#[test]
fn batch_rejects_swapped_signatures_that_would_cancel_without_scalars() {
    // Swapping two sets' signatures keeps the plain sum valid; random scalars must catch it.
    let mut sets: Vec<SignatureSet> = (0..4).map(signed_set).collect();
    let s0 = sets[0].signature;
    sets[0].signature = sets[1].signature;
    sets[1].signature = s0;
    assert_eq!(
        verify_signature_sets_attributed(&sets, &pool(2)),
        Err(vec![0, 1])
    );
}

#[test]
fn batch_rejects_sets_without_keys_or_with_infinity_signature() {
    let mut sets: Vec<SignatureSet> = (0..3).map(signed_set).collect();
    sets[1].signing_keys.clear();
    sets[2].signature = Signature::infinity();
    assert_eq!(
        verify_signature_sets_attributed(&sets, &pool(2)),
        Err(vec![1, 2])
    );
}

/// `count` sets over one message, one signer each (a committee's single attestations), then
/// `distinct` sets over messages of their own, interleaved.
fn sets_sharing_a_message(count: usize, distinct: usize) -> Vec<SignatureSet> {
    let message = [0xab; 32];
    let mut sets: Vec<SignatureSet> = (0..count)
        .map(|_| {
            let sk = SecretKey::random();
            SignatureSet::new(sk.sign(&message), vec![sk.public_key()], message)
        })
        .collect();
    for i in 0..distinct {
        sets.insert(i * 3, signed_set(i));
    }
    sets
}

#[test]
fn batch_of_sets_sharing_messages_is_ok_and_finds_the_bad_one() {
    for threads in [1, 2] {
        let pool = pool(threads);
        let sets = sets_sharing_a_message(64, 5);
        assert!(verify_signature_sets(&sets, &pool));

        // A signature over another message, inside the shared group.
        let mut bad = sets.clone();
        let stranger = SecretKey::random();
        bad[20].signature = stranger.sign(&[0xcd; 32]);
        bad[20].signing_keys = vec![stranger.public_key()];
        assert_eq!(verify_signature_sets_attributed(&bad, &pool), Err(vec![20]));

        // A set of the group whose key is not its signer's.
        let mut bad = sets.clone();
        bad[40].signing_keys = vec![SecretKey::random().public_key()];
        assert_eq!(verify_signature_sets_attributed(&bad, &pool), Err(vec![40]));
    }
}

/// Within one message group, swapped signatures keep the group's plain sums equal: only the
/// per-set scalars catch it. So does an aggregate signature split unevenly between two sets.
#[test]
fn batch_rejects_swapped_or_redistributed_signatures_over_one_message() {
    let pool = pool(2);
    let mut sets = sets_sharing_a_message(8, 0);
    let s0 = sets[0].signature;
    sets[0].signature = sets[1].signature;
    sets[1].signature = s0;
    assert_eq!(
        verify_signature_sets_attributed(&sets, &pool),
        Err(vec![0, 1])
    );

    // Set 2 (key 2) carries the signatures of 2 and 3 together; set 3 (keys 2 and 3) carries
    // 2's alone. The group's keys sum to 2·pk2 + pk3 and its signatures to 2·sig2 + sig3, as
    // for valid sets; each set alone is invalid.
    let mut sets = sets_sharing_a_message(8, 0);
    let (sig2, sig3) = (sets[2].signature, sets[3].signature);
    sets[2].signature = aggregate(&[sig2, sig3])
        .expect("two signatures")
        .to_signature();
    sets[3].signature = sig2;
    sets[3].signing_keys = vec![sets[2].signing_keys[0], sets[3].signing_keys[0]];
    assert_eq!(
        verify_signature_sets_attributed(&sets, &pool),
        Err(vec![2, 3])
    );
}

/// A worker of one pool verifies a batch on another pool, or on its own (`CurrentPool`), or
/// sequentially: the same verdicts. A caller on another pool's worker may run that pool's
/// queued jobs while it waits (rayon's `install` does), which is why no lock may be held across
/// a batch: a debug build panics when the fork-choice lock is (`lock_guard`, tested in
/// `parallelism.rs`).
#[test]
fn a_batch_verifies_on_any_pool_and_sequentially() {
    let caller = pool(1);
    let verifier = pool(2);
    let mut sets: Vec<SignatureSet> = (0..6).map(signed_set).collect();
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let verdicts = caller.install(|| {
        // A queued job of the caller's pool: it may run while the caller waits.
        let queued = ran.clone();
        rayon::spawn(move || queued.store(true, std::sync::atomic::Ordering::SeqCst));
        [
            verify_signature_sets(&sets, &verifier),
            verify_signature_sets(&sets, Parallelism::CurrentPool),
            verify_signature_sets(&sets, Parallelism::Sequential),
        ]
    });
    assert_eq!(verdicts, [true; 3]);
    sets[4].signature = sets[1].signature;
    for parallelism in [
        Parallelism::Pool(&verifier),
        Parallelism::CurrentPool,
        Parallelism::Sequential,
    ] {
        assert_eq!(
            caller.install(|| verify_signature_sets_attributed(&sets, parallelism)),
            Err(vec![4])
        );
    }
}

/// The bulk addition that sums long key lists gives the point the one-by-one additions give:
/// around its threshold and blst's internal rounds of 16, with repeated keys (doubling) and with a
/// key and its negation in one list (cancelling).
#[test]
fn bulk_aggregation_equals_one_by_one() {
    let keys: Vec<PublicKey> = (0..300).map(|_| SecretKey::random().public_key()).collect();
    for len in [1, 2, 15, 16, 17, 31, 32, 33, 64, 65, 255, 300] {
        let bulk = AggregatePublicKey::aggregate(&keys[..len]).expect("non-empty");
        let reference = AggregatePublicKey::aggregate_one_by_one(&keys[..len]);
        assert_eq!(bulk.compress(), reference.compress(), "{len} keys");
    }

    let repeated = vec![keys[0]; 100];
    assert_eq!(
        AggregatePublicKey::aggregate(&repeated)
            .expect("non-empty")
            .compress(),
        AggregatePublicKey::aggregate_one_by_one(&repeated).compress()
    );

    // 1·G and (r - 1)·G = -G, placed apart and side by side among 60 other keys.
    let one = {
        let mut b = [0u8; 32];
        b[31] = 1;
        SecretKey::from_bytes(&b).expect("1 is valid").public_key()
    };
    let minus_one = {
        let b = [
            0x73, 0xed, 0xa7, 0x53, 0x29, 0x9d, 0x7d, 0x48, 0x33, 0x39, 0xd8, 0x08, 0x09, 0xa1,
            0xd8, 0x05, 0x53, 0xbd, 0xa4, 0x02, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0xff, 0xff, 0xff,
            0x00, 0x00, 0x00, 0x00,
        ];
        SecretKey::from_bytes(&b)
            .expect("r - 1 is valid")
            .public_key()
    };
    let others = AggregatePublicKey::aggregate_one_by_one(&keys[..60]).compress();
    for (a, b) in [(0, 61), (30, 31), (0, 1)] {
        let mut list = keys[..60].to_vec();
        list.insert(a, one);
        list.insert(b, minus_one);
        let sum = AggregatePublicKey::aggregate(&list).expect("non-empty");
        assert_eq!(sum.compress(), others, "±G at {a} and {b}");
    }
    let cancelled = [vec![one; 20], vec![minus_one; 20]].concat();
    assert!(
        AggregatePublicKey::aggregate(&cancelled)
            .expect("non-empty")
            .is_infinity()
    );
}
