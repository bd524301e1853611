//! Upgrading light-client data of earlier forks to the latest format, so that one store
//! processes data of every fork since Altair.
//!
//! [spec]: capella/light-client/fork.md, deneb/light-client/fork.md, electra/light-client/fork.md

use ssz_types::FixedVector;
use ssz_types::typenum::Unsigned;
use types::merkle_proof::floorlog2;
use types::{EthSpec, Root, altair, capella, deneb};

use crate::sync_protocol::{
    CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA, FINALIZED_ROOT_GINDEX_ELECTRA,
    NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA, empty_execution_payload_header,
};
use crate::{Bootstrap, FinalityUpdate, Header, LightClientError, OptimisticUpdate, Update};

/// `normalize_merkle_branch(branch, gindex)`: `branch` padded at the front with zero nodes to
/// the depth of `gindex` (a branch of a shallower tree, checked against a deeper one).
///
/// [spec]: electra/light-client/fork.md#normalize_merkle_branch
pub fn normalize_merkle_branch<N: Unsigned>(
    branch: &[Root],
    gindex: u64,
) -> Result<FixedVector<Root, N>, LightClientError> {
    let depth = floorlog2(gindex) as usize;
    let num_extra = depth.saturating_sub(branch.len());
    let mut nodes = vec![Root::ZERO; num_extra];
    nodes.extend_from_slice(branch);
    fixed(nodes)
}

/// `nodes` as a fixed vector of its type's length.
pub(crate) fn fixed<N: Unsigned>(
    nodes: Vec<Root>,
) -> Result<FixedVector<Root, N>, LightClientError> {
    let got = nodes.len();
    FixedVector::new(nodes).map_err(|_| LightClientError::BranchLength {
        expected: N::to_usize(),
        got,
    })
}

/// `upgrade_lc_header_to_capella(pre)`: an Altair header with empty execution data.
///
/// [spec]: capella/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_header_to_capella<E: EthSpec>(
    pre: &altair::LightClientHeader,
) -> capella::LightClientHeader<E> {
    let empty = empty_execution_payload_header::<E>();
    capella::LightClientHeader {
        beacon: pre.beacon.clone(),
        execution: capella::ExecutionPayloadHeader {
            parent_hash: empty.parent_hash,
            fee_recipient: empty.fee_recipient,
            state_root: empty.state_root,
            receipts_root: empty.receipts_root,
            logs_bloom: empty.logs_bloom,
            prev_randao: empty.prev_randao,
            block_number: 0,
            gas_limit: 0,
            gas_used: 0,
            timestamp: 0,
            extra_data: empty.extra_data,
            base_fee_per_gas: empty.base_fee_per_gas,
            block_hash: empty.block_hash,
            transactions_root: Root::ZERO,
            withdrawals_root: Root::ZERO,
        },
        execution_branch: FixedVector::from_elem(Root::ZERO),
    }
}

/// `upgrade_lc_header_to_deneb(pre)`: the Capella execution header with zero blob gas.
///
/// [spec]: deneb/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_header_to_deneb<E: EthSpec>(
    pre: &capella::LightClientHeader<E>,
) -> deneb::LightClientHeader<E> {
    let e = &pre.execution;
    deneb::LightClientHeader {
        beacon: pre.beacon.clone(),
        execution: deneb::ExecutionPayloadHeader {
            parent_hash: e.parent_hash,
            fee_recipient: e.fee_recipient,
            state_root: e.state_root,
            receipts_root: e.receipts_root,
            logs_bloom: e.logs_bloom.clone(),
            prev_randao: e.prev_randao,
            block_number: e.block_number,
            gas_limit: e.gas_limit,
            gas_used: e.gas_used,
            timestamp: e.timestamp,
            extra_data: e.extra_data.clone(),
            base_fee_per_gas: e.base_fee_per_gas,
            block_hash: e.block_hash,
            transactions_root: e.transactions_root,
            withdrawals_root: e.withdrawals_root,
            blob_gas_used: 0,
            excess_blob_gas: 0,
        },
        execution_branch: pre.execution_branch.clone(),
    }
}

/// Any fork's `LightClientHeader` in the latest format (`upgrade_lc_header_to_*` in turn;
/// Electra's header is Deneb's).
pub fn upgrade_lc_header_to_latest<E: EthSpec>(
    header: &types::LightClientHeader<E>,
) -> Result<Header<E>, LightClientError> {
    Ok(match header {
        types::LightClientHeader::Altair(h) | types::LightClientHeader::Bellatrix(h) => {
            upgrade_lc_header_to_deneb(&upgrade_lc_header_to_capella::<E>(h))
        }
        types::LightClientHeader::Capella(h) => upgrade_lc_header_to_deneb(h),
        types::LightClientHeader::Deneb(h)
        | types::LightClientHeader::Electra(h)
        | types::LightClientHeader::Fulu(h) => h.clone(),
        types::LightClientHeader::Gloas(_) => {
            return Err(LightClientError::UnsupportedFork(types::ForkName::Gloas));
        }
    })
}

/// A header of the given fork's format in the latest format.
macro_rules! latest_header {
    (altair, $h:expr) => {
        upgrade_lc_header_to_deneb(&upgrade_lc_header_to_capella::<E>($h))
    };
    (capella, $h:expr) => {
        upgrade_lc_header_to_deneb($h)
    };
    (deneb, $h:expr) => {
        $h.clone()
    };
}

