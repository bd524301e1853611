#!/usr/bin/env node
// Checks Arbor's hash tree roots of Gloas containers with Lodestar's SSZ types
// (npm @lodestar/types 1.50.0 on @chainsafe/ssz 1.8.1, which reproduce consensus-specs 1.7.0b4's
// roots). Driven by testing/lodestar_roots/tests/roots.rs.
//
//   node roots.mjs <dir>
//     <dir>/cases.json: {"preset": "minimal"|"mainnet", "fork": "gloas",
//                        "cases": [{"name", "type", "file", "root", "zero"}]}
//     For every case: deserializes <dir>/<file> as the fork's type, checks that re-serializing gives
//     the same bytes, that hashTreeRoot (of the value and of the tree-backed view) is `root`
//     (Arbor's), and for a `zero` case that the bytes are the type's default value. Prints one line
//     per mismatch, then `lodestar-roots: preset=… types=… checked=… mismatches=…`, and writes
//     <dir>/coverage.json: per type, per progressive list path, the longest list seen and its limit.
//     Exits 1 on any mismatch or a type it cannot find.
//
//   node roots.mjs --schema <preset> <Type>...
//     Prints, as JSON, what Lodestar's types can hold that SSZ allows more of, per type: list
//     limits (Lodestar rejects longer lists when deserializing) and the uint64 fields it keeps as
//     JS numbers (exact below 2**53 only). The test clamps its generated values to these.
//
//   node roots.mjs --vectors <dir>/tests/minimal/gloas/ssz_static minimal
//     Lodestar's types against the spec tests' own roots and bytes (the same summary line).

import fs from "node:fs";
import path from "node:path";

const usage =
  "usage: node roots.mjs <cases-dir> | node roots.mjs --schema <minimal|mainnet> <Type>... | " +
  "node roots.mjs --vectors <ssz_static-dir> <minimal|mainnet>";

async function loadTypes(preset, fork) {
  if (preset !== "minimal" && preset !== "mainnet") {
    throw new Error(`unknown preset ${preset}`);
  }
  // @lodestar/params picks its preset from LODESTAR_PRESET when first imported.
  process.env.LODESTAR_PRESET = preset;
  const {ssz} = await import("@lodestar/types");
  const params = await import("@lodestar/params");
  if (params.ACTIVE_PRESET !== preset) {
    throw new Error(`@lodestar/params loaded preset ${params.ACTIVE_PRESET}, wanted ${preset}`);
  }
  const s = await import("@chainsafe/ssz");
  const namespace = ssz[fork];
  if (!namespace) throw new Error(`@lodestar/types has no ssz.${fork}`);
  // Containers of the spec's Gloas ssz_static list that @lodestar/types 1.50.0 does not define
  // (the partial-columns p2p containers): restated from consensus-specs 1.7.0b4
  // (gloas/partial-columns/p2p-interface.md; PartialDataColumnPartsMetadata's bitlists are
  // progressive in 1.7.0b4, as its ssz_static roots show) on @chainsafe/ssz and Lodestar's
  // element types. Reported as such in the output.
  const local =
    fork === "gloas"
      ? {
          PartialDataColumnGroupID: new s.ContainerType(
            {beaconBlockRoot: ssz.Root, slot: ssz.Slot},
            {typeName: "PartialDataColumnGroupID", jsonCase: "eth2"}
          ),
          PartialDataColumnPartsMetadata: new s.ContainerType(
            {available: new s.ProgressiveBitListType(), requests: new s.ProgressiveBitListType()},
            {typeName: "PartialDataColumnPartsMetadata", jsonCase: "eth2"}
          ),
          PartialDataColumnSidecar: new s.ContainerType(
            {
              cellsPresentBitmap: new s.ProgressiveBitListType(),
              partialColumn: new s.ProgressiveListCompositeType(ssz.fulu.Cell),
              kzgProofs: new s.ProgressiveListCompositeType(ssz.deneb.KZGProof),
            },
            {typeName: "PartialDataColumnSidecar", jsonCase: "eth2"}
          ),
        }
      : {};
  return {
    s,
    lookup(name) {
      if (namespace[name]) return {type: namespace[name], where: `ssz.${fork}.${name}`};
      if (local[name]) return {type: local[name], where: `roots.mjs (not in @lodestar/types)`};
      return null;
    },
    localNames: Object.keys(local),
  };
}

