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
