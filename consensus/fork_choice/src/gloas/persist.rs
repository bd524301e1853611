//! The Gloas store as written to the database, so that a restarting node rebuilds its node
//! tree, PTC votes, verified payloads, checkpoints and latest messages without running the
//! state transition of every block since the finalized checkpoint.
//!
//! What is kept: the time, the store's four checkpoints, the proposer boost, every block (its
//! place, its bid's block hashes, its post-state's checkpoints, its timeliness, whether its
//! payload was verified, its PTC and PTC votes, its slot's committee members while
//! `is_head_weak` may read them), the equivocating indices and each validator's latest
//! message. What is not: weights (recomputed from the votes at the next `get_head`) and the
//! justified balances (handed over again: [`GloasForkChoice::wanted_justified_balances`]).
//! The node tree is rebuilt in block order, three nodes per block, so the persisted node
//! indices of the votes hold.
//!
//! Layout (little-endian): version `u8`; time `u64`; genesis time `u64`; four checkpoints
//! (`u64` epoch, 32-byte root: justified, finalized, unrealized justified, unrealized
//! finalized); proposer boost root; `u32` block count, each block (parents first): root,
//! parent root, slot, proposer index, bid block hash, bid parent block hash, justified
//! checkpoint, unrealized justified checkpoint, flags `u8` (bit 0: attestation-timely, bit 1:
//! PTC-timely, bit 2: payload verified, bit 3: slot committees follow), `u32` PTC size, each
//! member `u64`, one byte per PTC position for the timeliness votes and one for the data
//! availability votes (0: none, 1: false, 2: true), then (bit 3) a `u32` count and each
//! committee member `u64`; `u32` equivocating count, each index `u64`; `u32` target count,
//! each target: node `u32` (`u32::MAX`: its block was pruned), slot `u64`; `u64` validator
//! count; reference width `u8` (1, 2 or 4); one reference per validator (0: no message,
//! `t + 1`: target `t`).

use std::sync::Arc;

use rustc_hash::FxHashMap;
use types::{ChainSpec, EthSpec, Hash32, Root, Slot, ValidatorIndex, phase0::Checkpoint};

use super::{GloasError, GloasForkChoice, PtcVotes, ptc_size};
use crate::error::Fault;
use crate::persist::PersistedDecodeError;

/// The layout version this code writes and reads.
const VERSION: u8 = 1;
const ATTESTATION_TIMELY: u8 = 1;
const PTC_TIMELY: u8 = 2;
const PAYLOAD_VERIFIED: u8 = 4;
const HAS_SLOT_COMMITTEES: u8 = 8;
/// The least bytes of one block (no PTC, no committees).
const BLOCK_LEN: usize = 32 * 4 + 8 + 8 + 40 + 40 + 1 + 4;

/// Why persisted Gloas fork-choice bytes describe no store (the database's fault).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GloasPersistedError {
    /// The bytes do not follow the layout.
    #[error(transparent)]
    Layout(#[from] PersistedDecodeError),
    /// A PTC vote byte other than 0, 1 or 2.
    #[error("PTC vote byte {0}")]
    PtcVote(u8),
    /// A PTC that is not `PTC_SIZE` long.
    #[error("block {block:?}: a PTC of {len} members")]
    PtcSize {
        /// The block.
        block: Root,
        /// Its PTC's length.
        len: usize,
    },
    /// A block after the first whose parent is not before it, or a block written twice.
    #[error("block {0:?} is out of place (no parent before it, or written twice)")]
    BlockOutOfPlace(Root),
    /// No blocks.
    #[error("no blocks")]
    NoBlocks,
    /// A latest message on a node past the tree.
    #[error("validator {validator}: latest message on node {node} of {nodes}")]
    VoteNode {
        /// The validator index.
        validator: ValidatorIndex,
        /// The node.
        node: u32,
        /// Nodes in the tree.
        nodes: usize,
    },
}

