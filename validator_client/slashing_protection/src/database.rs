//! The redb database: registered validators with their low watermarks, and the history of the
//! blocks and attestations signed locally.

use std::collections::BTreeMap;
use std::path::Path;

use redb::{ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};
use types::{BLSPubkey, Epoch, FixedBytes, Root, Slot};

use crate::interchange::{
    INTERCHANGE_FORMAT_VERSION, Interchange, InterchangeData, InterchangeMetadata,
    SignedAttestation, SignedBlock,
};

/// `schema_version` → u64 (big-endian); `genesis_validators_root` → 32 bytes.
const META: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("meta");
/// Registered validators: pubkey → encoded [`Watermarks`].
const VALIDATORS: TableDefinition<'_, [u8; 48], &[u8]> = TableDefinition::new("validators");
/// Blocks signed here: (pubkey, slot) → signing root (zero: unknown).
const BLOCKS: TableDefinition<'_, ([u8; 48], u64), [u8; 32]> = TableDefinition::new("blocks");
/// Attestations signed here: (pubkey, target epoch) → (source epoch, signing root).
const ATTESTATIONS: TableDefinition<'_, ([u8; 48], u64), (u64, [u8; 32])> =
    TableDefinition::new("attestations");

const SCHEMA_VERSION_KEY: &str = "schema_version";
const GENESIS_VALIDATORS_ROOT_KEY: &str = "genesis_validators_root";
/// Bumped, with a migration, whenever a table's layout changes.
const SCHEMA_VERSION: u64 = 1;

/// The database could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// redb failed (I/O, a lock held by another process, a corrupt file).
    #[error("slashing protection database: {0}")]
    Redb(#[from] redb::Error),
    /// The database belongs to another chain.
    #[error(
        "slashing protection database is for genesis_validators_root {database}, not {expected}"
    )]
    GenesisValidatorsRootMismatch {
        /// The root the database was created for.
        database: Root,
        /// The root it was opened with.
        expected: Root,
    },
    /// A schema this version does not know (written by a newer Arbor).
    #[error(
        "slashing protection database schema version {found}, this build reads {SCHEMA_VERSION}"
    )]
    UnsupportedSchema {
        /// The version on disk.
        found: u64,
    },
    /// A stored value does not decode.
    #[error("slashing protection database is corrupt: {0}")]
    Corrupt(String),
}

macro_rules! redb_errors_into_db_error {
    ($($error:ty),*) => {$(
        impl From<$error> for DbError {
            fn from(error: $error) -> Self {
                Self::Redb(error.into())
            }
        }
        impl From<$error> for NotSafe {
            fn from(error: $error) -> Self {
                Self::Database(error.into())
            }
        }
        impl From<$error> for ImportError {
            fn from(error: $error) -> Self {
                Self::Database(error.into())
            }
        }
    )*};
}
redb_errors_into_db_error!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// What a successful check means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Safe {
    /// A new message, now recorded: sign it.
    Valid,
    /// The identical message (same signing root) was recorded before: signing it again gives
    /// the same signature, which is not slashable.
    SameData,
}

