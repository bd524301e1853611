//! Subnet mathematics of the consensus p2p spec: attestation, sync-committee and data-column
//! subnets, custody groups.
//!
//! Every function here is pure: it reads the [`ChainSpec`] (runtime config) and the preset
//! ([`EthSpec`]) and nothing else, so the swarm, the peer manager and the chain can all call it.
//! Node ids are the spec's `NodeID = uint256`: the 32 raw bytes of a discv5 node id read as a
//! big-endian integer ([`node_id_from_raw`]).
//!
//! [spec]: phase0/p2p-interface.md#attestation-subnet-subscription,
//! altair/validator.md#sync-committee-subnet-stability, fulu/das-core.md#custody-setting,
//! fulu/p2p-interface.md#compute_subnet_for_data_column_sidecar

use std::collections::BTreeSet;

use crate::{
    ChainSpec, ColumnIndex, CommitteeIndex, CustodyIndex, Epoch, EthSpec, Gwei, Slot, SubnetId,
    U256,
};
use ssz_types::typenum::Unsigned;
use swap_or_not_shuffle::compute_shuffled_index;

/// `NODE_ID_BITS`: the width of a discv5 node id.
///
/// [spec]: phase0/p2p-interface.md#constants
pub const NODE_ID_BITS: u64 = 256;

/// `SYNC_COMMITTEE_SUBNET_COUNT`: a constant of the Altair validator spec, not a config value.
///
/// [spec]: altair/validator.md#constants
pub const SYNC_COMMITTEE_SUBNET_COUNT: u64 = 4;

/// A node id as the spec's `uint256`.
pub type NodeId = U256;

/// Why a subnet computation has no answer for its input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubnetError {
    /// `get_custody_groups` asked for more groups than exist.
    #[error("custody group count {count} exceeds NUMBER_OF_CUSTODY_GROUPS = {max}")]
    TooManyCustodyGroups {
        /// The requested `custody_group_count`.
        count: u64,
        /// `NUMBER_OF_CUSTODY_GROUPS`.
        max: u64,
    },
    /// A custody group index at or past `NUMBER_OF_CUSTODY_GROUPS`.
    #[error("custody group {group} is out of range (NUMBER_OF_CUSTODY_GROUPS = {max})")]
    CustodyGroupOutOfRange {
        /// The group.
        group: CustodyIndex,
        /// `NUMBER_OF_CUSTODY_GROUPS`.
        max: u64,
    },
    /// A config value the formula divides by, or shifts by, is unusable.
    #[error("config value {name} = {value} cannot be used for subnet computation")]
    BadConfig {
        /// The config key.
        name: &'static str,
        /// Its value.
        value: u64,
    },
    /// An epoch so close to `2**64` that the spec's `uint64` arithmetic overflows.
    #[error("epoch {0} overflows the subnet rotation arithmetic")]
    EpochOverflow(Epoch),
    /// A position in the sync committee at or past `SYNC_COMMITTEE_SIZE`.
    #[error("sync committee position {index} is out of range (SYNC_COMMITTEE_SIZE = {size})")]
    SyncCommitteeIndexOutOfRange {
        /// The position.
        index: u64,
        /// `SYNC_COMMITTEE_SIZE`.
        size: u64,
    },
}

/// The spec's `NodeID` of a raw discv5 node id (32 bytes, big-endian).
pub fn node_id_from_raw(raw: &[u8; 32]) -> NodeId {
    U256::from_be_bytes(*raw)
}

fn hash(bytes: &[u8]) -> [u8; 32] {
    ethereum_hashing::hash_fixed(bytes)
}

fn bytes_to_uint64(bytes: &[u8; 32]) -> u64 {
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(first)
}

// ---------------------------------------------------------------------------------------------
// Attestation subnets
// ---------------------------------------------------------------------------------------------

