// A js-libp2p peer for Arbor's networking interop test (networking/tests/interop_js.rs).
//
// Given an Arbor node's ENR, it
//   1. finds the node through discv5 (PING, then FINDNODE at distance 0, which returns the node's
//      current record over the wire) and reads `eth2` (fork digest) and `tcp` from that record;
//   2. dials it over TCP with noise and exactly one muxer (--muxer yamux|mplex), so the muxer
//      cannot silently fall back to the other;
//   3. speaks eth2 req/resp with ssz_snappy framing: sends Status v2, Ping and
//      BeaconBlocksByRange v2 (several chunks, each with the fork digest as context bytes), and
//      serves Status, Ping and MetaData when Arbor asks;
//   4. joins the eth2 gossip topic /eth2/<fork_digest>/voluntary_exit/ssz_snappy with the
//      consensus spec's gossipsub settings (no signatures, snappy block compression, the
//      SHA-256 message id over the decompressed payload and the topic), publishes one
//      SignedVoluntaryExit and waits for one from Arbor.
//
// It reports on stdout, one JSON object per line ({"event": ...}); the Rust test drives it by
// writing lines to stdin ("exit"). Anything that goes wrong ends the process with a non-zero
// status after an {"event":"error"} line. Diagnostics go to stderr.
//
// Specs: consensus-specs phase0/p2p-interface.md (req/resp encoding, gossip encoding and
// message-id), altair/p2p-interface.md (message-id with the topic), fulu/p2p-interface.md
// (Status v2, MetaData v3); the snappy framing format
// (https://github.com/google/snappy/blob/main/framing_format.txt).

// Must stay the first import: it patches the runtime before libp2p's modules run.
import './node20.mjs'

import { createHash } from 'node:crypto'
import readline from 'node:readline'

import { Discv5 } from '@chainsafe/discv5'
import { ENR, SignableENR } from '@chainsafe/enr'
import { gossipsub } from '@chainsafe/libp2p-gossipsub'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { identify } from '@libp2p/identify'
import { mplex } from '@libp2p/mplex'
import { tcp } from '@libp2p/tcp'
import { multiaddr } from '@multiformats/multiaddr'
import { createLibp2p } from 'libp2p'

import {
  GOSSIP_MAX_SIZE, PROTOCOL_PREFIX, concat, decodeRequest, decodeResponseChunks, eth2MessageId, encodePayload,
  freeUdpPort, readAll, readUint64, snappyBlockTransform, toHex, uint64Bytes, withTimeout
} from './eth2_wire.mjs'

// ------------------------------------------------------------------------------------------
// Arguments
// ------------------------------------------------------------------------------------------

function parseArgs (argv) {
  const args = { muxer: 'yamux', timeoutMs: 60000, validatorIndex: 42n }
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]
    const value = argv[i + 1]
    switch (key) {
      case '--enr': args.enr = value; i++; break
      case '--muxer': args.muxer = value; i++; break
      case '--timeout-ms': args.timeoutMs = Number(value); i++; break
      case '--validator-index': args.validatorIndex = BigInt(value); i++; break
      default: throw new Error(`unknown argument ${key}`)
    }
  }
  if (args.enr == null) throw new Error('--enr <arbor enr> is required')
  if (args.muxer !== 'yamux' && args.muxer !== 'mplex') throw new Error(`--muxer must be yamux or mplex, not ${args.muxer}`)
  return args
}

// ------------------------------------------------------------------------------------------
// Reporting
// ------------------------------------------------------------------------------------------

function report (event, fields = {}) {
  process.stdout.write(JSON.stringify({ event, ...fields }, (_, v) => typeof v === 'bigint' ? v.toString() : v) + '\n')
}

function log (...parts) {
  process.stderr.write(`[js-peer] ${parts.join(' ')}\n`)
}



// ------------------------------------------------------------------------------------------
// eth2 req/resp: protocols, SSZ of the messages this peer speaks
// ------------------------------------------------------------------------------------------

const STATUS_V2 = `${PROTOCOL_PREFIX}/status/2/ssz_snappy`
const STATUS_V1 = `${PROTOCOL_PREFIX}/status/1/ssz_snappy`
const PING_V1 = `${PROTOCOL_PREFIX}/ping/1/ssz_snappy`
const METADATA_V3 = `${PROTOCOL_PREFIX}/metadata/3/ssz_snappy`
const METADATA_V2 = `${PROTOCOL_PREFIX}/metadata/2/ssz_snappy`
const GOODBYE_V1 = `${PROTOCOL_PREFIX}/goodbye/1/ssz_snappy`
const BLOCKS_BY_RANGE_V2 = `${PROTOCOL_PREFIX}/beacon_blocks_by_range/2/ssz_snappy`

