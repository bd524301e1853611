//! The node record: ENR fields of the consensus p2p spec (`eth2`, `attnets`, `syncnets`, `cgc`,
//! `nfd`, `quic`), and conversions between ENRs, libp2p keys, peer ids and multiaddrs.
//!
//! [spec]: phase0/p2p-interface.md#enr-structure, fulu/p2p-interface.md#enr-structure

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ::enr::{CombinedKey, CombinedPublicKey, EnrKey, EnrPublicKey};
use alloy_rlp::Bytes;
use discv5::Enr;
use libp2p::identity::{Keypair, PublicKey};
use libp2p::multiaddr::Protocol as MaProtocol;
use libp2p::{Multiaddr, PeerId};
use ssz::{Decode, Encode};
use ssz_derive::{Decode, Encode};
use ssz_types::BitVector;
use ssz_types::typenum::{U4, U64};
use types::{Epoch, ForkDigest, Version};

/// `eth2`: the SSZ `ENRForkID`.
pub const ETH2_ENR_KEY: &str = "eth2";
/// `attnets`: SSZ `Bitvector[ATTESTATION_SUBNET_COUNT]`.
pub const ATTNETS_ENR_KEY: &str = "attnets";
/// `syncnets`: SSZ `Bitvector[SYNC_COMMITTEE_SUBNET_COUNT]`.
pub const SYNCNETS_ENR_KEY: &str = "syncnets";
/// `cgc`: custody group count, a big-endian integer without leading zeros.
pub const CGC_ENR_KEY: &str = "cgc";
/// `nfd`: the next fork digest (SSZ `Bytes4`).
pub const NFD_ENR_KEY: &str = "nfd";
/// `quic`: the IPv4 QUIC (UDP) port.
pub const QUIC_ENR_KEY: &str = "quic";
/// `quic6`: the IPv6 QUIC (UDP) port.
pub const QUIC6_ENR_KEY: &str = "quic6";

/// `ENRForkID`.
///
/// [spec]: phase0/p2p-interface.md#eth2-field
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub struct EnrForkId {
    /// The node's current fork digest.
    pub fork_digest: ForkDigest,
    /// Version of the next scheduled fork, or the current version if none is scheduled.
    pub next_fork_version: Version,
    /// Epoch of the next scheduled fork, or `FAR_FUTURE_EPOCH` if none is scheduled.
    pub next_fork_epoch: Epoch,
}

/// A malformed or missing ENR field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnrError {
    /// The field is absent.
    #[error("ENR has no `{0}` field")]
    Missing(&'static str),
    /// The field's RLP or SSZ is invalid.
    #[error("ENR field `{0}` is malformed: {1}")]
    Malformed(&'static str, String),
    /// The record's key type has no libp2p peer id here (only secp256k1 is supported).
    #[error("unsupported ENR key type")]
    UnsupportedKey,
    /// Building or signing the record failed.
    #[error("cannot build ENR: {0}")]
    Build(String),
}

/// What goes into this node's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalEnrFields {
    /// The advertised IP address.
    pub ip: IpAddr,
    /// The discv5 UDP port.
    pub udp_port: Option<u16>,
    /// The libp2p TCP port.
    pub tcp_port: Option<u16>,
    /// The libp2p QUIC port.
    pub quic_port: Option<u16>,
    /// `eth2`.
    pub fork_id: EnrForkId,
    /// `attnets`.
    pub attnets: BitVector<U64>,
    /// `syncnets`.
    pub syncnets: BitVector<U4>,
    /// `cgc`; `None` before Fulu is scheduled.
    pub custody_group_count: Option<u64>,
    /// `nfd`; `None` before Fulu is scheduled.
    pub next_fork_digest: Option<ForkDigest>,
}

/// Builds and signs a record with every eth2 field.
pub fn build_enr(key: &CombinedKey, fields: &LocalEnrFields, seq: u64) -> Result<Enr, EnrError> {
    let mut builder = ::enr::Enr::builder();
    builder.seq(seq.max(1));
    builder.ip(fields.ip);
    let v4 = fields.ip.is_ipv4();
    if let Some(port) = fields.udp_port {
        if v4 {
            builder.udp4(port);
        } else {
            builder.udp6(port);
        }
    }
    if let Some(port) = fields.tcp_port {
        if v4 {
            builder.tcp4(port);
        } else {
            builder.tcp6(port);
        }
    }
    if let Some(port) = fields.quic_port {
        builder.add_value(if v4 { QUIC_ENR_KEY } else { QUIC6_ENR_KEY }, &port);
    }
    builder.add_value(ETH2_ENR_KEY, &Bytes::from(fields.fork_id.as_ssz_bytes()));
    builder.add_value(ATTNETS_ENR_KEY, &Bytes::from(fields.attnets.as_ssz_bytes()));
    builder.add_value(
        SYNCNETS_ENR_KEY,
        &Bytes::from(fields.syncnets.as_ssz_bytes()),
    );
    if let Some(cgc) = fields.custody_group_count {
        builder.add_value(CGC_ENR_KEY, &cgc);
    }
    if let Some(nfd) = fields.next_fork_digest {
        builder.add_value(NFD_ENR_KEY, &Bytes::from(nfd.to_vec()));
    }
    builder
        .build(key)
        .map_err(|e| EnrError::Build(e.to_string()))
}

