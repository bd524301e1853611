//! Runs `arbor dev` as a user runs it and checks that the devnet finalizes with blobs in every
//! block. The process is bounded in time and stopped by its PID; its output stays under
//! `target/test-logs/` for a failing run.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Where the devnet's output goes: `target/test-logs/<name>.log`.
pub(crate) fn log_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/test-logs");
    std::fs::create_dir_all(&dir).expect("log directory");
    dir.join(format!("{name}.log"))
}

/// Kills the child by its PID when the test ends, however it ends.
pub(crate) struct Killer(pub(crate) Child);

impl Drop for Killer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The threads that copy a child's output into its log file.
pub(crate) struct OutputCopiers([std::thread::JoinHandle<()>; 2]);

impl OutputCopiers {
    /// Waits until the child's output is all in its log (the child gone: its pipes closed).
    pub(crate) fn join(self) {
        for copier in self.0 {
            let _ = copier.join();
        }
    }
}

/// Spawns `command` with its stdout and stderr both written to `log`, and the stdout's lines
/// handed to the test as well; the child is killed by its PID when the [`Killer`] drops.
pub(crate) fn spawn_logged(
    command: &mut Command,
    log: &Path,
) -> (Killer, mpsc::Receiver<String>, OutputCopiers) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child starts");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let (lines_tx, lines) = mpsc::channel::<String>();
    let file = std::fs::File::create(log).expect("log file");
    let err_file = file.try_clone().expect("log file");
    let out = std::thread::spawn(move || {
        let mut file = file;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = writeln!(file, "{line}");
            let _ = lines_tx.send(line);
        }
    });
    let err = std::thread::spawn(move || {
        let mut file = err_file;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = writeln!(file, "{line}");
        }
    });
    (Killer(child), lines, OutputCopiers([out, err]))
}

/// A plain HTTP/1.0 GET (no chunked answers) on 127.0.0.1 (no client library needed for one request); the status
/// code and body.
pub(crate) fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

/// Runs `arbor dev --nodes <nodes>` to finalized epoch `until_finalized_epoch` and checks what
/// it printed, handing `observe` every line it prints on stdout, with the Beacon API's port once
/// its start line named it, while the devnet runs: a test's own checks against the running
/// devnet, in the same run.
pub(crate) fn devnet_finalizes_observed(
    name: &str,
    nodes: usize,
    until_finalized_epoch: u64,
    observe: &mut dyn FnMut(Option<u16>, &str),
) {
    let log = log_path(name);
    let nodes_arg = nodes.to_string();
    let until_arg = until_finalized_epoch.to_string();
    // Three epochs of the minimal preset's 8 slots to spare past the usual finality (epoch E
    // at slot 8 * (E + 2)).
    let max_slots_arg = (8 * (until_finalized_epoch + 5)).to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    command
        .args([
            "dev",
            "--nodes",
            &nodes_arg,
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
            &until_arg,
            "--max-slots",
            &max_slots_arg,
        ])
        .env("ARBOR_LOG", "info");
    let (mut child, lines, output) = spawn_logged(&mut command, &log);

    // 2 s slots: finality of epoch 2 comes at slot 32 (about 70 s), each later epoch 16 s
    // after; the bound leaves room for a loaded machine, and `--max-slots` makes the devnet
    // itself give up first.
    let deadline = Instant::now() + Duration::from_secs(300 + 16 * until_finalized_epoch);
    let mut port = None;
    let mut api_checked = false;
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
        observe(port, &line);
        // `arbor dev: slot S head H ROOT blobs B peers P justified J finalized F missed duties M`
        if let Some(rest) = line.strip_prefix("arbor dev: slot ") {
            let fields: Vec<&str> = rest.split(' ').collect();
            let head_slot: u64 = fields.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
            // Once a few blocks are in, the API answers what a validator client asks first,
            // and serves the head's 128 data columns.
            if !api_checked
                && head_slot >= 4
                && let Some(port) = port
            {
                let (status, body) = http_get(port, "/eth/v1/node/syncing").expect("API reachable");
                assert_eq!(status, 200, "{body}");
                assert!(body.contains("\"head_slot\""), "{body}");
                let (status, body) =
                    http_get(port, "/eth/v1/beacon/states/head/finality_checkpoints")
                        .expect("API reachable");
                assert_eq!(status, 200, "{body}");
                let (status, body) = http_get(
                    port,
                    &format!("/eth/v1/debug/beacon/data_column_sidecars/{head_slot}"),
                )
                .expect("API reachable");
                assert_eq!(status, 200, "{body:.300}");
                let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
                let columns = json["data"].as_array().map_or(0, Vec::len);
                assert_eq!(columns, 128, "columns served for slot {head_slot}");
                api_checked = true;
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
    let output = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        status.success(),
        "arbor dev failed ({status}); log: {}",
        log.display()
    );
    assert!(
        output.contains("arbor dev: finalized epoch"),
        "no finality line; log: {}",
        log.display()
    );
    assert!(
        api_checked,
        "the Beacon API was not reached; log: {}",
        log.display()
    );
    // `arbor dev: finalized epoch F reached at slot S on N node(s): B blocks, K with fewer
    // than X blobs; H distinct head(s); M duties missed after the first epoch`
    let summary = output
        .lines()
        .find(|l| l.starts_with("arbor dev: finalized epoch"))
        .unwrap_or_default();
    let number_before = |marker: &str| -> Option<u64> {
        let head = summary.split(marker).next()?;
        head.rsplit([' ', ':'])
            .find(|w| !w.is_empty())?
            .parse()
            .ok()
    };
    let blocks = number_before(" blocks,").unwrap_or(0);
    // A missed slot or two on a loaded machine is no failure; blocks without blobs, nodes
    // on different heads and missed duties after the first epoch are.
    assert!(
        blocks >= 24,
        "{blocks} blocks: {summary}; log: {}",
        log.display()
    );
    assert_eq!(
        number_before(" with fewer than"),
        Some(0),
        "{summary}; log: {}",
        log.display()
    );
    assert!(
        summary.contains(&format!("on {nodes} node(s)"))
            && summary.contains("; 1 distinct head(s)"),
        "the nodes disagree: {summary}; log: {}",
        log.display()
    );
    // One node: no duty may be missed after the first epoch. Several nodes in one debug
    // process on two cores: the count is reported (the validator client's third-of-a-slot
    // attestation timeout at 2 s slots is shorter than a loaded debug build's import plus
    // column reconstruction); the release build of `make run` has the CPU to spare.
    let missed = number_before(" duties missed after the first epoch");
    if nodes == 1 {
        assert_eq!(missed, Some(0), "{summary}; log: {}", log.display());
    } else {
        assert!(missed.is_some(), "{summary}; log: {}", log.display());
        eprintln!("{nodes} nodes: {summary}");
    }
}
