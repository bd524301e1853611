//! The node's own gauges: where the chain is (head, justified and finalized), the clock, the
//! peers, the operation pool, fork choice's states in memory. Updated at every slot and every new head.

use prometheus::{IntGauge, IntGaugeVec, Opts, Registry};

/// The node-level gauges.
#[derive(Debug, Clone)]
pub struct NodeMetrics {
    /// `beacon_head_slot`.
    pub head_slot: IntGauge,
    /// `beacon_clock_slot`: the wall clock's slot.
    pub clock_slot: IntGauge,
    /// `beacon_current_justified_epoch`.
    pub justified_epoch: IntGauge,
    /// `beacon_finalized_epoch`.
    pub finalized_epoch: IntGauge,
    /// `beacon_head_execution_optimistic`: 1 while the head's payload is not validated.
    pub head_optimistic: IntGauge,
    /// `libp2p_peers`: connected peers.
    pub peers: IntGauge,
    /// `beacon_op_pool_operations{kind}`.
    pub op_pool: IntGaugeVec,
    /// `beacon_fork_choice_block_states`: block post-states the chain's state cache holds in
    /// memory (the name kept from when fork choice held them).
    pub fork_choice_block_states: IntGauge,
}

impl NodeMetrics {
    /// The gauges, registered in `registry`.
    pub fn register(registry: &Registry) -> Result<Self, prometheus::Error> {
        let gauge = |name: &str, help: &str| -> Result<IntGauge, prometheus::Error> {
            let g = IntGauge::new(name, help)?;
            registry.register(Box::new(g.clone()))?;
            Ok(g)
        };
        let op_pool = IntGaugeVec::new(
            Opts::new(
                "beacon_op_pool_operations",
                "Operations held by the operation pool, by kind",
            ),
            &["kind"],
        )?;
        registry.register(Box::new(op_pool.clone()))?;
        Ok(Self {
            head_slot: gauge("beacon_head_slot", "Slot of the canonical head block")?,
            clock_slot: gauge("beacon_clock_slot", "The current slot by the wall clock")?,
            justified_epoch: gauge(
                "beacon_current_justified_epoch",
                "Epoch of fork choice's justified checkpoint",
            )?,
            finalized_epoch: gauge(
                "beacon_finalized_epoch",
                "Epoch of fork choice's finalized checkpoint",
            )?,
            head_optimistic: gauge(
                "beacon_head_execution_optimistic",
                "1 while the head's execution payload is not yet validated by the execution client",
            )?,
            peers: gauge("libp2p_peers", "Connected peers")?,
            op_pool,
            fork_choice_block_states: gauge(
                "beacon_fork_choice_block_states",
                "Block post-states the chain's state cache holds in memory (at most its \
                 max_block_states, beside fork choice's checkpoints'; the others are loaded \
                 from the store when needed)",
            )?,
        })
    }

    /// Records the chain's head.
    pub fn observe_head<E: types::EthSpec>(&self, head: &beacon_chain::HeadSnapshot<E>) {
        self.head_slot.set(gauge_value(head.slot));
        self.justified_epoch
            .set(gauge_value(head.justified_checkpoint.epoch));
        self.finalized_epoch
            .set(gauge_value(head.finalized_checkpoint.epoch));
        self.head_optimistic
            .set(i64::from(head.execution_optimistic));
    }

    /// Records the operation pool's contents.
    pub fn observe_pool(&self, counts: &operation_pool::PoolCounts) {
        for (kind, n) in [
            ("attestation_data", counts.attestation_data),
            ("aggregates", counts.aggregates),
            ("sync_contributions", counts.sync_contributions),
            ("proposer_slashings", counts.proposer_slashings),
            ("attester_slashings", counts.attester_slashings),
            ("voluntary_exits", counts.voluntary_exits),
            ("bls_to_execution_changes", counts.bls_to_execution_changes),
        ] {
            self.op_pool.with_label_values(&[kind]).set(gauge_value(n));
        }
    }
}

/// A count as a gauge value (saturating: a gauge is an `i64`).
fn gauge_value(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}