fn bytes_field(enr: &Enr, key: &'static str) -> Result<Bytes, EnrError> {
    enr.get_decodable::<Bytes>(key)
        .ok_or(EnrError::Missing(key))?
        .map_err(|e| EnrError::Malformed(key, e.to_string()))
}

/// Reads the eth2 fields of a record.
pub trait Eth2Enr {
    /// `eth2`.
    fn eth2(&self) -> Result<EnrForkId, EnrError>;
    /// `attnets`.
    fn attnets(&self) -> Result<BitVector<U64>, EnrError>;
    /// `syncnets`.
    fn syncnets(&self) -> Result<BitVector<U4>, EnrError>;
    /// `cgc`.
    fn custody_group_count(&self) -> Result<u64, EnrError>;
    /// `nfd`.
    fn next_fork_digest(&self) -> Result<ForkDigest, EnrError>;
    /// The libp2p peer id of the record's key.
    fn peer_id(&self) -> Result<PeerId, EnrError>;
    /// The libp2p addresses the record advertises: TCP and QUIC, IPv4 and IPv6.
    fn multiaddrs(&self) -> Vec<Multiaddr>;
}

impl Eth2Enr for Enr {
    fn eth2(&self) -> Result<EnrForkId, EnrError> {
        let bytes = bytes_field(self, ETH2_ENR_KEY)?;
        EnrForkId::from_ssz_bytes(&bytes)
            .map_err(|e| EnrError::Malformed(ETH2_ENR_KEY, format!("{e:?}")))
    }

    fn attnets(&self) -> Result<BitVector<U64>, EnrError> {
        let bytes = bytes_field(self, ATTNETS_ENR_KEY)?;
        BitVector::from_ssz_bytes(&bytes)
            .map_err(|e| EnrError::Malformed(ATTNETS_ENR_KEY, format!("{e:?}")))
    }

    fn syncnets(&self) -> Result<BitVector<U4>, EnrError> {
        let bytes = bytes_field(self, SYNCNETS_ENR_KEY)?;
        BitVector::from_ssz_bytes(&bytes)
            .map_err(|e| EnrError::Malformed(SYNCNETS_ENR_KEY, format!("{e:?}")))
    }

    fn custody_group_count(&self) -> Result<u64, EnrError> {
        self.get_decodable::<u64>(CGC_ENR_KEY)
            .ok_or(EnrError::Missing(CGC_ENR_KEY))?
            .map_err(|e| EnrError::Malformed(CGC_ENR_KEY, e.to_string()))
    }

    fn next_fork_digest(&self) -> Result<ForkDigest, EnrError> {
        let bytes = bytes_field(self, NFD_ENR_KEY)?;
        if bytes.len() != 4 {
            return Err(EnrError::Malformed(
                NFD_ENR_KEY,
                format!("{} bytes, expected 4", bytes.len()),
            ));
        }
        Ok(ForkDigest::from_slice(&bytes))
    }

    fn peer_id(&self) -> Result<PeerId, EnrError> {
        match self.public_key() {
            CombinedPublicKey::Secp256k1(key) => {
                let encoded = EnrPublicKey::encode(&key);
                let key = libp2p::identity::secp256k1::PublicKey::try_from_bytes(&encoded)
                    .map_err(|_| EnrError::UnsupportedKey)?;
                Ok(PublicKey::from(key).to_peer_id())
            }
            _ => Err(EnrError::UnsupportedKey),
        }
    }

    fn multiaddrs(&self) -> Vec<Multiaddr> {
        let mut out = Vec::new();
        let quic4 = self.get_decodable::<u16>(QUIC_ENR_KEY).and_then(Result::ok);
        let quic6 = self
            .get_decodable::<u16>(QUIC6_ENR_KEY)
            .and_then(Result::ok);
        if let Some(ip) = self.ip4() {
            push_addrs(&mut out, MaProtocol::Ip4(ip), self.tcp4(), quic4);
        }
        if let Some(ip) = self.ip6() {
            push_addrs(&mut out, MaProtocol::Ip6(ip), self.tcp6(), quic6);
        }
        out
    }
}