/// Why a message must not be signed.
#[derive(Debug, thiserror::Error)]
pub enum NotSafe {
    /// The public key was never registered (nor imported).
    #[error("validator {pubkey} is not registered in the slashing protection database")]
    UnregisteredValidator {
        /// The key.
        pubkey: BLSPubkey,
    },
    /// Another block was signed at this slot.
    #[error("double block proposal at slot {slot} (signed before with signing root {existing:?})")]
    DoubleBlockProposal {
        /// The slot.
        slot: Slot,
        /// The signing root of the block signed before (`None` when unknown).
        existing: Option<Root>,
    },
    /// The slot is not above the imported low watermark.
    #[error("block at slot {slot} is not above the low watermark slot {watermark}")]
    BlockSlotNotAboveWatermark {
        /// The slot.
        slot: Slot,
        /// The highest slot known from imported (or folded) data.
        watermark: Slot,
    },
    /// Another attestation with this target was signed.
    #[error(
        "double vote for target epoch {target_epoch} (signed before: source {existing_source}, signing root {existing_signing_root:?})"
    )]
    DoubleVote {
        /// The target epoch.
        target_epoch: Epoch,
        /// The source epoch of the attestation signed before.
        existing_source: Epoch,
        /// Its signing root (`None` when unknown).
        existing_signing_root: Option<Root>,
    },
    /// The new attestation surrounds one signed before (`source < existing.source` and
    /// `existing.target < target`).
    #[error(
        "attestation {source_epoch}→{target_epoch} surrounds the signed attestation {existing_source}→{existing_target}"
    )]
    SurroundingVote {
        /// The new source epoch.
        source_epoch: Epoch,
        /// The new target epoch.
        target_epoch: Epoch,
        /// The surrounded attestation's source epoch.
        existing_source: Epoch,
        /// The surrounded attestation's target epoch.
        existing_target: Epoch,
    },
    /// The new attestation is surrounded by one signed before (`existing.source < source` and
    /// `target < existing.target`).
    #[error(
        "attestation {source_epoch}→{target_epoch} is surrounded by the signed attestation {existing_source}→{existing_target}"
    )]
    SurroundedVote {
        /// The new source epoch.
        source_epoch: Epoch,
        /// The new target epoch.
        target_epoch: Epoch,
        /// The surrounding attestation's source epoch.
        existing_source: Epoch,
        /// The surrounding attestation's target epoch.
        existing_target: Epoch,
    },
    /// The source epoch is below the imported low watermark.
    #[error("attestation source epoch {source_epoch} is below the low watermark {watermark}")]
    SourceBelowWatermark {
        /// The source epoch.
        source_epoch: Epoch,
        /// The highest source epoch known from imported (or folded) data.
        watermark: Epoch,
    },
    /// The target epoch is not above the imported low watermark.
    #[error("attestation target epoch {target_epoch} is not above the low watermark {watermark}")]
    TargetNotAboveWatermark {
        /// The target epoch.
        target_epoch: Epoch,
        /// The highest target epoch known from imported (or folded) data.
        watermark: Epoch,
    },
    /// An attestation whose source is after its target (never valid).
    #[error("attestation source epoch {source_epoch} is after its target epoch {target_epoch}")]
    SourceAfterTarget {
        /// The source epoch.
        source_epoch: Epoch,
        /// The target epoch.
        target_epoch: Epoch,
    },
    /// The database failed: nothing may be signed.
    #[error(transparent)]
    Database(#[from] DbError),
}

/// Why an interchange was not imported (nothing of it was written).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A version other than [`INTERCHANGE_FORMAT_VERSION`].
    #[error("unsupported interchange_format_version {found:?}")]
    UnsupportedVersion {
        /// The version the interchange declares.
        found: String,
    },
    /// The interchange is for another chain.
    #[error(
        "interchange is for genesis_validators_root {interchange}, the database for {database}"
    )]
    GenesisValidatorsRootMismatch {
        /// The database's root.
        database: Root,
        /// The interchange's root.
        interchange: Root,
    },
    /// The database failed.
    #[error(transparent)]
    Database(#[from] DbError),
}

/// What an import changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImportSummary {
    /// Distinct validators in the interchange (now all registered).
    pub validators: usize,
    /// Block records read.
    pub blocks: usize,
    /// Attestation records read.
    pub attestations: usize,
}

/// The highest block known beside the local history, from imported data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BlockWatermark {
    slot: Slot,
    /// Set only when every record known at `slot` carries this same non-zero root; exported
    /// for importers that allow repeats, never a repeat here (the suite's minimal strategy
    /// refuses re-signing at the watermark, `single_validator_resign_block`).
    signing_root: Option<Root>,
}

/// The highest source and target known beside the local history, from imported data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AttestationWatermark {
    source: Epoch,
    target: Epoch,
    /// Set only when every record known at `target` is `source → target` with this same
    /// non-zero root; exported, never a repeat here (`single_validator_resign_attestation`).
    signing_root: Option<Root>,
}

/// A validator's low watermarks; `None` until data for it is imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Watermarks {
    block: Option<BlockWatermark>,
    attestation: Option<AttestationWatermark>,
}

const BLOCK_SET: u8 = 1;
const BLOCK_ROOT_SET: u8 = 2;
const ATTESTATION_SET: u8 = 4;
const ATTESTATION_ROOT_SET: u8 = 8;
/// flags, block slot, block root, source, target, attestation root.
const WATERMARKS_LEN: usize = 1 + 8 + 32 + 8 + 8 + 32;

