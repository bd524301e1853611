//! Gossip topic names: `/eth2/{fork_digest}/{name}/ssz_snappy`.
//!
//! [spec]: phase0/p2p-interface.md#topics-and-messages, fulu/p2p-interface.md#topics-and-messages

use std::fmt;
use std::str::FromStr;

use types::{ChainSpec, ForkDigest, ForkName};

/// The only gossip encoding: SSZ compressed with snappy's block format.
pub const SSZ_SNAPPY_ENCODING: &str = "ssz_snappy";

/// What a topic carries, with the subnet for the subnet topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GossipKind {
    /// `beacon_block`.
    BeaconBlock,
    /// `beacon_aggregate_and_proof`.
    BeaconAggregateAndProof,
    /// `beacon_attestation_{subnet_id}`.
    Attestation(u64),
    /// `voluntary_exit`.
    VoluntaryExit,
    /// `proposer_slashing`.
    ProposerSlashing,
    /// `attester_slashing`.
    AttesterSlashing,
    /// `sync_committee_contribution_and_proof`.
    SyncCommitteeContributionAndProof,
    /// `sync_committee_{subnet_id}`.
    SyncCommitteeMessage(u64),
    /// `bls_to_execution_change`.
    BlsToExecutionChange,
    /// `blob_sidecar_{subnet_id}` (Deneb and Electra only).
    BlobSidecar(u64),
    /// `data_column_sidecar_{subnet_id}`.
    DataColumnSidecar(u64),
    /// `light_client_finality_update`.
    LightClientFinalityUpdate,
    /// `light_client_optimistic_update`.
    LightClientOptimisticUpdate,
    /// `execution_payload_bid` (Gloas): a builder's signed bid.
    ExecutionPayloadBid,
    /// `execution_payload` (Gloas): a block's signed execution payload envelope.
    ExecutionPayload,
    /// `payload_attestation_message` (Gloas): a PTC member's vote on a payload.
    PayloadAttestationMessage,
    /// `proposer_preferences` (Gloas): a proposer's fee recipient and gas limit for bids.
    ProposerPreferences,
}

impl GossipKind {
    /// The global (subnet-less) topics that exist at `fork`.
    pub fn global_kinds(fork: ForkName) -> Vec<GossipKind> {
        let mut kinds = vec![
            GossipKind::BeaconBlock,
            GossipKind::BeaconAggregateAndProof,
            GossipKind::VoluntaryExit,
            GossipKind::ProposerSlashing,
            GossipKind::AttesterSlashing,
        ];
        if fork.altair_enabled() {
            kinds.push(GossipKind::SyncCommitteeContributionAndProof);
            kinds.push(GossipKind::LightClientFinalityUpdate);
            kinds.push(GossipKind::LightClientOptimisticUpdate);
        }
        if fork.capella_enabled() {
            kinds.push(GossipKind::BlsToExecutionChange);
        }
        if fork.gloas_enabled() {
            kinds.extend(GossipKind::GLOAS_GLOBAL);
        }
        kinds
    }

    /// The global topics new in Gloas.
    ///
    /// [spec]: gloas/p2p-interface.md#global-topics
    pub const GLOAS_GLOBAL: [GossipKind; 4] = [
        GossipKind::ExecutionPayloadBid,
        GossipKind::ExecutionPayload,
        GossipKind::PayloadAttestationMessage,
        GossipKind::ProposerPreferences,
    ];

    /// Every topic kind of `fork`, with every subnet of the subnet topics.
    pub fn all_kinds(fork: ForkName, spec: &ChainSpec) -> Vec<GossipKind> {
        let mut kinds = Self::global_kinds(fork);
        kinds.extend((0..spec.attestation_subnet_count).map(GossipKind::Attestation));
        if fork.altair_enabled() {
            // SYNC_COMMITTEE_SUBNET_COUNT = 4.
            kinds.extend((0..4).map(GossipKind::SyncCommitteeMessage));
        }
        match fork {
            ForkName::Deneb => {
                kinds.extend((0..spec.blob_sidecar_subnet_count).map(GossipKind::BlobSidecar))
            }
            ForkName::Electra => kinds
                .extend((0..spec.blob_sidecar_subnet_count_electra).map(GossipKind::BlobSidecar)),
            // Before Deneb no blobs; from Fulu data columns (below) replace blob sidecars.
            ForkName::Phase0
            | ForkName::Altair
            | ForkName::Bellatrix
            | ForkName::Capella
            | ForkName::Fulu
            | ForkName::Gloas => {}
        }
        if fork.fulu_enabled() {
            kinds.extend(
                (0..spec.data_column_sidecar_subnet_count).map(GossipKind::DataColumnSidecar),
            );
        }
        kinds
    }

