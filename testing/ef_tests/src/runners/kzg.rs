//! `kzg`: the EIP-4844 (deneb) and EIP-7594 (fulu) KZG functions against `data.yaml`.
//!
//! `output: null` means the call must fail; input that cannot even be decoded (bad hex, a wrong
//! length) counts as such a failure, exactly as the spec's own checks would reject it.
//!
//! [format]: consensus-specs tests/formats/kzg_4844/README.md, tests/formats/kzg_7594/README.md

use std::fmt::Debug;

use kzg::{Blob, Bytes32, Cell, CellsAndProofs, KzgCommitment, KzgProof};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::case::{CaseContext, CaseResult, Runner};
use crate::files::{decode_hex, read_yaml};

/// Runs `general/<fork>/kzg/<handler>/kzg-mainnet/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Kzg;

impl Runner for Kzg {
    fn name(&self) -> &'static str {
        "kzg"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        let result = match case.handler.as_str() {
            "blob_to_kzg_commitment" => run::<BlobInput, KzgCommitment>(case, |i| {
                kzg::blob_to_kzg_commitment(&*blob(&i.blob)?).map_err(err)
            }),
            "compute_kzg_proof" => run::<BlobZInput, (KzgProof, Bytes32)>(case, |i| {
                kzg::compute_kzg_proof(&*blob(&i.blob)?, &bytes32(&i.z)?).map_err(err)
            }),
            "compute_blob_kzg_proof" => run::<BlobCommitmentInput, KzgProof>(case, |i| {
                kzg::compute_blob_kzg_proof(&*blob(&i.blob)?, &commitment(&i.commitment)?)
                    .map_err(err)
            }),
            "verify_kzg_proof" => run::<VerifyKzgProofInput, bool>(case, |i| {
                kzg::verify_kzg_proof(
                    &commitment(&i.commitment)?,
                    &bytes32(&i.z)?,
                    &bytes32(&i.y)?,
                    &proof(&i.proof)?,
                )
                .map_err(err)
            }),
            "verify_blob_kzg_proof" => run::<VerifyBlobInput, bool>(case, |i| {
                kzg::verify_blob_kzg_proof(
                    &*blob(&i.blob)?,
                    &commitment(&i.commitment)?,
                    &proof(&i.proof)?,
                )
                .map_err(err)
            }),
            "verify_blob_kzg_proof_batch" => run::<VerifyBlobBatchInput, bool>(case, |i| {
                let blobs = i
                    .blobs
                    .iter()
                    .map(|b| blob(b).map(|b| *b))
                    .collect::<Result<Vec<Blob>, _>>()?;
                kzg::verify_blob_kzg_proof_batch(
                    &blobs,
                    &all(&i.commitments, commitment)?,
                    &all(&i.proofs, proof)?,
                )
                .map_err(err)
            }),
            "compute_cells" => run::<BlobInput, Vec<Cell>>(case, |i| {
                kzg::compute_cells(&*blob(&i.blob)?)
                    .map(|cells| cells.to_vec())
                    .map_err(err)
            }),
            "compute_cells_and_kzg_proofs" => {
                run::<BlobInput, (Vec<Cell>, Vec<KzgProof>)>(case, |i| {
                    kzg::compute_cells_and_kzg_proofs(&*blob(&i.blob)?)
                        .map(pair)
                        .map_err(err)
                })
            }
            "verify_cell_kzg_proof_batch" => run::<VerifyCellBatchInput, bool>(case, |i| {
                kzg::verify_cell_kzg_proof_batch(
                    &all(&i.commitments, commitment)?,
                    &i.cell_indices,
                    &all(&i.cells, cell)?,
                    &all(&i.proofs, proof)?,
                )
                .map_err(err)
            }),
            "recover_cells_and_kzg_proofs" => {
                run::<RecoverInput, (Vec<Cell>, Vec<KzgProof>)>(case, |i| {
                    kzg::recover_cells_and_kzg_proofs(&i.cell_indices, &all(&i.cells, cell)?)
                        .map(pair)
                        .map_err(err)
                })
            }
            "compute_challenge" => run::<BlobCommitmentInput, Bytes32>(case, |i| {
                Ok(kzg::compute_challenge(
                    &*blob(&i.blob)?,
                    &commitment(&i.commitment)?,
                ))
            }),
            "compute_verify_cell_kzg_proof_batch_challenge" => {
                run::<CellChallengeInput, Bytes32>(case, |i| {
                    let cosets_evals = i
                        .cosets_evals
                        .iter()
                        .map(|evals| {
                            let evals = all(evals, bytes32)?;
                            <kzg::CosetEvals>::try_from(evals)
                                .map_err(|e| format!("a coset has {} evaluations", e.len()))
                        })
                        .collect::<Result<Vec<_>, String>>()?;
                    kzg::compute_verify_cell_kzg_proof_batch_challenge(
                        &all(&i.commitments, commitment)?,
                        &i.commitment_indices,
                        &i.cell_indices,
                        &cosets_evals,
                        &all(&i.proofs, proof)?,
                    )
                    .map_err(err)
                })
            }
            other => return CaseResult::NotRun(format!("no kzg handler for {other}")),
        };
        CaseResult::from_check(result)
    }
}

/// `data.yaml`: the input, and the expected output or `null` for "must fail".
#[derive(Debug, Deserialize)]
struct Data<I, O> {
    input: I,
    output: Option<O>,
}

