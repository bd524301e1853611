//! Several beacon nodes in fallback order: each request goes to the first healthy node that
//! answers it.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};

use beacon_api::{BeaconNodeHttpClient, ClientError};
use tracing::{debug, warn};

/// Every beacon node failed a request.
#[derive(Debug, thiserror::Error)]
#[error("no beacon node answered {what}: {}", format_errors(.errors))]
pub struct AllFailed {
    /// What was asked.
    pub what: &'static str,
    /// Each node's error, in fallback order.
    pub errors: Vec<(String, ClientError)>,
}

fn format_errors(errors: &[(String, ClientError)]) -> String {
    if errors.is_empty() {
        return "no beacon node configured".into();
    }
    errors
        .iter()
        .map(|(url, e)| format!("{url}: {e}"))
        .collect::<Vec<_>>()
        .join("; ")
}

struct Node {
    client: BeaconNodeHttpClient,
    healthy: AtomicBool,
}

/// The beacon nodes of a validator client, in fallback order.
pub struct BeaconNodes {
    nodes: Vec<Node>,
}

impl BeaconNodes {
    /// The nodes, first preferred; each starts out presumed healthy.
    pub fn new(clients: Vec<BeaconNodeHttpClient>) -> Self {
        Self {
            nodes: clients
                .into_iter()
                .map(|client| Node {
                    client,
                    healthy: AtomicBool::new(true),
                })
                .collect(),
        }
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True if there is no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The order to try the nodes in: healthy ones first (in fallback order), then the others,
    /// so that a request still goes out when every node looks unhealthy.
    fn order(&self) -> Vec<&Node> {
        let (mut healthy, unhealthy): (Vec<&Node>, Vec<&Node>) = self
            .nodes
            .iter()
            .partition(|n| n.healthy.load(Ordering::Relaxed));
        healthy.extend(unhealthy);
        healthy
    }

    /// Runs `request` against the nodes in order until one succeeds. A node that fails is
    /// marked unhealthy until the next health check finds it well.
    pub async fn first_success<T, F, Fut>(
        &self,
        what: &'static str,
        request: F,
    ) -> Result<T, AllFailed>
    where
        F: Fn(BeaconNodeHttpClient) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        self.first_success_on(what, request)
            .await
            .map(|(value, _)| value)
    }

    /// [`Self::first_success`], with the node that answered, for requests that must follow
    /// on the same node (a Gloas envelope is kept by the node that built its payload).
    pub async fn first_success_on<T, F, Fut>(
        &self,
        what: &'static str,
        request: F,
    ) -> Result<(T, BeaconNodeHttpClient), AllFailed>
    where
        F: Fn(BeaconNodeHttpClient) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        let mut errors = Vec::new();
        for node in self.order() {
            let mut outcome = request(node.client.clone()).await;
            // A connection that failed before any answer (a pooled one to a node that has
            // restarted since) is worth one more try on a fresh connection: every request the
            // validator client sends is safe to repeat (the node deduplicates publications).
            if let Err(e) = &outcome
                && e.is_connection_error()
            {
                debug!(node = %node.client.base_url(), what, error = %e, "retrying once after a connection error");
                outcome = request(node.client.clone()).await;
            }
            match outcome {
                Ok(value) => return Ok((value, node.client.clone())),
                Err(e) => {
                    debug!(node = %node.client.base_url(), what, error = %e, "beacon node request failed");
                    // A refusal of the request itself (4xx) says nothing about the node's
                    // health; a transport error or 5xx does.
                    if !e.status().is_some_and(|s| s.is_client_error()) {
                        node.healthy.store(false, Ordering::Relaxed);
                    }
                    errors.push((node.client.base_url().to_string(), e));
                }
            }
        }
        Err(AllFailed { what, errors })
    }

    /// `request` on `client` alone (one of these nodes, which answered an earlier request
    /// this one must follow); its failure is an [`AllFailed`] of that one node.
    pub async fn on_client<T, Fut>(
        &self,
        client: &BeaconNodeHttpClient,
        what: &'static str,
        request: impl FnOnce(BeaconNodeHttpClient) -> Fut,
    ) -> Result<T, AllFailed>
    where
        Fut: Future<Output = Result<T, ClientError>>,
    {
        request(client.clone()).await.map_err(|e| {
            debug!(node = %client.base_url(), what, error = %e, "beacon node request failed");
            AllFailed {
                what,
                errors: vec![(client.base_url().to_string(), e)],
            }
        })
    }

    /// The first node presumed healthy (for the event stream), else the first node.
    pub fn preferred(&self) -> Option<BeaconNodeHttpClient> {
        self.order().first().map(|n| n.client.clone())
    }

    /// Checks every node's `/eth/v1/node/syncing`: a node is healthy if it answers and is not
    /// syncing. Returns the number of healthy nodes.
    pub async fn check_health(&self) -> usize {
        let mut healthy = 0;
        for node in &self.nodes {
            let ok = match node.client.get_node_syncing().await {
                Ok(response) => !response.data.is_syncing,
                Err(e) => {
                    debug!(node = %node.client.base_url(), error = %e, "health check failed");
                    false
                }
            };
            let was = node.healthy.swap(ok, Ordering::Relaxed);
            if was && !ok {
                warn!(node = %node.client.base_url(), "beacon node unhealthy");
            }
            healthy += usize::from(ok);
        }
        healthy
    }
}
