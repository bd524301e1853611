//! The execution block hash of a payload, as an execution client computes it: keccak-256 of the
//! RLP of the Osaka (= Prague) block header rebuilt from the payload's fields, with the
//! transactions and withdrawals roots computed as Merkle-Patricia trie roots and the requests
//! hash as EIP-7685 defines it.
//!
//! Header fields, in order (EIP-1559, EIP-4895, EIP-4844, EIP-4788, EIP-7685):
//! `parent_hash, ommers_hash (empty list), fee_recipient, state_root, transactions_root,
//! receipts_root, logs_bloom, difficulty (0), block_number, gas_limit, gas_used, timestamp,
//! extra_data, prev_randao (mix hash), nonce (8 zero bytes), base_fee_per_gas, withdrawals_root,
//! blob_gas_used, excess_blob_gas, parent_beacon_block_root, requests_hash` and, from Amsterdam
//! on, `block_access_list_hash` (EIP-7928: `keccak256` of the RLP-encoded block access list)
//! and `slot_number` (EIP-7843), appended in that order.

use alloy_primitives::keccak256;
use sha2::{Digest, Sha256};
use types::fulu::{ExecutionPayload, Withdrawal};
use types::{EthSpec, Hash32, U256, gloas};

use crate::rlp;

/// `keccak256(rlp(""))`: the root of an empty trie.
pub const EMPTY_TRIE_ROOT: Hash32 = Hash32::new([
    0x56, 0xe8, 0x1f, 0x17, 0x1b, 0xcc, 0x55, 0xa6, 0xff, 0x83, 0x45, 0xe6, 0x92, 0xc0, 0xf8, 0x6e,
    0x5b, 0x48, 0xe0, 0x1b, 0x99, 0x6c, 0xad, 0xc0, 0x01, 0x62, 0x2f, 0xb5, 0xe3, 0x63, 0xb4, 0x21,
]);

/// `keccak256(rlp([]))`: the ommers hash of every post-merge block.
pub const EMPTY_OMMERS_HASH: Hash32 = Hash32::new([
    0x1d, 0xcc, 0x4d, 0xe8, 0xde, 0xc7, 0x5d, 0x7a, 0xab, 0x85, 0xb5, 0x67, 0xb6, 0xcc, 0xd4, 0x1a,
    0xd3, 0x12, 0x45, 0x1b, 0x94, 0x8a, 0x74, 0x13, 0xf0, 0xa1, 0x42, 0xfd, 0x40, 0xd4, 0x93, 0x47,
]);

/// The hex-prefix encoding of a nibble path (Yellow Paper appendix C).
fn hex_prefix(nibbles: &[u8], leaf: bool) -> Vec<u8> {
    let flag = if leaf { 2 } else { 0 } + (nibbles.len() % 2) as u8;
    let mut out = Vec::with_capacity(nibbles.len() / 2 + 1);
    let rest = if nibbles.len() % 2 == 1 {
        out.push((flag << 4) | nibbles[0]);
        &nibbles[1..]
    } else {
        out.push(flag << 4);
        nibbles
    };
    out.extend(rest.chunks(2).map(|pair| (pair[0] << 4) | pair[1]));
    out
}

/// How a node is referenced from its parent: inline when its RLP is shorter than 32 bytes, else
/// by hash.
fn append_reference(out: &mut Vec<u8>, node: &[u8]) {
    if node.len() < 32 {
        out.extend_from_slice(node);
    } else {
        rlp::encode_bytes(out, keccak256(node).as_slice());
    }
}

