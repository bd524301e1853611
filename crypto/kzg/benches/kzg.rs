//! KZG at mainnet scale: 48 blobs, 128 columns. `cargo bench -p kzg`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kzg::{
    BYTES_PER_BLOB, BYTES_PER_FIELD_ELEMENT, Blob, CELLS_PER_EXT_BLOB, Cell, CellsAndProofs,
    ColumnRef, KzgCommitment, KzgProof,
};

const BLOBS: usize = 48;

/// A blob of canonical field elements (top byte of each zero).
fn blob(seed: u8) -> Blob {
    let mut bytes = vec![0u8; BYTES_PER_BLOB];
    for (i, fe) in bytes.chunks_exact_mut(BYTES_PER_FIELD_ELEMENT).enumerate() {
        for (j, b) in fe.iter_mut().enumerate().skip(1) {
            *b = (i as u8).wrapping_mul(31) ^ (j as u8).wrapping_mul(7) ^ seed;
        }
    }
    *kzg::blob_from_bytes(&bytes).expect("BYTES_PER_BLOB bytes")
}

struct Column {
    index: u64,
    cells: Vec<Cell>,
    proofs: Vec<KzgProof>,
}

struct Fixture {
    blobs: Vec<Blob>,
    commitments: Vec<KzgCommitment>,
    blob_proofs: Vec<KzgProof>,
    extended: Vec<CellsAndProofs>,
    columns: Vec<Column>,
}

fn fixture() -> Fixture {
    let blobs: Vec<Blob> = (0..BLOBS as u8).map(blob).collect();
    let commitments: Vec<_> = blobs
        .iter()
        .map(|b| kzg::blob_to_kzg_commitment(b).expect("valid blob"))
        .collect();
    let blob_proofs = blobs
        .iter()
        .zip(&commitments)
        .map(|(b, c)| kzg::compute_blob_kzg_proof(b, c).expect("valid blob"))
        .collect();
    let extended: Vec<_> = rayon::ThreadPoolBuilder::new()
        .build()
        .expect("a rayon pool")
        .install(|| {
            use rayon::prelude::*;
            blobs
                .par_iter()
                .map(|b| kzg::compute_cells_and_kzg_proofs(b).expect("valid blob"))
                .collect()
        });
    let columns = (0..CELLS_PER_EXT_BLOB)
        .map(|j| Column {
            index: j as u64,
            cells: extended.iter().map(|e| e.cells[j]).collect(),
            proofs: extended.iter().map(|e| e.proofs[j]).collect(),
        })
        .collect();
    Fixture {
        blobs,
        commitments,
        blob_proofs,
        extended,
        columns,
    }
}

fn refs<'a>(columns: &'a [Column], commitments: &'a [KzgCommitment]) -> Vec<ColumnRef<'a>> {
    columns
        .iter()
        .map(|c| ColumnRef {
            index: c.index,
            cells: &c.cells,
            commitments,
            proofs: &c.proofs,
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let f = fixture();
    let pools: Vec<_> = [1, 2]
        .map(|n| {
            (
                n,
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .expect("a rayon pool"),
            )
        })
        .into();

    let mut group = c.benchmark_group("verify_data_column_sidecar_kzg_proofs_batch");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    for count in [1, 8, 64, 128] {
        let columns = refs(&f.columns[..count], &f.commitments);
        for (threads, pool) in &pools {
            group.bench_with_input(
                BenchmarkId::new(format!("{count}_columns"), format!("{threads}_threads")),
                &columns,
                |b, columns| {
                    b.iter(|| {
                        kzg::verify_data_column_sidecar_kzg_proofs_batch(black_box(columns), pool)
                            .expect("valid")
                    })
                },
            );
        }
    }
    // One column with a wrong proof among 128: the batch fails, and the bad column is named.
    let mut bad_columns: Vec<Column> = f
        .columns
        .iter()
        .map(|c| Column {
            index: c.index,
            cells: c.cells.clone(),
            proofs: c.proofs.clone(),
        })
        .collect();
    bad_columns[77].proofs[5] = bad_columns[78].proofs[5];
    let bad = refs(&bad_columns, &f.commitments);
    for (threads, pool) in &pools {
        group.bench_with_input(
            BenchmarkId::new("128_columns_one_bad", format!("{threads}_threads")),
            &bad,
            |b, columns| {
                b.iter(|| {
                    let failures =
                        kzg::verify_data_column_sidecar_kzg_proofs_batch(black_box(columns), pool)
                            .expect_err("column 77 is bad");
                    assert_eq!(failures.len(), 1);
                    assert_eq!(failures[0].0, 77);
                })
            },
        );
    }
    group.finish();

    let mut group = c.benchmark_group("cells");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    group.bench_function("compute_cells_and_kzg_proofs_1_blob", |b| {
        b.iter(|| kzg::compute_cells_and_kzg_proofs(black_box(&f.blobs[0])).expect("valid"))
    });
    let indices: Vec<u64> = (0..CELLS_PER_EXT_BLOB as u64).step_by(2).collect();
    let half: Vec<Cell> = indices
        .iter()
        .map(|&i| f.extended[0].cells[i as usize])
        .collect();
    group.bench_function("recover_cells_and_kzg_proofs_1_blob_from_64", |b| {
        b.iter(|| kzg::recover_cells_and_kzg_proofs(&indices, black_box(&half)).expect("valid"))
    });
    group.bench_function("verify_blob_kzg_proof_batch_48", |b| {
        b.iter(|| {
            assert_eq!(
                kzg::verify_blob_kzg_proof_batch(
                    black_box(&f.blobs),
                    &f.commitments,
                    &f.blob_proofs
                ),
                Ok(true)
            )
        })
    });
    group.finish();
}

criterion_group!(kzg_benches, benches);
criterion_main!(kzg_benches);
