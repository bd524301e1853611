//! The `ssz_snappy` encoding of eth2 req/resp: varint length prefixes, snappy frames, response
//! codes and context bytes, with every bound the spec asks the reader to enforce.
//!
//! [spec]: phase0/p2p-interface.md#encoding-strategies

use std::io::Read;

use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use ssz::Encode;
use types::{ChainSpec, EthSpec, ForkDigest};

use super::methods::{
    ErrorResponse, MAX_ERROR_MESSAGE_LEN, Protocol, Request, Response, ResponseCode, ResponseItem,
};
use crate::fork_context::ForkContext;

/// The longest a `uint64` varint may be.
const MAX_VARINT_LEN: usize = 10;
/// Snappy framing: the stream identifier chunk.
const STREAM_IDENTIFIER: [u8; 10] = [0xff, 0x06, 0x00, 0x00, b's', b'N', b'a', b'P', b'p', b'Y'];
/// Snappy framing: the most uncompressed bytes one chunk may carry.
const MAX_FRAME_UNCOMPRESSED: usize = 65_536;

/// What went wrong reading or writing a req/resp stream.
#[derive(Debug, thiserror::Error)]
pub enum RpcCodecError {
    /// The transport failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The stream ended in the middle of a chunk.
    #[error("stream ended inside a chunk while reading {0}")]
    Truncated(&'static str),
    /// The length prefix is not a valid `uint64` varint.
    #[error("invalid varint length prefix")]
    InvalidVarint,
    /// The declared SSZ length is outside the type's bounds.
    #[error("declared length {len} is outside [{min}, {max}]")]
    LengthOutOfBounds {
        /// The length the prefix declares.
        len: u64,
        /// The type's smallest SSZ length.
        min: usize,
        /// The type's largest SSZ length.
        max: usize,
    },
    /// The compressed payload is longer than `max_compressed_len` of the declared length allows.
    #[error("compressed payload exceeds {limit} bytes for a declared length of {len}")]
    CompressedTooLarge {
        /// The uncompressed length the prefix declares.
        len: usize,
        /// `max_compressed_len(len)`, the most compressed bytes allowed for it.
        limit: usize,
    },
    /// The snappy frames are malformed (bad chunk, checksum, or compressed block).
    #[error("invalid snappy data: {0}")]
    InvalidSnappy(String),
    /// The frames decompress to a different length than the prefix declared.
    #[error("payload decompresses to {actual} bytes, the prefix declared {declared}")]
    LengthMismatch {
        /// The length the prefix declares.
        declared: usize,
        /// The length the frames decompress to.
        actual: usize,
    },
    /// The payload is not valid SSZ of the expected type.
    #[error("invalid ssz: {0:?}")]
    Ssz(ssz::DecodeError),
    /// The context bytes are not a fork digest of this chain.
    #[error("unknown context bytes {0}")]
    UnknownContextBytes(ForkDigest),
    /// Bytes follow the request payload.
    #[error("bytes after the request payload")]
    TrailingBytes,
    /// The responder sent more chunks than the request allows.
    #[error("more than {max} response chunks")]
    TooManyChunks {
        /// The most response chunks the request allows.
        max: u64,
    },
    /// A response item does not belong to the protocol it is written on.
    #[error("response item does not belong to {0}")]
    WrongItem(Protocol),
}

impl From<ssz::DecodeError> for RpcCodecError {
    fn from(e: ssz::DecodeError) -> Self {
        RpcCodecError::Ssz(e)
    }
}

/// `max_compressed_len(n)`: the worst-case snappy output for `n` input bytes.
///
/// [spec]: phase0/p2p-interface.md#ssz-snappy-encoding-strategy
pub const fn max_compressed_len(n: usize) -> usize {
    32 + n + n / 6
}

/// The framed-snappy limit for a payload of `n` bytes: the block bound plus the stream
/// identifier and each frame's 8-byte header and checksum.
pub const fn max_framed_len(n: usize) -> usize {
    max_compressed_len(n) + STREAM_IDENTIFIER.len() + 8 * (n / MAX_FRAME_UNCOMPRESSED + 1)
}

/// Appends the unsigned LEB128 varint of `value`.
pub fn encode_varint(mut value: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// `<varint ssz length> | <snappy frames of the ssz bytes>`.
pub fn encode_payload(ssz: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(max_framed_len(ssz.len()) + MAX_VARINT_LEN);
    encode_varint(ssz.len() as u64, &mut out);
    if !ssz.is_empty() {
        let mut encoder = snap::write::FrameEncoder::new(out);
        std::io::Write::write_all(&mut encoder, ssz).expect("writing into a Vec cannot fail");
        out = encoder
            .into_inner()
            .expect("flushing into a Vec cannot fail");
    }
    out
}

/// The bytes a requester writes: the encoded request body (nothing for body-less requests).
pub fn encode_request<E: EthSpec>(request: &Request<E>) -> Vec<u8> {
    if request.protocol().has_request_body() {
        encode_payload(&request.as_ssz_bytes())
    } else {
        Vec::new()
    }
}

/// One successful response chunk: `0x00 | [context bytes] | payload`.
pub fn encode_response_item<E: EthSpec>(
    protocol: Protocol,
    item: &ResponseItem<E>,
    fork_context: &ForkContext,
) -> Result<Vec<u8>, RpcCodecError> {
    if !item.fits(protocol) {
        return Err(RpcCodecError::WrongItem(protocol));
    }
    let mut out = vec![ResponseCode::SUCCESS.0];
    if protocol.has_context_bytes() {
        let slot = item
            .context_slot()
            .ok_or(RpcCodecError::WrongItem(protocol))?;
        out.extend_from_slice(fork_context.digest_at_slot::<E>(slot).as_slice());
    }
    out.extend(encode_payload(&item.as_ssz_bytes()));
    Ok(out)
}

/// An error chunk: `code | payload(ErrorMessage)`; the message is cut to 256 bytes.
pub fn encode_error_chunk(code: ResponseCode, message: &str) -> Vec<u8> {
    let bytes = &message.as_bytes()[..message.len().min(MAX_ERROR_MESSAGE_LEN)];
    let mut out = vec![code.0];
    out.extend(encode_payload(&bytes.to_vec().as_ssz_bytes()));
    out
}

/// Reads bytes into `buf` until it is full; `Ok(false)` when the stream ended before any byte.
async fn read_exact_or_eof<R: AsyncRead + Unpin>(
    io: &mut R,
    buf: &mut [u8],
    what: &'static str,
) -> Result<bool, RpcCodecError> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = io.read(&mut buf[filled..]).await?;
        if n == 0 {
            return if filled == 0 {
                Ok(false)
            } else {
                Err(RpcCodecError::Truncated(what))
            };
        }
        filled += n;
    }
    Ok(true)
}

