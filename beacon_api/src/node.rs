//! Types of the `/eth/v1/node/*` and `/eth/v1/config/*` endpoints.
//!
//! [spec]: apis/node/syncing.yaml, apis/node/identity.yaml, apis/node/version.yaml,
//! apis/node/health.yaml, types/p2p.yaml, apis/config/spec.yaml, apis/config/fork_schedule.yaml

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use types::Slot;

/// `GET /eth/v1/node/syncing` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncingData {
    /// The head slot the node is trying to reach (its own head when synced).
    #[serde(with = "crate::json::quoted_u64")]
    pub head_slot: Slot,
    /// How many slots the node's head is behind.
    #[serde(with = "crate::json::quoted_u64")]
    pub sync_distance: Slot,
    /// True while the node is syncing.
    pub is_syncing: bool,
    /// True if the head is optimistic (its payload not yet verified by the EL).
    pub is_optimistic: bool,
    /// True if the execution client is unreachable.
    pub el_offline: bool,
}

/// `GET /eth/v1/node/version` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionData {
    /// `<client>/<version>/<os>`, e.g. `Arbor/v0.1.0/x86_64-linux`.
    pub version: String,
}

/// `MetaData`: the node's p2p metadata as it advertises it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaData {
    /// Incremented on every metadata change.
    #[serde(with = "crate::json::quoted_u64")]
    pub seq_number: u64,
    /// Attestation subnets subscribed to, the SSZ hex of a bitvector.
    pub attnets: String,
    /// Sync committee subnets subscribed to (from Altair).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syncnets: Option<String>,
    /// Custody groups (from Fulu).
    #[serde(
        default,
        with = "crate::json::quoted_u64_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub custody_group_count: Option<u64>,
}

/// `NetworkIdentity`: `GET /eth/v1/node/identity` data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityData {
    /// The libp2p peer id.
    pub peer_id: String,
    /// The node's ENR, `enr:`-prefixed base64.
    pub enr: String,
    /// libp2p multiaddrs the node listens on.
    pub p2p_addresses: Vec<String>,
    /// discv5 multiaddrs.
    pub discovery_addresses: Vec<String>,
    /// The p2p metadata.
    pub metadata: MetaData,
}

/// `GET /eth/v1/node/health`: the answer is the status code alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeHealth {
    /// 200: ready.
    Ready,
    /// 206 (or the `syncing_status` asked for): syncing, or the EL is optimistic or offline.
    Syncing,
    /// 503: not initialized or having issues.
    NotReady,
}

impl NodeHealth {
    /// The health a status code means; `syncing_status` is the code the request asked the node
    /// to use for "syncing" (206 by default). Any other code is not a health answer.
    pub fn from_status(status: u16, syncing_status: u16) -> Option<Self> {
        match status {
            200 => Some(Self::Ready),
            s if s == syncing_status => Some(Self::Syncing),
            503 => Some(Self::NotReady),
            _ => None,
        }
    }
}

/// `GET /eth/v1/config/spec` data: every config and preset value the node uses, by the spec's
/// upper-case name. Values are strings (quoted decimals, 0x-hex), except a few structured ones
/// such as `BLOB_SCHEDULE`, so the map keeps JSON values and [`ConfigSpec::get_str`] reads the
/// string ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ConfigSpec(pub BTreeMap<String, serde_json::Value>);

impl ConfigSpec {
    /// The string value of `name`, if present and a string.
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(serde_json::Value::as_str)
    }

    /// The value of `name` read as a quoted decimal `u64`.
    pub fn get_u64(&self, name: &str) -> Option<u64> {
        self.get_str(name).and_then(|s| s.parse().ok())
    }
}

/// `GET /eth/v1/config/fork_schedule` data: every fork of the chain, oldest first.
pub type ForkSchedule = Vec<types::phase0::Fork>;

/// `PeerConnectionState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerState {
    /// Not connected.
    Disconnected,
    /// Dialing or handshaking.
    Connecting,
    /// Connected.
    Connected,
    /// Closing.
    Disconnecting,
}

/// `PeerConnectionDirection`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerDirection {
    /// The peer dialed us.
    Inbound,
    /// We dialed the peer.
    Outbound,
}

/// `Peer`: one entry of `GET /eth/v1/node/peers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerData {
    /// The libp2p peer id.
    pub peer_id: String,
    /// The peer's ENR, if known.
    pub enr: Option<String>,
    /// The last multiaddr the peer was seen at.
    pub last_seen_p2p_address: String,
    /// The connection state.
    pub state: PeerState,
    /// Who dialed.
    pub direction: PeerDirection,
}

/// `GET /eth/v1/node/peer_count` data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerCountData {
    /// Peers disconnected.
    #[serde(with = "crate::json::quoted_u64")]
    pub disconnected: u64,
    /// Peers connecting.
    #[serde(with = "crate::json::quoted_u64")]
    pub connecting: u64,
    /// Peers connected.
    #[serde(with = "crate::json::quoted_u64")]
    pub connected: u64,
    /// Peers disconnecting.
    #[serde(with = "crate::json::quoted_u64")]
    pub disconnecting: u64,
}

