//! Fork choice as written to the database, so that a restarting node rebuilds its block tree,
//! checkpoints and latest messages without running the state transition of every block since
//! the finalized checkpoint.
//!
//! What is kept: the store's four checkpoints, every node of the proto-array (the block's
//! place, its post-state's checkpoints, its payload hash, whether it was invalidated), the
//! equivocating indices and each validator's latest message. What is not: the post-states
//! (fork choice holds none: they are their owner's), weights
//! (recomputed from the votes at the next `get_head`), the proposer boost and block timeliness
//! (they belong to the slot the node was in when it stopped).
//!
//! Latest messages are stored as a table of distinct `(node, epoch)` targets and one reference
//! per validator, one byte wide while there are fewer than 255 targets (at 1,000,000 validators
//! the votes take ~1 MB instead of 40 MB as roots and epochs).
//!
//! Layout (little-endian): version `u8`; four checkpoints (`u64` epoch, 32-byte root); `u32`
//! node count, each node: root, parent root, slot, proposer index, justified checkpoint,
//! unrealized justified checkpoint, finalized epoch, flags `u8` (bit 0: payload hash follows,
//! bit 1: invalidated), the payload hash; `u32` equivocating count, each index `u64`; `u32`
//! target count, each target: node `u32` (`u32::MAX`: its block was pruned), epoch `u64`;
//! `u64` validator count; reference width `u8` (1, 2 or 4); one reference per validator (0: no
//! message, `t + 1`: target `t`).

use types::{Epoch, EthSpec, Root, ValidatorIndex, phase0::Checkpoint};

use crate::error::Error;
use crate::fork_choice::ForkChoice;
use crate::proto_array::{ExecutionStatus, ProtoNode};
use crate::votes::{NO_NODE, VoteTracker};

/// The layout version this code writes and reads.
const VERSION: u8 = 1;
const HAS_PAYLOAD_HASH: u8 = 1;
const INVALIDATED: u8 = 2;

/// Why persisted fork choice bytes do not read back (layout in the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PersistedDecodeError {
    /// A field runs past the end of the bytes.
    #[error("{len} bytes end before offset {offset} + {wanted}")]
    Truncated {
        /// Length of the bytes.
        len: usize,
        /// Where the field starts.
        offset: usize,
        /// Bytes the field needs.
        wanted: usize,
    },
    /// A count of items that the rest of the bytes cannot hold.
    #[error("{count} items of {item_len} bytes in the {rest} bytes left")]
    CountTooLarge {
        /// The count read.
        count: u64,
        /// The least bytes each item takes.
        item_len: usize,
        /// Bytes left after the count.
        rest: u64,
    },
    /// A vote reference width other than 1, 2 or 4 bytes.
    #[error("reference width {0}")]
    ReferenceWidth(u8),
    /// A validator's vote reference beyond the target table.
    #[error("validator {validator} refers to target {reference} of {targets}")]
    ReferenceOutOfRange {
        /// The validator index.
        validator: usize,
        /// Its reference (`t + 1` for target `t`).
        reference: u32,
        /// Targets in the table.
        targets: usize,
    },
    /// A layout version this code does not read.
    #[error("layout version {found}, this node reads {expected}")]
    Version {
        /// The version written.
        found: u8,
        /// The version this code reads.
        expected: u8,
    },
    /// Bytes left over after the votes.
    #[error("{0} bytes after the votes")]
    TrailingBytes(usize),
}

/// What [`ForkChoice::restore_persisted`] put back.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The blocks added to the tree, in insertion order (parents first).
    pub blocks: Vec<Root>,
    /// Validators whose latest message was restored.
    pub latest_messages: usize,
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
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
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
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn root(&mut self) -> Result<Root, Error> {
        Ok(Root::from_slice(self.take(32)?))
    }
    fn checkpoint(&mut self) -> Result<Checkpoint, Error> {
        Ok(Checkpoint {
            epoch: self.u64()?,
            root: self.root()?,
        })
    }
    /// A count of items of at least `item_len` bytes each, refused when the rest of the bytes
    /// cannot hold them (so a corrupt count allocates nothing).
    fn count(&mut self, len: u64, item_len: usize) -> Result<usize, Error> {
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
}

