#!/usr/bin/env python3
"""The SSZ and the JSON answer of each SSZ-capable Beacon API endpoint are one value, by the
consensus specs' own Python types (PyPI `eth-consensus-specs`, mainnet preset: Fulu's, or
Gloas's for a Gloas devnet).

For every case below, against a running node:

1. the JSON answer (`Accept: application/json`) and the SSZ answer
   (`Accept: application/octet-stream`) are both 200, with the content type asked for, and the
   same `Eth-Consensus-Version` (the JSON `version` field too, for versioned answers);
2. the SSZ body decodes as the spec's type and encodes back to the same bytes;
3. the JSON `data` reads as the same type under the API's conventions, strictly: quoted
   integers, 0x-hex bytes and bitfields, exactly the container's fields;
4. both have the same hash tree root.

A case whose object the devnet does not have (a 404 in both encodings) is reported, not failed;
at least MIN_CHECKED cases must be compared. Exits non-zero on any difference.

Usage: ssz_json.py URL REPORT.md [FORK]   (FORK: fulu, the default, or gloas)
"""

import json
import sys
import urllib.error
import urllib.request

from eth_consensus_specs.fulu import mainnet as fulu_spec
from eth_consensus_specs.gloas import mainnet as gloas_spec
from eth_consensus_specs.utils.ssz.ssz_typing import (
    BitList,
    BitVector,
    Boolean,
    ByteList,
    ByteVector,
    Container,
    List,
    ProgressiveBitList,
    ProgressiveByteList,
    ProgressiveList,
    Uint,
    Vector,
)

# The fork whose types read the answers (main() sets it from the command line).
FORK = "fulu"
spec = fulu_spec

JSON = "application/json"
SSZ = "application/octet-stream"
MIN_CHECKED = 12


class BlockContents(Container):
    """The beacon-APIs' Fulu `BlockContents` (produceBlockV3's full answer)."""

    block: spec.BeaconBlock
    kzg_proofs: List[spec.KZGProof, spec.FIELD_ELEMENTS_PER_EXT_BLOB * spec.MAX_BLOB_COMMITMENTS_PER_BLOCK]
    blobs: List[spec.Blob, spec.MAX_BLOB_COMMITMENTS_PER_BLOCK]


class Mismatch(Exception):
    pass


def from_json(data, typ, path="data"):
    """`data` (the API's JSON) as a value of the SSZ type `typ`, refusing anything the API's
    conventions do not allow."""
    if issubclass(typ, Boolean):
        if not isinstance(data, bool):
            raise Mismatch(f"{path}: a boolean is JSON true/false, got {data!r}")
        return typ(data)
    if issubclass(typ, Uint):
        if not isinstance(data, str) or not data.isdigit():
            raise Mismatch(f"{path}: an integer is a quoted decimal string, got {data!r}")
        return typ(int(data))
    if issubclass(typ, (BitList, BitVector, ByteList, ByteVector, ProgressiveBitList, ProgressiveByteList)):
        if not isinstance(data, str) or not data.startswith("0x"):
            raise Mismatch(f"{path}: bytes are 0x-prefixed hex, got {str(data)[:40]!r}")
        raw = bytes.fromhex(data[2:])
        if issubclass(typ, (BitList, BitVector, ProgressiveBitList)):
            return typ.decode_bytes(raw)
        return typ(raw)
    if issubclass(typ, (List, Vector, ProgressiveList)):
        if not isinstance(data, list):
            raise Mismatch(f"{path}: a list is a JSON array, got {type(data).__name__}")
        element = typ.element_cls()
        return typ(from_json(item, element, f"{path}[{i}]") for i, item in enumerate(data))
    if issubclass(typ, Container):
        if not isinstance(data, dict):
            raise Mismatch(f"{path}: a container is a JSON object, got {type(data).__name__}")
        fields = typ.fields()
        extra = sorted(set(data) - set(fields))
        missing = sorted(set(fields) - set(data))
        if extra or missing:
            raise Mismatch(f"{path}: fields not of {typ.__name__}: extra {extra}, missing {missing}")
        return typ(**{name: from_json(data[name], ftyp, f"{path}.{name}") for name, ftyp in fields.items()})
    raise Mismatch(f"{path}: no JSON reading for {typ}")


