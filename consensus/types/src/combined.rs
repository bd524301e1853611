//! Fork-generic values: one enum per container whose layout changes across forks, with a
//! variant per fork in which the container exists.
//!
//! Untrusted bytes are decoded by fork: either the caller knows the fork (gossip topics and
//! req/resp context bytes carry the fork digest), or, for blocks and states, the fork is read
//! from the slot in the bytes and the chain's fork schedule.
//!
//! One table, [`fork_variants!`], lists each enum's forks and per-fork types; this module and
//! the Beacon API's JSON (`beacon_api::envelope`) expand it. A field that not every fork has
//! (the execution payload and blob commitments, which leave the Gloas body for the bid and the
//! envelope; the bid itself) has a *partial* accessor returning `Option`, generated with each
//! fork named on the side it falls on, so a new fork is a compile error here, and callers
//! outside `types` name every fork instead of matching with a catch-all arm.

use ssz::{Decode, DecodeError, Encode};
use tree_hash::{Hash256, PackedEncoding, TreeHash, TreeHashType};

use crate::{
    BLSSignature, ChainSpec, EthSpec, ForkName, KZGCommitment, Root, Slot, ValidatorIndex, altair,
    electra, gloas, phase0,
};

/// Declares a fork-generic enum over the per-fork containers of the same name, with SSZ
/// encoding and tree hashing delegated to the variant, decoding by fork, and accessors for the
/// fields every variant shares.
///
/// It is invoked through [`fork_variants!`], which appends `Name { Variant => type, … }`. A
/// `partial` accessor names the forks that have the field (`[…]` first) and those that do not
/// (second), and returns `Option`; `partial_mut` is the same for a `&mut` accessor.
macro_rules! fork_enum {
    (
        $(#[$meta:meta])*
        $(fields { $($field:ident, $field_mut:ident : $fty:ty = $fname:ident;)* })?
        $(getters { $($getter:ident : $gty:ty = |$b:ident| $body:expr;)* })?
        $(partial { $($pgetter:ident : $pty:ty = |$pb:ident| $pbody:expr,
            [$($pin:ident),*], [$($pout:ident),*];)* })?
        $(partial_mut { $($mgetter:ident : $mty:ty = |$mb:ident| $mbody:expr,
            [$($min:ident),*], [$($mout:ident),*];)* })?
        ;
        $name:ident $variants:tt
    ) => {
        fork_enum!(@base [$(#[$meta])*] $name $variants);
        $($(fork_enum!(@field $name $variants $field $field_mut $fty, $fname);)*)?
        $($(fork_enum!(@getter $name $variants $getter $gty, $b, $body);)*)?
        $($(
            impl<E: EthSpec> $name<E> {
                #[doc = concat!("`", stringify!($pbody), "` at the forks that have it (",
                    $(stringify!($pin), " ",)* "), `None` at the others.")]
                pub fn $pgetter(&self) -> Option<$pty> {
                    match self {
                        $(Self::$pin($pb) => Some($pbody),)*
                        $(Self::$pout(_) => None,)*
                    }
                }
            }
        )*)?
        $($(
            impl<E: EthSpec> $name<E> {
                #[doc = concat!("`", stringify!($mbody), "` at the forks that have it (",
                    $(stringify!($min), " ",)* "), `None` at the others.")]
                pub fn $mgetter(&mut self) -> Option<$mty> {
                    match self {
                        $(Self::$min($mb) => Some($mbody),)*
                        $(Self::$mout(_) => None,)*
                    }
                }
            }
        )*)?
    };

    (@base [$($attr:tt)*] $name:ident { $($variant:ident => $ty:ty),+ $(,)? }) => {
        $($attr)*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name<E: EthSpec> {
            $(
                #[doc = concat!("`", stringify!($ty), "`.")]
                $variant($ty),
            )+
        }

        impl<E: EthSpec> $name<E> {
            /// The forks in which this container exists, oldest first.
            pub const FORKS: &'static [ForkName] = &[$(ForkName::$variant),+];

            /// The fork of this value.
            pub fn fork_name(&self) -> ForkName {
                match self {
                    $(Self::$variant(_) => ForkName::$variant,)+
                }
            }

            /// Decodes untrusted bytes as this container of `fork`.
            pub fn from_ssz_bytes_by_fork(bytes: &[u8], fork: ForkName) -> Result<Self, DecodeError> {
                match fork {
                    $(ForkName::$variant => {
                        <$ty as Decode>::from_ssz_bytes(bytes).map(Self::$variant)
                    })+
                    #[allow(unreachable_patterns)]
                    other => Err(DecodeError::BytesInvalid(format!(
                        "{} does not exist at fork {other}",
                        stringify!($name)
                    ))),
                }
            }
        }

        impl<E: EthSpec> Encode for $name<E> {
            fn is_ssz_fixed_len() -> bool {
                // The variants differ in size; a fork-generic value is only ever encoded alone.
                false
            }

            fn ssz_append(&self, buf: &mut Vec<u8>) {
                match self {
                    $(Self::$variant(inner) => inner.ssz_append(buf),)+
                }
            }

            fn ssz_bytes_len(&self) -> usize {
                match self {
                    $(Self::$variant(inner) => inner.ssz_bytes_len(),)+
                }
            }
        }

        impl<E: EthSpec> TreeHash for $name<E> {
            fn tree_hash_type() -> TreeHashType {
                TreeHashType::Container
            }

            fn tree_hash_packed_encoding(&self) -> PackedEncoding {
                // Containers are never packed; their root stands in for them.
                PackedEncoding::from_slice(self.tree_hash_root().as_slice())
            }

            fn tree_hash_packing_factor() -> usize {
                1
            }

            fn tree_hash_root(&self) -> Hash256 {
                match self {
                    $(Self::$variant(inner) => inner.tree_hash_root(),)+
                }
            }
        }
    };

    (@field $name:ident { $($variant:ident => $ty:ty),+ $(,)? }
        $field:ident $field_mut:ident $fty:ty, $fname:ident) => {
        impl<E: EthSpec> $name<E> {
            #[doc = concat!("`", stringify!($fname), "`, present at every fork.")]
            pub fn $field(&self) -> &$fty {
                match self {
                    $(Self::$variant(inner) => &inner.$fname,)+
                }
            }

            #[doc = concat!("Mutable `", stringify!($fname), "`.")]
            pub fn $field_mut(&mut self) -> &mut $fty {
                match self {
                    $(Self::$variant(inner) => &mut inner.$fname,)+
                }
            }
        }
    };

    (@getter $name:ident { $($variant:ident => $ty:ty),+ $(,)? }
        $getter:ident $gty:ty, $b:ident, $body:expr) => {
        impl<E: EthSpec> $name<E> {
            #[doc = concat!("`", stringify!($body), "`, present at every fork.")]
            pub fn $getter(&self) -> $gty {
                match self {
                    $(Self::$variant($b) => $body,)+
                }
            }
        }
    };
}

