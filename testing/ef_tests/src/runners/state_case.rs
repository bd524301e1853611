//! What the state-transition runners (`sanity`, `operations`, `epoch_processing`, `fork`,
//! `transition`, `rewards`, `genesis`) share: the chain config of a case, reading states,
//! `meta.yaml`, the BLS setting, the execution engine's verdict, and comparing a post-state with
//! the expected one field by field, so a failure names the field (and the first differing
//! element of a list) rather than only two roots.

use std::fmt::Debug;

use serde::Deserialize;
use ssz::Decode;
use state_processing::CachedBeaconState;
use state_processing::per_block::{EngineError, ExecutionEngine, VerifySignatures};
use state_processing::view::StateRef;
use tree_hash::TreeHash;
use types::chain_spec::{MAINNET_CONFIG_YAML, MINIMAL_CONFIG_YAML};
use types::{BeaconState, ChainSpec, EthSpec, ForkName, electra};

use crate::case::{CaseContext, Preset};
use crate::files::{read_ssz_snappy, read_text, read_yaml};

/// Calls `$f::<E>($args)` with `E` the case's preset (`MinimalEthSpec` or `MainnetEthSpec`),
/// returning `CaseResult::Failed` for a config without a preset.
macro_rules! with_preset {
    ($case:expr, $f:ident ( $($arg:expr),* )) => {
        match $case.preset() {
            Ok($crate::case::Preset::Minimal) => $f::<types::MinimalEthSpec>($($arg),*),
            Ok($crate::case::Preset::Mainnet) => $f::<types::MainnetEthSpec>($($arg),*),
            Err(e) => $crate::case::CaseResult::Failed(e),
        }
    };
}
pub(crate) use with_preset;

/// The config of the case's preset with every fork up to and including `fork` at genesis: how
/// the pyspec runs a fork's tests. A case that carries its own `config.yaml` (some Gloas cases
/// do) runs under that config, read over the preset's; it must schedule the same forks at
/// genesis, or the case is not one these runners understand.
pub(crate) fn chain_spec(case: &CaseContext, fork: ForkName) -> Result<ChainSpec, String> {
    let (base, base_yaml) = match case.preset()? {
        Preset::Minimal => (ChainSpec::minimal(), MINIMAL_CONFIG_YAML),
        Preset::Mainnet => (ChainSpec::mainnet(), MAINNET_CONFIG_YAML),
    };
    let path = case.file("config.yaml");
    if !path.exists() {
        return Ok(base.with_forks_at_genesis_through(fork));
    }
    let spec = ChainSpec::from_config_yaml_with_overrides(base_yaml, &read_text(&path)?)
        .map_err(|e| format!("config.yaml: {e}"))?;
    let at_genesis = spec.fork_name_at_epoch(types::GENESIS_EPOCH);
    if at_genesis != fork {
        return Err(format!(
            "config.yaml schedules {at_genesis} at genesis, not the case's fork {fork}"
        ));
    }
    Ok(spec)
}

/// `meta.yaml` of the state-transition formats; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Meta {
    /// 0 (or absent): signatures are valid and may be checked; 1: must be checked; 2: must not
    /// be checked (the vector's signatures are not real).
    pub bls_setting: Option<u8>,
    /// `blocks_<i>.ssz_snappy` files of a `sanity/blocks` or `transition` case.
    pub blocks_count: Option<usize>,
    /// `transition`: the fork the chain upgrades into.
    pub post_fork: Option<String>,
    /// `transition`: the epoch of that upgrade.
    pub fork_epoch: Option<u64>,
    /// `transition`: index of the last block built before the fork (absent: none is).
    pub fork_block: Option<usize>,
    /// `fork`: the fork upgraded into.
    pub fork: Option<String>,
    /// `genesis/initialization`: `deposits_<i>.ssz_snappy` files.
    pub deposits_count: Option<usize>,
    /// `genesis/initialization` after Bellatrix: whether an `execution_payload_header` is given.
    pub execution_payload_header: Option<bool>,
}

impl Meta {
    /// The case's `meta.yaml`, or all defaults where it has none.
    pub(crate) fn read(case: &CaseContext) -> Result<Self, String> {
        let path = case.file("meta.yaml");
        if path.exists() {
            read_yaml(&path)
        } else {
            Ok(Meta::default())
        }
    }

    /// How to treat signatures: checked unless `bls_setting` is 2. `preferred` is the strategy
    /// used where they are checked (the runners vary it to cover both).
    pub(crate) fn verify_signatures(
        &self,
        preferred: VerifySignatures,
    ) -> Result<VerifySignatures, String> {
        match self.bls_setting.unwrap_or(0) {
            0 | 1 => Ok(preferred),
            2 => Ok(VerifySignatures::None),
            other => Err(format!("meta.yaml: unknown bls_setting {other}")),
        }
    }
}

