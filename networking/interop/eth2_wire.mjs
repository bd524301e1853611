// The eth2 wire pieces shared by the interop scripts (peer.mjs, devnet_check.mjs), written from the
// specs rather than taken from a client: the snappy framing format with masked CRC-32C and unsigned
// LEB128 length prefixes of req/resp (phase0/p2p-interface.md#encoding-strategies), response
// chunks with context bytes, and the gossip message id over the decompressed payload and the topic
// (altair/p2p-interface.md#topics-and-messages) with snappy block compression as a data transform.

import { createHash } from 'node:crypto'
import dgram from 'node:dgram'

import SnappyJS from 'snappyjs'

export const toHex = (bytes) => Buffer.from(bytes).toString('hex')

export function withTimeout (promise, ms, what) {
  let timer
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms) })
  ]).finally(() => clearTimeout(timer))
}

// ------------------------------------------------------------------------------------------
// CRC-32C and the snappy framing format (req/resp payloads)
// ------------------------------------------------------------------------------------------

export const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = (c & 1) ? (0x82f63b78 ^ (c >>> 1)) : (c >>> 1)
    table[n] = c >>> 0
  }
  return table
})()

export function crc32c (bytes) {
  let crc = 0xffffffff
  for (const b of bytes) crc = CRC32C_TABLE[(crc ^ b) & 0xff] ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

// The framing format stores the CRC "masked" so that CRCs of CRCs stay useful.
export function maskedCrc (bytes) {
  const crc = crc32c(bytes)
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0
}

export const STREAM_IDENTIFIER = Uint8Array.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59])
export const MAX_FRAME_DATA = 65536

export function frameChunk (type, crc, body) {
  const length = body.length + 4
  const out = new Uint8Array(4 + length)
  out[0] = type
  out[1] = length & 0xff
  out[2] = (length >>> 8) & 0xff
  out[3] = (length >>> 16) & 0xff
  new DataView(out.buffer).setUint32(4, crc, true)
  out.set(body, 8)
  return out
}

export function snappyFrameEncode (data) {
  const parts = [STREAM_IDENTIFIER]
  for (let offset = 0; offset < data.length || (offset === 0 && data.length === 0); offset += MAX_FRAME_DATA) {
    const piece = data.subarray(offset, offset + MAX_FRAME_DATA)
    const compressed = SnappyJS.compress(piece)
    parts.push(compressed.length < piece.length
      ? frameChunk(0x00, maskedCrc(piece), compressed)
      : frameChunk(0x01, maskedCrc(piece), piece))
    if (data.length === 0) break
  }
  return concat(parts)
}

// Decodes framed snappy from `bytes` at `offset` until `expected` uncompressed bytes came out.
// Returns { data, next } or throws on bad framing, bad CRC or more data than announced.
export function snappyFrameDecode (bytes, offset, expected) {
  const out = []
  let produced = 0
  let sawIdentifier = false
  while (produced < expected || !sawIdentifier) {
    if (offset + 4 > bytes.length) throw new Error('truncated snappy frame header')
    const type = bytes[offset]
    const length = bytes[offset + 1] | (bytes[offset + 2] << 8) | (bytes[offset + 3] << 16)
    const body = bytes.subarray(offset + 4, offset + 4 + length)
    if (body.length < length) throw new Error('truncated snappy frame')
    offset += 4 + length
    if (type === 0xff) {
      if (length !== 6 || toHex(body) !== '734e61507059') throw new Error('bad snappy stream identifier')
      sawIdentifier = true
      continue
    }
    if (!sawIdentifier) throw new Error('snappy frame before the stream identifier')
    if (type === 0x00 || type === 0x01) {
      if (length < 4) throw new Error('snappy frame too short for its CRC')
      const crc = new DataView(body.buffer, body.byteOffset, 4).getUint32(0, true)
      const payload = type === 0x00 ? SnappyJS.uncompress(body.subarray(4), MAX_FRAME_DATA) : body.subarray(4)
      if (maskedCrc(payload) !== crc) throw new Error('snappy frame CRC mismatch')
      produced += payload.length
      if (produced > expected) throw new Error(`snappy payload longer than the announced ${expected} bytes`)
      out.push(payload)
    } else if (type >= 0x80 && type <= 0xfd) {
      // Skippable chunk.
    } else {
      throw new Error(`unskippable snappy chunk type ${type}`)
    }
  }
  return { data: concat(out), next: offset }
}

export function concat (parts) {
  const total = parts.reduce((n, p) => n + p.length, 0)
  const out = new Uint8Array(total)
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}

// ------------------------------------------------------------------------------------------
// Unsigned LEB128 varints (req/resp length prefixes)
// ------------------------------------------------------------------------------------------

