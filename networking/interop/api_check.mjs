// Arbor's Beacon API decoded by Lodestar's own typed REST client (beacon_node/tests/lodestar_wire.rs).
//
// `@lodestar/api`'s getClient (the client Lodestar's validator client uses), configured from the
// devnet's network directory (config.yaml, genesis.ssz), calls the validator-client endpoints and
// the block, state, header, sidecar, debug, rewards and light-client endpoints of a running
// `arbor dev` node, each once asking for JSON and once asking for SSZ
// (`responseWireFormat`). For every call:
//   - the response must be 2xx and decode with Lodestar's route definition (its @lodestar/types
//     SSZ type for the fork the meta names);
//   - where Lodestar's route has an SSZ form, the SSZ answer must be SSZ (Content-Type
//     application/octet-stream; the JSON-only routes of Lodestar's client are asked in JSON only),
//     its metadata (Eth-Consensus-Version, Eth-Execution-Optimistic, Eth-Consensus-Finalized,
//     dependent roots, ...) from the headers must equal the JSON body's, and its value must equal
//     the JSON answer's (both serialized with the route's SSZ type, compared byte for byte).
// Objects are asked for by root or slot fixed at the start, so a new head cannot change an answer;
// the few endpoints that read the live head or pool (attestation data, aggregates, syncing, pool
// lists, fork choice) are asked again, up to three times, when the head moved between the two
// requests, and the retries are counted. produceBlockV3 builds a new block on every call: both
// answers must decode and agree on slot, proposer, parent and RANDAO reveal (the payload and the
// operations, and with them the block and payload values, may change between two productions).
// Submissions: a pool attestation with a JSON and with an SSZ body, and a sync committee message,
// each one the devnet's own validator client sends (signed again with its interop key: the same
// message), must be accepted; an attestation of a validator outside the committee refused.
// A control compares two different blocks and must see a difference (the comparison is not
// vacuous). Any failure: an {"event":"error"} line and exit status 1.
// Output: one JSON object per line on stdout; the last is {"event":"api_summary",...}.

import { readFileSync } from 'node:fs'
import path from 'node:path'

import yaml from 'js-yaml'

const USAGE = 'usage: node api_check.mjs --url URL --testnet-dir DIR [--min-head-slot N] [--timeout-ms MS]'

function parseArgs (argv) {
  const args = { minHeadSlot: 17, timeoutMs: 120000 }
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i]
    const value = argv[i + 1]
    if (value === undefined) throw new Error(`${key} needs a value\n${USAGE}`)
    switch (key) {
      case '--url': args.url = value; break
      case '--testnet-dir': args.testnetDir = value; break
      case '--min-head-slot': args.minHeadSlot = Number(value); break
      case '--timeout-ms': args.timeoutMs = Number(value); break
      default: throw new Error(`unknown argument ${key}\n${USAGE}`)
    }
  }
  if (args.url == null || args.testnetDir == null) throw new Error(`--url and --testnet-dir are required\n${USAGE}`)
  return args
}

const toHex = (b) => '0x' + Buffer.from(b).toString('hex')
const json = (v) => JSON.stringify(v, (_, x) => typeof x === 'bigint' ? x.toString() : (x instanceof Uint8Array ? toHex(x) : x))
/** JSON with the object keys sorted (metadata from a body and from headers come in different orders). */
const sortedJson = (v) => json(v && typeof v === 'object' && !Array.isArray(v)
  ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
  : v)
