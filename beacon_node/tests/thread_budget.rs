//! One thread budget: `arbor dev --nodes 2 --worker-threads N`, two nodes gossiping blocks,
//! columns and votes to each other while a burst of concurrent Beacon API requests (states,
//! committees, duties, past states that must be replayed) hits both, never has more than
//! `N + 1` of its threads wanting a CPU at once.
//!
//! The test samples every thread of the process from `/proc/<pid>/task/*/stat`, again and
//! again, and counts those in state `R` (running, or runnable and waiting for a CPU: a thread
//! that wants one). Counted: every thread of the nodes. Why `N + 1`: the `N` threads of the
//! beacon processor's main pool, which all the nodes' CPU work runs on (their handlers, the
//! chain's data-parallel work, the state transitions' parallel sections, KZG and BLS batches,
//! the timers', the API's, block production's and the store writers' work), and **one** thread
//! for the nodes' async side (networking, the HTTP servers, the engine clients, the timers: a
//! current-thread runtime on the process's main thread). The processor's backfill thread is
//! idle (the nodes start from genesis: nothing to backfill).
//!
//! Not counted, by name, three kinds of threads that do no CPU work of the nodes: the
//! `dev-tools` threads, where `arbor dev` runs its validator clients, its mock execution client
//! and its mock relay (programs of their own on a real network, not the nodes); libp2p's
//! `futures-timer` thread (a timer wheel that wakes the async side's tasks; it runs none of
//! them); and the nodes' `store-writer` threads, which only order the epoch snapshots and
//! finalization migrations: each write runs on the pool while its thread waits. They count
//! as runnable for the moment they are woken, and on a machine whose cores the pool and the
//! async side keep busy, that moment lasts until a core is free.
//!
//! It fails when CPU work runs beside the pools: before this budget each node had its own
//! `chain-worker-*` pool, the state transition its static `state-par-*` and `block-bls-*`
//! pools, parallel sections and imports their own threads, and the slot timers and publication
//! tokio's blocking pool; a two-node devnet then had up to 15 threads in state `R` at once on
//! two cores (the bound there being 3). It found, too, blst's own thread pool, which every
//! signature verification was handed to (off now: blst's `no-threads`), and rayon's global
//! pool, started by state hashing off the pools. The assertion counts threads, not time: a
//! slow machine makes the run longer, not the count higher.
#![cfg(all(feature = "mock-el", target_os = "linux"))]
#![allow(
    clippy::unwrap_used,
    reason = "a test: a failed request or parse is the test's failure"
)]

#[allow(
    dead_code,
    reason = "the devnet helpers shared with the other devnet tests; this one uses some"
)]
#[path = "common/devnet.rs"]
mod devnet;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// The main pool's threads the devnet is given: every node's CPU work shares them.
const WORKER_THREADS: usize = 2;
/// The async side: one thread (see the module's docs).
const ASYNC_THREADS: usize = 1;
/// Threads that are not the nodes' (see the module's docs), by name (`comm`).
const NOT_THE_NODES: &[&str] = &["dev-tools", "futures-timer", "store-writer"];
/// Concurrent API clients in the burst.
const CLIENTS: usize = 12;
/// Slots the burst and the sampling last (2 s each).
const BURST_SLOTS: u64 = 16;
/// Minimal preset.
const SLOTS_PER_EPOCH: u64 = 8;

/// One thread of the process at one sample.
struct ThreadState {
    name: String,
    state: char,
}

/// Every thread of `pid` with its name and state; empty once the process is gone.
fn threads_of(pid: u32) -> Vec<ThreadState> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| {
            let stat = std::fs::read_to_string(task.ok()?.path().join("stat")).ok()?;
            // `tid (comm) S ...`: the name may hold spaces and parentheses; the state follows
            // the last ')'.
            let open = stat.find('(')?;
            let close = stat.rfind(')')?;
            Some(ThreadState {
                name: stat[open + 1..close].to_string(),
                state: stat[close + 1..].trim_start().chars().next()?,
            })
        })
        .collect()
}