    /// Whether the topic exists at `fork`.
    pub fn exists_at(self, fork: ForkName) -> bool {
        match self {
            GossipKind::BeaconBlock
            | GossipKind::BeaconAggregateAndProof
            | GossipKind::Attestation(_)
            | GossipKind::VoluntaryExit
            | GossipKind::ProposerSlashing
            | GossipKind::AttesterSlashing => true,
            GossipKind::SyncCommitteeContributionAndProof
            | GossipKind::SyncCommitteeMessage(_)
            | GossipKind::LightClientFinalityUpdate
            | GossipKind::LightClientOptimisticUpdate => fork.altair_enabled(),
            GossipKind::BlsToExecutionChange => fork.capella_enabled(),
            GossipKind::BlobSidecar(_) => matches!(fork, ForkName::Deneb | ForkName::Electra),
            GossipKind::DataColumnSidecar(_) => fork.fulu_enabled(),
            GossipKind::ExecutionPayloadBid
            | GossipKind::ExecutionPayload
            | GossipKind::PayloadAttestationMessage
            | GossipKind::ProposerPreferences => fork.gloas_enabled(),
        }
    }
}

impl fmt::Display for GossipKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GossipKind::BeaconBlock => f.write_str("beacon_block"),
            GossipKind::BeaconAggregateAndProof => f.write_str("beacon_aggregate_and_proof"),
            GossipKind::Attestation(subnet) => write!(f, "beacon_attestation_{subnet}"),
            GossipKind::VoluntaryExit => f.write_str("voluntary_exit"),
            GossipKind::ProposerSlashing => f.write_str("proposer_slashing"),
            GossipKind::AttesterSlashing => f.write_str("attester_slashing"),
            GossipKind::SyncCommitteeContributionAndProof => {
                f.write_str("sync_committee_contribution_and_proof")
            }
            GossipKind::SyncCommitteeMessage(subnet) => write!(f, "sync_committee_{subnet}"),
            GossipKind::BlsToExecutionChange => f.write_str("bls_to_execution_change"),
            GossipKind::BlobSidecar(subnet) => write!(f, "blob_sidecar_{subnet}"),
            GossipKind::DataColumnSidecar(subnet) => write!(f, "data_column_sidecar_{subnet}"),
            GossipKind::LightClientFinalityUpdate => f.write_str("light_client_finality_update"),
            GossipKind::LightClientOptimisticUpdate => {
                f.write_str("light_client_optimistic_update")
            }
            GossipKind::ExecutionPayloadBid => f.write_str("execution_payload_bid"),
            GossipKind::ExecutionPayload => f.write_str("execution_payload"),
            GossipKind::PayloadAttestationMessage => f.write_str("payload_attestation_message"),
            GossipKind::ProposerPreferences => f.write_str("proposer_preferences"),
        }
    }
}

/// A topic string that is not an eth2 topic this node knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid gossip topic {topic:?}: {reason}")]
pub struct TopicParseError {
    /// The topic as received.
    pub topic: String,
    /// Why it was refused.
    pub reason: &'static str,
}

/// A parsed eth2 gossip topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GossipTopic {
    /// The fork digest of the topic's context epoch.
    pub fork_digest: [u8; 4],
    /// The message kind.
    pub kind: GossipKind,
}

impl GossipTopic {
    /// The topic of `kind` under `fork_digest`.
    pub fn new(kind: GossipKind, fork_digest: ForkDigest) -> Self {
        Self {
            fork_digest: fork_digest.0,
            kind,
        }
    }

    /// The topic's fork digest.
    pub fn digest(&self) -> ForkDigest {
        ForkDigest::from(self.fork_digest)
    }
}

