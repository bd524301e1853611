//! Consensus spec-test harness: walks
//! `$ARBOR_SPEC_TESTS/tests/<config>/<fork>/<runner>/<handler>/<suite>/<case>/` (and the Gloas
//! vectors under `$ARBOR_GLOAS_VECTORS`, same layout) and runs every case whose runner is
//! registered in [`runners::all`]. See README.md.
//!
//! A case directory under a registered runner that no runner ran (an unknown `ssz_static` type, a
//! fork `types` does not know) fails the run; runner directories nobody covers yet are listed.

pub mod allow_list;
pub mod case;
pub mod files;
pub mod harness;
pub mod report;
pub mod runners;
pub mod ssz_generic;

pub use allow_list::{ALLOW_LIST, AllowedGap};
pub use case::{CaseContext, CaseResult, PendingFork, Preset, Runner};
pub use harness::{
    GLOAS_ROOT_ENV, HarnessError, Options, ROOT_ENV, gloas_root_from_env, root_from_env, run,
    run_roots,
};
pub use report::{CaseNote, Counts, NotCovered, Report};
