#!/usr/bin/env bash
# Checks a built Arbor image (`make docker`): its configuration (entrypoint, non-root user,
# exposed ports, /data volume), that the binary runs (`arbor --version`) as a non-root user with
# nothing missing at run time, and that a one-process Fulu devnet (`arbor dev`: mock execution
# client with blobs, beacon node, validator client) finalizes epoch 1 inside the container.
#
#   scripts/docker/smoke-test.sh [image]          (default: arbor:latest)
#
# ENGINE: podman (default when present) or docker. RUN_FLAGS: extra `run` flags, e.g. on a machine
# where the container runtime may not raise rlimits:
#   RUN_FLAGS="--runtime runc --ulimit nofile=20000:20000 --ulimit nproc=32768:32768"
set -euo pipefail

IMAGE=${1:-arbor:latest}
ENGINE=${ENGINE:-$(command -v podman >/dev/null 2>&1 && echo podman || echo docker)}
read -r -a RUN_FLAGS <<<"${RUN_FLAGS:-}"

fail() { echo "FAIL: $*" >&2; exit 1; }
run() { "$ENGINE" run --rm "${RUN_FLAGS[@]}" "$@"; }

# ---- image configuration ----
entrypoint=$("$ENGINE" image inspect --format '{{json .Config.Entrypoint}}' "$IMAGE")
[ "$entrypoint" = '["arbor"]' ] || fail "entrypoint is $entrypoint, want [\"arbor\"]"
user=$("$ENGINE" image inspect --format '{{.Config.User}}' "$IMAGE")
case "$user" in "" | 0 | 0:* | root | root:*) fail "image user is '$user' (root)" ;; esac
ports=$("$ENGINE" image inspect --format '{{json .Config.ExposedPorts}}' "$IMAGE")
for p in 9000/tcp 9000/udp 9001/udp 5052/tcp 5054/tcp; do
  case "$ports" in *"\"$p\""*) ;; *) fail "port $p not exposed ($ports)" ;; esac
done
volumes=$("$ENGINE" image inspect --format '{{json .Config.Volumes}}' "$IMAGE")
case "$volumes" in *'"/data"'*) ;; *) fail "no /data volume ($volumes)" ;; esac
echo "ok: entrypoint $entrypoint, user $user, ports $ports, volumes $volumes"

# ---- the binary, as the image's user ----
version=$(run "$IMAGE" --version)
case "$version" in "arbor "*) ;; *) fail "--version printed '$version'" ;; esac
echo "ok: $version"
uid=$(run --entrypoint id "$IMAGE" -u)
[ "$uid" != 0 ] || fail "runs as uid 0"
# /data belongs to the image's user (the datadir default is under it).
owner=$(run --entrypoint stat "$IMAGE" -c %u /data)
[ "$owner" = "$uid" ] || fail "/data is owned by uid $owner, the image runs as uid $uid"
missing=$(run --entrypoint sh "$IMAGE" -c 'ldd /usr/local/bin/arbor | grep "not found" || true')
[ -z "$missing" ] || fail "libraries missing at run time: $missing"
echo "ok: runs as uid $uid, owns /data, no missing libraries"

# ---- a devnet in the container ----
start=$(date +%s)
run "$IMAGE" dev --until-finalized-epoch 1 --max-slots 40 --http-port 0 --metrics-port 0 \
  || fail "arbor dev did not finalize epoch 1 within 40 slots"
echo "ok: arbor dev finalized epoch 1 in the container ($(($(date +%s) - start)) s)"
