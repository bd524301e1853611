//! discv5 discovery: runs the discv5 service with this node's ENR, finds peers on the same fork
//! digest and hands their ENRs to the swarm.
//!
//! [spec]: phase0/p2p-interface.md#the-discovery-domain-discv5

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use discv5::{ConfigBuilder, Discv5, Enr, ListenConfig};
use enr::{CombinedKey, NodeId};
use tokio::sync::mpsc;
use types::ForkDigest;

use crate::enr::{EnrError, Eth2Enr};

/// Most ENRs one query asks for.
const QUERY_TARGET_PEERS: usize = 16;

/// What discovery reports to the service.
#[derive(Debug)]
pub enum DiscoveryEvent {
    /// ENRs found by a query or learned from a session, worth dialing if eligible.
    Found(Vec<Enr>),
    /// A query finished (successfully or not).
    QueryDone,
}

/// Why discovery could not start.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The discv5 service refused the configuration or socket.
    #[error("discv5: {0}")]
    Discv5(String),
    /// The local ENR could not be built.
    #[error(transparent)]
    Enr(#[from] EnrError),
}

/// A running discv5 service.
pub struct Discovery {
    discv5: Arc<Discv5>,
    events: mpsc::Sender<DiscoveryEvent>,
    query_in_flight: bool,
}

impl Discovery {
    /// Starts discv5 on `listen` with `local_enr`, adds the boot nodes and forwards session and
    /// discovery events into `events`.
    pub async fn start(
        local_enr: Enr,
        key: CombinedKey,
        listen: SocketAddr,
        boot_nodes: &[Enr],
        events: mpsc::Sender<DiscoveryEvent>,
    ) -> Result<Self, DiscoveryError> {
        let config = ConfigBuilder::new(ListenConfig::from_ip(listen.ip(), listen.port()))
            .request_timeout(Duration::from_secs(2))
            .query_timeout(Duration::from_secs(10))
            .ping_interval(Duration::from_secs(30))
            .build();
        let mut discv5 =
            Discv5::new(local_enr, key, config).map_err(|e| DiscoveryError::Discv5(e.into()))?;
        discv5
            .start()
            .await
            .map_err(|e| DiscoveryError::Discv5(e.to_string()))?;
        for enr in boot_nodes {
            if let Err(e) = discv5.add_enr(enr.clone()) {
                tracing::warn!(error = e, "boot node ENR refused");
            }
        }
        let mut stream = discv5
            .event_stream()
            .await
            .map_err(|e| DiscoveryError::Discv5(e.to_string()))?;
        let forward = events.clone();
        tokio::spawn(async move {
            while let Some(event) = stream.recv().await {
                let found = match event {
                    discv5::Event::Discovered(enr) => enr,
                    discv5::Event::SessionEstablished(enr, _) => enr,
                    _ => continue,
                };
                if forward
                    .send(DiscoveryEvent::Found(vec![found]))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        Ok(Self {
            discv5: Arc::new(discv5),
            events,
            query_in_flight: false,
        })
    }

    /// The current local ENR.
    pub fn local_enr(&self) -> Enr {
        self.discv5.local_enr()
    }

    /// Sets a field of the local ENR (re-signed, sequence number bumped).
    pub fn enr_insert<T: alloy_rlp::Encodable>(&self, key: &str, value: &T) {
        if let Err(e) = self.discv5.enr_insert(key, value) {
            tracing::warn!(key, error = ?e, "cannot update local ENR");
        }
    }

    /// Starts a random-target query for peers on `digest`, unless one is running.
    pub fn start_query(&mut self, digest: ForkDigest) {
        if self.query_in_flight {
            return;
        }
        self.query_in_flight = true;
        let query = self.discv5.find_node_predicate(
            NodeId::random(),
            Box::new(move |enr: &Enr| eligible(enr, &[digest])),
            QUERY_TARGET_PEERS,
        );
        let table: Vec<Enr> = self.discv5.table_entries_enr();
        let events = self.events.clone();
        tokio::spawn(async move {
            let mut found = match query.await {
                Ok(found) => found,
                Err(e) => {
                    tracing::debug!(error = ?e, "discovery query failed");
                    Vec::new()
                }
            };
            // With few nodes on the network a query returns little; the routing table holds
            // the nodes we already have sessions with.
            found.extend(table);
            let _ = events.send(DiscoveryEvent::Found(found)).await;
            let _ = events.send(DiscoveryEvent::QueryDone).await;
        });
    }

    /// Marks the running query as finished.
    pub fn query_done(&mut self) {
        self.query_in_flight = false;
    }

    /// Bans a node from discovery too.
    pub fn ban(&self, enr_node: &NodeId, duration: Duration) {
        self.discv5.ban_node(enr_node, Some(duration));
    }
}

/// Whether an ENR belongs to a node on one of our fork digests and advertises a libp2p address.
pub fn eligible(enr: &Enr, digests: &[ForkDigest]) -> bool {
    enr.eth2()
        .is_ok_and(|fork_id| digests.contains(&fork_id.fork_digest))
        && !enr.multiaddrs().is_empty()
}

/// Picks a free UDP port on `ip` for discv5 when the configuration asks for any port (0).
pub fn free_udp_port(ip: IpAddr) -> std::io::Result<u16> {
    let socket = std::net::UdpSocket::bind(SocketAddr::new(ip, 0))?;
    Ok(socket.local_addr()?.port())
}
