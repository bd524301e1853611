//! Gloas's light-client changes: a header that carries the execution block hash and its branch
//! instead of the execution payload header (EIP-7732), deeper state branches (EIP-7688), and the
//! upgrade of Electra-format data and stores to the Gloas format.
//!
//! A Gloas-format store processes data of every earlier fork once it is upgraded here; the
//! generalized indices and the signing fork version of a slot past `GLOAS_FORK_EPOCH` are
//! answered by [`crate::sync_protocol`] for either format.
//!
//! [spec]: gloas/light-client/sync-protocol.md, gloas/light-client/fork.md

use ssz_types::FixedVector;
use tree_hash::TreeHash;
use types::merkle_proof::{ProofTree, compute_merkle_proof, floorlog2, get_subtree_index};
use types::{
    BeaconState, ChainSpec, EthSpec, ForkName, GENESIS_SLOT, Root, SignedBeaconBlock, capella,
    electra, gloas, phase0,
};

use crate::LightClientError;
use crate::fork::{
    normalize_merkle_branch, upgrade_lc_bootstrap_to_latest, upgrade_lc_finality_update_to_latest,
    upgrade_lc_optimistic_update_to_latest, upgrade_lc_update_to_latest,
};
use crate::sync_protocol::{
    CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS, EXECUTION_PAYLOAD_GINDEX, FINALIZED_ROOT_GINDEX_GLOAS,
    LightClientStore, NEXT_SYNC_COMMITTEE_GINDEX_GLOAS, capella_execution_payload_header,
    fork_active, gloas_active, is_valid_normalized_merkle_branch,
};

/// `EXECUTION_BLOCK_HASH_GINDEX`: `execution_payload.block_hash` in a Capella `BeaconBlockBody`.
pub const EXECUTION_BLOCK_HASH_GINDEX: u64 = 412;
/// `EXECUTION_BLOCK_HASH_GINDEX_DENEB`: `execution_payload.block_hash` in a Deneb
/// `BeaconBlockBody`.
pub const EXECUTION_BLOCK_HASH_GINDEX_DENEB: u64 = 812;
/// `EXECUTION_BLOCK_HASH_GINDEX_GLOAS`:
/// `signed_execution_payload_bid.message.parent_block_hash` in a Gloas `BeaconBlockBody`.
pub const EXECUTION_BLOCK_HASH_GINDEX_GLOAS: u64 = 2856;
/// `get_generalized_index(capella.ExecutionPayloadHeader, "block_hash")`: field 12 of 15.
const CAPELLA_BLOCK_HASH_GINDEX: u64 = 16 + 12;
/// `get_generalized_index(deneb.ExecutionPayloadHeader, "block_hash")`: field 12 of 17.
const DENEB_BLOCK_HASH_GINDEX: u64 = 32 + 12;

/// The Gloas-format store: a `LightClientStore` of Gloas's updates.
pub type Store<E> = LightClientStore<E, gloas::LightClientUpdate<E>>;

/// `LightClientHeader()` of Gloas: every field zero.
pub fn empty_header() -> gloas::LightClientHeader {
    gloas::LightClientHeader {
        beacon: crate::sync_protocol::empty_beacon_block_header(),
        execution_block_hash: Root::ZERO,
        execution_branch: FixedVector::from_elem(Root::ZERO),
    }
}

/// `compute_merkle_branch_root(leaf, branch, depth, index)`: the root `branch` proves `leaf`
/// under, at `index` among the nodes at `depth`.
fn compute_merkle_branch_root(leaf: Root, branch: &[Root], depth: usize, index: u64) -> Root {
    let mut value = leaf;
    for (i, node) in branch.iter().take(depth).enumerate() {
        value = if (index >> i) & 1 == 1 {
            Root::from(ethereum_hashing::hash32_concat(&node[..], &value[..]))
        } else {
            Root::from(ethereum_hashing::hash32_concat(&value[..], &node[..]))
        };
    }
    value
}

