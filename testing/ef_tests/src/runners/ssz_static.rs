//! `ssz_static`: every container of every fork decodes, re-encodes byte for byte and hashes to
//! the vector's root.
//!
//! [format]: consensus-specs tests/formats/ssz_static/core.md

use std::fmt::Debug;
use std::path::Path;

use serde::{Deserialize, de::DeserializeOwned};
use ssz::{Decode, Encode};
use tree_hash::TreeHash;
use types::{EthSpec, ForkName, MainnetEthSpec, MinimalEthSpec};

use crate::case::{CaseContext, CaseResult, PendingFork, Preset, Runner};
use crate::files::{decode_hex32, read_ssz_snappy, read_yaml};

/// Runs `<config>/<fork>/ssz_static/<TypeName>/<suite>/<case>/`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SszStatic;

impl Runner for SszStatic {
    fn name(&self) -> &'static str {
        "ssz_static"
    }

    fn run_case(&self, case: &CaseContext) -> CaseResult {
        let checked = match case.preset() {
            Ok(Preset::Minimal) => {
                check_type::<MinimalEthSpec>(case.fork, &case.handler, &case.path)
            }
            Ok(Preset::Mainnet) => {
                check_type::<MainnetEthSpec>(case.fork, &case.handler, &case.path)
            }
            Err(e) => return CaseResult::Failed(e),
        };
        let checked = checked.map(|result| {
            result.and_then(|()| match case.preset() {
                Ok(Preset::Minimal) => {
                    check_fork_generic::<MinimalEthSpec>(case.fork, &case.handler, &case.path)
                }
                Ok(Preset::Mainnet) => {
                    check_fork_generic::<MainnetEthSpec>(case.fork, &case.handler, &case.path)
                }
                Err(e) => Err(e),
            })
        });
        match checked {
            Some(result) => CaseResult::from_check(result),
            None => CaseResult::NotRun(format!(
                "no type `{}` in the ssz_static list of types::{} (missing from the types crate, \
                 or from the list in testing/ef_tests/src/runners/ssz_static.rs)",
                case.handler, case.fork
            )),
        }
    }

    fn run_pending_fork_case(&self, case: &CaseContext<PendingFork>) -> CaseResult {
        let checked = match case.preset() {
            Ok(Preset::Minimal) => {
                check_pending_fork_type::<MinimalEthSpec>(case.fork, &case.handler, &case.path)
            }
            Ok(Preset::Mainnet) => {
                check_pending_fork_type::<MainnetEthSpec>(case.fork, &case.handler, &case.path)
            }
            Err(e) => return CaseResult::Failed(e),
        };
        match checked {
            Some(result) => CaseResult::from_check(result),
            None => CaseResult::NotRun(format!(
                "no type `{}` in the ssz_static list of types::{} (missing from the types crate, \
                 or from the pending-fork list in testing/ef_tests/src/runners/ssz_static.rs)",
                case.handler, case.fork
            )),
        }
    }
}

/// [`check_case`], then `value.yaml` decoded as `T` must equal the value decoded from
/// `serialized.ssz_snappy`.
fn check_case_with_value<T: Decode + Encode + TreeHash + DeserializeOwned + PartialEq + Debug>(
    case_dir: &Path,
) -> Result<(), String> {
    check_case::<T>(case_dir)?;
    let bytes = read_ssz_snappy(&case_dir.join("serialized.ssz_snappy"))?;
    let decoded = T::from_ssz_bytes(&bytes)
        .map_err(|e| format!("cannot decode {} bytes: {e:?}", bytes.len()))?;
    let value: T = read_yaml(&case_dir.join("value.yaml"))?;
    if value != decoded {
        return Err("value.yaml differs from the value decoded from serialized.ssz_snappy".into());
    }
    Ok(())
}

/// `roots.yaml`.
#[derive(Debug, Deserialize)]
struct Roots {
    root: String,
}