/// Decodes `<name>.ssz_snappy` of the case as `T`.
pub(crate) fn read_ssz<T: Decode>(case: &CaseContext, name: &str) -> Result<T, String> {
    let file = format!("{name}.ssz_snappy");
    let bytes = read_ssz_snappy(&case.file(&file))?;
    T::from_ssz_bytes(&bytes).map_err(|e| format!("cannot decode {file}: {e:?}"))
}

/// Decodes `<name>.ssz_snappy` of the case as a state of `fork`.
pub(crate) fn read_state<E: EthSpec>(
    case: &CaseContext,
    name: &str,
    fork: ForkName,
) -> Result<BeaconState<E>, String> {
    let file = format!("{name}.ssz_snappy");
    let bytes = read_ssz_snappy(&case.file(&file))?;
    BeaconState::from_ssz_bytes_by_fork(&bytes, fork)
        .map_err(|e| format!("cannot decode {file} as a {fork} state: {e:?}"))
}

/// Decodes `<name>.ssz_snappy` as a state, its fork taken from its slot and `spec`.
pub(crate) fn read_state_by_slot<E: EthSpec>(
    case: &CaseContext,
    name: &str,
    spec: &ChainSpec,
) -> Result<BeaconState<E>, String> {
    let file = format!("{name}.ssz_snappy");
    let bytes = read_ssz_snappy(&case.file(&file))?;
    BeaconState::from_ssz_bytes(&bytes, spec).map_err(|e| format!("cannot decode {file}: {e:?}"))
}

/// `post.ssz_snappy` as a state of `fork`, or `None` when the case has none (the processing must
/// then fail).
pub(crate) fn read_post<E: EthSpec>(
    case: &CaseContext,
    fork: ForkName,
) -> Result<Option<BeaconState<E>>, String> {
    if case.file("post.ssz_snappy").exists() {
        read_state(case, "post", fork).map(Some)
    } else {
        Ok(None)
    }
}

/// The outcome of processing against what the case expects: success matching `post`, or failure
/// where it has no `post`.
pub(crate) fn check_outcome<E: EthSpec, Err: std::fmt::Display>(
    what: &str,
    result: Result<(), Err>,
    state: &mut CachedBeaconState<E>,
    post: Option<&BeaconState<E>>,
) -> Result<(), String> {
    match (result, post) {
        (Ok(()), Some(post)) => compare_states(state, post),
        (Ok(()), None) => Err(format!(
            "{what} succeeded, but the case has no post state (it must fail)"
        )),
        (Err(e), Some(_)) => Err(format!("{what} failed on a valid case: {e}")),
        (Err(_), None) => Ok(()),
    }
}

/// Fails when the case directory holds a file the runner does not read, so that a file added to
/// the vectors is never ignored silently. `expected` names files; a name ending in `_*` stands
/// for `<name>_<i>.ssz_snappy`. `manifest.yaml` and `meta.yaml` are always expected.
pub(crate) fn check_known_files<F>(case: &CaseContext<F>, expected: &[&str]) -> Result<(), String> {
    let entries = std::fs::read_dir(&case.path)
        .map_err(|e| format!("cannot list {}: {e}", case.path.display()))?;
    let mut unknown = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", case.path.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_expected(&name, expected) {
            unknown.push(name);
        }
    }
    if unknown.is_empty() {
        Ok(())
    } else {
        unknown.sort();
        Err(format!(
            "the case holds files this runner does not read: {}",
            unknown.join(", ")
        ))
    }
}

/// `manifest.yaml` and `meta.yaml` are read by the harness and [`Meta::read`], `config.yaml` by
/// [`chain_spec`], whichever runner reads the rest.
fn is_expected(name: &str, expected: &[&str]) -> bool {
    name == "manifest.yaml"
        || name == "meta.yaml"
        || name == "config.yaml"
        || expected.iter().any(|&want| match want.strip_suffix('*') {
            Some(prefix) => name
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(".ssz_snappy"))
                .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())),
            None => name == want,
        })
}

/// `$execution_valid` of `execution.yaml`: the verdict the execution engine gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EngineVerdict(pub bool);

impl<E: EthSpec> ExecutionEngine<E> for EngineVerdict {
    fn verify_and_notify_new_payload(
        &self,
        _request: &electra::NewPayloadRequest<E>,
    ) -> Result<bool, EngineError> {
        Ok(self.0)
    }
}

