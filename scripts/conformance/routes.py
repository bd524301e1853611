#!/usr/bin/env python3
"""Which of the document's operations the node serves at all.

Schemathesis takes a documented 404 for conformance, so an endpoint the node does not have passes
its passes. This probe sends one request to every operation of the document (path parameters
filled with ids that exist: `head`, validator 0, the head's epoch and slot; POST bodies an empty
JSON list or object) and reads the answer as "no such route" when it is

- 405 (the path exists for another method),
- 501 (not implemented), or
- 404 whose message is the router's fallback (`no endpoint at ...`), not an unknown id's.

Every unserved operation must be in UNSERVED with its reason; one that is not is a failure, and
so is a listed one that is served after all (the list must say what is true).

    routes.py URL OAPI_JSON REPORT_MD     (appends its section to the report; exit 1 on failure)
"""

import json
import re
import sys
import urllib.error
import urllib.request

# operationId -> why the node does not serve it. Each reason says whose decision it is.
UNSERVED = {
    "submitBeaconCommitteeSelections": (
        "501: DVT middleware (distributed validators) only; the spec's text allows 501 for nodes "
        "without it"
    ),
    "submitSyncCommitteeSelections": (
        "501: DVT middleware (distributed validators) only; the spec's text allows 501 for nodes "
        "without it"
    ),
    # v5.0.0-alpha.2 (Gloas) only.
    "getExecutionPayloadBid": (
        "not routed: a bid built by this node's execution client for a staked builder to sign is "
        "the builder's side of ePBS, whose API is still moving (builder-specs PRs 138, 161, 165); "
        "Arbor builds its own proposers' bids (self-build) and takes builders' signed bids from "
        "gossip and from publishExecutionPayloadBid"
    ),
}

# Streams: probed by the schemathesis `events` pass, which reads their first event.
STREAMS = {"eventstream"}


def fill(path, head_slot):
    epoch = head_slot // 32
    values = {
        "state_id": "head",
        "block_id": "head",
        "validator_id": "0",
        "epoch": str(epoch),
        "slot": str(head_slot + 1),
        "block_root": "head",
        "peer_id": "16Uiu2HAmFakePeerIdNotConnected111111111111111111111111",
        "period": str(epoch // 256),
    }
    return re.sub(r"\{([a-z_]+)\}", lambda m: values.get(m.group(1), "0"), path)


def probe(url, method, path, op):
    body = None
    headers = {"accept": "application/json"}
    if method == "POST":
        schema = (((op.get("requestBody") or {}).get("content") or {}).get("application/json") or {}).get("schema") or {}
        body = b"{}" if schema.get("type") == "object" else b"[]"
        headers["content-type"] = "application/json"
        headers["eth-consensus-version"] = "fulu"
    request = urllib.request.Request(url + path, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(4096)
    except urllib.error.HTTPError as e:
        return e.code, e.read(4096)


def unserved_reason(status, body):
    if status == 405:
        return "405 method not allowed"
    if status == 501:
        return "501 not implemented"
    if status == 404:
        try:
            message = json.loads(body).get("message", "")
        except ValueError:
            message = body.decode("utf-8", "replace")
        if message.startswith("no endpoint at"):
            return f"404 {message}"
    return None


def main():
    url, oapi, report = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(oapi) as f:
        doc = json.load(f)
    with urllib.request.urlopen(url + "/eth/v1/beacon/headers/head", timeout=10) as r:
        head_slot = int(json.load(r)["data"]["header"]["message"]["slot"])
    rows = []
    failures = []
    for path, item in sorted(doc["paths"].items()):
        for method, op in item.items():
            if method not in ("get", "post"):
                continue
            op_id = op.get("operationId", f"{method} {path}")
            if op_id in STREAMS:
                rows.append((op_id, method.upper(), path, "stream", "probed by the events pass"))
                continue
            concrete = fill(path, head_slot)
            status, body = probe(url, method.upper(), concrete, op)
            reason = unserved_reason(status, body)
            if reason is None:
                rows.append((op_id, method.upper(), path, str(status), "served"))
                if op_id in UNSERVED:
                    failures.append(f"{op_id} is served ({status}) but listed as unserved")
            elif op_id in UNSERVED:
                rows.append((op_id, method.upper(), path, reason, f"unserved: {UNSERVED[op_id]}"))
            else:
                rows.append((op_id, method.upper(), path, reason, "NOT SERVED and not in the unserved list"))
                failures.append(f"{op_id} ({method.upper()} {concrete}): {reason}")
    served = sum(1 for r in rows if r[4] == "served")
    lines = ["", "## Routes: every operation served, or deliberately not", ""]
    lines.append(
        f"{len(rows)} operations probed once each: {served} served, "
        f"{sum(1 for r in rows if r[4].startswith('unserved'))} deliberately unserved, "
        f"{len(failures)} failures. A route counts as unserved on 405, 501, or the router's own "
        "404 (`no endpoint at ...`); a 404 for an unknown id is an answer."
    )
    lines.append("")
    lines.append("Deliberately unserved:")
    lines.append("")
    for op_id, why in sorted(UNSERVED.items()):
        lines.append(f"- `{op_id}`: {why}")
    lines.append("")
    for op_id, method, path, status, verdict in rows:
        if verdict != "served":
            lines.append(f"- `{op_id}` `{method} {path}`: {status}, {verdict}")
    for failure in failures:
        lines.append(f"- FAIL: {failure}")
    with open(report, "a") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[3:5]))
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
