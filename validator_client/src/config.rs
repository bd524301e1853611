//! The validator client's configuration and its command line (`arbor vc`).

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use beacon_api::{BeaconNodeHttpClient, Timeouts};

use crate::keymanager::{DEFAULT_KEYMANAGER_PORT, KeymanagerConfig, TOKEN_FILE};
use crate::metrics::Metrics;
use types::{Bytes32, ChainSpec, ExecutionAddress, Slot};

/// The beacon node a validator client talks to when none is given.
pub const DEFAULT_BEACON_NODE: &str = "http://127.0.0.1:5052";

/// The file of the slashing protection database under the data directory.
pub const SLASHING_PROTECTION_FILE: &str = "slashing_protection.redb";

/// The default gas limit of builder registrations.
pub const DEFAULT_GAS_LIMIT: u64 = 60_000_000;

/// Where the validators' secret keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// The deterministic interop keys of these validator indices (devnets only).
    Interop {
        /// The interop indices, e.g. `0..64`.
        indices: Range<u64>,
    },
    /// EIP-2335 keystores (`*.json`) in a directory, all decrypted with one password.
    Keystores {
        /// The directory holding the keystores.
        dir: PathBuf,
        /// The file holding the password (trailing newlines dropped).
        password_file: PathBuf,
    },
}

/// Everything [`crate::run`] needs.
#[derive(Debug, Clone)]
pub struct ValidatorClientConfig {
    /// Beacon node API URLs in fallback order.
    pub beacon_nodes: Vec<String>,
    /// The validators' keys.
    pub keys: KeySource,
    /// The data directory; the slashing protection database lives here.
    pub datadir: PathBuf,
    /// The graffiti of proposed blocks (the node's own if `None`).
    pub graffiti: Option<Bytes32>,
    /// The fee recipient sent in `prepare_beacon_proposer` (and builder registrations); none
    /// sent if `None`.
    pub fee_recipient: Option<ExecutionAddress>,
    /// Watch the chain for the validators' liveness for two epochs before signing anything.
    pub doppelganger_protection: bool,
    /// Register with builders and accept blinded blocks.
    pub builder_proposals: bool,
    /// The gas limit of builder registrations.
    pub gas_limit: u64,
    /// Where to register the client's metrics, if anywhere.
    pub metrics: Option<prometheus::Registry>,
    /// The chain the client expects; `None` takes the beacon node's `config/spec`. When given,
    /// the node's configuration must agree with it (fork versions and epochs, slot duration,
    /// preset, blob schedule).
    pub spec: Option<ChainSpec>,
    /// Serve the keymanager API, if set.
    pub keymanager: Option<KeymanagerConfig>,
    /// The duty counters to count into, for a caller that reports them (e.g. `arbor dev`'s
    /// status line); created from `metrics` when `None`.
    pub duty_metrics: Option<Arc<Metrics>>,
    /// A devnet fault, set only by `arbor dev --withhold-envelope-slots` (no `arbor vc` flag):
    /// at these Gloas slots a proposal publishes its block and withholds the payload envelope,
    /// as a self-building proposer that never reveals its payload.
    pub withhold_envelope_slots: BTreeSet<Slot>,
}

impl ValidatorClientConfig {
    /// A configuration with the defaults: the local beacon node, no graffiti or fee recipient,
    /// doppelganger protection and builder proposals off, the node's chain configuration.
    pub fn new(keys: KeySource, datadir: PathBuf) -> Self {
        Self {
            beacon_nodes: vec![DEFAULT_BEACON_NODE.to_string()],
            keys,
            datadir,
            graffiti: None,
            fee_recipient: None,
            doppelganger_protection: false,
            builder_proposals: false,
            gas_limit: DEFAULT_GAS_LIMIT,
            metrics: None,
            spec: None,
            keymanager: None,
            duty_metrics: None,
            withhold_envelope_slots: BTreeSet::new(),
        }
    }

    /// The path of the slashing protection database.
    pub fn slashing_protection_path(&self) -> PathBuf {
        self.datadir.join(SLASHING_PROTECTION_FILE)
    }
}

impl Default for ValidatorClientConfig {
    /// No keys and the current directory as the data directory; set `keys` and `datadir`.
    fn default() -> Self {
        Self::new(KeySource::Interop { indices: 0..0 }, PathBuf::from("."))
    }
}

