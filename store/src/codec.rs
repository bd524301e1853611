//! How values and keys are laid out in the database.
//!
//! Every SSZ value is stored as received, followed by a five-byte trailer: the fork the value
//! belongs to (one byte) and a CRC-32 of everything before the checksum. Reading strips the
//! trailer in place, so the bytes served to a peer or an API caller are never re-encoded, and a
//! damaged value is found before it is decoded or served.

use std::io::Write;

use types::{ForkName, Root, Slot};

use crate::StoreError;

/// Bytes after the payload: fork (1) and CRC-32 (4).
pub(crate) const TRAILER_LEN: usize = 5;

/// `payload ‖ fork ‖ crc32(payload ‖ fork)`.
pub(crate) fn seal(payload: &[u8], fork: ForkName) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + TRAILER_LEN);
    out.extend_from_slice(payload);
    append_trailer(&mut out, fork);
    out
}

/// [`seal`] of a payload the caller owns, in its own buffer: a payload [`unseal`] returned
/// still has the room, so nothing is copied. [`unseal_owned`] takes the trailer off again.
pub(crate) fn seal_owned(mut payload: Vec<u8>, fork: ForkName) -> Vec<u8> {
    append_trailer(&mut payload, fork);
    payload
}

/// The payload of a value [`seal_owned`] sealed, in the same buffer (the trailer cut off, not
/// checked: the caller sealed it).
pub(crate) fn unseal_owned(mut sealed: Vec<u8>) -> Vec<u8> {
    sealed.truncate(sealed.len().saturating_sub(TRAILER_LEN));
    sealed
}

/// [`seal`] as a writer: the payload goes through to `inner` as it is written, the CRC-32
/// computed on the way, and [`SealingWriter::finish`] writes the trailer. A value encoded in
/// pieces (a state's `ssz_write`) is sealed without being held whole in memory.
pub(crate) struct SealingWriter<W: Write> {
    inner: W,
    crc: crc32fast::Hasher,
    len: u64,
}

impl<W: Write> SealingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            crc: crc32fast::Hasher::new(),
            len: 0,
        }
    }

    /// Writes the trailer for `fork` and returns the writer, the sealed length and the CRC-32
    /// the trailer ends with (the bytes [`seal`] of the same payload would end with).
    pub(crate) fn finish(mut self, fork: ForkName) -> std::io::Result<(W, u64, [u8; 4])> {
        self.write_all(&[fork as u8])?;
        let crc = self.crc.finalize().to_le_bytes();
        self.inner.write_all(&crc)?;
        Ok((self.inner, self.len + 4, crc))
    }
}

