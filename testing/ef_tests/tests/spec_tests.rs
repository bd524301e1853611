//! The consensus spec tests over `$ARBOR_SPEC_TESTS` (`make spec-tests`).
//!
//! Prints one line per `config/fork/runner`, then what is not covered, skipped, failed or
//! unvisited, and exits non-zero on any failure or when the vectors cannot be found.

use std::process::ExitCode;

use ef_tests::{Options, root_from_env, run, runners};

fn main() -> ExitCode {
    let options = Options::from_args(std::env::args().skip(1));
    let root = match root_from_env() {
        Ok(root) => root,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&root, &runners::all(), &options) {
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
