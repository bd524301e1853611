//! BLS costs at mainnet scale: 64 signature sets batched against one by one, the batch on 1 and 2
//! threads and with one message shared by all 64, `fast_aggregate_verify` with 512 keys (a sync committee), one `verify`, and the sum of
//! a slot's 31,250 attester keys (1,000,000 validators) by bulk addition against one by one.

use std::hint::black_box;

use bls::{
    AggregatePublicKey, PublicKey, SecretKey, SignatureSet, fast_aggregate_verify, verify,
    verify_signature_sets,
};
use criterion::{Criterion, criterion_group, criterion_main};
use rayon::ThreadPoolBuilder;

/// 64 sets of one key each, distinct messages (an aggregate attestation's shape, one signer).
fn signature_sets(count: usize) -> Vec<SignatureSet> {
    (0..count)
        .map(|i| {
            let sk = SecretKey::random();
            let message = [i as u8; 32];
            SignatureSet::new(sk.sign(&message), vec![sk.public_key()], message)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let sets = signature_sets(64);
    let pool_1 = ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let pool_2 = ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");

    let mut group = c.benchmark_group("signature_sets_64");
    group.sample_size(10);
    group.bench_function("batched_1_thread", |b| {
        b.iter(|| assert!(verify_signature_sets(black_box(&sets), &pool_1)))
    });
    group.bench_function("batched_2_threads", |b| {
        b.iter(|| assert!(verify_signature_sets(black_box(&sets), &pool_2)))
    });
    // A committee's single attestations: 64 signers of one message, which the batch verifies
    // with one hash to the curve and one Miller loop (the rows above have 64 messages).
    let message = [0x42; 32];
    let one_message: Vec<SignatureSet> = (0..64)
        .map(|_| {
            let sk = SecretKey::random();
            SignatureSet::new(sk.sign(&message), vec![sk.public_key()], message)
        })
        .collect();
    group.bench_function("batched_2_threads_one_message", |b| {
        b.iter(|| assert!(verify_signature_sets(black_box(&one_message), &pool_2)))
    });
    group.bench_function("one_by_one_1_thread", |b| {
        b.iter(|| assert!(black_box(&sets).iter().all(SignatureSet::verify)))
    });
    group.finish();

    let keys: Vec<SecretKey> = (0..512).map(|_| SecretKey::random()).collect();
    let public_keys: Vec<_> = keys.iter().map(SecretKey::public_key).collect();
    let message = [0x42; 32];
    let signatures: Vec<_> = keys.iter().map(|k| k.sign(&message)).collect();
    let signature = bls::aggregate(&signatures)
        .expect("512 signatures")
        .to_signature();

    let mut group = c.benchmark_group("single");
    group.sample_size(10);
    group.bench_function("fast_aggregate_verify_512_keys", |b| {
        b.iter(|| {
            assert!(fast_aggregate_verify(
                black_box(&public_keys),
                &message,
                &signature
            ))
        })
    });
    group.bench_function("verify", |b| {
        b.iter(|| assert!(verify(black_box(&public_keys[0]), &message, &signatures[0])))
    });
    group.finish();
}

/// A slot's attesters at 1,000,000 validators (32 slots, 64 committees of ~488).
const SLOT_ATTESTERS: usize = 31_250;

fn aggregation(c: &mut Criterion) {
    // Distinct keys without 31,250 scalar multiplications: k·G, (k+1)·G, ... by adding G.
    let g = SecretKey::from_bytes(&{
        let mut b = [0u8; 32];
        b[31] = 1;
        b
    })
    .expect("1 is a valid secret key")
    .public_key();
    let start = SecretKey::random().public_key();
    let mut keys: Vec<PublicKey> = Vec::with_capacity(SLOT_ATTESTERS);
    let mut sum = AggregatePublicKey::aggregate(&[start]).expect("one key");
    for _ in 0..SLOT_ATTESTERS {
        let key = sum.to_public_key().expect("not infinity");
        keys.push(key);
        sum.add(&g);
    }

    let mut group = c.benchmark_group("aggregate_31250_keys");
    group.sample_size(20);
    group.bench_function("one_by_one_baseline", |b| {
        b.iter(|| {
            let mut sum = AggregatePublicKey::aggregate(&keys[..1]).expect("one key");
            for key in &black_box(&keys)[1..] {
                sum.add(key);
            }
            sum
        })
    });
    group.bench_function("bulk", |b| {
        b.iter(|| AggregatePublicKey::aggregate(black_box(&keys)).expect("keys"))
    });
    group.finish();
}

criterion_group!(benches, bench, aggregation);
criterion_main!(benches);
