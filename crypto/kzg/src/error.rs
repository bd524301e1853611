//! Why KZG input was rejected.
//!
//! c-kzg answers any bad input with one `C_KZG_BADARGS`. Only after it has refused do we look at
//! the input again to say what was wrong with which value, so well-formed input pays nothing for
//! the diagnosis.

use crate::types::{BYTES_PER_FIELD_ELEMENT, Blob, CELLS_PER_EXT_BLOB, Cell};

/// Why a 48-byte commitment or proof is not a usable G1 point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointError {
    /// Not a valid compressed encoding (compression flag unset, a malformed infinity, an x
    /// coordinate not below the field modulus).
    BadEncoding,
    /// The x coordinate has no point on the curve.
    NotOnCurve,
    /// On the curve but outside the prime-order subgroup G1.
    NotInSubgroup,
}

/// KZG input that was rejected, or a column that does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A value had the wrong number of bytes.
    #[error("{what} must be {expected} bytes, got {got}")]
    InvalidLength {
        /// What the bytes were meant to be.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it had.
        got: usize,
    },
    /// Two lists that pair up element by element have different lengths.
    #[error("{left} has {left_len} entries but {right} has {right_len}")]
    LengthMismatch {
        /// The first list.
        left: &'static str,
        /// Its length.
        left_len: usize,
        /// The second list.
        right: &'static str,
        /// Its length.
        right_len: usize,
    },
    /// A list that must not be empty was.
    #[error("{what} is empty")]
    Empty {
        /// The list.
        what: &'static str,
    },
    /// A 32-byte field element is not below the BLS12-381 scalar modulus.
    #[error("field element {index} of {what} is not canonical (not below the BLS modulus)")]
    NonCanonicalFieldElement {
        /// The value holding it (`blob`, `cells`, `z`, …).
        what: &'static str,
        /// Which field element: of the blob, or of all the cells together.
        index: usize,
    },
    /// A commitment or proof is not a point of G1.
    #[error("{what}[{index}] is not a G1 point: {reason:?}")]
    InvalidPoint {
        /// `commitments`, `proofs`, …
        what: &'static str,
        /// Its position in its list.
        index: usize,
        /// What is wrong with it.
        reason: PointError,
    },
    /// A cell (or column) index is not below `CELLS_PER_EXT_BLOB`.
    #[error("cell index {index} is not below {CELLS_PER_EXT_BLOB}")]
    CellIndexOutOfRange {
        /// The index.
        index: u64,
    },
    /// The same cell index appears twice where indices must be unique.
    #[error("cell index {index} appears more than once")]
    DuplicateCellIndex {
        /// The repeated index.
        index: u64,
    },
    /// Recovery's cell indices must be strictly ascending; this one is below its predecessor.
    #[error("cell index {index} is out of order (indices must be strictly ascending)")]
    UnorderedCellIndex {
        /// The index that breaks the order.
        index: u64,
    },
    /// Recovery got fewer than half of the cells, or more than all of them.
    #[error("recovery needs between {min} and {max} cells, got {got}")]
    WrongCellCount {
        /// At least this many (`CELLS_PER_EXT_BLOB / 2`).
        min: usize,
        /// At most this many (`CELLS_PER_EXT_BLOB`).
        max: usize,
        /// The number given.
        got: usize,
    },
    /// Well-formed input whose proofs do not hold (what
    /// [`crate::verify_data_column_sidecar_kzg_proofs_batch`] reports for a column that fails).
    #[error("the KZG proofs do not verify")]
    InvalidProof,
    /// c-kzg refused the input and none of the checks above explains why.
    #[error("c-kzg rejected the input of {function}: {detail}")]
    Rejected {
        /// The function called.
        function: &'static str,
        /// c-kzg's message.
        detail: String,
    },
}

/// The BLS12-381 scalar field modulus, big-endian.
///
/// [spec]: deneb/polynomial-commitments.md#constants (`BLS_MODULUS`)
pub(crate) const BLS_MODULUS: [u8; 32] = [
    0x73, 0xed, 0xa7, 0x53, 0x29, 0x9d, 0x7d, 0x48, 0x33, 0x39, 0xd8, 0x08, 0x09, 0xa1, 0xd8, 0x05,
    0x53, 0xbd, 0xa4, 0x02, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
];