/// Decodes `serialized.ssz_snappy` as `T`, re-encodes it and checks its `hash_tree_root`.
fn check_case<T: Decode + Encode + TreeHash>(case_dir: &Path) -> Result<(), String> {
    let bytes = read_ssz_snappy(&case_dir.join("serialized.ssz_snappy"))?;
    let roots: Roots = read_yaml(&case_dir.join("roots.yaml"))?;
    let expected_root = decode_hex32(&roots.root)?;

    let value = T::from_ssz_bytes(&bytes)
        .map_err(|e| format!("cannot decode {} bytes: {e:?}", bytes.len()))?;
    let encoded = value.as_ssz_bytes();
    if encoded != bytes {
        let at = encoded
            .iter()
            .zip(&bytes)
            .position(|(a, b)| a != b)
            .unwrap_or(encoded.len().min(bytes.len()));
        return Err(format!(
            "re-encoding differs from the vector at byte {at} ({} bytes vs {} in the vector)",
            encoded.len(),
            bytes.len()
        ));
    }
    let root = value.tree_hash_root();
    if root.as_slice() != expected_root.as_slice() {
        return Err(format!(
            "hash_tree_root {root} != expected 0x{}",
            hex::encode(expected_root)
        ));
    }
    Ok(())
}

/// Declares, per fork, the containers the ssz_static vectors may name, and generates
/// `check_type`, which checks a case against the fork module's type of that name (`None` when the
/// fork has no such type) with [`check_case_with_value`]: every listed container, states
/// included, has a serde `Deserialize` for its `value.yaml`. A `<E>` after a name marks a
/// preset-generic container.
///
/// The `match` over [`ForkName`] is exhaustive, so a fork added to `types` does not compile until
/// it has a list here.
macro_rules! ssz_static_types {
    (
        $check:ident, $listed:ident, $fork_ty:ident:
        $($variant:ident => $module:ident [$($ty:ident $(<$e:ident>)?),* $(,)?]),* $(,)?
    ) => {
        /// Checks the case in `case_dir` as the fork's type `type_name`, in preset `E`.
        fn $check<E: EthSpec>(
            fork: $fork_ty,
            type_name: &str,
            case_dir: &Path,
        ) -> Option<Result<(), String>> {
            match fork {
                $($fork_ty::$variant => {
                    $(if type_name == stringify!($ty) {
                        return Some(check_case_with_value::<types::$module::$ty $(<$e>)?>(
                            case_dir,
                        ));
                    })*
                    None
                })*
            }
        }

        #[cfg(test)]
        /// `(fork, type name)` of every listed container.
        pub(crate) const $listed: &[($fork_ty, &[&str])] = &[
            $(($fork_ty::$variant, &[$(stringify!($ty)),*])),*
        ];
    };
}