def get(url, accept):
    req = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def header(headers, name):
    for k, v in headers.items():
        if k.lower() == name.lower():
            return v
    return None


def compare(base, path, typ, versioned):
    """One case: None if the node has no such object, else a short description of what matched."""
    js_status, js_headers, js_body = get(base + path, JSON)
    ssz_status, ssz_headers, ssz_body = get(base + path, SSZ)
    if js_status == 404 and ssz_status == 404:
        return None
    if js_status != 200 or ssz_status != 200:
        raise Mismatch(f"status JSON {js_status}, SSZ {ssz_status}: {js_body[:200]!r} / {ssz_body[:200]!r}")
    if not (header(js_headers, "content-type") or "").startswith(JSON):
        raise Mismatch(f"JSON answer's content type {header(js_headers, 'content-type')}")
    if not (header(ssz_headers, "content-type") or "").startswith(SSZ):
        raise Mismatch(f"SSZ answer's content type {header(ssz_headers, 'content-type')}")
    document = json.loads(js_body)
    if versioned:
        v_json = header(js_headers, "eth-consensus-version")
        v_ssz = header(ssz_headers, "eth-consensus-version")
        if not (document.get("version") == v_json == v_ssz == FORK):
            raise Mismatch(f"versions: JSON field {document.get('version')}, headers {v_json} / {v_ssz}")
    from_ssz = typ.decode_bytes(ssz_body)
    if from_ssz.encode_bytes() != ssz_body:
        raise Mismatch("the SSZ body is not canonical (decoding and encoding it changes it)")
    from_js = from_json(document["data"], typ)
    if from_js.hash_tree_root() != from_ssz.hash_tree_root():
        raise Mismatch(
            f"JSON and SSZ differ: roots {from_js.hash_tree_root().hex()} / {from_ssz.hash_tree_root().hex()}"
        )
    return f"{len(ssz_body)} bytes, root 0x{from_ssz.hash_tree_root().hex()[:16]}…"


