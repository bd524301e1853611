//! Every top-level decoder rejects bad bytes without panicking.
//!
//! Each decoder is fed, starting from a valid encoding of a generated value:
//! - truncations: every prefix for encodings up to `ALL_PREFIXES_UP_TO` bytes, else a sample;
//! - oversized input: trailing bytes (zeros, `0xff`s, random) and one 16 MiB input;
//! - corrupted offsets: 4-byte words (every position of the first KiB of small encodings, the
//!   offset-looking ones of large encodings) set to `u32::MAX`, the input's length and one off
//!   it, which turns an offset into an out-of-range or overlapping one;
//! - bit flips of the valid encoding, and random byte strings of assorted lengths.
//!
//! The decoders are each fork's top-level containers (both presets), the fork-generic enums'
//! `from_ssz_bytes_by_fork` (also fed other forks' encodings) and their `from_ssz_bytes(_, spec)`,
//! which take the fork from the slot in the bytes.
//!
//! A decoder must return an error or a value that re-encodes to exactly the input (SSZ has one
//! encoding per value, so anything else is malleability) and whose tree hash root can be
//! computed; it must never panic. Failures name the decoder and the input.

#![cfg(feature = "arbitrary")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed step fails the test"
)]

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use arbitrary::Unstructured;
use common::*;
use splitmix::splitmix64;
use ssz::{Decode, Encode};
use tree_hash::TreeHash;

/// Encodings up to this size are truncated at every length.
const ALL_PREFIXES_UP_TO: usize = 4096;
/// Truncation lengths sampled from a larger encoding.
const SAMPLED_PREFIXES: usize = 300;

/// Decodes untrusted bytes; `Ok(Some(re-encoding))` when accepted, `Ok(None)` when rejected.
type Decoder<'a> = &'a dyn Fn(&[u8]) -> Option<Vec<u8>>;

/// The decoder of `T`: `from_ssz_bytes`, then (when accepted) the tree hash root and re-encoding.
fn decoder_of<T: Decode + Encode + TreeHash>(bytes: &[u8]) -> Option<Vec<u8>> {
    let value = T::from_ssz_bytes(bytes).ok()?;
    value.tree_hash_root();
    Some(value.as_ssz_bytes())
}

fn describe(input: &[u8]) -> String {
    if input.len() <= 96 {
        format!("0x{}", hex::encode(input))
    } else {
        format!(
            "{} bytes starting 0x{}…",
            input.len(),
            hex::encode(&input[..64])
        )
    }
}

/// Runs `decode` on `input`; describes the failure if it panicked or accepted a non-canonical
/// encoding.
fn attempt(decode: Decoder<'_>, what: &str, input: &[u8]) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(|| decode(input))) {
        Ok(None) => Ok(()),
        Ok(Some(reencoded)) if reencoded == input => Ok(()),
        Ok(Some(reencoded)) => Err(format!(
            "{what}: accepted {} but re-encodes to {} bytes{}",
            describe(input),
            reencoded.len(),
            first_difference(input, &reencoded)
        )),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "<non-string panic>".into());
            Err(format!(
                "{what}: panicked on {}: {message}",
                describe(input)
            ))
        }
    }
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!(", first differing byte at {i}"),
        None => String::new(),
    }
}

