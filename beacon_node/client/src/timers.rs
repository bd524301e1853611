//! The slot clock's timers and the reactions to chain events.
//!
//! - At each slot's start: fork choice's `on_tick` (queued votes of the last slot count from
//!   now), the head recomputed, the operation pool pruned to what the new head can still
//!   include, one log line.
//! - Two thirds into each slot: the head state advanced to the next slot (its empty slot, any
//!   epoch transition, its hash and caches; `BeaconChain::advance_head_state`), on the beacon
//!   processor's `state_advance` kind (tokio's blocking pool for a node without a processor),
//!   so that the next slot's block is imported and produced on it without that work;
//!   then payload preparation for the next slot's proposer (`engine_forkchoiceUpdated` with
//!   payload attributes), so the execution client builds the payload before it is asked for it.
//! - On every new head: `engine_forkchoiceUpdated`, so the execution client follows the chain.
//!   A head that arrives after its slot's advance point (a late block: the timer advanced the
//!   state of the head before it) is advanced to the next slot at once, and the next slot's
//!   payload prepared on it, so that the next block does not pay for the lateness of this one.
//!   On every new finalized checkpoint: the pool drops what finality made useless.

use std::sync::Arc;
use std::time::Duration;

use beacon_chain::BeaconChain;
use beacon_chain::events::ChainEvent;
use beacon_chain::execution::update_execution_head;
use beacon_chain::production::BlockProducer;
use beacon_chain::workers::{WorkPriority, Workers, WorkersUnavailable, run_on_workers};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;
use types::{EthSpec, Slot};

use crate::metrics::NodeMetrics;

/// Basis points of a slot at which the head state is advanced to the next slot and the next
/// slot's payload prepared (two thirds: after the slot's attestations and aggregates are due,
/// when the slot's block has almost always arrived, with a third of a slot for the advance and
/// for the execution client to build).
const PREPARE_PAYLOAD_BPS: u64 = 6_667;

/// Sleeps until the chain's clock reads `at_ms` or `shutdown` turns true; `false` on shutdown.
async fn sleep_until_ms<E: EthSpec>(
    producer: &BlockProducer<E>,
    at_ms: u64,
    shutdown: &mut watch::Receiver<bool>,
) -> bool {
    let now = producer.chain().now_ms();
    let wait = Duration::from_millis(at_ms.saturating_sub(now));
    let stopped = tokio::select! {
        () = tokio::time::sleep(wait) => false,
        _ = shutdown.wait_for(|stop| *stop) => true,
    };
    !stopped && !*shutdown.borrow()
}

/// The node's CPU workers (the beacon processor), if it has them.
type NodeWorkers = Option<Arc<dyn Workers>>;

/// Runs the per-slot work until `shutdown`; the CPU work on `workers`.
pub async fn run_slot_timer<E: EthSpec>(
    producer: Arc<BlockProducer<E>>,
    workers: NodeWorkers,
    metrics: NodeMetrics,
    mut shutdown: watch::Receiver<bool>,
) {
    let chain = producer.chain().clone();
    let slot_ms = chain.spec().slot_duration_ms;
    loop {
        let now = chain.now_ms();
        let genesis_ms = chain.compute_time_at_slot_ms(0);
        // Before genesis the first tick is genesis itself (slot 0 starts then).
        let slot: Slot = if now < genesis_ms {
            0
        } else {
            chain.slot_at_ms(now) + 1
        };
        let prepare_at = chain
            .compute_time_at_slot_ms(slot.saturating_sub(1))
            .saturating_add(slot_ms * PREPARE_PAYLOAD_BPS / 10_000);
        if slot > 0 && now < prepare_at {
            if !sleep_until_ms(&producer, prepare_at, &mut shutdown).await {
                return;
            }
            advance_and_prepare(&producer, &workers, slot).await;
        }
        if !sleep_until_ms(
            &producer,
            chain.compute_time_at_slot_ms(slot),
            &mut shutdown,
        )
        .await
        {
            return;
        }
        on_slot_start(&producer, &metrics, slot);
        if slot % E::slots_per_epoch() == E::slots_per_epoch() / 2 {
            bound_state_memory(&chain, &workers);
        }
    }
}