/// `get_lc_execution_root(header)` of Gloas: the execution block hash from Gloas; before it, the
/// root of the execution payload header the branch's lower nodes prove the hash in (the empty
/// header's at genesis); zero before Capella.
///
/// [spec]: gloas/light-client/sync-protocol.md#modified-get_lc_execution_root
pub fn get_lc_execution_root<E: EthSpec>(
    spec: &ChainSpec,
    header: &gloas::LightClientHeader,
) -> Root {
    let epoch = header.beacon.slot / E::slots_per_epoch();
    if gloas_active(spec, epoch) {
        return header.execution_block_hash;
    }
    let block_hash_gindex = if fork_active(spec, ForkName::Deneb, epoch) {
        if header.beacon.slot == GENESIS_SLOT {
            return crate::sync_protocol::empty_execution_payload_header::<E>().tree_hash_root();
        }
        DENEB_BLOCK_HASH_GINDEX
    } else if fork_active(spec, ForkName::Capella, epoch) {
        if header.beacon.slot == GENESIS_SLOT {
            return empty_capella_execution_payload_header::<E>().tree_hash_root();
        }
        CAPELLA_BLOCK_HASH_GINDEX
    } else {
        return Root::ZERO;
    };
    let branch = &header.execution_branch[..];
    let inner = &branch[..branch.len() - floorlog2(EXECUTION_PAYLOAD_GINDEX) as usize];
    let depth = floorlog2(block_hash_gindex) as usize;
    compute_merkle_branch_root(
        header.execution_block_hash,
        &inner[inner.len() - depth..],
        depth,
        get_subtree_index(block_hash_gindex),
    )
}

/// `is_valid_light_client_header(header)` of Gloas: the execution block hash is proven against
/// the body root at its fork's generalized index; before Capella both are zero.
///
/// [spec]: gloas/light-client/sync-protocol.md#modified-is_valid_light_client_header
pub fn is_valid_light_client_header<E: EthSpec>(
    spec: &ChainSpec,
    header: &gloas::LightClientHeader,
) -> bool {
    let epoch = header.beacon.slot / E::slots_per_epoch();
    let gindex = if gloas_active(spec, epoch) {
        EXECUTION_BLOCK_HASH_GINDEX_GLOAS
    } else if fork_active(spec, ForkName::Deneb, epoch) {
        EXECUTION_BLOCK_HASH_GINDEX_DENEB
    } else if fork_active(spec, ForkName::Capella, epoch) {
        EXECUTION_BLOCK_HASH_GINDEX
    } else {
        return header.execution_block_hash.is_zero()
            && header.execution_branch.iter().all(|node| node.is_zero());
    };
    is_valid_normalized_merkle_branch(
        header.execution_block_hash,
        &header.execution_branch,
        gindex,
        header.beacon.body_root,
    )
}

/// Capella's `ExecutionPayloadHeader()`: every field zero or empty.
fn empty_capella_execution_payload_header<E: EthSpec>() -> capella::ExecutionPayloadHeader<E> {
    capella_execution_payload_header(&crate::sync_protocol::empty_execution_payload_header::<E>())
}

/// The execution branch of a Gloas header for `pre`'s block hash: the proof of the hash within
/// the execution payload header, then `pre`'s branch of the header within the body, padded to
/// Gloas's depth.
fn execution_branch<E: EthSpec>(
    execution_header: &dyn ProofTree,
    block_hash_gindex: u64,
    pre: &electra::LightClientHeader<E>,
) -> Result<gloas::ExecutionBranch, LightClientError> {
    let (_, mut nodes) = compute_merkle_proof(execution_header, block_hash_gindex)?;
    nodes.extend_from_slice(&pre.execution_branch);
    normalize_merkle_branch(&nodes, EXECUTION_BLOCK_HASH_GINDEX_GLOAS)
}

/// `upgrade_lc_header_to_gloas(pre)`: the execution block hash with its proof against the body
/// root, in place of the execution payload header.
///
/// [spec]: gloas/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_header_to_gloas<E: EthSpec>(
    spec: &ChainSpec,
    pre: &electra::LightClientHeader<E>,
) -> Result<gloas::LightClientHeader, LightClientError> {
    if *pre == crate::sync_protocol::empty_header::<E>() {
        return Ok(empty_header());
    }
    let epoch = pre.beacon.slot / E::slots_per_epoch();
    let execution_branch = if fork_active(spec, ForkName::Deneb, epoch) {
        execution_branch(&pre.execution, DENEB_BLOCK_HASH_GINDEX, pre)?
    } else if fork_active(spec, ForkName::Capella, epoch) {
        let capella_header = capella_execution_payload_header(&pre.execution);
        execution_branch(&capella_header, CAPELLA_BLOCK_HASH_GINDEX, pre)?
    } else {
        return Ok(gloas::LightClientHeader {
            beacon: pre.beacon.clone(),
            ..empty_header()
        });
    };
    Ok(gloas::LightClientHeader {
        beacon: pre.beacon.clone(),
        execution_block_hash: pre.execution.block_hash,
        execution_branch,
    })
}

