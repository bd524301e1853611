//! Fork-generic values: one enum per container whose layout changes across forks, with a
//! variant per fork in which the container exists.
//!
//! Untrusted bytes are decoded by fork: either the caller knows the fork (gossip topics and
//! req/resp context bytes carry the fork digest), or, for blocks and states, the fork is read
//! from the slot in the bytes and the chain's fork schedule.

use ssz::{Decode, DecodeError, Encode};
use tree_hash::{Hash256, PackedEncoding, TreeHash, TreeHashType};

use crate::{
    BLSSignature, ChainSpec, EthSpec, ForkName, Root, Slot, ValidatorIndex, altair, bellatrix,
    capella, deneb, electra, fulu, phase0,
};

/// Declares a fork-generic enum over the per-fork containers of the same name, with SSZ
/// encoding and tree hashing delegated to the variant, decoding by fork, and accessors for the
/// fields every variant shares.
macro_rules! fork_enum {
    (
        $(#[$meta:meta])*
        $name:ident $variants:tt
        $(fields { $($field:ident, $field_mut:ident : $fty:ty = $fname:ident;)* })?
        $(getters { $($getter:ident : $gty:ty = |$b:ident| $body:expr;)* })?
    ) => {
        fork_enum!(@base [$(#[$meta])*] $name $variants);
        $($(fork_enum!(@field $name $variants $field $field_mut $fty, $fname);)*)?
        $($(fork_enum!(@getter $name $variants $getter $gty, $b, $body);)*)?
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

fork_enum! {
    /// A `BeaconState` of any fork.
    BeaconState {
        Phase0 => phase0::BeaconState<E>,
        Altair => altair::BeaconState<E>,
        Bellatrix => bellatrix::BeaconState<E>,
        Capella => capella::BeaconState<E>,
        Deneb => deneb::BeaconState<E>,
        Electra => electra::BeaconState<E>,
        Fulu => fulu::BeaconState<E>,
    }
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
        validators, validators_mut: phase0::ValidatorRegistry<E> = validators;
        balances, balances_mut: packed_list::PackedList<u64, E::ValidatorRegistryLimit> = balances;
        randao_mixes, randao_mixes_mut: milhouse::Vector<Root, E::EpochsPerHistoricalVector> = randao_mixes;
        slashings, slashings_mut: milhouse::Vector<u64, E::EpochsPerSlashingsVector> = slashings;
        justification_bits, justification_bits_mut: ssz_types::BitVector<ssz_types::typenum::U4> = justification_bits;
        previous_justified_checkpoint, previous_justified_checkpoint_mut: phase0::Checkpoint = previous_justified_checkpoint;
        current_justified_checkpoint, current_justified_checkpoint_mut: phase0::Checkpoint = current_justified_checkpoint;
        finalized_checkpoint, finalized_checkpoint_mut: phase0::Checkpoint = finalized_checkpoint;
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

fork_enum! {
    /// A `SignedBeaconBlock` of any fork.
    SignedBeaconBlock {
        Phase0 => phase0::SignedBeaconBlock<E>,
        Altair => altair::SignedBeaconBlock<E>,
        Bellatrix => bellatrix::SignedBeaconBlock<E>,
        Capella => capella::SignedBeaconBlock<E>,
        Deneb => deneb::SignedBeaconBlock<E>,
        Electra => electra::SignedBeaconBlock<E>,
        Fulu => fulu::SignedBeaconBlock<E>,
    }
    getters {
        slot: Slot = |b| b.message.slot;
        proposer_index: ValidatorIndex = |b| b.message.proposer_index;
        parent_root: Root = |b| b.message.parent_root;
        state_root: Root = |b| b.message.state_root;
        signature: BLSSignature = |b| b.signature;
        canonical_root: Root = |b| b.message.tree_hash_root();
        body_root: Root = |b| b.message.body.tree_hash_root();
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

fork_enum! {
    /// A `BeaconBlock` of any fork.
    BeaconBlock {
        Phase0 => phase0::BeaconBlock<E>,
        Altair => altair::BeaconBlock<E>,
        Bellatrix => bellatrix::BeaconBlock<E>,
        Capella => capella::BeaconBlock<E>,
        Deneb => deneb::BeaconBlock<E>,
        Electra => electra::BeaconBlock<E>,
        Fulu => fulu::BeaconBlock<E>,
    }
    getters {
        slot: Slot = |b| b.slot;
        proposer_index: ValidatorIndex = |b| b.proposer_index;
        parent_root: Root = |b| b.parent_root;
        state_root: Root = |b| b.state_root;
    }
}

impl<E: EthSpec> BeaconBlock<E> {
    /// Decodes untrusted bytes, taking the fork from the block's slot and `spec`'s schedule.
    pub fn from_ssz_bytes(bytes: &[u8], spec: &ChainSpec) -> Result<Self, DecodeError> {
        let slot = read_u64_at(bytes, 0)?;
        Self::from_ssz_bytes_by_fork(bytes, spec.fork_name_at_slot::<E>(slot))
    }
}

fork_enum! {
    /// A `BeaconBlockBody` of any fork.
    BeaconBlockBody {
        Phase0 => phase0::BeaconBlockBody<E>,
        Altair => altair::BeaconBlockBody<E>,
        Bellatrix => bellatrix::BeaconBlockBody<E>,
        Capella => capella::BeaconBlockBody<E>,
        Deneb => deneb::BeaconBlockBody<E>,
        Electra => electra::BeaconBlockBody<E>,
        Fulu => fulu::BeaconBlockBody<E>,
    }
    fields {
        randao_reveal, randao_reveal_mut: BLSSignature = randao_reveal;
        eth1_data, eth1_data_mut: phase0::Eth1Data = eth1_data;
        graffiti, graffiti_mut: Root = graffiti;
    }
}

fork_enum! {
    /// An `ExecutionPayload` of any fork since the merge.
    ExecutionPayload {
        Bellatrix => bellatrix::ExecutionPayload<E>,
        Capella => capella::ExecutionPayload<E>,
        Deneb => deneb::ExecutionPayload<E>,
        Electra => electra::ExecutionPayload<E>,
        Fulu => fulu::ExecutionPayload<E>,
    }
    getters {
        parent_hash: Root = |b| b.parent_hash;
        block_hash: Root = |b| b.block_hash;
        block_number: u64 = |b| b.block_number;
        timestamp: u64 = |b| b.timestamp;
        gas_limit: u64 = |b| b.gas_limit;
        gas_used: u64 = |b| b.gas_used;
    }
}

fork_enum! {
    /// An `ExecutionPayloadHeader` of any fork since the merge.
    ExecutionPayloadHeader {
        Bellatrix => bellatrix::ExecutionPayloadHeader<E>,
        Capella => capella::ExecutionPayloadHeader<E>,
        Deneb => deneb::ExecutionPayloadHeader<E>,
        Electra => electra::ExecutionPayloadHeader<E>,
        Fulu => fulu::ExecutionPayloadHeader<E>,
    }
    getters {
        parent_hash: Root = |b| b.parent_hash;
        block_hash: Root = |b| b.block_hash;
        block_number: u64 = |b| b.block_number;
        timestamp: u64 = |b| b.timestamp;
    }
}

fork_enum! {
    /// An `Attestation` of any fork: committee index in the data before Electra, committee bits
    /// from Electra on.
    Attestation {
        Phase0 => phase0::Attestation<E>,
        Altair => altair::Attestation<E>,
        Bellatrix => bellatrix::Attestation<E>,
        Capella => capella::Attestation<E>,
        Deneb => deneb::Attestation<E>,
        Electra => electra::Attestation<E>,
        Fulu => fulu::Attestation<E>,
    }
    fields {
        data, data_mut: phase0::AttestationData = data;
        signature, signature_mut: BLSSignature = signature;
    }
}

fork_enum! {
    /// An `AttesterSlashing` of any fork.
    AttesterSlashing {
        Phase0 => phase0::AttesterSlashing<E>,
        Altair => altair::AttesterSlashing<E>,
        Bellatrix => bellatrix::AttesterSlashing<E>,
        Capella => capella::AttesterSlashing<E>,
        Deneb => deneb::AttesterSlashing<E>,
        Electra => electra::AttesterSlashing<E>,
        Fulu => fulu::AttesterSlashing<E>,
    }
}

fork_enum! {
    /// A `BlobSidecar` (Deneb and Electra; Fulu carries data columns instead).
    BlobSidecar {
        Deneb => deneb::BlobSidecar<E>,
        Electra => electra::BlobSidecar<E>,
    }
}

fork_enum! {
    /// A `DataColumnSidecar` (PeerDAS, from Fulu).
    DataColumnSidecar {
        Fulu => fulu::DataColumnSidecar<E>,
    }
    getters {
        index: u64 = |b| b.index;
    }
}

fork_enum! {
    /// A `LightClientHeader` of any fork since Altair.
    LightClientHeader {
        Altair => altair::LightClientHeader,
        Bellatrix => bellatrix::LightClientHeader,
        Capella => capella::LightClientHeader<E>,
        Deneb => deneb::LightClientHeader<E>,
        Electra => electra::LightClientHeader<E>,
        Fulu => fulu::LightClientHeader<E>,
    }
    fields {
        beacon, beacon_mut: phase0::BeaconBlockHeader = beacon;
    }
}

fork_enum! {
    /// A `LightClientBootstrap` of any fork since Altair.
    LightClientBootstrap {
        Altair => altair::LightClientBootstrap<E>,
        Bellatrix => bellatrix::LightClientBootstrap<E>,
        Capella => capella::LightClientBootstrap<E>,
        Deneb => deneb::LightClientBootstrap<E>,
        Electra => electra::LightClientBootstrap<E>,
        Fulu => fulu::LightClientBootstrap<E>,
    }
}

fork_enum! {
    /// A `LightClientUpdate` of any fork since Altair.
    LightClientUpdate {
        Altair => altair::LightClientUpdate<E>,
        Bellatrix => bellatrix::LightClientUpdate<E>,
        Capella => capella::LightClientUpdate<E>,
        Deneb => deneb::LightClientUpdate<E>,
        Electra => electra::LightClientUpdate<E>,
        Fulu => fulu::LightClientUpdate<E>,
    }
    getters {
        signature_slot: Slot = |b| b.signature_slot;
    }
}

fork_enum! {
    /// A `LightClientFinalityUpdate` of any fork since Altair.
    LightClientFinalityUpdate {
        Altair => altair::LightClientFinalityUpdate<E>,
        Bellatrix => bellatrix::LightClientFinalityUpdate<E>,
        Capella => capella::LightClientFinalityUpdate<E>,
        Deneb => deneb::LightClientFinalityUpdate<E>,
        Electra => electra::LightClientFinalityUpdate<E>,
        Fulu => fulu::LightClientFinalityUpdate<E>,
    }
    getters {
        signature_slot: Slot = |b| b.signature_slot;
    }
}

fork_enum! {
    /// A `LightClientOptimisticUpdate` of any fork since Altair.
    LightClientOptimisticUpdate {
        Altair => altair::LightClientOptimisticUpdate<E>,
        Bellatrix => bellatrix::LightClientOptimisticUpdate<E>,
        Capella => capella::LightClientOptimisticUpdate<E>,
        Deneb => deneb::LightClientOptimisticUpdate<E>,
        Electra => electra::LightClientOptimisticUpdate<E>,
        Fulu => fulu::LightClientOptimisticUpdate<E>,
    }
    getters {
        signature_slot: Slot = |b| b.signature_slot;
    }
}