/// Reads the little-endian `u64` at `offset`, or says why it cannot.
fn read_u64_at(bytes: &[u8], offset: usize) -> Result<u64, DecodeError> {
    bytes
        .get(offset..offset + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or(DecodeError::InvalidByteLength {
            len: bytes.len(),
            expected: offset + 8,
        })
}

/// The table of the fork enums: `fork_variants!(Name, callback, args…)` invokes
/// `callback! { args… ; Name { Variant => type, … } }` with the forks at which container `Name`
/// exists, oldest first, and each fork's type. [`fork_enum!`] (here) and the Beacon API's JSON
/// expand it; `fork_variants!(@each callback)` invokes `callback` once per enum, with no
/// arguments. The `fork_enums_cover_every_fork` test fails when a fork of [`ForkName::ALL`]
/// misses from an enum that does not end at an older fork on purpose.
#[macro_export]
macro_rules! fork_variants {
    (@each $callback:ident) => {
        $crate::fork_variants!(BeaconState, $callback);
        $crate::fork_variants!(SignedBeaconBlock, $callback);
        $crate::fork_variants!(BeaconBlock, $callback);
        $crate::fork_variants!(BeaconBlockBody, $callback);
        $crate::fork_variants!(ExecutionPayload, $callback);
        $crate::fork_variants!(ExecutionPayloadHeader, $callback);
        $crate::fork_variants!(Attestation, $callback);
        $crate::fork_variants!(AttesterSlashing, $callback);
        $crate::fork_variants!(BlobSidecar, $callback);
        $crate::fork_variants!(DataColumnSidecar, $callback);
        $crate::fork_variants!(LightClientHeader, $callback);
        $crate::fork_variants!(LightClientBootstrap, $callback);
        $crate::fork_variants!(LightClientUpdate, $callback);
        $crate::fork_variants!(LightClientFinalityUpdate, $callback);
        $crate::fork_variants!(LightClientOptimisticUpdate, $callback);
    };
    (BeaconState, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            BeaconState {
                Phase0 => $crate::phase0::BeaconState<E>,
                Altair => $crate::altair::BeaconState<E>,
                Bellatrix => $crate::bellatrix::BeaconState<E>,
                Capella => $crate::capella::BeaconState<E>,
                Deneb => $crate::deneb::BeaconState<E>,
                Electra => $crate::electra::BeaconState<E>,
                Fulu => $crate::fulu::BeaconState<E>,
                Gloas => $crate::gloas::BeaconState<E>,
            }
        }
    };
    (SignedBeaconBlock, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            SignedBeaconBlock {
                Phase0 => $crate::phase0::SignedBeaconBlock<E>,
                Altair => $crate::altair::SignedBeaconBlock<E>,
                Bellatrix => $crate::bellatrix::SignedBeaconBlock<E>,
                Capella => $crate::capella::SignedBeaconBlock<E>,
                Deneb => $crate::deneb::SignedBeaconBlock<E>,
                Electra => $crate::electra::SignedBeaconBlock<E>,
                Fulu => $crate::fulu::SignedBeaconBlock<E>,
                Gloas => $crate::gloas::SignedBeaconBlock<E>,
            }
        }
    };
    (BeaconBlock, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            BeaconBlock {
                Phase0 => $crate::phase0::BeaconBlock<E>,
                Altair => $crate::altair::BeaconBlock<E>,
                Bellatrix => $crate::bellatrix::BeaconBlock<E>,
                Capella => $crate::capella::BeaconBlock<E>,
                Deneb => $crate::deneb::BeaconBlock<E>,
                Electra => $crate::electra::BeaconBlock<E>,
                Fulu => $crate::fulu::BeaconBlock<E>,
                Gloas => $crate::gloas::BeaconBlock<E>,
            }
        }
    };
    (BeaconBlockBody, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            BeaconBlockBody {
                Phase0 => $crate::phase0::BeaconBlockBody<E>,
                Altair => $crate::altair::BeaconBlockBody<E>,
                Bellatrix => $crate::bellatrix::BeaconBlockBody<E>,
                Capella => $crate::capella::BeaconBlockBody<E>,
                Deneb => $crate::deneb::BeaconBlockBody<E>,
                Electra => $crate::electra::BeaconBlockBody<E>,
                Fulu => $crate::fulu::BeaconBlockBody<E>,
                Gloas => $crate::gloas::BeaconBlockBody<E>,
            }
        }
    };
    (ExecutionPayload, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            ExecutionPayload {
                Bellatrix => $crate::bellatrix::ExecutionPayload<E>,
                Capella => $crate::capella::ExecutionPayload<E>,
                Deneb => $crate::deneb::ExecutionPayload<E>,
                Electra => $crate::electra::ExecutionPayload<E>,
                Fulu => $crate::fulu::ExecutionPayload<E>,
                Gloas => $crate::gloas::ExecutionPayload<E>,
            }
        }
    };
    (ExecutionPayloadHeader, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            ExecutionPayloadHeader {
                Bellatrix => $crate::bellatrix::ExecutionPayloadHeader<E>,
                Capella => $crate::capella::ExecutionPayloadHeader<E>,
                Deneb => $crate::deneb::ExecutionPayloadHeader<E>,
                Electra => $crate::electra::ExecutionPayloadHeader<E>,
                Fulu => $crate::fulu::ExecutionPayloadHeader<E>,
            }
        }
    };
    (Attestation, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            Attestation {
                Phase0 => $crate::phase0::Attestation<E>,
                Altair => $crate::altair::Attestation<E>,
                Bellatrix => $crate::bellatrix::Attestation<E>,
                Capella => $crate::capella::Attestation<E>,
                Deneb => $crate::deneb::Attestation<E>,
                Electra => $crate::electra::Attestation<E>,
                Fulu => $crate::fulu::Attestation<E>,
                Gloas => $crate::gloas::Attestation<E>,
            }
        }
    };
    (AttesterSlashing, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            AttesterSlashing {
                Phase0 => $crate::phase0::AttesterSlashing<E>,
                Altair => $crate::altair::AttesterSlashing<E>,
                Bellatrix => $crate::bellatrix::AttesterSlashing<E>,
                Capella => $crate::capella::AttesterSlashing<E>,
                Deneb => $crate::deneb::AttesterSlashing<E>,
                Electra => $crate::electra::AttesterSlashing<E>,
                Fulu => $crate::fulu::AttesterSlashing<E>,
                Gloas => $crate::gloas::AttesterSlashing,
            }
        }
    };
    (BlobSidecar, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            BlobSidecar {
                Deneb => $crate::deneb::BlobSidecar<E>,
                Electra => $crate::electra::BlobSidecar<E>,
            }
        }
    };
    (DataColumnSidecar, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            DataColumnSidecar {
                Fulu => $crate::fulu::DataColumnSidecar<E>,
                Gloas => $crate::gloas::DataColumnSidecar<E>,
            }
        }
    };
    (LightClientHeader, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            LightClientHeader {
                Altair => $crate::altair::LightClientHeader,
                Bellatrix => $crate::bellatrix::LightClientHeader,
                Capella => $crate::capella::LightClientHeader<E>,
                Deneb => $crate::deneb::LightClientHeader<E>,
                Electra => $crate::electra::LightClientHeader<E>,
                Fulu => $crate::fulu::LightClientHeader<E>,
                Gloas => $crate::gloas::LightClientHeader,
            }
        }
    };
    (LightClientBootstrap, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            LightClientBootstrap {
                Altair => $crate::altair::LightClientBootstrap<E>,
                Bellatrix => $crate::bellatrix::LightClientBootstrap<E>,
                Capella => $crate::capella::LightClientBootstrap<E>,
                Deneb => $crate::deneb::LightClientBootstrap<E>,
                Electra => $crate::electra::LightClientBootstrap<E>,
                Fulu => $crate::fulu::LightClientBootstrap<E>,
                Gloas => $crate::gloas::LightClientBootstrap<E>,
            }
        }
    };
    (LightClientUpdate, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            LightClientUpdate {
                Altair => $crate::altair::LightClientUpdate<E>,
                Bellatrix => $crate::bellatrix::LightClientUpdate<E>,
                Capella => $crate::capella::LightClientUpdate<E>,
                Deneb => $crate::deneb::LightClientUpdate<E>,
                Electra => $crate::electra::LightClientUpdate<E>,
                Fulu => $crate::fulu::LightClientUpdate<E>,
                Gloas => $crate::gloas::LightClientUpdate<E>,
            }
        }
    };
    (LightClientFinalityUpdate, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            LightClientFinalityUpdate {
                Altair => $crate::altair::LightClientFinalityUpdate<E>,
                Bellatrix => $crate::bellatrix::LightClientFinalityUpdate<E>,
                Capella => $crate::capella::LightClientFinalityUpdate<E>,
                Deneb => $crate::deneb::LightClientFinalityUpdate<E>,
                Electra => $crate::electra::LightClientFinalityUpdate<E>,
                Fulu => $crate::fulu::LightClientFinalityUpdate<E>,
                Gloas => $crate::gloas::LightClientFinalityUpdate<E>,
            }
        }
    };
    (LightClientOptimisticUpdate, $callback:ident $(, $($args:tt)*)?) => {
        $callback! {
            $($($args)*)? ;
            LightClientOptimisticUpdate {
                Altair => $crate::altair::LightClientOptimisticUpdate<E>,
                Bellatrix => $crate::bellatrix::LightClientOptimisticUpdate<E>,
                Capella => $crate::capella::LightClientOptimisticUpdate<E>,
                Deneb => $crate::deneb::LightClientOptimisticUpdate<E>,
                Electra => $crate::electra::LightClientOptimisticUpdate<E>,
                Fulu => $crate::fulu::LightClientOptimisticUpdate<E>,
                Gloas => $crate::gloas::LightClientOptimisticUpdate<E>,
            }
        }
    };
}