fn push_addrs(
    out: &mut Vec<Multiaddr>,
    ip: MaProtocol<'static>,
    tcp: Option<u16>,
    quic: Option<u16>,
) {
    if let Some(port) = tcp {
        out.push(
            Multiaddr::empty()
                .with(ip.clone())
                .with(MaProtocol::Tcp(port)),
        );
    }
    if let Some(port) = quic {
        out.push(
            Multiaddr::empty()
                .with(ip)
                .with(MaProtocol::Udp(port))
                .with(MaProtocol::QuicV1),
        );
    }
}

/// The discv5 key of a libp2p secp256k1 identity (the same key signs the ENR and the Noise
/// handshake, so the ENR's node id and the libp2p peer id name one node).
pub fn enr_key_from_keypair(keypair: &Keypair) -> Result<CombinedKey, EnrError> {
    let secp = keypair
        .clone()
        .try_into_secp256k1()
        .map_err(|_| EnrError::UnsupportedKey)?;
    let mut secret = secp.secret().to_bytes();
    CombinedKey::secp256k1_from_bytes(&mut secret).map_err(|e| EnrError::Build(e.to_string()))
}

/// The discv5 node id of a libp2p secp256k1 identity (`keccak256` of the uncompressed public
/// key), raw: what custody groups and long-lived subnets are computed from, known before the
/// ENR is built.
pub fn node_id_of_keypair(keypair: &Keypair) -> Result<[u8; 32], EnrError> {
    let key = enr_key_from_keypair(keypair)?;
    Ok(::enr::NodeId::from(key.public()).raw())
}

/// An unspecified address is not dialable: advertise loopback instead.
pub fn advertised_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        other => other,
    }
}

/// A boot node's record as an operator reads it: node id, IPv4 and its UDP (discovery), TCP
/// and QUIC ports (`-` where the record has none).
pub fn boot_node_summary(enr: &Enr) -> String {
    let port = |p: Option<u16>| p.map_or_else(|| "-".to_string(), |p| p.to_string());
    let quic = enr.get_decodable::<u16>(QUIC_ENR_KEY).and_then(Result::ok);
    format!(
        "node id 0x{}  ip {}  udp {}  tcp {}  quic {}",
        enr.node_id()
            .raw()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>(),
        enr.ip4()
            .map_or_else(|| "-".to_string(), |ip| ip.to_string()),
        port(enr.udp4()),
        port(enr.tcp4()),
        port(quic),
    )
}