async fn read_exact<R: AsyncRead + Unpin>(
    io: &mut R,
    buf: &mut [u8],
    what: &'static str,
) -> Result<(), RpcCodecError> {
    if read_exact_or_eof(io, buf, what).await? || buf.is_empty() {
        Ok(())
    } else {
        Err(RpcCodecError::Truncated(what))
    }
}

/// Reads an unsigned LEB128 `uint64`.
async fn read_varint<R: AsyncRead + Unpin>(io: &mut R) -> Result<u64, RpcCodecError> {
    let mut value: u64 = 0;
    for i in 0..MAX_VARINT_LEN {
        let mut byte = [0u8];
        read_exact(io, &mut byte, "length prefix").await?;
        let low = u64::from(byte[0] & 0x7f);
        if i == MAX_VARINT_LEN - 1 && byte[0] > 1 {
            return Err(RpcCodecError::InvalidVarint);
        }
        value |= low << (7 * i);
        if byte[0] & 0x80 == 0 {
            // Reject non-minimal encodings (a trailing zero group).
            if i > 0 && byte[0] == 0 {
                return Err(RpcCodecError::InvalidVarint);
            }
            return Ok(value);
        }
    }
    Err(RpcCodecError::InvalidVarint)
}

/// Reads `<varint length> | <snappy frames>` and returns the decompressed SSZ bytes, checking
/// the declared length against `[min, max]` before reading a frame and the compressed size
/// against [`max_framed_len`] while reading, so memory use never exceeds `max` plus its bound.
pub async fn read_payload<R: AsyncRead + Unpin>(
    io: &mut R,
    min: usize,
    max: usize,
) -> Result<Vec<u8>, RpcCodecError> {
    let declared = read_varint(io).await?;
    if declared < min as u64 || declared > max as u64 {
        return Err(RpcCodecError::LengthOutOfBounds {
            len: declared,
            min,
            max,
        });
    }
    let len = declared as usize;
    if len == 0 {
        return Ok(Vec::new());
    }
    let limit = max_framed_len(len);
    let mut raw = Vec::new();
    let mut decompressed = 0usize;
    while decompressed < len {
        let mut header = [0u8; 4];
        read_exact(io, &mut header, "snappy frame header").await?;
        let kind = header[0];
        let frame_len = u32::from_le_bytes([header[1], header[2], header[3], 0]) as usize;
        if raw.len() + header.len() + frame_len > limit {
            return Err(RpcCodecError::CompressedTooLarge { len, limit });
        }
        let mut body = vec![0u8; frame_len];
        read_exact(io, &mut body, "snappy frame").await?;
        match kind {
            0xff if body != STREAM_IDENTIFIER[4..] => {
                return Err(RpcCodecError::InvalidSnappy("bad stream identifier".into()));
            }
            0xff => {}
            0x00 => {
                let block = body.get(4..).ok_or_else(|| {
                    RpcCodecError::InvalidSnappy("compressed frame without checksum".into())
                })?;
                let n = snap::raw::decompress_len(block)
                    .map_err(|e| RpcCodecError::InvalidSnappy(e.to_string()))?;
                if n > MAX_FRAME_UNCOMPRESSED {
                    return Err(RpcCodecError::InvalidSnappy(
                        "frame exceeds 65536 bytes".into(),
                    ));
                }
                decompressed += n;
            }
            0x01 => {
                let n = frame_len.checked_sub(4).ok_or_else(|| {
                    RpcCodecError::InvalidSnappy("uncompressed frame without checksum".into())
                })?;
                if n > MAX_FRAME_UNCOMPRESSED {
                    return Err(RpcCodecError::InvalidSnappy(
                        "frame exceeds 65536 bytes".into(),
                    ));
                }
                decompressed += n;
            }
            0x02..=0x7f => {
                return Err(RpcCodecError::InvalidSnappy(format!(
                    "reserved unskippable chunk type {kind:#04x}"
                )));
            }
            // Padding and reserved skippable chunks.
            _ => {}
        }
        raw.extend_from_slice(&header);
        raw.extend_from_slice(&body);
        if decompressed > len {
            return Err(RpcCodecError::LengthMismatch {
                declared: len,
                actual: decompressed,
            });
        }
    }
    let mut out = Vec::with_capacity(len);
    snap::read::FrameDecoder::new(raw.as_slice())
        .take(len as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| RpcCodecError::InvalidSnappy(e.to_string()))?;
    if out.len() != len {
        return Err(RpcCodecError::LengthMismatch {
            declared: len,
            actual: out.len(),
        });
    }
    Ok(out)
}

/// Reads a whole request of `protocol` and checks that nothing follows it.
pub async fn read_request<E: EthSpec, R: AsyncRead + Unpin>(
    io: &mut R,
    protocol: Protocol,
    spec: &ChainSpec,
) -> Result<Request<E>, RpcCodecError> {
    let bytes = if protocol.has_request_body() {
        let (min, max) = protocol.request_bounds::<E>(spec);
        read_payload(io, min, max).await?
    } else {
        Vec::new()
    };
    let mut extra = [0u8];
    if io.read(&mut extra).await? != 0 {
        return Err(RpcCodecError::TrailingBytes);
    }
    Ok(Request::from_ssz_bytes(protocol, &bytes, spec)?)
}

/// Reads one response chunk: `Ok(None)` at a clean end of stream, `Ok(Some(Err(_)))` for an
/// error chunk.
pub async fn read_response_chunk<E: EthSpec, R: AsyncRead + Unpin>(
    io: &mut R,
    protocol: Protocol,
    fork_context: &ForkContext,
) -> Result<Option<Result<ResponseItem<E>, ErrorResponse>>, RpcCodecError> {
    let mut code = [0u8];
    if !read_exact_or_eof(io, &mut code, "response code").await? {
        return Ok(None);
    }
    if code[0] != ResponseCode::SUCCESS.0 {
        let bytes = read_payload(io, 0, MAX_ERROR_MESSAGE_LEN).await?;
        return Ok(Some(Err(ErrorResponse {
            code: ResponseCode(code[0]),
            message: String::from_utf8_lossy(&bytes).into_owned(),
        })));
    }
    let fork = if protocol.has_context_bytes() {
        let mut digest = [0u8; 4];
        read_exact(io, &mut digest, "context bytes").await?;
        let digest = ForkDigest::from(digest);
        fork_context
            .fork_of_digest(digest)
            .ok_or(RpcCodecError::UnknownContextBytes(digest))?
    } else {
        types::ForkName::Phase0
    };
    let (min, max) = protocol.response_bounds(fork_context.spec());
    let bytes = read_payload(io, min, max).await?;
    Ok(Some(Ok(ResponseItem::from_ssz_bytes(
        protocol, fork, &bytes,
    )?)))
}