crate::fork_variants! { BeaconState, fork_enum,
    /// A `BeaconState` of any fork.
    fields {
        genesis_time, genesis_time_mut: u64 = genesis_time;
        genesis_validators_root, genesis_validators_root_mut: Root = genesis_validators_root;
        slot, slot_mut: Slot = slot;
        fork, fork_mut: phase0::Fork = fork;
        latest_block_header, latest_block_header_mut: phase0::BeaconBlockHeader = latest_block_header;
        block_roots, block_roots_mut: milhouse::Vector<Root, E::SlotsPerHistoricalRoot> = block_roots;
        state_roots, state_roots_mut: milhouse::Vector<Root, E::SlotsPerHistoricalRoot> = state_roots;
        historical_roots, historical_roots_mut: milhouse::List<Root, E::HistoricalRootsLimit> = historical_roots;
        eth1_data, eth1_data_mut: phase0::Eth1Data = eth1_data;
        eth1_data_votes, eth1_data_votes_mut: milhouse::List<phase0::Eth1Data, E::SlotsPerEth1VotingPeriod> = eth1_data_votes;
        eth1_deposit_index, eth1_deposit_index_mut: u64 = eth1_deposit_index;
        randao_mixes, randao_mixes_mut: milhouse::Vector<Root, E::EpochsPerHistoricalVector> = randao_mixes;
        slashings, slashings_mut: milhouse::Vector<u64, E::EpochsPerSlashingsVector> = slashings;
        justification_bits, justification_bits_mut: ssz_types::BitVector<ssz_types::typenum::U4> = justification_bits;
        previous_justified_checkpoint, previous_justified_checkpoint_mut: phase0::Checkpoint = previous_justified_checkpoint;
        current_justified_checkpoint, current_justified_checkpoint_mut: phase0::Checkpoint = current_justified_checkpoint;
        finalized_checkpoint, finalized_checkpoint_mut: phase0::Checkpoint = finalized_checkpoint;
    }
    partial {
        // Gloas holds the registry and the balances as progressive lists (issue 42 runs them).
        validators: &phase0::ValidatorRegistry<E> = |s| &s.validators, [Phase0, Altair, Bellatrix, Capella, Deneb, Electra, Fulu], [Gloas];
        balances: &packed_list::PackedList<u64, E::ValidatorRegistryLimit> = |s| &s.balances,
            [Phase0, Altair, Bellatrix, Capella, Deneb, Electra, Fulu], [Gloas];
        latest_execution_payload_bid: &gloas::ExecutionPayloadBid =
            |s| &s.latest_execution_payload_bid,
            [Gloas], [Phase0, Altair, Bellatrix, Capella, Deneb, Electra, Fulu];
    }
    partial_mut {
        balances_mut: &mut packed_list::PackedList<u64, E::ValidatorRegistryLimit> =
            |s| &mut s.balances, [Phase0, Altair, Bellatrix, Capella, Deneb, Electra, Fulu], [Gloas];
    }
}