/// Every validator's latest message, as a table of distinct `(node, epoch)` targets (`node` as
/// numbered in `votes`, `u32::MAX` for none) and one reference per validator, appended to
/// `out` (the votes part of the layout). One pass over the votes.
pub fn encode_latest_messages(votes: &VoteTracker, out: &mut Vec<u8>) {
    let mut targets: Vec<(u32, Epoch)> = Vec::new();
    // The references of each node's targets by epoch (a node has votes of a few epochs at
    // most), the last slot for no node: a lookup is an index and a short scan, not a hash.
    let mut by_node: Vec<Vec<(Epoch, u32)>> = Vec::new();
    let mut refs: Vec<u32> = Vec::with_capacity(votes.len());
    for index in 0..votes.len() as u64 {
        refs.push(match votes.latest_message(index) {
            None => 0,
            Some((epoch, node)) => {
                let node = node.unwrap_or(NO_NODE);
                let slot = if node == NO_NODE {
                    0
                } else {
                    node as usize + 1
                };
                if slot >= by_node.len() {
                    by_node.resize_with(slot + 1, Vec::new);
                }
                let epochs = &mut by_node[slot];
                match epochs.iter().find(|(e, _)| *e == epoch) {
                    Some((_, r)) => *r,
                    None => {
                        targets.push((node, epoch));
                        let r = targets.len() as u32;
                        epochs.push((epoch, r));
                        r
                    }
                }
            }
        });
    }
    let mut w = Writer(std::mem::take(out));
    w.u32(targets.len() as u32);
    for (node, epoch) in &targets {
        w.u32(*node);
        w.u64(*epoch);
    }
    w.u64(refs.len() as u64);
    let width: u8 = match targets.len() {
        0..255 => 1,
        255..65535 => 2,
        _ => 4,
    };
    w.u8(width);
    w.0.reserve(refs.len() * usize::from(width));
    for r in refs {
        w.0.extend_from_slice(&r.to_le_bytes()[..usize::from(width)]);
    }
    *out = w.0;
}

/// The latest messages read back by [`decode_latest_messages`], every reference checked.
pub struct LatestMessages<'a> {
    targets: Vec<(u32, Epoch)>,
    width: usize,
    refs: &'a [u8],
}

impl LatestMessages<'_> {
    /// How many validators have an entry (with a message or not).
    pub fn len(&self) -> usize {
        self.refs.len() / self.width
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.refs.is_empty()
    }

    fn reference(&self, i: usize) -> u32 {
        let mut b = [0u8; 4];
        b[..self.width].copy_from_slice(&self.refs[i * self.width..(i + 1) * self.width]);
        u32::from_le_bytes(b)
    }

    /// `(validator index, node as numbered when written, epoch)` of each validator with a
    /// message.
    pub fn iter(&self) -> impl Iterator<Item = (ValidatorIndex, u32, Epoch)> + '_ {
        (0..self.len()).filter_map(|i| match self.reference(i) {
            0 => None,
            t => {
                let (node, epoch) = self.targets[t as usize - 1];
                Some((i as ValidatorIndex, node, epoch))
            }
        })
    }
}

/// Reads what [`encode_latest_messages`] wrote from the front of `bytes`; returns the
/// messages and the bytes after them.
pub fn decode_latest_messages_from(bytes: &[u8]) -> Result<(LatestMessages<'_>, &[u8]), Error> {
    let mut r = Reader { bytes, at: 0 };
    let latest = decode_latest_messages(&mut r)?;
    Ok((latest, &bytes[r.at..]))
}

fn decode_latest_messages<'a>(r: &mut Reader<'a>) -> Result<LatestMessages<'a>, Error> {
    let target_count = r.u32()?;
    let target_count = r.count(u64::from(target_count), 12)?;
    let mut targets = Vec::with_capacity(target_count);
    for _ in 0..target_count {
        targets.push((r.u32()?, r.u64()?));
    }
    let validators = r.u64()?;
    let width = r.u8()?;
    if !matches!(width, 1 | 2 | 4) {
        return Err(PersistedDecodeError::ReferenceWidth(width).into());
    }
    let width = usize::from(width);
    let validators = r.count(validators, width)?;
    let refs = r.take(validators * width)?;
    let latest = LatestMessages {
        targets,
        width,
        refs,
    };
    if let Some(i) = (0..validators).find(|i| latest.reference(*i) as usize > latest.targets.len())
    {
        return Err(PersistedDecodeError::ReferenceOutOfRange {
            validator: i,
            reference: latest.reference(i),
            targets: latest.targets.len(),
        }
        .into());
    }
    Ok(latest)
}

/// One node as read back: the tree's node (no parent index, weight or timeliness yet; its
/// execution status invalidated or not validated) and its payload hash.
struct PersistedNode {
    node: ProtoNode,
    payload_hash: Option<Root>,
}

/// Bytes of a node without its payload hash.
const NODE_LEN: usize = 32 + 32 + 8 + 8 + 40 + 40 + 8 + 1;

impl<E: EthSpec> ForkChoice<E> {
    /// The store as bytes to persist (layout in the module documentation). Costs one pass
    /// over the latest messages: a few milliseconds at 1,000,000 validators.
    pub fn to_persisted_bytes(&self) -> Vec<u8> {
        let nodes = self.proto_array().nodes();
        let mut w = Writer(Vec::with_capacity(256 + nodes.len() * 256));
        w.u8(VERSION);
        w.checkpoint(self.justified_checkpoint());
        w.checkpoint(self.finalized_checkpoint());
        w.checkpoint(self.unrealized_justified_checkpoint());
        w.checkpoint(self.unrealized_finalized_checkpoint());
        w.u32(nodes.len() as u32);
        for node in nodes {
            w.root(&node.root);
            w.root(&node.parent_root);
            w.u64(node.slot);
            w.u64(node.proposer_index);
            w.checkpoint(&node.justified);
            w.checkpoint(&node.unrealized_justified);
            w.u64(node.finalized_epoch);
            let hash = self.payload_block_hash(&node.root);
            let mut flags = 0;
            if hash.is_some() {
                flags |= HAS_PAYLOAD_HASH;
            }
            if node.execution_status == ExecutionStatus::Invalidated {
                flags |= INVALIDATED;
            }
            w.u8(flags);
            if let Some(hash) = hash {
                w.root(&hash);
            }
        }
        let mut equivocating: Vec<ValidatorIndex> = self.equivocating_indices().collect();
        equivocating.sort_unstable();
        w.u32(equivocating.len() as u32);
        for index in equivocating {
            w.u64(index);
        }

        encode_latest_messages(self.votes(), &mut w.0);
        w.0
    }

