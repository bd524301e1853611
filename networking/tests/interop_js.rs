//! An independent implementation as the peer: js-libp2p (`networking/interop/peer.mjs`) against an
//! Arbor network instance on loopback.
//!
//! The JS peer finds Arbor through discv5 (from Arbor's ENR as its only boot record), dials it
//! over TCP with noise and exactly one muxer (yamux in one test, mplex in the other), exchanges
//! Status and Ping with ssz_snappy framing in both directions (and answers Arbor's MetaData
//! request), fetches blocks with BeaconBlocksByRange (several chunks with context bytes), and gossips a `SignedVoluntaryExit` on `/eth2/<digest>/voluntary_exit/ssz_snappy`
//! both ways; both sides must compute the same message id.
//!
//! The tests need the peer installed from npm, so they are `#[ignore]`d in `cargo test`;
//! `make test-interop` installs it (networking/interop/install.sh) and runs them with
//! `ARBOR_INTEROP_JS_DIR` set. Without that variable an explicitly requested run fails.

mod common;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};

use common::*;
use networking::gossip::compute_message_id;
use networking::rpc::{Request, Response, ResponseItem};
use networking::{GossipKind, Muxers, NetworkEvent, PeerId, PubsubMessage};
use serde_json::Value;
use sha2::{Digest, Sha256};
use ssz::Encode;
use tokio::sync::mpsc;
use types::ForkName;
use types::phase0::{SignedVoluntaryExit, VoluntaryExit};

/// Where `install.sh` put the peer (`peer.mjs` and `node_modules/`).
const JS_DIR_ENV: &str = "ARBOR_INTEROP_JS_DIR";

/// The validator index in the exit the JS peer publishes, and the one Arbor publishes.
const JS_EXIT_VALIDATOR: u64 = 42;
const ARBOR_EXIT_VALIDATOR: u64 = 7;

fn js_dir() -> PathBuf {
    let dir = std::env::var_os(JS_DIR_ENV).unwrap_or_else(|| {
        panic!("{JS_DIR_ENV} is not set: run `make test-interop`, which installs the JS peer")
    });
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("peer.mjs").is_file() && dir.join("node_modules").is_dir(),
        "{} does not hold an installed peer (peer.mjs, node_modules/): run networking/interop/install.sh",
        dir.display()
    );
    dir
}

/// The running JS peer: its stdout lines as JSON events, its stdin for commands.
struct JsPeer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<Value>,
    backlog: VecDeque<Value>,
}

