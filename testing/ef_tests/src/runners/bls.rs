//! `bls`: the BLS functions of phase0 and altair (`tests/general/<fork>/bls/<handler>/bls/<case>/`).
//!
//! `output: null` (or `false`) means the operation must fail; a key or signature that does not
//! decode makes a verification false, as it would in the spec, while bad hex in a vector is the
//! vector's failure.
//!
//! [format]: consensus-specs tests/formats/bls/README.md

use std::sync::OnceLock;

use bls::{
    PublicKey, PublicKeyBytes, SecretKey, Signature, SignatureSet, ThreadPool, ThreadPoolBuilder,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::case::{CaseContext, CaseResult, Runner};
use crate::files::{decode_hex, read_yaml};

/// Runs `general/{phase0,altair}/bls/<handler>/bls/<case>/data.yaml`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bls;

/// The domain separation tag of the hash-to-curve vectors (RFC 9380, appendix J.10.1).
const HASH_TO_G2_DST: &[u8] = b"QUUX-V01-CS02-with-BLS12381G2_XMD:SHA-256_SSWU_RO_";

impl Runner for Bls {
    fn name(&self) -> &'static str {
        "bls"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        let check = match case.handler.as_str() {
            "sign" => sign,
            "verify" => verify,
            "aggregate" => aggregate,
            "fast_aggregate_verify" => fast_aggregate_verify,
            "eth_fast_aggregate_verify" => eth_fast_aggregate_verify,
            "aggregate_verify" => aggregate_verify,
            "eth_aggregate_pubkeys" => eth_aggregate_pubkeys,
            "batch_verify" => batch_verify,
            "hash_to_G2" => hash_to_g2,
            "deserialization_G1" => deserialization_g1,
            "deserialization_G2" => deserialization_g2,
            other => return CaseResult::NotRun(format!("no bls handler for {other}")),
        };
        CaseResult::from_check(check(case))
    }
}

/// `data.yaml`: an input and the expected output.
#[derive(Debug, Deserialize)]
struct Data<I, O> {
    input: I,
    output: O,
}

fn read<I: DeserializeOwned, O: DeserializeOwned>(
    case: &CaseContext,
) -> Result<Data<I, O>, String> {
    read_yaml(&case.file("data.yaml"))
}

fn expect_eq<T: PartialEq + std::fmt::Debug>(got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("got {got:?}, expected {want:?}"))
    }
}

/// Compares an operation that may fail with `output` (`None`: it must fail).
fn expect_bytes<E: std::fmt::Debug>(
    got: Result<Vec<u8>, E>,
    output: Option<String>,
) -> Result<(), String> {
    match (got, output) {
        (Ok(got), Some(want)) => expect_eq(got, decode_hex(&want)?),
        (Err(_), None) => Ok(()),
        (Ok(got), None) => Err(format!("expected failure, got 0x{}", hex::encode(got))),
        (Err(e), Some(want)) => Err(format!("failed with {e:?}, expected {want}")),
    }
}

fn public_key(s: &str) -> Result<Result<PublicKey, bls::Error>, String> {
    Ok(PublicKey::from_bytes(&decode_hex(s)?))
}