/// `GET /eth/v1/config/deposit_contract` data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepositContractData {
    /// The execution chain id.
    #[serde(with = "crate::json::quoted_u64")]
    pub chain_id: u64,
    /// The deposit contract's address.
    pub address: types::ExecutionAddress,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_types_round_trip_the_spec_shape() {
        let syncing = r#"{"head_slot":"1","sync_distance":"0","is_syncing":false,"is_optimistic":false,"el_offline":false}"#;
        let parsed: SyncingData = serde_json::from_str(syncing).expect("decodes");
        assert_eq!(parsed.head_slot, 1);
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), syncing);

        let identity = r#"{"peer_id":"QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N","enr":"enr:-IS4QHCYrYZbAKWCBRlAy5zzaDZXJBGkcnh4MHcBFZntXNFrdvJjX04jRzjzCBOonrkTfj499SZuOh8R33Ls8RRcy5wBgmlkgnY0gmlwhH8AAAGJc2VjcDI1NmsxoQPKY0yuDUmstAHYpMa2_oxVtw0RW_QAdpzBQA8yWM0xOIN1ZHCCdl8","p2p_addresses":["/ip4/7.7.7.7/tcp/4242/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"],"discovery_addresses":["/ip4/7.7.7.7/udp/30303/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"],"metadata":{"seq_number":"1","attnets":"0x0000000000000000","syncnets":"0x0f","custody_group_count":"4"}}"#;
        let parsed: IdentityData = serde_json::from_str(identity).expect("decodes");
        assert_eq!(parsed.metadata.custody_group_count, Some(4));
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), identity);

        let phase0_metadata = r#"{"seq_number":"2","attnets":"0x01"}"#;
        let parsed: MetaData = serde_json::from_str(phase0_metadata).expect("decodes");
        assert_eq!(
            (parsed.syncnets.as_deref(), parsed.custody_group_count),
            (None, None)
        );
        assert_eq!(
            serde_json::to_string(&parsed).expect("encodes"),
            phase0_metadata
        );

        let version = r#"{"version":"Arbor/v0.1.0/x86_64-linux"}"#;
        let parsed: VersionData = serde_json::from_str(version).expect("decodes");
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), version);
    }

    #[test]
    fn config_spec_keeps_strings_and_structured_values() {
        let json = r#"{"BLOB_SCHEDULE":[{"EPOCH":"412672","MAX_BLOBS_PER_BLOCK":"15"}],"DEPOSIT_CONTRACT_ADDRESS":"0x00000000219ab540356cbb839cbe05303d7705fa","SECONDS_PER_SLOT":"12"}"#;
        let spec: ConfigSpec = serde_json::from_str(json).expect("decodes");
        assert_eq!(spec.get_u64("SECONDS_PER_SLOT"), Some(12));
        assert_eq!(spec.get_str("BLOB_SCHEDULE"), None);
        assert_eq!(spec.get_u64("DEPOSIT_CONTRACT_ADDRESS"), None);
        assert_eq!(serde_json::to_string(&spec).expect("encodes"), json);
    }

    #[test]
    fn fork_schedule_round_trips() {
        let json = r#"[{"previous_version":"0x00000000","current_version":"0x00000000","epoch":"0"},{"previous_version":"0x00000000","current_version":"0x01000000","epoch":"74240"}]"#;
        let schedule: ForkSchedule = serde_json::from_str(json).expect("decodes");
        assert_eq!(schedule[1].epoch, 74_240);
        assert_eq!(serde_json::to_string(&schedule).expect("encodes"), json);
    }

    #[test]
    fn peers_and_deposit_contract_round_trip_the_spec_shape() {
        let peer = r#"{"peer_id":"QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N","enr":null,"last_seen_p2p_address":"/ip4/7.7.7.7/tcp/4242/p2p/QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N","state":"connected","direction":"inbound"}"#;
        let parsed: PeerData = serde_json::from_str(peer).expect("decodes");
        assert_eq!(
            (parsed.state, parsed.direction, parsed.enr.as_deref()),
            (PeerState::Connected, PeerDirection::Inbound, None)
        );
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), peer);
        assert!(serde_json::from_str::<PeerData>(&peer.replace("inbound", "sideways")).is_err());

        let count =
            r#"{"disconnected":"12","connecting":"34","connected":"56","disconnecting":"5"}"#;
        let parsed: PeerCountData = serde_json::from_str(count).expect("decodes");
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), count);

        let contract = r#"{"chain_id":"1","address":"0x00000000219ab540356cbb839cbe05303d7705fa"}"#;
        let parsed: DepositContractData = serde_json::from_str(contract).expect("decodes");
        assert_eq!(serde_json::to_string(&parsed).expect("encodes"), contract);
    }

    #[test]
    fn health_reads_status_codes() {
        assert_eq!(NodeHealth::from_status(200, 206), Some(NodeHealth::Ready));
        assert_eq!(NodeHealth::from_status(206, 206), Some(NodeHealth::Syncing));
        assert_eq!(NodeHealth::from_status(299, 299), Some(NodeHealth::Syncing));
        assert_eq!(
            NodeHealth::from_status(503, 206),
            Some(NodeHealth::NotReady)
        );
        assert_eq!(NodeHealth::from_status(404, 206), None);
    }
}
