//! Where the API's CPU work runs: on the node's CPU pools, through the beacon processor's API
//! kinds (`api_request_p0` for the validator client's duties, `api_request_p1` for the rest),
//! so that requests share the node's one thread budget and queue behind gossip blocks but ahead
//! of backfill. A server without a processor (no p2p side: tools, tests) runs the work on
//! tokio's blocking pool instead.

use std::sync::Arc;

use crate::error::HttpError;

pub use beacon_chain::workers::{
    WorkPriority as ApiPriority, Workers as ApiWorkers, WorkersRefused,
};
use beacon_chain::workers::{WorkersUnavailable, run_on_workers};

/// Runs `f` on `workers` at `priority` (tokio's blocking pool without workers) and returns its
/// answer. A refused or dropped job is a 503: the node is overloaded or stopping, not the
/// request at fault.
pub(crate) async fn run_blocking<T: Send + 'static>(
    workers: Option<Arc<dyn ApiWorkers>>,
    priority: ApiPriority,
    f: impl FnOnce() -> Result<T, HttpError> + Send + 'static,
) -> Result<T, HttpError> {
    run_on_workers(workers, priority, f)
        .await
        .map_err(|e| match e {
            WorkersUnavailable::Panicked => HttpError::internal(format!("worker failed: {e}")),
            WorkersUnavailable::Refused(_) | WorkersUnavailable::Dropped => {
                HttpError::Unavailable(e.to_string())
            }
        })?
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Runs each job at once on a thread of its own, recording its priority; or refuses it; or
    /// drops it unrun.
    #[derive(Default)]
    struct Fake {
        refuse: bool,
        drop_unrun: bool,
        seen: Mutex<Vec<ApiPriority>>,
    }

    impl ApiWorkers for Fake {
        fn submit(
            &self,
            priority: ApiPriority,
            job: Box<dyn FnOnce() + Send + 'static>,
        ) -> Result<(), WorkersRefused> {
            if self.refuse {
                return Err(WorkersRefused);
            }
            self.seen.lock().expect("not poisoned").push(priority);
            if !self.drop_unrun {
                std::thread::spawn(job);
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn the_work_runs_on_the_workers_at_its_priority() {
        let fake = Arc::new(Fake::default());
        let workers: Arc<dyn ApiWorkers> = fake.clone();
        let on = std::thread::current().id();
        let ran_on = run_blocking(Some(workers.clone()), ApiPriority::P0, move || {
            Ok(std::thread::current().id())
        })
        .await
        .expect("an answer");
        assert_ne!(ran_on, on);
        let answer = run_blocking(Some(workers), ApiPriority::P1, || Ok(7)).await;
        assert_eq!(answer, Ok(7));
        assert_eq!(
            *fake.seen.lock().expect("not poisoned"),
            vec![ApiPriority::P0, ApiPriority::P1]
        );
    }

    /// A job on a worker thread (outside the runtime) may use the runtime, as a streamed
    /// body does (`tokio::task::spawn_blocking` for its writer).
    #[tokio::test]
    async fn a_job_on_the_workers_runs_in_the_runtimes_context() {
        let workers: Arc<dyn ApiWorkers> = Arc::new(Fake::default());
        let answer = run_blocking(Some(workers), ApiPriority::P1, || {
            drop(tokio::task::spawn_blocking(|| ()));
            Ok(tokio::runtime::Handle::try_current().is_ok())
        })
        .await;
        assert_eq!(answer, Ok(true));
    }

    #[tokio::test]
    async fn refused_or_dropped_work_is_a_503_and_no_workers_is_the_blocking_pool() {
        let refusing: Arc<dyn ApiWorkers> = Arc::new(Fake {
            refuse: true,
            ..Fake::default()
        });
        let answer = run_blocking(Some(refusing), ApiPriority::P1, || Ok(1)).await;
        assert!(
            matches!(answer, Err(HttpError::Unavailable(_))),
            "{answer:?}"
        );
        let dropping: Arc<dyn ApiWorkers> = Arc::new(Fake {
            drop_unrun: true,
            ..Fake::default()
        });
        let answer = run_blocking(Some(dropping), ApiPriority::P1, || Ok(1)).await;
        assert!(
            matches!(answer, Err(HttpError::Unavailable(_))),
            "{answer:?}"
        );
        assert_eq!(run_blocking(None, ApiPriority::P0, || Ok(2)).await, Ok(2));
    }
}
