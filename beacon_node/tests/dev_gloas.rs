//! `arbor dev --gloas-epoch 1`: a one-process devnet that starts in Fulu and forks into Gloas
//! at epoch 1 (mock execution client speaking Amsterdam from the fork's time). Every proposal
//! after the fork is a self-built Gloas block whose envelope the validator client signs and the
//! node publishes with its columns, but for two slots whose proposer withholds it; the payload
//! timeliness committee votes and the next block packs the votes (participation at least 95 %);
//! on the final head's chain the withheld slots' blocks are EMPTY and at least 99 % of the
//! others FULL; the chain keeps finalizing past the fork; the node serves a Gloas head with its
//! envelope. The process is bounded in time and stopped by its PID; its
//! output stays under `target/test-logs/`.
#![cfg(feature = "mock-el")]
#![allow(
    clippy::unwrap_used,
    reason = "a test: a failed request or decode is the test's failure"
)]

#[path = "common/devnet.rs"]
#[allow(
    dead_code,
    reason = "the shared devnet helpers: this test runs its own devnet loop"
)]
mod devnet;

use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Minimal preset: 8 slots an epoch; Gloas from slot 8.
const GLOAS_EPOCH: u64 = 1;
const FIRST_GLOAS_SLOT: u64 = 8;
/// Finality of epoch 4 (three epochs past the fork) comes at slot 48.
const UNTIL_FINALIZED_EPOCH: u64 = 4;
/// Slots whose proposer publishes its block and withholds its payload envelope.
const WITHHELD: [u64; 2] = [13, 21];

#[test]
fn a_devnet_forks_into_gloas_and_finalizes_with_self_built_payloads() {
    let log = devnet::log_path("arbor-dev-gloas");
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    command
        .args([
            "dev",
            "--gloas-epoch",
            &GLOAS_EPOCH.to_string(),
            "--validators",
            "64",
            "--blobs",
            "3",
            "--seconds-per-slot",
            "2",
            "--http-port",
            "0",
            "--metrics-port",
            "0",
            "--genesis-delay",
            "2",
            "--until-finalized-epoch",
            &UNTIL_FINALIZED_EPOCH.to_string(),
            "--max-slots",
            "64",
            "--withhold-envelope-slots",
            &WITHHELD.map(|s| s.to_string()).join(","),
        ])
        .env("ARBOR_LOG", "info");
    let (mut child, lines, output) = devnet::spawn_logged(&mut command, &log);

    // 64 slots of 2 s at most (`--max-slots` gives up first), with room for a loaded machine.
    let deadline = Instant::now() + Duration::from_secs(360);
    let mut port = None;
    let mut gloas_head_checked = false;
    let mut finished = None;
    while Instant::now() < deadline {
        let line = match lines.recv_timeout(Duration::from_millis(500)) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(status) = child.0.try_wait().expect("child status") {
                    finished = Some(status);
                    break;
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                finished = Some(child.0.wait().expect("child status"));
                break;
            }
        };
        if port.is_none()
            && let Some(rest) = line.split("Beacon API on http://127.0.0.1:").nth(1)
        {
            port = rest
                .split([';', ','])
                .next()
                .and_then(|p| p.parse::<u16>().ok());
        }
        // `arbor dev: slot S head H ROOT ...`: past the fork, the head block is a Gloas block
        // and the node serves it with its payload's envelope once the envelope is imported.
        if let Some(rest) = line.strip_prefix("arbor dev: slot ") {
            let fields: Vec<&str> = rest.split(' ').collect();
            let head_slot: u64 = fields.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
            if !gloas_head_checked
                && head_slot >= FIRST_GLOAS_SLOT + 4
                && let Some(port) = port
            {
                let (status, body) =
                    devnet::http_get(port, "/eth/v2/beacon/blocks/head").expect("API reachable");
                assert_eq!(status, 200, "{body:.300}");
                let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
                assert_eq!(json["version"], "gloas", "{body:.300}");
                let bid =
                    &json["data"]["message"]["body"]["signed_execution_payload_bid"]["message"];
                assert_eq!(bid["builder_index"], "18446744073709551615", "a self-build");
                // The envelope of a FULL block: the head's parent's at least (the head's may
                // still be on its way).
                let parent = json["data"]["message"]["parent_root"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                let (status, body) = devnet::http_get(
                    port,
                    &format!("/eth/v1/beacon/execution_payload_envelopes/{parent}"),
                )
                .expect("API reachable");
                assert_eq!(status, 200, "the parent's envelope: {body:.300}");
                gloas_head_checked = true;
            }
        }
    }
    let status = finished.unwrap_or_else(|| {
        panic!(
            "arbor dev did not finish within the bound; log: {}",
            log.display()
        )
    });
    drop(child);
    output.join();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        status.success(),
        "arbor dev did not finalize epoch {UNTIL_FINALIZED_EPOCH} ({status}); log: {}",
        log.display()
    );
    assert!(
        gloas_head_checked,
        "the Gloas head was never checked; log: {}",
        log.display()
    );
    // Every proposal went through: before the fork with v3, after it with v4 and an envelope.
    assert!(
        !text.contains("proposal failed"),
        "a proposal failed; log: {}",
        log.display()
    );
    // Attestations (with the payload-status index), aggregates in Gloas's container and sync
    // committee duties all went through past the fork.
    assert!(
        text.contains("0 duties missed after the first epoch"),
        "duties were missed; log: {}",
        log.display()
    );
    // `arbor dev: Gloas: B blocks, F of D block slots FULL on the head's chain; PTC
    // participation P% (V of N positions); EMPTY block slots [S, ...]`.
    let gloas_line = text
        .lines()
        .find_map(|l| l.strip_prefix("arbor dev: Gloas: "))
        .unwrap_or_else(|| panic!("no Gloas summary; log: {}", log.display()));
    let numbers_in = |s: &str| -> Vec<u64> {
        s.split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let (counts, empty) = gloas_line
        .split_once("; EMPTY block slots ")
        .unwrap_or_else(|| panic!("unexpected Gloas summary {gloas_line:?}"));
    // [B, F, D, P integer part, P fraction, V, N]
    let [_, full, decided, _, _, votes, positions] = numbers_in(counts)[..] else {
        panic!("unexpected Gloas summary {gloas_line:?}");
    };
    // The withheld payloads' blocks are EMPTY on the head's chain (the next proposer built on
    // their parents' payloads); every other block slot is FULL (at least 99 %).
    let empty = numbers_in(empty);
    assert_eq!(
        empty,
        WITHHELD.to_vec(),
        "EMPTY block slots; log: {}",
        log.display()
    );
    let others = decided - WITHHELD.len() as u64;
    assert!(
        decided >= 32 && full * 100 >= others * 99,
        "{full} of {others} block slots with their envelope published FULL, below 99 %; log: {}",
        log.display()
    );
    assert!(
        positions > 0 && votes * 100 >= positions * 95,
        "PTC participation {votes} of {positions} positions, below 95 %; log: {}",
        log.display()
    );
    let envelopes = text.matches("published block and payload envelope").count();
    assert!(
        envelopes as u64
            >= 8 * (UNTIL_FINALIZED_EPOCH + 2 - GLOAS_EPOCH) - 2 - WITHHELD.len() as u64,
        "{envelopes} Gloas proposals with their envelopes; log: {}",
        log.display()
    );
}