ssz_static_types! {
    check_type, LISTED, ForkName:
    Phase0 => phase0 [
        AggregateAndProof<E>, Attestation<E>, AttestationData, AttesterSlashing<E>,
        BeaconBlock<E>, BeaconBlockBody<E>, BeaconBlockHeader, BeaconState<E>, Checkpoint,
        Deposit, DepositData, DepositMessage, Eth1Block, Eth1Data, Fork, ForkData,
        HistoricalBatch<E>, IndexedAttestation<E>, PendingAttestation<E>, ProposerSlashing,
        SignedAggregateAndProof<E>, SignedBeaconBlock<E>, SignedBeaconBlockHeader,
        SignedVoluntaryExit, SigningData, Validator, VoluntaryExit,
    ],
    Altair => altair [
        AggregateAndProof<E>, Attestation<E>, AttestationData, AttesterSlashing<E>,
        BeaconBlock<E>, BeaconBlockBody<E>, BeaconBlockHeader, BeaconState<E>, Checkpoint,
        ContributionAndProof<E>, Deposit, DepositData, DepositMessage, Eth1Block, Eth1Data, Fork,
        ForkData, HistoricalBatch<E>, IndexedAttestation<E>, LightClientBootstrap<E>,
        LightClientFinalityUpdate<E>, LightClientHeader, LightClientOptimisticUpdate<E>,
        LightClientUpdate<E>, ProposerSlashing, SignedAggregateAndProof<E>,
        SignedBeaconBlock<E>, SignedBeaconBlockHeader, SignedContributionAndProof<E>,
        SignedVoluntaryExit, SigningData, SyncAggregate<E>, SyncAggregatorSelectionData,
        SyncCommittee<E>, SyncCommitteeContribution<E>, SyncCommitteeMessage, Validator,
        VoluntaryExit,
    ],
    Bellatrix => bellatrix [
        AggregateAndProof<E>, Attestation<E>, AttestationData, AttesterSlashing<E>,
        BeaconBlock<E>, BeaconBlockBody<E>, BeaconBlockHeader, BeaconState<E>, Checkpoint,
        ContributionAndProof<E>, Deposit, DepositData, DepositMessage, Eth1Block, Eth1Data,
        ExecutionPayload<E>, ExecutionPayloadHeader<E>, Fork, ForkData, HistoricalBatch<E>,
        IndexedAttestation<E>, LightClientBootstrap<E>, LightClientFinalityUpdate<E>,
        LightClientHeader, LightClientOptimisticUpdate<E>, LightClientUpdate<E>, PowBlock,
        ProposerSlashing, SignedAggregateAndProof<E>, SignedBeaconBlock<E>,
        SignedBeaconBlockHeader, SignedContributionAndProof<E>, SignedVoluntaryExit, SigningData,
        SyncAggregate<E>, SyncAggregatorSelectionData, SyncCommittee<E>,
        SyncCommitteeContribution<E>, SyncCommitteeMessage, Validator, VoluntaryExit,
    ],
    Capella => capella [
        AggregateAndProof<E>, Attestation<E>, AttestationData, AttesterSlashing<E>,
        BLSToExecutionChange, BeaconBlock<E>, BeaconBlockBody<E>, BeaconBlockHeader,
        BeaconState<E>, Checkpoint, ContributionAndProof<E>, Deposit, DepositData,
        DepositMessage, Eth1Block, Eth1Data, ExecutionPayload<E>, ExecutionPayloadHeader<E>,
        Fork, ForkData, HistoricalSummary, IndexedAttestation<E>, LightClientBootstrap<E>,
        LightClientFinalityUpdate<E>, LightClientHeader<E>, LightClientOptimisticUpdate<E>,
        LightClientUpdate<E>, PowBlock, ProposerSlashing, SignedAggregateAndProof<E>,
        SignedBLSToExecutionChange, SignedBeaconBlock<E>, SignedBeaconBlockHeader,
        SignedContributionAndProof<E>, SignedVoluntaryExit, SigningData, SyncAggregate<E>,
        SyncAggregatorSelectionData, SyncCommittee<E>, SyncCommitteeContribution<E>,
        SyncCommitteeMessage, Validator, VoluntaryExit, Withdrawal,
    ],
    Deneb => deneb [
        AggregateAndProof<E>, Attestation<E>, AttestationData, AttesterSlashing<E>,
        BLSToExecutionChange, BeaconBlock<E>, BeaconBlockBody<E>, BeaconBlockHeader,
        BeaconState<E>, BlobIdentifier, BlobSidecar<E>, Checkpoint, ContributionAndProof<E>,
        Deposit, DepositData, DepositMessage, Eth1Block, Eth1Data, ExecutionPayload<E>,
        ExecutionPayloadHeader<E>, Fork, ForkData, HistoricalSummary, IndexedAttestation<E>,
        LightClientBootstrap<E>, LightClientFinalityUpdate<E>, LightClientHeader<E>,
        LightClientOptimisticUpdate<E>, LightClientUpdate<E>, PowBlock, ProposerSlashing,
        SignedAggregateAndProof<E>, SignedBLSToExecutionChange, SignedBeaconBlock<E>,
        SignedBeaconBlockHeader, SignedContributionAndProof<E>, SignedVoluntaryExit,
        SigningData, SyncAggregate<E>, SyncAggregatorSelectionData, SyncCommittee<E>,
        SyncCommitteeContribution<E>, SyncCommitteeMessage, Validator, VoluntaryExit,
        Withdrawal,
    ],
    Electra => electra [
        AggregateAndProof<E>, Attestation<E>, AttestationData, AttesterSlashing<E>,
        BLSToExecutionChange, BeaconBlock<E>, BeaconBlockBody<E>, BeaconBlockHeader,
        BeaconState<E>, BlobIdentifier, BlobSidecar<E>, Checkpoint, ConsolidationRequest,
        ContributionAndProof<E>, Deposit, DepositData, DepositMessage, DepositRequest,
        Eth1Block, Eth1Data, ExecutionPayload<E>, ExecutionPayloadHeader<E>,
        ExecutionRequests<E>, Fork, ForkData, HistoricalSummary, IndexedAttestation<E>,
        LightClientBootstrap<E>, LightClientFinalityUpdate<E>, LightClientHeader<E>,
        LightClientOptimisticUpdate<E>, LightClientUpdate<E>, NewPayloadRequest<E>,
        PendingConsolidation, PendingDeposit, PendingPartialWithdrawal, PowBlock,
        ProposerSlashing, SignedAggregateAndProof<E>, SignedBLSToExecutionChange,
        SignedBeaconBlock<E>, SignedBeaconBlockHeader, SignedContributionAndProof<E>,
        SignedVoluntaryExit, SigningData, SingleAttestation, SyncAggregate<E>, SyncAggregatorSelectionData,
        SyncCommittee<E>, SyncCommitteeContribution<E>, SyncCommitteeMessage, Validator,
        VoluntaryExit, Withdrawal, WithdrawalRequest,
    ],
    Fulu => fulu [
        AggregateAndProof<E>, Attestation<E>, AttestationData, AttesterSlashing<E>,
        BLSToExecutionChange, BeaconBlock<E>, BeaconBlockBody<E>, BeaconBlockHeader,
        BeaconState<E>, Checkpoint, ConsolidationRequest, ContributionAndProof<E>,
        DataColumnSidecar<E>, DataColumnsByRootIdentifier<E>, Deposit, DepositData,
        DepositMessage, DepositRequest, Eth1Block, Eth1Data, ExecutionPayload<E>,
        ExecutionPayloadHeader<E>, ExecutionRequests<E>, Fork, ForkData, HistoricalSummary,
        IndexedAttestation<E>, LightClientBootstrap<E>, LightClientFinalityUpdate<E>,
        LightClientHeader<E>, LightClientOptimisticUpdate<E>, LightClientUpdate<E>,
        MatrixEntry<E>, NewPayloadRequest<E>, PartialDataColumnGroupID, PartialDataColumnHeader<E>,
        PartialDataColumnPartsMetadata<E>, PartialDataColumnSidecar<E>, PendingConsolidation,
        PendingDeposit, PendingPartialWithdrawal, PowBlock, ProposerSlashing,
        SignedAggregateAndProof<E>, SignedBLSToExecutionChange, SignedBeaconBlock<E>,
        SignedBeaconBlockHeader, SignedContributionAndProof<E>, SignedVoluntaryExit,
        SigningData, SingleAttestation, SyncAggregate<E>, SyncAggregatorSelectionData,
        SyncCommittee<E>, SyncCommitteeContribution<E>, SyncCommitteeMessage, Validator,
        VoluntaryExit, Withdrawal, WithdrawalRequest,
    ],
    // Gloas's cases run as a pending fork (below) while Arbor does not run Gloas
    // (`ForkName::is_implemented`): the harness routes them there.
    Gloas => gloas [],
}

