//! The consensus spec tests over `$ARBOR_SPEC_TESTS` and the Gloas vectors under
//! `$ARBOR_GLOAS_VECTORS` (default `target/gloas-vectors`) (`make spec-tests`).
//!
//! Prints one line per `config/fork/runner`, then what is not covered, skipped, failed or
//! unvisited, and exits non-zero on any failure or when the vectors cannot be found.

use std::process::ExitCode;

use ef_tests::{Options, gloas_root_from_env, root_from_env, run_roots, runners};

fn main() -> ExitCode {
    let options = Options::from_args(std::env::args().skip(1));
    let roots = match root_from_env().and_then(|root| Ok(vec![root, gloas_root_from_env()?])) {
        Ok(roots) => roots,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run_roots(&roots, &runners::all(), &options) {
        Ok(report) => {
            print!("{}", report.render());
            if report.is_success() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