function isContainer(s, t) {
  return t instanceof s.ContainerType || t instanceof s.ProgressiveContainerType;
}

function isProgressiveList(s, t) {
  return t instanceof s.ProgressiveListCompositeType || t instanceof s.ProgressiveListBasicType;
}

function isList(s, t) {
  return isProgressiveList(s, t) || t instanceof s.ListCompositeType || t instanceof s.ListBasicType;
}

function isVector(s, t) {
  return t instanceof s.VectorCompositeType || t instanceof s.VectorBasicType;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

// The schema node of a type, keyed by JSON (snake_case) field names; null when it holds no
// progressive list and nothing narrower in Lodestar than in SSZ.
//   {"c": {json_key: node}}                      container
//   {"l": limit|null, "e": node|null, "p"?: n, "z"?: zero}
//                                                list (limit null: none); "p": a progressive
//                                                list of n-byte elements (32: composite), "z"
//                                                its zero element as JSON
//   {"v": node}                                  vector
//   {"b": limitBits|null, "p"?: 1}               bitlist ("p": progressive)
//   {"y": limitBytes|null, "p"?: 1}              byte list ("p": progressive)
//   {"n": clipInfinity}                          uint64 held as a JS number
function schema(s, t) {
  const limitOf = (limit) => (limit < MAX_SAFE ? limit : null);
  if (isContainer(s, t)) {
    const c = {};
    for (const {jsonKey, fieldType} of t.fieldsEntries) {
      const node = schema(s, fieldType);
      if (node) c[jsonKey] = node;
    }
    return Object.keys(c).length ? {c} : null;
  }
  if (isList(s, t)) {
    const e = schema(s, t.elementType);
    const l = limitOf(t.limit);
    if (isProgressiveList(s, t)) {
      const basic = s.isBasicType(t.elementType);
      // "z": the zero element in the Beacon API's JSON, for the test to lengthen a list with
      // when it has no generated element to copy.
      const z = t.elementType.toJson(t.elementType.defaultValue());
      return {l, e, p: basic ? t.elementType.byteLength : 32, z};
    }
    return e || l !== null ? {l, e} : null;
  }
  if (isVector(s, t)) {
    const v = schema(s, t.elementType);
    return v ? {v} : null;
  }
  if (t instanceof s.ProgressiveBitListType) return {b: limitOf(t.limitBits), p: 1};
  if (t instanceof s.BitListType) return {b: t.limitBits};
  if (t instanceof s.ProgressiveByteListType) return {y: limitOf(t.limitBytes), p: 1};
  if (t instanceof s.ByteListType) return {y: t.limitBytes};
  if (t instanceof s.UintNumberType && t.byteLength === 8) {
    return {n: t.clipInfinity === true};
  }
  return null;
}

// Records, per path, the longest progressive list in `value` into `out`: `max` items (elements;
// bits of a bitlist, bytes of a byte list), `maxChunks` 32-byte chunks (the progressive subtrees
// hold 1, 4, 16, 64… chunks), and the limit of Lodestar's type (`null`: none).
function cover(s, t, value, p, out) {
  const note = (len, chunks, limit, limitChunks) => {
    const seen = out[p] ?? {max: 0, maxChunks: 0, limit: limit < MAX_SAFE ? limit : null};
    seen.limitChunks = limit < MAX_SAFE ? limitChunks : null;
    if (len > seen.max) seen.max = len;
    if (chunks > seen.maxChunks) seen.maxChunks = chunks;
    out[p] = seen;
  };
  const per = (n, size) => Math.ceil((n * size) / 32);
  if (isContainer(s, t)) {
    for (const {fieldName, jsonKey, fieldType} of t.fieldsEntries) {
      cover(s, fieldType, value[fieldName], p ? `${p}.${jsonKey}` : jsonKey, out);
    }
  } else if (isList(s, t) || isVector(s, t)) {
    const basic = s.isBasicType(t.elementType);
    if (isProgressiveList(s, t)) {
      const size = basic ? t.elementType.byteLength : 32;
      note(value.length, per(value.length, size), t.limit, per(t.limit, size));
    }
    if (!basic) {
      for (const item of value) cover(s, t.elementType, item, `${p}[]`, out);
    }
  } else if (t instanceof s.ProgressiveBitListType) {
    note(value.bitLen, Math.ceil(value.bitLen / 256), t.limitBits, Math.ceil(t.limitBits / 256));
  } else if (t instanceof s.ProgressiveByteListType) {
    note(value.length, per(value.length, 1), t.limitBytes, per(t.limitBytes, 1));
  }
}

const hex = (bytes) => "0x" + Buffer.from(bytes).toString("hex");

function firstDiff(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

async function check(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "cases.json"), "utf8"));
  const {preset, fork, cases} = manifest;
  const {s, lookup, localNames} = await loadTypes(preset, fork);
  let mismatches = 0;
  let checked = 0;
  const types = new Set();
  const coverage = {};
  const fail = (line) => {
    mismatches++;
    console.log(line);
  };
  for (const c of cases) {
    const found = lookup(c.type);
    if (!found) {
      fail(`NOTYPE ${c.name}: Lodestar has no ${fork} type ${c.type}`);
      continue;
    }
    const {type} = found;
    types.add(c.type);
    checked++;
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, c.file)));
    let value;
    try {
      value = type.deserialize(bytes);
    } catch (e) {
      fail(`DECODE ${c.name} ${c.type}: Lodestar cannot deserialize ${bytes.length} bytes: ${e.message}`);
      continue;
    }
    const again = type.serialize(value);
    if (Buffer.compare(Buffer.from(again), Buffer.from(bytes)) !== 0) {
      fail(
        `REENCODE ${c.name} ${c.type}: serialize(deserialize(bytes)) differs at byte ${firstDiff(again, bytes)} ` +
          `(${again.length} bytes vs ${bytes.length})`
      );
    }
    const root = hex(type.hashTreeRoot(value));
    if (root !== c.root) {
      fail(`ROOT ${c.name} ${c.type}: lodestar ${root} arbor ${c.root}`);
    }
    let viewRoot;
    try {
      viewRoot = hex(type.deserializeToViewDU(bytes).hashTreeRoot());
    } catch (e) {
      viewRoot = `error: ${e.message}`;
    }
    if (viewRoot !== c.root) {
      fail(`VIEWROOT ${c.name} ${c.type}: lodestar tree-backed view ${viewRoot} arbor ${c.root}`);
    }
    if (c.zero) {
      const zero = type.serialize(type.defaultValue());
      if (Buffer.compare(Buffer.from(zero), Buffer.from(bytes)) !== 0) {
        fail(`ZERO ${c.name} ${c.type}: Arbor's zero value is not Lodestar's defaultValue() (differs at byte ${firstDiff(zero, bytes)})`);
      }
    }
    cover(s, type, value, "", (coverage[c.type] ??= {}));
  }
  fs.writeFileSync(path.join(dir, "coverage.json"), JSON.stringify(coverage, null, 1));
  const local = localNames.filter((n) => types.has(n));
  if (local.length) {
    console.log(`note: not in @lodestar/types 1.50.0, restated in roots.mjs on @chainsafe/ssz: ${local.join(", ")}`);
  }
  console.log(`lodestar-roots: preset=${preset} fork=${fork} types=${types.size} checked=${checked} mismatches=${mismatches}`);
  return mismatches === 0;
}

