//! Errors shared by every part of the state transition.
//!
//! Block and epoch processing wrap these in their own errors, which add what was being done
//! (which operation, at which index, which check).

use types::{Epoch, ForkName, Slot};

/// A failure of a helper function or cache: an index out of range, arithmetic that would
/// overflow, a state of a fork this code does not process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Processing is written for Deneb and later; an earlier state was given.
    #[error("states of fork {0} are not processed (Deneb and later are)")]
    UnsupportedFork(ForkName),
    /// A spec function of a later fork ran on a state of a fork without the field it needs.
    #[error("a {fork} state has no `{field}` (the field is new in Electra)")]
    MissingField {
        /// The state field.
        field: &'static str,
        /// The fork of the state.
        fork: ForkName,
    },
    /// A validator index at or beyond the registry's length.
    #[error("validator index {index} is out of range (registry has {len})")]
    UnknownValidator {
        /// The validator index looked up.
        index: u64,
        /// The length of the list it was looked up in (the registry or a list parallel to it).
        len: usize,
    },
    /// A builder index at or beyond the builder registry's length [New in Gloas].
    #[error("builder index {index} is out of range (registry has {len})")]
    UnknownBuilder {
        /// The builder index looked up.
        index: u64,
        /// `len(state.builders)`.
        len: usize,
    },
    /// Arithmetic that would overflow or underflow `u64`, or divide by zero.
    #[error("arithmetic overflow in {0}")]
    ArithmeticOverflow(&'static str),
    /// A slot whose root is not in the state's `block_roots`/`state_roots` window.
    #[error("slot {slot} is outside the state's root history (state slot {state_slot})")]
    SlotOutOfRange {
        /// The slot whose block root was asked for.
        slot: Slot,
        /// `state.slot`; roots are kept for the `SLOTS_PER_HISTORICAL_ROOT` slots before it.
        state_slot: Slot,
    },
    /// An epoch for which committees cannot be computed from this state.
    #[error("no committees for epoch {epoch} from a state at epoch {current}")]
    EpochOutOfRange {
        /// The epoch committees were asked for.
        epoch: Epoch,
        /// The current epoch of the state (or the epoch of the committee cache asked).
        current: Epoch,
    },
    /// A committee index at or beyond the epoch's committees per slot.
    #[error("committee index {index} is out of range ({count} committees per slot)")]
    CommitteeIndexOutOfRange {
        /// The committee index asked for.
        index: u64,
        /// `get_committee_count_per_slot` at the committee's epoch.
        count: u64,
    },
    /// A payload timeliness committee asked for a slot before the Gloas fork, which has none.
    #[error("epoch {epoch} is before the Gloas fork (epoch {fork_epoch}): it has no PTC")]
    PtcBeforeFork {
        /// The epoch of the slot asked for.
        epoch: Epoch,
        /// The epoch of the state's fork (Gloas).
        fork_epoch: Epoch,
    },
    /// No active validators: committees and proposers cannot be computed.
    #[error("there are no active validators at epoch {0}")]
    NoActiveValidators(Epoch),
    /// A draw by effective balance (the named spec function) from an empty list of validators,
    /// which the spec asserts against; callers that know the epoch report
    /// [`Error::NoActiveValidators`] first.
    #[error("{0}: no validators to draw from")]
    NoCandidates(&'static str),
    /// A list of the state is full (its SSZ limit is reached).
    #[error("state list `{0}` is full")]
    ListFull(&'static str),
    /// A milhouse tree operation failed.
    #[error("state tree: {0}")]
    Tree(String),
    /// The state's registry-parallel lists are not all of one kind (fixed-depth before Gloas,
    /// progressive from Gloas on): a state built wrongly, never one decoded or upgraded.
    #[error("{0}: the state's lists are of two kinds")]
    ListKindsDiffer(&'static str),
    /// A BLS public key in the registry could not be decompressed.
    #[error("validator {0} has an invalid public key")]
    InvalidPubkey(u64),
}

impl From<milhouse::Error> for Error {
    fn from(e: milhouse::Error) -> Self {
        Error::Tree(format!("{e:?}"))
    }
}

impl From<packed_list::Error> for Error {
    fn from(e: packed_list::Error) -> Self {
        Error::Tree(format!("{e:?}"))
    }
}

/// `a + b`, or an [`Error::ArithmeticOverflow`] naming `what`.
#[inline]
pub fn add(a: u64, b: u64, what: &'static str) -> Result<u64, Error> {
    a.checked_add(b).ok_or(Error::ArithmeticOverflow(what))
}

/// `a * b`, or an [`Error::ArithmeticOverflow`] naming `what`.
#[inline]
pub fn mul(a: u64, b: u64, what: &'static str) -> Result<u64, Error> {
    a.checked_mul(b).ok_or(Error::ArithmeticOverflow(what))
}

/// `a / b`, or an [`Error::ArithmeticOverflow`] naming `what` when `b` is zero.
#[inline]
pub fn div(a: u64, b: u64, what: &'static str) -> Result<u64, Error> {
    a.checked_div(b).ok_or(Error::ArithmeticOverflow(what))
}

/// `a - b`, or an [`Error::ArithmeticOverflow`] naming `what`.
#[inline]
pub fn sub(a: u64, b: u64, what: &'static str) -> Result<u64, Error> {
    a.checked_sub(b).ok_or(Error::ArithmeticOverflow(what))
}
