//! The simulator's short profile: three nodes as separate `arbor` processes (mock execution
//! client, beacon node, validator client each) from one genesis; one beacon node SIGKILLed and
//! restarted, a garbage peer that must be banned, a fourth node that joins by checkpoint sync
//! and must reach the head. Finality, head agreement within a slot, processes staying up and
//! memory are asserted; duties missed outside the fault windows are reported (the long profile,
//! `make simulate`, on the release binary, asserts them). Everything runs under
//! `target/test-logs/simulator/` and stays there for a failing run.

use std::path::PathBuf;

#[test]
fn three_nodes_survive_a_sigkill_a_garbage_peer_and_a_checkpoint_joiner() {
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