// Snappy block format (the spec tests' `serialized.ssz_snappy`): a varint length, then literal
// and copy elements.
function unsnappy(src) {
  let pos = 0;
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    const b = src[pos++];
    len += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  const out = new Uint8Array(len);
  let o = 0;
  const le = (n) => {
    let v = 0;
    for (let i = 0; i < n; i++) v += src[pos + i] * 2 ** (8 * i);
    pos += n;
    return v;
  };
  while (pos < src.length) {
    const tag = src[pos++];
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >> 2;
      if (n >= 60) n = le(n - 59);
      n += 1;
      out.set(src.subarray(pos, pos + n), o);
      pos += n;
      o += n;
      continue;
    }
    let n;
    let offset;
    if (kind === 1) {
      n = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | src[pos++];
    } else {
      n = (tag >> 2) + 1;
      offset = le(kind === 2 ? 2 : 4);
    }
    if (offset === 0 || offset > o) throw new Error("bad snappy copy offset");
    for (let i = 0; i < n; i++, o++) out[o] = out[o - offset];
  }
  if (o !== len) throw new Error(`snappy length ${o} != ${len}`);
  return out;
}

// `--vectors <ssz_static dir> <preset>`: Lodestar's types against the spec's own roots (every
// `<Type>/<suite>/<case>/` with serialized.ssz_snappy and roots.yaml).
async function vectors(dir, preset) {
  const {lookup, localNames} = await loadTypes(preset, "gloas");
  let checked = 0;
  let mismatches = 0;
  let matched = 0;
  let unrepresentable = 0;
  const perType = {};
  const types = new Set();
  for (const name of fs.readdirSync(dir).sort()) {
    const found = lookup(name);
    if (!found) {
      mismatches++;
      console.log(`NOTYPE ${name}: Lodestar has no gloas type ${name}`);
      continue;
    }
    types.add(name);
    for (const suite of fs.readdirSync(path.join(dir, name)).sort()) {
      for (const c of fs.readdirSync(path.join(dir, name, suite)).sort()) {
        const caseDir = path.join(dir, name, suite, c);
        const where = `${name}/${suite}/${c}`;
        checked++;
        const bytes = unsnappy(new Uint8Array(fs.readFileSync(path.join(caseDir, "serialized.ssz_snappy"))));
        const want = /root:\s*'?(0x[0-9a-f]{64})/.exec(fs.readFileSync(path.join(caseDir, "roots.yaml"), "utf8"))?.[1];
        try {
          const value = found.type.deserialize(bytes);
          const root = hex(found.type.hashTreeRoot(value));
          const again = found.type.serialize(value);
          if (Buffer.compare(Buffer.from(again), Buffer.from(bytes)) !== 0) {
            // A uint64 that Lodestar holds as a JS number (exact below 2**53): its value is not
            // the vector's, so neither is its root.
            unrepresentable++;
            perType[name] = (perType[name] ?? 0) + 1;
          } else if (root !== want) {
            mismatches++;
            console.log(`VECTOR ${where}: lodestar ${root} spec ${want}`);
          } else {
            matched++;
          }
        } catch (e) {
          mismatches++;
          console.log(`VECTOR ${where}: Lodestar cannot deserialize: ${e.message}`);
        }
      }
    }
  }
  const local = localNames.filter((n) => types.has(n));
  if (local.length) {
    console.log(`note: not in @lodestar/types 1.50.0, restated in roots.mjs on @chainsafe/ssz: ${local.join(", ")}`);
  }
  console.log(
    `vectors whose uint64s Lodestar cannot hold exactly (not compared): ${unrepresentable}` +
      (unrepresentable ? ` (${Object.entries(perType).map(([t, n]) => `${t} ${n}`).join(", ")})` : "")
  );
  console.log(
    `lodestar-roots: preset=${preset} fork=gloas types=${types.size} checked=${checked} ` +
      `matched=${matched} mismatches=${mismatches}`
  );
  return mismatches === 0;
}

async function main(argv) {
  if (argv[0] === "--schema") {
    const [, preset, ...names] = argv;
    if (!preset) throw new Error(usage);
    const {s, lookup} = await loadTypes(preset, "gloas");
    const out = {};
    for (const name of names) {
      const found = lookup(name);
      if (!found) {
        console.error(`error: Lodestar has no gloas type ${name}`);
        return false;
      }
      out[name] = schema(s, found.type);
    }
    process.stdout.write(JSON.stringify(out));
    return true;
  }
  if (argv[0] === "--vectors") {
    if (argv.length !== 3) throw new Error(usage);
    return vectors(argv[1], argv[2]);
  }
  if (argv.length !== 1 || argv[0].startsWith("-")) throw new Error(usage);
  return check(argv[0]);
}

main(process.argv.slice(2)).then(
  (ok) => process.exit(ok ? 0 : 1),
  (e) => {
    console.error(`error: ${e.stack ?? e}`);
    process.exit(2);
  }
);
