//! `networking/gossip_*`: the p2p spec's gossip validation, run against [`BeaconChain`]'s
//! `verify_*_for_gossip` functions.
//!
//! Each case gives a state, blocks to import first (the first is the anchor; `failed` blocks
//! must fail import and stay known as invalid; `payload_status` sets a block's execution
//! status), an optional finalized checkpoint, and messages each with the time it is received
//! and the expected ACCEPT / IGNORE / REJECT. Blocks import with every payload taken as valid
//! by the execution engine; their `payload_status` is recorded beside. The verdict is compared; the reason strings are
//! the spec's own prose and are not (each error of the chain has its own text).
//!
//! [format]: consensus-specs tests/formats/networking/gossip_validation.md

use std::sync::Arc;

use beacon_chain::{
    BeaconChain, ChainConfig, ExecutionStatus, ManualSlotClock, UnimportedBlock, Verdict,
};
use serde::Deserialize;
use ssz::Decode;
use state_processing::{CachedBeaconState, per_block::AlwaysValid};
use store::{Store, StoreConfig};
use types::{
    BlobSidecar, ChainSpec, DataColumnSidecar, EthSpec, Root, SignedBeaconBlock,
    altair::{SignedContributionAndProof, SyncCommitteeMessage},
    capella::SignedBLSToExecutionChange,
    electra::{AttesterSlashing, SignedAggregateAndProof, SingleAttestation},
    fulu::{PartialDataColumnGroupID, PartialDataColumnHeader, PartialDataColumnSidecar},
    gloas::{
        PayloadAttestationMessage, SignedExecutionPayloadBid, SignedExecutionPayloadEnvelope,
        SignedProposerPreferences,
    },
    phase0::{Checkpoint, ProposerSlashing, SignedVoluntaryExit},
};

use crate::case::{CaseContext, CaseResult, Preset};
use crate::files::{decode_hex32, read_yaml};
use crate::runners::fork_choice::{kzg_pool, read};
use crate::runners::state_case::{chain_spec, read_state};
use types::chain_spec::{MAINNET_CONFIG_YAML, MINIMAL_CONFIG_YAML};

#[derive(Debug, Deserialize)]
struct Meta {
    topic: String,
    #[serde(default)]
    blocks: Vec<BlockEntry>,
    finalized_checkpoint: Option<FinalizedEntry>,
    #[serde(default)]
    seen_partial_data_column_headers: Vec<SeenHeader>,
    current_time_ms: Option<u64>,
    messages: Vec<Message>,
    #[allow(dead_code)]
    bls_setting: Option<u8>,
}