/// Compares `got` (its pending writes folded in first) with `want`: equal roots pass; otherwise
/// the message lists the fields that differ.
pub(crate) fn compare_states<E: EthSpec>(
    got: &mut CachedBeaconState<E>,
    want: &BeaconState<E>,
) -> Result<(), String> {
    let got_root = got
        .hash_tree_root()
        .map_err(|e| format!("cannot hash the post state: {e}"))?;
    let want_root = want.tree_hash_root();
    if got_root == want_root {
        return Ok(());
    }
    if got.state.fork_name() != want.fork_name() {
        return Err(format!(
            "post state is a {} state, expected {}",
            got.state.fork_name(),
            want.fork_name()
        ));
    }
    let diffs = match (StateRef::new(&got.state), StateRef::new(want)) {
        (Ok(g), Ok(w)) => field_diffs(&g, &w),
        _ => vec!["(no field view for this fork)".to_string()],
    };
    Err(format!(
        "post state root {got_root} != expected {want_root}; differing fields: {}",
        diffs.join("; ")
    ))
}

/// At most this many characters of a value's `Debug` in a diff.
const DEBUG_CHARS: usize = 240;

fn short<T: Debug>(value: &T) -> String {
    let mut s = format!("{value:?}");
    if s.len() > DEBUG_CHARS {
        let mut end = DEBUG_CHARS;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// Describes how two sequences differ: their lengths, or the first element that differs.
fn seq_diff<T: PartialEq + Debug>(
    name: &str,
    (got_len, got): (usize, impl Iterator<Item = T>),
    (want_len, want): (usize, impl Iterator<Item = T>),
) -> String {
    let first = got
        .zip(want)
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| {
            format!(
                ", first at [{i}]: got {}, expected {}",
                short(&a),
                short(&b)
            )
        });
    let count = if got_len == want_len {
        format!("len {got_len}")
    } else {
        format!("len {got_len}, expected {want_len}")
    };
    format!("{name} ({count}{})", first.unwrap_or_default())
}

/// One line per field of the two states whose roots differ.
fn field_diffs<E: EthSpec>(got: &StateRef<'_, E>, want: &StateRef<'_, E>) -> Vec<String> {
    let mut out = Vec::new();
    macro_rules! scalars {
        ($($f:ident),*) => {$(
            if got.$f.tree_hash_root() != want.$f.tree_hash_root() {
                out.push(format!(
                    "{}: got {}, expected {}",
                    stringify!($f),
                    short(&*got.$f),
                    short(&*want.$f)
                ));
            }
        )*};
    }
    macro_rules! lists {
        ($($f:ident),*) => {$(
            if got.$f.tree_hash_root() != want.$f.tree_hash_root() {
                out.push(seq_diff(
                    stringify!($f),
                    (got.$f.len(), got.$f.iter()),
                    (want.$f.len(), want.$f.iter()),
                ));
            }
        )*};
    }
    scalars!(
        genesis_time,
        genesis_validators_root,
        slot,
        fork,
        latest_block_header,
        eth1_data,
        eth1_deposit_index,
        justification_bits,
        previous_justified_checkpoint,
        current_justified_checkpoint,
        finalized_checkpoint,
        current_sync_committee,
        next_sync_committee,
        next_withdrawal_index,
        next_withdrawal_validator_index
    );
    lists!(
        block_roots,
        state_roots,
        historical_roots,
        eth1_data_votes,
        validators,
        balances,
        randao_mixes,
        slashings,
        previous_epoch_participation,
        current_epoch_participation,
        inactivity_scores,
        historical_summaries
    );
    // The fields Electra adds (and the payload header Gloas removes): compared where both
    // states have them.
    macro_rules! electra_scalars {
        ($($f:ident),*) => {$(
            match (got.$f, want.$f) {
                (Some(g), Some(w)) if g.tree_hash_root() != w.tree_hash_root() => {
                    out.push(format!("{}: got {}, expected {}", stringify!($f), short(g), short(w)));
                }
                (Some(_), None) | (None, Some(_)) => {
                    out.push(format!("{} presence", stringify!($f)));
                }
                _ => {}
            }
        )*};
    }
    macro_rules! electra_lists {
        ($($f:ident),*) => {$(
            match (got.$f, want.$f) {
                (Some(g), Some(w)) if g.tree_hash_root() != w.tree_hash_root() => {
                    out.push(seq_diff(stringify!($f), (g.len(), g.iter()), (w.len(), w.iter())));
                }
                (Some(_), None) | (None, Some(_)) => {
                    out.push(format!("{} presence", stringify!($f)));
                }
                _ => {}
            }
        )*};
    }
    electra_scalars!(
        latest_execution_payload_header,
        deposit_requests_start_index,
        deposit_balance_to_consume,
        exit_balance_to_consume,
        earliest_exit_epoch,
        consolidation_balance_to_consume,
        earliest_consolidation_epoch
    );
    electra_lists!(
        pending_deposits,
        pending_partial_withdrawals,
        pending_consolidations
    );
    match (got.proposer_lookahead, want.proposer_lookahead) {
        (Some(g), Some(w)) if g.tree_hash_root() != w.tree_hash_root() => {
            out.push(seq_diff(
                "proposer_lookahead",
                (g.len(), g.iter()),
                (w.len(), w.iter()),
            ));
        }
        (Some(_), None) | (None, Some(_)) => out.push("proposer_lookahead presence".to_string()),
        _ => {}
    }
    // The fields Gloas adds.
    match (got.gloas, want.gloas) {
        (Some(g), Some(w)) => {
            macro_rules! gloas_fields {
                ($($f:ident),*) => {$(
                    if g.$f.tree_hash_root() != w.$f.tree_hash_root() {
                        out.push(format!(
                            "{}: got {}, expected {}",
                            stringify!($f),
                            short(g.$f),
                            short(w.$f)
                        ));
                    }
                )*};
            }
            gloas_fields!(
                latest_block_hash,
                next_withdrawal_builder_index,
                execution_payload_availability,
                builder_pending_payments,
                latest_execution_payload_bid,
                ptc_window,
                builders,
                builder_pending_withdrawals,
                payload_expected_withdrawals
            );
        }
        (Some(_), None) | (None, Some(_)) => out.push("gloas fields presence".to_string()),
        (None, None) => {}
    }
    if out.is_empty() {
        out.push("(every field root matches: the container layout differs)".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use state_processing::genesis::interop_genesis_state;
    use types::{MinimalEthSpec, Root};

    fn meta(yaml: &str) -> Result<Meta, serde_yaml::Error> {
        serde_yaml::from_str(yaml)
    }

    #[test]
    fn bls_setting_selects_the_signature_strategy() {
        let batched = VerifySignatures::Batched;
        let read = |yaml: &str| meta(yaml).expect("valid meta").verify_signatures(batched);
        assert_eq!(read("{}"), Ok(VerifySignatures::Batched));
        assert_eq!(read("{bls_setting: 1}"), Ok(VerifySignatures::Batched));
        assert_eq!(read("{bls_setting: 2}"), Ok(VerifySignatures::None));
        assert!(read("{bls_setting: 3}").is_err());
        let transition = meta("{post_fork: fulu, fork_epoch: 2, blocks_count: 3, fork_block: 0}")
            .expect("valid meta");
        assert_eq!(transition.fork_block, Some(0));
        assert_eq!(transition.fork_epoch, Some(2));
    }

    #[test]
    fn numbered_and_named_files_are_expected_others_not() {
        let expected = ["pre.ssz_snappy", "blocks_*"];
        assert!(is_expected("pre.ssz_snappy", &expected));
        assert!(is_expected("blocks_12.ssz_snappy", &expected));
        assert!(is_expected("manifest.yaml", &expected));
        assert!(!is_expected("blocks_.ssz_snappy", &expected));
        assert!(!is_expected("blocks_1a.ssz_snappy", &expected));
        assert!(!is_expected("post_epoch.ssz_snappy", &expected));
    }

    #[test]
    fn unknown_meta_keys_are_refused() {
        assert!(meta("{bls_setting: 1, surprise: true}").is_err());
    }

    fn interop_state() -> CachedBeaconState<MinimalEthSpec> {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        let state = interop_genesis_state::<MinimalEthSpec>(16, 0, Root::ZERO, &spec)
            .expect("interop genesis");
        CachedBeaconState::new(state)
    }

    #[test]
    fn a_differing_state_names_the_field_and_the_first_element() {
        let mut got = interop_state();
        let want = got.state.clone();
        assert_eq!(compare_states(&mut got, &want), Ok(()));

        let balance = got
            .state
            .balances()
            .expect("a state before Gloas")
            .get(3)
            .expect("16 validators");
        got.state
            .balances_mut()
            .expect("a state before Gloas")
            .set(3, balance + 1)
            .expect("in range");
        *got.state.slot_mut() += 1;
        let message = compare_states(&mut got, &want).expect_err("states differ");
        assert!(message.contains("slot: got 1, expected 0"), "{message}");
        assert!(
            message.contains(&format!(
                "balances (len 16, first at [3]: got {}, expected {balance})",
                balance + 1
            )),
            "{message}"
        );
        assert!(!message.contains("validators"), "{message}");
    }

    #[test]
    fn outcome_without_post_must_be_a_failure() {
        let mut state = interop_state();
        let post = state.state.clone();
        let ok: Result<(), String> = Ok(());
        let failed: Result<(), String> = Err("rejected".to_string());
        assert!(check_outcome("op", ok.clone(), &mut state, None).is_err());
        assert_eq!(
            check_outcome("op", failed.clone(), &mut state, None),
            Ok(())
        );
        assert_eq!(check_outcome("op", ok, &mut state, Some(&post)), Ok(()));
        let message = check_outcome("op", failed, &mut state, Some(&post)).expect_err("valid case");
        assert!(
            message.contains("op failed on a valid case: rejected"),
            "{message}"
        );
    }
}
