//! Blob transactions for the mock: deterministic blobs, their KZG commitments and cell proofs
//! (from `crypto/kzg`), versioned hashes, and the EIP-4844 transactions that carry them.

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use splitmix::SplitMix64;
use types::{Address, KZGCommitment, KZGProof, U256, VersionedHash};

use crate::rlp;

/// `VERSIONED_HASH_VERSION_KZG`.
pub const VERSIONED_HASH_VERSION_KZG: u8 = 0x01;
/// The EIP-2718 type of blob transactions.
pub const BLOB_TX_TYPE: u8 = 0x03;
/// Blob gas per blob (`GAS_PER_BLOB`).
pub const GAS_PER_BLOB: u64 = 1 << 17;
/// The most blobs one transaction may carry from Osaka on (EIP-7594).
pub const MAX_BLOBS_PER_TX: usize = 6;

/// One blob with everything an engine hands out about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobEntry {
    /// `BYTES_PER_BLOB` bytes.
    pub blob: Vec<u8>,
    /// Its commitment.
    pub commitment: KZGCommitment,
    /// `CELLS_PER_EXT_BLOB` cell proofs.
    pub proofs: Vec<KZGProof>,
    /// `kzg_to_versioned_hash(commitment)`.
    pub versioned_hash: VersionedHash,
}

/// `kzg_to_versioned_hash(commitment)`: `0x01 ++ sha256(commitment)[1:]`.
///
/// [spec]: deneb/beacon-chain.md#kzg_to_versioned_hash
pub fn kzg_to_versioned_hash(commitment: &KZGCommitment) -> VersionedHash {
    let mut hash: [u8; 32] = Sha256::digest(commitment.as_slice()).into();
    hash[0] = VERSIONED_HASH_VERSION_KZG;
    VersionedHash::new(hash)
}

/// The blob numbered `index` of block `block_number` under `seed`: random canonical field
/// elements (the top byte of each 32-byte big-endian element is zero, so it is below the BLS
/// modulus).
pub fn generate_blob(seed: u64, block_number: u64, index: u64) -> Vec<u8> {
    // SplitMix64: blobs need determinism, not secrecy.
    let mut rng = SplitMix64::new(
        seed ^ block_number.wrapping_mul(0x2545_f491_4f6c_dd1d)
            ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17),
    );
    let mut blob = vec![0u8; kzg::BYTES_PER_BLOB];
    for element in blob.chunks_exact_mut(32) {
        rng.fill_bytes(element);
        element[0] = 0;
    }
    blob
}

/// The commitment, cell proofs and versioned hash of a blob.
pub fn blob_entry(blob: Vec<u8>) -> Result<BlobEntry, kzg::Error> {
    let kzg_blob = kzg::blob_from_bytes(&blob)?;
    let commitment = kzg::blob_to_kzg_commitment(&kzg_blob)?;
    let cells_and_proofs = kzg::compute_cells_and_kzg_proofs(&kzg_blob)?;
    let commitment = KZGCommitment::new(commitment.0);
    Ok(BlobEntry {
        versioned_hash: kzg_to_versioned_hash(&commitment),
        blob,
        commitment,
        proofs: cells_and_proofs
            .proofs
            .iter()
            .map(|p| KZGProof::new(p.0))
            .collect(),
    })
}

/// `count` blobs of a block with their proofs, computed in parallel (a blob's cell proofs cost
/// hundreds of milliseconds).
pub fn generate_blob_entries(
    seed: u64,
    block_number: u64,
    count: usize,
) -> Result<Vec<BlobEntry>, kzg::Error> {
    (0..count as u64)
        .into_par_iter()
        .map(|i| blob_entry(generate_blob(seed, block_number, i)))
        .collect()
}

/// The blobs of blocks `0..variety`, `count` each (for
/// [`crate::MockExecutionLayer::set_blob_sets`]): what a devnet computes once, before genesis.
pub fn generate_blob_sets(
    seed: u64,
    variety: u64,
    count: usize,
) -> Result<Vec<Vec<BlobEntry>>, kzg::Error> {
    (0..variety)
        .map(|number| generate_blob_entries(seed, number, count))
        .collect()
}

