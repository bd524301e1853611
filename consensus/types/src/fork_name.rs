//! The forks Arbor knows, in activation order.

use std::fmt;
use std::str::FromStr;

/// The one list of the forks Arbor knows, oldest first: `$callback!` is invoked with
/// `Variant module "name" "doc";` per fork. `ForkName` (its variants, [`ForkName::ALL`],
/// [`ForkName::as_str`]) is generated from it, so adding a fork is one edit here, then the
/// compile errors of every exhaustive `match` on `ForkName` and on the fork enums of
/// [`crate::combined`] (and the `fork_enums_cover_every_fork` test there).
#[macro_export]
macro_rules! for_each_fork {
    ($callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)?
            Phase0 phase0 "phase0"
                "The genesis fork: the proof-of-stake beacon chain, validators, attestations and slashings.";
            Altair altair "altair"
                "Sync committees, participation flags and the light client protocol.";
            Bellatrix bellatrix "bellatrix"
                "The merge: execution payloads enter the beacon block.";
            Capella capella "capella"
                "Withdrawals and BLS-to-execution credential changes.";
            Deneb deneb "deneb"
                "Blob sidecars and their KZG commitments (EIP-4844).";
            Electra electra "electra"
                "Execution-layer requests, consolidations, compounding validators and committee-bit attestations.";
            Fulu fulu "fulu"
                "PeerDAS data columns and the proposer lookahead.";
            Gloas gloas "gloas"
                "Enshrined proposer-builder separation (EIP-7732) and progressive SSZ (EIP-7688). Arbor knows its containers and its place in the fork schedule, but does not run it yet: processing a Gloas slot is an error that names the fork.";
        }
    };
}

macro_rules! declare_fork_name {
    ($($variant:ident $module:ident $name:literal $doc:literal;)+) => {
        /// A consensus fork, named as the spec names its directory.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ForkName {
            $(
                #[doc = $doc]
                $variant,
            )+
        }

        impl ForkName {
            /// Every fork Arbor knows, oldest first.
            pub const ALL: [ForkName; [$(ForkName::$variant),+].len()] = [$(ForkName::$variant),+];

            /// The spec's lower-case name (`phase0`, …, `gloas`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ForkName::$variant => $name,)+
                }
            }
        }
    };
}

for_each_fork!(declare_fork_name);

/// An unknown fork name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fork name {0:?}")]
pub struct UnknownForkName(pub String);

impl ForkName {
    /// The newest fork Arbor *knows*: its containers decode and hash, a config may schedule it,
    /// and the fork enums of [`crate::combined`] have a variant for it. It does **not** say Arbor
    /// runs it: see [`ForkName::LATEST_IMPLEMENTED`].
    pub const LATEST: ForkName = ForkName::ALL[ForkName::ALL.len() - 1];

    /// The newest fork whose state transition, fork choice, networking and block production
    /// Arbor runs. A chain past it is refused at start, and a slot of a later fork is a typed
    /// error naming the fork (Gloas: issues 42–45 deliver it).
    pub const LATEST_IMPLEMENTED: ForkName = ForkName::Fulu;

    /// Whether Arbor runs this fork (it is not after [`ForkName::LATEST_IMPLEMENTED`]).
    pub fn is_implemented(self) -> bool {
        self <= Self::LATEST_IMPLEMENTED
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
    /// Whether this fork is Gloas or later, so Gloas's rules apply.
    pub fn gloas_enabled(self) -> bool {
        self >= ForkName::Gloas
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
        assert_eq!(ForkName::Gloas.next(), None);
        assert_eq!(ForkName::Fulu.next(), Some(ForkName::Gloas));
        assert_eq!(ForkName::Gloas.previous(), Some(ForkName::Fulu));
        assert_eq!("gloas".parse::<ForkName>(), Ok(ForkName::Gloas));
        assert_eq!(ForkName::Gloas.to_string(), "gloas");
        assert!("heze".parse::<ForkName>().is_err());
        assert!(ForkName::Gloas.gloas_enabled() && !ForkName::Fulu.gloas_enabled());
        assert_eq!(ForkName::LATEST, ForkName::Gloas);
        assert!(ForkName::Fulu.is_implemented() && !ForkName::Gloas.is_implemented());
    }
}