/// Byte offset of `slot` in an SSZ `BeaconState` of every fork: after `genesis_time` (8) and
/// `genesis_validators_root` (32).
const STATE_SLOT_OFFSET: usize = 40;

impl<E: EthSpec> BeaconState<E> {
    /// Decodes untrusted bytes, taking the fork from the state's own slot and `spec`'s schedule.
    pub fn from_ssz_bytes(bytes: &[u8], spec: &ChainSpec) -> Result<Self, DecodeError> {
        let slot = read_u64_at(bytes, STATE_SLOT_OFFSET)?;
        Self::from_ssz_bytes_by_fork(bytes, spec.fork_name_at_slot::<E>(slot))
    }
}

crate::fork_variants! { SignedBeaconBlock, fork_enum,
    /// A `SignedBeaconBlock` of any fork.
    getters {
        slot: Slot = |b| b.message.slot;
        proposer_index: ValidatorIndex = |b| b.message.proposer_index;
        parent_root: Root = |b| b.message.parent_root;
        state_root: Root = |b| b.message.state_root;
        signature: BLSSignature = |b| b.signature;
        canonical_root: Root = |b| b.message.tree_hash_root();
        body_root: Root = |b| b.message.body.tree_hash_root();
    }
    partial {
        execution_block_hash: Root = |b| b.message.body.execution_payload.block_hash,
            [Bellatrix, Capella, Deneb, Electra, Fulu], [Phase0, Altair, Gloas];
        blob_kzg_commitments: &[KZGCommitment] = |b| &b.message.body.blob_kzg_commitments[..],
            [Deneb, Electra, Fulu], [Phase0, Altair, Bellatrix, Capella, Gloas];
        execution_requests: &electra::ExecutionRequests<E> = |b| &b.message.body.execution_requests,
            [Electra, Fulu], [Phase0, Altair, Bellatrix, Capella, Deneb, Gloas];
        sync_aggregate: &altair::SyncAggregate<E> = |b| &b.message.body.sync_aggregate,
            [Altair, Bellatrix, Capella, Deneb, Electra, Fulu, Gloas], [Phase0];
        signed_execution_payload_bid: &gloas::SignedExecutionPayloadBid =
            |b| &b.message.body.signed_execution_payload_bid,
            [Gloas], [Phase0, Altair, Bellatrix, Capella, Deneb, Electra, Fulu];
    }
}

