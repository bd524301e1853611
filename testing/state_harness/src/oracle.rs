//! The Lodestar state-transition oracle (`shared/oracles/lodestar`): runs its `stf.mjs` and
//! `genesis.mjs` with node and reads their JSON lines.
//!
//! The oracle is installed by `make oracle` (part of `make test`) into `target/lodestar-oracle`
//! at the workspace root; `ARBOR_LODESTAR_ORACLE` points elsewhere.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use types::Root;

use crate::HarnessError;

/// Where the installed oracle is.
#[derive(Debug, Clone)]
pub struct Oracle {
    dir: PathBuf,
    preset: String,
    config: Option<PathBuf>,
}

/// One step the oracle applied (a block, or `processSlots` up to a slot).
#[derive(Debug, Clone, PartialEq)]
pub struct OracleStep {
    /// The post-state root after the step.
    pub post_state_root: Root,
    /// The post-state's slot.
    pub slot: u64,
    /// Milliseconds in `stateTransition` / `processSlots`.
    pub ms_transition: f64,
    /// Milliseconds hashing the post-state.
    pub ms_hash_tree_root: f64,
    /// The input file (or `slots:N`).
    pub input: String,
}

/// What the oracle made of a run.
#[derive(Debug, Clone)]
pub enum OracleOutcome {
    /// Every step was applied: the steps of the first run and the summary line.
    Accepted {
        /// The steps of run 1, in order.
        steps: Vec<OracleStep>,
        /// The `summary` object (medians over the runs).
        summary: Value,
    },
    /// A block was rejected or the state could not be processed.
    Rejected {
        /// Lodestar's error message.
        error: String,
        /// Where: `decode_block`, `load_pre`, `transition`, …
        stage: String,
        /// The input being processed.
        input: Option<String>,
    },
}

