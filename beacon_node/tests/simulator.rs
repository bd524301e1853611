//! The simulator's short profile: three nodes as separate `arbor` processes (mock execution
//! client, beacon node, validator client each) from one genesis, one beacon node SIGKILLed and
//! restarted; finality, head agreement, duties and memory checked outside the fault window.
//! Everything runs under `target/test-logs/simulator/` and stays there for a failing run.

use std::path::PathBuf;

#[test]
fn three_nodes_survive_a_sigkill_and_restart() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/test-logs/simulator");
    let config =
        simulator::SimConfig::short(PathBuf::from(env!("CARGO_BIN_EXE_arbor")), dir.clone());
    let report = match simulator::run(&config) {
        Ok(report) => report,
        Err(e) => panic!(
            "the simulator did not run: {e}; logs under {}",
            dir.display()
        ),
    };
    print!("{}", report.summary());
    let violations = report.violations(&config);
    assert!(
        violations.is_empty(),
        "{}\nlogs under {}",
        violations.join("\n"),
        dir.display()
    );
}