impl Watermarks {
    fn encode(&self) -> [u8; WATERMARKS_LEN] {
        let mut out = [0u8; WATERMARKS_LEN];
        let mut flags = 0;
        if let Some(block) = self.block {
            flags |= BLOCK_SET;
            out[1..9].copy_from_slice(&block.slot.to_be_bytes());
            if let Some(root) = block.signing_root {
                flags |= BLOCK_ROOT_SET;
                out[9..41].copy_from_slice(root.as_slice());
            }
        }
        if let Some(attestation) = self.attestation {
            flags |= ATTESTATION_SET;
            out[41..49].copy_from_slice(&attestation.source.to_be_bytes());
            out[49..57].copy_from_slice(&attestation.target.to_be_bytes());
            if let Some(root) = attestation.signing_root {
                flags |= ATTESTATION_ROOT_SET;
                out[57..89].copy_from_slice(root.as_slice());
            }
        }
        out[0] = flags;
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, DbError> {
        let bytes: &[u8; WATERMARKS_LEN] = bytes.try_into().map_err(|_| {
            DbError::Corrupt(format!(
                "watermarks of {} bytes, expected {WATERMARKS_LEN}",
                bytes.len()
            ))
        })?;
        let flags = bytes[0];
        if flags & !(BLOCK_SET | BLOCK_ROOT_SET | ATTESTATION_SET | ATTESTATION_ROOT_SET) != 0 {
            return Err(DbError::Corrupt(format!("watermark flags {flags:#x}")));
        }
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            u64::from_be_bytes(b)
        };
        let root_at = |at: usize| {
            let mut b = [0u8; 32];
            b.copy_from_slice(&bytes[at..at + 32]);
            Root::from(b)
        };
        Ok(Self {
            block: (flags & BLOCK_SET != 0).then(|| BlockWatermark {
                slot: u64_at(1),
                signing_root: (flags & BLOCK_ROOT_SET != 0).then(|| root_at(9)),
            }),
            attestation: (flags & ATTESTATION_SET != 0).then(|| AttestationWatermark {
                source: u64_at(41),
                target: u64_at(49),
                signing_root: (flags & ATTESTATION_ROOT_SET != 0).then(|| root_at(57)),
            }),
        })
    }
}

/// A zero signing root stands for "unknown", in the interchange and here: it never proves a
/// repeat.
fn known_root(root: Root) -> Option<Root> {
    (root != Root::ZERO).then_some(root)
}

fn stored_root(root: Option<Root>) -> [u8; 32] {
    root.unwrap_or(Root::ZERO).0
}

/// The slashing protection database of one chain.
pub struct SlashingDatabase {
    db: redb::Database,
    genesis_validators_root: Root,
}

impl SlashingDatabase {
    /// Opens the database at `path`, creating it for `genesis_validators_root` when it does not
    /// exist. An existing database for another root is refused.
    pub fn open_or_create(
        path: impl AsRef<Path>,
        genesis_validators_root: Root,
    ) -> Result<Self, DbError> {
        let db = redb::Database::create(path)?;
        let txn = db.begin_write()?;
        {
            let mut meta = txn.open_table(META)?;
            let version = match meta.get(SCHEMA_VERSION_KEY)? {
                Some(bytes) => Some(decode_u64(bytes.value())?),
                None => None,
            };
            match version {
                Some(SCHEMA_VERSION) => {}
                Some(found) => return Err(DbError::UnsupportedSchema { found }),
                None => {
                    meta.insert(SCHEMA_VERSION_KEY, SCHEMA_VERSION.to_be_bytes().as_slice())?;
                }
            }
            let database_root = match meta.get(GENESIS_VALIDATORS_ROOT_KEY)? {
                Some(bytes) => Some(decode_root(bytes.value())?),
                None => None,
            };
            match database_root {
                Some(root) if root == genesis_validators_root => {}
                Some(database) => {
                    return Err(DbError::GenesisValidatorsRootMismatch {
                        database,
                        expected: genesis_validators_root,
                    });
                }
                None => {
                    meta.insert(
                        GENESIS_VALIDATORS_ROOT_KEY,
                        genesis_validators_root.as_slice(),
                    )?;
                }
            }
            // Created here so that readers never meet a missing table.
            txn.open_table(VALIDATORS)?;
            txn.open_table(BLOCKS)?;
            txn.open_table(ATTESTATIONS)?;
        }
        txn.commit()?;
        Ok(Self {
            db,
            genesis_validators_root,
        })
    }

    /// The chain this database protects.
    pub fn genesis_validators_root(&self) -> Root {
        self.genesis_validators_root
    }

    /// Registers a validator (idempotent); only registered keys may sign.
    pub fn register_validator(&self, pubkey: &BLSPubkey) -> Result<(), DbError> {
        self.register_validators(std::slice::from_ref(pubkey))
    }

