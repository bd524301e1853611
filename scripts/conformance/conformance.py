#!/usr/bin/env python3
"""Checks a running Arbor devnet's Beacon API against the ethereum/beacon-APIs OpenAPI document.

Starts `arbor dev` (one node, mock execution client with blobs, short slots) on 127.0.0.1, waits
until it has blocks with blobs and a finalized checkpoint, then runs schemathesis against it:

- pass `json`: every operation, `Accept: application/json`, the checks below;
- pass `ssz`: the operations whose successful response the spec offers in SSZ, with
  `Accept: application/octet-stream;q=1.0,application/json;q=0.9`.

Checks: no 5xx on any generated input (`not_a_server_error`), status codes the spec lists for
the operation, the content type the spec lists, the response headers it requires, and every
response body against its schema. The devnet is stopped by its PID at the end (and on any
error); its log stays under the output directory.

Writes OUT/report.md (what was checked, per operation, and what was left out and why) and
exits non-zero when any check failed.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

# The event stream: a pass of its own (see schemathesis.toml).
EVENTS = ("GET", "/eth/v1/events")

# Operations left out, with the reason. Each is checked elsewhere in the tests.
EXCLUDED = {
    ("POST", "/eth/v2/beacon/blocks"): (
        "a blob is 131,072 bytes (262,144 hex digits), beyond what Hypothesis generates "
        "(its health check refuses the operation); publishBlockV2 is driven in JSON and SSZ by "
        "http_api/tests/api.rs and Lodestar's client (networking/interop/api_check.mjs), and "
        "api.rs sends it generated bodies, content types and versions without a 5xx"
    ),
}

# Checks of valid input (positive mode): no 5xx, a status code the operation documents, its
# content type and headers, and the body against the schema of that status.
# Where the v4.0.0 document itself lags behind the forks it defines, with what the node does and
# why: each applied to the bundled document before the passes, and listed in the report.
SPEC_LAGS = [
    (
        ("/eth/v1/beacon/blob_sidecars/{block_id}", "get", "200", "version"),
        ["deneb", "electra", "fulu"],
        "getBlobSidecars' `version` enum stops at `electra` (the route was deprecated before Fulu "
        "and never updated), yet the route is still in the release that defines Fulu and clients "
        "serve Fulu blocks' sidecars from their columns (Lodestar does since its PR #8506): the node names the "
        "block's fork, `fulu`, as `Eth-Consensus-Version` and `version` do everywhere else",
    ),
]


# Where v5.0.0-alpha.2, the document's Gloas release, lags behind the Gloas it defines: applied
# only to a document that defines Gloas (has its bid schema). Each: what is patched, how, why.
def _response_props(doc, path):
    return doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["properties"]


def _version_and_gloas(path):
    def patch(doc):
        props = _response_props(doc, path)
        props["version"]["enum"] = [*props["version"]["enum"], "gloas"]

    return patch


def _any_object_data(path):
    def patch(doc):
        _response_props(doc, path)["data"]["anyOf"].append({"type": "object"})

    return patch


def _client_code_ar(doc):
    codes = doc["components"]["schemas"]["primitive.ClientCode"]["enum"]
    codes.append("AR")


GLOAS_VERSION_ENUMS = [
    "/eth/v2/beacon/pool/attestations",
    "/eth/v2/beacon/pool/attester_slashings",
    "/eth/v2/beacon/blocks/{block_id}/attestations",
    "/eth/v2/debug/beacon/states/{state_id}",
]
GLOAS_LAGS = [
    *[
        (
            f"`GET {path}` 200 `version`: `gloas` added to the enum",
            _version_and_gloas(path),
            "the enum stops at `fulu` although the release defines Gloas and the operation serves "
            "Gloas objects (attestations and attester slashings keep Electra's containers in "
            "Gloas): the node names the object's fork, `gloas`, as `Eth-Consensus-Version` does",
        )
        for path in GLOAS_VERSION_ENUMS
    ],
    (
        "`GET /eth/v2/debug/beacon/states/{state_id}` 200 `data`: any object accepted besides the "
        "states up to Fulu",
        _any_object_data("/eth/v2/debug/beacon/states/{state_id}"),
        "the release has no `Gloas.BeaconState` schema; the Gloas state's JSON is instead read "
        "field by field, strictly, by the consensus specs' own Gloas types in the JSON = SSZ pass",
    ),
    (
        "`primitive.ClientCode`: `AR` added to the enum",
        _client_code_ar,
        "the enum lists the codes of the clients registered when it was written (the execution "
        "APIs' ClientVersionV1 list, which a new client joins by adding its code); Arbor names "
        "itself `AR`, not yet registered there",
    ),
]


def apply_spec_lags(doc):
    """Applies the lags that concern this document (v5.0.0-alpha.2 removed getBlobSidecars; the
    Gloas ones only to a document that defines Gloas); returns (what, why) of each applied."""
    applied = []
    for (path, method, status, field), enum, why in SPEC_LAGS:
        if method not in doc["paths"].get(path, {}):
            continue
        schema = doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]
        schema["properties"][field]["enum"] = enum
        applied.append((f"`{method.upper()} {path}` {status} `{field}`: enum {enum}", why))
    if "Gloas.SignedExecutionPayloadBid" in doc.get("components", {}).get("schemas", {}):
        for what, patch, why in GLOAS_LAGS:
            patch(doc)
            applied.append((what, why))
    return applied


CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    ]
)
# Checks of the event stream: its schema in the spec is `type: string` (see schemathesis.toml).
EVENT_CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
    ]
)
# Checks of invalid input (negative mode): no 5xx, and an answer with a documented status (a
# 400 for most) must still have the content type and body the spec gives that status. An
# undocumented status for invalid input is not a failure here (the spec lists 400 for some
# operations only, and a 400 is what a client needs).
NEGATIVE_CHECKS = ",".join(
    [
        "not_a_server_error",
        "content_type_conformance",
        "response_schema_conformance",
    ]
)
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemathesis.toml")


def log(msg):
    print(f"conformance: {msg}", flush=True)


def http_get_json(url, timeout=5):
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def start_devnet(arbor, out_dir, seconds_per_slot, gloas_epoch):
    log_path = os.path.join(out_dir, "arbor-dev.log")
    log_file = open(log_path, "wb")
    proc = subprocess.Popen(
        [
            arbor,
            "dev",
            # The spec's schemas fix the mainnet preset's sizes (a sync committee of 512 keys,
            # 8192 block roots): a minimal-preset state would not validate.
            "--preset",
            "mainnet",
            "--validators",
            "64",
            "--blobs",
            "3",
            "--seconds-per-slot",
            str(seconds_per_slot),
            "--http-port",
            "0",
            "--metrics-port",
            "0",
            "--genesis-delay",
            "2",
            # A Gloas devnet for the Gloas release of the document (v5.0.0-alpha.2).
            *(["--gloas-epoch", str(gloas_epoch)] if gloas_epoch is not None else []),
        ],
        stdout=log_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    with open(os.path.join(out_dir, "arbor-dev.pid"), "w") as f:
        f.write(str(proc.pid))
    return proc, log_path


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for_api(proc, log_path, deadline):
    pattern = re.compile(r"Beacon API on (http://127\.0\.0\.1:\d+)")
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"arbor dev exited ({proc.returncode}) before its API came up; see {log_path}")
        with open(log_path, errors="replace") as f:
            m = pattern.search(f.read())
        if m:
            return m.group(1)
        time.sleep(0.5)
    raise SystemExit(f"arbor dev printed no Beacon API address in time; see {log_path}")


def wait_for_chain(proc, url, log_path, deadline, min_slot):
    """Until the head is at `min_slot` or later (blocks with blobs, an epoch transition behind it)."""
    last = None
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"arbor dev exited ({proc.returncode}); see {log_path}")
        try:
            fin = http_get_json(f"{url}/eth/v1/beacon/states/head/finality_checkpoints")
            epoch = int(fin["data"]["finalized"]["epoch"])
            head = http_get_json(f"{url}/eth/v1/beacon/headers/head")
            slot = int(head["data"]["header"]["message"]["slot"])
            last = (slot, epoch)
            if slot >= min_slot:
                return last
        except Exception:  # noqa: BLE001 - the node is still starting
            pass
        time.sleep(1)
    raise SystemExit(f"the devnet's head did not reach slot {min_slot} in time (last {last}); see {log_path}")


def ssz_operations(doc):
    """(method, path) of the operations whose 200 response offers application/octet-stream."""
    ops = []
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method not in ("get", "post"):
                continue
            ok = (op.get("responses") or {}).get("200") or {}
            if "application/octet-stream" in (ok.get("content") or {}):
                ops.append((method.upper(), path))
    return ops


def all_operations(doc):
    return [
        (m.upper(), p)
        for p, item in doc["paths"].items()
        for m in item
        if m in ("get", "post", "put", "delete", "patch")
    ]


def operation_id(doc, method, path):
    return doc["paths"][path][method.lower()]["operationId"]


def run_schemathesis(doc, st, oapi, url, out_dir, name, accept, include, max_examples, seed, mode, checks):
    report_dir = os.path.join(out_dir, name)
    os.makedirs(report_dir, exist_ok=True)
    cmd = [
        st,
        "--config-file",
        CONFIG,
        "run",
        oapi,
        "--url",
        url,
        "--mode",
        mode,
        "--checks",
        checks,
        "--header",
        f"Accept: {accept}",
        "--max-examples",
        str(max_examples),
        "--seed",
        str(seed),
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--suppress-health-check",
        "all",
        "--no-color",
        "--continue-on-failure",
        "--report",
        "junit,ndjson",
        "--report-dir",
        report_dir,
    ]
    if include is not None:
        for method, path in include:
            cmd += ["--include-operation-id", operation_id(doc, method, path)]
    else:
        for method, path in [*EXCLUDED, EVENTS]:
            if method.lower() in doc["paths"].get(path, {}):
                cmd += ["--exclude-operation-id", operation_id(doc, method, path)]
    log(f"schemathesis pass '{name}': {' '.join(cmd[2:])}")
    with open(os.path.join(report_dir, "schemathesis.log"), "w") as f:
        # In the report's directory: schemathesis keeps a cache (.schemathesis/) in its cwd.
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=report_dir)
    return rc, report_dir


def summarize(report_dir):
    """Per operation: test cases run and failures, from the junit report."""
    import xml.etree.ElementTree as ET

    results = {}
    junit = None
    for root, _, files in os.walk(report_dir):
        for fn in files:
            if fn.endswith(".xml"):
                junit = os.path.join(root, fn)
    if junit is None:
        return results, None
    tree = ET.parse(junit)
    for case in tree.iter("testcase"):
        name = case.get("name")
        failures = [f.get("message") or (f.text or "") for f in case if f.tag in ("failure", "error")]
        skipped = any(f.tag == "skipped" for f in case)
        results[name] = (failures, skipped)
    return results, junit


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arbor", required=True)
    ap.add_argument("--oapi", required=True, help="the bundled OpenAPI document (JSON)")
    ap.add_argument("--schemathesis", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-examples", type=int, default=25)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds-per-slot", type=int, default=2)
    ap.add_argument("--url", help="test this running node instead of starting arbor dev")
    ap.add_argument(
        "--gloas-epoch",
        type=int,
        help="start the devnet with `--gloas-epoch N` (for the Gloas release of the document)",
    )
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    with open(args.oapi) as f:
        doc = json.load(f)
    args.lags = apply_spec_lags(doc)
    patched = os.path.join(args.out, "beacon-node-oapi.lags-applied.json")
    with open(patched, "w") as f:
        json.dump(doc, f)
    args.oapi = patched

    proc = None
    try:
        if args.url:
            url = args.url
        else:
            proc, log_path = start_devnet(args.arbor, args.out, args.seconds_per_slot, args.gloas_epoch)
            url = wait_for_api(proc, log_path, time.time() + 120)
            log(f"devnet API at {url} (pid {proc.pid}, log {log_path})")
            slot, epoch = wait_for_chain(proc, url, log_path, time.time() + 300, 34)
            log(f"head slot {slot}, finalized epoch {epoch}: testing")

        ssz_accept = "application/octet-stream;q=1.0,application/json;q=0.9"
        passes = [
            ("json", "application/json", None, "positive", CHECKS),
            ("json-invalid-input", "application/json", None, "negative", NEGATIVE_CHECKS),
            ("ssz", ssz_accept, ssz_operations(doc), "positive", CHECKS),
            ("events", "text/event-stream", [EVENTS], "all", EVENT_CHECKS),
        ]
        outcome = {}
        failed = False
        for name, accept, include, mode, checks in passes:
            rc, report_dir = run_schemathesis(
                doc, args.schemathesis, args.oapi, url, args.out, name, accept, include, args.max_examples, args.seed,
                mode, checks,
            )
            results, junit = summarize(report_dir)
            if junit is None:
                raise SystemExit(f"schemathesis pass '{name}' wrote no report (exit {rc}); see {report_dir}/schemathesis.log")
            outcome[name] = (rc, results)
            bad = {k: v for k, v in results.items() if v[0]}
            log(f"pass '{name}': {len(results)} operations, {len(bad)} with failures (schemathesis exit {rc})")
            if rc != 0 or bad:
                failed = True
            if proc is not None and proc.poll() is not None:
                raise SystemExit(f"arbor dev exited ({proc.returncode}) during the '{name}' pass")

        write_report(args, doc, outcome, url)
        # The SSZ answers against the JSON ones, by the consensus specs' types (schemathesis
        # cannot read SSZ): appends its section to the report.
        rc = subprocess.call(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ssz_json.py"),
             url, os.path.join(args.out, "report.md"), "gloas" if args.gloas_epoch is not None else "fulu"]
        )
        if rc != 0:
            failed = True
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"arbor dev exited ({proc.returncode}) during the JSON = SSZ check")
        # Schemathesis takes a documented 404 for conformance: every operation must be served,
        # or be in routes.py's list of deliberately unserved ones, with its reason.
        rc = subprocess.call(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "routes.py"),
             url, args.oapi, os.path.join(args.out, "report.md")]
        )
        if rc != 0:
            failed = True
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"arbor dev exited ({proc.returncode}) during the route probe")
        if failed:
            log(f"FAILED: see {os.path.join(args.out, 'report.md')}")
            return 1
        log(f"passed: see {os.path.join(args.out, 'report.md')}")
        return 0
    finally:
        if proc is not None:
            stop(proc)


def write_report(args, doc, outcome, url):
    lines = ["# Beacon API conformance (schemathesis)", ""]
    lines.append(f"Document: `{os.path.basename(args.oapi)}`, {doc['info'].get('version', '')}; node: {url};")
    lines.append(f"Valid input (`json`, `ssz`): {CHECKS.replace(',', ', ')}.")
    lines.append(f"Invalid input (`json-invalid-input`): {NEGATIVE_CHECKS.replace(',', ', ')}.")
    lines.append(f"The event stream (`events`, valid and invalid input): {EVENT_CHECKS.replace(',', ', ')}.")
    lines.append(f"Up to {args.max_examples} examples per operation and pass, seed {args.seed}.")
    lines.append("")
    ops = all_operations(doc)
    for name, (rc, results) in outcome.items():
        bad = {k: v for k, v in results.items() if v[0]}
        lines.append(f"## Pass `{name}`: {len(results)} operations, {len(bad)} failing (exit {rc})")
        lines.append("")
        for case in sorted(results):
            failures, skipped = results[case]
            status = "FAIL" if failures else ("skipped" if skipped else "ok")
            lines.append(f"- {status}: `{case}`")
            for fmsg in failures[:3]:
                first = fmsg.strip().splitlines()[0] if fmsg.strip() else ""
                lines.append(f"  - {first[:300]}")
        lines.append("")
    lines.append("## The document's own lags (applied before the passes)")
    lines.append("")
    for what, why in args.lags:
        lines.append(f"- {what}. {why}")
    lines.append("")
    lines.append("## Left out")
    lines.append("")
    for (method, path), why in EXCLUDED.items():
        lines.append(f"- `{method} {path}`: {why}")
    lines.append(
        "- the response schema of `GET /eth/v1/events`: the spec gives the stream as "
        "`type: string`, which a parsed event can never match; the events' data is checked by "
        "http_api's tests (tests/events.rs, api.rs) and Lodestar's client"
    )
    covered = len(ops) - len(EXCLUDED)
    lines.append("")
    lines.append(f"{covered} of the document's {len(ops)} operations checked.")
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