/// Feeds `decode` every kind of bad input derived from `valid`, which it must accept.
/// Returns the failures (empty when all is well).
fn check_decoder(
    name: &str,
    decode: Decoder<'_>,
    fixed_size: bool,
    valid: &[u8],
    seed: u64,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut check = |what: String, input: &[u8]| {
        // One failure per kind is enough to act on, and keeps the report readable.
        if failures.len() < 20
            && let Err(e) = attempt(decode, &format!("{name} {what}"), input)
        {
            failures.push(e);
        }
    };
    let len = valid.len();

    match catch_unwind(AssertUnwindSafe(|| decode(valid))) {
        Ok(Some(reencoded)) if reencoded == valid => {}
        other => {
            return vec![format!(
                "{name}: the valid encoding ({len} bytes) is not accepted unchanged: {}",
                match other {
                    Ok(Some(_)) => "re-encoding differs",
                    Ok(None) => "rejected",
                    Err(_) => "panicked",
                }
            )];
        }
    }

    // Truncations.
    let prefixes: Vec<usize> = if len <= ALL_PREFIXES_UP_TO {
        (0..len).collect()
    } else {
        let mut p: Vec<usize> = (0..64).collect();
        p.extend((0..SAMPLED_PREFIXES).map(|k| k * len / SAMPLED_PREFIXES));
        p.extend(
            (0..SAMPLED_PREFIXES as u64).map(|k| (splitmix64(seed ^ k) % len as u64) as usize),
        );
        p.extend(len.saturating_sub(64)..len);
        p
    };
    for n in prefixes {
        check(format!("truncated to {n} of {len} bytes"), &valid[..n]);
    }

    // Multi-megabyte encodings (mainnet states) decode slowly in the dev profile: fewer inputs
    // that get past the offsets and decode every field.
    let huge_encoding = len > 1 << 20;

    // Oversized: trailing bytes, then a huge input.
    let extras: &[usize] = if huge_encoding {
        &[1, 16, 4096]
    } else {
        &[1, 3, 4, 8, 31, 32, 33, 100, 4096]
    };
    for &extra in extras {
        for (kind, fill) in [("zero", Some(0u8)), ("0xff", Some(0xff)), ("random", None)] {
            let mut input = valid.to_vec();
            match fill {
                Some(b) => input.resize(len + extra, b),
                None => input.extend(random_bytes(extra, seed ^ extra as u64)),
            }
            check(format!("with {extra} trailing {kind} bytes"), &input);
        }
    }
    let mut huge = valid.to_vec();
    huge.resize(16 << 20, 0xff);
    check("padded with 0xff to 16 MiB".into(), &huge);

    // Corrupted offsets: words set to huge, just-past-the-end and overlapping values. Small
    // encodings get every position of their first KiB; large ones the words that look like
    // offsets (a value in 4..=len), since a fixed field's corruption is what bit flips cover.
    if !fixed_size {
        let positions: Vec<usize> = if len <= ALL_PREFIXES_UP_TO {
            (0..len.min(1024).saturating_sub(3)).collect()
        } else {
            (0..len - 3)
                .filter(|&at| {
                    let word = u32::from_le_bytes(valid[at..at + 4].try_into().unwrap());
                    (4..=len as u64).contains(&u64::from(word))
                })
                .take(if huge_encoding { 16 } else { 64 })
                .collect()
        };
        for at in positions {
            for word in [
                u32::MAX,
                len as u32,
                len as u32 + 1,
                (len as u32).wrapping_sub(1),
            ] {
                let mut input = valid.to_vec();
                input[at..at + 4].copy_from_slice(&word.to_le_bytes());
                check(format!("with word {word:#x} at byte {at}"), &input);
            }
        }
    }

    // Bit flips.
    let flips = if huge_encoding {
        4
    } else if len > 1 << 16 {
        16
    } else {
        256
    };
    for k in 0..flips {
        if len == 0 {
            break;
        }
        let r = splitmix64(seed ^ 0xf11b ^ k);
        let (at, bit) = ((r % len as u64) as usize, (r >> 32) % 8);
        let mut input = valid.to_vec();
        input[at] ^= 1 << bit;
        check(format!("with bit {bit} of byte {at} flipped"), &input);
    }

    // Random bytes of assorted lengths, some near the valid length.
    let mut lengths = vec![
        0usize, 1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 64, 100, 128, 255, 256, 1024,
    ];
    lengths.extend([len.saturating_sub(1), len, len + 1, len * 2]);
    for (k, n) in lengths.into_iter().enumerate() {
        for s in 0..if huge_encoding && n > 1024 { 1 } else { 4u64 } {
            let input = random_bytes(n.min(4 << 20), seed ^ ((k as u64) << 8) ^ s);
            check(format!("random {n} bytes (seed {s})"), &input);
        }
    }

    failures
}