/// `arbor vc`: run validators against one or more beacon nodes.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct VcArgs {
    /// Beacon node API URLs, comma-separated, in fallback order.
    #[arg(long, value_name = "URLS", default_value = DEFAULT_BEACON_NODE)]
    pub beacon_nodes: String,
    /// The data directory (the slashing protection database lives here).
    #[arg(long, value_name = "DIR")]
    pub datadir: PathBuf,
    /// A directory of EIP-2335 keystores (`*.json`).
    #[arg(long, value_name = "DIR", requires = "secrets")]
    pub validators_dir: Option<PathBuf>,
    /// The file holding the keystores' password.
    #[arg(long, value_name = "FILE", alias = "password-file")]
    pub secrets: Option<PathBuf>,
    /// Use the deterministic interop keys of these validator indices, e.g. `0..64` (devnets).
    #[arg(long, value_name = "A..B", conflicts_with = "validators_dir")]
    pub interop_indices: Option<String>,
    /// Graffiti of proposed blocks: up to 32 bytes of text, or 0x-prefixed 32-byte hex.
    #[arg(long, value_name = "TEXT")]
    pub graffiti: Option<String>,
    /// The execution address that receives the validators' priority fees.
    #[arg(long, value_name = "ADDRESS")]
    pub suggested_fee_recipient: Option<String>,
    /// Watch for the validators' liveness for two epochs before signing anything.
    #[arg(long)]
    pub enable_doppelganger_protection: bool,
    /// Register with builders (through the beacon node) and accept blinded blocks.
    #[arg(long)]
    pub builder_proposals: bool,
    /// The gas limit asked of builders.
    #[arg(long, value_name = "GAS", default_value_t = DEFAULT_GAS_LIMIT)]
    pub gas_limit: u64,
    /// Serve the keymanager API (list, import and delete keystores).
    #[arg(long)]
    pub http: bool,
    /// The keymanager API's address.
    #[arg(long, value_name = "IP", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST), requires = "http")]
    pub http_address: IpAddr,
    /// The keymanager API's port.
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_KEYMANAGER_PORT, requires = "http")]
    pub http_port: u16,
    /// The keymanager API's bearer token file (created if absent; default
    /// `<datadir>/api-token.txt`).
    #[arg(long, value_name = "FILE", requires = "http")]
    pub http_token_file: Option<PathBuf>,
}

impl VcArgs {
    /// The configuration these arguments describe; a wrong value is a one-line error naming
    /// its flag.
    pub fn into_config(self) -> Result<ValidatorClientConfig, String> {
        let beacon_nodes = parse_beacon_nodes(&self.beacon_nodes)?;
        let keys = match (self.interop_indices, self.validators_dir, self.secrets) {
            (Some(range), None, _) => KeySource::Interop {
                indices: parse_index_range(&range)
                    .map_err(|e| format!("--interop-indices: {e}"))?,
            },
            (None, Some(dir), Some(password_file)) => KeySource::Keystores { dir, password_file },
            (None, Some(_), None) => {
                return Err("--validators-dir needs --secrets (the password file)".into());
            }
            (Some(_), Some(_), _) => {
                return Err("--interop-indices and --validators-dir exclude each other".into());
            }
            (None, None, _) => {
                return Err(
                    "no keys: give --validators-dir with --secrets, or --interop-indices".into(),
                );
            }
        };
        let graffiti = self
            .graffiti
            .map(|g| parse_graffiti(&g).map_err(|e| format!("--graffiti: {e}")))
            .transpose()?;
        let fee_recipient = self
            .suggested_fee_recipient
            .map(|a| {
                a.parse::<ExecutionAddress>()
                    .map_err(|e| format!("--suggested-fee-recipient: {a:?} is not an address: {e}"))
            })
            .transpose()?;
        let keymanager = self.http.then(|| KeymanagerConfig {
            listen: SocketAddr::new(self.http_address, self.http_port),
            token_file: self
                .http_token_file
                .clone()
                .unwrap_or_else(|| self.datadir.join(TOKEN_FILE)),
        });
        Ok(ValidatorClientConfig {
            beacon_nodes,
            keys,
            datadir: self.datadir,
            graffiti,
            fee_recipient,
            doppelganger_protection: self.enable_doppelganger_protection,
            builder_proposals: self.builder_proposals,
            gas_limit: self.gas_limit,
            metrics: None,
            spec: None,
            keymanager,
            duty_metrics: None,
            withhold_envelope_slots: BTreeSet::new(),
        })
    }
}

/// Splits and checks `--beacon-nodes`.
fn parse_beacon_nodes(list: &str) -> Result<Vec<String>, String> {
    let urls: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if urls.is_empty() {
        return Err("--beacon-nodes: no URL given".into());
    }
    for url in &urls {
        BeaconNodeHttpClient::from_url_str(url, Timeouts::default())
            .map_err(|e| format!("--beacon-nodes: {e}"))?;
    }
    Ok(urls)
}

/// Parses `a..b` (end exclusive), `a..=b` or a single index `a`.
pub fn parse_index_range(text: &str) -> Result<Range<u64>, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("{text:?} is not a range like 0..64"))
    };
    let range = if let Some((a, b)) = text.split_once("..=") {
        let end = number(b)?;
        number(a)?
            ..end
                .checked_add(1)
                .ok_or_else(|| format!("{text:?} overflows"))?
    } else if let Some((a, b)) = text.split_once("..") {
        number(a)?..number(b)?
    } else {
        let a = number(text)?;
        a..a.saturating_add(1)
    };
    if range.is_empty() {
        return Err(format!("{text:?} is empty"));
    }
    // Interop keys are derived from `uint_to_bytes32(index)` and indexed as `usize`.
    if usize::try_from(range.end).is_err() {
        return Err(format!("{text:?} is too large"));
    }
    Ok(range)
}