/// Reads a whole response to `request`: chunks until the end of the stream or an error chunk,
/// never more than the request allows.
pub async fn read_response<E: EthSpec, R: AsyncRead + Unpin>(
    io: &mut R,
    request: &Request<E>,
    fork_context: &ForkContext,
) -> Result<Response<E>, RpcCodecError> {
    let protocol = request.protocol();
    let max = request.max_response_chunks(fork_context.spec());
    let mut response = Response::success(Vec::new());
    while let Some(chunk) = read_response_chunk(io, protocol, fork_context).await? {
        match chunk {
            Ok(item) => {
                if response.items.len() as u64 >= max {
                    return Err(RpcCodecError::TooManyChunks { max });
                }
                response.items.push(item);
            }
            Err(error) => {
                response.error = Some(error);
                break;
            }
        }
    }
    Ok(response)
}

/// Writes `bytes` and closes the write side of the stream (requests: one payload).
pub async fn write_and_close<W: AsyncWrite + Unpin>(
    io: &mut W,
    bytes: &[u8],
) -> Result<(), RpcCodecError> {
    io.write_all(bytes).await?;
    io.close().await?;
    Ok(())
}

/// Writes one response chunk and flushes it, so that no write (and so no muxer frame: yamux and
/// mplex make one frame per write, split at their frame size) holds bytes of two chunks.
///
/// The stream is a byte stream and Arbor's own reader accepts any framing, but other clients'
/// readers do not: Lodestar's decoder hands everything buffered after a chunk's length prefix to
/// that chunk's snappy decoder, so a frame carrying the end of one chunk and the start of the
/// next fails there (`SSZ_SNAPPY_ERROR_TOO_MUCH_BYTES_READ`) or loses the second chunk.
/// Lighthouse, Teku, Prysm, Nimbus and Lodestar all write one chunk per write.
pub async fn write_chunk<W: AsyncWrite + Unpin>(
    io: &mut W,
    chunk: &[u8],
) -> Result<(), RpcCodecError> {
    io.write_all(chunk).await?;
    io.flush().await?;
    Ok(())
}