    /// Puts back what [`Self::to_persisted_bytes`] wrote, on a store anchored at (or before)
    /// the finalized checkpoint it was written with: the persisted blocks that descend from the
    /// tree and for which `is_stored` holds (a block whose import had not reached the database
    /// when it stopped is left out, and so are its descendants), then the checkpoints that are
    /// newer and whose blocks are in the tree, the equivocating indices and the latest
    /// messages (a message for a block left out keeps its epoch, without weight). Blocks
    /// imported after the bytes were written are imported again on top, as usual.
    pub fn restore_persisted(
        &mut self,
        bytes: &[u8],
        is_stored: impl Fn(&Root) -> bool,
    ) -> Result<Restored, Error> {
        let mut r = Reader { bytes, at: 0 };
        let version = r.u8()?;
        if version != VERSION {
            return Err(PersistedDecodeError::Version {
                found: version,
                expected: VERSION,
            }
            .into());
        }
        let justified = r.checkpoint()?;
        let finalized = r.checkpoint()?;
        let unrealized_justified = r.checkpoint()?;
        let unrealized_finalized = r.checkpoint()?;
        let node_count = r.u32()?;
        let node_count = r.count(u64::from(node_count), NODE_LEN)?;
        let mut nodes = Vec::with_capacity(node_count);
        for _ in 0..node_count {
            let root = r.root()?;
            let parent_root = r.root()?;
            let slot = r.u64()?;
            let proposer_index = r.u64()?;
            let node_justified = r.checkpoint()?;
            let node_unrealized_justified = r.checkpoint()?;
            let finalized_epoch = r.u64()?;
            let flags = r.u8()?;
            let payload_hash = if flags & HAS_PAYLOAD_HASH != 0 {
                Some(r.root()?)
            } else {
                None
            };
            nodes.push(PersistedNode {
                node: ProtoNode {
                    root,
                    parent: None,
                    slot,
                    proposer_index,
                    parent_root,
                    justified: node_justified,
                    unrealized_justified: node_unrealized_justified,
                    finalized_epoch,
                    timely: false,
                    weight: 0,
                    execution_status: if flags & INVALIDATED != 0 {
                        ExecutionStatus::Invalidated
                    } else {
                        ExecutionStatus::NotValidated
                    },
                },
                payload_hash,
            });
        }
        let equivocating_count = r.u32()?;
        let equivocating_count = r.count(u64::from(equivocating_count), 8)?;
        let mut equivocating = Vec::with_capacity(equivocating_count);
        for _ in 0..equivocating_count {
            equivocating.push(r.u64()?);
        }
        let latest = decode_latest_messages(&mut r)?;
        if r.at != bytes.len() {
            return Err(PersistedDecodeError::TrailingBytes(bytes.len() - r.at).into());
        }

        let mut restored = Restored::default();
        let anchor_slot = self.proto_array().nodes().first().map_or(0, |n| n.slot);
        for persisted in &nodes {
            let node = &persisted.node;
            if self.contains_block(&node.root)
                || node.slot <= anchor_slot
                || !self.contains_block(&node.parent_root)
                || !is_stored(&node.root)
            {
                continue;
            }
            self.insert_restored_node(node.clone(), persisted.payload_hash)?;
            restored.blocks.push(node.root);
        }
        let known = |c: &Checkpoint| self.contains_block(&c.root);
        let (justified_known, finalized_known) = (known(&justified), known(&finalized));
        let (uj_known, uf_known) = (known(&unrealized_justified), known(&unrealized_finalized));
        self.restore_checkpoints(
            justified_known.then_some(justified),
            finalized_known.then_some(finalized),
            uj_known.then_some(unrealized_justified),
            uf_known.then_some(unrealized_finalized),
        );
        for index in equivocating {
            self.mark_equivocating(index)?;
        }
        // Persisted node index -> index in this tree.
        let node_map: Vec<u32> = nodes
            .iter()
            .map(|n| {
                self.proto_array()
                    .index_of(&n.node.root)
                    .map_or(NO_NODE, |i| i as u32)
            })
            .collect();
        for (index, node, epoch) in latest.iter() {
            let node = node_map.get(node as usize).copied().unwrap_or(NO_NODE);
            if self.restore_latest_message(index, node, epoch)? {
                restored.latest_messages += 1;
            }
        }
        // No pruning here, even when the restored finalized checkpoint is far into the tree:
        // the next `insert_block` prunes.
        Ok(restored)
    }
}
