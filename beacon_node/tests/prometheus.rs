//! A real Prometheus (Debian's `prometheus`, which `.ci/run` installs) scrapes a two-node
//! `arbor dev` devnet, and its query API shows the series an operator watches existing and
//! moving: head slot, justified and finalized epochs, peers, block delays, the beacon
//! processor's queues, gossip verdicts, the Beacon API's latency, the operation pool.
//!
//! Both processes bind 127.0.0.1, are bounded in time and stopped by their PIDs; their output
//! stays under `target/test-logs/`.
#![cfg(feature = "mock-el")]

#[path = "common/devnet.rs"]
#[allow(
    dead_code,
    reason = "the devnet runner is used by the devnet tests, not this one"
)]
mod devnet;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use devnet::{Killer, http_get, log_path};

/// A free port on 127.0.0.1 (bound and released; Prometheus takes it right after).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The value of `query` (one sample) from Prometheus's query API; `None` while there is none.
fn query(port: u16, query: &str) -> Option<f64> {
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let (status, body) = http_get(port, &format!("/api/v1/query?query={encoded}")).ok()?;
    if status != 200 {
        return None;
    }
    let json: serde_json::Value = serde_json::from_str(&body).ok()?;
    let result = json.pointer("/data/result")?.as_array()?;
    // Several series (labels): their sum.
    let mut total = 0.0;
    for sample in result {
        total += sample.pointer("/value/1")?.as_str()?.parse::<f64>().ok()?;
    }
    (!result.is_empty()).then_some(total)
}

#[test]
fn prometheus_scrapes_the_series_operators_watch() {
    let prometheus = std::env::var("ARBOR_PROMETHEUS").unwrap_or_else(|_| "prometheus".into());
    let version = Command::new(&prometheus).arg("--version").output();
    assert!(
        version.as_ref().is_ok_and(|o| o.status.success()),
        "`{prometheus}` does not run ({version:?}): install Debian's `prometheus` (.ci/run does) or set ARBOR_PROMETHEUS"
    );

    let dev_log = log_path("prometheus-arbor-dev");
    let mut dev = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args([
            "dev",
            "--nodes",
            "2",
            "--validators",
            "64",
            "--blobs",
            "2",
            "--seconds-per-slot",
            "2",
            "--http-port",
            "0",
            "--metrics-port",
            "0",
            "--genesis-delay",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(dev_log.with_extension("stderr.log")).expect("log file"),
        ))
        .spawn()
        .expect("arbor dev starts");
    let stdout = dev.stdout.take().expect("stdout");
    let _dev = Killer(dev);
    let (tx, lines) = mpsc::channel::<String>();
    let mut file = std::fs::File::create(&dev_log).expect("log file");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = writeln!(file, "{line}");
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let api_port = loop {
        assert!(
            Instant::now() < deadline,
            "no API address; log: {}",
            dev_log.display()
        );
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(500))
            && let Some(rest) = line.split("Beacon API on http://127.0.0.1:").nth(1)
            && let Some(port) = rest
                .split([';', ','])
                .next()
                .and_then(|p| p.parse::<u16>().ok())
        {
            break port;
        }
    };

    let dir = log_path("prometheus").with_extension("d");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("prometheus dir");
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: arbor\n    metrics_path: /metrics\n    static_configs:\n      - targets: ['127.0.0.1:{api_port}']\n"
        ),
    )
    .expect("prometheus config");
    let prom_port = free_port();
    let prom = Command::new(&prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("prometheus.log")).expect("log file"),
        ))
        .spawn()
        .expect("prometheus starts");
    let _prom = Killer(prom);

    // Every series must appear; the head slot must move while Prometheus watches.
    let series = [
        "beacon_head_slot",
        "beacon_clock_slot",
        "beacon_current_justified_epoch",
        "beacon_finalized_epoch",
        "libp2p_peers",
        "beacon_block_delay_head_seconds_count",
        "beacon_processor_queue_length",
        "network_gossip_verdicts_total",
        "http_api_request_duration_seconds_count",
        "beacon_op_pool_operations",
    ];
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut first_head: Option<f64> = None;
    let mut missing: Vec<&str> = series.to_vec();
    let mut moved = false;
    while Instant::now() < deadline && (!missing.is_empty() || !moved) {
        std::thread::sleep(Duration::from_secs(2));
        missing.retain(|name| query(prom_port, name).is_none());
        if let Some(head) = query(prom_port, "beacon_head_slot") {
            match first_head {
                None if head > 0.0 => first_head = Some(head),
                Some(first) if head > first => moved = true,
                _ => {}
            }
        }
    }
    assert!(
        missing.is_empty(),
        "series Prometheus never saw: {missing:?}; logs under {}",
        dir.display()
    );
    assert!(
        moved,
        "the head slot did not move; logs under {}",
        dir.display()
    );
    // The devnet's two nodes see each other, blocks arrived with their delays recorded, the
    // API answered the validator clients.
    assert!(query(prom_port, "libp2p_peers").unwrap_or(0.0) >= 1.0);
    assert!(query(prom_port, "beacon_block_delay_head_seconds_count").unwrap_or(0.0) >= 1.0);
    assert!(query(prom_port, "http_api_request_duration_seconds_count").unwrap_or(0.0) >= 1.0);
    assert!(query(prom_port, "network_gossip_verdicts_total").unwrap_or(0.0) >= 1.0);
}