// The forks Arbor does not run yet (`ForkName` knows Gloas, but not as a released fork): their containers, checked the same way (there is no
// fork-generic enum for them to decode through).
ssz_static_types! {
    check_pending_fork_type, PENDING_LISTED, PendingFork:
    Gloas => gloas [
        AggregateAndProof<E>, Attestation<E>, AttestationData, AttesterSlashing,
        BLSToExecutionChange, BeaconBlock<E>, BeaconBlockBody<E>, BeaconBlockHeader,
        BeaconState<E>, Builder, BuilderDepositRequest, BuilderExitRequest, BuilderPendingPayment,
        BuilderPendingWithdrawal, Checkpoint, ConsolidationRequest, ContributionAndProof<E>,
        DataColumnSidecar<E>, DataColumnsByRootIdentifier<E>, Deposit, DepositData,
        DepositMessage, DepositRequest, Eth1Block, Eth1Data, ExecutionPayload<E>,
        ExecutionPayloadBid, ExecutionPayloadEnvelope<E>, ExecutionRequests, Fork, ForkData,
        HistoricalSummary, IndexedAttestation, IndexedPayloadAttestation<E>,
        LightClientBootstrap<E>, LightClientFinalityUpdate<E>, LightClientHeader,
        LightClientOptimisticUpdate<E>, LightClientUpdate<E>, MatrixEntry<E>,
        NewPayloadRequest<E>, PartialDataColumnGroupID, PartialDataColumnPartsMetadata,
        PartialDataColumnSidecar<E>, PayloadAttestation<E>, PayloadAttestationData,
        PayloadAttestationMessage, PendingConsolidation, PendingDeposit,
        PendingPartialWithdrawal, PowBlock, ProposerPreferences, ProposerSlashing,
        SignedAggregateAndProof<E>, SignedBLSToExecutionChange, SignedBeaconBlock<E>,
        SignedBeaconBlockHeader, SignedContributionAndProof<E>, SignedExecutionPayloadBid,
        SignedExecutionPayloadEnvelope<E>, SignedProposerPreferences, SignedVoluntaryExit,
        SigningData, SingleAttestation, SyncAggregate<E>, SyncAggregatorSelectionData,
        SyncCommittee<E>, SyncCommitteeContribution<E>, SyncCommitteeMessage, Validator,
        VoluntaryExit, Withdrawal, WithdrawalRequest,
    ],
}