/// The RLP of the trie node holding `items` (sorted by key, keys prefix-free below `depth`).
fn trie_node(items: &[(Vec<u8>, &[u8])], depth: usize) -> Vec<u8> {
    if let [(key, value)] = items {
        let mut payload = Vec::new();
        rlp::encode_bytes(&mut payload, &hex_prefix(&key[depth..], true));
        rlp::encode_bytes(&mut payload, value);
        return rlp::list(&payload);
    }
    let (first, last) = (&items[0].0, &items[items.len() - 1].0);
    let common = first[depth..]
        .iter()
        .zip(&last[depth..])
        .take_while(|(a, b)| a == b)
        .count();
    if common > 0 {
        let mut payload = Vec::new();
        rlp::encode_bytes(
            &mut payload,
            &hex_prefix(&first[depth..depth + common], false),
        );
        append_reference(&mut payload, &trie_node(items, depth + common));
        return rlp::list(&payload);
    }
    let mut payload = Vec::new();
    let mut value: &[u8] = &[];
    let mut rest = items;
    if let Some(((key, v), tail)) = rest.split_first()
        && key.len() == depth
    {
        value = v;
        rest = tail;
    }
    for nibble in 0..16u8 {
        let end = rest
            .iter()
            .position(|(key, _)| key[depth] != nibble)
            .unwrap_or(rest.len());
        let (group, tail) = rest.split_at(end);
        if group.is_empty() {
            payload.push(0x80);
        } else {
            append_reference(&mut payload, &trie_node(group, depth + 1));
        }
        rest = tail;
    }
    rlp::encode_bytes(&mut payload, value);
    rlp::list(&payload)
}

/// The root of the Merkle-Patricia trie holding `entries` (distinct keys).
pub fn trie_root(entries: &[(Vec<u8>, Vec<u8>)]) -> Hash32 {
    if entries.is_empty() {
        return EMPTY_TRIE_ROOT;
    }
    let mut items: Vec<(Vec<u8>, &[u8])> = entries
        .iter()
        .map(|(key, value)| {
            let nibbles = key.iter().flat_map(|b| [b >> 4, b & 0x0f]).collect();
            (nibbles, value.as_slice())
        })
        .collect();
    items.sort_by(|a, b| a.0.cmp(&b.0));
    keccak256(trie_node(&items, 0))
}

/// The root of a list stored under the keys `rlp(0), rlp(1), …` (transactions, withdrawals,
/// receipts).
pub fn ordered_trie_root<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Hash32 {
    let entries: Vec<(Vec<u8>, Vec<u8>)> = values
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let mut key = Vec::new();
            rlp::encode_u64(&mut key, i as u64);
            (key, value.to_vec())
        })
        .collect();
    trie_root(&entries)
}

/// `rlp([index, validator_index, address, amount])` (EIP-4895).
pub fn withdrawal_rlp(w: &Withdrawal) -> Vec<u8> {
    let mut payload = Vec::new();
    rlp::encode_u64(&mut payload, w.index);
    rlp::encode_u64(&mut payload, w.validator_index);
    rlp::encode_bytes(&mut payload, w.address.as_slice());
    rlp::encode_u64(&mut payload, w.amount);
    rlp::list(&payload)
}

/// EIP-7685 `requests_hash`: `sha256(sha256(r_0) ++ sha256(r_1) ++ …)` over the non-empty typed
/// requests.
pub fn requests_hash(requests: &[Vec<u8>]) -> Hash32 {
    let mut outer = Sha256::new();
    for request in requests.iter().filter(|r| r.len() > 1) {
        outer.update(Sha256::digest(request));
    }
    Hash32::new(outer.finalize().into())
}

/// The block hash the payload's fields commit to, given the parts of the header a payload does
/// not carry.
pub fn compute_block_hash<E: EthSpec>(
    payload: &ExecutionPayload<E>,
    parent_beacon_block_root: Hash32,
    execution_requests: &[Vec<u8>],
) -> Hash32 {
    let withdrawals: Vec<Vec<u8>> = payload.withdrawals.iter().map(withdrawal_rlp).collect();
    HeaderFields {
        parent_hash: payload.parent_hash,
        fee_recipient: payload.fee_recipient.as_slice(),
        state_root: payload.state_root,
        transactions_root: ordered_trie_root(payload.transactions.iter().map(|t| &t[..])),
        receipts_root: payload.receipts_root,
        logs_bloom: &payload.logs_bloom,
        block_number: payload.block_number,
        gas_limit: payload.gas_limit,
        gas_used: payload.gas_used,
        timestamp: payload.timestamp,
        extra_data: &payload.extra_data,
        prev_randao: payload.prev_randao,
        base_fee_per_gas: payload.base_fee_per_gas,
        withdrawals_root: ordered_trie_root(withdrawals.iter().map(Vec::as_slice)),
        blob_gas_used: payload.blob_gas_used,
        excess_blob_gas: payload.excess_blob_gas,
        parent_beacon_block_root,
        requests_hash: requests_hash(execution_requests),
        amsterdam: None,
    }
    .hash()
}