/// Writes a response chunk by chunk ([`write_chunk`]), each item encoded just before it is
/// written, and closes the stream. An item that cannot be encoded for `protocol` (a bug of ours)
/// ends the response with a `SERVER_ERROR` chunk after the chunks already written; its error is
/// returned once the stream is closed.
pub async fn write_response<E: EthSpec, W: AsyncWrite + Unpin>(
    io: &mut W,
    protocol: Protocol,
    response: &Response<E>,
    fork_context: &ForkContext,
) -> Result<(), RpcCodecError> {
    let mut failed = None;
    for item in &response.items {
        match encode_response_item(protocol, item, fork_context) {
            Ok(chunk) => write_chunk(io, &chunk).await?,
            Err(e) => {
                write_chunk(
                    io,
                    &encode_error_chunk(ResponseCode::SERVER_ERROR, &e.to_string()),
                )
                .await?;
                failed = Some(e);
                break;
            }
        }
    }
    if failed.is_none()
        && let Some(error) = &response.error
    {
        write_chunk(io, &encode_error_chunk(error.code, &error.message)).await?;
    }
    io.close().await?;
    failed.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::methods::{BlocksByRangeRequest, MetaData, StatusMessage};
    use futures::executor::block_on;
    use futures::io::Cursor;
    use std::sync::Arc;
    use types::{ForkName, MinimalEthSpec, Root};

    type E = MinimalEthSpec;

    fn ctx() -> ForkContext {
        let spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        ForkContext::new(spec, Root::repeat_byte(3))
    }

    fn status() -> StatusMessage {
        StatusMessage {
            fork_digest: ForkDigest::from([1, 2, 3, 4]),
            finalized_root: Root::repeat_byte(5),
            finalized_epoch: 6,
            head_root: Root::repeat_byte(7),
            head_slot: 80,
            earliest_available_slot: 9,
        }
    }

    fn read_req(bytes: Vec<u8>, protocol: Protocol) -> Result<Request<E>, RpcCodecError> {
        block_on(read_request::<E, _>(
            &mut Cursor::new(bytes),
            protocol,
            ctx().spec(),
        ))
    }

    fn read_resp(bytes: Vec<u8>, request: &Request<E>) -> Result<Response<E>, RpcCodecError> {
        block_on(read_response::<E, _>(
            &mut Cursor::new(bytes),
            request,
            &ctx(),
        ))
    }

    #[test]
    fn varint_round_trips_and_rejects_overlong() {
        for value in [0u64, 1, 127, 128, 300, 1 << 32, u64::MAX] {
            let mut bytes = Vec::new();
            encode_varint(value, &mut bytes);
            assert_eq!(
                block_on(read_varint(&mut Cursor::new(bytes))).unwrap(),
                value
            );
        }
        // 11 continuation bytes.
        let bytes = vec![0xff; 11];
        assert!(matches!(
            block_on(read_varint(&mut Cursor::new(bytes))),
            Err(RpcCodecError::InvalidVarint)
        ));
        // Non-minimal: 0x80 0x00 encodes 0 in two bytes.
        assert!(matches!(
            block_on(read_varint(&mut Cursor::new(vec![0x80, 0x00]))),
            Err(RpcCodecError::InvalidVarint)
        ));
    }

    #[test]
    fn status_request_round_trips() {
        let request = Request::<E>::Status(status());
        let decoded = read_req(encode_request(&request), Protocol::StatusV2).unwrap();
        assert_eq!(decoded, request);
    }

    #[test]
    fn known_status_encoding() {
        // varint(92) then the snappy stream identifier.
        let bytes = encode_request(&Request::<E>::Status(status()));
        assert_eq!(bytes[0], 92);
        assert_eq!(&bytes[1..11], &STREAM_IDENTIFIER);
    }

    #[test]
    fn rejects_length_prefix_out_of_bounds() {
        let mut bytes = encode_payload(&[0u8; 93]);
        bytes.truncate(bytes.len());
        assert!(matches!(
            read_req(bytes, Protocol::StatusV2),
            Err(RpcCodecError::LengthOutOfBounds { len: 93, .. })
        ));
        // A ping whose prefix says 7 bytes.
        let bytes = encode_payload(&[0u8; 7]);
        assert!(matches!(
            read_req(bytes, Protocol::Ping),
            Err(RpcCodecError::LengthOutOfBounds { len: 7, .. })
        ));
    }

    #[test]
    fn rejects_prefix_that_disagrees_with_frames() {
        // Prefix says 8 bytes, the frames hold 16.
        let mut bytes = vec![8];
        bytes.extend_from_slice(&encode_payload(&[1u8; 16])[1..]);
        assert!(matches!(
            read_req(bytes, Protocol::Ping),
            Err(RpcCodecError::LengthMismatch { declared: 8, .. })
        ));
    }

    #[test]
    fn rejects_truncated_stream() {
        let full = encode_request(&Request::<E>::Status(status()));
        for cut in [1, 5, 11, full.len() - 1] {
            let result = read_req(full[..cut].to_vec(), Protocol::StatusV2);
            assert!(
                matches!(result, Err(RpcCodecError::Truncated(_))),
                "cut at {cut}: {result:?}"
            );
        }
    }

    #[test]
    fn rejects_bad_snappy() {
        let mut bytes = encode_request(&Request::<E>::Ping(42));
        // Corrupt the checksum of the data frame.
        let checksum_at = 1 + STREAM_IDENTIFIER.len() + 4;
        bytes[checksum_at] ^= 0xff;
        assert!(matches!(
            read_req(bytes, Protocol::Ping),
            Err(RpcCodecError::InvalidSnappy(_))
        ));
        // A reserved unskippable chunk type.
        let bytes = vec![8, 0x02, 0x01, 0x00, 0x00, 0x00];
        assert!(matches!(
            read_req(bytes, Protocol::Ping),
            Err(RpcCodecError::InvalidSnappy(_))
        ));
        // A bad stream identifier.
        let mut bytes = encode_request(&Request::<E>::Ping(42));
        bytes[5] = b'X';
        assert!(matches!(
            read_req(bytes, Protocol::Ping),
            Err(RpcCodecError::InvalidSnappy(_))
        ));
    }

    #[test]
    fn rejects_oversized_compressed_data() {
        // Prefix 8 bytes but a skippable padding frame of 1000 bytes.
        let mut bytes = vec![8, 0xfe, 0xe8, 0x03, 0x00];
        bytes.extend(vec![0u8; 1000]);
        assert!(matches!(
            read_req(bytes, Protocol::Ping),
            Err(RpcCodecError::CompressedTooLarge { .. })
        ));
    }

    #[test]
    fn rejects_oversized_chunk_before_reading_it() {
        // A response chunk that declares more than MAX_PAYLOAD_SIZE: rejected from the prefix.
        let spec = ctx().spec().clone();
        let mut bytes = vec![0u8];
        bytes.extend_from_slice(ctx().digest_at_epoch(0).as_slice());
        encode_varint(spec.max_payload_size + 1, &mut bytes);
        let request = Request::<E>::BlocksByRange(BlocksByRangeRequest {
            start_slot: 0,
            count: 1,
            step: 1,
        });
        assert!(matches!(
            read_resp(bytes, &request),
            Err(RpcCodecError::LengthOutOfBounds { .. })
        ));
    }

    #[test]
    fn rejects_trailing_bytes_after_request() {
        let mut bytes = encode_request(&Request::<E>::Ping(1));
        bytes.push(0);
        assert!(matches!(
            read_req(bytes, Protocol::Ping),
            Err(RpcCodecError::TrailingBytes)
        ));
    }

    #[test]
    fn rejects_wrong_context_bytes() {
        let ctx = ctx();
        let sidecar = types::fulu::DataColumnSidecar::<E> {
            index: 3,
            column: Default::default(),
            kzg_commitments: Default::default(),
            kzg_proofs: Default::default(),
            signed_block_header: types::phase0::SignedBeaconBlockHeader {
                message: types::phase0::BeaconBlockHeader {
                    slot: 9,
                    proposer_index: 1,
                    parent_root: Root::ZERO,
                    state_root: Root::ZERO,
                    body_root: Root::ZERO,
                },
                signature: Default::default(),
            },
            kzg_commitments_inclusion_proof: Default::default(),
        };
        let item =
            ResponseItem::DataColumnSidecar(Arc::new(types::DataColumnSidecar::Fulu(sidecar)));
        let request = Request::<E>::DataColumnsByRoot(vec![]);
        let good = encode_response_item(Protocol::DataColumnsByRoot, &item, &ctx).unwrap();
        // With zero chunks allowed, even a good chunk is one too many.
        assert!(matches!(
            read_resp(good.clone(), &request),
            Err(RpcCodecError::TooManyChunks { max: 0 })
        ));
        let request = Request::<E>::DataColumnsByRange(crate::rpc::DataColumnsByRangeRequest {
            start_slot: 0,
            count: 1,
            columns: vec![3],
        });
        let response = read_resp(good.clone(), &request).unwrap();
        assert_eq!(response.items, vec![item]);
        let mut bad = good;
        bad[1] ^= 0x55;
        assert!(matches!(
            read_resp(bad, &request),
            Err(RpcCodecError::UnknownContextBytes(_))
        ));
    }

    #[test]
    fn context_bytes_of_a_fork_without_the_type_fail_to_decode() {
        // A phase0 digest in front of a data column: the type does not exist at phase0.
        let spec = ChainSpec::minimal();
        let root = Root::repeat_byte(3);
        let mut spec_fulu_later = spec
            .clone()
            .with_forks_at_genesis_through(ForkName::Electra);
        spec_fulu_later.fulu_fork_epoch = 10;
        let ctx = ForkContext::new(spec_fulu_later, root);
        let mut bytes = vec![0u8];
        bytes.extend_from_slice(ctx.digest_at_epoch(0).as_slice());
        bytes.extend(encode_payload(&[0u8; 300]));
        let request = Request::<E>::DataColumnsByRange(crate::rpc::DataColumnsByRangeRequest {
            start_slot: 0,
            count: 1,
            columns: vec![0],
        });
        let result = block_on(read_response::<E, _>(
            &mut Cursor::new(bytes),
            &request,
            &ctx,
        ));
        assert!(matches!(result, Err(RpcCodecError::Ssz(_))), "{result:?}");
    }

    #[test]
    fn error_chunk_ends_response() {
        let ctx = ctx();
        let request = Request::<E>::MetaData;
        let mut bytes = encode_error_chunk(ResponseCode::RESOURCE_UNAVAILABLE, "no");
        // Anything after the error chunk is not read.
        bytes.extend(encode_error_chunk(ResponseCode::SERVER_ERROR, "ignored"));
        let response = block_on(read_response::<E, _>(
            &mut Cursor::new(bytes),
            &request,
            &ctx,
        ))
        .unwrap();
        assert!(response.items.is_empty());
        assert_eq!(
            response.error,
            Some(ErrorResponse {
                code: ResponseCode::RESOURCE_UNAVAILABLE,
                message: "no".into()
            })
        );
        // Error messages longer than 256 bytes are rejected.
        let mut bytes = vec![2u8];
        bytes.extend(encode_payload(&[b'x'; 300]));
        assert!(matches!(
            block_on(read_response::<E, _>(
                &mut Cursor::new(bytes),
                &request,
                &ctx
            )),
            Err(RpcCodecError::LengthOutOfBounds { .. })
        ));
    }

    #[test]
    fn metadata_response_round_trips_and_limits_chunk_count() {
        let ctx = ctx();
        let mut metadata = MetaData {
            seq_number: 9,
            custody_group_count: 4,
            ..Default::default()
        };
        metadata.attnets.set(5, true).unwrap();
        let response = Response::<E>::success(vec![ResponseItem::MetaData(metadata)]);
        let bytes = encode_response_chunks(Protocol::MetaDataV3, &response, &ctx)
            .unwrap()
            .concat();
        let decoded = read_resp(bytes.clone(), &Request::MetaData).unwrap();
        assert_eq!(decoded, response);
        let mut twice = bytes.clone();
        twice.extend(bytes);
        assert!(matches!(
            read_resp(twice, &Request::MetaData),
            Err(RpcCodecError::TooManyChunks { max: 1 })
        ));
    }

    #[test]
    fn body_less_requests_are_empty() {
        assert!(encode_request(&Request::<E>::MetaData).is_empty());
        assert_eq!(
            read_req(vec![], Protocol::MetaDataV3).unwrap(),
            Request::MetaData
        );
        assert!(matches!(
            read_req(vec![1], Protocol::MetaDataV3),
            Err(RpcCodecError::TrailingBytes)
        ));
    }

    #[test]
    fn list_requests_enforce_limits() {
        let spec = ctx().spec().clone();
        let too_many = vec![Root::ZERO; spec.max_request_blocks_deneb as usize + 1];
        let bytes = encode_payload(&too_many.as_ssz_bytes());
        assert!(matches!(
            read_req(bytes, Protocol::BlocksByRootV2),
            Err(RpcCodecError::LengthOutOfBounds { .. })
        ));
        let roots = vec![Root::repeat_byte(1); 3];
        let bytes = encode_request(&Request::<E>::BlocksByRoot(roots.clone()));
        assert_eq!(
            read_req(bytes, Protocol::BlocksByRootV2).unwrap(),
            Request::BlocksByRoot(roots)
        );
        // A roots list whose length is not a multiple of 32.
        let bytes = encode_payload(&[0u8; 33]);
        assert!(matches!(
            read_req(bytes, Protocol::BlocksByRootV2),
            Err(RpcCodecError::Ssz(_))
        ));
    }

    #[test]
    fn wrong_item_for_protocol_is_refused() {
        let item = ResponseItem::<E>::Pong(1);
        assert!(matches!(
            encode_response_item(Protocol::StatusV2, &item, &ctx()),
            Err(RpcCodecError::WrongItem(Protocol::StatusV2))
        ));
    }

    /// Every chunk of a response, each on its own, error chunk last (what [`write_response`]
    /// writes when every item encodes).
    fn encode_response_chunks<E: EthSpec>(
        protocol: Protocol,
        response: &Response<E>,
        fork_context: &ForkContext,
    ) -> Result<Vec<Vec<u8>>, RpcCodecError> {
        let mut chunks = response
            .items
            .iter()
            .map(|item| encode_response_item(protocol, item, fork_context))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(error) = &response.error {
            chunks.push(encode_error_chunk(error.code, &error.message));
        }
        Ok(chunks)
    }

    /// Records every write and where each flush fell.
    #[derive(Default)]
    struct Recorder {
        writes: Vec<Vec<u8>>,
        /// Bytes written before each flush.
        flushed_at: Vec<usize>,
        closed: bool,
    }

    impl Recorder {
        fn written(&self) -> usize {
            self.writes.iter().map(Vec::len).sum()
        }
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            // Short writes, as a muxer with little send window makes them: a chunk may take
            // several writes, but no write may take bytes of two chunks.
            let n = buf.len().min(1000);
            self.get_mut().writes.push(buf[..n].to_vec());
            std::task::Poll::Ready(Ok(n))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let this = self.get_mut();
            let at = this.written();
            this.flushed_at.push(at);
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_close(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            self.get_mut().closed = true;
            std::task::Poll::Ready(Ok(()))
        }
    }

    fn column(index: u64, slot: u64) -> ResponseItem<E> {
        let mut sidecar: types::fulu::DataColumnSidecar<E> = arbitrary(index as u8);
        sidecar.index = index;
        sidecar.signed_block_header.message.slot = slot;
        ResponseItem::DataColumnSidecar(Arc::new(types::DataColumnSidecar::Fulu(sidecar)))
    }

    #[test]
    fn each_response_chunk_is_written_and_flushed_on_its_own() {
        let ctx = ctx();
        let mut response = Response::<E>::success((0..4).map(|i| column(i, 3 + i)).collect());
        response.error = Some(ErrorResponse {
            code: ResponseCode::RESOURCE_UNAVAILABLE,
            message: "the rest is pruned".into(),
        });
        let chunks = encode_response_chunks(Protocol::DataColumnsByRange, &response, &ctx).unwrap();
        assert_eq!(chunks.len(), 5);
        let mut recorder = Recorder::default();
        block_on(write_response(
            &mut recorder,
            Protocol::DataColumnsByRange,
            &response,
            &ctx,
        ))
        .unwrap();
        assert!(recorder.closed);
        // Flushed exactly at the end of each chunk, and never a write across a chunk's end.
        let ends: Vec<usize> = chunks
            .iter()
            .scan(0, |end, c| {
                *end += c.len();
                Some(*end)
            })
            .collect();
        assert_eq!(recorder.flushed_at, ends);
        let mut at = 0;
        for write in &recorder.writes {
            let end = at + write.len();
            assert!(
                !ends.iter().any(|e| at < *e && *e < end),
                "a write of bytes {at}..{end} crosses a chunk's end ({ends:?})"
            );
            at = end;
        }
        assert_eq!(recorder.writes.concat(), chunks.concat());
        // Arbor's reader takes the same bytes back.
        let request = Request::<E>::DataColumnsByRange(crate::rpc::DataColumnsByRangeRequest {
            start_slot: 0,
            count: 16,
            columns: (0..4).collect(),
        });
        assert_eq!(read_resp(chunks.concat(), &request).unwrap(), response);
    }

    #[test]
    fn an_item_that_cannot_be_encoded_ends_the_response_with_a_server_error() {
        let ctx = ctx();
        let response =
            Response::<E>::success(vec![column(0, 1), ResponseItem::Pong(1), column(1, 1)]);
        let mut recorder = Recorder::default();
        let result = block_on(write_response(
            &mut recorder,
            Protocol::DataColumnsByRange,
            &response,
            &ctx,
        ));
        assert!(
            matches!(result, Err(RpcCodecError::WrongItem(_))),
            "{result:?}"
        );
        assert!(recorder.closed);
        let request = Request::<E>::DataColumnsByRange(crate::rpc::DataColumnsByRangeRequest {
            start_slot: 0,
            count: 16,
            columns: (0..4).collect(),
        });
        let read = read_resp(recorder.writes.concat(), &request).unwrap();
        assert_eq!(read.items, vec![column(0, 1)]);
        assert_eq!(read.error.map(|e| e.code), Some(ResponseCode::SERVER_ERROR));
    }

    /// An arbitrary Fulu value of `T` from `seed`.
    fn arbitrary<T: for<'a> arbitrary::Arbitrary<'a>>(seed: u8) -> T {
        let bytes: Vec<u8> = (0..1 << 16)
            .map(|i: u32| (i.wrapping_mul(31) as u8) ^ seed)
            .collect();
        T::arbitrary(&mut arbitrary::Unstructured::new(&bytes)).unwrap()
    }

    /// A context whose Fulu fork starts at epoch 2 (Electra before it).
    fn electra_then_fulu() -> ForkContext {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Electra);
        spec.fulu_fork_epoch = 2;
        ForkContext::new(spec, Root::repeat_byte(3))
    }

    #[test]
    fn light_client_responses_round_trip_with_the_attested_headers_fork_digest() {
        let ctx = electra_then_fulu();
        let spe = <E as EthSpec>::slots_per_epoch();
        // Attested in Electra (epoch 1), signed in Fulu (epoch 2): the digest is Electra's.
        let (attested, signature) = (2 * spe - 1, 2 * spe);
        let mut update: types::electra::LightClientUpdate<E> = arbitrary(1);
        update.attested_header.beacon.slot = attested;
        update.signature_slot = signature;
        let mut finality: types::electra::LightClientFinalityUpdate<E> = arbitrary(2);
        finality.attested_header.beacon.slot = attested;
        finality.signature_slot = signature;
        let mut optimistic: types::electra::LightClientOptimisticUpdate<E> = arbitrary(3);
        optimistic.attested_header.beacon.slot = attested;
        optimistic.signature_slot = signature;
        let mut bootstrap: types::electra::LightClientBootstrap<E> = arbitrary(4);
        bootstrap.header.beacon.slot = spe;
        let cases: Vec<(Request<E>, ResponseItem<E>)> = vec![
            (
                Request::LightClientBootstrap(Root::repeat_byte(9)),
                ResponseItem::LightClientBootstrap(Arc::new(types::LightClientBootstrap::Electra(
                    bootstrap,
                ))),
            ),
            (
                Request::LightClientUpdatesByRange(crate::rpc::LightClientUpdatesByRangeRequest {
                    start_period: 0,
                    count: 1,
                }),
                ResponseItem::LightClientUpdate(Arc::new(types::LightClientUpdate::Electra(
                    update,
                ))),
            ),
            (
                Request::LightClientFinalityUpdate,
                ResponseItem::LightClientFinalityUpdate(Arc::new(
                    types::LightClientFinalityUpdate::Electra(finality),
                )),
            ),
            (
                Request::LightClientOptimisticUpdate,
                ResponseItem::LightClientOptimisticUpdate(Arc::new(
                    types::LightClientOptimisticUpdate::Electra(optimistic),
                )),
            ),
        ];
        for (request, item) in cases {
            let protocol = request.protocol();
            // The request decodes back to itself.
            let body = encode_request(&request);
            let decoded = block_on(read_request::<E, _>(
                &mut Cursor::new(body),
                protocol,
                ctx.spec(),
            ))
            .unwrap();
            assert_eq!(decoded, request, "{protocol}");
            let bytes = encode_response_item(protocol, &item, &ctx).unwrap();
            assert_eq!(
                &bytes[1..5],
                ctx.digest_at_epoch(1).as_slice(),
                "{protocol}: the context bytes name the header's fork"
            );
            let response = block_on(read_response::<E, _>(
                &mut Cursor::new(bytes),
                &request,
                &ctx,
            ))
            .unwrap();
            assert_eq!(response.items, vec![item], "{protocol}");
        }
    }

    #[test]
    fn light_client_responses_under_another_forks_digest_fail_to_decode() {
        let ctx = electra_then_fulu();
        let mut finality: types::electra::LightClientFinalityUpdate<E> = arbitrary(5);
        finality.attested_header.beacon.slot = 3;
        let item = ResponseItem::LightClientFinalityUpdate(Arc::new(
            types::LightClientFinalityUpdate::Electra(finality),
        ));
        let mut bytes =
            encode_response_item(Protocol::LightClientFinalityUpdate, &item, &ctx).unwrap();
        // A phase0 digest: no light-client types exist there.
        let mut spec = ChainSpec::minimal();
        spec.altair_fork_epoch = 10;
        let phase0 = ForkContext::new(spec, Root::repeat_byte(3)).digest_at_epoch(0);
        bytes[1..5].copy_from_slice(phase0.as_slice());
        let result = block_on(read_response::<E, _>(
            &mut Cursor::new(bytes),
            &Request::LightClientFinalityUpdate,
            &ctx,
        ));
        assert!(
            matches!(result, Err(RpcCodecError::UnknownContextBytes(_))),
            "{result:?}"
        );
    }

    #[test]
    fn light_client_requests_refuse_malformed_bodies() {
        // A bootstrap request is one 32-byte root.
        assert!(matches!(
            read_req(encode_payload(&[0u8; 31]), Protocol::LightClientBootstrap),
            Err(RpcCodecError::LengthOutOfBounds { .. })
        ));
        // Updates by range: two u64s.
        assert!(matches!(
            read_req(
                encode_payload(&[0u8; 17]),
                Protocol::LightClientUpdatesByRange
            ),
            Err(RpcCodecError::LengthOutOfBounds { .. })
        ));
        // The update getters have no body.
        for protocol in [
            Protocol::LightClientFinalityUpdate,
            Protocol::LightClientOptimisticUpdate,
        ] {
            assert!(encode_request(&Request::<E>::LightClientFinalityUpdate).is_empty());
            assert!(matches!(
                read_req(vec![0], protocol),
                Err(RpcCodecError::TrailingBytes)
            ));
        }
        // A chunk that is not an update of any fork.
        let ctx = ctx();
        let mut bytes = vec![0u8];
        bytes.extend_from_slice(ctx.digest_at_epoch(0).as_slice());
        bytes.extend(encode_payload(&[7u8; 40]));
        assert!(matches!(
            read_resp(bytes, &Request::LightClientOptimisticUpdate),
            Err(RpcCodecError::Ssz(_))
        ));
    }

    #[test]
    fn updates_by_range_answers_at_most_min_count_and_max_request_light_client_updates() {
        let ctx = ctx();
        let request = |count| {
            Request::<E>::LightClientUpdatesByRange(crate::rpc::LightClientUpdatesByRangeRequest {
                start_period: 4,
                count,
            })
        };
        assert_eq!(request(2).max_response_chunks(ctx.spec()), 2);
        assert_eq!(
            request(u64::MAX).max_response_chunks(ctx.spec()),
            crate::rpc::methods::MAX_REQUEST_LIGHT_CLIENT_UPDATES
        );
        let update: types::electra::LightClientUpdate<E> = arbitrary(6);
        let item =
            ResponseItem::LightClientUpdate(Arc::new(types::LightClientUpdate::Fulu(update)));
        let chunk = encode_response_item(Protocol::LightClientUpdatesByRange, &item, &ctx).unwrap();
        let two = [chunk.clone(), chunk].concat();
        assert_eq!(read_resp(two.clone(), &request(2)).unwrap().items.len(), 2);
        assert!(matches!(
            read_resp(two, &request(1)),
            Err(RpcCodecError::TooManyChunks { max: 1 })
        ));
    }

    #[test]
    fn light_client_items_on_other_protocols_are_refused() {
        let update: types::electra::LightClientOptimisticUpdate<E> = arbitrary(7);
        let item = ResponseItem::<E>::LightClientOptimisticUpdate(Arc::new(
            types::LightClientOptimisticUpdate::Fulu(update),
        ));
        assert!(matches!(
            encode_response_item(Protocol::LightClientFinalityUpdate, &item, &ctx()),
            Err(RpcCodecError::WrongItem(
                Protocol::LightClientFinalityUpdate
            ))
        ));
    }

    /// A context whose Gloas fork starts at epoch 1 (Fulu before it).
    fn fulu_then_gloas() -> ForkContext {
        let mut spec = ChainSpec::minimal().with_forks_at_genesis_through(ForkName::Fulu);
        spec.gloas_fork_epoch = 1;
        ForkContext::new(spec, Root::repeat_byte(3))
    }

    /// An envelope of the block at `slot`, its other fields from `seed`.
    fn envelope(slot: u64, seed: u8) -> ResponseItem<E> {
        let mut envelope: types::gloas::SignedExecutionPayloadEnvelope<E> = arbitrary(seed);
        envelope.message.payload.slot_number = slot;
        envelope.message.beacon_block_root = Root::repeat_byte(seed);
        ResponseItem::ExecutionPayloadEnvelope(Arc::new(envelope))
    }

    fn envelopes_by_range(start_slot: u64, count: u64) -> Request<E> {
        Request::ExecutionPayloadEnvelopesByRange(
            crate::rpc::ExecutionPayloadEnvelopesByRangeRequest { start_slot, count },
        )
    }

    #[test]
    fn envelope_requests_and_responses_round_trip_under_the_gloas_digest() {
        let ctx = fulu_then_gloas();
        let spe = <E as EthSpec>::slots_per_epoch();
        let requests = [
            envelopes_by_range(spe, 4),
            Request::ExecutionPayloadEnvelopesByRoot(vec![
                Root::repeat_byte(1),
                Root::repeat_byte(2),
                Root::repeat_byte(3),
            ]),
        ];
        for request in requests {
            let protocol = request.protocol();
            let decoded = block_on(read_request::<E, _>(
                &mut Cursor::new(encode_request(&request)),
                protocol,
                ctx.spec(),
            ))
            .unwrap();
            assert_eq!(decoded, request, "{protocol}");

            let mut response =
                Response::<E>::success((0..3).map(|i| envelope(spe + i, i as u8 + 1)).collect());
            response.error = Some(ErrorResponse {
                code: ResponseCode::RESOURCE_UNAVAILABLE,
                message: "the rest is pruned".into(),
            });
            let chunks = encode_response_chunks(protocol, &response, &ctx).unwrap();
            for chunk in &chunks[..3] {
                assert_eq!(
                    &chunk[1..5],
                    ctx.digest_at_epoch(1).as_slice(),
                    "{protocol}: the context bytes are Gloas's"
                );
                assert_ne!(ctx.digest_at_epoch(1), ctx.digest_at_epoch(0));
            }
            // One chunk per write, flushed at its end.
            let mut recorder = Recorder::default();
            block_on(write_response(&mut recorder, protocol, &response, &ctx)).unwrap();
            let ends: Vec<usize> = chunks
                .iter()
                .scan(0, |end, c| {
                    *end += c.len();
                    Some(*end)
                })
                .collect();
            assert_eq!(recorder.flushed_at, ends, "{protocol}");
            let decoded = block_on(read_response::<E, _>(
                &mut Cursor::new(recorder.writes.concat()),
                &request,
                &ctx,
            ))
            .unwrap();
            assert_eq!(decoded, response, "{protocol}");
        }
    }

    #[test]
    fn envelope_requests_over_the_limit_are_rejected() {
        let ctx = fulu_then_gloas();
        let spec = ctx.spec();
        let max = spec.max_request_payloads as usize;
        assert_eq!(max, 128);
        let at_limit = vec![Root::repeat_byte(4); max];
        assert_eq!(
            read_req(
                encode_payload(&at_limit.as_ssz_bytes()),
                Protocol::ExecutionPayloadEnvelopesByRoot
            )
            .unwrap(),
            Request::ExecutionPayloadEnvelopesByRoot(at_limit)
        );
        let over = vec![Root::repeat_byte(4); max + 1];
        assert!(matches!(
            read_req(
                encode_payload(&over.as_ssz_bytes()),
                Protocol::ExecutionPayloadEnvelopesByRoot
            ),
            Err(RpcCodecError::LengthOutOfBounds { len, .. }) if len == 32 * (max as u64 + 1)
        ));
        // By range: two u64s, nothing else (no `step`).
        assert!(matches!(
            read_req(
                encode_payload(&[0u8; 24]),
                Protocol::ExecutionPayloadEnvelopesByRange
            ),
            Err(RpcCodecError::LengthOutOfBounds { len: 24, .. })
        ));
        // A responder may send at most min(count, MAX_REQUEST_PAYLOADS) envelopes by range and
        // one per root.
        assert_eq!(envelopes_by_range(0, 1000).max_response_chunks(spec), 128);
        assert_eq!(envelopes_by_range(0, 2).max_response_chunks(spec), 2);
        let by_root = Request::<E>::ExecutionPayloadEnvelopesByRoot(vec![Root::ZERO; 2]);
        assert_eq!(by_root.max_response_chunks(spec), 2);
        let chunk = encode_response_item(
            Protocol::ExecutionPayloadEnvelopesByRoot,
            &envelope(9, 1),
            &ctx,
        )
        .unwrap();
        let three = [chunk.clone(), chunk.clone(), chunk].concat();
        assert!(matches!(
            read_resp_with(three, &by_root, &ctx),
            Err(RpcCodecError::TooManyChunks { max: 2 })
        ));
    }

    fn read_resp_with(
        bytes: Vec<u8>,
        request: &Request<E>,
        ctx: &ForkContext,
    ) -> Result<Response<E>, RpcCodecError> {
        block_on(read_response::<E, _>(&mut Cursor::new(bytes), request, ctx))
    }

    #[test]
    fn an_envelope_under_a_pre_gloas_digest_is_rejected() {
        let ctx = fulu_then_gloas();
        let request = envelopes_by_range(0, 16);
        let good = encode_response_item(
            Protocol::ExecutionPayloadEnvelopesByRange,
            &envelope(9, 2),
            &ctx,
        )
        .unwrap();
        assert_eq!(
            read_resp_with(good.clone(), &request, &ctx).unwrap().items,
            vec![envelope(9, 2)]
        );
        // Fulu's digest, a digest of this chain: the envelope type does not exist there.
        let mut fulu = good.clone();
        fulu[1..5].copy_from_slice(ctx.digest_at_epoch(0).as_slice());
        let result = read_resp_with(fulu, &request, &ctx);
        assert!(matches!(result, Err(RpcCodecError::Ssz(_))), "{result:?}");
        // A digest of no fork of this chain.
        let mut unknown = good;
        unknown[1] ^= 0x55;
        let result = read_resp_with(unknown, &request, &ctx);
        assert!(
            matches!(result, Err(RpcCodecError::UnknownContextBytes(_))),
            "{result:?}"
        );
    }

    #[test]
    fn envelope_chunks_shorter_than_the_smallest_envelope_are_refused_from_the_prefix() {
        let ctx = fulu_then_gloas();
        // The bound is the length of an envelope whose lists are all empty.
        let empty = <types::gloas::SignedExecutionPayloadEnvelope<E> as arbitrary::Arbitrary<'_>>::arbitrary(
            &mut arbitrary::Unstructured::new(&[]),
        )
        .unwrap();
        assert_eq!(
            empty.as_ssz_bytes().len(),
            crate::rpc::MIN_SIGNED_EXECUTION_PAYLOAD_ENVELOPE_LEN
        );
        assert_eq!(
            Protocol::ExecutionPayloadEnvelopesByRoot.response_bounds(ctx.spec()),
            (
                crate::rpc::MIN_SIGNED_EXECUTION_PAYLOAD_ENVELOPE_LEN,
                ctx.spec().max_payload_size as usize
            )
        );
        let mut bytes = vec![0u8];
        bytes.extend_from_slice(ctx.digest_at_epoch(1).as_slice());
        bytes.extend(encode_payload(
            &[0u8; crate::rpc::MIN_SIGNED_EXECUTION_PAYLOAD_ENVELOPE_LEN - 1],
        ));
        assert!(matches!(
            read_resp_with(bytes, &envelopes_by_range(8, 1), &ctx),
            Err(RpcCodecError::LengthOutOfBounds { .. })
        ));
    }

    #[test]
    fn gloas_blocks_and_columns_decode_under_the_gloas_digest() {
        let ctx = fulu_then_gloas();
        let spe = <E as EthSpec>::slots_per_epoch();
        let mut gloas_block: types::gloas::SignedBeaconBlock<E> = arbitrary(21);
        gloas_block.message.slot = spe + 1;
        let mut fulu_block: types::fulu::SignedBeaconBlock<E> = arbitrary(22);
        fulu_block.message.slot = spe - 1;
        let mut gloas_column: types::gloas::DataColumnSidecar<E> = arbitrary(23);
        gloas_column.slot = spe + 2;
        gloas_column.index = 5;
        let cases = [
            (
                Protocol::BlocksByRangeV2,
                ResponseItem::Block(Arc::new(types::SignedBeaconBlock::Gloas(gloas_block))),
                1,
            ),
            (
                Protocol::BlocksByRootV2,
                ResponseItem::Block(Arc::new(types::SignedBeaconBlock::Fulu(fulu_block))),
                0,
            ),
            (
                Protocol::DataColumnsByRange,
                ResponseItem::DataColumnSidecar(Arc::new(types::DataColumnSidecar::Gloas(
                    gloas_column.clone(),
                ))),
                1,
            ),
            (
                Protocol::DataColumnsByRoot,
                ResponseItem::DataColumnSidecar(Arc::new(types::DataColumnSidecar::Gloas(
                    gloas_column,
                ))),
                1,
            ),
        ];
        for (protocol, item, epoch) in cases {
            let chunk = encode_response_item(protocol, &item, &ctx).unwrap();
            assert_eq!(
                &chunk[1..5],
                ctx.digest_at_epoch(epoch).as_slice(),
                "{protocol}"
            );
            let fork = ctx.fork_of_digest(ctx.digest_at_epoch(epoch)).unwrap();
            assert_eq!(
                fork,
                if epoch == 1 {
                    ForkName::Gloas
                } else {
                    ForkName::Fulu
                }
            );
            let decoded = block_on(read_response_chunk::<E, _>(
                &mut Cursor::new(chunk),
                protocol,
                &ctx,
            ))
            .unwrap()
            .expect("a chunk")
            .unwrap();
            assert_eq!(decoded, item, "{protocol}");
        }
    }

    proptest::proptest! {
        #[test]
        fn payload_round_trips(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..200_000)) {
            let bytes = encode_payload(&data);
            let decoded = block_on(read_payload(&mut Cursor::new(bytes), 0, data.len())).unwrap();
            proptest::prop_assert_eq!(decoded, data);
        }

        #[test]
        fn garbage_never_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = read_req(data.clone(), Protocol::StatusV2);
            let _ = read_resp(data, &Request::BlocksByRange(BlocksByRangeRequest { start_slot: 0, count: 4, step: 1 }));
        }
    }
}
