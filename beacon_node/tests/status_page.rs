//! The status page at `/` of a running `arbor dev` devnet, rendered by Debian's headless
//! `chromium` (which `.ci/run` installs): the DOM it renders shows the head slot, the last
//! blocks with their blob counts and timelines, the beacon processor's queues and the peers (by
//! client and by custody group count), refreshed from the event stream; a screenshot is saved
//! under `target/`.
//!
//! Every process binds 127.0.0.1, is bounded in time and stopped by its PID; the output stays
//! under `target/test-logs/`.
#![cfg(feature = "mock-el")]

#[path = "common/devnet.rs"]
#[allow(
    dead_code,
    reason = "the devnet runner is used by the devnet tests, not this one"
)]
mod devnet;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use devnet::{Killer, http_get, log_path};

/// Blobs in every devnet block: every block row but the genesis one must show this many.
const BLOBS: usize = 3;
/// SSE events the page follows before it stops (`?events=`): the rendered page has been
/// refreshed from the stream at least once.
const EVENTS: usize = 2;

/// `<target>/` (the workspace's target directory).
fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target")
}

/// The chromium to run: `$ARBOR_CHROMIUM`, else Debian's `/usr/bin/chromium`. Missing is a
/// failure, not a skip.
fn chromium() -> String {
    let chromium = std::env::var("ARBOR_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let version = Command::new(&chromium).arg("--version").output();
    assert!(
        version.as_ref().is_ok_and(|o| o.status.success()),
        "`{chromium}` does not run ({version:?}): install Debian's `chromium` (.ci/run does) or set ARBOR_CHROMIUM"
    );
    chromium
}

/// Runs headless chromium on `url` with `extra` arguments (a fresh profile under `dir`),
/// bounded in time; its stdout.
fn run_chromium(chromium: &str, dir: &Path, name: &str, url: &str, extra: &[String]) -> String {
    let profile = dir.join(format!("{name}-profile"));
    let _ = std::fs::remove_dir_all(&profile);
    let stdout_path = dir.join(format!("{name}.stdout"));
    let mut child = Killer(
        Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--window-size=1280,1600",
                // The page's fetches and its event stream hold virtual time while they are
                // open; the budget runs once the page has closed the stream (`?events=`).
                "--virtual-time-budget=15000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(url)
            .stdout(Stdio::from(
                std::fs::File::create(&stdout_path).expect("chromium stdout file"),
            ))
            .stderr(Stdio::from(
                std::fs::File::create(dir.join(format!("{name}.stderr.log")))
                    .expect("chromium log file"),
            ))
            .spawn()
            .expect("chromium starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("chromium status") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "chromium ({name}) did not finish within the bound; logs under {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        status.success(),
        "chromium ({name}) failed: {status}; logs under {}",
        dir.display()
    );
    std::fs::read_to_string(&stdout_path).expect("chromium stdout")
}

/// The start tags `<tag ...>` in `html` whose classes include `class`.
fn start_tags<'a>(html: &'a str, tag: &str, class: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    html.match_indices(&open)
        .filter_map(|(at, _)| html[at..].find('>').map(|end| &html[at..at + end + 1]))
        .filter(|t| attribute(t, "class").is_some_and(|c| c.split(' ').any(|c| c == class)))
        .collect()
}

/// The value of attribute `name` in a start tag.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// The text inside the element with `id` (up to its first child or its end tag).
fn text_of<'a>(html: &'a str, id: &str) -> Option<&'a str> {
    let key = format!("id=\"{id}\"");
    let at = html.find(&key)?;
    let start = at + html[at..].find('>')? + 1;
    let len = html[start..].find('<')?;
    Some(html[start..start + len].trim())
}