/// `block_to_light_client_header(block)` of Gloas: a Gloas block's header with its bid's
/// `parent_block_hash` proven at `EXECUTION_BLOCK_HASH_GINDEX_GLOAS`; an earlier block's header
/// with its payload's block hash proven through the payload (normalized to Gloas's depth), or
/// no execution data before Capella.
///
/// [spec]: gloas/light-client/full-node.md#modified-block_to_light_client_header
pub fn block_to_light_client_header<E: EthSpec>(
    spec: &ChainSpec,
    block: &SignedBeaconBlock<E>,
) -> Result<gloas::LightClientHeader, LightClientError> {
    let SignedBeaconBlock::Gloas(block) = block else {
        // Before Gloas the execution payload header's proof within the body carries the hash
        // to the body root: the earlier fork's header upgraded is the same header.
        return upgrade_lc_header_to_gloas(
            spec,
            &crate::full_node::block_to_light_client_header(block)?,
        );
    };
    let message = &block.message;
    let body = types::merkle_proof::progressive::gloas_body_tree(&message.body);
    let (_, branch) = compute_merkle_proof(&body, EXECUTION_BLOCK_HASH_GINDEX_GLOAS)?;
    Ok(gloas::LightClientHeader {
        beacon: phase0::BeaconBlockHeader {
            slot: message.slot,
            proposer_index: message.proposer_index,
            parent_root: message.parent_root,
            state_root: message.state_root,
            body_root: body.root(),
        },
        execution_block_hash: message
            .body
            .signed_execution_payload_bid
            .message
            .parent_block_hash,
        execution_branch: crate::fork::fixed(branch)?,
    })
}

/// `create_light_client_bootstrap(state, block)` of Gloas: the bootstrap in Gloas's format
/// (of a Gloas block, or an earlier one whose header is upgraded).
///
/// [spec]: altair/light-client/full-node.md#create_light_client_bootstrap
pub fn create_light_client_bootstrap<E: EthSpec>(
    spec: &ChainSpec,
    state: &BeaconState<E>,
    block: &SignedBeaconBlock<E>,
) -> Result<gloas::LightClientBootstrap<E>, LightClientError> {
    crate::full_node::create_light_client_bootstrap_in::<E, gloas::LightClientUpdate<E>>(
        spec, state, block,
    )
}

/// `create_light_client_update(state, block, attested_state, attested_block, finalized_block)`
/// of Gloas: the update in Gloas's format.
///
/// [spec]: altair/light-client/full-node.md#create_light_client_update
pub fn create_light_client_update<E: EthSpec>(
    spec: &ChainSpec,
    state: &BeaconState<E>,
    block: &SignedBeaconBlock<E>,
    attested_state: &BeaconState<E>,
    attested_block: &SignedBeaconBlock<E>,
    finalized_block: Option<&SignedBeaconBlock<E>>,
) -> Result<gloas::LightClientUpdate<E>, LightClientError> {
    crate::full_node::create_light_client_update_in(
        spec,
        state,
        block,
        attested_state,
        attested_block,
        finalized_block,
    )
}

/// `create_light_client_finality_update(update)` of Gloas.
///
/// [spec]: altair/light-client/full-node.md#create_light_client_finality_update
pub fn create_light_client_finality_update<E: EthSpec>(
    update: &gloas::LightClientUpdate<E>,
) -> gloas::LightClientFinalityUpdate<E> {
    gloas::LightClientFinalityUpdate {
        attested_header: update.attested_header.clone(),
        finalized_header: update.finalized_header.clone(),
        finality_branch: update.finality_branch.clone(),
        sync_aggregate: update.sync_aggregate.clone(),
        signature_slot: update.signature_slot,
    }
}