impl<W: Write> Write for SealingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Appends the trailer to the payload in `out`: the fork, then the CRC-32 of both.
fn append_trailer(out: &mut Vec<u8>, fork: ForkName) {
    out.push(fork as u8);
    let crc = crc32fast::hash(out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Checks and strips the trailer written by [`seal`], returning the payload and its fork.
pub(crate) fn unseal(
    mut value: Vec<u8>,
    table: &'static str,
    key: impl FnOnce() -> String,
) -> Result<(Vec<u8>, ForkName), StoreError> {
    let fork = check_sealed(&value, table, key)?;
    value.truncate(value.len() - TRAILER_LEN);
    Ok((value, fork))
}

/// Checks the trailer written by [`seal`] and returns the sealed value's fork.
pub(crate) fn check_sealed(
    value: &[u8],
    table: &'static str,
    key: impl FnOnce() -> String,
) -> Result<ForkName, StoreError> {
    let corrupt = |reason: String, key: String| StoreError::CorruptValue { table, key, reason };
    let Some(body_len) = value.len().checked_sub(4) else {
        return Err(corrupt(
            format!("{} bytes is shorter than the trailer", value.len()),
            key(),
        ));
    };
    let stored = u32::from_le_bytes(value[body_len..].try_into().expect("4 bytes"));
    let computed = crc32fast::hash(&value[..body_len]);
    if stored != computed {
        return Err(corrupt(
            format!("checksum {computed:08x} does not match the stored {stored:08x}"),
            key(),
        ));
    }
    let Some(fork_at) = body_len.checked_sub(1) else {
        return Err(corrupt("no fork byte".into(), key()));
    };
    ForkName::ALL
        .get(usize::from(value[fork_at]))
        .copied()
        .ok_or_else(|| corrupt(format!("unknown fork byte {}", value[fork_at]), key()))
}

/// Key of a sidecar: block root, then the index big-endian (so a block's sidecars are adjacent
/// and sorted by index).
pub(crate) fn sidecar_key(block_root: &Root, index: u64) -> [u8; 40] {
    let mut key = [0u8; 40];
    key[..32].copy_from_slice(block_root.as_slice());
    key[32..].copy_from_slice(&index.to_be_bytes());
    key
}

/// Key of the sidecar slot index: slot big-endian, then the block root (so a range scan walks
/// blocks in slot order).
pub(crate) fn slot_root_key(slot: Slot, block_root: &Root) -> [u8; 40] {
    let mut key = [0u8; 40];
    key[..8].copy_from_slice(&slot.to_be_bytes());
    key[8..].copy_from_slice(block_root.as_slice());
    key
}

/// Splits a [`slot_root_key`].
pub(crate) fn split_slot_root_key(key: &[u8; 40]) -> (Slot, Root) {
    let slot = Slot::from_be_bytes(key[..8].try_into().expect("8 bytes"));
    (slot, Root::from_slice(&key[8..]))
}

/// A fixed-size record of `u64`s and roots, for summaries and metadata.
#[derive(Default)]
pub(crate) struct Record(Vec<u8>);

impl Record {
    pub(crate) fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn root(mut self, r: &Root) -> Self {
        self.0.extend_from_slice(r.as_slice());
        self
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Reads a [`Record`] back, failing with a clear error if it is too short.
pub(crate) struct RecordReader<'a> {
    bytes: &'a [u8],
    table: &'static str,
    key: String,
}

impl<'a> RecordReader<'a> {
    pub(crate) fn new(
        bytes: &'a [u8],
        expected_len: usize,
        table: &'static str,
        key: String,
    ) -> Result<Self, StoreError> {
        if bytes.len() != expected_len {
            return Err(StoreError::CorruptValue {
                table,
                key,
                reason: format!("record of {} bytes, expected {expected_len}", bytes.len()),
            });
        }
        Ok(Self { bytes, table, key })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        if self.bytes.len() < n {
            return Err(StoreError::CorruptValue {
                table: self.table,
                key: self.key.clone(),
                reason: "record too short".into(),
            });
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, StoreError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    pub(crate) fn root(&mut self) -> Result<Root, StoreError> {
        Ok(Root::from_slice(self.take(32)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owned_payload_is_sealed_in_its_own_buffer_and_unsealed_back() {
        let payload = vec![7u8; 1000];
        let (unsealed, _) =
            unseal(seal(&payload, ForkName::Fulu), "t", String::new).expect("sealed");
        let buffer = unsealed.as_ptr();
        let sealed = seal_owned(unsealed, ForkName::Fulu);
        assert_eq!(sealed, seal(&payload, ForkName::Fulu));
        assert_eq!(sealed.as_ptr(), buffer, "no new buffer");
        assert_eq!(unseal_owned(sealed), payload);
    }

    #[test]
    fn a_value_sealed_as_it_is_written_is_sealed_as_seal_does() {
        let payload: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        for fork in [ForkName::Phase0, ForkName::Fulu] {
            let mut writer = SealingWriter::new(Vec::new());
            for piece in payload.chunks(999) {
                writer.write_all(piece).unwrap();
            }
            let (sealed, len, crc) = writer.finish(fork).unwrap();
            assert_eq!(sealed, seal(&payload, fork));
            assert_eq!(len, sealed.len() as u64);
            assert_eq!(crc, sealed[sealed.len() - 4..]);
        }
    }

    #[test]
    fn sealed_values_round_trip_with_their_fork() {
        for fork in ForkName::ALL {
            let sealed = seal(b"ssz bytes", fork);
            assert_eq!(
                unseal(sealed, "t", String::new).unwrap(),
                (b"ssz bytes".to_vec(), fork)
            );
        }
    }

    #[test]
    fn any_flipped_bit_or_truncation_is_reported_as_corruption() {
        let sealed = seal(b"some payload", ForkName::Fulu);
        for i in 0..sealed.len() * 8 {
            let mut bad = sealed.clone();
            bad[i / 8] ^= 1 << (i % 8);
            let err = unseal(bad, "blocks", || "0xabc".into()).unwrap_err();
            assert!(matches!(
                err,
                StoreError::CorruptValue {
                    table: "blocks",
                    ..
                }
            ));
            assert!(err.to_string().contains("--purge-db"), "{err}");
        }
        for cut in 0..sealed.len() {
            assert!(unseal(sealed[..cut].to_vec(), "t", String::new).is_err());
        }
    }
}
