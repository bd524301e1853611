//! A fixed-length bitset over `u64` words: the aggregation bits of one committee (or one sync
//! subcommittee), in the form the pool compares, merges and counts them.
//!
//! SSZ bitfields number bit `i` as bit `i % 8` of byte `i / 8`; packing those bytes little-endian
//! into words keeps the numbering (bit `i` is bit `i % 64` of word `i / 64`).

/// A bitset of `len` bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    /// `len` clear bits.
    pub(crate) fn new(len: usize) -> Self {
        Self {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// `len` bits from their words (bits past `len` are cleared; missing words are zero).
    pub(crate) fn from_words(mut words: Vec<u64>, len: usize) -> Self {
        words.resize(len.div_ceil(64), 0);
        let mut bits = Self { words, len };
        bits.clear_tail();
        bits
    }

    /// The first `len` bits of an SSZ bitfield's bytes (bits past `len` are ignored).
    pub(crate) fn from_ssz_bytes(bytes: &[u8], len: usize) -> Self {
        let mut bits = Self::new(len);
        for (w, word) in bits.words.iter_mut().enumerate() {
            let mut buf = [0u8; 8];
            let start = (w * 8).min(bytes.len());
            let end = (w * 8 + 8).min(bytes.len());
            buf[..end - start].copy_from_slice(&bytes[start..end]);
            *word = u64::from_le_bytes(buf);
        }
        bits.clear_tail();
        bits
    }

    fn clear_tail(&mut self) {
        let rem = self.len % 64;
        if rem != 0
            && let Some(last) = self.words.last_mut()
        {
            *last &= (1u64 << rem) - 1;
        }
    }

    /// The number of bits.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The words (bits past `len` are zero).
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// Sets bit `i`; false when `i` is out of range.
    pub(crate) fn set(&mut self, i: usize) -> bool {
        if i >= self.len {
            return false;
        }
        self.words[i / 64] |= 1 << (i % 64);
        true
    }

    /// Whether bit `i` is set.
    #[cfg(test)]
    pub(crate) fn get(&self, i: usize) -> bool {
        i < self.len && (self.words[i / 64] >> (i % 64)) & 1 == 1
    }

    /// The number of set bits.
    pub(crate) fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether every bit of `self` is set in `other` (same length).
    pub(crate) fn is_subset_of(&self, other: &Bits) -> bool {
        self.len == other.len
            && self
                .words
                .iter()
                .zip(&other.words)
                .all(|(a, b)| a & !b == 0)
    }

    /// Whether no bit is set in both (same length).
    pub(crate) fn is_disjoint(&self, other: &Bits) -> bool {
        self.len == other.len && self.words.iter().zip(&other.words).all(|(a, b)| a & b == 0)
    }

    /// `self |= other` (same length; a different length is left alone and returns false).
    pub(crate) fn union_with(&mut self, other: &Bits) -> bool {
        if self.len != other.len {
            return false;
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        true
    }

    /// The indices of the set bits, ascending.
    pub(crate) fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(w * 64 + bit)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssz_bytes_keep_the_bit_numbering_and_drop_bits_past_len() {
        // Bits 0, 9 and 70 set; byte 9 bit 7 (bit 79) is past len 75.
        let mut bytes = [0u8; 10];
        bytes[0] = 0b1;
        bytes[1] = 0b10;
        bytes[8] = 0b100_0000;
        bytes[9] = 0b1000_0000;
        let bits = Bits::from_ssz_bytes(&bytes, 75);
        assert_eq!(bits.iter_ones().collect::<Vec<_>>(), vec![0, 9, 70]);
        assert!(bits.get(70) && !bits.get(79));
        assert_eq!(bits.count_ones(), 3);
    }

    #[test]
    fn subset_disjoint_and_union() {
        let mut a = Bits::new(130);
        let mut b = Bits::new(130);
        a.set(1);
        a.set(129);
        b.set(2);
        assert!(a.is_disjoint(&b));
        assert!(!a.is_subset_of(&b));
        b.union_with(&a);
        assert!(a.is_subset_of(&b));
        assert!(!a.is_disjoint(&b));
        assert!(!a.set(130), "out of range");
        assert!(!a.is_subset_of(&Bits::new(129)), "different lengths");
    }
}
