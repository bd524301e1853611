//! A real Prometheus (Debian's `prometheus`, which `.ci/run` installs) scrapes a two-node
//! `arbor dev` devnet, and its query API shows the series an operator watches existing and
//! moving: head slot, justified and finalized epochs, peers (by client and by custody), block
//! delays, the beacon processor's queues, KZG and BLS batch times, gossip verdicts, the Beacon
//! API's latency, the operation pool. Then every
//! panel query of the Grafana dashboard (`scripts/grafana/arbor.json`) must return data.
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

/// The samples of `query` from Prometheus's query API (an instant vector's values, or a
/// scalar's); `None` when the query fails.
fn query_values(port: u16, query: &str) -> Option<Vec<f64>> {
    let (status, body) = http_get(port, &format!("/api/v1/query?query={}", encode(query))).ok()?;
    if status != 200 {
        return None;
    }
    let json: serde_json::Value = serde_json::from_str(&body).ok()?;
    let data = json.get("data")?;
    let value = |v: &serde_json::Value| v.get(1)?.as_str()?.parse::<f64>().ok();
    match data.get("resultType")?.as_str()? {
        "vector" => Some(
            data.get("result")?
                .as_array()?
                .iter()
                // A value that does not parse counts as no number.
                .map(|sample| sample.get("value").and_then(value).unwrap_or(f64::NAN))
                .collect(),
        ),
        "scalar" => Some(vec![value(data.get("result")?)?]),
        _ => None,
    }
}

/// A Grafana panel query as Prometheus runs it: the dashboard's variables filled in as
/// Grafana would (every instance; a rate window of a few scrapes).
fn grafana_to_promql(expr: &str) -> String {
    expr.replace("$__rate_interval", "30s")
        .replace("$instance", ".+")
}