/// Decoding by fork through the fork-generic enums of `types` (`types::BeaconState`, …).
trait ForkGeneric: Encode + TreeHash + Sized {
    fn decode_by_fork(bytes: &[u8], fork: ForkName) -> Result<Self, ssz::DecodeError>;
    fn fork(&self) -> ForkName;
}

macro_rules! fork_generic {
    ($($name:ident),* $(,)?) => {
        $(impl<E: EthSpec> ForkGeneric for types::$name<E> {
            fn decode_by_fork(bytes: &[u8], fork: ForkName) -> Result<Self, ssz::DecodeError> {
                Self::from_ssz_bytes_by_fork(bytes, fork)
            }
            fn fork(&self) -> ForkName {
                self.fork_name()
            }
        })*

        /// For a type that has a fork-generic enum, checks that the enum decodes the case by
        /// fork to the same bytes, root and fork. `Ok` for other types.
        fn check_fork_generic<E: EthSpec>(
            fork: ForkName,
            type_name: &str,
            case_dir: &Path,
        ) -> Result<(), String> {
            $(if type_name == stringify!($name) {
                check_enum_case::<types::$name<E>>(fork, case_dir)?;
                if type_name == "BeaconState" {
                    check_state_written_in_pieces::<E>(fork, case_dir)?;
                }
                return check_decode_by_slot::<E>(fork, type_name, case_dir);
            })*
            Ok(())
        }
    };
}

fork_generic!(
    BeaconState,
    SignedBeaconBlock,
    BeaconBlock,
    BeaconBlockBody,
    ExecutionPayload,
    ExecutionPayloadHeader,
    Attestation,
    AttesterSlashing,
    BlobSidecar,
    DataColumnSidecar,
    LightClientHeader,
    LightClientBootstrap,
    LightClientUpdate,
    LightClientFinalityUpdate,
    LightClientOptimisticUpdate,
);

fn check_enum_case<T: ForkGeneric>(fork: ForkName, case_dir: &Path) -> Result<(), String> {
    let bytes = read_ssz_snappy(&case_dir.join("serialized.ssz_snappy"))?;
    let roots: Roots = read_yaml(&case_dir.join("roots.yaml"))?;
    let expected_root = decode_hex32(&roots.root)?;
    let value = T::decode_by_fork(&bytes, fork)
        .map_err(|e| format!("fork-generic decode at {fork} failed: {e:?}"))?;
    if value.fork() != fork {
        return Err(format!(
            "fork-generic value says {} for a {fork} case",
            value.fork()
        ));
    }
    if value.as_ssz_bytes() != bytes {
        return Err("fork-generic re-encoding differs from the vector".into());
    }
    if value.tree_hash_root().as_slice() != expected_root.as_slice() {
        return Err("fork-generic hash_tree_root differs from the vector".into());
    }
    Ok(())
}