    /// Registers several validators in one transaction (idempotent).
    pub fn register_validators(&self, pubkeys: &[BLSPubkey]) -> Result<(), DbError> {
        let txn = self.db.begin_write()?;
        {
            let mut validators = txn.open_table(VALIDATORS)?;
            for pubkey in pubkeys {
                if validators.get(pubkey.0)?.is_none() {
                    validators.insert(pubkey.0, Watermarks::default().encode().as_slice())?;
                }
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// Whether a validator is registered.
    pub fn is_registered(&self, pubkey: &BLSPubkey) -> Result<bool, DbError> {
        let txn = self.db.begin_read()?;
        Ok(txn.open_table(VALIDATORS)?.get(pubkey.0)?.is_some())
    }

    /// Every registered validator, in key order.
    pub fn registered_validators(&self) -> Result<Vec<BLSPubkey>, DbError> {
        let txn = self.db.begin_read()?;
        let validators = txn.open_table(VALIDATORS)?;
        let mut out = Vec::new();
        for entry in validators.iter()? {
            let (key, _) = entry?;
            out.push(FixedBytes(key.value()));
        }
        Ok(out)
    }

    /// Checks a block proposal at `slot` with `signing_root` and records it, durably, before
    /// returning [`Safe::Valid`]; sign only on `Ok`.
    pub fn check_and_insert_block_proposal(
        &self,
        pubkey: &BLSPubkey,
        slot: Slot,
        signing_root: Root,
    ) -> Result<Safe, NotSafe> {
        let txn = self.db.begin_write()?;
        let safe = check_and_insert_block_proposal_txn(&txn, pubkey, slot, signing_root)?;
        // Dropping `txn` on an error above aborted it; on success the record is on disk once
        // this returns.
        txn.commit()?;
        Ok(safe)
    }

    /// Checks an attestation `source → target` with `signing_root` and records it, durably,
    /// before returning [`Safe::Valid`]; sign only on `Ok`.
    pub fn check_and_insert_attestation(
        &self,
        pubkey: &BLSPubkey,
        source: Epoch,
        target: Epoch,
        signing_root: Root,
    ) -> Result<Safe, NotSafe> {
        let txn = self.db.begin_write()?;
        let safe = check_and_insert_attestation_txn(&txn, pubkey, source, target, signing_root)?;
        txn.commit()?;
        Ok(safe)
    }

    /// Imports an EIP-3076 interchange in one transaction: every validator in it is
    /// registered, and its records, with its local history, are folded into its low
    /// watermarks. Slashable data in the interchange is accepted: folding keeps only the
    /// maxima, which refuse everything the records could conflict with.
    pub fn import_interchange(
        &self,
        interchange: &Interchange,
    ) -> Result<ImportSummary, ImportError> {
        let metadata = &interchange.metadata;
        if metadata.interchange_format_version != INTERCHANGE_FORMAT_VERSION {
            return Err(ImportError::UnsupportedVersion {
                found: metadata.interchange_format_version.clone(),
            });
        }
        if metadata.genesis_validators_root != self.genesis_validators_root {
            return Err(ImportError::GenesisValidatorsRootMismatch {
                database: self.genesis_validators_root,
                interchange: metadata.genesis_validators_root,
            });
        }
        // A validator may appear in several entries: merge them first.
        let mut by_validator: BTreeMap<[u8; 48], (Vec<SignedBlock>, Vec<SignedAttestation>)> =
            BTreeMap::new();
        let mut summary = ImportSummary::default();
        for entry in &interchange.data {
            let records = by_validator.entry(entry.pubkey.0).or_default();
            records.0.extend_from_slice(&entry.signed_blocks);
            records.1.extend_from_slice(&entry.signed_attestations);
            summary.blocks += entry.signed_blocks.len();
            summary.attestations += entry.signed_attestations.len();
        }
        summary.validators = by_validator.len();

        let txn = self.db.begin_write()?;
        for (pubkey, (blocks, attestations)) in &by_validator {
            fold_into_watermarks(&txn, pubkey, blocks, attestations)?;
        }
        txn.commit()?;
        Ok(summary)
    }

    /// Exports the records of `pubkeys` (every registered validator when `None`; unregistered
    /// keys are left out) as an EIP-3076 interchange: each validator's watermarks as one block
    /// and one attestation, then its local history.
    pub fn export_interchange(
        &self,
        pubkeys: Option<&[BLSPubkey]>,
    ) -> Result<Interchange, DbError> {
        let txn = self.db.begin_read()?;
        let validators = txn.open_table(VALIDATORS)?;
        let blocks = txn.open_table(BLOCKS)?;
        let attestations = txn.open_table(ATTESTATIONS)?;
        let keys: Vec<[u8; 48]> = match pubkeys {
            Some(keys) => keys.iter().map(|k| k.0).collect(),
            None => {
                let mut keys = Vec::new();
                for entry in validators.iter()? {
                    keys.push(entry?.0.value());
                }
                keys
            }
        };
        let mut data = Vec::new();
        for key in keys {
            let Some(encoded) = validators.get(key)? else {
                continue;
            };
            let watermarks = Watermarks::decode(encoded.value())?;
            let mut signed_blocks = Vec::new();
            if let Some(block) = watermarks.block {
                signed_blocks.push(SignedBlock {
                    slot: block.slot,
                    signing_root: block.signing_root,
                });
            }
            for entry in blocks.range((key, 0)..=(key, u64::MAX))? {
                let (k, root) = entry?;
                signed_blocks.push(SignedBlock {
                    slot: k.value().1,
                    signing_root: known_root(Root::from(root.value())),
                });
            }
            let mut signed_attestations = Vec::new();
            if let Some(attestation) = watermarks.attestation {
                signed_attestations.push(SignedAttestation {
                    source_epoch: attestation.source,
                    target_epoch: attestation.target,
                    signing_root: attestation.signing_root,
                });
            }
            for entry in attestations.range((key, 0)..=(key, u64::MAX))? {
                let (k, v) = entry?;
                let (source, root) = v.value();
                signed_attestations.push(SignedAttestation {
                    source_epoch: source,
                    target_epoch: k.value().1,
                    signing_root: known_root(Root::from(root)),
                });
            }
            data.push(InterchangeData {
                pubkey: FixedBytes(key),
                signed_blocks,
                signed_attestations,
            });
        }
        Ok(Interchange {
            metadata: InterchangeMetadata {
                interchange_format_version: INTERCHANGE_FORMAT_VERSION.to_owned(),
                genesis_validators_root: self.genesis_validators_root,
            },
            data,
        })
    }
}

fn decode_u64(bytes: &[u8]) -> Result<u64, DbError> {
    let bytes: [u8; 8] = bytes
        .try_into()
        .map_err(|_| DbError::Corrupt(format!("schema version of {} bytes", bytes.len())))?;
    Ok(u64::from_be_bytes(bytes))
}

fn decode_root(bytes: &[u8]) -> Result<Root, DbError> {
    let bytes: [u8; 32] = bytes.try_into().map_err(|_| {
        DbError::Corrupt(format!("genesis_validators_root of {} bytes", bytes.len()))
    })?;
    Ok(Root::from(bytes))
}

fn watermarks_of(txn: &WriteTransaction, pubkey: &BLSPubkey) -> Result<Watermarks, NotSafe> {
    let validators = txn.open_table(VALIDATORS)?;
    let encoded = validators
        .get(pubkey.0)?
        .ok_or(NotSafe::UnregisteredValidator { pubkey: *pubkey })?;
    Ok(Watermarks::decode(encoded.value())?)
}

/// The check and the record of a block proposal, inside `txn` (committed by the caller).
pub(crate) fn check_and_insert_block_proposal_txn(
    txn: &WriteTransaction,
    pubkey: &BLSPubkey,
    slot: Slot,
    signing_root: Root,
) -> Result<Safe, NotSafe> {
    let watermarks = watermarks_of(txn, pubkey)?;
    let root = known_root(signing_root);
    let mut blocks = txn.open_table(BLOCKS)?;
    if let Some(existing) = blocks.get((pubkey.0, slot))? {
        let existing = known_root(Root::from(existing.value()));
        return if root.is_some() && existing == root {
            Ok(Safe::SameData)
        } else {
            Err(NotSafe::DoubleBlockProposal { slot, existing })
        };
    }
    if let Some(watermark) = watermarks.block
        && slot <= watermark.slot
    {
        return Err(NotSafe::BlockSlotNotAboveWatermark {
            slot,
            watermark: watermark.slot,
        });
    }
    blocks.insert((pubkey.0, slot), stored_root(root))?;
    Ok(Safe::Valid)
}

/// The check and the record of an attestation, inside `txn` (committed by the caller).
pub(crate) fn check_and_insert_attestation_txn(
    txn: &WriteTransaction,
    pubkey: &BLSPubkey,
    source: Epoch,
    target: Epoch,
    signing_root: Root,
) -> Result<Safe, NotSafe> {
    if source > target {
        return Err(NotSafe::SourceAfterTarget {
            source_epoch: source,
            target_epoch: target,
        });
    }
    let watermarks = watermarks_of(txn, pubkey)?;
    let root = known_root(signing_root);
    let key = pubkey.0;
    let mut attestations = txn.open_table(ATTESTATIONS)?;
    if let Some(existing) = attestations.get((key, target))? {
        let (existing_source, existing_root) = existing.value();
        let existing_signing_root = known_root(Root::from(existing_root));
        return if existing_source == source && root.is_some() && existing_signing_root == root {
            Ok(Safe::SameData)
        } else {
            Err(NotSafe::DoubleVote {
                target_epoch: target,
                existing_source,
                existing_signing_root,
            })
        };
    }
    // Surrounded: an attestation with a later target and an earlier source.
    if target < u64::MAX {
        for entry in attestations.range((key, target + 1)..=(key, u64::MAX))? {
            let (k, v) = entry?;
            let (existing_source, _) = v.value();
            if existing_source < source {
                return Err(NotSafe::SurroundedVote {
                    source_epoch: source,
                    target_epoch: target,
                    existing_source,
                    existing_target: k.value().1,
                });
            }
        }
    }
    // Surrounding: an attestation with a later source and an earlier target; recorded
    // attestations have source ≤ target, so its target lies strictly between ours.
    if source < target {
        for entry in attestations.range((key, source + 1)..(key, target))? {
            let (k, v) = entry?;
            let (existing_source, _) = v.value();
            if existing_source > source {
                return Err(NotSafe::SurroundingVote {
                    source_epoch: source,
                    target_epoch: target,
                    existing_source,
                    existing_target: k.value().1,
                });
            }
        }
    }
    if let Some(watermark) = watermarks.attestation {
        if source < watermark.source {
            return Err(NotSafe::SourceBelowWatermark {
                source_epoch: source,
                watermark: watermark.source,
            });
        }
        if target <= watermark.target {
            return Err(NotSafe::TargetNotAboveWatermark {
                target_epoch: target,
                watermark: watermark.target,
            });
        }
    }
    attestations.insert((key, target), (source, stored_root(root)))?;
    Ok(Safe::Valid)
}

/// Registers `pubkey` and folds imported records, its local history and its old watermarks
/// into new watermarks (each side only when the interchange has records for it). The local
/// history folded in is removed: every record of it lies at or below the new watermarks, so it
/// can refuse nothing they do not, and the export stays free of conflicts between a watermark
/// and the history.
fn fold_into_watermarks(
    txn: &WriteTransaction,
    pubkey: &[u8; 48],
    imported_blocks: &[SignedBlock],
    imported_attestations: &[SignedAttestation],
) -> Result<(), DbError> {
    let mut validators = txn.open_table(VALIDATORS)?;
    let mut watermarks = match validators.get(*pubkey)? {
        Some(encoded) => Watermarks::decode(encoded.value())?,
        None => Watermarks::default(),
    };

    if !imported_blocks.is_empty() {
        let mut blocks = txn.open_table(BLOCKS)?;
        let mut known: Vec<(Slot, Option<Root>)> = imported_blocks
            .iter()
            .map(|b| (b.slot, b.signing_root.and_then(known_root)))
            .collect();
        if let Some(w) = watermarks.block {
            known.push((w.slot, w.signing_root));
        }
        for entry in blocks.extract_from_if((*pubkey, 0)..=(*pubkey, u64::MAX), |_, _| true)? {
            let (k, root) = entry?;
            known.push((k.value().1, known_root(Root::from(root.value()))));
        }
        watermarks.block = fold_blocks(&known);
    }

    if !imported_attestations.is_empty() {
        let mut attestations = txn.open_table(ATTESTATIONS)?;
        let mut known: Vec<(Epoch, Epoch, Option<Root>)> = imported_attestations
            .iter()
            .map(|a| {
                (
                    a.source_epoch,
                    a.target_epoch,
                    a.signing_root.and_then(known_root),
                )
            })
            .collect();
        if let Some(w) = watermarks.attestation {
            known.push((w.source, w.target, w.signing_root));
        }
        for entry in
            attestations.extract_from_if((*pubkey, 0)..=(*pubkey, u64::MAX), |_, _| true)?
        {
            let (k, v) = entry?;
            let (source, root) = v.value();
            known.push((source, k.value().1, known_root(Root::from(root))));
        }
        watermarks.attestation = fold_attestations(&known);
    }

    validators.insert(*pubkey, watermarks.encode().as_slice())?;
    Ok(())
}

/// The highest slot, with the root every record at it agrees on (if they all carry one).
fn fold_blocks(known: &[(Slot, Option<Root>)]) -> Option<BlockWatermark> {
    let slot = known.iter().map(|(slot, _)| *slot).max()?;
    let mut at_max = known
        .iter()
        .filter(|(s, _)| *s == slot)
        .map(|(_, root)| *root);
    let first = at_max.next().flatten();
    let signing_root = first.filter(|_| at_max.all(|root| root == first));
    Some(BlockWatermark { slot, signing_root })
}

/// The highest source and the highest target (raised to the source when a record had its
/// source after its target, so the watermark itself is a valid attestation), with the root
/// when every record at the target is exactly that attestation with one root.
fn fold_attestations(known: &[(Epoch, Epoch, Option<Root>)]) -> Option<AttestationWatermark> {
    let source = known.iter().map(|(source, _, _)| *source).max()?;
    let max_target = known.iter().map(|(_, target, _)| *target).max()?;
    let target = max_target.max(source);
    let mut at_target = known.iter().filter(|(_, t, _)| *t == target);
    let signing_root = match at_target.next() {
        Some((s, _, Some(root))) if *s == source => {
            let root = *root;
            at_target
                .all(|(s, _, r)| *s == source && *r == Some(root))
                .then_some(root)
        }
        _ => None,
    };
    Some(AttestationWatermark {
        source,
        target,
        signing_root,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pubkey(i: u8) -> BLSPubkey {
        BLSPubkey::repeat_byte(i)
    }

    fn root(i: u8) -> Root {
        Root::repeat_byte(i)
    }

    fn open(dir: &tempfile::TempDir) -> SlashingDatabase {
        SlashingDatabase::open_or_create(dir.path().join("sp.redb"), Root::ZERO).unwrap()
    }

    #[test]
    fn watermarks_round_trip_and_refuse_bad_bytes() {
        for watermarks in [
            Watermarks::default(),
            Watermarks {
                block: Some(BlockWatermark {
                    slot: u64::MAX,
                    signing_root: Some(root(3)),
                }),
                attestation: Some(AttestationWatermark {
                    source: 4,
                    target: 9,
                    signing_root: None,
                }),
            },
        ] {
            assert_eq!(
                Watermarks::decode(&watermarks.encode()).unwrap(),
                watermarks
            );
        }
        assert!(matches!(
            Watermarks::decode(&[0; 10]),
            Err(DbError::Corrupt(_))
        ));
        let mut bad_flags = [0u8; WATERMARKS_LEN];
        bad_flags[0] = 0x80;
        assert!(matches!(
            Watermarks::decode(&bad_flags),
            Err(DbError::Corrupt(_))
        ));
    }

    #[test]
    fn refuses_unregistered_validators() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(&dir);
        assert!(matches!(
            db.check_and_insert_block_proposal(&pubkey(1), 1, root(1)),
            Err(NotSafe::UnregisteredValidator { pubkey: p }) if p == pubkey(1)
        ));
        assert!(matches!(
            db.check_and_insert_attestation(&pubkey(1), 1, 2, root(1)),
            Err(NotSafe::UnregisteredValidator { .. })
        ));
    }

    #[test]
    fn refuses_double_proposals_and_allows_the_same_block_again() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(&dir);
        db.register_validator(&pubkey(1)).unwrap();
        assert_eq!(
            db.check_and_insert_block_proposal(&pubkey(1), 10, root(1))
                .unwrap(),
            Safe::Valid
        );
        assert_eq!(
            db.check_and_insert_block_proposal(&pubkey(1), 10, root(1))
                .unwrap(),
            Safe::SameData
        );
        assert!(matches!(
            db.check_and_insert_block_proposal(&pubkey(1), 10, root(2)),
            Err(NotSafe::DoubleBlockProposal { slot: 10, existing: Some(r) }) if r == root(1)
        ));
        // Without a watermark, an earlier slot is not slashable.
        assert_eq!(
            db.check_and_insert_block_proposal(&pubkey(1), 9, root(3))
                .unwrap(),
            Safe::Valid
        );
        // Keys are independent.
        db.register_validator(&pubkey(2)).unwrap();
        assert_eq!(
            db.check_and_insert_block_proposal(&pubkey(2), 10, root(2))
                .unwrap(),
            Safe::Valid
        );
    }

    #[test]
    fn a_zero_signing_root_never_counts_as_a_repeat() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(&dir);
        db.register_validator(&pubkey(1)).unwrap();
        db.check_and_insert_block_proposal(&pubkey(1), 10, Root::ZERO)
            .unwrap();
        assert!(matches!(
            db.check_and_insert_block_proposal(&pubkey(1), 10, Root::ZERO),
            Err(NotSafe::DoubleBlockProposal { existing: None, .. })
        ));
        db.check_and_insert_attestation(&pubkey(1), 1, 2, Root::ZERO)
            .unwrap();
        assert!(matches!(
            db.check_and_insert_attestation(&pubkey(1), 1, 2, Root::ZERO),
            Err(NotSafe::DoubleVote { .. })
        ));
    }

    #[test]
    fn refuses_double_and_surround_votes_in_both_directions() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(&dir);
        let v = pubkey(1);
        db.register_validator(&v).unwrap();
        assert_eq!(
            db.check_and_insert_attestation(&v, 2, 5, root(1)).unwrap(),
            Safe::Valid
        );
        assert_eq!(
            db.check_and_insert_attestation(&v, 2, 5, root(1)).unwrap(),
            Safe::SameData
        );
        assert!(matches!(
            db.check_and_insert_attestation(&v, 2, 5, root(2)),
            Err(NotSafe::DoubleVote {
                target_epoch: 5,
                existing_source: 2,
                ..
            })
        ));
        assert!(matches!(
            db.check_and_insert_attestation(&v, 3, 5, root(1)),
            Err(NotSafe::DoubleVote { .. })
        ));
        // 1→6 surrounds 2→5.
        assert!(matches!(
            db.check_and_insert_attestation(&v, 1, 6, root(3)),
            Err(NotSafe::SurroundingVote {
                source_epoch: 1,
                target_epoch: 6,
                existing_source: 2,
                existing_target: 5
            })
        ));
        // 3→4 is surrounded by 2→5.
        assert!(matches!(
            db.check_and_insert_attestation(&v, 3, 4, root(3)),
            Err(NotSafe::SurroundedVote {
                source_epoch: 3,
                target_epoch: 4,
                existing_source: 2,
                existing_target: 5
            })
        ));
        // Sharing an end is not a surround: 2→6, then 1→2 (ends where 2→5 starts).
        assert_eq!(
            db.check_and_insert_attestation(&v, 2, 6, root(4)).unwrap(),
            Safe::Valid
        );
        assert_eq!(
            db.check_and_insert_attestation(&v, 1, 2, root(5)).unwrap(),
            Safe::Valid
        );
        assert!(matches!(
            db.check_and_insert_attestation(&v, 7, 6, root(6)),
            Err(NotSafe::SourceAfterTarget {
                source_epoch: 7,
                target_epoch: 6
            })
        ));
        // A refusal records nothing: 1→6 is still refused for the same reason.
        assert!(matches!(
            db.check_and_insert_attestation(&v, 1, 6, root(3)),
            Err(NotSafe::DoubleVote {
                target_epoch: 6,
                ..
            })
        ));
    }

    #[test]
    fn folding_keeps_the_maxima_and_a_root_only_when_unanimous() {
        assert_eq!(fold_blocks(&[]), None);
        assert_eq!(
            fold_blocks(&[(3, Some(root(1))), (7, Some(root(2))), (7, Some(root(2)))]),
            Some(BlockWatermark {
                slot: 7,
                signing_root: Some(root(2))
            })
        );
        assert_eq!(
            fold_blocks(&[(7, Some(root(2))), (7, None)]),
            Some(BlockWatermark {
                slot: 7,
                signing_root: None
            })
        );
        assert_eq!(
            fold_attestations(&[(1, 9, Some(root(1))), (4, 5, None)]),
            Some(AttestationWatermark {
                source: 4,
                target: 9,
                signing_root: None
            })
        );
        assert_eq!(
            fold_attestations(&[(4, 9, Some(root(1))), (2, 5, None)]),
            Some(AttestationWatermark {
                source: 4,
                target: 9,
                signing_root: Some(root(1))
            })
        );
        // Source after target: the target is raised so the watermark is a valid vote.
        assert_eq!(
            fold_attestations(&[(5, 2, None)]),
            Some(AttestationWatermark {
                source: 5,
                target: 5,
                signing_root: None
            })
        );
    }

    #[test]
    fn an_uncommitted_check_leaves_nothing_behind() {
        // The crash the public functions guard against: the process dies after the check and
        // the insert but before the commit. Nothing was signed yet, and nothing is on disk.
        let dir = tempfile::tempdir().unwrap();
        let v = pubkey(1);
        {
            let db = open(&dir);
            db.register_validator(&v).unwrap();
            let txn = db.db.begin_write().unwrap();
            assert_eq!(
                check_and_insert_block_proposal_txn(&txn, &v, 5, root(1)).unwrap(),
                Safe::Valid
            );
            assert_eq!(
                check_and_insert_attestation_txn(&txn, &v, 1, 2, root(1)).unwrap(),
                Safe::Valid
            );
            drop(txn);
            drop(db);
        }
        let db = open(&dir);
        assert!(db.is_registered(&v).unwrap());
        // A different block at slot 5 is not a double proposal: the first was never recorded
        // (and so never signed).
        assert_eq!(
            db.check_and_insert_block_proposal(&v, 5, root(2)).unwrap(),
            Safe::Valid
        );
        assert_eq!(
            db.check_and_insert_attestation(&v, 1, 2, root(2)).unwrap(),
            Safe::Valid
        );
    }

    #[test]
    fn refuses_a_database_of_another_chain() {
        let dir = tempfile::tempdir().unwrap();
        drop(open(&dir));
        assert!(matches!(
            SlashingDatabase::open_or_create(dir.path().join("sp.redb"), root(9)),
            Err(DbError::GenesisValidatorsRootMismatch { database, expected })
                if database == Root::ZERO && expected == root(9)
        ));
    }
}