/// Measures the states fork choice holds and bounds them by memory
/// (`BeaconChain::bound_state_memory`), on the processor's `cache_priming` kind, not waited
/// for: once per epoch, mid-epoch, away from the epoch transition's work.
fn bound_state_memory<E: EthSpec>(chain: &Arc<BeaconChain<E>>, workers: &NodeWorkers) {
    let chain = chain.clone();
    let work = run_on_workers(workers.clone(), WorkPriority::Caches, move || {
        let bound = chain.bound_state_memory();
        tracing::debug!(
            mib = bound.measured_bytes >> 20,
            states = bound.measured_states,
            limit = bound.block_states_limit,
            held = bound.block_states,
            copy_ms = bound.copying.as_millis(),
            walk_ms = bound.measuring.as_millis(),
            "states in memory measured"
        );
    });
    tokio::spawn(async move {
        if let Err(e) = work.await {
            tracing::debug!(error = %e, "the states in memory were not measured this epoch");
        }
    });
}

/// The head state advanced to `slot`, then the payload of `slot` prepared on it; neither for a
/// head far behind the clock (a syncing node).
async fn advance_and_prepare<E: EthSpec>(
    producer: &BlockProducer<E>,
    workers: &NodeWorkers,
    slot: Slot,
) {
    if !advance_head_state(producer.chain(), workers, slot).await {
        return;
    }
    match producer.prepare_payload_for_slot(slot).await {
        Ok(Some(_)) => tracing::debug!(slot, "payload prepared"),
        Ok(None) => {}
        Err(e) => tracing::warn!(slot, error = %e, "payload preparation failed"),
    }
}

/// Advances the head state to `slot` on the processor's `state_advance` kind (at 1,000,000
/// validators an epoch transition and its hashing take seconds; tokio's blocking pool without
/// a processor): the slot's block and production start from it. `false` when the head is too
/// far behind the clock to be advanced (`beacon_chain::state_advance::MAX_ADVANCE_SLOTS`: the
/// node is syncing).
async fn advance_head_state<E: EthSpec>(
    chain: &Arc<BeaconChain<E>>,
    workers: &NodeWorkers,
    slot: Slot,
) -> bool {
    let advancing = chain.clone();
    let started = std::time::Instant::now();
    let advanced = run_on_workers(workers.clone(), WorkPriority::StateAdvance, move || {
        advancing.advance_head_state(slot)
    })
    .await;
    match advanced {
        Ok(Ok(Some((head, _)))) => {
            tracing::debug!(
                slot,
                %head,
                ms = started.elapsed().as_millis(),
                "head state advanced"
            );
            true
        }
        Ok(Ok(None)) => {
            tracing::debug!(
                slot,
                head_slot = chain.head().slot,
                "head too far behind to advance"
            );
            false
        }
        // The head is at the slot already (a block of the slot came early): nothing to do.
        Ok(Err(_)) if chain.head().slot >= slot => true,
        Ok(Err(e)) => {
            tracing::warn!(slot, error = %e, "advancing the head state failed");
            true
        }
        Err(e @ (WorkersUnavailable::Refused(_) | WorkersUnavailable::Dropped)) => {
            tracing::debug!(slot, error = %e, "the head state was not advanced");
            true
        }
        Err(e @ WorkersUnavailable::Panicked) => {
            tracing::warn!(slot, error = %e, "the head state's advance stopped");
            true
        }
    }
}

/// The slot to advance a new head at `head_slot` to right away: the next slot, when the head
/// became head (at `now_ms`) after the slot timer's advance point in its own slot (it came late,
/// after the timer advanced the head before it) and before the next slot starts. `None`
/// otherwise: the timer's advance at that point covers an earlier head, and a head of an older
/// slot (a reorg, a node catching up) is left to the timer.
fn late_head_advance(
    head_slot: Slot,
    now_ms: u64,
    head_slot_start_ms: u64,
    slot_ms: u64,
) -> Option<Slot> {
    let advance_at = head_slot_start_ms.saturating_add(slot_ms * PREPARE_PAYLOAD_BPS / 10_000);
    let next_slot_start = head_slot_start_ms.saturating_add(slot_ms);
    (now_ms >= advance_at && now_ms < next_slot_start).then_some(head_slot + 1)
}