impl<E: EthSpec> SignedBeaconBlock<E> {
    /// Decodes untrusted bytes, taking the fork from the block's slot and `spec`'s schedule.
    pub fn from_ssz_bytes(bytes: &[u8], spec: &ChainSpec) -> Result<Self, DecodeError> {
        let slot = Self::slot_from_ssz_bytes(bytes)?;
        Self::from_ssz_bytes_by_fork(bytes, spec.fork_name_at_slot::<E>(slot))
    }

    /// The slot of an SSZ `SignedBeaconBlock` of any fork, read without decoding the block (a
    /// server handing out stored bytes needs only the slot and, by it, the fork).
    pub fn slot_from_ssz_bytes(bytes: &[u8]) -> Result<Slot, DecodeError> {
        // `message` is variable-size: the first 4 bytes are its offset; its slot comes first.
        let offset = bytes
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or(DecodeError::InvalidByteLength {
                len: bytes.len(),
                expected: 4,
            })?;
        read_u64_at(bytes, offset as usize)
    }

    /// The block as a `SignedBeaconBlockHeader`: the same signature over the same root, with the
    /// body replaced by its root.
    pub fn signed_block_header(&self) -> phase0::SignedBeaconBlockHeader {
        phase0::SignedBeaconBlockHeader {
            message: phase0::BeaconBlockHeader {
                slot: self.slot(),
                proposer_index: self.proposer_index(),
                parent_root: self.parent_root(),
                state_root: self.state_root(),
                body_root: self.body_root(),
            },
            signature: self.signature(),
        }
    }
}

crate::fork_variants! { BeaconBlock, fork_enum,
    /// A `BeaconBlock` of any fork.
    getters {
        slot: Slot = |b| b.slot;
        proposer_index: ValidatorIndex = |b| b.proposer_index;
        parent_root: Root = |b| b.parent_root;
        state_root: Root = |b| b.state_root;
    }
    partial {
        execution_block_hash: Root = |b| b.body.execution_payload.block_hash,
            [Bellatrix, Capella, Deneb, Electra, Fulu], [Phase0, Altair, Gloas];
        blob_kzg_commitments: &[KZGCommitment] = |b| &b.body.blob_kzg_commitments[..],
            [Deneb, Electra, Fulu], [Phase0, Altair, Bellatrix, Capella, Gloas];
        execution_requests: &electra::ExecutionRequests<E> = |b| &b.body.execution_requests,
            [Electra, Fulu], [Phase0, Altair, Bellatrix, Capella, Deneb, Gloas];
        sync_aggregate: &altair::SyncAggregate<E> = |b| &b.body.sync_aggregate,
            [Altair, Bellatrix, Capella, Deneb, Electra, Fulu, Gloas], [Phase0];
        signed_execution_payload_bid: &gloas::SignedExecutionPayloadBid =
            |b| &b.body.signed_execution_payload_bid,
            [Gloas], [Phase0, Altair, Bellatrix, Capella, Deneb, Electra, Fulu];
    }
}

impl<E: EthSpec> BeaconBlock<E> {
    /// Decodes untrusted bytes, taking the fork from the block's slot and `spec`'s schedule.
    pub fn from_ssz_bytes(bytes: &[u8], spec: &ChainSpec) -> Result<Self, DecodeError> {
        let slot = read_u64_at(bytes, 0)?;
        Self::from_ssz_bytes_by_fork(bytes, spec.fork_name_at_slot::<E>(slot))
    }
}

crate::fork_variants! { BeaconBlockBody, fork_enum,
    /// A `BeaconBlockBody` of any fork.
    fields {
        randao_reveal, randao_reveal_mut: BLSSignature = randao_reveal;
        eth1_data, eth1_data_mut: phase0::Eth1Data = eth1_data;
        graffiti, graffiti_mut: Root = graffiti;
    }
    partial {
        execution_block_hash: Root = |b| b.execution_payload.block_hash,
            [Bellatrix, Capella, Deneb, Electra, Fulu], [Phase0, Altair, Gloas];
        blob_kzg_commitments: &[KZGCommitment] = |b| &b.blob_kzg_commitments[..],
            [Deneb, Electra, Fulu], [Phase0, Altair, Bellatrix, Capella, Gloas];
        execution_requests: &electra::ExecutionRequests<E> = |b| &b.execution_requests,
            [Electra, Fulu], [Phase0, Altair, Bellatrix, Capella, Deneb, Gloas];
        sync_aggregate: &altair::SyncAggregate<E> = |b| &b.sync_aggregate,
            [Altair, Bellatrix, Capella, Deneb, Electra, Fulu, Gloas], [Phase0];
        signed_execution_payload_bid: &gloas::SignedExecutionPayloadBid =
            |b| &b.signed_execution_payload_bid,
            [Gloas], [Phase0, Altair, Bellatrix, Capella, Deneb, Electra, Fulu];
    }
}