/// The subnet an attestation of `committee_index` at `slot` is gossiped on.
///
/// [spec]: phase0/validator.md#broadcast-attestation
pub fn compute_subnet_for_attestation<E: EthSpec>(
    spec: &ChainSpec,
    committees_per_slot: u64,
    slot: Slot,
    committee_index: CommitteeIndex,
) -> Result<SubnetId, SubnetError> {
    let subnet_count = nonzero("ATTESTATION_SUBNET_COUNT", spec.attestation_subnet_count)?;
    let slots_since_epoch_start = slot % E::slots_per_epoch();
    // Computed modulo the subnet count so that no value the spec accepts can overflow here.
    let committees_since_epoch_start = (u128::from(committees_per_slot)
        * u128::from(slots_since_epoch_start))
        % u128::from(subnet_count);
    let subnet =
        (committees_since_epoch_start + u128::from(committee_index)) % u128::from(subnet_count);
    Ok(subnet as u64)
}

/// The `index`-th long-lived attestation subnet a node subscribes to at `epoch`.
///
/// [spec]: phase0/p2p-interface.md#attestation-subnet-subscription
pub fn compute_subscribed_subnet<E: EthSpec>(
    spec: &ChainSpec,
    node_id: NodeId,
    epoch: Epoch,
    index: u64,
) -> Result<SubnetId, SubnetError> {
    let subnet_count = nonzero("ATTESTATION_SUBNET_COUNT", spec.attestation_subnet_count)?;
    let prefix_bits = spec.attestation_subnet_prefix_bits;
    // `1 << prefix_bits` must be a list length `compute_shuffled_index` accepts (at most 2**40).
    if prefix_bits > 40 {
        return Err(SubnetError::BadConfig {
            name: "ATTESTATION_SUBNET_PREFIX_BITS",
            value: prefix_bits,
        });
    }
    let node_id_prefix: u64 = if prefix_bits == 0 {
        0
    } else {
        (node_id >> (NODE_ID_BITS - prefix_bits) as usize).to::<u64>()
    };
    let period = subscription_period(spec, node_id, epoch)?;
    let permutation_seed = hash(&period.to_le_bytes());
    let index_count = 1usize << prefix_bits;
    let permutated_prefix = compute_shuffled_index(
        node_id_prefix as usize,
        index_count,
        &permutation_seed,
        E::SHUFFLE_ROUND_COUNT,
    )
    .ok_or(SubnetError::BadConfig {
        name: "ATTESTATION_SUBNET_PREFIX_BITS",
        value: prefix_bits,
    })? as u64;
    let subnet = (u128::from(permutated_prefix) + u128::from(index)) % u128::from(subnet_count);
    Ok(subnet as u64)
}

/// The `SUBNETS_PER_NODE` long-lived attestation subnets a node subscribes to at `epoch`, in the
/// spec's order.
///
/// [spec]: phase0/p2p-interface.md#attestation-subnet-subscription
pub fn compute_subscribed_subnets<E: EthSpec>(
    spec: &ChainSpec,
    node_id: NodeId,
    epoch: Epoch,
) -> Result<Vec<SubnetId>, SubnetError> {
    (0..spec.subnets_per_node)
        .map(|index| compute_subscribed_subnet::<E>(spec, node_id, epoch, index))
        .collect()
}

/// `(epoch + node_offset) // EPOCHS_PER_SUBNET_SUBSCRIPTION`: the subscription period a node is
/// in at `epoch`; its long-lived subnets change exactly when this does.
fn subscription_period(
    spec: &ChainSpec,
    node_id: NodeId,
    epoch: Epoch,
) -> Result<u64, SubnetError> {
    let epochs_per_subscription = nonzero(
        "EPOCHS_PER_SUBNET_SUBSCRIPTION",
        spec.epochs_per_subnet_subscription,
    )?;
    let node_offset = (node_id % U256::from(epochs_per_subscription)).to::<u64>();
    let shifted = epoch
        .checked_add(node_offset)
        .ok_or(SubnetError::EpochOverflow(epoch))?;
    Ok(shifted / epochs_per_subscription)
}