/// Reads the case, runs `f` on its input and compares with its output. Input that does not
/// decode makes `f` fail, which is right exactly when the output is `null`.
fn run<I, O>(
    case: &CaseContext,
    f: impl FnOnce(&I) -> Result<O::Value, String>,
) -> Result<(), String>
where
    I: DeserializeOwned,
    O: Expected,
{
    let data: Data<I, O::Yaml> = read_yaml(&case.file("data.yaml"))?;
    let got = f(&data.input);
    match (got, data.output) {
        (Err(_), None) => Ok(()),
        (Ok(value), None) => Err(format!("expected a failure, got {value:?}")),
        (Err(e), Some(_)) => Err(format!("expected a result, got the error: {e}")),
        (Ok(value), Some(yaml)) => {
            let want = O::decode(&yaml).map_err(|e| format!("bad expected output: {e}"))?;
            if value == want {
                Ok(())
            } else {
                Err(format!("got {value:?}, expected {want:?}"))
            }
        }
    }
}

/// An output value as the YAML spells it, and its decoding.
trait Expected {
    type Yaml: DeserializeOwned;
    type Value: PartialEq + Debug;
    fn decode(yaml: &Self::Yaml) -> Result<Self::Value, String>;
}

impl Expected for bool {
    type Yaml = bool;
    type Value = bool;
    fn decode(yaml: &bool) -> Result<bool, String> {
        Ok(*yaml)
    }
}

impl Expected for KzgCommitment {
    type Yaml = String;
    type Value = KzgCommitment;
    fn decode(yaml: &String) -> Result<KzgCommitment, String> {
        commitment(yaml)
    }
}

impl Expected for KzgProof {
    type Yaml = String;
    type Value = KzgProof;
    fn decode(yaml: &String) -> Result<KzgProof, String> {
        proof(yaml)
    }
}

impl Expected for Bytes32 {
    type Yaml = String;
    type Value = Bytes32;
    fn decode(yaml: &String) -> Result<Bytes32, String> {
        bytes32(yaml)
    }
}

impl Expected for (KzgProof, Bytes32) {
    type Yaml = (String, String);
    type Value = (KzgProof, Bytes32);
    fn decode((p, y): &(String, String)) -> Result<Self, String> {
        Ok((proof(p)?, bytes32(y)?))
    }
}

impl Expected for Vec<Cell> {
    type Yaml = Vec<String>;
    type Value = Vec<Cell>;
    fn decode(yaml: &Vec<String>) -> Result<Vec<Cell>, String> {
        all(yaml, cell)
    }
}

impl Expected for (Vec<Cell>, Vec<KzgProof>) {
    type Yaml = (Vec<String>, Vec<String>);
    type Value = (Vec<Cell>, Vec<KzgProof>);
    fn decode((cells, proofs): &(Vec<String>, Vec<String>)) -> Result<Self, String> {
        Ok((all(cells, cell)?, all(proofs, proof)?))
    }
}

#[derive(Debug, Deserialize)]
struct BlobInput {
    blob: String,
}

#[derive(Debug, Deserialize)]
struct BlobZInput {
    blob: String,
    z: String,
}

#[derive(Debug, Deserialize)]
struct BlobCommitmentInput {
    blob: String,
    commitment: String,
}

#[derive(Debug, Deserialize)]
struct VerifyKzgProofInput {
    commitment: String,
    z: String,
    y: String,
    proof: String,
}

#[derive(Debug, Deserialize)]
struct VerifyBlobInput {
    blob: String,
    commitment: String,
    proof: String,
}

#[derive(Debug, Deserialize)]
struct VerifyBlobBatchInput {
    blobs: Vec<String>,
    commitments: Vec<String>,
    proofs: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct VerifyCellBatchInput {
    commitments: Vec<String>,
    cell_indices: Vec<u64>,
    cells: Vec<String>,
    proofs: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct CellChallengeInput {
    commitments: Vec<String>,
    commitment_indices: Vec<u64>,
    cell_indices: Vec<u64>,
    cosets_evals: Vec<Vec<String>>,
    proofs: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct RecoverInput {
    cell_indices: Vec<u64>,
    cells: Vec<String>,
}

fn err(e: kzg::Error) -> String {
    e.to_string()
}

fn pair(c: CellsAndProofs) -> (Vec<Cell>, Vec<KzgProof>) {
    (c.cells.to_vec(), c.proofs.to_vec())
}

fn all<T>(items: &[String], f: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    items.iter().map(|s| f(s)).collect()
}

fn blob(s: &str) -> Result<Box<Blob>, String> {
    kzg::blob_from_bytes(&decode_hex(s)?).map_err(err)
}

fn cell(s: &str) -> Result<Cell, String> {
    kzg::cell_from_bytes(&decode_hex(s)?).map_err(err)
}

fn bytes32(s: &str) -> Result<Bytes32, String> {
    kzg::bytes32_from_bytes(&decode_hex(s)?).map_err(err)
}

fn commitment(s: &str) -> Result<KzgCommitment, String> {
    KzgCommitment::from_slice(&decode_hex(s)?).map_err(err)
}

fn proof(s: &str) -> Result<KzgProof, String> {
    KzgProof::from_slice(&decode_hex(s)?).map_err(err)
}