impl fmt::Display for GossipTopic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "/eth2/{}/{}/{}",
            hex_lower(&self.fork_digest),
            self.kind,
            SSZ_SNAPPY_ENCODING
        )
    }
}

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_subnet(s: &str, prefix: &str) -> Option<u64> {
    let digits = s.strip_prefix(prefix)?;
    // No signs, no leading zeros (except "0" itself): one spelling per topic.
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

impl FromStr for GossipKind {
    type Err = &'static str;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(match name {
            "beacon_block" => GossipKind::BeaconBlock,
            "beacon_aggregate_and_proof" => GossipKind::BeaconAggregateAndProof,
            "voluntary_exit" => GossipKind::VoluntaryExit,
            "proposer_slashing" => GossipKind::ProposerSlashing,
            "attester_slashing" => GossipKind::AttesterSlashing,
            "sync_committee_contribution_and_proof" => {
                GossipKind::SyncCommitteeContributionAndProof
            }
            "bls_to_execution_change" => GossipKind::BlsToExecutionChange,
            "light_client_finality_update" => GossipKind::LightClientFinalityUpdate,
            "light_client_optimistic_update" => GossipKind::LightClientOptimisticUpdate,
            "execution_payload_bid" => GossipKind::ExecutionPayloadBid,
            "execution_payload" => GossipKind::ExecutionPayload,
            "payload_attestation_message" => GossipKind::PayloadAttestationMessage,
            "proposer_preferences" => GossipKind::ProposerPreferences,
            other => {
                if let Some(subnet) = parse_subnet(other, "beacon_attestation_") {
                    GossipKind::Attestation(subnet)
                } else if let Some(subnet) = parse_subnet(other, "sync_committee_") {
                    GossipKind::SyncCommitteeMessage(subnet)
                } else if let Some(subnet) = parse_subnet(other, "blob_sidecar_") {
                    GossipKind::BlobSidecar(subnet)
                } else if let Some(subnet) = parse_subnet(other, "data_column_sidecar_") {
                    GossipKind::DataColumnSidecar(subnet)
                } else {
                    return Err("unknown message name");
                }
            }
        })
    }
}

impl FromStr for GossipTopic {
    type Err = TopicParseError;

