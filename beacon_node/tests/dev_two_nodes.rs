//! `arbor dev --nodes 2`: two beacon nodes, each with its validator client and half of the
//! validators, connected over libp2p on 127.0.0.1: blocks, data columns, attestations and
//! aggregates cross between them by gossip, and the devnet finalizes on one head. (Its own test
//! binary, so that it does not share the two cores with the one-node devnet.)
#![cfg(feature = "mock-el")]

#[path = "common/devnet.rs"]
mod devnet;

/// Validators of the devnet and of its first node (`arbor dev` splits them evenly).
const VALIDATORS: u64 = 64;
const FIRST_NODE_VALIDATORS: u64 = VALIDATORS / 2;

#[test]
fn a_two_node_devnet_finalizes_on_one_head() {
    let mut checked = false;
    devnet::devnet_finalizes_observed("arbor-dev-two-nodes", 2, 2, &mut |port, line| {
        // `arbor dev: slot S head H ROOT …`: past the first epoch, once.
        let Some(rest) = line.strip_prefix("arbor dev: slot ") else {
            return;
        };
        let head: u64 = rest
            .split(' ')
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if checked || head < 12 {
            return;
        }
        let Some(port) = port else { return };
        if second_node_messages_in_contributions(port, head) {
            checked = true;
        }
    });
    assert!(
        checked,
        "the first node's sync_committee_contribution never held a message of the second node's \
         validators (gossip sync committee messages are not aggregated)"
    );
}

/// Whether the first node's `sync_committee_contribution` for a recent slot holds the message
/// of a sync committee member run by the second node: those reach the first node only by
/// gossip (its validator client posts its own members' messages).
fn second_node_messages_in_contributions(port: u16, head: u64) -> bool {
    let get = |path: &str| -> Option<serde_json::Value> {
        let (status, body) = devnet::http_get(port, path).ok()?;
        (status == 200).then(|| serde_json::from_str(&body).ok())?
    };
    let Some(committee) = get("/eth/v1/beacon/states/head/sync_committees") else {
        return false;
    };
    let members: Vec<u64> = committee["data"]["validators"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str()?.parse().ok())
        .collect();
    // The minimal preset's four sync committee subnets.
    let per_subnet = members.len() / 4;
    if per_subnet == 0 {
        return false;
    }
    for slot in head.saturating_sub(3)..head {
        let Some(root) = get(&format!("/eth/v1/beacon/blocks/{slot}/root")) else {
            continue;
        };
        let Some(root) = root["data"]["root"].as_str().map(str::to_owned) else {
            continue;
        };
        for subnet in 0..4 {
            let Some(contribution) = get(&format!(
                "/eth/v1/validator/sync_committee_contribution?slot={slot}&subcommittee_index={subnet}&beacon_block_root={root}"
            )) else {
                continue;
            };
            let bits = contribution["data"]["aggregation_bits"]
                .as_str()
                .and_then(|h| h.strip_prefix("0x"))
                .map(decode_hex)
                .unwrap_or_default();
            for i in 0..per_subnet {
                let set = bits.get(i / 8).is_some_and(|byte| byte >> (i % 8) & 1 == 1);
                if set && members[subnet * per_subnet + i] >= FIRST_NODE_VALIDATORS {
                    eprintln!(
                        "slot {slot} subnet {subnet}: the first node's contribution holds validator {}'s message",
                        members[subnet * per_subnet + i]
                    );
                    return true;
                }
            }
        }
    }
    false
}

/// The bytes of a hex string (a bad digit reads as zero: the bits are then simply not set).
fn decode_hex(hex: &str) -> Vec<u8> {
    hex.as_bytes()
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .unwrap_or(0)
        })
        .collect()
}