/// `create_light_client_optimistic_update(update)` of Gloas.
///
/// [spec]: altair/light-client/full-node.md#create_light_client_optimistic_update
pub fn create_light_client_optimistic_update<E: EthSpec>(
    update: &gloas::LightClientUpdate<E>,
) -> gloas::LightClientOptimisticUpdate<E> {
    gloas::LightClientOptimisticUpdate {
        attested_header: update.attested_header.clone(),
        sync_aggregate: update.sync_aggregate.clone(),
        signature_slot: update.signature_slot,
    }
}

/// `upgrade_lc_bootstrap_to_gloas(pre)`.
///
/// [spec]: gloas/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_bootstrap_to_gloas<E: EthSpec>(
    spec: &ChainSpec,
    pre: &electra::LightClientBootstrap<E>,
) -> Result<gloas::LightClientBootstrap<E>, LightClientError> {
    Ok(gloas::LightClientBootstrap {
        header: upgrade_lc_header_to_gloas(spec, &pre.header)?,
        current_sync_committee: pre.current_sync_committee.clone(),
        current_sync_committee_branch: normalize_merkle_branch(
            &pre.current_sync_committee_branch,
            CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS,
        )?,
    })
}

/// `upgrade_lc_update_to_gloas(pre)`.
///
/// [spec]: gloas/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_update_to_gloas<E: EthSpec>(
    spec: &ChainSpec,
    pre: &electra::LightClientUpdate<E>,
) -> Result<gloas::LightClientUpdate<E>, LightClientError> {
    Ok(gloas::LightClientUpdate {
        attested_header: upgrade_lc_header_to_gloas(spec, &pre.attested_header)?,
        next_sync_committee: pre.next_sync_committee.clone(),
        next_sync_committee_branch: normalize_merkle_branch(
            &pre.next_sync_committee_branch,
            NEXT_SYNC_COMMITTEE_GINDEX_GLOAS,
        )?,
        finalized_header: upgrade_lc_header_to_gloas(spec, &pre.finalized_header)?,
        finality_branch: normalize_merkle_branch(
            &pre.finality_branch,
            FINALIZED_ROOT_GINDEX_GLOAS,
        )?,
        sync_aggregate: pre.sync_aggregate.clone(),
        signature_slot: pre.signature_slot,
    })
}

/// `upgrade_lc_finality_update_to_gloas(pre)`.
///
/// [spec]: gloas/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_finality_update_to_gloas<E: EthSpec>(
    spec: &ChainSpec,
    pre: &electra::LightClientFinalityUpdate<E>,
) -> Result<gloas::LightClientFinalityUpdate<E>, LightClientError> {
    Ok(gloas::LightClientFinalityUpdate {
        attested_header: upgrade_lc_header_to_gloas(spec, &pre.attested_header)?,
        finalized_header: upgrade_lc_header_to_gloas(spec, &pre.finalized_header)?,
        finality_branch: normalize_merkle_branch(
            &pre.finality_branch,
            FINALIZED_ROOT_GINDEX_GLOAS,
        )?,
        sync_aggregate: pre.sync_aggregate.clone(),
        signature_slot: pre.signature_slot,
    })
}

/// `upgrade_lc_optimistic_update_to_gloas(pre)`.
///
/// [spec]: gloas/light-client/fork.md#upgrading-light-client-data
pub fn upgrade_lc_optimistic_update_to_gloas<E: EthSpec>(
    spec: &ChainSpec,
    pre: &electra::LightClientOptimisticUpdate<E>,
) -> Result<gloas::LightClientOptimisticUpdate<E>, LightClientError> {
    Ok(gloas::LightClientOptimisticUpdate {
        attested_header: upgrade_lc_header_to_gloas(spec, &pre.attested_header)?,
        sync_aggregate: pre.sync_aggregate.clone(),
        signature_slot: pre.signature_slot,
    })
}

/// Any fork's `LightClientBootstrap` in Gloas's format: Gloas's as it is, an earlier fork's
/// upgraded to the latest pre-Gloas format, then to Gloas's.
pub fn upgrade_lc_bootstrap_to_gloas_format<E: EthSpec>(
    spec: &ChainSpec,
    bootstrap: &types::LightClientBootstrap<E>,
) -> Result<gloas::LightClientBootstrap<E>, LightClientError> {
    match bootstrap {
        types::LightClientBootstrap::Gloas(b) => Ok(b.clone()),
        other @ (types::LightClientBootstrap::Altair(_)
        | types::LightClientBootstrap::Bellatrix(_)
        | types::LightClientBootstrap::Capella(_)
        | types::LightClientBootstrap::Deneb(_)
        | types::LightClientBootstrap::Electra(_)
        | types::LightClientBootstrap::Fulu(_)) => {
            upgrade_lc_bootstrap_to_gloas(spec, &upgrade_lc_bootstrap_to_latest(other)?)
        }
    }
}

