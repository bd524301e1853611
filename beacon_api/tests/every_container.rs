//! Every consensus container of every fork, generated with `arbitrary` from seeded bytes,
//! survives JSON (the `types` serde feature in the Beacon API's conventions): encode, decode,
//! equal. The fixtures in `containers.rs` pin the shape; this pins that nothing is lost.

use arbitrary::{Arbitrary, Unstructured};
use serde::Serialize;
use serde::de::DeserializeOwned;
use splitmix::SplitMix64;
use types::{MinimalEthSpec, altair, bellatrix, capella, deneb, electra, fulu, phase0};

type E = MinimalEthSpec;

/// Seeds per container.
const CASES: u64 = 8;

fn round_trip<T>(name: &str)
where
    T: for<'a> Arbitrary<'a> + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let mut built = 0;
    for seed in 0..CASES {
        let mut rng = SplitMix64::new(seed);
        // Enough for the largest fixed-size fields of the minimal preset (a blob is 128 KiB).
        let mut bytes = vec![0u8; 1 << 18];
        rng.fill_bytes(&mut bytes);
        let Ok(value) = T::arbitrary(&mut Unstructured::new(&bytes)) else {
            continue;
        };
        let json =
            serde_json::to_string(&value).unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
        let back: T =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
        assert_eq!(back, value, "{name} seed {seed}");
        built += 1;
    }
    assert!(
        built > 0,
        "{name}: no seed built a value, nothing was checked"
    );
}

macro_rules! every {
    ($($ty:ty,)+) => {
        #[test]
        fn every_container_round_trips_through_json() {
            let mut checked = 0;
            $(
                round_trip::<$ty>(stringify!($ty));
                checked += 1;
            )+
            assert_eq!(checked, 107);
        }
    };
}

every! {
        phase0::Fork,
        phase0::VoluntaryExit,
        phase0::Eth1Block,
        phase0::SigningData,
        phase0::BeaconBlockHeader,
        phase0::HistoricalBatch<E>,
        phase0::Checkpoint,
        phase0::AttestationData,
        phase0::PendingAttestation<E>,
        phase0::ForkData,
        phase0::Eth1Data,
        phase0::DepositMessage,
        phase0::Validator,
        phase0::BeaconState<E>,
        phase0::SignedBeaconBlockHeader,
        phase0::ProposerSlashing,
        phase0::SignedVoluntaryExit,
        phase0::Attestation<E>,
        phase0::AggregateAndProof<E>,
        phase0::SignedAggregateAndProof<E>,
        phase0::DepositData,
        phase0::Deposit,
        phase0::IndexedAttestation<E>,
        phase0::AttesterSlashing<E>,
        phase0::BeaconBlockBody<E>,
        phase0::BeaconBlock<E>,
        phase0::SignedBeaconBlock<E>,
        altair::SyncAggregate<E>,
        altair::SyncAggregatorSelectionData,
        altair::SyncCommitteeContribution<E>,
        altair::ContributionAndProof<E>,
        altair::SignedContributionAndProof<E>,
        altair::SyncCommitteeMessage,
        altair::LightClientHeader,
        altair::LightClientOptimisticUpdate<E>,
        altair::SyncCommittee<E>,
        altair::BeaconBlockBody<E>,
        altair::BeaconBlock<E>,
        altair::SignedBeaconBlock<E>,
        altair::BeaconState<E>,
        altair::LightClientFinalityUpdate<E>,
        altair::LightClientBootstrap<E>,
        altair::LightClientUpdate<E>,
        bellatrix::PowBlock,
        bellatrix::ExecutionPayloadHeader<E>,
        bellatrix::BeaconState<E>,
        bellatrix::ExecutionPayload<E>,
        bellatrix::BeaconBlockBody<E>,
        bellatrix::BeaconBlock<E>,
        bellatrix::SignedBeaconBlock<E>,
        capella::HistoricalSummary,
        capella::ExecutionPayloadHeader<E>,
        capella::BLSToExecutionChange,
        capella::SignedBLSToExecutionChange,
        capella::Withdrawal,
        capella::ExecutionPayload<E>,
        capella::BeaconBlockBody<E>,
        capella::BeaconBlock<E>,
        capella::SignedBeaconBlock<E>,
        capella::BeaconState<E>,
        capella::LightClientHeader<E>,
        capella::LightClientOptimisticUpdate<E>,
        capella::LightClientFinalityUpdate<E>,
        capella::LightClientUpdate<E>,
        capella::LightClientBootstrap<E>,
        deneb::ExecutionPayloadHeader<E>,
        deneb::ExecutionPayload<E>,
        deneb::BeaconState<E>,
        deneb::LightClientHeader<E>,
        deneb::LightClientOptimisticUpdate<E>,
        deneb::LightClientFinalityUpdate<E>,
        deneb::LightClientUpdate<E>,
        deneb::LightClientBootstrap<E>,
        deneb::BlobIdentifier,
        deneb::BeaconBlockBody<E>,
        deneb::BeaconBlock<E>,
        deneb::SignedBeaconBlock<E>,
        deneb::BlobSidecar<E>,
        electra::PendingConsolidation,
        electra::PendingPartialWithdrawal,
        electra::SingleAttestation,
        electra::ConsolidationRequest,
        electra::WithdrawalRequest,
        electra::DepositRequest,
        electra::PendingDeposit,
        electra::BeaconState<E>,
        electra::LightClientFinalityUpdate<E>,
        electra::LightClientUpdate<E>,
        electra::LightClientBootstrap<E>,
        electra::Attestation<E>,
        electra::AggregateAndProof<E>,
        electra::SignedAggregateAndProof<E>,
        electra::IndexedAttestation<E>,
        electra::AttesterSlashing<E>,
        electra::ExecutionRequests<E>,
        electra::BeaconBlockBody<E>,
        electra::BeaconBlock<E>,
        electra::SignedBeaconBlock<E>,
        electra::NewPayloadRequest<E>,
        fulu::PartialDataColumnPartsMetadata<E>,
        fulu::PartialDataColumnGroupID,
        fulu::BeaconState<E>,
        fulu::PartialDataColumnHeader<E>,
        fulu::PartialDataColumnSidecar<E>,
        fulu::DataColumnsByRootIdentifier<E>,
        fulu::MatrixEntry<E>,
        fulu::DataColumnSidecar<E>,
}
