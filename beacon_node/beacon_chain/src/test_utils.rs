//! Fixtures for the crate's unit tests: Fulu blocks carrying real blob commitments.

use arbitrary::{Arbitrary, Unstructured};
use ssz_types::VariableList;
use types::{ChainSpec, KZGCommitment, MinimalEthSpec as E, SignedBeaconBlock, fulu};

/// A blob of canonical field elements (each element's top byte zero).
pub(crate) fn blob(seed: u8) -> kzg::Blob {
    let mut bytes = vec![0u8; kzg::BYTES_PER_BLOB];
    for (i, fe) in bytes
        .chunks_exact_mut(kzg::BYTES_PER_FIELD_ELEMENT)
        .enumerate()
    {
        for (j, b) in fe.iter_mut().enumerate().skip(1) {
            *b = (i as u8).wrapping_mul(3) ^ (j as u8) ^ seed;
        }
    }
    *kzg::blob_from_bytes(&bytes).expect("BYTES_PER_BLOB bytes")
}

/// An arbitrary Fulu block (every field filled from bytes seeded by `seed`) carrying the
/// commitments of `blobs` blobs (also seeded), with their cells and proofs.
pub(crate) fn block_with_blobs(
    blobs: u8,
    seed: u64,
) -> (SignedBeaconBlock<E>, Vec<kzg::CellsAndProofs>) {
    let mut bytes = vec![0u8; 1 << 16];
    splitmix::SplitMix64::new(seed).fill_bytes(&mut bytes);
    let mut block = fulu::SignedBeaconBlock::<E>::arbitrary(&mut Unstructured::new(&bytes))
        .expect("enough bytes for a block");
    let blobs: Vec<kzg::Blob> = (0..blobs)
        .map(|i| blob(i.wrapping_add((seed as u8).wrapping_mul(16))))
        .collect();
    let commitments = blobs
        .iter()
        .map(|b| KZGCommitment::from(kzg::blob_to_kzg_commitment(b).expect("valid").0))
        .collect();
    block.message.body.blob_kzg_commitments = VariableList::new(commitments).expect("few");
    let cells = blobs
        .iter()
        .map(|b| kzg::compute_cells_and_kzg_proofs(b).expect("valid"))
        .collect();
    (SignedBeaconBlock::Fulu(block), cells)
}

/// The minimal preset's spec.
pub(crate) fn minimal_spec() -> ChainSpec {
    ChainSpec::minimal()
}

/// A one-thread pool for KZG in tests.
pub(crate) fn pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool")
}