/// An HTTP/1.0 request on 127.0.0.1 (`body`: a JSON POST); the status code.
fn request(port: u16, path: &str, body: Option<&str>) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    match body {
        None => write!(
            stream,
            "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n"
        )?,
        Some(body) => write!(
            stream,
            "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )?,
    }
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let head = String::from_utf8_lossy(&response[..response.len().min(32)]).into_owned();
    Ok(head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0))
}

/// The requests of one round of a client of the burst, at head slot `head`: the head state's
/// registry, committees and sync committee, a past state's committees (a state the node must
/// load and replay), the epoch's proposer and attester duties, and the head block.
fn round(head: u64, client: u64) -> Vec<(String, Option<String>)> {
    let epoch = head / SLOTS_PER_EPOCH;
    let past = head.saturating_sub(1 + (client * 3 + head) % 12);
    let indices: Vec<String> = (0..64).map(|i| format!("\"{i}\"")).collect();
    vec![
        ("/eth/v1/beacon/states/head/validators".into(), None),
        ("/eth/v1/beacon/states/head/committees".into(), None),
        ("/eth/v1/beacon/states/head/sync_committees".into(), None),
        (format!("/eth/v1/beacon/states/{past}/committees"), None),
        (
            format!("/eth/v1/beacon/states/{past}/validator_balances"),
            None,
        ),
        (format!("/eth/v1/validator/duties/proposer/{epoch}"), None),
        (
            format!("/eth/v1/validator/duties/attester/{epoch}"),
            Some(format!("[{}]", indices.join(","))),
        ),
        ("/eth/v2/beacon/blocks/head".into(), None),
    ]
}