/// A state written in pieces (`BeaconState::ssz_write`, how the store writes its snapshot
/// files) is the vector's bytes.
fn check_state_written_in_pieces<E: EthSpec>(
    fork: ForkName,
    case_dir: &Path,
) -> Result<(), String> {
    let bytes = read_ssz_snappy(&case_dir.join("serialized.ssz_snappy"))?;
    let state = types::BeaconState::<E>::from_ssz_bytes_by_fork(&bytes, fork)
        .map_err(|e| format!("fork-generic decode at {fork} failed: {e:?}"))?;
    let mut written = Vec::new();
    state
        .ssz_write(&mut written)
        .map_err(|e| format!("ssz_write failed: {e}"))?;
    if written != bytes {
        return Err(format!(
            "the state written in pieces ({} bytes) differs from the vector ({} bytes)",
            written.len(),
            bytes.len()
        ));
    }
    Ok(())
}

/// For blocks and states, which are decoded by the fork of their own slot: with `fork` active
/// from genesis, decoding through the fork schedule must pick `fork`.
fn check_decode_by_slot<E: EthSpec>(
    fork: ForkName,
    type_name: &str,
    case_dir: &Path,
) -> Result<(), String> {
    let spec = types::ChainSpec::minimal().with_forks_at_genesis_through(fork);
    let bytes = read_ssz_snappy(&case_dir.join("serialized.ssz_snappy"))?;
    let decoded = match type_name {
        "BeaconState" => {
            types::BeaconState::<E>::from_ssz_bytes(&bytes, &spec).map(|v| Some(v.fork_name()))
        }
        "SignedBeaconBlock" => {
            types::SignedBeaconBlock::<E>::from_ssz_bytes(&bytes, &spec).map(|v| {
                // A block's header hashes to the block's root: gossip and req/resp rely on it.
                let header = v.signed_block_header();
                if header.message.tree_hash_root() != v.canonical_root() {
                    return None;
                }
                Some(v.fork_name())
            })
        }
        "BeaconBlock" => {
            types::BeaconBlock::<E>::from_ssz_bytes(&bytes, &spec).map(|v| Some(v.fork_name()))
        }
        _ => return Ok(()),
    };
    match decoded {
        Ok(Some(decoded_fork)) if decoded_fork == fork => Ok(()),
        Ok(Some(other)) => Err(format!("decoding by slot picked {other}, expected {fork}")),
        Ok(None) => Err("the block's signed_block_header does not hash to its root".into()),
        Err(e) => Err(format!("decoding by slot failed: {e:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fork_has_a_list_without_duplicates() {
        for fork in ForkName::ALL {
            let (_, names) = LISTED
                .iter()
                .find(|(f, _)| *f == fork)
                .expect("the macro's exhaustive match lists every fork");
            let mut sorted = names.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                names.len(),
                "duplicate type in the {fork} list"
            );
        }
    }

    #[test]
    fn every_pending_fork_has_a_list_without_duplicates() {
        for fork in PendingFork::ALL {
            let (_, names) = PENDING_LISTED
                .iter()
                .find(|(f, _)| *f == fork)
                .expect("the macro's exhaustive match lists every pending fork");
            let mut sorted = names.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                names.len(),
                "duplicate type in the {fork} list"
            );
        }
    }

    #[test]
    fn unknown_type_is_not_run() {
        let dir = std::env::temp_dir();
        assert!(check_type::<MinimalEthSpec>(ForkName::Fulu, "NoSuchType", &dir).is_none());
        assert!(check_type::<MinimalEthSpec>(ForkName::Fulu, "Checkpoint", &dir).is_some());
        // Removed in Altair: not in the altair module.
        assert!(
            check_type::<MinimalEthSpec>(ForkName::Altair, "PendingAttestation", &dir).is_none()
        );
    }
}
