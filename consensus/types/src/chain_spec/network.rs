//! The networks whose configuration Arbor carries built in.

use std::fmt;
use std::str::FromStr;

use alloy_primitives::b256;

use crate::primitives::Root;

/// `configs/mainnet.yaml`: the consensus-specs mainnet config.
pub const MAINNET_CONFIG_YAML: &str = include_str!("../../configs/mainnet.yaml");
/// `configs/minimal.yaml`: the consensus-specs minimal config, the base of the spec tests.
pub const MINIMAL_CONFIG_YAML: &str = include_str!("../../configs/minimal.yaml");
/// `configs/sepolia.yaml`: the config published in eth-clients/sepolia.
pub const SEPOLIA_CONFIG_YAML: &str = include_str!("../../configs/sepolia.yaml");
/// `configs/hoodi.yaml`: the config published in eth-clients/hoodi.
pub const HOODI_CONFIG_YAML: &str = include_str!("../../configs/hoodi.yaml");

/// A public network whose `config.yaml` is built in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Network {
    /// Ethereum mainnet.
    Mainnet,
    /// The Sepolia testnet.
    Sepolia,
    /// The Hoodi testnet.
    Hoodi,
}

/// A network name that is not built in; the message lists the names that are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown network {0:?}; expected one of: {names}",
    names = Network::ALL.map(Network::as_str).join(", ")
)]
pub struct UnknownNetwork(pub String);

impl Network {
    /// Every built-in network.
    pub const ALL: [Network; 3] = [Network::Mainnet, Network::Sepolia, Network::Hoodi];

    /// The network's name, as its config's `CONFIG_NAME` writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Network::Mainnet => "mainnet",
            Network::Sepolia => "sepolia",
            Network::Hoodi => "hoodi",
        }
    }

    /// The network's `config.yaml`, as embedded in the binary.
    pub const fn config_yaml(self) -> &'static str {
        match self {
            Network::Mainnet => MAINNET_CONFIG_YAML,
            Network::Sepolia => SEPOLIA_CONFIG_YAML,
            Network::Hoodi => HOODI_CONFIG_YAML,
        }
    }

    /// The `genesis_validators_root` of the network's genesis state.
    pub const fn genesis_validators_root(self) -> Root {
        match self {
            Network::Mainnet => {
                b256!("0x4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95")
            }
            Network::Sepolia => {
                b256!("0xd8ea171f3c94aea21ebc42a1ed61052acf3f9209c00e4efbaaddac09ed9b8078")
            }
            Network::Hoodi => {
                b256!("0x212f13fc4df078b6cb7db228f1c8307566dcecf900867401a92023d7ba99cb5f")
            }
        }
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Network {
    type Err = UnknownNetwork;

    /// Parses a network name, ignoring ASCII case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|network| network.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownNetwork(s.to_string()))
    }
}