/// A valid encoding of `T` generated from fixed pseudo-random bytes.
fn valid_encoding<T: Encode>(
    generate: impl Fn(&mut Unstructured<'_>) -> arbitrary::Result<T>,
    seed: u64,
    size: usize,
) -> Vec<u8> {
    let bytes = random_bytes(size, seed);
    let value = generate(&mut Unstructured::new(&bytes)).expect("generating a value");
    value.as_ssz_bytes()
}

/// Checks the decoder of `T` from valid encodings generated with two seeds.
fn check_type<T: Decode + Encode + TreeHash>(
    name: &str,
    generate: impl Fn(&mut Unstructured<'_>) -> arbitrary::Result<T>,
    size: usize,
) {
    let mut failures = Vec::new();
    for seed in [1u64, 2] {
        let valid = valid_encoding(&generate, seed, size);
        let fixed_size = <T as Decode>::is_ssz_fixed_len();
        failures.extend(check_decoder(
            name,
            &decoder_of::<T>,
            fixed_size,
            &valid,
            seed,
        ));
        if valid.len() > 1 << 20 {
            // One multi-megabyte encoding is enough (and slow to check in the dev profile).
            break;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `or!(; default)` is `default`, `or!(value; default)` is `value`.
macro_rules! or {
    (; $default:expr) => {
        $default
    };
    ($value:expr; $default:expr) => {
        $value
    };
}

/// One test per decoder and preset: `Name` or `Name { generate: f }`.
macro_rules! bad_input_tests {
    ($fork:ident: [$($name:ident $({ generate: $generate:expr })?),* $(,)?]) => {
        mod $fork {
            $(
                #[test]
                #[allow(non_snake_case)]
                fn $name() {
                    type E = types::MainnetEthSpec;
                    crate::check_type::<types::$fork::$name<E>>(
                        concat!(stringify!($fork), "::", stringify!($name), "<Mainnet>"),
                        or!($($generate)?; |u| u.arbitrary()),
                        8192,
                    );
                    type M = types::MinimalEthSpec;
                    crate::check_type::<types::$fork::$name<M>>(
                        concat!(stringify!($fork), "::", stringify!($name), "<Minimal>"),
                        or!($($generate)?; |u| u.arbitrary()),
                        8192,
                    );
                }
            )*
        }
    };
}

/// `SingleAttestation` is the one non-generic top-level decoder.
#[test]
fn electra_single_attestation() {
    check_type::<types::electra::SingleAttestation>(
        "electra::SingleAttestation",
        |u| u.arbitrary(),
        1024,
    );
}

bad_input_tests!(phase0: [
    SignedBeaconBlock,
    BeaconBlock,
    BeaconState { generate: crate::phase0_state },
    Attestation,
    AttesterSlashing,
]);

bad_input_tests!(altair: [
    SignedBeaconBlock,
    BeaconBlock,
    BeaconState { generate: crate::altair_state },
    LightClientUpdate,
    LightClientBootstrap,
    LightClientFinalityUpdate,
    LightClientOptimisticUpdate,
]);

bad_input_tests!(bellatrix: [
    SignedBeaconBlock,
    BeaconBlock,
    BeaconState { generate: crate::bellatrix_state },
]);

bad_input_tests!(capella: [
    SignedBeaconBlock,
    BeaconBlock,
    BeaconState { generate: crate::capella_state },
    LightClientUpdate,
    LightClientBootstrap,
    LightClientFinalityUpdate,
    LightClientOptimisticUpdate,
]);

bad_input_tests!(deneb: [
    SignedBeaconBlock,
    BeaconBlock,
    BeaconState { generate: crate::deneb_state },
    LightClientUpdate,
    LightClientBootstrap,
    LightClientFinalityUpdate,
    LightClientOptimisticUpdate,
    BlobSidecar,
]);

bad_input_tests!(electra: [
    SignedBeaconBlock,
    BeaconBlock,
    BeaconState { generate: crate::electra_state },
    Attestation,
    AttesterSlashing,
    LightClientUpdate,
    LightClientBootstrap,
    LightClientFinalityUpdate,
]);

bad_input_tests!(fulu: [
    SignedBeaconBlock,
    BeaconState { generate: crate::fulu_state },
    DataColumnSidecar,
    PartialDataColumnSidecar,
]);

bad_input_tests!(gloas: [
    SignedBeaconBlock,
    BeaconBlock,
    BeaconState { generate: crate::gloas_state },
    Attestation,
    SignedAggregateAndProof,
    SignedExecutionPayloadEnvelope,
    PayloadAttestation,
    DataColumnSidecar,
    PartialDataColumnSidecar,
    LightClientUpdate,
    LightClientBootstrap,
    LightClientFinalityUpdate,
    LightClientOptimisticUpdate,
]);

/// Gloas's top-level decoders that do not depend on the preset: the gossip bid, payload
/// attestation message, proposer preferences and attester slashing.
#[test]
fn gloas_preset_free_decoders() {
    check_type::<types::gloas::SignedExecutionPayloadBid>(
        "gloas::SignedExecutionPayloadBid",
        |u| u.arbitrary(),
        4096,
    );
    check_type::<types::gloas::PayloadAttestationMessage>(
        "gloas::PayloadAttestationMessage",
        |u| u.arbitrary(),
        1024,
    );
    check_type::<types::gloas::SignedProposerPreferences>(
        "gloas::SignedProposerPreferences",
        |u| u.arbitrary(),
        1024,
    );
    check_type::<types::gloas::AttesterSlashing>(
        "gloas::AttesterSlashing",
        |u| u.arbitrary(),
        8192,
    );
}

// ---------------------------------------------------------------------------------------------
// The fork-generic enums: `from_ssz_bytes_by_fork` at each fork, and at the wrong forks.
// ---------------------------------------------------------------------------------------------

/// The decoder of a fork-generic enum at `fork`.
macro_rules! by_fork {
    ($name:ident, $e:ty, $fork:expr) => {
        move |bytes: &[u8]| {
            let value = types::$name::<$e>::from_ssz_bytes_by_fork(bytes, $fork).ok()?;
            assert_eq!(
                value.fork_name(),
                $fork,
                "decoded as another fork's variant"
            );
            value.tree_hash_root();
            Some(value.as_ssz_bytes())
        }
    };
}

/// One test per enum: for each of its forks, a valid encoding of that fork's container goes
/// through every bad-input check at its own fork (minimal preset; the per-fork tests above cover
/// the same decoders at mainnet) and must be rejected or re-encode unchanged at every other
/// fork (both presets).
macro_rules! combined_tests {
    ($($name:ident: [$($variant:ident => $module:ident $(= $generate:ident)?),+ $(,)?]),* $(,)?) => {
        mod combined {
            use super::*;

            $(
                #[test]
                #[allow(non_snake_case)]
                fn $name() {
                    fn run<E: types::EthSpec>(preset: &str, full: bool) -> Vec<String> {
                        let mut failures = Vec::new();
                        $(
                            let fork = types::ForkName::$variant;
                            let valid = valid_encoding(
                                or!($(crate::$generate::<E>)?;
                                    |u| u.arbitrary::<types::$module::$name<E>>()),
                                3,
                                8192,
                            );
                            let what = format!(
                                "{}::<{preset}>::from_ssz_bytes_by_fork(_, {fork})",
                                stringify!($name)
                            );
                            if full {
                                let fixed = <types::$module::$name<E> as Decode>::is_ssz_fixed_len();
                                failures.extend(check_decoder(
                                    &what, &by_fork!($name, E, fork), fixed, &valid, 3,
                                ));
                            } else if let Err(e) = attempt(&by_fork!($name, E, fork), &what, &valid) {
                                failures.push(e);
                            }
                            for other in types::ForkName::ALL {
                                if other != fork
                                    && let Err(e) = attempt(
                                        &by_fork!($name, E, other),
                                        &format!("{what} decoded at {other}"),
                                        &valid,
                                    )
                                {
                                    failures.push(e);
                                }
                            }
                        )+
                        failures
                    }
                    let mut failures = run::<types::MinimalEthSpec>("Minimal", true);
                    failures.extend(run::<types::MainnetEthSpec>("Mainnet", false));
                    assert!(
                        failures.is_empty(),
                        "{} failure(s):\n{}",
                        failures.len(),
                        failures.join("\n")
                    );
                }
            )*
        }
    };
}

combined_tests!(
    BeaconState: [
        Phase0 => phase0 = phase0_state,
        Altair => altair = altair_state,
        Bellatrix => bellatrix = bellatrix_state,
        Capella => capella = capella_state,
        Deneb => deneb = deneb_state,
        Electra => electra = electra_state,
        Fulu => fulu = fulu_state,
    ],
    SignedBeaconBlock: [
        Phase0 => phase0, Altair => altair, Bellatrix => bellatrix, Capella => capella,
        Deneb => deneb, Electra => electra, Fulu => fulu,
    ],
    BeaconBlock: [
        Phase0 => phase0, Altair => altair, Bellatrix => bellatrix, Capella => capella,
        Deneb => deneb, Electra => electra, Fulu => fulu,
    ],
    Attestation: [
        Phase0 => phase0, Altair => altair, Bellatrix => bellatrix, Capella => capella,
        Deneb => deneb, Electra => electra, Fulu => fulu,
    ],
    AttesterSlashing: [
        Phase0 => phase0, Altair => altair, Bellatrix => bellatrix, Capella => capella,
        Deneb => deneb, Electra => electra, Fulu => fulu,
    ],
    BlobSidecar: [Deneb => deneb, Electra => electra],
    DataColumnSidecar: [Fulu => fulu],
    LightClientBootstrap: [
        Altair => altair, Bellatrix => bellatrix, Capella => capella, Deneb => deneb,
        Electra => electra, Fulu => fulu,
    ],
    LightClientUpdate: [
        Altair => altair, Bellatrix => bellatrix, Capella => capella, Deneb => deneb,
        Electra => electra, Fulu => fulu,
    ],
    LightClientFinalityUpdate: [
        Altair => altair, Bellatrix => bellatrix, Capella => capella, Deneb => deneb,
        Electra => electra, Fulu => fulu,
    ],
    LightClientOptimisticUpdate: [
        Altair => altair, Bellatrix => bellatrix, Capella => capella, Deneb => deneb,
        Electra => electra, Fulu => fulu,
    ],
);

/// Decoders that read the fork from the slot in the bytes and the chain's fork schedule
/// (`from_ssz_bytes(bytes, spec)`): a valid encoding of each fork's container, its slot set to
/// one in that fork's epochs, goes through every bad-input check (minimal preset).
#[test]
fn combined_decoders_by_slot() {
    type E = types::MinimalEthSpec;
    use types::EthSpec;
    let spec = types::ChainSpec::mainnet();
    let mut failures = Vec::new();

    /// Overwrites the little-endian slot at byte `at`.
    fn set_slot(bytes: &mut [u8], at: usize, slot: u64) {
        bytes[at..at + 8].copy_from_slice(&slot.to_le_bytes());
    }
    /// The slot of a `SignedBeaconBlock` follows `message`'s offset, its first 4 bytes.
    fn block_slot_at(bytes: &[u8]) -> usize {
        u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize
    }

    macro_rules! by_slot {
        ($($fork:ident => $generate:ident),+ $(,)?) => {$(
            let fork: types::ForkName = stringify!($fork).parse().unwrap();
            if let Some(epoch) = spec.fork_epoch(fork) {
                let slot = epoch * E::slots_per_epoch() + 3;

                let mut state = valid_encoding(crate::$generate::<E>, 4, 8192);
                set_slot(&mut state, 40, slot);
                let decode = |b: &[u8]| {
                    let v = types::BeaconState::<E>::from_ssz_bytes(b, &spec).ok()?;
                    v.tree_hash_root();
                    Some(v.as_ssz_bytes())
                };
                let what = format!("BeaconState::from_ssz_bytes(_, mainnet spec) at {fork}");
                failures.extend(check_decoder(&what, &decode, false, &state, 4));

                let mut block = valid_encoding(
                    |u| u.arbitrary::<types::$fork::SignedBeaconBlock<E>>(), 4, 8192);
                let at = block_slot_at(&block);
                set_slot(&mut block, at, slot);
                let decode = |b: &[u8]| {
                    let v = types::SignedBeaconBlock::<E>::from_ssz_bytes(b, &spec).ok()?;
                    v.tree_hash_root();
                    Some(v.as_ssz_bytes())
                };
                let what = format!("SignedBeaconBlock::from_ssz_bytes(_, mainnet spec) at {fork}");
                failures.extend(check_decoder(&what, &decode, false, &block, 4));

                let mut block = valid_encoding(
                    |u| u.arbitrary::<types::$fork::BeaconBlock<E>>(), 4, 8192);
                set_slot(&mut block, 0, slot);
                let decode = |b: &[u8]| {
                    let v = types::BeaconBlock::<E>::from_ssz_bytes(b, &spec).ok()?;
                    v.tree_hash_root();
                    Some(v.as_ssz_bytes())
                };
                let what = format!("BeaconBlock::from_ssz_bytes(_, mainnet spec) at {fork}");
                failures.extend(check_decoder(&what, &decode, false, &block, 4));
            }
        )+};
    }
    by_slot!(
        phase0 => phase0_state,
        altair => altair_state,
        bellatrix => bellatrix_state,
        capella => capella_state,
        deneb => deneb_state,
        electra => electra_state,
        fulu => fulu_state,
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