/// The block hash of an Amsterdam payload: the Osaka header followed by
/// `block_access_list_hash = keccak256(block_access_list)` (EIP-7928: the hash of the RLP
/// bytes as carried) and `slot_number` (EIP-7843), in that order.
pub fn compute_block_hash_amsterdam<E: EthSpec>(
    payload: &gloas::ExecutionPayload<E>,
    parent_beacon_block_root: Hash32,
    execution_requests: &[Vec<u8>],
) -> Hash32 {
    let withdrawals: Vec<Vec<u8>> = payload.withdrawals.iter().map(withdrawal_rlp).collect();
    HeaderFields {
        parent_hash: payload.parent_hash,
        fee_recipient: payload.fee_recipient.as_slice(),
        state_root: payload.state_root,
        transactions_root: ordered_trie_root(payload.transactions.iter().map(|t| &t[..])),
        receipts_root: payload.receipts_root,
        logs_bloom: &payload.logs_bloom,
        block_number: payload.block_number,
        gas_limit: payload.gas_limit,
        gas_used: payload.gas_used,
        timestamp: payload.timestamp,
        extra_data: &payload.extra_data,
        prev_randao: payload.prev_randao,
        base_fee_per_gas: payload.base_fee_per_gas,
        withdrawals_root: ordered_trie_root(withdrawals.iter().map(Vec::as_slice)),
        blob_gas_used: payload.blob_gas_used,
        excess_blob_gas: payload.excess_blob_gas,
        parent_beacon_block_root,
        requests_hash: requests_hash(execution_requests),
        amsterdam: Some((
            keccak256(&payload.block_access_list[..]),
            payload.slot_number,
        )),
    }
    .hash()
}

/// `rlp([])`: the block access list of a block without state changes (EIP-7928).
pub const EMPTY_BLOCK_ACCESS_LIST: [u8; 1] = [0xc0];

/// The header fields a block hash covers, in header order.
struct HeaderFields<'a> {
    parent_hash: Hash32,
    fee_recipient: &'a [u8],
    state_root: Hash32,
    transactions_root: Hash32,
    receipts_root: Hash32,
    logs_bloom: &'a [u8],
    block_number: u64,
    gas_limit: u64,
    gas_used: u64,
    timestamp: u64,
    extra_data: &'a [u8],
    prev_randao: Hash32,
    base_fee_per_gas: U256,
    withdrawals_root: Hash32,
    blob_gas_used: u64,
    excess_blob_gas: u64,
    parent_beacon_block_root: Hash32,
    requests_hash: Hash32,
    /// `(block_access_list_hash, slot_number)` from Amsterdam on.
    amsterdam: Option<(Hash32, u64)>,
}