function report (event, fields = {}) {
  process.stdout.write(json({ event, ...fields }) + '\n')
}
function log (...parts) {
  process.stderr.write(`[api-check] ${parts.join(' ')}\n`)
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Arbor's answer that Lodestar's client rejects, or JSON and SSZ that disagree. */
class Mismatch extends Error {
  constructor (what, detail) {
    super(`${what}: ${detail}`)
    this.name = 'Mismatch'
  }
}

async function loadLodestar (testnetDir) {
  const configJson = yaml.load(readFileSync(path.join(testnetDir, 'config.yaml'), 'utf8'), { schema: yaml.FAILSAFE_SCHEMA })
  const preset = configJson.PRESET_BASE
  if (preset !== 'minimal' && preset !== 'mainnet') throw new Error(`config.yaml: PRESET_BASE ${preset}`)
  process.env.LODESTAR_PRESET = preset // read once, when @lodestar/params is first imported
  const P = await import('@lodestar/params')
  if (P.ACTIVE_PRESET !== preset) throw new Error(`Lodestar preset is ${P.ACTIVE_PRESET}, wanted ${preset}`)
  const { ssz } = await import('@lodestar/types')
  const C = await import('@lodestar/config')
  const { getClient } = await import('@lodestar/api')
  const ST = await import('@lodestar/state-transition')
  const chainConfig = C.chainConfigFromJson(configJson)
  const genesis = readFileSync(path.join(testnetDir, 'genesis.ssz'))
  const config = C.createBeaconConfig(chainConfig, genesis.subarray(8, 40))
  const U = await import('@lodestar/utils')
  return { P, ssz, ST, U, config, getClient }
}

// The operations whose beacon-APIs response lists application/octet-stream: asked for SSZ they must
// answer SSZ. Lodestar's client has SSZ forms for more (its own extension); there JSON is the
// spec's answer.
const SSZ_IN_SPEC = new Set([
  'getBlockV2', 'getBlobs', 'getBlobSidecars', 'getDebugDataColumnSidecars', 'getStateV2', 'produceBlockV3',
  'produceAttestationData', 'getAggregatedAttestationV2', 'postStateValidatorIdentities', 'getPendingDeposits',
  'getPendingPartialWithdrawals', 'getPendingConsolidations', 'getProposerLookahead',
  'getLightClientOptimisticUpdate', 'getLightClientFinalityUpdate', 'getLightClientBootstrap', 'getLightClientUpdatesByRange'
])

const bytesEqual = (a, b) => a.length === b.length && Buffer.from(a).equals(Buffer.from(b))

class ApiCheck {
  constructor (L, url) {
    this.L = L
    this.api = L.getClient({ baseUrl: url, globalInit: { timeoutMs: 60000 } }, { config: L.config })
    this.counts = { json: 0, ssz: 0, compared: 0, retries: 0, submittedJson: 0, submittedSsz: 0 }
    this.checked = [] // operation ids
    this.jsonOnly = [] // Lodestar's route has no SSZ form
    this.unchecked = [] // with the reason
    this.errors = [] // every endpoint that failed, the run goes on
    this.sszAnsweredJson = [] // Lodestar has an SSZ form, the spec and Arbor answer JSON
    this.sszWithoutMetaHeaders = [] // SSZ answers without Lodestar's optimistic/finalized headers
  }

  /** `call(init)` → ApiResponse. Returns the decoded JSON answer. */
  async fetchOk (name, call, wire, attempt = 0) {
    const res = await call({ responseWireFormat: wire }, attempt)
    if (!res.ok) throw new Mismatch(name, `${wire}: HTTP ${res.status}: ${(await res.errorBody()).slice(0, 300)}`)
    const got = res.wireFormat()
    let value, meta
    try {
      meta = res.meta()
      value = res.value()
    } catch (e) {
      throw new Mismatch(name, `${wire} answer (${got}) does not decode with Lodestar's route: ${e.message}`)
    }
    return { res, got, value, meta }
  }

  async headRoot () {
    const res = await this.api.beacon.getBlockHeader({ blockId: 'head' })
    res.assertOk()
    return toHex(res.value().root)
  }

  /**
   * Asks in JSON and in SSZ and compares. `live`: the answer follows the head or the pool; a
   * difference while the head moved is asked again. `compare(j, s)` replaces the byte comparison.
   */
  async check (name, call, options = {}) {
    try {
      return await this.checkOnce(name, call, options)
    } catch (e) {
      if (e.name !== 'Mismatch') throw e
      this.errors.push(e.message)
      report('endpoint_failed', { endpoint: name, message: e.message })
      return null
    }
  }

  async checkOnce (name, call, { live = false, compare, metaKeys } = {}) {
    for (let attempt = 0; ; attempt++) {
      const headBefore = live ? await this.headRoot() : null
      const moved = async () => live && (await this.headRoot()) !== headBefore
      const j = await this.fetchOk(name, call, 'json', attempt)
      if (j.got !== 'json') throw new Mismatch(name, `asked for JSON, got ${j.got}`)
      const def = j.res.definition.resp
      this.counts.json++
      if (def.onlySupport === 'json' || def.isEmpty) {
        if (attempt === 0) {
          this.jsonOnly.push(name)
          this.checked.push(name)
        }
        return j
      }
      let s
      try {
        s = await this.fetchOk(name, call, 'ssz', attempt)
      } catch (e) {
        // A request about a moment the head has left (a block of the slot asked for to produce
        // arrived in between) is asked again, as a difference is.
        if (e.name !== 'Mismatch' || attempt >= 2 || !(await moved())) throw e
        this.counts.retries++
        log(`${name}: the head moved between the JSON and SSZ requests and the SSZ one failed (${e.message}), asking again`)
        continue
      }
      const base = name.split('(')[0]
      if (s.got !== 'ssz') {
        // Lodestar asks `application/octet-stream;q=1,application/json;q=0.9`: JSON is a valid
        // answer where the spec defines none in SSZ, never where it does.
        if (SSZ_IN_SPEC.has(base)) throw new Mismatch(name, `asked for SSZ (the spec defines an SSZ response), got ${s.got}`)
        if (attempt === 0 && !this.sszAnsweredJson.includes(base)) this.sszAnsweredJson.push(base)
      } else {
        this.counts.ssz++
      }
      let problem = null
      // Eth-Execution-Optimistic and Eth-Consensus-Finalized are Lodestar's headers, not the
      // spec's: Lodestar reads an absent one as false. Compared only when the node sends them.
      const only = (m) => metaKeys == null || m == null ? m : Object.fromEntries(metaKeys.map((k) => [k, m[k]]))
      const metaJ = sortedJson(only(this.optionalMeta(name, j.meta, s.res)))
      const metaS = sortedJson(only(this.optionalMeta(name, s.meta, s.res)))
      if (metaJ !== metaS) problem = `metadata differs: JSON body ${metaJ}, SSZ headers ${metaS}`
      else if (compare) problem = compare(j, s)
      else if (!bytesEqual(j.res.ssz(), s.res.ssz())) problem = 'the JSON answer serialized with the SSZ type differs from the SSZ answer'
      if (problem === null) {
        this.counts.compared++
        this.checked.push(name)
        return j
      }
      if (attempt >= 2 || !(await moved())) throw new Mismatch(name, problem)
      this.counts.retries++
      log(`${name}: the head moved between the JSON and SSZ requests, asking again`)
    }
  }

  optionalMeta (name, meta, sszRes) {
    if (meta == null || typeof meta !== 'object' || sszRes.wireFormat() !== 'ssz') return meta
    const out = { ...meta }
    for (const [key, header] of [['executionOptimistic', 'Eth-Execution-Optimistic'], ['finalized', 'Eth-Consensus-Finalized']]) {
      if (key in out && !sszRes.headers.has(header)) {
        delete out[key]
        const base = name.split('(')[0]
        if (!this.sszWithoutMetaHeaders.includes(base)) this.sszWithoutMetaHeaders.push(base)
      }
    }
    return out
  }

  skip (name, reason) {
    this.unchecked.push({ endpoint: name, reason })
  }
}

/**
 * Submissions in both request encodings (`requestWireFormat`), of messages the devnet's own
 * validator clients already sent: signed again with the validator's interop key (BLS signatures
 * are deterministic, so the message is the same one, never a second vote), the node must accept
 * them (200: a repeat is no failure). SSZ bodies are where the spec has them (pool attestations);
 * a 415 there, which Lodestar's client would answer by falling back to JSON, is a failure. The
 * control, an attestation of a validator outside the committee, must be refused with 400.
 */
async function submissions (c, L, current) {
  const { P, ssz, ST, config } = L
  const api = c.api
  const slot = current - 1
  const epoch = Math.floor(slot / P.SLOTS_PER_EPOCH)
  const submit = async (name, call, wires) => {
    for (const wire of wires) {
      const res = await call({ requestWireFormat: wire })
      const fellBack = api.httpClient.sszNotSupportedByRouteIdByUrlIndex.getOrDefault(0).has(name)
      if (wire === 'ssz' && fellBack) {
        c.errors.push(`${name}: the SSZ body was refused (415), the spec accepts one`)
      } else if (!res.ok) {
        c.errors.push(`${name} (${wire} body): HTTP ${res.status}: ${(await res.errorBody()).slice(0, 300)}`)
      } else {
        c.counts[wire === 'ssz' ? 'submittedSsz' : 'submittedJson']++
      }
    }
    c.checked.push(name)
  }

  // An attestation of the previous slot from the pool: one validator whose bit is set.
  const pooled = await api.beacon.getPoolAttestationsV2({ slot }, { responseWireFormat: 'json' })
  if (!pooled.ok || pooled.value().length === 0) {
    c.errors.push(`submitPoolAttestationsV2: no pooled attestation at slot ${slot} to sign again`)
  } else {
    const aggregate = pooled.value()[0]
    const committeeIndex = aggregate.committeeBits.getTrueBitIndexes()[0]
    const position = aggregate.aggregationBits.getTrueBitIndexes()[0]
    const committees = await api.beacon.getEpochCommittees({ stateId: 'head', epoch, slot, index: committeeIndex })
    committees.assertOk()
    const members = committees.value()[0].validators
    const attesterIndex = members[position]
    const domain = config.getDomain(slot, P.DOMAIN_BEACON_ATTESTER, slot)
    const sign = (index) => ST.interopSecretKey(index).sign(ST.computeSigningRoot(ssz.phase0.AttestationData, aggregate.data, domain)).toBytes()
    const single = { committeeIndex, attesterIndex, data: aggregate.data, signature: sign(attesterIndex) }
    await submit('submitPoolAttestationsV2', (init) => api.beacon.submitPoolAttestationsV2({ signedAttestations: [single] }, init), ['json', 'ssz'])
    const outsider = Array.from({ length: 64 }, (_, i) => i).find((i) => !members.includes(i))
    const control = { ...single, attesterIndex: outsider, signature: sign(outsider) }
    const refused = await api.beacon.submitPoolAttestationsV2({ signedAttestations: [control] }, { requestWireFormat: 'json' })
    if (refused.status !== 400) c.errors.push(`control: an attestation of validator ${outsider}, outside committee ${committeeIndex}, answered ${refused.status}`)
  }

  // A sync committee message of the current slot (gossip takes no other) from a member of the
  // sync committee, for the head: the same one its validator client sends, or a first one.
  {
    const genesis = await api.beacon.getGenesis()
    genesis.assertOk()
    const slotMs = config.SLOT_DURATION_MS
    const startMs = genesis.value().genesisTime * 1000
    // Not in a slot's last 400 ms: the message must arrive within its slot.
    while ((Date.now() - startMs) % slotMs > slotMs - 400) await sleep(100)
    const now = Math.floor((Date.now() - startMs) / slotMs)
    const head = await api.beacon.getBlockHeader({ blockId: 'head' })
    head.assertOk()
    const committee = await api.beacon.getEpochSyncCommittees({ stateId: 'head' })
    committee.assertOk()
    const validatorIndex = committee.value().validators[0]
    const beaconBlockRoot = head.value().root
    const domain = config.getDomain(now, P.DOMAIN_SYNC_COMMITTEE, now)
    const signature = ST.interopSecretKey(validatorIndex).sign(ST.computeSigningRoot(ssz.Root, beaconBlockRoot, domain)).toBytes()
    const message = { slot: now, beaconBlockRoot, validatorIndex, signature }
    await submit('submitPoolSyncCommitteeSignatures', (init) => api.beacon.submitPoolSyncCommitteeSignatures({ signatures: [message] }, init), ['json'])
  }
}

/** A later check needs this answer. */
function need (answer, name) {
  if (answer == null) throw new Mismatch(name, 'failed (above); the checks that use its answer cannot run')
}

async function waitForHead (api, minSlot, deadline) {
  for (;;) {
    const res = await api.beacon.getBlockHeader({ blockId: 'head' }).catch(() => null)
    if (res?.ok) {
      const slot = res.value().header.message.slot
      if (slot >= minSlot) return slot
    }
    if (Date.now() > deadline) throw new Error(`the node's head did not reach slot ${minSlot}`)
    await sleep(500)
  }
}

async function run (args) {
  const L = await loadLodestar(args.testnetDir)
  const { P, ssz, ST, config } = L
  const c = new ApiCheck(L, args.url)
  const api = c.api
  const deadline = Date.now() + args.timeoutMs
  await waitForHead(api, args.minHeadSlot, deadline)

  // Fixed points for the rest: the head block now, its parent, their slots and epochs.
  const headRes = await api.beacon.getBlockHeader({ blockId: 'head' })
  headRes.assertOk()
  const head = headRes.value()
  const headRoot = toHex(head.root)
  const headSlot = head.header.message.slot
  const parentRoot = toHex(head.header.message.parentRoot)
  const epoch = Math.floor(headSlot / P.SLOTS_PER_EPOCH)
  const stateId = String(headSlot)
  const indices = Array.from({ length: 16 }, (_, i) => i)
  report('api_start', { head_slot: headSlot, head_root: headRoot, epoch })

  // beacon: genesis, states
  await c.check('getGenesis', (init) => api.beacon.getGenesis(init))
  await c.check('getStateRoot', (init) => api.beacon.getStateRoot({ stateId }, init))
  await c.check('getStateFork', (init) => api.beacon.getStateFork({ stateId }, init))
  await c.check('getStateFinalityCheckpoints', (init) => api.beacon.getStateFinalityCheckpoints({ stateId }, init))
  await c.check('getStateValidators', (init) => api.beacon.getStateValidators({ stateId }, init))
  await c.check('getStateValidators(id,status)', (init) => api.beacon.getStateValidators({ stateId, validatorIds: [0, 1, 2], statuses: ['active_ongoing'] }, init))
  await c.check('postStateValidators', (init) => api.beacon.postStateValidators({ stateId, validatorIds: [0, 5, 9] }, init))
  await c.check('getStateValidator', (init) => api.beacon.getStateValidator({ stateId, validatorId: 3 }, init))
  await c.check('getStateValidatorBalances', (init) => api.beacon.getStateValidatorBalances({ stateId, validatorIds: [0, 1] }, init))
  await c.check('postStateValidatorBalances', (init) => api.beacon.postStateValidatorBalances({ stateId, validatorIds: [2, 3] }, init))
  await c.check('postStateValidatorIdentities', (init) => api.beacon.postStateValidatorIdentities({ stateId, validatorIds: [0, 7] }, init))
  await c.check('getEpochCommittees', (init) => api.beacon.getEpochCommittees({ stateId }, init))
  await c.check('getEpochSyncCommittees', (init) => api.beacon.getEpochSyncCommittees({ stateId }, init))
  await c.check('getStateRandao', (init) => api.beacon.getStateRandao({ stateId }, init))
  await c.check('getPendingDeposits', (init) => api.beacon.getPendingDeposits({ stateId }, init))
  await c.check('getPendingPartialWithdrawals', (init) => api.beacon.getPendingPartialWithdrawals({ stateId }, init))
  await c.check('getPendingConsolidations', (init) => api.beacon.getPendingConsolidations({ stateId }, init))
  await c.check('getProposerLookahead', (init) => api.beacon.getProposerLookahead({ stateId }, init))

  // beacon: blocks, headers, sidecars
  const block = await c.check('getBlockV2', (init) => api.beacon.getBlockV2({ blockId: headRoot }, init))
  await c.check('getBlockV2(slot)', (init) => api.beacon.getBlockV2({ blockId: headSlot }, init))
  await c.check('getBlockV2(genesis)', (init) => api.beacon.getBlockV2({ blockId: 'genesis' }, init))
  await c.check('getBlockHeader', (init) => api.beacon.getBlockHeader({ blockId: headRoot }, init))
  await c.check('getBlockHeaders(slot)', (init) => api.beacon.getBlockHeaders({ slot: headSlot }, init))
  await c.check('getBlockHeaders(parent_root)', (init) => api.beacon.getBlockHeaders({ parentRoot }, init))
  await c.check('getBlockRoot', (init) => api.beacon.getBlockRoot({ blockId: headSlot }, init))
  await c.check('getBlockAttestationsV2', (init) => api.beacon.getBlockAttestationsV2({ blockId: headRoot }, init))
  need(block, 'getBlockV2')
  const commitments = block.value.message.body.blobKzgCommitments ?? []
  if (commitments.length === 0) throw new Mismatch('getBlockV2', `block ${headRoot} has no blobs: the devnet runs with --blobs`)
  const blobs = await c.check('getBlobs', (init) => api.beacon.getBlobs({ blockId: headRoot }, init))
  if (blobs && blobs.value.length !== commitments.length) throw new Mismatch('getBlobs', `${blobs.value.length} blobs for ${commitments.length} commitments`)
  await c.check('getDebugDataColumnSidecars', (init) => api.debug.getDebugDataColumnSidecars({ blockId: headRoot, indices: [0, 1, 127] }, init))
  const columns = await c.check('getDebugDataColumnSidecars(all)', (init) => api.debug.getDebugDataColumnSidecars({ blockId: headRoot }, init))
  if (columns && columns.value.length !== P.NUMBER_OF_COLUMNS) throw new Mismatch('getDebugDataColumnSidecars', `${columns.value.length} columns from a supernode`)
  // The deprecated blob sidecars of a Fulu block, made by the node from its columns: one per
  // commitment, each blob the one getBlobs served, each inclusion proof verified with Lodestar's
  // verifyMerkleBranch against the block's body root.
  const sidecars = await c.check('getBlobSidecars', (init) => api.beacon.getBlobSidecars({ blockId: headRoot }, init))
  if (sidecars) {
    if (sidecars.value.length !== commitments.length) throw new Mismatch('getBlobSidecars', `${sidecars.value.length} sidecars for ${commitments.length} commitments`)
    const bodyRoot = L.config.getForkTypes(block.value.message.slot).BeaconBlockBody.hashTreeRoot(block.value.message.body)
    for (const [i, s] of sidecars.value.entries()) {
      if (s.index !== i) throw new Mismatch('getBlobSidecars', `sidecar ${i} has index ${s.index}`)
      if (!bytesEqual(s.kzgCommitment, commitments[i])) throw new Mismatch('getBlobSidecars', `sidecar ${i}: another commitment than the block's`)
      if (blobs && !bytesEqual(s.blob, blobs.value[i])) throw new Mismatch('getBlobSidecars', `sidecar ${i}: another blob than getBlobs served`)
      if (!bytesEqual(s.signedBlockHeader.message.bodyRoot, bodyRoot)) throw new Mismatch('getBlobSidecars', `sidecar ${i}: the header's body root is not the block's`)
      const leaf = ssz.deneb.KZGCommitment.hashTreeRoot(s.kzgCommitment)
      if (!L.U.verifyMerkleBranch(leaf, s.kzgCommitmentInclusionProof, P.KZG_COMMITMENT_INCLUSION_PROOF_DEPTH, P.KZG_COMMITMENT_SUBTREE_INDEX0 + i, bodyRoot)) {
        throw new Mismatch('getBlobSidecars', `sidecar ${i}: the inclusion proof does not verify (Lodestar's verifyMerkleBranch)`)
      }
    }
  }
  const one = await c.check('getBlobSidecars(indices)', (init) => api.beacon.getBlobSidecars({ blockId: headRoot, indices: [0] }, init))
  if (one && (one.value.length !== 1 || one.value[0].index !== 0)) throw new Mismatch('getBlobSidecars', `indices=[0] gave ${one.value.length} sidecars`)
  // The head block blinded: its root is the block's (the signature stays valid), its payload
  // header the block's payload's.
  const blinded = await c.check('getBlindedBlock', (init) => api.beacon.getBlindedBlock({ blockId: headRoot }, init))
  if (blinded) {
    const fork = L.config.getForkName(blinded.value.message.slot)
    if (toHex(ssz[fork].BlindedBeaconBlock.hashTreeRoot(blinded.value.message)) !== headRoot) throw new Mismatch('getBlindedBlock', 'its root is not the block\'s')
    const payload = block.value.message.body.executionPayload
    const header = blinded.value.message.body.executionPayloadHeader
    if (!bytesEqual(header.blockHash, payload.blockHash)) throw new Mismatch('getBlindedBlock', 'another payload header than the block\'s payload')
    if (!bytesEqual(header.transactionsRoot, ssz[fork].ExecutionPayload.fields.transactions.hashTreeRoot(payload.transactions))) {
      throw new Mismatch('getBlindedBlock', 'the header\'s transactions root is not the payload\'s')
    }
  }

  // Control: two different blocks must compare different.
  {
    const a = await api.beacon.getBlockV2({ blockId: headRoot }, { responseWireFormat: 'json' })
    const b = await api.beacon.getBlockV2({ blockId: parentRoot }, { responseWireFormat: 'ssz' })
    a.assertOk(); b.assertOk()
    if (bytesEqual(a.ssz(), b.ssz())) throw new Mismatch('control', 'the head block and its parent compared equal')
  }

  // beacon: rewards
  await c.check('getBlockRewards', (init) => api.beacon.getBlockRewards({ blockId: headRoot }, init))
  await c.check('getSyncCommitteeRewards', (init) => api.beacon.getSyncCommitteeRewards({ blockId: headRoot, validatorIds: [] }, init))
  await c.check('getAttestationsRewards', (init) => api.beacon.getAttestationsRewards({ epoch: epoch - 2, validatorIds: [0, 1] }, init))

  // beacon: pool (live)
  await c.check('getPoolAttestationsV2', (init) => api.beacon.getPoolAttestationsV2({ slot: headSlot }, init), { live: true })
  await c.check('getPoolAttesterSlashingsV2', (init) => api.beacon.getPoolAttesterSlashingsV2(init), { live: true })
  await c.check('getPoolProposerSlashings', (init) => api.beacon.getPoolProposerSlashings(init), { live: true })
  await c.check('getPoolVoluntaryExits', (init) => api.beacon.getPoolVoluntaryExits(init), { live: true })
  await c.check('getPoolBLSToExecutionChanges', (init) => api.beacon.getPoolBLSToExecutionChanges(init), { live: true })

  // config, node
  await c.check('getSpec', (init) => api.config.getSpec(init))
  await c.check('getForkSchedule', (init) => api.config.getForkSchedule(init))
  await c.check('getDepositContract', (init) => api.config.getDepositContract(init))
  await c.check('getNodeVersion', (init) => api.node.getNodeVersion(init))
  await c.check('getSyncingStatus', (init) => api.node.getSyncingStatus(init), { live: true })
  await c.check('getNetworkIdentity', (init) => api.node.getNetworkIdentity(init))
  const peers = await c.check('getPeers', (init) => api.node.getPeers(init))
  need(peers, 'getPeers')
  if (peers.value.length === 0) throw new Mismatch('getPeers', 'no peers on a two-node devnet')
  await c.check('getPeer', (init) => api.node.getPeer({ peerId: peers.value[0].peerId }, init))
  await c.check('getPeerCount', (init) => api.node.getPeerCount(init), { live: true })
  {
    const res = await api.node.getHealth()
    if (res.status !== 200) throw new Mismatch('getHealth', `HTTP ${res.status} from a synced node`)
    c.counts.json++
    c.checked.push('getHealth')
  }
  c.skip('getNodeVersionV2', 'GET /eth/v2/node/version is not in the beacon-APIs release that defines Fulu')

  // validator: duties, production, attestation data, aggregates, liveness. These follow the
  // clock, read again here and before each time-bound call (the reads above took slots).
  const genesis = await api.beacon.getGenesis()
  genesis.assertOk()
  const genesisMs = genesis.value().genesisTime * 1000
  const clockSlot = () => Math.floor((Date.now() - genesisMs) / config.SLOT_DURATION_MS)
  const clockEpoch = Math.floor(clockSlot() / P.SLOTS_PER_EPOCH)
  await c.check('getAttesterDuties', (init) => api.validator.getAttesterDuties({ epoch: clockEpoch, indices }, init))
  await c.check('getAttesterDuties(next)', (init) => api.validator.getAttesterDuties({ epoch: clockEpoch + 1, indices }, init))
  await c.check('getProposerDuties', (init) => api.validator.getProposerDuties({ epoch: clockEpoch }, init))
  await c.check('getProposerDuties(previous)', (init) => api.validator.getProposerDuties({ epoch: clockEpoch - 1 }, init))
  await c.check('getSyncCommitteeDuties', (init) => api.validator.getSyncCommitteeDuties({ epoch: clockEpoch, indices }, init))
  // The current epoch: known for the whole epoch (the previous one stops being so at the turn).
  await c.check('getLiveness', (init) => api.validator.getLiveness({ epoch: Math.floor(clockSlot() / P.SLOTS_PER_EPOCH), indices }, init))
  const infinity = new Uint8Array(96); infinity[0] = 0xc0
  // The slot after the clock's, read again for each attempt (the JSON and SSZ requests of one
  // attempt ask for the same slot).
  const produceSlots = []
  await c.check('produceBlockV3', (init, attempt) => api.validator.produceBlockV3({
    slot: (produceSlots[attempt] ??= clockSlot() + 1), randaoReveal: infinity, graffiti: 'lodestar api check', skipRandaoVerification: true
  }, init), {
    compare: (j, s) => {
      const a = j.value.block ?? j.value
      const b = s.value.block ?? s.value
      for (const key of ['slot', 'proposerIndex', 'parentRoot']) {
        if (json(a[key]) !== json(b[key])) return `${key}: JSON ${json(a[key])}, SSZ ${json(b[key])}`
      }
      if (!bytesEqual(a.body.randaoReveal, b.body.randaoReveal)) return 'randao reveals differ'
      return null
    },
    // The block and payload values follow the operations and payload of each production.
    metaKeys: ['version', 'executionPayloadBlinded', 'executionPayloadSource'],
    // A block of the clock's slot may arrive between the two: the parent changes with the head.
    live: true
  })
  let current = clockSlot()
  const data = await c.check('produceAttestationData', (init) => api.validator.produceAttestationData({ slot: current, committeeIndex: 0 }, init), { live: true })
  need(data, 'produceAttestationData')
  // The node aggregates the sync committee messages its validator client posted: those of the
  // last two slots are all in. Each message names the head its validator saw a third into the
  // slot: the slot's block, or its parent when the block came later. The first slot, root and
  // subcommittee with messages at this node is checked.
  {
    current = clockSlot()
    const candidates = []
    for (const slot of [current - 1, current - 2]) {
      const header = await api.beacon.getBlockHeader({ blockId: slot })
      if (!header.ok) continue // no block at that slot
      candidates.push({ slot, root: header.value().root }, { slot, root: header.value().header.message.parentRoot })
    }
    let args = null
    for (const { slot, root } of candidates) {
      for (let subcommitteeIndex = 0; subcommitteeIndex < P.SYNC_COMMITTEE_SUBNET_COUNT && args == null; subcommitteeIndex++) {
        const probe = { slot, subcommitteeIndex, beaconBlockRoot: root }
        const res = await api.validator.produceSyncCommitteeContribution(probe, { responseWireFormat: 'json' })
        if (res.ok) args = probe
      }
      if (args != null) break
    }
    if (args == null) c.errors.push(`produceSyncCommitteeContribution: 404 for every subcommittee at slots ${current - 2}..${current - 1}`)
    else await c.check('produceSyncCommitteeContribution', (init) => api.validator.produceSyncCommitteeContribution(args, init))
  }
  // An aggregate the node holds: of one of the head block's attestations (the first whose data
  // the node has seen), by its data root, slot and committee.
  const included = block.value.message.body.attestations
  if (included.length === 0) throw new Mismatch('getBlockV2', 'the head block has no attestations to aggregate')
  let aggregateArgs = null
  for (const att of included) {
    const probe = {
      attestationDataRoot: ssz.phase0.AttestationData.hashTreeRoot(att.data),
      slot: att.data.slot,
      committeeIndex: att.committeeBits.getTrueBitIndexes()[0]
    }
    const res = await api.validator.getAggregatedAttestationV2(probe, { responseWireFormat: 'json' })
    if (res.ok) {
      aggregateArgs = probe
      break
    }
  }
  if (aggregateArgs == null) c.errors.push(`getAggregatedAttestationV2: 404 for each of the head block's ${included.length} attestations`)
  else await c.check('getAggregatedAttestationV2', (init) => api.validator.getAggregatedAttestationV2(aggregateArgs, init), { live: true })

  // Empty answers a validator client sends every epoch: accepted with 200.
  for (const [name, call] of [
    ['prepareBeaconCommitteeSubnet', () => api.validator.prepareBeaconCommitteeSubnet({
      subscriptions: [{ validatorIndex: 0, committeeIndex: 0, committeesAtSlot: 1, slot: current + 1, isAggregator: false }]
    })],
    ['prepareSyncCommitteeSubnets', () => api.validator.prepareSyncCommitteeSubnets({
      subscriptions: [{ validatorIndex: 0, syncCommitteeIndices: [0], untilEpoch: clockEpoch + 1 }]
    })],
    ['prepareBeaconProposer', () => api.validator.prepareBeaconProposer({
      proposers: [{ validatorIndex: 0, feeRecipient: '0x' + 'fe'.repeat(20) }]
    })]
  ]) {
    const res = await call()
    if (!res.ok) throw new Mismatch(name, `HTTP ${res.status}: ${(await res.errorBody()).slice(0, 300)}`)
    c.counts.json++
    c.checked.push(name)
  }
  await submissions(c, L, clockSlot())
  c.skip('publishBlockV2, publishBlindedBlockV2, publishAggregateAndProofsV2, publishContributionAndProofs, submitPool{AttesterSlashings,ProposerSlashings,VoluntaryExit,BLSToExecutionChange}, registerValidator',
    'need new objects signed by the devnet\'s validators (a second block or aggregate of theirs would equivocate, an exit is refused before SHARD_COMMITTEE_PERIOD); the devnet\'s own validator clients publish blocks, aggregates and contributions every slot, and tests/api.rs submits each in JSON and SSZ')
  c.skip('submitBeaconCommitteeSelections, submitSyncCommitteeSelections', 'answer 501: the node has no DVT middleware')

  // debug
  await c.check('getStateV2', (init) => api.debug.getStateV2({ stateId }, init))
  await c.check('getStateV2(root)', (init) => api.debug.getStateV2({ stateId: toHex(head.header.message.stateRoot) }, init))
  await c.check('getDebugChainHeadsV2', (init) => api.debug.getDebugChainHeadsV2(init), { live: true })
  await c.check('getDebugForkChoice', (init) => api.debug.getDebugForkChoice(init), { live: true })
  c.skip('getDebugForkChoiceV2, getProtoArrayNodes', 'Lodestar-only routes (/eth/v2/debug/fork_choice, /eth/v0/debug/forkchoice), not in the beacon-APIs release')

  // light client
  await c.check('getLightClientOptimisticUpdate', (init) => api.lightclient.getLightClientOptimisticUpdate(init), { live: true })
  c.skip('getLightClientFinalityUpdate, getLightClientBootstrap, getLightClientUpdatesByRange', 'need a finalized checkpoint past genesis; the devnet of this test does not wait for finality')

  c.skip('eventstream (GET /eth/v1/events)', 'server-sent events, not a typed REST answer; tests/api.rs and the SSE unit tests cover the stream')
  c.skip('POST /eth/v1/beacon/blinded_blocks', 'Lodestar\'s client has only publishBlindedBlockV2')

  // Gloas-only and Lodestar-only routes are not part of the check.
  c.skip('Gloas routes (execution payload envelopes/bids, payload attestations, PTC duties, produceBlockV4, builders, proposer preferences)', 'Gloas-only, out of the issue\'s scope')

  if (c.errors.length > 0) throw new Mismatch(`${c.errors.length} endpoint(s)`, c.errors.join('; '))
  report('api_summary', {
    checked: c.checked.length,
    json: c.counts.json,
    ssz: c.counts.ssz,
    compared: c.counts.compared,
    retries: c.counts.retries,
    submitted_json: c.counts.submittedJson,
    submitted_ssz: c.counts.submittedSsz,
    json_only: c.jsonOnly,
    ssz_answered_json: c.sszAnsweredJson,
    ssz_without_optimistic_finalized_headers: c.sszWithoutMetaHeaders,
    endpoints: c.checked,
    unchecked: c.unchecked
  })
}

run(parseArgs(process.argv.slice(2))).then(
  () => process.exit(0),
  (e) => {
    report('error', { name: e.name, message: e.message, stack: e.name === 'Mismatch' ? undefined : e.stack })
    process.exit(1)
  }
)
