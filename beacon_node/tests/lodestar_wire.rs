//! Arbor's wire output checked by another implementation: a js-libp2p peer
//! (`networking/interop/devnet_check.mjs`) joins a running `arbor dev` devnet and hands what Arbor
//! gossips and serves to Lodestar's libraries (npm `@lodestar/*` 1.46.0, pinned as
//! `shared/oracles/lodestar` pins them) and to an independent KZG library (`micro-eth-signer`).
//!
//! The peer finds the devnet's first node through discv5 from the network directory's
//! `boot_enr.yaml`, connects twice over TCP (one connection with yamux only, one with mplex only),
//! asks Status, BeaconBlocksByRange, DataColumnSidecarsByRange, BeaconBlocksByRoot and
//! DataColumnSidecarsByRoot on each (every answer read as the stream delivers it by Lodestar's own
//! req/resp reader, `@lodestar/reqresp`'s `responseDecode`, which must read every chunk the
//! stream held: it fails on a muxer frame that carries bytes of two chunks), and subscribes to
//! `beacon_block`, `beacon_aggregate_and_proof` and four `data_column_sidecar_{subnet}` topics.
//! Every block passes Lodestar's `stateTransition` with signatures on its parent's post-state
//! (from the devnet's `genesis.ssz` on), every data column's inclusion proof and cell proofs
//! verify, every aggregate's three signatures verify on Lodestar's committees. The script exits
//! non-zero on any mismatch; this test asserts on the counts it prints.
//!
//! Beside it, on the same devnet, Lodestar's typed REST client (`@lodestar/api`,
//! `networking/interop/api_check.mjs`) calls the first node's Beacon API: the validator-client
//! endpoints and the block, state, header, sidecar, debug, rewards and light-client ones, each in
//! JSON and in SSZ; every answer must decode with Lodestar's route types and the two encodings
//! must decode to the same value. The test prints the counts per encoding and what was left out.
//!
//! `arbor dev` runs two nodes: a single-node devnet has no p2p at all.
//!
//! `#[ignore]`d in `cargo test` (it needs the npm packages); `make test-interop` installs them
//! (`networking/interop/install.sh`) and runs it with `ARBOR_INTEROP_JS_DIR` set. Asked for
//! without that variable it fails with a message, never skips. Output under `target/test-logs/`.
#![cfg(feature = "mock-el")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Where `networking/interop/install.sh` put the scripts and `node_modules/`.
const JS_DIR_ENV: &str = "ARBOR_INTEROP_JS_DIR";

/// What the peer must have checked with Lodestar's code from gossip before it stops.
const MIN_GOSSIP_BLOCKS: u64 = 10;
const MIN_GOSSIP_COLUMNS: u64 = 24;
const MIN_AGGREGATES: u64 = 10;

/// Kills the child by its PID when the test ends, however it ends.
struct Killer(Child);

impl Drop for Killer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target")
}

fn log_path(name: &str) -> PathBuf {
    let dir = target_dir().join("test-logs");
    std::fs::create_dir_all(&dir).expect("log directory");
    dir.join(format!("{name}.log"))
}

/// Starts `command`, copies its stdout and stderr into `log` (and, with `echo_stderr`, its
/// stderr to the test's) and sends its stdout lines to the returned channel.
fn spawn_logged(
    mut command: Command,
    log: &Path,
    echo_stderr: bool,
) -> (Killer, mpsc::Receiver<String>) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} does not start: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let file = std::fs::File::create(log).expect("log file");
    let err_file = file.try_clone().expect("log file");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut file = file;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = writeln!(file, "{line}");
            let _ = tx.send(line);
        }
    });
    std::thread::spawn(move || {
        let mut file = err_file;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = writeln!(file, "{line}");
            if echo_stderr {
                eprintln!("{line}");
            }
        }
    });
    (Killer(child), rx)
}

/// The next stdout line of `child` before `deadline`; `None` once it exited or the time is up.
fn next_line(rx: &mpsc::Receiver<String>, deadline: Instant) -> Option<String> {
    let left = deadline.checked_duration_since(Instant::now())?;
    rx.recv_timeout(left).ok()
}

/// The exit status of `child` once it has exited, waiting at most `limit`; `None` if it is still
/// running then.
fn wait_exit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let wait_until = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("child status") {
            return Some(status);
        }
        if Instant::now() > wait_until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn count(summary: &Value, key: &str) -> u64 {
    summary[key]
        .as_u64()
        .unwrap_or_else(|| panic!("summary without {key}: {summary}"))
}