def cases(base):
    """(path, type, versioned) of every case, with ids read from the node."""
    def data(path):
        status, _, body = get(base + path, JSON)
        return json.loads(body)["data"] if status == 200 else None

    # The head moves every slot: it is named by its block root and state root, so that the
    # JSON and the SSZ request ask for the same object.
    header = data("/eth/v1/beacon/headers/head")
    head = int(header["header"]["message"]["slot"])
    block = header["root"]
    state = header["header"]["message"]["state_root"]
    finalized = data("/eth/v1/beacon/headers/finalized")
    finalized_block = finalized["root"]
    finalized_state = finalized["header"]["message"]["state_root"]
    out = []
    for block_id in [block, finalized_block, "genesis", str(head - 1)]:
        out.append((f"/eth/v2/beacon/blocks/{block_id}", spec.SignedBeaconBlock, True))
    for state_id in [state, finalized_state]:
        out.append((f"/eth/v2/debug/beacon/states/{state_id}", spec.BeaconState, True))
    out += [
        (f"/eth/v1/debug/beacon/data_column_sidecars/{block}", List[spec.DataColumnSidecar, spec.NUMBER_OF_COLUMNS], True),
        (f"/eth/v1/beacon/blobs/{block}", List[spec.Blob, spec.MAX_BLOB_COMMITMENTS_PER_BLOCK], False),
        (f"/eth/v1/beacon/states/{state}/pending_deposits", List[spec.PendingDeposit, spec.PENDING_DEPOSITS_LIMIT], True),
        (
            f"/eth/v1/beacon/states/{state}/pending_partial_withdrawals",
            List[spec.PendingPartialWithdrawal, spec.PENDING_PARTIAL_WITHDRAWALS_LIMIT],
            True,
        ),
        (
            f"/eth/v1/beacon/states/{state}/pending_consolidations",
            List[spec.PendingConsolidation, spec.PENDING_CONSOLIDATIONS_LIMIT],
            True,
        ),
        (f"/eth/v1/beacon/states/{state}/proposer_lookahead", spec.BeaconState.fields()["proposer_lookahead"], True),
        ("/eth/v1/beacon/light_client/finality_update", spec.LightClientFinalityUpdate, True),
        ("/eth/v1/beacon/light_client/optimistic_update", spec.LightClientOptimisticUpdate, True),
        (f"/eth/v1/validator/attestation_data?slot={head}&committee_index=0", spec.AttestationData, False),
    ]
    # Bootstraps are served for epoch-boundary (checkpoint) blocks.
    for slot in sorted({head - head % spec.SLOTS_PER_EPOCH, 0}):
        root = data(f"/eth/v1/beacon/blocks/{slot}/root")
        if root:
            out.append((f"/eth/v1/beacon/light_client/bootstrap/{root['root']}", spec.LightClientBootstrap, True))
    if FORK == "gloas":
        # The payload comes in an envelope (the head's may still be on its way: the parent's
        # is asked too); the PTC's data and pool are of the slot before the head's.
        parent = header["header"]["message"]["parent_root"]
        for root in [block, parent]:
            out.append(
                (f"/eth/v1/beacon/execution_payload_envelopes/{root}", spec.SignedExecutionPayloadEnvelope, True)
            )
        out.append((f"/eth/v1/validator/payload_attestation_data/{head}", spec.PayloadAttestationData, True))
        out.append(
            (
                f"/eth/v1/beacon/pool/payload_attestations?slot={head - 1}",
                List[spec.PayloadAttestation, spec.MAX_PAYLOAD_ATTESTATIONS],
                True,
            )
        )
        # Block production is v4 from Gloas on, which v5.0.0-alpha.2 does not define yet.
        return out
    infinity = "0xc0" + "00" * 95

    def production():
        # The slot after the head when the case runs (the head moves while the others run).
        slot = int(data("/eth/v1/beacon/headers/head")["header"]["message"]["slot"]) + 1
        return f"/eth/v3/validator/blocks/{slot}?randao_reveal={infinity}&skip_randao_verification="

    out.append((production, BlockContents, True))
    return out


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    global FORK, spec
    base, report = sys.argv[1].rstrip("/"), sys.argv[2]
    if len(sys.argv) == 4:
        FORK = sys.argv[3]
        spec = {"fulu": fulu_spec, "gloas": gloas_spec}.get(FORK)
        if spec is None:
            raise SystemExit(f"ssz_json.py: fork {FORK!r}: fulu or gloas")
    lines = [f"## JSON = SSZ, by the consensus specs' types (`eth-consensus-specs`, {FORK} mainnet)", ""]
    failed = checked = 0
    for path, typ, versioned in cases(base):
        if callable(path):
            path = path()
        try:
            outcome = compare(base, path, typ, versioned)
        except Mismatch as e:
            # produceBlockV3 builds anew for each request, and the latest light-client updates
            # change with the head: a head that moved in between the two requests makes two
            # values. Ask once more before calling it a difference.
            if path.startswith("/eth/v3/") or "_update" in path:
                try:
                    outcome = compare(base, path, typ, versioned)
                except Mismatch as again:
                    outcome, e = None, again
                    failed += 1
                    lines.append(f"- FAIL: `GET {path}`: {e}")
                    continue
            else:
                failed += 1
                lines.append(f"- FAIL: `GET {path}`: {e}")
                continue
        if outcome is None:
            lines.append(f"- not on this devnet (404): `GET {path}`")
        else:
            checked += 1
            lines.append(f"- ok: `GET {path}` ({outcome})")
    if checked < MIN_CHECKED:
        failed += 1
        lines.append(f"- FAIL: only {checked} cases compared (at least {MIN_CHECKED} expected)")
    lines.append("")
    lines.append(f"{checked} compared, {failed} failed.")
    with open(report, "a") as f:
        f.write("\n" + "\n".join(lines) + "\n")
    print(f"conformance: JSON = SSZ: {checked} compared, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
