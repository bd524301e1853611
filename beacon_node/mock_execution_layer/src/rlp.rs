//! The little RLP the mock needs: encoding of byte strings, integers and lists, and walking the
//! items of a list (to read blob versioned hashes out of received blob transactions).
//!
//! [spec]: https://ethereum.org/developers/docs/data-structures-and-encoding/rlp/

use types::U256;

/// Appends the RLP of a byte string.
pub fn encode_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    match bytes {
        [b] if *b < 0x80 => out.push(*b),
        _ => {
            encode_length(out, bytes.len(), 0x80);
            out.extend_from_slice(bytes);
        }
    }
}

fn encode_length(out: &mut Vec<u8>, len: usize, offset: u8) {
    if len <= 55 {
        out.push(offset + len as u8);
    } else {
        let be = (len as u64).to_be_bytes();
        let skip = be.iter().take_while(|b| **b == 0).count();
        out.push(offset + 55 + (8 - skip) as u8);
        out.extend_from_slice(&be[skip..]);
    }
}

/// Appends the RLP of an unsigned integer (big-endian, no leading zeros; zero is the empty
/// string).
pub fn encode_u64(out: &mut Vec<u8>, value: u64) {
    let be = value.to_be_bytes();
    let skip = be.iter().take_while(|b| **b == 0).count();
    encode_bytes(out, &be[skip..]);
}

/// Appends the RLP of a 256-bit unsigned integer.
pub fn encode_u256(out: &mut Vec<u8>, value: &U256) {
    let be = value.to_be_bytes::<32>();
    let skip = be.iter().take_while(|b| **b == 0).count();
    encode_bytes(out, &be[skip..]);
}

/// Appends a list whose items' encodings are `payload`.
pub fn encode_list(out: &mut Vec<u8>, payload: &[u8]) {
    encode_length(out, payload.len(), 0xc0);
    out.extend_from_slice(payload);
}

/// The RLP of a list whose items' encodings are `payload`.
pub fn list(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 9);
    encode_list(&mut out, payload);
    out
}

/// One decoded item: a byte string or the payload of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// A byte string.
    Bytes(&'a [u8]),
    /// A list; its payload holds the items' encodings.
    List(&'a [u8]),
}

/// Why RLP did not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed RLP")]
pub struct RlpError;

/// Splits the first item off `input`.
pub fn decode_item(input: &[u8]) -> Result<(Item<'_>, &[u8]), RlpError> {
    let (&first, rest) = input.split_first().ok_or(RlpError)?;
    fn take(rest: &[u8], len: usize) -> Result<(&[u8], &[u8]), RlpError> {
        if rest.len() < len {
            Err(RlpError)
        } else {
            Ok(rest.split_at(len))
        }
    }
    let long_len = |rest: &'_ [u8], len_of_len: usize| -> Result<(usize, usize), RlpError> {
        if len_of_len > 8 || rest.len() < len_of_len {
            return Err(RlpError);
        }
        let len = rest[..len_of_len]
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        usize::try_from(len)
            .map(|l| (l, len_of_len))
            .map_err(|_| RlpError)
    };
    match first {
        0x00..=0x7f => Ok((Item::Bytes(&input[..1]), rest)),
        0x80..=0xb7 => {
            let (bytes, rest) = take(rest, usize::from(first - 0x80))?;
            Ok((Item::Bytes(bytes), rest))
        }
        0xb8..=0xbf => {
            let (len, skip) = long_len(rest, usize::from(first - 0xb7))?;
            let (bytes, rest) = take(&rest[skip..], len)?;
            Ok((Item::Bytes(bytes), rest))
        }
        0xc0..=0xf7 => {
            let (payload, rest) = take(rest, usize::from(first - 0xc0))?;
            Ok((Item::List(payload), rest))
        }
        0xf8..=0xff => {
            let (len, skip) = long_len(rest, usize::from(first - 0xf7))?;
            let (payload, rest) = take(&rest[skip..], len)?;
            Ok((Item::List(payload), rest))
        }
    }
}

/// The items of a list payload.
pub fn list_items(mut payload: &[u8]) -> Result<Vec<Item<'_>>, RlpError> {
    let mut items = Vec::new();
    while !payload.is_empty() {
        let (item, rest) = decode_item(payload)?;
        items.push(item);
        payload = rest;
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_the_yellow_paper_examples() {
        let mut out = vec![];
        encode_bytes(&mut out, b"dog");
        assert_eq!(out, [0x83, b'd', b'o', b'g']);
        let mut payload = vec![];
        encode_bytes(&mut payload, b"cat");
        encode_bytes(&mut payload, b"dog");
        assert_eq!(
            list(&payload),
            [0xc8, 0x83, b'c', b'a', b't', 0x83, b'd', b'o', b'g']
        );
        let mut out = vec![];
        encode_u64(&mut out, 0);
        encode_u64(&mut out, 15);
        encode_u64(&mut out, 1024);
        assert_eq!(out, [0x80, 0x0f, 0x82, 0x04, 0x00]);
        let long = [b'a'; 56];
        let mut out = vec![];
        encode_bytes(&mut out, &long);
        assert_eq!(&out[..2], &[0xb8, 56]);
    }

    #[test]
    fn decodes_what_it_encodes_and_rejects_truncation() {
        let mut payload = vec![];
        encode_bytes(&mut payload, &[0xaa; 100]);
        encode_u64(&mut payload, 5);
        encode_list(&mut payload, &[]);
        let encoded = list(&payload);
        let (item, rest) = decode_item(&encoded).expect("decodes");
        assert!(rest.is_empty());
        let Item::List(inner) = item else {
            panic!("a list")
        };
        let items = list_items(inner).expect("items");
        assert_eq!(
            items,
            vec![
                Item::Bytes(&[0xaa; 100]),
                Item::Bytes(&[5]),
                Item::List(&[])
            ]
        );
        assert_eq!(decode_item(&encoded[..encoded.len() - 1]), Err(RlpError));
        assert_eq!(decode_item(&[]), Err(RlpError));
    }
}
