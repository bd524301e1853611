//! Slashing protection: a local database, consulted before anything is signed, that refuses
//! double block proposals, double votes and surround votes per validator public key, with
//! EIP-3076 interchange import and export.
//!
//! * Messages signed here are kept in full: a new one is checked against every one of them
//!   (double proposal, double vote, surrounding and surrounded votes).
//! * Imported data is folded into low watermarks, as EIP-3076's minimal strategy allows: after
//!   an import, a block needs a slot above every known one, an attestation a source at or above
//!   every known source and a target above every known target. Even the exact message at the
//!   watermark is refused, as the interchange suite's minimal strategy expects.
//! * Each check-and-record is one redb write transaction, committed (durably) before the
//!   function returns, so a signature is only ever released for a message already on disk.
//!
//! ```no_run
//! # fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use slashing_protection::{Safe, SlashingDatabase};
//! use types::{BLSPubkey, Root};
//!
//! let db = SlashingDatabase::open_or_create("slashing_protection.redb", Root::ZERO)?;
//! let pubkey = BLSPubkey::repeat_byte(1);
//! db.register_validator(&pubkey)?;
//! match db.check_and_insert_block_proposal(&pubkey, 32, Root::repeat_byte(7)) {
//!     Ok(Safe::Valid | Safe::SameData) => { /* sign and publish */ }
//!     Err(not_safe) => eprintln!("refusing to sign: {not_safe}"),
//! }
//! # Ok(()) }
//! ```
//!
//! [spec]: https://eips.ethereum.org/EIPS/eip-3076

mod database;
pub mod interchange;

pub use database::{DbError, ImportError, ImportSummary, NotSafe, Safe, SlashingDatabase};
pub use interchange::{
    INTERCHANGE_FORMAT_VERSION, Interchange, InterchangeData, InterchangeMetadata,
    InterchangeParseError, SignedAttestation, SignedBlock,
};