/// Any fork's `LightClientUpdate` in Gloas's format.
pub fn upgrade_lc_update_to_gloas_format<E: EthSpec>(
    spec: &ChainSpec,
    update: &types::LightClientUpdate<E>,
) -> Result<gloas::LightClientUpdate<E>, LightClientError> {
    match update {
        types::LightClientUpdate::Gloas(u) => Ok(u.clone()),
        other @ (types::LightClientUpdate::Altair(_)
        | types::LightClientUpdate::Bellatrix(_)
        | types::LightClientUpdate::Capella(_)
        | types::LightClientUpdate::Deneb(_)
        | types::LightClientUpdate::Electra(_)
        | types::LightClientUpdate::Fulu(_)) => {
            upgrade_lc_update_to_gloas(spec, &upgrade_lc_update_to_latest(other)?)
        }
    }
}

/// Any fork's `LightClientFinalityUpdate` in Gloas's format.
pub fn upgrade_lc_finality_update_to_gloas_format<E: EthSpec>(
    spec: &ChainSpec,
    update: &types::LightClientFinalityUpdate<E>,
) -> Result<gloas::LightClientFinalityUpdate<E>, LightClientError> {
    match update {
        types::LightClientFinalityUpdate::Gloas(u) => Ok(u.clone()),
        other @ (types::LightClientFinalityUpdate::Altair(_)
        | types::LightClientFinalityUpdate::Bellatrix(_)
        | types::LightClientFinalityUpdate::Capella(_)
        | types::LightClientFinalityUpdate::Deneb(_)
        | types::LightClientFinalityUpdate::Electra(_)
        | types::LightClientFinalityUpdate::Fulu(_)) => {
            upgrade_lc_finality_update_to_gloas(spec, &upgrade_lc_finality_update_to_latest(other)?)
        }
    }
}

/// Any fork's `LightClientOptimisticUpdate` in Gloas's format.
pub fn upgrade_lc_optimistic_update_to_gloas_format<E: EthSpec>(
    spec: &ChainSpec,
    update: &types::LightClientOptimisticUpdate<E>,
) -> Result<gloas::LightClientOptimisticUpdate<E>, LightClientError> {
    match update {
        types::LightClientOptimisticUpdate::Gloas(u) => Ok(u.clone()),
        other @ (types::LightClientOptimisticUpdate::Altair(_)
        | types::LightClientOptimisticUpdate::Bellatrix(_)
        | types::LightClientOptimisticUpdate::Capella(_)
        | types::LightClientOptimisticUpdate::Deneb(_)
        | types::LightClientOptimisticUpdate::Electra(_)
        | types::LightClientOptimisticUpdate::Fulu(_)) => upgrade_lc_optimistic_update_to_gloas(
            spec,
            &upgrade_lc_optimistic_update_to_latest(other)?,
        ),
    }
}

