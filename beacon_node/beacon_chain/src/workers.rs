//! The node's CPU workers as the chain's asynchronous callers use them: block production and
//! publication (on the API's behalf) and the API's handlers hand their CPU work to the beacon
//! processor's API kinds (`api_request_p0` for a validator's duties on the clock,
//! `api_request_p1` for the rest), and the slot timers theirs to its `state_advance` and
//! `cache_priming` kinds, so that it shares the node's one thread budget (the processor's
//! pools) instead of holding an async worker or tokio's blocking pool. The client gives the
//! processor to the chain's users at start; a chain without one (tools, a node without peers,
//! tests without a processor) runs the work on tokio's blocking pool.

use std::sync::Arc;

/// The priority of a piece of CPU work done for an asynchronous caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkPriority {
    /// Validator duties on the clock (production, attestation data, duties, publication):
    /// the processor's `api_request_p0`.
    P0,
    /// Everything else the API asks: the processor's `api_request_p1`.
    P1,
    /// The head state's advance to the next slot, and the payload preparation on it, before
    /// the slot starts: the processor's `state_advance`.
    StateAdvance,
    /// The chain's caches off the import path (bounding the states held in memory): the
    /// processor's `cache_priming`.
    Caches,
}

/// A job refused by the workers: the queue of its kind is full, or the node is stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the node's workers did not take the work (queue full or stopping)")]
pub struct WorkersRefused;

/// Why work handed to the workers has no answer. Never the caller's fault: the node is
/// overloaded or stopping, or the work itself failed (a bug).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WorkersUnavailable {
    /// The workers refused the job.
    #[error(transparent)]
    Refused(#[from] WorkersRefused),
    /// The job was dropped unrun (the node is stopping).
    #[error("the work was dropped unrun (the node is stopping or overloaded)")]
    Dropped,
    /// The work panicked (on tokio's blocking pool; a panic on a processor worker drops the
    /// answer, as [`Self::Dropped`]).
    #[error("the work panicked")]
    Panicked,
}

/// The node's CPU workers.
pub trait Workers: Send + Sync + 'static {
    /// Queues `job` at `priority`. A job queued and later dropped unrun (shutdown) is
    /// dropped: its caller sees its answer channel close.
    fn submit(
        &self,
        priority: WorkPriority,
        job: Box<dyn FnOnce() + Send + 'static>,
    ) -> Result<(), WorkersRefused>;
}

/// Runs `f` on `workers` at `priority` (tokio's blocking pool without workers) and returns its
/// answer. The job runs inside the calling runtime's context: what it calls may spawn on the
/// runtime (a streamed body's writer).
pub async fn run_on_workers<T: Send + 'static>(
    workers: Option<Arc<dyn Workers>>,
    priority: WorkPriority,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, WorkersUnavailable> {
    let Some(workers) = workers else {
        return tokio::task::spawn_blocking(f).await.map_err(|e| {
            if e.is_panic() {
                WorkersUnavailable::Panicked
            } else {
                WorkersUnavailable::Dropped
            }
        });
    };
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let runtime = tokio::runtime::Handle::current();
    workers.submit(
        priority,
        Box::new(move || {
            let _context = runtime.enter();
            // The caller may have gone away meanwhile: nothing to answer.
            let _ = sender.send(f());
        }),
    )?;
    receiver.await.map_err(|_| WorkersUnavailable::Dropped)
}
