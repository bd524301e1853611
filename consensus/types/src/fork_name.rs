//! The forks Arbor knows, in activation order.

use std::fmt;
use std::str::FromStr;

/// A consensus fork, named as the spec names its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ForkName {
    /// The genesis fork: the proof-of-stake beacon chain, validators, attestations and slashings.
    Phase0,
    /// Sync committees, participation flags and the light client protocol.
    Altair,
    /// The merge: execution payloads enter the beacon block.
    Bellatrix,
    /// Withdrawals and BLS-to-execution credential changes.
    Capella,
    /// Blob sidecars and their KZG commitments (EIP-4844).
    Deneb,
    /// Execution-layer requests, consolidations, compounding validators and committee-bit
    /// attestations.
    Electra,
    /// PeerDAS data columns and the proposer lookahead.
    Fulu,
}

/// An unknown fork name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fork name {0:?}")]
pub struct UnknownForkName(pub String);

impl ForkName {
    /// Every fork, oldest first.
    pub const ALL: [ForkName; 7] = [
        ForkName::Phase0,
        ForkName::Altair,
        ForkName::Bellatrix,
        ForkName::Capella,
        ForkName::Deneb,
        ForkName::Electra,
        ForkName::Fulu,
    ];

    /// The newest fork Arbor implements.
    pub const LATEST: ForkName = ForkName::Fulu;

    /// The spec's lower-case name (`phase0`, …, `fulu`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ForkName::Phase0 => "phase0",
            ForkName::Altair => "altair",
            ForkName::Bellatrix => "bellatrix",
            ForkName::Capella => "capella",
            ForkName::Deneb => "deneb",
            ForkName::Electra => "electra",
            ForkName::Fulu => "fulu",
        }
    }

    /// The fork before this one, if any.
    pub fn previous(self) -> Option<ForkName> {
        let i = self as usize;
        i.checked_sub(1).map(|p| Self::ALL[p])
    }

    /// The fork after this one, if Arbor knows it.
    pub fn next(self) -> Option<ForkName> {
        Self::ALL.get(self as usize + 1).copied()
    }

    /// Whether this fork is Altair or later, so Altair's rules apply.
    pub fn altair_enabled(self) -> bool {
        self >= ForkName::Altair
    }
    /// Whether this fork is Bellatrix or later, so Bellatrix's rules apply.
    pub fn bellatrix_enabled(self) -> bool {
        self >= ForkName::Bellatrix
    }
    /// Whether this fork is Capella or later, so Capella's rules apply.
    pub fn capella_enabled(self) -> bool {
        self >= ForkName::Capella
    }
    /// Whether this fork is Deneb or later, so Deneb's rules apply.
    pub fn deneb_enabled(self) -> bool {
        self >= ForkName::Deneb
    }
    /// Whether this fork is Electra or later, so Electra's rules apply.
    pub fn electra_enabled(self) -> bool {
        self >= ForkName::Electra
    }
    /// Whether this fork is Fulu or later, so Fulu's rules apply.
    pub fn fulu_enabled(self) -> bool {
        self >= ForkName::Fulu
    }
}

impl fmt::Display for ForkName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ForkName {
    type Err = UnknownForkName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownForkName(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order_is_activation_order() {
        for (i, fork) in ForkName::ALL.into_iter().enumerate() {
            assert_eq!(fork.as_str().parse::<ForkName>(), Ok(fork));
            assert_eq!(fork as usize, i);
        }
        assert_eq!(ForkName::Phase0.previous(), None);
        assert_eq!(ForkName::Fulu.next(), None);
        assert_eq!(ForkName::Electra.next(), Some(ForkName::Fulu));
        assert!("gloas".parse::<ForkName>().is_err());
    }
}