/// The compressed encoding of the point at infinity: a valid commitment (the zero polynomial's)
/// and a valid proof.
const G1_INFINITY: [u8; 48] = {
    let mut bytes = [0u8; 48];
    bytes[0] = 0xc0;
    bytes
};

/// `Err(LengthMismatch)` unless the lengths are equal.
pub(crate) fn same_length(
    left: &'static str,
    left_len: usize,
    right: &'static str,
    right_len: usize,
) -> Result<(), Error> {
    if left_len == right_len {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            left,
            left_len,
            right,
            right_len,
        })
    }
}

/// The checks run on input c-kzg has refused, each returning the first fault it finds.
pub(crate) struct Diagnosis;

impl Diagnosis {
    pub(crate) fn field_element(
        &self,
        what: &'static str,
        index: usize,
        bytes: &[u8],
    ) -> Result<(), Error> {
        // Big-endian, so lexicographic order is numeric order.
        if bytes < BLS_MODULUS.as_slice() {
            Ok(())
        } else {
            Err(Error::NonCanonicalFieldElement { what, index })
        }
    }

    fn field_elements(
        &self,
        what: &'static str,
        first_index: usize,
        bytes: &[u8],
    ) -> Result<(), Error> {
        bytes
            .chunks_exact(BYTES_PER_FIELD_ELEMENT)
            .enumerate()
            .try_for_each(|(i, fe)| self.field_element(what, first_index + i, fe))
    }

    pub(crate) fn blob(&self, what: &'static str, blob: &Blob) -> Result<(), Error> {
        self.field_elements(what, 0, blob.as_ref())
    }

    pub(crate) fn cells(&self, what: &'static str, cells: &[Cell]) -> Result<(), Error> {
        let per_cell = crate::FIELD_ELEMENTS_PER_CELL;
        cells
            .iter()
            .enumerate()
            .try_for_each(|(i, cell)| self.field_elements(what, i * per_cell, &cell.to_bytes()))
    }

    pub(crate) fn cell_indices(&self, indices: &[u64]) -> Result<(), Error> {
        match indices.iter().find(|&&i| i >= CELLS_PER_EXT_BLOB as u64) {
            Some(&index) => Err(Error::CellIndexOutOfRange { index }),
            None => Ok(()),
        }
    }

    pub(crate) fn point(
        &self,
        what: &'static str,
        index: usize,
        bytes: &[u8; 48],
    ) -> Result<(), Error> {
        point_error(bytes).map_or(Ok(()), |reason| {
            Err(Error::InvalidPoint {
                what,
                index,
                reason,
            })
        })
    }
}

/// What is wrong with a compressed G1 point, if anything (infinity is a valid KZG point).
fn point_error(bytes: &[u8; 48]) -> Option<PointError> {
    if *bytes == G1_INFINITY {
        return None;
    }
    match blst::min_pk::PublicKey::uncompress(bytes) {
        Ok(point) => match point.validate() {
            Ok(()) => None,
            Err(blst::BLST_ERROR::BLST_POINT_NOT_IN_GROUP) => Some(PointError::NotInSubgroup),
            // Infinity with stray bits set decodes as infinity in blst but not in the spec.
            Err(_) => Some(PointError::BadEncoding),
        },
        Err(blst::BLST_ERROR::BLST_POINT_NOT_ON_CURVE) => Some(PointError::NotOnCurve),
        Err(_) => Some(PointError::BadEncoding),
    }
}

/// The error for input c-kzg refused with `error`: the first fault `check` finds, or
/// [`Error::Rejected`] with c-kzg's message.
pub(crate) fn diagnose(
    function: &'static str,
    error: c_kzg::Error,
    check: impl FnOnce(&Diagnosis) -> Result<(), Error>,
) -> Error {
    match check(&Diagnosis) {
        Err(found) => found,
        Ok(()) => Error::Rejected {
            function,
            detail: error.to_string(),
        },
    }
}
