#!/usr/bin/env bash
# The Beacon API conformance run: schemathesis against a running `arbor dev` devnet, with the
# ethereum/beacon-APIs OpenAPI document (see README.md).
#
#   scripts/conformance/run.sh [ARBOR_BINARY]      (default: target/debug/arbor)
#
# BEACON_APIS names the document: a checkout of ethereum/beacon-APIs (the release that defines
# Fulu, v4.0.0), whose split YAML is bundled here into one JSON file, or an already bundled
# .json/.yaml file. Default: ../shared/beacon-apis. CONFORMANCE_MAX_EXAMPLES (default 25) and
# CONFORMANCE_SEED (default 1) set schemathesis's examples per operation and its seed;
# CONFORMANCE_GLOAS_EPOCH=N starts the devnet with `--gloas-epoch N` (the Gloas release of the
# document, v5.0.0-alpha.2: `make test-conformance-gloas`). Everything it writes goes under
# CONFORMANCE_OUT (default target/conformance/; the report: report.md there).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
arbor="${1:-$repo/target/debug/arbor}"
apis="${BEACON_APIS:-$repo/../shared/beacon-apis}"
out="${CONFORMANCE_OUT:-$repo/target/conformance}"
venv="$repo/target/conformance/venv"

[ -x "$arbor" ] || { echo "error: no arbor binary at $arbor (cargo build --bin arbor)" >&2; exit 1; }
if [ ! -e "$apis" ]; then
  echo "error: the Beacon API OpenAPI document was not found at $apis; set BEACON_APIS to a checkout of ethereum/beacon-APIs (v4.0.0) or to its bundled beacon-node-oapi.json" >&2
  exit 1
fi
command -v python3 >/dev/null 2>&1 || { echo "error: python3 (3.9 or newer) not found" >&2; exit 1; }

mkdir -p "$out"
stamp="$venv/.arbor-requirements-sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "installing schemathesis into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  echo "$want" > "$stamp"
fi

oapi="$out/beacon-node-oapi.json"
if [ -d "$apis" ]; then
  if [ -f "$apis/beacon-node-oapi.json" ]; then
    cp "$apis/beacon-node-oapi.json" "$oapi"
  else
    "$venv/bin/python" "$here/bundle_oapi.py" "$apis" "$oapi"
  fi
else
  case "$apis" in
    *.json) cp "$apis" "$oapi" ;;
    *.yaml|*.yml) "$venv/bin/python" -c 'import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2], "w"))' "$apis" "$oapi" ;;
    *) echo "error: BEACON_APIS=$apis: neither a directory nor a .json/.yaml file" >&2; exit 1 ;;
  esac
fi

rm -rf "$out/json" "$out/json-invalid-input" "$out/ssz" "$out/events"
exec "$venv/bin/python" "$here/conformance.py" --arbor "$arbor" --oapi "$oapi" \
  --schemathesis "$venv/bin/schemathesis" --out "$out" \
  --max-examples "${CONFORMANCE_MAX_EXAMPLES:-25}" --seed "${CONFORMANCE_SEED:-1}" \
  ${CONFORMANCE_GLOAS_EPOCH:+--gloas-epoch "$CONFORMANCE_GLOAS_EPOCH"}