/// Any fork's `LightClientBootstrap` in the latest format (`upgrade_lc_bootstrap_to_*`).
///
/// [spec]: electra/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_bootstrap_to_latest<E: EthSpec>(
    bootstrap: &types::LightClientBootstrap<E>,
) -> Result<Bootstrap<E>, LightClientError> {
    macro_rules! up {
        ($fmt:ident, $b:expr) => {
            Bootstrap {
                header: latest_header!($fmt, &$b.header),
                current_sync_committee: $b.current_sync_committee.clone(),
                current_sync_committee_branch: normalize_merkle_branch(
                    &$b.current_sync_committee_branch,
                    CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA,
                )?,
            }
        };
    }
    Ok(match bootstrap {
        types::LightClientBootstrap::Altair(b) => up!(altair, b),
        types::LightClientBootstrap::Bellatrix(b) => up!(altair, b),
        types::LightClientBootstrap::Capella(b) => up!(capella, b),
        types::LightClientBootstrap::Deneb(b) => up!(deneb, b),
        types::LightClientBootstrap::Electra(b) | types::LightClientBootstrap::Fulu(b) => b.clone(),
        types::LightClientBootstrap::Gloas(_) => {
            return Err(LightClientError::UnsupportedFork(types::ForkName::Gloas));
        }
    })
}

/// Any fork's `LightClientUpdate` in the latest format (`upgrade_lc_update_to_*`).
///
/// [spec]: electra/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_update_to_latest<E: EthSpec>(
    update: &types::LightClientUpdate<E>,
) -> Result<Update<E>, LightClientError> {
    macro_rules! up {
        ($fmt:ident, $u:expr) => {
            Update {
                attested_header: latest_header!($fmt, &$u.attested_header),
                next_sync_committee: $u.next_sync_committee.clone(),
                next_sync_committee_branch: normalize_merkle_branch(
                    &$u.next_sync_committee_branch,
                    NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA,
                )?,
                finalized_header: latest_header!($fmt, &$u.finalized_header),
                finality_branch: normalize_merkle_branch(
                    &$u.finality_branch,
                    FINALIZED_ROOT_GINDEX_ELECTRA,
                )?,
                sync_aggregate: $u.sync_aggregate.clone(),
                signature_slot: $u.signature_slot,
            }
        };
    }
    Ok(match update {
        types::LightClientUpdate::Altair(u) => up!(altair, u),
        types::LightClientUpdate::Bellatrix(u) => up!(altair, u),
        types::LightClientUpdate::Capella(u) => up!(capella, u),
        types::LightClientUpdate::Deneb(u) => up!(deneb, u),
        types::LightClientUpdate::Electra(u) | types::LightClientUpdate::Fulu(u) => u.clone(),
        types::LightClientUpdate::Gloas(_) => {
            return Err(LightClientError::UnsupportedFork(types::ForkName::Gloas));
        }
    })
}

/// Any fork's `LightClientFinalityUpdate` in the latest format
/// (`upgrade_lc_finality_update_to_*`).
///
/// [spec]: electra/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_finality_update_to_latest<E: EthSpec>(
    update: &types::LightClientFinalityUpdate<E>,
) -> Result<FinalityUpdate<E>, LightClientError> {
    macro_rules! up {
        ($fmt:ident, $u:expr) => {
            FinalityUpdate {
                attested_header: latest_header!($fmt, &$u.attested_header),
                finalized_header: latest_header!($fmt, &$u.finalized_header),
                finality_branch: normalize_merkle_branch(
                    &$u.finality_branch,
                    FINALIZED_ROOT_GINDEX_ELECTRA,
                )?,
                sync_aggregate: $u.sync_aggregate.clone(),
                signature_slot: $u.signature_slot,
            }
        };
    }
    Ok(match update {
        types::LightClientFinalityUpdate::Altair(u) => up!(altair, u),
        types::LightClientFinalityUpdate::Bellatrix(u) => up!(altair, u),
        types::LightClientFinalityUpdate::Capella(u) => up!(capella, u),
        types::LightClientFinalityUpdate::Deneb(u) => up!(deneb, u),
        types::LightClientFinalityUpdate::Electra(u)
        | types::LightClientFinalityUpdate::Fulu(u) => u.clone(),
        types::LightClientFinalityUpdate::Gloas(_) => {
            return Err(LightClientError::UnsupportedFork(types::ForkName::Gloas));
        }
    })
}

/// Any fork's `LightClientOptimisticUpdate` in the latest format
/// (`upgrade_lc_optimistic_update_to_*`).
///
/// [spec]: electra/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_optimistic_update_to_latest<E: EthSpec>(
    update: &types::LightClientOptimisticUpdate<E>,
) -> Result<OptimisticUpdate<E>, LightClientError> {
    macro_rules! up {
        ($fmt:ident, $u:expr) => {
            OptimisticUpdate {
                attested_header: latest_header!($fmt, &$u.attested_header),
                sync_aggregate: $u.sync_aggregate.clone(),
                signature_slot: $u.signature_slot,
            }
        };
    }
    Ok(match update {
        types::LightClientOptimisticUpdate::Altair(u) => up!(altair, u),
        types::LightClientOptimisticUpdate::Bellatrix(u) => up!(altair, u),
        types::LightClientOptimisticUpdate::Capella(u) => up!(capella, u),
        types::LightClientOptimisticUpdate::Deneb(u)
        | types::LightClientOptimisticUpdate::Electra(u)
        | types::LightClientOptimisticUpdate::Fulu(u) => u.clone(),
        types::LightClientOptimisticUpdate::Gloas(_) => {
            return Err(LightClientError::UnsupportedFork(types::ForkName::Gloas));
        }
    })
}