/// Every query of every panel (rows' nested panels included) of the dashboard JSON, with the
/// panel's title.
fn dashboard_queries(dashboard: &serde_json::Value) -> Vec<(String, String)> {
    fn walk(panels: &[serde_json::Value], out: &mut Vec<(String, String)>) {
        for panel in panels {
            let title = panel["title"].as_str().unwrap_or("untitled").to_string();
            for target in panel["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = target["expr"].as_str() {
                    out.push((title.clone(), expr.to_string()));
                }
            }
            if let Some(nested) = panel["panels"].as_array() {
                walk(nested, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        dashboard["panels"]
            .as_array()
            .map_or(&[][..], Vec::as_slice),
        &mut out,
    );
    out
}

/// `query` percent-encoded for a URL's query string.
fn encode(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The value of `query` (one sample) from Prometheus's query API; `None` while there is none.
fn query(port: u16, query: &str) -> Option<f64> {
    let encoded = encode(query);
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
        "libp2p_peers_per_client",
        "libp2p_peers_per_custody_group_count",
        "beacon_kzg_batch_verification_seconds_count",
        "beacon_kzg_batch_verification_columns_count",
        "beacon_bls_batch_verification_seconds_count",
        "beacon_bls_batch_verification_sets_count",
        "beacon_block_import_pre_state_total",
        "beacon_state_advance_seconds_count",
        "beacon_block_import_store_write_seconds_count",
        "beacon_state_snapshot_write_seconds_count",
        "beacon_finalization_migration_seconds_count",
        "beacon_finalization_migration_failures_total",
        "beacon_state_cache_bytes",
        "beacon_state_cache_block_states_limit",
        "beacon_state_cache_loads_total",
        "beacon_block_production_seconds_count",
    ];
    // These must grow while Prometheus watches: the head, the blocks imported on the head
    // state the slot timer advanced ahead of them, and the KZG and BLS batches run on the
    // columns, attestations and aggregates of the other node's validators, and the blocks
    // produced for the validator clients.
    let moving = [
        "beacon_head_slot",
        r#"beacon_block_import_pre_state_total{pre_state="advanced"}"#,
        "beacon_kzg_batch_verification_seconds_count",
        r#"beacon_bls_batch_verification_seconds_count{kind="attestation"}"#,
        r#"beacon_bls_batch_verification_seconds_count{kind="aggregate"}"#,
        r#"beacon_block_production_seconds_count{phase="total"}"#,
    ];
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut first: Vec<Option<f64>> = vec![None; moving.len()];
    let mut missing: Vec<&str> = series.to_vec();
    let mut still: Vec<&str> = moving.to_vec();
    while Instant::now() < deadline && (!missing.is_empty() || !still.is_empty()) {
        std::thread::sleep(Duration::from_secs(2));
        missing.retain(|name| query(prom_port, name).is_none());
        for (name, first) in moving.iter().zip(first.iter_mut()) {
            if let Some(value) = query(prom_port, name) {
                match *first {
                    None if value > 0.0 => *first = Some(value),
                    Some(was) if value > was => still.retain(|n| n != name),
                    _ => {}
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "series Prometheus never saw: {missing:?}; logs under {}",
        dir.display()
    );
    assert!(
        still.is_empty(),
        "series that did not move: {still:?}; logs under {}",
        dir.display()
    );
    // The devnet's two nodes see each other, blocks arrived with their delays recorded, the
    // API answered the validator clients.
    assert!(query(prom_port, "libp2p_peers").unwrap_or(0.0) >= 1.0);
    assert!(query(prom_port, "beacon_block_delay_head_seconds_count").unwrap_or(0.0) >= 1.0);
    assert!(query(prom_port, "http_api_request_duration_seconds_count").unwrap_or(0.0) >= 1.0);
    assert!(query(prom_port, "network_gossip_verdicts_total").unwrap_or(0.0) >= 1.0);
    // The other node runs Arbor (identify), and its custody group count is known (MetaData).
    assert!(query(prom_port, r#"libp2p_peers_per_client{Client="Arbor"}"#).unwrap_or(0.0) >= 1.0);
    assert!(
        query(
            prom_port,
            r#"libp2p_peers_per_custody_group_count{custody_group_count!="unknown"}"#
        )
        .unwrap_or(0.0)
            >= 1.0
    );

    // The Grafana dashboard: a Prometheus datasource variable, and every panel query returns
    // data (at least one sample, and a number: a quantile over no observations is NaN).
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/grafana/arbor.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the Grafana dashboard"))
            .expect("the dashboard is JSON");
    let variables = dashboard["templating"]["list"]
        .as_array()
        .expect("variables");
    assert!(
        variables.iter().any(|v| v["type"] == "datasource"
            && v["query"] == "prometheus"
            && v["name"] == "datasource"),
        "no Prometheus datasource variable in {}",
        path.display()
    );
    let queries = dashboard_queries(&dashboard);
    assert!(
        queries.len() >= 20,
        "{} queries in {}",
        queries.len(),
        path.display()
    );
    for (title, expr) in &queries {
        let promql = grafana_to_promql(expr);
        assert!(
            !promql.contains('$'),
            "panel {title:?}: a dashboard variable this test does not fill in: {expr}"
        );
    }
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut empty: Vec<&(String, String)> = queries.iter().collect();
    while !empty.is_empty() && Instant::now() < deadline {
        empty.retain(|(_, expr)| {
            !query_values(prom_port, &grafana_to_promql(expr))
                .is_some_and(|values| values.iter().any(|v| v.is_finite()))
        });
        if !empty.is_empty() {
            std::thread::sleep(Duration::from_secs(2));
        }
    }
    assert!(
        empty.is_empty(),
        "dashboard queries without data: {:#?}; logs under {}",
        empty,
        dir.display()
    );
    eprintln!(
        "{} dashboard queries of {} panels returned data",
        queries.len(),
        dashboard_queries_panels(&queries)
    );
}

/// How many panels the queries come from.
fn dashboard_queries_panels(queries: &[(String, String)]) -> usize {
    queries
        .iter()
        .map(|(title, _)| title.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}
