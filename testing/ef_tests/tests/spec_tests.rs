//! The consensus spec tests over `$ARBOR_SPEC_TESTS` and the Gloas vectors under
//! `$ARBOR_GLOAS_VECTORS` (default `target/gloas-vectors`) (`make spec-tests`).
//!
//! Prints one line per `config/fork/runner`, then what is not covered, skipped, failed or
//! unvisited, and exits non-zero on any failure or when the vectors cannot be found.

use std::process::ExitCode;

use ef_tests::{Options, gloas_root_from_env, root_from_env, run_roots, runners};

/// The one test this binary is to test runners that list tests first (`cargo nextest`, `cargo
/// test -- --list`): the whole run.
const TEST_NAME: &str = "spec_tests";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // libtest's listing protocol, which cargo-nextest speaks: one test, none ignored.
    if args.iter().any(|a| a == "--list") {
        if !args.iter().any(|a| a == "--ignored") {
            println!("{TEST_NAME}: test");
        }
        return ExitCode::SUCCESS;
    }
    // A runner that lists first then runs the test by its exact name: the name selects the
    // whole run, not a filter on case ids.
    let exact = args.iter().any(|a| a == "--exact");
    let options = Options::from_args(args.into_iter().filter(|a| !(exact && a == TEST_NAME)));
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