fn parse_root(value: &Value) -> Result<Root, HarnessError> {
    let text = value
        .as_str()
        .ok_or_else(|| HarnessError::Oracle(format!("not a root: {value}")))?;
    let bytes = decode_hex(text.trim_start_matches("0x"))
        .ok_or_else(|| HarnessError::Oracle(format!("not hex: {text}")))?;
    if bytes.len() != 32 {
        return Err(HarnessError::Oracle(format!("not 32 bytes: {text}")));
    }
    Ok(Root::from_slice(&bytes))
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Oracle {
    /// The oracle installed at `$ARBOR_LODESTAR_ORACLE`, else at `<workspace>/target/lodestar-oracle`.
    /// Fails, with how to install it, when it is not there or node is missing.
    pub fn locate(preset: &str) -> Result<Self, HarnessError> {
        let dir = match std::env::var_os("ARBOR_LODESTAR_ORACLE") {
            Some(dir) => PathBuf::from(dir),
            None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/lodestar-oracle"),
        };
        if !dir.join("stf.mjs").is_file()
            || !dir.join("node_modules/@lodestar/state-transition").is_dir()
        {
            return Err(HarnessError::Oracle(format!(
                "the Lodestar oracle is not installed at {} (run `make oracle`, or \
                 ../shared/oracles/lodestar/install.sh from the workspace root; it needs node >= 20 and npm)",
                dir.display()
            )));
        }
        let node = Command::new("node").arg("--version").output();
        if !matches!(&node, Ok(out) if out.status.success()) {
            return Err(HarnessError::Oracle(
                "`node` is not on PATH; the Lodestar oracle needs node >= 20".into(),
            ));
        }
        Ok(Self {
            dir,
            preset: preset.to_string(),
            config: None,
        })
    }

    /// The same oracle with a consensus `config.yaml` (its `PRESET_BASE` must be this preset).
    pub fn with_config(mut self, config: &Path) -> Self {
        self.config = Some(config.to_path_buf());
        self
    }

    /// The directory of the installed oracle.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self, script: &str) -> Command {
        let mut cmd = Command::new("node");
        cmd.arg(self.dir.join(script))
            .arg("--preset")
            .arg(&self.preset);
        if let Some(config) = &self.config {
            cmd.arg("--config").arg(config);
        }
        cmd
    }

    /// `genesis.mjs`: the interop genesis of `lodestar dev` with `validators` validators,
    /// written to `out`; returns the state root Lodestar computed.
    pub fn genesis(
        &self,
        validators: usize,
        genesis_time: u64,
        out: &Path,
    ) -> Result<Root, HarnessError> {
        let output = self
            .command("genesis.mjs")
            .args(["--validators", &validators.to_string()])
            .args(["--genesis-time", &genesis_time.to_string()])
            .arg("--out")
            .arg(out)
            .output()
            .map_err(|e| HarnessError::Oracle(format!("running node: {e}")))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(HarnessError::Oracle(format!(
                "genesis.mjs failed: {stdout} {}",
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        let line: Value = serde_json::from_str(stdout.trim())
            .map_err(|e| HarnessError::Oracle(format!("genesis.mjs output {stdout:?}: {e}")))?;
        parse_root(&line["state_root"])
    }

    /// `stf.mjs`: applies `blocks` in order to `pre`, then (with `slots`) empty slots up to that
    /// slot; `repeat` runs from a fresh copy of `pre` each (medians in the summary).
    pub fn run(
        &self,
        pre: &Path,
        blocks: &[PathBuf],
        slots: Option<u64>,
        verify_signatures: bool,
        repeat: u32,
        out: Option<&Path>,
    ) -> Result<OracleOutcome, HarnessError> {
        let mut cmd = self.command("stf.mjs");
        cmd.arg("--pre").arg(pre);
        for block in blocks {
            cmd.arg("--block").arg(block);
        }
        if let Some(slot) = slots {
            cmd.args(["--slots", &slot.to_string()]);
        }
        if verify_signatures {
            cmd.arg("--verify-signatures");
        }
        cmd.args(["--repeat", &repeat.to_string()]);
        if let Some(out) = out {
            cmd.arg("--out").arg(out);
        }
        let output = cmd
            .output()
            .map_err(|e| HarnessError::Oracle(format!("running node: {e}")))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<Value> = stdout
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()
            .map_err(|e| HarnessError::Oracle(format!("stf.mjs output {stdout:?}: {e}")))?;
        match output.status.code() {
            Some(0) => {}
            Some(1) => {
                let error = lines
                    .iter()
                    .find(|l| l.get("error").is_some())
                    .ok_or_else(|| {
                        HarnessError::Oracle(format!(
                            "stf.mjs exited 1 without an error line: {stdout}"
                        ))
                    })?;
                return Ok(OracleOutcome::Rejected {
                    error: error["error"].as_str().unwrap_or_default().to_string(),
                    stage: error["stage"].as_str().unwrap_or_default().to_string(),
                    input: error["input"].as_str().map(str::to_string),
                });
            }
            code => {
                return Err(HarnessError::Oracle(format!(
                    "stf.mjs exited {code:?}: {stdout} {}",
                    String::from_utf8_lossy(&output.stderr)
                )));
            }
        }
        let mut steps = Vec::new();
        let mut summary = Value::Null;
        for line in lines {
            if let Some(s) = line.get("summary") {
                summary = s.clone();
            } else if line["run"].as_u64() == Some(1) {
                steps.push(OracleStep {
                    post_state_root: parse_root(&line["post_state_root"])?,
                    slot: line["slot"].as_u64().unwrap_or_default(),
                    ms_transition: line["ms_transition"].as_f64().unwrap_or_default(),
                    ms_hash_tree_root: line["ms_hash_tree_root"].as_f64().unwrap_or_default(),
                    input: line["input"].as_str().unwrap_or_default().to_string(),
                });
            }
        }
        Ok(OracleOutcome::Accepted { steps, summary })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_roots() {
        let root = parse_root(&Value::String(format!("0x{}", "ab".repeat(32)))).unwrap();
        assert_eq!(root, Root::repeat_byte(0xab));
        assert!(parse_root(&Value::String("0xabc".into())).is_err());
        assert!(parse_root(&Value::String("0x00".into())).is_err());
    }
}