impl JsPeer {
    fn spawn(enr: &str, muxer: &str) -> Self {
        let dir = js_dir();
        let node = std::env::var("ARBOR_NODE").unwrap_or_else(|_| "node".to_string());
        let mut child = Command::new(&node)
            .arg(dir.join("peer.mjs"))
            .args(["--enr", enr, "--muxer", muxer])
            .args(["--timeout-ms", &TIMEOUT.as_millis().to_string()])
            .args(["--validator-index", &JS_EXIT_VALIDATOR.to_string()])
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{node}`: {e}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // Shown with `--nocapture`: the peer's side of the run, for diagnosis.
                eprintln!("[js-peer] {line}");
                let value = serde_json::from_str(&line).unwrap_or_else(
                    |e| serde_json::json!({"event": "unparsable", "line": line, "error": e.to_string()}),
                );
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
            backlog: VecDeque::new(),
        }
    }

    /// The next event named `name` (earlier events of other names stay queued); fails on an
    /// `error` event, on EOF and after [`TIMEOUT`].
    async fn expect(&mut self, name: &str) -> Value {
        self.expect_where(name, |_| true).await
    }

    /// The next event named `name` that `accept` takes; other events stay queued.
    async fn expect_where(&mut self, name: &str, accept: impl Fn(&Value) -> bool) -> Value {
        let wanted = |v: &Value| v["event"] == name && accept(v);
        if let Some(i) = self.backlog.iter().position(wanted) {
            return self.backlog.remove(i).expect("index from position");
        }
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(value)) if wanted(&value) => return value,
                Ok(Some(value)) if value["event"] == "error" || value["event"] == "unparsable" => {
                    panic!("the JS peer failed while we waited for `{name}`: {value}")
                }
                Ok(Some(value)) => self.backlog.push_back(value),
                Ok(None) => panic!("the JS peer exited before `{name}`"),
                Err(_) => panic!("timed out waiting for the JS peer's `{name}`"),
            }
        }
    }

    /// Waits for the peer to give up with an `error` event, which it must do.
    async fn expect_failure(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(value)) if value["event"] == "error" => return value,
                Ok(Some(value)) if value["event"] == "connected" => {
                    panic!("the JS peer connected where it must not: {value}")
                }
                Ok(Some(_)) => {}
                Ok(None) => panic!("the JS peer exited without reporting an error"),
                Err(_) => panic!("timed out waiting for the JS peer to fail"),
            }
        }
    }

    /// Tells the peer to stop and waits for it to exit cleanly.
    async fn finish(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            stdin.write_all(b"exit\n").expect("write to the JS peer");
        }
        let stopped = self.expect("stopped").await;
        assert_eq!(stopped["event"], "stopped");
        let status = self.child.wait().expect("wait for the JS peer");
        assert!(status.success(), "the JS peer exited with {status}");
    }
}

impl Drop for JsPeer {
    fn drop(&mut self) {
        // A failed test must not leave the peer running.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Events of the Arbor node, searchable out of order.
struct ArborEvents<'a> {
    node: &'a mut TestNode,
    backlog: Vec<NetworkEvent<E>>,
}

impl ArborEvents<'_> {
    async fn expect<T>(
        &mut self,
        what: &str,
        mut pick: impl FnMut(&NetworkEvent<E>) -> Option<T>,
    ) -> T {
        if let Some(found) = self.backlog.iter().find_map(&mut pick) {
            return found;
        }
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            match tokio::time::timeout_at(deadline, self.node.events.recv()).await {
                Ok(Some(event)) => match pick(&event) {
                    Some(found) => return found,
                    None => self.backlog.push(event),
                },
                Ok(None) => panic!("Arbor's event stream ended while waiting for {what}"),
                Err(_) => panic!("timed out waiting for Arbor's {what}"),
            }
        }
    }

    /// Sends `request` to `peer` and waits for its full response; other events stay queued.
    async fn request(&mut self, peer: PeerId, request: Request<E>) -> Response<E> {
        let id = self.node.handle.send_request(peer, request);
        self.expect("a response", |event| match event {
            NetworkEvent::ResponseReceived {
                request_id,
                response,
                ..
            } if *request_id == id => Some(Ok(response.clone())),
            NetworkEvent::RequestFailed {
                request_id, error, ..
            } if *request_id == id => Some(Err(error.to_string())),
            _ => None,
        })
        .await
        .unwrap_or_else(|e| panic!("request to the JS peer failed: {e}"))
    }
}

fn str_field<'v>(value: &'v Value, key: &str) -> &'v str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("`{key}` missing from {value}"))
}

fn exit(validator_index: u64) -> SignedVoluntaryExit {
    SignedVoluntaryExit {
        message: VoluntaryExit {
            epoch: 1,
            validator_index,
        },
        signature: [0xab; 96].into(),
    }
}

async fn interop_over(muxer: &str) {
    let spec = spec();
    let mut config = local_config();
    config.gossip_kinds = vec![GossipKind::VoluntaryExit];
    // The JS peer speaks TCP only; leaving QUIC on as well checks that the ENR it reads offers
    // TCP among the transports.
    let mut node = TestNode::start(config).await;
    let enr = node
        .handle
        .local_enr()
        .expect("discovery is enabled")
        .to_base64();
    let arbor_peer = node.handle.local_peer_id();
    let digest = node.handle.fork_context().digest_at_epoch(0);
    let digest_hex = hex_of(digest.as_slice());

    let mut js = JsPeer::spawn(&enr, muxer);

    // Discovery: the record the peer got over discv5 names Arbor and carries the eth2 fields.
    let discovered = js.expect("discovered").await;
    assert_eq!(str_field(&discovered, "peer_id"), arbor_peer.to_string());
    assert_eq!(str_field(&discovered, "fork_digest"), digest_hex);
    assert!(str_field(&discovered, "tcp").starts_with("/ip4/127.0.0.1/tcp/"));
    for key in ["attnets", "syncnets", "cgc", "nfd"] {
        assert!(
            discovered[key].is_string(),
            "ENR field {key} missing: {discovered}"
        );
    }
    // `cgc` is the RLP of the custody group count (4 by default).
    assert_eq!(str_field(&discovered, "cgc"), "04");

    let started = js.expect("started").await;
    let js_peer: PeerId = str_field(&started, "peer_id").parse().expect("JS peer id");
    let topic = str_field(&started, "topic").to_string();
    assert_eq!(
        topic,
        format!("/eth2/{digest_hex}/voluntary_exit/ssz_snappy")
    );

    let connected = js.expect("connected").await;
    let expected_muxer = match muxer {
        "yamux" => "/yamux/1.0.0",
        _ => "/mplex/6.7.0",
    };
    assert_eq!(str_field(&connected, "muxer"), expected_muxer);
    assert_eq!(str_field(&connected, "encryption"), "/noise");

    let mut arbor = ArborEvents {
        node: &mut node,
        backlog: Vec::new(),
    };
    arbor
        .expect("the JS peer's connection", |event| match event {
            NetworkEvent::PeerConnected { peer_id, .. } if *peer_id == js_peer => Some(()),
            _ => None,
        })
        .await;

    // Req/resp initiated by the JS peer: Status (answered by the test chain) and Ping (answered
    // by the service).
    let status = js.expect("status").await;
    assert_eq!(
        str_field(&status, "protocol"),
        "/eth2/beacon_chain/req/status/2/ssz_snappy"
    );
    let expected_status = common::status(&spec, 8);
    assert_eq!(status["status"]["head_slot"], "8");
    assert_eq!(
        str_field(&status["status"], "head_root"),
        hex_of(expected_status.head_root.as_slice())
    );
    let ping = js.expect("ping").await;
    assert!(ping["metadata_seq"].is_string(), "{ping}");

    // A multi-chunk response with context bytes, decoded by the JS side's own codec: the blocks
    // of slots 2, 3 and 4, each under the fork digest of its epoch.
    let blocks = js.expect("blocks_by_range").await;
    let chunks = blocks["chunks"].as_array().expect("chunks");
    assert_eq!(chunks.len(), 3, "{blocks}");
    for (chunk, slot) in chunks.iter().zip(2..) {
        let ssz = block(slot).as_ssz_bytes();
        assert_eq!(chunk["result"], 0);
        assert_eq!(str_field(chunk, "context"), digest_hex);
        assert_eq!(chunk["length"], ssz.len());
        assert_eq!(str_field(chunk, "sha256"), hex_of(&Sha256::digest(&ssz)));
    }

    // Req/resp initiated by Arbor: the JS peer answers Status (echoing our head), Ping and
    // MetaData.
    let response = arbor.request(js_peer, Request::Ping(3)).await;
    assert_eq!(response.items, vec![ResponseItem::Pong(1)]);
    let response = arbor
        .request(js_peer, Request::Status(expected_status))
        .await;
    assert_eq!(response.items, vec![ResponseItem::Status(expected_status)]);
    let response = arbor.request(js_peer, Request::MetaData).await;
    let [ResponseItem::MetaData(metadata)] = response.items.as_slice() else {
        panic!("MetaData from the JS peer: {response:?}");
    };
    assert_eq!(metadata.seq_number, 1);
    // The peer saw exactly what we sent.
    let protocol = |p: &'static str| move |v: &Value| v["protocol"] == p;
    let served = js
        .expect_where(
            "served",
            protocol("/eth2/beacon_chain/req/ping/1/ssz_snappy"),
        )
        .await;
    assert_eq!(served["seq"], "3");
    let served = js
        .expect_where(
            "served",
            protocol("/eth2/beacon_chain/req/status/2/ssz_snappy"),
        )
        .await;
    assert_eq!(served["status"]["head_slot"], "8");
    assert_eq!(str_field(&served["status"], "fork_digest"), digest_hex);
    js.expect_where(
        "served",
        protocol("/eth2/beacon_chain/req/metadata/3/ssz_snappy"),
    )
    .await;

    // Gossip, JS to Arbor: the exit arrives decoded, under the message id the JS side computed.
    js.expect("peer_subscribed").await;
    let published = js.expect("published").await;
    assert_eq!(
        str_field(&published, "data"),
        hex_of(&exit(JS_EXIT_VALIDATOR).as_ssz_bytes())
    );
    let (source, message_id) = arbor
        .expect("the JS peer's voluntary exit", |event| match event {
            NetworkEvent::GossipMessage {
                source,
                message_id,
                message: PubsubMessage::VoluntaryExit(exit),
                ..
            } if exit.message.validator_index == JS_EXIT_VALIDATOR => {
                Some((*source, message_id.clone()))
            }
            _ => None,
        })
        .await;
    assert_eq!(source, js_peer);
    assert_eq!(hex_of(&message_id.0), str_field(&published, "message_id"));

    // Gossip, Arbor to JS.
    arbor
        .expect("the JS peer's subscription", |event| match event {
            NetworkEvent::PeerSubscribed { peer_id, topic }
                if *peer_id == js_peer && topic.kind == GossipKind::VoluntaryExit =>
            {
                Some(())
            }
            _ => None,
        })
        .await;
    let ours = exit(ARBOR_EXIT_VALIDATOR);
    let message = PubsubMessage::<E>::VoluntaryExit(Box::new(ours.clone()));
    let wire = message.encode();
    arbor.node.handle.publish(message);
    let received = js.expect("gossip_received").await;
    assert_eq!(str_field(&received, "topic"), topic);
    assert_eq!(str_field(&received, "data"), hex_of(&ours.as_ssz_bytes()));
    let expected_id = compute_message_id(&spec, ForkName::Fulu, &topic, &wire);
    assert_eq!(str_field(&received, "message_id"), hex_of(&expected_id));

    js.finish().await;
    node.handle.shutdown();
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the js-libp2p peer from npm: run `make test-interop`"]
async fn js_libp2p_peer_over_tcp_yamux() {
    interop_over("yamux").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the js-libp2p peer from npm: run `make test-interop`"]
async fn js_libp2p_peer_over_tcp_mplex() {
    interop_over("mplex").await;
}

/// The control for the two tests above: the peer really offers only the muxer it is given, so
/// against a yamux-only Arbor the mplex peer cannot connect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the js-libp2p peer from npm: run `make test-interop`"]
async fn js_libp2p_mplex_peer_cannot_join_a_yamux_only_node() {
    let mut config = local_config();
    config.muxers = Muxers::Yamux;
    let node = TestNode::start(config).await;
    let enr = node
        .handle
        .local_enr()
        .expect("discovery is enabled")
        .to_base64();
    let mut js = JsPeer::spawn(&enr, "mplex");
    js.expect("discovered").await;
    let failure = js.expect_failure().await;
    assert_eq!(failure["name"], "MuxerUnavailableError", "{failure}");
    let status = js.child.wait().expect("wait for the JS peer");
    assert!(!status.success());
    node.handle.shutdown();
}
