//! The router's metrics: gossip messages per topic and verdict, gossip work the processor
//! dropped, req/resp requests served per protocol and result (sync keeps its own).

use prometheus::{IntCounterVec, Opts, Registry};

/// Every metric the router keeps.
#[derive(Debug, Clone)]
pub(crate) struct Metrics {
    /// `beacon_gossip_messages_total{topic, verdict}`.
    pub(crate) gossip: IntCounterVec,
    /// `beacon_gossip_work_dropped_total{topic}`: gossip the processor dropped (given IGNORE).
    pub(crate) gossip_dropped: IntCounterVec,
    /// `beacon_rpc_requests_served_total{protocol, result}`.
    pub(crate) rpc_served: IntCounterVec,
    /// `beacon_rpc_response_chunks_total{protocol}`.
    pub(crate) rpc_chunks: IntCounterVec,
}

impl Metrics {
    pub(crate) fn new() -> Result<Self, prometheus::Error> {
        Ok(Self {
            gossip: IntCounterVec::new(
                Opts::new(
                    "beacon_gossip_messages_total",
                    "Gossip messages validated, per topic and verdict",
                ),
                &["topic", "verdict"],
            )?,
            gossip_dropped: IntCounterVec::new(
                Opts::new(
                    "beacon_gossip_work_dropped_total",
                    "Gossip messages the beacon processor dropped (each given IGNORE)",
                ),
                &["topic"],
            )?,
            rpc_served: IntCounterVec::new(
                Opts::new(
                    "beacon_rpc_requests_served_total",
                    "Req/resp requests answered, per protocol and result",
                ),
                &["protocol", "result"],
            )?,
            rpc_chunks: IntCounterVec::new(
                Opts::new(
                    "beacon_rpc_response_chunks_total",
                    "Successful response chunks sent, per protocol",
                ),
                &["protocol"],
            )?,
        })
    }

    pub(crate) fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        registry.register(Box::new(self.gossip.clone()))?;
        registry.register(Box::new(self.gossip_dropped.clone()))?;
        registry.register(Box::new(self.rpc_served.clone()))?;
        registry.register(Box::new(self.rpc_chunks.clone()))?;
        Ok(())
    }
}
