//! One test case as the harness hands it to a runner, and what a runner says back.

use std::fmt;
use std::path::PathBuf;

use types::ForkName;

/// A fork [`ForkName`] knows but Arbor does not run yet ([`ForkName::is_implemented`] is false):
/// the harness runs its vectors apart, through its own `types` module (`types::gloas`), and each
/// runner says per handler what it runs of it ([`Runner::run_pending_fork_case`]); the allow
/// list names the runners a later issue delivers. A variant goes when Arbor runs the fork (a
/// unit test fails until then): its runners' tables move to the released ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PendingFork {
    /// Gloas (EIP-7732, EIP-7688): `types::gloas`; `ForkName::Gloas` is not implemented yet.
    Gloas,
}

impl PendingFork {
    /// Every pending fork.
    pub const ALL: [PendingFork; 1] = [PendingFork::Gloas];

    /// The fork's directory name in the vectors.
    pub fn name(self) -> &'static str {
        match self {
            PendingFork::Gloas => "gloas",
        }
    }

    /// The pending fork whose directory is `name`, if any.
    pub fn from_dir(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|fork| fork.name() == name)
    }
}

impl From<PendingFork> for ForkName {
    fn from(fork: PendingFork) -> Self {
        match fork {
            PendingFork::Gloas => ForkName::Gloas,
        }
    }
}

impl fmt::Display for PendingFork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A case directory, `tests/<config>/<fork>/<runner>/<handler>/<suite>/<case>/`, with its path
/// components parsed: the fork is a [`ForkName`], or a [`PendingFork`] for the cases of a fork
/// `types` has containers but no `ForkName` for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseContext<F = ForkName> {
    /// `general`, `minimal` or `mainnet`.
    pub config: String,
    /// The fork directory, parsed.
    pub fork: F,
    /// The runner directory (`ssz_static`, `shuffling`, …).
    pub runner: String,
    /// The handler directory (for `ssz_static`: the type name).
    pub handler: String,
    /// The suite directory (`ssz_random`, `pyspec_tests`, `valid`, …).
    pub suite: String,
    /// The case directory's name.
    pub case: String,
    /// The case directory.
    pub path: PathBuf,
}

impl<F: fmt::Display> CaseContext<F> {
    /// `config/fork/runner/handler/suite/case`: how reports name the case.
    pub fn id(&self) -> String {
        format!(
            "{}/{}/{}/{}/{}/{}",
            self.config, self.fork, self.runner, self.handler, self.suite, self.case
        )
    }

    /// A file of the case directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The preset the config directory stands for; `general` cases have none.
    pub fn preset(&self) -> Result<Preset, String> {
        match self.config.as_str() {
            "minimal" => Ok(Preset::Minimal),
            "mainnet" => Ok(Preset::Mainnet),
            other => Err(format!("config `{other}` has no preset")),
        }
    }
}

impl CaseContext<PendingFork> {
    /// The same case with its fork as the [`ForkName`] it is: for the runners whose code runs a
    /// pending fork's states already (the state transition runs Gloas states, though the node
    /// does not run the fork yet).
    pub fn released(&self) -> CaseContext {
        CaseContext {
            config: self.config.clone(),
            fork: self.fork.into(),
            runner: self.runner.clone(),
            handler: self.handler.clone(),
            suite: self.suite.clone(),
            case: self.case.clone(),
            path: self.path.clone(),
        }
    }
}

/// A preset, chosen by the config directory; runners map it to an [`types::EthSpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// `minimal` → [`types::MinimalEthSpec`].
    Minimal,
    /// `mainnet` → [`types::MainnetEthSpec`].
    Mainnet,
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseResult {
    /// Every check of the case held.
    Passed,
    /// A check failed, or the vector could not be read; the message says which.
    Failed(String),
    /// Deliberately not run; the reason is printed with the report.
    Skipped(String),
    /// The runner has no handler for this case (an unknown `ssz_static` type, an unknown
    /// handler): the case directory stays unvisited, which fails the run.
    NotRun(String),
}

impl CaseResult {
    /// `Passed` for `Ok`, `Failed(message)` for `Err`.
    pub fn from_check(result: Result<(), String>) -> Self {
        match result {
            Ok(()) => CaseResult::Passed,
            Err(message) => CaseResult::Failed(message),
        }
    }
}

/// Runs the cases of one runner directory (`tests/*/*/<name>/…`).
///
/// Add one by writing a type that implements this trait in `src/runners/` and listing it in
/// [`crate::runners::all`].
pub trait Runner: Send + Sync {
    /// The runner directory this covers, e.g. `ssz_static`.
    fn name(&self) -> &'static str;

    /// Runs one case. Errors in the vector itself (a missing file, bad YAML) are failures, never
    /// panics.
    fn run_case(&self, case: &CaseContext) -> CaseResult;

    /// Runs one case of a [`PendingFork`]. The default runs none: the case stays unvisited,
    /// which fails the run unless the allow list names it.
    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        CaseResult::NotRun(format!(
            "the {} runner runs no {} case yet",
            self.name(),
            case.fork
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_fork_is_one_arbor_knows_but_does_not_run() {
        for fork in PendingFork::ALL {
            assert_eq!(PendingFork::from_dir(fork.name()), Some(fork));
            let known = fork
                .name()
                .parse::<ForkName>()
                .expect("ForkName knows every pending fork");
            assert!(
                !known.is_implemented(),
                "Arbor runs {fork} now: move its runners' pending-fork tables to the released \
                 ones and remove PendingFork::{fork:?}"
            );
        }
        // Every fork ForkName knows and Arbor does not run is pending.
        for fork in ForkName::ALL.into_iter().filter(|f| !f.is_implemented()) {
            assert!(PendingFork::from_dir(fork.as_str()).is_some(), "{fork}");
        }
        assert_eq!(PendingFork::from_dir("fulu"), None);
    }
}
