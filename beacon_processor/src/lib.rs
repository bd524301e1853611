//! The beacon node's CPU scheduler. Every piece of work from the network, the API and the slot
//! timers is submitted here; the processor queues it by kind (bounded, FIFO or LIFO, oldest
//! dropped when full), picks what runs next by strict priority with a fairness turn, hands
//! attestations, aggregates and data columns to the chain's batch handlers in batches, and runs
//! everything on rayon pools it owns and sizes, so that a burst never runs more threads than
//! `cores + 1`.
//!
//! It knows nothing of the chain: tasks are closures ([`Task`]) and batchable items are the
//! handler's own types ([`BatchHandlers`]).
//!
//! **One rule for handlers:** never hold a lock across a parallel call on the pool
//! (`ctx.pool().install(..)`, `par_iter`). While a thread waits for the pieces it handed out,
//! rayon may run another item on it, and that item may want the same lock.
//!
//! The README's table lists every [`WorkKind`] with its priority, order, capacity and batching.

mod kind;
mod metrics;
mod processor;
mod queue;
mod scheduler;
mod work;

pub use kind::{Batching, KIND_COUNT, Pool, QueueOrder, WorkKind};
pub use processor::{
    BeaconProcessor, BeaconProcessorConfig, BuildError, ProcessorPools, ShutdownMode, SubmitError,
};
pub use work::{BatchHandlers, BatchItem, DropReason, Task, Work, WorkerContext};
