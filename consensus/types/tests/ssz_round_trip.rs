//! SSZ round trip of every container every fork module exports, for both presets.
//!
//! A value is generated from random bytes through `arbitrary::Unstructured`, encoded, decoded and
//! compared with the original; the encoded length must match `ssz_bytes_len` (and `ssz_fixed_len`
//! for fixed-size types), the decoded value must re-encode to the same bytes and its tree hash
//! root must equal the original's.
//!
//! The lists below name every `pub struct`, `pub type` and `pub use` of `src/<fork>.rs`: a type a
//! fork re-exports is tested again under that fork's name, so a re-export that silently starts
//! pointing at another fork's type is still covered. Keep them complete when adding containers.
//!
//! `BeaconState`s come from the generators in `common/mod.rs`, not from the derived `Arbitrary`,
//! which does not produce valid milhouse lists (see there).

#![cfg(feature = "arbitrary")]

mod common;

use std::fmt::Debug;

use arbitrary::Unstructured;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use ssz::{Decode, Encode};
use tree_hash::TreeHash;

/// Random test cases for a small container.
const CASES: u32 = 64;
/// Random bytes fed to `arbitrary` for a small container.
const BYTES: usize = 2048;

/// Runs `cases` random round trips of `T`, values made by `generate` from up to `max_bytes` bytes.
fn check<T, G>(name: &str, cases: u32, max_bytes: usize, generate: G)
where
    T: Encode + Decode + TreeHash + PartialEq + Debug,
    G: Fn(&mut Unstructured<'_>) -> arbitrary::Result<T>,
{
    let config = Config {
        cases,
        // `arbitrary` rarely rejects; a type that keeps rejecting is a finding, not noise.
        max_global_rejects: cases.saturating_mul(4),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = prop::collection::vec(any::<u8>(), 0..max_bytes);
    let result = runner.run(&strategy, |bytes| {
        let mut u = Unstructured::new(&bytes);
        let value = generate(&mut u).map_err(|e| TestCaseError::reject(e.to_string()))?;

        let encoded = value.as_ssz_bytes();
        prop_assert_eq!(value.ssz_bytes_len(), encoded.len(), "ssz_bytes_len");
        if <T as Encode>::is_ssz_fixed_len() {
            prop_assert_eq!(
                <T as Encode>::ssz_fixed_len(),
                encoded.len(),
                "ssz_fixed_len"
            );
        }

        let decoded = T::from_ssz_bytes(&encoded)
            .map_err(|e| TestCaseError::fail(format!("decoding its own encoding: {e:?}")))?;
        // Values can be megabytes: compare without printing them.
        prop_assert!(decoded == value, "decoded value differs from the original");
        prop_assert!(decoded.as_ssz_bytes() == encoded, "re-encoding differs");
        prop_assert_eq!(
            decoded.tree_hash_root(),
            value.tree_hash_root(),
            "tree hash root"
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

/// `or!(; default)` is `default`, `or!(value; default)` is `value`.
macro_rules! or {
    (; $default:expr) => {
        $default
    };
    ($value:expr; $default:expr) => {
        $value
    };
}

/// One `#[test]` per entry, for the preset `E` in scope.
///
/// Entry: `Name`, `Name<E>`, optionally followed by
/// `{ cases: n, bytes: n }` or `{ cases: n, bytes: n, generate: f }`.
macro_rules! round_trip_tests {
    ($fork:ident;
     $($name:ident $(<$e:ident>)?
        $({ cases: $cases:expr, bytes: $bytes:expr $(, generate: $generate:expr)? $(,)? })?),*
     $(,)?) => {
        $(
            #[test]
            #[allow(non_snake_case)]
            fn $name() {
                crate::check::<types::$fork::$name $(<$e>)?, _>(
                    concat!(stringify!($fork), "::", stringify!($name)),
                    or!($($cases)?; crate::CASES),
                    or!($($bytes)?; crate::BYTES),
                    or!($($($generate)?)?; |u| u.arbitrary()),
                );
            }
        )*
    };
}

/// `mod $fork { mod mainnet { … } mod minimal { … } }` with one test per entry in each.
macro_rules! fork_round_trips {
    ($fork:ident: [$($entries:tt)*]) => {
        mod $fork {
            mod mainnet {
                #[allow(dead_code)]
                type E = types::MainnetEthSpec;
                round_trip_tests!($fork; $($entries)*);
            }
            mod minimal {
                #[allow(dead_code)]
                type E = types::MinimalEthSpec;
                round_trip_tests!($fork; $($entries)*);
            }
        }
    };
}

// Sizes: the default suits small containers; blocks, states and anything with a large fixed
// vector (sync committees, blobs, cells, historical batches) get fewer cases and more bytes.

fork_round_trips!(phase0: [
    Fork,
    VoluntaryExit,
    Eth1Block,
    SigningData,
    BeaconBlockHeader,
    HistoricalBatch<E> { cases: 16, bytes: 1 << 14 },
    Checkpoint,
    AttestationData,
    PendingAttestation<E>,
    ForkData,
    Eth1Data,
    DepositMessage,
    Validator,
    BeaconState<E> { cases: 8, bytes: 1 << 16, generate: crate::phase0_state::<E> },
    SignedBeaconBlockHeader,
    ProposerSlashing,
    SignedVoluntaryExit,
    Attestation<E>,
    AggregateAndProof<E>,
    SignedAggregateAndProof<E>,
    DepositData,
    Deposit,
    IndexedAttestation<E>,
    AttesterSlashing<E>,
    BeaconBlockBody<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    SignedBeaconBlock<E> { cases: 32, bytes: 1 << 16 },
]);

fork_round_trips!(altair: [
    // Defined in altair.
    FinalityBranch,
    CurrentSyncCommitteeBranch,
    NextSyncCommitteeBranch,
    SyncAggregate<E>,
    SyncAggregatorSelectionData,
    SyncCommitteeContribution<E>,
    ContributionAndProof<E>,
    SignedContributionAndProof<E>,
    SyncCommitteeMessage,
    LightClientHeader,
    LightClientOptimisticUpdate<E>,
    SyncCommittee<E> { cases: 32, bytes: 1 << 15 },
    BeaconBlockBody<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    SignedBeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    BeaconState<E> { cases: 8, bytes: 1 << 16, generate: crate::altair_state::<E> },
    LightClientFinalityUpdate<E>,
    LightClientBootstrap<E> { cases: 32, bytes: 1 << 15 },
    LightClientUpdate<E> { cases: 32, bytes: 1 << 15 },
    // Re-exported from phase0.
    AggregateAndProof<E>,
    Attestation<E>,
    AttestationData,
    AttesterSlashing<E>,
    BeaconBlockHeader,
    Checkpoint,
    Deposit,
    DepositData,
    DepositMessage,
    Eth1Block,
    Eth1Data,
    Fork,
    ForkData,
    HistoricalBatch<E> { cases: 16, bytes: 1 << 14 },
    IndexedAttestation<E>,
    ProposerSlashing,
    SignedAggregateAndProof<E>,
    SignedBeaconBlockHeader,
    SignedVoluntaryExit,
    SigningData,
    Validator,
    VoluntaryExit,
]);

fork_round_trips!(bellatrix: [
    // Defined in bellatrix.
    PowBlock,
    ExecutionPayloadHeader<E>,
    BeaconState<E> { cases: 8, bytes: 1 << 16, generate: crate::bellatrix_state::<E> },
    ExecutionPayload<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlockBody<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    SignedBeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    // Re-exported from altair.
    ContributionAndProof<E>,
    LightClientBootstrap<E> { cases: 32, bytes: 1 << 15 },
    LightClientFinalityUpdate<E>,
    LightClientHeader,
    LightClientOptimisticUpdate<E>,
    LightClientUpdate<E> { cases: 32, bytes: 1 << 15 },
    SignedContributionAndProof<E>,
    SyncAggregate<E>,
    SyncAggregatorSelectionData,
    SyncCommittee<E> { cases: 32, bytes: 1 << 15 },
    SyncCommitteeContribution<E>,
    SyncCommitteeMessage,
    CurrentSyncCommitteeBranch,
    FinalityBranch,
    NextSyncCommitteeBranch,
    // Re-exported from phase0.
    AggregateAndProof<E>,
    Attestation<E>,
    AttestationData,
    AttesterSlashing<E>,
    BeaconBlockHeader,
    Checkpoint,
    Deposit,
    DepositData,
    DepositMessage,
    Eth1Block,
    Eth1Data,
    Fork,
    ForkData,
    HistoricalBatch<E> { cases: 16, bytes: 1 << 14 },
    IndexedAttestation<E>,
    ProposerSlashing,
    SignedAggregateAndProof<E>,
    SignedBeaconBlockHeader,
    SignedVoluntaryExit,
    SigningData,
    Validator,
    VoluntaryExit,
]);

fork_round_trips!(capella: [
    // Defined in capella.
    ExecutionBranch,
    HistoricalSummary,
    ExecutionPayloadHeader<E>,
    BLSToExecutionChange,
    SignedBLSToExecutionChange,
    Withdrawal,
    ExecutionPayload<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlockBody<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    SignedBeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    BeaconState<E> { cases: 8, bytes: 1 << 16, generate: crate::capella_state::<E> },
    LightClientHeader<E>,
    LightClientOptimisticUpdate<E>,
    LightClientFinalityUpdate<E>,
    LightClientUpdate<E> { cases: 32, bytes: 1 << 15 },
    LightClientBootstrap<E> { cases: 32, bytes: 1 << 15 },
    // Re-exported from altair.
    CurrentSyncCommitteeBranch,
    FinalityBranch,
    NextSyncCommitteeBranch,
    ContributionAndProof<E>,
    SignedContributionAndProof<E>,
    SyncAggregate<E>,
    SyncAggregatorSelectionData,
    SyncCommittee<E> { cases: 32, bytes: 1 << 15 },
    SyncCommitteeContribution<E>,
    SyncCommitteeMessage,
    // Re-exported from bellatrix.
    PowBlock,
    // Re-exported from phase0.
    AggregateAndProof<E>,
    Attestation<E>,
    AttestationData,
    AttesterSlashing<E>,
    BeaconBlockHeader,
    Checkpoint,
    Deposit,
    DepositData,
    DepositMessage,
    Eth1Block,
    Eth1Data,
    Fork,
    ForkData,
    IndexedAttestation<E>,
    ProposerSlashing,
    SignedAggregateAndProof<E>,
    SignedBeaconBlockHeader,
    SignedVoluntaryExit,
    SigningData,
    Validator,
    VoluntaryExit,
]);

fork_round_trips!(deneb: [
    // Defined in deneb.
    ExecutionPayloadHeader<E>,
    ExecutionPayload<E> { cases: 32, bytes: 1 << 16 },
    BeaconState<E> { cases: 8, bytes: 1 << 16, generate: crate::deneb_state::<E> },
    LightClientHeader<E>,
    LightClientOptimisticUpdate<E>,
    LightClientFinalityUpdate<E>,
    LightClientUpdate<E> { cases: 32, bytes: 1 << 15 },
    LightClientBootstrap<E> { cases: 32, bytes: 1 << 15 },
    BlobIdentifier,
    BeaconBlockBody<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    SignedBeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    BlobSidecar<E> { cases: 16, bytes: 1 << 14 },
    // Re-exported from altair.
    ContributionAndProof<E>,
    SignedContributionAndProof<E>,
    SyncAggregate<E>,
    SyncAggregatorSelectionData,
    SyncCommittee<E> { cases: 32, bytes: 1 << 15 },
    SyncCommitteeContribution<E>,
    SyncCommitteeMessage,
    // Re-exported from bellatrix.
    PowBlock,
    // Re-exported from capella.
    BLSToExecutionChange,
    HistoricalSummary,
    SignedBLSToExecutionChange,
    Withdrawal,
    CurrentSyncCommitteeBranch,
    ExecutionBranch,
    FinalityBranch,
    NextSyncCommitteeBranch,
    // Re-exported from phase0.
    AggregateAndProof<E>,
    Attestation<E>,
    AttestationData,
    AttesterSlashing<E>,
    BeaconBlockHeader,
    Checkpoint,
    Deposit,
    DepositData,
    DepositMessage,
    Eth1Block,
    Eth1Data,
    Fork,
    ForkData,
    IndexedAttestation<E>,
    ProposerSlashing,
    SignedAggregateAndProof<E>,
    SignedBeaconBlockHeader,
    SignedVoluntaryExit,
    SigningData,
    Validator,
    VoluntaryExit,
]);

fork_round_trips!(electra: [
    // Defined in electra.
    FinalityBranch,
    CurrentSyncCommitteeBranch,
    NextSyncCommitteeBranch,
    PendingConsolidation,
    PendingPartialWithdrawal,
    SingleAttestation,
    ConsolidationRequest,
    WithdrawalRequest,
    DepositRequest,
    PendingDeposit,
    BeaconState<E> { cases: 8, bytes: 1 << 16, generate: crate::electra_state::<E> },
    LightClientFinalityUpdate<E>,
    LightClientUpdate<E> { cases: 32, bytes: 1 << 15 },
    LightClientBootstrap<E> { cases: 32, bytes: 1 << 15 },
    Attestation<E>,
    AggregateAndProof<E>,
    SignedAggregateAndProof<E>,
    IndexedAttestation<E>,
    AttesterSlashing<E>,
    ExecutionRequests<E>,
    BeaconBlockBody<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    SignedBeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    NewPayloadRequest<E> { cases: 32, bytes: 1 << 16 },
    // Re-exported from altair.
    ContributionAndProof<E>,
    SignedContributionAndProof<E>,
    SyncAggregate<E>,
    SyncAggregatorSelectionData,
    SyncCommittee<E> { cases: 32, bytes: 1 << 15 },
    SyncCommitteeContribution<E>,
    SyncCommitteeMessage,
    // Re-exported from bellatrix.
    PowBlock,
    // Re-exported from capella.
    BLSToExecutionChange,
    HistoricalSummary,
    SignedBLSToExecutionChange,
    Withdrawal,
    // Re-exported from deneb.
    ExecutionBranch,
    BlobIdentifier,
    BlobSidecar<E> { cases: 16, bytes: 1 << 14 },
    ExecutionPayload<E> { cases: 32, bytes: 1 << 16 },
    ExecutionPayloadHeader<E>,
    LightClientHeader<E>,
    LightClientOptimisticUpdate<E>,
    // Re-exported from phase0.
    AttestationData,
    BeaconBlockHeader,
    Checkpoint,
    Deposit,
    DepositData,
    DepositMessage,
    Eth1Block,
    Eth1Data,
    Fork,
    ForkData,
    ProposerSlashing,
    SignedBeaconBlockHeader,
    SignedVoluntaryExit,
    SigningData,
    Validator,
    VoluntaryExit,
]);

fork_round_trips!(fulu: [
    // Defined in fulu.
    PartialDataColumnPartsMetadata<E>,
    PartialDataColumnGroupID,
    BeaconState<E> { cases: 8, bytes: 1 << 16, generate: crate::fulu_state::<E> },
    PartialDataColumnHeader<E>,
    PartialDataColumnSidecar<E> { cases: 16, bytes: 1 << 16 },
    DataColumnsByRootIdentifier<E>,
    MatrixEntry<E> { cases: 32, bytes: 1 << 12 },
    DataColumnSidecar<E> { cases: 16, bytes: 1 << 16 },
    // Re-exported from altair.
    ContributionAndProof<E>,
    SignedContributionAndProof<E>,
    SyncAggregate<E>,
    SyncAggregatorSelectionData,
    SyncCommittee<E> { cases: 32, bytes: 1 << 15 },
    SyncCommitteeContribution<E>,
    SyncCommitteeMessage,
    // Re-exported from bellatrix.
    PowBlock,
    // Re-exported from capella.
    BLSToExecutionChange,
    HistoricalSummary,
    SignedBLSToExecutionChange,
    Withdrawal,
    // Re-exported from deneb.
    ExecutionPayload<E> { cases: 32, bytes: 1 << 16 },
    ExecutionPayloadHeader<E>,
    LightClientHeader<E>,
    LightClientOptimisticUpdate<E>,
    // Re-exported from electra.
    AggregateAndProof<E>,
    Attestation<E>,
    AttesterSlashing<E>,
    BeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlockBody<E> { cases: 32, bytes: 1 << 16 },
    ConsolidationRequest,
    DepositRequest,
    ExecutionRequests<E>,
    IndexedAttestation<E>,
    LightClientBootstrap<E> { cases: 32, bytes: 1 << 15 },
    LightClientFinalityUpdate<E>,
    LightClientUpdate<E> { cases: 32, bytes: 1 << 15 },
    NewPayloadRequest<E> { cases: 32, bytes: 1 << 16 },
    PendingConsolidation,
    PendingDeposit,
    PendingPartialWithdrawal,
    SignedAggregateAndProof<E>,
    SignedBeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    SingleAttestation,
    WithdrawalRequest,
    CurrentSyncCommitteeBranch,
    ExecutionBranch,
    FinalityBranch,
    NextSyncCommitteeBranch,
    // Re-exported from phase0.
    AttestationData,
    BeaconBlockHeader,
    Checkpoint,
    Deposit,
    DepositData,
    DepositMessage,
    Eth1Block,
    Eth1Data,
    Fork,
    ForkData,
    ProposerSlashing,
    SignedBeaconBlockHeader,
    SignedVoluntaryExit,
    SigningData,
    Validator,
    VoluntaryExit,
]);

fork_round_trips!(gloas: [
    // Defined in gloas.
    BuilderIndex,
    PayloadStatus,
    AggregationBits,
    AttestingIndices,
    Transaction,
    BlockAccessList,
    DepositRequests,
    WithdrawalRequests,
    ConsolidationRequests,
    BuilderDepositRequests,
    BuilderExitRequests,
    FinalityBranch,
    CurrentSyncCommitteeBranch,
    NextSyncCommitteeBranch,
    ExecutionBranch,
    LightClientHeader,
    LightClientBootstrap<E> { cases: 32, bytes: 1 << 15 },
    LightClientUpdate<E> { cases: 32, bytes: 1 << 15 },
    LightClientFinalityUpdate<E>,
    LightClientOptimisticUpdate<E>,
    Builder,
    BuilderPendingWithdrawal,
    BuilderPendingPayment,
    BuilderDepositRequest,
    BuilderExitRequest,
    PayloadAttestationData,
    PayloadAttestation<E>,
    PayloadAttestationMessage,
    IndexedPayloadAttestation<E>,
    ExecutionPayloadBid,
    SignedExecutionPayloadBid,
    ExecutionPayloadEnvelope<E> { cases: 32, bytes: 1 << 16 },
    SignedExecutionPayloadEnvelope<E> { cases: 32, bytes: 1 << 16 },
    Attestation<E>,
    IndexedAttestation,
    AttesterSlashing,
    AggregateAndProof<E>,
    SignedAggregateAndProof<E>,
    ExecutionPayload<E> { cases: 32, bytes: 1 << 16 },
    ExecutionRequests,
    NewPayloadRequest<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlockBody<E> { cases: 32, bytes: 1 << 16 },
    BeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    SignedBeaconBlock<E> { cases: 32, bytes: 1 << 16 },
    BeaconState<E> { cases: 8, bytes: 1 << 16, generate: crate::gloas_state::<E> },
    DataColumnSidecar<E> { cases: 16, bytes: 1 << 16 },
    ProposerPreferences,
    SignedProposerPreferences,
    PartialDataColumnSidecar<E> { cases: 16, bytes: 1 << 16 },
    PartialDataColumnGroupID,
    PartialDataColumnPartsMetadata,
    // Re-exported from altair.
    ContributionAndProof<E>,
    SignedContributionAndProof<E>,
    SyncAggregate<E>,
    SyncAggregatorSelectionData,
    SyncCommittee<E> { cases: 32, bytes: 1 << 15 },
    SyncCommitteeContribution<E>,
    SyncCommitteeMessage,
    // Re-exported from bellatrix.
    PowBlock,
    // Re-exported from capella.
    BLSToExecutionChange,
    HistoricalSummary,
    SignedBLSToExecutionChange,
    Withdrawal,
    // Re-exported from electra.
    ConsolidationRequest,
    DepositRequest,
    PendingConsolidation,
    PendingDeposit,
    PendingPartialWithdrawal,
    SingleAttestation,
    WithdrawalRequest,
    // Re-exported from fulu.
    DataColumnsByRootIdentifier<E>,
    MatrixEntry<E> { cases: 32, bytes: 1 << 12 },
    // Re-exported from phase0.
    AttestationData,
    BeaconBlockHeader,
    Checkpoint,
    Deposit,
    DepositData,
    DepositMessage,
    Eth1Block,
    Eth1Data,
    Fork,
    ForkData,
    ProposerSlashing,
    SignedBeaconBlockHeader,
    SignedVoluntaryExit,
    SigningData,
    Validator,
    VoluntaryExit,
]);
