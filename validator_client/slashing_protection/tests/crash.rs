//! Crash safety without killing anything: the database file is copied while the database is
//! still open, right after a check returned (what a power cut at that moment leaves on disk),
//! and the copy is opened as a restarted validator client would; and signers that race on one
//! database (the same keys run twice) never both get a slashable pair through.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

use std::sync::{Arc, Barrier};

use slashing_protection::{NotSafe, Safe, SlashingDatabase};
use types::{BLSPubkey, Root};

const GVR: Root = Root::repeat_byte(0x42);

fn pubkey(i: u8) -> BLSPubkey {
    BLSPubkey::repeat_byte(i)
}

fn root(i: u64) -> Root {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&i.to_be_bytes());
    bytes[31] = 1; // never the zero ("unknown") root
    Root::from(bytes)
}

#[test]
fn every_check_that_returned_survives_a_crash_right_after() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sp.redb");
    let db = SlashingDatabase::open_or_create(&path, GVR).unwrap();
    let v = pubkey(1);
    db.register_validator(&v).unwrap();

    for step in 1..=20u64 {
        // A VC's work for one epoch: an attestation and, every few epochs, a block.
        let slot = step * 8;
        assert_eq!(
            db.check_and_insert_attestation(&v, step - 1, step, root(step))
                .unwrap(),
            Safe::Valid
        );
        if step % 3 == 0 {
            assert_eq!(
                db.check_and_insert_block_proposal(&v, slot, root(slot))
                    .unwrap(),
                Safe::Valid
            );
        }

        // The crash: the file as it is now, with the database still open (never closed).
        let image = dir.path().join(format!("crash-{step}.redb"));
        std::fs::copy(&path, &image).unwrap();
        let restarted = SlashingDatabase::open_or_create(&image, GVR).unwrap();

        // Everything signed so far is there: nothing conflicting can be signed.
        for earlier in 1..=step {
            assert!(matches!(
                restarted.check_and_insert_attestation(&v, earlier - 1, earlier, root(999)),
                Err(NotSafe::DoubleVote { .. })
            ));
            assert_eq!(
                restarted
                    .check_and_insert_attestation(&v, earlier - 1, earlier, root(earlier))
                    .unwrap(),
                Safe::SameData
            );
        }
        if step >= 2 {
            // 0→step+1 surrounds 1→2.
            assert!(matches!(
                restarted.check_and_insert_attestation(&v, 0, step + 1, root(998)),
                Err(NotSafe::SurroundingVote { .. })
            ));
        }
        if step % 3 == 0 {
            assert!(matches!(
                restarted.check_and_insert_block_proposal(&v, slot, root(997)),
                Err(NotSafe::DoubleBlockProposal { .. })
            ));
        }
        drop(restarted);
        std::fs::remove_file(&image).unwrap();
    }
}

#[test]
fn dropping_the_database_between_checks_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sp.redb");
    let v = pubkey(2);
    for step in 1..=10u64 {
        let db = SlashingDatabase::open_or_create(&path, GVR).unwrap();
        db.register_validator(&v).unwrap();
        if step > 1 {
            // The previous run's last vote is there after the restart.
            assert!(matches!(
                db.check_and_insert_attestation(&v, step - 2, step - 1, root(500)),
                Err(NotSafe::DoubleVote { .. })
            ));
        }
        db.check_and_insert_attestation(&v, step - 1, step, root(step))
            .unwrap();
        // Dropped mid-way through the run, with no shutdown step.
        drop(db);
    }
    let db = SlashingDatabase::open_or_create(&path, GVR).unwrap();
    let exported = db.export_interchange(None).unwrap();
    assert_eq!(exported.data.len(), 1);
    assert_eq!(exported.data[0].signed_attestations.len(), 10);
}

#[test]
fn the_same_keys_run_twice_never_sign_a_slashable_pair() {
    // Two validator clients with the same keys share one database and race on every slot
    // and epoch with different messages: exactly one of each pair gets through.
    const ROUNDS: u64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(SlashingDatabase::open_or_create(dir.path().join("sp.redb"), GVR).unwrap());
    let v = pubkey(3);
    db.register_validator(&v).unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let clients: Vec<_> = (0..2u64)
        .map(|client| {
            let db = db.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut signed = Vec::new();
                for round in 1..=ROUNDS {
                    barrier.wait();
                    let block = db
                        .check_and_insert_block_proposal(&v, round, root(round * 2 + client))
                        .is_ok();
                    let attestation = db
                        .check_and_insert_attestation(
                            &v,
                            round - 1,
                            round,
                            root(round * 2 + client),
                        )
                        .is_ok();
                    signed.push((block, attestation));
                }
                signed
            })
        })
        .collect();
    let results: Vec<Vec<(bool, bool)>> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert_eq!(results[1].len(), ROUNDS as usize);
    for (round, (a, b)) in results[0].iter().zip(&results[1]).enumerate() {
        assert!(a.0 ^ b.0, "round {round}: blocks signed {a:?} {b:?}");
        assert!(a.1 ^ b.1, "round {round}: attestations signed {a:?} {b:?}");
    }
}