/// Graffiti as 32 bytes: `0x` and 64 hex digits, or text of at most 32 bytes, zero-padded.
pub fn parse_graffiti(text: &str) -> Result<Bytes32, String> {
    if let Some(hex_digits) = text.strip_prefix("0x")
        && hex_digits.len() == 64
    {
        let bytes = hex::decode(hex_digits).map_err(|e| format!("{text:?}: {e}"))?;
        return Ok(Bytes32::from_slice(&bytes));
    }
    let bytes = text.as_bytes();
    if bytes.len() > 32 {
        return Err(format!("{} bytes, at most 32", bytes.len()));
    }
    let mut graffiti = [0u8; 32];
    graffiti[..bytes.len()].copy_from_slice(bytes);
    Ok(Bytes32::from(graffiti))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        vc: VcArgs,
    }

    fn args(extra: &[&str]) -> Result<ValidatorClientConfig, String> {
        let mut argv = vec!["vc", "--datadir", "/tmp/vc"];
        argv.extend_from_slice(extra);
        Cli::try_parse_from(argv)
            .map_err(|e| e.to_string())?
            .vc
            .into_config()
    }

    #[test]
    fn defaults_and_interop_keys() {
        let config = args(&["--interop-indices", "0..64"]).expect("valid");
        assert_eq!(config.beacon_nodes, vec![DEFAULT_BEACON_NODE.to_string()]);
        assert_eq!(config.keys, KeySource::Interop { indices: 0..64 });
        assert!(!config.doppelganger_protection);
        assert_eq!(
            config.slashing_protection_path(),
            PathBuf::from("/tmp/vc/slashing_protection.redb")
        );
    }

    #[test]
    fn beacon_nodes_in_fallback_order() {
        let config = args(&[
            "--interop-indices",
            "3",
            "--beacon-nodes",
            "http://a:5052, http://b:5052",
            "--enable-doppelganger-protection",
        ])
        .expect("valid");
        assert_eq!(config.beacon_nodes, ["http://a:5052", "http://b:5052"]);
        assert_eq!(config.keys, KeySource::Interop { indices: 3..4 });
        assert!(config.doppelganger_protection);
        assert_eq!(config.keymanager, None);
    }

    #[test]
    fn keymanager_api_on_loopback_by_default() {
        let config = args(&["--interop-indices", "0..2", "--http"]).expect("valid");
        let km = config.keymanager.expect("enabled");
        assert_eq!(km.listen, "127.0.0.1:5062".parse().expect("address"));
        assert_eq!(km.token_file, PathBuf::from("/tmp/vc/api-token.txt"));
        assert!(args(&["--interop-indices", "0..2", "--http-port", "1"]).is_err());
    }

    #[test]
    fn bad_values_name_their_flag() {
        let err = args(&["--interop-indices", "5..2"]).expect_err("empty range");
        assert!(err.starts_with("--interop-indices:"), "{err}");
        let err = args(&["--interop-indices", "0..4", "--graffiti", &"x".repeat(33)])
            .expect_err("too long");
        assert!(err.starts_with("--graffiti:"), "{err}");
        let err = args(&[
            "--interop-indices",
            "0..4",
            "--suggested-fee-recipient",
            "0x12",
        ])
        .expect_err("short address");
        assert!(err.starts_with("--suggested-fee-recipient:"), "{err}");
        let err = args(&["--interop-indices", "0..4", "--beacon-nodes", "not a url"])
            .expect_err("bad url");
        assert!(err.starts_with("--beacon-nodes:"), "{err}");
        let err = args(&[]).expect_err("no keys");
        assert!(err.contains("--interop-indices"), "{err}");
        assert!(!err.contains('\n'));
    }

    #[test]
    fn keystores_need_a_password_file() {
        let config = args(&["--validators-dir", "/k", "--secrets", "/p"]).expect("valid");
        assert_eq!(
            config.keys,
            KeySource::Keystores {
                dir: "/k".into(),
                password_file: "/p".into()
            }
        );
        assert!(args(&["--validators-dir", "/k"]).is_err());
    }

    #[test]
    fn graffiti_text_and_hex() {
        let g = parse_graffiti("arbor").expect("short text");
        assert_eq!(&g[..5], b"arbor");
        assert!(g[5..].iter().all(|b| *b == 0));
        let hex = format!("0x{}", "ab".repeat(32));
        assert_eq!(
            parse_graffiti(&hex).expect("hex"),
            Bytes32::repeat_byte(0xab)
        );
        assert_eq!(parse_index_range("2..=4"), Ok(2..5));
    }
}
