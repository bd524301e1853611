#!/usr/bin/env python3
"""Independent transcription of the spec's `compute_subscribed_subnets` (phase0/p2p-interface.md)
with hashlib, used to produce the expected values in networking/src/subnets.rs tests.

Mainnet preset/config: SHUFFLE_ROUND_COUNT = 90, ATTESTATION_SUBNET_COUNT = 64,
ATTESTATION_SUBNET_EXTRA_BITS = 0, EPOCHS_PER_SUBNET_SUBSCRIPTION = 256, SUBNETS_PER_NODE = 2.
"""
import hashlib

SHUFFLE_ROUND_COUNT = 90
ATTESTATION_SUBNET_COUNT = 64
ATTESTATION_SUBNET_EXTRA_BITS = 0
EPOCHS_PER_SUBNET_SUBSCRIPTION = 256
SUBNETS_PER_NODE = 2
NODE_ID_BITS = 256


def h(b):
    return hashlib.sha256(b).digest()


def ceillog2(x):
    return (x - 1).bit_length()


def compute_shuffled_index(index, index_count, seed):
    assert index < index_count
    for current_round in range(SHUFFLE_ROUND_COUNT):
        pivot = int.from_bytes(h(seed + bytes([current_round]))[0:8], "little") % index_count
        flip = (pivot + index_count - index) % index_count
        position = max(index, flip)
        source = h(seed + bytes([current_round]) + (position // 256).to_bytes(4, "little"))
        byte = source[(position % 256) // 8]
        bit = (byte >> (position % 8)) % 2
        index = flip if bit else index
    return index


def compute_subscribed_subnet(node_id, epoch, index):
    prefix_bits = ceillog2(ATTESTATION_SUBNET_COUNT) + ATTESTATION_SUBNET_EXTRA_BITS
    node_id_prefix = node_id >> (NODE_ID_BITS - prefix_bits)
    node_offset = node_id % EPOCHS_PER_SUBNET_SUBSCRIPTION
    seed = h(((epoch + node_offset) // EPOCHS_PER_SUBNET_SUBSCRIPTION).to_bytes(8, "little"))
    permutated_prefix = compute_shuffled_index(node_id_prefix, 1 << prefix_bits, seed)
    return (permutated_prefix + index) % ATTESTATION_SUBNET_COUNT


def compute_subscribed_subnets(node_id, epoch):
    return [compute_subscribed_subnet(node_id, epoch, i) for i in range(SUBNETS_PER_NODE)]


if __name__ == "__main__":
    ids = [
        0,
        1,
        2**256 - 1,
        int.from_bytes(bytes(range(32)), "big"),
        int.from_bytes(hashlib.sha256(b"arbor").digest(), "big"),
        int.from_bytes(hashlib.sha256(b"node").digest(), "big"),
    ]
    for node_id in ids:
        for epoch in [0, 255, 256, 100_000]:
            print(f'    ("{node_id:x}", {epoch}, {compute_subscribed_subnets(node_id, epoch)}),')
