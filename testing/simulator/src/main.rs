//! `simulator`: runs a profile of the simulator against an `arbor` binary and prints its report;
//! exits non-zero when a check failed.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use simulator::{SimConfig, run};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Profile {
    /// Three nodes, one SIGKILL and restart (what `make test` runs).
    Short,
    /// Four nodes, 26 epochs, every fault.
    Long,
}

/// Several Arbor nodes on loopback with scripted faults.
#[derive(Debug, Parser)]
struct Args {
    /// The `arbor` binary.
    #[arg(long, default_value = "target/release/arbor")]
    arbor: PathBuf,
    /// The profile.
    #[arg(long, value_enum, default_value_t = Profile::Long)]
    profile: Profile,
    /// Where the files go (emptied first).
    #[arg(long, default_value = "target/simulator")]
    dir: PathBuf,
    /// Epochs to run instead of the profile's.
    #[arg(long)]
    epochs: Option<u64>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut config = match args.profile {
        Profile::Short => SimConfig::short(args.arbor, args.dir),
        Profile::Long => SimConfig::long(args.arbor, args.dir),
    };
    if let Some(epochs) = args.epochs {
        config.epochs = epochs;
    }
    match run(&config) {
        Ok(report) => {
            print!("{}", report.summary());
            let violations = report.violations(&config);
            if violations.is_empty() {
                println!("simulator: passed");
                ExitCode::SUCCESS
            } else {
                for v in &violations {
                    println!("simulator: FAILED: {v}");
                }
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("simulator: error: {e}");
            ExitCode::FAILURE
        }
    }
}
