//! The `arbor` binary's command line, run as a user would.

use std::process::Command;

fn arbor(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(args)
        .output()
        .expect("the arbor binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn answers_version_and_help() {
    let (ok, stdout, _) = arbor(&["--version"]);
    assert!(ok);
    assert_eq!(
        stdout.trim(),
        format!("arbor {}", env!("CARGO_PKG_VERSION"))
    );

    let (ok, stdout, _) = arbor(&["--help"]);
    assert!(ok);
    assert!(stdout.contains("Usage: arbor"), "{stdout}");
    assert!(stdout.contains("config"), "{stdout}");
}

#[test]
fn prints_the_fork_schedule_of_a_built_in_network() {
    let (ok, stdout, stderr) = arbor(&["config", "--network", "hoodi"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("Chain configuration: hoodi"), "{stdout}");
    assert!(stdout.contains("fulu"), "{stdout}");
    assert!(stdout.contains("BLOB_SCHEDULE"), "{stdout}");
}

#[test]
fn lists_the_boot_nodes_of_each_built_in_network() {
    for (network, count) in [("mainnet", 17), ("sepolia", 9), ("hoodi", 9)] {
        let (ok, stdout, stderr) = arbor(&["config", "--network", network]);
        assert!(ok, "{stderr}");
        assert!(
            stdout.contains(&format!("boot nodes ({count}):")),
            "{network}: {stdout}"
        );
        let listed: Vec<&str> = stdout
            .lines()
            .filter(|l| l.trim_start().starts_with("node id 0x"))
            .collect();
        assert_eq!(listed.len(), count, "{network}: {stdout}");
        for line in listed {
            // Every record names its IPv4 address and its discovery (UDP) port.
            assert!(!line.contains("ip -"), "{line}");
            assert!(!line.contains("udp -"), "{line}");
        }
    }
}

/// Sepolia forked to Gloas at epoch 353024 (2026-10-06): a node that does not implement Gloas
/// refuses to start on it, at once and in one line, before anything else is asked of the user.
#[test]
fn bn_refuses_a_chain_past_a_fork_it_does_not_implement() {
    let dir = std::env::temp_dir().join(format!("arbor-bn-gloas-test-{}", std::process::id()));
    let datadir = dir.join("data");
    let (ok, _, stderr) = arbor(&[
        "bn",
        "--network",
        "sepolia",
        "--datadir",
        datadir.to_str().expect("utf-8 path"),
    ]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: the sepolia chain forked to Gloas at epoch 353024"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!datadir.exists(), "nothing written before the refusal");
    let (ok, stdout, _) = arbor(&["config", "--network", "sepolia"]);
    assert!(ok);
    assert!(stdout.contains("353024"), "{stdout}");
}

#[test]
fn loads_a_config_file_and_reports_bad_ones() {
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../consensus/types/configs/minimal.yaml"
    );
    let (ok, stdout, stderr) = arbor(&["config", "--config-file", config]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("minimal"), "{stdout}");

    let dir = std::env::temp_dir().join(format!("arbor-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("config.yaml");
    std::fs::write(&bad, "PRESET_BASE: mainnet\nGENESIS_FORK_VERSION: 0xzz\n").expect("write");
    let (ok, _, stderr) = arbor(&["config", "--config-file", bad.to_str().expect("utf-8 path")]);
    assert!(!ok);
    assert!(stderr.starts_with("error: "), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();

    let (ok, _, stderr) = arbor(&["config", "--network", "nowhere"]);
    assert!(!ok);
    assert!(
        stderr.contains("mainnet"),
        "the error lists the known networks: {stderr}"
    );
}

#[cfg(feature = "mock-el")]
#[test]
fn mock_el_describes_itself() {
    let (ok, stdout, stderr) = arbor(&["mock-el", "--help"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("Usage: arbor mock-el"), "{stdout}");
    assert!(stdout.contains("--jwt-secret"), "{stdout}");
    assert!(stdout.contains("--blobs-per-block"), "{stdout}");

    let (ok, stdout, _) = arbor(&["--help"]);
    assert!(ok);
    assert!(stdout.contains("mock-el"), "{stdout}");
}

#[cfg(feature = "mock-el")]
#[test]
fn mock_el_serves_the_engine_api_with_a_generated_secret() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let dir = std::env::temp_dir().join(format!("arbor-mock-el-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let jwt = dir.join("jwt.hex");
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args([
            "mock-el",
            "--listen-address",
            "127.0.0.1:0",
            "--all-forks-at-genesis",
        ])
        .arg("--jwt-secret")
        .arg(&jwt)
        .stdout(Stdio::piped())
        .spawn()
        .expect("the arbor binary runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("a first line");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .map(str::to_owned);

    let outcome = (|| {
        let url = url.ok_or_else(|| format!("no URL in {line:?}"))?;
        let text = std::fs::read_to_string(&jwt).map_err(|e| e.to_string())?;
        let secret = execution_layer::JwtSecret::from_hex(&text).map_err(|e| e.to_string())?;
        let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let client = execution_layer::EngineApiClient::new(
                url,
                secret,
                execution_layer::Timeouts::default(),
            )
            .map_err(|e| e.to_string())?;
            client
                .exchange_capabilities()
                .await
                .map_err(|e| e.to_string())
        })
    })();
    child.kill().ok();
    child.wait().ok();
    std::fs::remove_dir_all(&dir).ok();
    let capabilities = outcome.expect("the mock answers with the generated secret");
    assert!(
        capabilities.iter().any(|c| c == "engine_getPayloadV5"),
        "{capabilities:?}"
    );
}

/// `arbor bn` names the flag that is missing or wrong, in one line, before touching anything.
#[test]
fn bn_names_the_missing_or_wrong_flag() {
    let dir = std::env::temp_dir().join(format!("arbor-bn-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let datadir = dir.join("data");
    let datadir = datadir.to_str().expect("utf-8 path");

    let (ok, _, stderr) = arbor(&["bn", "--network", "hoodi", "--datadir", datadir]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: --execution-endpoint"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");

    let (ok, _, stderr) = arbor(&[
        "bn",
        "--datadir",
        datadir,
        "--execution-endpoint",
        "http://127.0.0.1:8551",
        "--execution-jwt",
        dir.join("missing.hex").to_str().expect("utf-8 path"),
    ]);
    assert!(!ok);
    assert!(stderr.starts_with("error: --execution-jwt"), "{stderr}");

    let jwt = dir.join("jwt.hex");
    std::fs::write(&jwt, "0x".to_string() + &"ab".repeat(32)).expect("write jwt");
    let jwt = jwt.to_str().expect("utf-8 path");
    let base = [
        "bn",
        "--network",
        "hoodi",
        "--datadir",
        datadir,
        "--execution-endpoint",
        "http://127.0.0.1:8551",
        "--execution-jwt",
        jwt,
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        arbor(&args)
    };
    let (ok, _, stderr) = with(&["--suggested-fee-recipient", "0x1234"]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: --suggested-fee-recipient"),
        "{stderr}"
    );
    // An empty datadir on a public network starts from a checkpoint.
    let (ok, _, stderr) = with(&[]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: --checkpoint-sync-url"),
        "{stderr}"
    );
    // A trusted checkpoint root needs a URL to fetch it from, and must be a root.
    let root = format!("0x{}", "ab".repeat(32));
    let (ok, _, stderr) = with(&["--checkpoint-block-root", &root]);
    assert!(!ok);
    assert!(stderr.contains("--checkpoint-sync-url"), "{stderr}");
    let (ok, _, stderr) = with(&[
        "--checkpoint-sync-url",
        "http://127.0.0.1:9",
        "--checkpoint-block-root",
        "0x12",
    ]);
    assert!(!ok);
    assert!(stderr.contains("--checkpoint-block-root"), "{stderr}");
    // A checkpoint-sync URL that does not answer is named.
    let (ok, _, stderr) = with(&["--checkpoint-sync-url", "http://127.0.0.1:9"]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: --checkpoint-sync-url"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(feature = "mock-el")]
#[test]
fn dev_refuses_what_it_cannot_run() {
    let (ok, _, stderr) = arbor(&["dev", "--blobs", "10000"]);
    assert!(!ok);
    assert!(stderr.contains("--blobs 10000"), "{stderr}");
    let (ok, _, stderr) = arbor(&["dev", "--validators", "0"]);
    assert!(!ok);
    assert!(stderr.contains("--validators"), "{stderr}");
    // A BPO entry below the blobs asked for, and one that is not EPOCH:MAX.
    let (ok, _, stderr) = arbor(&["dev", "--blobs", "6", "--blob-schedule", "2:4"]);
    assert!(!ok);
    assert!(stderr.contains("--blobs 6"), "{stderr}");
    let (ok, _, stderr) = arbor(&["dev", "--blob-schedule", "two"]);
    assert!(!ok);
    assert!(stderr.contains("--blob-schedule"), "{stderr}");
}

/// Runs `arbor` with `env` set, bounded by `limit`: a run still going then is killed by its PID.
/// A thread waits for the process's exit and reports it; the test waits on that report.
fn arbor_bounded(
    args: &[&str],
    env: &[(&str, &std::path::Path)],
    limit: std::time::Duration,
) -> (bool, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbor"));
    command
        .args(args)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let child = command.spawn().expect("the arbor binary runs");
    let pid = child.id();
    let (done, exited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match exited.recv_timeout(limit) {
        Ok(output) => {
            let output = output.expect("wait for arbor");
            (
                output.status.success(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        }
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("arbor {args:?} still ran after {limit:?}");
        }
    }
}

/// A private certificate authority (a self-signed CA certificate) and its key.
fn private_ca() -> (rcgen::Certificate, rcgen::KeyPair) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let key = KeyPair::generate().expect("CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("CA certificate");
    (cert, key)
}

/// An https server on 127.0.0.1 with a certificate for `localhost` issued by a private CA,
/// answering every request with the Beacon API's 404 body. Returns its port, the CA's PEM, and
/// the request lines it has read.
fn https_server() -> (u16, String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use rcgen::{CertificateParams, KeyPair};
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (ca, ca_key) = private_ca();
    let key = KeyPair::generate().expect("server key");
    let params = CertificateParams::new(vec!["localhost".to_string()]).expect("server params");
    let cert = params
        .signed_by(&key, &ca, &ca_key)
        .expect("server certificate");

    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .expect("server TLS config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("address").port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let seen = seen.clone();
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake here.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match tls.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let line = String::from_utf8_lossy(&head)
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string();
                    seen.lock().expect("requests").push(line);
                    let body = r#"{"code":404,"message":"NOT_FOUND: beacon block"}"#;
                    let response = format!(
                        "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    tls.write_all(response.as_bytes()).await.ok();
                    tls.shutdown().await.ok();
                });
            }
        });
    });
    (port, ca.pem(), requests)
}

/// A checkpoint-sync URL over https (public checkpoint servers are https): the server's
/// certificate is checked against the system's trusted roots, here a private CA given the
/// standard way (`SSL_CERT_FILE`), and refused, with the reason, when no trusted root issued it.
#[test]
fn bn_fetches_its_checkpoint_over_https_checking_the_certificate() {
    let dir = std::env::temp_dir().join(format!("arbor-bn-https-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (port, ca_pem, requests) = https_server();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca_pem).expect("write the CA");
    let jwt = dir.join("jwt.hex");
    std::fs::write(&jwt, "0x".to_string() + &"ab".repeat(32)).expect("write jwt");
    let datadir = dir.join("data");
    let url = format!("https://localhost:{port}");
    let args = [
        "bn",
        "--network",
        "hoodi",
        "--datadir",
        datadir.to_str().expect("utf-8 path"),
        "--execution-endpoint",
        "http://127.0.0.1:8551",
        "--execution-jwt",
        jwt.to_str().expect("utf-8 path"),
        "--checkpoint-sync-url",
        &url,
    ];
    let limit = std::time::Duration::from_secs(60);

    // The CA trusted: the request goes through, and the server's 404 is the answer.
    let (ok, stderr) = arbor_bounded(&args, &[("SSL_CERT_FILE", &ca_file)], limit);
    assert!(!ok);
    assert!(
        stderr.starts_with(&format!(
            "error: --checkpoint-sync-url {url}: the node has no finalized block"
        )),
        "{stderr}"
    );
    assert_eq!(
        *requests.lock().expect("requests"),
        ["GET /eth/v2/beacon/blocks/finalized HTTP/1.1"]
    );

    // No trusted root issued the certificate (another CA trusted): refused before any
    // request, and the error says why.
    let other_ca_file = dir.join("other-ca.pem");
    std::fs::write(&other_ca_file, private_ca().0.pem()).expect("write the other CA");
    let (ok, stderr) = arbor_bounded(&args, &[("SSL_CERT_FILE", &other_ca_file)], limit);
    assert!(!ok);
    assert!(
        stderr.starts_with(&format!("error: --checkpoint-sync-url {url}")),
        "{stderr}"
    );
    assert!(stderr.contains("certificate"), "{stderr}");
    assert_eq!(requests.lock().expect("requests").len(), 1);

    // A system without trusted roots: an https URL is refused, saying so; a plain http URL is
    // still reached (here nothing listens, and the error is the refused connection).
    let no_roots = [("SSL_CERT_FILE", dir.join("missing.pem"))];
    let no_roots: Vec<(&str, &std::path::Path)> =
        no_roots.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let (ok, stderr) = arbor_bounded(&args, &no_roots, limit);
    assert!(!ok);
    assert!(stderr.contains("No CA certificates"), "{stderr}");
    let mut http_args = args;
    http_args[args.len() - 1] = "http://127.0.0.1:9";
    let (ok, stderr) = arbor_bounded(&http_args, &no_roots, limit);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: --checkpoint-sync-url http://127.0.0.1:9: finalized block"),
        "{stderr}"
    );
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(!stderr.contains("No CA certificates"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