export function encodeVarint (n) {
  const out = []
  let v = BigInt(n)
  do {
    let b = Number(v & 0x7fn)
    v >>= 7n
    if (v > 0n) b |= 0x80
    out.push(b)
  } while (v > 0n)
  return Uint8Array.from(out)
}

export function decodeVarint (bytes, offset) {
  let value = 0n
  let shift = 0n
  for (let i = 0; i < 10; i++) {
    if (offset + i >= bytes.length) throw new Error('truncated varint')
    const b = bytes[offset + i]
    value |= BigInt(b & 0x7f) << shift
    if ((b & 0x80) === 0) return { value, next: offset + i + 1 }
    shift += 7n
  }
  throw new Error('varint longer than 10 bytes')
}

export const PROTOCOL_PREFIX = '/eth2/beacon_chain/req'

export function uint64Bytes (n) {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, BigInt(n), true)
  return out
}

export function readUint64 (bytes) {
  if (bytes.length !== 8) throw new Error(`uint64 must be 8 bytes, got ${bytes.length}`)
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true)
}

// MetaData v3: seq_number(8) attnets(Bitvector[64], 8) syncnets(Bitvector[4], 1)

// An encoded request or success response chunk body: varint(ssz length) ++ framed snappy.
export function encodePayload (ssz) {
  return concat([encodeVarint(ssz.length), snappyFrameEncode(ssz)])
}

// Reads a request body (no result byte) from the whole request stream.
export function decodeRequest (bytes, maxSize) {
  const { value, next } = decodeVarint(bytes, 0)
  if (value > BigInt(maxSize)) throw new Error(`request announces ${value} bytes, more than ${maxSize}`)
  const { data } = snappyFrameDecode(bytes, next, Number(value))
  return data
}

// Splits a whole response stream into chunks: result byte, then for successful chunks the
// context bytes (`contextBytes` of them: 4, the fork digest, for block and sidecar protocols; 0
// for Status, Ping, MetaData), then the length-prefixed framed-snappy payload. Error chunks carry
// an ErrorMessage (at most 256 bytes) and no context bytes.
export function decodeResponseChunks (bytes, maxSize, contextBytes) {
  const chunks = []
  let offset = 0
  while (offset < bytes.length) {
    const result = bytes[offset]
    offset += 1
    let context = new Uint8Array(0)
    if (result === 0 && contextBytes > 0) {
      if (offset + contextBytes > bytes.length) throw new Error('truncated context bytes')
      context = bytes.slice(offset, offset + contextBytes)
      offset += contextBytes
    }
    const limit = result === 0 ? maxSize : 256
    const { value, next } = decodeVarint(bytes, offset)
    if (value > BigInt(limit)) throw new Error(`response chunk announces ${value} bytes, more than ${limit}`)
    const { data, next: end } = snappyFrameDecode(bytes, next, Number(value))
    chunks.push({ result, context, data })
    offset = end
  }
  return chunks
}

export async function readAll (source, limit) {
  const parts = []
  let total = 0
  for await (const chunk of source) {
    const bytes = chunk.subarray()
    total += bytes.length
    if (total > limit) throw new Error(`stream longer than ${limit} bytes`)
    parts.push(bytes)
  }
  return concat(parts)
}

// ------------------------------------------------------------------------------------------
// Gossip: eth2 message id and snappy block compression
// ------------------------------------------------------------------------------------------

export const MESSAGE_DOMAIN_VALID_SNAPPY = Uint8Array.from([0x01, 0x00, 0x00, 0x00])
export const GOSSIP_MAX_SIZE = 10 * 1024 * 1024

// altair/p2p-interface.md#topics-and-messages: SHA256(MESSAGE_DOMAIN_VALID_SNAPPY ++
// uint64(len(topic)) ++ topic ++ snappy_decompress(data))[:20]. `data` here is already
// decompressed by the data transform below.
export function eth2MessageId (msg) {
  const topic = new TextEncoder().encode(msg.topic)
  return createHash('sha256')
    .update(MESSAGE_DOMAIN_VALID_SNAPPY)
    .update(uint64Bytes(topic.length))
    .update(topic)
    .update(msg.data)
    .digest()
    .subarray(0, 20)
}

export const snappyBlockTransform = {
  inboundTransform (_topic, data) {
    return SnappyJS.uncompress(data, GOSSIP_MAX_SIZE)
  },
  outboundTransform (_topic, data) {
    return SnappyJS.compress(data)
  }
}

export async function freeUdpPort () {
  const socket = dgram.createSocket('udp4')
  await new Promise((resolve, reject) => socket.bind(0, '127.0.0.1', (e) => e ? reject(e) : resolve()))
  const { port } = socket.address()
  await new Promise((resolve) => socket.close(resolve))
  return port
}