crate::fork_variants! { ExecutionPayload, fork_enum,
    /// An `ExecutionPayload` of any fork since the merge (from Gloas, the payload of an
    /// `ExecutionPayloadEnvelope`).
    getters {
        parent_hash: Root = |b| b.parent_hash;
        block_hash: Root = |b| b.block_hash;
        block_number: u64 = |b| b.block_number;
        timestamp: u64 = |b| b.timestamp;
        gas_limit: u64 = |b| b.gas_limit;
        gas_used: u64 = |b| b.gas_used;
    }
}

crate::fork_variants! { ExecutionPayloadHeader, fork_enum,
    /// An `ExecutionPayloadHeader` of any fork from the merge to Fulu (Gloas's state holds the
    /// latest bid instead).
    getters {
        parent_hash: Root = |b| b.parent_hash;
        block_hash: Root = |b| b.block_hash;
        block_number: u64 = |b| b.block_number;
        timestamp: u64 = |b| b.timestamp;
    }
}

crate::fork_variants! { Attestation, fork_enum,
    /// An `Attestation` of any fork: committee index in the data before Electra, committee bits
    /// from Electra on.
    fields {
        data, data_mut: phase0::AttestationData = data;
        signature, signature_mut: BLSSignature = signature;
    }
}

crate::fork_variants! { AttesterSlashing, fork_enum,
    /// An `AttesterSlashing` of any fork.
}

crate::fork_variants! { BlobSidecar, fork_enum,
    /// A `BlobSidecar` (Deneb and Electra; Fulu carries data columns instead).
}

crate::fork_variants! { DataColumnSidecar, fork_enum,
    /// A `DataColumnSidecar` (PeerDAS, from Fulu).
    getters {
        index: u64 = |b| b.index;
    }
}

crate::fork_variants! { LightClientHeader, fork_enum,
    /// A `LightClientHeader` of any fork since Altair.
    fields {
        beacon, beacon_mut: phase0::BeaconBlockHeader = beacon;
    }
}

crate::fork_variants! { LightClientBootstrap, fork_enum,
    /// A `LightClientBootstrap` of any fork since Altair.
}

crate::fork_variants! { LightClientUpdate, fork_enum,
    /// A `LightClientUpdate` of any fork since Altair.
    getters {
        signature_slot: Slot = |b| b.signature_slot;
    }
}

crate::fork_variants! { LightClientFinalityUpdate, fork_enum,
    /// A `LightClientFinalityUpdate` of any fork since Altair.
    getters {
        signature_slot: Slot = |b| b.signature_slot;
    }
}

crate::fork_variants! { LightClientOptimisticUpdate, fork_enum,
    /// A `LightClientOptimisticUpdate` of any fork since Altair.
    getters {
        signature_slot: Slot = |b| b.signature_slot;
    }
}

/// `Some(variant(inner.clone()))` per fork of `$enum`'s partial owned accessors (the variants'
/// types can be one type re-exported, so there is no `From`).
macro_rules! cloned_by_fork {
    ($value:expr, $source:ident => $target:ident, |$b:ident| $field:expr,
        [$($in:ident),*], [$($out:ident),*]) => {
        match $value {
            $($source::$in($b) => Some($target::$in($field.clone())),)*
            $($source::$out(_) => None,)*
        }
    };
}

impl<E: EthSpec> DataColumnSidecar<E> {
    /// The slot of the sidecar's block (Fulu's signed block header; Gloas's own `slot` field).
    pub fn slot(&self) -> Slot {
        match self {
            Self::Fulu(sidecar) => sidecar.signed_block_header.message.slot,
            Self::Gloas(sidecar) => sidecar.slot,
        }
    }

    /// The root of the sidecar's block (Fulu: of its signed block header; Gloas: its
    /// `beacon_block_root` field).
    pub fn block_root(&self) -> Root {
        match self {
            Self::Fulu(sidecar) => sidecar.signed_block_header.message.tree_hash_root(),
            Self::Gloas(sidecar) => sidecar.beacon_block_root,
        }
    }
}

impl<E: EthSpec> BeaconState<E> {
    /// A clone of `latest_execution_payload_header` (Bellatrix to Fulu; Gloas's state holds the
    /// latest bid, [`BeaconState::latest_execution_payload_bid`]).
    pub fn latest_execution_payload_header(&self) -> Option<ExecutionPayloadHeader<E>> {
        cloned_by_fork!(self, Self => ExecutionPayloadHeader, |s| s.latest_execution_payload_header,
            [Bellatrix, Capella, Deneb, Electra, Fulu], [Phase0, Altair, Gloas])
    }
}

impl<E: EthSpec> BeaconBlockBody<E> {
    /// A clone of the body's `execution_payload` (Bellatrix to Fulu; from Gloas the payload
    /// comes apart from the block, in an envelope, and the body carries its bid).
    pub fn execution_payload(&self) -> Option<ExecutionPayload<E>> {
        cloned_by_fork!(self, Self => ExecutionPayload, |b| b.execution_payload,
            [Bellatrix, Capella, Deneb, Electra, Fulu], [Phase0, Altair, Gloas])
    }
}

impl<E: EthSpec> BeaconBlock<E> {
    /// A clone of the body's `execution_payload` (see [`BeaconBlockBody::execution_payload`]).
    pub fn execution_payload(&self) -> Option<ExecutionPayload<E>> {
        cloned_by_fork!(self, Self => ExecutionPayload, |b| b.body.execution_payload,
            [Bellatrix, Capella, Deneb, Electra, Fulu], [Phase0, Altair, Gloas])
    }
}