/// The first epoch after `epoch` at which the node's long-lived attestation subnets are
/// recomputed (a new subscription period begins). The node should hold its current subnets until
/// then.
///
/// [spec]: phase0/p2p-interface.md#attestation-subnet-subscription
pub fn next_subnet_rotation_epoch(
    spec: &ChainSpec,
    node_id: NodeId,
    epoch: Epoch,
) -> Result<Epoch, SubnetError> {
    let epochs_per_subscription = nonzero(
        "EPOCHS_PER_SUBNET_SUBSCRIPTION",
        spec.epochs_per_subnet_subscription,
    )?;
    let period = subscription_period(spec, node_id, epoch)?;
    let node_offset = (node_id % U256::from(epochs_per_subscription)).to::<u64>();
    // The first epoch `e` with `(e + node_offset) // EPOCHS_PER_SUBNET_SUBSCRIPTION == period + 1`.
    (period + 1)
        .checked_mul(epochs_per_subscription)
        .and_then(|start| start.checked_sub(node_offset))
        .ok_or(SubnetError::EpochOverflow(epoch))
}

// ---------------------------------------------------------------------------------------------
// Sync committee subnets
// ---------------------------------------------------------------------------------------------

/// The sync committee subnet of the member at `index_in_sync_committee` (its position in
/// `sync_committee.pubkeys`).
///
/// [spec]: altair/validator.md#broadcast-sync-committee-message
pub fn compute_subnet_for_sync_committee_index<E: EthSpec>(
    index_in_sync_committee: u64,
) -> Result<SubnetId, SubnetError> {
    let size = E::SyncCommitteeSize::to_u64();
    if index_in_sync_committee >= size {
        return Err(SubnetError::SyncCommitteeIndexOutOfRange {
            index: index_in_sync_committee,
            size,
        });
    }
    Ok(index_in_sync_committee / E::SyncSubcommitteeSize::to_u64())
}