/// Waits (bounded) until `/arbor/v1/status` shows a peer whose client and custody group count
/// are known (identify and MetaData answered, and the node's peer list was refreshed); that
/// custody group count.
fn wait_peer_identified(port: u16) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = http_get(port, "/arbor/v1/status").expect("API reachable");
        assert_eq!(status, 200, "{body}");
        let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        let identified = json
            .pointer("/data/peer_clients")
            .and_then(|p| p.as_array())
            .into_iter()
            .flatten()
            .find(|p| p["client"] == "Arbor")
            .and_then(|p| p["custody_group_count"].as_u64());
        if let Some(cgc) = identified {
            return cgc;
        }
        assert!(
            Instant::now() < deadline,
            "no identified Arbor peer with a custody group count in {body}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The head slot the Beacon API reports.
fn api_head_slot(port: u16) -> u64 {
    let (status, body) = http_get(port, "/eth/v1/beacon/headers/head").expect("API reachable");
    assert_eq!(status, 200, "{body}");
    let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    json.pointer("/data/header/message/slot")
        .and_then(|s| s.as_str())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no head slot in {body}"))
}

#[test]
fn chromium_renders_the_status_page_of_a_running_devnet() {
    let chromium = chromium();
    let dir = log_path("status-page").with_extension("d");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("status page log dir");
    let datadir = dir.join("datadir");

    // Two nodes: the page has a peer and a beacon processor to show (one node runs no p2p).
    let dev_log = dir.join("arbor-dev.log");
    let blobs = BLOBS.to_string();
    let mut dev = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args([
            "dev",
            "--nodes",
            "2",
            "--validators",
            "64",
            "--blobs",
            &blobs,
            "--seconds-per-slot",
            "2",
            "--http-port",
            "0",
            "--metrics-port",
            "0",
            "--genesis-delay",
            "2",
            // The devnet bounds itself too, should this test be killed before it stops it.
            "--until-finalized-epoch",
            "1000",
            "--max-slots",
            "120",
        ])
        .arg("--datadir")
        .arg(&datadir)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(dir.join("arbor-dev.stderr.log")).expect("log file"),
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

    // The API's port, then a few blocks (`arbor dev: slot S head H ROOT blobs B peers P ...`).
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut port = None;
    loop {
        assert!(
            Instant::now() < deadline,
            "the devnet did not reach slot 4 with a peer; log: {}",
            dev_log.display()
        );
        let Ok(line) = lines.recv_timeout(Duration::from_millis(500)) else {
            continue;
        };
        if port.is_none()
            && let Some(rest) = line.split("Beacon API on http://127.0.0.1:").nth(1)
        {
            port = rest
                .split([';', ','])
                .next()
                .and_then(|p| p.parse::<u16>().ok());
        }
        if let Some(rest) = line.strip_prefix("arbor dev: slot ") {
            let fields: Vec<&str> = rest.split(' ').collect();
            let head: u64 = fields.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
            let peers: u64 = fields.get(7).and_then(|s| s.parse().ok()).unwrap_or(0);
            if head >= 4 && peers >= 1 && port.is_some() {
                break;
            }
        }
    }
    let port = port.expect("the API's port");
    let url = format!("http://127.0.0.1:{port}/?events={EVENTS}");
    let peer_cgc = wait_peer_identified(port);

    let before = api_head_slot(port);
    let dom = run_chromium(&chromium, &dir, "dump-dom", &url, &["--dump-dom".into()]);
    let after = api_head_slot(port);
    std::fs::write(dir.join("status-page.dom.html"), &dom).expect("DOM file");
    let where_ = format!("DOM in {}", dir.join("status-page.dom.html").display());

    // The head slot, as the API reported it while chromium ran.
    let head: u64 = text_of(&dom, "head-slot")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no head slot rendered; {where_}"));
    assert!(
        (before..=after).contains(&head),
        "the page shows head slot {head}, the API {before}..={after}; {where_}"
    );
    // Refreshed from the event stream: the page followed it for its events and stopped.
    assert_eq!(
        text_of(&dom, "sse-events"),
        Some(EVENTS.to_string().as_str()),
        "{where_}"
    );
    // The last blocks: the head among them, each after genesis with the devnet's blobs, its
    // stored columns and its timeline.
    let rows = start_tags(&dom, "tr", "block-row");
    assert!(!rows.is_empty(), "no block row; {where_}");
    let head_slot = head.to_string();
    assert!(
        rows.iter()
            .any(|r| attribute(r, "data-slot") == Some(&head_slot)),
        "no row for the head slot {head}; {where_}"
    );
    let mut with_blobs = 0;
    for row in &rows {
        let slot: u64 = attribute(row, "data-slot")
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a row without its slot: {row}"));
        if slot > 0 {
            assert_eq!(
                attribute(row, "data-blobs"),
                Some(blobs.as_str()),
                "block {slot}: {row}; {where_}"
            );
            with_blobs += 1;
        }
    }
    assert!(with_blobs >= 1, "{where_}");
    assert!(
        dom.contains(&format!("<td class=\"num blob-count\">{BLOBS}</td>")),
        "no blob count cell; {where_}"
    );
    // The supernode stores every column of a block with blobs; timelines run seen → imported.
    assert!(dom.contains(">128/128</span>"), "no column count; {where_}");
    assert!(
        !start_tags(&dom, "div", "strip-row").is_empty()
            && dom.matches("<i class=\"on\"").count() >= 128,
        "no column availability strip; {where_}"
    );
    assert!(
        dom.contains("(gossip) →") || dom.contains("(api) →"),
        "no timeline with its first sighting; {where_}"
    );
    // The beacon processor's queues and the peer, through the page's reads.
    assert!(
        !start_tags(&dom, "div", "queue-row").is_empty(),
        "no processor queue; {where_}"
    );
    let peers: u64 = text_of(&dom, "peer-count")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no peer count; {where_}"));
    assert!(peers >= 1, "{peers} peers rendered; {where_}");
    let peer_rows = start_tags(&dom, "tr", "peer-row");
    assert!(!peer_rows.is_empty(), "no peer row; {where_}");
    assert!(
        peer_rows
            .iter()
            .any(|r| attribute(r, "data-client") == Some("Arbor")),
        "no peer row naming its client; {where_}"
    );
    // Peers by client and by custody: the other node is an Arbor peer with its custody group
    // count, and each grouping counts every connected peer.
    let group_total = |rows: &[&str]| -> u64 {
        rows.iter()
            .filter_map(|r| attribute(r, "data-count").and_then(|c| c.parse::<u64>().ok()))
            .sum()
    };
    let client_rows = start_tags(&dom, "tr", "client-row");
    assert!(
        client_rows
            .iter()
            .any(|r| attribute(r, "data-client") == Some("Arbor")
                && attribute(r, "data-count").and_then(|c| c.parse::<u64>().ok()) >= Some(1)),
        "no Arbor row among the peers by client: {client_rows:?}; {where_}"
    );
    assert_eq!(
        group_total(&client_rows),
        peers,
        "peers by client; {where_}"
    );
    let custody_rows = start_tags(&dom, "tr", "custody-row");
    let cgc = peer_cgc.to_string();
    assert!(
        custody_rows
            .iter()
            .any(|r| attribute(r, "data-cgc") == Some(cgc.as_str())),
        "no row for custody group count {cgc} among the peers by custody: {custody_rows:?}; {where_}"
    );
    assert_eq!(
        group_total(&custody_rows),
        peers,
        "peers by custody; {where_}"
    );

    // The screenshot, kept under target/ for a person to look at.
    let screenshot = target_dir().join("status-page.png");
    let _ = std::fs::remove_file(&screenshot);
    run_chromium(
        &chromium,
        &dir,
        "screenshot",
        &url,
        &[format!("--screenshot={}", screenshot.display())],
    );
    let png = std::fs::read(&screenshot).unwrap_or_else(|e| {
        panic!(
            "no screenshot at {} ({e}); logs under {}",
            screenshot.display(),
            dir.display()
        )
    });
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 20_000,
        "{} is not a rendered page ({} bytes)",
        screenshot.display(),
        png.len()
    );
    eprintln!(
        "status page: head slot {head}, {} block rows, screenshot {}",
        rows.len(),
        screenshot.display()
    );
}