#[test]
fn a_devnet_under_a_burst_keeps_to_its_thread_budget() {
    let log = devnet::log_path("thread-budget");
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    command
        .args([
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
            "2",
            "--worker-threads",
            &WORKER_THREADS.to_string(),
        ])
        .env("ARBOR_LOG", "info");
    let (child, lines, output) = devnet::spawn_logged(&mut command, &log);
    let pid = child.0.id();

    // A bound on the whole run, so that a devnet that stalls fails the test rather than hangs
    // it; the assertion itself counts threads.
    let deadline = Instant::now() + Duration::from_secs(600);
    let next_line = move |lines: &mpsc::Receiver<String>| -> Option<String> {
        while Instant::now() < deadline {
            match lines.recv_timeout(Duration::from_millis(200)) {
                Ok(line) => return Some(line),
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
        None
    };
    // `arbor dev: slot S head H ...`: the head's slot.
    let head_of = |line: &str| -> Option<u64> {
        line.strip_prefix("arbor dev: slot ")?
            .split(' ')
            .nth(2)?
            .parse()
            .ok()
    };

    // The start line names every node's Beacon API.
    let mut ports: Vec<u16> = Vec::new();
    while ports.is_empty() {
        let line =
            next_line(&lines).unwrap_or_else(|| panic!("no start line; log: {}", log.display()));
        if let Some(apis) = line
            .split("Beacon API on ")
            .nth(1)
            .and_then(|rest| rest.split(';').next())
        {
            ports = apis
                .split(", ")
                .filter_map(|url| url.rsplit(':').next()?.parse().ok())
                .collect();
        }
    }
    assert_eq!(ports.len(), 2, "two Beacon APIs; log: {}", log.display());

    // A few blocks in before the burst.
    let mut head = 0;
    while head < 4 {
        let line = next_line(&lines)
            .unwrap_or_else(|| panic!("the devnet made no blocks; log: {}", log.display()));
        head = head_of(&line).unwrap_or(head);
    }
    let first_head = head;

    // The burst: concurrent clients on both nodes until the sampling ends.
    let stop = Arc::new(AtomicBool::new(false));
    let shared_head = Arc::new(AtomicU64::new(head));
    let answered = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..CLIENTS as u64)
        .map(|client| {
            let (stop, shared_head, answered) =
                (stop.clone(), shared_head.clone(), answered.clone());
            let port = ports[client as usize % ports.len()];
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    for (path, body) in round(shared_head.load(Ordering::Relaxed), client) {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if request(port, &path, body.as_deref()).is_ok_and(|status| status == 200) {
                            answered.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();

    // Sampling, beside the burst, until the devnet has run `BURST_SLOTS` more slots.
    let (slot_tx, slot_rx) = mpsc::channel::<Option<u64>>();
    let line_thread = std::thread::spawn(move || {
        let mut seen = 0;
        while seen < BURST_SLOTS {
            let Some(line) = next_line(&lines) else {
                let _ = slot_tx.send(None);
                return;
            };
            if let Some(head) = head_of(&line) {
                seen += 1;
                let _ = slot_tx.send(Some(head));
            }
        }
        let _ = slot_tx.send(None);
    });
    let mut samples = 0u64;
    let mut max_busy = 0;
    let mut worst: Vec<String> = Vec::new();
    let mut histogram: BTreeMap<usize, u64> = BTreeMap::new();
    let mut busy_by_name: BTreeMap<String, u64> = BTreeMap::new();
    let mut busy_not_counted: BTreeMap<String, u64> = BTreeMap::new();
    let mut slots_seen = 0;
    loop {
        match slot_rx.try_recv() {
            Ok(Some(h)) => {
                head = h;
                shared_head.store(h, Ordering::Relaxed);
                slots_seen += 1;
            }
            Ok(None) | Err(mpsc::TryRecvError::Disconnected) => break,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        let threads = threads_of(pid);
        assert!(
            !threads.is_empty(),
            "arbor dev exited during the burst; log: {}",
            log.display()
        );
        let busy: Vec<String> = threads
            .into_iter()
            .filter(|t| t.state == 'R')
            .filter_map(|t| {
                if NOT_THE_NODES.contains(&t.name.as_str()) {
                    *busy_not_counted.entry(t.name).or_default() += 1;
                    None
                } else {
                    Some(t.name)
                }
            })
            .collect();
        samples += 1;
        *histogram.entry(busy.len()).or_default() += 1;
        for name in &busy {
            *busy_by_name.entry(name.clone()).or_default() += 1;
        }
        if busy.len() > max_busy {
            max_busy = busy.len();
            worst = busy;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        let _ = client.join();
    }
    drop(child);
    let _ = line_thread.join();
    output.join();

    let report = format!(
        "{samples} samples over {slots_seen} slots (head {first_head} to {head}), {} API answers; \
         busy threads per sample {histogram:?}; most busy at once {max_busy}: {worst:?}; \
         samples in state R by thread {busy_by_name:?}; not counted: {busy_not_counted:?}; log: \
         {}",
        answered.load(Ordering::Relaxed),
        log.display()
    );
    eprintln!("{report}");
    assert_eq!(slots_seen, BURST_SLOTS, "the devnet stopped: {report}");
    assert!(
        head >= first_head + BURST_SLOTS / 2,
        "blocks did not import during the burst: {report}"
    );
    assert!(
        answered.load(Ordering::Relaxed) >= 100,
        "the burst was not served: {report}"
    );
    // The bound was approached: the burst kept the pool's threads busy, so the count below
    // is not met merely because the devnet was idle.
    assert!(
        histogram
            .range(WORKER_THREADS..)
            .map(|(_, n)| n)
            .sum::<u64>()
            > 0,
        "the pool was never busy: {report}"
    );
    assert!(
        max_busy <= WORKER_THREADS + ASYNC_THREADS,
        "more than {WORKER_THREADS} worker threads + {ASYNC_THREADS} async thread wanted a CPU \
         at once: {report}"
    );
}