impl GloasPersistedError {
    /// Whose fault this error is: the database's.
    pub fn fault(&self) -> Fault {
        Fault::Local
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn root(&mut self, r: &Root) {
        self.0.extend_from_slice(r.as_slice());
    }
    fn checkpoint(&mut self, c: &Checkpoint) {
        self.u64(c.epoch);
        self.root(&c.root);
    }
    fn indices(&mut self, indices: &[ValidatorIndex]) {
        self.u32(indices.len() as u32);
        for &i in indices {
            self.u64(i);
        }
    }
    fn ptc_votes(&mut self, votes: &[Option<bool>]) {
        for vote in votes {
            self.u8(match vote {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            });
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

type Decoded<T> = Result<T, GloasPersistedError>;

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len());
        let Some(end) = end else {
            return Err(PersistedDecodeError::Truncated {
                len: self.bytes.len(),
                offset: self.at,
                wanted: n,
            }
            .into());
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn array<const N: usize>(&mut self) -> Decoded<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
    fn u8(&mut self) -> Decoded<u8> {
        Ok(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Decoded<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn root(&mut self) -> Decoded<Root> {
        Ok(Root::from_slice(self.take(32)?))
    }
    fn checkpoint(&mut self) -> Decoded<Checkpoint> {
        Ok(Checkpoint {
            epoch: self.u64()?,
            root: self.root()?,
        })
    }
    /// A count of items of at least `item_len` bytes each, refused when the rest of the bytes
    /// cannot hold them (so a corrupt count allocates nothing).
    fn count(&mut self, len: u64, item_len: usize) -> Decoded<usize> {
        let rest = (self.bytes.len() - self.at) as u64;
        if len.saturating_mul(item_len as u64) > rest {
            return Err(PersistedDecodeError::CountTooLarge {
                count: len,
                item_len,
                rest,
            }
            .into());
        }
        Ok(len as usize)
    }
    fn indices(&mut self) -> Decoded<Vec<ValidatorIndex>> {
        let count = self.u32()?;
        let count = self.count(u64::from(count), 8)?;
        (0..count).map(|_| self.u64()).collect()
    }
    fn ptc_votes(&mut self, len: usize) -> Decoded<Vec<Option<bool>>> {
        self.take(len)?
            .iter()
            .map(|&b| match b {
                0 => Ok(None),
                1 => Ok(Some(false)),
                2 => Ok(Some(true)),
                other => Err(GloasPersistedError::PtcVote(other)),
            })
            .collect()
    }
}

impl<E: EthSpec> GloasForkChoice<E> {
    /// The store as bytes to persist (layout in the module documentation). One pass over the
    /// blocks and one over the latest messages.
    pub fn to_persisted_bytes(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(
            256 + self.block_order.len() * (BLOCK_LEN + 24 * ptc_size::<E>()),
        ));
        w.u8(VERSION);
        w.u64(self.time);
        w.u64(self.genesis_time);
        w.checkpoint(&self.justified_checkpoint);
        w.checkpoint(&self.finalized_checkpoint);
        w.checkpoint(&self.unrealized_justified_checkpoint);
        w.checkpoint(&self.unrealized_finalized_checkpoint);
        w.root(&self.proposer_boost_root);
        w.u32(self.block_order.len() as u32);
        for root in &self.block_order {
            let block = &self.blocks[root];
            w.root(root);
            w.root(&block.parent_root);
            w.u64(block.slot);
            w.u64(block.proposer_index);
            w.root(&block.bid_block_hash);
            w.root(&block.bid_parent_block_hash);
            w.checkpoint(&block.justified);
            w.checkpoint(&block.unrealized_justified);
            let committees = self.slot_committees.get(root);
            let mut flags = 0;
            for (set, flag) in [
                (block.timeliness[0], ATTESTATION_TIMELY),
                (block.timeliness[1], PTC_TIMELY),
                (self.payloads.contains(root), PAYLOAD_VERIFIED),
                (committees.is_some(), HAS_SLOT_COMMITTEES),
            ] {
                if set {
                    flags |= flag;
                }
            }
            w.u8(flags);
            match self.ptc_votes.get(root) {
                Some(votes) => {
                    w.indices(&votes.ptc);
                    w.ptc_votes(&votes.timeliness);
                    w.ptc_votes(&votes.data_availability);
                }
                None => w.u32(0),
            }
            if let Some(members) = committees {
                w.indices(members);
            }
        }
        let mut equivocating: Vec<ValidatorIndex> =
            self.equivocating_indices.iter().copied().collect();
        equivocating.sort_unstable();
        w.indices(&equivocating);

        // Latest messages: distinct (node, slot) targets and one reference per validator.
        let mut targets: Vec<(u32, Slot)> = Vec::new();
        let mut target_of: FxHashMap<(u32, Slot), u32> = FxHashMap::default();
        let mut references: Vec<u32> = Vec::new();
        for (index, slot, node) in self.votes.messages() {
            let key = (node.unwrap_or(u32::MAX), slot);
            let reference = *target_of.entry(key).or_insert_with(|| {
                targets.push(key);
                targets.len() as u32
            });
            references.resize(index as usize, 0);
            references.push(reference);
        }
        w.u32(targets.len() as u32);
        for (node, slot) in &targets {
            w.u32(*node);
            w.u64(*slot);
        }
        w.u64(references.len() as u64);
        let width: u8 = match targets.len() {
            0..255 => 1,
            255..65_535 => 2,
            _ => 4,
        };
        w.u8(width);
        for reference in references {
            w.0.extend_from_slice(&reference.to_le_bytes()[..usize::from(width)]);
        }
        w.0
    }

    /// The store [`Self::to_persisted_bytes`] wrote, its node tree rebuilt and its votes to be
    /// counted at the next head; the justified balances are to be handed over again
    /// ([`Self::wanted_justified_balances`]).
    pub fn from_persisted_bytes(bytes: &[u8], spec: Arc<ChainSpec>) -> Result<Self, GloasError> {
        Self::decode(bytes, spec).map_err(GloasError::CorruptPersisted)
    }

    fn decode(bytes: &[u8], spec: Arc<ChainSpec>) -> Decoded<Self> {
        let mut r = Reader { bytes, at: 0 };
        let version = r.u8()?;
        if version != VERSION {
            return Err(PersistedDecodeError::Version {
                found: version,
                expected: VERSION,
            }
            .into());
        }
        let time = r.u64()?;
        let genesis_time = r.u64()?;
        let justified = r.checkpoint()?;
        let finalized = r.checkpoint()?;
        let unrealized_justified = r.checkpoint()?;
        let unrealized_finalized = r.checkpoint()?;
        let proposer_boost_root = r.root()?;
        let block_count = r.u32()?;
        let block_count = r.count(u64::from(block_count), BLOCK_LEN)?;
        let mut store: Option<Self> = None;
        for _ in 0..block_count {
            let root = r.root()?;
            let parent_root = r.root()?;
            let slot = r.u64()?;
            let proposer_index = r.u64()?;
            let bid_block_hash: Hash32 = r.root()?;
            let bid_parent_block_hash: Hash32 = r.root()?;
            let block_justified = r.checkpoint()?;
            let block_unrealized_justified = r.checkpoint()?;
            let flags = r.u8()?;
            let ptc = r.indices()?;
            if ptc.len() != ptc_size::<E>() {
                return Err(GloasPersistedError::PtcSize {
                    block: root,
                    len: ptc.len(),
                });
            }
            let timeliness = r.ptc_votes(ptc.len())?;
            let data_availability = r.ptc_votes(ptc.len())?;
            let committees = if flags & HAS_SLOT_COMMITTEES != 0 {
                Some(r.indices()?)
            } else {
                None
            };
            let store = store.get_or_insert_with(|| Self::empty(spec.clone(), genesis_time));
            if store.blocks.contains_key(&root)
                || (!store.blocks.is_empty() && !store.blocks.contains_key(&parent_root))
            {
                return Err(GloasPersistedError::BlockOutOfPlace(root));
            }
            store.add_block(
                root,
                slot,
                proposer_index,
                parent_root,
                bid_block_hash,
                bid_parent_block_hash,
                block_justified,
                block_unrealized_justified,
                [flags & ATTESTATION_TIMELY != 0, flags & PTC_TIMELY != 0],
            );
            store.ptc_votes.insert(
                root,
                PtcVotes {
                    ptc,
                    timeliness,
                    data_availability,
                },
            );
            if flags & PAYLOAD_VERIFIED != 0 {
                store.payloads.insert(root);
            }
            if let Some(members) = committees {
                store.slot_committees.insert(root, members);
            }
        }
        let mut store = store.ok_or(GloasPersistedError::NoBlocks)?;
        store.time = time;
        store.justified_checkpoint = justified;
        store.finalized_checkpoint = finalized;
        store.unrealized_justified_checkpoint = unrealized_justified;
        store.unrealized_finalized_checkpoint = unrealized_finalized;
        store.proposer_boost_root = proposer_boost_root;
        store.equivocating_indices = r.indices()?.into_iter().collect();

        let target_count = r.u32()?;
        let target_count = r.count(u64::from(target_count), 12)?;
        let targets: Vec<(u32, Slot)> = (0..target_count)
            .map(|_| Ok((r.u32()?, r.u64()?)))
            .collect::<Decoded<_>>()?;
        let validators = r.u64()?;
        let width = r.u8()?;
        if !matches!(width, 1 | 2 | 4) {
            return Err(PersistedDecodeError::ReferenceWidth(width).into());
        }
        let validators = r.count(validators, usize::from(width))?;
        let nodes = store.tree.len();
        for validator in 0..validators {
            let mut reference = [0u8; 4];
            reference[..usize::from(width)].copy_from_slice(r.take(usize::from(width))?);
            let reference = u32::from_le_bytes(reference);
            if reference == 0 {
                continue;
            }
            let &(node, slot) = targets.get(reference as usize - 1).ok_or(
                PersistedDecodeError::ReferenceOutOfRange {
                    validator,
                    reference,
                    targets: targets.len(),
                },
            )?;
            let index = validator as ValidatorIndex;
            let node = match node {
                u32::MAX => None,
                node if (node as usize) < nodes => Some(node),
                node => {
                    return Err(GloasPersistedError::VoteNode {
                        validator: index,
                        node,
                        nodes,
                    });
                }
            };
            store
                .votes
                .restore_message(index, slot, node)
                .map_err(|_| GloasPersistedError::VoteNode {
                    validator: index,
                    node: node.unwrap_or(u32::MAX),
                    nodes,
                })?;
        }
        if r.at != bytes.len() {
            return Err(PersistedDecodeError::TrailingBytes(bytes.len() - r.at).into());
        }
        store.votes.queue_all();
        Ok(store)
    }
}
