//! The byte types KZG works on, and their checked constructors from untrusted slices.

pub use c_kzg::{
    BYTES_PER_BLOB, BYTES_PER_CELL, BYTES_PER_COMMITMENT, BYTES_PER_FIELD_ELEMENT, BYTES_PER_PROOF,
    Blob, Bytes32, CELLS_PER_EXT_BLOB, Cell, FIELD_ELEMENTS_PER_BLOB, FIELD_ELEMENTS_PER_CELL,
};

use crate::Error;

/// A KZG commitment as received: 48 bytes of a compressed G1 point, not yet checked.
///
/// [spec]: deneb/polynomial-commitments.md#custom-types
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KzgCommitment(pub [u8; BYTES_PER_COMMITMENT]);

/// A KZG proof as received: 48 bytes of a compressed G1 point, not yet checked.
///
/// [spec]: deneb/polynomial-commitments.md#custom-types
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KzgProof(pub [u8; BYTES_PER_PROOF]);

macro_rules! g1_bytes {
    ($t:ident, $what:literal) => {
        impl $t {
            /// Takes exactly 48 bytes; any other length is an [`Error::InvalidLength`].
            pub fn from_slice(bytes: &[u8]) -> Result<Self, Error> {
                <[u8; 48]>::try_from(bytes)
                    .map(Self)
                    .map_err(|_| Error::InvalidLength {
                        what: $what,
                        expected: 48,
                        got: bytes.len(),
                    })
            }
        }

        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("0x")?;
                self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
        }

        impl From<[u8; 48]> for $t {
            fn from(bytes: [u8; 48]) -> Self {
                Self(bytes)
            }
        }
    };
}

g1_bytes!(KzgCommitment, "commitment");
g1_bytes!(KzgProof, "proof");

/// A blob from exactly [`BYTES_PER_BLOB`] bytes (boxed: a blob is 128 KiB).
pub fn blob_from_bytes(bytes: &[u8]) -> Result<Box<Blob>, Error> {
    let array = <[u8; BYTES_PER_BLOB]>::try_from(bytes).map_err(|_| Error::InvalidLength {
        what: "blob",
        expected: BYTES_PER_BLOB,
        got: bytes.len(),
    })?;
    Ok(Box::new(Blob::new(array)))
}

/// A cell from exactly [`BYTES_PER_CELL`] bytes.
pub fn cell_from_bytes(bytes: &[u8]) -> Result<Cell, Error> {
    let array = <[u8; BYTES_PER_CELL]>::try_from(bytes).map_err(|_| Error::InvalidLength {
        what: "cell",
        expected: BYTES_PER_CELL,
        got: bytes.len(),
    })?;
    Ok(Cell::new(array))
}

/// A 32-byte field element (`z`, `y`) from exactly 32 bytes; whether it is canonical is checked
/// where it is used.
pub fn bytes32_from_bytes(bytes: &[u8]) -> Result<Bytes32, Error> {
    let array = <[u8; 32]>::try_from(bytes).map_err(|_| Error::InvalidLength {
        what: "field element",
        expected: BYTES_PER_FIELD_ELEMENT,
        got: bytes.len(),
    })?;
    Ok(Bytes32::new(array))
}