// Status v1: fork_digest(4) finalized_root(32) finalized_epoch(8) head_root(32) head_slot(8);
// v2 adds earliest_available_slot(8).
function encodeStatus (s, version) {
  const out = new Uint8Array(version === 2 ? 92 : 84)
  const view = new DataView(out.buffer)
  out.set(s.forkDigest, 0)
  out.set(s.finalizedRoot, 4)
  view.setBigUint64(36, s.finalizedEpoch, true)
  out.set(s.headRoot, 44)
  view.setBigUint64(76, s.headSlot, true)
  if (version === 2) view.setBigUint64(84, s.earliestAvailableSlot ?? 0n, true)
  return out
}

function decodeStatus (bytes, version) {
  const size = version === 2 ? 92 : 84
  if (bytes.length !== size) throw new Error(`Status v${version} must be ${size} bytes, got ${bytes.length}`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
  return {
    forkDigest: bytes.slice(0, 4),
    finalizedRoot: bytes.slice(4, 36),
    finalizedEpoch: view.getBigUint64(36, true),
    headRoot: bytes.slice(44, 76),
    headSlot: view.getBigUint64(76, true),
    earliestAvailableSlot: version === 2 ? view.getBigUint64(84, true) : undefined
  }
}

const statusJson = (s) => ({
  fork_digest: toHex(s.forkDigest),
  finalized_root: toHex(s.finalizedRoot),
  finalized_epoch: s.finalizedEpoch,
  head_root: toHex(s.headRoot),
  head_slot: s.headSlot,
  earliest_available_slot: s.earliestAvailableSlot
})

// custody_group_count(8); v2 lacks the last field.
function encodeMetadata (seq, version) {
  const out = new Uint8Array(version === 3 ? 25 : 17)
  const view = new DataView(out.buffer)
  view.setBigUint64(0, seq, true)
  if (version === 3) view.setBigUint64(17, 4n, true)
  return out
}



// SignedVoluntaryExit: message { epoch: uint64, validator_index: uint64 }, signature: Bytes96.
function encodeSignedVoluntaryExit (epoch, validatorIndex) {
  const out = new Uint8Array(112)
  const view = new DataView(out.buffer)
  view.setBigUint64(0, BigInt(epoch), true)
  view.setBigUint64(8, BigInt(validatorIndex), true)
  out.fill(0xab, 16)
  return out
}

// ------------------------------------------------------------------------------------------
// The run
// ------------------------------------------------------------------------------------------


async function main () {
  const args = parseArgs(process.argv.slice(2))
  const arborBoot = ENR.decodeTxt(args.enr)
  const privateKey = await generateKeyPair('secp256k1')

  // --- 1. discv5 --------------------------------------------------------------------------
  const udpPort = await freeUdpPort()
  const bootEth2 = arborBoot.kvs.get('eth2')
  const ownEnr = SignableENR.createFromPrivateKey(privateKey, {})
  ownEnr.ip = '127.0.0.1'
  ownEnr.udp = udpPort
  if (bootEth2 != null) ownEnr.set('eth2', bootEth2)
  ownEnr.set('attnets', new Uint8Array(8))
  ownEnr.set('syncnets', new Uint8Array(1))

  const discv5 = Discv5.create({
    enr: ownEnr,
    privateKey,
    bindAddrs: { ip4: multiaddr(`/ip4/127.0.0.1/udp/${udpPort}`) },
    config: { enrUpdate: false }
  })
  await discv5.start()
  discv5.addEnr(arborBoot)
  const pong = await withTimeout(discv5.sendPing(arborBoot), args.timeoutMs, 'discv5 PONG')
  const found = await withTimeout(discv5.sendFindNode(arborBoot, [0]), args.timeoutMs, 'discv5 NODES')
  const arbor = found.find((e) => e.nodeId === arborBoot.nodeId)
  if (arbor == null) throw new Error(`FINDNODE(0) returned ${found.length} records, none of them Arbor's`)
  const eth2 = arbor.kvs.get('eth2')
  if (eth2 == null || eth2.length !== 16) throw new Error('Arbor\'s ENR lacks a 16-byte eth2 field')
  const forkDigest = eth2.slice(0, 4)
  const tcpAddr = arbor.getLocationMultiaddr('tcp')
  if (tcpAddr == null) throw new Error('Arbor\'s ENR has no tcp address')
  const arborPeerId = arbor.peerId
  report('discovered', {
    node_id: arbor.nodeId,
    peer_id: arborPeerId.toString(),
    seq: arbor.seq,
    pong_enr_seq: pong.enrSeq,
    tcp: tcpAddr.toString(),
    fork_digest: toHex(forkDigest),
    next_fork_version: toHex(eth2.slice(4, 8)),
    attnets: arbor.kvs.has('attnets') ? toHex(arbor.kvs.get('attnets')) : null,
    syncnets: arbor.kvs.has('syncnets') ? toHex(arbor.kvs.get('syncnets')) : null,
    cgc: arbor.kvs.has('cgc') ? toHex(arbor.kvs.get('cgc')) : null,
    nfd: arbor.kvs.has('nfd') ? toHex(arbor.kvs.get('nfd')) : null
  })

  // --- 2. libp2p over TCP with one muxer -------------------------------------------------
  const node = await createLibp2p({
    privateKey,
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [args.muxer === 'yamux' ? yamux() : mplex()],
    services: {
      identify: identify({ agentVersion: 'arbor-interop-js' }),
      pubsub: gossipsub({
        // phase0/p2p-interface.md#the-gossip-domain-gossipsub
        D: 8,
        Dlo: 6,
        Dhi: 12,
        Dlazy: 6,
        heartbeatInterval: 700,
        fanoutTTL: 60000,
        mcacheLength: 6,
        mcacheGossip: 3,
        seenTTL: 550 * 700,
        globalSignaturePolicy: 'StrictNoSign',
        msgIdFn: eth2MessageId,
        dataTransform: snappyBlockTransform,
        maxInboundDataLength: GOSSIP_MAX_SIZE,
        allowPublishToZeroTopicPeers: false,
        emitSelf: false,
        // Two nodes only: publish to every subscribed peer, mesh or not.
        floodPublish: true
      })
    },
    connectionManager: { maxConnections: 8 }
  })
  const pubsub = node.services.pubsub

  // Served requests: Arbor may ask for Status, Ping and MetaData once connected.
  let ourStatus = null
  let metadataSeq = 1n
  const served = (protocol, fields = {}) => report('served', { protocol, ...fields })
  const serve = (protocol, respond) => node.handle(protocol, async ({ stream }) => {
    try {
      const request = await readAll(stream.source, 1024)
      const response = respond(request)
      await stream.sink([concat([Uint8Array.of(0), encodePayload(response)])])
    } catch (e) {
      log(`serving ${protocol}: ${e.message}`)
      report('serve_failed', { protocol, error: e.message })
      stream.abort(e)
    }
  }, { runOnLimitedConnection: false })
  await serve(STATUS_V2, (req) => {
    const theirs = decodeStatus(decodeRequest(req, 92), 2)
    served(STATUS_V2, { status: statusJson(theirs) })
    return encodeStatus(ourStatus ?? theirs, 2)
  })
  await serve(STATUS_V1, (req) => {
    const theirs = decodeStatus(decodeRequest(req, 84), 1)
    served(STATUS_V1, { status: statusJson(theirs) })
    return encodeStatus(ourStatus ?? theirs, 1)
  })
  await serve(PING_V1, (req) => {
    const seq = readUint64(decodeRequest(req, 8))
    served(PING_V1, { seq })
    return uint64Bytes(metadataSeq)
  })
  await serve(METADATA_V3, (req) => {
    if (req.length !== 0) throw new Error('MetaData requests carry no body')
    served(METADATA_V3)
    return encodeMetadata(metadataSeq, 3)
  })
  await serve(METADATA_V2, (req) => {
    if (req.length !== 0) throw new Error('MetaData requests carry no body')
    served(METADATA_V2)
    return encodeMetadata(metadataSeq, 2)
  })
  await node.handle(GOODBYE_V1, async ({ stream }) => {
    try {
      const reason = readUint64(decodeRequest(await readAll(stream.source, 64), 8))
      report('goodbye', { reason })
    } catch (e) {
      report('serve_failed', { protocol: GOODBYE_V1, error: e.message })
    }
    stream.abort(new Error('goodbye'))
  })

  const topic = `/eth2/${toHex(forkDigest)}/voluntary_exit/ssz_snappy`
  const received = []
  pubsub.addEventListener('message', (evt) => {
    const msg = evt.detail
    if (msg.topic !== topic) return
    received.push(msg)
    report('gossip_received', {
      topic: msg.topic,
      data: toHex(msg.data),
      message_id: toHex(eth2MessageId(msg))
    })
  })
  pubsub.subscribe(topic)

  const ownTcp = node.getMultiaddrs().find((a) => a.toString().includes('/tcp/'))
  report('started', { peer_id: node.peerId.toString(), listen: ownTcp?.toString(), udp: udpPort, topic })

  const target = tcpAddr.encapsulate(`/p2p/${arborPeerId.toString()}`)
  const connection = await withTimeout(node.dial(target), args.timeoutMs, `a connection to ${target}`)
  report('connected', {
    remote: connection.remoteAddr.toString(),
    muxer: connection.multiplexer,
    encryption: connection.encryption
  })
  const expectedMuxer = args.muxer === 'yamux' ? '/yamux/1.0.0' : '/mplex/6.7.0'
  if (connection.multiplexer !== expectedMuxer) {
    throw new Error(`negotiated muxer ${connection.multiplexer}, expected ${expectedMuxer}`)
  }

  // --- 3. req/resp ------------------------------------------------------------------------
  const requestChunks = async (protocols, body, maxChunk, contextBytes, maxStream) => {
    const stream = await withTimeout(connection.newStream(protocols), args.timeoutMs, `a ${protocols} stream`)
    await stream.sink([encodePayload(body)])
    const bytes = await withTimeout(readAll(stream.source, maxStream), args.timeoutMs, `the ${stream.protocol} response`)
    return { protocol: stream.protocol, chunks: decodeResponseChunks(bytes, maxChunk, contextBytes) }
  }
  // A single-chunk request (Status, Ping): exactly one successful chunk, nothing after it.
  const request = async (protocols, body, maxResponse) => {
    const { protocol, chunks } = await requestChunks(protocols, body, maxResponse, 0, 1024)
    if (chunks.length !== 1) throw new Error(`${protocol} answered with ${chunks.length} chunks`)
    if (chunks[0].result !== 0) throw new Error(`${protocol} answered with result ${chunks[0].result}`)
    return { protocol, data: chunks[0].data }
  }

  const myStatus = {
    forkDigest,
    finalizedRoot: new Uint8Array(32),
    finalizedEpoch: 0n,
    headRoot: new Uint8Array(32),
    headSlot: 0n,
    earliestAvailableSlot: 0n
  }
  const statusResponse = await request([STATUS_V2, STATUS_V1], encodeStatus(myStatus, 2), 92)
  const statusVersion = statusResponse.protocol === STATUS_V2 ? 2 : 1
  if (statusVersion === 1) {
    // The request above was encoded as v2; a v1-only node would have rejected it.
    throw new Error('Arbor negotiated Status v1; the Fulu network speaks v2')
  }
  const arborStatus = decodeStatus(statusResponse.data, statusVersion)
  // From now on answer Status as if we were at Arbor's head, so it keeps us as a peer.
  ourStatus = { ...arborStatus, earliestAvailableSlot: 0n }
  report('status', { protocol: statusResponse.protocol, status: statusJson(arborStatus) })
  if (toHex(arborStatus.forkDigest) !== toHex(forkDigest)) {
    throw new Error(`Status fork digest ${toHex(arborStatus.forkDigest)} differs from the ENR's ${toHex(forkDigest)}`)
  }

  const pingResponse = await request([PING_V1], uint64Bytes(metadataSeq), 8)
  report('ping', { protocol: pingResponse.protocol, metadata_seq: readUint64(pingResponse.data) })

  // A multi-chunk response with context bytes: BeaconBlocksByRange v2 for slots 2, 3 and 4.
  const byRange = new Uint8Array(24)
  new DataView(byRange.buffer).setBigUint64(0, 2n, true)
  new DataView(byRange.buffer).setBigUint64(8, 3n, true)
  new DataView(byRange.buffer).setBigUint64(16, 1n, true)
  const blocks = await requestChunks([BLOCKS_BY_RANGE_V2], byRange, GOSSIP_MAX_SIZE, 4, 4 * GOSSIP_MAX_SIZE)
  report('blocks_by_range', {
    protocol: blocks.protocol,
    chunks: blocks.chunks.map((c) => ({
      result: c.result,
      context: toHex(c.context),
      length: c.data.length,
      sha256: createHash('sha256').update(c.data).digest('hex')
    }))
  })

  // --- 4. gossip ----------------------------------------------------------------------------
  await withTimeout(new Promise((resolve) => {
    const check = () => {
      if (pubsub.getSubscribers(topic).some((p) => p.equals(arborPeerId))) resolve()
      else setTimeout(check, 50)
    }
    check()
  }), args.timeoutMs, `Arbor's subscription to ${topic}`)
  report('peer_subscribed', { topic })

  const exit = encodeSignedVoluntaryExit(1, args.validatorIndex)
  const published = await pubsub.publish(topic, exit)
  report('published', {
    topic,
    data: toHex(exit),
    message_id: toHex(eth2MessageId({ topic, data: exit })),
    recipients: published.recipients.map((p) => p.toString())
  })

  // Commands from the test: "exit" ends the run; EOF ends it too.
  const lines = readline.createInterface({ input: process.stdin })
  await new Promise((resolve) => {
    lines.on('line', (line) => {
      if (line.trim() === 'exit') resolve()
    })
    lines.on('close', resolve)
  })

  report('stopping', { received: received.length })
  await node.stop()
  await discv5.stop()
  report('stopped')
}

main().then(
  () => process.exit(0),
  (e) => {
    report('error', { name: e.name, message: e.message })
    log(e.stack ?? e.message)
    process.exit(1)
  }
)
