//! Doppelganger protection: before the client's validators sign anything, the beacon node is
//! asked whether they were live (attested or proposed) in the epoch before the client started
//! and in the [`DOPPELGANGER_EPOCHS`] epochs after; any sign of them means another client runs
//! the same keys, and this one stops without having signed.
//!
//! [spec]: beacon-APIs getLiveness (`POST /eth/v1/validator/liveness/{epoch}`)

use beacon_api::LivenessResponseData;
use types::{Epoch, ValidatorIndex};

/// The epochs the client watches after its start before it signs.
pub const DOPPELGANGER_EPOCHS: u64 = 2;

/// The doppelganger check's progress, by epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doppelganger {
    start_epoch: Epoch,
    checked_through: Option<Epoch>,
}

/// What the check says at an epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DoppelgangerStatus {
    /// Keep watching; ask for the liveness of these epochs.
    Check(Vec<Epoch>),
    /// Every watched epoch was clear: signing may start.
    Clear,
}

impl Doppelganger {
    /// The check of a client started in `start_epoch`.
    pub fn new(start_epoch: Epoch) -> Self {
        Self {
            start_epoch,
            checked_through: None,
        }
    }

    /// The epochs to ask about at the start of `current_epoch`: every epoch from the one
    /// before the start up to the one just ended, not asked yet; `Clear` once the epochs
    /// through `start + DOPPELGANGER_EPOCHS - 1` were all clear.
    pub fn status(&self, current_epoch: Epoch) -> DoppelgangerStatus {
        let last_watched = self.start_epoch.saturating_add(DOPPELGANGER_EPOCHS - 1);
        if self.checked_through.is_some_and(|c| c >= last_watched) {
            return DoppelgangerStatus::Clear;
        }
        let first = match self.checked_through {
            Some(c) => c + 1,
            None => self.start_epoch.saturating_sub(1),
        };
        // The epoch that just ended is the newest one whose liveness is settled enough.
        let Some(ended) = current_epoch.checked_sub(1) else {
            return DoppelgangerStatus::Check(Vec::new());
        };
        DoppelgangerStatus::Check((first..=ended.min(last_watched)).collect())
    }

    /// Records the liveness answers of `epoch`: the indices found live, if any.
    pub fn record(
        &mut self,
        epoch: Epoch,
        answers: &[LivenessResponseData],
    ) -> Vec<ValidatorIndex> {
        let live: Vec<ValidatorIndex> = answers
            .iter()
            .filter(|a| a.is_live)
            .map(|a| a.index)
            .collect();
        if live.is_empty() {
            self.checked_through = Some(self.checked_through.map_or(epoch, |c| c.max(epoch)));
        }
        live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(live: &[u64], quiet: &[u64]) -> Vec<LivenessResponseData> {
        live.iter()
            .map(|&index| LivenessResponseData {
                index,
                is_live: true,
            })
            .chain(quiet.iter().map(|&index| LivenessResponseData {
                index,
                is_live: false,
            }))
            .collect()
    }

    #[test]
    fn clears_after_the_watched_epochs() {
        let mut d = Doppelganger::new(10);
        // In epoch 10 only epoch 9 (before the start) has ended.
        assert_eq!(d.status(10), DoppelgangerStatus::Check(vec![9]));
        assert!(d.record(9, &answers(&[], &[1, 2])).is_empty());
        assert_eq!(d.status(11), DoppelgangerStatus::Check(vec![10]));
        assert!(d.record(10, &answers(&[], &[1, 2])).is_empty());
        assert_eq!(d.status(11), DoppelgangerStatus::Check(vec![]));
        assert_eq!(d.status(12), DoppelgangerStatus::Check(vec![11]));
        assert!(d.record(11, &answers(&[], &[1, 2])).is_empty());
        assert_eq!(d.status(12), DoppelgangerStatus::Clear);
    }

    #[test]
    fn a_live_validator_is_reported_and_never_clears() {
        let mut d = Doppelganger::new(3);
        assert_eq!(d.record(2, &answers(&[7], &[1])), vec![7]);
        assert_eq!(d.status(6), DoppelgangerStatus::Check(vec![2, 3, 4]));
    }

    #[test]
    fn a_start_at_genesis_watches_from_epoch_zero() {
        let d = Doppelganger::new(0);
        assert_eq!(d.status(0), DoppelgangerStatus::Check(vec![]));
        assert_eq!(d.status(2), DoppelgangerStatus::Check(vec![0, 1]));
    }
}