    fn from_str(topic: &str) -> Result<Self, Self::Err> {
        let err = |reason| TopicParseError {
            topic: topic.to_string(),
            reason,
        };
        let mut parts = topic.split('/');
        if parts.next() != Some("") || parts.next() != Some("eth2") {
            return Err(err("does not start with /eth2/"));
        }
        let digest_hex = parts.next().ok_or_else(|| err("no fork digest"))?;
        let name = parts.next().ok_or_else(|| err("no message name"))?;
        let encoding = parts.next().ok_or_else(|| err("no encoding"))?;
        if parts.next().is_some() {
            return Err(err("too many segments"));
        }
        if encoding != SSZ_SNAPPY_ENCODING {
            return Err(err("unknown encoding"));
        }
        if digest_hex.len() != 8
            || !digest_hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(err("fork digest is not 8 lower-case hex digits"));
        }
        let mut fork_digest = [0u8; 4];
        for (i, byte) in fork_digest.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&digest_hex[2 * i..2 * i + 2], 16)
                .map_err(|_| err("fork digest is not hex"))?;
        }
        let kind = name.parse().map_err(err)?;
        Ok(GossipTopic { fork_digest, kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_match_the_spec() {
        let digest = ForkDigest::from([0xab, 0x01, 0xcd, 0x02]);
        let cases = [
            (
                GossipKind::BeaconBlock,
                "/eth2/ab01cd02/beacon_block/ssz_snappy",
            ),
            (
                GossipKind::BeaconAggregateAndProof,
                "/eth2/ab01cd02/beacon_aggregate_and_proof/ssz_snappy",
            ),
            (
                GossipKind::Attestation(63),
                "/eth2/ab01cd02/beacon_attestation_63/ssz_snappy",
            ),
            (
                GossipKind::SyncCommitteeContributionAndProof,
                "/eth2/ab01cd02/sync_committee_contribution_and_proof/ssz_snappy",
            ),
            (
                GossipKind::SyncCommitteeMessage(3),
                "/eth2/ab01cd02/sync_committee_3/ssz_snappy",
            ),
            (
                GossipKind::VoluntaryExit,
                "/eth2/ab01cd02/voluntary_exit/ssz_snappy",
            ),
            (
                GossipKind::ProposerSlashing,
                "/eth2/ab01cd02/proposer_slashing/ssz_snappy",
            ),
            (
                GossipKind::AttesterSlashing,
                "/eth2/ab01cd02/attester_slashing/ssz_snappy",
            ),
            (
                GossipKind::BlsToExecutionChange,
                "/eth2/ab01cd02/bls_to_execution_change/ssz_snappy",
            ),
            (
                GossipKind::DataColumnSidecar(127),
                "/eth2/ab01cd02/data_column_sidecar_127/ssz_snappy",
            ),
            (
                GossipKind::LightClientFinalityUpdate,
                "/eth2/ab01cd02/light_client_finality_update/ssz_snappy",
            ),
            (
                GossipKind::LightClientOptimisticUpdate,
                "/eth2/ab01cd02/light_client_optimistic_update/ssz_snappy",
            ),
            (
                GossipKind::ExecutionPayloadBid,
                "/eth2/ab01cd02/execution_payload_bid/ssz_snappy",
            ),
            (
                GossipKind::ExecutionPayload,
                "/eth2/ab01cd02/execution_payload/ssz_snappy",
            ),
            (
                GossipKind::PayloadAttestationMessage,
                "/eth2/ab01cd02/payload_attestation_message/ssz_snappy",
            ),
            (
                GossipKind::ProposerPreferences,
                "/eth2/ab01cd02/proposer_preferences/ssz_snappy",
            ),
        ];
        for (kind, expected) in cases {
            let topic = GossipTopic::new(kind, digest);
            assert_eq!(topic.to_string(), expected);
            assert_eq!(expected.parse::<GossipTopic>().unwrap(), topic);
        }
    }

    #[test]
    fn rejects_malformed_topics() {
        for bad in [
            "/eth2/ab01cd02/beacon_block/ssz",
            "/eth2/AB01CD02/beacon_block/ssz_snappy",
            "/eth2/ab01cd/beacon_block/ssz_snappy",
            "/eth2/ab01cd02/beacon_blocks/ssz_snappy",
            "/eth2/ab01cd02/beacon_attestation_/ssz_snappy",
            "/eth2/ab01cd02/beacon_attestation_01/ssz_snappy",
            "/eth2/ab01cd02/beacon_attestation_+1/ssz_snappy",
            "/eth2/ab01cd02/beacon_block/ssz_snappy/extra",
            "eth2/ab01cd02/beacon_block/ssz_snappy",
            "/eth1/ab01cd02/beacon_block/ssz_snappy",
            "",
        ] {
            assert!(bad.parse::<GossipTopic>().is_err(), "{bad}");
        }
    }

    #[test]
    fn fulu_topics_have_columns_and_no_blobs() {
        let spec = ChainSpec::mainnet();
        let kinds = GossipKind::all_kinds(ForkName::Fulu, &spec);
        assert_eq!(
            kinds
                .iter()
                .filter(|k| matches!(k, GossipKind::DataColumnSidecar(_)))
                .count(),
            128
        );
        assert!(
            !kinds
                .iter()
                .any(|k| matches!(k, GossipKind::BlobSidecar(_)))
        );
        assert_eq!(
            kinds
                .iter()
                .filter(|k| matches!(k, GossipKind::Attestation(_)))
                .count(),
            64
        );
        assert!(kinds.contains(&GossipKind::BlsToExecutionChange));
        assert!(kinds.iter().all(|k| k.exists_at(ForkName::Fulu)));
        let electra = GossipKind::all_kinds(ForkName::Electra, &spec);
        assert_eq!(
            electra
                .iter()
                .filter(|k| matches!(k, GossipKind::BlobSidecar(_)))
                .count(),
            9
        );
    }

    #[test]
    fn the_gloas_topics_exist_from_gloas_on() {
        for kind in GossipKind::GLOAS_GLOBAL {
            assert!(kind.exists_at(ForkName::Gloas), "{kind}");
            assert!(!kind.exists_at(ForkName::Fulu), "{kind}");
            assert!(GossipKind::global_kinds(ForkName::Gloas).contains(&kind));
            assert!(!GossipKind::global_kinds(ForkName::Fulu).contains(&kind));
        }
    }
}