/// `upgrade_lc_store_to_gloas(pre)`: an Electra-format store in Gloas's format, which it must be
/// before it processes Gloas data (allowed before `GLOAS_FORK_EPOCH`).
///
/// [spec]: gloas/light-client/fork.md#upgrading-the-store
pub fn upgrade_lc_store_to_gloas<E: EthSpec>(
    spec: &ChainSpec,
    pre: &LightClientStore<E>,
) -> Result<Store<E>, LightClientError> {
    let best_valid_update = pre
        .best_valid_update
        .as_ref()
        .map(|update| upgrade_lc_update_to_gloas(spec, update))
        .transpose()?;
    Ok(LightClientStore {
        finalized_header: upgrade_lc_header_to_gloas(spec, &pre.finalized_header)?,
        current_sync_committee: pre.current_sync_committee.clone(),
        next_sync_committee: pre.next_sync_committee.clone(),
        best_valid_update,
        optimistic_header: upgrade_lc_header_to_gloas(spec, &pre.optimistic_header)?,
        previous_max_active_participants: pre.previous_max_active_participants,
        current_max_active_participants: pre.current_max_active_participants,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::MinimalEthSpec as E;

    /// `concat_generalized_indices(outer, inner)`: the node at `inner` within the subtree at
    /// `outer`.
    fn concat(outer: u64, inner: u64) -> u64 {
        let depth = floorlog2(inner);
        (outer << depth) | get_subtree_index(inner)
    }

    #[test]
    fn block_hash_indices_are_the_payload_header_field_under_the_payload() {
        assert_eq!(
            concat(EXECUTION_PAYLOAD_GINDEX, CAPELLA_BLOCK_HASH_GINDEX),
            EXECUTION_BLOCK_HASH_GINDEX
        );
        assert_eq!(
            concat(EXECUTION_PAYLOAD_GINDEX, DENEB_BLOCK_HASH_GINDEX),
            EXECUTION_BLOCK_HASH_GINDEX_DENEB
        );
        assert_eq!(floorlog2(EXECUTION_BLOCK_HASH_GINDEX_GLOAS), 11);
        assert_eq!(floorlog2(FINALIZED_ROOT_GINDEX_GLOAS), 9);
        assert_eq!(floorlog2(CURRENT_SYNC_COMMITTEE_GINDEX_GLOAS), 11);
        assert_eq!(floorlog2(NEXT_SYNC_COMMITTEE_GINDEX_GLOAS), 11);
    }

    /// A spec with Gloas at epoch 2 (Fulu and everything before it at genesis).
    fn gloas_at_2() -> ChainSpec {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        spec.gloas_fork_version = Some(types::Version::from([7, 0, 0, 1]));
        spec.gloas_fork_epoch = 2;
        spec
    }

    #[test]
    fn from_gloas_the_block_hash_is_proven_at_the_bid_and_is_the_execution_root() {
        let spec = gloas_at_2();
        let block_hash = Root::repeat_byte(0xab);
        let branch: Vec<Root> = (1..=11u8).map(Root::repeat_byte).collect();
        let body_root = compute_merkle_branch_root(
            block_hash,
            &branch,
            11,
            get_subtree_index(EXECUTION_BLOCK_HASH_GINDEX_GLOAS),
        );
        let mut header = empty_header();
        header.beacon.slot = 2 * E::slots_per_epoch();
        header.beacon.body_root = body_root;
        header.execution_block_hash = block_hash;
        header.execution_branch = FixedVector::new(branch).unwrap();
        assert!(is_valid_light_client_header::<E>(&spec, &header));
        assert_eq!(get_lc_execution_root::<E>(&spec, &header), block_hash);
        // One slot earlier the same header is checked at Deneb's index, and fails.
        header.beacon.slot -= 1;
        assert!(!is_valid_light_client_header::<E>(&spec, &header));
        // Without Gloas scheduled, too.
        header.beacon.slot += 1;
        assert!(!is_valid_light_client_header::<E>(
            &ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu),
            &header
        ));
    }

    #[test]
    fn before_capella_a_header_carries_no_execution_data() {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Altair);
        let mut pre = crate::sync_protocol::empty_header::<E>();
        assert_eq!(
            upgrade_lc_header_to_gloas(&spec, &pre).unwrap(),
            empty_header()
        );
        pre.beacon.slot = 5;
        let header = upgrade_lc_header_to_gloas(&spec, &pre).unwrap();
        assert_eq!(header.beacon, pre.beacon);
        assert!(is_valid_light_client_header::<E>(&spec, &header));
        assert_eq!(get_lc_execution_root::<E>(&spec, &header), Root::ZERO);
        let mut with_hash = header.clone();
        with_hash.execution_block_hash = Root::repeat_byte(1);
        assert!(!is_valid_light_client_header::<E>(&spec, &with_hash));
    }

    #[test]
    fn the_fork_version_of_a_signature_is_gloas_from_its_epoch() {
        let spec = gloas_at_2();
        assert_eq!(
            crate::sync_protocol::compute_fork_version(&spec, 1),
            spec.fulu_fork_version
        );
        assert_eq!(
            crate::sync_protocol::compute_fork_version(&spec, 2),
            types::Version::from([7, 0, 0, 1])
        );
    }
}
