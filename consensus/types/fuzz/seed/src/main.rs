//! Writes valid SSZ encodings of generated blocks and states of every fork into
//! `<dir>/signed_beacon_block/` and `<dir>/beacon_state/`, as the fuzzers' seed corpus.

// The integration tests' generators: states cannot use the derived `Arbitrary` (see there).
#[path = "../../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use arbitrary::{Arbitrary, Unstructured};
use common::*;
use ssz::Encode;
use types::{EthSpec, MainnetEthSpec, MinimalEthSpec};

/// Inputs larger than this are left out (the state target runs with `-max_len` of this).
const MAX_LEN: usize = 128 << 10;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> usize {
    if bytes.len() > MAX_LEN {
        return 0;
    }
    std::fs::write(dir.join(name), bytes).expect("writing a seed");
    1
}

/// Encodings of `T` generated from random bytes of a few sizes.
fn seeds<T: Encode>(
    generate: impl Fn(&mut Unstructured<'_>) -> arbitrary::Result<T>,
) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (k, size) in [0usize, 256, 1024, 4096, 16384, 65536]
        .into_iter()
        .enumerate()
    {
        for seed in 0..3u64 {
            let bytes = random_bytes(size, seed * 31 + k as u64);
            if let Ok(value) = generate(&mut Unstructured::new(&bytes)) {
                out.push(value.as_ssz_bytes());
            }
        }
    }
    out
}

fn blocks<E: EthSpec>(dir: &Path) -> usize {
    let preset = E::PRESET_BASE;
    let mut n = 0;
    macro_rules! fork {
        ($($fork:ident),*) => {$(
            for (i, bytes) in seeds(|u| types::$fork::SignedBeaconBlock::<E>::arbitrary(u)).iter().enumerate() {
                n += write(dir, &format!("{}_{preset}_{i}", stringify!($fork)), bytes);
            }
        )*};
    }
    fork!(phase0, altair, bellatrix, capella, deneb, electra, fulu);
    n
}

fn states<E: EthSpec>(dir: &Path) -> usize {
    let preset = E::PRESET_BASE;
    let mut n = 0;
    macro_rules! fork {
        ($($fork:ident => $generate:ident),*) => {$(
            for (i, bytes) in seeds($generate::<E>).iter().enumerate() {
                n += write(dir, &format!("{}_{preset}_{i}", stringify!($fork)), bytes);
            }
        )*};
    }
    fork!(phase0 => phase0_state, altair => altair_state, bellatrix => bellatrix_state,
        capella => capella_state, deneb => deneb_state, electra => electra_state,
        fulu => fulu_state);
    n
}

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpus".into()));
    let block_dir = root.join("signed_beacon_block");
    let state_dir = root.join("beacon_state");
    std::fs::create_dir_all(&block_dir).expect("creating the corpus directory");
    std::fs::create_dir_all(&state_dir).expect("creating the corpus directory");
    let b = blocks::<MainnetEthSpec>(&block_dir) + blocks::<MinimalEthSpec>(&block_dir);
    // Mainnet states are ~2.7 MB at least: too large to seed with.
    let s = states::<MinimalEthSpec>(&state_dir);
    println!(
        "wrote {b} block seeds and {s} state seeds under {}",
        root.display()
    );
}