impl<E: EthSpec> SignedBeaconBlock<E> {
    /// A clone of the body's `execution_payload` (see [`BeaconBlockBody::execution_payload`]).
    pub fn execution_payload(&self) -> Option<ExecutionPayload<E>> {
        cloned_by_fork!(self, Self => ExecutionPayload, |b| b.message.body.execution_payload,
            [Bellatrix, Capella, Deneb, Electra, Fulu], [Phase0, Altair, Gloas])
    }
}

/// The blob commitments of a body, wherever its fork keeps them: the body's own list (Deneb to
/// Fulu) or its bid's (Gloas); `None` before Deneb. Every fork is named.
macro_rules! committed_blob_kzg_commitments {
    ($value:expr, $name:ident, |$b:ident| $body:expr) => {
        match $value {
            $name::Deneb($b) => Some(&$body.blob_kzg_commitments[..]),
            $name::Electra($b) | $name::Fulu($b) => Some(&$body.blob_kzg_commitments[..]),
            $name::Gloas($b) => Some(
                &$body
                    .signed_execution_payload_bid
                    .message
                    .blob_kzg_commitments[..],
            ),
            $name::Phase0(_) | $name::Altair(_) | $name::Bellatrix(_) | $name::Capella(_) => None,
        }
    };
}

impl<E: EthSpec> BeaconBlockBody<E> {
    /// The KZG commitments of the blobs this body commits to: its `blob_kzg_commitments` from
    /// Deneb to Fulu, its bid's from Gloas (where [`Self::blob_kzg_commitments`] is `None`,
    /// the blobs coming with the payload's envelope); `None` before Deneb.
    pub fn committed_blob_kzg_commitments(&self) -> Option<&[KZGCommitment]> {
        committed_blob_kzg_commitments!(self, Self, |b| b)
    }
}

impl<E: EthSpec> BeaconBlock<E> {
    /// The body's blob commitments, the bid's from Gloas (see
    /// [`BeaconBlockBody::committed_blob_kzg_commitments`]).
    pub fn committed_blob_kzg_commitments(&self) -> Option<&[KZGCommitment]> {
        committed_blob_kzg_commitments!(self, Self, |b| b.body)
    }
}