/// The boot nodes of a built-in network, parsed: the records `network` publishes.
pub fn built_in_boot_nodes(network: types::Network) -> Result<Vec<Enr>, String> {
    network
        .boot_enrs()
        .iter()
        .map(|text| {
            text.parse::<Enr>()
                .map_err(|e| format!("the built-in {network} boot node {text}: {e}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> LocalEnrFields {
        let mut attnets = BitVector::<U64>::new();
        attnets.set(1, true).unwrap();
        attnets.set(63, true).unwrap();
        let mut syncnets = BitVector::<U4>::new();
        syncnets.set(2, true).unwrap();
        LocalEnrFields {
            ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            udp_port: Some(9000),
            tcp_port: Some(9001),
            quic_port: Some(9002),
            fork_id: EnrForkId {
                fork_digest: ForkDigest::from([1, 2, 3, 4]),
                next_fork_version: Version::from([5, 0, 0, 0]),
                next_fork_epoch: u64::MAX,
            },
            attnets,
            syncnets,
            custody_group_count: Some(128),
            next_fork_digest: Some(ForkDigest::from([9, 9, 9, 9])),
        }
    }

    #[test]
    fn node_id_of_a_keypair_is_its_enrs() {
        let keypair = Keypair::generate_secp256k1();
        let key = enr_key_from_keypair(&keypair).unwrap();
        let enr = build_enr(&key, &fields(), 1).unwrap();
        assert_eq!(node_id_of_keypair(&keypair).unwrap(), enr.node_id().raw());
    }

    #[test]
    fn eth2_fields_round_trip() {
        let keypair = Keypair::generate_secp256k1();
        let key = enr_key_from_keypair(&keypair).unwrap();
        let fields = fields();
        let enr = build_enr(&key, &fields, 1).unwrap();
        // Through text and back, as a boot node ENR would travel.
        let enr: Enr = enr.to_base64().parse().unwrap();
        assert_eq!(enr.eth2().unwrap(), fields.fork_id);
        assert_eq!(enr.attnets().unwrap(), fields.attnets);
        assert_eq!(enr.syncnets().unwrap(), fields.syncnets);
        assert_eq!(enr.custody_group_count().unwrap(), 128);
        assert_eq!(
            enr.next_fork_digest().unwrap(),
            ForkDigest::from([9, 9, 9, 9])
        );
        assert_eq!(enr.peer_id().unwrap(), keypair.public().to_peer_id());
        let addrs: Vec<String> = enr.multiaddrs().iter().map(ToString::to_string).collect();
        assert_eq!(
            addrs,
            vec!["/ip4/10.0.0.1/tcp/9001", "/ip4/10.0.0.1/udp/9002/quic-v1"]
        );
    }

    #[test]
    fn field_encodings_match_the_spec() {
        let key = CombinedKey::generate_secp256k1();
        let enr = build_enr(&key, &fields(), 1).unwrap();
        // eth2: an RLP string of the 16-byte SSZ ENRForkID.
        let raw = enr.get_raw_rlp(ETH2_ENR_KEY).unwrap();
        assert_eq!(raw[0], 0x80 + 16);
        assert_eq!(&raw[1..5], &[1, 2, 3, 4]);
        // attnets: 8 bytes, bits 1 and 63 set (SSZ bit order: little-endian within bytes).
        let raw = enr.get_raw_rlp(ATTNETS_ENR_KEY).unwrap();
        assert_eq!(raw, &[0x88, 0b10, 0, 0, 0, 0, 0, 0, 0x80]);
        // syncnets: one byte with bit 2 (a single byte < 0x80 is its own RLP).
        assert_eq!(enr.get_raw_rlp(SYNCNETS_ENR_KEY).unwrap(), &[0b100]);
        // cgc: big-endian without leading zeros; 128 needs a string header.
        assert_eq!(enr.get_raw_rlp(CGC_ENR_KEY).unwrap(), &[0x81, 0x80]);
        // nfd: 4 bytes.
        assert_eq!(enr.get_raw_rlp(NFD_ENR_KEY).unwrap(), &[0x84, 9, 9, 9, 9]);
    }

    #[test]
    fn cgc_zero_is_the_empty_string_and_missing_fields_are_errors() {
        let key = CombinedKey::generate_secp256k1();
        let mut f = fields();
        f.custody_group_count = Some(0);
        f.next_fork_digest = None;
        let enr = build_enr(&key, &f, 1).unwrap();
        assert_eq!(enr.get_raw_rlp(CGC_ENR_KEY).unwrap(), &[0x80]);
        assert_eq!(enr.custody_group_count().unwrap(), 0);
        assert_eq!(enr.next_fork_digest(), Err(EnrError::Missing(NFD_ENR_KEY)));
    }

    #[test]
    fn malformed_fields_are_errors() {
        let key = CombinedKey::generate_secp256k1();
        let mut builder = ::enr::Enr::builder();
        builder.ip4(Ipv4Addr::LOCALHOST);
        builder.add_value(ETH2_ENR_KEY, &Bytes::from(vec![1u8, 2, 3]));
        builder.add_value(ATTNETS_ENR_KEY, &Bytes::from(vec![1u8; 9]));
        builder.add_value(NFD_ENR_KEY, &Bytes::from(vec![1u8; 5]));
        let enr = builder.build(&key).unwrap();
        assert!(matches!(
            enr.eth2(),
            Err(EnrError::Malformed(ETH2_ENR_KEY, _))
        ));
        assert!(matches!(
            enr.attnets(),
            Err(EnrError::Malformed(ATTNETS_ENR_KEY, _))
        ));
        assert!(matches!(
            enr.next_fork_digest(),
            Err(EnrError::Malformed(NFD_ENR_KEY, _))
        ));
        assert_eq!(enr.syncnets(), Err(EnrError::Missing(SYNCNETS_ENR_KEY)));
    }

    #[test]
    fn every_built_in_boot_node_parses_and_names_a_udp_port() {
        for (network, count) in [
            (types::Network::Mainnet, 17),
            (types::Network::Sepolia, 9),
            (types::Network::Hoodi, 9),
        ] {
            let enrs = built_in_boot_nodes(network).unwrap();
            assert_eq!(enrs.len(), count, "{network}");
            for enr in &enrs {
                assert!(enr.udp4().is_some() || enr.udp6().is_some(), "{enr}");
                assert!(enr.peer_id().is_ok(), "{enr}");
                let summary = boot_node_summary(enr);
                assert!(summary.starts_with("node id 0x"), "{summary}");
            }
            // No two records of one network name the same node.
            let mut ids: Vec<[u8; 32]> = enrs.iter().map(|e| e.node_id().raw()).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), count, "{network}");
        }
    }
}