#[derive(Debug, Deserialize)]
struct BlockEntry {
    block: String,
    /// Gloas: the block's signed execution payload envelope, imported after it.
    payload: Option<String>,
    #[serde(default)]
    failed: bool,
    #[serde(default)]
    pending: bool,
    payload_status: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FinalizedEntry {
    epoch: u64,
    root: Option<String>,
    block: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SeenHeader {
    block_root: String,
    header: String,
}

#[derive(Debug, Deserialize)]
struct Message {
    message: String,
    expected: String,
    #[allow(dead_code)]
    reason: Option<String>,
    current_time_ms: Option<u64>,
    offset_ms: Option<u64>,
    subnet_id: Option<u64>,
    column_index: Option<u64>,
    group_id: Option<String>,
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Accept => "valid",
        Verdict::Ignore => "ignore",
        Verdict::Reject => "reject",
    }
}

/// Runs one `gossip_*` case: passed, failed, or not run when its setup is one the chain
/// cannot hold ([`Setup::Inconsistent`]; the allow list must name the case).
pub(crate) fn run<E: EthSpec>(case: &CaseContext) -> CaseResult {
    match check::<E>(case) {
        Ok(Setup::Ran) => CaseResult::Passed,
        Ok(Setup::Inconsistent(why)) => CaseResult::NotRun(why),
        Err(message) => CaseResult::Failed(message),
    }
}

/// Whether a case ran (its messages all judged as expected) or could not be set up.
enum Setup {
    Ran,
    Inconsistent(String),
}

fn check<E: EthSpec>(case: &CaseContext) -> Result<Setup, String> {
    let config = case.file("config.yaml");
    let spec = if config.exists() {
        // A case's `config.yaml` overrides the preset's configuration.
        let base = match case.preset()? {
            Preset::Minimal => MINIMAL_CONFIG_YAML,
            Preset::Mainnet => MAINNET_CONFIG_YAML,
        };
        let overrides =
            crate::files::read_text(&config).map_err(|e| format!("config.yaml: {e}"))?;
        ChainSpec::from_config_yaml_with_overrides(base, &overrides)
            .map_err(|e| format!("config.yaml: {e}"))?
    } else {
        chain_spec(case, case.fork)?
    };
    let spec = Arc::new(spec);
    let meta: Meta = read_yaml(&case.file("meta.yaml"))?;
    let state = read_state::<E>(case, "state", case.fork)?;
    let genesis_ms = state.genesis_time().saturating_mul(1000);
    // A case whose `config.yaml` moves the fork past its anchor (a Gloas genesis state with
    // `GLOAS_FORK_EPOCH` 1 or 2: the proposer preferences before and at the fork) cannot be
    // set up: the store refuses an anchor block of a fork its schedule does not have there.
    let scheduled = spec.fork_name_at_slot::<E>(*state.slot());
    if scheduled < state.fork_name() {
        return Ok(Setup::Inconsistent(format!(
            "the anchor is a {} state at slot {}, where the case's config.yaml schedules {scheduled}",
            state.fork_name(),
            state.slot(),
        )));
    }
    let (anchor, rest) = meta
        .blocks
        .split_first()
        .ok_or("no anchor block in `blocks`")?;
    let anchor_block = read(case, &anchor.block, |b| {
        SignedBeaconBlock::<E>::from_ssz_bytes(b, &spec)
    })?;
    let anchor_root = anchor_block.canonical_root();
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let store = Store::<E>::open(
        &dir.path().join("db"),
        (*spec).clone(),
        StoreConfig::default(),
    )
    .map_err(|e| format!("store: {e}"))?;
    let clock = Arc::new(ManualSlotClock::new(genesis_ms));
    let chain = BeaconChain::from_anchor(
        Arc::new(store),
        CachedBeaconState::new(state),
        anchor_block,
        spec.clone(),
        clock.clone(),
        kzg_pool()?,
        ChainConfig::default(),
    )
    .map_err(|e| format!("anchor: {e}"))?;

    if let Some(payload) = &anchor.payload {
        // Gloas: the anchor's payload, delivered after it (a child may build on it).
        let status = payload_status(anchor)?;
        let imported_as = match status {
            ExecutionStatus::Invalidated => ExecutionStatus::NotValidated,
            other => other,
        };
        import_envelope::<E>(case, &chain, payload, imported_as)?;
        chain.set_payload_status(anchor_root, status);
    }
    for entry in rest {
        let block = read(case, &entry.block, |b| {
            SignedBeaconBlock::<E>::from_ssz_bytes(b, &spec)
        })?;
        let root = block.canonical_root();
        let status = payload_status(entry)?;
        if entry.pending {
            chain.record_unimported_block(root, UnimportedBlock::Pending { slot: block.slot() });
        } else if entry.failed {
            // Seen, failed its import: known, with no post-state.
            chain.record_unimported_block(
                root,
                UnimportedBlock::Failed {
                    slot: block.slot(),
                    payload: status,
                },
            );
        } else {
            // Time moves to the block's slot so that fork choice takes it.
            clock.set_ms(
                chain
                    .compute_time_at_slot_ms(block.slot())
                    .max(chain.now_ms()),
            );
            // A block the vectors call INVALIDATED was imported before its payload was found
            // invalid (the import refuses a payload known invalid): imported not validated,
            // then labelled below.
            let imported_as = match status {
                ExecutionStatus::Invalidated => ExecutionStatus::NotValidated,
                other => other,
            };
            chain
                .import_block(Arc::new(block), &[], &AlwaysValid, imported_as)
                .map_err(|e| format!("block {}: import failed: {e}", entry.block))?;
            if let Some(payload) = &entry.payload {
                // Gloas: the payload comes apart, in its envelope (its status, as the block's
                // before Gloas, labelled below).
                import_envelope::<E>(case, &chain, payload, imported_as)?;
            }
        }
        chain.set_payload_status(root, status);
    }
    if let Some(f) = &meta.finalized_checkpoint {
        let root = match (&f.root, &f.block) {
            (Some(root), None) => Root::from(decode_hex32(root)?),
            (None, Some(block)) => read(case, block, |b| {
                SignedBeaconBlock::<E>::from_ssz_bytes(b, &spec)
            })?
            .canonical_root(),
            _ => return Err("finalized_checkpoint needs exactly one of `root` and `block`".into()),
        };
        chain.set_finalized_checkpoint(Checkpoint {
            epoch: f.epoch,
            root,
        });
    }
    for seen in &meta.seen_partial_data_column_headers {
        let header = read(
            case,
            &seen.header,
            PartialDataColumnHeader::<E>::from_ssz_bytes,
        )?;
        chain
            .record_partial_data_column_header(Root::from(decode_hex32(&seen.block_root)?), header);
    }

    for (i, message) in meta.messages.iter().enumerate() {
        let since_genesis = match (
            message.current_time_ms,
            message.offset_ms,
            meta.current_time_ms,
        ) {
            (Some(t), _, _) => t,
            (None, Some(offset), Some(base)) => base + offset,
            (None, None, Some(base)) => base,
            // Topics whose validation reads no clock: the head's slot.
            (None, _, None) => chain.compute_time_at_slot_ms(chain.head().slot) - genesis_ms,
        };
        let now = genesis_ms + since_genesis;
        clock.set_ms(now.max(chain.now_ms()));
        let got = validate::<E>(case, &chain, &spec, &meta.topic, message, now)
            .map_err(|e| format!("message {i} ({}): {e}", message.message))?;
        let got_name = match &got {
            Ok(()) => "valid",
            Err((v, _)) => verdict_name(*v),
        };
        if got_name != message.expected {
            let detail = match got {
                Ok(()) => "accepted".to_string(),
                Err((_, why)) => why,
            };
            return Err(format!(
                "message {i} ({}): expected {} ({}), got {got_name}: {detail}",
                message.message,
                message.expected,
                message.reason.as_deref().unwrap_or("-"),
            ));
        }
    }
    Ok(Setup::Ran)
}

/// A block entry's `payload_status` (VALID when absent).
fn payload_status(entry: &BlockEntry) -> Result<ExecutionStatus, String> {
    Ok(match entry.payload_status.as_deref() {
        None | Some("VALID") => ExecutionStatus::Valid,
        Some("INVALIDATED") => ExecutionStatus::Invalidated,
        Some("NOT_VALIDATED") => ExecutionStatus::NotValidated,
        Some(other) => return Err(format!("unknown payload_status {other}")),
    })
}

/// Verifies and imports the signed execution payload envelope in file `payload`, its payload
/// taken as `status` by the execution engine.
fn import_envelope<E: EthSpec>(
    case: &CaseContext,
    chain: &BeaconChain<E>,
    payload: &str,
    status: ExecutionStatus,
) -> Result<(), String> {
    let envelope = read(
        case,
        payload,
        SignedExecutionPayloadEnvelope::<E>::from_ssz_bytes,
    )?;
    let verified = chain
        .verify_execution_payload_envelope(Arc::new(envelope), &[])
        .map_err(|e| format!("envelope {payload}: {e}"))?;
    chain
        .import_verified_envelope(verified, status)
        .map_err(|e| format!("envelope {payload}: import failed: {e}"))?;
    Ok(())
}

type Outcome = Result<(), (Verdict, String)>;

fn outcome<T, X: std::fmt::Display>(r: Result<T, X>, verdict: impl Fn(&X) -> Verdict) -> Outcome {
    r.map(|_| ()).map_err(|e| (verdict(&e), e.to_string()))
}

fn validate<E: EthSpec>(
    case: &CaseContext,
    chain: &BeaconChain<E>,
    spec: &ChainSpec,
    topic: &str,
    message: &Message,
    now: u64,
) -> Result<Outcome, String> {
    let name = message.message.as_str();
    let subnet = || message.subnet_id.ok_or("no subnet_id");
    // A bid case also sends the preferences and the parent's envelope the bid needs, each on
    // its own topic (named by its file).
    let topic = if name.starts_with("proposer_preferences_") {
        "proposer_preferences"
    } else if name.starts_with("execution_payload_envelope_") {
        "execution_payload"
    } else {
        topic
    };
    Ok(match topic {
        "beacon_block" => {
            let block = read(case, name, |b| {
                SignedBeaconBlock::<E>::from_ssz_bytes(b, spec)
            })?;
            outcome(chain.verify_block_for_gossip(Arc::new(block), now), |e| {
                e.verdict()
            })
        }
        "beacon_attestation" => {
            let a = read(case, name, SingleAttestation::from_ssz_bytes)?;
            outcome(
                chain.verify_single_attestation_for_gossip(a, subnet()?, now),
                |e| e.verdict(),
            )
        }
        "beacon_aggregate_and_proof" if case.fork.gloas_enabled() => {
            let a = read(
                case,
                name,
                types::gloas::SignedAggregateAndProof::<E>::from_ssz_bytes,
            )?;
            outcome(chain.verify_aggregate_for_gossip(a, now), |e| e.verdict())
        }
        "beacon_aggregate_and_proof" => {
            let a = read(case, name, SignedAggregateAndProof::<E>::from_ssz_bytes)?;
            outcome(chain.verify_aggregate_for_gossip(a, now), |e| e.verdict())
        }
        "voluntary_exit" => {
            let x = read(case, name, SignedVoluntaryExit::from_ssz_bytes)?;
            outcome(chain.verify_voluntary_exit_for_gossip(x, now), |e| {
                e.verdict()
            })
        }
        "proposer_slashing" => {
            let x = read(case, name, ProposerSlashing::from_ssz_bytes)?;
            outcome(chain.verify_proposer_slashing_for_gossip(x), |e| {
                e.verdict()
            })
        }
        "attester_slashing" if case.fork.gloas_enabled() => {
            let x = read(case, name, types::gloas::AttesterSlashing::from_ssz_bytes)?;
            outcome(chain.verify_attester_slashing_for_gossip(x), |e| {
                e.verdict()
            })
        }
        "attester_slashing" => {
            let x = read(case, name, AttesterSlashing::<E>::from_ssz_bytes)?;
            outcome(chain.verify_attester_slashing_for_gossip(x), |e| {
                e.verdict()
            })
        }
        "bls_to_execution_change" => {
            let x = read(case, name, SignedBLSToExecutionChange::from_ssz_bytes)?;
            outcome(
                chain.verify_bls_to_execution_change_for_gossip(x, now),
                |e| e.verdict(),
            )
        }
        "sync_committee" => {
            let x = read(case, name, SyncCommitteeMessage::from_ssz_bytes)?;
            outcome(
                chain.verify_sync_committee_message_for_gossip(x, subnet()?, now),
                |e| e.verdict(),
            )
        }
        "sync_committee_contribution_and_proof" => {
            let x = read(case, name, SignedContributionAndProof::<E>::from_ssz_bytes)?;
            outcome(chain.verify_sync_contribution_for_gossip(x, now), |e| {
                e.verdict()
            })
        }
        "data_column_sidecar" => {
            let x = read(case, name, |b| {
                DataColumnSidecar::<E>::from_ssz_bytes_by_fork(b, case.fork)
            })?;
            outcome(
                chain.verify_data_column_for_gossip(Arc::new(x), subnet()?, now),
                |e| e.verdict(),
            )
        }
        "blob_sidecar" => {
            let x = read(case, name, |b| {
                BlobSidecar::<E>::from_ssz_bytes_by_fork(b, case.fork)
            })?;
            outcome(
                chain.verify_blob_sidecar_for_gossip(Arc::new(x), subnet()?, now),
                |e| e.verdict(),
            )
        }
        "partial_data_column_sidecar" if case.fork.gloas_enabled() => {
            let x = read(
                case,
                name,
                types::gloas::PartialDataColumnSidecar::<E>::from_ssz_bytes,
            )?;
            let group = message.group_id.as_deref().ok_or("no group_id")?;
            let group = read(
                case,
                group,
                types::gloas::PartialDataColumnGroupID::from_ssz_bytes,
            )?;
            let column = message.column_index.ok_or("no column_index")?;
            outcome(
                chain.verify_gloas_partial_data_column_for_gossip(x, &group, column),
                |e| e.verdict(),
            )
        }
        "partial_data_column_sidecar" => {
            let x = read(case, name, PartialDataColumnSidecar::<E>::from_ssz_bytes)?;
            let group = message.group_id.as_deref().ok_or("no group_id")?;
            let group = read(case, group, PartialDataColumnGroupID::from_ssz_bytes)?;
            let column = message.column_index.ok_or("no column_index")?;
            outcome(
                chain.verify_partial_data_column_for_gossip(x, &group, column, now),
                |e| e.verdict(),
            )
        }
        "payload_attestation_message" => {
            let x = read(case, name, PayloadAttestationMessage::from_ssz_bytes)?;
            outcome(
                chain.verify_payload_attestation_message_for_gossip(x, now),
                |e| e.verdict(),
            )
        }
        "execution_payload" => {
            let x = read(
                case,
                name,
                SignedExecutionPayloadEnvelope::<E>::from_ssz_bytes,
            )?;
            let verified = chain.verify_execution_payload_envelope_for_gossip(Arc::new(x), now);
            if let Ok(verified) = &verified {
                // `seen.execution_payloads`, which the bid rules read.
                chain.observe_execution_payload(verified);
            }
            outcome(verified, |e| e.verdict())
        }
        "execution_payload_bid" => {
            let x = read(case, name, SignedExecutionPayloadBid::from_ssz_bytes)?;
            outcome(chain.verify_execution_payload_bid_for_gossip(x, now), |e| {
                e.verdict()
            })
        }
        "proposer_preferences" => {
            let x = read(case, name, SignedProposerPreferences::from_ssz_bytes)?;
            outcome(chain.verify_proposer_preferences_for_gossip(x, now), |e| {
                e.verdict()
            })
        }
        other => return Err(format!("no gossip validation for topic {other}")),
    })
}