/// The work at the start of `slot`.
fn on_slot_start<E: EthSpec>(producer: &BlockProducer<E>, metrics: &NodeMetrics, slot: Slot) {
    let chain = producer.chain();
    chain.on_tick();
    let head = match chain.recompute_head() {
        Ok(head) => head,
        Err(e) => {
            tracing::error!(slot, error = %e, "head recomputation failed");
            chain.head()
        }
    };
    if let Err(e) = producer.pool().prune_on_head(&head.state) {
        tracing::warn!(slot, error = %e, "operation pool pruning failed");
    }
    let counts = producer.pool().counts();
    metrics
        .clock_slot
        .set(i64::try_from(slot).unwrap_or(i64::MAX));
    metrics.observe_head(&head);
    metrics.observe_pool(&counts);
    metrics
        .fork_choice_block_states
        .set(i64::try_from(chain.state_cache_block_states()).unwrap_or(i64::MAX));
    tracing::info!(
        slot,
        head_slot = head.slot,
        head = %head.block_root,
        justified_epoch = head.justified_checkpoint.epoch,
        finalized_epoch = head.finalized_checkpoint.epoch,
        optimistic = head.execution_optimistic,
        pool_aggregates = counts.aggregates,
        "slot"
    );
}

/// Follows the chain's events until `shutdown`: the execution client is told every new head,
/// the pool is pruned at every new finalized checkpoint. A late head's advance runs on
/// `workers`.
pub async fn follow_chain_events<E: EthSpec>(
    producer: Arc<BlockProducer<E>>,
    workers: NodeWorkers,
    metrics: NodeMetrics,
    mut shutdown: watch::Receiver<bool>,
) {
    let chain = producer.chain().clone();
    let mut events = chain.events().subscribe();
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = shutdown.wait_for(|stop| *stop) => return,
        };
        match event {
            Ok(ChainEvent::Head { .. }) | Err(RecvError::Lagged(_)) => {
                let head = chain.head();
                metrics.observe_head(&head);
                // A lagged receiver missed heads: the current one is what counts.
                if let Err(e) = update_execution_head(&chain, producer.engine(), None).await {
                    tracing::warn!(error = %e, "forkchoiceUpdated failed");
                }
                if let Some(slot) = late_head_advance(
                    head.slot,
                    chain.now_ms(),
                    chain.compute_time_at_slot_ms(head.slot),
                    chain.spec().slot_duration_ms,
                ) {
                    // Beside the event loop: the advance can take seconds, and the next
                    // heads' forkchoiceUpdated must not wait for it.
                    let producer = producer.clone();
                    let workers = workers.clone();
                    tokio::spawn(
                        async move { advance_and_prepare(&producer, &workers, slot).await },
                    );
                }
            }
            Ok(ChainEvent::FinalizedCheckpoint { epoch, .. }) => {
                tracing::info!(epoch, "finalized");
                if let Err(e) = producer.pool().prune_on_finality(&chain.head().state) {
                    tracing::warn!(error = %e, "operation pool pruning at finality failed");
                }
            }
            Ok(_) => {}
            Err(RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_head_that_became_head_after_its_slots_advance_point_is_advanced_at_once() {
        let slot_ms = 12_000;
        let start = 1_000_000;
        // Two thirds into a 12 s slot (in whole milliseconds).
        let advance_at = start + slot_ms * PREPARE_PAYLOAD_BPS / 10_000;
        assert_eq!(advance_at, start + 8_000);
        // In time: the timer's advance will see this head.
        assert_eq!(late_head_advance(7, start, start, slot_ms), None);
        assert_eq!(late_head_advance(7, advance_at - 1, start, slot_ms), None);
        // Late, still in its slot: advanced to the next slot now.
        assert_eq!(late_head_advance(7, advance_at, start, slot_ms), Some(8));
        assert_eq!(
            late_head_advance(7, start + slot_ms - 1, start, slot_ms),
            Some(8)
        );
        // A head of a slot that has passed: the timer's advance of the current slot covers it.
        assert_eq!(late_head_advance(7, start + slot_ms, start, slot_ms), None);
        assert_eq!(
            late_head_advance(7, start + 5 * slot_ms, start, slot_ms),
            None
        );
    }
}