#[test]
#[ignore = "needs the npm packages: run `make test-interop`"]
fn lodestar_accepts_what_an_arbor_devnet_gossips_and_serves() {
    let js_dir = PathBuf::from(std::env::var_os(JS_DIR_ENV).unwrap_or_else(|| {
        panic!("{JS_DIR_ENV} is not set: run `make test-interop`, which installs the JS peer and Lodestar's libraries")
    }));
    assert!(
        js_dir.join("devnet_check.mjs").is_file()
            && js_dir.join("api_check.mjs").is_file()
            && js_dir.join("node_modules/@lodestar/api").is_dir()
            && js_dir
                .join("node_modules/@lodestar/state-transition")
                .is_dir(),
        "{} does not hold devnet_check.mjs, api_check.mjs and Lodestar's packages: run networking/interop/install.sh",
        js_dir.display()
    );

    let datadir = target_dir().join("tmp/lodestar-wire");
    let _ = std::fs::remove_dir_all(&datadir);
    std::fs::create_dir_all(&datadir).expect("datadir");
    let devnet_log = log_path("lodestar-wire-devnet");
    let check_log = log_path("lodestar-wire-check");
    let api_log = log_path("lodestar-wire-api");

    // Two nodes (one node has no p2p). The finality target is out of reach on purpose: the
    // devnet runs until this test stops it, and `--max-slots` (3 minutes of 2 s slots) ends it
    // if the test does not.
    let mut dev = Command::new(env!("CARGO_BIN_EXE_arbor"));
    dev.args([
        "dev",
        "--nodes",
        "2",
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
        "3",
        "--until-finalized-epoch",
        "1000",
        "--max-slots",
        "90",
    ])
    .arg("--datadir")
    .arg(&datadir)
    .env("ARBOR_LOG", "info");
    let (mut devnet, dev_lines) = spawn_logged(dev, &devnet_log, false);

    // The network directory is written before the start-up line; wait for a few blocks, so
    // that the peer's first by-range requests have something to return.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut testnet = None;
    let mut api_url: Option<String> = None;
    let mut head_slot = 0;
    while head_slot < 4 {
        let Some(line) = next_line(&dev_lines, deadline) else {
            panic!(
                "arbor dev reached no head slot 4 (exit: {:?}); log: {}",
                devnet.0.try_wait(),
                devnet_log.display()
            );
        };
        if let Some(rest) = line.split("; network directory ").nth(1) {
            testnet = Some(PathBuf::from(rest.trim()));
        }
        // `...; Beacon API on http://A, http://B; metrics on ...`: the first node's.
        if let Some(rest) = line.split("; Beacon API on ").nth(1) {
            api_url = rest.split([',', ';']).next().map(|u| u.trim().to_string());
        }
        // `arbor dev: slot S head H ROOT ...`
        if let Some(rest) = line.strip_prefix("arbor dev: slot ") {
            head_slot = rest
                .split(' ')
                .nth(2)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
        }
    }
    let testnet = testnet
        .unwrap_or_else(|| panic!("no network directory line; log: {}", devnet_log.display()));
    for file in ["config.yaml", "genesis.ssz", "boot_enr.yaml"] {
        assert!(
            testnet.join(file).is_file(),
            "{} lacks {file}",
            testnet.display()
        );
    }
    let api_url =
        api_url.unwrap_or_else(|| panic!("no Beacon API line; log: {}", devnet_log.display()));
    // Keep draining the devnet's output (the log thread writes it to the file).
    std::thread::spawn(move || for _ in dev_lines {});

    // Lodestar's REST client against the first node's Beacon API, beside the p2p check on the
    // same devnet. It starts asking once the head is at slot 17 (epoch 2 in the minimal preset:
    // a previous epoch for liveness, an epoch whose rewards are paid).
    let mut api = Command::new("node");
    api.current_dir(&js_dir)
        .arg("api_check.mjs")
        .arg("--url")
        .arg(&api_url)
        .arg("--testnet-dir")
        .arg(&testnet)
        .args(["--min-head-slot", "17", "--timeout-ms", "120000"]);
    let (mut api_check, api_lines) = spawn_logged(api, &api_log, true);

    let mut node = Command::new("node");
    node.current_dir(&js_dir)
        .arg("devnet_check.mjs")
        .arg("--testnet-dir")
        .arg(&testnet)
        .args([
            "--muxers",
            "yamux,mplex",
            "--column-subnets",
            "0,1,2,3",
            "--range-columns",
            "0,64,127",
            "--min-blocks",
            &MIN_GOSSIP_BLOCKS.to_string(),
            "--min-columns",
            &MIN_GOSSIP_COLUMNS.to_string(),
            "--min-aggregates",
            &MIN_AGGREGATES.to_string(),
            "--timeout-ms",
            "120000",
        ]);
    let (mut check, check_lines) = spawn_logged(node, &check_log, true);
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut summary = None;
    let mut error = None;
    let mut events = 0;
    while let Some(line) = next_line(&check_lines, deadline) {
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        events += 1;
        match event["event"].as_str() {
            Some("summary") => summary = Some(event),
            Some("error") => error = Some(event),
            Some("block_checked" | "column_checked" | "aggregate_checked") => {}
            _ => eprintln!("[devnet-check] {line}"),
        }
    }
    let status = wait_exit(&mut check.0, Duration::from_secs(10));
    drop(check);

    // The API check's lines, until it exits (it started with the p2p check and is done by now
    // unless the devnet stalls).
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut api_summary = None;
    let mut api_error = None;
    while let Some(line) = next_line(&api_lines, deadline) {
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match event["event"].as_str() {
            Some("api_summary") => api_summary = Some(event),
            Some("error") => api_error = Some(event),
            _ => eprintln!("[api-check] {line}"),
        }
    }
    // Its stdout closes a moment before the process can be reaped: wait for the exit status.
    let api_status = wait_exit(&mut api_check.0, Duration::from_secs(10));
    drop(api_check);
    let devnet_exit = devnet.0.try_wait().expect("devnet status");
    drop(devnet);

    assert!(
        error.is_none(),
        "Lodestar's check failed: {}; logs: {}, {}",
        error.unwrap_or_default(),
        check_log.display(),
        devnet_log.display()
    );
    let status = status.unwrap_or_else(|| {
        panic!(
            "devnet_check.mjs did not finish; log: {}",
            check_log.display()
        )
    });
    assert!(
        status.success(),
        "devnet_check.mjs failed ({status}) after {events} events; devnet exited: {devnet_exit:?}; logs: {}, {}",
        check_log.display(),
        devnet_log.display()
    );
    let summary =
        summary.unwrap_or_else(|| panic!("no summary line; log: {}", check_log.display()));

    let blocks = count(&summary, "blocks");
    let blocks_gossip = count(&summary, "blocks_gossip");
    let blocks_range = count(&summary, "blocks_range");
    let columns = count(&summary, "columns");
    let columns_gossip = count(&summary, "columns_gossip");
    let columns_range = count(&summary, "columns_range");
    let cells = count(&summary, "cells");
    let aggregates = count(&summary, "aggregates");
    let statuses = count(&summary, "status");
    eprintln!(
        "Lodestar checked {blocks} blocks ({blocks_gossip} gossiped, {blocks_range} only served by range; state transition with signatures), \
         {columns} data columns ({columns_gossip} gossiped, {columns_range} only by range; {cells} cells, KZG by micro-eth-signer), \
         {aggregates} aggregates ({} signature sets), {statuses} Status answers, {} BlocksByRange, {} DataColumnSidecarsByRange, \
         {} BlocksByRoot and {} DataColumnSidecarsByRoot chunks ({} chunks read by @lodestar/reqresp's reader from {} stream pieces); \
         {} gossiped blocks not on the node's canonical chain by the end",
        count(&summary, "aggregate_signature_sets"),
        count(&summary, "blocks_by_range_chunks"),
        count(&summary, "columns_by_range_chunks"),
        count(&summary, "blocks_by_root_chunks"),
        count(&summary, "columns_by_root_chunks"),
        count(&summary, "reqresp_reader_chunks"),
        count(&summary, "reqresp_reader_pieces"),
        count(&summary, "gossip_blocks_not_canonical"),
    );
    // Every answer went through Lodestar's own req/resp reader as the stream delivered it, and
    // it read every chunk: responses of several chunks each, by range and by root, on both
    // muxers (each connection asked each kind; the script fails on fewer than two chunks by root).
    let by_root = count(&summary, "blocks_by_root_chunks");
    let columns_by_root = count(&summary, "columns_by_root_chunks");
    assert!(by_root >= 4 && columns_by_root >= 4, "{summary}");
    assert_eq!(
        count(&summary, "reqresp_reader_chunks"),
        statuses
            + count(&summary, "blocks_by_range_chunks")
            + count(&summary, "columns_by_range_chunks")
            + by_root
            + columns_by_root,
        "{summary}"
    );
    for muxer in ["yamux", "mplex"] {
        for kind in [
            "blocks_by_range",
            "columns_by_range",
            "blocks_by_root",
            "columns_by_root",
        ] {
            assert!(
                summary["per_muxer"][muxer][kind].as_u64().unwrap_or(0) > 0,
                "no {kind} over {muxer}: {summary}"
            );
        }
    }
    assert!(blocks_gossip >= MIN_GOSSIP_BLOCKS, "{summary}");
    assert!(columns_gossip >= MIN_GOSSIP_COLUMNS, "{summary}");
    assert!(aggregates >= MIN_AGGREGATES, "{summary}");
    // The chain before the peer joined came by range and went through the same checks.
    assert!(blocks_range >= 3, "{summary}");
    assert!(columns_range >= 3, "{summary}");
    assert_eq!(blocks, blocks_gossip + blocks_range, "{summary}");
    assert_eq!(
        count(&summary, "blocks_pending"),
        0,
        "blocks Lodestar never got to: {summary}"
    );
    // A tampered copy of the first block, column and aggregate was rejected by the same calls.
    for what in ["block", "column", "aggregate"] {
        assert_eq!(
            summary["controls_rejected"][what].as_bool(),
            Some(true),
            "control {what}: {summary}"
        );
    }
    // Lodestar's REST client decoded every endpoint it asked, in JSON and in SSZ, to equal values.
    assert!(
        api_error.is_none(),
        "Lodestar's API check failed: {}; logs: {}, {}",
        api_error.unwrap_or_default(),
        api_log.display(),
        devnet_log.display()
    );
    assert!(
        api_status.is_some_and(|s| s.success()),
        "api_check.mjs did not finish or failed ({api_status:?}); log: {}",
        api_log.display()
    );
    let api_summary =
        api_summary.unwrap_or_else(|| panic!("no API summary line; log: {}", api_log.display()));
    let endpoints = count(&api_summary, "checked");
    let json_answers = count(&api_summary, "json");
    let ssz_answers = count(&api_summary, "ssz");
    let compared = count(&api_summary, "compared");
    let submitted_json = count(&api_summary, "submitted_json");
    let submitted_ssz = count(&api_summary, "submitted_ssz");
    eprintln!(
        "Lodestar's REST client checked {endpoints} endpoint calls: {json_answers} JSON answers, {ssz_answers} SSZ answers, \
         {compared} JSON/SSZ pairs equal ({} asked again after a head change); \
         {submitted_json} submissions with a JSON body and {submitted_ssz} with an SSZ body accepted; JSON-only in Lodestar's client: {}; \
         SSZ asked, JSON answered (no SSZ in the spec): {}; SSZ without Lodestar's optimistic/finalized headers: {}; not checked: {}",
        count(&api_summary, "retries"),
        api_summary["json_only"],
        api_summary["ssz_answered_json"],
        api_summary["ssz_without_optimistic_finalized_headers"],
        api_summary["unchecked"],
    );
    // Every call of the script answered (a failed one fails the script): 68 reads, 20 of them
    // in SSZ both ways, 53 JSON/SSZ pairs compared (the rest JSON-only in Lodestar's client), and
    // 2 submission endpoints (attestations in JSON and SSZ, a sync committee message in JSON).
    assert!(endpoints >= 70, "{api_summary}");
    assert!(submitted_json >= 2 && submitted_ssz >= 1, "{api_summary}");
    assert!(ssz_answers >= 20, "{api_summary}");
    assert!(compared >= 53, "{api_summary}");
    // The blinded block and the Fulu block's blob sidecars, in both encodings.
    let checked: Vec<&str> = api_summary["endpoints"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for endpoint in [
        "getBlindedBlock",
        "getBlobSidecars",
        "getBlobSidecars(indices)",
    ] {
        assert!(
            checked.contains(&endpoint),
            "{endpoint} not checked: {api_summary}"
        );
    }

    // Both connections, one per muxer, carried Status, both by-range protocols and gossip.
    assert_eq!(statuses, 2, "{summary}");
    for muxer in ["yamux", "mplex"] {
        let m = &summary["per_muxer"][muxer];
        for key in [
            "blocks",
            "columns",
            "aggregates",
            "status",
            "blocks_by_range",
            "columns_by_range",
        ] {
            assert!(
                m[key].as_u64().unwrap_or(0) >= 1,
                "{muxer}: no {key}: {summary}"
            );
        }
    }
}