impl HeaderFields<'_> {
    fn hash(&self) -> Hash32 {
        let mut h = Vec::with_capacity(750);
        rlp::encode_bytes(&mut h, self.parent_hash.as_slice());
        rlp::encode_bytes(&mut h, EMPTY_OMMERS_HASH.as_slice());
        rlp::encode_bytes(&mut h, self.fee_recipient);
        rlp::encode_bytes(&mut h, self.state_root.as_slice());
        rlp::encode_bytes(&mut h, self.transactions_root.as_slice());
        rlp::encode_bytes(&mut h, self.receipts_root.as_slice());
        rlp::encode_bytes(&mut h, self.logs_bloom);
        rlp::encode_u64(&mut h, 0);
        rlp::encode_u64(&mut h, self.block_number);
        rlp::encode_u64(&mut h, self.gas_limit);
        rlp::encode_u64(&mut h, self.gas_used);
        rlp::encode_u64(&mut h, self.timestamp);
        rlp::encode_bytes(&mut h, self.extra_data);
        rlp::encode_bytes(&mut h, self.prev_randao.as_slice());
        rlp::encode_bytes(&mut h, &[0u8; 8]);
        rlp::encode_u256(&mut h, &self.base_fee_per_gas);
        rlp::encode_bytes(&mut h, self.withdrawals_root.as_slice());
        rlp::encode_u64(&mut h, self.blob_gas_used);
        rlp::encode_u64(&mut h, self.excess_blob_gas);
        rlp::encode_bytes(&mut h, self.parent_beacon_block_root.as_slice());
        rlp::encode_bytes(&mut h, self.requests_hash.as_slice());
        if let Some((block_access_list_hash, slot_number)) = self.amsterdam {
            rlp::encode_bytes(&mut h, block_access_list_hash.as_slice());
            rlp::encode_u64(&mut h, slot_number);
        }
        keccak256(rlp::list(&h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::B256;

    fn entries(pairs: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn empty_constants_are_the_hashes_they_name() {
        assert_eq!(keccak256([0x80]), EMPTY_TRIE_ROOT);
        assert_eq!(keccak256([0xc0]), EMPTY_OMMERS_HASH);
        assert_eq!(ordered_trie_root(std::iter::empty()), EMPTY_TRIE_ROOT);
    }

    /// The `trieanyorder` vectors of ethereum/tests (also in go-ethereum's trie tests).
    #[test]
    fn trie_roots_match_the_ethereum_tests_vectors() {
        let root = |pairs: &[(&str, &str)]| trie_root(&entries(pairs));
        assert_eq!(
            root(&[("A", &"a".repeat(50))]),
            "0xd23786fb4a010da3ce639d66d5e904a11dbc02746d1ce25029e53290cabf28ab"
                .parse::<B256>()
                .expect("hex")
        );
        assert_eq!(
            root(&[
                ("doe", "reindeer"),
                ("dog", "puppy"),
                ("dogglesworth", "cat")
            ]),
            "0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3"
                .parse::<B256>()
                .expect("hex")
        );
        assert_eq!(
            root(&[
                ("do", "verb"),
                ("horse", "stallion"),
                ("doge", "coin"),
                ("dog", "puppy")
            ]),
            "0x5991bb8c6514148a29db676a14ac506cd2cd5775ace63c30a4fe457715e9ac84"
                .parse::<B256>()
                .expect("hex")
        );
    }

    /// Mainnet's genesis header (pre-London, 15 fields) hashes to the well-known genesis hash:
    /// checks the RLP and keccak the block hash is built from.
    #[test]
    fn mainnet_genesis_header_hashes_to_the_genesis_hash() {
        let hex32 = |s: &str| s.parse::<B256>().expect("hex");
        let mut h = Vec::new();
        rlp::encode_bytes(&mut h, B256::ZERO.as_slice());
        rlp::encode_bytes(&mut h, EMPTY_OMMERS_HASH.as_slice());
        rlp::encode_bytes(&mut h, &[0u8; 20]);
        rlp::encode_bytes(
            &mut h,
            hex32("0xd7f8974fb5ac78d9ac099b9ad5018bedc2ce0a72dad1827a1709da30580f0544").as_slice(),
        );
        rlp::encode_bytes(&mut h, EMPTY_TRIE_ROOT.as_slice());
        rlp::encode_bytes(&mut h, EMPTY_TRIE_ROOT.as_slice());
        rlp::encode_bytes(&mut h, &[0u8; 256]);
        rlp::encode_u64(&mut h, 0x4_0000_0000);
        rlp::encode_u64(&mut h, 0);
        rlp::encode_u64(&mut h, 5000);
        rlp::encode_u64(&mut h, 0);
        rlp::encode_u64(&mut h, 0);
        rlp::encode_bytes(
            &mut h,
            hex32("0x11bbe8db4e347b4e8c937c1c8370e4b5ed33adb3db69cbdb7a38e1e50b1b82fa").as_slice(),
        );
        rlp::encode_bytes(&mut h, B256::ZERO.as_slice());
        rlp::encode_bytes(&mut h, &[0, 0, 0, 0, 0, 0, 0, 0x42]);
        assert_eq!(
            keccak256(rlp::list(&h)),
            hex32("0xd4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3")
        );
    }

    /// EIP-7928: the hash of the empty block access list `rlp([])` is the constant the EIP
    /// names (the same as the empty ommers hash).
    #[test]
    fn empty_block_access_list_hash_is_the_eips_constant() {
        assert_eq!(
            keccak256(EMPTY_BLOCK_ACCESS_LIST),
            "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347"
                .parse::<B256>()
                .expect("hex")
        );
    }

    #[test]
    fn requests_hash_of_no_requests_is_sha256_of_nothing() {
        assert_eq!(
            requests_hash(&[]),
            "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
                .parse::<B256>()
                .expect("hex")
        );
    }
}
