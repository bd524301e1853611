#!/usr/bin/env bash
# Installs the Lodestar roots checker (roots.mjs with npm @lodestar/types 1.50.0) into a directory
# under target/ (never into the source tree): copies package.json, package-lock.json, .npmrc and
# roots.mjs there and runs `npm ci` from the registry.
#
#   testing/lodestar_roots/js/install.sh [DIR]     (default: <repo>/target/lodestar-roots)
#
# Re-running is cheap: `npm ci` runs again only when the lock file changed. Prints DIR.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
dir="${1:-$repo/target/lodestar-roots}"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "error: the Lodestar roots check needs Node.js 20 or newer with npm (node and npm not found)" >&2
  exit 1
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "error: the Lodestar roots check needs Node.js 20 or newer, found $(node --version)" >&2
  exit 1
fi

mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$here/.npmrc" "$here/roots.mjs" "$dir/"

stamp="$dir/node_modules/.arbor-lock-sha256"
want="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "installing @lodestar/types into $dir (npm ci)" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$want" > "$stamp"
fi
echo "$dir"