/// An EIP-4844 transaction carrying `versioned_hashes`:
/// `0x03 || rlp([chain_id, nonce, max_priority_fee_per_gas, max_fee_per_gas, gas_limit, to,
/// value, data, access_list, max_fee_per_blob_gas, blob_versioned_hashes, y_parity, r, s])`.
///
/// The signature is a fixed placeholder (`r = s = 1`): the mock executes nothing, and the
/// consensus layer treats transactions as opaque bytes.
pub fn blob_transaction(chain_id: u64, nonce: u64, versioned_hashes: &[VersionedHash]) -> Vec<u8> {
    let mut p = Vec::with_capacity(128 + 33 * versioned_hashes.len());
    rlp::encode_u64(&mut p, chain_id);
    rlp::encode_u64(&mut p, nonce);
    rlp::encode_u64(&mut p, 1_000_000_000);
    rlp::encode_u64(&mut p, 10_000_000_000);
    rlp::encode_u64(&mut p, 21_000);
    rlp::encode_bytes(&mut p, Address::repeat_byte(0xb1).as_slice());
    rlp::encode_u256(&mut p, &U256::ZERO);
    rlp::encode_bytes(&mut p, &[]);
    rlp::encode_list(&mut p, &[]);
    rlp::encode_u64(&mut p, 1_000_000_000);
    let mut hashes = Vec::with_capacity(33 * versioned_hashes.len());
    for hash in versioned_hashes {
        rlp::encode_bytes(&mut hashes, hash.as_slice());
    }
    rlp::encode_list(&mut p, &hashes);
    rlp::encode_u64(&mut p, 0);
    rlp::encode_u64(&mut p, 1);
    rlp::encode_u64(&mut p, 1);
    let mut tx = vec![BLOB_TX_TYPE];
    rlp::encode_list(&mut tx, &p);
    tx
}

/// The blob versioned hashes a transaction carries: those of a type-3 transaction, none for
/// other types.
pub fn transaction_versioned_hashes(tx: &[u8]) -> Result<Vec<VersionedHash>, rlp::RlpError> {
    let Some((&BLOB_TX_TYPE, body)) = tx.split_first() else {
        return Ok(vec![]);
    };
    let (rlp::Item::List(fields), _) = rlp::decode_item(body)? else {
        return Err(rlp::RlpError);
    };
    let fields = rlp::list_items(fields)?;
    let Some(rlp::Item::List(hashes)) = fields.get(10) else {
        return Err(rlp::RlpError);
    };
    rlp::list_items(hashes)?
        .into_iter()
        .map(|item| match item {
            rlp::Item::Bytes(b) if b.len() == 32 => Ok(VersionedHash::from_slice(b)),
            _ => Err(rlp::RlpError),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_deterministic_and_distinct() {
        let a = generate_blob(1, 5, 0);
        assert_eq!(a, generate_blob(1, 5, 0));
        assert_ne!(a, generate_blob(1, 5, 1));
        assert_ne!(a, generate_blob(1, 6, 0));
        assert_ne!(a, generate_blob(2, 5, 0));
        assert!(a.chunks_exact(32).all(|e| e[0] == 0));
    }

    #[test]
    fn blob_transactions_carry_their_versioned_hashes() {
        let hashes = [VersionedHash::repeat_byte(1), VersionedHash::repeat_byte(2)];
        let tx = blob_transaction(1, 3, &hashes);
        assert_eq!(tx[0], BLOB_TX_TYPE);
        assert_eq!(transaction_versioned_hashes(&tx), Ok(hashes.to_vec()));
        assert_eq!(transaction_versioned_hashes(&[0x02, 0xc0]), Ok(vec![]));
        assert!(transaction_versioned_hashes(&tx[..tx.len() - 3]).is_err());
    }
}