/// Decodes every key; `Ok(None)` if one of them is not a valid key.
fn public_keys(list: &[String]) -> Result<Option<Vec<PublicKey>>, String> {
    let mut keys = Vec::with_capacity(list.len());
    for s in list {
        match public_key(s)? {
            Ok(key) => keys.push(key),
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(keys))
}

fn signature(s: &str) -> Result<Result<Signature, bls::Error>, String> {
    Ok(Signature::deserialize(&decode_hex(s)?))
}

#[derive(Debug, Deserialize)]
struct SignInput {
    privkey: String,
    message: String,
}

fn sign(case: &CaseContext) -> Result<(), String> {
    let data: Data<SignInput, Option<String>> = read(case)?;
    let message = decode_hex(&data.input.message)?;
    let got = SecretKey::from_bytes(&decode_hex(&data.input.privkey)?)
        .map(|sk| sk.sign(&message).serialize().to_vec());
    expect_bytes(got, data.output)
}

#[derive(Debug, Deserialize)]
struct VerifyInput {
    pubkey: String,
    message: String,
    signature: String,
}

fn verify(case: &CaseContext) -> Result<(), String> {
    let data: Data<VerifyInput, bool> = read(case)?;
    let message = decode_hex(&data.input.message)?;
    let got = match (
        public_key(&data.input.pubkey)?,
        signature(&data.input.signature)?,
    ) {
        (Ok(pk), Ok(sig)) => bls::verify(&pk, &message, &sig),
        _ => false,
    };
    expect_eq(got, data.output)
}

fn aggregate(case: &CaseContext) -> Result<(), String> {
    let data: Data<Vec<String>, Option<String>> = read(case)?;
    let signatures = data
        .input
        .iter()
        .map(|s| signature(s))
        .collect::<Result<Result<Vec<_>, _>, _>>()?;
    let got = signatures
        .and_then(|sigs| bls::aggregate(&sigs))
        .map(|agg| agg.serialize().to_vec());
    expect_bytes(got, data.output)
}

#[derive(Debug, Deserialize)]
struct FastAggregateVerifyInput {
    pubkeys: Vec<String>,
    message: String,
    signature: String,
}

fn fast_aggregate_verify(case: &CaseContext) -> Result<(), String> {
    check_fast_aggregate_verify(case, bls::fast_aggregate_verify)
}

fn eth_fast_aggregate_verify(case: &CaseContext) -> Result<(), String> {
    check_fast_aggregate_verify(case, bls::eth_fast_aggregate_verify)
}

fn check_fast_aggregate_verify(
    case: &CaseContext,
    function: fn(&[PublicKey], &[u8], &Signature) -> bool,
) -> Result<(), String> {
    let data: Data<FastAggregateVerifyInput, bool> = read(case)?;
    let message = decode_hex(&data.input.message)?;
    let got = match (
        public_keys(&data.input.pubkeys)?,
        signature(&data.input.signature)?,
    ) {
        (Some(pks), Ok(sig)) => function(&pks, &message, &sig),
        _ => false,
    };
    expect_eq(got, data.output)
}

#[derive(Debug, Deserialize)]
struct AggregateVerifyInput {
    pubkeys: Vec<String>,
    messages: Vec<String>,
    signature: String,
}

fn aggregate_verify(case: &CaseContext) -> Result<(), String> {
    let data: Data<AggregateVerifyInput, bool> = read(case)?;
    let messages = data
        .input
        .messages
        .iter()
        .map(|m| decode_hex(m))
        .collect::<Result<Vec<_>, _>>()?;
    let messages: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
    let got = match (
        public_keys(&data.input.pubkeys)?,
        signature(&data.input.signature)?,
    ) {
        (Some(pks), Ok(sig)) => bls::aggregate_verify(&pks, &messages, &sig),
        _ => false,
    };
    expect_eq(got, data.output)
}

fn eth_aggregate_pubkeys(case: &CaseContext) -> Result<(), String> {
    let data: Data<Vec<String>, Option<String>> = read(case)?;
    let keys = data
        .input
        .iter()
        .map(|s| public_key(s))
        .collect::<Result<Result<Vec<_>, _>, _>>()?;
    let got = keys
        .and_then(|keys| bls::eth_aggregate_pubkeys(&keys))
        .map(|sum| sum.as_bytes().to_vec());
    expect_bytes(got, data.output)
}

#[derive(Debug, Deserialize)]
struct BatchVerifyInput {
    pubkeys: Vec<String>,
    messages: Vec<String>,
    signatures: Vec<String>,
}

/// A small pool shared by the batch cases.
fn pool() -> Result<&'static ThreadPool, String> {
    static POOL: OnceLock<Result<ThreadPool, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .map_err(|e| format!("cannot build a thread pool: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn batch_verify(case: &CaseContext) -> Result<(), String> {
    let data: Data<BatchVerifyInput, bool> = read(case)?;
    let input = &data.input;
    if input.messages.len() != input.pubkeys.len() || input.signatures.len() != input.pubkeys.len()
    {
        return Err("pubkeys, messages and signatures differ in length".into());
    }
    let mut sets = Vec::with_capacity(input.pubkeys.len());
    let mut decodes = true;
    for ((pk, message), sig) in input
        .pubkeys
        .iter()
        .zip(&input.messages)
        .zip(&input.signatures)
    {
        let message = decode_hex(message)?;
        let message = <[u8; 32]>::try_from(message.as_slice())
            .map_err(|_| format!("message of {} bytes, expected 32", message.len()))?;
        match (public_key(pk)?, signature(sig)?) {
            (Ok(pk), Ok(sig)) => sets.push(SignatureSet::new(sig, vec![pk], message)),
            _ => decodes = false,
        }
    }
    let pool = pool()?;
    let got = decodes && bls::verify_signature_sets(&sets, pool);
    expect_eq(got, data.output)?;
    // The attributed form must agree, and blame at least one set when the batch fails.
    if decodes {
        match bls::verify_signature_sets_attributed(&sets, pool) {
            Ok(()) if got => {}
            Err(failed) if !got && !failed.is_empty() => {}
            other => return Err(format!("attributed batch disagrees: {other:?}")),
        }
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
struct HashToG2Input {
    msg: String,
}

#[derive(Debug, Deserialize)]
struct HashToG2Output {
    x: String,
    y: String,
}

fn hash_to_g2(case: &CaseContext) -> Result<(), String> {
    let data: Data<HashToG2Input, HashToG2Output> = read(case)?;
    // `msg` is the message itself, not hex; coordinates are `0x<c0>,0x<c1>`.
    let point = bls::hash_to_g2(data.input.msg.as_bytes(), HASH_TO_G2_DST);
    let fp2 = |c0: &[u8], c1: &[u8]| format!("0x{},0x{}", hex::encode(c0), hex::encode(c1));
    expect_eq(fp2(&point.x_c0, &point.x_c1), data.output.x)?;
    expect_eq(fp2(&point.y_c0, &point.y_c1), data.output.y)
}

#[derive(Debug, Deserialize)]
struct DeserializationG1Input {
    pubkey: String,
}

fn deserialization_g1(case: &CaseContext) -> Result<(), String> {
    let data: Data<DeserializationG1Input, bool> = read(case)?;
    // This handler tests the point encoding alone: a canonical infinity decodes (KeyValidate,
    // which rejects it, is tested by the verify handlers).
    let got = match PublicKeyBytes::try_from(decode_hex(&data.input.pubkey)?.as_slice())
        .and_then(|bytes| bytes.decompress())
    {
        Ok(_) | Err(bls::Error::InfinityPublicKey) => true,
        Err(_) => false,
    };
    expect_eq(got, data.output)
}

#[derive(Debug, Deserialize)]
struct DeserializationG2Input {
    signature: String,
}

fn deserialization_g2(case: &CaseContext) -> Result<(), String> {
    let data: Data<DeserializationG2Input, bool> = read(case)?;
    let got = signature(&data.input.signature)?.is_ok();
    expect_eq(got, data.output)
}