impl<E: EthSpec> SignedBeaconBlock<E> {
    /// The body's blob commitments, the bid's from Gloas (see
    /// [`BeaconBlockBody::committed_blob_kzg_commitments`]).
    pub fn committed_blob_kzg_commitments(&self) -> Option<&[KZGCommitment]> {
        committed_blob_kzg_commitments!(self, Self, |b| b.message.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MinimalEthSpec;

    /// The enums that end before the newest fork on purpose, with the fork they end at.
    const ENDED: &[(&str, ForkName)] = &[
        // Fulu carries data columns instead.
        ("BlobSidecar", ForkName::Electra),
        // Gloas's state holds the latest bid instead.
        ("ExecutionPayloadHeader", ForkName::Fulu),
    ];

    macro_rules! forks_of {
        ($(;)? $name:ident { $($variant:ident => $ty:ty),+ $(,)? }) => {
            (stringify!($name), $name::<MinimalEthSpec>::FORKS)
        };
    }

    /// A value of `T` from `len` bytes of a fixed pattern.
    #[cfg(feature = "arbitrary")]
    fn generated<T: for<'a> arbitrary::Arbitrary<'a>>(len: usize) -> T {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
        arbitrary::Unstructured::new(&bytes)
            .arbitrary()
            .expect("enough bytes")
    }

    /// The partial accessors: the payload and blob commitments are the Fulu body's, the bid the
    /// Gloas body's, and each is `None` at the other fork.
    #[cfg(feature = "arbitrary")]
    #[test]
    fn partial_accessors_answer_by_fork() {
        type E = MinimalEthSpec;
        let fulu = SignedBeaconBlock::<E>::Fulu(generated(64 * 1024));
        let gloas = SignedBeaconBlock::<E>::Gloas(generated(64 * 1024));
        let SignedBeaconBlock::Fulu(inner) = &fulu else {
            unreachable!("built as Fulu")
        };
        assert_eq!(
            fulu.blob_kzg_commitments(),
            Some(&inner.message.body.blob_kzg_commitments[..])
        );
        assert_eq!(
            fulu.execution_block_hash(),
            Some(inner.message.body.execution_payload.block_hash)
        );
        assert_eq!(
            fulu.execution_payload(),
            Some(ExecutionPayload::Fulu(
                inner.message.body.execution_payload.clone()
            ))
        );
        assert!(fulu.execution_requests().is_some());
        assert!(fulu.signed_execution_payload_bid().is_none());

        let SignedBeaconBlock::Gloas(inner) = &gloas else {
            unreachable!("built as Gloas")
        };
        assert_eq!(gloas.blob_kzg_commitments(), None);
        assert_eq!(gloas.execution_block_hash(), None);
        assert_eq!(gloas.execution_payload(), None);
        assert!(gloas.execution_requests().is_none());
        assert_eq!(
            gloas.signed_execution_payload_bid(),
            Some(&inner.message.body.signed_execution_payload_bid)
        );
        assert_eq!(
            gloas.sync_aggregate(),
            Some(&inner.message.body.sync_aggregate)
        );

        let state = BeaconState::<E>::Gloas(generated(256 * 1024));
        assert!(state.validators().is_none() && state.balances().is_none());
        assert!(state.latest_execution_payload_header().is_none());
        assert!(state.latest_execution_payload_bid().is_some());
        // A Gloas state decodes by the fork of its slot under a spec that schedules Gloas.
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Gloas);
        spec.gloas_fork_version = Some(crate::Version::new([7, 0, 0, 1]));
        assert_eq!(
            BeaconState::<E>::from_ssz_bytes(&state.as_ssz_bytes(), &spec).unwrap(),
            state
        );
        assert_eq!(
            SignedBeaconBlock::<E>::from_ssz_bytes(&gloas.as_ssz_bytes(), &spec).unwrap(),
            gloas
        );
    }

    /// Commitments `1..=count` (each repeated bytes), for the accessor tests.
    #[cfg(feature = "arbitrary")]
    fn commitments(count: u8) -> Vec<KZGCommitment> {
        (1..=count).map(KZGCommitment::repeat_byte).collect()
    }

    /// Deneb's body holds its blobs' commitments: the block, its message and its body answer
    /// them.
    #[cfg(feature = "arbitrary")]
    #[test]
    fn committed_blob_kzg_commitments_are_a_deneb_bodys() {
        type E = MinimalEthSpec;
        let mut inner: crate::deneb::SignedBeaconBlock<E> = generated(64 * 1024);
        inner.message.body.blob_kzg_commitments =
            commitments(3).try_into().expect("under the limit");
        let block = SignedBeaconBlock::Deneb(inner.clone());
        assert_eq!(
            block.committed_blob_kzg_commitments(),
            Some(&commitments(3)[..])
        );
        assert_eq!(
            BeaconBlock::<E>::Deneb(inner.message.clone()).committed_blob_kzg_commitments(),
            Some(&commitments(3)[..])
        );
        assert_eq!(
            BeaconBlockBody::<E>::Deneb(inner.message.body).committed_blob_kzg_commitments(),
            Some(&commitments(3)[..])
        );
    }

    /// Electra's and Fulu's bodies hold their blobs' commitments (Electra's blobs go out as
    /// sidecars, Fulu's as columns: the accessor answers both).
    #[cfg(feature = "arbitrary")]
    #[test]
    fn committed_blob_kzg_commitments_are_an_electra_or_fulu_bodys() {
        type E = MinimalEthSpec;
        let mut inner: crate::electra::SignedBeaconBlock<E> = generated(64 * 1024);
        inner.message.body.blob_kzg_commitments =
            commitments(2).try_into().expect("under the limit");
        for block in [
            SignedBeaconBlock::Electra(inner.clone()),
            SignedBeaconBlock::Fulu(inner.clone()),
        ] {
            assert_eq!(
                block.committed_blob_kzg_commitments(),
                Some(&commitments(2)[..]),
                "{}",
                block.fork_name()
            );
            assert_eq!(
                block.committed_blob_kzg_commitments(),
                block.blob_kzg_commitments()
            );
        }
        assert_eq!(
            BeaconBlock::<E>::Fulu(inner.message.clone()).committed_blob_kzg_commitments(),
            Some(&commitments(2)[..])
        );
        assert_eq!(
            BeaconBlockBody::<E>::Electra(inner.message.body).committed_blob_kzg_commitments(),
            Some(&commitments(2)[..])
        );
    }

    /// Gloas's body has no commitments of its own (`blob_kzg_commitments` is `None`): they are
    /// its bid's.
    #[cfg(feature = "arbitrary")]
    #[test]
    fn committed_blob_kzg_commitments_are_a_gloas_bids() {
        type E = MinimalEthSpec;
        let mut inner: crate::gloas::SignedBeaconBlock<E> = generated(64 * 1024);
        inner
            .message
            .body
            .signed_execution_payload_bid
            .message
            .blob_kzg_commitments = commitments(4).into();
        let block = SignedBeaconBlock::Gloas(inner.clone());
        assert_eq!(block.blob_kzg_commitments(), None);
        assert_eq!(
            block.committed_blob_kzg_commitments(),
            Some(&commitments(4)[..])
        );
        assert_eq!(
            BeaconBlock::<E>::Gloas(inner.message.clone()).committed_blob_kzg_commitments(),
            Some(&commitments(4)[..])
        );
        assert_eq!(
            BeaconBlockBody::<E>::Gloas(inner.message.body).committed_blob_kzg_commitments(),
            Some(&commitments(4)[..])
        );
    }

    /// Before Deneb a block commits to no blobs.
    #[cfg(feature = "arbitrary")]
    #[test]
    fn committed_blob_kzg_commitments_are_none_before_deneb() {
        type E = MinimalEthSpec;
        let capella = SignedBeaconBlock::<E>::Capella(generated(64 * 1024));
        assert_eq!(capella.committed_blob_kzg_commitments(), None);
        let phase0 = BeaconBlockBody::<E>::Phase0(generated(16 * 1024));
        assert_eq!(phase0.committed_blob_kzg_commitments(), None);
    }

    #[test]
    fn fork_enums_cover_every_fork() {
        let mut all = Vec::new();
        macro_rules! collect {
            ($(;)? $name:ident $variants:tt) => {
                all.push(forks_of!($name $variants));
            };
        }
        crate::fork_variants!(@each collect);
        assert_eq!(all.len(), 15);
        for (name, forks) in all {
            let first = forks[0] as usize;
            let last = ENDED
                .iter()
                .find(|(ended, _)| *ended == name)
                .map_or(ForkName::LATEST, |(_, fork)| *fork);
            assert_eq!(
                forks,
                &ForkName::ALL[first..=last as usize],
                "{name} must have a variant for every fork from its first to {last}"
            );
        }
    }
}