/// `compute_subnets_for_sync_committee` for a validator whose pubkey sits at the positions
/// `indices_in_sync_committee` of the sync committee that applies at the next slot; the caller
/// finds those positions in the state.
///
/// [spec]: altair/validator.md#broadcast-sync-committee-message
pub fn compute_subnets_for_sync_committee<E: EthSpec>(
    indices_in_sync_committee: impl IntoIterator<Item = u64>,
) -> Result<BTreeSet<SubnetId>, SubnetError> {
    indices_in_sync_committee
        .into_iter()
        .map(compute_subnet_for_sync_committee_index::<E>)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Data columns and custody (Fulu)
// ---------------------------------------------------------------------------------------------

/// The custody groups of a node that custodies `custody_group_count` groups, sorted.
///
/// [spec]: fulu/das-core.md#get_custody_groups
pub fn get_custody_groups(
    spec: &ChainSpec,
    node_id: NodeId,
    custody_group_count: u64,
) -> Result<Vec<CustodyIndex>, SubnetError> {
    let group_count = nonzero("NUMBER_OF_CUSTODY_GROUPS", spec.number_of_custody_groups)?;
    if custody_group_count > group_count {
        return Err(SubnetError::TooManyCustodyGroups {
            count: custody_group_count,
            max: group_count,
        });
    }
    if custody_group_count == group_count {
        return Ok((0..group_count).collect());
    }

    // Membership by a bitmap over the groups keeps the loop linear in the hashes it takes; the
    // count is below `NUMBER_OF_CUSTODY_GROUPS` here, so the loop ends.
    let mut taken = vec![false; group_count as usize];
    let mut groups = Vec::with_capacity(custody_group_count as usize);
    let mut current_id = node_id;
    while (groups.len() as u64) < custody_group_count {
        let digest = hash(&current_id.to_le_bytes::<32>());
        let group = bytes_to_uint64(&digest) % group_count;
        if let Some(slot) = taken.get_mut(group as usize)
            && !*slot
        {
            *slot = true;
            groups.push(group);
        }
        // `UINT256_MAX` wraps to 0, as the spec's overflow guard does.
        current_id = current_id.wrapping_add(U256::from(1u8));
    }
    groups.sort_unstable();
    Ok(groups)
}

/// The columns of custody group `custody_group`, ascending.
///
/// [spec]: fulu/das-core.md#compute_columns_for_custody_group
pub fn compute_columns_for_custody_group<E: EthSpec>(
    spec: &ChainSpec,
    custody_group: CustodyIndex,
) -> Result<Vec<ColumnIndex>, SubnetError> {
    let group_count = nonzero("NUMBER_OF_CUSTODY_GROUPS", spec.number_of_custody_groups)?;
    if custody_group >= group_count {
        return Err(SubnetError::CustodyGroupOutOfRange {
            group: custody_group,
            max: group_count,
        });
    }
    let columns_per_group = E::NumberOfColumns::to_u64() / group_count;
    Ok((0..columns_per_group)
        .map(|i| group_count * i + custody_group)
        .collect())
}

/// Every column a node with `custody_group_count` groups custodies, ascending: the union of
/// [`compute_columns_for_custody_group`] over [`get_custody_groups`].
///
/// [spec]: fulu/das-core.md#custody-sampling
pub fn get_custody_columns<E: EthSpec>(
    spec: &ChainSpec,
    node_id: NodeId,
    custody_group_count: u64,
) -> Result<Vec<ColumnIndex>, SubnetError> {
    let mut columns = Vec::new();
    for group in get_custody_groups(spec, node_id, custody_group_count)? {
        columns.extend(compute_columns_for_custody_group::<E>(spec, group)?);
    }
    columns.sort_unstable();
    Ok(columns)
}

/// The subnet a data column sidecar of column `column_index` is gossiped on.
///
/// [spec]: fulu/p2p-interface.md#compute_subnet_for_data_column_sidecar
pub fn compute_subnet_for_data_column_sidecar(
    spec: &ChainSpec,
    column_index: ColumnIndex,
) -> Result<SubnetId, SubnetError> {
    let subnet_count = nonzero(
        "DATA_COLUMN_SIDECAR_SUBNET_COUNT",
        spec.data_column_sidecar_subnet_count,
    )?;
    Ok(column_index % subnet_count)
}

/// The `data_column_sidecar_{subnet_id}` subnets a node with `custody_group_count` groups joins:
/// those of its custody columns.
///
/// [spec]: fulu/p2p-interface.md#data_column_sidecar_subnet_id
pub fn compute_data_column_subnets<E: EthSpec>(
    spec: &ChainSpec,
    node_id: NodeId,
    custody_group_count: u64,
) -> Result<BTreeSet<SubnetId>, SubnetError> {
    get_custody_columns::<E>(spec, node_id, custody_group_count)?
        .into_iter()
        .map(|column| compute_subnet_for_data_column_sidecar(spec, column))
        .collect()
}

/// The custody group count a node attached to validators with a total effective balance of
/// `total_node_balance` must advertise (before taking the maximum with `CUSTODY_REQUIREMENT`).
///
/// [spec]: fulu/validator.md#validator-custody
pub fn get_validators_custody_requirement(spec: &ChainSpec, total_node_balance: Gwei) -> u64 {
    let count = total_node_balance
        .checked_div(spec.balance_per_additional_custody_group)
        .unwrap_or(0);
    count
        .max(spec.validator_custody_requirement)
        .min(spec.number_of_custody_groups)
}

/// The subnet of a blob sidecar of `blob_index` under Deneb (`electra == false`) or Electra
/// (`BLOB_SIDECAR_SUBNET_COUNT_ELECTRA`) rules.
///
/// [spec]: deneb/validator.md#sidecar, electra/validator.md#sidecar
pub fn compute_subnet_for_blob_sidecar(
    spec: &ChainSpec,
    blob_index: u64,
    electra: bool,
) -> Result<SubnetId, SubnetError> {
    let (name, count) = if electra {
        (
            "BLOB_SIDECAR_SUBNET_COUNT_ELECTRA",
            spec.blob_sidecar_subnet_count_electra,
        )
    } else {
        ("BLOB_SIDECAR_SUBNET_COUNT", spec.blob_sidecar_subnet_count)
    };
    Ok(blob_index % nonzero(name, count)?)
}

fn nonzero(name: &'static str, value: u64) -> Result<u64, SubnetError> {
    if value == 0 {
        Err(SubnetError::BadConfig { name, value })
    } else {
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MainnetEthSpec, MinimalEthSpec};

    fn mainnet() -> ChainSpec {
        ChainSpec::mainnet()
    }

    fn node(n: u64) -> NodeId {
        U256::from(n)
    }

    #[test]
    fn node_id_reads_raw_bytes_big_endian() {
        let mut raw = [0u8; 32];
        raw[31] = 1;
        assert_eq!(node_id_from_raw(&raw), U256::from(1u8));
        raw[0] = 0x80;
        assert_eq!(node_id_from_raw(&raw) >> 255usize, U256::from(1u8));
    }

    #[test]
    fn custody_groups_of_a_short_node_id_match_the_spec_vector() {
        // minimal/fulu/networking/get_custody_groups/pyspec_tests/get_custody_groups_short_node_id
        let groups = get_custody_groups(&ChainSpec::minimal(), node(1_048_576), 1).unwrap();
        assert_eq!(groups, [65]);
    }

    #[test]
    fn custody_groups_of_max_node_id_wrap_around_to_zero() {
        // UINT256_MAX and UINT256_MAX - 1 take the same groups: both walk through 0 after the top.
        let spec = mainnet();
        let top = get_custody_groups(&spec, U256::MAX, 4).unwrap();
        let below = get_custody_groups(&spec, U256::MAX - U256::from(1u8), 4).unwrap();
        assert_eq!(top, [1, 47, 87, 102]);
        assert_eq!(top, below);
    }

    #[test]
    fn custody_groups_are_sorted_distinct_and_nested() {
        let spec = mainnet();
        let id = U256::from_be_bytes([0x5a; 32]);
        let mut previous: Vec<u64> = Vec::new();
        for count in 0..=spec.number_of_custody_groups {
            let groups = get_custody_groups(&spec, id, count).unwrap();
            assert_eq!(groups.len() as u64, count);
            assert!(groups.windows(2).all(|w| w[0] < w[1]), "{groups:?}");
            // A node raising its count keeps the groups it had.
            assert!(previous.iter().all(|g| groups.contains(g)));
            previous = groups;
        }
    }

    #[test]
    fn too_many_custody_groups_is_an_error() {
        let spec = mainnet();
        assert_eq!(
            get_custody_groups(&spec, node(7), 129),
            Err(SubnetError::TooManyCustodyGroups {
                count: 129,
                max: 128
            })
        );
    }

    #[test]
    fn columns_for_custody_group_follow_the_stride() {
        let spec = mainnet();
        assert_eq!(
            compute_columns_for_custody_group::<MainnetEthSpec>(&spec, 5).unwrap(),
            [5]
        );
        assert_eq!(
            compute_columns_for_custody_group::<MainnetEthSpec>(&spec, 128),
            Err(SubnetError::CustodyGroupOutOfRange {
                group: 128,
                max: 128
            })
        );
        // With 32 groups over 128 columns each group holds 4 columns, 32 apart.
        let mut spec = mainnet();
        spec.number_of_custody_groups = 32;
        assert_eq!(
            compute_columns_for_custody_group::<MainnetEthSpec>(&spec, 3).unwrap(),
            [3, 35, 67, 99]
        );
    }

    #[test]
    fn custody_columns_cover_everything_for_a_supernode() {
        let spec = mainnet();
        let columns = get_custody_columns::<MainnetEthSpec>(&spec, node(99), 128).unwrap();
        assert_eq!(columns, (0..128).collect::<Vec<_>>());
        let subnets = compute_data_column_subnets::<MainnetEthSpec>(&spec, node(99), 128).unwrap();
        assert_eq!(subnets.len(), 128);
    }

    #[test]
    fn custody_columns_with_grouped_columns_are_sorted_unions() {
        let mut spec = mainnet();
        spec.number_of_custody_groups = 64;
        let id = node(123_456);
        let groups = get_custody_groups(&spec, id, 4).unwrap();
        let columns = get_custody_columns::<MainnetEthSpec>(&spec, id, 4).unwrap();
        assert_eq!(columns.len(), 8);
        assert!(columns.windows(2).all(|w| w[0] < w[1]));
        for group in groups {
            assert!(columns.contains(&group) && columns.contains(&(group + 64)));
        }
    }

    #[test]
    fn data_column_subnet_is_the_column_modulo_the_subnet_count() {
        let mut spec = mainnet();
        assert_eq!(
            compute_subnet_for_data_column_sidecar(&spec, 127).unwrap(),
            127
        );
        spec.data_column_sidecar_subnet_count = 32;
        assert_eq!(
            compute_subnet_for_data_column_sidecar(&spec, 127).unwrap(),
            31
        );
        assert_eq!(
            compute_subnet_for_data_column_sidecar(&spec, 32).unwrap(),
            0
        );
        spec.data_column_sidecar_subnet_count = 0;
        assert!(matches!(
            compute_subnet_for_data_column_sidecar(&spec, 1),
            Err(SubnetError::BadConfig { .. })
        ));
    }

    #[test]
    fn attestation_subnet_counts_committees_since_epoch_start() {
        let spec = mainnet();
        // Slot 33 is the second slot of epoch 1: 4 committees per slot puts committee 2 at 4 + 2.
        assert_eq!(
            compute_subnet_for_attestation::<MainnetEthSpec>(&spec, 4, 33, 2).unwrap(),
            6
        );
        // 64 committees per slot: the last slot of an epoch wraps around the 64 subnets.
        assert_eq!(
            compute_subnet_for_attestation::<MainnetEthSpec>(&spec, 64, 31, 63).unwrap(),
            63
        );
        // Minimal has 8 slots per epoch: slot 9 is the second slot.
        assert_eq!(
            compute_subnet_for_attestation::<MinimalEthSpec>(&spec, 3, 9, 1).unwrap(),
            4
        );
        // Extreme values the spec's uint64 holds do not overflow.
        assert!(
            compute_subnet_for_attestation::<MainnetEthSpec>(&spec, u64::MAX, 31, u64::MAX).is_ok()
        );
    }

    /// Values from an independent Python transcription of the spec's
    /// `compute_subscribed_subnets` (hashlib SHA-256 and the spec's `compute_shuffled_index`),
    /// mainnet preset and config; the script is `networking/interop/reference/subscribed_subnets.py`.
    #[test]
    fn subscribed_subnets_match_a_python_reference() {
        let spec = mainnet();
        for (id_hex, epoch, expected) in SUBSCRIBED_SUBNET_VECTORS {
            let id = U256::from_str_radix(id_hex, 16).unwrap();
            let subnets = compute_subscribed_subnets::<MainnetEthSpec>(&spec, id, *epoch).unwrap();
            assert_eq!(&subnets, expected, "node {id_hex} epoch {epoch}");
        }
    }

    const SUBSCRIBED_SUBNET_VECTORS: &[(&str, u64, [u64; 2])] = &[
        ("0", 0, [49, 50]),
        ("0", 255, [49, 50]),
        ("0", 256, [16, 17]),
        ("0", 100000, [35, 36]),
        ("1", 0, [49, 50]),
        ("1", 255, [16, 17]),
        ("1", 256, [16, 17]),
        ("1", 100000, [35, 36]),
        (
            "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
            0,
            [57, 58],
        ),
        (
            "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
            255,
            [55, 56],
        ),
        (
            "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
            256,
            [55, 56],
        ),
        (
            "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
            100000,
            [25, 26],
        ),
        (
            "102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            0,
            [49, 50],
        ),
        (
            "102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            255,
            [16, 17],
        ),
        (
            "102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            256,
            [16, 17],
        ),
        (
            "102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            100000,
            [35, 36],
        ),
        (
            "b86c24fb6243540aa4b0c30411c3c3f521dcbaf597a61c4360382beae152acdb",
            0,
            [47, 48],
        ),
        (
            "b86c24fb6243540aa4b0c30411c3c3f521dcbaf597a61c4360382beae152acdb",
            255,
            [41, 42],
        ),
        (
            "b86c24fb6243540aa4b0c30411c3c3f521dcbaf597a61c4360382beae152acdb",
            256,
            [41, 42],
        ),
        (
            "b86c24fb6243540aa4b0c30411c3c3f521dcbaf597a61c4360382beae152acdb",
            100000,
            [51, 52],
        ),
        (
            "545ea538461003efdc8c81c244531b003f6f26cfccf6c0073b3239fdedf49446",
            0,
            [52, 53],
        ),
        (
            "545ea538461003efdc8c81c244531b003f6f26cfccf6c0073b3239fdedf49446",
            255,
            [23, 24],
        ),
        (
            "545ea538461003efdc8c81c244531b003f6f26cfccf6c0073b3239fdedf49446",
            256,
            [23, 24],
        ),
        (
            "545ea538461003efdc8c81c244531b003f6f26cfccf6c0073b3239fdedf49446",
            100000,
            [9, 10],
        ),
    ];

    #[test]
    fn subscribed_subnets_are_consecutive_and_stable_within_a_period() {
        let spec = mainnet();
        let id = U256::from_be_bytes([0xc3; 32]);
        let epoch = 10_000;
        let subnets = compute_subscribed_subnets::<MainnetEthSpec>(&spec, id, epoch).unwrap();
        assert_eq!(subnets.len(), 2);
        assert_eq!(subnets[1], (subnets[0] + 1) % 64);
        let next = next_subnet_rotation_epoch(&spec, id, epoch).unwrap();
        assert!(next > epoch && next <= epoch + spec.epochs_per_subnet_subscription);
        for e in [epoch, next - 1] {
            assert_eq!(
                compute_subscribed_subnets::<MainnetEthSpec>(&spec, id, e).unwrap(),
                subnets
            );
        }
        // The period changes at `next`, so the seed does.
        assert_ne!(
            subscription_period(&spec, id, next).unwrap(),
            subscription_period(&spec, id, next - 1).unwrap()
        );
    }

    #[test]
    fn subscribed_subnet_rejects_overflowing_epochs() {
        let spec = mainnet();
        // node_offset = 255 for this id (its low byte), so the spec's uint64 sum overflows.
        let id = U256::from(255u64);
        assert_eq!(
            compute_subscribed_subnet::<MainnetEthSpec>(&spec, id, u64::MAX, 0),
            Err(SubnetError::EpochOverflow(u64::MAX))
        );
    }

    #[test]
    fn sync_subnets_split_the_committee_in_four() {
        // Mainnet: 512 members, 128 per subnet.
        assert_eq!(
            compute_subnet_for_sync_committee_index::<MainnetEthSpec>(0).unwrap(),
            0
        );
        assert_eq!(
            compute_subnet_for_sync_committee_index::<MainnetEthSpec>(127).unwrap(),
            0
        );
        assert_eq!(
            compute_subnet_for_sync_committee_index::<MainnetEthSpec>(128).unwrap(),
            1
        );
        assert_eq!(
            compute_subnet_for_sync_committee_index::<MainnetEthSpec>(511).unwrap(),
            3
        );
        assert_eq!(
            compute_subnet_for_sync_committee_index::<MainnetEthSpec>(512),
            Err(SubnetError::SyncCommitteeIndexOutOfRange {
                index: 512,
                size: 512
            })
        );
        // Minimal: 32 members, 8 per subnet; a validator may sit in the committee twice.
        let subnets = compute_subnets_for_sync_committee::<MinimalEthSpec>([3, 9, 31, 30]).unwrap();
        assert_eq!(subnets.into_iter().collect::<Vec<_>>(), [0, 1, 3]);
    }

    #[test]
    fn validators_custody_requirement_is_clamped() {
        let spec = mainnet();
        let eth = 1_000_000_000u64;
        assert_eq!(get_validators_custody_requirement(&spec, 0), 8);
        assert_eq!(get_validators_custody_requirement(&spec, 32 * eth * 9), 9);
        assert_eq!(
            get_validators_custody_requirement(&spec, 32 * eth * 9 + 1),
            9
        );
        assert_eq!(get_validators_custody_requirement(&spec, u64::MAX), 128);
    }

    #[test]
    fn blob_sidecar_subnets_per_fork() {
        let spec = mainnet();
        assert_eq!(compute_subnet_for_blob_sidecar(&spec, 7, false).unwrap(), 1);
        assert_eq!(compute_subnet_for_blob_sidecar(&spec, 7, true).unwrap(), 7);
        assert_eq!(compute_subnet_for_blob_sidecar(&spec, 9, true).unwrap(), 0);
    }
}
