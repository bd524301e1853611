//! The execution layer's state as the node sees it: online, syncing or offline, observable as a
//! `watch` channel and exported as a Prometheus gauge.

use prometheus::{IntGaugeVec, Opts, Registry};
use tokio::sync::watch;

/// What the node can tell about its execution engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElState {
    /// Answering and synced: payloads are being validated.
    Online,
    /// Answering but syncing: payloads come back `SYNCING` or `ACCEPTED` (optimistic import).
    Syncing,
    /// Not answering, refusing our JWT, or timing out.
    Offline,
}

impl ElState {
    /// Every state, in the order of the gauge's labels.
    pub const ALL: [ElState; 3] = [ElState::Online, ElState::Syncing, ElState::Offline];

    /// The metric label and the name in logs and the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Online => "online",
            Self::Syncing => "syncing",
            Self::Offline => "offline",
        }
    }
}

impl std::fmt::Display for ElState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name of the state gauge: one series per state, 1 for the current one.
pub const EL_STATE_METRIC: &str = "execution_layer_state";

/// Holds the current [`ElState`], notifies subscribers of changes and keeps the gauge in step.
#[derive(Debug)]
pub struct ElStateTracker {
    sender: watch::Sender<ElState>,
    gauge: IntGaugeVec,
}

impl Default for ElStateTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl ElStateTracker {
    /// Starts `Offline`: nothing has been heard from the engine yet.
    pub fn new() -> Self {
        let gauge = IntGaugeVec::new(
            Opts::new(
                EL_STATE_METRIC,
                "State of the execution engine: 1 for the current state (online, syncing, offline)",
            ),
            &["state"],
        )
        .expect("the metric name and label are valid");
        let tracker = Self {
            sender: watch::channel(ElState::Offline).0,
            gauge,
        };
        tracker.update_gauge(ElState::Offline);
        tracker
    }

    fn update_gauge(&self, current: ElState) {
        for state in ElState::ALL {
            self.gauge
                .with_label_values(&[state.as_str()])
                .set(i64::from(state == current));
        }
    }

    /// Registers the gauge.
    pub fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        registry.register(Box::new(self.gauge.clone()))
    }

    /// The current state.
    pub fn get(&self) -> ElState {
        *self.sender.borrow()
    }

    /// A receiver that sees every change.
    pub fn subscribe(&self) -> watch::Receiver<ElState> {
        self.sender.subscribe()
    }

    /// Records a new state; returns whether it changed.
    pub fn set(&self, state: ElState) -> bool {
        let changed = self.sender.send_if_modified(|current| {
            let changed = *current != state;
            *current = state;
            changed
        });
        if changed {
            self.update_gauge(state);
        }
        changed
    }

    /// Records that the engine answered without saying whether it is synced: offline becomes
    /// online, syncing stays syncing until a payload status says otherwise.
    pub fn answered(&self) {
        if self.get() == ElState::Offline {
            self.set(ElState::Online);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauge_is_one_hot_and_follows_the_state() {
        let tracker = ElStateTracker::new();
        let registry = Registry::new();
        tracker.register(&registry).expect("registers once");
        let mut rx = tracker.subscribe();
        let current = |registry: &Registry| {
            let families = registry.gather();
            let family = families
                .iter()
                .find(|f| f.name() == EL_STATE_METRIC)
                .expect("registered");
            family
                .get_metric()
                .iter()
                .filter(|m| m.get_gauge().get_value() == 1.0)
                .map(|m| m.get_label()[0].value().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(current(&registry), vec!["offline"]);
        tracker.answered();
        assert_eq!(tracker.get(), ElState::Online);
        assert!(rx.has_changed().expect("sender alive"));
        assert_eq!(*rx.borrow_and_update(), ElState::Online);
        assert!(tracker.set(ElState::Syncing));
        tracker.answered();
        assert_eq!(tracker.get(), ElState::Syncing);
        assert_eq!(current(&registry), vec!["syncing"]);
        assert!(!tracker.set(ElState::Syncing));
        tracker.set(ElState::Offline);
        assert_eq!(current(&registry), vec!["offline"]);
    }
}
